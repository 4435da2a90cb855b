"""Tables a journal reviewer asks for, computed from the ratings, flags and gold (pure).

``gold_distribution(gold)``          gold labels per field and value, by how they were resolved
``resolution_by_boundary(flags, gold, schema)``
                                     each named boundary's disagreements and what the adjudicator
                                     decided (e.g. how many sufficiency-vs-optimization disputes
                                     ended as Insufficient Information)
``time_on_task(ratings, field)``     Label Studio ``lead_time`` (seconds per annotation): median and
                                     interquartile range per rater and per label
``group_warnings(warnings)``         identical warnings about several fields counted once
``wald_suspect(result)``             why the Wald interval of an agreement result is not to be trusted
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from goldboard.cases.ratings_columns import PandasOnUse, RatingColumns
from goldboard.text import cell_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = PandasOnUse()  # imported when first used: a small study's report reads columns (issue 19)

UNRESOLVED_TEXT = "unresolved"


def _text_column(col: pd.Series) -> pd.Series:
    """``col.map(cell_text)``, by the whole column when it already holds text."""
    if pd.api.types.is_string_dtype(col):
        return col.fillna("").astype(str)
    return col.map(cell_text)


def gold_distribution(gold: pd.DataFrame | dict[str, list[str]], fields: Iterable[str] | None = None) -> list[dict]:
    """One row per field x gold value: ``n``, ``share`` of the field's resolved items, and how
    many were ``unanimous`` / ``adjudicated``; one row per field for the ``unresolved`` items
    (their gold value is empty).  Fields in ``gold`` order unless ``fields`` is given.
    Counted per field x value x method over whole columns (values most frequent first).
    ``gold``: a DataFrame, or columns of text (a small study's provisional gold)."""
    counts: dict[str, dict[str, dict]] = {}  # field -> value -> method -> n (a few hundred groups at most)
    if isinstance(gold, dict):
        for f, v, m in zip(gold["field"], gold["gold_value"], gold["method"]):
            by = counts.setdefault(f, {}).setdefault(v, {})
            by[m] = by.get(m, 0) + 1
        order = list(fields) if fields is not None else list(counts)
        return _distribution_rows(counts, order)
    if gold is None or gold.empty:
        return []
    field_col = gold["field"].astype(str)
    order = list(fields) if fields is not None else [str(f) for f in pd.unique(field_col)]
    table = pd.DataFrame({"f": field_col, "v": _text_column(gold["gold_value"]), "m": gold["method"]})
    for (f, v, m), n in table.groupby(["f", "v", "m"], sort=False, dropna=False).size().items():
        counts.setdefault(str(f), {}).setdefault(v, {})[m] = int(n)
    return _distribution_rows(counts, order)


def _distribution_rows(counts: dict[str, dict[str, dict]], order: list[str]) -> list[dict]:
    """:func:`gold_distribution`'s rows from its counts (field -> value -> method -> n)."""
    rows = []
    for f in order:
        if f not in counts:
            continue
        n_open = sum(by_method.get("unresolved", 0) for by_method in counts[f].values())
        per_value = {v: {m: n for m, n in by_method.items() if m != "unresolved"} for v, by_method in counts[f].items()}
        per_value = {v: c for v, c in per_value.items() if c}
        total = sum(sum(c.values()) for c in per_value.values())
        for v in sorted(per_value, key=lambda x: (-sum(per_value[x].values()), x)):
            n = sum(per_value[v].values())
            rows.append(
                {
                    "field": f,
                    "gold_value": v if v != "" else "(none)",
                    "n": n,
                    "share": n / total if total else None,
                    "unanimous": per_value[v].get("unanimous", 0),
                    "adjudicated": per_value[v].get("adjudicated", 0),
                }
            )
        if n_open:
            rows.append(
                {
                    "field": f,
                    "gold_value": UNRESOLVED_TEXT,
                    "n": n_open,
                    "share": None,
                    "unanimous": 0,
                    "adjudicated": 0,
                }
            )
    return rows


def _outcomes(flags: pd.DataFrame, gold: pd.DataFrame | None) -> np.ndarray:
    """Per flags row, what its item x field's gold became: the gold value (``(none)`` for the
    empty set) or ``unresolved`` (method ``unresolved``, or no gold row); one merge of whole columns."""
    keys = pd.DataFrame({"item_id": flags["item_id"].astype(str), "field": flags["field"].astype(str)})
    if gold is None or gold.empty:
        return np.full(len(keys), UNRESOLVED_TEXT, dtype=object)
    n = len(gold)
    g = pd.DataFrame(
        {
            "item_id": gold["item_id"].astype(str).to_numpy(),
            "field": gold["field"].astype(str).to_numpy(),
            "_method": gold["method"].to_numpy() if "method" in gold.columns else [None] * n,
            "_value": _text_column(gold["gold_value"]).to_numpy() if "gold_value" in gold.columns else [""] * n,
            "_gold": True,
        }
    ).drop_duplicates(["item_id", "field"], keep="last")  # the last row of a key wins, as a dict would
    m = keys.merge(g, on=["item_id", "field"], how="left", sort=False)
    open_ = m["_gold"].isna().to_numpy() | (m["_method"] == "unresolved").to_numpy()
    values = m["_value"].fillna("").astype(str).to_numpy(dtype=object)
    return np.where(open_, UNRESOLVED_TEXT, np.where(values == "", "(none)", values))


def _outcomes_columns(flags, gold: dict[str, list[str]]) -> np.ndarray:
    """:func:`_outcomes` of gold held as columns of text (the last row of a key wins)."""
    got = {(i, f): (m, v) for i, f, m, v in zip(gold["item_id"], gold["field"], gold["method"], gold["gold_value"])}
    out = []
    for key in zip(flags["item_id"], flags["field"]):
        m, v = got.get(key, ("unresolved", ""))
        out.append(UNRESOLVED_TEXT if m == "unresolved" else (v or "(none)"))
    return np.array(out, dtype=object)


def resolution_by_boundary(flags: pd.DataFrame, gold: pd.DataFrame, schema) -> list[dict]:
    """For each named boundary of the schema: how many item x field disagreements crossed it and
    what the gold label became -- one row per boundary x outcome (``decision`` is the gold value,
    or ``unresolved``), with ``n`` and ``share`` of the boundary's disagreements, and the two
    sides' value groups (``side_a``, ``side_b``)."""
    if flags is None or not len(flags):
        return []
    outcome = _outcomes_columns(flags, gold) if isinstance(gold, dict) else _outcomes(flags, gold)
    crossed = list(flags["boundaries"]) if "boundaries" in flags.columns else [None] * len(flags)
    rows_of: dict[str, list[int]] = {}  # boundary name -> flags rows that crossed it (one pass)
    for i, names in enumerate(crossed):
        if isinstance(names, str):  # a text cell, not a list: the boundaries whose name it contains
            names = [b.name for b in schema.boundaries if b.name in names]
        for name in dict.fromkeys(names or []):
            rows_of.setdefault(name, []).append(i)
    rows = []
    for b in schema.boundaries:
        hits = rows_of.get(b.name)
        if not hits:
            continue
        outcomes: dict[str, int] = {}
        for key in outcome[hits].tolist():
            outcomes[key] = outcomes.get(key, 0) + 1
        for decision, n in sorted(outcomes.items(), key=lambda kv: (kv[0] == UNRESOLVED_TEXT, -kv[1], kv[0])):
            rows.append(
                {
                    "boundary": b.name,
                    "field": b.field,
                    "side_a": " / ".join(b.a),
                    "side_b": " / ".join(b.b),
                    "disagreements": len(hits),
                    "decision": decision,
                    "n": n,
                    "share": n / len(hits),
                }
            )
    return rows


def _summary(x: pd.Series) -> dict:
    v = x.to_numpy(dtype=float)
    q1, med, q3 = np.percentile(v, [25, 50, 75])
    return {"n": int(len(v)), "median": float(med), "q1": float(q1), "q3": float(q3), "iqr": float(q3 - q1)}


def time_on_task(ratings: pd.DataFrame | RatingColumns, field: str) -> dict:
    """Label Studio's ``lead_time`` (seconds the rater spent on the annotation) per rater and per
    label the rater gave on ``field``: ``{"per_rater": [...], "per_label": [...], "n_missing"}``,
    each row ``{group, n, median, q1, q3, iqr}`` (quartiles by linear interpolation, numpy's
    default).  One annotation counts once (its fields share one lead time); annotations without
    a lead time (imported from files) are counted in ``n_missing``."""
    if isinstance(ratings, RatingColumns):  # a small study's columns: with no lead time, nothing to show
        if "lead_time" in ratings.columns and any(v != "" for v in ratings["lead_time"]):
            ratings = ratings.frame()
        else:  # every annotation of the field is missing its lead time, counted once each
            pairs = {(i, r) for i, r, f in zip(ratings["item_id"], ratings["rater"], ratings["field"]) if f == field}
            return {"per_rater": [], "per_label": [], "n_missing": len(pairs) if "lead_time" in ratings.columns else 0}
    if "lead_time" not in ratings.columns:
        return {"per_rater": [], "per_label": [], "n_missing": 0}
    sub = ratings[ratings["field"].astype(str) == field].copy()
    if sub.empty:
        return {"per_rater": [], "per_label": [], "n_missing": 0}
    sub["_t"] = pd.to_numeric(sub["lead_time"], errors="coerce")
    sub = sub.drop_duplicates(["item_id", "rater"])
    have = sub[sub["_t"].notna() & (sub["_t"] >= 0)]
    out = {"per_rater": [], "per_label": [], "n_missing": int(len(sub) - len(have))}
    for r, part in have.groupby("rater", sort=True):
        out["per_rater"].append({"group": str(r), **_summary(part["_t"])})
    labels = have["value"].map(cell_text)
    for lab in sorted(set(labels)):
        out["per_label"].append({"group": lab or "(blank)", **_summary(have.loc[labels == lab, "_t"])})
    return out


_PREFIX = re.compile(r"^(?P<field>[^\s:]+(?::[^\s:]+)?): (?P<msg>.+)$", re.S)


def group_warnings(warnings: Iterable[str]) -> list[dict]:
    """Warnings that differ only in the field they name (``"<field>: <message>"``) counted once:
    ``[{"message", "count", "fields": [...]}]`` in first-seen order."""
    groups: dict[str, dict] = {}
    for w in warnings:
        m = _PREFIX.match(w)
        field, msg = (m["field"], m["msg"]) if m else ("", w)
        g = groups.setdefault(msg, {"message": msg, "count": 0, "fields": []})
        g["count"] += 1
        if field and field not in g["fields"]:
            g["fields"].append(field)
    return list(groups.values())


#: below this many items a Wald interval for an agreement coefficient is not to be trusted
SMALL_N = 30
#: an estimate this close to a bound of its range makes the Wald interval unreliable
NEAR_BOUND = 0.1


def wald_suspect(result: dict) -> list[str]:
    """Why the Wald intervals of one agreement result (the engine's contract dict) behave badly:
    few items (< 30), a chance-corrected estimate within 0.1 of 1, or an interval cut at the
    coefficient's bound.  Empty when none applies."""
    reasons = []
    n = result.get("n_items") or 0
    if n < SMALL_N:
        reasons.append(f"n = {n} < {SMALL_N}")
    for r in result.get("statistics", []):
        if r.get("group") is not None or r.get("value") is None or r["statistic"] == "percent_agreement":
            continue
        if r["value"] >= 1 - NEAR_BOUND:
            reasons.append("estimate near 1")
            break
        if r.get("ci_high") is not None and r["ci_high"] >= 1 and r.get("se"):
            reasons.append("Wald interval cut at 1")
            break
    return reasons
