"""Kill test: `adjudicate import` (and `gold export`) SIGKILLed at random points.

Each try copies a study whose log already holds decisions, runs `goldboard adjudicate
import` of a second sheet (new and changed decisions) through the CLI in a forked
child process and SIGKILLs it, with a deterministic seed per try:

- *at a write*: the child's file writes, fsyncs and renames are counted; the kill comes
  before a randomly chosen one of them, or in the middle of a write after a random
  number of bytes (the bytes before it reach the file);
- *at a time*: after a random delay within the import's measured run time.

After every kill the log must hold none of the sheet's decisions or all of them
(earlier entries byte-identical), and the next commands must work: the import again
(completing it, leaving no temporary file), `adjudicate sheet`, `gold export`.
The same harness run with a line-by-line appending writer (what goldboard did before)
finds partial imports, so the test can fail.
"""

from __future__ import annotations

import builtins
import json
import os
import random
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import invoke_cli as cli

from goldboard.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_adjudication_roundtrip import MI, fill, make_study  # noqa: E402
from test_flags import I, P, S, U  # noqa: E402

TRIES = 20  # per mode
#: figures of the last run, for the report: mode -> {"none": n, "all": n, "partial": n}
FIGURES: dict[str, dict[str, int]] = {}

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")]  # ~160 s


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A study with 4 decisions logged and a filled second sheet (14 new or changed decisions)."""
    root = tmp_path_factory.mktemp("kill")
    st = make_study(root)
    first = root / "study" / "first.xlsx"
    assert cli("adjudicate", "sheet", "--study", st.path, "-o", first).exit_code == 0
    fill(first, {"C-10": (S, None, "dr_lee"), "C-1": (P, "ECOG 2", "dr_kim"), "C-11": (U, None, "dr_lee")})
    fill(first, {("C-2", MI): ("none", None, "dr_lee")})
    assert cli("adjudicate", "import", "--study", st.path, first, "--adjudicator", "dr_lee").exit_code == 0
    sheet = root / "study" / "review.xlsx"
    assert cli("adjudicate", "sheet", "--study", st.path, "-o", sheet).exit_code == 0
    rows = {
        "C-10": (U, "trial evidence reread", "dr_lee"),  # changes D000001
        # changes D000002 (dr_kim's); by dr_lee, who runs the import: a change left under the pre-filled
        # dr_kim while dr_lee imports is refused (issue 32, prefilled_adjudicator_errors)
        "C-1": (I, "no PD-L1 result", "dr_lee"),
        ("C-2", MI): ("stage", "staging missing", "dr_lee"),  # changes the empty set
    }
    for n in (2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 14):
        rows[f"C-{n}"] = (P, f"reason for C-{n} " + "x" * 200, "dr_lee")
    fill(sheet, rows)
    return st.path


def _log_entries(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


class _Injector:
    """Counts the child's write events (write calls, fsync, rename) inside one folder and
    SIGKILLs the process at event ``kill_event`` (after ``kill_byte`` bytes of a write)."""

    def __init__(self, root: Path, kill_event: int | None, kill_byte: int = 0):
        self.root = str(root.resolve())
        self.kill_event = kill_event
        self.kill_byte = kill_byte
        self.events: list[tuple[str, int]] = []

    def _mine(self, path) -> bool:
        try:
            return str(Path(os.fsdecode(path)).resolve()).startswith(self.root)
        except (TypeError, ValueError, OSError):
            return False

    def event(self, kind: str, size: int = 0) -> int:
        """Record an event; returns how many bytes of it may happen (``size`` = all)."""
        n = len(self.events)
        self.events.append((kind, size))
        if self.kill_event is not None and n == self.kill_event:
            return min(self.kill_byte, size) if kind == "write" else -1
        return size

    def install(self) -> None:
        inj = self
        real_open, real_fdopen = builtins.open, os.fdopen
        real_fsync, real_replace, real_rename = os.fsync, os.replace, os.rename

        def die() -> None:
            os.kill(os.getpid(), signal.SIGKILL)

        class KillFile:
            def __init__(self, fh):
                self._fh = fh

            def write(self, data):
                allowed = inj.event("write", len(data))
                if allowed < len(data):
                    if allowed > 0:
                        self._fh.write(data[:allowed])
                    self._fh.flush()  # the bytes written so far reach the file, as in a real kill
                    die()
                return self._fh.write(data)

            def __enter__(self):
                self._fh.__enter__()
                return self

            def __exit__(self, *exc):
                return self._fh.__exit__(*exc)

            def __getattr__(self, name):
                return getattr(self._fh, name)

        def wrap(fh, path, mode):
            return KillFile(fh) if any(c in str(mode) for c in "wax+") and inj._mine(path) else fh

        def op(kind, real, check):
            def f(*args, **kwargs):
                if check(*args) and inj.event(kind) < 0:
                    die()
                return real(*args, **kwargs)

            return f

        builtins.open = lambda file, mode="r", *a, **k: wrap(real_open(file, mode, *a, **k), file, mode)
        os.fdopen = lambda fd, mode="r", *a, **k: wrap(
            real_fdopen(fd, mode, *a, **k), os.readlink(f"/proc/self/fd/{fd}"), mode
        )
        os.fsync = op("fsync", real_fsync, lambda fd: inj._mine(os.readlink(f"/proc/self/fd/{fd}")))
        os.replace = op("rename", real_replace, lambda src, dst: inj._mine(dst))
        os.rename = op("rename", real_rename, lambda src, dst: inj._mine(dst))


def _run_child(study_dir: Path, args: list, injector: _Injector | None, report_fd: int | None = None) -> int:
    """Fork; the child runs the CLI (with the injector installed); returns the child's pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:
        if injector is not None:
            injector.install()
        res = CliRunner().invoke(main, [str(a) for a in args])
        code = res.exit_code
        if report_fd is not None and injector is not None:
            os.write(report_fd, json.dumps(injector.events).encode())
    finally:
        os._exit(code)


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return status


