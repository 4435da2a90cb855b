"""Study-level workflows (layer L5): every orchestration that combines a
:class:`~goldboard.study.Study` workspace with the pure layers below.

The CLI (L6) parses options and calls one of these; each reads what it needs
from the study (ratings, schema, raters, units, decisions, gold releases) and
passes plain DataFrames, a Schema and paths to ``analysis``/``adjudicate`` (L3)
and to the writers of ``exports``/``annotate`` (L4).
"""

from __future__ import annotations

from goldboard.workflows.adjudication import export_gold, import_study_sheet, write_study_workbook
from goldboard.workflows.agreement import agreement_for_study, unit_groups
from goldboard.workflows.projects import pull_projects
from goldboard.workflows.report import build_report, write_report
from goldboard.workflows.score import GoldSource, resolve_gold_source, resolve_schema, run_score
from goldboard.workflows.study_edit import add_rater
from goldboard.workflows.tables import pull_table

__all__ = [
    "GoldSource",
    "add_rater",
    "agreement_for_study",
    "build_report",
    "export_gold",
    "import_study_sheet",
    "pull_projects",
    "pull_table",
    "resolve_gold_source",
    "resolve_schema",
    "run_score",
    "unit_groups",
    "write_report",
    "write_study_workbook",
]
