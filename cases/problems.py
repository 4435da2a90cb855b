"""Problems found in case and model-output files, reported all at once; errors about an argument.

Each problem renders as ``file:line: field: problem`` (``file: field: problem``
when it concerns the whole file), the way compilers report errors, so a user can
jump to the line.  ``level`` is ``"error"`` (the files cannot be used) or
``"warning"`` (usable, but look at it).
"""

from __future__ import annotations

from dataclasses import dataclass

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
