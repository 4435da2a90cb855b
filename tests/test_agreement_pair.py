"""One rater against the resolved gold label, coded from whole columns (the report's rater vs
gold section, issue 25): :func:`prepare_pair` and :func:`agreement_prepared` give exactly what
:func:`agreement` gives on the two raters' rows as a ratings table, and hand every case that is
not plain back to that code."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from goldboard.analysis.agreement import agreement, agreement_prepared
from goldboard.analysis.agreement_inputs import AgreementOptions, prepare_pair, prepare_ratings
from goldboard.exports.report import rater_vs_gold
from goldboard.label_configs.schema import load_schema

SCHEMA = load_schema("medfail")


def _pair(rng: random.Random, field: str, n: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    cats = SCHEMA.field(field).categories
    mine = [f"I{i}" for i in rng.sample(range(3 * n), n)]
    gold = [f"I{i}" for i in rng.sample(range(3 * n), n)]
    a = pd.DataFrame({"item_id": mine, "rater": "a", "field": field, "value": [rng.choice(cats) for _ in mine]})
    b = pd.DataFrame({"item_id": gold, "rater": "gold", "field": field, "value": [rng.choice(cats) for _ in gold]})
    return a, b


def _coded(a: pd.DataFrame, b: pd.DataFrame, field: str):
    opts = AgreementOptions(field=field, schema=SCHEMA, raters=["a", "gold"])
    cols = [(d["item_id"].to_numpy(dtype=object), d["value"].to_numpy(dtype=object)) for d in (a, b)]
    return prepare_pair(cols[0][0], cols[0][1], cols[1][0], cols[1][1], opts), opts


@pytest.mark.parametrize("seed", range(30))
def test_the_pair_is_coded_as_the_ratings_table_codes_it(seed):
    rng = random.Random(seed)
    field = rng.choice(["severity", "safety_gate", "likely_harm", "keep_in_benchmark"])
    a, b = _pair(rng, field, rng.randint(1, 60))
    got, opts = _coded(a, b, field)
    assert got is not None
    want_prep, want_cfg = prepare_ratings(pd.concat([a, b], ignore_index=True), opts)
    prep, cfg = got
    assert np.array_equal(prep.codes, want_prep.codes)
    assert prep.items == want_prep.items and prep.raters == want_prep.raters
    assert cfg == want_cfg and prep.warnings == want_prep.warnings
    for n_resamples in (0, 200):  # the same random stream: the same bootstrap intervals
        want = agreement(
            pd.concat([a, b], ignore_index=True), field, SCHEMA, raters=["a", "gold"], n_resamples=n_resamples
        )
        got_res = agreement_prepared(_coded(a, b, field)[0], n_resamples=n_resamples)
        assert json.dumps(got_res, sort_keys=True) == json.dumps(want, sort_keys=True)


@pytest.mark.parametrize(
    "change",
    [
        lambda a: a.assign(value=a["value"].where(a.index != 0, " 3")),  # blanks around a value
        lambda a: a.assign(item_id=a["item_id"].where(a.index != 0, " I1")),  # blanks around an id
        lambda a: a.assign(value=a["value"].where(a.index != 0, "9")),  # outside the scale
        lambda a: pd.concat([a, a.iloc[:1]], ignore_index=True),  # an item rated twice
    ],
)
def test_what_is_not_plain_goes_back_to_the_ratings_table(change):
    a, b = _pair(random.Random(7), "severity", 20)
    assert _coded(a, b, "severity")[0] is not None
    assert _coded(change(a), b, "severity")[0] is None


def test_the_report_rows_are_those_of_the_ratings_table_way():
    rng = random.Random(3)
    a, g = _pair(rng, "severity", 200)
    b = a.assign(rater="b", value=[rng.choice("12345") for _ in range(len(a))])
    b.loc[b.index[:3], "value"] = " 4"  # b's rows go the ratings table's way (blanks around a value)
    ratings = pd.concat([a, b], ignore_index=True)
    gold = pd.DataFrame({"item_id": g["item_id"], "field": "severity", "gold_value": g["value"], "method": "x"})
    rows = rater_vs_gold(ratings, gold, "severity", ["a", "b"], SCHEMA)
    want = []
    # leave-one-out gold (no decision in force): the other rater's value, on the items of the gold
    # both rated (the study's other gold items, and items one rater alone rated, are left out)
    for r, other in (("a", "b"), ("b", "a")):
        theirs = ratings[(ratings["rater"] == other) & ratings["item_id"].isin(gold["item_id"])]
        mine = ratings[(ratings["rater"] == r) & ratings["item_id"].isin(theirs["item_id"])]
        rated = theirs[theirs["item_id"].isin(mine["item_id"])].assign(rater="gold")
        both = pd.concat([mine, rated], ignore_index=True)
        res = agreement(both, "severity", SCHEMA, raters=[r, "gold"])
        kappa = next(s for s in res["statistics"] if s["statistic"] == "cohen_kappa" and s["weights"] in ("none", None))
        want.append((r, res["n_items"], kappa["value"], kappa["ci_low"]))
    assert [(x["rater"], x["n"], x["kappa"], x["kappa_low"]) for x in rows] == want


def test_the_distinct_rating_patterns_are_numpys():
    from goldboard.analysis.agreement import unique_rows

    rng = np.random.default_rng(25)
    for _ in range(2000):
        n, m, k = int(rng.integers(0, 60)), int(rng.integers(1, 7)), int(rng.integers(2, 8))
        codes = rng.integers(-1, k, size=(n, m)).astype(np.int64)
        want = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
        got = unique_rows(codes, k)
        assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1].reshape(-1))
        assert np.array_equal(got[2], want[2])
