"""Helpers for tests that need a real Label Studio server.

A migrated data dir (admin + raters seeded) is made once per test run
(:func:`make_template`, ~30 s on 2 cores); each live server copies it
(:func:`copy_data_dir`, milliseconds) and starts on a free port (~4-5 s) as an
*attached* :class:`~goldboard.annotate.server.EmbeddedServer`: stopped when the
``with`` block exits, and killed by the kernel if the test process dies first
(Linux ``PR_SET_PDEATHSIG``), so no server outlives the test run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from goldboard.annotate import server as srv

RATERS = ("onc_a", "onc_b")


def have_label_studio() -> bool:
    try:
        import label_studio  # noqa: F401
    except ImportError:
        return False
    return True


def make_template(path: Path, raters: tuple[str, ...] = RATERS, blinding: str = srv.BLINDING_ORGS) -> Path:
    """A migrated data dir with an admin and ``raters`` seeded (no server running)."""
    srv.prepare_data_dir(path, raters, blinding=blinding)
    return path


def template_key(raters: tuple[str, ...] = RATERS, blinding: str = srv.BLINDING_ORGS) -> str:
    """Cache key: Label Studio version + the seeding code + the raters + the blinding mode."""
    import label_studio

    from goldboard.annotate import _lsboot

    here = Path(_lsboot.__file__).parent  # the settings module imports Label Studio's: read, never import
    code = b"".join((here / f).read_bytes() for f in ("_lsboot.py", "_lsguard.py", "_lssettings.py", "_lswait.py"))
    h = hashlib.sha256(code + ",".join(raters).encode() + blinding.encode()).hexdigest()[:12]
    return f"ls-template-{label_studio.__version__}-{h}"


def cached_template(
    cache: Any, scratch: Path, raters: tuple[str, ...] = RATERS, blinding: str = srv.BLINDING_ORGS
) -> Path:
    """The template from pytest's cache (``.pytest_cache``), made once and reused by later
    runs of the same Label Studio version; ``GOLDBOARD_TEST_FRESH_LS=1`` rebuilds it."""
    if cache is None or os.environ.get("GOLDBOARD_TEST_FRESH_LS") == "1":
        return make_template(scratch / "server", raters, blinding)
    root = Path(cache.mkdir(template_key(raters, blinding)))
    with _exclusive(root / "lock"):  # pytest-xdist workers: one migrates, the others wait and copy its template
        return _cached_template(root, scratch, raters, blinding)


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``lock`` (flock; none where the platform has no fcntl)."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _cached_template(root: Path, scratch: Path, raters: tuple[str, ...], blinding: str) -> Path:
    done = root / "server"
    if (done / srv.CREDENTIALS_FILE).exists() and (done / "ls" / "label_studio.sqlite3").exists():
        return done
    built = make_template(scratch / "server", raters, blinding)
    tmp = root / f"server.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    copy_data_dir(built, tmp)
    try:
        os.replace(tmp, done)
    except OSError:  # another run finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return done if done.exists() else built


def copy_data_dir(template: Path, dest: Path) -> Path:
    """Copy a prepared data dir (credentials keep their 0600 mode)."""
    shutil.copytree(template, dest, ignore=shutil.ignore_patterns(srv.PID_FILE, srv.LOG_FILE))
    return dest


@contextlib.contextmanager
def live_server(
    template: Path, dest: Path, port: int | None = None, host: str = srv.HOST
) -> Iterator[srv.EmbeddedServer]:
    """An attached embedded server on a copy of ``template``; always stopped on exit."""
    copy_data_dir(template, dest)
    server = srv.EmbeddedServer(dest, port=port or srv.free_port(), startup_timeout=120, host=host)
    try:
        server.start(detach=False)
        yield server
    finally:
        server.stop()


# --------------------------------------------------------------------------- PostgreSQL + workers

#: how the live tests reach PostgreSQL: this URL (a role that may CREATE DATABASE; password in
#: $GOLDBOARD_DB_PASSWORD or $PGPASSWORD), else a throwaway cluster the suite starts itself
POSTGRES_ENV = "GOLDBOARD_TEST_POSTGRES"
PG_WORKERS = 2
PG_ROLE = "goldboard"


def _pg_bindir() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    for cand in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (cand / "initdb").exists() and (cand / "postgres").exists():
            return cand
    return None


class Postgres:
    """A PostgreSQL the live tests may create databases in: ``url`` (no password) + ``password_file``."""

    def __init__(self, url: str, password: str, workdir: Path, stop: Any = None) -> None:
        from goldboard.annotate.serverdb import parse_database

        self.db = parse_database(url)
        self.workdir = workdir
        self.password_file = workdir / "pgpass"
        self.password_file.write_text(password + "\n", encoding="utf-8")
        os.chmod(self.password_file, 0o600)
        self._password = password
        self._stop = stop
        self._n = 0

    def url(self, name: str) -> str:
        return self.db.url.replace(f"/{self.db.name}", f"/{name}", 1)

    def execute(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(
            host=self.db.host,
            port=self.db.port,
            user=self.db.user,
            password=self._password or None,
            dbname=self.db.name,
            autocommit=True,
            connect_timeout=10,
        ) as conn:
            conn.execute(sql)

    def new_database(self, template: str | None = None) -> str:
        """A new empty database (or a copy of ``template``); returns its name."""
        self._n += 1
        name = f"goldboard_test_{os.getpid()}_{self._n}"
        self.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return name

    def stop(self) -> None:
        if self._stop is not None:
            self._stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


#: the throwaway clusters' folders: ``<tempdir>/goldboard-pg-*``, each with the pid of the pytest that made it
PG_PREFIX = "goldboard-pg-"
PG_OWNER = "owner.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        pass
    return True


def _stop_cluster(bindir: Path, data: Path, as_user: list[str]) -> None:
    """``pg_ctl stop -m immediate`` of the cluster in ``data`` (a throwaway: no clean shutdown needed)."""
    import subprocess

    subprocess.run(
        [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
        capture_output=True,
        timeout=60,
    )


def reap_orphan_clusters(tmp: Path | None = None, bindir: Path | None = None) -> list[Path]:
    """Stop and delete the throwaway clusters whose pytest is gone (killed before it could stop
    them: ``pg_ctl start`` daemonizes, so the kernel does not take PostgreSQL down with pytest).
    Returns the folders removed."""
    import tempfile

    gone = []
    for work in sorted(Path(tmp or tempfile.gettempdir()).glob(PG_PREFIX + "*")):
        try:
            owner = int((work / PG_OWNER).read_text().strip())
        except (OSError, ValueError):
            continue  # not ours, or being set up right now
        if _alive(owner):
            continue
        bindir = bindir or _pg_bindir()
        if bindir is not None and (work / "data" / "postmaster.pid").exists():
            _stop_cluster(bindir, work / "data", ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else [])
        shutil.rmtree(work, ignore_errors=True)
        gone.append(work)
    return gone


def start_postgres() -> Postgres:
    """``$GOLDBOARD_TEST_POSTGRES``, else a throwaway cluster on a free loopback port (password
    authentication over TCP, fsync off).  Raises RuntimeError with the reason when neither works.
    Clusters left behind by a killed earlier run are stopped first (:func:`reap_orphan_clusters`)."""
    import subprocess
    import tempfile

    from goldboard.annotate.serverdb import database_password

    reap_orphan_clusters()
    work = Path(tempfile.mkdtemp(prefix=PG_PREFIX))
    (work / PG_OWNER).write_text(f"{os.getpid()}\n")
    ext = os.environ.get(POSTGRES_ENV, "").strip()
    if ext:
        return Postgres(ext, database_password(), work)
    bindir = _pg_bindir()
    if bindir is None:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(
            f"PostgreSQL server binaries (initdb) not found; install Debian's postgresql or set {POSTGRES_ENV}"
        )
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        try:
            import pwd

            pw = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(work, ignore_errors=True)
            raise RuntimeError("running as root and there is no 'postgres' user to run PostgreSQL as") from None
        os.chown(work, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    password = os.urandom(12).hex()
    pwfile = work / "initpw"
    pwfile.write_text(password + "\n")
    if as_user:
        os.chown(pwfile, pw.pw_uid, pw.pw_gid)
    os.chmod(pwfile, 0o600)
    port = srv.free_port()

    def run(*cmd: str) -> None:
        r = subprocess.run([*as_user, *cmd], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"{Path(cmd[0]).name} failed: {(r.stderr or r.stdout).strip()[-400:]}")

    data = work / "data"
    try:
        run(
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            PG_ROLE,
            f"--pwfile={pwfile}",
            "--auth-local=scram-sha-256",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-instructions",
        )
        pwfile.unlink()
        opts = f"-p {port} -h 127.0.0.1 -k {work} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(work / "pg.log"), "-o", opts, "-w", "-t", "60", "start")
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise RuntimeError(f"could not start a throwaway PostgreSQL: {exc}") from None

    return Postgres(
        f"postgresql://{PG_ROLE}@127.0.0.1:{port}/postgres",
        password,
        work,
        lambda: _stop_cluster(bindir, data, as_user),
    )


def make_pg_template(pg: Postgres, path: Path, raters: tuple[str, ...] = RATERS) -> tuple[Path, str]:
    """A data dir + a migrated PostgreSQL database with the admin and ``raters`` seeded."""
    from goldboard.annotate import serverdb

    name = pg.new_database()
    path.mkdir(parents=True)
    serverdb.configure(path, pg.url(name), PG_WORKERS, pg.password_file)
    srv.prepare_data_dir(path, raters)
    return path, name


def pg_live_server(pg: Postgres, template: tuple[Path, str], dest: Path, port: int | None = None):
    """An attached gunicorn server (PG_WORKERS workers) on a copy of the template database."""
    from goldboard.annotate import serverdb

    path, tmpl_db = template
    name = pg.new_database(template=tmpl_db)
    copy_data_dir(path, dest)
    s = serverdb.read_settings(dest)
    s.database = serverdb.parse_database(pg.url(name))
    s.seeded = s.database_key  # a copy of the seeded template: same users, same ids, same tokens
    serverdb.write_settings(dest, s)
    return live_server_on(dest, port)


@contextlib.contextmanager
def live_server_on(dest: Path, port: int | None = None) -> Iterator[srv.EmbeddedServer]:
    server = srv.EmbeddedServer(dest, port=port or srv.free_port(), startup_timeout=180)
    try:
        server.start(detach=False)
        yield server
    finally:
        server.stop()
