"""Text rules shared by every layer (L0: imports nothing from goldboard).

One place for each way goldboard turns a value into text:

- :func:`cell_text` spells any table cell as text (``None``/NaN/``pd.NA`` -> ``""``,
  ``4.0`` -> ``"4"``, ``True`` -> ``"true"``).  It never strips: ids and labels are
  compared as ``cell_text(v).strip()``, while rater text (rationales, reasons) keeps
  every character.
- :func:`natural_key` orders ids and labels as people read them: numbers by value
  (``2`` < ``10`` < ``10.5``), then text with embedded numbers compared by value
  (``C-2`` < ``C-10``), case-insensitively.
- :func:`xml_text` / :func:`ls_text` make text safe for Label Studio XML configs.
- The formula-injection policy (OWASP, "CSV Injection",
  https://owasp.org/www-community/attacks/CSV_Injection): any text that a spreadsheet
  could evaluate -- its first character, or its first character after leading blanks
  (space, no-break space, newline), is ``=  +  -  @``, tab, carriage return or one of
  their full-width forms -- gets one leading ``'``; so does text that already starts
  with ``'``, which makes the rule reversible (:func:`unneutralize_formula`).  Numbers
  written as numbers are never touched; only text is.  The same rule serves xlsx
  cells (:func:`excel_safe_text`, which also makes characters xlsx cannot store
  visible and cuts at Excel's cell limit), the files people open.  CSV and JSON files
  are data files for scripts and are written verbatim (README "Security": one policy).
- :func:`md_escape` / :func:`md_table` write untrusted text into Markdown: raw HTML
  is escaped (``<`` ``>``, and ``&`` where it would start an entity), table breaks
  (``|``, newlines) and code spans are neutralised.
- :func:`terminal_text` makes untrusted data safe to show on a terminal: C0/C1 control
  characters (ANSI escape sequences, bell, NUL, a bare carriage return that would
  overwrite the line) and the bidi embeddings, overrides and isolates that can reorder
  what a reader sees (U+202A-U+202E, U+2066-U+2069; "Trojan Source", CVE-2021-42574)
  are removed; newline and tab stay.  :func:`one_line` is the same for a message that
  must stay on one line (every error the CLI prints): line breaks inside quoted data
  are shown as visible escapes (``\\n``, ``\\r``, ``\\u2028``).
- :func:`utc_now` is the one timestamp format: ISO 8601, UTC, whole seconds.

None of these raise on odd input or drop characters silently.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

# --------------------------------------------------------------------------- cells


def _is_missing_scalar(value: Any) -> bool:
    pd = sys.modules.get("pandas")  # a pandas missing value exists only when pandas is loaded
    if pd is not None and (value is pd.NA or value is pd.NaT):
        return True
    return False


def cell_text(value: Any) -> str:
    """Spell one cell as text; ``""`` for a missing value.

    >>> [cell_text(v) for v in (None, float("nan"), 4.0, 2.5, True, "  C-1 ")]
    ['', '', '4', '2.5', 'true', '  C-1 ']
    """
    if value is None or _is_missing_scalar(value):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.bool_):
            return "true" if value else "false"
        if isinstance(value, np.integer):
            return str(int(value))
        if isinstance(value, np.floating):
            value = float(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer():
            return str(int(value))
        return repr(value)
    return str(value)


# --------------------------------------------------------------------------- ordering

_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DIGITS_RE = re.compile(r"(\d+)")


def natural_key(value: Any) -> tuple:
    """Sort key for ids and labels in reading order.

    Whole numbers come first, by value; then text, compared piecewise with runs of
    digits by value and the rest case-insensitively (the original text breaks ties,
    so the order is total).

    >>> sorted(["C-10", "C-2", "c-1", "10", "2", "1.5"], key=natural_key)
    ['1.5', '2', '10', 'c-1', 'C-2', 'C-10']
    """
    text = cell_text(value).strip()
    if _NUMBER_RE.fullmatch(text):
        return (0, float(text), (), text)
    parts = _DIGITS_RE.split(text)
    # odd positions are the digit runs (re.split with one capturing group)
    key = tuple((0, int(p), "") if i % 2 else (1, 0, p.casefold()) for i, p in enumerate(parts))
    return (1, 0.0, key, text)


#: an id that is letters (and - _ : /) then one run of digits: its natural key is
#: (prefix casefolded, the number, the text) -- see :func:`natural_sorted`
_PREFIX_NUMBER_RE = re.compile(r"([A-Za-z_][A-Za-z_:/-]*)([0-9]+)")


def natural_sorted(values: Iterable[Any]) -> list:
    """``sorted(values, key=natural_key)``, by whole columns when every value is a ``str`` id
    of the shape ``C0000123`` (letters, then one run of digits): then the key compares exactly
    as ``(prefix.casefold(), int(digits), text)`` does; anything else sorts with the key.

    >>> natural_sorted(["c-10", "C-2", "c-1", "C-1"])
    ['C-1', 'c-1', 'C-2', 'c-10']
    """
    values = list(values)
    if len(values) >= _ARROW_SORT_AT and "pyarrow" in sys.modules:  # (loaded with pandas: never imported here)
        fast = _natural_sorted_arrow(values)
        if fast is not None:
            return fast
    parts = [_PREFIX_NUMBER_RE.fullmatch(v) if type(v) is str else None for v in values]
    if not values or None in parts:
        return sorted(values, key=natural_key)
    return [
        v
        for _, _, v in sorted(
            (m.group(1).casefold(), int(m.group(2)), v)
            for m, v in zip(parts, values)  # type: ignore[union-attr]
        )
    ]


#: from this many values :func:`natural_sorted` tries whole columns (pyarrow, when pandas loaded it)
_ARROW_SORT_AT = 2000


def _natural_sorted_arrow(values: list) -> list | None:
    """:func:`natural_sorted` of distinct ids of the shape ``C0000123`` by whole columns: the
    prefix and the digits split by one regex pass (pyarrow), then one ``lexsort`` by (prefix
    casefolded, number).  ``None`` -- the caller sorts as before -- when a value is not text of
    that shape, has more than 18 digits, or two values share (prefix casefolded, number): only
    there would the text itself break the tie."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not all(type(v) is str for v in values):
        return None
    texts = pa.array(values, pa.string())
    parts = pc.extract_regex(texts, r"^(?P<p>[A-Za-z_][A-Za-z_:/-]*)(?P<d>[0-9]+)$")
    if parts.null_count:
        return None
    prefix, digits = parts.field("p"), parts.field("d")
    if not pc.all(pc.equal(pc.binary_join_element_wise(prefix, digits, ""), texts)).as_py():
        return None  # (a line break the pattern's $ let through)
    if pc.max(pc.utf8_length(digits)).as_py() > 18:
        return None  # beyond int64
    number = pc.cast(digits, pa.int64()).to_numpy()
    folded = pc.utf8_lower(prefix).to_numpy(zero_copy_only=False)  # ASCII letters: lower() is casefold()
    names = sorted(set(folded.tolist()))
    rank = {n: k for k, n in enumerate(names)}
    prefix_rank = (
        np.array([rank[n] for n in folded.tolist()], dtype=np.int64)
        if len(names) > 1
        else np.zeros(len(values), dtype=np.int64)
    )
    order = np.lexsort((number, prefix_rank))
    p, n = prefix_rank[order], number[order]
    if ((p[1:] == p[:-1]) & (n[1:] == n[:-1])).any():
        return None
    return [values[i] for i in order.tolist()]


