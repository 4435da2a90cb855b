"""Disagreement flags: which items need a decision, why, and in what order.

:func:`flag_disagreements` takes the tidy ratings table (one row per item x rater
x field, see :mod:`goldboard.cases.ratings`) and returns one row per item x field
that needs adjudication, with every *kind* of problem that applies:

``boundary``        the raters' values sit on two sides of a named schema boundary
                    (e.g. ``sufficiency_vs_optimization``: one says Insufficient
                    Information, the other accepts the therapy)
``gap``             an ordinal field's values differ by >= ``min_gap`` steps (schema trigger)
``threshold``       one rating below the schema's critical value, one at or above it
``incompatible``    different nominal values that the schema does not list as compatible
``rule``            a rater's own rating breaks a schema cross-field rule (e.g. mtb: missing_info
                    ticked with the label Supported); raised on both fields of the rule, even
                    when the raters agree, so the adjudicator decides them together (the rating
                    itself is kept as rated; see :mod:`goldboard.adjudicate.rules`)
``disagree``        the values differ at all (every disagreement carries this kind;
                    an item with only this kind is a *plain* disagreement)
``low_confidence``  a rater's confidence is <= the trigger's ``at_most`` (raised even
                    when the raters agree; attached to the primary field's row)
``missing``         a rater who rated other items did not rate this one, or left a
                    required field empty

Schema trigger names (e.g. ``keep_drop_disagreement``, ``crosses_safety_critical``)
are listed in ``triggers``; named boundaries in ``boundaries``.  With more than two
raters every kind is evaluated over all rater pairs (a boundary is crossed when any
two raters sit on its two sides; the gap is the largest pairwise gap).

Agenda order (column ``agenda``, one number per item): items sorted by their most
serious flag (schema priority, lower = more serious; unprioritised kinds
:data:`DEFAULT_PRIORITY`), then the larger ordinal gap, then item id (natural
order); an item's rows stay together, in schema field order.

Fields that carry a ``low_confidence`` trigger (a rater's confidence) describe the
rater, not the item: they are never flagged or adjudicated themselves.

Multi-select fields (schema kind ``multi``, e.g. mtb's ``missing_info``)
-------------------------------------------------------------------------
A rater's multi-select rating is the *set* of values in the ratings row (``|``-joined;
each part mapped through :meth:`Field.normalize`, so order, case and aliases do not
matter).  Rules:

- ``""`` is a rating: the empty set (nothing ticked).  That includes a field hidden
  from the rater by ``shown_when`` -- pull writes ``""`` then -- so a rater who
  labels Supported and one who labels Supported both "agree" on ``missing_info``.
- A rater who did not rate the item, or has no row for the field while the field
  has rows elsewhere in the table, is *missing* for it.
- A multi field with no rows at all in the ratings (e.g. a ratings file holding only
  the primary label) was not collected: it gets no flags and no gold rows.
- The field disagrees when the raters' sets differ (kind ``disagree``; a plain
  disagreement unless the schema names a trigger or boundary on the field).
  Schema triggers allowed on a multi field: ``disagree``, ``missing`` and
  ``incompatible`` (= the sets differ; ``compatible`` pairs are not supported).
  A boundary on a multi field is crossed when, for some two raters, one ticked a
  side-A value the other did not tick, and the other ticked a side-B value the first
  did not tick.  Multi fields are never low-confidence targets and have no ``gap``.
- Agenda: multi rows count towards their item's priority like any row, but within
  an item they sort after the single-choice rows (after the primary-field row).

The sets are held as bit masks (bit ``i`` = the field's ``i``-th value in schema order),
so a multi field may have at most :data:`MAX_MULTI_VALUES` values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

import numpy as np
import pandas as pd

from goldboard.adjudicate.rules import rating_rule_breaks, rule_break_matrix
from goldboard.cases.rounds import RoundSelection, select_rounds
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import Field, Schema, ValueNotInSchema

#: priority given to a flag kind that no schema boundary or trigger prioritises
DEFAULT_PRIORITY = 9

KINDS = ("boundary", "threshold", "gap", "incompatible", "rule", "disagree", "low_confidence", "missing")

FLAG_COLUMNS = [
    "agenda",
    "item_id",
    "case_id",
    "output_id",
    "model",
    "field",
    "priority",
    "gap",
    "kinds",
    "boundaries",
    "triggers",
    "disagree",
    "triggered",
    "low_confidence_raters",
    "missing_raters",
]
_REQUIRED_COLUMNS = ("item_id", "rater", "field", "value")
_MISSING = -1
#: largest multi-select field whose sets fit a 64-bit mask
MAX_MULTI_VALUES = 62
#: separator of multi-select values in the ratings table and gold (see cases.ratings.MULTI_SEP)
MULTI_SEP = "|"


# --------------------------------------------------------------------------- helpers


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
    _check_multi_size(f)
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


def _check_multi_size(f: Field) -> None:
    if len(f.categories) > MAX_MULTI_VALUES:
        raise GoldboardError(
            f"{f.name}: a multi-select field with {len(f.categories)} values cannot be adjudicated "
            f"(at most {MAX_MULTI_VALUES})"
        )


def natural_key(text: Any) -> tuple:
    """Sort key that orders ``C-2`` before ``C-10``."""
    parts = re.split(r"(\d+)", str(text))
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


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
    _check_columns(ratings)
    df = ratings.copy()
    for c in ("case_id", "output_id", "model", "rationale", "annotated_at", "task_id", "project_id"):
        if c not in df.columns:
            df[c] = ""
    for c in df.columns:
        if c != "round" and c != "_line":
            df[c] = df[c].fillna("").astype(str)
    if len(df) == 0:
        return df, RoundSelection(explicit_round=round_number)
    df, selection = select_rounds(df, raters, round_number=round_number)
    df = df.sort_values(["round", "annotated_at"], kind="stable")
    return df.drop_duplicates(["item_id", "rater", "field"], keep="last").reset_index(drop=True), selection


def active_raters(ratings: pd.DataFrame, raters: Sequence[str] | None = None) -> list[str]:
    """Raters with at least one rating, in the given order (default: sorted names)."""
    present = set(ratings["rater"].astype(str)) if len(ratings) else set()
    if raters is None:
        return sorted(present)
    return [r for r in raters if r in present]


def item_meta(ratings: pd.DataFrame) -> pd.DataFrame:
    """item_id -> case_id, output_id, model (first non-empty value per item)."""
    cols = ["case_id", "output_id", "model"]
    df = ratings[["item_id", *cols]].replace("", np.nan)
    meta = df.groupby("item_id", sort=False)[cols].first().fillna("")
    return meta


def _check_columns(ratings: pd.DataFrame) -> None:
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
    out = []
    for idx, (fname, raw) in enumerate(zip(df["field"], df["value"])):
        if raw == "":
            out.append("")
            continue
        try:
            f = names[fname]
            out.append(canonical_multi(f, raw) if f.kind == "multi" else f.normalize(raw))
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
        present = codes != _MISSING
        big = np.iinfo(np.int64).max
        cmin = np.where(present, codes, big).min(axis=1)
        cmax = np.where(present, codes, -1).max(axis=1)
        disagree = present.any(axis=1) & (cmin != cmax)
        missing = (~present).any(axis=1) & self.rated.any(axis=1)
        return present, disagree, missing


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
    Raters without a single rating are left out.
    """
    cur, selection = ratings_in_force(ratings, raters, round_number=round_number)
    rlist = active_raters(ratings, raters)  # a rater of the study, even when absent from the round in force
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
    collected = set(cur["field"])
    fields = [f for f in fields if f.kind != "multi" or f.name in collected]  # multi never collected: left out
    vals = normalized_values(cur, schema, source)
    meta = item_meta(cur)
    items = sorted(meta.index, key=natural_key)
    meta = meta.loc[items]
    item_pos = pd.Index(items)
    rated = np.zeros((len(items), len(rlist)), dtype=bool)
    rated[item_pos.get_indexer(cur["item_id"]), pd.Index(rlist).get_indexer(cur["rater"])] = True
    codes = {}
    for f in fields:
        if f.kind == "multi":  # bit mask of the set; no row for the field -> missing
            codes[f.name] = _multi_codes(_value_grid(vals[vals["field"] == f.name], item_pos, rlist), f)
            continue
        c = _codes(_value_grid(vals[vals["field"] == f.name], item_pos, rlist), f)
        k = len(f.categories)
        if f.required:  # a required field left empty is missing
            c = np.where(c == k, _MISSING, c)
        else:  # a rater who rated the item but has no row for an optional field left it blank
            c = np.where((c == _MISSING) & rated, k, c)
        codes[f.name] = c
    return RatingGrid(cur, items, meta, rlist, rated, _rationales(cur, item_pos, rlist), fields, codes, selection)


