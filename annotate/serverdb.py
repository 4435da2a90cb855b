"""Where the embedded Label Studio keeps its data, and how many app workers serve it.

By default the embedded server (:mod:`goldboard.annotate.server`) keeps its data in
SQLite inside the data dir and runs Label Studio's own single-process web server.
A team runs it the way Label Studio's docs describe instead: on PostgreSQL
(``DJANGO_DB=default``, ``POSTGRE_*``) behind several gunicorn workers::

    goldboard server start --database postgresql://labelstudio@db.example.org:5432/labelstudio --workers 4

The choice is kept in ``DATA_DIR/server.toml`` (no secrets), so later starts use it
without repeating it; ``--database sqlite`` goes back to the data dir's SQLite file.

The database password never goes on a command line (``ps`` shows argv to every local
user) and never into a file goldboard writes: it is read, in this order, from
``--db-password-file FILE`` (mode 0600; its path is remembered, not its content),
``$GOLDBOARD_DB_PASSWORD`` or ``$PGPASSWORD``; with none of them the server connects
without a password (``trust`` or ``peer`` authentication).  A URL with a password in
it is refused.  ``?sslmode=require`` (or ``verify-full`` ...) is passed to libpq.
"""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]
import tomli_w

from goldboard.errors import GoldboardError, ParamError
from goldboard.fileio import write_text_atomic

SETTINGS_FILE = "server.toml"
SQLITE = "sqlite"
POSTGRESQL = "postgresql"
PASSWORD_ENV = ("GOLDBOARD_DB_PASSWORD", "PGPASSWORD")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
#: seconds a gunicorn worker may spend on one request (an export of a big project takes minutes)
WORKER_TIMEOUT = 900
MAX_WORKERS = 64


@dataclass(frozen=True)
class Database:
    """A PostgreSQL database for Label Studio (no password: see the module doc)."""

    user: str
    host: str
    port: int
    name: str
    sslmode: str = ""

    @property
    def url(self) -> str:
        q = f"?sslmode={self.sslmode}" if self.sslmode else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{self.user}@{host}:{self.port}/{self.name}{q}"


def _bad_url(text: str, why: str) -> ParamError:
    """``--database 'TEXT': WHY`` (the flag as the CLI names parameter ``database``)."""
    return ParamError("{database} {text!r}: {why}", text=text, why=why)


def parse_database(url: str) -> Database | None:
    """``postgresql://USER@HOST[:PORT]/DB[?sslmode=...]`` -> :class:`Database`; ``sqlite`` -> None."""
    text = (url or "").strip()
    if text.lower() in ("", SQLITE, "sqlite3"):
        return None
    try:
        u = urlsplit(text)
        port = u.port or 5432
    except ValueError as exc:
        raise _bad_url(text, f"not a database URL ({exc})") from None
    if u.scheme not in ("postgresql", "postgres"):
        raise _bad_url(text, "give postgresql://USER@HOST:PORT/DB (or 'sqlite' for the data dir's SQLite file)")
    if u.password is not None:
        raise ParamError(
            "{database}: the URL contains a password; leave it out (a command line is visible to every "
            "local user) and give it in $GOLDBOARD_DB_PASSWORD or a 0600 file ({password_file})"
        )
    if not u.username:
        raise _bad_url(text, "no user; give postgresql://USER@HOST:PORT/DB")
    if not u.hostname:
        raise _bad_url(text, "no host; give postgresql://USER@HOST:PORT/DB")
    name = unquote(u.path.lstrip("/"))
    if not name or "/" in name:
        raise _bad_url(text, "no database name; give postgresql://USER@HOST:PORT/DB")
    query = parse_qs(u.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"sslmode"})
    if unknown:
        raise _bad_url(text, f"unsupported URL parameter {unknown[0]!r} (only sslmode)")
    sslmode = (query.get("sslmode") or [""])[-1]
    if sslmode and sslmode not in SSL_MODES:
        raise _bad_url(text, f"sslmode {sslmode!r} is not one of {', '.join(SSL_MODES)}")
    return Database(user=unquote(u.username), host=u.hostname, port=int(port), name=name, sslmode=sslmode)


