"""Validate and normalise the tables the scorer reads: gold labels, predictions, answer keys.

Works on DataFrames only (the CLI reads the files with :func:`goldboard.fileio.read_table`,
which adds a ``_line`` column).  Every problem raises
:class:`~goldboard.errors.GoldboardError` with one line ``source:line: column: problem``.

Gold comes in two shapes:

*release*    the long gold table of a goldboard gold release (``gold/vN/gold.csv``):
             one row per item x field with ``item_id, case_id, model, field,
             gold_value, method`` (``method`` unanimous | adjudicated | unresolved).
             Rows with ``method == unresolved`` or an empty ``gold_value`` are
             excluded and counted.
*reference*  a plain benchmark reference file with one row per item, e.g.
             OpenMTB-Audit ``reference_labels.jsonl`` (``case_id, support_label,
             should_abstain``) or a RadSaFE question table with per-option flag
             columns (``high_risk_A`` ... or ``option_1_high_risk`` ...) and a
             ``correct_answer`` column.  The label column is given with
             ``gold_col`` (default: the field name, then ``support_label``,
             ``gold_label``, ``gold``, ``label``).  Flag columns may be ``high_risk_A``,
             ``option_1_high_risk`` (RadSaFE) or ``option_A_high_risk``; the key column
             ``correct_option``, ``correct_answer``, ``answer_key``, ``answer_idx`` or ``answer``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field as _dfield
from typing import Any

import numpy as np
import pandas as pd

from goldboard.cases.ids import invisible_chars
from goldboard.cases.names import check_file_names
from goldboard.errors import GoldboardError, ParamError
from goldboard.label_configs.schema import Field, Schema, ValueNotInSchema
from goldboard.text import cell_text

RELEASE_COLUMNS = ("item_id", "field", "gold_value")
ID_CANDIDATES = ("item_id", "case_id", "question_id", "id")
GOLD_COL_CANDIDATES = ("support_label", "gold_label", "gold", "label", "reference_label")
LABEL_COL_CANDIDATES = ("predicted_label", "prediction", "predicted", "pred", "label")
OPTION_COL_CANDIDATES = (
    "chosen_option",
    "predicted_option",
    "predicted_answer",
    "chosen",
    "answer",
    "prediction",
    "predicted_label",
    "option",
)
KEY_COL_CANDIDATES = ("correct_option", "correct_answer", "answer_key", "answer_idx", "gold_option", "key", "answer")
PRED_KEY_COL_CANDIDATES = ("correct_option", "correct_answer", "answer_key", "answer_idx", "gold_option")
MODEL_COL_CANDIDATES = ("model", "model_name", "system")
CONDITION_COL_CANDIDATES = ("condition", "deployment_condition", "setting")
ABSTAIN_COL_CANDIDATES = ("predicted_abstain", "abstain")
CONFIDENCE_COL_CANDIDATES = ("confidence", "predicted_confidence", "confidence_score")
#: columns a predictions file may hold that no scoring mode reads (per-label probabilities, scores):
#: said once as not used, never read silently as if they counted (campaign 7b S05)
PROBABILITY_COL_CANDIDATES = (
    "probabilities",
    "probability",
    "probs",
    "label_probabilities",
    "scores",
    "logprobs",
    "logits",
)
SHOULD_ABSTAIN_CANDIDATES = ("should_abstain",)

UNANSWERED_TOKENS = {"", "none", "null", "nan", "na", "n/a", "-", "abstain", "unanswered", "no answer"}
TRUE_TOKENS = {"true", "1", "yes", "y", "t"}
FALSE_TOKENS = {"false", "0", "no", "n", "f"}
_OPTION_RE = re.compile(r"^\(?\s*(?:option\s+)?([A-Za-z])\s*[\).:]?$", re.IGNORECASE)
_OPTION_COL_RE = re.compile(r"^option_([0-9]+|[A-Za-z])_([A-Za-z][A-Za-z0-9_]*)$")


# --------------------------------------------------------------------------- small helpers


def is_blank(v: Any) -> bool:
    """None, NaN, or whitespace-only text."""
    if v is None:
        return True
    if isinstance(v, float) and np.isnan(v):
        return True
    if isinstance(v, (list, tuple, dict)):
        return False
    try:
        if pd.isna(v):
            return True
    except (TypeError, ValueError):
        pass
    return isinstance(v, str) and not v.strip()


def text(v: Any) -> str:
    """A cell as text ('' when blank); whole floats lose their '.0' (ids read from Excel)."""
    return "" if is_blank(v) else cell_text(v).strip()


def lines_of(df: pd.DataFrame) -> np.ndarray:
    """1-based line numbers: the ``_line`` column from ``read_table``, else row position + 2
    (a CSV with a header row)."""
    if "_line" in df.columns:
        return df["_line"].to_numpy()
    return np.arange(2, len(df) + 2)


def pick_column(
    df: pd.DataFrame, given: str | None, candidates: Iterable[str], source: str, what: str, required: bool = True
) -> str | None:
    """The column to use: ``given`` (must exist) or the first candidate present."""
    cols = [c for c in df.columns if c != "_line"]
    if given:
        if given not in df.columns:
            raise GoldboardError(f"{source}:1: {given}: missing column (columns: {', '.join(map(str, cols))})")
        return given
    for c in candidates:
        if c in df.columns:
            return c
    if required:
        raise GoldboardError(
            f"{source}:1: {what}: missing column (looked for {', '.join(candidates)}; "
            f"columns: {', '.join(map(str, cols))})"
        )
    return None


def parse_bool(v: Any, source: str, line: int, column: str) -> bool | None:
    """A yes/no cell: bools, 1/0, true/false, yes/no.  Blank -> None."""
    if is_blank(v):
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.integer, np.floating)) and float(v) in (0.0, 1.0):
        return bool(float(v))
    t = str(v).strip().casefold()
    if t in TRUE_TOKENS:
        return True
    if t in FALSE_TOKENS:
        return False
    raise GoldboardError(f"{source}:{line}: {column}: {v!r} is not a yes/no value (true/false, 1/0, yes/no)")


def _whole_number(v: Any) -> str | None:
    """'4.0' -> '4' (text of a whole number), else None."""
    try:
        x = float(str(v).strip())
    except ValueError:
        return None
    return str(int(x)) if np.isfinite(x) and x.is_integer() else None


def normalize_values(values: list, fld: Field, source: str, lines: np.ndarray, column: str) -> list[str]:
    """Canonical schema spellings of ``values`` (aliases applied); error on the first bad one."""
    cache: dict[Any, str] = {}
    out = []
    for v, line in zip(values, lines):
        key = v if not isinstance(v, (list, dict)) else repr(v)
        if key not in cache:
            try:
                cache[key] = fld.normalize(v)
            except ValueNotInSchema as exc:
                raise GoldboardError(f"{source}:{line}: {column}: {exc}") from None
        out.append(cache[key])
    return out


def label_field(schema: Schema, field_name: str | None) -> Field:
    """The field to score (default: the schema's primary field); must be categorical."""
    if field_name:
        try:
            fld = schema.field(field_name)
        except KeyError as exc:
            raise GoldboardError(f"{exc.args[0]}", param="field") from None
    else:
        fld = schema.primary_field
    if fld.kind not in ("nominal", "ordinal", "binary"):
        raise GoldboardError(
            f"{fld.name} is a {fld.kind} field; label scoring needs a nominal, ordinal or binary field", param="field"
        )
    return fld


def option_fields(schema: Schema) -> dict[str, dict[str, Field]]:
    """Per-option flag fields: ``{base: {option: Field}}`` in schema order (radsafe)."""
    out: dict[str, dict[str, Field]] = {}
    for f in schema.fields:
        if f.option is not None and f.base is not None and f.kind == "binary":
            out.setdefault(f.base, {})[f.option] = f
    return out


# --------------------------------------------------------------------------- gold


@dataclass
class GoldTable:
    """Gold labels in one canonical long shape.

    ``table``  columns ``item_id, case_id, model, field, gold_value, method, _line``;
               resolved rows only (canonical schema spellings)
    ``items``  one row per item (index ``item_id``) with ``case_id``, ``model`` and,
               when the source had them, ``should_abstain`` (bool/None) and ``answer``
    ``excluded`` per field: number of unresolved or empty gold rows left out
    """

    table: pd.DataFrame
    items: pd.DataFrame
    schema: Schema
    source: str = "<gold>"
    kind: str = "release"  # release | reference
    excluded: dict[str, int] = _dfield(default_factory=dict)
    release: str | None = None
    #: the excluded (unresolved or empty) gold rows: ``item_id, case_id, field``
    unresolved: pd.DataFrame = _dfield(default_factory=lambda: pd.DataFrame(columns=["item_id", "case_id", "field"]))

    def field_gold(self, field_name: str) -> pd.DataFrame:
        """Resolved gold rows of one field (index ``item_id``)."""
        sub = self.table[self.table["field"] == field_name]
        return sub.set_index("item_id", drop=False)

    def case_to_item(self, field_names: Iterable[str]) -> dict[str, str]:
        """``case_id -> item_id`` for items that carry the given fields; raises when a case has
        several items (several model outputs) so a case id cannot name one item."""
        names = set(field_names)
        sub = self.table[self.table["field"].isin(names)] if names else self.table
        pairs = sub[["case_id", "item_id"]].drop_duplicates()
        pairs = pd.concat([pairs, self.unresolved_pairs(names)]).drop_duplicates()
        pairs = pairs[pairs["case_id"] != ""]
        dup = pairs[pairs.duplicated("case_id", keep=False)]
        if len(dup):
            cid = dup["case_id"].iloc[0]
            n = int((pairs["case_id"] == cid).sum())
            raise GoldboardError(
                f"{self.source}: case_id {cid!r} has {n} gold items (one per model output); "
                "the predictions must name items with an item_id column"
            )
        return dict(zip(pairs["case_id"], pairs["item_id"]))

    def unresolved_pairs(self, names: set[str]) -> pd.DataFrame:
        u = self.unresolved
        if names:
            u = u[u["field"].isin(names)]
        return u[["case_id", "item_id"]]

    def unresolved_items(self, field_names: Iterable[str]) -> set[str]:
        u = self.unresolved
        return set(u[u["field"].isin(set(field_names))]["item_id"])


def is_release_table(df: pd.DataFrame) -> bool:
    return all(c in df.columns for c in RELEASE_COLUMNS)


def prepare_gold(
    df: pd.DataFrame | GoldTable,
    schema: Schema,
    source: str = "<gold>",
    *,
    field: str | None = None,
    gold_col: str | None = None,
    id_col: str | None = None,
    release: str | None = None,
) -> GoldTable:
    """Canonical :class:`GoldTable` from a gold release table or a plain reference table."""
    if isinstance(df, GoldTable):
        return df
    if df is None or len(df) == 0:
        raise GoldboardError(f"{source}: file is empty")
    if is_release_table(df) and not gold_col:
        return _gold_from_release(df, schema, source, release)
    return _gold_from_reference(df, schema, source, field, gold_col, id_col)


def _gold_from_release(df: pd.DataFrame, schema: Schema, source: str, release: str | None) -> GoldTable:
    lines = lines_of(df)
    known = {f.name: f for f in schema.fields}
    rows, unresolved = [], []
    excluded: dict[str, int] = {}
    seen: dict[tuple[str, str], int] = {}
    items: dict[str, dict] = {}
    has_method = "method" in df.columns
    for rec, line in zip(df.to_dict("records"), lines):
        item = text(rec.get("item_id"))
        fname = text(rec.get("field"))
        if not item:
            raise GoldboardError(f"{source}:{line}: item_id: empty")
        if not fname:
            raise GoldboardError(f"{source}:{line}: field: empty")
        fld = known.get(fname)
        if fld is None:
            raise GoldboardError(
                f"{source}:{line}: field: {fname!r} is not a field of schema {schema.name} (fields: {', '.join(known)})"
            )
        if (item, fname) in seen:
            raise GoldboardError(
                f"{source}:{line}: item_id: duplicate gold row for item {item!r} field {fname} "
                f"(first at line {seen[(item, fname)]})"
            )
        seen[(item, fname)] = line
        case = text(rec.get("case_id"))
        model = text(rec.get("model"))
        info = items.setdefault(item, {"item_id": item, "case_id": case, "model": model})
        if case and not info["case_id"]:
            info["case_id"] = case
        if model and not info["model"]:
            info["model"] = model
        method = text(rec.get("method")).casefold() if has_method else "adjudicated"
        raw = rec.get("gold_value")
        if method == "unresolved" or (fld.kind != "multi" and is_blank(raw)):
            excluded[fname] = excluded.get(fname, 0) + 1
            unresolved.append({"item_id": item, "case_id": case, "field": fname})
            continue
        if fld.kind == "text":
            continue
        if fld.kind == "multi":
            parts = [p for p in text(raw).split("|") if p.strip()]
            vals = [normalize_values([p], fld, source, np.array([line]), "gold_value")[0] for p in parts]
            order = {c: i for i, c in enumerate(fld.categories)}
            value = "|".join(sorted(set(vals), key=order.get))
        else:
            value = normalize_values([raw], fld, source, np.array([line]), "gold_value")[0]
        rows.append(
            {
                "item_id": item,
                "case_id": case,
                "model": model,
                "field": fname,
                "gold_value": value,
                "method": method or "adjudicated",
                "_line": line,
            }
        )
    table = pd.DataFrame(rows, columns=["item_id", "case_id", "model", "field", "gold_value", "method", "_line"])
    item_df = pd.DataFrame(list(items.values()), columns=["item_id", "case_id", "model"]).set_index(
        "item_id", drop=False
    )
    for c in ("should_abstain", "answer"):
        item_df[c] = None
    return GoldTable(
        table=table,
        items=item_df,
        schema=schema,
        source=source,
        kind="release",
        excluded=excluded,
        release=release,
        unresolved=pd.DataFrame(unresolved, columns=["item_id", "case_id", "field"]),
    )


def _reference_ids(df: pd.DataFrame, idc: str, lines: np.ndarray, source: str) -> list[str]:
    """The id of every reference row; an empty or repeated id is an error naming its line."""
    ids = [text(v) for v in df[idc]]
    for v, line in zip(ids, lines):
        if not v:
            raise GoldboardError(f"{source}:{line}: {idc}: empty id")
    dup = pd.Series(ids).duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise GoldboardError(f"{source}:{lines[i]}: {idc}: duplicate id {ids[i]!r}")
    return ids


def _schema_columns(df: pd.DataFrame, schema: Schema, idc: str) -> dict[str, str]:
    """Columns named like a rated schema field, or like a per-option flag (``option_1_high_risk``
    (RadSaFE, 1-based) or ``option_A_high_risk``): column -> field."""
    colmap: dict[str, str] = {}
    opts = option_fields(schema)
    option_letters = list(schema.display.options)
    for c in df.columns:
        if c in ("_line", idc):
            continue
        if c in schema.field_names and schema.field(c).is_rated:
            colmap[c] = c
            continue
        m = _OPTION_COL_RE.match(str(c))
        if m and opts:
            o, base = m.group(1), m.group(2)
            letter = option_letters[int(o) - 1] if o.isdigit() and 1 <= int(o) <= len(option_letters) else o.upper()
            if base in opts and letter in opts[base]:
                colmap[c] = opts[base][letter].name
    return colmap


def _gold_columns(
    df: pd.DataFrame, schema: Schema, idc: str, field: str | None, gold_col: str | None, source: str
) -> dict[str, str]:
    """Which column holds which schema field (column -> field): schema-named columns, and the
    label column (``gold_col``, else the first of :data:`GOLD_COL_CANDIDATES`) for ``field``."""
    colmap = _schema_columns(df, schema, idc)
    target = field
    if gold_col:
        if gold_col not in df.columns:
            cols = [c for c in df.columns if c != "_line"]
            raise GoldboardError(f"{source}:1: {gold_col}: missing column (columns: {', '.join(map(str, cols))})")
        if target is None:
            target = schema.primary_field.name
        colmap = {c: f for c, f in colmap.items() if f != target}
        colmap[gold_col] = target
    else:
        tname = target or schema.primary_field.name
        if tname not in colmap.values():
            for c in GOLD_COL_CANDIDATES:
                if c in df.columns and c not in colmap:
                    colmap[c] = tname
                    break
    if not colmap:
        cols = [c for c in df.columns if c != "_line"]
        raise ParamError(
            "{where}:1: no gold label column: give {gold_col} (columns: {cols})",
            where=source,
            cols=", ".join(map(str, cols)),
        )
    if field and field not in colmap.values() and field not in option_fields(schema):
        raise ParamError("{where}:1: {name}: no gold column for this field (give {gold_col})", where=source, name=field)
    return colmap


def _reference_rows(
    df: pd.DataFrame, schema: Schema, colmap: dict[str, str], ids: list[str], lines: np.ndarray, source: str
) -> tuple[list[dict], dict[str, int], list[dict]]:
    """(gold rows in the release shape, excluded count per field, the excluded rows): blank cells
    of a field are unresolved gold (per-option flags are just absent)."""
    rows, excluded, unresolved = [], {}, []
    recs = df.to_dict("records")
    for c, fname in colmap.items():
        fld = schema.field(fname)
        vals = [r.get(c) for r in recs]
        keep = [i for i, v in enumerate(vals) if not is_blank(v)]
        missing = len(vals) - len(keep)
        if missing and not fld.option:
            excluded[fname] = excluded.get(fname, 0) + missing
            unresolved.extend(
                {"item_id": ids[i], "case_id": ids[i], "field": fname} for i in range(len(vals)) if is_blank(vals[i])
            )
        if fld.kind == "multi":
            continue
        canon = normalize_values([vals[i] for i in keep], fld, source, lines[keep], str(c))
        for i, v in zip(keep, canon):
            rows.append(
                {
                    "item_id": ids[i],
                    "case_id": ids[i],
                    "model": "",
                    "field": fname,
                    "gold_value": v,
                    "method": "reference",
                    "_line": lines[i],
                }
            )
    return rows, excluded, unresolved


def _reference_items(df: pd.DataFrame, schema: Schema, ids: list[str], lines: np.ndarray, source: str) -> pd.DataFrame:
    """One row per item with ``should_abstain`` and (per-option schemas) the ``answer`` key when given."""
    items = pd.DataFrame({"item_id": ids, "case_id": ids, "model": ""}).set_index("item_id", drop=False)
    sa = pick_column(df, None, SHOULD_ABSTAIN_CANDIDATES, source, "should_abstain", required=False)
    items["should_abstain"] = [parse_bool(v, source, ln, sa) for v, ln in zip(df[sa], lines)] if sa else None
    kc = pick_column(df, None, KEY_COL_CANDIDATES, source, "answer", required=False) if option_fields(schema) else None
    items["answer"] = [parse_option(v, schema, source, ln, kc) or None for v, ln in zip(df[kc], lines)] if kc else None
    return items


def _gold_from_reference(
    df: pd.DataFrame, schema: Schema, source: str, field: str | None, gold_col: str | None, id_col: str | None
) -> GoldTable:
    """A :class:`GoldTable` from a plain reference table (one row per item)."""
    if field:
        label_field(schema, field)  # raises a one-line error for an unknown or free-text field
    lines = lines_of(df)
    idc = pick_column(df, id_col, ID_CANDIDATES, source, "id")
    ids = _reference_ids(df, idc, lines, source)
    colmap = _gold_columns(df, schema, idc, field, gold_col, source)
    rows, excluded, unresolved = _reference_rows(df, schema, colmap, ids, lines, source)
    table = pd.DataFrame(rows, columns=["item_id", "case_id", "model", "field", "gold_value", "method", "_line"])
    return GoldTable(
        table=table,
        items=_reference_items(df, schema, ids, lines, source),
        schema=schema,
        source=source,
        kind="reference",
        excluded=excluded,
        unresolved=pd.DataFrame(unresolved, columns=["item_id", "case_id", "field"]),
    )


# --------------------------------------------------------------------------- predictions


def parse_option(v: Any, schema: Schema, source: str, line: int, column: str) -> str:
    """A chosen option letter in the schema's options ('' when unanswered)."""
    if is_blank(v):
        return ""
    t = text(v)
    if t.casefold() in UNANSWERED_TOKENS:
        return ""
    m = _OPTION_RE.match(t)
    letters = {o.upper(): o for o in schema.display.options}
    if m and m.group(1).upper() in letters:
        return letters[m.group(1).upper()]
    raise GoldboardError(
        f"{source}:{line}: {column}: {t!r} is not an answer option "
        f"({', '.join(schema.display.options)}; leave empty when unanswered)"
    )


@dataclass
class Predictions:
    """Validated predictions: one row per (model, condition, item)."""

    table: pd.DataFrame  # item_id, model, condition, value, abstain, confidence, key, _line
    source: str
    id_col: str
    value_col: str
    has_condition: bool
    has_abstain: bool
    has_confidence: bool
    skipped_unresolved: int = 0
    confidence_rescaled: bool = False
    #: one line per column the file has that this scoring does not read (a confidence in labels mode)
    unused: list[str] = _dfield(default_factory=list)


def _map_ids(
    raw_ids: list[str], lines: np.ndarray, id_col: str, gold: GoldTable, fields: list[str], source: str
) -> tuple[list[str | None], int]:
    """Gold item ids for prediction ids; ``None`` for items whose gold is unresolved.
    Unknown ids raise (naming the first one and how many there are)."""
    resolved_items = set(gold.table[gold.table["field"].isin(fields)]["item_id"])
    unresolved = gold.unresolved_items(fields) - resolved_items
    if id_col in ("item_id", "output_id") or gold.kind == "reference":
        mapping = {i: i for i in resolved_items | unresolved}
    else:
        mapping = gold.case_to_item(fields)
        if not mapping:  # gold without case ids: fall back to item ids
            mapping = {i: i for i in resolved_items | unresolved}
    out: list[str | None] = []
    unknown = []
    skipped = 0
    for v, line in zip(raw_ids, lines):
        if not v:
            raise GoldboardError(f"{source}:{line}: {id_col}: empty id")
        item = mapping.get(v)
        if item is None:
            unknown.append((line, v))
            out.append(None)
            continue
        if item in unresolved:
            skipped += 1
            out.append(None)
            continue
        out.append(item)
    if unknown:
        line, v = unknown[0]
        more = f"; {len(unknown)} unknown ids in all" if len(unknown) > 1 else ""
        raise GoldboardError(
            f"{source}:{line}: {id_col}: unknown id {v!r} (not in the gold labels {gold.source}{more})"
        )
    return out, skipped


@dataclass(frozen=True)
class _PredictionColumns:
    """The columns a predictions table is read from (None: not present)."""

    id: str
    value: str
    model: str | None
    condition: str | None
    abstain: str | None  # labels only
    confidence: str | None  # options only
    key: str | None  # options only: a correct-option column


def _prediction_columns(
    df: pd.DataFrame,
    gold: GoldTable,
    kind: str,
    source: str,
    id_col: str | None,
    model_col: str | None,
    condition_col: str | None,
    value_col: str | None,
    abstain_col: str | None,
    confidence_col: str | None,
) -> _PredictionColumns:
    """Pick each column: the one given, else the first candidate present (required ones must exist)."""
    idc = pick_column(df, id_col, ID_CANDIDATES, source, "id")
    if id_col is None and idc != "item_id" and "output_id" in df.columns:
        # case x model-output units: the output id *is* the gold item id (goldboard.cases.units)
        gold_items = set(gold.table["item_id"]) | set(gold.unresolved["item_id"])
        if gold_items and set(text(v) for v in df["output_id"]) <= gold_items:
            idc = "output_id"
    labels = kind == "labels"
    cands = LABEL_COL_CANDIDATES if labels else OPTION_COL_CANDIDATES
    vcol = pick_column(df, value_col, cands, source, "predicted label" if labels else "chosen option")
    mcol = pick_column(df, model_col, MODEL_COL_CANDIDATES, source, "model", required=False)
    ccol = pick_column(df, condition_col, CONDITION_COL_CANDIDATES, source, "condition", required=False)
    acol = pick_column(df, abstain_col, ABSTAIN_COL_CANDIDATES, source, "abstain", required=False) if labels else None
    options = kind == "options"
    fcol = (
        pick_column(df, confidence_col, CONFIDENCE_COL_CANDIDATES, source, "confidence", required=False)
        if options
        else None
    )
    kcol = pick_column(df, None, PRED_KEY_COL_CANDIDATES, source, "answer", required=False) if options else None
    if kcol == vcol:
        kcol = None
    return _PredictionColumns(idc, vcol, mcol, ccol, acol, fcol, kcol)


def _model_names(df: pd.DataFrame, mcol: str | None, default_model: str, lines: np.ndarray, source: str) -> list[str]:
    """The model of every row (``default_model`` without a model column); an empty name, two
    look-alike names or a name with an invisible character is an error
    (:func:`goldboard.cases.names.check_file_names`)."""
    if not mcol:
        if invisible_chars(default_model):  # from --model, or the file's own name
            raise ParamError(
                "{source}: no model column, and the model's name {name!r} (the file's name, or {model_name}) "
                "holds an invisible or control character ({chars}); give the name with {model_name}",
                source=source,
                name=default_model,
                chars=", ".join(invisible_chars(default_model)),
            )
        return [default_model] * len(df)
    models = [text(v) for v in df[mcol]]
    for m, line in zip(models, lines):
        if not m:
            raise GoldboardError(f"{source}:{line}: {mcol}: empty model name")
    # 'gpt' beside 'GPT', 'José' in two Unicode forms, 'gpt<U+200B>': two result rows under one name
    check_file_names(models, lambda i: f"{source}:{lines[i]}", noun="model", column=mcol)
    return models


def _label_values(raw_vals: list, lines: np.ndarray, value_field: Field, source: str, vcol: str) -> list[str]:
    """Predicted labels in canonical spelling ('' for no answer); a label outside the field is an error."""
    values = []
    cache: dict[Any, str] = {}
    for v, line in zip(raw_vals, lines):
        if is_blank(v):
            values.append("")
            continue
        key = v if not isinstance(v, (list, dict)) else repr(v)
        if key not in cache:
            try:
                cache[key] = value_field.normalize(v)
            except ValueNotInSchema as exc:
                # "none", "n/a", ... mean no answer -- unless the field has such a value
                if isinstance(v, str) and v.strip().casefold() in UNANSWERED_TOKENS - {"abstain"}:
                    cache[key] = ""
                elif (num := _whole_number(v)) is not None and num in value_field.categories:
                    cache[key] = num  # "4.0" from a CSV written by pandas
                else:
                    raise GoldboardError(f"{source}:{line}: {vcol}: {exc}") from None
        values.append(cache[key])
    return values


def _confidences(df: pd.DataFrame, fcol: str | None, lines: np.ndarray, source: str) -> tuple[np.ndarray, bool]:
    """(confidence per row in 0-1, NaN when blank; whether 0-100 % values were rescaled)."""
    conf = np.full(len(df), np.nan)
    if not fcol:
        return conf, False
    for i, (v, line) in enumerate(zip(df[fcol], lines)):
        if is_blank(v):
            continue
        try:
            x = float(str(v).strip().rstrip("%")) if not isinstance(v, (int, float)) else float(v)
        except ValueError:
            raise GoldboardError(f"{source}:{line}: {fcol}: {v!r} is not a number") from None
        if not np.isfinite(x) or x < 0 or x > 100:
            raise GoldboardError(f"{source}:{line}: {fcol}: {v!r} is outside 0-1 (or 0-100 %)")
        conf[i] = x
    if np.nanmax(conf, initial=0) > 1:
        fraction = (conf > 0) & (conf < 1)
        if fraction.any():  # 0.9 beside 1.7: rescaling all by 100 would make 0.9 a confidence of 0.009
            hi, lo = int(np.nanargmax(conf)), int(fraction.argmax())
            raise GoldboardError(
                f"{source}:{lines[hi]}: {fcol}: {df[fcol].iloc[hi]!r} is above 1 while line {lines[lo]} holds "
                f"{df[fcol].iloc[lo]!r}: one file mixes 0-1 and 0-100 % confidences; write them all on one scale"
            )
        return conf / 100.0, True
    return conf, False


def unused_columns(df: pd.DataFrame, kind: str) -> list[str]:
    """One warning per column that means something to a reader but that ``kind`` scoring does not
    use: a confidence (read only for multiple-choice options) and per-label probabilities or scores
    (never read; accuracy and the other label metrics use the predicted label).  Their values are
    not checked: a confidence of 1.7 or probabilities summing to 1.8 change nothing here."""
    cols = [c for c in df.columns if c != "_line"]
    out = []
    if kind == "labels":
        out += [
            f"{c}: not used by label scoring (confidence is read only with --mode options); its values are not checked"
            for c in cols
            if c in CONFIDENCE_COL_CANDIDATES
        ]
    out += [
        f"{c}: not used by score (it scores the predicted {'label' if kind == 'labels' else 'option'}); "
        "its values are not checked"
        for c in cols
        if c in PROBABILITY_COL_CANDIDATES
    ]
    return out


def _check_unique(table: pd.DataFrame, cols: _PredictionColumns, source: str) -> None:
    """One prediction per (model, condition, item): the first repeat is an error naming both lines."""
    dup = table.duplicated(["model", "condition", "item_id"], keep=False)
    if not dup.any():
        return
    d = table[dup]
    first = d.iloc[0]
    again = d[
        (d["model"] == first["model"]) & (d["condition"] == first["condition"]) & (d["item_id"] == first["item_id"])
    ].iloc[1]
    cond = f", condition {first['condition']!r}" if cols.condition else ""
    raise GoldboardError(
        f"{source}:{again['_line']}: {cols.id}: duplicate prediction for {first['item_id']!r} "
        f"(model {first['model']!r}{cond}; first at line {first['_line']})"
    )


def prepare_predictions(
    df: pd.DataFrame,
    gold: GoldTable,
    *,
    kind: str,
    fields: list[str],
    source: str = "<predictions>",
    value_field: Field | None = None,
    id_col: str | None = None,
    model_col: str | None = None,
    condition_col: str | None = None,
    value_col: str | None = None,
    abstain_col: str | None = None,
    confidence_col: str | None = None,
    default_model: str = "model",
) -> Predictions:
    """Validate a predictions table.

    ``kind`` is ``labels`` (values normalised through ``value_field``, aliases applied)
    or ``options`` (option letters, optional confidence).  Raises on missing columns,
    unknown ids, values outside the schema, duplicate (model, condition, item) rows.
    """
    if df is None or len(df) == 0:
        raise GoldboardError(f"{source}: file is empty")
    lines = lines_of(df)
    cols = _prediction_columns(
        df, gold, kind, source, id_col, model_col, condition_col, value_col, abstain_col, confidence_col
    )
    items, skipped = _map_ids([text(v) for v in df[cols.id]], lines, cols.id, gold, fields, source)
    models = _model_names(df, cols.model, default_model, lines, source)
    conds = [text(v) for v in df[cols.condition]] if cols.condition else [""] * len(df)
    if cols.condition:  # 'RAG' beside 'rag': two conditions shown under one name, as with models
        check_file_names(conds, lambda i: f"{source}:{lines[i]}", noun="condition", column=cols.condition)
    raw_vals = df[cols.value].tolist()
    if kind == "labels":
        assert value_field is not None
        values = _label_values(raw_vals, lines, value_field, source, cols.value)
    else:
        values = [parse_option(v, gold.schema, source, line, cols.value) for v, line in zip(raw_vals, lines)]
    acol, kcol = cols.abstain, cols.key
    abstain = [parse_bool(v, source, line, acol) for v, line in zip(df[acol], lines)] if acol else [None] * len(df)
    conf, rescaled = _confidences(df, cols.confidence, lines, source)
    keys = (
        [parse_option(v, gold.schema, source, line, kcol) or None for v, line in zip(df[kcol], lines)]
        if kcol
        else [None] * len(df)
    )
    table = pd.DataFrame(
        {
            "item_id": items,
            "model": models,
            "condition": conds,
            "value": values,
            "abstain": abstain,
            "confidence": conf,
            "key": keys,
            "_line": lines,
        }
    )
    table = table[table["item_id"].notna()].reset_index(drop=True)
    _check_unique(table, cols, source)
    return Predictions(
        table=table,
        source=source,
        id_col=cols.id,
        value_col=cols.value,
        has_condition=cols.condition is not None,
        has_abstain=acol is not None,
        has_confidence=cols.confidence is not None,
        skipped_unresolved=skipped,
        confidence_rescaled=rescaled,
        unused=unused_columns(df, kind),
    )


def prepare_key(
    df: pd.DataFrame, gold: GoldTable, source: str = "<key>", id_col: str | None = None, key_col: str | None = None
) -> dict[str, str]:
    """An answer key table (id + correct option) as ``{item_id: option}``."""
    if df is None or len(df) == 0:
        raise GoldboardError(f"{source}: file is empty")
    lines = lines_of(df)
    idc = pick_column(df, id_col, ID_CANDIDATES, source, "id")
    kc = pick_column(df, key_col, KEY_COL_CANDIDATES, source, "correct option")
    fields = [f.name for fs in option_fields(gold.schema).values() for f in fs.values()]
    items, _ = _map_ids_lenient(df, idc, lines, gold, fields)
    out = {}
    for item, v, line in zip(items, df[kc], lines):
        opt = parse_option(v, gold.schema, source, line, kc)
        if item is None:
            continue
        if not opt:
            raise GoldboardError(f"{source}:{line}: {kc}: empty correct option")
        out[item] = opt
    return out


def _map_ids_lenient(
    df: pd.DataFrame, idc: str, lines: np.ndarray, gold: GoldTable, fields: list[str]
) -> tuple[list[str | None], int]:
    """Like :func:`_map_ids` but ids absent from the gold labels are skipped (a key may
    cover more questions than were labelled)."""
    all_items = set(gold.items.index)
    if idc == "item_id" or gold.kind == "reference":
        mapping = {i: i for i in all_items}
    else:
        mapping = {c: i for i, c in zip(gold.items["item_id"], gold.items["case_id"]) if c} or {i: i for i in all_items}
    return [mapping.get(text(v)) for v in df[idc]], 0
