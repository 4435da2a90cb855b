"""Small file helpers shared by every stage: atomic writes and table reading.

Nothing is ever half-written: every writer goes through :func:`atomic_write`,
which writes a temporary file in the target folder and renames it into place.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pandas as pd

from goldboard.errors import GoldboardError


@contextlib.contextmanager
def atomic_write(
    path: str | Path,
    mode: str = "w",
    encoding: str | None = "utf-8",
    newline: str | None = None,
    perms: int | None = None,
) -> Iterator[IO[Any]]:
    """Open a temp file beside ``path``; on success rename it onto ``path``.

    On any exception the temp file is removed and ``path`` is untouched.
    ``perms`` (e.g. ``0o600``) is applied before anything is written.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes 0600 files; give ordinary files the usual umask-based mode
        os.chmod(tmp, perms if perms is not None else (0o666 & ~_umask()))
        if "b" in mode:
            fh = os.fdopen(fd, mode)
        else:
            fh = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | Path, text: str, perms: int | None = None) -> None:
    with atomic_write(path, perms=perms) as fh:
        fh.write(text)


def write_csv_atomic(df: pd.DataFrame, path: str | Path) -> None:
    """Write a DataFrame as UTF-8 CSV (no index), atomically."""
    with atomic_write(path, newline="") as fh:
        df.to_csv(fh, index=False)


def write_jsonl_atomic(records: list[dict], path: str | Path) -> None:
    with atomic_write(path) as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")


def append_jsonl(path: str | Path, records: list[dict]) -> None:
    """Append records to a JSONL log (append-only files: decisions)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_records(path: str | Path) -> list[tuple[int, dict]]:
    """Read JSONL, a JSON array (or ``{"cases": [...]}``-style object), CSV or XLSX.

    Returns ``(line, record)`` pairs, where ``line`` is the 1-based line of a
    JSONL record, the 1-based spreadsheet row of a CSV/XLSX record (header = 1),
    or the 1-based position in a JSON array.  Raises :class:`GoldboardError`
    naming the file and line on malformed input.
    """
    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    suffix = path.suffix.lower()
    if suffix == ".jsonl" or suffix == ".ndjson":
        return _read_jsonl(path)
    if suffix == ".json":
        return _read_json(path)
    if suffix in (".csv", ".tsv"):
        return _read_csv(path, "\t" if suffix == ".tsv" else ",")
    if suffix in (".xlsx", ".xlsm"):
        return _read_xlsx(path)
    raise GoldboardError(f"{path}: unsupported file type {suffix or '(none)'} (use .jsonl, .json, .csv or .xlsx)")


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GoldboardError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def parse_jsonl(text: str) -> Iterator[tuple[int, Any, json.JSONDecodeError | None]]:
    """The one JSONL parser: ``(line, record, None)`` for each non-blank line, or
    ``(line, None, error)`` for a line that is not JSON (callers that collect every
    problem use this; the rest use :func:`iter_jsonl`)."""
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield i, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield i, None, exc


def iter_jsonl(path: str | Path, what: str = "") -> Iterator[tuple[int, Any]]:
    """``(line, record)`` for each non-blank line of a JSONL file; a non-UTF-8 file or
    malformed JSON is a one-line :class:`GoldboardError` naming file, line and
    (``what``) the kind of file."""
    path = Path(path)
    for i, rec, exc in parse_jsonl(_read_text(path)):
        if exc is not None:
            raise GoldboardError(f"{path}:{i}: invalid JSON{what}: {exc.msg}")
        yield i, rec


def sha256_file(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _read_jsonl(path: Path) -> list[tuple[int, dict]]:
    out = []
    for i, rec in iter_jsonl(path):
        if not isinstance(rec, dict):
            raise GoldboardError(f"{path}:{i}: each line must be a JSON object")
        out.append((i, rec))
    if not out:
        raise GoldboardError(f"{path}: file is empty")
    return out


def read_json_file(path: str | Path) -> Any:
    """Parse a UTF-8 JSON file; a missing, empty or malformed file is a one-line
    :class:`GoldboardError` naming the file (and line)."""
    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    text = _read_text(path)
    if not text.strip():
        raise GoldboardError(f"{path}: file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise GoldboardError(f"{path}:{exc.lineno}: invalid JSON: {exc.msg}") from None


def _read_json(path: Path) -> list[tuple[int, dict]]:
    data = read_json_file(path)
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)]
        if len(lists) == 1:
            data = lists[0]
        else:
            data = [data]
    if not isinstance(data, list):
        raise GoldboardError(f"{path}: expected a JSON array of objects")
    out = []
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise GoldboardError(f"{path}: record {i}: expected a JSON object")
        out.append((i, rec))
    if not out:
        raise GoldboardError(f"{path}: no records")
    return out


def _read_csv(path: Path, delimiter: str) -> list[tuple[int, dict]]:
    text = _read_text(path)
    if not text.strip():
        raise GoldboardError(f"{path}: file is empty")
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    if reader.fieldnames is None:
        raise GoldboardError(f"{path}: no header row")
    out = []
    for rec in reader:
        line = reader.line_num
        if None in rec:
            raise GoldboardError(f"{path}:{line}: more cells than header columns")
        out.append((line, {k: v for k, v in rec.items()}))
    if not out:
        raise GoldboardError(f"{path}: no data rows under the header")
    return out


def _read_xlsx(path: Path) -> list[tuple[int, dict]]:
    import openpyxl

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a corrupt file
        raise GoldboardError(f"{path}: cannot open as an Excel workbook: {exc}") from None
    ws = wb.worksheets[0]
    rows = ws.iter_rows(values_only=True)
    try:
        header = next(rows)
    except StopIteration:
        raise GoldboardError(f"{path}: sheet {ws.title} is empty") from None
    names = [str(h).strip() if h is not None else "" for h in header]
    out = []
    for r, row in enumerate(rows, start=2):
        if row is None or all(c is None or (isinstance(c, str) and not c.strip()) for c in row):
            continue
        out.append((r, {n: v for n, v in zip(names, row) if n}))
    wb.close()
    if not out:
        raise GoldboardError(f"{path}: no data rows under the header")
    return out


def read_table(path: str | Path) -> pd.DataFrame:
    """Read any supported table into a DataFrame of strings, with a ``_line`` column."""
    recs = read_records(path)
    df = pd.DataFrame([r for _, r in recs])
    df["_line"] = [line for line, _ in recs]
    return df


def duplicate_headers(path: str | Path) -> list[str]:
    """Column names that appear more than once in the header row of a CSV/TSV/XLSX table.

    :func:`read_records` keeps one value per name (the last column's), so a table with a
    repeated header loses the other columns' values; callers warn with these names.
    JSON and JSONL records cannot repeat a key, so they give ``[]``.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    names: list[str] = []
    try:
        if suffix in (".csv", ".tsv"):
            with open(path, encoding="utf-8-sig", newline="") as fh:
                names = next(csv.reader(fh, delimiter="\t" if suffix == ".tsv" else ","), [])
        elif suffix in (".xlsx", ".xlsm"):
            import openpyxl

            wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
            try:
                row = next(wb.worksheets[0].iter_rows(values_only=True, max_row=1), ())
            finally:
                wb.close()
            names = ["" if h is None else str(h) for h in row]
    except Exception:  # the reader proper reports unreadable files
        return []
    names = [n.strip() for n in names if n is not None and n.strip()]
    return sorted({n for n in names if names.count(n) > 1}, key=names.index)
