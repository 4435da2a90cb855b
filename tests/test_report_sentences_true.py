"""Sentences the report and agree printed that were false of the study they describe, each read
from a study built the way a user builds it.  Each test failed on the code before its fix
(checked): the AC1/Fleiss clause of the single-rated warning in a two-rater study, "20 unanimous"
gold for a field nobody rated, a methods paragraph silent on the test-retest analysis the results
report, scipy missing from Software after a calibration look, and no warning when a main round
began with the stopping rule unmet."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli
from test_rounds_calibration_and_report import PULL, RETEST, A, B, _table, _two_rater_study, three_rater_study

from goldboard.analysis.agreement import agreement
from goldboard.label_configs.schema import load_schema

MTB = load_schema("mtb")
S, U, P = "Supported", "Unsupported", "Partially Supported"


@pytest.fixture(autouse=True)
def _server_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "srv"))


def _report(study: Path, tmp: Path, name: str = "r") -> str:
    out = tmp / name / "r.md"
    run_cli("report", "--study", study, "--format", "markdown", "-o", out, "--no-supplement")
    return out.read_text(encoding="utf-8")


def _methods(text: str) -> str:
    return next(line for line in text.splitlines() if "Software:" in line)


def _warnings(text: str) -> str:
    return text[text.index("## Warnings") :]


def _ratings(rows):
    return pd.DataFrame(rows, columns=["item_id", "rater", "field", "value"])


def test_two_rater_single_rated_warning_names_no_fleiss_or_ac1_prevalence():
    """Two raters: AC1 is the pair's, on the items both rated -- a single rating changes nothing."""
    vals = [S, U, S, P, S, U]
    rows = [(f"c{i}", r, "safety_label", v if r == "a" or i % 3 else U) for i, v in enumerate(vals) for r in "ab"]
    with_single = _ratings([*rows, ("c9", "a", "safety_label", S)])
    got, base = agreement(with_single, "safety_label", MTB), agreement(_ratings(rows), "safety_label", MTB)
    ac1 = [next(s["value"] for s in r["statistics"] if s["statistic"] == "gwet_ac1") for r in (got, base)]
    assert ac1[0] == ac1[1]  # what the warning must not deny
    (w,) = [w for w in got["warnings"] if "rated by only one rater" in w]
    assert w == "1 item(s) rated by only one rater: left out of every statistic"
    # three raters: Fleiss' kappa and AC1 do count the single-rated item in the prevalence
    three = _ratings(
        [*rows, *[(f"c{i}", "c", "safety_label", v) for i, v in enumerate(vals)], ("c9", "a", "safety_label", S)]
    )
    (w3,) = [w for w in agreement(three, "safety_label", MTB)["warnings"] if "rated by only one rater" in w]
    assert "Fleiss' kappa and AC1 still count them in the category prevalence" in w3


def test_a_field_nobody_rated_has_no_unanimous_gold(tmp_path):
    """medfail pulled with --field severity only: likely_harm (optional) has no rating row; it was
    "20 unanimous, 0 adjudicated, 0 unresolved" in the report, with 20 empty gold rows."""
    table = tmp_path / "t.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "rater", "sev"])
        for i in range(20):
            w.writerows([(f"i{i}", "r1", 1 + i % 5), (f"i{i}", "r2", 1 + (i % 5 if i % 4 else (i + 1) % 5))])
    s = tmp_path / "s"
    run_cli("study", "init", s, "--schema", "medfail", "--raters", "r1,r2")
    run_cli("pull", "--study", s, "--from-table", table, "--item-col", "item", "--rater-col", "rater",
            "--label-col", "sev", "--field", "severity")  # fmt: skip
    res = run_cli("gold", "export", "--study", s)
    assert "(20 rows: 15 unanimous, 0 adjudicated, 5 unresolved)" in res.output, res.output
    gold = list(csv.DictReader((s / "gold" / "v1" / "gold.csv").open()))
    assert {r["field"] for r in gold} == {"severity"}
    text = _report(s, tmp_path)
    assert "- severity: 15 unanimous, 0 adjudicated, 5 unresolved" in text
    for nobody in ("likely_harm", "safety_gate", "keep_in_benchmark"):
        assert f"- {nobody}:" not in text, nobody
    # nor flagged as 40 "missing ratings" of the fields nobody was asked for
    assert "5 item-field rows were flagged for adjudication" in _methods(text)


def test_methods_name_the_test_retest_analysis_the_results_report(tmp_path):
    st = three_rater_study(tmp_path)
    t = _table(tmp_path / "retest.csv", {"a": RETEST})
    run_cli("pull", "--study", st, "--from-table", t, *PULL, "--rater-cols", "onc_a=a", "--round", 2)
    text = _report(st, tmp_path)
    assert "## Test-retest (intra-rater) agreement" in text
    assert (
        "Test-retest (intra-rater) agreement: onc_a re-rated alone in round 2 items onc_a had rated in round 1; "
        "the rater's two rounds were compared on safety_label (30 items) by percent agreement, Cohen's kappa and "
        "Krippendorff's alpha (nominal), with Wilson score 95% intervals."
    ) in _methods(text)


def _calibrated(tmp_path: Path, rule: str) -> Path:
    """Round 1 (30 items, kappa 0.733) marked calibration and tested against ``rule``; then round 2,
    a main round, pulled."""
    st = _two_rater_study(tmp_path, "CAL")
    run_cli("study", "round", st, 1, "--calibration")
    run_cli("calibrate", "--study", st, "--rule", rule)
    t2 = _table(tmp_path / "t2.csv", {"a": A, "b": B})
    run_cli("pull", "--study", st, "--from-table", t2, *PULL, "--rater-cols", "onc_a=a,onc_b=b", "--round", 2)
    return st


def test_software_names_scipy_when_the_stopping_rule_was_tested(tmp_path):
    """The tested limits come from scipy.stats (the normal quantile and the chi-square of the
    goodness-of-fit limit): Software said "goldboard, Python, numpy and pandas"."""
    st = _calibrated(tmp_path, "kappa_lower>=0.3")
    text = _report(st, tmp_path)
    assert "## Calibration rounds and the stopping rule" in text
    assert re.search(r"Software: goldboard \S+, Python \S+, numpy \S+, pandas \S+ and scipy \S+\.", _methods(text))
    out = tmp_path / "r.html"
    run_cli("report", "--study", st, "-o", out, "--no-supplement")
    line = next(x for x in out.read_text().splitlines() if "Software that computed the numbers" in x)
    assert "scipy" in line


def test_a_main_round_begun_with_the_rule_unmet_is_a_warning(tmp_path):
    st = _calibrated(tmp_path, "kappa_lower>=0.8")
    warnings = _warnings(_report(st, tmp_path)).replace("&gt;", ">")
    assert (
        "main round 2 rated after calibration round 1, where kappa_lower>=0.8 was not met: the main ratings "
        "began before the stopping rule was met"
    ) in warnings


def test_a_main_round_after_the_rule_was_met_is_no_warning(tmp_path):
    st = _calibrated(tmp_path, "kappa_lower>=0.3")
    assert "began before the stopping rule was met" not in _report(st, tmp_path)
