"""Benchmark: the false-stop rate of every stopping rule over 5 looks, at the boundary.

A calibration that checks ``STAT_lower>=0.6`` after each of 5 rounds (``goldboard calibrate``,
each look at the Bonferroni level 0.025 / 5 = 0.005) stops falsely when a look meets the rule
although the population's statistic is exactly 0.6.  Simulated here with goldboard's own code:
the coefficient functions the agreement engine calls (``analysis.coefficients``) and the limit the
rule tests (``analysis.calibration.tested_limit`` logic: the goodness-of-fit/Wald limit for Cohen's
kappa, the estimate minus z(0.995) SE for the others).

Populations (``r`` raters rate each of ``n`` items per round):

* common: with probability ``rho`` every rater gives the item's category (drawn from ``p``),
  else each rater draws from ``p`` independently (the common-correlation model);
* category-specific: the same with a probability ``rho_c`` per category (``rho_c`` proportional
  to ``shape``, 1 : 0.9 : 0.5 over prevalences 0.5 / 0.3 / 0.2), so agreement differs by category
  and the common-correlation model misfits; the "strong" scenarios use 1 : 0.75 : 0.35, and
  "category-specific 4" four categories 0.1 / 0.2 / 0.3 / 0.4 with 0.4 : 0.7 : 0.9 : 1.

``rho`` (or the scale of ``rho_c``) is solved so that the population's statistic equals 0.6.

Run: ``python benchmarks/bench_stopping.py [--reps 4000] [--looks 5]``; prints one row per
scenario x statistic: the false-stop rate, its Monte Carlo SE, whether it is within the stated
rate + 2 SE, and the power: the share that stops within the looks when the statistic is 0.8.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from goldboard.analysis import coefficients as C
from goldboard.analysis.calibration import NOMINAL, kappa_rule_limits, look_level, stated_false_stop, wald_critical

THRESHOLD = 0.6

#: name -> (raters, items per round, prevalences, per-category agreement shape or None)
SCENARIOS = {
    "2 raters, 4 balanced, 30 items": (2, 30, [0.25] * 4, None),
    "2 raters, 4 balanced, 100 items": (2, 100, [0.25] * 4, None),
    "2 raters, binary 0.15, 50 items": (2, 50, [0.85, 0.15], None),
    "2 raters, binary 0.15, 100 items": (2, 100, [0.85, 0.15], None),
    "2 raters, binary 0.15, 200 items": (2, 200, [0.85, 0.15], None),
    "2 raters, category-specific, 100 items": (2, 100, [0.5, 0.3, 0.2], [1.0, 0.9, 0.5]),
    "2 raters, category-specific, 200 items": (2, 200, [0.5, 0.3, 0.2], [1.0, 0.9, 0.5]),
    "3 raters, 4 balanced, 30 items": (3, 30, [0.25] * 4, None),
    "3 raters, binary 0.15, 100 items": (3, 100, [0.85, 0.15], None),
    "3 raters, category-specific, 100 items": (3, 100, [0.5, 0.3, 0.2], [1.0, 0.9, 0.5]),
    # stronger contrasts (1 : 0.75 : 0.35; four categories 0.4 : 0.7 : 0.9 : 1 with the rarest agreeing most)
    "2 raters, category-specific strong, 50 items": (2, 50, [0.5, 0.3, 0.2], [1.0, 0.75, 0.35]),
    "2 raters, category-specific strong, 100 items": (2, 100, [0.5, 0.3, 0.2], [1.0, 0.75, 0.35]),
    "2 raters, category-specific 4, 100 items": (2, 100, [0.1, 0.2, 0.3, 0.4], [0.4, 0.7, 0.9, 1.0]),
    "3 raters, category-specific strong, 100 items": (3, 100, [0.5, 0.3, 0.2], [1.0, 0.75, 0.35]),
}


#: the rule statistics a scenario tests: Cohen's kappa for two raters, Fleiss' for more
def statistics(raters: int) -> list[str]:
    return ["cohen_kappa" if raters == 2 else "fleiss_kappa", "gwet_ac1", "krippendorff_alpha"]


def population_value(stat: str, p: np.ndarray, rho: np.ndarray) -> float:
    """The statistic of the population (large-sample value): observed agreement of two ratings of an
    item, chance agreement from the rating marginals ``m``."""
    rbar = float(np.sum(p * rho))
    m = p * rho + p * (1 - rbar)
    pa = float(np.sum(p * (rho + (1 - rho) * np.sum(p * p))))  # item's ratings: agree branch or independent draws
    if stat == "gwet_ac1":
        pe = float(np.sum(m * (1 - m)) / (len(p) - 1))
    else:
        pe = float(np.sum(m * m))
    return (pa - pe) / (1 - pe)


def boundary_rho(stat: str, p, shape, target: float = THRESHOLD) -> np.ndarray | None:
    """Per-category agreement probabilities putting ``stat`` at ``target``; None when even raters who
    agree only by chance give more (AC1 on a skewed label: no boundary in this model), or when the
    agreement shape cannot reach it (category-specific agreement at 0.8)."""
    p = np.asarray(p, dtype=float)
    base = np.ones_like(p) if shape is None else np.asarray(shape, dtype=float) / max(shape)
    if population_value(stat, p, 0 * base) >= target or population_value(stat, p, base) < target:
        return None  # chance alone exceeds the target, or the shape cannot reach it
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if population_value(stat, p, mid * base) < target else (lo, mid)
    return (lo + hi) / 2 * base


def simulate_counts(rng, reps, n, raters, p, rho) -> np.ndarray:
    """``(reps, n, K)`` counts of the ratings of each item."""
    k = len(p)
    cat = rng.choice(k, size=(reps, n), p=p)
    agree = rng.random((reps, n)) < rho[cat]
    own = rng.choice(k, size=(reps, n, raters), p=p)
    ratings = np.where(agree[..., None], cat[..., None], own)
    return np.stack([(ratings == c).sum(axis=-1) for c in range(k)], axis=-1).astype(float), ratings


def estimates(stat: str, counts: np.ndarray, ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The estimate and SE of a non-Cohen rule statistic in each simulated round (the engine's functions)."""
    k = counts.shape[-1]
    if ratings.shape[-1] == 2 and stat == "gwet_ac1":
        idx = ratings[..., 0] * k + ratings[..., 1]
        tables = np.stack([np.bincount(row, minlength=k * k) for row in idx]).reshape(-1, k, k).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            est = C.gwet_ac(tables)
        return np.asarray(est.value, dtype=float), np.asarray(est.se, dtype=float)
    fn = {"fleiss_kappa": C.fleiss_kappa, "gwet_ac1": C.gwet_ac_multi}.get(stat)
    v, se = np.empty(len(counts)), np.empty(len(counts))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i, c in enumerate(counts):
            est = fn(c) if fn else C.krippendorff_alpha(c, "nominal")
            v[i], se[i] = est.value, est.se
    return v, se


