"""Hostile tables are refused by a named resource limit before they are parsed in full, never by a
crash or an hour of work: a CSV of a million columns, a workbook whose used range is 16,384 columns
wide, a zip bomb (a workbook small on disk whose parts inflate to more than goldboard reads), a table of
more cells than goldboard reads.  Each file is generated small on disk; a limit the test needs lower is
lowered for the test (the error names the limit, so the user knows which one)."""

from __future__ import annotations

import time
import zipfile

import openpyxl
import pytest
from builders import one_error
from conftest import run_cli as run

from goldboard import fileio_xlsx


def _long_table(path, extra_columns: int, rows: int = 40):
    head = ["item_id", "rater", "value", *(f"x{i}" for i in range(extra_columns))]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(",".join(head) + "\n")
        for i in range(rows):
            fh.write(",".join([f"I{i // 2}", "ab"[i % 2], str(i % 3)] + [""] * extra_columns) + "\n")
    return path


def test_a_csv_of_a_million_columns_is_refused_by_its_header(tmp_path):
    f = tmp_path / "wide.csv"
    f.write_text("item_id,rater,value" + ",c" * 1_000_000 + "\nI1,a,1" + "," * 1_000_000 + "\n")
    t = time.perf_counter()
    line = one_error(run("agree", f, code=None))
    assert line == (
        f"Error: {f}:1: 1,000,003 columns, more than goldboard reads from a table (at most MAX_TABLE_COLUMNS = "
        "1,000); keep only the columns the ratings need"
    )
    assert time.perf_counter() - t < 30  # refused from the header (it ran for hours)


def test_a_table_one_column_over_the_limit_is_refused_and_one_at_it_is_read(tmp_path):
    over = _long_table(tmp_path / "over.csv", fileio_xlsx.MAX_TABLE_COLUMNS - 2)
    assert "1,001 columns" in one_error(run("agree", over, code=None))
    at = _long_table(tmp_path / "at.csv", fileio_xlsx.MAX_TABLE_COLUMNS - 3)
    res = run("agree", at, "--format", "json")
    assert '"n_items": 20' in res.output.replace(" ", "").replace('"n_items":20', '"n_items": 20')


def test_pull_from_a_table_over_the_column_limit_writes_nothing(tmp_path):
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "a,b")
    t = tmp_path / "t.csv"
    t.write_text("case_id,a,b," + ",".join(f"x{i}" for i in range(2000)) + "\nC-1,Supported,Unsafe" + "," * 2000 + "\n")
    line = one_error(
        run("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-cols", "a=a,b=b", code=None)
    )
    assert f"{t}:1: 2,003 columns" in line and "MAX_TABLE_COLUMNS" in line
    assert not (s / "rounds").exists()


def test_a_table_of_more_cells_than_the_limit_is_refused_before_its_rows_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(fileio_xlsx, "MAX_TABLE_CELLS", 100)
    f = _long_table(tmp_path / "t.csv", 7)  # 41 lines x 10 columns
    line = one_error(run("agree", f, code=None))
    assert "41 rows x 10 columns = 410 cells" in line and "MAX_TABLE_CELLS = 100" in line


def _workbook(path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["item_id", "rater", "value"])
    for i in range(40):
        ws.append([f"I{i // 2}", "ab"[i % 2], str(i % 3)])
    wb.save(path)
    return path


def test_a_zip_bomb_workbook_is_refused_before_it_is_inflated(tmp_path, monkeypatch):
    monkeypatch.setattr(fileio_xlsx, "MAX_XLSX_INFLATED_BYTES", 8 << 20)
    f = _workbook(tmp_path / "bomb.xlsx")
    with zipfile.ZipFile(f, "a", compression=zipfile.ZIP_DEFLATED) as zf:  # 16 MiB of XML, ~16 KiB on disk
        zf.writestr("xl/bomb.xml", b"<a>" + b" " * (16 << 20) + b"</a>")
    assert f.stat().st_size < 100_000
    line = one_error(run("agree", f, code=None))
    assert f"{f}: its parts inflate to 16," in line and "MAX_XLSX_INFLATED_BYTES = 8,388,608" in line
    assert "a zip bomb?" in line


def test_the_default_inflate_limit_reads_an_ordinary_workbook(tmp_path):
    assert fileio_xlsx.MAX_XLSX_INFLATED_BYTES == 1 << 30
    run("agree", _workbook(tmp_path / "ok.xlsx"))


@pytest.mark.parametrize("ref", ["A1:XFD41", "A1:BZZ41"])
def test_a_sheet_whose_used_range_is_thousands_of_columns_wide_is_refused(tmp_path, ref):
    """Read-only openpyxl pads every row to the used range (16,384 cells a row for A1:XFD41)."""
    f = _workbook(tmp_path / "wide.xlsx")
    src = tmp_path / "src.xlsx"
    f.rename(src)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data.replace(b'<dimension ref="A1:C41"/>', f'<dimension ref="{ref}"/>'.encode())
                assert ref.encode() in data
            zout.writestr(item, data)
    cols = openpyxl.utils.column_index_from_string(ref.split(":")[1].rstrip("0123456789"))
    line = one_error(run("agree", f, code=None))
    assert f"{f}: sheet Sheet (used range up to column {cols:,}: delete the empty columns): {cols:,} columns" in line
    assert "MAX_TABLE_COLUMNS = 1,000" in line
