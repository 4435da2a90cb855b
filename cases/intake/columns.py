"""A ratings table read column by column: the same ratings as the row-wise intake, without
Python objects per rating.

:func:`read_columns` maps a table of text cells (a CSV/TSV read by
:func:`goldboard.fileio.read_csv_cells`) onto the schema as
:func:`goldboard.cases.table_import.read_ratings_table` does, and validates its ratings as
:func:`goldboard.cases.intake.core.collect` does, but every check runs once per *distinct*
cell (an id, a label) or per distinct combination of a rating's cells, and the results are
spread back over the rows with numpy indexing; :func:`collect_columns` then builds the round's
rating rows, in the row-wise order, as columns, and holds out the ratings that are not valid
(invalid.csv rows with the row's cells, as the intake core writes them).  The rules themselves are not re-implemented:
ids go through :func:`~goldboard.cases.table_import.cell_text`, ``id_controls``,
:func:`~goldboard.cases.ids.is_placeholder_id` and :func:`~goldboard.cases.ids.id_key`, and each
distinct rating through :func:`goldboard.cases.intake.sources.table.entries` and
:func:`goldboard.cases.intake.core.validate`.

A row without an item id is held out as the row-wise reader holds it out (``problems``, with its
cells).  Whatever else this path does not express -- a row the row-wise reader names in a
problem, an error or a warning (a placeholder id, a control character, two ids a reader cannot tell
apart, a rater not in the study, an item rated twice), codes, field/value pairs, REDCap
checkboxes -- makes :func:`read_columns` return ``None``, and the
caller reads the table row by row: the files and messages are the row-wise path's, byte for
byte (``tests/test_table_columns.py`` compares the two on generated tables).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from goldboard.cases.ids import id_key, is_placeholder_id
from goldboard.cases.intake.core import INVALID_COLUMNS, IntakeResult, _Fields, reason_kind, validate
from goldboard.cases.intake.sources.table import entries
from goldboard.cases.ratings import RATINGS_COLUMNS
from goldboard.cases.table_import import (
    TableMapping,
    TableRating,
    cell_text,
    cells_json,
    check_codes,
    column_roles,
    composite_key,
    headerless_hint,
    id_controls,
    is_blank,
    multi_parts,
    table_layout,
)
from goldboard.label_configs.schema import Schema
from goldboard.text import utc_now


def _objects(values: list[Any]) -> np.ndarray:
    """A 1-D object array of ``values`` (never broadcast into more dimensions)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = v
    return out


def _each(col: pd.Series, fn: Callable[[Any], Any]) -> np.ndarray:
    """``fn`` of every cell of ``col``, computed once per distinct cell (an object array)."""
    codes, uniques = pd.factorize(col)
    return _objects([fn(u) for u in uniques])[codes]


class ItemInfo(Mapping):
    """``item -> {case_id, output_id, model}`` (the item's first row), built per item on demand."""

    def __init__(self, items: list[str], case: np.ndarray, output: np.ndarray, model: np.ndarray) -> None:
        self._items, self.case, self.output, self.model = items, case, output, model
        self._index: dict[str, int] | None = None

    def _pos(self) -> dict[str, int]:
        if self._index is None:
            self._index = {it: i for i, it in enumerate(self._items)}
        return self._index

    def __getitem__(self, item: str) -> dict[str, str]:
        i = self._pos()[item]
        return {"case_id": self.case[i], "output_id": self.output[i], "model": self.model[i]}

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item: object) -> bool:
        return item in self._pos()


