"""Small file helpers shared by every stage: atomic writes and table reading.

Nothing is ever half-written: every writer goes through :func:`atomic_write`,
which writes a temporary file in the target folder and renames it into place.
"""

from __future__ import annotations

import collections
import contextlib
import csv
import errno
import hashlib
import io
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from goldboard import fileio_xlsx
from goldboard.errors import GoldboardError, ParamError
from goldboard.fileio_xlsx import (  # noqa: F401 (re-exported: the readers of user workbooks)
    REPEATED_HEADER,
    SPREADSHEETS_NOT_READ,
    hidden_cells,
    is_header_row,
    load_workbook,
    merged_cells,
    merged_error,
    pick_sheet,
    read_xlsx_records,
    too_many_cells,
    too_many_columns,
)
from goldboard.text import lookalike_columns_message

if TYPE_CHECKING:  # pandas is imported where a table is read: `goldboard --help` stays fast
    import pandas as pd


#: errors of a write that found no room: the message names the file and says nothing was replaced
NO_ROOM_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def check_replaceable(path: str | Path) -> None:
    """Refuse to replace ``path`` when it is a symbolic link (the rename would cut the link and
    leave its target unchanged) or a file made read-only (its write bits off: someone protected
    it; as root, or by the rename, goldboard would replace it anyway).  One line naming the file."""
    path = Path(path)
    try:
        st = path.lstat()
    except OSError:
        return  # nothing there yet (or unreadable: the write itself says so)
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        raise GoldboardError(
            f"{path}: a symbolic link (to {target}); goldboard writes a new file and renames it into place, which "
            "would replace the link, not its target: replace the link by the file itself (or write elsewhere)"
        )
    if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o222:
        raise GoldboardError(
            f"{path}: read-only (mode {stat.S_IMODE(st.st_mode):o}); goldboard does not replace a file made "
            f"read-only: make it writable first (chmod u+w {path}) if it may change"
        )


def no_room_error(path: str | Path, exc: OSError) -> GoldboardError:
    """The one-line error of a write to ``path`` that found no room (disk full, quota, file too large)."""
    return GoldboardError(
        f"{path}: cannot write it: {exc.strerror or exc} (nothing replaced; free some space and run again)"
    )


class StagedWrites:
    """Several files written as one: each :func:`atomic_write` given ``stage=`` writes its temp
    file beside its target and leaves it there; :meth:`commit` renames them all into place once
    every one is written (a full disk or any error before that replaces none of them), then runs
    the ``after`` callbacks (e.g. removing files the new set no longer has)."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, Path]] = []
        self.after: list[Any] = []

    def commit(self) -> None:
        for tmp, path in self.pending:
            os.replace(tmp, path)
        self.pending = []
        for fn in self.after:
            fn()

    def discard(self) -> None:
        for tmp, _ in self.pending:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        self.pending = []


@contextlib.contextmanager
def staged_writes() -> Iterator[StagedWrites]:
    """A :class:`StagedWrites` committed when the block ends without an error, else discarded."""
    stage = StagedWrites()
    try:
        yield stage
        stage.commit()
    finally:
        stage.discard()


@contextlib.contextmanager
def atomic_write(
    path: str | Path,
    mode: str = "w",
    encoding: str | None = "utf-8",
    newline: str | None = None,
    perms: int | None = None,
    stage: StagedWrites | None = None,
) -> Iterator[IO[Any]]:
    """Open a temp file beside ``path``; on success rename it onto ``path``.

    On any exception the temp file is removed and ``path`` is untouched.
    ``perms`` (e.g. ``0o600``) is applied before anything is written.  A symbolic link or a
    read-only file at ``path`` is refused (:func:`check_replaceable`); a full disk is a one-line
    error naming ``path``.  ``stage``: leave the written temp file to :meth:`StagedWrites.commit`.
    """
    path = Path(path)
    check_replaceable(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:  # a read-only folder, a file where a folder should be, a full disk
        raise GoldboardError(f"{path}: cannot write here ({exc.strerror or exc})") from None
    try:
        # mkstemp makes 0600 files; give ordinary files the usual umask-based mode
        os.chmod(tmp, perms if perms is not None else (0o666 & ~_umask()))
        if "b" in mode:
            fh = os.fdopen(fd, mode)
        else:
            fh = os.fdopen(fd, mode, encoding=encoding, newline=newline)
        try:
            with fh:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            if exc.errno in NO_ROOM_ERRNOS:
                raise no_room_error(path, exc) from None
            raise
        if stage is not None:
            stage.pending.append((tmp, path))
        else:
            os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def umask() -> int:
    """The process's umask (study files are created with ``0o666 & ~umask()``)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


_umask = umask


def write_text_atomic(path: str | Path, text: str, perms: int | None = None, stage: StagedWrites | None = None) -> None:
    with atomic_write(path, perms=perms, stage=stage) as fh:
        fh.write(text)


