"""Gold resolution: what the study's label is for each item x field, and how it was reached.

Rules (in order):

1. the latest logged decision for the item x field wins -> ``adjudicated``
   (a decision of ``unresolved`` -> ``unresolved``, with who left it open and why) -- unless
   it was made on an earlier round than the item's ratings now come from and that round's
   raters all gave another value: the decision settled a disagreement the item no longer
   has, and rule 2 gives gold (the decision is listed as superseded);
2. otherwise, when every rater rated the item and all gave the same value ->
   ``unanimous``;
3. otherwise, when the study's design gave the item to one rater only (``push --overlap``:
   the items outside the double-rated share) and that rater rated it -> ``single``
   (the one rating is the gold value; no agreement was measured on it);
4. otherwise -> ``unresolved`` (``gold_value`` empty).

"Every rater" means every rater in ``raters`` (the study's raters): one who rated nothing
is a missing rating on every item, so gold is never unanimous on the word of the raters who
happen to have rated (without ``raters``: every rater with a rating in the table).  Ratings
come from :func:`goldboard.cases.ratings.current_ratings`: per item, the latest
round in which every rater rated it (an incomplete later round is left out and
listed in ``attrs["round_selection"]``, see :mod:`goldboard.cases.rounds`); the
``round`` column says which round each row's ratings come from.  Decisions come
from the append-only log.  Fields: the schema's adjudicable
fields (nominal, ordinal, binary, multi-select; not rater confidence).

Multi-select fields (e.g. mtb ``missing_info``): values are sets, written ``|``-joined
in schema order.  ``gold_value == ""`` is the *empty set* when ``method`` is
``unanimous`` or ``adjudicated`` (every rater ticked nothing / the adjudicator decided
"none"), and means "no gold" only when ``method`` is ``unresolved`` -- read the
method, never the empty cell alone.  Raters agree when their sets are equal (see
:mod:`goldboard.adjudicate.flags` for hidden fields and missing rows).  A field (of any
kind) with no rows in the ratings at all was never collected and has no gold rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from goldboard.adjudicate.decisions import UNRESOLVED, latest_decisions
from goldboard.cases.ratings import rating_grid
from goldboard.cases.ratings_columns import PandasOnUse
from goldboard.label_configs.schema import Schema

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = PandasOnUse()  # imported when first used: the review sheet of a small study reads columns

METHODS = ("unanimous", "adjudicated", "single", "unresolved")
GOLD_HEAD = ["item_id", "case_id", "output_id", "model", "field", "gold_value", "method", "round"]
GOLD_TAIL = ["adjudicator", "independent", "reason", "decided_at", "decision_id"]


def gold_columns(raters: Sequence[str]) -> list[str]:
    """The gold table's columns (contract order) for these raters."""
    return GOLD_HEAD + [f"value_{r}" for r in raters] + GOLD_TAIL


