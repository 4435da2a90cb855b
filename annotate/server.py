"""The embedded Label Studio server: start, status, stop.

goldboard runs the ``label-studio`` package (extra ``goldboard[server]``) as a
child process bound to ``127.0.0.1`` (or ``--host``: see :func:`lan_warning`) on
exactly the port asked for.  Everything
it owns lives in one data dir (default ``~/.goldboard/server``, or
``$GOLDBOARD_SERVER_DIR``)::

    DIR/                  mode 0700
      credentials.toml    0600: admin + one user per rater/adjudicator (email, password, API token,
                          user id) + per person their organization and goldboard's account in it
      server.json         pid file: pid, port, url, start time (no secrets)
      server.log          Label Studio's output (never contains tokens or passwords)
      home/               HOME of the child (Label Studio writes ~/.config, ~/.local there)
      ls/                 LABEL_STUDIO_BASE_DATA_DIR: SQLite database, media, exports

The child gets an *allow-listed* environment (``PATH``, locale, ``TZ``,
``TMPDIR``, ``PYTHONPATH``) plus its own settings: Label Studio reads settings
from plain names too (``USERNAME``, ``PASSWORD``, ``PORT``, ``HOST``, ``DEBUG``
...), so nothing of the caller's environment leaks in.  Version check, analytics
and Sentry are off; legacy API tokens are on.

Users are seeded by :mod:`goldboard.annotate._lsboot` in one Django process
(migrate + all users: ~28 s on a fresh dir, ~4 s to add any number of users
later) instead of one ``label-studio init`` per user (~4 s each after the
migration, measured); passwords and tokens reach it on stdin, never on a
command line (``init --password --user-token`` would show them in ``ps``).

Blinding (``blinding = "organizations"``, the default for new data dirs): every rater
and adjudicator is in a Label Studio organization of their own and a *revoked* member of
everyone else's (:func:`goldboard.annotate._lsboot.isolate`); goldboard works inside
each organization with that organization's own account (``goldboard-org-<person>``).
The child runs Label Studio with :mod:`goldboard.annotate._lssettings`, which adds the
guard app :mod:`goldboard.annotate._lsguard` (a user's active organization is always one
they are a live member of).  Data dirs made before keep ``blinding = "convention"``.

People log in with the e-mail and a password :func:`new_login` sets and hands out
(``goldboard server login NAME``); nothing else here prints a password or token.

The accounts themselves (``credentials.toml``: users, organizations, blinding mode; where
the data dir is) are :mod:`goldboard.annotate.server_accounts`; this module starts, seeds,
watches and stops the Label Studio processes.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from goldboard.annotate import serverdb
from goldboard.annotate._lsboot import MARKER
from goldboard.annotate.server_accounts import (
    ADMIN,
    BLINDING_CONVENTION,
    BLINDING_ORGS,
    CREDENTIALS_FILE,
    METHOD_WORDS,
    ORG_OWNER_PREFIX,
    Credentials,
    Org,
    User,
    _new_user,
    read_credentials,
    resolved_data_dir,
)
from goldboard.annotate.server_accounts import EMAIL_DOMAIN as EMAIL_DOMAIN  # re-exported: callers use srv.NAME
from goldboard.annotate.server_accounts import credentials_path as credentials_path
from goldboard.annotate.server_accounts import default_data_dir as default_data_dir
from goldboard.errors import GoldboardError, LabelStudioError, ParamError, case_twin, check_rater_name
from goldboard.fileio import write_text_atomic
from goldboard.text import utc_now

DEFAULT_PORT = 8080
HOST = "127.0.0.1"
PID_FILE = "server.json"
LOG_FILE = "server.log"
#: caller environment variables the child may see (everything else is dropped)
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "TEMP",
    "TMP",
    "PYTHONPATH",
    "SYSTEMROOT",
    "SYSTEMDRIVE",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
)
SEED_TIMEOUT = 600.0
#: a new SQLite data dir: the seed creates ``DATA_DIR/MIGRATED_MARKER`` (named by MIGRATED_ENV) once the
#: database is migrated; the server, started alongside, waits for the file named by WAIT_FOR_ENV
MIGRATED_MARKER = ".migrated"
MIGRATED_ENV = "GOLDBOARD_MIGRATED_MARKER"
WAIT_FOR_ENV = "GOLDBOARD_WAIT_FOR_MIGRATION"
START_TIMEOUT = 180.0


# --------------------------------------------------------------------------- errors and checks
# (the accounts -- users, organizations, credentials.toml, the data dir's place -- are
# goldboard.annotate.server_accounts, re-exported here)


class PortBusy(ParamError, LabelStudioError):
    """The port asked for is taken (exit code 2, like every server failure)."""


def check_not_running(data_dir: str | Path | None) -> None:
    """A :class:`LabelStudioError` when the embedded server of ``data_dir`` is already running
    (``server start`` checks this before it says anything)."""
    d = resolved_data_dir(data_dir)
    st = server_status(d)
    if st.running:
        raise LabelStudioError(
            f"the embedded server of {d} is already running at {st.url} (pid {st.pid}); "
            f"stop it with `goldboard server stop --data-dir {d}`"
        )


# --------------------------------------------------------------------------- status


@dataclass
class ServerInfo:
    """What ``goldboard server status`` reports (no secrets)."""

    data_dir: Path
    url: str = ""
    port: int | None = None
    pid: int | None = None
    running: bool = False
    credentials_path: Path | None = None
    usernames: list[str] = field(default_factory=list)  # e-mails raters log in with
    raters: list[str] = field(default_factory=list)
    log_path: Path | None = None
    backend: str = serverdb.SQLITE  # "sqlite" or "postgresql"
    database: str = ""  # human-readable: which database (no password)
    workers: int = 1  # app processes serving requests (1: Label Studio's own server)
    host: str = HOST  # the address it listens on
    public_url: str = ""  # what raters on other computers open (when host is not loopback)
    blinding: str = ""  # organizations | convention

    def describe(self) -> str:
        lines = [
            f"Label Studio: {'running at ' + self.url if self.running else 'not running'}"
            + (f" (pid {self.pid})" if self.running and self.pid else "")
        ]
        if self.running and self.host and not is_loopback(self.host):
            lines.append(f"listening:    {self.host} (plain HTTP); raters open {self.public_url}")
        if self.blinding:
            lines.append(f"blinding:     {METHOD_WORDS.get(self.blinding, self.blinding)}")
        lines.append(f"data dir:     {self.data_dir}")
        if self.database:
            lines.append(f"database:     {self.database}")
            lines.append(f"workers:      {self.workers}" + (" (gunicorn)" if self.workers > 1 else ""))
        if self.credentials_path is not None and self.credentials_path.exists():
            lines.append(f"users:        {', '.join(self.usernames)}")
            lines.append(f"credentials:  {self.credentials_path} (passwords and API tokens; private)")
        if self.log_path is not None:
            lines.append(f"log:          {self.log_path}")
        return "\n".join(lines)


def _read_pidfile(d: Path) -> dict | None:
    p = d / PID_FILE
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (exited child not yet reaped) is not alive -- but a thread-group leader that
    # exited while other threads still run also shows "Z", and those threads hold the port
    with contextlib.suppress(OSError, IndexError):
        st = Path(f"/proc/{pid}/stat").read_text()
        if st.rsplit(")", 1)[1].split()[0] == "Z":
            return len(os.listdir(f"/proc/{pid}/task")) > 1
    return True


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
        return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    except FileNotFoundError:
        return None
    except OSError:
        pass
    try:  # macOS and other systems without /proc
        out = subprocess.run(["ps", "-o", "args=", "-p", str(pid)], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.split() if out.returncode == 0 and out.stdout.strip() else None


def _is_our_server(pid: int, d: Path) -> bool:
    """True when ``pid`` is a ``label-studio start`` process serving data dir ``d``."""
    args = _cmdline(pid)
    if not args:
        return False
    joined = " ".join(args)
    return (
        ("label-studio" in joined or "label_studio" in joined)
        and ("start" in args or "gunicorn" in joined)
        and str(d / "ls") in args
    )


def server_status(data_dir: str | Path | None = None) -> ServerInfo:
    """Is the embedded server of ``data_dir`` running, at which URL, with which users."""
    d = resolved_data_dir(data_dir)
    info = ServerInfo(data_dir=d, credentials_path=d / CREDENTIALS_FILE, log_path=d / LOG_FILE)
    _backend_info(info, d)
    if info.credentials_path.exists():
        with contextlib.suppress(GoldboardError):
            creds = read_credentials(d)
            info.usernames = [u.email for u in creds.all_users]
            info.raters = list(creds.users)
            info.blinding = creds.blinding
    pf = _read_pidfile(d)
    if pf:
        pid = int(pf.get("pid", 0))
        info.url, info.port, info.pid = str(pf.get("url", "")), pf.get("port"), pid
        info.host = str(pf.get("host", HOST))
        info.public_url = str(pf.get("public_url", "") or info.url)
        info.running = pid > 0 and _pid_alive(pid) and _is_our_server(pid, d)
    return info


# --------------------------------------------------------------------------- ports


def port_is_free(port: int, host: str = HOST) -> bool:
    """Nothing listens on ``port`` (checked by binding it, and by connecting to localhost
    the way Label Studio does before it silently moves to the next port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        if os.name == "posix":  # as the server will: ignore TIME_WAIT leftovers, fail on a listener
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    for family, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        with contextlib.suppress(OSError), socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(0.5)
            if s.connect_ex((addr, port)) == 0:
                return False
    return True


def free_port() -> int:
    """A port that is free right now (for tests and demos)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- environment


def _child_env(d: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ENV_ALLOW}
    home = d / "home"
    env.update(
        {
            "HOME": str(home),
            "USERPROFILE": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "LABEL_STUDIO_BASE_DATA_DIR": str(d / "ls"),
            # Label Studio's settings + goldboard's guard app (see goldboard.annotate._lsguard)
            "DJANGO_SETTINGS_MODULE": "goldboard.annotate._lssettings",
            "LABEL_STUDIO_LATEST_VERSION_CHECK": "false",
            "LABEL_STUDIO_COLLECT_ANALYTICS": "false",
            "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "true",
            "LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN": "true",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    env.update(serverdb.database_env(serverdb.read_settings(d)))
    return env


def _backend_info(info: ServerInfo, d: Path) -> None:
    """Which database and how many workers (from ``server.toml``; a bad file is reported, not raised)."""
    try:
        s = serverdb.read_settings(d)
    except GoldboardError as exc:
        info.database = f"unknown ({exc})"
        return
    info.backend = s.backend
    info.workers = max(1, s.workers)
    info.database = serverdb.describe_backend(s, d)[0]


def _label_studio_cmd() -> list[str]:
    exe = Path(sys.executable).parent / ("label-studio.exe" if os.name == "nt" else "label-studio")
    if exe.exists():
        return [str(exe)]
    found = shutil.which("label-studio")
    if found:
        return [found]
    try:
        import label_studio  # noqa: F401
    except ImportError:
        raise GoldboardError(
            "Label Studio is not installed: pip install 'goldboard[server]' "
            "(or point the study at an existing server: `goldboard study set DIR --url URL`)"
        ) from None
    return [sys.executable, "-m", "label_studio.server"]


def _log_tail(d: Path, secrets_: Iterable[str] = (), lines: int = 15) -> str:
    try:
        text = (d / LOG_FILE).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return "(no log)"
    for s in secrets_:
        if s:
            text = text.replace(s, "***")
    tail = [ln for ln in text.splitlines() if ln.strip()][-lines:]
    return "\n".join("    " + ln for ln in tail)


# --------------------------------------------------------------------------- setup / seeding


def _no_case_twin(name: str, others: Iterable[str], how: str) -> None:
    """Two accounts whose names differ only in letter case are one person typed twice (and
    Label Studio's e-mail addresses, which ignore case, would clash)."""
    twin = case_twin(name, others) if name else None
    if twin is not None:
        raise GoldboardError(
            f"rater name {name!r}: {how} {twin!r}, which differs only in letter case: one person, or two? "
            f"give two raters names that differ in more than case (or use {twin!r})"
        )


def prepare_data_dir(
    data_dir: str | Path | None = None,
    raters: Iterable[str] = (),
    blinding: str | None = None,
    migrated_marker: Path | None = None,
) -> Credentials:
    """Create the data dir, migrate the database and seed the admin plus one user per
    rater (only those not seeded yet).  Safe to call again; safe while the server runs.

    ``blinding`` (new data dirs only; default ``"organizations"``): ``"organizations"`` puts
    every rater and adjudicator in a Label Studio organization of their own, revoked from
    everyone else's (server-enforced blinding); ``"convention"`` keeps everyone in one
    organization (every user can open every project: for shared projects, or to mimic a
    team server).

    ``migrated_marker``: a file the seed creates once the database is migrated (a server
    started alongside waits for it: :meth:`EmbeddedServer.start`)."""
    if blinding is not None and blinding not in (BLINDING_ORGS, BLINDING_CONVENTION):
        raise ParamError("{blinding} {b}: choose {a} or {c}", b=blinding, a=BLINDING_ORGS, c=BLINDING_CONVENTION)
    raters = [r.strip() for r in raters]
    for i, r in enumerate(raters):  # every name checked before anything is written
        if r:
            check_rater_name(r, "rater name")
            _no_case_twin(r, raters[:i], "given as")
    d = resolved_data_dir(data_dir)
    d.mkdir(parents=True, exist_ok=True)
    (d / "home").mkdir(exist_ok=True)
    (d / "ls").mkdir(exist_ok=True)
    restrict_data_dir(d)
    cpath = d / CREDENTIALS_FILE
    creds = (
        read_credentials(d)
        if cpath.exists()
        else Credentials(path=cpath, admin=_new_user(ADMIN), blinding=blinding or BLINDING_ORGS)
    )
    if blinding is not None and blinding != creds.blinding:
        raise ParamError(
            "{d}: this server was set up with blinding by {was}; that cannot change (use a new {data_dir} for {b})",
            d=d,
            was=creds.blinding,
            b=blinding,
        )
    for r in raters:
        _no_case_twin(r, creds.users, "the server already has")
    for r in raters:
        r = r.strip()
        if not r:
            continue
        if r == ADMIN or r.startswith(ORG_OWNER_PREFIX):
            raise GoldboardError(f"rater name {r!r} is reserved for the server's own accounts")
        if r not in creds.users:
            creds.users[r] = _new_user(r)
    if creds.isolating:
        for name in creds.users:
            if name not in creds.orgs:
                creds.orgs[name] = Org(name=name, owner=_new_user(ORG_OWNER_PREFIX + name))
    db_exists = serverdb.database_ready(d, serverdb.read_settings(d))
    todo = [u for u in creds.all_users if u.id is None or not db_exists]
    orgs_todo = creds.isolating and (bool(todo) or any(o.id is None for o in creds.orgs.values()))
    if not cpath.exists() or todo or orgs_todo:
        creds.save()  # before seeding: a crash never loses a token the database may hold
    if todo or orgs_todo:
        ids, orgs = _run_seed(d, todo, creds.secrets(), creds if creds.isolating else None, migrated_marker)
        for u in todo:
            u.id = ids[u.name]
        for name, o in orgs.items():
            creds.orgs[name].id = int(o["id"])
            creds.orgs[name].owner.id = int(o["owner_id"])
        creds.save()
        serverdb.mark_seeded(d)
    return creds


def _run_seed(
    d: Path,
    users: list[User],
    secrets_: list[str],
    isolate: Credentials | None = None,
    migrated_marker: Path | None = None,
) -> tuple[dict[str, int], dict[str, dict]]:
    """Seed ``users``; with ``isolate`` (credentials of an isolating server) also put every
    person in an organization of their own (:func:`goldboard.annotate._lsboot.isolate`).
    Returns (user ids by name, organizations by person)."""

    people = []
    if isolate is not None:
        for name, o in isolate.orgs.items():
            u = isolate.users[name]
            people.append(
                {
                    "name": name,
                    "email": u.email,
                    "title": f"goldboard · {name}"[:1000],
                    "org_id": o.id,
                    "owner": {
                        "username": o.owner.name,
                        "email": o.owner.email,
                        "password": o.owner.password,
                        "token": o.owner.token,
                    },
                }
            )
    payload = json.dumps(
        {
            "users": [
                {
                    "username": u.name,
                    "email": u.email,
                    "password": u.password,
                    "token": u.token,
                    "admin": u.name == ADMIN,
                    "isolated": isolate is not None and u.name != ADMIN,
                }
                for u in users
            ],
            "people": people,
        }
    )
    with _open_log(d) as log:
        log.write(f"--- {utc_now()} goldboard: seeding users {', '.join(u.name for u in users)}\n")
        log.flush()
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "goldboard.annotate._lsboot"],
                input=payload,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=d,
                env={**_child_env(d), **({MIGRATED_ENV: str(migrated_marker)} if migrated_marker else {})},
                timeout=SEED_TIMEOUT,
                **({"preexec_fn": _owner_only} if os.name == "posix" else {}),
            )
        except subprocess.TimeoutExpired:
            raise LabelStudioError(
                f"setting up Label Studio in {d} took over {SEED_TIMEOUT:.0f} s; log tail:\n{_log_tail(d, secrets_)}"
            ) from None
        other = [ln for ln in proc.stdout.splitlines() if not ln.startswith(MARKER)]
        if other:
            log.write("\n".join(other) + "\n")
    result = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARKER)]
    if proc.returncode != 0 or not result:
        raise LabelStudioError(
            f"setting up Label Studio in {d} failed (exit {proc.returncode}); log tail:\n{_log_tail(d, secrets_)}"
        )
    out = json.loads(result[-1][len(MARKER) :])
    return {str(k): int(v) for k, v in out["users"].items()}, dict(out.get("orgs") or {})


