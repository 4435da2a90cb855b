"""Benchmark: scoring 40,000 predictions with 2,000 bootstrap resamples.

Run:  .venv/bin/python benchmarks/bench_scoring.py [--n 40000] [--bootstrap 2000] [--naive-resamples 40]

Measures, in one run on synthetic OpenMTB-like data (4 labels, ~91% accuracy):

1. one model with ``n`` predictions: accuracy + macro-F1 percentile CIs with the vectorised
   bootstrap (index matrix + one batched ``np.bincount`` per chunk) vs the naive way (a
   Python loop over resamples calling ``sklearn.metrics.accuracy_score`` and ``f1_score``),
   the naive time measured on ``--naive-resamples`` resamples and scaled to ``--bootstrap``;
2. the whole ``score_labels`` on a RadSaFE-sized grid (34 models x 6 conditions x 200 items
   = 40,800 predictions, DataFrames in, result dict out);
3. ``score_radsafe`` on 40,800 option answers against 200 flagged questions;
4. the CLI path (``goldboard.workflows.run_score``: read CSV/JSONL files, validate, score, render JSON).

Prints wall times and the speed-up ratio; no assertion (speed is not a unit test).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from goldboard.analysis.scoring import score_labels, score_radsafe
from goldboard.analysis.scoring_stats import bootstrap_label_metrics, naive_bootstrap_loop
from goldboard.label_configs.schema import load_schema

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]


def synthetic_codes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    true = rng.choice(4, size=n, p=[0.4, 0.12, 0.36, 0.12])
    wrong = rng.random(n) < 0.09
    pred = np.where(wrong, (true + rng.integers(1, 4, n)) % 4, true)
    return true, pred


def bench_core(n: int, b: int, naive_b: int) -> None:
    rng = np.random.default_rng(0)
    true, pred = synthetic_codes(n, rng)
    t0 = time.perf_counter()
    fast = bootstrap_label_metrics(true, pred, 4, b, 1, no_answer=False)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    naive_bootstrap_loop(true, pred, [0, 1, 2, 3], naive_b, 1)
    t_naive_sub = time.perf_counter() - t0
    t_naive = t_naive_sub / naive_b * b
    acc = fast["accuracy"]
    f1 = fast["macro_f1"]
    print(f"[1] one model, {n:,} predictions, {b:,} resamples")
    print(
        f"    vectorised bootstrap : {t_fast:8.2f} s   accuracy {acc[0]:.4f} [{acc[1]:.4f}, {acc[2]:.4f}], "
        f"macro-F1 {f1[0]:.4f} [{f1[1]:.4f}, {f1[2]:.4f}]"
    )
    print(
        f"    naive sklearn loop   : {t_naive:8.2f} s   (measured {t_naive_sub:.2f} s on {naive_b} resamples, scaled)"
    )
    print(f"    speed-up             : {t_naive / t_fast:8.1f} x")


def grid_frames(rng: np.random.Generator, models: int = 34, conditions: int = 6, items: int = 200):
    ids = [f"Q{i:03d}" for i in range(items)]
    gold_codes = rng.choice(4, size=items, p=[0.4, 0.12, 0.36, 0.12])
    gold = pd.DataFrame({"case_id": ids, "support_label": [LABELS[c] for c in gold_codes]})
    rows = []
    for m in range(models):
        for c in range(conditions):
            err = rng.random(items) < 0.05 + 0.3 * rng.random()
            pred = np.where(err, (gold_codes + rng.integers(1, 4, items)) % 4, gold_codes)
            rows.append(
                pd.DataFrame(
                    {
                        "case_id": ids,
                        "model": f"model_{m:02d}",
                        "condition": f"cond_{c}",
                        "predicted_label": [LABELS[p] for p in pred],
                        "predicted_abstain": pred == 3,
                    }
                )
            )
    return gold, pd.concat(rows, ignore_index=True)


def bench_grid(b: int) -> None:
    rng = np.random.default_rng(1)
    gold, preds = grid_frames(rng)
    schema = load_schema("mtb")
    t0 = time.perf_counter()
    r = score_labels(gold, preds, schema=schema, n_resamples=b, seed=1, compare=["model_00,model_01"])
    t = time.perf_counter() - t0
    print(
        f"[2] score_labels: {len(preds):,} predictions = {len(r['groups'])} model x condition groups x "
        f"{r['gold']['items']} items, {b:,} resamples each, {len(r['comparisons'])} paired comparisons"
    )
    print(f"    end to end           : {t:8.2f} s")


def bench_radsafe() -> None:
    rng = np.random.default_rng(2)
    schema = load_schema("radsafe")
    opts = list(schema.display.options)
    q = 200
    key = rng.integers(0, 5, q)
    gold_rows = []
    for i in range(q):
        for base in ("high_risk", "unsafe", "contradicts"):
            for j, o in enumerate(opts):
                flag = j != key[i] and rng.random() < 0.3
                gold_rows.append(
                    {
                        "item_id": f"Q{i}",
                        "case_id": f"Q{i}",
                        "field": f"{base}_{o}",
                        "gold_value": "yes" if flag else "no",
                        "method": "unanimous",
                    }
                )
    gold = pd.DataFrame(gold_rows)
    preds = []
    for m in range(34):
        for c in range(6):
            ch = np.where(rng.random(q) < 0.8, key, rng.integers(0, 5, q))
            preds.append(
                pd.DataFrame(
                    {
                        "question_id": [f"Q{i}" for i in range(q)],
                        "model": f"m{m}",
                        "condition": f"c{c}",
                        "chosen_option": [opts[x] for x in ch],
                        "confidence": rng.random(q),
                    }
                )
            )
    preds = pd.concat(preds, ignore_index=True)
    t0 = time.perf_counter()
    r = score_radsafe(gold, preds, schema, key={f"Q{i}": opts[k] for i, k in enumerate(key)})
    t = time.perf_counter() - t0
    print(f"[3] score_radsafe: {len(preds):,} answers, {len(r['groups'])} groups, 200 questions x 15 flags")
    print(f"    end to end           : {t:8.2f} s")


def bench_cli(b: int) -> None:
    import json
    import tempfile
    from pathlib import Path

    from goldboard.analysis.scoring_render import render_json
    from goldboard.workflows import run_score

    rng = np.random.default_rng(1)
    gold, preds = grid_frames(rng)
    with tempfile.TemporaryDirectory() as d:
        ref = Path(d) / "reference.jsonl"
        ref.write_text("".join(json.dumps(r) + "\n" for r in gold.to_dict("records")))
        pf = Path(d) / "predictions.csv"
        preds.to_csv(pf, index=False)
        t0 = time.perf_counter()
        r = run_score(gold=str(ref), schema="mtb", predictions=str(pf), n_resamples=b, seed=1)
        text = render_json(r)
        t = time.perf_counter() - t0
    print(f"[4] CLI path (read {len(preds):,}-row CSV, validate, score, JSON {len(text) // 1024} KiB)")
    print(f"    end to end           : {t:8.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=40_000)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--naive-resamples", type=int, default=40)
    args = ap.parse_args()
    bench_core(args.n, args.bootstrap, args.naive_resamples)
    bench_grid(args.bootstrap)
    bench_radsafe()
    bench_cli(args.bootstrap)


if __name__ == "__main__":
    main()