# --------------------------------------------------------------------------- flags


def flag_disagreements(
    ratings: pd.DataFrame,
    schema: Schema,
    raters: Sequence[str] | None = None,
    *,
    source: str = "ratings",
    round_number: int | None = None,
) -> pd.DataFrame:
    """Every item x field whose ratings need adjudication, in agenda order.

    Parameters
    ----------
    ratings : tidy ratings table (``RATINGS_COLUMNS``); values may use schema aliases.
        When several rounds are present, each item's latest round in which every rater
        rated it is used (:mod:`goldboard.cases.rounds`; ``round_number`` picks one round).
    schema : the study schema (fields, boundaries, triggers, priorities).
    raters : rater names in display order (default: sorted names found in ``ratings``).
        Raters without a single rating are left out (they are not "missing" everywhere);
        ratings by raters not in the list are ignored.
    source : file name used in error messages.

    Returns
    -------
    DataFrame with :data:`FLAG_COLUMNS` plus ``value_<rater>`` and ``rationale_<rater>``
    for each rater.  ``kinds``, ``boundaries``, ``triggers``, ``low_confidence_raters``,
    ``missing_raters`` hold lists; ``gap`` is the largest pairwise ordinal gap
    (``NaN`` for nominal fields).  Empty (with those columns) when nothing disagrees.
    """
    grid = rating_grid(ratings, schema, raters, source=source, round_number=round_number)
    rlist = grid.raters
    columns = FLAG_COLUMNS + [f"value_{r}" for r in rlist] + [f"rationale_{r}" for r in rlist]
    if not grid.items:
        return _with_fields(pd.DataFrame(columns=columns), grid, schema)
    primary = schema.primary_field.name
    low_conf = _low_confidence(grid.ratings, schema, pd.Index(grid.items), rlist)
    rows: list[dict] = []
    for f in grid.fields:
        if f.kind == "multi":
            rows.extend(_flag_multi_field(f, grid, schema))
        else:
            rows.extend(_flag_field(f, grid, schema, low_conf if f.name == primary else None))
    if not rows:
        return _with_fields(pd.DataFrame(columns=columns), grid, schema)
    out = pd.DataFrame(rows)
    multi = {f.name for f in grid.fields if f.kind == "multi"}
    return _with_fields(_agenda_order(out, [f.name for f in grid.fields], multi)[columns], grid, schema)


