"""Read records from JSONL, JSON, CSV and XLSX, keeping line numbers and going on past bad lines.

Unlike :func:`goldboard.fileio.read_records` (used here for CSV/XLSX), a
malformed JSONL line does not stop the reading: it becomes a
:class:`~goldboard.cases.problems.Problem` and the other lines are still read,
so validation can report every problem at once.  JSON files report the real
line on which each record starts, and a JSON object of named lists
(``{"model-a": [...], "model-b": [...]}``) yields each record with its list
name as ``group`` (a model name for prediction files).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldboard.cases.problems import Problem
from goldboard.errors import GoldboardError
from goldboard.fileio import (
    check_records_size,
    key_twice,
    lone_surrogate,
    not_utf8,
    object_keeping_twice,
    parse_jsonl,
    read_records,
)

SUPPORTED_SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".xlsx", ".xlsm")


@dataclass
class Record:
    line: int
    data: dict[str, Any]
    group: str | None = None  # name of the JSON list the record came from, if any


def read_file(path: str | Path, label: str | None = None) -> tuple[list[Record], list[Problem]]:
    """Records of a case/output file and the problems met while reading it.

    ``label`` is how the file is named in problems (default: the path as given).
    """
    path = Path(path)
    label = label or str(path)
    if not path.exists():
        return [], [Problem(label, None, "", "file not found")]
    if path.is_dir():
        return [], [Problem(label, None, "", "is a folder, not a file")]
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        return [], [
            Problem(label, None, "", f"unsupported file type {suffix or '(none)'} (use .jsonl, .json, .csv or .xlsx)")
        ]
    if suffix in (".jsonl", ".ndjson", ".json"):
        data = path.read_bytes()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            line, msg = not_utf8(path, data) or (None, "not UTF-8 text")
            return [], [Problem(label, line, "", msg)]
        if not text.strip():
            return [], [Problem(label, None, "", "file is empty")]
        records, problems = _read_json(text, label) if suffix == ".json" else _read_jsonl(text, label)
        try:  # a hostile wide file: refused by the table limits before any column is looked at
            check_records_size(path, [(r.line, r.data) for r in records])
        except GoldboardError as exc:
            return [], [_problem_from_error(str(exc), str(path), label)]
        return records, problems
    try:
        pairs = read_records(path)
    except GoldboardError as exc:
        return [], [_problem_from_error(str(exc), str(path), label)]
    return [Record(line, _clean_row(rec)) for line, rec in pairs], []


def _problem_from_error(msg: str, path: str, label: str) -> Problem:
    if msg.startswith(path):
        rest = msg[len(path) :]
        m = re.match(r"^:(\d+): (.*)$", rest, re.S)
        if m:
            return Problem(label, int(m.group(1)), "", m.group(2))
        return Problem(label, None, "", rest.lstrip(": "))
    return Problem(label, None, "", msg)


def _clean_row(rec: dict[str, Any]) -> dict[str, Any]:
    """CSV/XLSX rows: strip header names; an empty cell is a missing value."""
    out = {}
    for k, v in rec.items():
        if k is None:
            continue
        key = str(k).strip()
        if not key:
            continue
        if isinstance(v, str) and not v.strip():
            v = None
        out[key] = v
    return out


def _read_jsonl(text: str, label: str) -> tuple[list[Record], list[Problem]]:
    records: list[Record] = []
    problems: list[Problem] = []
    for i, rec, exc in parse_jsonl(text):
        if exc is not None:
            problems.append(Problem(label, i, "", f"invalid JSON: {exc.msg} (column {exc.colno})"))
            continue
        if not isinstance(rec, dict):
            problems.append(Problem(label, i, "", "each line must be a JSON object"))
            continue
        records.append(Record(i, rec))
    if not records and not problems:
        problems.append(Problem(label, None, "", "file is empty"))
    return records, problems


class _Lines:
    """Character offset -> 1-based line number."""

    def __init__(self, text: str):
        self._nl = [m.start() for m in re.finditer("\n", text)]

    def __call__(self, offset: int) -> int:
        return bisect.bisect_left(self._nl, offset) + 1


_WS = re.compile(r"[ \t\r\n]*")


def _read_json(text: str, label: str) -> tuple[list[Record], list[Problem]]:
    try:
        data = json.loads(text, object_pairs_hook=object_keeping_twice)
    except json.JSONDecodeError as exc:
        return [], [Problem(label, exc.lineno, "", f"invalid JSON: {exc.msg} (column {exc.colno})")]
    except RecursionError:
        return [], [Problem(label, None, "", "JSON nested too deeply to read")]
    bad = lone_surrogate(text, data)
    if bad:  # no file can hold it as UTF-8: every later write would fail (exit 3)
        return [], [Problem(label, None, "", f"invalid JSON: {bad}")]
    lines = _Lines(text)
    dec = json.JSONDecoder()
    start = _WS.match(text, 0).end()

    def array_offsets(pos: int) -> list[int]:
        """Start offsets of the elements of the JSON array at ``pos`` (already known to parse)."""
        offsets = []
        pos = _WS.match(text, pos + 1).end()
        if text[pos] == "]":
            return offsets
        while True:
            offsets.append(pos)
            _, pos = dec.raw_decode(text, pos)
            pos = _WS.match(text, pos).end()
            if text[pos] == ",":
                pos = _WS.match(text, pos + 1).end()
                continue
            return offsets  # "]"

    def object_members(pos: int) -> list[tuple[str, int]]:
        members = []
        pos = _WS.match(text, pos + 1).end()
        if text[pos] == "}":
            return members
        while True:
            key, pos = dec.raw_decode(text, pos)
            pos = _WS.match(text, pos).end() + 1  # ':'
            pos = _WS.match(text, pos).end()
            members.append((key, pos))
            _, pos = dec.raw_decode(text, pos)
            pos = _WS.match(text, pos).end()
            if text[pos] == ",":
                pos = _WS.match(text, pos + 1).end()
                continue
            return members

    records: list[Record] = []
    problems: list[Problem] = []

    def take_array(items: list, pos: int, group: str | None) -> None:
        for item, off in zip(items, array_offsets(pos)):
            twice = key_twice(item)
            if twice is not None:  # json.loads alone would silently keep the last value
                problems.append(
                    Problem(label, lines(off), twice, "key appears twice in one object (which value is meant?)")
                )
            elif isinstance(item, dict):
                records.append(Record(lines(off), dict(item), group))
            else:
                problems.append(Problem(label, lines(off), "", "expected a JSON object"))

    if isinstance(data, list):
        take_array(data, start, None)
    elif isinstance(data, dict) and getattr(data, "twice", ()):
        problems.append(Problem(label, lines(start), data.twice[0], "key appears twice in one object"))
    elif isinstance(data, dict):
        members = dict(object_members(start))  # last duplicate key wins, as in json.loads
        lists = [k for k, v in data.items() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        if len(lists) == 1:
            take_array(data[lists[0]], members[lists[0]], None)
        elif len(lists) > 1:
            for k in lists:
                take_array(data[k], members[k], str(k))
        elif key_twice(data) is not None:
            problems.append(Problem(label, lines(start), key_twice(data) or "", "key appears twice in one object"))
        else:
            records.append(Record(lines(start), dict(data)))
    else:
        problems.append(Problem(label, lines(start), "", "expected a JSON array of objects"))
    if not records and not problems:
        problems.append(Problem(label, None, "", "no records"))
    return records, problems
