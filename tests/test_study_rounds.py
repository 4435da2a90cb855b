"""One rule for "the latest pulled round" (Study.latest_pulled_round)."""

from __future__ import annotations

import pandas as pd
import pytest

from goldboard.errors import GoldboardError
from goldboard.study import Study


def _pull(st: Study, n: int) -> None:
    st.ratings_path(n).parent.mkdir(parents=True, exist_ok=True)
    row = {"round": n, "item_id": "C1", "rater": "a", "field": "safety_label", "value": "Supported"}
    pd.DataFrame([row]).to_csv(st.ratings_path(n), index=False)


def test_latest_pulled_round(tmp_path):
    st = Study.init(tmp_path / "s", schema="mtb", raters=["a", "b"])
    with pytest.raises(GoldboardError, match="no ratings pulled yet"):
        st.latest_pulled_round()
    # ratings outside any recorded round: the latest such round
    _pull(st, 1)
    _pull(st, 3)
    assert st.pulled_rounds() == [1, 3] and st.latest_pulled_round() == 3
    # recorded rounds win: round 2 is recorded but not pulled, round 1 is recorded and pulled
    st.get_or_add_round(1)
    st.get_or_add_round(2)
    assert st.latest_pulled_round() == 1
    assert int(st.ratings()["round"].iloc[0]) == 1  # Study.ratings() reads the same round
    _pull(st, 2)
    assert st.latest_pulled_round() == 2
