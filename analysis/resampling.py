"""Bootstrap resampling shared by the agreement and scoring engines.

Both engines resample items (or clusters of items) with replacement and read
percentile intervals off the resampled statistics:

- agreement: :func:`bootstrap_sums` -- every statistic is a function of per-item
  additive contributions, so a resample is a multinomial count vector over the
  distinct item rows and all resamples cost one matrix product;
  :func:`percentile_summary` -> (SE, 2.5/97.5 percentiles, share undefined).
- scoring: :func:`bootstrap_cell_counts` -- resampled confusion-matrix cell counts
  from resampled indices (:func:`bootstrap_indices`); :func:`percentile_interval`.

The two draw their resamples differently (multinomial counts vs indices), and each
engine's published-value tests pin its random stream, so both stay.
"""

from __future__ import annotations

import numpy as np


def bootstrap_indices(n: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """A ``(n_resamples, n)`` matrix of resampling indices (with replacement)."""
    return rng.integers(0, n, size=(n_resamples, n))


def bootstrap_cell_counts(
    cells: np.ndarray, n_cells: int, n_resamples: int, rng: np.random.Generator, chunk_elems: int = 4_000_000
) -> np.ndarray:
    """Cell counts of ``n_resamples`` nonparametric bootstrap resamples.

    ``cells`` holds one integer cell code in ``[0, n_cells)`` per unit (e.g.
    ``true * n_pred + pred`` for a confusion matrix).  Each resample draws
    ``len(cells)`` units with replacement; its counts are one row of the result
    (shape ``(n_resamples, n_cells)``, int64).  Resamples are drawn in chunks of
    at most ``chunk_elems`` indices and counted with a single ``np.bincount`` per
    chunk (row ``r`` of the chunk offset by ``r * n_cells``).
    """
    cells = np.asarray(cells, dtype=np.int64)
    n = cells.shape[0]
    out = np.zeros((n_resamples, n_cells), dtype=np.int64)
    if n == 0 or n_resamples == 0:
        return out
    if cells.min() < 0 or cells.max() >= n_cells:
        raise ValueError("cell codes must lie in [0, n_cells)")
    rows = max(1, chunk_elems // n)
    for start in range(0, n_resamples, rows):
        b = min(rows, n_resamples - start)
        idx = bootstrap_indices(n, b, rng)
        codes = cells[idx]
        codes += (np.arange(b, dtype=np.int64) * n_cells)[:, None]
        out[start : start + b] = np.bincount(codes.ravel(), minlength=b * n_cells).reshape(b, n_cells)
    return out


def percentile_interval(samples: np.ndarray, confidence_level: float = 0.95) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of a 1-D sample of statistics (NaNs ignored).

    Uses ``np.nanpercentile`` with linear interpolation (numpy's default), the
    usual choice in published bootstrap CIs.
    """
    samples = np.asarray(samples, dtype=float)
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return None, None
    alpha = (1.0 - confidence_level) / 2.0
    lo, hi = np.percentile(samples, [100 * alpha, 100 * (1 - alpha)])
    return float(lo), float(hi)


def bootstrap_sums(
    units: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator,
    multiplicity: np.ndarray | None = None,
    progress: bool = False,
    max_cells: int = 20_000_000,
) -> np.ndarray:
    """Column sums of ``units`` over ``n_resamples`` bootstrap resamples of its rows.

    ``units`` is (resampling units) x (features): one row per item, or per
    cluster of items, holding that unit's additive contribution to every
    statistic.  ``multiplicity[i]`` says how many identical units row ``i``
    stands for (default: identical rows are pooled here).  Drawing ``m`` units
    with replacement and tallying them is a multinomial draw over the distinct
    rows with probabilities ``multiplicity / m`` -- the same distribution as a
    resampled index matrix fed to ``bincount`` -- so all resamples cost one
    ``(B x P) @ (P x d)`` product.  Returns ``(n_resamples, d)``.
    """
    units = np.asarray(units, dtype=float)
    if multiplicity is None:
        units, multiplicity = np.unique(units, axis=0, return_counts=True)
    multiplicity = np.asarray(multiplicity, dtype=float)
    m = int(round(multiplicity.sum()))
    P, d = units.shape
    out = np.empty((n_resamples, d))
    if n_resamples == 0 or d == 0:
        return out
    p = multiplicity / multiplicity.sum()
    chunk = max(1, min(n_resamples, max_cells // max(P, 1)))
    starts = range(0, n_resamples, chunk)
    if progress and len(starts) > 1:
        from goldboard.text import progress_bar

        starts = progress_bar(starts, desc="bootstrap", unit="chunk", leave=False)
    for s in starts:
        e = min(n_resamples, s + chunk)
        out[s:e] = rng.multinomial(m, p, size=e - s).astype(float) @ units
    return out


def percentile_summary(vals: np.ndarray, low: float, high: float):
    """-> (se, ci_low, ci_high, share undefined) over axis 0 of (B,) or (B, k) values."""
    vals = np.asarray(vals, dtype=float)
    if vals.ndim == 1:
        vals = vals[:, None]
    finite = np.isfinite(vals)
    share_nan = 1.0 - finite.mean(axis=0)
    se = np.full(vals.shape[1], np.nan)
    lo = np.full(vals.shape[1], np.nan)
    hi = np.full(vals.shape[1], np.nan)
    for j in range(vals.shape[1]):
        v = vals[finite[:, j], j]
        if v.size >= 2:
            se[j] = v.std(ddof=1)
            lo[j], hi[j] = np.quantile(v, [0.025, 0.975])
    return se, np.clip(lo, low, high), np.clip(hi, low, high), share_nan