def _import_args(study_dir: Path) -> list:
    return ["adjudicate", "import", "--study", study_dir, study_dir / "review.xlsx", "--adjudicator", "dr_lee"]


def _dry_run(template: Path, tmp_path: Path) -> tuple[list[tuple[str, int]], float, list[dict], list[dict]]:
    """An uninterrupted import in a child: its write events, run time, and the log before/after."""
    d = tmp_path / "dry"
    shutil.copytree(template, d)
    before = _log_entries(d / "decisions.jsonl")
    r, w = os.pipe()
    t0 = time.monotonic()
    pid = _run_child(d, _import_args(d), _Injector(d, None), report_fd=w)
    status = _wait(pid)
    elapsed = time.monotonic() - t0
    os.close(w)
    events = json.loads(os.read(r, 1 << 20).decode())
    os.close(r)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    after = _log_entries(d / "decisions.jsonl")
    return [tuple(e) for e in events], elapsed, before, after


def _classify(study_dir: Path, before_bytes: bytes, before: list[dict], batch: list[dict]) -> str:
    log = study_dir / "decisions.jsonl"
    data = log.read_bytes()
    assert data.startswith(before_bytes), "earlier entries changed"
    try:
        entries = _log_entries(log)
    except json.JSONDecodeError:
        return "partial"  # a torn line
    new = entries[len(before) :]
    key = [(e["item_id"], e["field"], e["decision"], e["reason"]) for e in new]
    if not new:
        return "none"
    if key == [(e["item_id"], e["field"], e["decision"], e["reason"]) for e in batch]:
        return "all"
    return "partial"


def _later_commands_work(study_dir: Path, batch: list[dict], before: list[dict]) -> None:
    res = cli(*_import_args(study_dir))
    assert res.exit_code == 0, res.output
    entries = _log_entries(study_dir / "decisions.jsonl")
    got = [(e["item_id"], e["field"], e["decision"]) for e in entries[len(before) :]]
    assert got == [(e["item_id"], e["field"], e["decision"]) for e in batch]
    assert not list(study_dir.glob(".decisions.jsonl.*.tmp"))  # leftovers removed under the lock
    assert cli("adjudicate", "sheet", "--study", study_dir, "-o", study_dir / "again.xlsx").exit_code == 0
    res = cli("gold", "export", "--study", study_dir)
    assert res.exit_code == 0, res.output


def _campaign(template: Path, tmp_path: Path, mode: str, writer=None) -> dict[str, int]:
    events, elapsed, before, after = _dry_run(template, tmp_path)
    batch = after[len(before) :]
    assert len(batch) == 14
    before_bytes = (template / "decisions.jsonl").read_bytes()
    counts = {"none": 0, "all": 0, "partial": 0}
    for k in range(TRIES):
        rng = random.Random(f"{mode}-{k}")
        d = tmp_path / f"{mode}-{k}"
        shutil.copytree(template, d)
        if mode == "write":
            e = rng.randrange(len(events))
            kind, size = events[e]
            inj = _Injector(d, e, rng.randrange(size) if kind == "write" and size else 0)
            if writer is not None:
                inj.install = _with_writer(inj.install, writer)
            status = _wait(_run_child(d, _import_args(d), inj))
        else:
            pid = _run_child(d, _import_args(d), None)
            time.sleep(rng.uniform(0.0, elapsed * 1.1))
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # pragma: no cover - already done
                pass
            status = _wait(pid)
        outcome = _classify(d, before_bytes, before, batch)
        counts[outcome] += 1
        if writer is None:
            assert outcome != "partial", f"{mode} try {k}: partial import after a kill"
            assert os.WIFSIGNALED(status) or os.WEXITSTATUS(status) == 0
            _later_commands_work(d, batch, before)
        shutil.rmtree(d, ignore_errors=True)
    return counts


