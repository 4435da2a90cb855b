"""The column-wise fast paths of issue 25 keep the slow paths' results and errors."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from goldboard.cases.rounds import RoundSelection, select_rounds
from goldboard.errors import GoldboardError
from goldboard.fileio import csv_text, read_csv_frame


def test_read_csv_frame_full_rows_short_rows_and_no_rows(tmp_path):
    df = pd.DataFrame({"a": ["1", "", 'q"uote'], "b": ["x\r\ny", "\u2028", ""]})
    p = tmp_path / "t.csv"
    p.write_text(csv_text(df), encoding="utf-8", newline="")
    pd.testing.assert_frame_equal(read_csv_frame(p), df.astype(str))
    p.write_text("a,b,c\n1,2,3\n4\n\n5,6\n", encoding="utf-8", newline="")
    got = read_csv_frame(p)
    assert got.to_dict("list") == {"a": ["1", "4", "5"], "b": ["2", "", "6"], "c": ["3", "", ""]}
    p.write_text("a,b\n", encoding="utf-8", newline="")
    got = read_csv_frame(p)
    assert list(got.columns) == ["a", "b"] and len(got) == 0


@pytest.mark.parametrize(
    "text, message",
    [("a,b,a\n1,2,3\n", "t.csv:1: column 'a' appears twice"), ("a,b\n1,2\n1,2,3\n", "t.csv:3: more cells")],
)
def test_read_csv_frame_errors_name_file_and_line(tmp_path, text, message):
    p = tmp_path / "t.csv"
    p.write_text(text, encoding="utf-8", newline="")
    with pytest.raises(GoldboardError, match=message):
        read_csv_frame(p)


def test_round_selection_is_not_deep_copied_with_the_frame():
    df = pd.DataFrame({"round": [1, 1, 2, 1], "item_id": ["X", "X", "X", "Y"], "rater": ["a", "b", "a", "a"]})
    cur, sel = select_rounds(df, ["a", "b"])
    assert sel.rounds == {"X": 1, "Y": 1}
    assert [x.describe() for x in sel.incomplete] == ["item X: round 2 rated only by a (missing b); using round 1"]
    cur.attrs["round_selection"] = sel
    assert copy.deepcopy(sel) is sel and cur.copy().attrs["round_selection"] is sel
    assert isinstance(cur.head(1).attrs["round_selection"], RoundSelection)
