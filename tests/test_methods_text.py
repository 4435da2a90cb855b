"""The report's methods paragraph says only what happened (issue 21, claims.md).

Three studies are built through the CLI and their methods paragraph is read clause by clause:
OpenMTB-Audit's public file pulled from its table with no decision made, the same with its 16
disagreements decided in a review sheet (and a recorded plan, sampling record and rater
qualifications), and a 3-rater study where each item has 2 of the 3 raters and 6 items were
rated once.  Each test fails on the paragraph goldboard wrote before (which said "independently
labelled", "adjudicated", named PABAK and krippendorff, and left out Scott's pi and scipy).
"""

from __future__ import annotations

import csv
import random
import re
from pathlib import Path

import openpyxl
import pytest
from conftest import run_cli as run

from goldboard.cases.examples import example_path

OPENMTB = example_path("openmtb")
WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
WIDE += ["--field", "safety_label"]
I = "Insufficient Information"


def report(s: Path, *extra) -> str:
    out = s.parent / f"{s.name}-report.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement", *extra)
    return out.read_text()


def methods(text: str) -> str:
    return text.split("## Methods")[1].split("## Results")[0].strip().replace("\\", "")


def results_names(text: str) -> set[str]:
    """The statistic names of the results tables (first column of each headline table)."""
    body = text.split("## Results")[1]
    return {m.group(1) for m in re.finditer(r"^\| ([A-Z][^|]*?) \| (?:all|[\w ]+ / [\w ]+) \|", body, re.M)}


def _openmtb(tmp: Path) -> Path:
    s = tmp / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    return s


def _decide_all(s: Path, tmp: Path) -> None:
    sheet = tmp / "review.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Field"].value != "safety_label":
            continue
        a, b = rec["onc_a value"].value, rec["onc_b value"].value
        rec["Decision"].value = I if I in (a, b) else b
        rec["Reason"].value, rec["Adjudicator"].value = "review meeting", "dr_chair"
    wb.save(sheet)
    run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair")


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> str:
    """OpenMTB-Audit, pulled from its table, no decision yet."""
    return report(_openmtb(tmp_path_factory.mktemp("plain")))


@pytest.fixture(scope="module")
def decided(tmp_path_factory) -> tuple[Path, str]:
    """OpenMTB-Audit with its 16 disagreements decided, gold v1, a plan, a sampling record and
    one rater's qualifications."""
    tmp = tmp_path_factory.mktemp("decided")
    s = _openmtb(tmp)
    _decide_all(s, tmp)
    run("gold", "export", "--study", s)
    run("plan", "size", "--study", s, "--kappa", "0.6", "--prevalence", "0.3,0.4,0.3", "--lower", "0.4")
    cases = tmp / "cases.jsonl"
    cases.write_text("".join(f'{{"case_id": "C{i}", "error_type": "{"ab"[i % 2]}"}}\n' for i in range(80)))
    run(
        "plan",
        "sample",
        "--cases",
        cases,
        "--by",
        "error_type",
        "-n",
        "50",
        "--seed",
        "7",
        "-o",
        tmp / "d.jsonl",
        "--study",
        s,
    )
    run(
        "study",
        "set",
        s,
        "--rater-info",
        "onc_a=board-certified oncologist, 8 years",
        "--case-source",
        "OpenMTB-Audit public file (50 NSCLC cases)",
    )
    return s, report(s)


def _two_of_three_table(path: Path) -> None:
    rng = random.Random(3)
    labels = ["Supported", "Partially Supported", "Unsupported", "Unsafe", I]
    raters = ["r1", "r2", "r3"]
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "safety_label", "missing_info"])
        for i in range(60):
            pair = [raters[i % 3], raters[(i + 1) % 3]]
            truth = rng.choice(labels[:3])
            for r in pair[:1] if i < 6 else pair:
                v = truth if rng.random() < 0.8 else rng.choice(labels)
                w.writerow([f"C{i:03d}", r, v, "stage|ecog_status" if v == I else ""])


