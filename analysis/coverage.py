"""What the seeded coverage simulation says about the default 95% interval of a study's field.

``benchmarks/bench_coverage.py`` simulated the coverage of every interval method over a grid of
n 30/50/100/300 items, 2-4 raters, 2-5 categories, balanced and skewed (80 %) prevalence, kappa
0.6 (common-correlation model); :mod:`goldboard.analysis.coverage_record` holds, for the default
method, every cell and statistic where it covered less than 93 %.  :func:`nearest_cell` places a
field in the grid, :func:`shortfalls` lists the statistics of that cell below 93 %.

>>> nearest_cell(34, 2, 5, 0.7)
(30, 2, 5, 'skewed')
>>> [s for s, _, _ in shortfalls((30, 2, 5, "skewed"))][:2]
['cohen_kappa', 'krippendorff_alpha (nominal)']
"""

from __future__ import annotations

from goldboard.analysis.coverage_record import BELOW, META

__all__ = [
    "GRID",
    "META",
    "SPECIFIC",
    "bench_name",
    "field_cells",
    "nearest_cell",
    "prose",
    "shortfall_note",
    "shortfalls",
]

#: the simulated grid: items, raters, categories, prevalence
GRID = {"n": (30, 50, 100, 300), "raters": (2, 3, 4), "categories": (2, 3, 4, 5)}
#: the skewed cells' commonest category share
SKEW = 0.8
#: the simulation's name of the per-label positive specific agreement (of the rarest label)
SPECIFIC = "specific agreement (rarest label)"


def _nearest(x: float, grid: tuple[int, ...], log: bool = False) -> int:
    import math

    f = math.log if log else float
    return min(grid, key=lambda g: abs(f(max(x, 1)) - f(g)))


def nearest_cell(n: int, raters: int, categories: int, top_share: float) -> tuple[int, int, int, str]:
    """The grid cell nearest a field: items on a log scale, raters and categories clamped to the
    grid, "skewed" when the commonest category's share is nearer 80 % than an even split."""
    k = _nearest(categories, GRID["categories"])
    skewed = abs(top_share - SKEW) < abs(top_share - 1.0 / max(categories, 1))
    return (
        _nearest(n, GRID["n"], log=True),
        _nearest(raters, GRID["raters"]),
        k,
        "skewed" if skewed else "balanced",
    )


def bench_name(statistic: str, weights: str | None, level: str | None, raters: int) -> str | None:
    """The simulation's name of a statistics row (None: the simulation does not cover it)."""
    w = weights if weights not in (None, "none") else None
    if statistic == "percent_agreement" and w is None:
        return statistic
    if statistic == "cohen_kappa" and raters == 2 and w in (None, "quadratic"):
        return "cohen_kappa" + (f" ({w})" if w else "")
    if statistic == "fleiss_kappa" and raters > 2 and w is None:
        return statistic
    if statistic == "gwet_ac1" and w in (None, "quadratic"):
        return "gwet_ac2 (quadratic)" if w else statistic
    if statistic == "krippendorff_alpha" and level:
        return f"krippendorff_alpha ({level})"
    return None


def shortfalls(cell: tuple[int, int, int, str]) -> list[tuple[str, float, float]]:
    """``(statistic, coverage, MC SE)`` of every simulated statistic of ``cell`` whose default
    interval covered less than the record's threshold (93 %)."""
    return [(s, cov, se) for n, m, k, prev, s, cov, se in BELOW if (n, m, k, prev) == cell]


def _prose_names() -> dict[str, str]:
    from goldboard.analysis.statistics import names

    return names(prose=True)


def prose(bench: str) -> str:
    """The words for a statistic of the simulation: ``"Cohen's kappa (quadratic weights)"``."""
    base, _, rest = bench.partition(" (")
    if bench == SPECIFIC:
        return "positive specific agreement of the rarest label"
    if base == "gwet_ac2":
        return "Gwet's AC2 (quadratic weights)"
    name = _prose_names().get(base, base)
    if rest and base == "krippendorff_alpha":
        return f"{name} ({rest.rstrip(')')} level)"
    return f"{name} ({rest.rstrip(')')} weights)" if rest else name


def field_cells(result: dict, shown=None) -> tuple[dict[tuple, set[str]], list[str]]:
    """Where one field's reported intervals sit in the simulated grid: ``{cell: {simulated
    statistic}}`` for the overall rows (``shown(row)``: the rows reported; default every row of no
    group) and the per-label positive specific agreement whose interval is the simulated
    default method, and the keys of the reported statistics the simulation did not cover."""
    shown = shown or (lambda r: r.get("group") is None)
    method = META["method"]
    labels = [e for e in result.get("per_label", []) if e.get("group") is None]
    top = max((e.get("prevalence") or 0.0 for e in labels), default=0.0)
    k = len(result["categories"])
    cells: dict[tuple, set[str]] = {}
    unsimulated: list[str] = []
    for r in result["statistics"]:
        if not shown(r) or r.get("ci_method") != method:
            continue
        bench = bench_name(r["statistic"], r.get("weights"), r.get("level"), len(r["raters"]))
        if bench is None:
            unsimulated.append(r["statistic"])
            continue
        cells.setdefault(nearest_cell(r["n_items"], len(r["raters"]), k, top), set()).add(bench)
    specific = [
        e
        for e in labels
        if e.get("ci_method") == method and (e.get("positive_agreement") or {}).get("ci_low") is not None
    ]
    if specific:
        n = max(int(e.get("n_items") or 0) for e in specific)
        cells.setdefault(nearest_cell(n, len(specific[0]["raters"]), k, top), set()).add(SPECIFIC)
    return cells, list(dict.fromkeys(unsimulated))


def cell_words(cell: tuple) -> str:
    n, m, k, prev = cell
    return f"{n} items, {m} raters, {k} categories, {prev} prevalence"


def shortfall_note(result: dict) -> str:
    """One sentence for ``goldboard agree``: the simulated statistics whose default interval
    covered less than 93% in the grid cell nearest this field, with the cell; "" when none did."""
    said = []
    for cell, benches in field_cells(result)[0].items():
        low = [(s, cov, se) for s, cov, se in shortfalls(cell) if s in benches]
        if low:
            parts = [f"{cov:.1%} for {prose(s)}" for s, cov, _ in low]
            what = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
            mc = max(se for _, _, se in low)
            said.append(
                f"at the cell nearest these ratings ({cell_words(cell)}) the {META['method'].capitalize()} "
                f"interval covered {what} (below {META['threshold']:.0%}; Monte-Carlo SE up to {100 * mc:.1f} points)"
            )
    if not said:
        return ""
    return (
        f"Coverage: in goldboard's seeded coverage simulation ({META['reps']} studies per cell, kappa "
        f"{META['kappa']}; benchmarks/bench_coverage.py), {'; '.join(said)}."
    )