def resolve_gold(
    ratings: pd.DataFrame,
    schema: Schema,
    decisions: Iterable[dict] = (),
    raters: Sequence[str] | None = None,
    *,
    source: str = "ratings",
    round_number: int | None = None,
    single_items: Collection[str] = (),
) -> pd.DataFrame:
    """One row per item x adjudicable field: gold value, method and the raters' values.

    Parameters
    ----------
    ratings : tidy ratings table (``RATINGS_COLUMNS``).
    schema : the study schema.
    decisions : decision log entries (file order), e.g. from
        :func:`goldboard.adjudicate.decisions.read_decisions`.
    raters : rater order for the ``value_<rater>`` columns (default: sorted).
    round_number : resolve from this round only (default: per item, the latest round
        in which every rater rated it).
    single_items : items the design gave to one rater (:meth:`goldboard.study.Study.single_rated_items`);
        with exactly one rating they get method ``single``.

    Returns
    -------
    DataFrame with :func:`gold_columns` (all text; ``independent`` is ``"true"``,
    ``"false"`` or ``""``), rows ordered by item (natural order) then schema field
    order.  ``attrs["orphan_decisions"]`` lists decisions whose item x field is not in
    the ratings; ``attrs["decisions_on_earlier_rounds"]`` lists decisions in force that were
    made on an earlier round than the item's ratings now come from and still in force (``later``:
    what that round's raters gave), ``attrs["decisions_superseded"]`` those a later round's unanimous
    answer on another value superseded (rule 1), ``attrs["unresolved_for_missing"]`` the rows
    unresolved only because a rating is missing (the raters who rated agree);
    ``attrs["round_selection"]`` is the
    :class:`~goldboard.cases.rounds.RoundSelection` (which round each item uses, which
    items have an incomplete later round).
    """
    if not single_items:
        single_items = ratings.attrs.get("single_items") or ()
    grid = rating_grid(ratings, schema, raters, source=source, round_number=round_number)
    cols = gold_columns(grid.raters)
    frames = [_field_rows(grid, f, single_items) for f in grid.fields]
    gold = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=cols + ["_order", "_disagree", "_missing"])
    )
    forder = {f.name: k for k, f in enumerate(grid.fields)}
    gold["_forder"] = gold["field"].map(forder)
    gold = gold.sort_values(["_order", "_forder"], kind="stable").drop(columns=["_order", "_forder"])
    gold = gold.reset_index(drop=True)
    orphans, earlier, superseded = _apply_decisions(gold, latest_decisions(decisions), grid.selection.rounds)
    only_missing = _unresolved_for_missing(gold)
    gold = gold[cols].astype(str)
    gold.attrs["unresolved_for_missing"] = only_missing
    gold.attrs["orphan_decisions"] = orphans
    gold.attrs["round_selection"] = grid.selection
    gold.attrs["decisions_on_earlier_rounds"] = earlier
    gold.attrs["decisions_superseded"] = superseded
    return gold


def _field_gold(grid, f, single_items: Collection[str]) -> tuple[np.ndarray, ...]:
    """Rules 2-4 for field ``f``: per item (grid order) the gold value, the method, the
    items x raters values, whether the raters disagree and whether a rating is missing --
    whichever way the grid was read (DataFrame or columns)."""
    n = len(grid.items)
    vals = grid.values(f.name)
    present, disagree, missing = grid.status(f.name)
    # every rater asked to rate the item agreed (a round's design may ask only some raters)
    unanimous = grid.complete(f.name) & ~disagree if n else np.zeros(0, dtype=bool)
    # the value of the first rater who gave one (rater 0 may not have been asked)
    first = vals[np.arange(n), present.argmax(axis=1)] if n else np.zeros(0, dtype=object)
    one = np.zeros(n, dtype=bool)
    if single_items and n:
        one = np.array([it in single_items for it in grid.items]) & (present.sum(axis=1) == 1)
    value = np.where(unanimous | one, first, "")
    method = np.where(unanimous, "unanimous", np.where(one, "single", "unresolved"))
    return value, method, vals, disagree, missing


def _item_rounds(items: Sequence[str], rounds: Mapping[str, Any]) -> list[str]:
    """Each item's round as text, ``str(rounds.get(str(item), ""))``, with ``str`` taken once per
    distinct round rather than once per item (200,000 items: 0.2 s -> 0.05 s)."""
    as_text = {v: str(v) for v in set(rounds.values())} | {"": ""}
    get = rounds.get
    return [as_text[get(i if type(i) is str else str(i), "")] for i in items]


def _field_rows(grid, f, single_items: Collection[str]) -> pd.DataFrame:
    """Gold rows of field ``f`` from the ratings alone (rules 2-4), in item order (``_order``)."""
    n = len(grid.items)
    value, method, vals, disagree, missing = _field_gold(grid, f, single_items)
    df = pd.DataFrame(
        {
            "item_id": grid.items,
            "case_id": grid.meta["case_id"].to_numpy() if n else [],
            "output_id": grid.meta["output_id"].to_numpy() if n else [],
            "model": grid.meta["model"].to_numpy() if n else [],
            "field": f.name,
            "gold_value": value,
            "method": method,
            "round": _item_rounds(grid.items, grid.selection.rounds),
        }
    )
    for j, r in enumerate(grid.raters):
        df[f"value_{r}"] = vals[:, j] if n else []
    for c in GOLD_TAIL:
        df[c] = ""
    df["_order"] = np.arange(n)
    df["_disagree"] = disagree if n else []
    df["_missing"] = missing if n else []
    return df


