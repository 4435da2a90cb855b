"""Annotation units: one case, or one case x model output, as shown to a rater.

A unit table (:func:`goldboard.cases.load_units`) has one row per unit with the
columns below, plus ``case`` (the raw case record, a dict, reference labels
included), ``output`` (the raw output record or ``{}``), ``reference`` and
``prediction`` (``{field: canonical value}`` of the case's reference labels and the
output's predicted labels) and, for per-option schemas, ``option_<X>`` (the option
text, ``""`` when the question has no such option):

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


def item_kind(units: pd.DataFrame) -> str:
    """``"output"`` when the units are case x model output items, ``"case"`` when each unit is
    a case (no outputs file, or a schema that labels cases, such as radsafe)."""
    if "output_id" not in units.columns:
        return "case"
    return "output" if (units["output_id"].fillna("").astype(str) != "").any() else "case"


def default_output_id(case_id: str, model: str, n: int = 0, condition: str = "") -> str:
    """A deterministic output id when the outputs file has none:
    ``<case>::<model>[::<condition>][::n]`` (``condition``: e.g. a RAG deployment condition)."""
    base = f"{case_id}::{model or 'output'}"
    if condition:
        base = f"{base}::{condition}"
    return base if n == 0 else f"{base}::{n}"


def format_case_value(val: Any) -> str:
    """A case field as display text: ``True`` -> ``yes``, lists joined with ``, ``, ``3.0`` -> ``3``;
    ``""`` for a missing value (None, NaN, empty)."""
    if val is None:
        return ""
    if isinstance(val, bool):
        return "yes" if val else "no"
    if isinstance(val, float):
        if pd.isna(val):
            return ""
        return str(int(val)) if val.is_integer() else str(val)
    if isinstance(val, (list, tuple)):
        return ", ".join(s for s in (format_case_value(v) for v in val) if s)
    if isinstance(val, dict):
        return "; ".join(f"{k}: {s}" for k, s in ((k, format_case_value(v)) for k, v in val.items()) if s)
    return str(val).strip()


def shown_case_keys(case: dict[str, Any], schema: Schema) -> list[str]:
    """The keys of ``case`` that :func:`compose_case_text` shows a rater, in display order:
    the schema's displayed case fields the case has a value for (the first key of each
    title), else ``text``."""
    keys = []
    seen_titles = set()
    for key, title in schema.display.case_fields:
        if key == "case_id":
            continue
        if format_case_value(case.get(key)) == "" or title in seen_titles:
            continue
        seen_titles.add(title)
        keys.append(key)
    if not keys and format_case_value(case.get("text")):
        keys.append("text")
    return keys


#: what the case pane shows for a displayed case field the case does not have
NOT_DOCUMENTED = "not documented"


def compose_case_text(case: dict[str, Any], schema: Schema) -> str:
    """The case as plain text: one ``Title: value`` line per displayed case field of the
    schema, in schema order.  A field the case lacks (missing, null, empty) reads
    ``Title: not documented`` -- what an *Insufficient Information* judgement rests on, so
    it never silently vanishes.  Keys that share a title (alternative spellings, e.g.
    ``prompt_text`` / ``text``) are one line: the first that has a value.  A case with none
    of the displayed fields falls back to its ``text`` (``""`` when it has none either)."""
    groups: dict[str, list[str]] = {}
    for key, title in schema.display.case_fields:
        if key == "case_id":
            continue
        groups.setdefault(title, []).append(key)
    lines = []
    documented = False
    for title, keys in groups.items():
        val = next((v for v in (format_case_value(case.get(k)) for k in keys) if v != ""), "")
        documented = documented or val != ""
        lines.append(f"{title}: {val if val != '' else NOT_DOCUMENTED}")
    if not documented:  # nothing of the displayed fields: the case's text, or nothing to show
        return format_case_value(case.get("text"))
    return "\n".join(lines)


def without_not_documented(text: str) -> str:
    """``text`` without its ``Title: not documented`` lines (to compare a case text with one
    composed before absent fields were shown)."""
    suffix = f": {NOT_DOCUMENTED}"
    return "\n".join(ln for ln in str(text or "").split("\n") if not ln.endswith(suffix))
