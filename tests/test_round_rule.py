"""Every command reads the study the way gold does (issue 22): with a later round in progress,
`agree`, `report` and `calibrate` analyse the latest complete round and say so; `status` counts
disagreements with gold's per-item rule."""

from __future__ import annotations

import json

import pytest
from conftest import invoke_cli
from test_adjudication_scenario_live import CASES, PAIRS
from test_flags import ratings_frame

from goldboard.fileio import write_csv_atomic
from goldboard.study import Study

RULE = "round 1, the latest complete round; round 2 has ratings from onc_a only (3 items, each rated in round 1 too"
#: what follows RULE: one rater re-rating items of round 1 is a test-retest round or one in progress (issue 23, M06)
RETEST = (
    "): a test-retest round or a round in progress, with no inter-rater agreement to analyse (onc_a's test-retest "
    "agreement: goldboard agree --test-retest --rounds 1,2)"
)


@pytest.fixture()
def study(tmp_path):
    """12 cases rated by both oncologists in round 1; round 2 begun: onc_a has rated 3 cases."""
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"])
    rows = [(c, r, "safety_label", v) for c, pair in zip(CASES, PAIRS) for r, v in zip(("onc_a", "onc_b"), pair)]
    write_csv_atomic(ratings_frame(rows), st.ratings_path(1))
    r2 = ratings_frame([(c, "onc_a", "safety_label", pair[1]) for c, pair in list(zip(CASES, PAIRS))[:3]])
    r2["round"] = 2
    write_csv_atomic(r2, st.ratings_path(2))
    return st


def test_agree_uses_the_latest_complete_round_and_says_so(study):
    res = invoke_cli("agree", "--study", study.path)
    assert res.exit_code == 0, res.output
    assert f"Warning: analysing {RULE}{RETEST}" in res.output
    assert "12" in res.output  # the 12 items of round 1
    res = invoke_cli("agree", "--study", study.path, "--round", "2")
    assert res.exit_code != 0 and "Traceback" not in res.output  # round 2 as it is: one rater so far (issue 23:
    # the warning therefore no longer suggests --round 2)


def test_report_states_the_round_rule(study, tmp_path):
    out = tmp_path / "report.md"
    res = invoke_cli("report", "--study", study.path, "-o", out, "--format", "markdown")
    assert res.exit_code == 0, res.output
    assert f"- Round analysed: {RULE}{RETEST}" in out.read_text()
    html = tmp_path / "report.html"
    assert invoke_cli("report", "--study", study.path, "-o", html).exit_code == 0
    assert "<th>Round analysed</th><td>round 1, the latest complete round" in html.read_text()


def test_report_of_a_complete_latest_round_says_it_is_complete(study, tmp_path):
    r2 = ratings_frame(
        [(c, r, "safety_label", v) for c, pair in zip(CASES, PAIRS) for r, v in zip(("onc_a", "onc_b"), pair)]
    )
    r2["round"] = 2
    write_csv_atomic(r2, study.ratings_path(2))
    out = tmp_path / "report.md"
    assert invoke_cli("report", "--study", study.path, "-o", out, "--format", "markdown").exit_code == 0
    assert (
        "- Round analysed: round 2, the latest round (complete: every rater rated each of its items)" in out.read_text()
    )


def test_calibrate_leaves_out_a_round_in_progress(study):
    res = invoke_cli(
        "calibrate", "--study", study.path, "--rule", "kappa_lower>=0.0", "--format", "json", "--no-record"
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [r["round"] for r in data["rounds"]] == [1]
    assert any(
        "round 2 is in progress (0 of 3 items rated by every rater so far): not evaluated" in n for n in data["notes"]
    )


def test_status_reads_the_study_the_way_gold_does(study):
    got = json.loads(invoke_cli("status", "--study", study.path, "--format", "json").output)
    assert got["round_rule"] == "per item, the latest round in which every rater rated it"
    assert got["decisions"]["safety_label"]["rows"] == 9 and got["decisions_open"] == 9


def test_a_round_with_a_gap_is_still_preferred_to_a_round_in_progress(study, tmp_path):
    """Round 1 has one rating missing (onc_b skipped MTB-12): not complete, but every rater took
    part; round 2 has only onc_a so far. Round 1 is analysed, and the sentence says so."""
    df = study.ratings(1)
    write_csv_atomic(df[~((df["item_id"] == "MTB-12") & (df["rater"] == "onc_b"))], study.ratings_path(1))
    res = invoke_cli("agree", "--study", study.path)
    assert res.exit_code == 0, res.output
    assert (
        "Warning: analysing round 1, the latest round every rater took part in (11 of 12 items); "
        "round 2 has ratings from onc_a only (3 items, each rated in round 1 too" + RETEST
    ) in res.output