def is_number(value: Any) -> bool:
    """True when ``value`` spells a finite number (``natural_key`` orders it by value)."""
    return natural_key(value)[0] == 0


# --------------------------------------------------------------------------- XML / Label Studio

_XML_ILLEGAL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_LS_VARIABLE_RE = re.compile(r"\$(?=[\w\[\].{}])")


def xml_text(text: Any) -> str:
    """``text`` made XML-legal: characters XML 1.0 cannot hold become U+FFFD."""
    return _XML_ILLEGAL_RE.sub("\ufffd", "" if text is None else str(text))


def ls_text(text: Any) -> str:
    """A string displayed in a Label Studio config: XML-legal, and with no ``$name``
    that Label Studio would substitute from task data (``$`` -> full-width ``＄``).

    >>> ls_text("costs $case_text")
    'costs ＄case_text'
    """
    return _LS_VARIABLE_RE.sub("\uff04", xml_text(text))


# --------------------------------------------------------------------------- spreadsheets

#: Excel's maximum number of characters (UTF-16 code units) in one cell.
EXCEL_CELL_LIMIT = 32_767

#: first characters that make a spreadsheet evaluate a cell as a formula
FORMULA_TRIGGERS = frozenset("=+-@\t\r\uff1d\uff0b\uff0d\uff20")

