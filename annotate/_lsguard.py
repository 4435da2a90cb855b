"""A Django app goldboard adds to the embedded Label Studio (never imported by goldboard itself).

Label Studio Community scopes its project and task lists by ``user.active_organization``
and lets any user change that field (``PATCH /api/users/<own id>/``); at login it makes the
user's *first* organization membership active, even one that was revoked.  goldboard keeps
each rater in an organization of their own (:mod:`goldboard.annotate._lsboot`), so this app
holds two invariants:

1. **A user's active organization is one they are a live member of.**  A ``pre_save``
   handler on the user model replaces any other value by the user's first live
   membership, whatever path tried to set it (API PATCH, login, admin).
2. **A request writes only into organizations its user is a live member of.**  Some write
   routes take the project from the request body and never check it (Community 1.23:
   ``POST /api/dm/views`` -- a Data Manager tab in another person's project, which could
   break that person's task list --, ``POST /api/tasks/``).  Rather than patch route by
   route, ``pre_save`` and ``pre_delete`` handlers on every model refuse to save or delete
   an object that belongs to a project (its own ``project``, or its task's) of an
   organization the requesting user is not a live member of.  And before any validation,
   a write request naming a ``project`` (body or query) that is not in one of the user's
   live organizations is answered 404 ``No Project matches the given query.`` -- the same
   for another person's project and for an id that does not exist, so the answers no
   longer reveal which project ids exist (before: 201 vs 400).  Writes outside a request
   (migrations, seeding) and by superusers (goldboard's admin) are not checked.  ``tests/test_blinding_live.py`` tries every write route of the URL
   conf as rater B.
"""

from __future__ import annotations

import contextvars

from django.apps import AppConfig

#: the request being served (set by :class:`RequestMiddleware`); DRF puts the user it
#: authenticated (token or session) on it before the view saves anything
_REQUEST: contextvars.ContextVar = contextvars.ContextVar("goldboard_request", default=None)


class RequestMiddleware:
    """Remember the request being served, for the write guard."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        token = _REQUEST.set(request)
        try:
            return self.get_response(request)
        finally:
            _REQUEST.reset(token)


def keep_active_organization_live(sender, instance, **kwargs) -> None:
    org_id = getattr(instance, "active_organization_id", None)
    if org_id is None or instance.pk is None:
        return
    from organizations.models import OrganizationMember

    live = OrganizationMember.objects.filter(user_id=instance.pk, deleted_at__isnull=True)
    if live.filter(organization_id=org_id).exists():
        return
    instance.active_organization_id = live.order_by("pk").values_list("organization_id", flat=True).first()


def _organization_of(instance) -> tuple[int | None, int | None]:
    """``(project id, organization id)`` that ``instance`` belongs to (``None``: none)."""
    from projects.models import Project
    from tasks.models import Task

    if isinstance(instance, Project):
        return instance.pk, getattr(instance, "organization_id", None)
    pid = getattr(instance, "project_id", None)
    if pid is None:
        task_id = getattr(instance, "task_id", None)
        if task_id is None and isinstance(instance, Task):
            return None, None
        if task_id is not None:
            pid = Task.objects.filter(pk=task_id).values_list("project_id", flat=True).first()
    if pid is None:
        return None, None
    return pid, Project.objects.filter(pk=pid).values_list("organization_id", flat=True).first()


def _refusal(instance, pid):
    """The answer the route gives for a project id that does not exist."""
    from data_manager.models import View
    from rest_framework.exceptions import NotFound, ValidationError

    if isinstance(instance, View):
        return ValidationError({"project": [f'Invalid pk "{pid}" - object does not exist.']})
    return NotFound("No Project matches the given query.")


def refuse_write_outside_own_organizations(sender, instance, **kwargs) -> None:
    request = _REQUEST.get()
    user = getattr(request, "user", None) if request is not None else None
    if user is None or not getattr(user, "is_authenticated", False) or getattr(user, "is_superuser", False):
        return
    pid, org_id = _organization_of(instance)
    if org_id is None:
        return  # not a project's object, or no such project: Label Studio answers as usual
    allowed = request.__dict__.setdefault("_goldboard_live_orgs", {})
    if org_id not in allowed:
        from organizations.models import OrganizationMember

        allowed[org_id] = OrganizationMember.objects.filter(
            user_id=user.pk, organization_id=org_id, deleted_at__isnull=True
        ).exists()
    if not allowed[org_id]:
        raise _refusal(instance, pid)


WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def _live_organizations(user) -> list[int]:
    from organizations.models import OrganizationMember

    return list(
        OrganizationMember.objects.filter(user_id=user.pk, deleted_at__isnull=True).values_list(
            "organization_id", flat=True
        )
    )


def check_project_parameter(request) -> None:
    """A write naming a project (``project`` in the body or the query) that is not in one of
    the user's live organizations -- another person's, or none at all -- is answered 404
    before anything is validated: the answer is the same whether the id exists or not."""
    if request.method not in WRITE_METHODS:
        return
    user = getattr(request, "user", None)
    if user is None or not getattr(user, "is_authenticated", False) or getattr(user, "is_superuser", False):
        return
    data = request.data if isinstance(request.data, dict) else {}
    named = [src.get("project") for src in (request.query_params, data)]
    ids = {int(v) for v in named if isinstance(v, (int, str)) and str(v).strip().isdigit()}
    if not ids:
        return
    from projects.models import Project
    from rest_framework.exceptions import NotFound

    own = Project.objects.filter(pk__in=ids, organization_id__in=_live_organizations(user)).count()
    if own != len(ids):
        raise NotFound("No Project matches the given query.")


def _guard_api_views() -> None:
    """Run :func:`check_project_parameter` after DRF has authenticated every API request."""
    from rest_framework.views import APIView

    if getattr(APIView.initial, "_goldboard", False):
        return
    initial = APIView.initial

    def guarded_initial(self, request, *args, **kwargs):
        initial(self, request, *args, **kwargs)
        check_project_parameter(request)

    guarded_initial._goldboard = True
    APIView.initial = guarded_initial


class GoldboardGuardConfig(AppConfig):
    name = "goldboard.annotate._lsguard"
    label = "goldboard_guard"
    verbose_name = "goldboard: active organization and write guard"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.models.signals import pre_delete, pre_save

        pre_save.connect(
            keep_active_organization_live, sender=settings.AUTH_USER_MODEL, dispatch_uid="goldboard-active-org"
        )
        pre_save.connect(refuse_write_outside_own_organizations, dispatch_uid="goldboard-write-guard-save")
        pre_delete.connect(refuse_write_outside_own_organizations, dispatch_uid="goldboard-write-guard-delete")
        _guard_api_views()
