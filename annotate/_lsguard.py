"""A Django app goldboard adds to the embedded Label Studio (never imported by goldboard itself).

Label Studio Community scopes its project and task lists by ``user.active_organization``
and lets any user change that field (``PATCH /api/users/<own id>/``); at login it makes the
user's *first* organization membership active, even one that was revoked.  goldboard keeps
each rater in an organization of their own (:mod:`goldboard.annotate._lsboot`), so this app
holds one invariant: **a user's active organization is one they are a live member of.**
A ``pre_save`` handler on the user model replaces any other value by the user's first live
membership, whatever path tried to set it (API PATCH, login, admin).
"""

from __future__ import annotations

from django.apps import AppConfig


def keep_active_organization_live(sender, instance, **kwargs) -> None:
    org_id = getattr(instance, "active_organization_id", None)
    if org_id is None or instance.pk is None:
        return
    from organizations.models import OrganizationMember

    live = OrganizationMember.objects.filter(user_id=instance.pk, deleted_at__isnull=True)
    if live.filter(organization_id=org_id).exists():
        return
    instance.active_organization_id = live.order_by("pk").values_list("organization_id", flat=True).first()


class GoldboardGuardConfig(AppConfig):
    name = "goldboard.annotate._lsguard"
    label = "goldboard_guard"
    verbose_name = "goldboard: active organization guard"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.models.signals import pre_save

        pre_save.connect(
            keep_active_organization_live, sender=settings.AUTH_USER_MODEL, dispatch_uid="goldboard-active-org"
        )