def _with_fields(flags: pd.DataFrame, grid: RatingGrid, grid_schema: Schema | None = None) -> pd.DataFrame:
    """Record which fields were examined (``attrs["fields"]``, read by :func:`summarize_flags`)
    and which round each item came from (``attrs["round_selection"]``)."""
    flags.attrs["fields"] = [f.name for f in grid.fields]
    flags.attrs["round_selection"] = grid.selection
    flags.attrs["rule_breaks"] = rating_rule_breaks(grid, grid_schema) if grid_schema is not None else []
    return flags


def _value_grid(sub: pd.DataFrame, item_pos: pd.Index, rlist: list[str]) -> np.ndarray:
    """items x raters array of values (``None`` where a rater has no row)."""
    grid = np.full((len(item_pos), len(rlist)), None, dtype=object)
    if len(sub):
        ii = item_pos.get_indexer(sub["item_id"])
        rr = pd.Index(rlist).get_indexer(sub["rater"])
        grid[ii, rr] = sub["value"].to_numpy()
    return grid


def _rationales(cur: pd.DataFrame, item_pos: pd.Index, rlist: list[str]) -> np.ndarray:
    grid = np.full((len(item_pos), len(rlist)), "", dtype=object)
    sub = cur[cur["rationale"] != ""].drop_duplicates(["item_id", "rater"], keep="last")
    if len(sub):
        grid[item_pos.get_indexer(sub["item_id"]), pd.Index(rlist).get_indexer(sub["rater"])] = sub[
            "rationale"
        ].to_numpy()
    return grid


