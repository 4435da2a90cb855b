"""Checks of an item or case id read from a user's file (a ratings table, a cases file).

An id is the key every rating, decision and gold label hangs on, so an id that is not what it
looks like is refused, never read as another item:

* a **placeholder** for a missing value (``NA``, ``N/A``, ``#N/A``, ``NULL``, ``None``, ``nan``,
  ``-`` ...: what Excel, R and pandas write in an empty cell) is no id: a table holding it in its
  id column lost its ids somewhere;
* two ids that differ only in **letter case** (``C1`` / ``c1``), or only in their Unicode form,
  name one item typed twice (or two items a reader cannot tell apart).

Goldboard's own readers never turn such text into a missing value (CSV cells are read as text,
``keep_default_na=False``), so a label or id really spelled ``NA`` reaches these checks intact.
"""

from __future__ import annotations

import unicodedata

#: what spreadsheets, R and pandas write for a missing value (pandas' default ``na_values``,
#: R's ``NA``/``NaN``, Excel's ``#N/A`` and ``#NULL!``, a lone dash), compared casefolded
PLACEHOLDER_IDS = frozenset(
    x.casefold()
    for x in (
        "NA",
        "N/A",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "<NA>",
        "NULL",
        "#NULL!",
        "None",
        "nan",
        "-nan",
        "NaT",
        "1.#IND",
        "-1.#IND",
        "1.#QNAN",
        "-1.#QNAN",
        "-",
        "--",
    )
)


def is_placeholder_id(text: str) -> bool:
    """Whether ``text`` (an id cell, stripped) is a missing-value placeholder, not an id.

    >>> [is_placeholder_id(x) for x in ("NA", "n/a", "#N/A", "None", "-", "NA-12", "C1")]
    [True, True, True, True, True, False, False]
    """
    return text.strip().casefold() in PLACEHOLDER_IDS


def placeholder_message(where: str, col: str, text: str) -> str:
    """The one line refusing a placeholder id ``text`` in column ``col`` (``where``: file and row)."""
    return (
        f"{where}: {col} {text!r} is what a spreadsheet, R or pandas writes for a missing value, not an item id "
        f"(the id was lost before the file was saved); type the real id, or delete the row"
    )


def id_key(text: str) -> str:
    """The key under which two ids count as one: Unicode NFC form, letter case folded."""
    return unicodedata.normalize("NFC", text).casefold()


def twin_kind(a: str, b: str) -> str:
    """How two different ids with the same :func:`id_key` differ, for a message."""
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return (
            "look the same but differ in their Unicode form (NFC vs NFD: an accent stored as one letter or as a "
            "combining mark)"
        )
    return "differ only in letter case"


def escaped(text: str) -> str:
    """``text`` with anything but printable ASCII escaped (``Cafe\\u0301``), for a message."""
    return text.encode("unicode_escape").decode("ascii")


__all__ = ["PLACEHOLDER_IDS", "is_placeholder_id", "placeholder_message", "id_key", "twin_kind", "escaped"]
