"""The tidy ratings table: one row per item x rater x field.

This is the contract between pull (which writes it), agreement, flags,
adjudication and gold export (which read it).  Columns:

``round``         annotation round (int, 1-based)
``item_id``       the annotation unit: the output id when a case has model outputs, else the case id
``case_id``       the case
``output_id``     the model output ("" when the unit is the case itself)
``model``         the model that wrote the output ("" when none)
``rater``         the rater's study name (e.g. ``onc_a``), never a server user id
``field``         the schema field
``value``         the canonical value (multi-select: values joined with ``|`` in schema order;
                  an empty multi-select is ``""``)
``rationale``     the rater's free-text rationale for this item (same on each field row)
``annotated_at``  ISO 8601 timestamp of the annotation (UTC)
``lead_time``     seconds the rater spent (as Label Studio measured it), may be empty
``annotation_id`` Label Studio annotation id; ``SOURCE:ROW`` for ratings from a ratings table
                  (``pull --from-table``: the table's name and row, header = row 1)
``task_id``       Label Studio task id (empty for ratings from files)
``project_id``    Label Studio project id (empty for ratings from files)

This module owns the table: its columns and the one multi-select separator
(:data:`MULTI_SEP`), the readers (:func:`read_ratings_csv`, :func:`load_ratings_file`,
and :func:`read_long_table` / :func:`read_wide_table` for other people's tables), the
ratings in force (:func:`current_ratings`: per item, the latest round every rater rated,
see :mod:`goldboard.cases.rounds`) and the :class:`RatingGrid` that flags,
decisions and gold read (items x raters category codes per field; multi-select sets
as bit masks, see :mod:`goldboard.adjudicate.flags`).
"""

from __future__ import annotations

import csv
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

import numpy as np

from goldboard.cases.ids import ID_SPACE, hidden_id_problem, hidden_ranges, id_key, twin_kind
from goldboard.cases.names import check_file_names, shown_name
from goldboard.cases.ratings_columns import PandasOnUse
from goldboard.cases.rounds import RoundSelection, round_numbers, select_rounds
from goldboard.errors import GoldboardError, ParamError
from goldboard.fileio import REPEATED_HEADER, not_utf8_error, read_csv_frame, read_table
from goldboard.label_configs.schema import MULTI_SEP, Field, Schema, ValueNotInSchema
from goldboard.text import cell_text, natural_sorted

pd = PandasOnUse()  # imported when first used: `flag --study` on a small study never does

RATINGS_COLUMNS = [
    "round",
    "item_id",
    "case_id",
    "output_id",
    "model",
    "rater",
    "field",
    "value",
    "rationale",
    "annotated_at",
    "lead_time",
    "annotation_id",
    "task_id",
    "project_id",
]
#: the one separator of multi-select values in the ratings table, decisions and gold
_REQUIRED_COLUMNS = ("item_id", "rater", "field", "value")
MISSING_CODE = -1
#: code of a missing rating in a :class:`RatingGrid`
#: largest multi-select field whose sets fit a 64-bit mask
MAX_MULTI_VALUES = 62


def empty_ratings() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in RATINGS_COLUMNS})


def read_ratings_csv(path: str | Path, *, data: bytes | None = None) -> pd.DataFrame:
    """Read a ratings table written by goldboard, keeping every cell as text
    (so ``"4"`` stays ``"4"`` and an empty rationale stays ``""``).  ``data``: the
    file's bytes when the caller has read (and hashed) them already."""
    df = read_csv_frame(path, " (ratings table)", data=data)
    _require_rating_columns(df.columns, path)
    for c in RATINGS_COLUMNS:
        if c not in df.columns:
            df[c] = ""
    rounds = df["round"].replace("", "1")
    bad = ~rounds.str.fullmatch(r"[0-9]{1,9}") if len(df) else pd.Series([], dtype=bool)
    if bad.any():
        i = int(bad.to_numpy().argmax())
        raise GoldboardError(f"{path}: data row {i + 1}: round {rounds.iloc[i]!r} is not a round number")
    df["round"] = rounds.astype(int)
    return df


