"""Ratings from a hand-downloaded Label Studio JSON export (full ``JSON`` or ``JSON_MIN``).

:func:`read_label_studio_export` reads one field of an export into the ratings
shape (``item_id, rater, field, value`` plus ``_where``), parsing each annotation
exactly as ``goldboard pull`` does when a schema is given.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.annotate.pull import parse_result, tasks_from_json_min
from goldboard.cases.ratings import MULTI_SEP
from goldboard.errors import GoldboardError, GoldboardWarning, ParamError
from goldboard.fileio import read_json_file
from goldboard.text import cell_text


def _ls_user(raw: Any, where: str) -> str:
    if isinstance(raw, dict):
        val = raw.get("email") or raw.get("username") or raw.get("id")
        if val is not None:
            return str(val)
    elif isinstance(raw, bool):
        pass
    elif isinstance(raw, (int, float, str)) and str(raw).strip():
        return cell_text(raw).strip()
    raise GoldboardError(f"{where}: no annotator (completed_by / annotator) to attribute the rating to")


def _ls_item(data: dict, task_id: Any) -> str:
    for key in ("item_id", "output_id", "case_id"):
        v = data.get(key)
        if v not in (None, ""):
            return str(v)
    return str(task_id)


def _ls_value(value: Any) -> str:
    """A result's value (choices / rating / text / number) as goldboard text; lists joined with '|'."""
    if value is None:
        return ""
    if isinstance(value, dict):
        for key in ("choices", "rating", "number", "text", "labels", "taxonomy"):
            if key in value and key in ("choices", "labels", "taxonomy") and isinstance(value[key], list):
                # a multi-select answer is a set: its values in one order (click order is no part of it)
                parts = {_ls_value([v]) for v in value[key]} - {""}
                return MULTI_SEP.join(sorted(parts))
            if key in value:
                return _ls_value(value[key])
        return ""
    if isinstance(value, list):
        parts = ["/".join(map(str, v)) if isinstance(v, list) else _ls_value(v) for v in value]
        return MULTI_SEP.join(p for p in parts if p)
    return cell_text(value).strip()


def read_label_studio_export(path: str | Path, field: str, schema=None) -> pd.DataFrame:
    """Label Studio JSON export (full ``JSON`` or ``JSON_MIN``) -> ratings-shaped DataFrame.

    Full export: a list of tasks; each annotation's ``result`` items whose
    ``from_name`` is ``field`` give the rating; the rater is ``completed_by``
    (a user id, or an object with ``email``).  Cancelled (skipped) annotations
    count as missing.  JSON_MIN: one row per annotation with ``annotator`` and the
    field's value under its ``from_name``.  The item is the task's
    ``data.item_id`` (else ``output_id``, ``case_id``, the task id), so exports
    of one project per rater line up.

    With a ``schema`` each annotation is read exactly as ``goldboard pull`` reads it
    (:func:`goldboard.annotate.pull.parse_result`): an unticked binary box is the
    absent value, an empty multi-select is ``""``, a field hidden by ``shown_when``
    is missing; a value the schema does not know is a one-line error naming the
    task and annotation.  Without a schema, a multi-choice (or Taxonomy) answer is a set: its
    values sorted and joined with ``|`` (``B|A`` as clicked reads ``A|B``), never in click order.
    """
    path = Path(path)
    data = _export_records(path)
    base = field.partition(":")[0]
    sch_field = None
    if schema is not None:
        try:
            sch_field = schema.field(base)
        except KeyError:
            raise GoldboardError(
                f"{base!r}: not a field of schema {schema.name} (fields: {', '.join(schema.field_names)})",
                param="field",
            ) from None
    full = any("annotations" in t for t in data)
    if not full and not any("annotator" in t for t in data):
        raise GoldboardError(
            f"{path}: not a Label Studio JSON export: no task has 'annotations' (full JSON) "
            f"and no row has 'annotator' (JSON_MIN)"
        )
    if not full and schema is not None:
        json_min_where = {}
        for i, rec in enumerate(data, start=1):
            json_min_where[(rec.get("id"), rec.get("annotation_id"))] = f"{path}: record {i}"
        data, full = tasks_from_json_min(data, schema), True
    else:
        json_min_where = None
    if full:
        rows = _task_rows(data, path, base, schema, json_min_where)
    else:
        rows = _json_min_rows(data, path, base)
    if not rows:
        raise GoldboardError(f"{path}: the export has no annotations")
    answered = [r for r in rows if r["value"]]
    if not answered and not (sch_field is not None and sch_field.kind in ("binary", "multi")):
        raise ParamError(
            "{path}: no annotation has a result for field {base!r} (check {field} against the "
            "label config's from_name)",
            path=path,
            base=base,
        )
    return pd.DataFrame(rows)