#: characters the xlsx (XML 1.0) format cannot hold (openpyxl's ILLEGAL_CHARACTERS_RE)
_ILLEGAL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")

TRUNCATION_MARKER = " … [cut at Excel's cell limit: {n:,} more characters not shown]"


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
    >>> neutralize_formula("  @SUM(A1)")
    "'  @SUM(A1)"
    >>> neutralize_formula("Supported")
    'Supported'
    """
    text = cell_text(value)
    return "'" + text if needs_neutralizing(text) else text


def unneutralize_formula(text: Any) -> str:
    """Invert :func:`neutralize_formula` (drop the one quote it added)."""
    text = cell_text(text)
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
    return truncate_for_excel(neutralize_formula(escape_illegal(cell_text(value))), limit)


# --------------------------------------------------------------------------- Markdown

_ENTITY_AMP_RE = re.compile(r"&(?=#?\w+;)")


#: Markdown syntax a text could carry into a report: links and images (``[`` ``]``), emphasis and
#: strikethrough (``*`` ``~``), code spans, table cells; ``_`` only where it can open or close emphasis
_MD_PUNCT_RE = re.compile(r"[\\`*\[\]~|]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
#: a line start that Markdown reads as a heading, a list item or a rule
_MD_LINE_START_RE = re.compile(r"^(\s*(?:\d+)?)(#+|[+=.)-])(?=\s|$)")


def visible_controls(value: Any) -> str:
    """``value`` with every bidi control (embeddings, overrides, isolates, and the LRM / RLM /
    ALM marks) shown as its escape, e.g. ``\\u202e``: the text is shown as it is, never
    reordered on screen.  Used by :func:`md_escape` and the HTML report.

    >>> visible_controls("abc\u202edef")
    'abc\\\\u202edef'
    """
    return _BIDI_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", cell_text(value))


def md_escape(value: Any) -> str:
    """Escape text for one Markdown line or table cell: no raw HTML (``<``, ``>``,
    entity-like ``&...;``), no table breaks (pipes, newlines), no code spans, no links,
    images, emphasis or strikethrough (``[ ] * _ ~`` escaped; ``_`` inside a word, as in
    ``onc_a``, cannot emphasise and stays), no heading or list from a leading ``#``,
    ``-`` or ``1.``; bidi controls shown as escapes (:func:`visible_controls`).  A plain
    ``&`` stays readable.

    >>> md_escape("<b>a|b</b> & `x` &amp;")
    '&lt;b&gt;a\\\\|b&lt;/b&gt; & \\\\`x\\\\` &amp;amp;'
    >>> md_escape("[click](http://x) **bold** _it_ onc_a")
    '\\\\[click\\\\](http://x) \\\\*\\\\*bold\\\\*\\\\* \\\\_it\\\\_ onc_a'
    """
    text = _ENTITY_AMP_RE.sub("&amp;", visible_controls(value)).replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    text = _MD_PUNCT_RE.sub(lambda m: "\\" + m.group(), text)
    return _MD_LINE_START_RE.sub(lambda m: m.group(1) + "\\" + m.group(2), text, count=1)


def md_table(head: Sequence[Any], rows: Iterable[Sequence[Any]], right: Iterable[int] = (), escape: bool = True) -> str:
    """A GitHub-flavoured Markdown table; columns in ``right`` are right-aligned.
    Cells are escaped with :func:`md_escape` unless ``escape`` is false (cells that
    already hold Markdown)."""
    right = set(right)
    cell = md_escape if escape else (lambda c: str(c))
    out = [
        "| " + " | ".join(cell(h) for h in head) + " |",
        "|" + "|".join("---:" if i in right else "---" for i in range(len(head))) + "|",
    ]
    out += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------- time


def utc_now() -> str:
    """Now as ISO 8601 in UTC, whole seconds (``2026-01-31T09:15:00+00:00``)."""
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


# --------------------------------------------------------------------------- terminals

#: characters that end a line somewhere (terminals, editors, ``str.splitlines``)
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: bidi embeddings, overrides and isolates
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

_BIDI_RE = re.compile("[" + BIDI_CONTROLS + "\u200e\u200f\u061c]")
_TERMINAL_STRIP_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI_CONTROLS + "]")
_BREAK_RE = re.compile("[" + LINE_BREAKS + "]")


def _escape_invisible(text: str) -> str:
    """``text`` with each character that prints as nothing or as a plain space escaped: format
    characters (Unicode Cf: zero-width space and joiners, bidi controls and marks, BOM, soft
    hyphen) and spaces other than U+0020 (Zs)."""
    if text.isascii():
        return text
    return "".join(
        c.encode("unicode_escape").decode("ascii") if unicodedata.category(c) in ("Cf", "Zs") and c != " " else c
        for c in text
    )


def terminal_text(value: Any) -> str:
    """``value`` as text fit for a terminal: control characters removed (newline and tab kept);
    a character that prints as nothing or as a plain space (a bidi control, a zero-width space,
    a no-break space: :func:`_escape_invisible`) shown as its escape, so a table row shows the id
    or name that is there (``C-1\\u200b`` never reads as ``C-1``).

    >>> terminal_text("ok\\x1b[31m red\\u202e txt\\u200b\\r\\nnext")
    'ok[31m red\\\\u202e txt\\\\u200b\\nnext'
    """
    return _TERMINAL_STRIP_RE.sub("", _escape_invisible(str(value)))


def one_line(message: Any) -> str:
    """``message`` as one terminal line: each line break, and each character that prints as
    nothing or as a plain space -- a zero-width space, a bidi control or mark, a BOM, a no-break
    space (Unicode Cf and Zs) -- shown as a visible escape (the line names the text that is
    there: ``'Supported\\u200b'`` never reads as an allowed ``Supported``); other control
    characters removed.

    >>> one_line("C1: rationale 'a\\rb\\u2028c'\\x07")
    "C1: rationale 'a\\\\rb\\\\u2028c'"
    >>> one_line("id 'C-1\\u200b' or 'C-2\\u202e' or 'C\\xa03'")
    "id 'C-1\\\\u200b' or 'C-2\\\\u202e' or 'C\\\\xa03'"
    """
    text = _BREAK_RE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(message))
    return terminal_text(text)


# --------------------------------------------------------------------------- names


def _squash(text: str) -> str:
    """A name reduced for matching: case-folded, letters and digits only (``PD-L1`` -> ``pdl1``)."""
    return "".join(ch for ch in str(text).casefold() if ch.isalnum())


def close_matches(word: str, choices, n: int = 3) -> list[str]:
    """The ``choices`` a user probably meant by ``word``, best first.

    Names equal after dropping case and punctuation come first (``PD-L1`` ->
    ``pdl1``), then names where one contains the other (``biomarker`` ->
    ``biomarker_assay``), then close spellings (difflib ratio >= 0.6).

    >>> close_matches("onc_c", ["onc_a", "onc_b", "rev_1"])
    ['onc_a', 'onc_b']
    >>> close_matches("PD-L1", ["pdl1", "ecog"])
    ['pdl1']
    >>> close_matches("dr_chair", ["a", "b", "c"])
    []
    """
    import difflib

    choices = [str(c) for c in dict.fromkeys(choices)]
    key = _squash(word)
    if not key:
        return []
    squashed = {c: _squash(c) for c in choices}
    exact = [c for c in choices if squashed[c] == key]
    if exact:
        return exact[:n]
    # containment only between names of 3+ characters: rater 'a' is no other spelling of 'dr_chair'
    contains = [
        c for c in choices if len(squashed[c]) >= 3 and len(key) >= 3 and (key in squashed[c] or squashed[c] in key)
    ]
    by_key: dict[str, list[str]] = {}
    for c in choices:
        by_key.setdefault(squashed[c], []).append(c)
    scored = []
    for i, k in enumerate(by_key):
        ratio = difflib.SequenceMatcher(None, key, k).ratio()
        if ratio >= 0.6:
            scored.append((-ratio, i, k))
    close = [c for _, _, k in sorted(scored)[:n] for c in by_key[k]]
    return list(dict.fromkeys(contains + close))[:n]


def progress_bar(iterable=None, **kwargs):
    """A tqdm progress bar on stderr.  When stderr is not a terminal (a log file, CI), the bar
    keeps its last state and ends its line (``leave=True``), so the next line of the log is
    not glued to it after a carriage return."""
    import sys

    from tqdm import tqdm

    kwargs.setdefault("file", sys.stderr)
    stream = kwargs["file"]
    if not (hasattr(stream, "isatty") and stream.isatty()):
        kwargs["leave"] = True
    return tqdm(iterable, **kwargs)


#: characters drawn like ``-`` (U+002D): hyphen, non-breaking hyphen, figure dash, en dash, em
#: dash, horizontal bar, minus sign, small and full-width hyphen-minus
DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d"
_DASH_TO_HYPHEN = {ord(c): "-" for c in DASHES}


def _drop_format(text: str) -> str:
    """``text`` without its invisible format characters (Unicode Cf: zero-width space, joiners,
    BOM, soft hyphen, bidi controls)."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def spelling_key(text: str) -> str:
    """The key under which two spellings read alike: outer blanks stripped, invisible characters
    dropped, Unicode NFKC form (NFC, and full-width or other compatibility forms as their plain
    letters), each dash look-alike (:data:`DASHES`) as ``-``.  Letter case is kept.

    >>> [spelling_key(x) for x in ("Zu\u0308rich", "none\u200b", "gpt\u20104o", "\uff47pt", "GPT")]
    ['Zürich', 'none', 'gpt-4o', 'gpt', 'GPT']
    """
    return unicodedata.normalize("NFKC", _drop_format(str(text).strip())).translate(_DASH_TO_HYPHEN)


