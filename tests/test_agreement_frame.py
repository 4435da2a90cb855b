"""A study's ratings coded from whole columns (issue 25: the report and `agree` at 200k-1M
ratings): :func:`prepare_frame` gives exactly what :func:`prepare_ratings` gives -- codes, items,
raters, scale, warnings in order -- on generated ratings tables, and hands every table that is not
plain back to it; the round rule's coded tallies (:class:`_CodedRound`) count what the per-item
loop counts."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from goldboard.analysis.agreement import agreement, agreement_prepared
from goldboard.analysis.agreement_inputs import AgreementOptions, prepare_frame, prepare_ratings
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import load_schema
from goldboard.text import _ARROW_SORT_AT
from goldboard.workflows.agreement import _CodedRound, _raters_with, _tally

SCHEMA = load_schema("medfail")
FIELDS = ["severity", "safety_gate", "likely_harm", "keep_in_benchmark", "confidence"]
SPELLINGS = {"likely_harm": ["yes", "no", "Yes", "true", "0"], "keep_in_benchmark": ["keep", "drop", "yes", "no"]}


def _table(rng: random.Random, n_items: int, raters: list[str]) -> pd.DataFrame:
    """A ratings table of several fields: items rated by some raters, empty and missing values,
    aliases, rows in shuffled order, a rater with no rating of one field now and then."""
    rows = []
    for i in rng.sample(range(5 * n_items), n_items):
        for r in raters:
            for field in FIELDS:
                if rng.random() < 0.25:
                    continue  # not rated
                cats = SPELLINGS.get(field, SCHEMA.field(field).categories)
                roll = rng.random()
                value = "" if roll < 0.05 else (None if roll < 0.08 else rng.choice(cats))
                rows.append({"item_id": f"C{i}", "rater": r, "field": field, "value": value, "rationale": "x"})
    rng.shuffle(rows)
    if rng.random() < 0.3:  # one rater rated nothing but empties of one field
        quiet = rng.choice(raters)
        for row in rows:
            if row["rater"] == quiet and row["field"] == "severity":
                row["value"] = ""
    df = pd.DataFrame(rows, columns=["item_id", "rater", "field", "value", "rationale"])
    if rng.random() < 0.5:  # the study's dtype: text (pandas' str), not object
        df = df.astype({c: "str" for c in ("item_id", "rater", "field", "value")})
    return df


def _same(got, want) -> None:
    prep, cfg = got
    want_prep, want_cfg = want
    assert np.array_equal(prep.codes, want_prep.codes)
    assert prep.items == want_prep.items and prep.raters == want_prep.raters
    assert prep.groups is None and want_prep.groups is None
    assert prep.clusters is None and want_prep.clusters is None
    assert vars(cfg) | {"scores": None} == vars(want_cfg) | {"scores": None}
    assert (cfg.scores is None and want_cfg.scores is None) or np.array_equal(cfg.scores, want_cfg.scores)
    assert prep.warnings == want_prep.warnings


@pytest.mark.parametrize("seed", range(40))
def test_a_plain_table_is_coded_as_the_ratings_table_codes_it(seed):
    rng = random.Random(seed)
    raters = rng.sample(["onc_a", "onc_b", "onc_c", "gp"], rng.randint(2, 4))
    df = _table(rng, rng.randint(3, 80), raters)
    n_coded = 0
    for field in FIELDS:
        study_order = rng.sample(raters, len(raters)) if rng.random() < 0.7 else None
        levels = (
            rng.choice([None, ["nominal"], ["ordinal", "interval"]]) if field in ("severity", "confidence") else None
        )
        cats = ["1", "2", "3", "4", "5"] if field == "severity" and rng.random() < 0.3 else None
        opts = AgreementOptions(field=field, schema=SCHEMA, raters=study_order, levels=levels, categories=cats)
        try:
            want = prepare_ratings(df, opts)
        except GoldboardError:
            assert prepare_frame(df, opts) is None
            continue
        got = prepare_frame(df, opts)
        if got is None:
            # only what the frame path may not decide: a whole field empty or rated by one rater
            assert len(want[0].raters) >= 2
            continue
        n_coded += 1
        _same(got, want)
    assert n_coded  # the columns path was taken


def test_the_same_statistics_and_bootstrap_stream():
    rng = random.Random(11)
    df = _table(rng, 120, ["onc_a", "onc_b", "onc_c"])
    for field in ("severity", "likely_harm"):
        opts = AgreementOptions(field=field, schema=SCHEMA, raters=["onc_b", "onc_a", "onc_c"])
        assert prepare_frame(df, opts) is not None
        for n_resamples in (0, 200):
            want = agreement_prepared(prepare_ratings(df, opts), n_resamples=n_resamples, seed=3)
            got = agreement(df, field, SCHEMA, raters=["onc_b", "onc_a", "onc_c"], n_resamples=n_resamples, seed=3)
            assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)


def _plain() -> pd.DataFrame:
    rng = random.Random(5)
    a = [f"I{i}" for i in range(30)]
    rows = [(i, r, "severity", rng.choice("12345")) for i in a for r in ("a", "b")]
    return pd.DataFrame(rows, columns=["item_id", "rater", "field", "value"])


def _at0(df: pd.DataFrame, col: str, value) -> pd.DataFrame:
    df = df.astype({col: object})
    df.loc[0, col] = value
    return df


@pytest.mark.parametrize(
    "change",
    [
        lambda d: _at0(d, "value", " 3"),  # blanks around a value
        lambda d: _at0(d, "value", "9"),  # outside the scale
        lambda d: _at0(d, "value", 3),  # a number, not text
        lambda d: _at0(d, "item_id", " I1"),  # blanks around an id
        lambda d: _at0(d, "item_id", ""),  # an empty id
        lambda d: _at0(d, "item_id", None),  # a missing id
        lambda d: _at0(d, "rater", " a"),  # blanks around a rater
        lambda d: _at0(d, "field", " severity"),  # blanks around a field name
        lambda d: pd.concat([d, d.iloc[:1]], ignore_index=True),  # a rating given twice
        lambda d: d.assign(value=""),  # every rating empty
        lambda d: d[d["rater"] == "a"],  # one rater
        lambda d: d.astype({"item_id": "category"}),  # categorical ids
    ],
)
def test_what_is_not_plain_goes_back_to_the_ratings_table(change):
    opts = AgreementOptions(field="severity", schema=SCHEMA, raters=["a", "b"])
    assert prepare_frame(_plain(), opts) is not None
    df = change(_plain()).reset_index(drop=True)
    assert prepare_frame(df, opts) is None
    try:  # agreement() answers (or names the fault) exactly as the ratings-table path does
        want = json.dumps(agreement_prepared(prepare_ratings(df, opts)), sort_keys=True)
    except GoldboardError as exc:
        with pytest.raises(GoldboardError) as got:
            agreement(df, "severity", SCHEMA, raters=["a", "b"])
        assert str(got.value) == str(exc)
    else:
        assert json.dumps(agreement(df, "severity", SCHEMA, raters=["a", "b"]), sort_keys=True) == want


@pytest.mark.parametrize(
    "opts",
    [
        AgreementOptions(field="severity", schema=None),
        AgreementOptions(field="severity", schema=SCHEMA, dichotomize="4"),
        AgreementOptions(field="severity", schema=SCHEMA, by="model"),
        AgreementOptions(field="severity", schema=SCHEMA, clusters={"I1": "x"}),
    ],
)
def test_options_beyond_the_plain_case_go_back_to_the_ratings_table(opts):
    assert prepare_frame(_plain().assign(model="m"), opts) is None


@pytest.mark.parametrize("seed", range(30))
def test_the_round_tallies_from_codes_are_those_of_the_item_loop(seed):
    rng = random.Random(seed)
    raters = rng.sample(["onc_a", "onc_b", "onc_c", "x"], rng.randint(1, 4))
    rows = [(f"I{rng.randrange(40)}", rng.choice(raters)) for _ in range(rng.randint(1, 150))]
    df = pd.DataFrame(rows, columns=["item_id", "rater"]).astype("str")
    need = set(rng.sample(["onc_a", "onc_b", "onc_c"], rng.randint(0, 3)))
    lists = (df["item_id"].tolist(), df["rater"].tolist())
    assert _tally(1, _CodedRound.of(df["item_id"], df["rater"]), need, {}) == _tally(1, lists, need, {})


@pytest.mark.parametrize("seed", range(20))
def test_the_raters_with_a_rating_are_those_of_the_row_loop(seed):
    from goldboard.workflows.agreement import _id_text

    rng = random.Random(seed)
    df = _table(rng, rng.randint(1, 30), rng.sample(["a", "b", "c"], rng.randint(1, 3)))
    df.loc[df.index[:2], "value"] = "  "  # blank: no rating
    for base, multi in (("severity", False), ("likely_harm", False), ("severity", True)):
        sub = df[df["field"] == base]
        want = set(sub["rater"] if multi else sub.loc[(sub["value"].map(_id_text) != "").to_numpy(), "rater"])
        assert _raters_with(df, base, multi) == want


def _ids(rng: random.Random, plain: bool) -> list[str]:
    """Distinct ids: plain ``C0000123`` shapes with distinct numbers (``plain``), else a mix."""
    n = rng.randint(_ARROW_SORT_AT, 3 * _ARROW_SORT_AT)
    prefixes = ["C", "c", "case_", "Case-", "x:/", "C", "C"]
    numbers = rng.sample(range(10**7), n)
    ids = [f"{rng.choice(prefixes)}{k:0{rng.randint(1, 8)}d}" for k in numbers]
    if not plain:
        odd = ["10", "2", "1.5", "C-1a", "C 1", "C1\n", "\u00c41", "C" + "9" * 19, "", "C01", "C1", "c1"]
        ids = [rng.choice(odd) if rng.random() < 0.2 else i for i in ids]
    return list(dict.fromkeys(ids))


@pytest.mark.parametrize("seed", range(24))
def test_natural_sorted_by_columns_is_the_natural_key_order(seed):
    from goldboard.text import _natural_sorted_arrow, natural_key, natural_sorted

    rng = random.Random(seed)
    ids = _ids(rng, plain=seed % 2 == 1)
    if seed % 4 == 3:
        ids += ["Q0042", "q42"]  # one tie of (prefix casefolded, number): the text decides, row by row
    want = sorted(ids, key=natural_key)
    assert natural_sorted(ids) == want
    fast = _natural_sorted_arrow(ids)
    assert fast == (want if seed % 4 == 1 else None)  # plain without ties: the columns path decides
