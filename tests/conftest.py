"""Shared test fixtures.

Live Label Studio fixtures (tests marked ``@pytest.mark.live``; deselect them with
``-m "not live"``):

``ls_template``   session: one migrated Label Studio data dir with an admin and the
                  raters ``onc_a``, ``onc_b`` seeded -- made once (~30 s) and kept in
                  pytest's cache for later runs of the same Label Studio version
                  (``GOLDBOARD_TEST_FRESH_LS=1`` rebuilds it).
``live_server``   module: an attached server on a copy of the template, free port.
``fresh_server``  function: the same, private to one test (for tests that break it).
``convention_server`` module: a server made with ``--blinding convention`` (one organization,
                  like a team's own Label Studio; needed for shared projects).

The team path -- Label Studio on PostgreSQL behind gunicorn workers -- is tested by the
same tests: a module that overrides ``live_server`` with ``backend_server`` and
``fresh_server`` with ``fresh_backend_server`` runs each of its live tests on both backends (``[sqlite]`` and
``[postgresql]`` in the test id).

``pg``               session: a PostgreSQL the tests may create databases in:
                     ``$GOLDBOARD_TEST_POSTGRES`` (URL without password; the password in
                     ``$GOLDBOARD_DB_PASSWORD``/``$PGPASSWORD``), else a throwaway cluster
                     started from Debian's ``postgresql`` binaries on a free loopback port;
                     the PostgreSQL tests are skipped, with the reason, when neither works.
``pg_template``      session: a migrated database with admin + raters seeded, and its data dir.
``backend_server``   module, parametrised sqlite / postgresql (gunicorn, 2 workers): the
                     postgresql one runs on a ``CREATE DATABASE ... TEMPLATE`` copy.
``fresh_backend_server``  function: the same, private to one test.

Generated cases: :func:`seeds` parametrises a test over ``range(n)`` seeds, the first ``quick`` of them
in every run and the others marked ``slow`` (``make test-fast`` runs the few, ``make test`` all ``n``).

The CLI: ``cli`` (fixture) / :func:`invoke_cli` run ``goldboard ARGS...`` in-process with
click's ``CliRunner`` and fail the test on a traceback in the output (the one runner;
test modules that wrap it import ``invoke_cli``).

Servers are stopped when the fixture ends, even when the test fails, and are
killed by the kernel if pytest itself dies (see ``tests/livestudio.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:  # helpers (livestudio.py) and shared test tables import by name
    sys.path.insert(0, str(TESTS))

import livestudio  # noqa: E402
from click.testing import CliRunner, Result  # noqa: E402

from goldboard.cli import main  # noqa: E402


def invoke_cli(*args, env: dict | None = None, input: str | None = None, code: int | None = None) -> Result:
    """``goldboard ARGS...`` through click's CliRunner (arguments made str): the one CLI
    runner of the suite.  A traceback in the output or an exception other than the exit
    fails the test (bad input must be one clear line); ``code``: the exit code expected."""
    res = CliRunner().invoke(main, [str(a) for a in args], env=env, input=input)
    assert "Traceback" not in res.output, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    if code is not None:
        assert res.exit_code == code, res.output
    return res


def run_cli(*args, code: int | None = 0, **kwargs) -> Result:
    """:func:`invoke_cli` expecting success unless told another ``code`` (None: any)."""
    return invoke_cli(*args, code=code, **kwargs)


def error_line(res: Result) -> str:
    """The one ``Error:`` line of a failed command (exactly one, non-zero exit)."""
    assert res.exit_code != 0, res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1, res.output
    return lines[0]


def seeds(n: int, quick: int) -> list:
    """``range(n)`` as parameters, seeds ``quick`` and up marked ``slow``: the developer's loop
    (``-m "not slow"``) checks a few generated cases, the full suite every one, with the same test ids."""
    return [s if s < quick else pytest.param(s, marks=pytest.mark.slow) for s in range(n)]


@pytest.fixture()
def released(tmp_path):
    """The hand-counted MTB study with two decisions and gold release v1 (:func:`builders.released_study`)."""
    from builders import released_study

    return released_study(tmp_path)


@pytest.fixture()
def openmtb_pulled(tmp_path):
    """A study whose round 1 is the OpenMTB table, pulled (:func:`builders.openmtb_study`)."""
    from builders import openmtb_study

    return openmtb_study(tmp_path)


@pytest.fixture()
def cli():
    """The CLI runner: ``cli("agree", "--study", path)`` -> click ``Result``."""
    return invoke_cli


@pytest.fixture(scope="session")
def ls_template(request, tmp_path_factory):
    if not livestudio.have_label_studio():
        pytest.skip("label-studio is not installed (pip install 'goldboard[server]')")
    return livestudio.cached_template(request.config.cache, tmp_path_factory.mktemp("ls-template"))


@pytest.fixture(scope="session")
def ls_convention_template(request, tmp_path_factory):
    """Like ``ls_template``, but everyone in one Label Studio organization (``--blinding convention``):
    what a team's own Label Studio looks like, and what ``push --shared`` needs."""
    if not livestudio.have_label_studio():
        pytest.skip("label-studio is not installed (pip install 'goldboard[server]')")
    from goldboard.annotate import server as srv

    return livestudio.cached_template(
        request.config.cache, tmp_path_factory.mktemp("ls-template-conv"), blinding=srv.BLINDING_CONVENTION
    )


@pytest.fixture(scope="module")
def convention_server(ls_convention_template, tmp_path_factory):
    with livestudio.live_server(ls_convention_template, tmp_path_factory.mktemp("ls-conv") / "server") as server:
        yield server


@pytest.fixture(scope="module")
def sqlite_server(ls_template, tmp_path_factory):
    with livestudio.live_server(ls_template, tmp_path_factory.mktemp("ls-live") / "server") as server:
        yield server


@pytest.fixture()
def fresh_sqlite_server(ls_template, tmp_path):
    with livestudio.live_server(ls_template, tmp_path / "server") as server:
        yield server


@pytest.fixture(scope="module")
def live_server(sqlite_server):
    return sqlite_server


@pytest.fixture()
def fresh_server(fresh_sqlite_server):
    return fresh_sqlite_server


BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def pg():
    if not livestudio.have_label_studio():
        pytest.skip("label-studio is not installed (pip install 'goldboard[server]')")
    try:
        server = livestudio.start_postgres()
    except RuntimeError as exc:
        pytest.skip(f"PostgreSQL: {exc}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def pg_template(pg, tmp_path_factory):
    return livestudio.make_pg_template(pg, tmp_path_factory.mktemp("pg-template") / "server")


@pytest.fixture(scope="module", params=BACKENDS)
def backend_server(request, tmp_path_factory):
    if request.param == "sqlite":
        yield request.getfixturevalue("sqlite_server")
        return
    pg, tmpl = request.getfixturevalue("pg"), request.getfixturevalue("pg_template")
    with livestudio.pg_live_server(pg, tmpl, tmp_path_factory.mktemp("pg-live") / "server") as server:
        yield server


@pytest.fixture(params=BACKENDS)
def fresh_backend_server(request, tmp_path):
    if request.param == "sqlite":
        yield request.getfixturevalue("fresh_sqlite_server")
        return
    pg, tmpl = request.getfixturevalue("pg"), request.getfixturevalue("pg_template")
    with livestudio.pg_live_server(pg, tmpl, tmp_path / "server") as server:
        yield server


def load_benchmark(name: str):
    """The module ``benchmarks/NAME.py`` (a script, not a package), for the slow tests that re-run
    its simulation at a small size."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
