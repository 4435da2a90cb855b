"""goldboard: clinician label studies for medical-AI safety benchmarks.

Package layout (the repository root *is* the ``goldboard`` package), in layers: an
import only points down (``tests/test_layers.py`` checks every import), and no function is
over 80 lines of code without a reason in its docstring (``tests/test_function_size.py``).

- L0 ``goldboard.errors``, ``goldboard.text``, ``goldboard.fileio`` — errors (naming library
  parameters; the CLI maps them to flags); the text rules
  (cell text, natural sort, formula guard, Markdown/XML escaping, UTC time); file helpers
- L1 ``goldboard.label_configs`` — label schemas (data) and Label Studio XML generated from them
- L2 ``goldboard.cases``, ``goldboard.study`` — cases, model outputs, the items pushed, the ratings table
  (``cases.ratings``: columns, readers, ``RatingGrid``), synthetic cases; the ``Study`` workspace
- L3 ``goldboard.analysis``, ``goldboard.adjudicate`` — agreement, scoring, flags, decisions,
  gold resolution: DataFrames/Schema/paths in, dicts/DataFrames out; never a ``Study``
- L4 ``goldboard.annotate``, ``goldboard.exports`` — the Label Studio adapter (server, push,
  pull); workbook, gold releases, report rendering
- L5 ``goldboard.workflows`` — study-level orchestration combining L3 and L4
- L6 ``goldboard.cli``, ``goldboard.demo``, ``goldboard.api`` — the thin ``goldboard`` click layer,
  the demo, and the Python API

The Python API (``import goldboard as gb``; ``docs/python-api.md``) is the names of
:data:`__all__`, defined in :mod:`goldboard.api` and handed on from here on first use, so
``import goldboard`` loads nothing but this file (``tests/test_cli_startup.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: the public API: each name is :mod:`goldboard.api`'s (``__version__`` is this file's)
__all__ = [
    "AgreementResult",
    "JudgeResult",
    "Study",
    "__version__",
    "agreement",
    "example_path",
    "example_study",
    "flags",
    "gold",
    "judge_test",
    "open_study",
    "ratings",
    "read_table",
]

if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ imports the API on first use
    from goldboard.api import (  # noqa: F401
        AgreementResult,
        JudgeResult,
        Study,
        agreement,
        example_path,
        example_study,
        flags,
        gold,
        judge_test,
        open_study,
        ratings,
        read_table,
    )


def __getattr__(name: str) -> Any:
    """``goldboard.agreement`` and the rest of :data:`__all__`: imported from :mod:`goldboard.api` when first used."""
    if name in __all__:
        from goldboard import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'goldboard' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
