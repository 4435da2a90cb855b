"""Checks of a name read from a data file: a model in a predictions file, a rater in a plain
ratings file (``agree TABLE``, ``flag RATINGS``, ``judge RATINGS``).

A name is a key every result row hangs on, so two spellings that a reader cannot tell apart
would be two models or two raters shown side by side under one name ("2 raters (josé, josé)").
The readers strip the blanks around a name (``'onc_a '`` *is* ``'onc_a'``), then
:func:`check_file_names` refuses, with one line naming the file, both rows and the difference:

* two names that differ only in **letter case** (``gpt`` / ``GPT``), only in their **Unicode
  form** (``José`` typed with one letter or with a combining accent) or only by an **invisible
  character** (``gpt`` / ``gpt<U+200B>``): one model or rater written two ways;
* a name holding an **invisible or control character** (a zero-width space, a bidi control, a
  tab), even alone: what is printed would not be what the file holds.

Unlike item ids (:func:`goldboard.cases.ids.id_key`), names are not compared as numbers: model
versions ``1.1`` and ``1.10`` are two models.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence

from goldboard.cases.ids import escaped, invisible_chars, twin_kind, visible
from goldboard.errors import GoldboardError
from goldboard.text import did_you_mean


def name_key(text: str) -> str:
    """The key under which two names count as one: outer blanks stripped, invisible characters
    dropped, Unicode NFC form, letter case folded.

    >>> [name_key(x) for x in ("GPT", " gpt", "gpt\\u200b", "Jose\\u0301", "1.10")]
    ['gpt', 'gpt', 'gpt', 'josé', '1.10']
    """
    return unicodedata.normalize("NFC", visible(text.strip())).casefold()


def shown_name(text: str) -> str:
    """``text`` quoted for a message; with its escapes beside it when it holds anything but
    printable ASCII (``'José' ('Jose\\u0301')``), so two look-alikes are told apart."""
    plain = escaped(text)
    return repr(text) if plain == text or not text.isprintable() else f"{text!r} ('{plain}')"


def _label(noun: str, column: str) -> str:
    """``rater`` for a name from column ``rater``, else ``model_name: model``."""
    return noun if column == noun else f"{column}: {noun}"


def name_twins_message(noun: str, column: str, a: str, where_a: str, b: str, where_b: str) -> str:
    """The one line refusing two spellings ``a`` (first at ``where_a``) and ``b`` (at ``where_b``)
    of one ``noun`` ("model", "rater") read from column ``column``."""
    kind = twin_kind(a, b)
    return (
        f"{where_b}: {_label(noun, column)} {shown_name(b)} and {shown_name(a)} ({where_a}) {kind}; they would count as two "
        f"{noun}s shown under one name: write the {noun} one way"
    )


def invisible_name_message(noun: str, column: str, name: str, where: str) -> str:
    """The one line refusing a ``noun`` name holding an invisible or control character."""
    return (
        f"{where}: {_label(noun, column)} {shown_name(name)} holds an invisible or control character "
        f"({', '.join(invisible_chars(name))}) that a reader cannot see; delete it"
    )


def check_file_names(names: Sequence[str], where: Callable[[int], str], *, noun: str, column: str) -> None:
    """Refuse look-alike names: ``names`` one per row as the reader uses them (blanks stripped),
    ``where(i)`` the ``file:line`` of row ``i`` (asked only for a message).  Raises :class:`~goldboard.errors.GoldboardError` on the
    first two names with one :func:`name_key` (naming both rows and how they differ), then on the
    first name holding an invisible or control character.  Each distinct name is looked at once."""
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name not in first:
            first[name] = i
    by_key: dict[str, str] = {}
    for name, i in first.items():
        key = name_key(name)
        other = by_key.setdefault(key, name)
        if other != name:
            raise GoldboardError(name_twins_message(noun, column, other, where(first[other]), name, where(i)))
    for name, i in first.items():
        if invisible_chars(name):
            raise GoldboardError(invisible_name_message(noun, column, name, where(i)))


def check_given_name(name: str, noun: str, param: str) -> None:
    """A ``noun`` name given on the command line (``score --model``) holding an invisible or
    control character is an error naming library parameter ``param``."""
    if invisible_chars(name):
        raise GoldboardError(
            f"{shown_name(name)}: the {noun} name holds an invisible or control character "
            f"({', '.join(invisible_chars(name))}); type it again",
            param=param,
        )


def look_alike_hint(name: str, known) -> str:
    """``" (did you mean 'gpt'? ...)"`` for a ``name`` not among ``known``: the known name it
    differs from only by case, Unicode form or an invisible character, else the closest ones
    (:func:`goldboard.text.did_you_mean`), else ``""``.

    >>> look_alike_hint("GPT", ["gpt", "claude"])
    " (did you mean 'gpt'? names are compared exactly: they differ only in letter case)"
    """
    twins = [k for k in map(str, known) if name_key(k) == name_key(name)]
    if twins:
        kind = twin_kind(name, twins[0]).split(" (")[0].replace("look the same but ", "")
        return f" (did you mean {twins[0]!r}? names are compared exactly: they {kind})"
    return did_you_mean(name, [str(k) for k in known])


__all__ = [
    "shown_name",
    "look_alike_hint",
    "name_key",
    "name_twins_message",
    "invisible_name_message",
    "check_file_names",
    "check_given_name",
]
