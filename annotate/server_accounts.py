"""The embedded Label Studio server's accounts: ``credentials.toml`` and where it lives.

The users goldboard seeds (admin + one per rater or adjudicator: e-mail, password, API
token, user id), each person's own Label Studio organization and goldboard's account in
it (``blinding = "organizations"``), and the data dir that holds them (default
``~/.goldboard/server`` or ``$GOLDBOARD_SERVER_DIR``).  The file is mode 0600 and
replaced atomically; a file other users can read is refused; ``repr`` never shows a
secret.  Starting, seeding and stopping the server is :mod:`goldboard.annotate.server`,
which re-exports these names.
"""

from __future__ import annotations

import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]
import tomli_w

from goldboard.errors import GoldboardError, ParamError
from goldboard.fileio import write_text_atomic

CREDENTIALS_FILE = "credentials.toml"
ADMIN = "admin"
EMAIL_DOMAIN = "goldboard.local"


@dataclass
class User:
    """A Label Studio user goldboard seeded.  ``repr`` never shows the secrets."""

    name: str  # goldboard name: "admin" or the rater name
    email: str
    password: str = field(repr=False)
    token: str = field(repr=False)
    id: int | None = None

    def to_dict(self) -> dict:
        d = {"email": self.email, "password": self.password, "token": self.token}
        if self.id is not None:
            d["id"] = self.id
        return d


#: blinding modes of an embedded server (``credentials.toml`` key ``blinding``)
BLINDING_ORGS = "organizations"  # each person in a Label Studio organization of their own (enforced)
BLINDING_CONVENTION = "convention"  # one organization; separate projects only (data dirs made before)
ORG_OWNER_PREFIX = "goldboard-org-"
METHOD_WORDS = {
    BLINDING_ORGS: "enforced: each rater and adjudicator in a Label Studio organization of their own",
    BLINDING_CONVENTION: "by convention only: one organization, every user can open every project",
}


@dataclass
class Org:
    """A person's own Label Studio organization and the account goldboard uses inside it."""

    name: str  # the person (rater or adjudicator) it belongs to
    owner: User
    id: int | None = None

    def to_dict(self) -> dict:
        d: dict = {"owner": self.owner.to_dict()}
        if self.id is not None:
            d["id"] = self.id
        return d


