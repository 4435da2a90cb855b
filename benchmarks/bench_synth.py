"""Speed of synthetic case generation: vectorised draws vs a naive per-record loop.

Both ways draw the same random choices per MTB case (see ``cases/synth.py``):
the vectorised way draws each column for all cases at once from one numpy
Generator; the naive way calls the Generator once per value inside a per-record
loop.  Both then format the records with the same ``format_mtb_case``.  The
script also times the full ``goldboard cases synth`` workload of 50,000 model
outputs (10,000 cases x 5 models).

Run:  .venv/bin/python benchmarks/bench_synth.py [n_cases]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from goldboard.cases import synth


def best_of(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def vectorised_draws(n: int) -> None:
    synth._mtb_draws(np.random.default_rng(7), n)


def naive_draws(n: int) -> None:
    rng = np.random.default_rng(7)
    for _ in range(n):
        synth._mtb_draw_one(rng)


def vectorised_cases(n: int) -> list:
    return synth.synth_mtb_cases(n, seed=7)


def naive_cases(n: int) -> list:
    rng = np.random.default_rng(7)
    return [synth.format_mtb_case(i, synth._mtb_draw_one(rng)) for i in range(n)]


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    print(f"MTB synthetic cases, n = {n:,} (best of 3, seconds)")
    tv = best_of(lambda: vectorised_draws(n))
    tn = best_of(lambda: naive_draws(n), repeat=1)
    print(f"  random draws only:  vectorised {tv:.3f}  naive loop {tn:.3f}  ratio {tn / tv:.0f}x")
    tv = best_of(lambda: vectorised_cases(n))
    tn = best_of(lambda: naive_cases(n), repeat=1)
    print(f"  draws + formatting: vectorised {tv:.3f}  naive loop {tn:.3f}  ratio {tn / tv:.1f}x")
    t = best_of(lambda: synth.synthesize("mtb", 10_000, seed=7, models=["a", "b", "c", "d", "e"]))
    print(f"  cases synth, 10,000 cases x 5 models = 50,000 outputs: {t:.2f} s")
    for schema in ("medfail", "radsafe"):
        t = best_of(lambda schema=schema: synth.synthesize(schema, 10_000, seed=7, models=["a", "b", "c", "d", "e"]))
        print(f"  {schema} synth, 10,000 cases x 5 models = 50,000 outputs: {t:.2f} s")


if __name__ == "__main__":
    main()
