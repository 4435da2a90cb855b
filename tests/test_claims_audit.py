"""Printed claims audited against the study's files (issue 21 follow-up, claims.md).

Each test builds a study of an unusual but legitimate shape through the CLI, reads the sentence
goldboard prints about it and checks it against what the study's files say.  Each failed on the
code before its fix (checked):

- a 3-rater study with gaps: the methods paragraph said "(2 label disagreements and 3 missing
  ratings)" of 4 flagged rows (a row can have both), and named a rater who decided an item as if
  an outside adjudicator;
- two raters agreeing on every item, and two raters using one category only: the methods paragraph
  said "95% confidence intervals are two-sided Wald (z) intervals ..." and "Wald intervals may
  undercover" when no statistic had an interval at all.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
from conftest import run_cli as run

S, U = "Supported", "Unsupported"
TABLE = ["--item-col", "case_id", "--rater-col", "rater", "--label-col", "label", "--field", "safety_label"]


def _study(tmp: Path, name: str, raters: str, rows: list[tuple[str, str, str]]) -> Path:
    table = tmp / f"{name}.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "label"])
        w.writerows(rows)
    s = tmp / name
    run("study", "init", s, "--schema", "mtb", "--raters", raters)
    run("pull", "--study", s, "--from-table", table, *TABLE)
    return s


def methods(s: Path, *extra) -> str:
    out = s.parent / f"{s.name}-report.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement", *extra)
    return out.read_text().split("## Methods")[1].split("## Results")[0].strip().replace("\\", "")


def _gaps(tmp: Path) -> Path:
    """6 items, 3 raters, some ratings missing: c2 disagrees; c3 disagrees with a rating missing;
    c4 and c5 only miss a rating; c1 and c6 are unanimous."""
    cells = {
        "c1": (S, S, S),
        "c2": (S, S, U),
        "c3": (S, U, None),
        "c4": (S, S, None),
        "c5": (U, None, U),
        "c6": (S, S, S),
    }
    rows = [(c, r, v) for c, vals in cells.items() for r, v in zip(("onc_a", "onc_b", "onc_c"), vals) if v]
    return _study(tmp, "gaps", "onc_a,onc_b,onc_c", rows)


def test_flagged_rows_are_split_the_way_the_flags_file_says(tmp_path):
    s = _gaps(tmp_path)
    flags = tmp_path / "flags.csv"
    run("flag", "--study", s, "--format", "csv", "-o", flags)
    rows = list(csv.DictReader(flags.open()))
    assert len(rows) == 4
    kinds = [set(r["kinds"].split("; ")) for r in rows]
    assert sum("disagree" in k for k in kinds) == 2 and sum("missing" in k for k in kinds) == 3
    text = methods(s)
    # the old text, "(2 label disagreements and 3 missing ratings)", added up to 5 of 4 rows
    assert (
        "4 item-field rows were flagged for adjudication by the schema's named boundaries and adjudication "
        "triggers (2 label disagreements and 2 rows flagged only by other triggers; 3 of the 4 have a missing "
        "rating); none has been adjudicated yet." in text
    ), text
    assert "3 missing ratings" not in text
    # status splits the same rows the same way
    status = run("status", "--study", s).output
    assert "4 of 4 flagged rows still to decide (2 label disagreements, 2 other triggers" in status


def test_a_rater_who_decided_is_named_as_one(tmp_path):
    s = _gaps(tmp_path)
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Case ID"].value == "c2":
            rec["Decision"].value, rec["Reason"].value = S, "guideline 4.2"
        if rec["Case ID"].value == "c3":
            rec["Decision"].value, rec["Reason"].value, rec["Adjudicator"].value = U, "no evidence", "onc_c"
    wb.save(sheet)
    run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair")
    log = [json.loads(line) for line in (s / "decisions.jsonl").read_text().splitlines()]
    assert {(e["adjudicator"], e["independent"]) for e in log} == {("dr_chair", True), ("onc_c", False)}
    out = s.parent / "adj.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement")
    adj = out.read_text()
    # "1 decisions" before; the count is of the log's entries by that person
    assert "- Adjudicator onc_c: 1 decision logged, NOT independent" in adj, adj
    assert "- Adjudicator dr_chair: 1 decision logged, independent" in adj
    text = methods(s)
    assert (
        "2 decisions are in force, made by dr_chair (review sheet) and onc_c (review sheet; a rater of this "
        "study, not independent); 2 not yet adjudicated." in text
    ), text


def test_no_interval_method_is_named_when_no_statistic_has_an_interval(tmp_path):
    rows = [(f"c{i}", r, [S, U][i % 2]) for i in range(10) for r in ("onc_a", "onc_b")]
    s = _study(tmp_path, "agreeing", "onc_a,onc_b", rows)
    # Wald intervals (--ci wald) at perfect agreement collapse: no statistic has one (the default
    # Wilson interval is one-sided there instead: test_methods_text)
    text = methods(s, "--ci", "wald")
    assert "Wald (z)" not in text and "Wald intervals may" not in text, text
    assert "bootstrap intervals are offered" not in text
    assert "No Wald or bootstrap 95% confidence interval could be computed. No confidence interval (degenerate " in (
        text
    )
    assert "Cohen's kappa on safety_label" in text


def test_one_category_only_names_no_interval_method(tmp_path):
    rows = [(f"c{i}", r, S) for i in range(10) for r in ("onc_a", "onc_b")]
    s = _study(tmp_path, "one-category", "onc_a,onc_b", rows)
    text = methods(s)
    assert "Wald (z)" not in text and "Wald intervals may" not in text, text
    assert "Not estimable (undefined estimate): Cohen's kappa on safety_label, Scott's pi on safety_label" in text
    # --ci auto: no bootstrap note either (every bootstrap resample is the same degenerate table)
    assert "bootstrap intervals" not in methods(s, "--ci", "auto")


def test_wald_intervals_are_still_named_where_there_are_some(tmp_path):
    text = methods(_gaps(tmp_path), "--ci", "wald")  # the default is Wilson (issue 34): Wald on request
    assert "95% confidence intervals are two-sided Wald (z) intervals" in text
    assert "Wald intervals may undercover for safety_label (" in text and "n = 6 &lt; 30)" in text


def test_a_study_rater_without_ratings_is_not_said_to_have_labelled(tmp_path):
    """A Prodigy-style round where the third rater's answers were all invalid: two raters labelled.
    The paragraph said "3 raters (onc_a, onc_b, onc_c) labelled 10 items"."""
    rows = [(f"c{i}", r, [S, U][i % 3 == 0]) for i in range(10) for r in ("onc_a", "onc_b")]
    s = _study(tmp_path, "idle", "onc_a,onc_b,onc_c", rows)
    ratings = list(csv.DictReader((s / "rounds" / "1" / "ratings.csv").open()))
    assert {r["rater"] for r in ratings if r["value"]} == {"onc_a", "onc_b"}
    text = methods(s)
    assert text.startswith(
        "2 of the study's 3 raters (onc_a, onc_b) labelled 10 items (one NSCLC case x one proposed tumor-board "
        "therapy recommendation) with the mtb schema v1.0; onc_c rated no item in round 1; both rated every item "
        "on safety_label."
    ), text
    assert "3 raters (onc_a, onc_b, onc_c) labelled" not in text
    assert "Assignment design: not recorded (ratings imported from a ratings table: idle.csv)." in text


def test_the_round_sentence_does_not_count_a_rater_who_rated_nothing(tmp_path):
    """onc_c rated nothing: round 1 is not "complete: every rater rated each of its items"."""
    rows = [(f"c{i}", r, [S, U][i % 3 == 0]) for i in range(10) for r in ("onc_a", "onc_b")]
    s = _study(tmp_path, "idle", "onc_a,onc_b,onc_c", rows)
    out = tmp_path / "r.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement")
    text = out.read_text()
    assert "- Round analysed: round 1, the latest round (complete: every rater but onc_c rated each of its items)" in (
        text
    ), text
    assert "every rater rated" not in text


def test_an_undecidable_look_says_whether_more_items_can_help(tmp_path):
    """The note said "rate more items (a limit could not be computed)" where more items of the same
    kind change nothing: kappa undefined with one category only; alpha's Wald limit at perfect
    agreement (zero width)."""
    one = _study(tmp_path, "one", "onc_a,onc_b", [(f"c{i}", r, S) for i in range(10) for r in ("onc_a", "onc_b")])
    data = json.loads(run("calibrate", "--study", one, "--rule", "kappa_lower>=0.6", "--format", "json").stdout)
    assert data["verdict"] == "cannot be decided"
    assert (
        "round 1: cannot be decided at n = 10: Cohen's kappa on safety_label is undefined (the ratings do not "
        "vary, e.g. every rating in one category): more items settle it only if they bring other categories"
    ) in data["notes"], data["notes"]
    rows = [(f"c{i}", r, [S, U][i % 2]) for i in range(10) for r in ("onc_a", "onc_b")]
    agreeing = _study(tmp_path, "agreeing", "onc_a,onc_b", rows)
    data = json.loads(run("calibrate", "--study", agreeing, "--rule", "alpha_lower>=0.6", "--format", "json").stdout)
    assert data["verdict"] == "cannot be decided"
    assert (
        "round 1: cannot be decided at n = 10: Krippendorff's alpha on safety_label has a zero-width Wald "
        "interval (perfect agreement, standard error 0), which more items leave at zero width while agreement "
        "stays perfect"
    ) in data["notes"], data["notes"]


def test_methods_say_the_stopping_rule_was_not_met_before_the_main_round(tmp_path):
    """A calibration round that did not meet its rule, then a main round: the paragraph said
    "Stopping rule: kappa_lower>=0.4, checked at up to 5 looks ..." and left the outcome out, so a
    reader takes the rule for met."""
    cal = [(f"k{i}", r, [S, U, "Partially Supported"][i % 3]) for i in range(12) for r in ("onc_a", "onc_b")]
    cal[1] = ("k0", "onc_b", U)  # 2 of 12 disagree: kappa about 0.75, too few items for the rule
    cal[3] = ("k1", "onc_b", S)
    s = _study(tmp_path, "cal", "onc_a,onc_b", cal)
    run("study", "round", s, 1, "--calibration")
    data = json.loads(run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4", "--format", "json").stdout)
    assert data["verdict"] == "continue calibrating"
    main = tmp_path / "main.csv"
    with main.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "label"])
        w.writerows((f"m{i}", r, [S, U][i % 2]) for i in range(30) for r in ("onc_a", "onc_b"))
    run("pull", "--study", s, "--round", 2, "--from-table", main, *TABLE)
    text = methods(s)
    assert "the estimates here are from round 2, which is not a calibration round" in text
    assert (
        "Stopping rule: kappa_lower&gt;=0.4, checked at up to 5 looks with a Bonferroni-adjusted level; 1 look "
        "taken (round 1): not met." in text
    ), text


def test_import_summary_tells_unresolved_rows_from_decisions(tmp_path):
    """A row written 'unresolved' is logged but decides nothing; the summary said "2 new decisions
    ... 2 left blank (unresolved)" for one decision, one 'unresolved' and two blank rows."""
    s = _gaps(tmp_path)
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Case ID"].value == "c2":
            rec["Decision"].value, rec["Reason"].value = S, "guideline 4.2"
        if rec["Case ID"].value == "c3":
            rec["Decision"].value, rec["Reason"].value = "unresolved", "needs the imaging report"
    wb.save(sheet)
    out = run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair").output
    log = [json.loads(line) for line in (s / "decisions.jsonl").read_text().splitlines()]
    assert sorted(e["decision"] for e in log) == [S, "unresolved"]
    assert (
        "2 new decisions (1 of them 'unresolved': left open, no value decided), 0 changed, 0 unchanged, "
        "2 left blank (still to decide)"
    ) in out, out
    status = run("status", "--study", s).output
    assert "3 of 4 flagged rows still to decide" in status
    # "1 / 4 decided (2 in the review sheet ...)" counted the 'unresolved' row among where rows were decided
    assert "1 / 4     decided (1 in the review sheet; by dr_chair), 1 left unresolved" in status, status


