"""One exception type for every user-facing failure.

Library code raises :class:`GoldboardError` with a one-line message that names
the file, row/cell and field; the CLI prints it as ``Error: <message>`` and exits
non-zero, never with a traceback.

An error about an argument names the library *parameter* (``param="severity_field"``);
``str(err)`` reads ``severity_field: ...``.  The CLI maps the parameter to the flag the
user typed (``--field`` for ``goldboard score``): see :func:`goldboard.cli.flag_for`.
"""

from __future__ import annotations

from collections.abc import Iterable
from string import Formatter
from typing import Any

from goldboard.text import did_you_mean


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


class ParamError(GoldboardError):
    """An error whose sentence names library parameters where it needs them -- after the file,
    or in a hint -- instead of only in front (:class:`GoldboardError`'s ``param: message``).

    ``template`` is a :meth:`str.format` string: a field that is not one of the keyword
    ``values`` is a parameter name and reads as that name, or as the flag the CLI maps it to
    (:attr:`flags`, filled by :func:`goldboard.cli.flag_for`); ``values`` (file names, column
    names, cells) are inserted as they are, never read as a template.  The first parameter is
    :attr:`param`.  It combines with another error class (``class ProjectGone(ParamError,
    ProjectNotFound)``): the other class's ``exit_code`` holds.

    >>> err = ParamError("{where}: {item_col} {col!r}: no such column", where="r.csv", col="case")
    >>> str(err)
    "r.csv: item_col 'case': no such column"
    >>> err.flags["item_col"] = "--item-col"
    >>> str(err)
    "r.csv: --item-col 'case': no such column"
    """

    def __init__(self, template: str, /, **values: Any) -> None:
        self.template = template
        self.values = values
        names = [name for _, name, _, _ in Formatter().parse(template) if name]
        #: the parameters the sentence names, in order
        self.params = list(dict.fromkeys(n for n in names if n not in values))
        plain = template.format(**{p: p for p in self.params}, **values)
        GoldboardError.__init__(self, plain, param=self.params[0] if self.params else None)
        #: parameter -> flag (set by the CLI)
        self.flags: dict[str, str] = {}

    def __str__(self) -> str:
        names = {p: self.flags.get(p) or (self.flag if p == self.param else None) or p for p in self.params}
        return self.template.format(**names, **self.values)


class LabelStudioError(GoldboardError):
    """Label Studio was unreachable, refused us, or answered something unexpected."""

    exit_code = 2


class GoldboardWarning(UserWarning):
    """Something the user should know that does not stop the command (the CLI prints
    it as ``Warning: <message>``)."""


def check_names(names, known, *, param: str, what: str) -> list[str]:
    """``names`` (in order, duplicates dropped) when each is one of ``known``; else a
    :class:`GoldboardError` about parameter ``param`` naming the unknown name, the known names
    and the closest ones.  ``what`` completes "is not ...", e.g. ``"a rater of this study"``.

    >>> try:
    ...     check_names(["onc_a", "onc_c"], ["onc_a", "onc_b"], param="raters", what="a rater of this study")
    ... except GoldboardError as exc:
    ...     print(exc)
    raters: 'onc_c' is not a rater of this study (onc_a, onc_b) (did you mean 'onc_a' or 'onc_b'?)
    """
    known = [str(k) for k in known]
    out = []
    for name in names:
        if name not in known:
            raise GoldboardError(
                f"{name!r} is not {what} ({', '.join(known) or 'none'}){did_you_mean(name, known)}", param=param
            )
        if name not in out:
            out.append(name)
    return out


#: words goldboard writes in its own files and reports next to rater names, never a rater's
#: name (casefolded): the gold methods (``goldboard.adjudicate.gold.METHODS``), a decision
#: that leaves an item open and the empty set of a multi-select decision
#: (``goldboard.adjudicate.decisions``), the embedded server's admin, and the gold column
RESERVED_RATER_NAMES = frozenset({"unresolved", "unanimous", "adjudicated", "single", "none", "gold", "admin"})


#: the longest rater name (a Label Studio username holds 150 characters; a column header far fewer)
MAX_RATER_NAME = 64


def check_rater_name(name: str, param: str) -> None:
    """Rater names are ids: ASCII letters, digits, ``_ - .``, and not a word goldboard writes
    itself (:data:`RESERVED_RATER_NAMES`: "16 unresolved" must not read as a rater's count).
    The one check of a rater name: ``study init``, ``study add-rater``, ``server add-raters``,
    ``--rater`` mappings); an error names library parameter ``param``."""
    if len(name) > MAX_RATER_NAME:  # a pasted paragraph: every table and column header would carry it
        raise GoldboardError(
            f"{name[:20]!r}... ({len(name)} characters): a rater name is at most {MAX_RATER_NAME} characters",
            param=param,
        )
    if not name or not name.isascii() or not name.replace("_", "").replace("-", "").replace(".", "").isalnum():
        raise GoldboardError(f"{name!r}: use letters, digits, _ - . only", param=param)
    if not name[0].isalnum():  # '-1-x' reads as an option on every command line that names the rater
        raise GoldboardError(f"{name!r}: begin a rater name with a letter or digit", param=param)
    if name == "admin":
        raise GoldboardError("'admin' is reserved for the embedded server's admin user", param=param)
    if name.casefold() in RESERVED_RATER_NAMES:
        raise GoldboardError(
            f"{name!r} is a word goldboard writes itself (gold methods, decisions: "
            f"{', '.join(sorted(RESERVED_RATER_NAMES - {'admin'}))}); give the rater another name",
            param=param,
        )


def case_twin(name: str, names: Iterable[str]) -> str | None:
    """The name of ``names`` that differs from ``name`` only in letter case (``onc_a`` /
    ``ONC_A``): two such raters are one person typed twice, or two people a reader cannot
    tell apart."""
    return next((n for n in names if n != name and n.casefold() == name.casefold()), None)


def check_rater_map(rater_map: dict[str, str], raters: list[str], param: str = "rater_map") -> None:
    """A ``NAME=RATER`` mapping (a table's rater spelling or a Label Studio user -> study
    rater) must keep raters apart: every RATER is a rater of the study, no two names go to
    one rater, and a name that is itself a study rater maps only to that rater.  Otherwise
    one rater's ratings would replace or merge with another's.  An error names library
    parameter ``param`` (``pull``'s ``--rater``)."""
    seen: dict[str, str] = {}
    for key, rater in rater_map.items():
        if rater not in raters:
            raise ParamError(
                "{" + param + "} {key}={rater}: {rater!r} is not a rater of this study{hint} (raters: {raters})",
                key=key,
                rater=rater,
                hint=did_you_mean(rater, raters),
                raters=", ".join(raters),
            )
        if rater in seen:
            raise ParamError(
                "{" + param + "} {first}={rater} and {key}={rater}: two names mapped to one rater would merge "
                "two people's ratings; map each name to its own rater",
                first=seen[rater],
                key=key,
                rater=rater,
            )
        if key in raters and key != rater:
            raise ParamError(
                "{" + param + "} {key}={rater}: {key!r} is itself a rater of this study; its ratings would be read "
                "as {rater}'s (merging two raters); map it to {key} or leave it out",
                key=key,
                rater=rater,
            )
        seen[rater] = key