def tested_limits(stat: str, counts: np.ndarray, ratings: np.ndarray, level: float) -> np.ndarray:
    """The limit the rule tests in each simulated round (what ``calibrate`` computes:
    :func:`kappa_rule_limits` for Cohen's kappa, else the estimate minus :func:`wald_critical` SE)."""
    k = counts.shape[-1]
    if ratings.shape[-1] == 2 and stat == "cohen_kappa":
        idx = ratings[..., 0] * k + ratings[..., 1]
        tables = np.stack([np.bincount(row, minlength=k * k) for row in idx]).reshape(-1, k, k).astype(float)
        return kappa_rule_limits(tables, level, "lower")
    v, se = estimates(stat, counts, ratings)
    n = counts.shape[1]
    return np.where(np.isfinite(se) & (se > 0), v - wald_critical(stat, level, n) * se, np.nan)


def needed_widening(name: str, stat: str, reps: int, seed: int = 99) -> dict[int, float] | None:
    """The factor ``B`` of :func:`wald_critical` each number of looks (1, 5) needs in scenario ``name``:
    from the studentized statistic ``(estimate - 0.6) / SE`` at the boundary, the critical value
    ``c`` whose false-stop rate over the looks is 0.025, and ``B = (c / z - 1) sqrt(n)``."""
    from scipy import stats

    raters, n, p, shape = SCENARIOS[name]
    p = np.asarray(p, dtype=float)
    rho = boundary_rho(stat, p, shape)
    if rho is None:
        return None
    rng = np.random.default_rng([seed, sum(map(ord, name + stat))])
    t = []
    for _ in range(5):
        counts, ratings = simulate_counts(rng, reps, n, raters, p, rho)
        v, se = estimates(stat, counts, ratings)
        t.append(np.where(np.isfinite(se) & (se > 0), (v - THRESHOLD) / np.where(se > 0, se, 1), -np.inf))
    t = np.array(t)  # looks x reps
    out = {}
    for looks in (1, 5):
        c = float(np.quantile(t[:looks].max(axis=0), 1 - NOMINAL))
        z = float(stats.norm.ppf(1 - NOMINAL / looks))
        out[looks] = max(0.0, (c / z - 1) * math.sqrt(n))
    return out


