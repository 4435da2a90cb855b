"""A stopping verdict cannot be met by a collapsed interval or by looking often (issue 21).

* A 12-item round with perfect agreement used to print "1.000 to 1.000 ... rule met" even for
  ``kappa_lower>=0.95`` (with ``--bootstrap 2000`` too): the Wald interval collapses to the point.
  The rule now tests the Donner-Eliasziw goodness-of-fit limit, which stays informative there,
  and a limit that cannot be computed is "cannot be decided", never met.
* Checking after every round is a sequential test.  A seeded simulation of goldboard's own rule
  (:func:`kappa_rule_limits` at :func:`look_level`, the code ``calibrate`` runs) shows the false-stop
  rate at or below the nominal 2.5% for 1-5 looks -- true kappa 0.5, rule ``kappa_lower>=0.6``,
  12 items over 4 categories, and a binary label with prevalence 0.1 -- where the unadjusted Wald
  rule stopped falsely 3.7-14.7% and 15.9-61% of the time (the issue's figures); and the power to stop when kappa is 0.9.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli as run

from goldboard.analysis.calibration import NOMINAL, gof_limit, kappa_rule_limits, look_level, parse_rule
from goldboard.study import Study

LABELS = ["Supported", "Partially Supported", "Unsupported", "Unsafe"]


def perfect_study(tmp: Path, n: int = 12) -> Path:
    """Two raters agreeing on all ``n`` items, 4 labels used equally."""
    table = tmp / "perfect.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "a", "b"])
        for i in range(n):
            w.writerow([f"C{i:02d}", LABELS[i % 4], LABELS[i % 4]])
    s = tmp / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run(
        "pull",
        "--study",
        s,
        "--from-table",
        table,
        "--item-col",
        "case_id",
        "--rater-cols",
        "onc_a=a,onc_b=b",
        "--field",
        "safety_label",
        "--identical-columns-ok",  # the two raters really agreed on every item
    )
    run("study", "round", s, 1, "--calibration", "--guideline-version", "v1")
    return s


def test_perfect_agreement_on_12_items_does_not_meet_a_strict_rule(tmp_path):
    s = perfect_study(tmp_path)
    agree = json.loads(run("agree", "--study", s, "--format", "json").stdout)
    kappa = next(r for r in agree["statistics"] if r["statistic"] == "cohen_kappa")
    # the default interval at perfect agreement is the one-sided Wilson interval, -1 + 2 n / (n + z^2)
    # to 1 (issue 34; the Wald interval collapsed to 1.000 to 1.000)
    one_sided = -1 + 2 * 12 / (12 + 1.959963984540054**2)
    assert (kappa["value"], kappa["ci_high"], kappa["se"]) == (1.0, 1.0, 0.0)
    assert kappa["ci_low"] == pytest.approx(one_sided, abs=1e-12) and kappa["ci_method"] == "wilson"
    for extra in ([], ["--bootstrap", 2000]):
        data = json.loads(
            run("calibrate", "--study", s, "--rule", "kappa_lower>=0.95", *extra, "--format", "json").stdout
        )
        c = data["rounds"][0]["checks"][0]
        assert c["tested"] == pytest.approx(gof_limit(np.eye(4) * 3, 0.005)) and c["tested"] < 0.6
        assert not c["met"] and data["verdict"] == "continue calibrating"
        assert any("kappa_lower>=0.95 cannot be met at n = 12: even perfect agreement" in n for n in data["notes"])
    out = run("calibrate", "--study", s, "--rule", "kappa_lower>=0.95").stdout
    # the 95% CI column is the one-sided Wilson interval (it was "not estimable (degenerate table)")
    assert f"{one_sided:.3f} to 1.000" in out and "1.000 to 1.000" not in out and "rule met" not in out
    # a statistic tested by its Wald limit with a zero SE: cannot be decided, in the verdict and the report
    out = run("calibrate", "--study", s, "--rule", "alpha_lower>=0.5", "--change-rule").stdout
    assert "cannot be decided in round 1 at n = 12: rate more items" in out
    report = tmp_path / "r.md"
    run("report", "--study", s, "--format", "markdown", "-o", report, "--no-supplement")
    text = report.read_text()
    assert "cannot be decided in round 1 at n = 12: rate more items" in text
    assert "Bonferroni-adjusted one-sided level 0.005" in text


def test_looks_are_recorded_and_the_plan_is_fixed_after_a_look(tmp_path):
    s = perfect_study(tmp_path)
    out = run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4", "--max-looks", 3).stdout
    assert "Looks: 1 of 3 planned; each look is tested at the Bonferroni-adjusted one-sided level 0.00833" in out
    cal = Study.open(s).extra["calibration"]
    assert (cal["max_looks"], cal["looks"], cal["level"]) == (3, 1, pytest.approx(NOMINAL / 3))
    res = run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4", "--max-looks", 5, code=1)
    assert res.output.startswith("Error: --max-looks: this calibration planned 3 looks and has taken 1")
    # the methods paragraph cites the planned looks
    report = tmp_path / "r.md"
    run("report", "--study", s, "--format", "markdown", "-o", report, "--no-supplement")
    assert "checked at up to 3 looks with a Bonferroni-adjusted level" in report.read_text()


def cell_probabilities(kappa: float, prevalences) -> np.ndarray:
    """Two raters under the common-correlation model (Donner & Eliasziw 1992): the K x K table."""
    p = np.asarray(prevalences, dtype=float)
    P = (1 - kappa) * np.outer(p, p)
    P[np.diag_indices(len(p))] += kappa * p
    return P


RULE = parse_rule("kappa_lower>=0.6")


def stop_rate(kappa, prevalences, n_items, looks, rng, reps, rule=RULE):
    """Share of simulated calibrations that stop within ``looks`` rounds of ``n_items`` under
    goldboard's rule (every look tested at ``look_level(looks)``)."""
    P = cell_probabilities(kappa, prevalences)
    k = len(prevalences)
    tables = rng.multinomial(n_items, P.ravel(), size=(reps, looks)).reshape(reps, looks, k, k)
    limits = kappa_rule_limits(tables, look_level(looks), rule.part)
    met = np.vectorize(rule.holds)(limits)
    return float(met.any(axis=1).mean())


