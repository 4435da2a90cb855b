"""Coverage of goldboard's 95% agreement intervals, by seeded simulation of its own functions.

Population (the common-correlation model of Donner & Eliasziw 1992 / Bartfay & Donner 2001):
an item's true category is drawn from the prevalences ``p``; each rater reports it with
probability ``rho`` and otherwise a category drawn from ``p`` -- so every rater pair's joint
distribution is ``rho^2 diag(p) + (1 - rho^2) p p'`` and every chance-corrected coefficient's
population value is that of this table (computed with goldboard's own functions on it).

Grid (issue 34's audit): n 30, 50, 100, 300 items; 2, 3, 4 raters; 2-5 categories;
balanced and skewed prevalence (the first category 80%, the rest share 20%); kappa 0.6.
Per cell and statistic: the share of ``--reps`` simulated studies whose 95% interval covers
the population value, with its Monte-Carlo SE, for every interval method in
:data:`goldboard.analysis.intervals.METHODS`.

    .venv/bin/python benchmarks/bench_coverage.py [--reps 400] [--seed 1] [--json out.json]

Prints the table and, per method, the cells below 93%.  ``--json`` records the table
(``docs/intervals.md`` is written from such a record).  ``--summary analysis/coverage_record.py``
writes the default interval's cells below 93% as the module the methods text reads
(:mod:`goldboard.analysis.coverage`); ``--record benchmarks/coverage_record.json`` takes the rows
of a recorded run instead of simulating again.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time

import numpy as np

from goldboard.analysis import coefficients as C
from goldboard.analysis.intervals import METHODS, interval

NS = (30, 50, 100, 300)
RATERS = (2, 3, 4)
CATEGORIES = (2, 3, 4, 5)
PREVALENCES = ("balanced", "skewed")
KAPPA = 0.6


def prevalence(kind: str, k: int) -> np.ndarray:
    if kind == "balanced":
        return np.full(k, 1.0 / k)
    return np.array([0.8] + [0.2 / (k - 1)] * (k - 1))


def population_table(p: np.ndarray, kappa: float) -> np.ndarray:
    """A rater pair's joint distribution under the model (rows/columns: the two raters)."""
    return kappa * np.diag(p) + (1.0 - kappa) * np.outer(p, p)


