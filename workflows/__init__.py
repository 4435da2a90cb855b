"""Study-level workflows (layer L5): every orchestration that combines a
:class:`~goldboard.study.Study` workspace with the pure layers below.

The CLI (L6) parses options and calls one of these; each reads what it needs
from the study (ratings, schema, raters, units, decisions, gold releases) and
passes plain DataFrames, a Schema and paths to ``analysis``/``adjudicate`` (L3)
and to the writers of ``exports``/``annotate`` (L4).

The names below are loaded on first use (PEP 562): ``from goldboard.workflows import
agreement_for_study`` imports :mod:`goldboard.workflows.agreement` only, not the report
(scipy.stats, matplotlib) or the workbook (openpyxl), so a command pays for what it uses.
"""

from __future__ import annotations

import importlib

#: public name -> the submodule that defines it
_WHERE = {
    "export_gold": "adjudication",
    "import_study_sheet": "adjudication",
    "write_study_workbook": "adjudication",
    "agreement_for_study": "agreement",
    "unit_groups": "agreement",
    "pull_projects": "projects",
    "build_report": "report",
    "write_report": "report",
    "GoldSource": "score",
    "resolve_gold_source": "score",
    "resolve_schema": "score",
    "run_score": "score",
    "add_rater": "study_edit",
    "pull_table": "tables",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
