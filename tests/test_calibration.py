"""Calibration rounds: the round records its calibration flag and guideline version (push and
`study round`), `goldboard calibrate` checks each round's statistic and CI against the rule
with the numbers of `goldboard agree`, and says continue or stop."""

from __future__ import annotations

import json

import pytest
from test_push_offline import FakeServer, units
from test_report import make_study

from goldboard.analysis.calibration import CONTINUE, MET, kappa_rule_limits, parse_rule
from goldboard.annotate.push import push
from goldboard.errors import GoldboardError
from goldboard.study import Study


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kappa_lower>=0.6", ("kappa", "lower", ">=", 0.6)),
        (" alpha_value > 0.667 ", ("alpha", "value", ">", 0.667)),
        ("ac1_upper<0.9", ("ac1", "upper", "<", 0.9)),
    ],
)
def test_parse_rule(text, expected):
    r = parse_rule(text)
    assert (r.statistic, r.part, r.op, r.threshold) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("kapa_lower>=0.6", "unknown statistic 'kapa'"), ("kappa>=0.6", "STATISTIC_PART OP NUMBER"), ("", "e.g.")],
)
def test_bad_rules(text, message):
    with pytest.raises(GoldboardError, match=message):
        parse_rule(text)


def test_push_records_calibration_round(tmp_path):
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")
    fake = FakeServer()
    push(st, units=units(3), client=fake, progress=False, calibration=True, guideline_version="v1.0")
    push(Study.open(st.path), units=units(3), client=fake, round_number=2, progress=False)
    again = Study.open(st.path)
    assert again.round(1).calibration and again.round(1).guideline_version == "v1.0"
    assert not again.round(2).calibration and again.round(2).guideline_version == ""
    text = (st.path / "study.toml").read_text()
    assert "calibration = true" in text and 'guideline_version = "v1.0"' in text


def test_study_round_marks_and_show(cli, tmp_path):
    st = make_study(tmp_path, rounds=(1, 2))
    res = cli("study", "round", st.path, 1, "--calibration", "--guideline-version", "v2")
    assert res.exit_code == 0, res.output
    assert Study.open(st.path).round(1).calibration
    res = cli("study", "show", st.path)
    assert "round 1: blinded, calibration, guideline v2" in res.output
    res = cli("study", "round", st.path, 1)
    assert res.exit_code != 0 and "give --calibration/--main" in res.output


def _kappa_row(cli, st, rnd):
    res = cli("agree", "--study", st.path, "--round", rnd, "--field", "safety_label", "--format", "json")
    data = json.loads(res.stdout)
    return next(r for r in data["statistics"] if r["statistic"] == "cohen_kappa" and r["weights"] == "none")


def _table(cli, st, rnd):
    res = cli("agree", "--study", st.path, "--round", rnd, "--field", "safety_label", "--format", "json")
    return next(p["matrix"] for p in json.loads(res.stdout)["confusion"]["pairs"] if p.get("group") is None)