def save_workbook_atomic(wb: Any, path: str | Path) -> None:
    """Save an openpyxl workbook to ``path`` atomically: laid out in memory first, so a full disk
    fails on one write of its bytes (a one-line error naming ``path``), never inside openpyxl's
    zip writer (whose unclosed archive printed a traceback when it was collected)."""
    buf = io.BytesIO()
    wb.save(buf)
    with atomic_write(path, "wb", encoding=None) as fh:
        fh.write(buf.getbuffer())


def fsync_dir(path: str | Path) -> None:
    """Make a rename or a new file inside ``path`` durable (fsync of the folder itself)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def file_lock(path: str | Path, *, create: bool = True) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``path`` (a lock file, created when ``create``,
    or an existing folder). The kernel drops it when the holder dies, so a killed command
    never blocks the next one."""
    flags = (os.O_CREAT | os.O_RDWR) if create else os.O_RDONLY
    fd = os.open(path, flags, 0o644)
    try:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            fcntl = None
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


#: record terminator of every CSV goldboard writes (RFC 4180).  With ``\r\n`` the csv
#: module quotes any cell holding a CR or an LF; with ``\n`` it leaves a bare CR
#: unquoted and every reader then splits the row there (phantom rows, cut rationales).
CSV_LINETERMINATOR = "\r\n"


