"""Issue 23, campaign 7b (i7): rounds, calibration looks and report outputs.  Each test builds the
study, runs the command and reads the sentence; each fails on the code before its fix (checked by
hand on the commit before, by reverting the fix).

1. M10: a stopping-rule look recorded on round 1 vanished once round 1 was re-marked main and round 2
   calibration: study.toml kept ``looks = 1`` after two looks, calibrate showed round 2 as "Look 1 of
   5" and the report said "1 look taken (round 2): met".  Every look ever taken is recorded (the
   rounds, in order) and counted; re-marking a round warns and never forgets it.
2. M06: a finished test-retest round (onc_a alone re-rated the 30 items) and a round two of three raters
   rated were "in progress ... nothing to analyse yet", and the report never gave the test-retest
   agreement: the sentence says what the ratings show, and the report adds the rater's test-retest
   agreement (the numbers of ``agree --test-retest``).
3. R_sup: two studies' reports written into one folder shared supplement/: the second replaced the first's
   CSVs.  The manifest records whose supplement it is; another study's report is refused before anything
   is written; the same study's report under another name replaces it with a warning.
4. S04: the score header said "34 rows" for a 50-row predictions file (16 skipped on unresolved gold).
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
C = [(V[(k + 2) % 4] if k >= 24 else A[k]) for k in range(30)]
PULL = ("--item-col", "case_id", "--field", "safety_label")


@pytest.fixture(autouse=True)
def _server_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "srv"))


def _table(path: Path, cols: dict[str, list[str]]) -> Path:
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", *cols])
        w.writerows(zip(IDS, *cols.values()))
    return path


def three_rater_study(tmp_path: Path, name: str = "ST") -> Path:
    """30 items rated by onc_a, onc_b, onc_c in round 1 (a/b differ on 6 items, a/c on 6 others)."""
    st = tmp_path / name
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b,onc_c")
    t3 = _table(tmp_path / f"{name}_t3.csv", {"a": A, "b": B, "c": C})
    run_cli("pull", "--study", st, "--from-table", t3, *PULL, "--rater-cols", "onc_a=a,onc_b=b,onc_c=c")
    return st


# --------------------------------------------------------------------------- 1. M10: a look is never forgotten


def _remarked_study(tmp_path: Path) -> Path:
    st = three_rater_study(tmp_path)
    t2 = _table(tmp_path / "t2.csv", {"a": A, "b": B})
    run_cli("pull", "--study", st, "--from-table", t2, *PULL, "--rater-cols", "onc_a=a,onc_b=b", "--round", 2)
    run_cli("study", "round", st, 1, "--calibration")
    run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3")
    res = run_cli("study", "round", st, 1, "--main")
    assert "Warning: calibration look 1 was taken on round 1; it stays counted" in res.output
    run_cli("study", "round", st, 2, "--calibration")
    return st


def test_m10_a_look_on_a_round_marked_main_later_still_counts(tmp_path):
    st = _remarked_study(tmp_path)
    res = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "json")
    data = json.loads(res.stdout)
    assert [(r["round"], r["look"]) for r in data["rounds"]] == [(1, 1), (2, 2)]
    assert data["looks"] == 2
    cal = Study.open(st).extra["calibration"]
    assert cal["looks"] == 2 and cal["look_rounds"] == [1, 2]
    table = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3").output
    assert "Looks: 2 of 5 planned" in table
    assert "round 1 is not marked calibration now, but look 1 was taken on it: it stays a look" in table
    run_cli("report", "--study", st, "--format", "markdown", "-o", tmp_path / "rep" / "r.md")
    text = (tmp_path / "rep" / "r.md").read_text()
    assert "2 looks taken (rounds 1, 2): met at the latest look (round 2)" in text
    assert "1 look taken" not in text
    assert "a calibration look (look 1) was taken on round 1" in text


def test_m10_showing_one_round_keeps_the_look_numbers(tmp_path):
    st = _remarked_study(tmp_path)
    run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3")
    out = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--round", 2).output
    assert "2 of 5" in out and "Looks: 2 of 5 planned" in out
    assert Study.open(st).extra["calibration"]["look_rounds"] == [1, 2]


# --------------------------------------------------------------------------- 3. R_sup: one supplement per report


def _two_rater_study(tmp_path: Path, name: str) -> Path:
    st = tmp_path / name
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    t2 = _table(tmp_path / f"{name}_t2.csv", {"a": A, "b": B})
    run_cli("pull", "--study", st, "--from-table", t2, *PULL, "--rater-cols", "onc_a=a,onc_b=b")
    return st


def test_r_sup_another_studys_report_never_replaces_a_supplement(tmp_path):
    a, b = three_rater_study(tmp_path, "A"), _two_rater_study(tmp_path, "B")
    out = tmp_path / "out"
    run_cli("report", "--study", a, "--format", "markdown", "-o", out / "a.md")
    before = {p.name: p.read_bytes() for p in (out / "supplement").iterdir()}
    assert any("onc_c" in n for n in before)
    res = invoke_cli("report", "--study", b, "--format", "markdown", "-o", out / "b.md")
    line = error_line(res)
    assert "out/supplement/ holds the CSV supplement of the report a.md of another study (A," in line
    assert "--no-supplement" in line and "--output" in line
    assert not (out / "b.md").exists()
    assert {p.name: p.read_bytes() for p in (out / "supplement").iterdir()} == before
    run_cli("report", "--study", b, "--format", "markdown", "-o", out / "b.md", "--no-supplement")
    assert (out / "b.md").exists() and {p.name: p.read_bytes() for p in (out / "supplement").iterdir()} == before


def test_r_sup_the_same_report_rewritten_or_its_study_moved_keeps_its_supplement(tmp_path):
    a = three_rater_study(tmp_path, "A")
    out = tmp_path / "out"
    run_cli("report", "--study", a, "--format", "markdown", "-o", out / "a.md")
    run_cli("report", "--study", a, "-o", out / "a.html")  # the same report as HTML
    moved = a.rename(tmp_path / "A_moved")
    res = run_cli("report", "--study", moved, "--format", "markdown", "-o", out / "a.md")
    assert str(out / "supplement") in res.output
    rec = json.loads((out / "supplement" / ".goldboard-supplement.json").read_text())
    assert rec["study_name"] == "A" and rec["report"] == "a.md" and rec["files"]
    assert "Warning" not in res.output
    # the same study's report under another name replaces the tables a.md points at: said so
    res = run_cli("report", "--study", moved, "--format", "markdown", "-o", out / "a2.md", "--round", 1)
    assert "Warning: " + str(out / "supplement") + "/ held the CSV supplement of a.md (this study); it now holds" in (
        res.output
    )


# --------------------------------------------------------------------------- 4. S04: the score header counts the file


def test_s04_score_header_counts_the_files_rows_and_the_skipped_ones(tmp_path):
    st = _two_rater_study(tmp_path, "ST")
    run_cli("gold", "export", "--study", st)  # a/b differ on 6 items: 6 unresolved
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"case_id": i, "model": "gpt", "predicted_label": "Supported"}) + "\n" for i in IDS)
    )
    out = run_cli("score", "--study", st, "--predictions", preds, "--bootstrap", 0).stdout
    assert f"predictions: {preds}, 30 rows, 24 scored (6 on items with unresolved gold, skipped)" in out
    assert "24 rows" not in out


# --------------------------------------------------------------------------- 2. M06: what a later round is

RETEST = [V[4] if k in (1, 5, 9, 13) else A[k] for k in range(30)]  # onc_a changes 4 of 30 labels


def test_m06_a_round_one_rater_re_rated_is_named_and_its_retest_agreement_reported(tmp_path):
    st = three_rater_study(tmp_path)
    t = _table(tmp_path / "retest.csv", {"a": RETEST})
    run_cli("pull", "--study", st, "--from-table", t, *PULL, "--rater-cols", "onc_a=a", "--round", 2)
    agree = run_cli("agree", "--study", st, "--test-retest", "--rounds", "1,2").stdout
    assert "onc_a  Percent agreement               30  0.867  0.745 to 0.988" in agree
    assert "onc_a  Cohen's kappa                   30  0.830  0.684 to 0.976" in agree
    run_cli("report", "--study", st, "--format", "markdown", "-o", tmp_path / "rep" / "r.md")
    text = (tmp_path / "rep" / "r.md").read_text()
    assert "nothing to analyse yet" not in text and "is in progress" not in text
    assert (
        "- Round analysed: round 1, the latest complete round; round 2 has ratings from onc_a only (30 items, each "
        "rated in round 1 too): a test-retest round or a round in progress, with no inter-rater agreement to analyse "
        "(onc_a's test-retest agreement: goldboard agree --test-retest --rounds 1,2)"
    ) in text
    section = text[text.index("## Test-retest (intra-rater) agreement") :]
    assert "Round 2 has ratings from onc_a only, of items onc_a rated in round 1 too" in section
    assert "| onc_a | 1 vs 2 | Percent agreement | 30 | 0.867 | 0.745 to 0.988 | asymptotic |" in section
    assert "| onc_a | 1 vs 2 | Cohen's kappa | 30 | 0.830 | 0.684 to 0.976 | asymptotic |" in section
    sup = (tmp_path / "rep" / "supplement" / "test_retest.csv").read_text()
    assert "0.867" in sup and "onc_a" in sup


def test_m06_a_round_fewer_raters_rated_is_not_nothing_to_analyse(tmp_path):
    st = three_rater_study(tmp_path)
    t2 = _table(tmp_path / "t2.csv", {"a": A, "b": B})
    run_cli("pull", "--study", st, "--from-table", t2, *PULL, "--rater-cols", "onc_a=a,onc_b=b", "--round", 2)
    run_cli("report", "--study", st, "--format", "markdown", "-o", tmp_path / "rep" / "r.md")
    text = (tmp_path / "rep" / "r.md").read_text()
    assert "nothing to analyse yet" not in text
    assert (
        "round 2 has ratings from onc_a, onc_b only (onc_c rated none of its 30 items): a round with fewer raters, "
        "or one in progress; --round 2 analyses it as it is"
    ) in text
    assert "## Test-retest" not in text
    res = run_cli("agree", "--study", st, "--round", 2)
    assert "30" in res.stdout  # the round the sentence points at is analysable as it is
    run_cli("study", "round", st, 2, "--calibration")
    out = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--no-record").output
    assert (
        "Note: round 2 has ratings from onc_a, onc_b only (30 items; a round with fewer raters, or one in progress): "
        "evaluated as it is"
    ) in out
