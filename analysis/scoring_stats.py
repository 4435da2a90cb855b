"""Statistics for scoring models against gold labels: pure numpy/scipy functions.

Everything here works on integer code arrays and count arrays; nothing knows
about schemas, files or DataFrames (see :mod:`goldboard.analysis.scoring`).

The bootstrap primitive is :func:`bootstrap_cell_counts`: every statistic the
scorer bootstraps (accuracy, macro-F1, mean severity, a paired accuracy
difference) is a function of the counts of a few *cells* (confusion-matrix
cells, severity levels, the four correct/wrong combinations of two models).
So one resample is one vector of cell counts, and ``B`` resamples are a
``(B, n_cells)`` count matrix built from an index matrix with one batched
``np.bincount`` -- no Python loop over resamples.  The index matrix is drawn
in chunks so memory stays bounded (``chunk_elems`` indices at a time).

References
----------
- Efron B, Tibshirani RJ. *An Introduction to the Bootstrap*. Chapman & Hall, 1993
  (percentile interval, ch. 13).
- Wilson EB. Probable inference, the law of succession, and statistical
  inference. *JASA* 1927;22:209-212.  Newcombe RG. Two-sided confidence
  intervals for the single proportion: comparison of seven methods.
  *Stat Med* 1998;17:857-872 (worked examples used in the tests).
- McNemar Q. Note on the sampling error of the difference between correlated
  proportions or percentages. *Psychometrika* 1947;12:153-157.  Edwards AL.
  Note on the "correction for continuity" in testing the significance of the
  difference between correlated proportions. *Psychometrika* 1948;13:185-187.
  Fagerland MW, Lydersen S, Laake P. The McNemar test for binary matched-pairs
  data: mid-p and asymptotic are better than exact conditional. *BMC Med Res
  Methodol* 2013;13:91.  Agresti A. *Categorical Data Analysis*, 3rd ed., 2013,
  sec. 11.1.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable

import numpy as np
from scipy import stats as _st

from goldboard.analysis.estimate import EstimateCI
from goldboard.analysis.resampling import bootstrap_cell_counts, percentile_interval

#: exact binomial McNemar below this many discordant pairs, asymptotic at or above
MCNEMAR_EXACT_BELOW = 25


# --------------------------------------------------------------------------- bootstrap


# --------------------------------------------------------------------------- proportions


def wilson_interval(k: int, n: int, confidence_level: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval for ``k`` successes in ``n`` trials (no continuity correction),
    computed by scipy (``binomtest(k, n).proportion_ci(method="wilson")``).

    Newcombe (1998) Table II, method 3:

    >>> [round(x, 4) for x in wilson_interval(81, 263)]
    [0.2553, 0.3662]
    >>> [round(x, 4) for x in wilson_interval(0, 20)]
    [0.0, 0.1611]

    Returns ``(None, None)`` when ``n == 0``.
    """
    if n <= 0:
        return None, None
    ci = _st.binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence_level, method="wilson")
    # exact endpoints at the boundaries (avoid -1e-17 from rounding)
    return (0.0 if k == 0 else max(0.0, float(ci.low))), (1.0 if k == n else min(1.0, float(ci.high)))


def proportion(k: int, n: int, confidence_level: float = 0.95) -> dict:
    """A proportion ``k/n`` with its Wilson interval, as a result dict."""
    lo, hi = wilson_interval(int(k), int(n), confidence_level)
    est = EstimateCI((k / n) if n else None, lo, hi, method="wilson")
    return {**est.score_dict(), "count": int(k), "n": int(n)}


# --------------------------------------------------------------------------- classification


def confusion_from_codes(true: np.ndarray, pred: np.ndarray, k: int, no_answer: bool = True) -> np.ndarray:
    """``(k, k+1)`` (or ``(k, k)``) confusion counts; prediction code ``k`` = no answer."""
    cols = k + 1 if no_answer else k
    cells = np.asarray(true, dtype=np.int64) * cols + np.asarray(pred, dtype=np.int64)
    return np.bincount(cells, minlength=k * cols).reshape(k, cols)