@dataclass
class ColumnRead:
    """A table read by columns: what :class:`~goldboard.cases.table_import.TableRead` says of it,
    and its ratings validated (one entry per rating, in table order)."""

    fields: list[str]
    blank: Counter
    rows: int
    items: list[str]
    item_info: ItemInfo
    columns: list[str]
    normalised: list[dict[str, Any]]
    #: per rating: item (index into ``items``), rater (index into the study's raters), table line
    item: np.ndarray
    rater: np.ndarray
    line: np.ndarray
    rationale: np.ndarray  # per rating: the rationale text ("" without one)
    #: per rating: the combination of cells it holds (index into ``values``)
    combo: np.ndarray
    values: list[dict[str, str]]  # per combination: field -> canonical value (validated)
    reasons: list[list[str]]  # per combination: why it is no valid rating (empty: valid)
    raters: list[str]
    table: pd.DataFrame  # the cells as read (for the rows a study-level check holds out)
    ratings: list[TableRating] = field(default_factory=list)  # none: the rows are not kept as objects
    problems: list[tuple[int, str, dict]] = field(default_factory=list)
    repeats: list[tuple[int, int]] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    hidden: dict[str, list] = field(default_factory=dict)

    @property
    def rating_count(self) -> int:
        return len(self.combo)

    @functools.cached_property
    def _lines(self) -> np.ndarray:
        return self.table["_line"].to_numpy()

    def cells_at(self, line: int) -> dict[str, Any]:
        """The non-blank cells of the row on ``line``, verbatim (a rating's cells, as the row-wise reader keeps them)."""
        return _row_cells(self.table, int(np.searchsorted(self._lines, line)))


def _row_cells(table: pd.DataFrame, i: int) -> dict[str, Any]:
    """The non-blank cells of row ``i`` of ``table``, verbatim, in column order."""
    return {k: v for k, v in table.iloc[i].items() if not str(k).startswith("_") and not is_blank(v)}


@dataclass
class _Part:
    """The ratings one rater's columns (wide) or the rater column (long) give, per table row."""

    rater: np.ndarray  # rater index per row
    rpos: int  # the rater's place in a wide row (0: long)
    fcols: dict[str, str]  # field -> column
    rcol: str | None  # rationale column


def relaxed_schema(schema: Schema, fields_in_table: set[str]) -> Schema:
    """The schema a table is validated with: a field the table lacks, and the rationale (an
    optional value in a table), are not required."""
    rationale = schema.rationale_field
    return dataclasses.replace(
        schema,
        fields=tuple(
            f
            if f.name in fields_in_table and (rationale is None or f.name != rationale.name)
            else dataclasses.replace(f, required=False)
            for f in schema.fields
        ),
    )


def read_columns(
    df: pd.DataFrame,
    mapping: TableMapping,
    schema: Schema,
    raters: list[str],
    *,
    source: str = "table",
    codes: dict[str, dict[str, str]] | None = None,
) -> ColumnRead | None:
    """The table's ratings, read and validated by columns; ``None`` where the row-wise reader
    must read it (see the module docstring).  Mapping errors are the row-wise reader's own
    (:func:`~goldboard.cases.table_import.table_layout`, the codes check)."""
    with headerless_hint(df, schema):
        if composite_key(df, mapping, source)[2]:  # an item keyed by two columns: read row by row
            return None
        layout = table_layout(df, mapping, schema, source)
    check_codes(codes or {}, layout, schema)
    m, rationale = layout.mapping, schema.rationale_field
    if codes or layout.pair or layout.checkbox_cols or not len(df):
        return None
    if any(str(df[c].dtype) != "str" for c in df.columns if c != "_line"):
        return None
    rcols = [layout.rationale_col, *m.rationale_cols.values()]
    if any(rcols) and (
        rationale is None
        or any(f.shown_when is not None and f.shown_when.field == rationale.name for f in schema.fields)
    ):
        return None
    table, no_item = df, _texts(df[layout.item_col]) == ""
    if no_item.any():  # a row without an item id is no rating: held out, named by its line (as row by row)
        df = df[~no_item].reset_index(drop=True)
        if not len(df):
            return None
    ids = _read_ids(df, layout.item_col, m)
    if ids is None:
        return None
    item, items, info = ids
    parts = _parts(df, layout, raters)
    if parts is None:
        return None
    field_names = set(schema.field_names)
    seen = {f for p in parts for f in p.fcols if f in field_names}
    if rationale is not None and any(p.rcol for p in parts):
        seen.add(rationale.name)
    fields = [f for f in schema.field_names if f in seen]
    got = _ratings(df, parts, item, len(raters), relaxed_schema(schema, set(fields)), schema)
    if got is None:
        return None
    blank, cols, values, reasons, normalised = got
    lines = table["_line"].to_numpy()[no_item].tolist()
    return ColumnRead(
        problems=[
            (line, f"{layout.item_col}: no item id", _row_cells(table, i))
            for i, line in zip(np.flatnonzero(no_item).tolist(), lines)
        ],
        fields=fields,
        blank=Counter({raters[r]: n for r, n in blank.items()}),
        rows=len(table),
        items=items,
        item_info=info,
        columns=list(dict.fromkeys(col for _, _, _, col in column_roles(layout))),
        normalised=normalised,
        item=cols["item"],
        rater=cols["rater"],
        line=cols["line"],
        rationale=cols["rationale"],
        combo=cols["combo"],
        values=values,
        reasons=reasons,
        raters=list(raters),
        table=table,
    )


