"""Excel-safe text: neutralise spreadsheet formula injection, drop nothing silently.

Model outputs, case texts and rationales are *untrusted*: a model output that
begins with ``=HYPERLINK(...)`` must reach a reviewer's spreadsheet as inert
text, never as a live formula (OWASP, "CSV Injection",
https://owasp.org/www-community/attacks/CSV_Injection).  The helpers here:

- :func:`neutralize_formula` prefixes a single quote ``'`` to text whose first
  character (or first character after leading blanks) is one a spreadsheet
  treats as a formula start: ``=  +  -  @``, tab, carriage return, their
  full-width forms, or a quote itself (so the rule is reversible, see
  :func:`unneutralize_formula`).
- :func:`excel_safe_text` additionally makes characters that the xlsx format
  cannot store visible as ``\\xNN`` escapes and cuts text at Excel's cell limit
  (32,767 UTF-16 code units, "Excel specifications and limits") on a safe
  boundary, ending with a visible marker that says how much was cut.
- :func:`set_text_cell` writes a value into an openpyxl cell *as a string*
  (``data_type = "s"``), so openpyxl never turns it into a formula.
- :func:`csv_safe` is :func:`neutralize_formula` for CSV files meant to be
  opened in a spreadsheet (never for machine-readable contract files).

These helpers never raise on odd input and never drop characters silently.
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any

#: Excel's maximum number of characters (UTF-16 code units) in one cell.
EXCEL_CELL_LIMIT = 32_767

#: first characters that make a spreadsheet evaluate a cell as a formula
FORMULA_TRIGGERS = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")

#: characters the xlsx (XML 1.0) format cannot hold (openpyxl's ILLEGAL_CHARACTERS_RE)
_ILLEGAL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

TRUNCATION_MARKER = " … [cut at Excel's cell limit: {n:,} more characters not shown]"


def as_text(value: Any) -> str:
    """Spell any cell value as text (``None``/NaN -> ``""``, ``4.0`` -> ``"4"``)."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer():
            return str(int(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def needs_neutralizing(text: str) -> bool:
    """True when ``text`` would be read as a formula (or starts with the escape quote)."""
    if not text:
        return False
    if text[0] in FORMULA_TRIGGERS or text[0] == "'":
        return True
    stripped = text.lstrip(" \u00a0\n")
    return bool(stripped) and stripped[0] in FORMULA_TRIGGERS


def neutralize_formula(value: Any) -> str:
    """Return ``value`` as text that no spreadsheet evaluates as a formula.

    Text starting (possibly after spaces) with ``=``, ``+``, ``-``, ``@``, tab or
    CR -- or with ``'`` -- gets a leading ``'``.  Everything else is unchanged.

    >>> neutralize_formula('=HYPERLINK("http://x","y")')
    '\\'=HYPERLINK("http://x","y")'
    >>> neutralize_formula("Supported")
    'Supported'
    """
    text = as_text(value)
    return "'" + text if needs_neutralizing(text) else text


def unneutralize_formula(text: Any) -> str:
    """Invert :func:`neutralize_formula` (drop the one quote it added)."""
    text = as_text(text)
    if text.startswith("'") and needs_neutralizing(text[1:]):
        return text[1:]
    return text


def escape_illegal(text: str) -> str:
    """Replace control characters xlsx cannot store with a visible ``\\xNN`` escape."""
    return _ILLEGAL_RE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def utf16_len(text: str) -> int:
    """Length as Excel counts it: UTF-16 code units (astral characters count 2)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def cut_to_units(text: str, limit: int) -> str:
    """Longest prefix of ``text`` within ``limit`` UTF-16 units, never splitting a
    surrogate pair, a CR LF, or a base character from its combining marks / ZWJ sequence."""
    if utf16_len(text) <= limit:
        return text
    units = 0
    end = 0
    for i, ch in enumerate(text):
        w = 2 if ord(ch) > 0xFFFF else 1
        if units + w > limit:
            break
        units += w
        end = i + 1
    # back off so the next character is not one that attaches to the previous one
    while end > 0 and end < len(text) and _attaches(text[end], text[end - 1]):
        end -= 1
    return text[:end]


def _attaches(ch: str, prev: str) -> bool:
    return (
        unicodedata.combining(ch) != 0
        or ch in "\u200d\ufe0e\ufe0f"
        or prev == "\u200d"
        or (prev == "\r" and ch == "\n")
        or 0x1F3FB <= ord(ch) <= 0x1F3FF  # emoji skin-tone modifiers
        or unicodedata.category(ch) == "Mc"
    )


def truncate_for_excel(text: str, limit: int = EXCEL_CELL_LIMIT) -> str:
    """Cut ``text`` to ``limit`` UTF-16 units, ending with a visible marker saying how
    many characters were cut.  Text within the limit is returned unchanged."""
    if 2 * len(text) <= limit or utf16_len(text) <= limit:  # fast path: at most 2 units a character
        return text
    # the marker length depends on the number cut; two passes settle it
    marker = TRUNCATION_MARKER.format(n=len(text))
    head = cut_to_units(text, limit - utf16_len(marker))
    marker = TRUNCATION_MARKER.format(n=len(text) - len(head))
    head = cut_to_units(text, limit - utf16_len(marker))
    return head + TRUNCATION_MARKER.format(n=len(text) - len(head))


def excel_safe_text(value: Any, limit: int = EXCEL_CELL_LIMIT) -> str:
    """Untrusted text made safe for one Excel cell: illegal control characters made
    visible, formula starts neutralised, cut at the cell limit with a marker."""
    return truncate_for_excel(neutralize_formula(escape_illegal(as_text(value))), limit)


def set_text_cell(cell: Any, value: Any, limit: int = EXCEL_CELL_LIMIT) -> str:
    """Write ``value`` into an openpyxl ``cell`` as inert text (data type string).

    Returns the text written.  ``None``/empty leaves the cell empty.
    """
    text = excel_safe_text(value, limit)
    if text == "":
        cell.value = None
        return ""
    cell.value = text
    cell.data_type = "s"
    return text


def csv_safe(value: Any) -> str:
    """Neutralise formula starts in a cell of a CSV meant for spreadsheet users."""
    return neutralize_formula(escape_illegal(as_text(value)))


__all__ = [
    "EXCEL_CELL_LIMIT",
    "FORMULA_TRIGGERS",
    "as_text",
    "csv_safe",
    "cut_to_units",
    "escape_illegal",
    "excel_safe_text",
    "needs_neutralizing",
    "neutralize_formula",
    "set_text_cell",
    "truncate_for_excel",
    "unneutralize_formula",
    "utf16_len",
]
