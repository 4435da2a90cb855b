"""`goldboard plan judge`: the authors' simulation of how many items the alt-test needs.

The simulated humans' agreement is checked against the mapping the authors print (README and
notebook: noise 0.1 -> IAA 0.80, 0.2 -> 0.63, 0.3 -> 0.48, 0.4 -> 0.36), the judge's accuracy
against its closed form, and the answer against the two judges whose outcome is known.
"""

from __future__ import annotations

import json

import pytest
from conftest import invoke_cli

from goldboard.analysis.alttest import simulate_items_needed
from goldboard.errors import GoldboardError

SMALL = dict(n_datasets=8, n_boots=3, sizes=(200,))


@pytest.mark.parametrize("noise,iaa", [(0.1, 0.80), (0.2, 0.63), (0.3, 0.48), (0.4, 0.36)])
def test_human_noise_gives_the_authors_agreement(noise, iaa):
    got = simulate_items_needed(human_noise=noise, **SMALL)["human_kappa"]
    assert got == pytest.approx(iaa, abs=0.03)


@pytest.mark.parametrize("k,noise", [(2, 0.3), (4, 0.3), (5, 0.5)])
def test_judge_accuracy_has_its_closed_form(k, noise):
    """P(judge = truth) = 1 - noise + noise * E[sum p_c^2], and E[sum p_c^2] = 2 / (k + 1) for
    priors from a flat Dirichlet."""
    got = simulate_items_needed(n_categories=k, judge_noise=noise, n_datasets=60, n_boots=2, sizes=(200,))
    assert got["judge_accuracy"] == pytest.approx(1 - noise + noise * 2 / (k + 1), abs=0.02)


def test_a_perfect_judge_passes_from_the_smallest_count_and_a_random_one_never():
    sizes = (30, 60, 100)
    perfect = simulate_items_needed(judge_noise=0.0, n_datasets=4, n_boots=3, sizes=sizes)
    assert perfect["items_needed"] == 30 and perfect["items_for_80"] == 30
    random = simulate_items_needed(judge_noise=1.0, n_datasets=4, n_boots=3, sizes=sizes)
    assert random["items_needed"] is None and all(r["winning_rate"] < 0.2 for r in random["rows"])


def test_seeded():
    a = simulate_items_needed(n_datasets=3, n_boots=2, sizes=(30, 60), seed=4)
    assert a == simulate_items_needed(n_datasets=3, n_boots=2, sizes=(30, 60), seed=4)
    assert a != simulate_items_needed(n_datasets=3, n_boots=2, sizes=(30, 60), seed=5)


@pytest.mark.parametrize(
    "kwargs,param",
    [({"n_humans": 1}, "n_humans"), ({"n_categories": 1}, "n_categories"), ({"judge_noise": 2}, "judge_noise")],
)
def test_bad_settings_are_named(kwargs, param):
    with pytest.raises(GoldboardError) as err:
        simulate_items_needed(**kwargs)
    assert err.value.param == param


def test_cli_json_and_sentence():
    res = invoke_cli("plan", "judge", "--expertise", "expert", "--datasets", "2", "--boots", "2", "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["settings"]["epsilon"] == 0.2 and len(data["rows"]) == 18
    assert "simulated studies per item count" in data["sentence"]


def test_cli_error_names_the_flag():
    res = invoke_cli("plan", "judge", "--n-humans", "1", "--epsilon", "0.2")
    assert res.exit_code == 1 and "Error: --n-humans: 1: give 2 to 6 humans" in res.output, res.output


def test_the_sentence_says_what_was_simulated_and_its_monte_carlo_error():
    """Issue 34: "200 simulated studies" were 20 datasets resampled 10 times, and the item count
    moved with the seed (30 or 40) with no word of its precision."""
    from goldboard.workflows.judge import plan_sentence

    sizes = (30, 40, 50, 60, 70)
    data = simulate_items_needed(n_datasets=60, n_boots=1, sizes=sizes, seed=3)
    s = plan_sentence(data)
    assert "In 60 simulated studies per item count (each its own dataset)" in s
    assert "Monte Carlo error (from the spread between datasets)" in s and "another seed can move" in s
    assert all(r["passed_se"] > 0 for r in data["rows"] if 0 < r["passed_share"] < 1)
    # the SE is a binomial one for independent studies
    r = data["rows"][0]
    assert r["passed_se"] == pytest.approx((r["passed_share"] * (1 - r["passed_share"]) / 59) ** 0.5, rel=1e-6)
    resampled = simulate_items_needed(n_datasets=6, n_boots=5, sizes=sizes, seed=3)
    assert "30 simulated studies per item count (6 datasets resampled 5 times: not independent studies)" in (
        plan_sentence(resampled)
    )