def _low_confidence(cur: pd.DataFrame, schema: Schema, item_pos: pd.Index, rlist: list[str]):
    """(mask items x raters of low confidence, trigger list) or None."""
    trig = [t for t in schema.triggers if t.kind == "low_confidence"]
    if not trig:
        return None
    mask = np.zeros((len(item_pos), len(rlist)), dtype=bool)
    fired: list[tuple[np.ndarray, Any]] = []
    for t in trig:
        f = schema.field(t.field)
        sub = cur[cur["field"] == t.field]
        grid = _value_grid(sub, item_pos, rlist)
        codes = _codes(grid, f)
        limit = f.categories.index(t.at_most)
        low = (codes >= 0) & (codes < len(f.categories)) & (codes <= limit)
        mask |= low
        fired.append((low, t))
    return mask, fired


def _codes(grid: np.ndarray, f: Field) -> np.ndarray:
    """Category index per cell: 0..k-1, ``k`` for a blank value, -1 when missing."""
    lookup = {v: i for i, v in enumerate(f.categories)}
    lookup[""] = len(f.categories)
    flat = grid.ravel()
    mapped = pd.Series(flat, dtype=object).map(lookup)
    out = mapped.fillna(_MISSING).to_numpy(dtype=int)
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


def _multi_codes(grid: np.ndarray, f: Field) -> np.ndarray:
    """Bit mask per cell (values already canonical or normalisable), -1 where there is no row."""
    _check_multi_size(f)
    flat = grid.ravel()
    out = np.full(flat.shape, _MISSING, dtype=np.int64)
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


def _flag_multi_field(f: Field, grid: RatingGrid, schema: Schema) -> list[dict]:
    """Flag rows of a multi-select field: the raters' sets differ, or a rating is missing
    (plus the schema's boundaries and disagree/incompatible/missing triggers on it)."""
    codes = grid.codes[f.name]
    present, disagree, missing = grid.status(f.name)
    n, m = codes.shape
    acc = _Hits(n)
    hit, bnames, tnames = acc.hit, acc.boundaries, acc.triggers

    index = {v: i for i, v in enumerate(f.categories)}
    for b in schema.boundaries_for(f.name):
        side_a = sum(1 << index[v] for v in b.a)
        side_b = sum(1 << index[v] for v in b.b)
        crossed = np.zeros(n, dtype=bool)
        for j in range(m):
            for l in range(m):
                if j == l:
                    continue
                both = present[:, j] & present[:, l]
                only_j = codes[:, j] & ~codes[:, l]
                only_l = codes[:, l] & ~codes[:, j]
                crossed |= both & ((only_j & side_a) != 0) & ((only_l & side_b) != 0)
        hit(crossed, "boundary", b.name, b.priority, bnames)
    for t in schema.triggers_for(f.name):
        if t.kind in ("disagree", "incompatible"):
            if t.compatible:
                raise GoldboardError(
                    f"schema {schema.name}: trigger {t.label}: 'compatible' pairs are not supported "
                    f"on the multi-select field {f.name}"
                )
            hit(disagree, t.kind, t.label, t.priority, tnames)
        elif t.kind == "missing":
            hit(missing, "missing", t.label, t.priority, tnames)
    _rule_hits(f, grid, schema, acc)
    hit(disagree, "disagree", None, None)
    hit(missing, "missing", None, None)

    return acc.rows(f, grid, grid.values(f.name), None)


