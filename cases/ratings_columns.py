"""A small study's ``ratings.csv`` read as columns of text, without pandas.

``goldboard agree --study`` on a study of a few hundred ratings spends more time importing
pandas (about 0.3 s) than computing; :func:`read_rating_columns` reads the file with the
``csv`` module instead, and :class:`RatingColumns` carries the columns to
:func:`goldboard.analysis.agreement_inputs.prepare_columns`.  The reader only answers for a
file it reads exactly as :func:`goldboard.cases.ratings.read_ratings_csv` does -- UTF-8, a
unique header with ``item_id, rater, field, value``, every row as long as the header, round
numbers that are numbers, nothing that pandas' and Python's CSV parsers could split
differently (a line of blanks, a bare CR, a NUL) -- and is used for files up to
:data:`MAX_BYTES`; anything else returns ``None`` and the caller reads the file with pandas,
which gives the same table or names the fault as it always has.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldboard.fileio import has_blank_line

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: larger ratings files are read with pandas, whose C parser and column operations win once the
#: file outweighs pandas' import. Measured with `agree --study --format json` (load 5.6): 12,000
#: ratings (0.9 MB) 0.7 s here against 2.5 s with pandas, 60,000 (4.4 MB) 1.9 s against 2.6 s,
#: 400,000 (29 MB) 11.3 s against 9.4 s; 5 MB (about 65,000 ratings of the OpenMTB layout)
MAX_BYTES = 5_000_000

_ROUND = re.compile(r"[0-9]{1,9}")


class PandasOnUse:
    """``pandas``, imported when a name of it is first read: ``pd = PandasOnUse()`` in a module
    whose import a small study's commands need (the rating grid, the rounds, the flags) but
    whose DataFrame work they skip, so that ``goldboard flag --study`` does not pay pandas'
    import (about 0.3-0.6 s) for a table it reads as columns.  Each name, once read, is kept on
    the instance (the next read is an attribute lookup)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # a tool probing the object (doctest, inspect): not pandas' names
            raise AttributeError(name)
        import pandas

        value = getattr(pandas, name)
        setattr(self, name, value)
        return value


class RatingColumns:
    """A ratings table as ``{column: list of cell texts}``, with the few DataFrame manners its
    readers use (``columns``, ``table[name]``, ``len``); :meth:`frame` builds the DataFrame the
    pandas path reads, for the cases the columns do not answer."""

    def __init__(self, columns: dict[str, list[str]], frame: Callable[[], pd.DataFrame]) -> None:
        self._columns = columns
        self._frame = frame

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def __getitem__(self, name: str) -> list[str]:
        return self._columns[name]

    def __len__(self) -> int:
        return len(next(iter(self._columns.values()), []))

    def frame(self) -> pd.DataFrame:
        """The same ratings as a DataFrame, read the pandas way."""
        return self._frame()

    def only(self, keep: list[bool]) -> RatingColumns:
        """The rows where ``keep`` is true (the frame filtered the same way by the caller's ``frame``)."""
        return RatingColumns(
            {c: [v for v, k in zip(vals, keep) if k] for c, vals in self._columns.items()}, self._frame
        )


def read_rating_columns(path: str | Path, max_bytes: int = MAX_BYTES) -> dict[str, list[str]] | None:
    """The columns of a plain ratings CSV (see the module doc), ``round`` as written; ``None``
    when the file is missing, large, or anything but plain (read it with pandas then)."""
    path = Path(path)
    try:
        if path.stat().st_size > max_bytes:
            return None
        text = path.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return None
    if "\0" in text or not text.strip() or has_blank_line(text):
        return None
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error:
        return None
    rows = [r for r in rows if r]
    if len(rows) < 2:
        return None
    header, body = rows[0], rows[1:]
    if len(set(header)) != len(header) or "" in header:
        return None
    if any(c not in header for c in ("item_id", "rater", "field", "value")):
        return None
    width = len(header)
    if any(len(r) != width for r in body):
        return None
    cols = {name: [r[i] for r in body] for i, name in enumerate(header)}
    if "round" in cols and not all(v == "" or _ROUND.fullmatch(v) for v in cols["round"]):
        return None
    return cols


__all__ = ["MAX_BYTES", "PandasOnUse", "RatingColumns", "read_rating_columns"]