@functools.cache
def _patterns() -> dict[str, str]:
    """Regular expressions (RE2, as pyarrow runs them) that find every cell a Python rule *might*
    apply to -- a superset: each cell found is then checked by the rule itself, once per distinct
    cell.  ``space``: a cell ``str.strip`` would change (every character ``str.isspace`` knows, all
    below U+3001); ``control``: a hidden character (``id_controls``: control, invisible format, line separator ...);
    ``placeholder``: what ``is_placeholder_id`` could accept (only the characters of the
    placeholders, or scientific notation, digits as Python's ``\\d`` reads them); ``number``: an id ``id_key`` reads as a number;
    ``ascii``: a character beyond ASCII (NFC and ``casefold`` may change it)."""
    from goldboard.cases.ids import PLACEHOLDER_IDS, hidden_ranges

    def cls(chars: str) -> str:
        return "".join(f"\\x{{{ord(c):x}}}" for c in sorted(set(chars)))

    ws = cls("".join(chr(i) for i in range(0x3001) if chr(i).isspace()))
    ph = cls("".join(PLACEHOLDER_IDS) + "".join(PLACEHOLDER_IDS).upper())
    d = "\\p{Nd}"  # Python's \\d in a str pattern: any Unicode decimal digit
    hidden = "".join(f"\\x{{{lo:x}}}" + (f"-\\x{{{hi:x}}}" if hi > lo else "") for lo, hi in hidden_ranges())
    return {
        "space": f"^[{ws}]|[{ws}]$",
        "control": f"[{hidden}]",
        "placeholder": f"^[{ws}]*(?:[{ph}]*|[+-]?{d}(?:\\.{d}+)?[eE][+-]{d}+)[{ws}]*$",
        "number": f"^[{ws}]*[+-]?(?:{d}+(?:\\.{d}*)?|\\.{d}+)(?:[eE][+-]?{d}{{1,2}})?[{ws}]*$",
        "ascii": "[^\\x{0}-\\x{7f}]",
    }


def _found(col: pd.Series, kind: str) -> np.ndarray:
    """Where ``col``'s cells match :func:`_patterns` ``kind`` (a boolean mask)."""
    return col.str.contains(_patterns()[kind], regex=True).to_numpy(dtype=bool)


def _texts(col: pd.Series) -> np.ndarray:
    """``cell_text`` of every cell (an object array): the cell itself, or for a cell with spaces
    around it, ``cell_text`` of it (once per distinct cell)."""
    out = col.to_numpy(dtype=object)
    odd = _found(col, "space")
    if odd.any():
        out = out.copy()
        out[odd] = _each(col[odd], cell_text)
    return out


def _bad_ids(col: pd.Series, is_item: bool) -> bool:
    """Whether a cell of an id column is one the row-wise reader refuses or names: blank (the
    item column), a placeholder, or holding a control character."""
    for kind, bad in (
        ("control", lambda v: bool(id_controls(v))),
        ("placeholder", lambda v: bool(cell_text(v)) and is_placeholder_id(cell_text(v))),
    ):
        odd = _found(col, kind)
        if odd.any() and _each(col[odd], bad).any():
            return True
    return is_item and bool((_texts(col) == "").any())


def _twins(items: pd.Series) -> bool:
    """Whether two distinct item ids have one ``id_key`` (letter case, Unicode form, a number's
    spelling): the key is ``str.lower`` for an ASCII id that is no number, ``id_key`` otherwise."""
    keys = items.str.lower().to_numpy(dtype=object)
    odd = _found(items, "number") | _found(items, "ascii")
    if odd.any():
        keys[odd] = _each(items[odd], id_key)
    return bool(pd.Series(keys).duplicated().any())


