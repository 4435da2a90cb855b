"""The column-wise fast paths of issue 25 keep the slow paths' results and errors."""

from __future__ import annotations

import copy
import random

import pandas as pd
import pytest

from goldboard import fileio
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


def _slow_frame(monkeypatch, path):
    with monkeypatch.context() as m:
        m.setattr(fileio, "_csv_frame_c", lambda text: None)
        return read_csv_frame(path)


@pytest.mark.slow  # 1500 random texts read both ways
def test_read_csv_frame_c_parser_reads_what_the_csv_module_reads(tmp_path, monkeypatch):
    """Random texts over the characters that matter to CSV: wherever the C parser path answers,
    its frame equals the csv module path's, cell for cell (dtype included)."""
    rng = random.Random(25)
    alphabet = ['"', ",", "\r", "\n", "\r\n", " ", "\t", "a", "b", "\u2028", '""', "é"]
    p = tmp_path / "t.csv"
    answered = 0
    for _ in range(1500):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        text = rng.choice(["x,y\n", "x,y,z\r\n", '"x","y ""q"""\n', "x\n"]) + body
        p.write_text(text, encoding="utf-8", newline="")
        fast = fileio._csv_frame_c(text)
        try:
            slow = _slow_frame(monkeypatch, p)
        except GoldboardError:
            assert fast is None, repr(text)
            continue
        if fast is not None:
            answered += 1
            pd.testing.assert_frame_equal(fast, slow, obj=repr(text))
    assert answered > 150  # the comparison ran often enough to mean something


def test_read_csv_frame_c_parser_on_a_written_ratings_table(tmp_path, monkeypatch):
    df = pd.DataFrame({"item_id": ["C1", "C2", "C3"], "rationale": ['says "no", then\r\nyes', "", " x "]})
    p = tmp_path / "r.csv"
    p.write_text(csv_text(df), encoding="utf-8", newline="")
    assert fileio._csv_frame_c(p.read_text(encoding="utf-8")) is not None
    pd.testing.assert_frame_equal(read_csv_frame(p), _slow_frame(monkeypatch, p))


@pytest.mark.slow  # 300 random studies selected both ways
def test_select_rounds_by_columns_equals_item_by_item(monkeypatch):
    """Random studies (rounds 1-3, raters in and outside the list, partial later rounds): the
    column-wise selection gives the same rows, rounds and incomplete-round list as the per-item loop."""
    from goldboard.cases import rounds as rounds_mod

    rng = random.Random(2025)
    for trial in range(300):
        rows = []
        for i in range(rng.randint(1, 12)):
            for rnd in rng.sample([1, 2, 3], rng.randint(1, 3)):
                for rater in rng.sample(["a", "b", "c", "judge"], rng.randint(1, 4)):
                    rows += [{"round": str(rnd), "item_id": f"I{i}", "rater": rater}] * rng.randint(1, 2)
        rng.shuffle(rows)
        df = pd.DataFrame(rows)
        raters = rng.choice([None, ["a", "b"], ["b", "a", "c"], ["a", "zed"]])
        fast, fsel = select_rounds(df, raters)
        with monkeypatch.context() as m:
            m.setattr(
                rounds_mod, "_select_by_columns", lambda d, k, o, n, s: rounds_mod._select_per_item(d, k, o, n, {}, s)
            )
            slow, ssel = select_rounds(df, raters)
        pd.testing.assert_frame_equal(fast, slow)
        assert list(fsel.rounds.items()) == list(ssel.rounds.items()), trial
        assert fsel.incomplete == ssel.incomplete, trial


def test_natural_sorted_is_sorted_by_natural_key():
    """The column fast path (letters + one digit run) and the fallback both order as natural_key."""
    from goldboard.text import natural_key, natural_sorted

    rng = random.Random(7)
    shapes = [
        lambda: f"{rng.choice(['C', 'c', 'MTB-', 'mtb-', 'x_', 'a:b/'])}{rng.randint(0, 200):0{rng.randint(1, 4)}d}",
        lambda: f"C{rng.randint(0, 9)}::m{rng.randint(0, 3)}",
        lambda: str(rng.randint(0, 50)),
        lambda: rng.choice([" C1", "C1 ", "C١", "Cé1", "1.5", ""]),
    ]
    for trial in range(400):
        pick = shapes[:1] if trial % 2 else shapes
        values = list(dict.fromkeys(rng.choice(pick)() for _ in range(rng.randint(0, 40))))
        assert natural_sorted(values) == sorted(values, key=natural_key), values