def load_ratings_file(path: str | Path) -> pd.DataFrame:
    """Read a ratings table (CSV as written by goldboard, or .xlsx/.jsonl/.json with the
    same columns) keeping every cell as text, with a ``_line`` column for error messages."""
    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    if path.suffix.lower() == ".csv":
        try:
            with open(path, encoding="utf-8-sig", newline="") as fh:
                _require_rating_columns(next(csv.reader(fh), []), path)
        except UnicodeDecodeError:
            raise not_utf8_error(path, path.read_bytes()) from None
        except csv.Error as exc:
            raise GoldboardError(f"{path}: cannot read as a ratings CSV: {exc}") from None
        try:
            df = read_ratings_csv(path)
        except UnicodeDecodeError:  # after the header: the line, column and byte, with the advice
            raise not_utf8_error(path, path.read_bytes()) from None
        except (ValueError, pd.errors.ParserError) as exc:
            raise GoldboardError(f"{path}: cannot read as a ratings CSV: {str(exc).splitlines()[0]}") from None
        df["_line"] = [str(i + 2) for i in range(len(df))]
        again = df["item_id"].str.strip() == "item_id"  # the header pasted under the table again?
        for c in ("rater", "field", "value"):
            again &= df[c].str.strip() == c
        if again.any():
            raise GoldboardError(f"{path}:{df['_line'][again.to_numpy().argmax()]}: {REPEATED_HEADER}")
    else:
        df = read_table(path)
        _require_rating_columns(df.columns, path)
        for c in df.columns:
            df[c] = df[c].map(lambda v: "" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))
        for c in RATINGS_COLUMNS:
            if c not in df.columns:
                df[c] = ""
    check_ratings_columns(df)
    df["item_id"] = check_item_column(df["item_id"], lambda i: f"{path}:{df['_line'].iloc[i]}")
    df["rater"] = check_rater_column(df["rater"], lambda i: f"{path}:{df['_line'].iloc[i]}")
    return df


def check_rater_column(values: pd.Series, where) -> pd.Series:
    """The rater names of a plain ratings file (one per row, ``where(i)``: the ``file:line`` of
    row ``i``) with the blanks around them stripped (``'onc_a '`` is ``onc_a``: its ratings are
    then checked as onc_a's, a different repeat an error); names that differ only by case,
    Unicode form or an invisible character, or a name holding one, are an error naming the rows
    (:func:`goldboard.cases.names.check_file_names`).  Each distinct cell is read once."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    texts = [cell_text(u).strip() for u in uniques.tolist()]
    keep = [j for j, t in enumerate(texts) if t]
    first_row = lambda k: int(np.flatnonzero(codes == keep[k])[0])  # noqa: E731 (only for a message)
    check_file_names([texts[j] for j in keep], lambda k: where(first_row(k)), noun="rater", column="rater")
    out = np.array(texts + [""], dtype=object)[codes]
    return pd.Series(out, index=values.index, dtype=object)


def check_item_column(values: pd.Series, where, *, column: str = "item_id") -> pd.Series:
    """Refuse the item ids of a plain ratings file (one per row, ``where(i)``: the ``file:line``
    of row ``i``; ``column``: the column they were read from) by the rule of a study pull
    (:mod:`goldboard.cases.ids`): two ids that are twins by :func:`~goldboard.cases.ids.id_key`
    (``C1`` / ``c1``, ``7`` / ``007``, NFC / NFD, ``C-1`` / ``C-1`` + a zero-width space) are an
    error naming both rows, the column and the difference; then an id holding a hidden character
    (:func:`~goldboard.cases.ids.hidden_id_problem`), even alone, naming its row and the code
    point.  Spaces and line ends around an id are no part of it (``'C-1 '`` is ``C-1``: returned
    so, one per row).  Each distinct cell is looked at once (``pd.factorize``), a plain one by
    :func:`_plain_id_key`'s quick paths (1M rows, 500,000 ids: about 1 s)."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    texts = [u.strip(ID_SPACE) if type(u) is str else cell_text(u).strip(ID_SPACE) for u in uniques.tolist()]
    out = pd.Series(np.array(texts + [""], dtype=object)[codes], index=values.index, dtype=object)
    ids = pd.unique(np.array([t for t in texts if t], dtype=object))
    keys, odd = _id_keys(ids)
    if not odd.any() and not pd.Series(keys, dtype=object).duplicated().any():
        return out  # no twins, no hidden character: the usual file, checked without a loop per id
    first = {t: j for j, t in reversed(list(enumerate(texts))) if t}  # id -> its first distinct cell
    row = lambda t: int(np.flatnonzero(codes == first[t])[0])  # noqa: E731 (only for a message)
    label = "item_id" if column == "item_id" else f"item id (column {column!r})"
    by_key: dict[str, str] = {}
    for t, key in sorted(zip(ids.tolist(), keys.tolist()), key=lambda p: first[p[0]]):
        other = by_key.setdefault(key, t)
        if other != t:
            raise GoldboardError(
                f"{where(row(t))}: {label} {shown_name(t)} and {shown_name(other)} ({where(row(other))}) "
                f"{twin_kind(other, t)}: one item typed twice, or two items a reader cannot tell apart; write the "
                f"id one way"
            )
    for t in sorted(ids[odd].tolist(), key=first.get):
        problem = hidden_id_problem(t)
        if problem:
            raise GoldboardError(f"{where(row(t))}: {label} {problem}")
    return out


