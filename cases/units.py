"""Annotation units: one case, or one case x model output, as shown to a rater.

A unit table has one row per unit with the columns below (plus the raw case
fields as ``case`` -- a dict -- and, for per-option schemas, ``option_<X>``):

``item_id``      unique unit id: the output id when there are model outputs, else the case id
``case_id``      the case
``output_id``    the model output id ("" when the unit is the case itself)
``model``        the model name ("" when none)
``case_text``    the case, composed as plain text from the schema's displayed case fields
``output_text``  the model output as plain text ("" when none)
``synthetic``    True when the case is marked synthetic
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from goldboard.label_configs.schema import Schema

UNIT_COLUMNS = ["item_id", "case_id", "output_id", "model", "case_text", "output_text", "synthetic"]


def default_output_id(case_id: str, model: str, n: int = 0) -> str:
    """A deterministic output id when the outputs file has none: ``<case>::<model>[::n]``."""
    base = f"{case_id}::{model or 'output'}"
    return base if n == 0 else f"{base}::{n}"


def compose_case_text(case: dict[str, Any], schema: Schema) -> str:
    """The case as plain text: ``Title: value`` lines for the schema's displayed fields
    that the case has (a field shown once even when two keys share a title)."""
    lines = []
    seen_titles = set()
    for key, title in schema.display.case_fields:
        if key == "case_id":
            continue
        val = case.get(key)
        if val is None or (isinstance(val, float) and pd.isna(val)) or str(val).strip() == "":
            continue
        if title in seen_titles:
            continue
        seen_titles.add(title)
        if isinstance(val, (list, tuple)):
            val = ", ".join(str(v) for v in val)
        lines.append(f"{title}: {val}")
    if not lines and case.get("text"):
        lines.append(str(case["text"]))
    return "\n".join(lines)
