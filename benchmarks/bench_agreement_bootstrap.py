"""Benchmark: bootstrap CIs of agreement statistics, vectorised vs the naive loop.

50,000 items x 2 raters on a 5-level ordinal scale, 2,000 resamples of items.

* naive loop -- what the issue forbids: a Python loop that resamples item
  indices and calls the statistics once per resample.  Three variants, each timed
  on a subset of resamples and scaled to 2,000: goldboard's own ``agreement()``
  per resample (the same output, all statistics and per-label); the same eleven
  table statistics from a ``bincount`` table per resample (the leanest honest
  loop); scikit-learn's ``cohen_kappa_score`` with three weightings.
* index matrix -- the textbook vectorisation: a (B x n) resampled index matrix,
  batched confusion matrices with one ``bincount``, batched kappa.
* goldboard -- ``agreement(..., n_resamples=2000)`` end to end: every statistic,
  per-label agreement and the asymptotic ones too, in one call (items with the
  same pair of ratings are pooled and a resample is a multinomial count vector
  over those patterns).

Run: ``python benchmarks/bench_agreement_bootstrap.py [--items 50000] [--resamples 2000]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from goldboard.analysis import coefficients as C
from goldboard.analysis.agreement import agreement

K = 5
CATS = [str(i) for i in range(1, K + 1)]


def make_data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.choice(K, size=n, p=[0.35, 0.25, 0.2, 0.12, 0.08])
    noise = rng.choice([-1, 0, 0, 0, 1], size=n)
    b = np.clip(a + noise, 0, K - 1)
    return a, b


def table_stats(t: np.ndarray) -> list[float]:
    """The two-rater statistics goldboard reports for one table (no per-label)."""
    out = [C.percent_agreement(t).value]
    out += [C.cohen_kappa(t, w).value for w in ("none", "linear", "quadratic")]
    out.append(C.scott_pi(t).value)
    out += [C.gwet_ac(t, w).value for w in ("none", "linear", "quadratic")]
    out.append(C.brennan_prediger(t).value)
    co = t + t.T
    out += [C.krippendorff_alpha_from_coincidence(co, lv) for lv in ("ordinal", "nominal")]
    return out


def naive_sklearn(a, b, n_resamples, seed=1):
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(seed)
    n = len(a)
    vals = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        vals.append(
            [cohen_kappa_score(a[idx], b[idx], weights=w, labels=list(range(K))) for w in (None, "linear", "quadratic")]
        )
    return np.array(vals)


def naive_full(a, b, n_resamples, seed=1):
    rng = np.random.default_rng(seed)
    n = len(a)
    vals = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        t = np.bincount(a[idx] * K + b[idx], minlength=K * K).reshape(K, K).astype(float)
        vals.append(table_stats(t))
    return np.array(vals)


def naive_engine(df, n_resamples, seed=1):
    """Resample items, call agreement() on the resampled table, once per resample."""
    rng = np.random.default_rng(seed)
    n = len(df) // 2
    a_rows = df.iloc[0::2].reset_index(drop=True)
    b_rows = df.iloc[1::2].reset_index(drop=True)
    vals = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, n)
        boot = pd.DataFrame(
            {
                "item_id": np.repeat(np.arange(n).astype(str), 2),
                "rater": np.tile(["A", "B"], n),
                "value": np.column_stack([a_rows["value"].to_numpy()[idx], b_rows["value"].to_numpy()[idx]]).ravel(),
            }
        )
        res = agreement(boot, "severity", categories=CATS, levels=["ordinal", "nominal"])
        vals.append([r["value"] for r in res["statistics"]])
    return np.array(vals, dtype=float)


def index_matrix(a, b, n_resamples, seed=1, chunk=100):
    """Resampled index matrix -> batched confusion matrices via one bincount -> batched kappa."""
    rng = np.random.default_rng(seed)
    n = len(a)
    cells = a * K + b
    out = []
    for s in range(0, n_resamples, chunk):
        m = min(chunk, n_resamples - s)
        idx = rng.integers(0, n, size=(m, n))
        flat = (cells[idx] + (np.arange(m) * K * K)[:, None]).ravel()
        tables = np.bincount(flat, minlength=m * K * K).reshape(m, K, K).astype(float)
        out.append(np.stack([C.cohen_kappa(tables, w).value for w in ("none", "linear", "quadratic")], axis=1))
    return np.vstack(out)


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return time.perf_counter() - t0, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=50_000)
    ap.add_argument("--resamples", type=int, default=2_000)
    ap.add_argument("--naive-subset", type=int, default=40, help="resamples actually run by the lean naive loops")
    ap.add_argument("--engine-subset", type=int, default=5, help="resamples actually run by the agreement() loop")
    args = ap.parse_args()
    n, B, sub = args.items, args.resamples, min(args.naive_subset, args.resamples)
    a, b = make_data(n)
    df = pd.DataFrame(
        {
            "item_id": np.repeat(np.arange(n).astype(str), 2),
            "rater": np.tile(["A", "B"], n),
            "value": np.column_stack([a, b]).ravel() + 1,
        }
    )
    df["value"] = df["value"].astype(str)
    print(f"{n:,} items x 2 raters, {K} ordinal categories, {B:,} bootstrap resamples of items")

    t_eng, _ = timed(naive_engine, df, min(args.engine_subset, B))
    t_eng_scaled = t_eng * B / min(args.engine_subset, B)
    t_nf, v_nf = timed(naive_full, a, b, sub)
    t_nf_scaled = t_nf * B / sub
    t_sk, _ = timed(naive_sklearn, a, b, sub)
    t_sk_scaled = t_sk * B / sub
    t_ix, v_ix = timed(index_matrix, a, b, B)
    t_gb0, _ = timed(agreement, df, "severity", categories=CATS, levels=["ordinal", "nominal"])
    t_gb, res = timed(agreement, df, "severity", categories=CATS, levels=["ordinal", "nominal"], n_resamples=B, seed=1)
    t_boot = max(t_gb - t_gb0, 1e-9)

    print("naive loops (timed on a subset, scaled to all resamples):")
    print(
        f"  agreement() per resample, same output       {min(args.engine_subset, B):4d} in {t_eng:6.2f} s"
        f" -> ~{t_eng_scaled:9.1f} s"
    )
    print(f"  11 table statistics from bincount per resample {sub:4d} in {t_nf:6.2f} s -> ~{t_nf_scaled:9.1f} s")
    print(f"  sklearn cohen_kappa_score x3 per resample   {sub:4d} in {t_sk:6.2f} s -> ~{t_sk_scaled:9.1f} s")
    print("vectorised:")
    print(f"  index matrix + batched bincount, kappa x3   {B:,} in {t_ix:6.2f} s")
    print(
        f"  goldboard agreement(n_resamples={B:,})        {t_gb:6.2f} s end to end "
        f"({t_gb0:.2f} s without bootstrap, so the {B:,} resamples of every statistic cost {t_boot:.2f} s)"
    )
    kappa = next(r for r in res["statistics"] if r["statistic"] == "cohen_kappa" and r["weights"] == "none")
    asym = C.cohen_kappa(np.bincount(a * K + b, minlength=K * K).reshape(K, K)).se
    print(
        f"check: kappa {kappa['value']:.4f}; bootstrap SE goldboard {kappa['se']:.5f}, index matrix "
        f"{np.std(v_ix[:, 0], ddof=1):.5f}, naive ({sub} resamples) {np.std(v_nf[:, 1], ddof=1):.5f}; "
        f"Fleiss-Cohen-Everitt SE {asym:.5f}"
    )
    print(f"RATIO naive agreement() loop / goldboard end to end:     {t_eng_scaled / t_gb:8.0f}x")
    print(f"RATIO naive 11-statistic loop / goldboard end to end:    {t_nf_scaled / t_gb:8.1f}x")
    print(f"RATIO naive 11-statistic loop / goldboard bootstrap part: {t_nf_scaled / t_boot:8.1f}x")
    print(f"RATIO naive sklearn kappa loop / goldboard end to end:   {t_sk_scaled / t_gb:8.0f}x")


if __name__ == "__main__":
    main()
