"""The agreement report without a server: numbers equal `goldboard agree`, every study
string escaped, round-over-round change, provisional gold, and clean errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from conftest import invoke_cli

from goldboard.cases.ratings import RATINGS_COLUMNS
from goldboard.fileio import write_csv_atomic
from goldboard.study import Study

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
EVIL = '<script>alert("x")</script>'


def make_study(tmp_path, rounds=(1,), n=40, seed=1):
    st = Study.init(tmp_path / "st", "mtb", ["onc_a", "onc_b"])
    rng = np.random.default_rng(seed)
    for rnd in rounds:
        rows = []
        for i in range(n):
            truth = LABELS[rng.integers(4)]
            item = f"C{i}{EVIL}" if i == 0 else f"C{i}"
            for r in st.raters:
                v = truth if rng.random() < 0.75 + 0.1 * (rnd - 1) else LABELS[rng.integers(4)]
                for field, value in (("safety_label", v), ("missing_info", "stage" if v == LABELS[3] else "")):
                    rows.append(
                        {
                            "round": rnd,
                            "item_id": item,
                            "case_id": item,
                            "rater": r,
                            "field": field,
                            "value": value,
                            "rationale": f'=HYPERLINK("x") {EVIL}',
                        }
                    )
        df = pd.DataFrame(rows).reindex(columns=RATINGS_COLUMNS).astype(object).where(lambda d: d.notna(), "")
        write_csv_atomic(df, st.ratings_path(rnd))
    return st


run = invoke_cli


def test_markdown_numbers_equal_agree_and_html_escapes(tmp_path):
    st = make_study(tmp_path)
    agree = json.loads(run("agree", "--study", st.path, "--field", "safety_label", "--format", "json").stdout)
    res = run("report", "--study", st.path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert res.exit_code == 0, res.output
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    for s in agree["statistics"]:
        if s["value"] is not None and s["group"] is None:
            assert f"| {s['value']:.3f} | {s['ci_low']:.3f} to {s['ci_high']:.3f} |" in md, s
    assert "provisional" in md and "Landis & Koch" in md
    res = run("report", "--study", st.path)
    assert res.exit_code == 0, res.output
    html = (st.reports_dir / "report.html").read_text(encoding="utf-8")
    assert EVIL not in html and "&lt;script&gt;" in html
    assert "<script" not in html.lower()
    assert html.count("data:image/png;base64,") >= 1  # the confusion-matrix heatmap


def test_round_over_round_section(tmp_path):
    st = make_study(tmp_path, rounds=(1, 2))
    res = run("report", "--study", st.path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert res.exit_code == 0, res.output
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "## Round over round" in md
    assert "| 1 | safety_label |" in md and "| 2 | safety_label |" in md


def test_report_errors_are_one_line(tmp_path):
    res = run("report", "--study", tmp_path / "nope")
    assert res.exit_code != 0 and "not a goldboard study" in res.output
    st = Study.init(tmp_path / "empty", "mtb", ["onc_a", "onc_b"])
    res = run("report", "--study", st.path)
    assert res.exit_code != 0 and "no ratings pulled yet" in res.output
    st = make_study(tmp_path)
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"case_id": "C1", "predicted_label": "Supported"}\n')
    res = run("report", "--study", st.path, "--predictions", preds)
    assert res.exit_code != 0 and "no gold release yet" in res.output
    assert not (st.reports_dir / "report.html").exists()  # nothing half-written


def test_medfail_report_adds_critical_threshold_view(tmp_path):
    """MedFailBench's planned statistics: weighted kappa on the full 1-5 scale and kappa on
    high severity (4-5 vs 1-3); the report shows both, the latter equal to `agree --dichotomize 4`."""
    st = Study.init(tmp_path / "mf", "medfail", ["rev_1", "rev_2"])
    rng = np.random.default_rng(5)
    rows = []
    for i in range(60):
        t = int(rng.integers(1, 6))
        for r in st.raters:
            sev = int(np.clip(t + rng.integers(-1, 2), 1, 5))
            for field, value in (
                ("severity", str(sev)),
                ("safety_gate", "none"),
                ("keep_in_benchmark", "keep"),
                ("confidence", "4"),
            ):
                rows.append(
                    {"round": 1, "item_id": f"M{i}", "case_id": f"M{i}", "rater": r, "field": field, "value": value}
                )
    df = pd.DataFrame(rows).reindex(columns=RATINGS_COLUMNS).astype(object).where(lambda d: d.notna(), "")
    write_csv_atomic(df, st.ratings_path(1))
    agree = json.loads(
        run("agree", "--study", st.path, "--field", "severity", "--dichotomize", "4", "--format", "json").stdout
    )
    res = run("report", "--study", st.path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert res.exit_code == 0, res.output
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    start = md.index("### Severity (1-5): 4 or higher vs below 4")
    section = md[start : md.index("\n### ", start + 4)]
    kappa = next(s for s in agree["statistics"] if s["statistic"] == "cohen_kappa" and s["group"] is None)
    assert f"| {kappa['value']:.3f} | {kappa['ci_low']:.3f} to {kappa['ci_high']:.3f} |" in section
    high = sum(1 for v in df.loc[df["field"] == "severity", "value"] if int(v) >= 4)
    assert f"&gt;=4 {high} (" in section
    assert "Cohen's kappa (quadratic weights)" in md  # the full-scale weighted kappa is there too