@pytest.fixture(scope="module")
def two_of_three(tmp_path_factory) -> str:
    """3 raters, each item rated by 2 of them, 6 items rated once; a multi-select field."""
    tmp = tmp_path_factory.mktemp("two_of_three")
    table = tmp / "two_of_three.csv"
    _two_of_three_table(table)
    s = tmp / "s3"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "r1,r2,r3")
    run("pull", "--study", s, "--from-table", table, "--item-col", "case_id", "--rater-col", "rater")
    return report(s)


# --------------------------------------------------------------------------- raters and design


def test_raters_clause_counts_ratings_per_item(plain, two_of_three):
    assert "2 raters (onc_a, onc_b) labelled 50 items" in methods(plain)
    assert "every rater rated every item on safety_label" in methods(plain)
    m = methods(two_of_three)
    assert "3 raters (r1, r2, r3) labelled 60 items" in m
    assert "on safety_label, 54 items had 2 ratings and 6 items had 1 rating" in m
    assert "every rater rated every item" not in m
    assert "Assignment design: not recorded (ratings imported from a ratings table: two_of_three.csv)" in m


def test_no_independently_without_recorded_blinding(plain, two_of_three, decided):
    for text in (plain, two_of_three, decided[1]):
        m = methods(text)
        assert "Blinding: not recorded" in m
        assert "independently" not in m


def test_ratings_count_says_what_it_counts(plain, two_of_three):
    assert "- Ratings (non-empty values per field): 100 ratings on safety_label" in plain
    line = next(x for x in two_of_three.splitlines() if x.startswith("- Ratings"))
    # 114 safety labels; each 'Insufficient Information' rating ticked two boxes
    n_insufficient = int(re.search(r"(\d+) boxes ticked in (\d+) ratings on missing_info", line).group(2))
    assert "114 ratings on safety_label" in line
    assert f"{2 * n_insufficient} boxes ticked in {n_insufficient} ratings on missing_info" in line


# --------------------------------------------------------------------------- statistics and intervals


def test_statistics_named_are_the_statistics_reported(plain, two_of_three):
    m = methods(plain)
    names = results_names(plain)
    assert "Scott's pi" in names and "Scott's pi" in m
    assert "PABAK" not in names and "PABAK" not in m  # five categories: no PABAK row
    assert "weights" not in m and "ordinal" not in m  # the schema has no ordinal field
    m3 = methods(two_of_three)
    assert "Fleiss' kappa" in m3 and "Scott's pi" not in m3 and "PABAK" not in m3
    for stat in ("Cohen's kappa", "Krippendorff's alpha", "Gwet's AC1", "Brennan-Prediger"):
        assert any(n.startswith(stat) for n in names) and stat in m


def test_percent_agreement_definition_with_three_raters(plain, two_of_three):
    assert "mean over rater pairs" not in methods(plain)
    m = methods(two_of_three)
    assert "percent agreement is the mean over rater pairs" in m
    assert "'all raters agree'" in m and "not estimable here: no item was rated by every rater" in m
    assert "| Percent agreement (mean over rater pairs) | all |" in two_of_three
    assert "| All raters agree (items rated by every rater) | all | 0 | not estimable |" in two_of_three


def test_interval_method_per_statistic(plain, two_of_three, tmp_path):
    m = methods(plain)
    # the default interval (issue 34): Wilson score at the effective sample size, from the same SEs
    assert "Wilson score intervals at each estimate's effective sample size" in m
    assert "Fleiss, Cohen & Everitt (1969) for Cohen's kappa" in m
    assert "Gwet's (2008) linearisation for percent agreement, Scott's pi, Gwet's AC1" in m
    assert "Gwet's (2014) linearisation for Krippendorff's alpha" in m
    assert "Gwet's (2014) design-based variance for percent agreement, Fleiss' kappa" in methods(two_of_three)
    s = _openmtb(tmp_path)
    mb = methods(report(s, "--bootstrap", "200", "--seed", "3"))
    assert "percentile bootstrap intervals (200 resamples of items, seed 3)" in mb and "Wald" not in mb


# --------------------------------------------------------------------------- adjudication and gold


