"""Checks of an item or case id read from a user's file (a ratings table, a cases file).

An id is the key every rating, decision and gold label hangs on, so an id that is not what it
looks like is refused, never read as another item:

* a **placeholder** for a missing value (``NA``, ``N/A``, ``#N/A``, ``NULL``, ``None``, ``nan``,
  ``-`` ...: what Excel, R and pandas write in an empty cell) is no id: a table holding it in its
  id column lost its ids somewhere;
* a number in **scientific notation** as Excel shows a long number (``1.23E+05``) is no id: the
  spreadsheet turned the id into a number and its digits are lost;
* two ids that differ only in **letter case** (``C1`` / ``c1``), only in their Unicode form, or
  only in how a number is written (``1`` / ``1.0`` from a float column, ``7`` / ``007`` when
  Excel stripped the zeros of one cell) name one item typed twice (or two items a reader cannot
  tell apart).

Goldboard's own readers never turn such text into a missing value (CSV cells are read as text,
``keep_default_na=False``), so a label or id really spelled ``NA`` reaches these checks intact.
"""

from __future__ import annotations

import decimal
import functools
import re
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


#: a number as Excel shows it in scientific notation (``1.23E+05``, ``4E-03``): its digits are lost
SCIENTIFIC_ID = re.compile(r"[+-]?\d(\.\d+)?E[+-]\d+", re.IGNORECASE)
#: a number in scientific notation with no sign in its exponent (``1E5``, ``2.5e3``): no spreadsheet
#: writes a number so (Excel shows ``1E+05``), so it is an id someone typed and it is kept as that
#: text -- but a spreadsheet opening the file reads it as a number (``1E5`` -> 100000) and saves that
PLAIN_EXPONENT_ID = re.compile(r"[+-]?\d+(\.\d+)?E\d+", re.IGNORECASE)
#: a number as a reader may write it (``7``, ``007``, ``1.0``, ``-0``, ``1E5``, ``1.5e-3``)
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d{1,2})?", re.IGNORECASE)


def is_placeholder_id(text: str) -> bool:
    """Whether ``text`` (an id cell, stripped) is a missing-value placeholder or a number in
    scientific notation (:data:`SCIENTIFIC_ID`), not an id.

    >>> [is_placeholder_id(x) for x in ("NA", "n/a", "#N/A", "None", "-", "NA-12", "C1", "1.23E+05", "E1")]
    [True, True, True, True, True, False, False, True, False]
    """
    t = text.strip()
    return t.casefold() in PLACEHOLDER_IDS or SCIENTIFIC_ID.fullmatch(t) is not None


def placeholder_message(where: str, col: str, text: str) -> str:
    """The one line refusing a placeholder id ``text`` in column ``col`` (``where``: file and row)."""
    if SCIENTIFIC_ID.fullmatch(text.strip()):
        return (
            f"{where}: {col} {text!r} is a number in scientific notation, as a spreadsheet shows a long number it "
            f"turned the id into (its digits are lost), not an item id; format the column as Text and type the ids"
        )
    return (
        f"{where}: {col} {text!r} is what a spreadsheet, R or pandas writes for a missing value, not an item id "
        f"(the id was lost before the file was saved); type the real id, or delete the row"
    )


def id_key(text: str) -> str:
    """The key under which two ids count as one: Unicode NFKC form (NFC, and a full-width or other
    compatibility letter as its plain letter), each dash look-alike as ``-`` (``C‐0001`` as Word
    types it), letter case folded, and a number by its value (``1`` = ``1.0`` = ``001``,
    ``1E5`` = ``100000``, ``-0`` = ``0``).

    >>> [id_key(x) for x in ("C1", "c1", "7", "007", "1.0", "1.5", "C007", "1E5", "100000", "-0", "-5")]
    ['c1', 'c1', '7', '7', '1', '1.5', 'c007', '100000', '100000', '0', '-5']
    >>> [id_key(x) for x in ("C-0001", "C\u20100001", "\uff23-0001")]
    ['c-0001', 'c-0001', 'c-0001']
    """
    if _NUMBER.fullmatch(text.strip()):
        value = decimal.Decimal(text.strip())
        return "0" if value == 0 else format(value.normalize(), "f")
    return unicodedata.normalize("NFKC", visible(text)).translate(_DASH_TO_HYPHEN).casefold()


