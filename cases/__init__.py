"""goldboard.cases: load, validate and synthesise cases and model outputs.

Public API::

    load_units(cases_path, outputs_path=None, *, schema) -> pandas.DataFrame
    validate_files(cases_path, outputs_path=None, *, schema) -> list[Problem]
    inspect_files(cases_path, outputs_path=None, *, schema) -> LoadResult
"""

import importlib

#: public name -> the submodule that defines it; loaded on first use (PEP 562), so a module
#: that needs only ``goldboard.cases.ratings`` does not pay for the case loader
_WHERE = {
    "LoadResult": "load",
    "inspect_files": "load",
    "load_units": "load",
    "prediction_text": "load",
    "validate_files": "load",
    "CaseFileError": "problems",
    "Problem": "problems",
    "UNIT_COLUMNS": "units",
    "compose_case_text": "units",
    "default_output_id": "units",
}

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


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