def spelling_difference(a: str, b: str) -> str:
    """How two different texts with one :func:`spelling_key` differ, for a message ("look the
    same but differ in their Unicode form (NFC vs NFD ...)")."""
    if _drop_format(a) != a or _drop_format(b) != b:
        codes = sorted({f"U+{ord(c):04X}" for c in a + b if unicodedata.category(c) == "Cf"})
        return (
            f"look the same but one holds an invisible character ({', '.join(codes)}: a zero-width space, joiner "
            f"or mark pasted in)"
        )
    nfc_a, nfc_b = unicodedata.normalize("NFC", a), unicodedata.normalize("NFC", b)
    if nfc_a == nfc_b:
        return (
            "look the same but differ in their Unicode form (NFC vs NFD: an accent stored as one letter or as a "
            "combining mark)"
        )
    dashes = sorted({c for c in a + b if c in DASHES})
    if dashes and nfc_a.translate(_DASH_TO_HYPHEN) == nfc_b.translate(_DASH_TO_HYPHEN):
        named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c)}" for c in dashes)
        return (
            f"look the same but one writes a dash with another character ({named}) where the other has '-' "
            f"(U+002D HYPHEN-MINUS, typed by an editor's autocorrect)"
        )
    if unicodedata.normalize("NFKC", a) == unicodedata.normalize("NFKC", b):
        wide = sorted({c for c in a + b if unicodedata.normalize("NFKC", c) != c})
        named = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, '')}".rstrip() for c in wide[:3])
        return f"look alike but one is written in full-width or another compatibility form ({named}; Unicode NFKC)"
    return "look alike but differ in how they are written (a dash look-alike, a full-width or compatibility form)"