def csv_text(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index) that every CSV reader splits back into the same cells.

    The one CSV spelling goldboard writes: header row, cells exactly as given (no
    formula neutralisation: CSV files are data files, see README "Security"),
    RFC 4180 quoting with CRLF record ends, so a bare CR, LF, U+2028 or a quote in
    a cell reads back unchanged with :func:`read_csv_frame` or Python's csv module.
    """
    buf = io.StringIO(newline="")
    df.to_csv(buf, index=False, lineterminator=CSV_LINETERMINATOR, quoting=csv.QUOTE_MINIMAL)
    return buf.getvalue()


def write_csv_atomic(df: pd.DataFrame, path: str | Path) -> None:
    """Write a DataFrame as UTF-8 CSV (no index, :func:`csv_text`'s bytes), atomically; pandas
    writes it into the file chunk by chunk (the whole text is never one string in memory)."""
    with atomic_write(path, newline="") as fh:
        df.to_csv(fh, index=False, lineterminator=CSV_LINETERMINATOR, quoting=csv.QUOTE_MINIMAL)


def read_csv_frame(path: str | Path, what: str = "", *, data: bytes | None = None) -> pd.DataFrame:
    """Read a CSV file goldboard wrote (ratings, invalid annotations, gold, flags)
    as a DataFrame of strings: every cell text exactly as written, empty cells ``""``.

    ``data``: the file's bytes, already read by the caller (who hashed exactly these
    bytes); ``path`` then only names the file in messages.

    A missing, non-UTF-8 or malformed file is a one-line :class:`GoldboardError`
    naming the file (and ``what`` it is).
    """
    import pandas as pd

    path = Path(path)
    if data is None and not path.exists():
        raise GoldboardError(f"{path}: file not found")
    text = _read_text(path) if data is None else _decode_text(path, data)
    if not text.strip():
        raise GoldboardError(f"{path}: file is empty{what}")
    fast = _csv_frame_c(text)
    if fast is not None:
        if lookalike_columns_message(f"{path}:1", list(fast.columns)):
            raise GoldboardError(lookalike_columns_message(f"{path}:1", list(fast.columns)))
        return fast
    rows = _csv_rows(path, text, ",")
    header, body = rows[0][1], rows[1:]
    for line, row in body:
        if len(row) > len(header):
            raise GoldboardError(f"{path}:{line}: more cells than header columns{what}")
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise GoldboardError(f"{path}:1: column {name!r} appears twice{what}")
        seen.add(name)
    if lookalike_columns_message(f"{path}:1", header):
        raise GoldboardError(lookalike_columns_message(f"{path}:1", header))
    cells = [row for _, row in body]
    if all(len(row) == len(header) for row in cells):  # every file goldboard writes: transpose at once
        cols = dict(zip(header, map(list, zip(*cells)))) if cells else {name: [] for name in header}
    else:  # a short row's missing cells are empty
        cols = {name: [row[i] if i < len(row) else "" for row in cells] for i, name in enumerate(header)}
    return pd.DataFrame(cols, columns=header, dtype=str)


#: a line of only blanks: pandas skips it, the csv module reads it as a row (the slow path decides);
#: a bare CR (not CRLF): the two parsers split such lines differently
_BLANK_LINE = re.compile(r"(?:^|[\r\n])[ \t\f\v]+(?:[\r\n]|$)|\r(?!\n)")
#: where a :data:`_BLANK_LINE` match can start: a search for these literal-led patterns is about
#: 10x quicker on a large file than the alternation above, which tries ``^`` at every character
_BLANK_LINE_HINT = re.compile(r"\n[ \t\f\v]")
_BLANK_LINE_HINT_CR = re.compile(r"\r(?:[ \t\f\v]|(?!\n))")


def has_blank_line(text: str) -> bool:
    """``_BLANK_LINE.search(text)``, answered quickly when no line starts with a blank and no CR is
    bare (the full pattern decides only when a hint is found)."""
    hint = (
        text[:1] in (" ", "\t", "\f", "\v")
        or _BLANK_LINE_HINT.search(text) is not None
        or ("\r" in text and _BLANK_LINE_HINT_CR.search(text) is not None)
    )
    return hint and _BLANK_LINE.search(text) is not None


def _csv_frame_c(text: str) -> pd.DataFrame | None:
    """The frame :func:`read_csv_frame` reads, from pandas' C parser (4x quicker on 400,000
    ratings than the csv module and a Python transpose); ``None`` where the two could differ
    or the file is malformed -- a duplicate or blank header, a row with more cells than the
    header, a line of blanks, a NUL, a quote left open, no data row -- so the csv module path
    reads it and names the line."""
    import warnings

    import pandas as pd

    header = next((row for row in csv.reader(io.StringIO(text, newline="")) if row), None)
    if not header or len(set(header)) != len(header) or "" in header or "\0" in text or has_blank_line(text):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # ParserWarning: a row longer than the header
            df = pd.read_csv(
                io.StringIO(text, newline=""),
                dtype=str,
                keep_default_na=False,
                na_filter=False,
                index_col=False,
                engine="c",
            )
    except (ValueError, csv.Error, Warning):  # pandas.errors.ParserError is a ValueError
        return None
    if not len(df) or len(df.columns) != len(header):
        return None
    df.columns = header
    return df


def _unclosed_quote(record: str, delimiter: str) -> bool:
    """Whether the CSV text of the file's last record ends inside a quoted cell (the lenient
    reader would silently read the rest of the file as that cell)."""
    try:
        for _ in csv.reader(io.StringIO(record, newline=""), delimiter=delimiter, strict=True):
            pass
    except csv.Error as exc:
        return "unexpected end of data" in str(exc)
    return False


def _strict_csv_rows(path: Path, text: str, delimiter: str) -> list[tuple[int, list[str]]] | None:
    """``(line, cells)`` read strictly: text after a cell's closing quote (``"a"b``, which a
    lenient reader silently joins into ``ab``) is an error naming the line; ``None`` when the
    text ends inside a quote (the caller's message for that names where the quote opened)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    out = []
    start = 1
    try:
        for row in reader:
            if row:
                out.append((start, row))
            start = reader.line_num + 1
    except csv.Error as exc:
        if "expected after" in str(exc):
            raise GoldboardError(
                f'{path}:{start}: not valid CSV: text follows a closing quote inside a cell (like "a"b); quote '
                f'the whole cell and double a quote inside it ("a""b"), or remove the quotes'
            ) from None
        if "unexpected end of data" in str(exc):
            return None
        raise GoldboardError(f"{path}:{start}: not valid CSV: {exc}") from None
    return out


def _csv_rows(path: Path, text: str, delimiter: str, strict: bool = False) -> list[tuple[int, list[str]]]:
    """``(line, cells)`` of every non-empty CSV record; a malformed file is a one-line error.
    ``strict`` (a table a user gives): text after a cell's closing quote is an error too
    (:func:`_strict_csv_rows`); goldboard's own files are read as pandas reads them."""
    # a cell may be as long as the file: goldboard reads back every cell it wrote
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    out = _strict_csv_rows(path, text, delimiter) if strict else None
    if out is None:  # a quote left open: read leniently, the check below names its line
        out = []
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=False)
        start = 1
        try:
            for row in reader:
                if row:
                    out.append((start, row))
                start = reader.line_num + 1
        except csv.Error as exc:
            raise GoldboardError(f"{path}:{start}: not valid CSV: {exc}") from None
    if not out:
        raise GoldboardError(f"{path}: no header row")
    last = out[-1][0]
    if _unclosed_quote("".join(re.split(r"(?<=\n)|(?<=\r)(?!\n)", text)[last - 1 :]), delimiter):
        raise GoldboardError(
            f"{path}:{last}: not valid CSV: the quote opened on line {last} is never closed (the rest of the "
            f"file would read as one cell); close the quote or remove it"
        )
    return out


def write_jsonl_atomic(records: list[dict], path: str | Path) -> None:
    """One JSON object per line (``json.dumps(r, ensure_ascii=False, default=str)``), atomically;
    one encoder for every record (units.jsonl of a 200,000-item table: 200,000 records)."""
    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode
    with atomic_write(path) as fh:
        for start in range(0, len(records), 4096):
            fh.write("".join(encode(r) + "\n" for r in records[start : start + 4096]))


