"""Seed a Label Studio data dir: migrate once and create users with known tokens.

Run by :mod:`goldboard.annotate.server` as ``python -m goldboard.annotate._lsboot``
with the embedded server's environment; the user list (with passwords and
tokens) arrives as JSON on **stdin**, never on the command line (argv is
visible to every local user in ``ps``).  The payload is ``{"users": [...], "people": [...]}`` (a bare list means users only).
Prints one line on stdout, ``GOLDBOARD-SEED {"users": {username: id, ...},
"organization": id, "orgs": {person: {"id", "owner_id"}}, "migrated": bool}`` (Label
Studio prints its own chatter too).

``people`` turns on server-enforced blinding (:func:`isolate`): each rater and adjudicator
in a Label Studio organization of their own, revoked from everyone else's.

This does in one process what ``label-studio init --username U --password P
--user-token T`` does once per user (each call is a Django start, ~4 s on 2
cores on a migrated database; the first also migrates, ~25 s): create the user, set its legacy API token, add it to the
single organization and make that organization its active one.  It also turns
legacy API tokens on for that organization (1.23 creates new organizations
with them disabled).  Only this module imports Label Studio's Django code.
"""

from __future__ import annotations

import json
import os
import sys

MARKER = "GOLDBOARD-SEED "


def _setup() -> bool:
    import label_studio
    from django.core.wsgi import get_wsgi_application

    ls_path = os.path.dirname(os.path.abspath(label_studio.__file__))
    sys.path.insert(0, ls_path)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "label_studio.core.settings.label_studio")
    get_wsgi_application()
    from django.core.management import call_command
    from django.db import DEFAULT_DB_ALIAS, connections
    from django.db.migrations.executor import MigrationExecutor

    conn = connections[DEFAULT_DB_ALIAS]
    conn.prepare_database()
    executor = MigrationExecutor(conn)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        # a new SQLite database (no migration applied): its ~300 commits need not each wait for
        # the disk -- a machine that stops mid-way leaves a database nobody has used, made again by deleting
        # the data dir. A database that holds data (an upgrade of Label Studio) migrates as usual.
        fresh = conn.vendor == "sqlite" and not executor.loader.applied_migrations
        if fresh:
            with conn.cursor() as cur:
                cur.execute("PRAGMA synchronous=OFF")
        call_command("migrate", "--no-color", verbosity=0)
        if fresh:
            with conn.cursor() as cur:
                cur.execute("PRAGMA synchronous=FULL")
        return True
    return False


def seed(users: list[dict]) -> dict:
    """Create (or update) ``users``: dicts with username, email, password, token, admin."""
    from django.db import transaction
    from organizations.models import Organization

    out: dict[str, int] = {}
    with transaction.atomic():
        org = Organization.objects.order_by("id").first()
        for u in users:
            user = _upsert_user(u, admin=bool(u.get("admin")))
            if u.get("isolated"):  # a person in an organization of their own: see isolate()
                out[u["username"]] = user.id
                continue
            if org is None:
                from organizations.functions import create_organization

                org = create_organization(title="Label Studio", created_by=user, legacy_api_tokens_enabled=True)
            else:
                org.add_user(user)
            user.active_organization = org
            user.save(update_fields=["active_organization"])
            out[u["username"]] = user.id
        if org is not None:
            jwt = org.jwt
            if not jwt.legacy_api_tokens_enabled:
                jwt.legacy_api_tokens_enabled = True
                jwt.save()
    return {"users": out, "organization": org.id if org else None}


def _upsert_user(u: dict, admin: bool = False):
    from rest_framework.authtoken.models import Token
    from users.models import User

    user = User.objects.filter(email=u["email"]).first()
    if user is None:
        user = User.objects.create_user(email=u["email"], password=u["password"], username=u["username"])
    else:
        user.set_password(u["password"])
        user.username = u["username"]
    user.is_staff = admin
    user.is_superuser = admin
    user.save()
    if len(u["token"]) <= 5:
        raise SystemExit("token too short")
    Token.objects.filter(user=user).delete()
    Token.objects.create(user=user, key=u["token"])
    return user


def isolate(people: list[dict]) -> dict:
    """Put each person (a rater or an adjudicator) in a Label Studio organization of their own.

    ``people``: dicts with ``name``, ``email`` (the person's user, already seeded), ``title``
    (of their organization), ``org_id`` (when it exists already) and ``owner`` (username,
    email, password, token of the organization's owner: the account goldboard uses for that
    organization's projects).  Every person ends with exactly:

    * a live membership of their own organization, as their *first* membership (Label
      Studio makes the first membership active at login) and as their active organization;
    * a *revoked* (soft-deleted) membership of every other person's organization and of the
      default organization: Label Studio refuses a revoked member every project, task and
      annotation of that organization, also by id (``Project.has_permission``).

    Returns ``{name: {"id": org id, "owner_id": user id}}``.
    """
    from django.db import transaction
    from django.utils import timezone
    from organizations.functions import create_organization
    from organizations.models import Organization, OrganizationMember
    from users.models import User

    out: dict[str, dict] = {}
    with transaction.atomic():
        default = Organization.objects.order_by("id").first()
        orgs: dict[str, Organization] = {}
        for p in people:
            owner = _upsert_user(p["owner"])
            org = Organization.objects.filter(id=p.get("org_id")).first() if p.get("org_id") else None
            if org is None:
                org = create_organization(title=p["title"], created_by=owner, legacy_api_tokens_enabled=True)
            if not OrganizationMember.objects.filter(user=owner, organization=org, deleted_at__isnull=True).exists():
                OrganizationMember.objects.filter(user=owner, organization=org).delete()
                OrganizationMember.objects.create(user=owner, organization=org)
            owner.active_organization = org
            owner.save(update_fields=["active_organization"])
            jwt = org.jwt
            if not jwt.legacy_api_tokens_enabled:
                jwt.legacy_api_tokens_enabled = True
                jwt.save()
            orgs[p["name"]] = org
            out[p["name"]] = {"id": org.id, "owner_id": owner.id}
        others = [o for o in [default, *orgs.values()] if o is not None]
        now = timezone.now()
        for p in people:
            user = User.objects.get(email=p["email"])
            own = orgs[p["name"]]
            rows = list(OrganizationMember.objects.filter(user=user).order_by("pk"))
            if not rows or rows[0].organization_id != own.id or rows[0].deleted_at is not None:
                OrganizationMember.objects.filter(user=user).delete()
                OrganizationMember.objects.create(user=user, organization=own)
            for o in others:
                if o.id == own.id:
                    continue
                m = OrganizationMember.objects.filter(user=user, organization=o).first()
                if m is None:
                    OrganizationMember.objects.create(user=user, organization=o, deleted_at=now)
                elif m.deleted_at is None:
                    m.deleted_at = now
                    m.save(update_fields=["deleted_at"])
            user.active_organization = own
            user.save(update_fields=["active_organization"])
    return out


def main() -> int:
    payload = json.loads(sys.stdin.read() or "[]")
    if isinstance(payload, list):
        payload = {"users": payload}
    users, people = payload.get("users") or [], payload.get("people") or []
    migrated = _setup()
    marker = os.environ.get("GOLDBOARD_MIGRATED_MARKER")
    if marker:  # a server started alongside waits for this file (goldboard.annotate._lswait)
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write("migrated\n")
    result = seed(users) if users else {"users": {}, "organization": None}
    if people:
        result["orgs"] = isolate(people)
    result["migrated"] = migrated
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