def _read_ids(df: pd.DataFrame, item_col: str, m: TableMapping) -> tuple[np.ndarray, list[str], ItemInfo] | None:
    """Per row the item (index into the items, in table order); the items; their info.  ``None``
    when a row's id is blank, a placeholder, holds a control character, or two items differ only
    in letter case or Unicode form (the row-wise reader names the row)."""
    for col in dict.fromkeys(c for c in (item_col, m.case_col, m.output_col) if c):
        if _bad_ids(df[col], col == item_col):
            return None
    text = _texts(df[item_col])
    codes, uniques = pd.factorize(text)
    items = list(uniques)
    if _twins(pd.Series(pd.array(uniques, dtype="str"))):
        return None
    n = len(df)
    empty = _objects([""])[np.zeros(n, dtype=np.intp)]
    case = _texts(df[m.case_col]) if m.case_col else empty
    output = _texts(df[m.output_col]) if m.output_col else empty
    model = _texts(df[m.model_col]) if m.model_col else empty
    case = case.copy()
    fill = (case == "") & ((output == "") | (output != text))
    case[fill] = text[fill]
    _, first = np.unique(codes, return_index=True)
    return codes, items, ItemInfo(items, case[first], output[first], model[first])


def _parts(df: pd.DataFrame, layout: Any, raters: list[str]) -> list[_Part] | None:
    """One :class:`_Part` per rater of a wide table, one for a long table; ``None`` when a long
    row names no rater or a rater the study does not have."""
    m = layout.mapping
    index = {r: i for i, r in enumerate(raters)}
    n = len(df)
    if m.wide:
        out = []
        for pos, (rater, fcols) in enumerate(layout.wide_cols.items()):
            if rater not in index:
                return None
            rcol = m.rationale_cols.get(rater) or m.rationale_col
            out.append(_Part(np.full(n, index[rater], dtype=np.intp), pos, fcols, rcol))
        return out

    def rater_of(v: Any) -> int:
        name = cell_text(v)
        return index.get(m.rater_names.get(name, name), -1)

    rater = _each(df[m.rater_col], rater_of).astype(np.intp)
    if (rater < 0).any():
        return None
    return [_Part(rater, 0, layout.long_cols, layout.rationale_col)]


def _ratings(
    df: pd.DataFrame, parts: list[_Part], item: np.ndarray, n_raters: int, relaxed: Schema, schema: Schema
) -> tuple[Counter, dict[str, np.ndarray], list[dict[str, str]], list[list[str]], list[dict]] | None:
    """Every rating of the table (a row's cells for one rater, not all blank), validated once
    per distinct combination of cells: ``(blank cells per rater, per-rating columns, values per
    combination, reasons per combination (empty: valid), normalised spellings)``; ``None`` when
    an item x rater is rated twice."""
    fs = _Fields.of(relaxed)
    n = len(df)
    lines = df["_line"].to_numpy()
    combos: dict[tuple, int] = {}
    reps: list[tuple[dict[str, str], bool]] = []
    blank: Counter = Counter()
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("row", "rpos", "item", "rater", "line", "rationale", "combo")}
    for part in parts:
        fcodes, uniq = [], []
        present = np.zeros(n, dtype=bool)
        for c in part.fcols.values():
            codes, uniques = pd.factorize(df[c])
            filled = ~_objects([is_blank(u) for u in uniques]).astype(bool)
            codes = np.where(filled[codes], codes, -1)
            present |= codes >= 0
            fcodes.append(codes)
            uniq.append(uniques)
        rat = _each(df[part.rcol], cell_text) if part.rcol else _objects([""])[np.zeros(n, dtype=np.intp)]
        has_rat = rat != ""
        present |= has_rat
        blank.update(Counter(part.rater[~present].tolist()))
        rows = np.flatnonzero(present)
        key = np.stack([*(fc[rows] for fc in fcodes), has_rat[rows].astype(np.intp)], axis=1)
        found, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
        gid = np.empty(len(found), dtype=np.intp)
        names = list(part.fcols)
        for j, k in enumerate(found):
            vals = {f: str(uniq[i][k[i]]) for i, f in enumerate(names) if k[i] >= 0}
            g = (tuple(vals.items()), bool(k[-1]))
            if g not in combos:
                combos[g] = len(reps)
                reps.append((vals, bool(k[-1])))
            gid[j] = combos[g]
        cols["row"].append(rows)
        cols["rpos"].append(np.full(len(rows), part.rpos, dtype=np.intp))
        cols["item"].append(item[rows])
        cols["rater"].append(part.rater[rows])
        cols["line"].append(lines[rows])
        cols["rationale"].append(rat[rows])
        cols["combo"].append(gid[np.asarray(inverse).reshape(-1)])
    out = {k: np.concatenate(v) if v else np.empty(0, dtype=np.intp) for k, v in cols.items()}
    order = np.lexsort((out["rpos"], out["row"]))  # the row-wise reader's order
    out = {k: v[order] for k, v in out.items()}
    pair = out["item"].astype(np.int64) * max(n_raters, 1) + out["rater"]
    if len(np.unique(pair)) != len(pair):
        return None
    values, reasons = [], []
    for vals, has_rat in reps:
        rating = TableRating("", "", "", "", "", vals, "x" if has_rat else None, [0], {})
        got, problems = validate(entries(rating, relaxed), relaxed, fs)
        values.append(got)
        reasons.append(problems)
    return blank, out, values, reasons, _normalised(out["combo"], reps, schema)


