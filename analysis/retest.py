"""Test-retest (intra-rater) reliability: the same rater on the same items in two rounds.

For each rater, the rater's ratings in round ``a`` and round ``b`` are treated as two
"raters" on the items rated in both rounds, and the usual two-rater coefficients are
computed by :func:`goldboard.analysis.agreement.agreement` (so the CIs, weights, full-scale
categories and warnings are the ones ``goldboard agree`` reports): percent agreement, Cohen's
kappa (plus linear/quadratic weighted kappa on ordinal fields) and Krippendorff's alpha at the
field's level, each with a 95% CI.  Pure: a ratings table in, a dict out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from goldboard.analysis import statistics as SD
from goldboard.analysis.agreement import agreement
from goldboard.errors import ParamError
from goldboard.label_configs.schema import Schema

#: the statistics kept per rater (name, weights)
RETEST_STATS = (
    ("percent_agreement", "none"),
    ("cohen_kappa", "none"),
    ("cohen_kappa", "linear"),
    ("cohen_kappa", "quadratic"),
    ("krippendorff_alpha", "none"),
)


def intra_rater_agreement(
    ratings: pd.DataFrame,
    field: str,
    schema: Schema | None,
    rounds: Sequence[int],
    *,
    raters: Sequence[str] | None = None,
    n_resamples: int = 0,
    seed: int = 1,
) -> dict[str, Any]:
    """Intra-rater agreement per rater between ``rounds[0]`` and ``rounds[1]``.

    Returns ``{"field", "rounds", "raters": {rater: {"n_items", "statistics": [...],
    "warnings": [...]}}, "warnings"}``; a rater with fewer than two items rated in both
    rounds is listed with ``n_items`` and no statistics.
    """
    if len(rounds) != 2 or rounds[0] == rounds[1]:
        raise ParamError("{rounds}: give two different rounds, e.g. {rounds} 1,2")
    a, b = (int(r) for r in rounds)
    df = ratings[ratings["round"].astype(int).isin([a, b])]
    if "field" in df.columns:
        df = df[df["field"] == field.partition(":")[0]]
    for r in (a, b):
        if not (df["round"].astype(int) == r).any():
            raise ParamError("{rounds} {a},{b}: round {r} has no {field} ratings", a=a, b=b, r=r, field=field)
    names = list(raters) if raters else sorted(set(df["rater"]))
    out: dict[str, Any] = {"field": field, "rounds": [a, b], "raters": {}, "warnings": []}
    for rater in names:
        mine = df[df["rater"] == rater]
        both = set(mine.loc[mine["round"].astype(int) == a, "item_id"]) & set(
            mine.loc[mine["round"].astype(int) == b, "item_id"]
        )
        entry: dict[str, Any] = {"n_items": len(both), "statistics": [], "warnings": []}
        out["raters"][rater] = entry
        if len(both) < 2:
            out["warnings"].append(f"{rater}: {len(both)} item(s) rated in both rounds {a} and {b}; no statistics")
            continue
        pair = mine[mine["item_id"].isin(both)].copy()
        pair["rater"] = pair["round"].map(lambda x, r=rater: f"{r} (round {int(x)})")
        res = agreement(
            pair,
            field,
            schema,
            raters=[f"{rater} (round {a})", f"{rater} (round {b})"],
            n_resamples=n_resamples,
            seed=seed,
        )
        keep = []
        for s in res["statistics"]:
            if (s["statistic"], s["weights"]) in RETEST_STATS or s["statistic"] == "krippendorff_alpha":
                keep.append(s)
        entry["statistics"] = keep
        entry["warnings"] = [f"{rater}: {w}" for w in res["warnings"]]
        out["warnings"].extend(entry["warnings"])
    return out


LABELS = SD.names()  # declared in analysis/statistics.py


def _name(s: dict) -> str:
    base = LABELS.get(s["statistic"], s["statistic"])
    if s["statistic"] == "cohen_kappa" and s["weights"] != "none":
        base += f" ({s['weights']})"
    if s["statistic"] == "krippendorff_alpha" and s.get("level"):
        base += f" ({s['level']})"
    return base


def retest_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per rater x statistic (for CSV/table output)."""
    rows = []
    for rater, e in result["raters"].items():
        for s in e["statistics"]:
            rows.append(
                {
                    "rater": rater,
                    "statistic": _name(s),
                    "n": s.get("n_items", e["n_items"]),
                    "value": s["value"],
                    "ci_low": s.get("ci_low"),
                    "ci_high": s.get("ci_high"),
                    "ci_method": s.get("ci_method", ""),
                }
            )
        if not e["statistics"]:
            rows.append(
                {
                    "rater": rater,
                    "statistic": "(too few items)",
                    "n": e["n_items"],
                    "value": None,
                    "ci_low": None,
                    "ci_high": None,
                    "ci_method": "",
                }
            )
    return rows


def _f(x: Any) -> str:
    return "" if x is None or (isinstance(x, float) and x != x) else f"{x:.3f}"


def render_retest_table(result: dict[str, Any], markdown: bool = False) -> str:
    a, b = result["rounds"]
    title = f"Test-retest (intra-rater) agreement on {result['field']}: round {a} vs round {b}"
    head = ["Rater", "Statistic", "n", "Value", "95% CI", "CI method"]
    body = [
        [
            r["rater"],
            r["statistic"],
            str(r["n"]),
            _f(r["value"]),
            f"{_f(r['ci_low'])} to {_f(r['ci_high'])}" if r["ci_low"] is not None else "",
            r["ci_method"],
        ]
        for r in retest_rows(result)
    ]
    if markdown:
        esc = [[c.replace("|", "\\|") for c in row] for row in body]
        lines = [f"### {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(row) + " |" for row in esc]
        return "\n".join(lines) + "\n"
    widths = [max(len(h), *(len(row[i]) for row in body)) if body else len(h) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [title, "=" * len(title), fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*row).rstrip() for row in body]
    return "\n".join(lines) + "\n"


__all__ = ["intra_rater_agreement", "retest_rows", "render_retest_table"]