def _flag_field(f: Field, grid: RatingGrid, schema: Schema, low_conf) -> list[dict]:
    k = len(f.categories)
    codes = grid.codes[f.name]
    items, rlist = grid.items, grid.raters
    present, disagree, missing = grid.status(f.name)
    real = present & (codes < k)  # present and not blank

    big = np.iinfo(np.int64).max
    rmin = np.where(real, codes, big).min(axis=1)
    rmax = np.where(real, codes, -1).max(axis=1)
    has_two = real.sum(axis=1) >= 2
    gap = np.where(has_two, rmax - rmin, 0) if f.kind == "ordinal" else None

    n = len(items)
    acc = _Hits(n)
    hit, bnames, tnames = acc.hit, acc.boundaries, acc.triggers

    def has(cat_set: Iterable[str]) -> np.ndarray:
        idx = [f.categories.index(v) for v in cat_set]
        return (real & np.isin(codes, idx)).any(axis=1)

    for b in schema.boundaries_for(f.name):
        hit(has(b.a) & has(b.b), "boundary", b.name, b.priority, bnames)

    for t in schema.triggers_for(f.name):
        if t.kind == "threshold":
            at = f.categories.index(t.at)
            hit(has_two & (rmin < at) & (rmax >= at), "threshold", t.label, t.priority, tnames)
        elif t.kind == "gap":
            hit(has_two & (rmax - rmin >= t.min_gap), "gap", t.label, t.priority, tnames)
        elif t.kind == "incompatible":
            hit(_incompatible(codes, real, f, t.compatible), "incompatible", t.label, t.priority, tnames)
        elif t.kind == "disagree":
            hit(disagree, "disagree", t.label, t.priority, tnames)
        elif t.kind == "missing":
            hit(missing, "missing", t.label, t.priority, tnames)
    _rule_hits(f, grid, schema, acc)
    # generic kinds that apply whether or not the schema names a trigger for them
    hit(disagree, "disagree", None, None)
    hit(missing, "missing", None, None)

    if low_conf is not None:
        mask, fired = low_conf
        for low, t in fired:
            hit(low.any(axis=1), "low_confidence", t.label, t.priority, tnames)
        for i in np.flatnonzero(mask.any(axis=1)):
            acc.low_confidence[i] = [rlist[j] for j in np.flatnonzero(mask[i])]

    values = np.where(
        (codes == _MISSING) | (codes == k), "", np.asarray(f.categories + [""], dtype=object)[np.clip(codes, 0, k)]
    )
    return acc.rows(f, grid, values, np.where(has_two, gap, -1) if gap is not None else None)


def _rule_hits(f: Field, grid: RatingGrid, schema: Schema, acc: _Hits) -> None:
    """Kind ``rule`` on the items where a rater's own rating breaks a rule naming ``f``."""
    for rule in schema.rules_for(f.name):
        acc.hit(rule_break_matrix(grid, rule).any(axis=1), "rule", rule.name, rule.priority, acc.triggers)


class _Hits:
    """Per-item flag accumulator of one field: kinds, named boundaries and triggers, the
    most serious priority, and whether a schema boundary/trigger fired."""

    def __init__(self, n: int) -> None:
        self.kinds: list[list[str]] = [[] for _ in range(n)]
        self.boundaries: list[list[str]] = [[] for _ in range(n)]
        self.triggers: list[list[str]] = [[] for _ in range(n)]
        self.low_confidence: list[list[str]] = [[] for _ in range(n)]
        self.priority = np.full(n, DEFAULT_PRIORITY + 1, dtype=int)  # > DEFAULT: nothing flagged yet
        self.triggered = np.zeros(n, dtype=bool)

    def hit(self, mask: np.ndarray, kind: str, name: str | None, priority: int | None, bucket=None) -> None:
        """Add ``kind`` (and ``name`` to ``bucket``) to the items in ``mask``; a named
        boundary/trigger (``priority`` given) also marks them triggered."""
        p = DEFAULT_PRIORITY if priority is None else priority
        for i in np.flatnonzero(mask):
            if kind not in self.kinds[i]:
                self.kinds[i].append(kind)
            if name is not None and bucket is not None and name not in bucket[i]:
                bucket[i].append(name)
            self.priority[i] = min(self.priority[i], p)
        if priority is not None:
            self.triggered[mask] = True

    def rows(self, f: Field, grid: RatingGrid, values: np.ndarray, gap: np.ndarray | None) -> list[dict]:
        """One flag row per flagged item (``gap`` < 0 or None: no gap)."""
        present, disagree, missing = grid.status(f.name)
        meta, rlist = grid.meta, grid.raters
        rows = []
        for i in np.flatnonzero(self.priority <= DEFAULT_PRIORITY):
            row = {
                "item_id": grid.items[i],
                "case_id": meta.iat[i, 0],
                "output_id": meta.iat[i, 1],
                "model": meta.iat[i, 2],
                "field": f.name,
                "priority": int(self.priority[i]),
                "gap": float(gap[i]) if gap is not None and gap[i] >= 0 else np.nan,
                "kinds": [k_ for k_ in KINDS if k_ in self.kinds[i]],
                "boundaries": self.boundaries[i],
                "triggers": self.triggers[i],
                "disagree": bool(disagree[i]),
                "triggered": bool(self.triggered[i]),
                "low_confidence_raters": self.low_confidence[i],
                "missing_raters": [rlist[j] for j in np.flatnonzero(~present[i])] if missing[i] else [],
            }
            for j, r in enumerate(rlist):
                row[f"value_{r}"] = values[i, j]
                row[f"rationale_{r}"] = grid.rationale[i, j]
            rows.append(row)
        return rows