def _id_keys(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_plain_id_key` of each of ``ids`` (distinct, blanks stripped): the keys, and where
    an id may hold a hidden character.  An id of printable ASCII that is no number (most) is keyed
    by its lower case over the whole column (Arrow); the others one by one."""
    if not len(ids):
        return np.empty(0, dtype=object), np.zeros(0, dtype=bool)
    col = pd.Series(pd.array(ids, dtype="string[pyarrow]"))
    plain = (col.str.fullmatch(r"[ -~]+") & ~col.str.match(r"[0-9+.\-]")).to_numpy(dtype=bool)
    keys = col.str.lower().to_numpy(dtype=object)
    odd = np.zeros(len(ids), dtype=bool)
    for i in np.flatnonzero(~plain):
        keys[i], odd[i] = _plain_id_key(ids[i])
    return keys, odd


def _plain_id_key(text: str) -> tuple[str, bool]:
    """:func:`~goldboard.cases.ids.id_key` of ``text`` (blanks stripped), and whether it may hold
    a hidden character (:func:`~goldboard.cases.ids.is_hidden`; checked exactly by the caller).
    Quick for an id that is no number: printable ASCII -> its lower case; other text without a
    hidden character (one regular expression) -> NFC, case folded (``id_key`` drops only format
    characters, which are hidden)."""
    head = text.strip()[:1]
    number = head.isdigit() or head in ("+", "-", ".")
    if text.isascii():
        if text.isprintable():
            return (id_key(text) if number else text.lower()), False
        return id_key(text), True  # a control character
    if _hidden_pattern().search(text):
        return id_key(text), True
    return id_key(text), False  # NFKC, dash look-alikes as '-', case folded


@functools.cache
def _hidden_pattern() -> re.Pattern:
    """A character :func:`~goldboard.cases.ids.is_hidden` accepts (built from its ranges)."""
    return re.compile(
        "[" + "".join(f"\\U{lo:08x}" + (f"-\\U{hi:08x}" if hi > lo else "") for lo, hi in hidden_ranges()) + "]"
    )


def _require_rating_columns(columns, path) -> None:
    """A ratings table read from a file must have its own item_id, rater, field and value
    columns (a missing one is never filled in as blank)."""
    have = [str(c) for c in columns if not str(c).startswith("_")]
    need = [c for c in ("item_id", "rater", "field", "value") if c not in have]
    if need:
        raise GoldboardError(
            f"{path}: no {need[0]!r} column (columns: {', '.join(have) or 'none'}); a ratings table has one "
            f"row per item x rater x field with columns item_id, rater, field, value"
        )


def duplicate_ratings(ratings: pd.DataFrame, source: str = "ratings") -> list[str]:
    """Check that each rater rated each item (and field) at most once per round.

    The same rating given twice is counted once: returns a warning naming the repeats.
    Two *different* ratings of one item by one rater in one round cannot be told apart
    (which one is meant?): a :class:`GoldboardError` naming both rows.
    """
    if len(ratings) == 0:
        return []
    keys = [c for c in ("round", "item_id", "rater", "field") if c in ratings.columns]
    df = ratings.assign(_v=ratings["value"].astype(str).str.strip())
    dup = df[df.duplicated(keys, keep=False)]
    if len(dup) == 0:
        return []
    for key, g in dup.groupby(keys, sort=False):
        if g["_v"].nunique() > 1:
            rec = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
            lines = [f"{source}:{x}" for x in g["_line"]] if "_line" in g.columns else []
            where = f" ({lines[0]} and {lines[1]})" if len(lines) > 1 else ""
            raise GoldboardError(
                f"{lines[0] if lines else source}: rater {rec['rater']} rated item {rec['item_id']} "
                f"{rec.get('field', '')} twice with different values ({', '.join(map(repr, g['value']))}){where}; "
                f"keep one rating per item, rater and field"
            )
    first = dup.drop_duplicates(keys)
    examples = ", ".join(f"{r.item_id} ({r.rater})" for r in first.head(3).itertuples())
    n = len(dup) - len(first)
    return [
        f"{source}: {n} duplicate rating{'s' if n != 1 else ''} (same item, rater, field and value) counted once: "
        f"{examples}{', ...' if len(first) > 3 else ''}"
    ]


# --------------------------------------------------------------------------- readers of other table shapes

_RESERVED = ("item_id", "rater", "value", "field", "_where", "_line")


def _columns_text(df: pd.DataFrame) -> str:
    return ", ".join(str(c) for c in df.columns if not str(c).startswith("_"))


def _where_column(path: Path, df: pd.DataFrame) -> pd.Series:
    if path.suffix.lower() == ".json":
        return df["_line"].map(lambda n: f"{path}: record {int(n)}")
    return df["_line"].map(lambda n: f"{path}:{int(n)}")


def _carry(df: pd.DataFrame, out: pd.DataFrame, used: set[str]) -> pd.DataFrame:
    """Keep the file's other columns (for --by / --cluster-col) under their own names (added at
    once: one column at a time made a 1,000-column table take seconds)."""
    keep = [c for c in df.columns if not (str(c) in used or str(c) in out.columns or str(c).startswith("_"))]
    if not keep:
        return out
    extra = pd.DataFrame({str(c): df[c].to_numpy() for c in keep}, index=out.index)
    return pd.concat([out, extra], axis=1)


def _no_such_column(path: Path, param: str, col: str, df: pd.DataFrame) -> ParamError:
    """``ratings.csv: item_col 'case': no such column (columns: ...)`` (the CLI: ``--item-col``)."""
    return ParamError(
        "{path}: {" + param + "} {col!r}: no such column (columns: {cols})", path=path, col=col, cols=_columns_text(df)
    )


def read_long_table(
    path: str | Path,
    item_col: str = "item_id",
    rater_col: str = "rater",
    label_col: str | None = None,
    field_col: str = "field",
) -> pd.DataFrame:
    """A long ratings table (one row per rating) -> ratings-shaped DataFrame.

    Without ``label_col`` the label is the ``label`` column, else ``value`` (the
    shape ``goldboard pull`` writes).  Raises :class:`~goldboard.cases.problems.ParamError`
    naming the file, the parameter and the missing column.
    """
    path = Path(path)
    df = read_table(path)
    if label_col is None:
        label_col = "label" if "label" in df.columns else ("value" if "value" in df.columns else None)
        if label_col is None:
            raise ParamError(
                "{path}: no label column: looked for 'label' and 'value' (columns: {cols}); name it with {label_col}",
                path=path,
                cols=_columns_text(df),
            )
    for param, col in (("item_col", item_col), ("rater_col", rater_col), ("label_col", label_col)):
        if col not in df.columns:
            raise _no_such_column(path, param, col, df)
    out = pd.DataFrame(
        {"item_id": df[item_col].to_numpy(), "rater": df[rater_col].to_numpy(), "value": df[label_col].to_numpy()}
    )
    if field_col in df.columns:
        out["field"] = df[field_col].to_numpy()
    out["_where"] = _where_column(path, df).to_numpy()
    out["item_id"] = check_item_column(out["item_id"], lambda i: out["_where"].iloc[i], column=item_col).to_numpy()
    out["rater"] = check_rater_column(out["rater"], lambda i: out["_where"].iloc[i]).to_numpy()
    return _carry(df, out, {item_col, rater_col, label_col, field_col})


def read_wide_table(path: str | Path, raters: list[str], item_col: str = "item_id") -> pd.DataFrame:
    """A wide table (one row per item, one column per rater) -> ratings-shaped DataFrame."""
    path = Path(path)
    df = read_table(path)
    if item_col not in df.columns:
        raise _no_such_column(path, "item_col", item_col, df)
    missing = [r for r in raters if r not in df.columns]
    if missing:
        raise ParamError(
            "{path}: {raters}: no column {col!r} (columns: {cols})", path=path, col=missing[0], cols=_columns_text(df)
        )
    if len(set(raters)) != len(raters):
        raise ParamError("{raters}: each rater column may be named once")
    at = {str(c): k for k, c in enumerate(df.columns, 1)}
    check_file_names(raters, lambda i: f"{path}: header column {at[raters[i]]}", noun="rater", column="rater")
    where = _where_column(path, df).to_numpy()
    item_ids = check_item_column(df[item_col], lambda i: where[i], column=item_col).to_numpy()
    frames = []
    for r in raters:
        part = pd.DataFrame(
            {
                "item_id": item_ids,
                "rater": r,
                "value": df[r].to_numpy(),
                "_where": [f"{w} (column {r})" for w in where],
            }
        )
        frames.append(_carry(df, part, {item_col, *raters}))
    return pd.concat(frames, ignore_index=True)


# --------------------------------------------------------------------------- ratings in force and the rating grid


def meta_fields(schema: Schema) -> list[str]:
    """Fields that describe the rater (targets of ``low_confidence`` triggers)."""
    return sorted({t.field for t in schema.triggers if t.kind == "low_confidence"})


def adjudicable_fields(schema: Schema) -> list[Field]:
    """Fields that get flags, decisions and gold, in schema order: the nominal,
    ordinal, binary and multi-select fields, except rater-confidence fields."""
    meta = set(meta_fields(schema))
    return [f for f in schema.fields if (f.level is not None or f.kind == "multi") and f.name not in meta]


def multi_mask(f: Field, value: Any) -> int:
    """Bit mask of a multi-select value (``"a|b"``; ``""`` -> 0).  Each part goes through
    :meth:`Field.normalize`; raises :class:`ValueNotInSchema` for a part outside the schema."""
    check_multi_size(f)
    index = {v: i for i, v in enumerate(f.categories)}
    mask = 0
    for part in str(value).split(MULTI_SEP):
        if part.strip():
            mask |= 1 << index[f.normalize(part)]
    return mask


def multi_value(f: Field, mask: int) -> str:
    """Canonical spelling of a bit mask: values ``|``-joined in schema order (0 -> ``""``)."""
    return MULTI_SEP.join(v for i, v in enumerate(f.categories) if mask >> i & 1)


def canonical_multi(f: Field, value: Any) -> str:
    """A multi-select value in canonical spelling (parts normalised, schema order, no repeats)."""
    return multi_value(f, multi_mask(f, value))


def check_multi_size(f: Field) -> None:
    if len(f.categories) > MAX_MULTI_VALUES:
        raise GoldboardError(
            f"{f.name}: a multi-select field with {len(f.categories)} values cannot be adjudicated "
            f"(at most {MAX_MULTI_VALUES})"
        )


def current_ratings(
    ratings: pd.DataFrame, raters: Sequence[str] | None = None, *, round_number: int | None = None
) -> pd.DataFrame:
    """The ratings in force: for each item its latest *complete* round (every rater of
    ``raters`` rated it; see :mod:`goldboard.cases.rounds`) or round ``round_number``, and
    one row per item x rater x field (the last annotated, when a pull repeated one)."""
    return ratings_in_force(ratings, raters, round_number=round_number)[0]


def ratings_in_force(
    ratings: pd.DataFrame, raters: Sequence[str] | None = None, *, round_number: int | None = None
) -> tuple[pd.DataFrame, RoundSelection]:
    """:func:`current_ratings` plus the :class:`~goldboard.cases.rounds.RoundSelection` that
    says which round each item uses and which items have an incomplete later round.
    ``round_number``: that round only (``--round N``)."""
    check_ratings_columns(ratings)
    df = ratings.copy()
    for c in ("case_id", "output_id", "model", "rationale", "annotated_at", "task_id", "project_id"):
        if c not in df.columns:
            df[c] = ""
    for c in df.columns:
        if c != "round" and c != "_line":
            df[c] = df[c].fillna("").astype(str)
    if len(df) == 0:
        return df, RoundSelection(explicit_round=round_number)
    df, selection = _select_rounds(df, raters, round_number, ratings.attrs.get("assigned"))
    df = df.sort_values(["round", "annotated_at"], kind="stable")
    return df.drop_duplicates(["item_id", "rater", "field"], keep="last").reset_index(drop=True), selection


def _select_rounds(
    df: pd.DataFrame, raters: Sequence[str] | None, round_number: int | None, assigned: Any
) -> tuple[pd.DataFrame, RoundSelection]:
    """:func:`~goldboard.cases.rounds.select_rounds`, answered at once for a table of one round
    (the usual study): every item's round in force is that round, and no later round can be
    incomplete -- the same rows and selection, without the per-item work (1.7 s on 400,000 ratings)."""
    if round_number is None and "round" in df.columns and len(df):
        rounds = round_numbers(df["round"])
        only = int(rounds.iat[0])
        if bool((rounds.to_numpy() == only).all()):
            df = df.copy()
            df["round"] = rounds
            sel = RoundSelection()
            sel.rounds = dict.fromkeys(pd.unique(df["item_id"].astype(str)).tolist(), only)
            return df, sel
    return select_rounds(df, raters, round_number=round_number, assigned=assigned)


def active_raters(ratings: pd.DataFrame, raters: Sequence[str] | None = None) -> list[str]:
    """Raters with at least one rating, in the given order (default: sorted names)."""
    present = set(ratings["rater"].astype(str).unique().tolist()) if len(ratings) else set()
    if raters is None:
        return sorted(present)
    return [r for r in raters if r in present]


def item_meta(ratings: pd.DataFrame) -> pd.DataFrame:
    """item_id -> case_id, output_id, model (first non-empty value per item)."""
    cols = ["case_id", "output_id", "model"]
    df = ratings[["item_id", *cols]].replace("", np.nan)
    meta = df.groupby("item_id", sort=False)[cols].first().fillna("")
    return meta


def check_ratings_columns(ratings: pd.DataFrame) -> None:
    missing = [c for c in _REQUIRED_COLUMNS if c not in ratings.columns]
    if missing:
        raise GoldboardError(
            f"ratings: missing column {missing[0]!r} (columns: {', '.join(map(str, ratings.columns))})"
        )


def normalized_values(ratings: pd.DataFrame, schema: Schema, source: str = "ratings") -> pd.DataFrame:
    """Ratings of the adjudicable fields with values in canonical spelling.

    Raises :class:`GoldboardError` naming ``source``, the line and field of the first
    value that is not in the schema.
    """
    names = {f.name: f for f in adjudicable_fields(schema)}
    df = ratings[ratings["field"].isin(list(names))].copy()
    canonical = _canonical_by_column(df, names)
    if canonical is not None:
        df["value"] = canonical
        return df
    out = []  # some value is not in the schema: find the first, row by row, and name its line
    known: dict[tuple, str] = {}  # (field, raw) -> canonical: a table holds few distinct spellings
    for idx, (fname, raw) in enumerate(zip(df["field"].tolist(), df["value"].tolist())):
        if raw == "":
            out.append("")
            continue
        if (fname, raw) in known:
            out.append(known[fname, raw])
            continue
        try:
            f = names[fname]
            known[fname, raw] = canonical_multi(f, raw) if f.kind == "multi" else f.normalize(raw)
            out.append(known[fname, raw])
        except ValueNotInSchema as exc:
            row = df.iloc[idx]
            line = row["_line"] if "_line" in df.columns else None
            where = (
                f"{source}:{line}"
                if line not in (None, "")
                else f"{source}: item {row['item_id']} rater {row['rater']}"
            )
            raise GoldboardError(f"{where}: {fname}: {exc}") from None
    df["value"] = out
    return df


def _canonical_by_column(df: pd.DataFrame, names: dict[str, Field]) -> np.ndarray | None:
    """The canonical values of ``df`` (what :func:`normalized_values` writes), each distinct
    spelling of a field normalised once over whole columns; ``None`` when some value is not in
    the schema (the caller's row-by-row loop then names the first such row)."""
    fields = df["field"].to_numpy(dtype=object)
    raw = df["value"].to_numpy(dtype=object)
    out = np.empty(len(df), dtype=object)
    for fname in pd.unique(fields).tolist():
        mask = fields == fname
        codes, uniques = pd.factorize(raw[mask], use_na_sentinel=False)
        f = names[fname]
        canon = []
        for v in uniques.tolist():
            try:
                canon.append("" if v == "" else canonical_multi(f, v) if f.kind == "multi" else f.normalize(v))
            except ValueNotInSchema:
                return None
        out[mask] = np.asarray(canon, dtype=object)[codes] if canon else np.empty(0, dtype=object)
    return out


# --------------------------------------------------------------------------- rating grid


@dataclass
class RatingGrid:
    """The ratings in force as items x raters code matrices, one per adjudicable field.

    ``codes[field][i, j]`` is the category index (schema order) of rater ``j``'s value
    for item ``i``; ``k`` (the number of categories) for a non-required field the rater
    left blank; ``-1`` when the rating is missing (the rater did not rate the item, or
    left a required field empty).  For a multi-select field the code is the bit mask
    of the rater's set (:func:`multi_mask`; 0 = nothing ticked) and ``-1`` when missing
    (see the module doc for the rules).
    """

    ratings: pd.DataFrame  # current ratings of the active raters (values as given)
    items: list[str]
    meta: pd.DataFrame  # item_id -> case_id, output_id, model
    raters: list[str]
    rated: np.ndarray  # items x raters: the rater rated the item (any field)
    rationale: np.ndarray  # items x raters: rationale text
    fields: list[Field]
    codes: dict[str, np.ndarray]
    #: which round each item's ratings come from (see :mod:`goldboard.cases.rounds`)
    selection: RoundSelection = dc_field(default_factory=RoundSelection)
    #: items x raters: the rater was asked to rate the item (a round pushed with a design --
    #: ``--overlap`` / ``--per-item`` -- gives an item to some raters only); ``None``: everyone
    expected: np.ndarray | None = None
    #: ``expected`` comes from a design (not only from the raters each round's pull recorded)
    designed: bool = True

    @property
    def has_design(self) -> bool:
        return self.designed and self.expected is not None and not bool(self.expected.all())

    def expected_mask(self) -> np.ndarray:
        """items x raters: who was asked to rate each item (all ``True`` without a design)."""
        if self.expected is None:
            return np.ones((len(self.items), len(self.raters)), dtype=bool)
        return self.expected

    def values(self, field: str) -> np.ndarray:
        """items x raters canonical values (``""`` for blank or missing)."""
        f = next(x for x in self.fields if x.name == field)
        if f.kind == "multi":
            codes = self.codes[field]
            uniq, inv = np.unique(codes, return_inverse=True)
            labels = np.array([multi_value(f, int(c)) if c >= 0 else "" for c in uniq] or [""], dtype=object)
            return labels[inv.reshape(codes.shape)] if codes.size else np.empty(codes.shape, dtype=object)
        cats = np.array(f.categories + ["", ""], dtype=object)
        return cats[self.codes[field]]  # -1 indexes the last "" (missing)

    def field(self, name: str) -> Field:
        return next(x for x in self.fields if x.name == name)

    def status(self, field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(present, disagree, missing) per item for ``field``."""
        codes = self.codes[field]
        present = codes != MISSING_CODE
        big = np.iinfo(np.int64).max
        cmin = np.where(present, codes, big).min(axis=1, initial=big)  # initial: no raters -> no error
        cmax = np.where(present, codes, -1).max(axis=1, initial=-1)
        disagree = present.any(axis=1) & (cmin != cmax)
        missing = (~present & self.expected_mask()).any(axis=1) & self.rated.any(axis=1)
        return present, disagree, missing

    def complete(self, field: str) -> np.ndarray:
        """Per item: every rater asked to rate it gave a value for ``field`` (and, in a
        round with a design, at least two did -- one rating is ``single``, not agreement)."""
        present, _, _ = self.status(field)
        if not present.size:
            return np.zeros(len(self.items), dtype=bool)
        ok = (present | ~self.expected_mask()).all(axis=1)
        return ok & (present.sum(axis=1) >= 2) if self.has_design else ok


def rating_grid(
    ratings: pd.DataFrame,
    schema: Schema,
    raters: Sequence[str] | None = None,
    *,
    source: str = "ratings",
    round_number: int | None = None,
) -> RatingGrid:
    """Build the :class:`RatingGrid` of the ratings in force (see :func:`current_ratings`).

    Values are mapped to canonical spellings (aliases allowed); a value outside the
    schema raises :class:`GoldboardError` naming ``source``, the line and the field.
    Every rater in ``raters`` (the study's raters) is a column: one who rated nothing is missing
    on every item -- gold is never "unanimous" from the raters who happen to have rated
    (issue 23, G1).  Without ``raters``: the raters with at least one rating, sorted.
    """
    cur, selection = ratings_in_force(ratings, raters, round_number=round_number)
    rlist = list(dict.fromkeys(raters)) if raters is not None else active_raters(ratings)
    fields = adjudicable_fields(schema)
    cur = cur[cur["rater"].isin(rlist)] if len(cur) else cur
    if len(cur) == 0 or not rlist:
        fields = [f for f in fields if f.kind != "multi"]
        empty = np.zeros((0, len(rlist)))
        return RatingGrid(
            cur,
            [],
            pd.DataFrame(columns=["case_id", "output_id", "model"]),
            rlist,
            empty.astype(bool),
            empty.astype(object),
            fields,
            {f.name: empty.astype(int) for f in fields},
            selection,
        )
    collected = set(cur["field"].unique().tolist())
    # a field no rater has a row for (never collected: a table pulled with other --field, a form
    # without it) is left out -- no flags, no gold: its blank is no one's answer, never "unanimous"
    fields = [f for f in fields if f.name in collected]
    vals = normalized_values(cur, schema, source)
    meta = item_meta(cur)
    items = natural_sorted(meta.index.tolist())
    meta = meta.loc[items]
    item_at, rater_at = _positions(items), _positions(rlist)
    rated = np.zeros((len(items), len(rlist)), dtype=bool)
    rated[_indexer(item_at, cur["item_id"]), _indexer(rater_at, cur["rater"])] = True
    # each rating's cell, found once for every field (value_grid's lookups, not one per field)
    cells = (_indexer(item_at, vals["item_id"]), _indexer(rater_at, vals["rater"]))
    val_field, val_value = vals["field"].to_numpy(dtype=object), vals["value"].to_numpy(dtype=object)
    codes = {}
    for f in fields:
        on = val_field == f.name
        grid = np.full((len(items), len(rlist)), None, dtype=object)
        grid[cells[0][on], cells[1][on]] = val_value[on]  # = value_grid(vals[vals["field"] == f.name], ...)
        if f.kind == "multi":  # bit mask of the set; no row for the field -> missing
            codes[f.name] = multi_codes(grid, f)
            continue
        c = category_codes(grid, f)
        k = len(f.categories)
        if f.required:  # a required field left empty is missing
            c = np.where(c == k, MISSING_CODE, c)
        else:  # a rater who rated the item but has no row for an optional field left it blank
            c = np.where((c == MISSING_CODE) & rated, k, c)
        codes[f.name] = c
    expected = _expected_grid(ratings.attrs.get("assigned"), selection, items, rlist)
    designed = expected is not None
    expected = _round_raters_grid(ratings.attrs.get("round_raters"), selection, items, rlist, expected)
    rationale = np.full((len(items), len(rlist)), "", dtype=object)  # = rationale_grid(cur, pd.Index(items), rlist)
    said = cur[cur["rationale"] != ""].drop_duplicates(["item_id", "rater"], keep="last")
    if len(said):
        rationale[_indexer(item_at, said["item_id"]), _indexer(rater_at, said["rater"])] = said["rationale"].to_numpy()
    return RatingGrid(cur, items, meta, rlist, rated, rationale, fields, codes, selection, expected, designed)


def _positions(names: list[str]) -> dict[str, int]:
    return {name: k for k, name in enumerate(names)}


def _indexer(at: dict[str, int], values: pd.Series) -> np.ndarray:
    """``pd.Index(names).get_indexer(values)`` (-1 where absent), each distinct value looked up
    once: on 400,000 ratings 5x quicker than pandas' lookup of every Arrow string."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return np.array([at.get(u, -1) for u in uniques.tolist()] or [-1], dtype=np.intp)[codes]


def _expected_grid(assigned: Any, selection: RoundSelection, items: list[str], rlist: list[str]) -> np.ndarray | None:
    """items x raters mask of who the round's design gave each item to (``None``: no design)."""
    if not assigned or not items:
        return None
    mask = np.ones((len(items), len(rlist)), dtype=bool)
    pos = {r: j for j, r in enumerate(rlist)}
    any_design = False
    for i, item in enumerate(items):
        rnd = selection.rounds.get(item)
        who = assigned.get((item, rnd)) if rnd is not None else None
        if who is None:
            continue
        any_design = True
        mask[i, :] = False
        for r in who:
            if r in pos:
                mask[i, pos[r]] = True
    return mask if any_design else None


def _round_raters_grid(
    round_raters: Any, selection: RoundSelection, items: list[str], rlist: list[str], expected: np.ndarray | None
) -> np.ndarray | None:
    """``expected`` narrowed, for the items of a round without a design, to the raters that round's
    pull recorded (``round_raters``: ``{round: raters}``, :meth:`~goldboard.study.Study.round_raters`):
    a rater added for a later round (``study add-rater``) is not expected on the items pulled before."""
    if not round_raters or not items:
        return expected
    pos = {r: j for j, r in enumerate(rlist)}
    rows: dict[int, np.ndarray] = {}
    for n, names in round_raters.items():
        row = np.zeros(len(rlist), dtype=bool)
        row[[pos[r] for r in names if r in pos]] = True
        if row.any() and not row.all():
            rows[int(n)] = row
    if not rows:
        return expected
    mask = np.ones((len(items), len(rlist)), dtype=bool) if expected is None else expected.copy()
    for i, item in enumerate(items):
        row = rows.get(selection.rounds.get(item, -1))
        if row is not None and (expected is None or expected[i].all()):  # a design's draw wins
            mask[i] = row
    return mask


def value_grid(sub: pd.DataFrame, item_pos: pd.Index, rlist: list[str]) -> np.ndarray:
    """items x raters array of values (``None`` where a rater has no row)."""
    grid = np.full((len(item_pos), len(rlist)), None, dtype=object)
    if len(sub):
        ii = item_pos.get_indexer(sub["item_id"])
        rr = pd.Index(rlist).get_indexer(sub["rater"])
        grid[ii, rr] = sub["value"].to_numpy()
    return grid


def rationale_grid(cur: pd.DataFrame, item_pos: pd.Index, rlist: list[str]) -> np.ndarray:
    grid = np.full((len(item_pos), len(rlist)), "", dtype=object)
    sub = cur[cur["rationale"] != ""].drop_duplicates(["item_id", "rater"], keep="last")
    if len(sub):
        grid[item_pos.get_indexer(sub["item_id"]), pd.Index(rlist).get_indexer(sub["rater"])] = sub[
            "rationale"
        ].to_numpy()
    return grid


def category_codes(grid: np.ndarray, f: Field) -> np.ndarray:
    """Category index per cell: 0..k-1, ``k`` for a blank value, -1 when missing."""
    lookup = {v: i for i, v in enumerate(f.categories)}
    lookup[""] = len(f.categories)
    flat = grid.ravel()
    mapped = pd.Series(flat, dtype=object).map(lookup)
    out = mapped.fillna(MISSING_CODE).to_numpy(dtype=int)
    for i in np.flatnonzero(mapped.isna().to_numpy()):
        v = flat[i]
        if v is None:
            continue
        try:
            out[i] = lookup[f.normalize(v)]
        except ValueNotInSchema as exc:
            raise GoldboardError(f"ratings: {f.name}: {exc}") from None
    flat = out
    return np.asarray(flat, dtype=int).reshape(grid.shape)


def multi_codes(grid: np.ndarray, f: Field) -> np.ndarray:
    """Bit mask per cell (values already canonical or normalisable), -1 where there is no row."""
    check_multi_size(f)
    flat = grid.ravel()
    out = np.full(flat.shape, MISSING_CODE, dtype=np.int64)
    cache: dict[str, int] = {}
    for i, v in enumerate(flat):
        if v is None:
            continue
        m = cache.get(v)
        if m is None:
            try:
                m = cache[v] = multi_mask(f, v)
            except ValueNotInSchema as exc:
                raise GoldboardError(f"ratings: {f.name}: {exc}") from None
        out[i] = m
    return out.reshape(grid.shape)