def _with_writer(install, writer):
    def f():
        import goldboard.adjudicate.decisions as dec

        dec._write_log = writer
        install()

    return f


def test_import_killed_at_a_write_is_all_or_nothing(template, tmp_path):
    counts = _campaign(template, tmp_path, "write")
    FIGURES["write"] = counts
    print(f"kills at a write: {TRIES} tries -> {counts}")
    assert counts["partial"] == 0 and counts["none"] + counts["all"] == TRIES
    assert counts["none"] > 0  # the kills did land before the rename


def test_import_killed_at_a_random_time_is_all_or_nothing(template, tmp_path):
    counts = _campaign(template, tmp_path, "time")
    FIGURES["time"] = counts
    print(f"kills at a random time: {TRIES} tries -> {counts}")
    assert counts["partial"] == 0 and counts["none"] + counts["all"] == TRIES


def _append_line_by_line(path: Path, keep: bytes, new: list[dict]) -> None:
    """The writer goldboard had before: append each entry to the open log."""
    with open(path, "a", encoding="utf-8") as fh:
        for r in new:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            fh.flush()


def test_the_kill_test_finds_partial_imports_of_a_line_by_line_writer(template, tmp_path):
    counts = _campaign(template, tmp_path, "write", writer=_append_line_by_line)
    print(f"line-by-line writer, kills at a write: {TRIES} tries -> {counts}")
    assert counts["partial"] > 0


def test_killed_gold_export_leaves_no_hidden_folder_behind_forever(template, tmp_path):
    d = tmp_path / "gold-study"
    shutil.copytree(template, d)
    assert cli(*_import_args(d)).exit_code == 0
    # kill the export just before it renames its finished temporary folder into place
    inj = _Injector(d, None)
    r, w = os.pipe()
    pid = _run_child(d, ["gold", "export", "--study", d], inj, report_fd=w)
    assert os.WIFEXITED(_wait(pid))
    os.close(w)
    events = json.loads(os.read(r, 1 << 20).decode())
    os.close(r)
    shutil.rmtree(d / "gold")
    rename = next(i for i, (kind, _) in enumerate(events) if kind == "rename")
    status = _wait(_run_child(d, ["gold", "export", "--study", d], _Injector(d, rename)))
    assert os.WIFSIGNALED(status)
    left = [p.name for p in (d / "gold").iterdir()]
    assert len(left) == 1 and left[0].startswith(".v1.") and left[0].endswith(".tmp")
    res = cli("gold", "export", "--study", d)
    assert res.exit_code == 0, res.output
    assert f"Note: removed {d / 'gold' / left[0]}, an unfinished release folder left by an interrupted export" in (
        res.output
    )
    assert sorted(p.name for p in (d / "gold").iterdir()) == ["v1"]


def test_concurrent_imports_both_land_nothing_lost(template, tmp_path):
    """Two imports at once (two sheets written from the same log, different rows): the lock
    makes them take turns, so both batches are in the log with distinct ids.  (Had the
    second sheet kept its pre-filled rows, whichever came second would be refused with
    conflicts: its rows would replace the first one's newer decisions.)"""
    d = tmp_path / "concurrent"
    shutil.copytree(template, d)
    other = d / "other.xlsx"
    assert cli("adjudicate", "sheet", "--study", d, "-o", other).exit_code == 0
    blank = (None, None, None)  # its pre-filled rows cleared: it decides only C-15 and C-16
    fill(other, {"C-10": blank, "C-1": blank, "C-11": blank, ("C-2", MI): blank})
    fill(other, {"C-15": (S, "onc_b missed the trial", "dr_kim"), "C-16": (U, "no evidence", "dr_kim")})
    before = _log_entries(d / "decisions.jsonl")
    pids = [
        _run_child(d, _import_args(d), None),
        _run_child(d, ["adjudicate", "import", "--study", d, other, "--adjudicator", "dr_kim"], None),
    ]
    assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in map(_wait, pids))
    entries = _log_entries(d / "decisions.jsonl")
    new = entries[len(before) :]
    assert len(new) == 14 + 2 and len({e["id"] for e in entries}) == len(entries)
    assert {"C-15", "C-16"} <= {e["item_id"] for e in new} and len({e["batch"] for e in new}) == 2