def _incompatible(codes: np.ndarray, real: np.ndarray, f: Field, compatible) -> np.ndarray:
    """Some pair of raters chose different values not listed as compatible."""
    ok = {(f.categories.index(a), f.categories.index(b)) for a, b in compatible}
    ok |= {(b, a) for a, b in ok}
    n, m = codes.shape
    out = np.zeros(n, dtype=bool)
    for j in range(m):
        for l in range(j + 1, m):
            both = real[:, j] & real[:, l] & (codes[:, j] != codes[:, l])
            if ok:
                pair_ok = np.array([(a, b) in ok for a, b in zip(codes[:, j], codes[:, l])], dtype=bool)
                both &= ~pair_ok
            out |= both
    return out


def _agenda_order(df: pd.DataFrame, field_order: list[str], multi: set[str] = frozenset()) -> pd.DataFrame:
    gap = df["gap"].astype(float).fillna(-1)
    item_prio = df.groupby("item_id")["priority"].transform("min")
    item_gap = gap.groupby(df["item_id"]).transform("max")
    nat = {i: k for k, i in enumerate(sorted(df["item_id"].unique(), key=natural_key))}
    forder = {name: k for k, name in enumerate(field_order)}
    key = pd.DataFrame(
        {
            "p": item_prio,
            "g": -item_gap,
            "i": df["item_id"].map(nat),
            "m": df["field"].isin(list(multi)),
            "rp": df["priority"],
            "f": df["field"].map(forder),
        }
    )
    order = key.sort_values(["p", "g", "i", "m", "rp", "f"], kind="stable").index
    out = df.loc[order].reset_index(drop=True)
    out["agenda"] = pd.factorize(out["item_id"])[0] + 1
    return out


# --------------------------------------------------------------------------- summary


def summarize_flags(flags: pd.DataFrame, schema: Schema) -> dict[str, Any]:
    """Counts for the agenda header.

    ``by_kind`` / ``by_trigger`` count flagged item x field rows; ``by_boundary``
    gives, per named boundary, the number of disagreements on it and the number of
    disagreements on its field (``of``), e.g. sufficiency_vs_optimization: 9 of 16.
    """
    examined = flags.attrs.get("fields")
    if examined is None:  # a flag table not made by flag_disagreements (or its attrs lost)
        examined = [
            f.name
            for f in adjudicable_fields(schema)
            if f.kind != "multi" or (len(flags) and (flags["field"] == f.name).any())
        ]
    disagreements = (
        {name: int(((flags["field"] == name) & flags["disagree"].astype(bool)).sum()) for name in examined}
        if len(flags)
        else {name: 0 for name in examined}
    )
    by_kind = {k: 0 for k in KINDS}
    by_trigger: dict[str, int] = {
        t.label: 0 for t in schema.triggers if t.field in disagreements or t.kind == "low_confidence"
    }
    by_boundary_n = {b.name: 0 for b in schema.boundaries}
    for kinds, trig, bnd in zip(flags.get("kinds", []), flags.get("triggers", []), flags.get("boundaries", [])):
        for k in kinds:
            by_kind[k] = by_kind.get(k, 0) + 1
        for t in trig:
            by_trigger[t] = by_trigger.get(t, 0) + 1
        for b in bnd:
            by_boundary_n[b] = by_boundary_n.get(b, 0) + 1
    by_boundary = {}
    for b in schema.boundaries:
        of = disagreements.get(b.field, 0)
        cnt = by_boundary_n[b.name]
        by_boundary[b.name] = {
            "field": b.field,
            "count": cnt,
            "of": of,
            "share": (cnt / of) if of else None,
            "priority": b.priority,
            "explanation": b.explanation,
        }
    by_kind["plain_disagreement"] = int(sum(1 for k in flags.get("kinds", []) if list(k) == ["disagree"]))
    return {
        "items_flagged": int(flags["item_id"].nunique()) if len(flags) else 0,
        "rows": int(len(flags)),
        "triggered_rows": int(flags["triggered"].astype(bool).sum()) if len(flags) else 0,
        "disagreements": disagreements,
        "by_kind": by_kind,
        "by_trigger": by_trigger,
        "by_boundary": by_boundary,
    }


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """Human-readable lines: ``sufficiency_vs_optimization: 9 of 16 disagreements (56%)``."""
    lines = []
    for name, b in summary["by_boundary"].items():
        share = f" ({b['share']:.0%})" if b["share"] is not None else ""
        lines.append(f"{name}: {b['count']} of {b['of']} disagreements on {b['field']}{share}")
    kinds = ", ".join(f"{k} {v}" for k, v in summary["by_kind"].items() if v)
    lines.append(f"kinds: {kinds or 'none'}")
    trig = ", ".join(f"{k} {v}" for k, v in summary["by_trigger"].items() if v)
    if trig:
        lines.append(f"triggers: {trig}")
    lines.append(f"{summary['items_flagged']} items flagged ({summary['rows']} item x field rows)")
    return lines


