"""The suite's throwaway PostgreSQL never outlives a killed test run for long: the next run
stops and deletes the clusters whose pytest is gone (``livestudio.reap_orphan_clusters``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import livestudio
import pytest


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_only_folders_of_dead_owners_are_removed(tmp_path):
    dead = tmp_path / (livestudio.PG_PREFIX + "dead")
    live = tmp_path / (livestudio.PG_PREFIX + "live")
    foreign = tmp_path / (livestudio.PG_PREFIX + "foreign")  # no owner file: not ours, or being set up
    other = tmp_path / "something-else"
    for d in (dead, live, foreign, other):
        d.mkdir()
    (dead / livestudio.PG_OWNER).write_text(f"{_dead_pid()}\n")
    (live / livestudio.PG_OWNER).write_text(f"{os.getpid()}\n")
    (other / livestudio.PG_OWNER).write_text(f"{_dead_pid()}\n")
    assert livestudio.reap_orphan_clusters(tmp_path) == [dead]
    assert not dead.exists() and live.exists() and foreign.exists() and other.exists()


@pytest.mark.slow
def test_a_cluster_left_by_a_killed_run_is_stopped_and_deleted():
    if os.environ.get(livestudio.POSTGRES_ENV) or livestudio._pg_bindir() is None:
        pytest.skip("needs PostgreSQL's server binaries (a throwaway cluster)")
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); import livestudio; "
        "pg = livestudio.start_postgres(); print(pg.workdir, flush=True); time.sleep(120)"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(Path(__file__).parent)], stdout=subprocess.PIPE, text=True
    )
    try:
        work = Path(child.stdout.readline().strip())
        postmaster = int((work / "data" / "postmaster.pid").read_text().split()[0])
        assert livestudio._alive(postmaster)
    finally:
        child.send_signal(signal.SIGKILL)  # what a CI timeout or a closed terminal does
        child.wait()
    assert work in livestudio.reap_orphan_clusters(work.parent)
    assert not work.exists()
    for _ in range(50):
        if not livestudio._alive(postmaster):
            break
        time.sleep(0.1)
    assert not livestudio._alive(postmaster)
