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

__all__ = ["GRID", "META", "bench_name", "nearest_cell", "shortfalls"]

#: the simulated grid: items, raters, categories, prevalence
GRID = {"n": (30, 50, 100, 300), "raters": (2, 3, 4), "categories": (2, 3, 4, 5)}
#: the skewed cells' commonest category share
SKEW = 0.8


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
