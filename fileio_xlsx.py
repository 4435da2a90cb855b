"""Reading a workbook a user gives (.xlsx): the sheet to read, merged and hidden cells,
formulas without a saved value -- each a one-line :class:`~goldboard.errors.GoldboardError`
naming the file, sheet and cell.  :mod:`goldboard.fileio` reads every table format through
these; openpyxl is imported where a workbook is opened (``goldboard --help`` stays fast).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from goldboard.errors import GoldboardError, ParamError
from goldboard.text import lookalike_columns_message

#: spreadsheet formats goldboard does not read (LibreOffice's default, legacy Excel, Numbers)
SPREADSHEETS_NOT_READ = (".ods", ".xls", ".xlsb", ".numbers", ".fods")

#: resource limits of a table a user gives, each checked before the table is parsed in full and
#: named in its error: columns of a table (CSV/TSV header, a sheet's used range), cells (rows x
#: columns), and the bytes a workbook's zip parts inflate to (a zip bomb: small on disk, gigabytes
#: inflated).  A ratings table has a few columns per rater; 500,000 items x 10 columns is 5 million cells.
MAX_TABLE_COLUMNS = 1000
MAX_TABLE_CELLS = 50_000_000
MAX_XLSX_INFLATED_BYTES = 1 << 30


def too_many_columns(where: str, n: int) -> GoldboardError:
    """The error of a table wider than :data:`MAX_TABLE_COLUMNS` (``where``: file and line/row)."""
    return GoldboardError(
        f"{where}: {n:,} columns, more than goldboard reads from a table (at most MAX_TABLE_COLUMNS = "
        f"{MAX_TABLE_COLUMNS:,}); keep only the columns the ratings need"
    )


def too_many_cells(where: str, rows: int, columns: int) -> GoldboardError:
    """The error of a table of more than :data:`MAX_TABLE_CELLS` cells."""
    return GoldboardError(
        f"{where}: about {rows:,} rows x {columns:,} columns = {rows * columns:,} cells, more than goldboard reads "
        f"from a table (at most MAX_TABLE_CELLS = {MAX_TABLE_CELLS:,}); split the table or drop unused columns"
    )


def check_inflated_size(path: Path, zf: Any) -> None:
    """Refuse a workbook whose parts inflate to more than :data:`MAX_XLSX_INFLATED_BYTES` (the sizes
    the zip directory declares; Python's zipfile never inflates a part beyond its declared size)."""
    total = sum(i.file_size for i in zf.infolist())
    if total > MAX_XLSX_INFLATED_BYTES:
        raise GoldboardError(
            f"{path}: its parts inflate to {total:,} bytes, more than goldboard reads from a workbook (at most "
            f"MAX_XLSX_INFLATED_BYTES = {MAX_XLSX_INFLATED_BYTES:,}; a zip bomb?); save the table as CSV"
        )


def check_sheet_size(path: Path, ws: Any) -> None:
    """Refuse a worksheet whose used range (its ``dimension``, which read-only openpyxl pads every
    row to) is wider than :data:`MAX_TABLE_COLUMNS` or holds more than :data:`MAX_TABLE_CELLS`."""
    try:
        rows, cols = int(ws.max_row or 0), int(ws.max_column or 0)
    except (TypeError, ValueError):
        return
    where = f"{path}: sheet {ws.title}"
    if cols > MAX_TABLE_COLUMNS:
        raise too_many_columns(f"{where} (used range up to column {cols:,}: delete the empty columns)", cols)
    if rows * cols > MAX_TABLE_CELLS:
        raise too_many_cells(where, rows, cols)


def load_workbook(path: str | Path, **kwargs: Any):
    """``openpyxl.load_workbook`` for a file a user gives: a workbook that is not an
    .xlsx, or whose XML is damaged, is a one-line :class:`GoldboardError` naming the
    file (and the damaged part) -- also in read-only mode, where openpyxl would only
    meet the damage while iterating rows."""
    import zipfile
    from xml.etree.ElementTree import ParseError, iterparse

    import openpyxl

    path = Path(path)
    if path.suffix.lower() in SPREADSHEETS_NOT_READ:
        raise GoldboardError(f"{path}: {path.suffix} spreadsheets are not read; save it as .xlsx")
    try:
        with zipfile.ZipFile(path) as zf:
            check_inflated_size(path, zf)
            for name in zf.namelist():
                if name.endswith((".xml", ".rels", ".vml")):
                    with zf.open(name) as fh:
                        for _ in iterparse(fh):
                            pass
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as exc:
        raise GoldboardError(f"{path}: cannot open as an Excel workbook (not an .xlsx file: {exc})") from None
    except ParseError as exc:
        raise GoldboardError(
            f"{path}: cannot open as an Excel workbook: damaged, {name} is not well-formed XML ({exc})"
        ) from None
    except (OSError, RuntimeError, NotImplementedError, ValueError) as exc:  # encrypted, odd compression
        raise GoldboardError(f"{path}: cannot open as an Excel workbook ({type(exc).__name__}: {exc})") from None
    try:
        return openpyxl.load_workbook(path, **kwargs)
    except Exception as exc:  # openpyxl raises many types for a corrupt or foreign file
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise GoldboardError(f"{path}: cannot open as an Excel workbook: {msg}") from None


def _sheet_has_data(ws) -> bool:
    for row in ws.iter_rows(values_only=True):
        if any(c is not None and not (isinstance(c, str) and not c.strip()) for c in row):
            return True
    return False


def pick_sheet(wb, path: Path, sheet: str | None, sheet_option: bool = False):
    """The worksheet to read: ``sheet``, else the active sheet if it is visible and the only
    one holding data; else a :class:`ParamError` naming the sheets."""
    if not wb.worksheets:
        raise GoldboardError(f"{path}: the workbook has no sheet")
    if sheet is not None:
        if sheet not in wb.sheetnames:
            raise ParamError(
                "{sheet} {name!r}: {source} has no such sheet (sheets: {names})",
                name=sheet,
                source=path,
                names=", ".join(wb.sheetnames),
            )
        return wb[sheet]
    with_data = [ws for ws in wb.worksheets if _sheet_has_data(ws)]
    active = wb.active
    if not with_data or (with_data == [active] and active.sheet_state == "visible"):
        return active if with_data else wb.worksheets[0]
    if len(wb.worksheets) == 1:
        return wb.worksheets[0]
    shown = ", ".join(
        repr(ws.title) + ("" if ws.sheet_state == "visible" else f" ({ws.sheet_state})") for ws in with_data
    )
    how = "name the sheet to read with {sheet} NAME" if sheet_option else "save the sheet to read as its own workbook"
    raise ParamError(
        "{source}: the workbook has {n} sheet(s) holding data ({shown}; active: {active!r}), so which table is "
        "meant is not clear; " + how,
        source=path,
        n=len(with_data),
        shown=shown,
        active=active.title,
    )


def _merge_refs(path: Path, ws) -> list[tuple[str, int, int]]:
    """The merged ranges of worksheet ``ws`` reaching below the header row: ``(range, first
    column, last column)`` (1-based)."""
    import zipfile

    from openpyxl.utils.cell import range_boundaries

    part = getattr(ws, "_worksheet_path", None)
    if not part:
        return []
    with zipfile.ZipFile(path) as zf:
        try:
            xml = zf.read(part.lstrip("/"))
        except KeyError:
            return []
    out = []
    for ref in re.findall(rb'<(?:\w+:)?mergeCell\s+ref="([A-Z]+[0-9]+:[A-Z]+[0-9]+)"', xml):
        rng = ref.decode("ascii")
        c0, _r0, c1, r1 = range_boundaries(rng)
        if r1 >= 2:
            out.append((rng, c0, c1))
    return out


def merged_cells(path: str | Path, sheet: str | None = None) -> tuple[str, list[tuple[str, list[str]]]]:
    """``(sheet title, [(range, header names of the columns it spans)])``: the merged ranges
    below the header row of the workbook's sheet (picked as :func:`read_records` picks it);
    ``("", [])`` for a file that is not a workbook."""
    path = Path(path)
    if path.suffix.lower() not in (".xlsx", ".xlsm"):
        return "", []
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        ws = pick_sheet(wb, path, sheet, True)
        refs = _merge_refs(path, ws)
        header = next(ws.iter_rows(values_only=True, max_row=1), ()) if refs else ()
        title = ws.title
    finally:
        wb.close()
    names = ["" if h is None else str(h).strip() for h in header]
    return title, [(rng, [names[c - 1] for c in range(c0, c1 + 1) if c - 1 < len(names)]) for rng, c0, c1 in refs]


_HIDDEN = re.compile(rb'\bhidden="(?:1|true)"')


def hidden_cells(path: str | Path, sheet: str | None = None) -> tuple[str, list[int], list[tuple[str, str]]]:
    """``(sheet title, hidden rows, hidden columns as (letter, header name))`` of the workbook's
    sheet (picked as :func:`read_records` picks it): rows and columns hidden by hand, by a filter
    or a collapsed outline, which :func:`read_records` reads like any other (the person who hid
    them may not expect that); ``("", [], [])`` for a file that is not a workbook."""
    import zipfile

    from openpyxl.utils import get_column_letter

    path = Path(path)
    if path.suffix.lower() not in (".xlsx", ".xlsm"):
        return "", [], []
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        ws = pick_sheet(wb, path, sheet, True)
        title, part = ws.title, getattr(ws, "_worksheet_path", None)
        header = next(ws.iter_rows(values_only=True, max_row=1), ())
    finally:
        wb.close()
    if not part:
        return title, [], []
    with zipfile.ZipFile(path) as zf:
        try:
            xml = zf.read(part.lstrip("/"))
        except KeyError:
            return title, [], []
    rows = []
    for attrs in re.findall(rb"<(?:\w+:)?row\b([^>]*)>", xml):
        r = re.search(rb'\br="([0-9]+)"', attrs)
        if r and _HIDDEN.search(attrs):
            rows.append(int(r.group(1)))
    names = ["" if h is None else str(h).strip() for h in header]
    cols = []
    for attrs in re.findall(rb"<(?:\w+:)?col\b([^>]*)>", xml):
        lo, hi = re.search(rb'\bmin="([0-9]+)"', attrs), re.search(rb'\bmax="([0-9]+)"', attrs)
        if lo and hi and _HIDDEN.search(attrs):
            for c in range(int(lo.group(1)), min(int(hi.group(1)), len(names)) + 1):
                cols.append((get_column_letter(c), names[c - 1]))
    return title, rows, cols


def merged_error(path: str | Path, title: str, rng: str) -> GoldboardError:
    return GoldboardError(
        f"{path}: sheet {title}, cells {rng} are merged: only the first cell of a merge holds its value, "
        f"the others would read as blank; unmerge them and fill in each cell"
    )


#: what a data row equal to the header row means (two tables pasted into one file)
REPEATED_HEADER = "the header row repeated here (two files pasted together?): remove this line"


def is_header_row(cells: Any, names: list[str]) -> bool:
    """Whether a data row's cells are the header's ``names`` again (outer spaces and trailing
    empty cells aside): a second table pasted under the first, never a record."""
    texts = ["" if c is None else str(c).strip() for c in cells]
    while texts and not texts[-1]:
        texts.pop()
    want = list(names)
    while want and not want[-1]:
        want.pop()
    return bool(want) and texts == want


def read_xlsx_records(path: Path, sheet: str | None = None, sheet_option: bool = False) -> list[tuple[int, dict]]:
    wb = load_workbook(path, read_only=True, data_only=True)
    try:
        ws = pick_sheet(wb, path, sheet, sheet_option)
        refs = [] if sheet_option else _merge_refs(path, ws)  # sheet_option: the caller checks (merged_cells)
        if refs:
            raise merged_error(path, ws.title, refs[0][0])
        check_sheet_size(path, ws)
        rows = ws.iter_rows(values_only=True)
        try:
            header = next(rows)
        except StopIteration:
            raise GoldboardError(f"{path}: sheet {ws.title} is empty") from None
        if len(header) > MAX_TABLE_COLUMNS:  # a sheet without a used range: its first row tells
            raise too_many_columns(f"{path}: sheet {ws.title}: row 1", len(header))
        names = [str(h).strip() if h is not None else "" for h in header]
        if lookalike_columns_message(f"{path}: sheet {ws.title}: row 1", names):
            raise GoldboardError(lookalike_columns_message(f"{path}: sheet {ws.title}: row 1", names))
        out = []
        with_empty: dict[int, tuple] = {}  # row -> its values, for rows with an empty cell
        if any(h is None for h in header):
            with_empty[1] = tuple(header)
        r = 1
        try:
            for r, row in enumerate(rows, start=2):
                if row is None or all(c is None or (isinstance(c, str) and not c.strip()) for c in row):
                    continue
                if any(c is None for c in row):
                    with_empty[r] = row
                if is_header_row(row, names):
                    raise GoldboardError(f"{path}: sheet {ws.title}, row {r}: {REPEATED_HEADER}")
                out.append((r, {n: v for n, v in zip(names, row) if n}))
        except GoldboardError:
            raise
        except Exception as exc:  # a cell openpyxl cannot interpret (bad number, date, style)
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise GoldboardError(f"{path}: sheet {ws.title}, row {r + 1}: cannot read the row: {msg}") from None
    finally:
        wb.close()
    if not out:
        raise GoldboardError(f"{path}: no data rows under the header")
    if with_empty and _has_formulas(path):
        _check_formula_values(path, with_empty, ws.title)
    return out


def _has_formulas(path: Path) -> bool:
    """Whether any worksheet of the workbook holds a formula (``<f>`` element): a quick byte
    search, so a workbook without formulas is read once."""
    import zipfile

    pattern = re.compile(rb"<(?:\w+:)?f[\s>/]")
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if name.startswith("xl/worksheets/") and name.endswith(".xml"):
                with zf.open(name) as fh:
                    if pattern.search(fh.read()):
                        return True
    return False


def _check_formula_values(path: Path, with_empty: dict[int, tuple], title: str | None = None) -> None:
    """A formula cell of the first sheet without a saved value (a workbook written by a
    program that does not calculate, e.g. a script with openpyxl) reads as empty: a
    one-line error naming the cell, never a silent blank.  ``with_empty``: row -> saved
    values of the rows read that have an empty cell (only those can hide a formula)."""
    import openpyxl
    from openpyxl.utils import get_column_letter

    wb = openpyxl.load_workbook(path, read_only=True, data_only=False)
    try:
        ws = wb[title] if title is not None else wb.worksheets[0]
        last = max(with_empty)
        for r, row_f in enumerate(ws.iter_rows(values_only=True, max_row=last), start=1):
            row_v = with_empty.get(r)
            if row_v is None:
                continue
            for c, (v, f) in enumerate(zip(row_v, row_f), start=1):
                if v is None and isinstance(f, str) and f.startswith("="):
                    raise GoldboardError(
                        f"{path}: sheet {ws.title}, cell {get_column_letter(c)}{r}: formula {f[:60]} has no "
                        f"saved value; open the file in Excel or LibreOffice and save it (or paste values)"
                    )
    finally:
        wb.close()