def read_password_file(path: str | Path) -> str:
    """The first line of a 0600 password file (a group/world-readable file is refused)."""
    p = Path(path).expanduser()
    try:
        mode = stat.S_IMODE(p.stat().st_mode)
        if os.name == "posix" and mode & 0o077:
            raise GoldboardError(f"{p}: readable by other users (mode {mode:o}); run `chmod 600 {p}`")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GoldboardError(f"{p}: database password file not found") from None
    except UnicodeDecodeError:
        raise GoldboardError(f"{p}: database password file is not UTF-8 text") from None
    except IsADirectoryError:
        raise GoldboardError(f"{p}: is a directory, not a password file") from None
    lines = text.splitlines()
    if not lines or not lines[0]:
        raise GoldboardError(f"{p}: empty database password file")
    return lines[0]


def database_password(password_file: str | Path | None = None) -> str:
    """The database password: the 0600 file, else $GOLDBOARD_DB_PASSWORD, else $PGPASSWORD, else ""."""
    if password_file:
        return read_password_file(password_file)
    for name in PASSWORD_ENV:
        value = os.environ.get(name)
        if value:
            return value
    return ""


# --------------------------------------------------------------------------- DATA_DIR/server.toml


@dataclass
class Settings:
    """The embedded server's settings in ``DATA_DIR/server.toml`` (never a secret)."""

    database: Database | None = None  # None: SQLite in the data dir
    password_file: str = ""
    workers: int = 0  # 0: Label Studio's own server (one process); N: gunicorn with N workers
    seeded: str = ""  # the database the users of credentials.toml were created in

    @property
    def backend(self) -> str:
        return POSTGRESQL if self.database is not None else SQLITE

    @property
    def database_key(self) -> str:
        return self.database.url if self.database is not None else SQLITE


def read_settings(data_dir: Path) -> Settings:
    path = data_dir / SETTINGS_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings()
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GoldboardError(f"{path}: invalid TOML ({type(exc).__name__})") from None
    db = data.get("database") or {}
    try:
        workers = int(data.get("workers", 0) or 0)
    except (TypeError, ValueError):
        raise GoldboardError(f"{path}: workers must be a whole number") from None
    return Settings(
        database=parse_database(str(db.get("url", "") or "")),
        password_file=str(db.get("password_file", "") or ""),
        workers=workers,
        seeded=str(data.get("seeded_database", "") or ""),
    )


def write_settings(data_dir: Path, s: Settings) -> None:
    data: dict = {"workers": s.workers, "database": {"url": s.database.url if s.database else SQLITE}}
    if s.password_file:
        data["database"]["password_file"] = s.password_file
    if s.seeded:
        data["seeded_database"] = s.seeded
    header = (
        "# goldboard embedded Label Studio: which database and how many app workers (no secrets here;\n"
        "# the database password comes from $GOLDBOARD_DB_PASSWORD, $PGPASSWORD or password_file).\n"
    )
    write_text_atomic(data_dir / SETTINGS_FILE, header + tomli_w.dumps(data), perms=0o600)  # data dir: owner-only


def configure(
    data_dir: Path, database: str | None = None, workers: int | None = None, password_file: str | Path | None = None
) -> Settings:
    """Update ``server.toml`` with what was asked (None keeps the recorded value)."""
    s = read_settings(data_dir)
    if database is not None:
        new = parse_database(database)
        if (new.url if new else SQLITE) != s.database_key:
            s.password_file = ""
        s.database = new
    if password_file is not None:
        if s.database is None:
            raise ParamError("{password_file} is for a PostgreSQL {database}")
        path = Path(password_file).expanduser().resolve()
        read_password_file(path)  # fail now, with the file named
        s.password_file = str(path)
    if workers is not None:
        if not 0 <= workers <= MAX_WORKERS:
            raise ParamError(
                "{workers} {n}: give 1 to {most} (0: Label Studio's own server)", n=workers, most=MAX_WORKERS
            )
        s.workers = int(workers)
    write_settings(data_dir, s)
    return s