# --------------------------------------------------------------------------- start / stop


class EmbeddedServer:
    """An embedded Label Studio server on ``127.0.0.1:port`` serving ``data_dir``.

    ``start(detach=True)`` leaves it running after this process exits (the CLI);
    as a context manager it is attached: stopped on exit, and on Linux killed by
    the kernel if this process dies first (no leaked servers from crashed tests).

    >>> with EmbeddedServer(tmp, port=free_port(), raters=["onc_a", "onc_b"]) as srv:  # doctest: +SKIP
    ...     srv.url, srv.credentials.token_for("onc_a")
    """

    def __init__(
        self,
        data_dir: str | Path | None = None,
        port: int = DEFAULT_PORT,
        raters: Iterable[str] = (),
        startup_timeout: float = START_TIMEOUT,
        host: str = HOST,
        blinding: str | None = None,
        *,
        database: str | None = None,
        workers: int | None = None,
        db_password_file: str | Path | None = None,
    ) -> None:
        self.data_dir = resolved_data_dir(data_dir)
        # None: what DATA_DIR/server.toml says (SQLite and Label Studio's own server by default)
        self.database, self.workers, self.db_password_file = database, workers, db_password_file
        self.port = int(port)
        self.raters = [r.strip() for r in raters if r.strip()]
        self.startup_timeout = startup_timeout
        self.host = check_host(host)
        self.blinding = blinding
        # goldboard itself talks to the server over loopback unless it listens on one address only
        self.url = f"http://{_local_address(self.host)}:{self.port}"
        self.proc: subprocess.Popen | None = None
        self.credentials: Credentials | None = None

    def __repr__(self) -> str:
        return f"EmbeddedServer(data_dir={str(self.data_dir)!r}, url={self.url!r})"

    # ------------------------------------------------------------------ start
    def start(self, detach: bool = False) -> ServerInfo:
        d = self.data_dir
        if not 0 < self.port < 65536:
            raise GoldboardError(f"{self.port} is not a TCP port", param="port")
        if self.database is not None:
            serverdb.parse_database(self.database)  # a bad URL (or one with a password) fails first
        check_not_running(d)
        with contextlib.suppress(FileNotFoundError):
            (d / PID_FILE).unlink()  # stale
        if not port_is_free(self.port, _bind_check_address(self.host)):
            raise PortBusy("port {p} on {h} is busy; choose another with {port}", p=self.port, h=self.host)
        d.mkdir(parents=True, exist_ok=True)
        settings = serverdb.configure(d, self.database, self.workers, self.db_password_file)
        serverdb.check_database(settings)
        if settings.database is None and not settings.workers and not serverdb.database_ready(d, settings):
            # a new SQLite database: Label Studio starts (~10 s of Django) while the seed migrates it
            # (~25 s); it waits for the migration before it touches the database (see _lsguard)
            marker = d / MIGRATED_MARKER
            marker.unlink(missing_ok=True)
            self._launch(settings, detach, {WAIT_FOR_ENV: str(marker)})
            try:
                creds = prepare_data_dir(d, self.raters, blinding=self.blinding, migrated_marker=marker)
                marker.touch(mode=0o600)  # (made by the seed; never leave the server waiting)
            except BaseException:
                self._terminate()
                raise
        else:
            creds = prepare_data_dir(d, self.raters, blinding=self.blinding)
            self._launch(settings, detach)
        self.credentials = creds
        try:
            self._wait_ready(creds)
        except BaseException:
            self._terminate()
            raise
        return server_status(d)

    def _launch(self, settings: serverdb.Settings, detach: bool, env: dict[str, str] | None = None) -> None:
        """Start the server process (``label-studio start``, or gunicorn) and write the pid file."""
        d = self.data_dir
        cmd = self._server_cmd(settings) or [
            *_label_studio_cmd(),
            "start",
            "--no-browser",
            "--internal-host",
            self.host,
            "--port",
            str(self.port),
            "--data-dir",
            str(d / "ls"),
            "--enable-legacy-api-token",
        ]
        log = _open_log(d)
        log.write(f"--- {utc_now()} goldboard: starting Label Studio on {self.url}\n")
        log.flush()
        self._log_offset = log.tell()
        kwargs: dict = {}
        if os.name == "posix":
            if detach:
                kwargs["start_new_session"] = True
                kwargs["preexec_fn"] = _owner_only
            else:
                kwargs["preexec_fn"] = _child_setup
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=d,
                env={**_child_env(d), **(env or {})},
                **kwargs,
            )
        finally:
            log.close()
        write_text_atomic(
            d / PID_FILE,
            json.dumps(
                {
                    "pid": self.proc.pid,
                    "port": self.port,
                    "url": self.url,
                    "host": self.host,
                    "public_url": public_url(self.host, self.port),
                    "started_at": utc_now(),
                    "detached": detach,
                },
                indent=1,
            )
            + "\n",
            perms=0o600,  # every file of the data dir is owner-only (restrict_data_dir)
        )

    def _server_cmd(self, settings: serverdb.Settings) -> list[str] | None:
        """gunicorn when workers are asked for; None: Label Studio's own ``label-studio start``."""
        if not settings.workers:
            return None
        (self.data_dir / "ls").mkdir(exist_ok=True)
        settings_module = _child_env(self.data_dir).get("DJANGO_SETTINGS_MODULE") or serverdb.LS_SETTINGS
        return serverdb.gunicorn_cmd(self.host, self.port, settings.workers, self.data_dir / "ls", settings_module)

    def _wait_ready(self, creds: Credentials) -> None:
        import httpx

        deadline = time.monotonic() + self.startup_timeout
        d = self.data_dir
        while True:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise LabelStudioError(
                    f"Label Studio exited during start (exit {self.proc.returncode}); "
                    f"log tail ({d / LOG_FILE}):\n{_log_tail(d, creds.secrets())}"
                )
            try:
                with open(d / LOG_FILE, "rb") as fh:
                    fh.seek(getattr(self, "_log_offset", 0))
                    log_text = fh.read().decode("utf-8", "replace")
            except FileNotFoundError:
                log_text = ""
            if f"Port {self.port} is in use" in log_text:
                raise PortBusy("port {p} on {h} is busy; choose another with {port}", p=self.port, h=HOST)
            try:
                r = httpx.get(f"{self.url}/health", timeout=2.0)
                if r.status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise LabelStudioError(
                    f"Label Studio did not answer on {self.url} within "
                    f"{self.startup_timeout:.0f} s; log tail:\n{_log_tail(d, creds.secrets())}"
                )
            time.sleep(0.25)
        # /health answers for any Label Studio: make sure this one knows our admin token
        try:
            r = httpx.get(
                f"{self.url}/api/current-user/whoami",
                headers={"Authorization": f"Token {creds.admin.token}"},
                timeout=10.0,
            )
            ok = r.status_code == 200 and r.json().get("email") == creds.admin.email
        except (httpx.HTTPError, ValueError):
            ok = False
        if not ok:
            raise LabelStudioError(
                f"the server answering on {self.url} does not accept this data dir's admin "
                f"token (another server on that port?); log: {d / LOG_FILE}"
            )

    # ------------------------------------------------------------------ stop
    def _terminate(self, timeout: float = 15.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None
        with contextlib.suppress(FileNotFoundError):
            (self.data_dir / PID_FILE).unlink()

    def stop(self) -> bool:
        if self.proc is not None:
            self._terminate()
            return True
        return stop_server(self.data_dir)

    def __enter__(self) -> EmbeddedServer:
        self.start(detach=False)
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def restrict_data_dir(d: Path) -> list[Path]:
    """The permission policy for the server data dir (it holds API tokens, passwords and
    Label Studio's database): the folder and its subfolders owner-only (0700), every file in
    it owner-only (group and other bits removed: the database 0600).  Returns what it
    changed.  Label Studio itself runs with umask 077 (:func:`_owner_only`), so files it
    creates later are owner-only too."""
    changed = []
    paths = [d]
    for root, dirs, files in os.walk(d):  # unreadable folders are skipped, symlinks not followed
        paths += [Path(root, n) for n in sorted(dirs) + sorted(files)]
    for p in paths:
        try:
            st = p.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o077:
            continue
        with contextlib.suppress(OSError):
            os.chmod(p, stat.S_IMODE(st.st_mode) & 0o700 | (0o700 if p.is_dir() else 0o600))
            changed.append(p)
    return changed


def _open_log(d: Path):
    """The server log (append; owner-only: it can quote Label Studio's start-up chatter)."""
    fd = os.open(d / LOG_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o600)
    return os.fdopen(fd, "a", encoding="utf-8")


def _owner_only() -> None:  # pragma: no cover - runs in the child
    """Files Label Studio creates (its database, exports, uploads) are owner-only."""
    os.umask(0o077)


def _child_setup() -> None:  # pragma: no cover - runs in the child
    _owner_only()
    _die_with_parent()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: ask the kernel to SIGTERM the child when its parent dies."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_server(
    data_dir: str | Path | None = None,
    port: int = DEFAULT_PORT,
    raters: Iterable[str] = (),
    timeout: float = START_TIMEOUT,
    host: str = HOST,
    blinding: str | None = None,
    *,
    database: str | None = None,
    workers: int | None = None,
    db_password_file: str | Path | None = None,
) -> ServerInfo:
    """Start the embedded server detached (it keeps running after this process exits).
    ``host``: the address it listens on (default 127.0.0.1: this computer only; see
    :func:`lan_warning` for anything else).

    ``database``: ``postgresql://USER@HOST:PORT/DB`` (password: see :mod:`goldboard.annotate.serverdb`)
    or ``sqlite``; ``workers``: gunicorn workers (0: Label Studio's own server).  Both are
    remembered in ``DATA_DIR/server.toml``; None keeps what is recorded there."""
    return EmbeddedServer(
        data_dir,
        port=port,
        raters=raters,
        startup_timeout=timeout,
        host=host,
        blinding=blinding,
        database=database,
        workers=workers,
        db_password_file=db_password_file,
    ).start(detach=True)