def resolve_gold_columns(
    table: Mapping[str, list[str]], schema: Schema, raters: Sequence[str], *, round_number: int | None = None
) -> dict[str, list[str]] | None:
    """:func:`resolve_gold` (no decisions) of a one-round ratings table read as columns
    (:func:`~goldboard.cases.ratings_columns.read_rating_columns`), without pandas:
    :func:`gold_rows_of_grid` of the grid :func:`~goldboard.adjudicate.flags.flag_columns`
    reads.  ``None`` where those columns do not answer (several rounds, a rating given twice,
    a value outside the schema, no rating by the raters): the caller reads a DataFrame."""
    from goldboard.adjudicate.flags import column_grid  # the one column reader of a rating grid

    grid = column_grid(table, schema, raters, round_number)
    return None if grid is None else gold_rows_of_grid(grid[0])


def gold_rows_of_grid(grid) -> dict[str, list[str]]:
    """:func:`resolve_gold` without decisions (rules 2-4) of a one-round grid read as columns
    (:func:`goldboard.adjudicate.flags.column_grid`, its ``meta`` a dict of lists), without
    pandas: ``{column: list of str}`` with :func:`gold_columns`, rows by item then schema field
    order -- the same rows and text as the DataFrame, by the same rules (:func:`_field_gold`).
    For a round without a design (no single-rated items)."""
    out: dict[str, list[str]] = {c: [] for c in gold_columns(grid.raters)}
    per_field = [(f.name, *_field_gold(grid, f, ())) for f in grid.fields]
    rounds = [str(grid.selection.rounds.get(str(i), "")) for i in grid.items]
    for k, item in enumerate(grid.items):
        for name, value, method, vals, _disagree, _missing in per_field:
            out["item_id"].append(str(item))
            for c in ("case_id", "output_id", "model"):
                out[c].append(str(grid.meta[c][k]))
            out["field"].append(name)
            out["gold_value"].append(str(value[k]))
            out["method"].append(str(method[k]))
            out["round"].append(rounds[k])
            for j, r in enumerate(grid.raters):
                out[f"value_{r}"].append(str(vals[k, j]))
            for c in GOLD_TAIL:
                out[c].append("")
    return out


def _apply_decisions(gold: pd.DataFrame, latest: dict, rounds: dict) -> tuple[list[dict], list[dict], list[dict]]:
    """Rule 1, in place: each decision in force sets its row's gold -- unless it was made on an
    earlier round than the item's ratings now come from (``rounds``: item -> round) and the raters
    of that later round unanimously gave another answer: the decision settled a disagreement the
    item no longer has, and gold is the later round's unanimous value (rule 2).  Returns the
    orphan decisions, those made on an earlier round that stay in force (``later``: what the later
    round's raters gave -- ``agrees``, ``disagrees`` or ``incomplete``), and those superseded."""
    orphans: list[dict] = []
    earlier: list[dict] = []
    superseded: list[dict] = []
    if not latest:
        return orphans, earlier, superseded
    index = {(i, f): k for k, (i, f) in enumerate(zip(gold["item_id"].tolist(), gold["field"].tolist()))}
    for key, e in latest.items():
        k = index.get(key)
        if k is None:
            orphans.append(e)
            continue
        decided = str(e.get("decision", ""))
        made_on, now_on = e.get("round"), rounds.get(str(key[0]))
        later = None
        if isinstance(made_on, int) and now_on is not None and made_on < now_on:
            later = _later_round_answer(gold, k, decided)
            rec = {
                "item_id": key[0],
                "field": key[1],
                "decision_id": str(e.get("id") or ""),
                "decision": decided,
                "decision_round": made_on,
                "round": int(now_on),
            }
            if later == "differs":  # the later round's raters agree on another answer: it is gold
                superseded.append(rec | {"unanimous_value": str(gold.at[k, "gold_value"])})
                continue
            earlier.append(rec | {"later": later})
        _set_decision(gold, k, e, decided)
    return orphans, earlier, superseded


