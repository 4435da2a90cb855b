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
  tab), even alone: what is printed would not be what the file holds;
* two names that differ only in a **dash look-alike** (``gpt-4o`` / ``gpt\u20104o``: a hyphen,
  en or em dash, minus sign or full-width hyphen-minus, :data:`DASHES`, where the other has
  ``-``) or only in a **full-width or other compatibility form** (``ｇｐｔ`` / ``gpt``, Unicode
  NFKC): what an autocorrecting editor or an East Asian input method types.

The values of a grouping column (``plan sample --by``, ``agree --by``, ``push --stratify-by``)
follow the same rule through :func:`check_value_spellings`: two values that differ only in
Unicode form, an invisible character, a dash look-alike or a full-width form would be two strata
printed under one name, so they are refused naming both rows; two values that differ only in
letter case (``Oncology`` / ``oncology``) are printed differently, so they stay two strata
(values are compared exactly) and a warning names them.

Unlike item ids (:func:`goldboard.cases.ids.id_key`), names are not compared as numbers: model
versions ``1.1`` and ``1.10`` are two models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from goldboard.cases.ids import escaped, invisible_chars
from goldboard.errors import GoldboardError
from goldboard.text import DASHES, did_you_mean, spelling_difference, spelling_key


def name_key(text: str) -> str:
    """The key under which two names count as one: :func:`spelling_key` (outer blanks stripped,
    invisible characters dropped, NFKC form, dash look-alikes as ``-``) with letter case folded.

    >>> [name_key(x) for x in ("GPT", " gpt", "gpt\\u200b", "Jose\\u0301", "1.10", "gpt\\u20104o")]
    ['gpt', 'gpt', 'gpt', 'josé', '1.10', 'gpt-4o']
    """
    return spelling_key(text).casefold()


def lookalike_kind(a: str, b: str) -> str:
    """How two different spellings with one :func:`name_key` differ, for a message: an invisible
    character, the Unicode form, a dash look-alike, a full-width (compatibility) form
    (:func:`goldboard.text.spelling_difference`), or letter case."""
    if spelling_key(a) == spelling_key(b):
        return spelling_difference(a, b)
    return "differ only in letter case"


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
    kind = lookalike_kind(a, b)
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
        kind = (
            lookalike_kind(name, twins[0])
            .split(" (")[0]
            .replace("look the same but ", "")
            .replace("look alike but ", "")
        )
        return f" (did you mean {twins[0]!r}? names are compared exactly: they {kind})"
    return did_you_mean(name, [str(k) for k in known])


def check_value_spellings(
    values: Sequence[str], where: Callable[[int], str], *, column: str, nouns: str = "strata", prefix: str = ""
) -> list[str]:
    """Refuse two values of grouping column ``column`` (``values`` one per row, ``where(i)`` the
    place of row ``i``; ``prefix``: the file, before the message) that differ only by Unicode form, an invisible character, a dash look-alike
    or a full-width form (one :func:`spelling_key`): they would be two ``nouns`` printed under one
    name.  Raises :class:`~goldboard.errors.GoldboardError` naming both rows and the difference.
    Returns a warning for each pair that differs only in letter case: kept as two (values are
    compared exactly), but a reader should know.

    >>> check_value_spellings(["Onc", "onc"], lambda i: f"row {i + 2}", column="specialty")[0][:60]
    "specialty: 'Onc' (row 2) and 'onc' (row 3) differ only in le"
    """
    first: dict[str, int] = {}
    for i, value in enumerate(values):
        first.setdefault(value, i)
    by_key: dict[str, str] = {}
    by_fold: dict[str, str] = {}
    warnings = []
    for value, i in first.items():
        other = by_key.setdefault(spelling_key(value), value)
        if other != value:
            raise GoldboardError(
                f"{prefix}{where(i)}: {column} {shown_name(value)} and {shown_name(other)} ({where(first[other])}) "
                f"{lookalike_kind(other, value)}; they would be two {nouns} shown under one name: write the value "
                f"one way"
            )
        twin = by_fold.setdefault(name_key(value), value)
        if twin != value:
            warnings.append(
                f"{prefix}{column}: {twin!r} ({where(first[twin])}) and {value!r} ({where(i)}) differ only in letter case: "
                f"counted as two {nouns} (values are compared exactly); write them one way if they are one"
            )
    return warnings


__all__ = [
    "DASHES",
    "spelling_key",
    "lookalike_kind",
    "check_value_spellings",
    "shown_name",
    "look_alike_hint",
    "name_key",
    "name_twins_message",
    "invisible_name_message",
    "check_file_names",
    "check_given_name",
]