# --------------------------------------------------------------------------- one person's login


@dataclass
class Login:
    """One person's login: what ``goldboard server login`` hands out.  ``repr`` hides the password."""

    name: str
    url: str
    email: str
    password: str = field(repr=False)
    running: bool = True

    def card(self) -> str:
        return (
            f"goldboard study: your Label Studio login ({self.name})\n"
            f"\n"
            f"  Open:      {self.url.rstrip('/')}/user/login/\n"
            f"  E-mail:    {self.email}\n"
            f"  Password:  {self.password}\n"
            f"\n"
            f"You see only your own projects; nobody else's labels are visible to you, and yours are not\n"
            f"visible to the other raters. Keep this card private. If it leaks, ask the study lead for a new\n"
            f"password (the old one stops working at once).\n"
        )


def new_login(data_dir: str | Path | None, person: str, url: str | None = None) -> Login:
    """Give ``person`` (a rater or adjudicator of the embedded server) a fresh random password
    and return their login (URL, e-mail, password).  The previous password stops working:
    this is also the password reset.  Only that person's line of ``credentials.toml``
    changes; nobody else's login is read out."""
    d = resolved_data_dir(data_dir)
    creds = read_credentials(d)
    if person == ADMIN or person.startswith(ORG_OWNER_PREFIX):
        raise GoldboardError(f"{person!r} is goldboard's own account, not a person's login")
    if person not in creds.users:
        known = ", ".join(creds.users) or "none yet"
        raise GoldboardError(
            f"no Label Studio login for {person!r} on {d} (people: {known}); add one with "
            f"`goldboard server start --raters {person}` (raters) or `goldboard adjudicate push --adjudicator {person}`"
        )
    user = creds.users[person]
    user.password = secrets.token_urlsafe(12)
    creds.save()  # before the database: a crash never leaves a password nobody knows
    _run_seed(d, [user], creds.secrets(), creds if creds.isolating else None)
    st = server_status(d)
    if url:
        where = url
    elif st.running:
        where = st.public_url or st.url
    else:
        where = f"http://{HOST}:{st.port or DEFAULT_PORT}"
    return Login(name=person, url=where, email=user.email, password=user.password, running=st.running)