def _unresolved_for_missing(gold: pd.DataFrame) -> list[dict]:
    """The rows left ``unresolved`` (no decision) only because a rater's rating is missing: the
    raters who rated agree (or one rated), e.g. a k-of-N table pulled without a design, where
    every study rater's rating is expected.  ``[{"item_id", "field", "round"}]``."""
    if not len(gold) or "_missing" not in gold.columns:
        return []
    hit = (gold["method"] == "unresolved") & (gold["decision_id"] == "") & gold["_missing"].astype(bool)
    hit &= ~gold["_disagree"].astype(bool)
    sub = gold[hit]
    return [{"item_id": i, "field": f, "round": r} for i, f, r in zip(sub["item_id"], sub["field"], sub["round"])]


def _later_round_answer(gold: pd.DataFrame, k: int, decided: str) -> str:
    """What the raters of row ``k``'s later round gave, beside a decision made on an earlier round
    (rules 2-4 only have set the row): ``agrees`` (unanimous, the decided value), ``differs``
    (unanimous, another value -- a decision ``unresolved`` included), ``disagrees`` (two raters
    gave different values) or ``incomplete`` (no disagreement, but a rating missing, or one rater
    by design)."""
    method, value = str(gold.at[k, "method"]), str(gold.at[k, "gold_value"])
    if method != "unanimous":
        return "disagrees" if bool(gold.at[k, "_disagree"]) else "incomplete"
    same = value == decided or (decided != UNRESOLVED and set(value.split("|")) == set(decided.split("|")))
    return "agrees" if same else "differs"


def _set_decision(gold: pd.DataFrame, k: int, e: dict, decided: str) -> None:
    """Row ``k`` of ``gold`` takes decision ``e`` (value ``decided``) and its provenance."""
    if decided == UNRESOLVED:
        gold.at[k, "gold_value"] = ""
        gold.at[k, "method"] = "unresolved"
    else:
        gold.at[k, "gold_value"] = decided
        gold.at[k, "method"] = "adjudicated"
    gold.at[k, "adjudicator"] = str(e.get("adjudicator") or "")
    gold.at[k, "independent"] = "true" if e.get("independent", True) else "false"
    gold.at[k, "reason"] = str(e.get("reason") or "")
    gold.at[k, "decided_at"] = str(e.get("timestamp") or "")
    gold.at[k, "decision_id"] = str(e.get("id") or "")


def decision_round_lines(earlier: Sequence[dict], superseded: Sequence[dict]) -> list[str]:
    """One line per decision made on an earlier round than its item's ratings now come from
    (``attrs["decisions_on_earlier_rounds"]`` / ``["decisions_superseded"]`` of :func:`resolve_gold`),
    saying what the later round's raters gave and what gold is: ``Warning: ...`` or ``Note: ...``."""
    out = []
    for d in superseded:
        out.append(
            f"Warning: item {d['item_id']} {d['field']}: decision {d['decision_id']} ({d['decision']!r}) was made on "
            f"round {d['decision_round']}'s disagreement; round {d['round']}'s raters all gave "
            f"{d['unanimous_value']!r}, so the decision no longer settles the item: gold is round {d['round']}'s "
            "unanimous value (the decision stays in the log)"
        )
    said = {
        "agrees": "all gave the decided value",
        "disagrees": "disagree again (the item is on the review sheet's agenda, with this decision in force)",
        "incomplete": "gave no unanimous answer (a rating is missing)",
    }
    for d in earlier:
        later = d.get("later", "disagrees")
        out.append(
            f"{'Note' if later == 'agrees' else 'Warning'}: item {d['item_id']} {d['field']}: decision "
            f"{d['decision_id']} ({d['decision']!r}) was made on round {d['decision_round']}; round {d['round']}'s "
            f"raters {said.get(later, said['disagrees'])}; the decision stays in force"
        )
    return out