def database_ready(data_dir: Path, s: Settings) -> bool:
    """The database holds the users of credentials.toml (else they are (re)seeded)."""
    if s.database is None:
        return (data_dir / "ls" / "label_studio.sqlite3").exists() and s.seeded in ("", SQLITE)
    return s.seeded == s.database_key


def mark_seeded(data_dir: Path) -> None:
    s = read_settings(data_dir)
    if s.seeded != s.database_key:
        s.seeded = s.database_key
        write_settings(data_dir, s)


def database_env(s: Settings) -> dict[str, str]:
    """Label Studio's settings for the database (password included: child environment only)."""
    if s.database is None:
        return {"DJANGO_DB": SQLITE}
    db = s.database
    env = {
        "DJANGO_DB": "default",
        "POSTGRE_NAME": db.name,
        "POSTGRE_USER": db.user,
        "POSTGRE_PASSWORD": database_password(s.password_file or None),
        "POSTGRE_HOST": db.host,
        "POSTGRE_PORT": str(db.port),
    }
    if db.sslmode:
        env["PGSSLMODE"] = db.sslmode
    return env


#: Label Studio's own settings module (``label-studio start`` uses it unless the environment names another)
LS_SETTINGS = "label_studio.core.settings.label_studio"


def check_database(s: Settings) -> None:
    """Connect once to the PostgreSQL of ``s`` (a clear one-line error instead of a server that
    starts and then fails every request); nothing to do for SQLite."""
    if s.database is None:
        return
    db = s.database
    password = database_password(s.password_file or None)
    try:
        import psycopg
    except ImportError:
        raise GoldboardError(
            "PostgreSQL needs psycopg (it comes with Label Studio: pip install 'goldboard[server]')"
        ) from None
    kwargs: dict = {"host": db.host, "port": db.port, "user": db.user, "dbname": db.name, "connect_timeout": 10}
    if password:
        kwargs["password"] = password
    if db.sslmode:
        kwargs["sslmode"] = db.sslmode
    try:
        with psycopg.connect(**kwargs) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        detail = " ".join(str(exc).split())
        if password:
            detail = detail.replace(password, "***")
        hint = "" if password else " (no password given: set GOLDBOARD_DB_PASSWORD or {password_file})"
        raise ParamError(
            "cannot connect to PostgreSQL {url}: {detail}" + hint, url=db.url, detail=detail[:300]
        ) from None


def gunicorn_cmd(host: str, port: int, workers: int, ls_dir: Path, settings_module: str = LS_SETTINGS) -> list[str]:
    """Label Studio's WSGI app under gunicorn with ``workers`` sync workers and the Django
    settings ``label-studio start`` would use (``settings_module``)."""
    try:
        import label_studio
    except ImportError:
        raise GoldboardError("Label Studio is not installed: pip install 'goldboard[server]'") from None
    try:
        import gunicorn  # noqa: F401
    except ImportError:
        raise ParamError(
            "{workers} needs gunicorn: pip install 'goldboard[server]' (or pip install gunicorn)"
        ) from None
    ls_path = os.path.dirname(os.path.abspath(label_studio.__file__))
    return [
        sys.executable,
        "-m",
        "gunicorn",
        "label_studio.core.wsgi:application",
        "--bind",
        f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "--workers",
        str(workers),
        "--timeout",
        str(WORKER_TIMEOUT),
        "--graceful-timeout",
        "3",
        "--pythonpath",
        ls_path,
        "--chdir",
        str(ls_dir),
        "--log-level",
        "warning",
        "--env",
        f"DJANGO_SETTINGS_MODULE={settings_module}",
    ]


def describe_backend(s: Settings, data_dir: Path) -> tuple[str, str]:
    """(database line, workers line) for ``server status``."""
    if s.database is None:
        db = f"SQLite ({data_dir / 'ls' / 'label_studio.sqlite3'})"
    else:
        db = f"PostgreSQL {s.database.url}"
    wk = f"{s.workers} (gunicorn)" if s.workers else "1 (Label Studio's own server)"
    return db, wk
