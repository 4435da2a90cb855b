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
``missing``         a rater (of ``raters``: one who rated nothing too) did not rate this
                    item, or left a required field empty

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
- A field with no rows at all in the ratings (e.g. a ratings file holding only
  the primary label, a table pulled with another ``--field``) was not collected: it gets no
  flags and no gold rows (its blank is no one's answer, never a unanimous one).
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

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from itertools import compress
from typing import Any

import numpy as np

from goldboard.adjudicate.rules import rating_rule_breaks, rule_break_matrix
from goldboard.cases.ratings import (
    MISSING_CODE,
    RatingGrid,
    adjudicable_fields,
    canonical_multi,
    category_codes,
    multi_mask,
    rating_grid,
    value_grid,
)
from goldboard.cases.ratings_columns import PandasOnUse
from goldboard.cases.rounds import RoundSelection
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import Field, Schema, ValueNotInSchema
from goldboard.text import natural_key, natural_sorted

pd = PandasOnUse()  # imported when first used: `flag --study` on a small study reads columns (flag_columns)

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


# --------------------------------------------------------------------------- helpers


# --------------------------------------------------------------------------- flags


def flag_disagreements(
    ratings: pd.DataFrame,
    schema: Schema,
    raters: Sequence[str] | None = None,
    *,
    source: str = "ratings",
    round_number: int | None = None,
    single_items: Collection[str] | None = None,
) -> pd.DataFrame:
    """Every item x field whose ratings need adjudication, in agenda order.

    Parameters
    ----------
    ratings : tidy ratings table (``RATINGS_COLUMNS``); values may use schema aliases.
        When several rounds are present, each item's latest round in which every rater
        rated it is used (:mod:`goldboard.cases.rounds`; ``round_number`` picks one round).
    schema : the study schema (fields, boundaries, triggers, priorities).
    raters : rater names in display order (default: sorted names found in ``ratings``).
        A rater without a single rating is missing on every item (issue 23: never an absent rater);
        ratings by raters not in the list are ignored.
    source : file name used in error messages.
    single_items : items the study's design gave to one rater only (``push --overlap``); their
        one rating is not "missing" the others.  Default: ``ratings.attrs["single_items"]``
        (set by :meth:`goldboard.study.Study.ratings`), else none.

    Returns
    -------
    DataFrame with :data:`FLAG_COLUMNS` plus ``value_<rater>`` and ``rationale_<rater>``
    for each rater.  ``kinds``, ``boundaries``, ``triggers``, ``low_confidence_raters``,
    ``missing_raters`` hold lists; ``gap`` is the largest pairwise ordinal gap
    (``NaN`` for nominal fields).  Empty (with those columns) when nothing disagrees.
    """
    grid = rating_grid(ratings, schema, raters, source=source, round_number=round_number)
    rlist = grid.raters
    columns = _flag_columns_of(rlist)
    if not grid.items:
        return _with_fields(pd.DataFrame(columns=columns), grid, schema)
    low_conf = _low_confidence(grid.ratings, schema, pd.Index(grid.items), rlist)
    if single_items is None:
        single_items = ratings.attrs.get("single_items") or ()
    cols = _flag_rows(grid, schema, low_conf, single_items)
    if cols is None:
        return _with_fields(pd.DataFrame(columns=columns), grid, schema)
    multi = {f.name for f in grid.fields if f.kind == "multi"}
    out = pd.DataFrame(cols)
    return _with_fields(_agenda_order(out, [f.name for f in grid.fields], multi)[columns], grid, schema)


def _flag_columns_of(rlist: list[str]) -> list[str]:
    return FLAG_COLUMNS + [f"value_{r}" for r in rlist] + [f"rationale_{r}" for r in rlist]


def _flag_rows(grid: RatingGrid, schema: Schema, low_conf, single_items: Collection[str]) -> dict[str, list] | None:
    """The flag rows of every field as columns, fields in schema order (agenda order is the
    caller's); ``None`` when nothing is flagged.  Shared by the DataFrame path and
    :func:`flag_columns`: the rules are these, whichever way the ratings were read."""
    primary = schema.primary_field.name
    parts: list[dict[str, list]] = []  # per field, the flag rows as columns
    for f in grid.fields:
        if f.kind == "multi":
            parts.append(_flag_multi_field(f, grid, schema))
        else:
            parts.append(_flag_field(f, grid, schema, low_conf if f.name == primary else None))
    if not any(part["item_id"] for part in parts):
        return None
    cols = {c: [v for part in parts for v in part[c]] for c in parts[0]}
    if single_items:  # an item the design gave one rater is not "missing" the others
        single = set(single_items)
        keep = [not (i in single and list(k) == ["missing"]) for i, k in zip(cols["item_id"], cols["kinds"])]
        if not all(keep):
            cols = {c: list(compress(vals, keep)) for c, vals in cols.items()}
        if not cols["item_id"]:
            return None
    return cols


def _with_fields(flags: pd.DataFrame, grid: RatingGrid, schema: Schema) -> pd.DataFrame:
    """Record which fields were examined (``attrs["fields"]``, read by :func:`summarize_flags`),
    which round each item came from (``attrs["round_selection"]``) and the raters' ratings that
    break a schema rule (``attrs["rule_breaks"]``)."""
    flags.attrs.update(_flag_attrs(grid, schema))
    return flags


def _flag_attrs(grid: RatingGrid, schema: Schema) -> dict[str, Any]:
    return {
        "fields": [f.name for f in grid.fields],
        "round_selection": grid.selection,
        "rule_breaks": rating_rule_breaks(grid, schema),
    }


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
        grid = value_grid(sub, item_pos, rlist)
        codes = category_codes(grid, f)
        limit = f.categories.index(t.at_most)
        low = (codes >= 0) & (codes < len(f.categories)) & (codes <= limit)
        mask |= low
        fired.append((low, t))
    return mask, fired


def _flag_multi_field(f: Field, grid: RatingGrid, schema: Schema) -> dict[str, list]:
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


def _flag_field(f: Field, grid: RatingGrid, schema: Schema, low_conf) -> dict[str, list]:
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
        (codes == MISSING_CODE) | (codes == k), "", np.asarray(f.categories + [""], dtype=object)[np.clip(codes, 0, k)]
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
        # item index -> names; an item's list is made when first read (most items are never flagged)
        self.kinds: defaultdict[int, list[str]] = defaultdict(list)
        self.boundaries: defaultdict[int, list[str]] = defaultdict(list)
        self.triggers: defaultdict[int, list[str]] = defaultdict(list)
        self.low_confidence: defaultdict[int, list[str]] = defaultdict(list)
        self.priority = np.full(n, DEFAULT_PRIORITY + 1, dtype=int)  # > DEFAULT: nothing flagged yet
        self.triggered = np.zeros(n, dtype=bool)

    def hit(self, mask: np.ndarray, kind: str, name: str | None, priority: int | None, bucket=None) -> None:
        """Add ``kind`` (and ``name`` to ``bucket``) to the items in ``mask``; a named
        boundary/trigger (``priority`` given) also marks them triggered."""
        p = DEFAULT_PRIORITY if priority is None else priority
        mask = np.asarray(mask, dtype=bool)
        named = name is not None and bucket is not None
        for i in np.flatnonzero(mask).tolist():
            if kind not in self.kinds[i]:
                self.kinds[i].append(kind)
            if named and name not in bucket[i]:
                bucket[i].append(name)
        self.priority[mask] = np.minimum(self.priority[mask], p)  # over the column, not per item
        if priority is not None:
            self.triggered[mask] = True

    def rows(self, f: Field, grid: RatingGrid, values: np.ndarray, gap: np.ndarray | None) -> dict[str, list]:
        """The flag rows of the flagged items, as columns (``gap`` < 0 or None: no gap): one list
        per column, built over the flagged items at once (not one dict per row)."""
        present, disagree, missing = grid.status(f.name)
        meta, rlist = grid.meta, grid.raters
        flagged = np.flatnonzero(self.priority <= DEFAULT_PRIORITY)
        at = flagged.tolist()
        # the three item columns of the flagged items, read once (not one .iat per cell); the
        # column path (flag_columns) holds them as {column: list}
        if isinstance(meta, dict):
            case_ids, output_ids, models = ([meta[c][i] for i in at] for c in ("case_id", "output_id", "model"))
        else:
            case_ids, output_ids, models = (meta.iloc[flagged, c].tolist() for c in range(3))
        gaps = [float(g) if g >= 0 else np.nan for g in gap[flagged].tolist()] if gap is not None else None
        cols = {
            "item_id": [grid.items[i] for i in at],
            "case_id": case_ids,
            "output_id": output_ids,
            "model": models,
            "field": [f.name] * len(at),
            "priority": self.priority[flagged].tolist(),
            "gap": gaps if gaps is not None else [np.nan] * len(at),
            "kinds": [[k_ for k_ in KINDS if k_ in self.kinds[i]] for i in at],
            "boundaries": [self.boundaries[i] for i in at],
            "triggers": [self.triggers[i] for i in at],
            "disagree": disagree[flagged].tolist(),
            "triggered": self.triggered[flagged].tolist(),
            "low_confidence_raters": [self.low_confidence[i] for i in at],
            "missing_raters": [[rlist[j] for j in np.flatnonzero(~present[i])] if missing[i] else [] for i in at],
        }
        for j, r in enumerate(rlist):
            cols[f"value_{r}"] = values[flagged, j].tolist()
            cols[f"rationale_{r}"] = grid.rationale[flagged, j].tolist()
        return cols


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
    nat = {i: k for k, i in enumerate(natural_sorted(df["item_id"].unique().tolist()))}  # = sorted(key=natural_key)
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


# --------------------------------------------------------------------------- flags from columns (no pandas)

#: the flag table's columns that hold lists (joined by ``"; "`` in CSV and text tables)
LIST_COLUMNS = ("kinds", "boundaries", "triggers", "low_confidence_raters", "missing_raters")


class FlagColumns:
    """A flag table as ``{column: list}`` -- what :func:`flag_disagreements` returns as a
    DataFrame, the same columns, order, values and ``attrs`` -- with the few DataFrame manners
    its readers use (``columns``, ``table[name]``, ``get``, ``len``, ``attrs``)."""

    def __init__(self, columns: dict[str, list], attrs: dict[str, Any]) -> None:
        self._columns = columns
        self.attrs = attrs

    @property
    def columns(self) -> list[str]:
        return list(self._columns)

    def __getitem__(self, name: str) -> list:
        return self._columns[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._columns.get(name, default)

    def __len__(self) -> int:
        return len(self._columns["item_id"])

    def only(self, keep: Sequence[bool]) -> FlagColumns:
        """The rows where ``keep`` is true (agenda numbers unchanged, as ``flags[mask]``)."""
        return FlagColumns({c: list(compress(vals, keep)) for c, vals in self._columns.items()}, self.attrs)

    def records(self) -> list[dict[str, Any]]:
        """One dict per row; ``gap`` an int or ``None`` (the JSON of ``goldboard flag``)."""
        cols = self._columns
        out = []
        for i in range(len(self)):
            rec = {c: vals[i] for c, vals in cols.items()}
            rec["gap"] = None if _no_gap(rec["gap"]) else int(rec["gap"])
            out.append(rec)
        return out


def _no_gap(g: Any) -> bool:
    return g is None or (isinstance(g, float) and g != g)


def flag_output_columns(flags: Any) -> dict[str, list]:
    """:func:`flags_for_output` as ``{column: list}``, for a DataFrame or :class:`FlagColumns`:
    list cells joined by ``"; "``, the gap as text (``""`` for none)."""
    out = {}
    for c in flags.columns:
        vals = list(flags[c])
        if c in LIST_COLUMNS:
            vals = ["; ".join(v) if isinstance(v, (list, tuple)) else ("" if v is None else str(v)) for v in vals]
        elif c == "gap":
            vals = ["" if _no_gap(g) else str(int(g)) for g in vals]
        out[c] = vals
    return out


def flag_columns(
    table: Mapping[str, list[str]],
    schema: Schema,
    raters: Sequence[str],
    *,
    round_number: int | None = None,
) -> FlagColumns | None:
    """:func:`flag_disagreements` of a one-round ratings table read as columns of text
    (:func:`~goldboard.cases.ratings_columns.read_rating_columns`), without pandas: the same
    rows, order and values, by the same rules (:func:`_flag_rows`).  ``raters``: the raters to
    compare, in order.  ``None`` -- the caller runs :func:`flag_disagreements` on the DataFrame,
    which names the fault or answers as it always has -- when the columns do not answer on
    their own: more than one round in the table, a rating given twice, a value outside the
    schema, no rating by the raters.  For a round without a design (no single-rater items)."""
    grid = column_grid(table, schema, raters, round_number)
    if grid is None:
        return None
    grid, low_conf = grid
    columns = _flag_columns_of(grid.raters)
    cols = _flag_rows(grid, schema, low_conf, ()) if grid.items else None
    if cols is None:
        out: dict[str, list] = {c: [] for c in columns}
    else:
        multi = {f.name for f in grid.fields if f.kind == "multi"}
        out = _agenda_columns(cols, [f.name for f in grid.fields], multi)
    return FlagColumns({c: out[c] for c in columns}, _flag_attrs(grid, schema))


def column_grid(table: Mapping[str, list[str]], schema: Schema, raters: Sequence[str], round_number: int | None):
    """(:class:`RatingGrid`, low-confidence masks) of a one-round column table, as
    :func:`~goldboard.cases.ratings.rating_grid` and :func:`_low_confidence` build them from the
    DataFrame; ``None`` where the columns do not answer (see :func:`flag_columns`)."""
    n = len(table["item_id"])
    col = lambda c: table[c] if c in table else [""] * n  # noqa: E731 (a column read_ratings_csv fills with "")
    rounds = {int(v or "1") for v in col("round")}
    if len(rounds) != 1 or (round_number is not None and rounds != {round_number}):
        return None
    items_all, who, fields_all = table["item_id"], table["rater"], table["field"]
    if len(set(zip(items_all, who, fields_all))) != n:
        return None  # a rating given twice: the DataFrame path warns or names both rows
    rlist = list(dict.fromkeys(raters))  # a study rater who rated nothing is missing on every item (rating_grid)
    stamp = col("annotated_at")
    # the ratings in force: sorted by annotation time (stable), the raters' own
    rows = [i for i in sorted(range(n), key=stamp.__getitem__) if who[i] in set(rlist)]
    if not rows or not rlist:
        return None
    fields = adjudicable_fields(schema)
    collected = {fields_all[i] for i in rows}
    fields = [f for f in fields if f.name in collected]  # a field never collected: no flags (rating_grid)
    names = {f.name: f for f in adjudicable_fields(schema)}
    meta = {c: col(c) for c in ("case_id", "output_id", "model")}
    first: dict[str, list[str]] = {}  # item -> its first non-empty case_id, output_id, model
    for i in rows:
        got = first.setdefault(items_all[i], ["", "", ""])
        for k, c in enumerate(("case_id", "output_id", "model")):
            if not got[k] and meta[c][i]:
                got[k] = meta[c][i]
    items = natural_sorted(list(first))
    item_at, rater_at = {v: k for k, v in enumerate(items)}, {r: j for j, r in enumerate(rlist)}
    rated = np.zeros((len(items), len(rlist)), dtype=bool)
    values: dict[str, dict[tuple[int, int], str]] = {f: {} for f in names}
    raw_of: dict[str, dict[tuple[int, int], str]] = {}  # the low-confidence fields, as rated
    low_fields = {t.field for t in schema.triggers if t.kind == "low_confidence"}
    rationale = np.full((len(items), len(rlist)), "", dtype=object)
    said, value = col("rationale"), table["value"]
    for i in rows:
        cell = (item_at[items_all[i]], rater_at[who[i]])
        rated[cell] = True
        if said[i]:
            rationale[cell] = said[i]
        fname = fields_all[i]
        if fname in values:
            values[fname][cell] = value[i]
        if fname in low_fields:
            raw_of.setdefault(fname, {})[cell] = value[i]
    try:
        codes = {f.name: _column_codes(f, values[f.name], rated) for f in fields}
        low_conf = _column_low_confidence(schema, raw_of, rated.shape)
    except (ValueNotInSchema, GoldboardError):
        return None  # the DataFrame path names the row and field
    sel = RoundSelection(explicit_round=round_number)
    sel.rounds = dict.fromkeys(items_all, rounds.pop())
    meta_cols = {c: [first[item][k] for item in items] for k, c in enumerate(("case_id", "output_id", "model"))}
    grid = RatingGrid(None, items, meta_cols, rlist, rated, rationale, fields, codes, sel, None)  # type: ignore[arg-type]
    return grid, low_conf


def _column_codes(f: Field, cells: dict[tuple[int, int], str], rated: np.ndarray) -> np.ndarray:
    """The codes :func:`~goldboard.cases.ratings.rating_grid` gives field ``f`` (values as rated)."""
    k = len(f.categories)
    out = np.full(rated.shape, MISSING_CODE, dtype=np.int64 if f.kind == "multi" else int)
    if f.kind == "multi":
        for cell, v in cells.items():
            out[cell] = multi_mask(f, canonical_multi(f, v) if v else "")
        return out
    lookup = {v: i for i, v in enumerate(f.categories)}
    for cell, v in cells.items():
        out[cell] = k if v == "" else lookup[f.normalize(v)]
    if f.required:  # a required field left empty is missing
        return np.where(out == k, MISSING_CODE, out)
    return np.where((out == MISSING_CODE) & rated, k, out)  # no row for an optional field: left blank


def _column_low_confidence(schema: Schema, raw_of: dict[str, dict[tuple[int, int], str]], shape: tuple[int, int]):
    """:func:`_low_confidence` from the cells of the confidence fields, as rated."""
    trig = [t for t in schema.triggers if t.kind == "low_confidence"]
    if not trig:
        return None
    mask = np.zeros(shape, dtype=bool)
    fired = []
    for t in trig:
        f = schema.field(t.field)
        k = len(f.categories)
        lookup = {v: i for i, v in enumerate(f.categories)}
        codes = np.full(shape, MISSING_CODE, dtype=int)
        for cell, v in raw_of.get(t.field, {}).items():
            codes[cell] = k if v == "" else lookup[v] if v in lookup else lookup[f.normalize(v)]
        limit = f.categories.index(t.at_most)
        low = (codes >= 0) & (codes < k) & (codes <= limit)
        mask |= low
        fired.append((low, t))
    return mask, fired


def _agenda_columns(cols: dict[str, list], field_order: list[str], multi: set[str]) -> dict[str, list]:
    """:func:`_agenda_order` of flag rows held as columns: the same sort keys, the same stable sort."""
    items, prio, fields = cols["item_id"], cols["priority"], cols["field"]
    gap = [-1.0 if _no_gap(g) else float(g) for g in cols["gap"]]
    item_prio: dict[str, int] = {}
    item_gap: dict[str, float] = {}
    for item, p, g in zip(items, prio, gap):
        item_prio[item] = min(item_prio.get(item, p), p)
        item_gap[item] = max(item_gap.get(item, g), g)
    nat = {i: k for k, i in enumerate(sorted(dict.fromkeys(items), key=natural_key))}
    forder = {name: k for k, name in enumerate(field_order)}
    keys = [(item_prio[i], -item_gap[i], nat[i], f in multi, p, forder[f]) for i, p, f in zip(items, prio, fields)]
    order = sorted(range(len(items)), key=keys.__getitem__)
    out = {c: [vals[r] for r in order] for c, vals in cols.items()}
    number: dict[str, int] = {}
    out["agenda"] = [number.setdefault(i, len(number) + 1) for i in out["item_id"]]
    return out


# --------------------------------------------------------------------------- summary


def summarize_flags(flags: pd.DataFrame | FlagColumns, schema: Schema) -> dict[str, Any]:
    """Counts for the agenda header.

    ``by_kind`` / ``by_trigger`` count flagged item x field rows; ``by_boundary``
    gives, per named boundary, the number of disagreements on it and the number of
    disagreements on its field (``of``), e.g. sufficiency_vs_optimization: 9 of 16.
    """
    fields, kinds_col = list(flags.get("field", [])), list(flags.get("kinds", []))
    examined = flags.attrs.get("fields")
    if examined is None:  # a flag table not made by flag_disagreements (or its attrs lost)
        examined = [f.name for f in adjudicable_fields(schema) if f.kind != "multi" or f.name in set(fields)]
    said = Counter(f for f, d in zip(fields, flags.get("disagree", [])) if bool(d))
    disagreements = {name: int(said[name]) for name in examined}
    by_kind = {k: 0 for k in KINDS}
    by_trigger: dict[str, int] = {
        t.label: 0 for t in schema.triggers if t.field in disagreements or t.kind == "low_confidence"
    }
    by_boundary_n = {b.name: 0 for b in schema.boundaries}
    for kinds, trig, bnd in zip(kinds_col, flags.get("triggers", []), flags.get("boundaries", [])):
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
    by_kind["plain_disagreement"] = int(sum(1 for k in kinds_col if list(k) == ["disagree"]))
    by_field = {
        name: {"title": _title(schema, name), "rows": 0, **{k: 0 for k in KINDS}, "plain": 0} for name in examined
    }
    for fname, kinds in zip(fields, kinds_col):
        row = by_field.setdefault(str(fname), {"title": str(fname), "rows": 0, **{k: 0 for k in KINDS}, "plain": 0})
        row["rows"] += 1
        row["plain"] += int(list(kinds) == ["disagree"])
        for k in kinds:
            row[k] = row.get(k, 0) + 1
    return {
        "items_flagged": len(set(flags.get("item_id", []))),
        "rows": int(len(flags)),
        "triggered_rows": int(sum(bool(t) for t in flags.get("triggered", []))),
        "disagreements": disagreements,
        "by_kind": by_kind,
        "by_trigger": by_trigger,
        "by_boundary": by_boundary,
        "by_field": by_field,
        "boundary_words": {b.name: boundary_words(schema, b.name) for b in schema.boundaries},
    }


#: what each flag kind means, in the words a clinician reads (the data keep the kind ids)
KIND_WORDS = {
    "boundary": "on a named boundary",
    "threshold": "crossing the critical threshold",
    "gap": "an ordinal gap",
    "incompatible": "incompatible values",
    "rule": "breaking a schema rule",
    "disagree": "the raters' values differ",
    "low_confidence": "low confidence",
    "missing": "a rating missing",
}


def _title(schema: Schema, name: str) -> str:
    try:
        f = schema.field(name)
    except (KeyError, ValueError):
        return name
    return f.title or f.name


def value_words(f: Field, value: str) -> str:
    """A stored value as raters read it: the value's display name; a multi-select set as its
    names joined by `` | `` (``none`` for the empty set)."""
    labels = {v.value: v.label for v in f.values}
    if f.kind == "multi":
        parts = [p for p in str(value).split("|") if p]
        if parts:
            return " | ".join(labels.get(p, p) for p in parts)
        # the empty set: "none", or "(none)" when a value reads "none" (as the review sheet writes it)
        return "(none)" if any("none" in (v.value.casefold(), v.label.casefold()) for v in f.values) else "none"
    return labels.get(str(value), str(value))


def boundary_words(schema: Schema, name: str) -> str:
    """A named boundary in plain words: ``Insufficient Information vs Supported or Partially Supported``."""
    b = next((x for x in schema.boundaries if x.name == name), None)
    if b is None:
        return name.replace("_", " ")
    try:
        f = schema.field(b.field)
    except (KeyError, ValueError):
        return name.replace("_", " ")
    return f"{' or '.join(value_words(f, v) for v in b.a)} vs {' or '.join(value_words(f, v) for v in b.b)}"


def trigger_words(schema: Schema, name: str) -> str:
    """A schema trigger in plain words: its explanation's first sentence, else its name."""
    t = next((x for x in schema.triggers if x.label == name), None)
    text = (t.explanation if t is not None else "").strip()
    return text.split(". ")[0].rstrip(".") if text else name.replace("_", " ")


def flag_words(rec: dict, schema: Schema, *, who: bool = True) -> list[str]:
    """Why a flag row is on the agenda, in plain words (no boundary: it has its own line or column):
    the kinds, then the schema triggers' explanations; ``disagree`` is left out when a trigger says it.
    ``who=False`` leaves out the missing and low-confidence raters (a page that names them its own way)."""
    trig = list(rec.get("triggers") or [])
    named = ("missing", "low_confidence")  # with who=True their kind names the raters: no trigger text needed
    if who:
        trig = [t for t in trig if not any(x.label == t and x.kind in named for x in schema.triggers)]
    said = {t.kind for t in schema.triggers if t.label in trig}
    words = []
    for k in rec.get("kinds") or []:
        if k == "boundary" or k in said or (not who and k in named):
            continue
        if k == "gap" and not pd.isna(rec.get("gap")):
            words.append(f"ordinal gap of {int(rec['gap'])}")
        elif k == "low_confidence":
            words.append("low confidence: " + ", ".join(rec.get("low_confidence_raters") or []))
        elif k == "missing":
            words.append("rating missing: " + ", ".join(rec.get("missing_raters") or []))
        else:
            words.append(KIND_WORDS.get(k, k.replace("_", " ")))
    return words + [trigger_words(schema, t) for t in trig]


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """Human-readable lines: one per field in plain words, then one per named boundary
    (``Insufficient Information vs Supported or Partially Supported (sufficiency_vs_optimization):
    9 of 16 Safety label disagreements (56%)``), then the count of items flagged."""
    lines = []
    bounded = {b["field"] for b in summary["by_boundary"].values()}
    for name, f in summary.get("by_field", {}).items():
        if not f["rows"]:
            lines.append(f"{f['title']}: no disagreement")
            continue
        d = f["disagree"]
        parts = [f"{d} disagreement{'s' if d != 1 else ''}"]
        if d and f["boundary"]:
            parts[0] += f" ({f['boundary']} on a named boundary, {d - f['boundary']} outside the named boundaries)"
        elif d and name in bounded:
            parts[0] += " (none on a named boundary)"
        for k in ("threshold", "gap", "incompatible", "rule", "low_confidence", "missing"):
            if f.get(k):
                parts.append(f"{f[k]} with {KIND_WORDS[k]}")
        lines.append(f"{f['title']}: " + "; ".join(parts))
    titles = {name: f["title"] for name, f in summary.get("by_field", {}).items()}
    words = summary.get("boundary_words", {})
    for name, b in summary["by_boundary"].items():
        share = f" ({b['share']:.0%})" if b["share"] is not None else ""
        what = f"{words[name]} ({name})" if name in words else name
        lines.append(f"{what}: {b['count']} of {b['of']} {titles.get(b['field'], b['field'])} disagreements{share}")
    n, rows = summary["items_flagged"], summary["rows"]
    lines.append(f"{n} item{'' if n == 1 else 's'} flagged ({rows} item x field row{'' if rows == 1 else 's'})")
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
    "KIND_WORDS",
    "boundary_words",
    "flag_words",
    "trigger_words",
    "value_words",
    "FlagColumns",
    "flag_columns",
    "flag_disagreements",
    "flag_output_columns",
    "flags_for_output",
    "summarize_flags",
    "summary_lines",
]
