"""Ratings tables (CSV/TSV/XLSX/JSONL from a spreadsheet, REDCap, another tool) -> rating records.

Pure: a table (a DataFrame of cells as read by :func:`goldboard.fileio.read_table`, with its
``_line`` column) and a :class:`TableMapping` in, :class:`TableRating` records out, one per item x
rater, each with the raw cells it came from.  Validation against the schema (allowed values,
aliases, required fields, one value per single-choice field) is *not* done here: the table
source (:mod:`goldboard.cases.intake.sources.table`) hands the records to the intake core
(:mod:`goldboard.cases.intake.core`), which validates every source's ratings with the same code,
so a table and a server give the same ratings for the same answers.

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
label, e.g. from a REDCap data dictionary, :func:`read_codes`; a dictionary named like a schema
field decodes every column read as that field) before the schema canonicalises the label; the
schema's own aliases work too.  A dictionary label that is no value of its field is an error
before any row is read.  A blank cell is no rating (counted, not an error).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from goldboard.cases.ids import (
    escaped,
    hidden_chars,
    hidden_id_reason,
    id_key,
    is_placeholder_id,
    placeholder_message,
    twin_kind,
)
from goldboard.errors import GoldboardError, ParamError
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
    sheet: str | None = None  # the workbook sheet the table is on (None: the only sheet with data)
    rater_names: dict[str, str] = dataclasses.field(default_factory=dict)  # table's rater value -> study rater
    #: wide: two raters' columns may hold the same cell in every row (they agreed on everything)
    identical_ok: bool = False
    #: XLSX: read hidden rows and columns (else a table with hidden rows, or a hidden column read, is refused)
    read_hidden: bool = False

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
    #: identical repeated rows (same item, rater, values and rationale): (line, first line), read once
    repeats: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    #: every column the mapping reads (ids, ratings, rationales)
    columns: list[str] = dataclasses.field(default_factory=list)
    #: warnings the caller adds (merged cells outside the columns read)
    merged: list[str] = dataclasses.field(default_factory=list)
    #: XLSX hidden rows and columns read (``--read-hidden``): {"rows": [...], "columns": [...]}
    hidden: dict[str, list] = dataclasses.field(default_factory=dict)

    @property
    def rating_count(self) -> int:
        return len(self.ratings)


def is_blank(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and math.isnan(v):
        return True
    if isinstance(v, (list, tuple)):
        return False
    return isinstance(v, str) and not v.strip()


def _nan_text(v: Any) -> Any:
    """A NaN number in a rating cell (a JSON table's ``NaN``) is the text ``NaN``: held out by
    validation as no value of the field, never read as a blank cell (no rating)."""
    return "NaN" if isinstance(v, float) and math.isnan(v) else v


#: what is stripped around a rating value: spaces and line ends only -- a control character
#: (U+001F, which ``str.strip`` also removes) stays, so validation holds the value out
VALUE_SPACE = " \t\r\n\u00a0"


def value_text(v: Any) -> str:
    """A rating cell as text: like :func:`cell_text`, but only spaces and line ends stripped."""
    return "" if is_blank(v) else text_cell(v).strip(VALUE_SPACE)


def id_controls(v: Any) -> list[str]:
    """The hidden characters (:func:`goldboard.cases.ids.is_hidden`: control, bidi-control, zero-width
    and other invisible format characters, ``U+0000``, ``U+200B``...) inside an id cell (spaces and
    line ends around it excepted): an id holding one is not the id it looks like, and
    ``str.strip`` would silently cut some of them (U+001F) off."""
    return hidden_chars(value_text(v))


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


class Codes(dict):
    """``read_codes``' result: column -> {code: label}, and where each code was read
    (``lines``: column -> code -> line of the dictionary file ``path``), for messages."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.lines: dict[str, dict[str, int]] = {}


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
    out = Codes(path)
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
                _add_code(codes, code.strip(), label.strip(), f"{path}:{line}: {name}")
                out.lines.setdefault(name, {})[code.strip()] = line
            if name in out:
                raise GoldboardError(f"{path}:{line}: {var} {name!r}: the variable appears twice")
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
            _add_code(out.setdefault(col, {}), code, label, f"{path}:{line}: {col}")
            out.lines.setdefault(col, {})[code] = line
        return out
    raise GoldboardError(
        f"{path}: not a codes file: expected a REDCap data dictionary ('Variable / Field Name', "
        f"'Choices, Calculations, OR Slider Labels') or the columns column, code, label"
    )


def _add_code(codes: dict[str, str], code: str, label: str, where: str) -> None:
    """One code of a dictionary: a repeated code (which label?) or a repeated label (two codes
    would read as one choice) is an error naming both."""
    if not label:
        raise GoldboardError(f"{where}: code {code!r} has no label")
    if code in codes:
        raise GoldboardError(
            f"{where}: code {code!r} is given twice ({codes[code]!r} and {label!r}); each code needs one label"
        )
    for other, text in codes.items():
        if text.strip().casefold() == label.strip().casefold():
            raise GoldboardError(
                f"{where}: label {label!r} is given to two codes ({other!r} and {code!r}); each label needs one code"
            )
    codes[code] = label


def check_codes(codes: dict[str, dict[str, str]], layout: _Layout, schema: Schema) -> None:
    """Every label of a dictionary that decodes a rating (one named like a schema field, or
    like a column the layout reads as a field) must be a value of that field (an alias
    counts): else the dictionary itself is an error naming its line, before any rating is read
    -- not one held-out rating per cell that used the code."""
    targets: dict[str, str] = {f: f for f in schema.field_names if f in codes}  # dictionary -> field
    for fcols in layout.wide_cols.values():
        targets.update({c: f for f, c in fcols.items() if c in codes})
    targets.update({c: f for f, c in layout.long_cols.items() if c in codes and c not in targets})
    for col, fname in targets.items():
        f = schema.field(fname)
        if f.kind == "text":
            continue
        for code, label in codes[col].items():
            try:
                f.normalize(label)
            except ValueError:
                lines = getattr(codes, "lines", {}).get(col, {})
                where = f"{codes.path}:{lines[code]}" if code in lines else "codes"  # type: ignore[attr-defined]
                raise GoldboardError(
                    f"{where}: {col}: code {code!r} -> {label!r} is not a value of {fname}"
                    f"{did_you_mean(label, list(f.categories))} (values: {', '.join(f.categories)}); fix the "
                    f"dictionary (no rating was read)"
                ) from None


def _decode(raw: Any, codes: dict[str, str] | None) -> Any:
    if not codes or is_blank(raw):
        return raw
    if isinstance(raw, (list, tuple)):
        return [codes.get(value_text(x), x) for x in raw]
    text = value_text(raw)
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


def _need(df: pd.DataFrame, col: str, param: str, source: str, shown: str | None = None) -> None:
    """``col`` must be a column of ``df``: else ``source: PARAM 'col': no such column ...``
    (``shown`` replaces ``'col'``, e.g. ``onc_a=x``)."""
    if col not in df.columns:
        cols = _columns(df)
        raise ParamError(
            "{source}: {" + param + "} {shown}: no such column{hint} (columns: {cols})",
            source=source,
            shown=repr(col) if shown is None else shown,
            hint=did_you_mean(col, cols),
            cols=", ".join(cols),
        )


@dataclass(frozen=True)
class _Layout:
    """Where a table's ratings are: the item column, and per rater (wide) or for every row
    (long) which column holds which field; ``pair``: long field/value pairs."""

    mapping: TableMapping  # with the defaults it resolved (rater, field and value columns)
    item_col: str
    wide_cols: dict[str, dict[str, str]]  # rater -> field -> column
    long_cols: dict[str, str]  # field -> column
    checkbox_cols: dict[str, list[str]]  # multi field -> its REDCap checkbox columns
    pair: bool
    rationale_col: str | None  # long tables: the rationale column (named, or the schema's rationale field)


def read_ratings_table(
    df: pd.DataFrame,
    mapping: TableMapping,
    schema: Schema,
    *,
    source: str = "table",
    codes: dict[str, dict[str, str]] | None = None,
) -> TableRead:
    """Map a table onto ``schema``'s fields: one :class:`TableRating` per item x rater.

    Raises :class:`~goldboard.errors.ParamError` (one line naming ``source`` and the
    mapping parameter, e.g. ``item_col``; the CLI names its flag) when a named column is
    missing or the mapping is ambiguous.  Rater names are mapped with
    ``mapping.rater_names`` but not checked against the study (the caller knows the raters).
    """
    with headerless_hint(df, schema):
        df, mapping, key_parts, notes = composite_key(df, mapping, source)
        layout = table_layout(df, mapping, schema, source)
    check_codes(codes or {}, layout, schema)
    reader = _TableReader(layout, schema, codes or {}, source)
    reader.key_parts = key_parts
    records = df.to_dict("records")
    for rec in records:
        reader.read(rec)
    field_names = list(schema.field_names)
    columns = [col for _, _, _, col in column_roles(layout)]
    if key_parts:  # the key column is made from its parts: the table's columns are the parts
        columns = [*key_parts, *(c for c in columns if c != layout.item_col)]
    return TableRead(
        ratings=[reader.ratings[k] for k in reader.order],
        fields=[f for f in field_names if f in reader.fields_seen],
        blank=reader.blank,
        rows=len(records),
        items=reader.items,
        item_info=reader.item_info,
        problems=reader.problems,
        repeats=reader.repeats,
        columns=list(dict.fromkeys(columns)),
        merged=notes,
    )


#: what joins the parts of a composite item key (:func:`composite_key`): ``P1::Fig. 1``
KEY_JOIN = "::"


def composite_key(
    df: pd.DataFrame, m: TableMapping, source: str
) -> tuple[pd.DataFrame, TableMapping, list[str], list[str]]:
    """An item keyed by two or more columns: ``--item-col A,B`` (when no column is named ``A,B``),
    or ``--case-col C --output-col O`` without ``--item-col`` and without an ``item_id`` column
    (an output is the output of one case: two papers' "Fig. 1" are two items, never one).

    Returns the table with the key column added (its cells ``A::B``; blank when a part is blank),
    the mapping naming it, the key's columns (``[]``: a one-column key, the table unchanged) and
    the notes to say.  For ``--case-col/--output-col`` the item id stays the output id when no
    output id is under two cases (the ids a study made from an outputs file); else every item is
    named ``CASE::OUTPUT``, said aloud."""
    if m.item_col is not None and m.item_col not in df.columns and "," in m.item_col:
        parts = [c.strip() for c in m.item_col.split(",")]
        for c in parts:
            _need(df, c, "item_col", source)
        if len(set(parts)) != len(parts) or len(parts) < 2 or not all(parts):
            raise ParamError("{item_col} {col!r}: name two or more different columns", col=m.item_col)
        return _with_key(df, m, parts)
    if m.item_col is not None or "item_id" in df.columns or not (m.case_col and m.output_col):
        return df, m, [], []
    for param, c in (("case_col", m.case_col), ("output_col", m.output_col)):
        _need(df, c, param, source)
    if m.case_col == m.output_col:
        return df, m, [], []
    cases: dict[str, dict[str, None]] = {}
    for case, out in zip(df[m.case_col].tolist(), df[m.output_col].tolist()):
        if not is_blank(out) and not is_blank(case):
            cases.setdefault(cell_text(out), {}).setdefault(cell_text(case), None)
    shared = {o: list(c) for o, c in cases.items() if len(c) > 1}
    if not shared:
        return df, dataclasses.replace(m, item_col=m.output_col), [], []
    out, under = next(iter(shared.items()))
    note = (
        f"output id {out!r} is under cases {', '.join(repr(c) for c in under[:3])} ({len(shared)} output id(s) repeat "
        f"across cases): each item is keyed by its case and output, named CASE{KEY_JOIN}OUTPUT "
        f"({under[0]}{KEY_JOIN}{out}); give --item-col to name items otherwise"
    )
    df2, m2, parts, _ = _with_key(df, m, [m.case_col, m.output_col])
    return df2, m2, parts, [note]


def _with_key(
    df: pd.DataFrame, m: TableMapping, parts: list[str]
) -> tuple[pd.DataFrame, TableMapping, list[str], list[str]]:
    name = "+".join(parts)
    while name in df.columns:
        name += "+"
    cols = [df[c].tolist() for c in parts]
    keys = []
    for cells in zip(*cols):
        texts = [cell_text(v) if not isinstance(v, (list, dict)) else "" for v in cells]
        keys.append(KEY_JOIN.join(texts) if all(texts) else "")
    df = df.copy()
    df[name] = keys
    return df, dataclasses.replace(m, item_col=name), parts, []


def table_layout(df: pd.DataFrame, mapping: TableMapping, schema: Schema, source: str) -> _Layout:
    """Check the mapping against the table's columns and say where the ratings are."""
    m = mapping
    field_names = list(schema.field_names)
    rationale = schema.rationale_field
    if m.field is not None and m.field not in field_names:
        raise ParamError(
            "{field} {name!r}: not a field of schema {schema}{hint} (fields: {fields})",
            name=m.field,
            schema=schema.name,
            hint=did_you_mean(m.field, field_names),
            fields=", ".join(field_names),
        )
    if m.field is not None and not schema.field(m.field).is_rated:
        raise ParamError(
            "{field} {name!r}: a free-text field of schema {schema}, never a rating: give a rated field "
            "(e.g. {field} {rated}) and read the free text with {rationale_col} COLUMN",
            name=m.field,
            schema=schema.name,
            rated=schema.primary_field.name,
        )
    item_col = _item_column(df, m, source)
    wide_cols: dict[str, dict[str, str]] = {}
    long_cols: dict[str, str] = {}
    checkbox_cols: dict[str, list[str]] = {}
    pair = False
    if m.wide:
        wide_cols = _wide_columns(df, m, field_names, source)
    else:
        rater_col = m.rater_col or ("rater" if "rater" in df.columns else None)
        if rater_col is None:
            raise ParamError(
                "{source}: no rater column: name it with {rater_col} (long table) or give {raters} "
                "RATER=COLUMN,... (wide table: one column per rater)",
                source=source,
            )
        _need(df, rater_col, "rater_col", source)
        m = dataclasses.replace(m, rater_col=rater_col)
        if m.label_col is not None:
            _need(df, m.label_col, "label_col", source)
            if m.field is None:
                raise ParamError("{label_col} {col}: say which schema field it holds with {field}", col=m.label_col)
            long_cols = {m.field: m.label_col}
        elif m.field_col or m.value_col or ("field" in df.columns and "value" in df.columns):
            fcol, vcol = m.field_col or "field", m.value_col or "value"
            _need(df, fcol, "field_col", source)
            _need(df, vcol, "value_col", source)
            pair = True
            m = dataclasses.replace(m, field_col=fcol, value_col=vcol)
        else:
            long_cols, checkbox_cols = _named_columns(df, m, schema, source)
    rat_col = m.rationale_col
    if rat_col is None and rationale is not None and not m.wide and rationale.name in df.columns and not pair:
        rat_col = rationale.name
    layout = _Layout(m, item_col, wide_cols, long_cols, checkbox_cols, pair, rat_col)
    _one_role_per_column(layout, source)
    return layout


def column_roles(layout: _Layout) -> list[tuple[str, str | None, str, str]]:
    """Every column the layout reads: ``(group, parameter or None, shown, column)``; the
    groups are ``id`` (item, case and output ids: one column may be several of them),
    ``model``, ``rating`` and ``rationale``."""
    m = layout.mapping
    roles: list[tuple[str, str | None, str, str]] = [("id", "item_col", repr(layout.item_col), layout.item_col)]
    roles += [("id", p, repr(c), c) for p, c in (("case_col", m.case_col), ("output_col", m.output_col)) if c]
    if m.model_col:
        roles.append(("model", "model_col", repr(m.model_col), m.model_col))
    for rater, fcols in layout.wide_cols.items():
        roles += [("rating", "raters", f"{rater}={c}", c) for c in fcols.values()]
    for p, c in (("rater_col", m.rater_col), ("field_col", m.field_col), ("value_col", m.value_col)):
        if c and not m.wide:
            roles.append(("rating", p, repr(c), c))
    for f, c in layout.long_cols.items():
        for col in layout.checkbox_cols.get(f) or [c]:
            if m.label_col == col:
                roles.append(("rating", "label_col", repr(col), col))
            else:
                roles.append(("rating", None, f"rating column {col!r} ({f})", col))
    if layout.rationale_col:
        roles.append(("rationale", "rationale_col", repr(layout.rationale_col), layout.rationale_col))
    roles += [("rationale", "rationale_col", f"{r}={c}", c) for r, c in m.rationale_cols.items()]
    return roles


def _one_role_per_column(layout: _Layout, source: str) -> None:
    """A column is read as one thing: never an id and a rating, a rating and a rationale, nor
    two raters' rationales (two raters from one label column are refused in
    :func:`_distinct_rater_columns`): else a rater's answer would silently become an id or
    another rater's words."""
    seen: dict[str, tuple[str, str | None, str]] = {}
    for group, param, shown, col in column_roles(layout):
        if col not in seen:
            seen[col] = (group, param, shown)
            continue
        g0, p0, s0 = seen[col]
        if (g0 == group and group != "rationale") or (p0, s0) == (param, shown):
            continue
        first = "{" + p0 + "} {s0}" if p0 else "{s0}"
        second = "{" + param + "} {s1}" if param else "{s1}"
        raise ParamError(
            "{source}: column {col!r} is read twice, as " + first + " and as " + second + "; "
            "a column holds one thing: name another column for one of them",
            source=source,
            col=col,
            s0=s0,
            s1=shown,
        )


def _looks_like_data(names: list[str], schema: Schema) -> bool:
    """Whether a header row reads as a data row: a cell is a value of a schema field
    (``Supported``), or most cells are numbers -- a CSV written without its header row."""
    values = {str(c).casefold() for f in schema.fields for c in getattr(f, "categories", None) or ()}
    texts = [str(n).strip() for n in names if str(n).strip()]
    numbers = sum(1 for t in texts if t.replace(".", "", 1).lstrip("-").isdigit())
    return any(t.casefold() in values for t in texts) or (bool(texts) and numbers * 2 > len(texts))


@contextlib.contextmanager
def headerless_hint(df: pd.DataFrame, schema: Schema) -> Iterator[None]:
    """A column the mapping names that the table lacks, in a table whose first row reads as data,
    is said as "no header row?" (it was reported through the first data row's cells as if they
    were the column names)."""
    try:
        yield
    except ParamError as e:
        names = [str(c) for c in df.columns if c != "_line"]
        missing = "no such column" in e.template or "no item column" in e.template
        if not missing or not _looks_like_data(names, schema):
            raise
        hint = (
            f"; no header row? the first row ({', '.join(names)[:80]}) reads as data, not column names: "
            f"add a header row naming the columns"
        )
        raise ParamError(e.template + "{headerless}", **e.values, headerless=hint) from None


def _blank_named(df: pd.DataFrame, col: str) -> str | None:
    """``Unnamed: N`` (pandas' name for a column whose header cell is blank, e.g. the index
    ``DataFrame.to_csv`` writes) names the table's column N when its header cell is blank."""
    match = re.fullmatch(r"Unnamed: (\d+)", col.strip())
    names = [c for c in df.columns if c != "_line"]
    if match and int(match.group(1)) < len(names) and not str(names[int(match.group(1))]).strip():
        return names[int(match.group(1))]
    return None


def _item_column(df: pd.DataFrame, m: TableMapping, source: str) -> str:
    """The item column (named, else item_id, the output or case column, case_id); the other
    named columns must exist too."""
    item_col = m.item_col
    if item_col is not None and item_col not in df.columns and _blank_named(df, item_col) is not None:
        item_col = _blank_named(df, item_col)
    if item_col is None:
        for cand in ("item_id", m.output_col, m.case_col, "case_id"):
            if cand and cand in df.columns:
                item_col = cand
                break
        else:
            names = [c for c in df.columns if c != "_line"]
            blank = next((i for i, c in enumerate(names) if not str(c).strip()), None)
            tail = (
                ""
                if blank is None
                else f"; column {blank + 1} has no name (pandas' index, written by DataFrame.to_csv?): give "
                f"{{item_col}} 'Unnamed: {blank}' to read it as the item id"
            )
            raise ParamError(
                "{source}: no item column: looked for item_id and case_id; name it with {item_col}" + tail,
                source=source,
            )
    _need(df, item_col, "item_col", source)
    for param, col in (
        ("case_col", m.case_col),
        ("output_col", m.output_col),
        ("model_col", m.model_col),
        ("rationale_col", m.rationale_col),
    ):
        if col is not None:
            _need(df, col, param, source)
    for col in m.rationale_cols.values():
        _need(df, col, "rationale_col", source)
    return item_col


def _wide_columns(df: pd.DataFrame, m: TableMapping, field_names: list[str], source: str) -> dict[str, dict[str, str]]:
    """Wide table: rater -> field -> column (a column spec with ``{field}`` reads every field it finds)."""
    if m.rater_col or m.label_col or m.field_col:
        raise ParamError("{raters} (wide table) cannot be combined with {rater_col}/{label_col}/{field_col}")
    wide_cols: dict[str, dict[str, str]] = {}
    for rater, spec in m.raters.items():
        if "{field}" in spec:
            found = {f: spec.replace("{field}", f) for f in field_names if spec.replace("{field}", f) in df.columns}
            if not found:
                raise ParamError(
                    "{source}: {raters} {pair}: no column matches for any schema field (fields: {fields})",
                    source=source,
                    pair=f"{rater}={spec}",
                    fields=", ".join(field_names),
                )
            wide_cols[rater] = found
        else:
            if m.field is None:
                raise ParamError(
                    "{raters} {pair}: say which schema field the column holds with {field} "
                    "(or write the column as a pattern, e.g. {example})",
                    pair=f"{rater}={spec}",
                    example=f"{rater}={{field}}_{rater}",
                )
            _need(df, spec, "raters", source, shown=f"{rater}={spec}")
            wide_cols[rater] = {m.field: spec}
    _distinct_rater_columns(df, wide_cols, source, m.identical_ok)
    return wide_cols


def _distinct_rater_columns(
    df: pd.DataFrame, wide_cols: dict[str, dict[str, str]], source: str, identical_ok: bool = False
) -> None:
    """Two raters are never read from one column, nor (unless ``identical_ok``: they really
    agreed on every item) from two columns holding the same cells in every row (a copied
    column): either would report agreement of a rater with themself."""
    seen: dict[tuple[str, str], str] = {}
    for rater, fcols in wide_cols.items():
        for f, col in fcols.items():
            for (other_f, other_col), other in seen.items():
                if other_f != f:
                    continue
                if col == other_col:
                    raise ParamError(
                        "{source}: {raters} {a} and {b}: two raters read from one column {col!r}; "
                        "give each rater their own column",
                        source=source,
                        a=f"{other}={other_col}",
                        b=f"{rater}={col}",
                        col=col,
                    )
                if not identical_ok and _same_cells(df[other_col], df[col]):
                    raise ParamError(
                        "{source}: {raters} {a} and {b}: columns {c1!r} and {c2!r} hold the same cell in every "
                        "row (a copied column?); if the two raters really agreed on every item, say so with "
                        "{identical_ok}",
                        source=source,
                        a=f"{other}={other_col}",
                        b=f"{rater}={col}",
                        c1=other_col,
                        c2=col,
                    )
            seen[(f, col)] = rater


def _same_cells(a: pd.Series, b: pd.Series) -> bool:
    """Whether two columns hold the same cell text (``cell_text``) in every row, one at least not
    blank: decided at the first row whose cells differ as stored and as text (the cells are
    compared as stored first, over whole columns)."""
    if str(a.dtype) == str(b.dtype) == "str" and not (a.isna().any() or b.isna().any()):
        differ = (a != b).to_numpy(dtype=bool)
    else:
        differ = np.array([x is not y and not (type(x) is type(y) and x == y) for x, y in zip(a, b)], dtype=bool)
    for i in np.flatnonzero(differ):
        if cell_text(a.iloc[i]) != cell_text(b.iloc[i]):
            return False
    return any(cell_text(v) for v in a)


def _named_columns(
    df: pd.DataFrame, m: TableMapping, schema: Schema, source: str
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Long table without a label column: columns named like schema fields (REDCap checkbox
    columns ``FIELD___CODE`` for a multi-select field), or ``label`` for ``m.field``."""
    field_names = list(schema.field_names)
    rationale = schema.rationale_field
    cols = _columns(df)
    long_cols = {f: f for f in field_names if f in df.columns and (rationale is None or f != rationale.name)}
    checkbox_cols: dict[str, list[str]] = {}
    for f in schema.fields:  # REDCap checkboxes: one 0/1 column per choice, FIELD___CODE
        boxes = [c for c in cols if c.startswith(f"{f.name}___")]
        if f.kind == "multi" and f.name not in long_cols and boxes:
            checkbox_cols[f.name] = boxes
            long_cols[f.name] = f.name
    if m.field is not None and "label" in df.columns and m.field not in long_cols:
        long_cols = {m.field: "label"}
    if not long_cols:
        raise ParamError(
            "{source}: no rating column: no column is named like a field of schema {schema} "
            "({fields}); name it with {label_col} and {field} (columns: {cols})",
            source=source,
            schema=schema.name,
            fields=", ".join(field_names),
            cols=", ".join(cols),
        )
    return long_cols, checkbox_cols


class _TableReader:
    """Reads a table's rows one by one into ratings (first come first), repeated rows, blank
    counts, the items in table order and the rows that cannot be read."""

    def __init__(self, layout: _Layout, schema: Schema, codes: dict[str, dict[str, str]], source: str) -> None:
        self.layout = layout
        self.source = source
        self.m = layout.mapping
        self.codes = codes
        self.field_names = list(schema.field_names)
        self.multi = {f.name for f in schema.fields if f.kind == "multi"}
        self.rationale = schema.rationale_field
        self.ratings: dict[tuple[str, str], TableRating] = {}
        self.order: list[tuple[str, str]] = []
        self.repeats: list[tuple[int, int]] = []
        self.blank: Counter = Counter()
        self.items: list[str] = []
        self.item_info: dict[str, dict[str, str]] = {}
        self.problems: list[tuple[int, str, dict]] = []
        self.fields_seen: list[str] = []
        self.nfc_first: dict[str, tuple[str, int]] = {}  # id_key of an item id -> (the id, its first row)
        self._static_cols: dict[str, str] | None = None  # _value_columns of a table without field/value pairs
        self.key_parts: list[str] = []  # the columns of a composite item key (composite_key)

    def note_field(self, f: str) -> None:
        """Schema field ``f`` is carried by the table (kept in first-seen order)."""
        if f not in self.fields_seen:
            self.fields_seen.append(f)

    def read(self, rec: dict) -> None:
        """One row: its item, then its ratings (one per rater of a wide row)."""
        m = self.m
        line = int(rec.get("_line", 0))
        raw_cells = {
            k: v
            for k, v in rec.items()
            if not str(k).startswith("_") and not is_blank(v) and not (self.key_parts and k == self.layout.item_col)
        }
        raw_item = rec.get(self.layout.item_col)
        if isinstance(raw_item, (datetime.date, datetime.time)):  # datetime is a date
            raise GoldboardError(
                f"{self.source}: row {line}: {self.layout.item_col} holds a date ({cell_text(raw_item)}): the "
                f"spreadsheet turned the item id into a date; format the column as Text and type the ids again "
                f"(item ids are never guessed from a date)"
            )
        self._no_nested_ids(rec, line)
        self._no_nested_values(rec, line)
        item = cell_text(raw_item)
        if not item:
            self.problems.append((line, f"{self.layout.item_col}: no item id", raw_cells))
            return
        self._no_placeholder_ids(rec, line)
        for col in dict.fromkeys(c for c in (self.layout.item_col, m.case_col, m.output_col) if c):
            reason = hidden_id_reason(col, value_text(rec.get(col))) if id_controls(rec.get(col)) else None
            if reason:
                self.problems.append((line, reason, raw_cells))
                return
        info = {
            "case_id": cell_text(rec.get(m.case_col)) if m.case_col else "",
            "output_id": cell_text(rec.get(m.output_col)) if m.output_col else "",
            "model": cell_text(rec.get(m.model_col)) if m.model_col else "",
        }
        if not info["case_id"]:
            info["case_id"] = item if not info["output_id"] or info["output_id"] != item else ""
        if item not in self.item_info:
            self._no_look_alike(item, line)
            self.items.append(item)
            self.item_info[item] = info
        per_rater = self._wide_ratings(rec) if m.wide else self._long_ratings(rec, line, raw_cells)
        for rater, vals, rat, fcols in per_rater:
            self._add(item, info, line, raw_cells, rater, vals, rat, fcols)

    def _no_look_alike(self, item: str, line: int) -> None:
        """Two item ids that differ only in letter case (``C1`` / ``c1``) or in their Unicode
        form (``Café`` typed as one letter, or as ``e`` + a combining accent) name one item
        typed twice, or two items no reader can tell apart: refused naming both rows, never
        two items nor silently one."""
        first = self.nfc_first.get(id_key(item))
        if first is not None:
            other, other_line = first
            raise GoldboardError(
                f"{self.source}: rows {other_line} and {line}: item ids '{escaped(other)}' and '{escaped(item)}' "
                f"{twin_kind(other, item)} ({self.layout.item_col}): one item typed twice, or two items a reader "
                f"cannot tell apart; type the id the same way in both rows"
            )
        self.nfc_first[id_key(item)] = (item, line)

    def _where(self) -> str:
        """What a table's ``_line`` counts: a JSONL line, a JSON record, else a spreadsheet row."""
        return {".jsonl": "line", ".ndjson": "line", ".json": "record"}.get(Path(self.source).suffix.lower(), "row")

    def _no_placeholder_ids(self, rec: dict, line: int) -> None:
        """An id cell holding ``NA``, ``#N/A``, ``NULL``, ``-`` ... (a missing value as a
        spreadsheet, R or pandas writes it) is refused naming the row: it is no item."""
        m = self.m
        for col in dict.fromkeys(c for c in (self.layout.item_col, m.case_col, m.output_col) if c):
            text = cell_text(rec.get(col))
            if text and is_placeholder_id(text):
                raise GoldboardError(placeholder_message(f"{self.source}: {self._where()} {line}", col, text))

    def _no_nested_ids(self, rec: dict, line: int) -> None:
        """An id or rater cell holding a JSON list or object (``"case_id": ["C2"]``) is refused:
        it is no id, and its text (``['C2']``) would become a new item."""
        m = self.m
        for param, col in (
            ("item_col", self.layout.item_col),
            ("case_col", m.case_col),
            ("output_col", m.output_col),
            ("model_col", m.model_col),
            ("rater_col", None if m.wide else m.rater_col),
        ):
            v = rec.get(col) if col else None
            if isinstance(v, (list, dict)):
                raise ParamError(
                    "{source}: {where} {line}: {" + param + "} {col!r} holds a JSON {kind} ({cell}), not an id; "
                    "write the id as text",
                    source=self.source,
                    where=self._where(),
                    line=line,
                    col=col,
                    kind="list" if isinstance(v, list) else "object",
                    cell=json.dumps(v, ensure_ascii=False)[:60],
                )

    def _value_columns(self, rec: dict) -> dict[str, str]:
        """Column -> the schema field (or rationale) it holds in this row: the same for every row
        unless the table holds field/value pairs (made once, then, not once per row)."""
        if self.layout.pair:
            return self._value_columns_of(rec)
        if self._static_cols is None:
            self._static_cols = self._value_columns_of(rec)
        return self._static_cols

    def _value_columns_of(self, rec: dict) -> dict[str, str]:
        m, layout = self.m, self.layout
        cols = {c: f for fcols in layout.wide_cols.values() for f, c in fcols.items()}
        cols.update({c: f for f, c in layout.long_cols.items() if f not in layout.checkbox_cols})
        if layout.pair and m.value_col:
            cols[m.value_col] = cell_text(rec.get(m.field_col)) if not isinstance(rec.get(m.field_col), list) else ""
        why = self.rationale.name if self.rationale is not None else "rationale"
        for c in [layout.rationale_col, *m.rationale_cols.values()]:
            if c:
                cols[c] = why
        return cols

    def _no_nested_values(self, rec: dict, line: int) -> None:
        """A rating cell holding a JSON list in a single-choice field (``"label": ["Supported"]``)
        or a JSON object in any field is refused naming the line and field: it is not one value
        (only a multi-select field takes a list), and reading its element would bend what the
        file says."""
        for col, fname in self._value_columns(rec).items():
            v = rec.get(col)
            if not isinstance(v, dict) and not (isinstance(v, list) and fname not in self.multi):
                continue
            cell = json.dumps(v, ensure_ascii=False, default=str)[:60]
            where = f"{self.source}: {self._where()} {line}: {col!r} ({fname or 'no field'})"
            if isinstance(v, dict):
                raise GoldboardError(f"{where} holds a JSON object ({cell}), not a value; write the value as text")
            raise GoldboardError(
                f"{where} holds a JSON list ({cell}), but {fname or 'the field'} takes one value (only a "
                f"multi-select field takes a list); write the value as text"
            )

    def _wide_ratings(self, rec: dict) -> list[tuple[str, dict, str | None, dict]]:
        """``(rater, values, rationale, field columns)`` of each rater's columns of a wide row."""
        per_rater = []
        for rater, fcols in self.layout.wide_cols.items():
            vals = {f: _decode(_nan_text(rec.get(c)), self.codes.get(c) or self.codes.get(f)) for f, c in fcols.items()}
            vals = {f: v for f, v in vals.items() if not is_blank(v)}
            rcol = self.m.rationale_cols.get(rater) or self.m.rationale_col
            rat = cell_text(rec.get(rcol)) if rcol else None
            per_rater.append((rater, vals, rat, fcols))
        return per_rater

    def _long_ratings(self, rec: dict, line: int, raw_cells: dict) -> list[tuple[str, dict, str | None, dict]]:
        """The one rating of a long row (none, with a problem noted, when it names no rater)."""
        m, codes, rationale = self.m, self.codes, self.rationale
        raw_rater = cell_text(_decode(rec.get(m.rater_col), codes.get(m.rater_col)))
        rater = m.rater_names.get(raw_rater, raw_rater)
        if not rater:
            self.problems.append((line, f"{m.rater_col}: no rater", raw_cells))
            return []
        if self.layout.pair:
            fname = cell_text(rec.get(m.field_col))
            raw = _decode(_nan_text(rec.get(m.value_col)), codes.get(fname) or codes.get(m.value_col))
            if rationale is not None and fname == rationale.name:
                rat = None if is_blank(raw) else cell_text(raw)
                if rat is not None:
                    self.note_field(fname)
                return [(rater, {}, rat, {})]
            return [(rater, {} if is_blank(raw) else {fname: raw}, None, {fname: m.value_col})]
        checkbox_cols, rat_col = self.layout.checkbox_cols, self.layout.rationale_col
        vals = {
            f: _checked(rec, checkbox_cols[f], codes.get(f))
            if f in checkbox_cols
            else _decode(_nan_text(rec.get(c)), codes.get(c) or codes.get(f))
            for f, c in self.layout.long_cols.items()
        }
        vals = {f: v for f, v in vals.items() if not is_blank(v)}
        rat = cell_text(rec.get(rat_col)) if rat_col else None
        return [(rater, vals, rat, self.layout.long_cols)]

    def _add(self, item, info, line, raw_cells, rater, vals, rat, fcols) -> None:
        """Count a blank rating, merge a field/value row into its rating, or keep a new rating.
        A second row for the same item x rater is read once when it repeats the first exactly
        (counted in :attr:`TableRead.repeats`) and is an error naming both rows otherwise."""
        for f in fcols:
            if f in self.field_names:
                self.note_field(f)
        if rat is not None and self.rationale is not None:
            self.note_field(self.rationale.name)
        if not vals and not rat:
            self.blank[rater] += 1
            return
        key = (item, rater)
        prev = self.ratings.get(key)
        if prev is not None and self.layout.pair:
            self._check_pair_row(prev, vals, rat, line)
            _merge_pair_row(prev, vals, rat, line, raw_cells)
            return
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
            self._repeated(prev, r)
        else:
            self.ratings[key] = r
            self.order.append(key)

    def _check_pair_row(self, prev: TableRating, vals: dict, rat: str | None, line: int) -> None:
        """A field/value row for a field (or the rationale) its item x rater already has: the
        same answer again is counted, another answer is an error naming both rows."""
        for f, v in vals.items():
            if f in prev.values:
                a, b = _rating_text_of({f: prev.values[f]}), _rating_text_of({f: v})
                if a != b:
                    raise GoldboardError(
                        f"{self.source}: rows {prev.line} and {line}: item {prev.item_id!r} is rated twice by "
                        f"{prev.rater} with different answers ({a} vs {b}); keep the row that is right and "
                        f"delete the other"
                    )
                self.repeats.append((line, prev.line))
        if rat and prev.rationale and rat.strip() != prev.rationale.strip():
            raise GoldboardError(
                f"{self.source}: rows {prev.line} and {line}: item {prev.item_id!r} has two rationales by "
                f"{prev.rater} ({prev.rationale!r} vs {rat!r}); keep the one that is right"
            )

    def _repeated(self, prev: TableRating, r: TableRating) -> None:
        """``r`` rates ``prev``'s item x rater again: counted when identical, else an error."""
        if _rating_key(prev) == _rating_key(r):
            self.repeats.append((r.line, prev.line))
            return
        raise GoldboardError(
            f"{self.source}: rows {prev.line} and {r.line}: item {r.item_id!r} is rated twice by {r.rater} with "
            f"different answers ({_rating_text(prev)} vs {_rating_text(r)}); keep the row that is right and "
            f"delete the other"
        )


def _rating_key(r: TableRating) -> tuple:
    """What a rating says (values as cell texts, rationale), for comparing two rows."""

    def norm(v: Any) -> Any:
        return tuple(cell_text(x) for x in v) if isinstance(v, (list, tuple)) else cell_text(v)

    return tuple(sorted((f, norm(v)) for f, v in r.values.items())), (r.rationale or "").strip()


def _rating_text_of(values: dict[str, Any]) -> str:
    return _rating_text(TableRating("", "", "", "", "", values, None, [0], {}))


def _rating_text(r: TableRating) -> str:
    vals, rat = _rating_key(r)
    text = ", ".join(f"{f}={v if isinstance(v, str) else '|'.join(v)!r}" for f, v in vals) or "no value"
    return text + (f", rationale {rat!r}" if rat else "")


def _merge_pair_row(prev: TableRating, vals: dict, rat: str | None, line: int, raw_cells: dict) -> None:
    """Another field/value row of the same item x rater joins its rating (cells kept per line)."""
    prev.values.update({f: v for f, v in vals.items() if f not in prev.values})
    if rat:
        prev.rationale = rat
    if len(prev.lines) == 1:
        prev.cells = {f"line {prev.lines[0]}": prev.cells}
    prev.lines.append(line)
    prev.cells[f"line {line}"] = raw_cells


# --------------------------------------------------------------------------- cells


def multi_parts(raw: Any) -> list[Any]:
    if isinstance(raw, (list, tuple)):
        return list(raw)
    text = value_text(raw)
    for sep in MULTI_SEPARATORS:
        if sep in text:
            return [p.strip(VALUE_SPACE) for p in text.split(sep) if p.strip(VALUE_SPACE)]
    return [text] if text else []


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
    "parse_pairs",
    "did_you_mean",
    "cells_json",
    "cell_text",
]