def respellings(values: Mapping[str, Any], schema: Schema) -> Iterator[tuple[str, str, str]]:
    """``(field, text, canonical)`` for each cell of one rating's ``values`` that
    :meth:`Field.normalize` reads as a schema value spelled otherwise (case, spaces, declared
    aliases, display names; never a guess); a cell that is no value is the pull's invalid."""
    for name, raw in values.items():
        try:
            f = schema.field(name)
        except (KeyError, ValueError):
            continue
        if f.kind == "text":
            continue
        for part in multi_parts(raw) if f.kind == "multi" else [raw]:
            if not isinstance(part, str) or not part.strip():
                continue
            try:
                canon = f.normalize(part)
            except ValueError:
                continue
            if canon != part:
                yield name, part, canon


def _normalised(combo: np.ndarray, reps: list[tuple[dict[str, str], bool]], schema: Schema) -> list[dict]:
    """:func:`goldboard.workflows.tables.normalised_spellings` by combination: each spelling
    counted once per rating holding it, first-seen order as the row-wise count sees it."""
    ids, first, counts = np.unique(combo, return_index=True, return_counts=True)
    seen: Counter = Counter()
    for j in np.argsort(first, kind="stable"):
        for key in respellings(reps[int(ids[j])][0], schema):
            seen[key] += int(counts[j])
    return [{"field": k[0], "from": k[1], "to": k[2], "n": n} for k, n in seen.most_common()]


def collect_columns(read: ColumnRead, schema: Schema, round_number: int, source: str) -> IntakeResult:
    """:func:`goldboard.cases.intake.core.collect` of a :class:`ColumnRead` (one rating per item x
    rater): the valid ratings' rows in units, rater and field order, the others held out in
    invalid.csv (rater, then item order, with the row's cells), and the summary."""
    raters = read.raters
    rationale = schema.rationale_field
    row_fields = [f for f in schema.fields if not (rationale is not None and f.name == rationale.name)]
    ok = np.array([not r for r in read.reasons], dtype=bool)[read.combo]
    parts, n_rows = [], 0
    for fi, f in enumerate(row_fields):
        per = [v.get(f.name, "" if f.kind == "multi" else None) for v in read.values]
        has = np.array([v is not None for v in per], dtype=bool)[read.combo] & ok
        n_rows += int(has.sum())
        if f.name in read.fields:
            idx = np.flatnonzero(has)
            parts.append((idx, np.full(len(idx), fi, dtype=np.intp), _objects(per)[read.combo[idx]]))
    idx = np.concatenate([p[0] for p in parts]) if parts else np.empty(0, dtype=np.intp)
    fpos = np.concatenate([p[1] for p in parts]) if parts else np.empty(0, dtype=np.intp)
    value = np.concatenate([p[2] for p in parts]) if parts else _objects([])
    order = np.lexsort((fpos, read.rater[idx], read.item[idx]))
    idx, fpos, value = idx[order], fpos[order], value[order]
    item = read.item[idx]
    info = read.item_info
    text = {
        "item_id": _objects(read.items)[item],
        "case_id": info.case[item],
        "output_id": info.output[item],
        "model": info.model[item],
        "rater": _objects(raters)[read.rater[idx]],
        "field": _objects([f.name for f in row_fields])[fpos],
        "value": value,
        "rationale": read.rationale[idx],
        "annotation_id": _objects([f"{source}:{line}" for line in read.line[idx].tolist()]),
    }
    n = len(idx)
    empty = pd.array([""] * n, dtype="str")
    cols = {
        c: pd.Series(np.full(n, round_number, dtype=np.int64))
        if c == "round"
        else pd.Series(pd.array(text[c], dtype="str"))
        if c in text
        else pd.Series(empty)
        for c in RATINGS_COLUMNS
    }
    ratings = pd.DataFrame(cols, columns=RATINGS_COLUMNS)
    invalid = _invalid(read, ok, round_number, source)
    summary = _summary(read, schema, round_number, n_rows, ok, invalid)
    counts = {r: (c["items"], c["unannotated"]) for r, c in summary["raters"].items()}
    return IntakeResult(ratings=ratings, invalid=invalid, summary=summary, item_counts=counts)