def test_adjudication_as_counts(plain, decided):
    m = methods(plain)
    assert "16 item-field rows were flagged for adjudication" in m and "16 label disagreements" in m
    assert "none has been adjudicated yet" in m and "adjudicated;" not in m
    md = methods(decided[1])
    assert "16 decisions are in force, made by dr_chair (review sheet)" in md
    assert "not yet adjudicated" not in md


def test_gold_clause(plain, decided):
    assert "Gold labels on safety_label (provisional: no gold release yet): 34 unanimous and 16 unresolved" in methods(
        plain
    )
    assert "Gold labels on safety_label (gold release v1): 34 unanimous and 16 adjudicated" in methods(decided[1])


# --------------------------------------------------------------------------- plan, GRRAS, software


def test_plan_clause_with_sidedness(plain, decided):
    assert "Sample size: no plan recorded" in methods(plain)
    md = methods(decided[1])
    assert "Sample size: A sample of" in md and "one-sided" in md
    assert "the results report two-sided 95% intervals" in md


def test_grras_items_recorded_or_not_recorded(plain, decided):
    m = methods(plain)
    assert "Item sampling: not recorded." in m
    assert "Rater qualifications and training: onc_a: not recorded; onc_b: not recorded." in m
    assert "Guideline version: round 1: not recorded." in m
    assert "Case source: not recorded (items known from a ratings table: " in m
    md = methods(decided[1])
    assert "Item sampling: 50 of 80 cases of cases.jsonl drawn at random by goldboard plan sample (seed 7, " in md
    assert "stratified by error_type)" in md
    assert "onc_a: board-certified oncologist, 8 years; onc_b: not recorded" in md
    assert "Case source: OpenMTB-Audit public file (50 NSCLC cases)." in md


def test_software_is_what_computed_the_numbers(plain, decided):
    m = methods(plain)
    assert re.search(r"Software: goldboard \S+, Python \S+, numpy \S+ and pandas \S+\.", m)
    assert "krippendorff" not in m and "scipy" not in m
    # the recorded plan (--lower: a closed formula and the standard library's normal quantile) used
    # no scipy; a power plan (--null) solves the non-central chi-square with scipy.stats
    assert "scipy" not in methods(decided[1])


def test_software_names_scipy_for_a_power_plan(tmp_path):
    s = _openmtb(tmp_path)
    run("plan", "size", "--study", s, "--kappa", "0.7", "--null", "0.4", "--power", "0.9", "--prevalence", "0.5,0.5")
    m = methods(report(s))
    assert "Sample size: A sample of 99 double-rated items gives 90% power" in m
    assert re.search(r"and scipy \S+\.", m)


def test_html_software_line_names_only_what_computed(tmp_path):
    s = _openmtb(tmp_path)
    out = tmp_path / "r.html"
    run("report", "--study", s, "-o", out, "--no-supplement")
    line = next(x for x in out.read_text().splitlines() if "Software that computed the numbers" in x)
    assert "numpy" in line and "pandas" in line
    for absent in ("krippendorff", "scikit-learn", "statsmodels", "label-studio", "scipy"):
        assert absent not in line


def test_study_set_rater_info_names_the_flag(tmp_path):
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    res = run("study", "set", s, "--rater-info", "onc_z=x", code=1)
    assert "--rater-info" in res.output and "onc_z" in res.output and "Traceback" not in res.output
    res = run("study", "set", s, "--rater-info", "no-equals-sign", code=1)
    assert "RATER=TEXT" in res.output