def simulate(n: int, m: int, p: np.ndarray, kappa: float, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, n, m) category codes."""
    k = len(p)
    truth = rng.choice(k, size=(reps, n, 1), p=p)
    rand = rng.choice(k, size=(reps, n, m), p=p)
    keep = rng.random((reps, n, m)) < np.sqrt(kappa)
    return np.where(keep, truth, rand)


def statistics(k: int) -> list[tuple[str, str | None, str | None]]:
    """(statistic, weights, level) of the overall rows simulated for a k-category field (ordinal when k > 2)."""
    rows = [("percent_agreement", None, None), ("kappa", "none", None), ("gwet_ac1", "none", None)]
    rows += [("krippendorff_alpha", None, "nominal"), ("positive_agreement", None, None)]
    if k > 2:
        rows += [("kappa", "quadratic", None), ("gwet_ac1", "quadratic", None)]
        rows += [("krippendorff_alpha", None, "ordinal"), ("krippendorff_alpha", None, "interval")]
    return rows


def truth(stat, weights, level, p, kappa, m) -> float:
    """The population value of a statistic (goldboard's function on the population table)."""
    P = population_table(p, kappa) * 1e7
    k = len(p)
    w = C.agreement_weights(k, weights or "none")
    if stat == "percent_agreement":
        return float(C.percent_agreement(P).value)
    if stat == "kappa":
        return float(C.cohen_kappa(P, w).value)
    if stat == "gwet_ac1":
        return float(C.gwet_ac(P, w).value)
    if stat == "krippendorff_alpha":
        return float(C.krippendorff_alpha_from_coincidence(P, level))
    if stat == "positive_agreement":
        pos, _ = C.specific_agreement(C.one_vs_rest_tables(P))
        return float(np.asarray(pos.value)[-1])  # the rarest category
    raise ValueError(stat)


def estimates(codes: np.ndarray, k: int, stats) -> dict:
    """Estimate, SE and n of every statistic for every simulated study (the engine's functions)."""
    reps, n, m = codes.shape
    out = {s: (np.full(reps, np.nan), np.full(reps, np.nan)) for s in stats}
    W = {wk: C.agreement_weights(k, wk) for wk in ("none", "quadratic")}
    if m == 2:  # batched over studies: confusion tables
        T = np.zeros((reps, k * k))
        np.add.at(T, (np.repeat(np.arange(reps), n), (codes[:, :, 0] * k + codes[:, :, 1]).ravel()), 1.0)
        T = T.reshape(reps, k, k)
    for s in stats:
        stat, wk, level = s
        v, e = out[s]
        if m == 2 and stat != "krippendorff_alpha":
            if stat == "percent_agreement":
                est = C.percent_agreement(T)
            elif stat == "kappa":
                est = C.cohen_kappa(T, W[wk])
            elif stat == "gwet_ac1":
                est = C.gwet_ac(T, W[wk])
            else:
                est = C.specific_agreement(C.one_vs_rest_tables(T)[:, -1])[0]
            v[:], e[:] = est.value, est.se
            continue
        for r in range(reps):
            R = C.rating_counts(codes[r], k)
            if stat == "percent_agreement":
                est = C.percent_agreement_multi(R)
            elif stat == "kappa":
                est = C.fleiss_kappa(R, W[wk])
            elif stat == "gwet_ac1":
                est = C.gwet_ac_multi(R, W[wk])
            elif stat == "krippendorff_alpha":
                est = C.krippendorff_alpha(R, level)
            else:
                pos, _ = C.specific_agreement_multi(R)
                est = C.Estimate(np.asarray(pos.value)[-1], np.asarray(pos.se)[-1])
            v[r], e[r] = est.value, est.se
    return out


def low_of(stat: str) -> float:
    return 0.0 if stat in ("percent_agreement", "positive_agreement") else -1.0


def run(reps: int, seed: int, ns=NS, raters=RATERS, categories=CATEGORIES, prevalences=PREVALENCES) -> list[dict]:
    """One row per (cell, statistic, method): coverage, its MC SE, the share with no interval."""
    rng = np.random.default_rng(seed)
    rows = []
    for n, m, k, prev in itertools.product(ns, raters, categories, prevalences):
        p = prevalence(prev, k)
        codes = simulate(n, m, p, KAPPA, reps, rng)
        stats = statistics(k)
        est = estimates(codes, k, stats)
        for s in stats:
            stat, wk, level = s
            true = truth(stat, wk, level, p, KAPPA, m)
            v, e = est[s]
            for method in METHODS:
                lo, hi = interval(method, v, e, np.full(reps, n), low_of(stat), 1.0)
                ok = np.isfinite(lo)
                defined = np.isfinite(v)
                cover = ok & (lo <= true + 1e-12) & (true - 1e-12 <= hi)
                # among the studies where the estimate is defined (an undefined estimate, e.g. no item
                # with the rare label, is reported as such); a defined estimate without an interval
                # counts as not covering
                n_def = max(int(defined.sum()), 1)
                cov = float(cover[defined].sum() / n_def)
                rows.append(
                    {
                        "n": n,
                        "raters": m,
                        "categories": k,
                        "prevalence": prev,
                        "statistic": name(stat, wk, level, m),
                        "method": method,
                        "coverage": cov,
                        "mc_se": float(np.sqrt(cov * (1 - cov) / n_def)),
                        "undefined": float(1 - defined.mean()),
                    }
                )
    return rows


def name(stat, wk, level, m) -> str:
    if stat == "kappa":
        base = "cohen_kappa" if m == 2 else "fleiss_kappa"
        return base + ("" if wk == "none" else f" ({wk})")
    if stat == "gwet_ac1":
        return "gwet_ac1" if wk == "none" else "gwet_ac2 (quadratic)"
    if stat == "krippendorff_alpha":
        return f"krippendorff_alpha ({level})"
    if stat == "positive_agreement":
        return "specific agreement (rarest label)"
    return stat


def summary(rows: list[dict], threshold: float = 0.93) -> dict:
    """Per method: the cells below ``threshold`` and the worst cell."""
    out = {}
    for method in METHODS:
        mine = [r for r in rows if r["method"] == method]
        below = [r for r in mine if r["coverage"] < threshold]
        worst = min(mine, key=lambda r: r["coverage"])
        out[method] = {"cells": len(mine), "below": len(below), "worst": worst, "below_rows": below}
    return out


def summary_module(record: dict, method: str = "wilson", threshold: float = 0.93) -> str:
    """The Python source of ``analysis/coverage_record.py``: the run's settings and, for interval
    ``method``, every cell and statistic whose coverage is below ``threshold``."""
    mine = [r for r in record["rows"] if r["method"] == method]
    below = [r for r in mine if r["coverage"] < threshold]
    meta = {
        "method": method,
        "reps": record["reps"],
        "seed": record["seed"],
        "kappa": record["kappa"],
        "threshold": threshold,
        "cells": len(mine),
        "below": len(below),
    }
    lines = [
        '"""Written by ``benchmarks/bench_coverage.py --summary`` from ``benchmarks/coverage_record.json``:',
        f"the cells of the coverage simulation where the {method} interval covered less than {threshold:.0%}",
        '(read by :mod:`goldboard.analysis.coverage`; do not edit by hand)."""',
        "",
        f"META = {json.dumps(meta)}",
        "",
        "#: (n, raters, categories, prevalence, statistic, coverage, Monte-Carlo SE)",
        "BELOW = (",
    ]
    for r in below:
        cell = (r["n"], r["raters"], r["categories"], r["prevalence"], r["statistic"])
        lines.append(f"    ({json.dumps([*cell, round(r['coverage'], 4), round(r['mc_se'], 4)])[1:-1]}),")
    return "\n".join([*lines, ")", ""])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--record", default=None, help="rows of a recorded run (--json) instead of a new one")
    ap.add_argument("--summary", default=None, help="write analysis/coverage_record.py here")
    a = ap.parse_args(argv)
    t0 = time.time()
    if a.record:
        with open(a.record) as fh:
            rec = json.load(fh)
        rows, a.reps, a.seed = rec["rows"], rec["reps"], rec["seed"]
    else:
        rows = run(a.reps, a.seed)
    secs = time.time() - t0
    print(f"{'n':>4} {'m':>2} {'k':>2} {'prev':<8} {'statistic':<36} " + " ".join(f"{m:>14}" for m in METHODS))
    key = lambda r: (r["n"], r["raters"], r["categories"], r["prevalence"], r["statistic"])  # noqa: E731
    by = {}
    for r in rows:
        by.setdefault(key(r), {})[r["method"]] = r
    for kk, d in by.items():
        cells = " ".join(f"{d[m]['coverage']:>8.3f}±{d[m]['mc_se']:.3f}" for m in METHODS)
        print(f"{kk[0]:>4} {kk[1]:>2} {kk[2]:>2} {kk[3]:<8} {kk[4]:<36} {cells}")
    s = summary(rows)
    for method, d in s.items():
        w = d["worst"]
        print(
            f"{method}: {d['below']} of {d['cells']} cells below 93%; worst {w['coverage']:.3f} "
            f"({w['statistic']}, n {w['n']}, {w['raters']} raters, {w['categories']} categories, {w['prevalence']})"
        )
    print(f"{a.reps} studies per cell, seed {a.seed}, {secs:.0f} s")
    record = {"reps": a.reps, "seed": a.seed, "kappa": KAPPA, "seconds": secs, "rows": rows}
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(record, fh, indent=1)
    if a.summary:
        with open(a.summary, "w") as fh:
            fh.write(summary_module(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