def flags_for_output(flags: pd.DataFrame) -> pd.DataFrame:
    """The flag table with list cells joined by ``"; "`` (for CSV and text tables)."""
    out = flags.copy()
    for c in ("kinds", "boundaries", "triggers", "low_confidence_raters", "missing_raters"):
        if c in out.columns:
            out[c] = out[c].map(
                lambda v: "; ".join(v) if isinstance(v, (list, tuple)) else ("" if v is None else str(v))
            )
    if "gap" in out.columns:
        out["gap"] = out["gap"].map(lambda g: "" if pd.isna(g) else str(int(g)))
    return out


__all__ = [
    "DEFAULT_PRIORITY",
    "FLAG_COLUMNS",
    "KINDS",
    "MAX_MULTI_VALUES",
    "MULTI_SEP",
    "RatingGrid",
    "active_raters",
    "rating_grid",
    "adjudicable_fields",
    "canonical_multi",
    "current_ratings",
    "ratings_in_force",
    "multi_mask",
    "multi_value",
    "flag_disagreements",
    "flags_for_output",
    "item_meta",
    "meta_fields",
    "natural_key",
    "normalized_values",
    "summarize_flags",
    "summary_lines",
]


# --------------------------------------------------------------------------- loading


def load_ratings_file(path) -> pd.DataFrame:
    """Read a ratings table (CSV as written by goldboard, or .xlsx/.jsonl/.json with the
    same columns) keeping every cell as text, with a ``_line`` column for error messages."""
    from pathlib import Path

    from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
    from goldboard.fileio import read_table

    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    if path.suffix.lower() == ".csv":
        try:
            df = read_ratings_csv(path)
        except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise GoldboardError(f"{path}: cannot read as a ratings CSV: {str(exc).splitlines()[0]}") from None
        df["_line"] = [str(i + 2) for i in range(len(df))]
    else:
        df = read_table(path)
        for c in df.columns:
            df[c] = df[c].map(lambda v: "" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v))
        for c in RATINGS_COLUMNS:
            if c not in df.columns:
                df[c] = ""
    _check_columns(df)
    return df


def study_ratings(study, round: int | None = None) -> pd.DataFrame:
    """Every pulled round of a study (the round in force per item is chosen later, by
    :func:`rating_grid` and friends; pass ``round`` on to them as ``round_number``).

    ``round`` is only checked here: it must have been pulled.  The other rounds stay
    in the table so that a rater who has not rated round N yet still counts as a rater
    (and shows as missing) instead of disappearing from the study."""
    if round is not None:
        p = study.ratings_path(round)
        if not p.exists():
            raise GoldboardError(f"{p}: not pulled yet (run `goldboard pull --study {study.path} --round {round}`)")
    df = study.all_ratings()
    if len(df) == 0:
        raise GoldboardError(f"{study.path}: no ratings pulled yet (run `goldboard pull --study {study.path}`)")
    return df


__all__ += ["load_ratings_file", "study_ratings"]