def test_a_rerating_round_does_not_hide_the_open_rows_of_the_first(tmp_path):
    """Round 2 re-rates 2 of round 1's items, all agreeing.  The paragraph said "No disagreements
    were flagged" and "Gold labels ... (provisional: no gold release yet): 2 unanimous" while status
    counts round 1's open rows and a release holds all 6 items (and after cl21, "... in round 2" and
    "from round 2's ratings only": true, but not the gold a release holds)."""
    s = _gaps(tmp_path)
    again = tmp_path / "again.csv"
    with again.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "label"])
        w.writerows((c, r, S) for c in ("c1", "c6") for r in ("onc_a", "onc_b", "onc_c"))
    run("pull", "--study", s, "--round", 2, "--from-table", again, *TABLE)
    assert "4 of 4 flagged rows still to decide" in run("status", "--study", s).output
    text = methods(s)
    assert "the estimates here" not in text and "3 raters (onc_a, onc_b, onc_c) labelled 2 items" in text
    # since cl22 the flagged rows and the provisional gold are the study's, as status and gold export read it
    assert (
        "4 item-field rows were flagged for adjudication (per item, the latest round in which every rater rated "
        "it: 4 items from round 1, 2 from round 2) by the schema's named boundaries" in text
    ), text
    assert (
        "Gold labels on safety_label (provisional: no gold release yet, resolved as `gold export` would: per item, "
        "the latest round in which every rater rated it: 4 items from round 1, 2 from round 2): 2 unanimous and "
        "4 unresolved." in text
    )
    out = run("gold", "export", "--study", s).output
    # since h7 the summary says which unresolved rows lack only a rating (c4, c5: the others agree or one rated)
    assert (
        "(6 rows: 2 unanimous, 0 adjudicated, 4 unresolved, 2 of them only for a missing rating: see the warning)"
        in out
    )
    assert "(2 items: c4, c5)" in out, out
