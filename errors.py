"""One exception type for every user-facing failure.

Library code raises :class:`GoldboardError` with a one-line message that names
the file, row/cell and field; the CLI prints it as ``Error: <message>`` and exits
non-zero, never with a traceback.

An error about an argument names the library *parameter* (``param="severity_field"``);
``str(err)`` reads ``severity_field: ...``.  The CLI maps the parameter to the flag the
user typed (``--field`` for ``goldboard score``): see :func:`goldboard.cli.flag_for`.
"""

from __future__ import annotations


class GoldboardError(Exception):
    """A user-facing error; ``str(err)`` is one line naming what and where."""

    exit_code = 1

    def __init__(self, message: str = "", *, param: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: the library parameter the error is about (None: not about one argument)
        self.param = param
        #: set by the CLI: the flag that carries ``param`` in the command that ran
        self.flag: str | None = None

    def __str__(self) -> str:
        name = self.flag or self.param
        return f"{name}: {self.message}" if name else self.message


class LabelStudioError(GoldboardError):
    """Label Studio was unreachable, refused us, or answered something unexpected."""

    exit_code = 2


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
    contains = [c for c in choices if squashed[c] and len(key) >= 3 and (key in squashed[c] or squashed[c] in key)]
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


def did_you_mean(word: str, choices) -> str:
    """``" (did you mean 'x'?)"`` / ``" (did you mean 'x' or 'y'?)"``, or ``""`` when nothing is close."""
    hits = close_matches(word, choices)
    if not hits:
        return ""
    return " (did you mean " + " or ".join(repr(h) for h in hits) + "?)"


def check_names(names, known, *, option: str, what: str) -> list[str]:
    """``names`` (in order, duplicates dropped) when each is one of ``known``; else a
    :class:`GoldboardError` naming ``option``, the unknown name, the known names and the
    closest ones.  ``what`` completes "is not ...", e.g. ``"a rater of this study"``.

    >>> try:
    ...     check_names(["onc_a", "onc_c"], ["onc_a", "onc_b"], option="--raters", what="a rater of this study")
    ... except GoldboardError as exc:
    ...     print(exc)
    --raters: 'onc_c' is not a rater of this study (onc_a, onc_b) (did you mean 'onc_a' or 'onc_b'?)
    """
    known = [str(k) for k in known]
    out = []
    for name in names:
        if name not in known:
            raise GoldboardError(
                f"{option}: {name!r} is not {what} ({', '.join(known) or 'none'}){did_you_mean(name, known)}"
            )
        if name not in out:
            out.append(name)
    return out
