"""Seed a Label Studio data dir: migrate once and create users with known tokens.

Run by :mod:`goldboard.annotate.server` as ``python -m goldboard.annotate._lsboot``
with the embedded server's environment; the user list (with passwords and
tokens) arrives as JSON on **stdin**, never on the command line (argv is
visible to every local user in ``ps``).  Prints one line on stdout, ``GOLDBOARD-SEED {"users": {username: id, ...},
"organization": id, "migrated": bool}`` (Label Studio prints its own chatter too).

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
        call_command("migrate", "--no-color", verbosity=0)
        return True
    return False


def seed(users: list[dict]) -> dict:
    """Create (or update) ``users``: dicts with username, email, password, token, admin."""
    from django.db import transaction
    from organizations.models import Organization
    from rest_framework.authtoken.models import Token
    from users.models import User

    out: dict[str, int] = {}
    with transaction.atomic():
        org = Organization.objects.order_by("id").first()
        for u in users:
            user = User.objects.filter(email=u["email"]).first()
            if user is None:
                user = User.objects.create_user(email=u["email"], password=u["password"], username=u["username"])
            else:
                user.set_password(u["password"])
                user.username = u["username"]
            admin = bool(u.get("admin"))
            user.is_staff = admin
            user.is_superuser = admin
            user.save()
            token = u["token"]
            if len(token) <= 5:
                raise SystemExit("token too short")
            Token.objects.filter(user=user).delete()
            Token.objects.create(user=user, key=token)
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


def main() -> int:
    users = json.loads(sys.stdin.read() or "[]")
    migrated = _setup()
    result = seed(users) if users else {"users": {}, "organization": None}
    result["migrated"] = migrated
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