SCENARIOS = {"12 items, 4 categories": ([0.25] * 4, 12), "binary, prevalence 0.1, 12 items": ([0.9, 0.1], 12)}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_false_stop_rate_at_or_below_nominal_over_1_to_5_looks(name):
    prevalences, n = SCENARIOS[name]
    rng = np.random.default_rng(21)
    rates = [stop_rate(0.5, prevalences, n, looks, rng, reps=10000) for looks in range(1, 6)]
    assert max(rates) <= NOMINAL, (name, rates)


def test_false_stop_rate_with_more_items_per_round():
    """Rounds large enough to stop at all: still at or below nominal over 5 looks."""
    rng = np.random.default_rng(5)
    for prevalences, n in (([0.25] * 4, 30), ([0.9, 0.1], 50), ([0.9, 0.1], 100)):
        rates = [stop_rate(0.5, prevalences, n, looks, rng, reps=4000) for looks in (1, 3, 5)]
        assert max(rates) <= NOMINAL, (prevalences, n, rates)


def test_power_to_stop_when_kappa_is_well_above_the_threshold():
    rng = np.random.default_rng(7)
    # 4 balanced categories, true kappa 0.9: 12 items can stop at one planned look; 30 items per
    # round stop within 5 planned looks almost always
    assert stop_rate(0.9, [0.25] * 4, 12, 1, rng, reps=4000) > 0.3
    assert stop_rate(0.9, [0.25] * 4, 30, 5, rng, reps=4000) > 0.95
    # a rare binary label needs many more items: 100 per round stop within 5 looks most of the time
    assert stop_rate(0.9, [0.9, 0.1], 100, 5, rng, reps=4000) > 0.75
    # and 12 items of a rare binary label never stop (the verdict says so: rate more items)
    assert stop_rate(0.9, [0.9, 0.1], 12, 1, rng, reps=2000) == 0.0