def test_design_per_item_and_enforced_blinding_clauses(tmp_path):
    """The design clause quotes the design recorded at push (`--per-item`); "independently" appears
    only with a server-enforced blinding check."""
    import pandas as pd

    from goldboard.study import Study
    from goldboard.workflows.methods import MethodsFacts, clause_design, clause_raters

    table = tmp_path / "t.csv"
    _two_of_three_table(table)
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "r1,r2,r3")
    run("pull", "--study", s, "--from-table", table, "--item-col", "case_id", "--rater-col", "rater")
    st = Study.open(s)
    st.round(1).design = {"kind": "per_item", "per_item": 2, "seed": 4}
    st.save()
    m = methods(report(s))
    assert "Design: 2 raters per item, balanced over rater pairs (seed 4)" in m
    assert "Assignment design: not recorded" not in m
    st = Study.open(s)
    ratings = pd.read_csv(s / "rounds" / "1" / "ratings.csv", dtype=str, keep_default_na=False)
    st.round(1).tables = {}  # as if given in Label Studio: ratings imported from files are never "independently"
    base = dict(study=st, round=1, round_info=st.round(1), ratings=ratings, field_sections=[])
    enforced = MethodsFacts(**base, blinding="Blinded and enforced by the Label Studio server: ...")
    convention = MethodsFacts(**base, blinding="Blinded by convention: each rater annotated in a separate project")
    assert "labelled 60 items" in clause_raters(enforced) and " independently labelled" in clause_raters(enforced)
    assert "independently" not in clause_raters(convention)
    assert clause_design(MethodsFacts(**base, design_text="")).startswith("Assignment design: not recorded")


def test_calibration_clause(tmp_path):
    s = _openmtb(tmp_path)
    assert "Calibration:" not in methods(report(s))
    run("study", "round", s, 1, "--calibration", "--guideline-version", "v1.0")
    m = methods(report(s))
    assert "Calibration: 1 round (1) marked as calibration; the estimates here are from round 1, which is a " in m
    assert "calibration round." in m and "Guideline version: round 1: v1.0." in m


def test_not_estimable_says_whether_the_estimate_or_its_interval(tmp_path):
    """Perfect agreement on a few items: every estimate is 1.000 (percent agreement, kappa ...),
    only the interval is missing (SE 0).  The sentence said "Not estimable ...: percent agreement",
    which a reader takes for "no estimate".  One category only: kappa's chance agreement is 1, so
    kappa itself is undefined while percent agreement is 1.000."""
    t = tmp_path / "t.csv"
    rows = [("C-1", "Supported"), ("C-2", "Supported"), ("C-3", I)]
    t.write_text("case_id,a,b\n" + "".join(f"{c},{v},{v}\n" for c, v in rows), encoding="utf-8")
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    cols = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label"]
    run("pull", "--study", s, "--from-table", t, *cols, "--identical-columns-ok")
    m = methods(report(s))
    assert "Not estimable" not in m
    # perfect agreement now gets the one-sided Wilson interval (issue 34), not "no interval"
    wilson = "Wilson score intervals at each estimate's effective sample size (Korn & Graubard 1998; asymmetric "
    assert wilson + "near 1, one-sided at perfect agreement) for percent agreement, Cohen's kappa" in " ".join(
        m.split()
    )
    assert "No confidence interval" not in m
    # with --ci wald the intervals collapse, as before: the estimate without an interval, said so
    mw = methods(report(s, "--ci", "wald"))
    assert "No Wald or bootstrap 95% confidence interval could be computed. No confidence interval (degenerate" in mw
    assert "percent agreement on safety_label" in mw.split("No confidence interval")[1]
    # every statistic has its one-sided interval, and no note on Wald intervals follows (cl21)
    assert "No Wald or bootstrap 95% confidence interval could be computed" not in m
    assert "Wald intervals may undercover" not in m and "Wald (z)" not in m
    one = tmp_path / "one.csv"
    one.write_text("case_id,a,b\n" + "".join(f"C-{i},Supported,Supported\n" for i in range(1, 4)), encoding="utf-8")
    s1 = tmp_path / "s1"
    run("study", "init", s1, "--schema", "mtb", "--raters", "onc_a,onc_b")
    run("pull", "--study", s1, "--from-table", one, *cols, "--identical-columns-ok")
    m1 = methods(report(s1))
    undefined = m1.split("Not estimable (undefined estimate): ")[1].split(".")[0]
    assert "Cohen's kappa on safety_label" in undefined and "percent agreement" not in undefined
    # percent agreement 1.000 has its one-sided Wilson interval (issue 34); with --ci wald it has none
    assert wilson + "near 1, one-sided at perfect agreement) for percent agreement," in " ".join(m1.split())
    m1w = methods(report(s1, "--ci", "wald"))
    assert "percent agreement on safety_label" in m1w.split("No confidence interval")[1]
