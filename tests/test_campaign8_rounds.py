"""Issue 23, campaign 8b (o9): calibrate's round choice and the report's round sentences.  Each test
builds the study, runs the command and reads the sentence; each fails on the code before its fix
(checked by hand on the commit before, by reverting the fix).

1. E34c/E38: after ``study round S 2 --calibration`` (round 1 a main round, round 2 not pulled yet)
   ``calibrate`` printed "no round is marked as calibration", "met in round 1: calibration can stop",
   and recorded look 1 of 5 on the main round 1.  It now says the calibration round is not pulled yet,
   evaluates nothing and records nothing; ``--round 1`` (a main round) is refused the same way; the
   report's calibration section says it too.
2. F04: when every one of onc_b's round-2 ratings was held out as invalid at pull, the report called
   round 2 "ratings from onc_a only ...: a test-retest round", showed onc_a's test-retest agreement and
   said "Warnings: none".  The round sentence counts the held-out ratings, the round is not called a
   test-retest round, and the warnings name them (also for the round analysed, and in calibrate's note on
   a calibration round it leaves out).
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import error_line, invoke_cli, run_cli  # noqa: E402

from goldboard.study import Study  # noqa: E402

V = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information", "Unsafe"]
IDS = [f"I{k:02d}" for k in range(1, 31)]
A = [V[k % 4] for k in range(30)]
B = [(V[(k + 1) % 4] if k < 6 else A[k]) for k in range(30)]
PULL = ("--item-col", "case_id", "--field", "safety_label")
COLS = ("--rater-cols", "onc_a=a,onc_b=b")


@pytest.fixture(autouse=True)
def _server_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "srv"))


def _table(path: Path, cols: dict[str, list[str]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", *cols])
        w.writerows(zip(IDS, *cols.values()))
    return path


def two_rater_study(tmp_path: Path) -> Path:
    """30 items rated by onc_a and onc_b in round 1 (a main round; they differ on 6 items)."""
    st = tmp_path / "S"
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run_cli("pull", "--study", st, "--from-table", _table(tmp_path / "t1.csv", {"a": A, "b": B}), *PULL, *COLS)
    return st


# -- 1. E34c/E38: a calibration round declared before its pull ---------------------------------


def test_calibrate_never_tests_a_main_round_for_a_calibration_round_not_pulled(tmp_path):
    st = two_rater_study(tmp_path)
    run_cli("study", "round", st, 2, "--calibration")
    before = (st / "study.toml").read_bytes()
    for extra in ((), ("--no-record",)):
        res = invoke_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", *extra)
        line = error_line(res)
        assert "round 2 is marked as calibration but not pulled yet" in line, line
        assert "round 1 is a main round" in line and "no look recorded" in line, line
        assert "no round is marked" not in res.output and "calibration can stop" not in res.output
    assert (st / "study.toml").read_bytes() == before  # no look, no rule recorded
    assert "calibration" not in Study.open(st).extra
    # naming the main round explicitly takes no look on it either
    line = error_line(invoke_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--round", 1))
    assert "--round: round 1 is a main round, not a calibration round (round 2 is marked as calibration)" in line
    assert (st / "study.toml").read_bytes() == before
    # the report (a rule given) says the same instead of testing round 1
    out = tmp_path / "r.md"
    run_cli("report", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "markdown", "-o", out, "--no-supplement")
    text = out.read_text()
    assert "Round 2 is marked as calibration but not pulled yet" in text
    assert "calibration can stop" not in text and "met in round 1" not in text


def test_calibrate_tests_the_pulled_calibration_round_and_names_the_one_not_pulled(tmp_path):
    """Round 2 marked calibration and pulled, round 3 declared calibration: round 2 is look 1 (round 1,
    a main round, is not shown), round 3 is named as not pulled yet."""
    st = two_rater_study(tmp_path)
    run_cli(
        "pull", "--study", st, "--round", 2, "--from-table", _table(tmp_path / "t2.csv", {"a": A, "b": B}), *PULL, *COLS
    )
    run_cli("study", "round", st, 2, "--calibration")
    run_cli("study", "round", st, 3, "--calibration")
    res = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "json")
    data = json.loads(res.stdout)
    assert [(r["round"], r["look"]) for r in data["rounds"]] == [(2, 1)]
    assert "round 3 marked as calibration but not pulled yet: not evaluated" in data["notes"]
    assert not any("no round is marked" in n for n in data["notes"])
    assert Study.open(st).extra["calibration"]["look_rounds"] == [2]


# -- 2. F04: a round whose second rater's ratings were all held out as invalid -----------------


def _report(st: Path, out: Path) -> str:
    run_cli("report", "--study", st, "--format", "markdown", "-o", out, "--no-supplement")
    return out.read_text()


def test_report_names_held_out_ratings_and_never_calls_the_round_test_retest(tmp_path):
    st = two_rater_study(tmp_path)
    bad = _table(tmp_path / "t2.csv", {"a": A, "b": ["Perhaps"] * 30})
    res = run_cli("pull", "--study", st, "--round", 2, "--from-table", bad, *PULL, *COLS)
    assert "onc_b: 0 rated, 30 invalid" in res.output
    text = _report(st, tmp_path / "r.md")
    where = f"see {st / 'rounds' / '2' / 'invalid.csv'}"
    assert (
        "- Round analysed: round 1, the latest complete round; round 2 has valid ratings from onc_a only (30 items; "
        f"onc_b's ratings of 30 items held out as invalid at pull, {where}): not a test-retest round" in text
    )
    assert "a test-retest round or a round in progress" not in text
    assert "Test-retest (intra-rater) agreement" not in text  # no retest section on onc_a alone
    warnings = text[text.index("## Warnings") :]
    assert "- none" not in warnings
    assert (
        f"- round 2: onc_b's ratings of 30 items were held out as invalid at pull ({where}); they are in none of this "
        "report's statistics" in warnings
    )
    # agree names the round the same way
    res = run_cli("agree", "--study", st)
    assert "onc_b's ratings of 30 items held out as invalid at pull" in res.output


def test_true_retest_round_keeps_its_section_and_counts_its_own_held_out_ratings(tmp_path):
    """onc_a alone re-rates the 30 items, 2 of them with a value the schema does not have: still a
    test-retest round (no other rater's rating was held out); the sentence, the section and the warnings
    count the 2 held out."""
    st = two_rater_study(tmp_path)
    a2 = ["Perhaps", "Perhaps", *A[2:]]
    run_cli(
        "pull",
        "--study",
        st,
        "--round",
        2,
        "--from-table",
        _table(tmp_path / "t2.csv", {"a": a2}),
        *PULL,
        "--rater-cols",
        "onc_a=a",
    )
    text = _report(st, tmp_path / "r.md")
    where = f"see {st / 'rounds' / '2' / 'invalid.csv'}"
    assert (
        f"round 2 has ratings from onc_a only (28 items, each rated in round 1 too; onc_a's ratings of 2 items held "
        f"out as invalid at pull, {where}): a test-retest round or a round in progress" in text
    )
    assert "## Test-retest (intra-rater) agreement" in text
    assert "2 of onc_a's round-2 ratings were held out as invalid at pull and are not in these numbers" in text
    assert "- round 2: onc_a's ratings of 2 items were held out as invalid at pull" in text


def test_calibrate_names_held_out_ratings_of_a_round_it_leaves_out(tmp_path):
    """Rounds 1 and 2 marked calibration; onc_b's round-2 ratings all held out: calibrate tests round 1
    and says why round 2 is left out (not "in progress")."""
    st = two_rater_study(tmp_path)
    bad = _table(tmp_path / "t2.csv", {"a": A, "b": ["Perhaps"] * 30})
    run_cli("pull", "--study", st, "--round", 2, "--from-table", bad, *PULL, *COLS)
    for n in (1, 2):
        run_cli("study", "round", st, n, "--calibration")
    data = json.loads(run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "json").stdout)
    assert [r["round"] for r in data["rounds"]] == [1]
    where = st / "rounds" / "2" / "invalid.csv"
    assert (
        f"round 2 has valid ratings from onc_a only (30 items; onc_b's ratings of 30 items held out as invalid at "
        f"pull, see {where}): not evaluated" in data["notes"]
    )


def test_report_counts_held_out_ratings_of_the_round_it_analyses(tmp_path):
    st = tmp_path / "S"
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    b = ["Perhaps"] * 5 + B[5:]
    run_cli("pull", "--study", st, "--from-table", _table(tmp_path / "t1.csv", {"a": A, "b": b}), *PULL, *COLS)
    text = _report(st, tmp_path / "r.md")
    where = f"see {st / 'rounds' / '1' / 'invalid.csv'}"
    assert (
        "- Round analysed: round 1, the latest round, as it is (25 of 30 items rated by every rater; onc_b's ratings "
        f"of 5 items held out as invalid at pull, {where})" in text
    )
    assert f"- round 1: onc_b's ratings of 5 items were held out as invalid at pull ({where})" in text
