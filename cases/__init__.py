"""goldboard.cases: load, validate and synthesise cases and model outputs.

Public API::

    load_units(cases_path, outputs_path=None, *, schema) -> pandas.DataFrame
    validate_files(cases_path, outputs_path=None, *, schema) -> list[Problem]
    inspect_files(cases_path, outputs_path=None, *, schema) -> LoadResult
"""

from goldboard.cases.load import LoadResult, inspect_files, load_units, prediction_text, validate_files
from goldboard.cases.problems import CaseFileError, Problem
from goldboard.cases.units import UNIT_COLUMNS, compose_case_text, default_output_id

__all__ = [
    "load_units",
    "validate_files",
    "inspect_files",
    "LoadResult",
    "Problem",
    "CaseFileError",
    "prediction_text",
    "UNIT_COLUMNS",
    "compose_case_text",
    "default_output_id",
]