def method_counts(gold: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per field (and ``"all"``): number of rows per method (every method listed; ``single``
    only when the study's design has single-rated items)."""
    out: dict[str, dict[str, int]] = {}
    methods = [m for m in METHODS if m != "single" or (gold["method"] == "single").any()]
    for name, sub in list(gold.groupby("field", sort=False)) + [("all", gold)]:
        vc = sub["method"].value_counts()
        out[str(name)] = {m: int(vc.get(m, 0)) for m in methods}
    return out


#: rows per piece of the digest's JSON text (the text of a whole 1M-row table is never held at once)
_DIGEST_CHUNK = 50_000


def gold_digest(gold: pd.DataFrame) -> str:
    """SHA-256 of the gold table's content (row order and file format do not matter).

    The SHA-256 of ``json.dumps({"columns": sorted columns, "rows": [[cells], ...]},
    ensure_ascii=False, separators=(",", ":"))`` with the rows sorted by item_id then field,
    fed to the hash piece by piece from whole columns (no 2-D object array, no full text).
    """
    cols = sorted(gold.columns)
    table = gold[cols].astype(str).sort_values(["item_id", "field"], kind="stable")
    h = hashlib.sha256()
    h.update(('{"columns":' + json.dumps(cols, ensure_ascii=False, separators=(",", ":")) + ',"rows":[').encode())
    texts = _plain_text_columns(table, cols)
    if texts is not None:  # JSON needs no escape in any cell: the rows' text joined in Arrow, hashed from its buffer
        for start in range(0, len(table), _DIGEST_CHUNK):
            h.update((b"," if start else b"") + _rows_text([a.slice(start, _DIGEST_CHUNK) for a in texts]))
        h.update(b"]}")
        return h.hexdigest()
    for start in range(0, len(table), _DIGEST_CHUNK):
        piece = table.iloc[start : start + _DIGEST_CHUNK]
        rows = list(zip(*(piece[c].tolist() for c in cols)))
        text = json.dumps(rows, ensure_ascii=False, separators=(",", ":"))[1:-1]
        h.update((b"," if start else b"") + text.encode("utf-8"))
    h.update(b"]}")
    return h.hexdigest()


#: a character ``json.dumps`` escapes (ensure_ascii=False): a control character, a quote, a backslash
_JSON_ESCAPED = r'[\x00-\x1f"\\]'


def _plain_text_columns(table: pd.DataFrame, cols: list[str]) -> list | None:
    """The columns as pyarrow string arrays when every one is Arrow-backed text with no missing
    cell and no character JSON escapes; else None (the rows are written by ``json.dumps``)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(table):
        return None
    out = []
    for c in cols:
        s = table[c]
        if not isinstance(s.dtype, pd.StringDtype) or s.dtype.storage != "pyarrow":
            return None
        a = pa.array(s.array)
        a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
        if not pa.types.is_string(a.type) and not pa.types.is_large_string(a.type):
            return None
        if a.null_count or pc.any(pc.match_substring_regex(a, _JSON_ESCAPED)).as_py():
            return None
        out.append(a)
    return out


def _rows_text(columns: list) -> bytes:
    """``json.dumps(rows, ensure_ascii=False, separators=(",", ":"))[1:-1]`` of plain text cells
    (:func:`_plain_text_columns`) as UTF-8: each row ``["a","b"]``, rows joined by commas."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cells = pc.binary_join_element_wise(
        *[a.cast(pa.large_string()) for a in columns], pa.scalar('","', pa.large_string())
    )
    rows = pc.binary_join_element_wise(
        pa.scalar('["', pa.large_string()), cells, pa.scalar('"],', pa.large_string()), pa.scalar("", pa.large_string())
    )
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64)[rows.offset : rows.offset + len(rows) + 1]
    data = memoryview(rows.buffers()[2])
    return bytes(data[int(offsets[0]) : int(offsets[-1]) - 1])  # (without the last row's comma)


__all__ = [
    "GOLD_HEAD",
    "GOLD_TAIL",
    "METHODS",
    "gold_columns",
    "gold_digest",
    "decision_round_lines",
    "gold_rows_of_grid",
    "method_counts",
    "resolve_gold",
    "resolve_gold_columns",
]