def write_login_card(login: Login, path: str | Path) -> Path:
    """Write ``login``'s card to ``path`` (mode 0600; replaced atomically)."""
    p = Path(path)
    write_text_atomic(p, login.card(), perms=0o600)
    return p


# --------------------------------------------------------------------------- listening beyond this computer


def check_host(host: str) -> str:
    """``host`` as an IP address to listen on (``localhost`` -> 127.0.0.1), or a one-line error."""
    import ipaddress

    h = (host or HOST).strip()
    if h.lower() == "localhost":
        return HOST
    try:
        return str(ipaddress.ip_address(h.strip("[]")))
    except ValueError:
        raise ParamError(
            "{host} {h}: give an IP address to listen on (127.0.0.1 = this computer only, "
            "0.0.0.0 = every network interface, or one interface's address)",
            h=host,
        ) from None


def is_loopback(host: str) -> bool:
    import ipaddress

    return ipaddress.ip_address(check_host(host)).is_loopback


def _local_address(host: str) -> str:
    """Where this computer reaches a server listening on ``host``."""
    if host in ("0.0.0.0", "::"):
        return HOST
    return f"[{host}]" if ":" in host else host


def _bind_check_address(host: str) -> str:
    return HOST if host == "::" else host


def public_url(host: str, port: int) -> str:
    """The URL colleagues on other computers use (this computer's name for 0.0.0.0)."""
    if is_loopback(host):
        return f"http://{_local_address(host)}:{port}"
    if host in ("0.0.0.0", "::"):
        return f"http://{socket.gethostname()}:{port}"
    return f"http://{_local_address(host)}:{port}"