def test_calibrate_verdicts_follow_the_tested_limit(cli, tmp_path):
    """The rule tests the more conservative of the goodness-of-fit and Wald limits of each round's
    table at the look's adjusted level
    (0.025 / 5 by default); the report's 95% CI is shown beside it, equal to `agree`'s."""
    st = make_study(tmp_path, rounds=(1, 2, 3))
    for r in (1, 2):
        cli("study", "round", st.path, r, "--calibration", "--guideline-version", f"v{r}")
    k1 = _kappa_row(cli, st, 1)
    t1, t2 = (float(kappa_rule_limits(_table(cli, st, r), 0.025 / 5)) for r in (1, 2))
    assert t1 < t2
    cut = round((t1 + t2) / 2, 3)
    res = cli("calibrate", "--study", st.path, "--rule", f"kappa_lower>={cut}", "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [r["round"] for r in data["rounds"]] == [1, 2]  # only the calibration rounds
    assert [r["look"] for r in data["rounds"]] == [1, 2] and data["max_looks"] == 5 and data["level"] == 0.005
    c1, c2 = data["rounds"][0]["checks"][0], data["rounds"][1]["checks"][0]
    assert (c1["value"], c1["ci_low"], c1["ci_high"]) == (k1["value"], k1["ci_low"], k1["ci_high"])
    assert c2["tested"] == pytest.approx(t2, abs=1e-9) and c2["tested_how"].startswith(
        "goodness-of-fit/Wald, the lower of the two"
    )
    assert [r["verdict"] for r in data["rounds"]] == [CONTINUE, MET]
    assert data["verdict"] == MET and data["met_at"] == 2
    assert data["rounds"][1]["guideline_version"] == "v2"
    # a rule above both limits: continue calibrating, in words, with the adjusted level
    hi = round(t2 + 0.01, 3)
    res = cli("calibrate", "--study", st.path, "--rule", f"kappa_lower>={hi}", "--change-rule")
    assert "not met in round 2: continue calibrating" in res.stdout
    assert "Looks: 2 of 5 planned; each look is tested at the Bonferroni-adjusted one-sided level 0.005" in res.stdout
    # the estimate, not the limit: the same cut is met by round 1's value only if above it
    res = cli(
        "calibrate",
        "--study",
        st.path,
        "--rule",
        f"kappa_value>={k1['value'] - 0.001:.3f}",
        "--change-rule",
        "--format",
        "json",
    )
    assert json.loads(res.stdout)["rounds"][0]["met"] is True


def test_calibrate_without_marks_uses_every_round_and_plots(cli, tmp_path):
    st = make_study(tmp_path, rounds=(1, 2))
    png = tmp_path / "curve.png"
    res = cli("calibrate", "--study", st.path, "--rule", "alpha_lower>=0.5", "--plot", png)
    assert res.exit_code == 0, res.output
    assert "no round is marked as calibration" in res.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    res = cli("calibrate", "--study", st.path, "--rule", "alpha_lower=0.5")
    assert res.exit_code != 0 and res.output.startswith("Error: --rule:")
    res = cli("calibrate", "--study", st.path, "--rule", "kappa_lower>=0.5", "--field", "safety_labl")
    assert res.exit_code != 0 and "--field: 'safety_labl': no such field (did you mean 'safety_label'?" in res.output
    res = cli("plan", "size", "--study", st.path, "--from-study", "--field", "nope", "--lower", 0.2)
    assert res.exit_code != 0 and "--field: 'nope': no such field" in res.output
    res = cli("calibrate", "--study", st.path, "--rule", "kappa_lower>=0.5", "--round", 9)
    assert res.exit_code != 0 and "round 9 does not exist" in res.output


def test_small_round_note_and_bootstrap_limits_equal_agree(cli, tmp_path):
    st = make_study(tmp_path, rounds=(1,), n=12)
    res = cli("calibrate", "--study", st.path, "--rule", "alpha_lower>=0.3", "--format", "json")
    data = json.loads(res.stdout)
    assert any("12 items (< 30): the Wald-type limit is unreliable" in n for n in data["notes"])
    res = cli(
        "calibrate",
        "--study",
        st.path,
        "--rule",
        "kappa_lower>=0.3",
        "--change-rule",
        "--bootstrap",
        300,
        "--seed",
        3,
        "--format",
        "json",
    )
    data = json.loads(res.stdout)
    assert data["ci_method"] == "percentile bootstrap, 300 resamples, seed 3"
    assert not any("Wald" in n for n in data["notes"])  # kappa: the goodness-of-fit limit
    agree = json.loads(
        cli(
            "agree", "--study", st.path, "--field", "safety_label", "--bootstrap", 300, "--seed", 3, "--format", "json"
        ).stdout
    )
    k = next(r for r in agree["statistics"] if r["statistic"] == "cohen_kappa" and r["weights"] == "none")
    assert data["rounds"][0]["checks"][0]["ci_low"] == k["ci_low"]
    # the report's calibration section uses the recorded bootstrap setting
    assert Study.open(st.path).extra["calibration"]["bootstrap"] == 300
    res = cli("report", "--study", st.path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert "percentile bootstrap, 300 resamples, seed 3" in (tmp_path / "r.md").read_text()
