"""A hostile wide JSON / JSONL file is refused by the named table limits, in one line, at once.

A CSV wider than ``MAX_TABLE_COLUMNS`` or of more than ``MAX_TABLE_CELLS`` cells was refused, but a
JSON record's keys are a table's columns too: one JSONL record of 300,000 keys (4.7 MB) kept
``cases validate`` and ``agree TABLE`` busy for minutes (killed at 120 s).  Now JSON and JSONL
records meet the same limits: too many keys in one record, too many distinct keys over the records,
too many cells (records x keys)."""

from __future__ import annotations

import json

import pytest
from conftest import invoke_cli

from goldboard import fileio_xlsx

WIDE = fileio_xlsx.MAX_TABLE_COLUMNS + 1


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _one_line(res):
    errors = [ln for ln in res.output.splitlines() if "MAX_TABLE_" in ln]
    assert res.exit_code == 1 and len(errors) == 1, res.output
    return errors[0]


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_case_record_with_too_many_keys_is_refused_by_name(tmp_path, suffix):
    rec = {"case_id": "C1", **{f"k{i}": "x" for i in range(WIDE)}}
    f = tmp_path / f"cases{suffix}"
    if suffix == ".json":
        f.write_text(json.dumps([rec]))
    else:
        _jsonl(f, [rec])
    line = _one_line(invoke_cli("cases", "validate", f, "--schema", "mtb"))
    assert f"{WIDE + 1:,} columns" in line and "MAX_TABLE_COLUMNS = 1,000" in line and str(f) in line, line


def test_records_whose_keys_add_up_past_the_limit_are_refused_naming_the_line(tmp_path):
    f = _jsonl(tmp_path / "cases.jsonl", [{"case_id": f"C{i}", f"k{i}": "x"} for i in range(WIDE)])
    line = _one_line(invoke_cli("cases", "validate", f, "--schema", "mtb"))
    assert f"{f}:{fileio_xlsx.MAX_TABLE_COLUMNS}: " in line and "MAX_TABLE_COLUMNS" in line, line


def test_a_wide_ratings_jsonl_in_agree_is_one_error_line(tmp_path):
    rec = {"item_id": "C1", "rater": "a", "field": "f", "value": "x", **{f"k{i}": "x" for i in range(WIDE)}}
    f = _jsonl(tmp_path / "ratings.jsonl", [rec, {"item_id": "C1", "rater": "b", "field": "f", "value": "x"}])
    res = invoke_cli("agree", f)
    line = _one_line(res)
    assert line.startswith(f"Error: {f}:1: ") and "MAX_TABLE_COLUMNS" in line, line


def test_too_many_cells_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(fileio_xlsx, "MAX_TABLE_CELLS", 100)
    rows = [{"item_id": f"C{i}", "rater": r, "field": "f", "value": "x"} for i in range(20) for r in "ab"]
    f = _jsonl(tmp_path / "ratings.jsonl", rows)
    line = _one_line(invoke_cli("agree", f))
    assert "40 rows x 4 columns = 160 cells" in line and "MAX_TABLE_CELLS = 100" in line, line