def lan_warning(host: str, port: int) -> str:
    """The warning printed when the server listens beyond this computer ('' for loopback)."""
    if is_loopback(host):
        return ""
    where = "every network interface of this computer" if host in ("0.0.0.0", "::") else f"address {host}"
    return (
        f"WARNING: Label Studio listens on {where}, port {port}, over plain HTTP (no encryption). Anyone "
        f"who can reach this computer on port {port} -- your local network, VPN or Wi-Fi, or the internet if "
        f"the port is forwarded -- can open the login page, and passwords and labels cross the network "
        f"unencrypted. Use it only on a network you trust (a hospital LAN behind its firewall), or keep the "
        f"default 127.0.0.1 and give colleagues an SSH tunnel (README: 'Raters on other computers'). "
        f"Raters connect to {public_url(host, port)}."
    )


def stop_server(data_dir: str | Path | None = None, timeout: float = 15.0) -> bool:
    """Stop the server started for ``data_dir`` -- only if its pid is still our
    ``label-studio start`` process for this data dir.  Returns False when none ran."""
    d = resolved_data_dir(data_dir)
    pf = _read_pidfile(d)
    if not pf:
        return False
    pid = int(pf.get("pid", 0))
    if pid <= 0 or not _pid_alive(pid) or not _is_our_server(pid, d):
        (d / PID_FILE).unlink(missing_ok=True)  # stale: the process is gone or is someone else's
        return False
    os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + timeout
    while _pid_alive(pid) and time.monotonic() < end:
        _reap(pid)
        time.sleep(0.1)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.2)
        _reap(pid)
    (d / PID_FILE).unlink(missing_ok=True)
    return True


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


@contextlib.contextmanager
def running_server(
    data_dir: str | Path | None = None, port: int | None = None, raters: Iterable[str] = (), host: str = HOST
) -> Iterator[EmbeddedServer]:
    """Context manager: an attached embedded server (free port by default), stopped on exit."""
    srv = EmbeddedServer(data_dir, port=port or free_port(), raters=raters, host=host)
    with srv:
        yield srv


__all__ = [
    "DEFAULT_PORT",
    "Login",
    "new_login",
    "write_login_card",
    "lan_warning",
    "public_url",
    "check_host",
    "Credentials",
    "User",
    "ServerInfo",
    "EmbeddedServer",
    "default_data_dir",
    "credentials_path",
    "read_credentials",
    "prepare_data_dir",
    "restrict_data_dir",
    "server_status",
    "start_server",
    "stop_server",
    "running_server",
    "port_is_free",
    "free_port",
]