#: dash look-alikes (as goldboard.text.DASHES) read as ``-`` in an id key
_DASH_TO_HYPHEN = {ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"}


def visible(text: str) -> str:
    """``text`` without its invisible format characters (Unicode category Cf: zero-width space
    U+200B, joiners, the BOM U+FEFF, soft hyphen, bidi controls): what a reader sees.

    >>> visible("MTB-1\u200b") == "MTB-1"
    True
    """
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


#: code points Unicode draws as nothing although they are no control or format character
#: (Default_Ignorable_Code_Point outside Cf: combining grapheme joiner, Hangul fillers, Khmer
#: inherent vowels, Mongolian variation selectors, variation selectors, the tag-block fillers)
_IGNORABLE_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


def is_hidden(ch: str) -> bool:
    """Whether character ``ch`` is one a reader cannot see or that breaks a line: a control
    character (Cc: NUL, tab, ESC, U+001F ...), an invisible format character (Cf: zero-width
    space U+200B, joiners, the BOM U+FEFF, soft hyphen, bidi controls), a line or paragraph
    separator (U+2028, U+2029), or another default-ignorable code point (variation selectors,
    Hangul fillers).  One rule for every id and every free-text option goldboard stores.

    >>> [is_hidden(c) for c in ("\u200b", "\x1f", "\u2028", "\ufe0f", "\u3164", "a", "é", " ")]
    [True, True, True, True, True, False, False, False]
    """
    cat = unicodedata.category(ch)
    if cat in ("Cc", "Cf", "Zl", "Zp"):
        return True
    o = ord(ch)
    return any(lo <= o <= hi for lo, hi in _IGNORABLE_RANGES)


@functools.cache
def hidden_ranges() -> tuple[tuple[int, int], ...]:
    """Every character :func:`is_hidden` accepts, as sorted ``(first, last)`` code point ranges
    (for a regular expression that finds them)."""
    cat = unicodedata.category
    codes = [o for o in range(0x20000) if cat(chr(o)) in ("Cc", "Cf", "Zl", "Zp")]  # none is assigned above
    codes += [o for lo, hi in _IGNORABLE_RANGES for o in range(lo, hi + 1)]  # (the tags E0001.. are among these)
    out: list[list[int]] = []
    for o in sorted(set(codes)):
        if out and o == out[-1][1] + 1:
            out[-1][1] = o
        else:
            out.append([o, o])
    return tuple((lo, hi) for lo, hi in out)


def invisible_chars(text: str) -> list[str]:
    """The control (Cc) and invisible format (Cf) characters in ``text``, as ``U+200B``."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) in ("Cc", "Cf")})


def hidden_chars(text: str) -> list[str]:
    """The hidden characters (:func:`is_hidden`: control, invisible format, line separator,
    variation selector ...) in ``text``, as ``U+200B``: :func:`invisible_chars` and more."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if is_hidden(ch)})


def escape_hidden(text: str) -> str:
    r"""``text`` with each hidden character (:func:`is_hidden`) written as its escape
    (``v2\u200b``, ``a\x1f``) and every other character as it is, for a message.

    >>> print(escape_hidden("Café v2\u200b\x1f"))
    Café v2\u200b\x1f
    """
    return "".join(ch.encode("unicode_escape").decode("ascii") if is_hidden(ch) else ch for ch in text)


def _named(codes: list[str]) -> str:
    """``U+200B ZERO WIDTH SPACE, U+001F`` (a control character has no name)."""
    out = []
    for code in codes:
        name = unicodedata.name(chr(int(code[2:], 16)), "")
        out.append(f"{code} {name}" if name else code)
    return ", ".join(out)


#: what is stripped around an id before it is checked: spaces and line ends only (``str.strip``
#: would also silently cut U+001C..U+001F, which are held against the id)
ID_SPACE = " \t\r\n\u00a0"


def hidden_id_problem(text: str) -> str | None:
    r"""What is wrong with an item, case or output id holding a hidden character
    (:func:`is_hidden`), the same words in every intake (a table, a cases file, a Prodigy,
    doccano or Label Studio export); ``None`` for an id without one.  Spaces and line ends
    around the id are no part of it.

    >>> hidden_id_problem("MTB-1\u200b")
    "'MTB-1\\u200b' contains invisible or control character U+200B ZERO WIDTH SPACE, so it is not the id it looks like: type the id again"
    >>> hidden_id_problem(" MTB-1 ") is None
    True
    """
    text = text.strip(ID_SPACE)
    bad = hidden_chars(text)
    if not bad:
        return None
    return (
        f"'{escape_hidden(text)}' contains invisible or control character {_named(bad)}, so it is not the id it "
        f"looks like: type the id again"
    )


def hidden_id_reason(field: str, text: str) -> str | None:
    """:func:`hidden_id_problem` after the id's column or key ``field`` (``case_id 'C-1\\u200b'
    contains ...``): the reason a table row is held out, or a file refused, for it."""
    problem = hidden_id_problem(text)
    return f"{field} {problem}" if problem else None


def hidden_text_message(text: str, what: str, echo: bool = True) -> str | None:
    r"""The one line refusing free text an option stores in the study's records (a guideline
    version, a table's source name, a study name ...) that holds a hidden character
    (:func:`is_hidden`); ``None`` when it holds none.  ``what``: "the version", "the name" ...;
    ``echo=False`` never repeats the text (a URL may carry a password).

    >>> hidden_text_message("v2\u200b", "the version")
    "the version 'v2\\u200b' contains invisible or control character(s) U+200B ZERO WIDTH SPACE; type it again"
    """
    bad = hidden_chars(text)
    if not bad:
        return None
    shown = f" '{escape_hidden(text)}'" if echo else ""
    return f"{what}{shown} contains invisible or control character(s) {_named(bad)}; type it again"


def number_like_ids_warning(where: str, items) -> str | None:
    """The one warning for item ids kept as the text typed that a spreadsheet would read as a
    number in scientific notation (:data:`PLAIN_EXPONENT_ID`), ``None`` when there are none.

    >>> number_like_ids_warning("t.csv", ["C1", "1E5", "2e3"])[:60]
    "t.csv: item id '1E5' (and '2e3') is kept as the text typed, "
    >>> number_like_ids_warning("t.csv", ["C1", "1E+05", "E5", "1E5X"]) is None
    True
    """
    found = list(dict.fromkeys(x for x in items if PLAIN_EXPONENT_ID.fullmatch(str(x).strip())))
    if not found:
        return None
    first = found[0].strip()
    more = (
        ""
        if len(found) == 1
        else " (and " + ", ".join(repr(x) for x in found[1:4]) + (", ..." if len(found) > 4 else "") + ")"
    )
    value = format(decimal.Decimal(first).normalize(), "f")
    return (
        f"{where}: item id {first!r}{more} is kept as the text typed, but a spreadsheet opening a file "
        f"with it reads it as a number in scientific notation ({first} = {value}) and saves it so: format "
        f"the id column as Text before editing such a file in Excel or LibreOffice"
    )


def twin_kind(a: str, b: str) -> str:
    """How two different ids with the same :func:`id_key` differ, for a message."""
    if _NUMBER.fullmatch(a.strip()) and _NUMBER.fullmatch(b.strip()):
        return (
            "differ only in how a number is written (1 / 1.0 / 001 / 1E0 / -0: a spreadsheet or a JSON writer "
            "re-typed the id as a number, or stripped its leading zeros)"
        )
    if visible(a) != a or visible(b) != b:
        return (
            "look the same but one holds an invisible character ("
            + ", ".join(invisible_chars(a + b))
            + ": a zero-width space, joiner or mark pasted in)"
        )
    if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b):
        return (
            "look the same but differ in their Unicode form (NFC vs NFD: an accent stored as one letter or as a "
            "combining mark)"
        )
    dashes = sorted({c for c in a + b if ord(c) in _DASH_TO_HYPHEN})
    if dashes:
        named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in dashes)
        return f"look alike but one writes a dash with another character ({named}) where the other has '-'"
    wide = sorted({c for c in a + b if unicodedata.normalize("NFKC", c) != c})
    if wide:
        named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in wide[:3])
        return f"look alike but one is written in full-width or another compatibility form ({named})"
    return "differ only in letter case"


def escaped(text: str) -> str:
    """``text`` with anything but printable ASCII escaped (``Cafe\\u0301``), for a message."""
    return text.encode("unicode_escape").decode("ascii")


__all__ = [
    "PLACEHOLDER_IDS",
    "PLAIN_EXPONENT_ID",
    "is_placeholder_id",
    "placeholder_message",
    "id_key",
    "invisible_chars",
    "hidden_chars",
    "is_hidden",
    "hidden_ranges",
    "escape_hidden",
    "hidden_id_reason",
    "hidden_id_problem",
    "hidden_text_message",
    "ID_SPACE",
    "number_like_ids_warning",
    "visible",
    "twin_kind",
    "escaped",
]