def false_stop_rate(
    name: str, stat: str, reps: int, looks: int = 5, seed: int = 34, true: float = THRESHOLD
) -> tuple[float, float] | None:
    """Share of ``reps`` simulated calibrations of scenario ``name`` that stop within ``looks`` when the
    population's statistic is ``true`` (the threshold: false stops; above it: power), with its Monte
    Carlo SE; None when the scenario has no such population for ``stat``."""
    raters, n, p, shape = SCENARIOS[name]
    p = np.asarray(p, dtype=float)
    rho = boundary_rho(stat, p, shape, true)
    if rho is None:
        return None
    rng = np.random.default_rng([seed, sum(map(ord, name + stat))])
    level = look_level(looks)
    stopped = np.zeros(reps, dtype=bool)
    for _ in range(looks):
        counts, ratings = simulate_counts(rng, reps, n, raters, p, rho)
        lim = tested_limits(stat, counts, ratings, level)
        stopped |= np.nan_to_num(lim, nan=-np.inf) >= THRESHOLD
    rate = float(stopped.mean())
    return rate, math.sqrt(max(rate * (1 - rate), 1e-12) / reps)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--looks", type=int, default=5)
    ap.add_argument("--fit", action="store_true", help="print the widening factor B each scenario needs")
    ap.add_argument("--only", default="", help="only the scenarios whose name contains this")
    args = ap.parse_args()
    names = [n for n in SCENARIOS if args.only in n]
    if args.fit:
        for name in names:
            for stat in statistics(SCENARIOS[name][0])[1:] if SCENARIOS[name][0] == 2 else statistics(3):
                print(f"{name:42} {stat:20} {needed_widening(name, stat, args.reps)}", flush=True)
        return
    print(
        f"rule STAT_lower>={THRESHOLD}, {args.looks} looks at level {look_level(args.looks):.3g}, {args.reps} calibrations"
    )
    print(f"{'scenario':42} {'statistic':20} {'false stops':>11} {'MC SE':>7}  {'stated':>8}  holds  power 0.8")
    for name in names:
        for stat in statistics(SCENARIOS[name][0]):
            t0 = time.time()
            got = false_stop_rate(name, stat, args.reps, args.looks)
            if got is None:
                print(f"{name:42} {stat:20} {'no boundary: chance agreement alone exceeds the threshold':>40}")
                continue
            rate, se = got
            power = false_stop_rate(name, stat, max(args.reps // 4, 200), args.looks, true=0.8)
            stated = stated_false_stop(stat, args.looks)
            ok = rate <= stated + 2 * se
            print(
                f"{name:42} {stat:20} {rate:11.4f} {se:7.4f}  {stated:8.3f}  {'yes' if ok else 'NO':>5}  "
                f"{'-' if power is None else f'{power[0]:.2f}':>9}  "
                f"({time.time() - t0:.0f} s)"
            )


if __name__ == "__main__":
    main()
