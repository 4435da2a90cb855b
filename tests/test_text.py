"""The one set of text rules (goldboard.text) every layer uses."""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

from goldboard.text import (
    cell_text,
    is_number,
    ls_text,
    md_escape,
    md_table,
    natural_key,
    neutralize_formula,
    unneutralize_formula,
    utc_now,
    xml_text,
)


@pytest.mark.parametrize(
    "value,text",
    [
        (None, ""),
        (float("nan"), ""),
        (pd.NA, ""),
        (pd.NaT, ""),
        (np.float64("nan"), ""),
        (4.0, "4"),
        (np.float32(4.0), "4"),
        (np.int64(7), "7"),
        (2.5, "2.5"),
        (True, "true"),
        (np.bool_(False), "false"),
        ("  keep me  ", "  keep me  "),  # rater text is never stripped
    ],
    ids=lambda v: repr(v),
)
def test_cell_text(value, text):
    assert cell_text(value) == text


def test_natural_key_orders_numbered_ids_by_value():
    # the agreement engine used to sort C-10 before C-2 (plain text order); flags sorted C-2 first
    ids = ["C-10", "C-2", "C-1", "c-3", "C-2b", "10", "9", "1.5"]
    assert sorted(ids, key=natural_key) == ["1.5", "9", "10", "C-1", "C-2", "C-2b", "c-3", "C-10"]


def test_natural_key_numbers_by_value_not_digit_runs():
    assert sorted(["1.25", "1.5", "-1", "10"], key=natural_key) == ["-1", "1.25", "1.5", "10"]
    assert is_number("4") and is_number("-0.5") and not is_number("C-1") and not is_number("nan")


def test_natural_key_is_total_and_safe_on_odd_digits():
    # superscript two is not a decimal digit; the key must not raise on it
    assert sorted(["x²", "x2", "X2"], key=natural_key) == ["X2", "x2", "x²"]


@pytest.mark.parametrize("text", ["=1", "  =1", "\u00a0@x", "\n+1", "-2", "\t1", "'already"])
def test_one_formula_policy_leading_and_after_blanks(text):
    assert neutralize_formula(text) == "'" + text
    assert unneutralize_formula(neutralize_formula(text)) == text


def test_markdown_escapes_html_pipes_and_newlines():
    assert md_escape("<script>a|b\nc</script>") == "&lt;script&gt;a\\|b c&lt;/script&gt;"
    assert md_escape("R&D") == "R&D"  # a plain ampersand stays readable
    assert md_escape("&lt;") == "&amp;lt;"  # an entity is shown, not interpreted
    table = md_table(["a", "n"], [["<b>", "1"]], right=[1])
    assert table.splitlines() == ["| a | n |", "|---|---:|", "| &lt;b&gt; | 1 |"]


def _two_raters(a, b, group):
    rows = []
    for i, (x, y, g) in enumerate(zip(a, b, group)):
        rows += [
            {"item_id": f"i{i}", "rater": r, "field": "f", "value": v, "site": g} for r, v in (("r1", x), ("r2", y))
        ]
    return pd.DataFrame(rows)


def test_agreement_groups_and_labels_in_natural_order():
    from goldboard.analysis.agreement import agreement

    # agreement used to order strata and labels as plain text (C-10 before C-2)
    n = 12
    a = ["L-2", "L-10", "L-1"] * (n // 3)
    b = ["L-2", "L-10", "L-10"] * (n // 3)
    res = agreement(_two_raters(a, b, ["C-10", "C-2"] * (n // 2)), "f", by="site")
    assert res["categories"] == ["L-1", "L-2", "L-10"]
    groups = [r["group"] for r in res["statistics"] if r["group"] is not None]
    assert groups.index("C-2") < groups.index("C-10")


def test_agreement_markdown_escapes_html():
    from goldboard.analysis.agreement import agreement
    from goldboard.analysis.agreement_render import render_markdown

    # the agreement renderer used to escape only pipes
    res = agreement(_two_raters(["x", "y"] * 5, ["x", "y"] * 5, ["g"] * 10), "f")
    md = render_markdown(res, title="<img src=x onerror=alert(1)>")
    assert "<img" not in md and "&lt;img src=x onerror=alert(1)&gt;" in md


def test_label_studio_text():
    assert ls_text("pay $case_text\x07") == "pay \uff04case_text\ufffd"
    assert xml_text("a$b\x00") == "a$b\ufffd"


def test_utc_now_format():
    stamp = utc_now()
    assert stamp.endswith("+00:00") and "." not in stamp and len(stamp) == 25


def test_scoring_csv_round_trip_keeps_text():
    """One policy: CSV is a data file, never neutralised (README "Security")."""
    from goldboard.fileio import CSV_LINETERMINATOR

    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator=CSV_LINETERMINATOR).writerow(["@evil", "a\rb", "ok"])
    assert next(csv.reader(io.StringIO(buf.getvalue(), newline=""))) == ["@evil", "a\rb", "ok"]