def _invalid(read: ColumnRead, ok: np.ndarray, round_number: int, source: str) -> pd.DataFrame:
    """invalid.csv's rows of the ratings that are not valid, as the intake core writes them (in
    the order it meets them: rater, then item), each with its row's cells verbatim."""
    bad = np.flatnonzero(~ok)
    bad = bad[np.lexsort((read.item[bad], read.rater[bad]))]
    info = read.item_info
    rows = [
        {
            "round": round_number,
            "kind": "invalid",
            "reason": "; ".join(read.reasons[read.combo[i]]),
            "rater": read.raters[read.rater[i]],
            "item_id": read.items[read.item[i]],
            "case_id": info.case[read.item[i]],
            "output_id": info.output[read.item[i]],
            "model": info.model[read.item[i]],
            "task_id": "",
            "project_id": "",
            "annotation_id": f"{source}:{read.line[i]}",
            "completed_by": "",
            "annotated_at": "",
            "lead_time": "",
            "was_cancelled": "false",
            "result": cells_json(read.cells_at(int(read.line[i]))),
        }
        for i in bad.tolist()
    ]
    return pd.DataFrame(rows, columns=INVALID_COLUMNS)


def _summary(
    read: ColumnRead, schema: Schema, round_number: int, n_rows: int, ok: np.ndarray, invalid: pd.DataFrame
) -> dict[str, Any]:
    """The summary :func:`goldboard.cases.intake.core.collect` writes for these ratings (same keys, same order)."""
    raters = read.raters
    valid = np.bincount(read.rater[ok], minlength=len(raters))
    held = np.bincount(read.rater[~ok], minlength=len(raters))
    per_rater = {}
    for r, name in enumerate(raters):
        # each item once: rated, held out as invalid, or unannotated (no rating at all), as the core counts
        annotated = set(read.item[read.rater == r].tolist())
        miss = sorted(it for i, it in enumerate(read.items) if i not in annotated)
        per_rater[name] = {
            "valid": int(valid[r]),
            "invalid": int(held[r]),
            "superseded": 0,
            "by_other_users": 0,
            "items": len(read.items),
            "unannotated": len(miss),
            "unannotated_items": miss,
        }
    reasons: Counter = Counter(reason_kind(part) for reason in invalid["reason"] for part in reason.split("; "))
    return {
        "round": round_number,
        "schema": f"{schema.name} v{schema.version}",
        "pulled_at": utc_now(),
        "tasks": len(raters) * len(read.items),
        "annotations": read.rating_count,
        "valid_annotations": int(valid.sum()),
        "invalid_annotations": len(invalid),
        "superseded_annotations": 0,
        "unattributed_annotations": 0,
        "rating_rows": n_rows,
        "invalid_reasons": dict(reasons.most_common()),
        "raters": per_rater,
        "duplicate_tasks": {},
        "warnings": [],
    }


__all__ = ["ColumnRead", "ItemInfo", "read_columns", "collect_columns", "relaxed_schema"]
