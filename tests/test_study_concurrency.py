"""Two goldboard commands writing one study at once never lose a write (issue 32).

Every command opens study.toml, works (a pull talks to the server for minutes), then saves
what it changed.  Before the study-wide lock and merge, the later save wrote back the whole
file as that command had read it, so ``push --round 2`` during a ``pull`` lost round 2 and
``study add-rater`` during a first pull lost the rater, after printing success.  Now a save
takes the study lock, reads study.toml again and applies only this command's changes to it;
when two commands changed the same entry to different values the later one refuses (one
line) and saves nothing.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import pytest
from conftest import run_cli as run

from goldboard.study import Study


def _study(tmp_path: Path) -> Path:
    s = tmp_path / "st"
    Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    return s


def test_two_handles_each_keep_their_change(tmp_path):
    """The interleaving of the issue, without processes: a long command (a pull) opened the
    study before a short one (push --round 2 / add-rater) saved; its save keeps theirs."""
    s = _study(tmp_path)
    Study.open(s).mark_round(1)
    pull = Study.open(s)  # a pull reads study.toml, then talks to the server
    push = Study.open(s)
    push.mark_round(2, guideline_version="v2")  # what `push --round 2` records
    Study.open(s).add_rater("onc_c")
    pull.round(1).access = {"pull": {"enforced": True}}  # what the pull records at its end
    pull.save()
    st = Study.open(s)
    assert [r.number for r in st.rounds] == [1, 2]
    assert st.round(2).guideline_version == "v2"
    assert st.raters == ["onc_a", "onc_b", "onc_c"]
    assert st.round(1).access == {"pull": {"enforced": True}}
    # the pull's handle now holds what is on disk: a second save of it loses nothing either
    assert pull.raters == ["onc_a", "onc_b", "onc_c"] and [r.number for r in pull.rounds] == [1, 2]
    pull.save()
    assert Study.open(s).raters == ["onc_a", "onc_b", "onc_c"]


def test_same_entry_changed_twice_refused_nothing_saved(tmp_path):
    s = _study(tmp_path)
    Study.open(s).mark_round(1)
    a, b = Study.open(s), Study.open(s)
    a.mark_round(1, guideline_version="v1")
    before = (s / "study.toml").read_bytes()
    b.round(1).guideline_version = "v9"
    with pytest.raises(Exception) as exc:
        b.save()
    msg = str(exc.value)
    assert "study.toml" in msg and "round 1" in msg and "guideline_version" in msg and "another" in msg
    assert "\n" not in msg
    assert (s / "study.toml").read_bytes() == before


def test_two_new_raters_at_once_both_kept(tmp_path):
    s = _study(tmp_path)
    a, b = Study.open(s), Study.open(s)
    a.add_rater("onc_c")
    b.add_rater("onc_d")
    assert Study.open(s).raters == ["onc_a", "onc_b", "onc_c", "onc_d"]


def test_init_twice_at_once_second_refused(tmp_path):
    s = tmp_path / "st"
    a = Study(path=s, name="st", schema_ref="mtb_unsafe", raters=["onc_a", "onc_b"])
    Study.init(s, schema="mtb_unsafe", raters=["onc_x", "onc_y"])
    with pytest.raises(Exception, match="a study already exists here"):
        a.save()  # a second `study init` that checked before the first wrote
    assert Study.open(s).raters == ["onc_x", "onc_y"]


# --------------------------------------------------------------------------- real processes


def _writer(path: str, k: int, barrier, out) -> None:
    try:
        st = Study.open(path)
        barrier.wait()
        time.sleep(0.05 * (k % 3))  # every handle was read before any save
        if k == 0:
            st.round(1).access = {"pull": {"enforced": True}}  # the pull
            time.sleep(0.3)
            st.save()
        elif k == 1:
            st.mark_round(2, guideline_version="g2")  # push --round 2
        else:
            st.add_rater(f"rater_{k}")
        out.put((k, "ok"))
    except Exception as exc:  # pragma: no cover - reported by the assertion below
        out.put((k, f"{type(exc).__name__}: {exc}"))


def test_concurrent_processes_lose_no_write(tmp_path):
    s = _study(tmp_path)
    Study.open(s).mark_round(1)
    n = 6
    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(s), k, barrier, out)) for k in range(n)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    results = dict(out.get(timeout=5) for _ in range(n))
    assert all(v == "ok" for v in results.values()), results
    st = Study.open(s)
    assert [r.number for r in st.rounds] == [1, 2]
    assert st.round(2).guideline_version == "g2"
    assert st.round(1).access == {"pull": {"enforced": True}}
    assert sorted(st.raters) == sorted(["onc_a", "onc_b", *(f"rater_{k}" for k in range(2, n))])


def _slow_pull(path: str, table: str, ready, go, out) -> None:
    """``goldboard pull --from-table`` whose save waits until the parent has written."""
    import goldboard.study as study_mod

    real = study_mod.Study.save

    def save(self):
        ready.set()
        go.wait(30)
        real(self)

    study_mod.Study.save = save
    res = run(
        "pull",
        "--study",
        path,
        "--from-table",
        table,
        "--item-col",
        "case_id",
        "--rater-cols",
        "onc_a=a,onc_b=b",
        "--field",
        "safety_label",
        code=None,
    )
    out.put((res.exit_code, res.output))


def test_cli_writes_during_a_pull_are_kept(tmp_path):
    """`study round 2` (what push --round 2 records) and `study set` while a first pull
    runs: the pull's round, the new round and the new name are all in study.toml afterwards."""
    s = _study(tmp_path)
    assert run("study", "round", s, "1", "--guideline-version", "v1").exit_code == 0
    t = tmp_path / "r1.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\n")
    ctx = mp.get_context("fork")
    ready, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    p = ctx.Process(target=_slow_pull, args=(str(s), str(t), ready, go, out))
    p.start()
    assert ready.wait(60)
    assert run("study", "set", s, "--name", "NSCLC pilot").exit_code == 0
    assert run("study", "round", s, "2", "--guideline-version", "v2").exit_code == 0
    go.set()
    p.join(60)
    code, output = out.get(timeout=5)
    assert code == 0, output
    st = Study.open(s)
    assert st.name == "NSCLC pilot"
    assert [r.number for r in st.rounds] == [1, 2] and st.round(2).guideline_version == "v2"
    assert st.round(1).tables and st.round(1).guideline_version == "v1"