@dataclass
class Credentials:
    """The embedded server's users (admin + one per rater or adjudicator) as stored in
    ``credentials.toml``; with ``blinding = "organizations"`` also each person's organization."""

    path: Path
    admin: User
    users: dict[str, User] = field(default_factory=dict)
    orgs: dict[str, Org] = field(default_factory=dict)
    blinding: str = BLINDING_ORGS

    @property
    def isolating(self) -> bool:
        """True when the server keeps each person in an organization of their own."""
        return self.blinding == BLINDING_ORGS

    @property
    def all_users(self) -> list[User]:
        return [self.admin, *self.users.values()]

    @property
    def all_accounts(self) -> list[User]:
        """Every account goldboard holds secrets for (people, admin, organization owners)."""
        return [*self.all_users, *(o.owner for o in self.orgs.values())]

    def user_ids(self) -> dict[int, str]:
        """Label Studio user id -> goldboard name (``admin``, a rater or adjudicator, or
        ``goldboard-org-<person>`` for the account goldboard uses in a person's organization)."""
        return {u.id: u.name for u in self.all_accounts if u.id is not None}

    def token_for(self, rater: str) -> str:
        if rater not in self.users:
            raise GoldboardError(
                f"{self.path}: no Label Studio user for rater {rater!r} "
                f"(add it with `goldboard server add-raters {rater}`)"
            )
        return self.users[rater].token

    def secrets(self) -> list[str]:
        return [s for u in self.all_accounts for s in (u.password, u.token) if s]

    def org_token(self, person: str) -> str | None:
        """API token of the account goldboard uses inside ``person``'s organization (None: no org)."""
        o = self.orgs.get(person)
        return o.owner.token if o is not None and o.id is not None else None

    def save(self) -> None:
        data: dict = {
            "blinding": self.blinding,
            "admin": self.admin.to_dict(),
            "users": {n: u.to_dict() for n, u in self.users.items()},
        }
        if self.orgs:
            data["orgs"] = {n: o.to_dict() for n, o in self.orgs.items()}
        header = (
            "# goldboard embedded Label Studio users. PRIVATE: passwords and API tokens.\n"
            "# Give each rater only their own e-mail and password. Mode 0600; never commit this file.\n"
        )
        write_text_atomic(self.path, header + tomli_w.dumps(data), perms=0o600)

    @classmethod
    def load(cls, path: Path) -> Credentials:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            admin = _user_from(ADMIN, data["admin"])
            users = {str(n): _user_from(str(n), u) for n, u in (data.get("users") or {}).items()}
            orgs = {
                str(n): Org(
                    name=str(n),
                    owner=_user_from(ORG_OWNER_PREFIX + str(n), o["owner"]),
                    id=int(o["id"]) if o.get("id") is not None else None,
                )
                for n, o in (data.get("orgs") or {}).items()
            }
            # a data dir made before goldboard kept people in organizations of their own
            blinding = str(data.get("blinding", BLINDING_CONVENTION))
            if blinding not in (BLINDING_ORGS, BLINDING_CONVENTION):
                raise ValueError(blinding)
        except FileNotFoundError:
            raise GoldboardError(
                f"{path}: no credentials file (start the server once with `goldboard server start`)"
            ) from None
        except (tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
            raise GoldboardError(f"{path}: malformed credentials file ({type(exc).__name__})") from None
        return cls(path=path, admin=admin, users=users, orgs=orgs, blinding=blinding)


def _user_from(name: str, d: dict) -> User:
    return User(
        name=name,
        email=str(d["email"]),
        password=str(d["password"]),
        token=str(d["token"]),
        id=int(d["id"]) if d.get("id") is not None else None,
    )


def _new_user(name: str) -> User:
    return User(
        name=name,
        email=f"{name.lower()}@{EMAIL_DOMAIN}",
        password=secrets.token_urlsafe(18),
        token=secrets.token_hex(20),
    )


def check_data_dir_text(text: str, where: str) -> None:
    """A data dir whose path holds a control, line-break or bidi-control character, or a part
    with a leading or trailing space (a pasted name), is refused (``where``: the flag or
    variable, a template naming parameter ``data_dir``): the server would make a folder
    nobody can type, and every printed ``data dir:``/``credentials:`` line would look like
    another path (a line break prints a second line)."""
    import unicodedata

    from goldboard.text import BIDI_CONTROLS

    bad = sorted(
        {
            f"U+{ord(ch):04X}"
            for ch in text
            if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in BIDI_CONTROLS + "\u200e\u200f\u061c"
        }
    )
    shown = text.encode("unicode_escape").decode("ascii")
    if bad:
        raise ParamError(
            where + " '{shown}': the path contains control character(s) {bad}; type it again",
            shown=shown,
            bad=", ".join(bad),
        )
    if any(part != part.strip() for part in text.replace("\\", "/").split("/") if part):
        raise ParamError(
            where + " '{shown}': a leading or trailing space in a folder name (a pasted name?)", shown=shown
        )


def default_data_dir() -> Path:
    """``$GOLDBOARD_SERVER_DIR`` or ``~/.goldboard/server``."""
    env = os.environ.get("GOLDBOARD_SERVER_DIR")
    if env:
        check_data_dir_text(env, "$GOLDBOARD_SERVER_DIR")
    return Path(env).expanduser() if env else Path.home() / ".goldboard" / "server"


def resolved_data_dir(data_dir: str | Path | None) -> Path:
    if data_dir:
        check_data_dir_text(str(data_dir), "{data_dir}")
    return (Path(data_dir).expanduser() if data_dir else default_data_dir()).resolve()


def credentials_path(data_dir: str | Path | None = None) -> Path:
    return resolved_data_dir(data_dir) / CREDENTIALS_FILE


def read_credentials(data_dir: str | Path | None = None) -> Credentials:
    """The embedded server's users and tokens (raises if the server was never set up)."""
    path = credentials_path(data_dir)
    if path.exists() and os.name == "posix":
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            raise GoldboardError(f"{path}: readable by other users (mode {mode:o}); run `chmod 600 {path}`")
    return Credentials.load(path)
