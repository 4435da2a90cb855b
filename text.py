"""Text rules shared by every layer (L0: imports nothing from goldboard).

- :func:`terminal_text` makes untrusted data safe to show on a terminal: C0/C1 control
  characters (ANSI escape sequences, bell, NUL, a bare carriage return that would
  overwrite the line) and the bidi embeddings, overrides and isolates that can reorder
  what a reader sees (U+202A-U+202E, U+2066-U+2069; "Trojan Source", CVE-2021-42574)
  are removed; newline and tab stay.
- :func:`one_line` is the same for a message that must stay on one line (every error
  the CLI prints): line breaks inside quoted data are shown as visible escapes
  (``\\n``, ``\\r``, ``\\u2028``).
"""

from __future__ import annotations

import re
from typing import Any

#: characters that end a line somewhere (terminals, editors, ``str.splitlines``)
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
#: bidi embeddings, overrides and isolates
BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

_TERMINAL_STRIP_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + BIDI_CONTROLS + "]")
_BREAK_RE = re.compile("[" + LINE_BREAKS + "]")


def terminal_text(value: Any) -> str:
    """``value`` as text fit for a terminal: control and bidi-control characters removed
    (newline and tab kept).

    >>> terminal_text("ok\\x1b[31m red\\u202e txt\\r\\nnext")
    'ok[31m red txt\\nnext'
    """
    return _TERMINAL_STRIP_RE.sub("", str(value))


def one_line(message: Any) -> str:
    """``message`` as one terminal line: each line break shown as a visible escape,
    other control and bidi-control characters removed.

    >>> one_line("C1: rationale 'a\\rb\\u2028c'\\x07")
    "C1: rationale 'a\\\\rb\\\\u2028c'"
    """
    text = _BREAK_RE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(message))
    return terminal_text(text)