def shown_text(text: str) -> str:
    """``text`` quoted for a message, with its escapes beside it when it holds anything but
    printable ASCII (``'José' ('Jose\\u0301')``), so two look-alikes are told apart."""
    plain = text.encode("unicode_escape").decode("ascii")
    return repr(text) if plain == text or not text.isprintable() else f"{text!r} ('{plain}')"


def lookalike_pair(texts: Sequence[str]) -> tuple[int, int] | None:
    """The positions ``(i, j)``, ``i < j``, of the first two different texts in ``texts`` with one
    :func:`spelling_key` (they read alike), else ``None``.

    >>> lookalike_pair(["case_id", "onc_a", "onc_a\u200b"])
    (1, 2)
    >>> lookalike_pair(["onc_a", "ONC_A", "onc_a"]) is None
    True
    """
    seen: dict[str, int] = {}
    for j, t in enumerate(texts):
        i = seen.setdefault(spelling_key(t), j)
        if i != j and texts[i] != t:
            return i, j
    return None


def lookalike_columns_message(where: str, names: Sequence[Any]) -> str | None:
    """The one line refusing a header row (``names``, ``where``: the file and line) whose two
    column names read alike (:func:`lookalike_pair`: NFC / NFD, a zero-width space, a dash
    look-alike, a full-width form): each would be read as its own column, shown under one name.
    ``None`` when no two do.  Names that differ in letter case are visibly two."""
    texts = ["" if n is None else str(n).strip() for n in names]
    pair = lookalike_pair(texts)
    if pair is None:
        return None
    i, j = pair
    return (
        f"{where}: columns {i + 1} and {j + 1} are headed {shown_text(texts[i])} and {shown_text(texts[j])}, which "
        f"{spelling_difference(texts[i], texts[j])}: a reader cannot tell the two columns apart; rename one"
    )


