"""Ratings tables (CSV/TSV/XLSX/JSONL from a spreadsheet, REDCap, another tool) -> rating records.

Pure: a table (a DataFrame of cells as read by :func:`goldboard.fileio.read_table`, with its
``_line`` column) and a :class:`TableMapping` in, :class:`TableRating` records out, one per item x
rater, each with the raw cells it came from.  Validation against the schema (allowed values,
aliases, required fields, one value per single-choice field) is *not* done here: the records are
turned into Label Studio-shaped annotations (:func:`to_tasks`) and validated by exactly the code
that validates a Label Studio pull (:func:`goldboard.annotate.pull.collect`), so a table and a
server give the same ratings for the same answers.

Shapes a mapping can read:

* **long, one field**: one row per item x rater, ``item_col``, ``rater_col``, ``label_col`` and
  ``field`` (the schema field the label column holds);
* **long, field/value pairs**: ``field_col`` + ``value_col`` (the shape ``goldboard pull`` writes);
  the rows of one item x rater are one rating;
* **long, several fields by name**: columns named like schema fields (``safety_label``,
  ``missing_info``) are read as those fields;
* **wide**: one row per item, one column per rater (``raters={"onc_a": "oncologist_a_label"}``) for
  ``field``; a column name containing ``{field}`` (``onc_a={field}_a``) reads several fields.

Coded choices (REDCap's raw export: ``1``, ``2`` ...) are decoded with ``codes`` (column -> code ->
label, e.g. from a REDCap data dictionary, :func:`read_codes`) before the schema canonicalises
the label; the schema's own aliases work too.  A blank cell is no rating (counted, not an error).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.errors import GoldboardError
from goldboard.fileio import read_records
from goldboard.label_configs.schema import Schema
from goldboard.text import cell_text as text_cell
from goldboard.text import did_you_mean

#: separators accepted between the values of a multi-select cell (goldboard's own ``|`` first)
MULTI_SEPARATORS = ("|", ";", ",")


@dataclass(frozen=True)
class TableMapping:
    """How a table's columns map onto the study: see the module docstring for the shapes."""

    item_col: str | None = None
    rater_col: str | None = None
    label_col: str | None = None
    field_col: str | None = None
    value_col: str | None = None
    field: str | None = None
    raters: dict[str, str] = dataclasses.field(default_factory=dict)  # wide: study rater -> column (may hold {field})
    rationale_col: str | None = None
    rationale_cols: dict[str, str] = dataclasses.field(default_factory=dict)  # wide: rater -> rationale column
    case_col: str | None = None
    output_col: str | None = None
    model_col: str | None = None
    rater_names: dict[str, str] = dataclasses.field(default_factory=dict)  # table's rater value -> study rater

    @property
    def wide(self) -> bool:
        return bool(self.raters)


@dataclass
class TableRating:
    """One item x rater of a table: raw values per schema field, before validation."""

    item_id: str
    case_id: str
    output_id: str
    model: str
    rater: str
    values: dict[str, Any]  # schema field -> raw cell (str, number or list), codes decoded
    rationale: str | None
    lines: list[int]
    cells: dict[str, Any]  # the raw cells this rating was read from, verbatim

    @property
    def line(self) -> int:
        return self.lines[0]


@dataclass
class TableRead:
    ratings: list[TableRating]
    fields: list[str]  # schema fields the table carries
    blank: Counter  # rater -> cells with no rating
    rows: int
    items: list[str]  # every item id of the table, in table order (blank ratings included)
    item_info: dict[str, dict[str, str]]  # item -> case_id/output_id/model
    problems: list[tuple[int, str, dict]] = dataclasses.field(default_factory=list)  # (line, reason, cells): no item id


