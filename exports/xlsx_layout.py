"""A generic xlsx layout kit (openpyxl): the look every goldboard workbook shares.

Styles (navy header, amber fill-in block, Calibri named on every styled font), one
registered style per look (:class:`Styles`), data-validation ranges (:func:`runs`),
column widths fitted to content (:func:`fit_width`), row heights from a word-wrap
estimate (:func:`wrapped_lines`, Excel's 15 pt a line; a text taller than Excel's largest
row gets :func:`too_long_note`), the header row (:func:`header_row`), print setup
(:func:`page_setup`: landscape, one page wide, header row repeated, sheet name and page in
the footer) and sheet protection (:func:`protect`).  It knows nothing of a study or a
review sheet: :mod:`goldboard.exports.workbook` lays out the review-meeting workbook with it.
Untrusted text is written with :func:`goldboard.exports.sanitize.set_text_cell`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from openpyxl.comments import Comment
from openpyxl.styles import Alignment, Border, Font, PatternFill, Side
from openpyxl.utils import get_column_letter

from goldboard.exports.sanitize import set_text_cell

#: the fill-in cells (Decision, Reason, Adjudicator): white, framed in INPUT_BORDER, under an
#: amber header -- they stand out on every boundary tint and on uncoloured rows
INPUT_FILL = "FFFFFF"
INPUT_BORDER = "BF8F00"
INPUT_HEADER_FILL = "FFC000"
HEADER_FILL = "1F3864"
SUBHEADER_FILL = "D9E1F2"
FONT_NAME = "Calibri"  # the workbook default; named on every styled cell (an unnamed bold font prints as serif)
FONT_SIZE = 11
#: points per line of 11-pt Calibri (Excel's default row height)
LINE_HEIGHT = 15.0
#: Excel's largest row height in points; a text needing more is cut off on screen and on paper
#: (such cells get a note saying so)
MAX_ROW_HEIGHT = 409.0
#: characters of 11-pt Calibri prose per unit of column width (a unit is the width of "0");
#: on the low side, so an estimated row is never too short to show its text
CHARS_PER_UNIT = 1.05

WRAP_TOP = Alignment(wrap_text=True, vertical="top")
TOP = Alignment(vertical="top")
_THIN = Side(style="thin", color="BFBFBF")
BORDER = Border(left=_THIN, right=_THIN, top=_THIN, bottom=_THIN)
_IN_THIN = Side(style="thin", color=INPUT_BORDER)
_IN_THICK = Side(style="medium", color=INPUT_BORDER)


def font(bold: bool = False, color: str | None = None, size: float = FONT_SIZE, underline: str | None = None) -> Font:
    return Font(name=FONT_NAME, size=size, bold=bold, color=color, underline=underline)


def input_border(first: bool, last: bool) -> Border:
    """Thin amber grid inside the fill-in block, a medium amber edge on its left and right."""
    return Border(
        left=_IN_THICK if first else _IN_THIN, right=_IN_THICK if last else _IN_THIN, top=_IN_THIN, bottom=_IN_THIN
    )


class Styles:
    """Reuse one registered style per look: setting fonts/fills cell by cell makes openpyxl
    hash every style object again (the dominant cost on large sheets)."""

    def __init__(self, ws) -> None:
        from openpyxl.cell.cell import Cell

        self._scratch = lambda: Cell(ws, row=1, column=1)  # detached: never written
        self._cache: dict[Any, Any] = {}

    def apply(self, cell, key: Any, **attrs: Any) -> None:
        from copy import copy

        arr = self._cache.get(key)
        if arr is None:
            tmp = self._scratch()
            for name, value in attrs.items():
                setattr(tmp, name, value)
            arr = self._cache[key] = tmp._style
        cell._style = copy(arr)


def runs(column: str, rows: list[int]) -> str:
    """``F2:F5 F9`` for rows 2,3,4,5,9 (a data validation's range, built once)."""
    out = []
    rows = sorted(rows)
    start = prev = None
    for r in rows + [None]:
        if start is not None and (r is None or r != prev + 1):
            out.append(f"{column}{start}" if start == prev else f"{column}{start}:{column}{prev}")
            start = None
        if r is not None and start is None:
            start = r
        prev = r
    return " ".join(out)


def wrapped_lines(text: str, width: float, *, bold: bool = False, limit: int | None = None) -> int:
    """Lines ``text`` takes in a wrapped cell ``width`` units wide (greedy word wrap at
    :data:`CHARS_PER_UNIT` characters a unit, bold 10% wider; a word longer than a line is
    broken, as Excel and LibreOffice do).  Counting stops at ``limit`` lines.

    >>> wrapped_lines("one two three", 20), wrapped_lines("one two three", 6), wrapped_lines("a\\nb", 20)
    (1, 3, 2)
    """
    cap = max(1, int(width * CHARS_PER_UNIT * (0.9 if bold else 1.0)) - 1)
    total = 0
    for para in text.split("\n"):
        if len(para) <= cap:
            total += 1
        else:
            lines, used = 1, -1  # used: characters on the current line (-1: empty line, no space needed)
            for word in para.split(" "):
                n = len(word)
                if used >= 0 and used + 1 + n <= cap:
                    used += 1 + n
                    continue
                if used >= 0:
                    lines += 1
                full, rest = divmod(n, cap)
                if rest == 0 and full:
                    full, rest = full - 1, cap
                lines += full
                used = rest
                if limit is not None and total + lines >= limit:
                    break
            total += lines
        if limit is not None and total >= limit:
            return limit
    return total


def lines_height(lines: int) -> float | None:
    """Row height for ``lines`` wrapped lines (``None``: one line, the default height)."""
    if lines <= 1:
        return None
    return min(LINE_HEIGHT * lines + 3.0, MAX_ROW_HEIGHT)


#: lines that fit a row of the largest height
MAX_LINES = int((MAX_ROW_HEIGHT - 3.0) // LINE_HEIGHT)


def fit_width(texts: Iterable[str], lo: float, hi: float, lines: int = 1) -> float:
    """Column width in ``[lo, hi]`` for ``texts``: the longest line plus one (``lines == 1``,
    ids and codes), or the 90th-percentile text in about ``lines`` lines (prose)."""
    if lines <= 1:
        longest = max((len(part) for t in texts if t for part in t.split("\n")), default=0)
        want = longest + 1.0
    else:
        lengths = sorted(len(t) for t in texts if t)
        if not lengths:
            return float(lo)
        p90 = lengths[min(len(lengths) - 1, int(0.9 * len(lengths)))]
        want = math.ceil(p90 / (lines * CHARS_PER_UNIT)) + 1.0
    return float(min(max(want, lo), hi))


def header_row(ws, headers: list[str], widths: list[float], inputs: Iterable[int] = ()) -> None:
    """Bold white-on-navy header row (amber, black text, over the fill-in columns ``inputs``),
    tall enough for every wrapped header."""
    inputs = set(inputs)
    lines = 1
    for j, (h, w) in enumerate(zip(headers, widths), start=1):
        c = ws.cell(row=1, column=j)
        set_text_cell(c, h)
        if j in inputs:
            c.font = font(bold=True)
            c.fill = PatternFill("solid", fgColor=INPUT_HEADER_FILL)
            c.border = input_border(j == min(inputs), j == max(inputs))
        else:
            c.font = font(bold=True, color="FFFFFF")
            c.fill = PatternFill("solid", fgColor=HEADER_FILL)
            c.border = BORDER
        c.alignment = Alignment(wrap_text=True, vertical="center")
        ws.column_dimensions[get_column_letter(j)].width = w
        lines = max(lines, wrapped_lines(h, w, bold=True))
    ws.row_dimensions[1].height = max(30.0, LINE_HEIGHT * lines + 6.0)


def page_setup(
    ws, freeze: str | None, *, last_col: int | None = None, autofilter: bool = True, title_rows: bool = True
) -> None:
    """Landscape, one page wide, narrow margins, header row on every page, sheet name and page
    number in the footer; the print area stops at column ``last_col`` (screen-only columns after it)."""
    from openpyxl.worksheet.page import PageMargins

    if freeze:
        ws.freeze_panes = freeze
    if autofilter and ws.max_row >= 1 and ws.max_column >= 1:
        ws.auto_filter.ref = f"A1:{get_column_letter(ws.max_column)}{max(ws.max_row, 1)}"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.page_margins = PageMargins(left=0.25, right=0.25, top=0.5, bottom=0.5, header=0.2, footer=0.2)
    if title_rows:
        ws.print_title_rows = "1:1"
    if last_col is not None and last_col < ws.max_column:
        ws.print_area = f"A1:{get_column_letter(last_col)}{max(ws.max_row, 1)}"
    ws.oddFooter.center.text = "&A — page &P of &N"
    ws.oddHeader.right.text = "goldboard review"


def row_height(texts: list[tuple[str, float]]) -> float | None:
    """Height for a row of wrapped cells ``(text, column width)``: lines of the fullest cell."""
    return lines_height(max((wrapped_lines(t, w, limit=MAX_LINES + 1) for t, w in texts if t), default=1))


def too_long_note(text: str) -> Comment:
    c = Comment(
        f"This text ({len(text):,} characters) is longer than the row can show, on screen and "
        "on paper. Select the cell to read all of it in the formula bar.",
        "goldboard",
    )
    c.width, c.height = 260, 80
    return c


def protect(ws) -> None:
    """Read-only without a password; filtering and column widths stay usable."""
    ws.protection.sheet = True
    ws.protection.autoFilter = False
    ws.protection.formatColumns = False
    ws.protection.formatRows = False
    ws.protection.sort = False


def number_cell(x: Any) -> float | str:
    """A statistic as a number cell ("" when undefined)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(v) else v