def did_you_mean(word: str, choices) -> str:
    """``" (did you mean 'x'?)"`` / ``" (did you mean 'x' or 'y'?)"``, or ``""`` when nothing is close.

    >>> did_you_mean("onc_bb", ["onc_a", "onc_b"])
    " (did you mean 'onc_b' or 'onc_a'?)"

    A ``word`` that differs from a choice only in Unicode form, an invisible character, a dash
    look-alike or a full-width form (:func:`spelling_key`) is told how, as the two print alike:

    >>> print(did_you_mean("Jose\u0301", ["Jos\u00e9"])[:64])
     (did you mean 'José' ('Jos\\xe9')? they look the same but differ
    """
    choices = [str(c) for c in choices]
    twin = next((c for c in choices if c != word and spelling_key(c) == spelling_key(word)), None)
    if twin is not None:  # identical on screen: say how they differ
        return f" (did you mean {shown_text(twin)}? they {spelling_difference(word, twin)})"
    hits = close_matches(word, choices)
    if not hits:
        return ""
    return " (did you mean " + " or ".join(repr(h) for h in hits) + "?)"


def read_number(name: str, prefix: str = "") -> int | None:
    """The number a folder name reads as to a person, ``prefix`` (lower case) then digits: the
    name in Unicode NFKC form, its invisible (Cf), control and space characters dropped, letter
    case folded, digits of any script; ``None`` when it reads as no number.

    >>> [read_number(x) for x in ("1", "01", "1\u200b", " 2", "\uff13", "sub", "1a", "")]
    [1, 1, 1, 2, 3, None, None, None]
    >>> [read_number(x, "v") for x in ("v2", "V2", "v02", " v2\u200b", "2", "vx")]
    [2, 2, 2, 2, None, None]
    """
    text = unicodedata.normalize("NFKC", name)
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] not in "CZ" and not ch.isspace()).casefold()
    if not text.startswith(prefix):
        return None
    digits = text[len(prefix) :]
    return int(digits) if digits and all(ch.isdecimal() for ch in digits) else None


__all__ = [
    "DASHES",
    "lookalike_pair",
    "lookalike_columns_message",
    "read_number",
    "shown_text",
    "spelling_difference",
    "spelling_key",
    "natural_sorted",
    "EXCEL_CELL_LIMIT",
    "FORMULA_TRIGGERS",
    "cell_text",
    "close_matches",
    "cut_to_units",
    "did_you_mean",
    "progress_bar",
    "escape_illegal",
    "excel_safe_text",
    "is_number",
    "ls_text",
    "md_escape",
    "md_table",
    "natural_key",
    "one_line",
    "needs_neutralizing",
    "neutralize_formula",
    "terminal_text",
    "truncate_for_excel",
    "unneutralize_formula",
    "utc_now",
    "visible_controls",
    "xml_text",
]
