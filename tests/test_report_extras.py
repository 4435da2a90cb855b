"""What a reviewer asks for in the report: gold distribution, disagreement -> resolution per
named boundary, time on task, the CSV supplement, grouped warnings, "not estimable", the
interval choice in the methods, the recorded plan and calibration rule, and the PDF."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess

import pandas as pd
import pytest
from conftest import invoke_cli
from test_report import make_study

from goldboard.analysis.report_tables import (
    gold_distribution,
    group_warnings,
    resolution_by_boundary,
    time_on_task,
    wald_suspect,
)
from goldboard.exports.report_extras import write_supplement
from goldboard.fileio import write_csv_atomic
from goldboard.label_configs.schema import load_schema
from goldboard.study import Study
from goldboard.text import md_escape

S, PS, U, II = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"


def test_gold_distribution_counts():
    gold = pd.DataFrame(
        {
            "item_id": list("abcdef"),
            "field": ["safety_label"] * 6,
            "gold_value": [S, S, II, II, II, ""],
            "method": ["unanimous", "adjudicated", "adjudicated", "adjudicated", "unanimous", "unresolved"],
        }
    )
    rows = gold_distribution(gold)
    assert [(r["gold_value"], r["n"], r["unanimous"], r["adjudicated"]) for r in rows] == [
        (II, 3, 1, 2),
        (S, 2, 1, 1),
        ("unresolved", 1, 0, 0),
    ]
    assert rows[0]["share"] == pytest.approx(3 / 5)


def test_resolution_by_boundary_counts_what_the_adjudicator_decided():
    schema = load_schema("mtb")
    flags = pd.DataFrame(
        {
            "item_id": ["a", "b", "c", "d", "e"],
            "field": ["safety_label"] * 5,
            "boundaries": [
                ["sufficiency_vs_optimization"],
                ["sufficiency_vs_optimization"],
                ["sufficiency_vs_optimization"],
                ["support_vs_reject"],
                [],
            ],
        }
    )
    gold = pd.DataFrame(
        {
            "item_id": ["a", "b", "c", "d", "e"],
            "field": ["safety_label"] * 5,
            "gold_value": [II, II, "", U, PS],
            "method": ["adjudicated", "adjudicated", "unresolved", "adjudicated", "adjudicated"],
        }
    )
    rows = resolution_by_boundary(flags, gold, schema)
    got = {(r["boundary"], r["decision"]): (r["n"], r["disagreements"]) for r in rows}
    assert got == {
        ("sufficiency_vs_optimization", II): (2, 3),
        ("sufficiency_vs_optimization", "unresolved"): (1, 3),
        ("support_vs_reject", U): (1, 1),
    }


def test_time_on_task_median_and_iqr_per_rater_and_label():
    rows = []
    for i, (a, b) in enumerate([(10, 100), (20, 200), (30, 300), (40, 400)]):
        for rater, t, lab in (("onc_a", a, S), ("onc_b", b, II if i < 2 else S)):
            for field in ("safety_label", "missing_info"):  # one annotation, two fields: counted once
                rows.append({"item_id": f"i{i}", "rater": rater, "field": field, "value": lab, "lead_time": t})
    rows.append({"item_id": "i9", "rater": "onc_a", "field": "safety_label", "value": S, "lead_time": ""})
    t = time_on_task(pd.DataFrame(rows), "safety_label")
    a = next(r for r in t["per_rater"] if r["group"] == "onc_a")
    # numpy linear quartiles of 10, 20, 30, 40: 17.5, 25, 32.5
    assert (a["n"], a["median"], a["q1"], a["q3"], a["iqr"]) == (4, 25.0, 17.5, 32.5, 15.0)
    ii = next(r for r in t["per_label"] if r["group"] == II)
    assert (ii["n"], ii["median"]) == (2, 150.0)
    assert t["n_missing"] == 1


def test_group_warnings_counts_identical_messages_once():
    ws = [f"missing_info:{v}: categories never used by any rater: yes" for v in ("a", "b", "c")]
    ws.append("safety_label: kappa paradox")
    g = group_warnings(ws)
    assert [(x["count"], x["fields"]) for x in g] == [
        (3, ["missing_info:a", "missing_info:b", "missing_info:c"]),
        (1, ["safety_label"]),
    ]


def test_wald_suspect_reasons():
    base = {"statistic": "cohen_kappa", "group": None, "value": 0.5, "ci_high": 0.7, "se": 0.1}
    assert wald_suspect({"n_items": 40, "statistics": [base]}) == []
    assert wald_suspect({"n_items": 12, "statistics": [base]}) == ["n = 12 < 30"]
    assert wald_suspect({"n_items": 40, "statistics": [{**base, "value": 0.95}]}) == ["estimate near 1"]


def test_supplement_keeps_cells_exact_and_removes_only_its_own_files(tmp_path):
    old = {"sections": [{"tables": [{"csv": "stale", "header": ["a"], "rows": [["1"]]}]}]}
    write_supplement(old, tmp_path)
    (tmp_path / "mine.csv").write_text("a user's own file\n")
    data = {"sections": [{"tables": [{"csv": "x", "header": ["a", "=b"], "rows": [["=1+1", "ok"]]}]}]}
    files = write_supplement(data, tmp_path)
    # the earlier report's table is gone; a file goldboard did not write is kept
    assert [p.name for p in files] == ["x.csv"] and not (tmp_path / "stale.csv").exists()
    assert (tmp_path / "mine.csv").read_text() == "a user's own file\n"
    # one CSV policy (README "Security"): CSV files are exact data, read back unchanged
    rows = list(csv.reader((tmp_path / "x.csv").open(newline="")))
    assert rows == [["a", "=b"], ["=1+1", "ok"]]


def _lead_times(st: Study, rnd: int = 1) -> None:
    df = st.ratings(rnd)
    df["lead_time"] = [str(30 + (i % 7) * 10) for i in range(len(df))]
    write_csv_atomic(df, st.ratings_path(rnd))


def test_report_sections_supplement_and_not_estimable(tmp_path):
    st = make_study(tmp_path, n=40)
    _lead_times(st)
    out = tmp_path / "out" / "report.md"
    res = invoke_cli("report", "--study", st.path, "--format", "markdown", "-o", out)
    assert res.exit_code == 0, res.output
    md = out.read_text(encoding="utf-8")
    for title in (
        "## Gold-label distribution",
        "## Disagreements and their resolution, by named boundary",
        "## Time on task",
    ):
        assert title in md
    # unused multi-select values: kappa undefined -> "not estimable", never a 0.000 interval
    assert "not estimable" in md and "0.000 (0.000 to 0.000)" not in md and "– (– to –)" not in md
    # warnings grouped: 26 warnings, each distinct message once with its count
    assert "warning(s)," in md and "(6x) categories never used by any rater: yes" in md
    sup = tmp_path / "out" / "supplement"
    names = {p.name for p in sup.glob("*.csv")}
    assert {"gold_distribution.csv", "resolution_by_boundary.csv", "time_per_rater.csv", "time_per_label.csv"} <= names
    assert "01_safety_label_agreement.csv" in names and "warnings.csv" in names
    # the supplement's numbers are the report's: the agreement CSV equals `goldboard agree`
    agree = json.loads(invoke_cli("agree", "--study", st.path, "--field", "safety_label", "--format", "json").stdout)
    table = pd.read_csv(sup / "01_safety_label_agreement.csv")
    kappa = next(s for s in agree["statistics"] if s["statistic"] == "cohen_kappa" and s["weights"] == "none")
    row = table[table["name"] == "Cohen's kappa"].iloc[0]
    assert row["value"] == pytest.approx(kappa["value"], abs=1e-5)
    assert row["ci_low"] == pytest.approx(kappa["ci_low"], abs=1e-5)
    # time per rater: medians of the lead times written above
    tpr = pd.read_csv(sup / "time_per_rater.csv")
    ratings = st.ratings(1)
    sub = ratings[ratings["field"] == "safety_label"].drop_duplicates(["item_id", "rater"])
    med = pd.to_numeric(sub[sub["rater"] == "onc_a"]["lead_time"]).median()
    assert float(tpr[tpr["Group"] == "onc_a"]["Median (s)"].iloc[0]) == pytest.approx(med)


def test_ci_auto_bootstraps_small_fields_and_says_so(tmp_path):
    st = make_study(tmp_path, n=20)
    # the default interval is Wilson (issue 34), which the Wald note is not about: Wald on request
    args = ("--format", "markdown", "--ci", "wald")
    res = invoke_cli("report", "--study", st.path, *args, "-o", tmp_path / "wald.md")
    assert res.exit_code == 0, res.output
    wald = (tmp_path / "wald.md").read_text()
    assert "Wald intervals may undercover for safety_label" in wald and "--ci auto" in wald
    res = invoke_cli("report", "--study", st.path, "--format", "markdown", "--ci", "auto", "-o", tmp_path / "auto.md")
    auto = (tmp_path / "auto.md").read_text()
    assert "percentile bootstrap intervals (2000 resamples of items, seed 1) are reported instead" in auto
    section = auto[auto.index("### Safety label") :]
    section = section[: section.index("\n### ", 5)]
    assert "| bootstrap" in section or "bootstrap |" in section


def test_report_cites_recorded_plan_and_calibration_rule(tmp_path):
    st = make_study(tmp_path, rounds=(1, 2), n=40)
    for r in (1, 2):
        Study.open(st.path).mark_round(r, calibration=r == 1, guideline_version=f"v{r}")
    res = invoke_cli("plan", "size", "--study", st.path, "--kappa", 0.7, "--lower", 0.5, "--prevalence", "0.3,0.7")
    assert res.exit_code == 0, res.output
    sentence = res.stdout.split("\n\n")[1].splitlines()[0]
    assert sentence.startswith("A sample of")
    res = invoke_cli("calibrate", "--study", st.path, "--rule", "kappa_lower>=0.2")
    assert res.exit_code == 0, res.output
    verdict = res.stdout.strip().splitlines()[-1]
    out = tmp_path / "r.md"
    res = invoke_cli("report", "--study", st.path, "--format", "markdown", "-o", out)
    md = out.read_text()
    assert f"Sample size: {sentence}" in md
    assert "## Calibration rounds and the stopping rule" in md and md_escape(verdict) in md
    assert "| 1 | 1 of 5 | yes | v1 | safety_label | kappa_lower&gt;=0.2 |" in md


def test_pdf_is_printed_and_renders(tmp_path):
    if shutil.which("chromium") is None and shutil.which("google-chrome") is None:
        pytest.skip("no headless Chromium (apt-get install chromium)")
    if shutil.which("pdftoppm") is None:
        pytest.skip("no pdftoppm (apt-get install poppler-utils)")
    st = make_study(tmp_path, n=30)
    pdf = tmp_path / "out" / "report.pdf"
    res = invoke_cli("report", "--study", st.path, "-o", tmp_path / "out" / "report.html", "--pdf", pdf)
    assert res.exit_code == 0, res.output
    assert pdf.read_bytes()[:5] == b"%PDF-"
    subprocess.run(["pdftoppm", "-r", "40", "-png", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "pg")], check=True)
    import matplotlib.image as mpimg

    img = mpimg.imread(next(tmp_path.glob("pg*.png")))[..., :3]
    assert (img < 0.9).any(axis=2).mean() > 0.02  # text on the page, not blank
    res = invoke_cli("report", "--study", st.path, "--format", "markdown", "--pdf", tmp_path / "x.pdf")
    assert res.exit_code != 0 and "--pdf: a PDF is printed from the HTML report" in res.output


@pytest.mark.parametrize(
    "value,low,high,shown",
    [
        (0.0, 0.0, 0.0, "0.000 (CI not estimable: degenerate table)"),  # a label never both used
        (None, None, None, "not estimable"),
        (float("nan"), None, None, "not estimable"),
        (0.61, 0.44, 0.78, "0.610 (0.440 to 0.780)"),
    ],
)
def test_value_with_ci_never_prints_a_collapsed_interval(value, low, high, shown):
    """Per-label and multi-select cells: a Wald interval collapsed by a zero SE reads
    "CI not estimable", never ``0.000 (0.000 to 0.000)`` (issue: degenerate statistics)."""
    from goldboard.exports.report import _with_ci

    assert _with_ci(value, low, high) == shown
