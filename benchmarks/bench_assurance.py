"""Benchmark: does every assurance plan (``plan size --lower/--width --assurance P``) keep its promise?

For each plan below: the planned ``n`` (:func:`goldboard.analysis.planning.assured_sample_size`: for
two categories the exact share over every 2 x 2 table, no simulation; otherwise the one fixed set of
simulated studies), then a check on 40,000 fresh studies of ``n`` items (a seed no
plan uses) analysed with the interval the report prints (:func:`report_limits` with the engine's
default method).  A plan holds when the checked share is at least P - 2 Monte Carlo SE.  The
last columns show how far the planned ``n`` moves when the simulated studies come from other seeds
(``--seed``): the reason the default is one fixed set; and the smallest checked share at any of
those seeds' ``n`` (the same 40,000-study check), so the promise is checked whatever the seed.

Run: ``python benchmarks/bench_assurance.py [--check 40000] [--seeds 5]``
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from goldboard.analysis import planning as pl

#: (kappa, lower, upper or None, prevalences, assurance)
PLANS = [
    (0.6, 0.4, None, [0.3, 0.4, 0.3], 0.8),
    (0.6, 0.45, 0.75, [0.2, 0.8], 0.8),
    (0.6, 0.45, 0.75, [0.2, 0.8], 0.9),
    (0.8, 0.6, None, [0.25] * 4, 0.8),
    (0.7, 0.5, None, [0.1, 0.9], 0.9),
    (0.5, 0.3, 0.7, [0.5, 0.5], 0.8),
    (0.7, 0.55, 0.85, [0.2, 0.3, 0.5], 0.8),
]


def checked_share(plan: pl.SampleSizePlan, n: int, studies: int, seed: int) -> float:
    """Share of ``studies`` fresh studies of ``n`` items meeting the plan's target with the report's interval."""
    k = len(plan.prevalences)
    rng = np.random.default_rng(seed)
    tables = rng.multinomial(n, pl.cell_table(plan.kappa, plan.prevalences).ravel(), size=studies).reshape(-1, k, k)
    return pl._hits_at(plan, tables.astype(float), pl.report_interval_method()) / studies


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", type=int, default=40000, help="fresh studies per plan")
    ap.add_argument("--seeds", type=int, default=5, help="other seeds the plan is re-run with")
    args = ap.parse_args()
    print(f"{'plan':44} {'P':>4} {'n':>5} {'sims':>7} {'share':>7} {'2 SE':>6} {'holds':>5}  n by seed  (worst share)")
    worst = 1.0
    for kappa, lower, upper, prev, p in PLANS:
        t0 = time.time()
        base = pl.ci_sample_size(kappa, lower, prev, kappa_upper=upper)
        plan = pl.assured_sample_size(base, p)
        share = checked_share(plan, plan.n, args.check, seed=20260034)
        se = math.sqrt(p * (1 - p) / args.check)
        holds = share >= p - 2 * se
        worst = min(worst, share - p)
        by_seed = [pl.assured_sample_size(base, p, seed=s).n for s in range(1, args.seeds + 1)]
        at_seeds = {m: checked_share(plan, m, args.check, seed=20260034) for m in set(by_seed)}
        seeds_hold = all(v >= p - 2 * se for v in at_seeds.values())
        worst = min(worst, *(v - p for v in at_seeds.values()))
        goal = f"lower>={lower}" if upper is None else f"width<={round(upper - lower, 3)}"
        name = f"kappa {kappa}, {goal}, prev {','.join(f'{x:g}' for x in prev)}"
        print(
            f"{name:44} {p:4.2f} {plan.n:5d} {'exact' if plan.exact else plan.simulations:>7} {share:7.4f} {2 * se:6.4f} "
            f"{'yes' if holds else 'NO':>5}  {by_seed}  ({min(at_seeds.values()):.4f}"
            f"{'' if seeds_hold else ' NO'})  ({time.time() - t0:.0f} s)"
        )
    print(f"smallest checked share minus P (planned n and every seed's n): {worst:+.4f}")


if __name__ == "__main__":
    main()
