"""How close an LLM judge is to a clinician panel, beside how close the clinicians are to each other.

Pure numpy on category codes (items x raters ints: ``0..k-1`` a category, anything else no
rating).  Nothing here reads files or knows about studies.

* :func:`balanced_f1` -- HealthBench's meta-evaluation figure for a binary criterion (Arora et
  al. 2025, "HealthBench", section 6): the mean of the F1 score of each of the two classes
  (macro F1), so that a grader that always says the majority class does not look good on an
  unbalanced field.  F1 of a class is symmetric in the two raters (swapping them swaps false
  positives and false negatives), so "A against B" equals "B against A".
* :func:`f1_rows` -- the judge's balanced F1 against each clinician, beside that clinician's
  against the other clinicians (their pairs pooled: every item the clinician shares with another
  clinician, once per other clinician).
* :func:`panel_ratio` -- the judge's agreement with the panel relative to the clinicians'
  agreement with each other: pooled pairwise agreement judge-clinician over pooled pairwise
  agreement clinician-clinician, on the items with at least two clinicians and the judge, with a
  seeded item-level percentile bootstrap 95% CI.  Above 1: the judge is as close to the panel as
  the clinicians are to each other.
"""

from __future__ import annotations

import numpy as np

#: bootstrap resamples for the ratio's interval (seeded: the same data give the same interval)
N_BOOT = 2000


def _valid(codes: np.ndarray, k: int) -> np.ndarray:
    return (codes >= 0) & (codes < k)


def balanced_f1(a: np.ndarray, b: np.ndarray, k: int = 2) -> tuple[float | None, int]:
    """``(mean F1 over the k classes, items)`` on the items both rated; ``None`` when a class is
    used by neither rater (its F1 is 0/0) or fewer than 2 items are shared.

    >>> balanced_f1(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1]))
    (0.7333333333333334, 4)
    """
    a, b = np.asarray(a), np.asarray(b)
    both = _valid(a, k) & _valid(b, k)
    x, y = a[both], b[both]
    n = int(both.sum())
    if n < 2:
        return None, n
    scores = []
    for c in range(k):
        tp = int(np.sum((x == c) & (y == c)))
        denom = int(np.sum(x == c)) + int(np.sum(y == c))
        if denom == 0:
            return None, n
        scores.append(2 * tp / denom)
    return float(np.mean(scores)), n


def f1_rows(hcodes: np.ndarray, jcodes: np.ndarray, humans: list[str], k: int = 2) -> list[dict]:
    """Per clinician: the judge's balanced F1 against them, and theirs against the other clinicians
    (pairs pooled).  ``jcodes``: one judge's column."""
    rows = []
    m = hcodes.shape[1]
    for h in range(m):
        judge_f1, judge_n = balanced_f1(jcodes, hcodes[:, h], k)
        others = [g for g in range(m) if g != h]
        mine = np.concatenate([hcodes[:, h] for _ in others]) if others else np.zeros(0, dtype=int)
        theirs = np.concatenate([hcodes[:, g] for g in others]) if others else np.zeros(0, dtype=int)
        human_f1, human_n = balanced_f1(mine, theirs, k)
        rows.append(
            {"clinician": humans[h], "judge_f1": judge_f1, "judge_items": judge_n, "clinician_f1": human_f1,
             "clinician_pairs": human_n}
        )  # fmt: skip
    return rows


def _agreement_counts(hcodes: np.ndarray, jcode: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """Per usable item: judge-clinician matches and pairs, clinician-clinician matches and pairs."""
    hv = _valid(hcodes, k)
    used = (hv.sum(axis=1) >= 2) & _valid(jcode, k)
    h, v, j = hcodes[used], hv[used], jcode[used]
    j_match = ((h == j[:, None]) & v).sum(axis=1)
    j_pairs = v.sum(axis=1)
    same = (h[:, :, None] == h[:, None, :]) & v[:, :, None] & v[:, None, :]
    upper = np.triu(np.ones((h.shape[1], h.shape[1]), dtype=bool), 1)
    p_match = (same & upper).sum(axis=(1, 2))
    p_pairs = j_pairs * (j_pairs - 1) // 2
    return j_match, j_pairs, p_match, p_pairs


def panel_ratio(hcodes: np.ndarray, jcode: np.ndarray, k: int, *, n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """The judge's pooled pairwise agreement with the clinicians over the clinicians' with each
    other, with a seeded item-level percentile bootstrap 95% CI (see the module doc).

    ``ratio`` is None when the clinicians never agree (nothing to compare with); ``low``/``high``
    are None when fewer than 95% of the resamples give a ratio."""
    j_match, j_pairs, p_match, p_pairs = _agreement_counts(np.asarray(hcodes), np.asarray(jcode), k)
    n = int(j_match.size)
    out: dict = {"n_items": n, "n_boot": n_boot, "seed": seed, "ratio": None, "low": None, "high": None}
    if n == 0 or p_pairs.sum() == 0:
        return {**out, "judge_agreement": None, "clinician_agreement": None}
    ja, ca = j_match.sum() / j_pairs.sum(), p_match.sum() / p_pairs.sum()
    out.update(judge_agreement=float(ja), clinician_agreement=float(ca))
    if ca == 0:
        return out
    out["ratio"] = float(ja / ca)
    if n < 2:
        return out
    w = np.random.default_rng(seed).multinomial(n, np.full(n, 1.0 / n), size=n_boot)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = ((w @ j_match) / (w @ j_pairs)) / ((w @ p_match) / (w @ p_pairs))
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size >= 0.95 * n_boot:
        lo, hi = np.percentile(ratios, [2.5, 97.5])
        out.update(low=float(lo), high=float(hi))
    return out
