"""The review sheet's pieces read from a small study's ratings as columns, without pandas (issue
19), give what the DataFrame path gives -- compared on many generated studies
(``test_flag_columns._random_study``)."""

from __future__ import annotations

import pytest
import test_flag_columns as tfc

from goldboard.adjudicate.gold import resolve_gold, resolve_gold_columns
from goldboard.cases.ratings_columns import read_rating_columns
from goldboard.study import Study, study_ratings


def _orders(present: list[str]) -> list[list[str]]:
    return [present, present[::-1], sorted(present)[:2]]


@pytest.mark.parametrize("seed", range(60))
def test_gold_of_the_columns_is_the_gold_of_the_frame(seed, tmp_path):
    st = Study.open(tfc._random_study(tmp_path, seed))
    if len(st.pulled_rounds()) != 1:
        pytest.skip("several rounds: the DataFrame path only")
    table = read_rating_columns(st.ratings_path(1))
    present = [r for r in tfc.RATERS if r in set(table["rater"])]
    ratings = study_ratings(st)
    for raters in _orders(present):
        for round_number in (None, 1):
            cols = resolve_gold_columns(table, st.schema, raters, round_number=round_number)
            if cols is None:
                continue
            frame = resolve_gold(ratings, st.schema, (), raters, round_number=round_number)
            assert list(cols) == list(frame.columns), seed
            assert {c: frame[c].tolist() for c in frame.columns} == cols, (seed, raters)


def test_the_generated_studies_mostly_give_gold_columns(tmp_path):
    """Most generated studies are answered by the columns (else the comparison proves little)."""
    taken = 0
    for seed in range(40):
        st = Study.open(tfc._random_study(tmp_path, seed))
        table = read_rating_columns(st.ratings_path(1))
        present = [r for r in tfc.RATERS if r in set(table["rater"])]
        if len(st.pulled_rounds()) == 1 and resolve_gold_columns(table, st.schema, present) is not None:
            taken += 1
    assert taken >= 25, taken


@pytest.mark.parametrize("seed", range(40))
def test_ratings_digest_of_the_columns_is_the_digest_of_the_frame(seed, tmp_path):
    """The digest the sheet records (the import checks the ratings against it) is the same either way."""
    from goldboard.adjudicate.review_sheet import ratings_digest, ratings_digest_columns

    st = Study.open(tfc._random_study(tmp_path, seed))
    if len(st.pulled_rounds()) != 1:
        pytest.skip("several rounds: the DataFrame path only")
    table = read_rating_columns(st.ratings_path(1))
    assert ratings_digest_columns(table) == ratings_digest(study_ratings(st))
    for r in ("", "01"):  # a blank round is round 1, as the DataFrame reader reads it
        odd = {**table, "round": [r] * len(table["item_id"])}
        assert ratings_digest_columns(odd) == ratings_digest(study_ratings(st)), r
