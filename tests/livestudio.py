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
    code = b"".join((here / f).read_bytes() for f in ("_lsboot.py", "_lsguard.py", "_lssettings.py"))
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
