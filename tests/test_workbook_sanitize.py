"""Excel-safe text: formula neutralisation (OWASP CSV injection), the 32,767-unit cell limit."""

from __future__ import annotations

import openpyxl
import pytest

from goldboard.exports.sanitize import set_text_cell
from goldboard.text import (
    EXCEL_CELL_LIMIT,
    cut_to_units,
    excel_safe_text,
    neutralize_formula,
    unneutralize_formula,
    utf16_len,
)


@pytest.mark.parametrize(
    "text", ["=1+1", "+1", "-2", "@SUM(A1)", "\t=1", "\r=1", "  =cmd|' /C calc'!A0", "\uff1d1+1", "'=already quoted"]
)
def test_formula_starts_are_prefixed_and_reversible(text):
    safe = neutralize_formula(text)
    assert safe == "'" + text
    assert unneutralize_formula(safe) == text


@pytest.mark.parametrize("text", ["Supported", "Partially Supported", "4", "a=b", "", "ECOG 2 - caveat"])
def test_plain_text_unchanged(text):
    assert neutralize_formula(text) == text
    assert unneutralize_formula(text) == text


def test_cut_at_cell_limit_counts_utf16_units_and_marks_the_cut():
    text = "x" * 40_000
    out = excel_safe_text(text)
    assert utf16_len(out) == EXCEL_CELL_LIMIT
    assert out.endswith(f"[cut at Excel's cell limit: {40_000 - out.index(' …'):,} more characters not shown]")
    emoji = "\U0001f600" * 20_000  # 40,000 UTF-16 units
    out = excel_safe_text(emoji)
    assert utf16_len(out) <= EXCEL_CELL_LIMIT and "\ud83d" not in out
    assert excel_safe_text("short") == "short"


def test_cut_never_splits_a_character_from_its_combining_mark():
    text = "e\u0301" * 10
    assert cut_to_units(text, 5) == "e\u0301e\u0301"
    assert cut_to_units("ab\r\ncd", 3) == "ab"


def test_control_characters_made_visible_not_dropped():
    assert excel_safe_text("a\x00b\x1fc\td\ne") == "a\\x00b\\x1fc\td\ne"
    assert excel_safe_text("-1\x07") == "'-1\\x07"


def test_set_text_cell_is_inert_after_save(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    set_text_cell(ws["A1"], '=HYPERLINK("http://evil","x")')
    set_text_cell(ws["A2"], None)
    set_text_cell(ws["A3"], 4.0)
    wb.save(tmp_path / "t.xlsx")
    ws = openpyxl.load_workbook(tmp_path / "t.xlsx").active
    assert ws["A1"].data_type == "s" and ws["A1"].value == '\'=HYPERLINK("http://evil","x")'
    assert ws["A2"].value is None and ws["A3"].value == "4"