def per_label_prf(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-label precision, recall and F1 of a confusion matrix (NaN when undefined).

    Works on a single ``(k, c)`` matrix or a stack ``(B, k, c)`` of resampled
    matrices (the extra column, if any, is "no answer").  F1 is computed as
    ``2 tp / (2 tp + fp + fn)``, which equals the harmonic mean of precision and
    recall and is defined whenever the label occurs in truth or prediction.
    """
    m = np.asarray(matrix, dtype=float)
    sq = m[..., :k, :k]
    tp = np.diagonal(sq, axis1=-2, axis2=-1)
    pred = sq.sum(axis=-2)
    true = m[..., :k, :].sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(pred > 0, tp / pred, np.nan)
        recall = np.where(true > 0, tp / true, np.nan)
        denom = pred + true  # = 2tp + fp + fn
        f1 = np.where(denom > 0, 2 * tp / denom, np.nan)
    return precision, recall, f1


def accuracy_from_confusion(matrix: np.ndarray, k: int) -> np.ndarray | float:
    """Share of units on the diagonal (works on ``(k, c)`` or ``(B, k, c)``)."""
    m = np.asarray(matrix, dtype=float)
    tp = np.diagonal(m[..., :k, :k], axis1=-2, axis2=-1).sum(axis=-1)
    n = m.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(n > 0, tp / n, np.nan)


def macro_f1_from_confusion(matrix: np.ndarray, k: int, label_mask: np.ndarray | None = None) -> np.ndarray | float:
    """Unweighted mean of per-label F1 over ``label_mask`` (default: labels that occur
    in truth or prediction, sklearn's default label set).

    For a stack of resamples, pass the mask of the full sample so every resample
    averages the same labels; a label absent from one resample (F1 undefined) is
    skipped in that resample's mean.
    """
    _, _, f1 = per_label_prf(matrix, k)
    if label_mask is None:
        m = np.asarray(matrix)
        present = (m[..., :k, :k].sum(axis=-2) + m[..., :k, :].sum(axis=-1)) > 0
        label_mask = present if present.ndim == 1 else present.any(axis=0)
    f1 = np.where(np.asarray(label_mask, dtype=bool), f1, np.nan)
    with warnings.catch_warnings():  # all-NaN rows (no label defined) give NaN quietly
        warnings.simplefilter("ignore", category=RuntimeWarning)
        return np.nanmean(f1, axis=-1)


def bootstrap_confusions(
    true: np.ndarray, pred: np.ndarray, k: int, n_resamples: int, rng: np.random.Generator, no_answer: bool = True
) -> np.ndarray:
    """``(B, k, c)`` confusion matrices of ``B`` item resamples (vectorised)."""
    cols = k + 1 if no_answer else k
    cells = np.asarray(true, dtype=np.int64) * cols + np.asarray(pred, dtype=np.int64)
    counts = bootstrap_cell_counts(cells, k * cols, n_resamples, rng)
    return counts.reshape(n_resamples, k, cols)


def bootstrap_label_metrics(
    true: np.ndarray,
    pred: np.ndarray,
    k: int,
    n_resamples: int,
    seed: int | np.random.Generator | None,
    confidence_level: float = 0.95,
    no_answer: bool = True,
) -> dict:
    """Accuracy and macro-F1 with percentile bootstrap intervals (resampling items).

    Returns ``{"accuracy": (est, lo, hi), "macro_f1": (est, lo, hi)}``.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    cm = confusion_from_codes(true, pred, k, no_answer)
    mask = (cm[:, :k].sum(axis=0) + cm.sum(axis=1)) > 0
    acc = float(accuracy_from_confusion(cm, k))
    mf1 = float(macro_f1_from_confusion(cm, k, mask))
    if n_resamples <= 0 or len(true) == 0:
        return {"accuracy": (acc, None, None), "macro_f1": (mf1, None, None)}
    boots = bootstrap_confusions(true, pred, k, n_resamples, rng, no_answer)
    acc_lo, acc_hi = percentile_interval(accuracy_from_confusion(boots, k), confidence_level)
    f1_lo, f1_hi = percentile_interval(macro_f1_from_confusion(boots, k, mask), confidence_level)
    return {"accuracy": (acc, acc_lo, acc_hi), "macro_f1": (mf1, f1_lo, f1_hi)}


def bootstrap_mean_of_levels(
    codes: np.ndarray,
    scores: Iterable[float],
    n_resamples: int,
    seed: int | np.random.Generator | None,
    confidence_level: float = 0.95,
) -> tuple:
    """Mean of an ordinal score (e.g. severity 1-5) with a percentile bootstrap interval.

    ``codes`` index into ``scores``; returns ``(mean, lo, hi)``.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    scores = np.asarray(list(scores), dtype=float)
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size == 0:
        return None, None, None
    est = float(scores[codes].mean())
    if n_resamples <= 0:
        return est, None, None
    counts = bootstrap_cell_counts(codes, len(scores), n_resamples, rng)
    means = counts @ scores / codes.size
    lo, hi = percentile_interval(means, confidence_level)
    return est, lo, hi


# --------------------------------------------------------------------------- paired comparison


def mcnemar_test(b: int, c: int, exact_below: int = MCNEMAR_EXACT_BELOW) -> dict:
    """McNemar's test for paired binary outcomes.

    ``b`` = pairs where only the first model is correct, ``c`` = only the second.
    Returns every common variant and the one used as ``p_value``: the exact
    conditional binomial test when ``b + c < exact_below`` (default 25), else the
    asymptotic chi-square with Edwards' continuity correction.

    - ``chi2``     = (b - c)^2 / (b + c)             (McNemar 1947)
    - ``chi2_cc``  = (max(|b - c| - 1, 0))^2 / (b + c)  (Edwards 1948; the correction is
      capped so that b == c gives 0, where statsmodels gives 1 / (b + c))
    - ``p_exact``  = two-sided binomial, 2 * P(X <= min(b, c)), X ~ Bin(b + c, 1/2), capped at 1
    - ``p_midp``   = 2 * P(X <= min(b, c)) - P(X = min(b, c)), capped at 1  (Fagerland et al. 2013)

    Agresti (2013) presidential approval, b=150, c=86: chi2 = 17.36.
    Fagerland et al. (2013) AHR example, b=1, c=7: p_exact 0.070, p_midp 0.039, p(chi2) 0.034.
    """
    b, c = int(b), int(c)
    nd = b + c
    if nd == 0:
        return {
            "b": b,
            "c": c,
            "discordant": 0,
            "method": "none",
            "statistic": None,
            "p_value": 1.0,
            "p_exact": 1.0,
            "p_midp": 1.0,
            "chi2": None,
            "p_chi2": None,
            "chi2_cc": None,
            "p_chi2_cc": None,
        }
    m = min(b, c)
    p_exact = float(min(1.0, 2.0 * _st.binom.cdf(m, nd, 0.5)))
    p_midp = float(min(1.0, 2.0 * _st.binom.cdf(m, nd, 0.5) - _st.binom.pmf(m, nd, 0.5)))
    chi2 = (b - c) ** 2 / nd
    chi2_cc = (max(abs(b - c) - 1, 0)) ** 2 / nd
    p_chi2 = float(_st.chi2.sf(chi2, 1))
    p_chi2_cc = float(_st.chi2.sf(chi2_cc, 1))
    if nd < exact_below:
        method, stat, p = "exact-binomial", float(m), p_exact
    else:
        method, stat, p = "chi2-continuity-corrected", float(chi2_cc), p_chi2_cc
    return {
        "b": b,
        "c": c,
        "discordant": nd,
        "method": method,
        "statistic": stat,
        "p_value": p,
        "p_exact": p_exact,
        "p_midp": p_midp,
        "chi2": float(chi2),
        "p_chi2": p_chi2,
        "chi2_cc": float(chi2_cc),
        "p_chi2_cc": p_chi2_cc,
    }


def paired_difference(
    correct_a: np.ndarray,
    correct_b: np.ndarray,
    n_resamples: int,
    seed: int | np.random.Generator | None,
    confidence_level: float = 0.95,
) -> dict:
    """Paired comparison of two models' correctness on the same items.

    Returns the 2x2 counts, both accuracies, the accuracy difference A - B with
    a paired percentile bootstrap interval (the same resampled items for both
    models: cells ``2*a + b`` counted per resample) and :func:`mcnemar_test`.
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError("paired outcomes must have the same length")
    n = a.size
    cells = 2 * a.astype(np.int64) + b.astype(np.int64)  # 0 both wrong, 1 b only, 2 a only, 3 both
    cnt = np.bincount(cells, minlength=4)
    both_wrong, b_only, a_only, both = (int(x) for x in cnt)
    diff = (a_only - b_only) / n if n else None
    lo = hi = None
    if n and n_resamples > 0:
        boots = bootstrap_cell_counts(cells, 4, n_resamples, rng)
        lo, hi = percentile_interval((boots[:, 2] - boots[:, 1]) / n, confidence_level)
    return {
        "n": int(n),
        "both_correct": both,
        "a_only_correct": a_only,
        "b_only_correct": b_only,
        "both_wrong": both_wrong,
        "accuracy_a": (both + a_only) / n if n else None,
        "accuracy_b": (both + b_only) / n if n else None,
        "difference": EstimateCI(diff, lo, hi, method="paired-bootstrap-percentile").score_dict(),
        "mcnemar": mcnemar_test(a_only, b_only),
    }


# --------------------------------------------------------------------------- naive reference


def naive_bootstrap_loop(
    true: np.ndarray,
    pred: np.ndarray,
    labels: list,
    n_resamples: int,
    seed: int | None,
    confidence_level: float = 0.95,
    progress: Callable | None = None,
) -> dict:
    """The naive way (a Python loop over resamples calling sklearn); for benchmarks and
    cross-checks only.  Same estimand as :func:`bootstrap_label_metrics` without the
    no-answer column."""
    from sklearn.metrics import accuracy_score, f1_score

    rng = np.random.default_rng(seed)
    n = len(true)
    accs, f1s = [], []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, size=n)
        t, p = true[idx], pred[idx]
        accs.append(accuracy_score(t, p))
        f1s.append(f1_score(t, p, labels=labels, average="macro", zero_division=0))
        if progress:
            progress()
    return {
        "accuracy": percentile_interval(np.array(accs), confidence_level),
        "macro_f1": percentile_interval(np.array(f1s), confidence_level),
    }
