"""No plan's n moves with the seed: `plan judge` adds simulated datasets while a count's winning
rate or pass share lies within 2 Monte Carlo SEs of 0.5 or 80% (it read 30 items at seed 3 and 40
at another with 200 datasets; checked), and the assurance plans use a Wilson lower bound on the
simulated share with batches (tests/test_planning_assurance.py pins the fixed stream); here every
plan is run with two seeds and gives the same n."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from test_planning_assurance import PREV

import goldboard.analysis.planning as pl
from goldboard.analysis.alttest import ambiguous_counts, simulate_items_needed


def test_plan_judge_counts_do_not_move_with_the_seed():
    # seeds 1 and 3: with one batch of 200 datasets items_needed is 30 at seed 1 and 40 at seed 3
    one = [simulate_items_needed(seed=s)["items_needed"] for s in (1, 3)]
    assert one == [30, 40]
    runs = [simulate_items_needed(seed=s, max_batches=8) for s in (1, 3)]
    assert {(d["items_needed"], d["items_for_80"]) for d in runs} == {(30, 60)}
    for d in runs:
        assert d["ambiguous"] == [] == ambiguous_counts(d)
        assert d["settings"]["n_datasets"] == 200 * d["settings"]["batches"]


def test_plan_judge_cli_says_how_many_studies_and_that_no_count_is_near_the_line():
    got = [json.loads(run_cli("plan", "judge", "--epsilon", "0.2", "--seed", s, "--format", "json").stdout)
           for s in ("1", "2")]  # fmt: skip
    assert got[0]["items_needed"] == got[1]["items_needed"] and got[0]["items_for_80"] == got[1]["items_for_80"]
    text = run_cli("plan", "judge", "--epsilon", "0.2", "--seed", "2").stdout
    n = got[1]["settings"]["n_datasets"]
    assert f"In {n} simulated studies per item count (each its own dataset)" in text
    assert "no simulated count lies within 2 SEs of 0.5 or 80%" in text


@pytest.mark.parametrize(
    "plan",
    [pl.ci_sample_size(0.6, 0.4, PREV), pl.ci_sample_size(0.6, 0.45, [0.2, 0.8], kappa_upper=0.75)],
    ids=["lower", "width"],
)
def test_assurance_plans_do_not_move_with_the_seed(plan):
    assert len({pl.assured_sample_size(plan, 0.8, seed=s).n for s in (1, 2)}) == 1


def test_an_assurance_plan_says_where_the_simulation_cannot_settle_n():
    """kappa 0.6, width 0.3, prevalences 0.2/0.8, assurance 0.9: the fixed set of studies gives 210
    items, seeds 1-5 give 209 (benchmarks/bench_assurance.py), because the share at 209 items lies
    within its Monte Carlo error of 90% after 320,000 studies; the plan says so.  Where every size
    next to n is settled, nothing is said."""
    width = pl.ci_sample_size(0.6, 0.45, [0.2, 0.8], kappa_upper=0.75)
    plan = pl.assured_sample_size(width, 0.9)
    assert (plan.n, plan.unsettled) == (210, (209,))
    text = plan.sentence()
    assert "The share at 209 items lies within its 99% Monte Carlo error of 90% after" in text, text
    assert "another set of simulated studies can put the smallest size an item or two away" in text
    assert plan.to_dict()["unsettled"] == [209] and plan.unsettled_studies == 320000
    assert "90% after 320000 studies" in text
    settled = pl.assured_sample_size(width, 0.8, seed=1)
    assert settled.unsettled == () and "Monte Carlo error" not in settled.sentence()
