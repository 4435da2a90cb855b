"""Problems found in case and model-output files, reported all at once; errors about an argument.

Each problem renders as ``file:line: field: problem`` (``file: field: problem``
when it concerns the whole file), the way compilers report errors, so a user can
jump to the line.  ``level`` is ``"error"`` (the files cannot be used) or
``"warning"`` (usable, but look at it).
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Formatter
from typing import Any

from goldboard.errors import GoldboardError
from goldboard.text import one_line

#: at most this many problems are spelled out in a :class:`CaseFileError` message
MAX_PROBLEMS_IN_MESSAGE = 100


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    field: str
    message: str
    level: str = "error"

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        field = f" {self.field}:" if self.field else ""
        warn = " warning:" if self.level == "warning" else ""
        return one_line(f"{where}:{field}{warn} {self.message}")

    @property
    def is_error(self) -> bool:
        return self.level == "error"


class CaseFileError(GoldboardError):
    """Case or output files are invalid; ``.problems`` holds every problem found."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        errors = [p for p in self.problems if p.is_error]
        if len(errors) == 1:  # one problem: one line
            super().__init__(str(errors[0]))
            return
        shown = errors[:MAX_PROBLEMS_IN_MESSAGE]
        head = f"{len(errors)} problem{'s' if len(errors) != 1 else ''} in the case files:"
        lines = [head, *(str(p) for p in shown)]
        if len(errors) > len(shown):
            lines.append(f"... and {len(errors) - len(shown)} more (run `goldboard cases validate` to list all)")
        super().__init__("\n".join(lines))


def errors_only(problems: list[Problem]) -> list[Problem]:
    return [p for p in problems if p.is_error]


class ParamError(GoldboardError):
    """An error whose sentence names library parameters where it needs them -- after the file,
    or in a hint -- instead of only in front (:class:`GoldboardError`'s ``param: message``).

    ``template`` is a :meth:`str.format` string: a field that is not one of the keyword
    ``values`` is a parameter name and reads as that name, or as the flag the CLI maps it to
    (:attr:`flags`, filled by :func:`goldboard.cli.flag_for`); ``values`` (file names, column
    names, cells) are inserted as they are, never read as a template.  The first parameter is
    :attr:`param`.

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
        super().__init__(plain, param=self.params[0] if self.params else None)
        #: parameter -> flag (set by the CLI)
        self.flags: dict[str, str] = {}

    def __str__(self) -> str:
        names = {p: self.flags.get(p) or (self.flag if p == self.param else None) or p for p in self.params}
        return self.template.format(**names, **self.values)