def is_blank(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    if isinstance(v, (list, tuple)):
        return False
    return isinstance(v, str) and not v.strip()


def cell_text(v: Any) -> str:
    """A cell as an id or label: ``""`` when blank, ``12`` for ``12.0``, stripped text otherwise."""
    return "" if is_blank(v) else text_cell(v).strip()


def parse_pairs(spec: str, option: str) -> dict[str, str]:
    """``a=x,b=y`` -> ``{"a": "x", "b": "y"}`` (an option's ``NAME=COLUMN`` list)."""
    out: dict[str, str] = {}
    for part in [p for p in spec.split(",") if p.strip()]:
        key, sep, val = part.partition("=")
        key, val = key.strip(), val.strip()
        if not sep or not key or not val:
            raise GoldboardError(f"{option} {spec!r}: give NAME=COLUMN pairs separated by commas ({part.strip()!r})")
        if key in out:
            raise GoldboardError(f"{option}: {key!r} given twice")
        out[key] = val
    if not out:
        raise GoldboardError(f"{option}: empty")
    return out


# --------------------------------------------------------------------------- codes


def read_codes(path: str | Path) -> dict[str, dict[str, str]]:
    """Coded choices: column -> {code: label}.

    Reads a REDCap data dictionary (CSV with ``Variable / Field Name`` and ``Choices, Calculations,
    OR Slider Labels``, choices written ``1, Supported | 2, Partially Supported``) or a plain table
    with the columns ``column, code, label``.
    """
    path = Path(path)
    recs = read_records(path)
    header = list(recs[0][1].keys())
    norm = {h.strip().casefold(): h for h in header}
    out: dict[str, dict[str, str]] = {}
    var = next((norm[k] for k in norm if k.startswith("variable / field name")), None)
    choices = next((norm[k] for k in norm if k.startswith("choices, calculations")), None)
    if var and choices:
        for line, rec in recs:
            text = cell_text(rec.get(choices))
            if not text:
                continue
            name = cell_text(rec.get(var))
            codes: dict[str, str] = {}
            for part in text.split("|"):
                code, sep, label = part.partition(",")
                if not sep or not code.strip():
                    raise GoldboardError(f"{path}:{line}: {choices}: {part.strip()!r} is not 'code, label'")
                codes[code.strip()] = label.strip()
            out[name] = codes
        if not out:
            raise GoldboardError(f"{path}: no coded choices in the data dictionary")
        return out
    if {"column", "code", "label"} <= set(norm):
        for line, rec in recs:
            col, code = cell_text(rec[norm["column"]]), cell_text(rec[norm["code"]])
            label = cell_text(rec[norm["label"]])
            if not col or not code or not label:
                raise GoldboardError(f"{path}:{line}: column, code and label must all be given")
            out.setdefault(col, {})[code] = label
        return out
    raise GoldboardError(
        f"{path}: not a codes file: expected a REDCap data dictionary ('Variable / Field Name', "
        f"'Choices, Calculations, OR Slider Labels') or the columns column, code, label"
    )


def _decode(raw: Any, codes: dict[str, str] | None) -> Any:
    if not codes or is_blank(raw):
        return raw
    if isinstance(raw, (list, tuple)):
        return [codes.get(cell_text(x), x) for x in raw]
    text = cell_text(raw)
    if text in codes:
        return codes[text]
    for sep in MULTI_SEPARATORS:
        if sep in text:
            parts = [p.strip() for p in text.split(sep)]
            if all(p in codes for p in parts if p):
                return [codes[p] for p in parts if p]
    return raw


#: how a ticked checkbox reads in REDCap's raw (1) and label (Checked) exports
CHECKED = {"1", "checked", "yes", "true", "x"}
UNCHECKED = {"0", "unchecked", "no", "false", ""}


def _checked(rec: dict, boxes: list[str], codes: dict[str, str] | None) -> Any:
    """REDCap checkbox columns ``FIELD___CODE`` -> the list of ticked choices (decoded with
    ``codes``); ``None`` (no rating) when every box is blank; a cell that is neither ticked nor
    unticked is kept as text so validation names it."""
    if all(is_blank(rec.get(c)) for c in boxes):
        return None
    out: list[Any] = []
    for c in boxes:
        v = cell_text(rec.get(c)).casefold()
        code = c.rsplit("___", 1)[1]
        if v in CHECKED:
            out.append((codes or {}).get(code, code))
        elif v not in UNCHECKED:
            out.append(f"{c}={rec.get(c)}")
    return out


# --------------------------------------------------------------------------- reading


def _columns(df: pd.DataFrame) -> list[str]:
    return [str(c) for c in df.columns if not str(c).startswith("_")]


def _need(df: pd.DataFrame, col: str, option: str, source: str, quote: bool = True) -> None:
    if col not in df.columns:
        cols = _columns(df)
        what = f"{option} {col!r}:" if quote else option
        raise GoldboardError(f"{source}: {what} no such column{did_you_mean(col, cols)} (columns: {', '.join(cols)})")


def read_ratings_table(
    df: pd.DataFrame,
    mapping: TableMapping,
    schema: Schema,
    *,
    source: str = "table",
    codes: dict[str, dict[str, str]] | None = None,
) -> TableRead:
    """Map a table onto ``schema``'s fields: one :class:`TableRating` per item x rater.

    Raises :class:`GoldboardError` (one line naming ``source`` and the option) when a named
    column is missing or the mapping is ambiguous.  Rater names are mapped with
    ``mapping.rater_names`` but not checked against the study (the caller knows the raters).
    """
    codes = codes or {}
    m = mapping
    cols = _columns(df)
    field_names = list(schema.field_names)
    rationale = schema.rationale_field
    if m.field is not None and m.field not in field_names:
        raise GoldboardError(
            f"--field {m.field!r}: not a field of schema {schema.name}{did_you_mean(m.field, field_names)} "
            f"(fields: {', '.join(field_names)})"
        )
    item_col = m.item_col
    if item_col is None:
        for cand in ("item_id", m.output_col, m.case_col, "case_id"):
            if cand and cand in df.columns:
                item_col = cand
                break
        else:
            raise GoldboardError(f"{source}: no item column: looked for item_id and case_id; name it with --item-col")
    _need(df, item_col, "--item-col", source)
    for opt, col in (
        ("--case-col", m.case_col),
        ("--output-col", m.output_col),
        ("--model-col", m.model_col),
        ("--rationale-col", m.rationale_col),
    ):
        if col is not None:
            _need(df, col, opt, source)
    for col in m.rationale_cols.values():
        _need(df, col, "--rationale-col", source)

    # which column holds which field, per rater (wide) or for every row (long)
    wide_cols: dict[str, dict[str, str]] = {}  # rater -> field -> column
    long_cols: dict[str, str] = {}  # field -> column
    checkbox_cols: dict[str, list[str]] = {}  # multi field -> its REDCap checkbox columns
    pair = False
    if m.wide:
        if m.rater_col or m.label_col or m.field_col:
            raise GoldboardError("--raters (wide table) cannot be combined with --rater-col/--label-col/--field-col")
        for rater, spec in m.raters.items():
            if "{field}" in spec:
                found = {f: spec.replace("{field}", f) for f in field_names if spec.replace("{field}", f) in df.columns}
                if not found:
                    raise GoldboardError(
                        f"{source}: --raters {rater}={spec}: no column matches for any schema field "
                        f"(fields: {', '.join(field_names)})"
                    )
                wide_cols[rater] = found
            else:
                if m.field is None:
                    raise GoldboardError(
                        f"--raters {rater}={spec}: say which schema field the column holds with --field "
                        f"(or write the column as a pattern, e.g. {rater}={{field}}_{rater})"
                    )
                _need(df, spec, f"--raters {rater}={spec}:", source, quote=False)
                wide_cols[rater] = {m.field: spec}
    else:
        rater_col = m.rater_col or ("rater" if "rater" in df.columns else None)
        if rater_col is None:
            raise GoldboardError(
                f"{source}: no rater column: name it with --rater-col (long table) or give --raters "
                f"RATER=COLUMN,... (wide table: one column per rater)"
            )
        _need(df, rater_col, "--rater-col", source)
        m = TableMapping(**{**m.__dict__, "rater_col": rater_col})
        if m.label_col is not None:
            _need(df, m.label_col, "--label-col", source)
            if m.field is None:
                raise GoldboardError(f"--label-col {m.label_col}: say which schema field it holds with --field")
            long_cols = {m.field: m.label_col}
        elif m.field_col or m.value_col or ("field" in df.columns and "value" in df.columns):
            fcol, vcol = m.field_col or "field", m.value_col or "value"
            _need(df, fcol, "--field-col", source)
            _need(df, vcol, "--value-col", source)
            pair = True
            m = TableMapping(**{**m.__dict__, "field_col": fcol, "value_col": vcol})
        else:
            long_cols = {f: f for f in field_names if f in df.columns and (rationale is None or f != rationale.name)}
            for f in schema.fields:  # REDCap checkboxes: one 0/1 column per choice, FIELD___CODE
                boxes = [c for c in cols if c.startswith(f"{f.name}___")]
                if f.kind == "multi" and f.name not in long_cols and boxes:
                    checkbox_cols[f.name] = boxes
                    long_cols[f.name] = f.name
            if m.field is not None and "label" in df.columns and m.field not in long_cols:
                long_cols = {m.field: "label"}
            if not long_cols:
                raise GoldboardError(
                    f"{source}: no rating column: no column is named like a field of schema {schema.name} "
                    f"({', '.join(field_names)}); name it with --label-col and --field (columns: {', '.join(cols)})"
                )
    rat_col = m.rationale_col
    if rat_col is None and rationale is not None and not m.wide and rationale.name in df.columns and not pair:
        rat_col = rationale.name

    ratings: dict[tuple[str, str], TableRating] = {}
    order: list[tuple[str, str]] = []
    dup_rows: list[TableRating] = []
    blank: Counter = Counter()
    items: list[str] = []
    item_info: dict[str, dict[str, str]] = {}
    problems: list[tuple[int, str, dict]] = []
    fields_seen: list[str] = []

    def note_field(f: str) -> None:
        if f not in fields_seen:
            fields_seen.append(f)

    records = df.to_dict("records")
    for rec in records:
        line = int(rec.get("_line", 0))
        raw_cells = {k: v for k, v in rec.items() if not str(k).startswith("_") and not is_blank(v)}
        item = cell_text(rec.get(item_col))
        if not item:
            problems.append((line, f"{item_col}: no item id", raw_cells))
            continue
        info = {
            "case_id": cell_text(rec.get(m.case_col)) if m.case_col else "",
            "output_id": cell_text(rec.get(m.output_col)) if m.output_col else "",
            "model": cell_text(rec.get(m.model_col)) if m.model_col else "",
        }
        if not info["case_id"]:
            info["case_id"] = item if not info["output_id"] or info["output_id"] != item else ""
        if item not in item_info:
            items.append(item)
            item_info[item] = info
        if m.wide:
            per_rater = []
            for rater, fcols in wide_cols.items():
                vals = {f: _decode(rec.get(c), codes.get(c)) for f, c in fcols.items()}
                vals = {f: v for f, v in vals.items() if not is_blank(v)}
                rcol = m.rationale_cols.get(rater) or m.rationale_col
                rat = cell_text(rec.get(rcol)) if rcol else None
                per_rater.append((rater, vals, rat, fcols))
        else:
            raw_rater = cell_text(_decode(rec.get(m.rater_col), codes.get(m.rater_col)))
            rater = m.rater_names.get(raw_rater, raw_rater)
            if not rater:
                problems.append((line, f"{m.rater_col}: no rater", raw_cells))
                continue
            if pair:
                fname = cell_text(rec.get(m.field_col))
                raw = _decode(rec.get(m.value_col), codes.get(fname) or codes.get(m.value_col))
                if rationale is not None and fname == rationale.name:
                    vals, rat = {}, None if is_blank(raw) else cell_text(raw)
                    per_rater = [(rater, vals, rat, {})]
                    if rat is not None:
                        note_field(fname)
                else:
                    per_rater = [(rater, {} if is_blank(raw) else {fname: raw}, None, {fname: m.value_col})]
            else:
                vals = {
                    f: _checked(rec, checkbox_cols[f], codes.get(f))
                    if f in checkbox_cols
                    else _decode(rec.get(c), codes.get(c) or codes.get(f))
                    for f, c in long_cols.items()
                }
                vals = {f: v for f, v in vals.items() if not is_blank(v)}
                rat = cell_text(rec.get(rat_col)) if rat_col else None
                per_rater = [(rater, vals, rat, long_cols)]
        for rater, vals, rat, fcols in per_rater:
            for f in fcols:
                if f in field_names:
                    note_field(f)
            if rat is not None and rationale is not None:
                note_field(rationale.name)
            if not vals and not rat:
                blank[rater] += 1
                continue
            key = (item, rater)
            prev = ratings.get(key)
            if prev is not None and pair:
                clash = [f for f in vals if f in prev.values]
                if clash:
                    # the same field twice for one item x rater: keep both, the validator says "answered twice"
                    prev.values.setdefault("__twice__", []).append(clash[0])
                prev.values.update({f: v for f, v in vals.items() if f not in prev.values})
                if rat:
                    prev.rationale = rat
                if len(prev.lines) == 1:
                    prev.cells = {f"line {prev.lines[0]}": prev.cells}
                prev.lines.append(line)
                prev.cells[f"line {line}"] = raw_cells
                continue
            r = TableRating(
                item_id=item,
                case_id=info["case_id"],
                output_id=info["output_id"],
                model=info["model"],
                rater=rater,
                values=dict(vals),
                rationale=rat or None,
                lines=[line],
                cells=raw_cells,
            )
            if prev is not None:
                dup_rows.append(r)
            else:
                ratings[key] = r
                order.append(key)
    out = [ratings[k] for k in order] + dup_rows
    return TableRead(
        ratings=out,
        fields=[f for f in field_names if f in fields_seen],
        blank=blank,
        rows=len(records),
        items=items,
        item_info=item_info,
        problems=problems,
    )


# --------------------------------------------------------------------------- to Label Studio shape


def _multi_parts(raw: Any) -> list[Any]:
    if isinstance(raw, (list, tuple)):
        return list(raw)
    text = cell_text(raw)
    for sep in MULTI_SEPARATORS:
        if sep in text:
            return [p.strip() for p in text.split(sep) if p.strip()]
    return [text] if text else []


def result_of(rating: TableRating, schema: Schema) -> list[dict]:
    """A table rating as a Label Studio annotation ``result`` (what the labeling page would
    have stored for the same answers), for :func:`goldboard.annotate.pull.parse_result`."""
    out: list[dict] = []
    rationale = schema.rationale_field
    names = set(schema.field_names)
    for fname, raw in rating.values.items():
        if fname == "__twice__":
            for f in raw:
                out.append({"from_name": f, "type": "choices", "value": {"choices": []}})
            continue
        if fname not in names:
            out.append({"from_name": fname, "type": "choices", "value": {"choices": [cell_text(raw)]}})
            continue
        f = schema.field(fname)
        if f.kind == "text":
            out.append({"from_name": fname, "type": "textarea", "value": {"text": [cell_text(raw)]}})
        elif f.kind == "multi":
            out.append({"from_name": fname, "type": "choices", "value": {"choices": _multi_parts(raw)}})
        else:
            val = raw[0] if isinstance(raw, list) and len(raw) == 1 else raw
            if isinstance(val, list):
                out.append({"from_name": fname, "type": "choices", "value": {"choices": val}})
            else:
                out.append({"from_name": fname, "type": "choices", "value": {"choices": [cell_text(val)]}})
    if rating.rationale and rationale is not None:
        out.append({"from_name": rationale.name, "type": "textarea", "value": {"text": [rating.rationale]}})
    return out


def to_tasks(read: TableRead, schema: Schema, raters: list[str]) -> dict[str, list[dict]]:
    """Label Studio-shaped tasks per rater: every item of the table is a task for every rater
    (a blank cell is an unannotated task), each table rating one annotation whose ``id`` is its
    first line in the table."""
    by_rater: dict[str, dict[str, dict]] = {r: {} for r in raters}
    for r in read.ratings:
        by_rater.setdefault(r.rater, {})
    for tasks in by_rater.values():
        for item in read.items:
            tasks[item] = {"id": None, "data": {"item_id": item, **read.item_info[item]}, "annotations": []}
    for r in read.ratings:
        by_rater[r.rater][r.item_id]["annotations"].append(
            {"id": r.line, "completed_by": None, "result": result_of(r, schema), "was_cancelled": False}
        )
    return {rater: list(tasks.values()) for rater, tasks in by_rater.items()}


def cells_json(cells: dict[str, Any]) -> str:
    """The raw cells as JSON text, verbatim (for invalid.csv)."""

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, float) and math.isnan(v):
            return None
        return v

    return json.dumps(clean(cells), ensure_ascii=False, default=str)


__all__ = [
    "TableMapping",
    "TableRating",
    "TableRead",
    "read_ratings_table",
    "read_codes",
    "result_of",
    "to_tasks",
    "parse_pairs",
    "did_you_mean",
    "cells_json",
    "cell_text",
]