def _export_records(path: Path) -> list[dict]:
    """The export's tasks (full JSON) or rows (JSON_MIN); one object counts as a list of one."""
    data = read_json_file(path)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise GoldboardError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    if not data:
        raise GoldboardError(f"{path}: the export has no tasks")
    return data


def _task_rows(
    data: list[dict], path: Path, base: str, schema: Any, json_min_where: dict[tuple, str] | None
) -> list[dict]:
    """One ratings row per annotation of a full JSON export (``json_min_where``: rows converted from JSON_MIN)."""
    rows: list[dict] = []
    no_data: list[tuple[Any, int]] = []  # (task id, annotations) of tasks whose data is null
    for i, task in enumerate(data, start=1):
        tid = task.get("id", i)
        tdata = task.get("data")
        anns = task.get("annotations") or []
        if not isinstance(anns, list):
            raise GoldboardError(f"{path}: task {tid}: 'annotations' is not a list")
        if not isinstance(tdata, dict):  # data: null -- no item to rate: never the task id as an item
            no_data.append((tid, len(anns)))
            continue
        item = _ls_item(tdata, tid)
        for ann in anns:
            if not isinstance(ann, dict):
                raise GoldboardError(f"{path}: task {tid}: an annotation is not an object")
            where = (json_min_where or {}).get(
                (tid, ann.get("id"))
            ) or f"{path}: task {tid}, annotation {ann.get('id', '?')}"
            rater = _ls_user(ann.get("completed_by"), where)
            value = _annotation_value(ann, base, schema, where)
            row = {
                "item_id": item,
                "rater": rater,
                "field": base,
                "value": value,
                "_where": where,
                "task_id": str(tid),
                "annotation_id": str(ann.get("id", "")),
            }
            for key in ("case_id", "output_id", "model"):
                if key in tdata:
                    row[key] = tdata[key]
            rows.append(row)
    if no_data:
        shown = ", ".join(str(t) for t, _ in no_data[:5]) + (", ..." if len(no_data) > 5 else "")
        warnings.warn(
            GoldboardWarning(
                f"{path}: {len(no_data)} task(s) with no data (data: null: task {shown}) skipped, their "
                f"{sum(n for _, n in no_data)} annotation(s) not read: no item to attribute them to"
            ),
            stacklevel=2,
        )
    return rows


def _annotation_value(ann: dict, base: str, schema: Any, where: str) -> str:
    """One annotation's value of field ``base`` (read as pull reads it with a schema); ``""`` when skipped."""
    value = ""
    if not ann.get("was_cancelled"):
        result = ann.get("result") or []
        if schema is not None:
            values, problems = parse_result(result, schema) if result else ({}, [])
            mine = [p for p in problems if p.startswith(f"{base}:")]
            if mine:
                raise GoldboardError(f"{where}: field {mine[0]}")
            value = values.get(base, "")
        else:
            parts = [
                _ls_value(res.get("value")) for res in result if isinstance(res, dict) and res.get("from_name") == base
            ]
            value = MULTI_SEP.join(sorted({q for p in parts for q in p.split(MULTI_SEP) if q}))
    return value


def _json_min_rows(data: list[dict], path: Path, base: str) -> list[dict]:
    """One ratings row per JSON_MIN row (read without a schema)."""
    rows: list[dict] = []
    for i, rec in enumerate(data, start=1):
        where = f"{path}: record {i}"
        rater = _ls_user(rec.get("annotator"), where)
        rows.append(
            {
                "item_id": _ls_item(rec, rec.get("id", i)),
                "rater": rater,
                "field": base,
                "value": _ls_value(rec.get(base)),
                "_where": where,
                **{k: rec[k] for k in ("case_id", "output_id", "model") if k in rec},
            }
        )
    return rows