def append_jsonl(path: str | Path, records: list[dict]) -> None:
    """Append records to a JSONL log (append-only files: decisions)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def read_records(path: str | Path, sheet: str | None = None, *, sheet_option: bool = False) -> list[tuple[int, dict]]:
    """Read JSONL, a JSON array (or ``{"cases": [...]}``-style object), CSV or XLSX.

    Returns ``(line, record)`` pairs, where ``line`` is the 1-based line of a
    JSONL record, the 1-based spreadsheet row of a CSV/XLSX record (header = 1),
    or the 1-based position in a JSON array.  Raises :class:`GoldboardError`
    naming the file and line on malformed input.

    A workbook is read from its sheet ``sheet``; without one, from its active sheet when that
    is visible and the only sheet holding data (else :class:`ParamError` naming the sheets:
    a table on another sheet, or a hidden one, is never silently skipped nor read; the error
    names the ``sheet`` parameter when ``sheet_option``: the command lets the user choose).  Merged
    cells below the header row are refused naming the range (only the first cell of a merge
    holds its value: the others would read as blank); with ``sheet_option`` the caller checks
    them instead (:func:`merged_cells`: refused in a column it reads, else a warning).
    """
    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    suffix = path.suffix.lower()
    if sheet is not None and suffix not in (".xlsx", ".xlsm"):
        raise ParamError(
            "{sheet} {name!r}: {source} is not a workbook (only .xlsx has sheets)", name=sheet, source=path
        )
    if suffix == ".jsonl" or suffix == ".ndjson":
        return check_records_size(path, _read_jsonl(path))
    if suffix == ".json":
        return check_records_size(path, _read_json(path))
    if suffix in (".csv", ".tsv"):
        return _read_csv(path, "\t" if suffix == ".tsv" else ",")
    if suffix in (".xlsx", ".xlsm"):
        return read_xlsx_records(path, sheet, sheet_option)
    if suffix in SPREADSHEETS_NOT_READ:
        raise GoldboardError(f"{path}: {suffix} spreadsheets are not read; save it as .xlsx or .csv")
    raise GoldboardError(f"{path}: unsupported file type {suffix or '(none)'} (use .jsonl, .json, .csv or .xlsx)")


def check_records_size(path: Path, records: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    """``records`` of a JSON/JSONL file, refused (one line, naming the limit) when one record has more
    keys than :data:`~goldboard.fileio_xlsx.MAX_TABLE_COLUMNS`, when the records together have more
    distinct keys (the table's columns), or more than :data:`~goldboard.fileio_xlsx.MAX_TABLE_CELLS`
    cells (records x distinct keys): the limits of a CSV table, so a hostile wide file is refused
    before any column is looked at (one record of 300,000 keys took minutes)."""
    limit = fileio_xlsx.MAX_TABLE_COLUMNS
    keys: set[str] = set()
    for line, rec in records:
        if len(rec) > limit:
            raise fileio_xlsx.too_many_columns(f"{path}:{line}", len(rec))
        keys.update(rec)
        if len(keys) > limit:
            raise fileio_xlsx.too_many_columns(f"{path}:{line}", len(keys))
    if len(records) * len(keys) > fileio_xlsx.MAX_TABLE_CELLS:
        raise fileio_xlsx.too_many_cells(str(path), len(records), len(keys))
    return records


def not_utf8(path: str | Path, data: bytes) -> tuple[int, str] | None:
    """Where the bytes ``data`` of file ``path`` stop being UTF-8 text and what to do, as
    ``(line, message)`` -- the message names the column (characters), the byte and the character
    it is in Windows-1252 (the usual other encoding of a spreadsheet export), and the advice --
    or ``None`` when ``data`` decodes.  The one wording of every reader of a user's text file."""
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        obj, start = exc.object, exc.start
    else:
        return None
    table = Path(path).suffix.lower() in (".csv", ".tsv")
    advice = "save it as 'CSV UTF-8' (Excel: Save As, CSV UTF-8) or as UTF-8 text" if table else "save it as UTF-8 text"
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return 1, f"not UTF-8 text: it is UTF-16; {advice}"
    line = obj.count(b"\n", 0, start) + 1
    column = len(obj[obj.rfind(b"\n", 0, start) + 1 : start].decode("utf-8")) + 1
    seen = bytes(obj[start : start + 1]).decode("cp1252", errors="replace")
    other = f", {seen!r} in Windows-1252 or Latin-1" if seen.isprintable() and seen != "\ufffd" else ""
    return line, f"not UTF-8 text (column {column}: byte 0x{obj[start]:02X}{other}); {advice}"


def not_utf8_error(path: str | Path, data: bytes) -> GoldboardError:
    """:func:`not_utf8` as the one-line error ``path:line: not UTF-8 text (...); advice``."""
    line, msg = not_utf8(path, data) or (1, "not UTF-8 text")
    return GoldboardError(f"{path}:{line}: {msg}")


def _decode_text(path: Path, data: bytes) -> str:
    """``data`` (the bytes of ``path``) as text, as :func:`_read_text` reads the file."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise not_utf8_error(path, data) from None


def _read_text(path: Path) -> str:
    """The file's text exactly (a leading BOM dropped; CR and CR LF kept, not translated)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return fh.read()
    except UnicodeDecodeError:
        raise not_utf8_error(path, path.read_bytes()) from None
    except IsADirectoryError:
        raise GoldboardError(f"{path}: is a folder, not a file") from None


def jsonl_lines(text: str) -> list[str]:
    """The lines of JSONL text, split at LF, CR LF or CR only.

    Never ``str.splitlines()``: it also splits at U+2028, U+2029, U+0085, VT, FF and
    U+001C-U+001E, which JSON allows unescaped inside a string, so a rationale holding
    a LINE SEPARATOR would cut its record in two.  JSON never holds a raw CR or LF.
    """
    return re.split(r"\r\n|\r|\n", text)


def loads_json(text: str, where: str, what: str = "", *, object_pairs_hook: Any = None) -> Any:
    """``json.loads`` whose failures (malformed or too deeply nested) are a one-line
    :class:`GoldboardError` starting with ``where`` (e.g. ``file:line``)."""
    try:
        value = json.loads(text, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError as exc:
        line = f":{exc.lineno}" if exc.lineno > 1 else ""
        raise GoldboardError(f"{where}{line}: invalid JSON{what}: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise GoldboardError(f"{where}: JSON nested too deeply to read{what}") from None
    bad = lone_surrogate(text, value)
    if bad:
        m = _ESCAPED_SURROGATE_RE.search(text)
        line = text.count("\n", 0, m.start()) + 1 if m else 1
        raise GoldboardError(f"{where}{f':{line}' if line > 1 else ''}: invalid JSON{what}: {bad}")
    return value


class _DuplicateKey(ValueError):
    pass


def _one_value_per_key(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object as a dict; a key given twice (``json.loads`` would silently keep the last
    value) is an error naming the key."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"key {key!r} appears twice in one object (which value is meant?)")
            seen.add(key)
    return out


#: the message for a JSONL line ending in a comma (json says "Extra data")
TRAILING_COMMA = "a comma after the record; JSON Lines has one object per line, no commas"


_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE_RE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def lone_surrogate(text: str, value: Any) -> str | None:
    """What is wrong when JSON ``text`` (parsed: ``value``) holds a lone surrogate escape
    (``\\ud83d`` without its pair: half an emoji, cut by the program that wrote it), which no
    file can hold as UTF-8; ``None`` when it holds none (the text is searched first: quick)."""
    if not _ESCAPED_SURROGATE_RE.search(text):
        return None
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        v, at = stack.pop()
        if isinstance(v, str):
            m = _SURROGATE_RE.search(v)
            if m:
                return (
                    f"a lone surrogate \\u{ord(m.group()):04x} in '{v[:30].encode('utf-8', 'backslashreplace').decode()}' "
                    f"{_json_place(at)}(half of an emoji or other character, cut by the program that wrote the file); "
                    "write the whole character or remove it"
                )
        elif isinstance(v, dict):
            for k, x in reversed(v.items()):
                stack.append((x, f"{at}.{k}" if at else str(k)))
                stack.append((k, at or "."))
        elif isinstance(v, list):
            for i in reversed(range(len(v))):
                stack.append((v[i], f"{at}[{i}]" if at else f"#{i + 1}"))
    return None


def _json_place(at: str) -> str:
    """Where in a JSON document a text is, for a message: ``(record 2, field annotations[0].result)``
    (``#2...``: the second element of a top-level array), ``(field rationale)``; ``""`` at the top."""
    if not at or at == ".":
        return "(a key) " if at == "." else ""
    if at.startswith("#"):
        rec, _, rest = at[1:].partition(".")
        rec, bracket, more = rec.partition("[")
        rest = f"[{more}{'.' + rest if rest else ''}" if bracket else rest
        return f"(record {rec}{', field ' + rest if rest else ''}) "
    return f"(field {at.lstrip('.')}) "


def escape_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` (parsed JSON) with each lone surrogate (half an emoji, which no UTF-8 file can
    hold) in its strings and keys written as the six characters of its escape, ``\\ud83d``: the
    text is kept whole and every later write works; ``(value, number of strings changed)``.  For
    the readers that must take such a text rather than refuse it (a Label Studio round whose
    rationale holds one); they say how many they kept so."""
    count = 0

    def fix(v: Any) -> Any:
        nonlocal count
        if isinstance(v, str):
            if _SURROGATE_RE.search(v) is None:
                return v
            count += 1
            return _SURROGATE_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", v)
        if isinstance(v, dict):
            return {fix(k): fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v

    return fix(value), count


#: what a reader that kept lone surrogates escaped says (``n`` texts, ``where``: the file or project)
def surrogates_kept_note(where: str, n: int) -> str:
    return (
        f"{where}: {n} text(s) held half an emoji or other character (a lone surrogate, cut by the program "
        f"that wrote it), which no file can hold: kept whole with that half written as its escape, e.g. "
        f"\\ud83d, in ratings.csv"
    )


def parse_jsonl(text: str) -> Iterator[tuple[int, Any, json.JSONDecodeError | None]]:
    """The one JSONL parser: ``(line, record, None)`` for each non-blank line, or
    ``(line, None, error)`` for a line that is not JSON or is nested too deeply to read
    (callers that collect every problem use this; the rest use :func:`iter_jsonl`).
    Lines are split by :func:`jsonl_lines` (LF/CR only), so every record goldboard
    writes reads back whole."""
    for i, line in enumerate(jsonl_lines(text), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line, object_pairs_hook=_one_value_per_key)
            bad = lone_surrogate(line, rec)
            yield (i, None, json.JSONDecodeError(bad, line, 0)) if bad else (i, rec, None)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data" and line[exc.pos :].strip() == ",":  # a record ending in a comma
                exc = json.JSONDecodeError(TRAILING_COMMA, line, exc.pos)
            yield i, None, exc
        except _DuplicateKey as exc:
            yield i, None, json.JSONDecodeError(str(exc), line, 0)
        except RecursionError:
            yield i, None, json.JSONDecodeError("nested too deeply to read", line, 0)


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


def read_json_file(path: str | Path, *, object_pairs_hook: Any = None) -> Any:
    """Parse a UTF-8 JSON file; a missing, empty or malformed file is a one-line
    :class:`GoldboardError` naming the file (and line)."""
    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    text = _read_text(path)
    if not text.strip():
        raise GoldboardError(f"{path}: file is empty")
    return loads_json(text, str(path), object_pairs_hook=object_pairs_hook)


class _Object(dict):
    """A JSON object as read by :func:`_read_json`, with the keys it gave twice."""

    twice: tuple[str, ...] = ()


def object_keeping_twice(pairs: list[tuple[str, Any]]) -> _Object:
    """``json.loads``' ``object_pairs_hook`` that keeps, with the object, the keys it gave
    twice (``json.loads`` alone silently keeps the last value): see :func:`key_twice`."""
    out = _Object(pairs)
    if len(out) != len(pairs):
        keys = [k for k, _ in pairs]
        out.twice = tuple(dict.fromkeys(k for i, k in enumerate(keys) if k in keys[:i]))
    return out


def key_twice(v: Any) -> str | None:
    """The first key given twice in one object anywhere inside ``v`` (parsed with
    ``object_pairs_hook=``:func:`object_keeping_twice`), else ``None``."""
    if isinstance(v, _Object) and v.twice:
        return v.twice[0]
    children = v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()
    return next((k for k in map(key_twice, children) if k is not None), None)


def _read_json(path: Path) -> list[tuple[int, dict]]:
    data = read_json_file(path, object_pairs_hook=object_keeping_twice)
    if isinstance(data, _Object) and data.twice:
        raise GoldboardError(f"{path}: key {data.twice[0]!r} appears twice in one object (which value is meant?)")
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
        twice = key_twice(rec)
        if twice is not None:  # json.loads would silently keep the last value
            raise GoldboardError(
                f"{path}: record {i}: key {twice!r} appears twice in one object (which value is meant?)"
            )
        out.append((i, dict(rec)))
    if not out:
        raise GoldboardError(f"{path}: no records")
    return out


#: per delimiter goldboard reads: the delimiters of other dialects a table may be saved with (a
#: spreadsheet in a locale whose decimal mark is a comma saves "CSV" separated by ";")
OTHER_DELIMITERS = {",": (";", "\t"), "\t": (",", ";")}
_DELIMITER_NAMES = {",": "commas", ";": "';'", "\t": "tabs"}


def other_delimiter(path: str | Path, header: list[str], delimiter: str) -> str:
    """The message for a table separated by another dialect's delimiter (``""`` when it is not):
    its header is one column whose name that delimiter splits into two or more names.  It was
    read as one column named ``case_id;model;predicted_label``, then "missing column" (campaign 7b
    S08); goldboard reads commas in .csv and tabs in .tsv, never guesses."""
    if len(header) != 1:
        return ""
    for d in OTHER_DELIMITERS.get(delimiter, ()):
        parts = header[0].split(d)
        if len(parts) > 1 and all(p.strip() for p in parts):
            fix = (
                "name it .tsv, or save it as CSV UTF-8 (comma delimited)"
                if d == "\t"
                else "name it .csv"
                if d == ","
                else "save it as CSV UTF-8 (comma delimited), or as .xlsx"
            )
            return (
                f"{path}:1: the file is separated by {_DELIMITER_NAMES[d]}, not {_DELIMITER_NAMES[delimiter]} "
                f"(header {header[0][:80]!r}): {fix}"
            )
    return ""


def check_table_size(path: Path, text: str, delimiter: str) -> None:
    """Refuse a CSV/TSV table wider than :data:`MAX_TABLE_COLUMNS` (its header line) or of more
    than :data:`MAX_TABLE_CELLS` cells (lines x header columns), before its records are parsed."""
    end = text.find("\n")
    first = text if end < 0 else text[:end]
    width = first.count(delimiter) + 1
    if width > fileio_xlsx.MAX_TABLE_COLUMNS:  # count the header's cells exactly (a quoted name may hold it)
        width = len(next(csv.reader(io.StringIO(first, newline=""), delimiter=delimiter), []))
        if width > fileio_xlsx.MAX_TABLE_COLUMNS:
            raise too_many_columns(f"{path}:1", width)
    lines = text.count("\n") + (not text.endswith("\n"))  # a last line without its line break counts
    if lines * width > fileio_xlsx.MAX_TABLE_CELLS:
        raise too_many_cells(str(path), lines, width)


def _read_csv(path: Path, delimiter: str) -> list[tuple[int, dict]]:
    text = _read_text(path)
    if not text.strip():
        raise GoldboardError(f"{path}: file is empty")
    check_table_size(path, text, delimiter)
    rows = _csv_rows(path, text, delimiter, strict=True)
    if other_delimiter(path, rows[0][1], delimiter):
        raise GoldboardError(other_delimiter(path, rows[0][1], delimiter))
    header = rows[0][1]
    names = [h.strip() for h in header]
    if lookalike_columns_message(f"{path}:1", names):
        raise GoldboardError(lookalike_columns_message(f"{path}:1", names))
    out = []
    for line, row in rows[1:]:
        if len(row) > len(header):
            raise GoldboardError(f"{path}:{line}: more cells than header columns")
        if is_header_row(row, names):
            raise GoldboardError(f"{path}:{line}: {REPEATED_HEADER}")
        out.append((line, {k: (row[i] if i < len(row) else None) for i, k in enumerate(header)}))
    if not out:
        raise GoldboardError(f"{path}: no data rows under the header")
    return out


def read_csv_cells(path: str | Path) -> pd.DataFrame | None:
    """A user's CSV/TSV table as :func:`read_records` reads it, but as columns: a DataFrame of
    text cells (pandas' compact ``str`` columns, never one dict per row) with the ``_line``
    column (the 1-based line each record starts on, header = 1).  The cells are split by the
    same strict csv-module reader as :func:`read_records`; ``None`` wherever the two could
    differ or the file needs a message -- not a .csv/.tsv, empty, a NUL, a line of blanks or a
    bare CR, a malformed record, a row shorter or longer than the header, a repeated, blank or
    look-alike header name, no data row, a header of one column (perhaps another dialect's delimiter,
    :func:`other_delimiter`) -- and the caller reads it with :func:`read_records`."""
    import importlib.util

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".tsv") or not path.is_file() or importlib.util.find_spec("pyarrow") is None:
        return None  # the columns are Arrow arrays: without pyarrow, the records reader reads it
    try:
        text = _read_text(path)
    except GoldboardError:
        return None
    if not text.strip() or "\0" in text or has_blank_line(text):
        return None
    check_table_size(path, text.lstrip("\ufeff"), "\t" if suffix == ".tsv" else ",")
    csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    del text  # the records are read from the file itself (a StringIO would hold 4 bytes a character)
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return _csv_columns(csv.reader(fh, delimiter="\t" if suffix == ".tsv" else ",", strict=True))


def _csv_columns(reader: Any) -> pd.DataFrame | None:
    """:func:`read_csv_cells`' frame from its csv reader, 65,536 rows at a time into Arrow columns."""
    import pandas as pd
    import pyarrow as pa

    lines: list[int] = []
    rows: list[list[str]] = []
    chunks: list[list] = []  # per column: Arrow arrays of 65,536 cells (the rows as lists never pile up)

    def flush() -> None:
        for k, col in enumerate(zip(*rows)):
            chunks[k].append(pa.array(col, type=pa.large_string()))
        rows.clear()

    start = 1
    try:
        header = next(reader)
        if len(header) == 1:  # perhaps another dialect's delimiter: read_records names it
            return None
        width = len(header)
        names = [h.strip() for h in header]
        if lookalike_columns_message("", names):
            return None  # two look-alike headers: read_records names them
        chunks.extend([] for _ in header)
        start = reader.line_num + 1
        for row in reader:
            if len(row) != width or (row[0].strip() == names[0] and is_header_row(row, names)):
                return None  # the records reader names the line
            lines.append(start)
            rows.append(row)
            start = reader.line_num + 1
            if len(rows) == 65536:
                flush()
    except (csv.Error, StopIteration):
        return None
    flush()
    if not lines or len(set(header)) != width or "" in header or any(h.startswith("_") for h in header):
        return None
    df = pd.DataFrame(
        {
            name: pd.array(pa.chunked_array(col, type=pa.large_string()), dtype="str")
            for name, col in zip(header, chunks)
        },
        columns=header,
    )
    df["_line"] = lines
    return df


def read_table(path: str | Path, sheet: str | None = None) -> pd.DataFrame:
    """Read any supported table into a DataFrame of strings, with a ``_line`` column."""
    import pandas as pd

    recs = read_records(path, sheet)
    df = pd.DataFrame([r for _, r in recs])
    df["_line"] = [line for line, _ in recs]
    return df


def duplicate_headers(path: str | Path, sheet: str | None = None) -> list[str]:
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
                ws = pick_sheet(wb, path, sheet)
                row = next(ws.iter_rows(values_only=True, max_row=1), ())
            finally:
                wb.close()
            names = ["" if h is None else str(h) for h in row]
    except Exception:  # the reader proper reports unreadable files
        return []
    names = [n.strip() for n in names if n is not None and n.strip()]
    counts = collections.Counter(names)  # one pass: names.count per name was quadratic in the columns
    return [n for n in counts if counts[n] > 1]  # first-seen order, as the header has them


#: a study folder is the folder holding this file (``goldboard.study.STUDY_FILE``)
STUDY_MARKER = "study.toml"
#: a study's own files and folders (relative to the study folder) no command output may replace;
#: ``reports/`` (report's default output folder) and any other new name are free
STUDY_OWN = {
    "study.toml": "study settings",
    "units.jsonl": "items file",
    "decisions.jsonl": "append-only decisions log",
    "decisions.jsonl.lock": "decisions lock",
    "rounds": "ratings rounds",
    "gold": "gold releases",
    "judges": "LLM judges' labels",
}


def study_own_file(path: str | Path, studies: Iterable[str | Path] = ()) -> tuple[Path, str] | None:
    """``(study folder, what it is)`` when ``path`` is one of a study's own files: a
    :data:`STUDY_OWN` entry (or a hidden file) of a folder holding ``study.toml`` -- any
    folder above ``path``, or one of ``studies`` (a ``--study`` that may not exist yet).
    Symbolic links are followed, so a link to ``decisions.jsonl`` counts as that file."""
    candidates = [Path(os.path.abspath(path))]
    with contextlib.suppress(OSError, RuntimeError):
        candidates.append(Path(path).resolve())
    roots = {Path(os.path.abspath(s)) for s in studies}
    for s in list(roots):
        with contextlib.suppress(OSError, RuntimeError):
            roots.add(s.resolve())
    for p in candidates:
        for folder in p.parents:
            if folder in roots or (folder / STUDY_MARKER).is_file():
                first = p.relative_to(folder).parts[0]
                own = {k.casefold(): v for k, v in STUDY_OWN.items()}  # one file on macOS/Windows disks
                if first.casefold() in own:
                    return folder, own[first.casefold()]
                if first.startswith("."):
                    return folder, "hidden working file"
    return None


def _same_file(a: str | Path, b: str | Path) -> bool:
    """``a`` and ``b`` name one file: the same absolute or resolved path, or (both existing)
    the same inode -- a hard link or another spelling of the path."""
    if os.path.abspath(a) == os.path.abspath(b):
        return True
    with contextlib.suppress(OSError, RuntimeError):
        if Path(a).resolve() == Path(b).resolve():
            return True
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    return False


def check_output_paths(
    outputs: Iterable[tuple[str, str | Path]],
    inputs: Iterable[tuple[str, str | Path]] = (),
    studies: Iterable[str | Path] = (),
) -> None:
    """Refuse, before anything is written, an output that would destroy what the command
    or the study needs: each ``(name, path)`` of ``outputs`` must not be one of a study's
    own files (:func:`study_own_file`), another output, or one of ``inputs``.  ``name`` is
    the flag (or parameter) shown in the one-line :class:`GoldboardError`."""
    outputs = [(n, p) for n, p in outputs if p not in (None, "")]
    inputs = [(n, p) for n, p in inputs if p not in (None, "")]
    studies = list(studies)
    for i, (name, path) in enumerate(outputs):
        own = study_own_file(path, studies)
        if own is not None:
            folder, what = own
            raise GoldboardError(
                f"{name} {path}: is part of the study in {folder} ({what}); a command never writes over "
                f"the study's own files: write to another file (e.g. {folder / 'reports'}/...)"
            )
        for other, opath in outputs[:i]:
            if _same_file(path, opath):
                raise GoldboardError(f"{name} {path}: is also the {other} file; give each output its own file")
        for other, ipath in inputs:
            if _same_file(path, ipath):
                raise GoldboardError(f"{name} {path}: is also the input {other}; write the output to another file")
