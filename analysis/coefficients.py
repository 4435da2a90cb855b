"""Chance-corrected agreement coefficients: pure, vectorised numpy functions.

Every function here takes arrays and returns arrays; nothing reads files or
knows about schemas.  :mod:`goldboard.analysis.agreement` builds the study-level
report on top of these.

Two input shapes are used:

*contingency table* ``table``
    ``(..., k, k)`` counts, rows = rater A, columns = rater B (two raters).  Any
    leading dimensions are a batch (bootstrap resamples, one-vs-rest tables),
    so ``cohen_kappa(tables)`` with ``tables.shape == (2000, 5, 5)`` returns 2000
    values in one call.

*rating counts* ``counts``
    ``(n_items, k)``: how many raters put item *i* in category *c* (Fleiss 1971's
    layout).  Rows may have different totals -- that is how missing ratings are
    represented -- and rows with a single rating are allowed (Gwet 2014, ch. 5).

Weights are *agreement* weights ``w[c, d]`` in [0, 1] with ones on the
diagonal (Cohen 1968).  statsmodels' ``cohens_kappa`` instead takes
*disagreement* weights; do not mix the two.  Weights are always built over the
full category scale, also for levels nobody used.

Standard errors
    * Cohen's kappa (unweighted and weighted): the large-sample *non-null*
      variance of Fleiss, Cohen & Everitt (1969), the one SAS PROC FREQ prints
      as ``ASE`` and uses for its confidence limits.
    * Scott's pi, Gwet's AC1/AC2, Brennan--Prediger, percent agreement (two
      raters): Gwet (2008; 2014, ch. 5) linearisation for contingency tables.
    * Multi-rater coefficients (Fleiss' kappa, AC1/AC2, Brennan--Prediger,
      percent agreement, Krippendorff's alpha) with missing ratings: Gwet's
      (2014) design-based variance, as implemented in his ``irrCAC`` R package,
      without finite-population correction.
    * Specific positive/negative agreement: delta method of Graham & Bull (1998).

References
----------
Brennan, R. L., & Prediger, D. J. (1981). Coefficient kappa: some uses, misuses,
    and alternatives. *Educational and Psychological Measurement*, 41, 687-699.
Byrt, T., Bishop, J., & Carlin, J. B. (1993). Bias, prevalence and kappa.
    *Journal of Clinical Epidemiology*, 46, 423-429.
Cicchetti, D. V., & Allison, T. (1971). A new procedure for assessing
    reliability of scoring EEG sleep recordings. *Am J EEG Technol*, 11, 101-110.
Cicchetti, D. V., & Feinstein, A. R. (1990). High agreement but low kappa: II.
    Resolving the paradoxes. *Journal of Clinical Epidemiology*, 43, 551-558.
Cohen, J. (1960). A coefficient of agreement for nominal scales. *Educational
    and Psychological Measurement*, 20, 37-46.
Cohen, J. (1968). Weighted kappa. *Psychological Bulletin*, 70, 213-220.
Feinstein, A. R., & Cicchetti, D. V. (1990). High agreement but low kappa: I.
    The problems of two paradoxes. *Journal of Clinical Epidemiology*, 43, 543-549.
Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
    *Psychological Bulletin*, 76, 378-382.
Fleiss, J. L., & Cohen, J. (1973). The equivalence of weighted kappa and the
    intraclass correlation coefficient. *Educ Psychol Meas*, 33, 613-619.
Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard errors
    of kappa and weighted kappa. *Psychological Bulletin*, 72, 323-327.
Graham, P., & Bull, B. (1998). Approximate standard errors and confidence
    intervals for indices of positive and negative agreement. *Journal of
    Clinical Epidemiology*, 51, 763-771.
Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the
    presence of high agreement. *Br J Math Stat Psychol*, 61, 29-48.
Gwet, K. L. (2014). *Handbook of Inter-Rater Reliability* (4th ed.). Advanced
    Analytics.
Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
    Annenberg School for Communication, University of Pennsylvania.
Scott, W. A. (1955). Reliability of content analysis: the case of nominal scale
    coding. *Public Opinion Quarterly*, 19, 321-325.
Uebersax, J. S. (1982). A design-independent method for measuring the
    reliability of psychiatric diagnosis. *J Psychiatr Res*, 17, 335-342.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = [
    "Estimate",
    "Z95",
    "agreement_weights",
    "wald_ci",
    "percent_agreement",
    "cohen_kappa",
    "scott_pi",
    "gwet_ac",
    "brennan_prediger",
    "pabak",
    "prevalence_index",
    "bias_index",
    "specific_agreement",
    "one_vs_rest_tables",
    "rating_counts",
    "percent_agreement_multi",
    "fleiss_kappa",
    "gwet_ac_multi",
    "brennan_prediger_multi",
    "fleiss_category_kappa",
    "specific_agreement_multi",
    "coincidence_matrix",
    "krippendorff_delta2",
    "krippendorff_alpha",
    "krippendorff_alpha_from_coincidence",
]

#: two-sided 95% standard-normal quantile
Z95 = 1.959963984540054


class Estimate(NamedTuple):
    """A coefficient with its standard error (arrays for batched input)."""

    value: np.ndarray | float
    se: np.ndarray | float


# --------------------------------------------------------------------------- helpers


def agreement_weights(n_categories: int, kind: str = "none") -> np.ndarray:
    """Agreement weights over a full ordered scale of ``n_categories`` levels.

    ``"none"`` is the identity (unweighted); ``"linear"`` is
    ``1 - |i - j| / (k - 1)`` (Cicchetti & Allison 1971, SAS's default for
    weighted kappa); ``"quadratic"`` is ``1 - (i - j)^2 / (k - 1)^2`` (Fleiss &
    Cohen 1973).  Positions ``i, j`` are the ranks on the scale, so a level no
    rater used still spaces the others -- the MedFailBench pitfall of building
    weights from the observed levels only cannot happen.
    """
    k = int(n_categories)
    if kind in ("none", None):
        return np.eye(k)
    if k < 2:
        return np.ones((k, k))
    pos = np.arange(k, dtype=float)
    dist = np.abs(pos[:, None] - pos[None, :]) / (k - 1)
    if kind == "linear":
        return 1.0 - dist
    if kind == "quadratic":
        return 1.0 - dist**2
    raise ValueError(f"unknown weights {kind!r} (none, linear, quadratic)")


def _weights(w, k: int) -> np.ndarray:
    if w is None or isinstance(w, str):
        return agreement_weights(k, w or "none")
    w = np.asarray(w, dtype=float)
    if w.shape != (k, k):
        raise ValueError(f"weights must be {k}x{k}, got {w.shape}")
    return w


def _div(a, b):
    """a / b with NaN where b == 0 (no warnings)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(b != 0, a / np.where(b != 0, b, 1.0), np.nan)
    return out


def _sqrt(v):
    v = np.asarray(v, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.sqrt(np.where(v < 0, np.where(v > -1e-12, 0.0, np.nan), v))


def _scalar(x):
    x = np.asarray(x)
    return float(x) if x.ndim == 0 else x


def wald_ci(value, se, low: float = -1.0, high: float = 1.0, z: float = Z95):
    """``value -/+ z * se`` truncated to the coefficient's range ``[low, high]``."""
    value = np.asarray(value, dtype=float)
    se = np.asarray(se, dtype=float)
    lo = np.clip(value - z * se, low, high)
    hi = np.clip(value + z * se, low, high)
    return _scalar(lo), _scalar(hi)


def _table_parts(table, weights):
    t = np.asarray(table, dtype=float)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("a contingency table must be square (..., k, k)")
    k = t.shape[-1]
    w = _weights(weights, k)
    n = t.sum(axis=(-1, -2))
    p = t / np.where(n == 0, 1.0, n)[..., None, None]
    row = p.sum(axis=-1)  # rater A marginals p_i.
    col = p.sum(axis=-2)  # rater B marginals p_.j
    po = np.einsum("...ij,ij->...", p, w)
    return t, w, n, p, row, col, po


# --------------------------------------------------------------------------- two raters (contingency table)


def percent_agreement(table, weights=None) -> Estimate:
    """Observed (weighted) proportion of agreement ``p_o = sum w_ij p_ij``.

    SE: ``sqrt((sum p_ij w_ij^2 - p_o^2) / n)`` (Gwet 2014, eq. 5.x; for
    unweighted tables this is the binomial ``sqrt(p_o (1 - p_o) / n)``).
    """
    t, w, n, p, row, col, po = _table_parts(table, weights)
    var = _div(np.einsum("...ij,ij->...", p, w**2) - po**2, n)
    return Estimate(_scalar(po), _scalar(_sqrt(var)))


def cohen_kappa(table, weights=None) -> Estimate:
    """Cohen's kappa (1960) or weighted kappa (1968) with the Fleiss--Cohen--Everitt SE.

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o = sum w_ij p_ij`` and
    ``p_e = sum w_ij p_i. p_.j``.  The variance is the large-sample non-null
    variance of Fleiss, Cohen & Everitt (1969, eq. 13)::

        var = [sum_ij p_ij (w_ij - (wbar_i. + wbar_.j)(1 - kappa))^2
               - (p_o - 2 (1 - kappa) p_e)^2] / (n (1 - p_e)^2)

    with ``wbar_i. = sum_j w_ij p_.j`` and ``wbar_.j = sum_i w_ij p_i.``.  This
    is the ``ASE`` of SAS PROC FREQ and the SE it builds its 95% limits from.
    Undefined (NaN) when ``p_e == 1`` (both raters used one and the same category).
    """
    t, w, n, p, row, col, po = _table_parts(table, weights)
    pe = np.einsum("...i,...j,ij->...", row, col, w)
    kappa = _div(po - pe, 1.0 - pe)
    wi = np.einsum("ij,...j->...i", w, col)  # wbar_i.
    wj = np.einsum("ij,...i->...j", w, row)  # wbar_.j
    one_k = (1.0 - kappa)[..., None, None]
    term = w - (wi[..., :, None] + wj[..., None, :]) * one_k
    s1 = np.einsum("...ij,...ij->...", p, term**2)
    var = _div(s1 - (po - 2.0 * (1.0 - kappa) * pe) ** 2, n * (1.0 - pe) ** 2)
    return Estimate(_scalar(kappa), _scalar(_sqrt(var)))


def scott_pi(table, weights=None) -> Estimate:
    """Scott's (1955) pi: chance agreement from the pooled marginals ``pi_k = (p_k. + p_.k) / 2``.

    SE: Gwet (2014) linearisation (``scott2.table`` in irrCAC).
    """
    t, w, n, p, row, col, po = _table_parts(table, weights)
    pik = (row + col) / 2.0
    pe = np.einsum("...i,...j,ij->...", pik, pik, w)
    pi = _div(po - pe, 1.0 - pe)
    wbk = (np.einsum("ij,...j->...i", w, col) + np.einsum("ij,...i->...j", w, row)) / 2.0
    one_k = (1.0 - pi)[..., None, None]
    term = w - (wbk[..., :, None] + wbk[..., None, :]) * one_k
    s1 = np.einsum("...ij,...ij->...", p, term**2)
    var = _div(s1 - (po - 2.0 * (1.0 - pi) * pe) ** 2, n * (1.0 - pe) ** 2)
    return Estimate(_scalar(pi), _scalar(_sqrt(var)))


def gwet_ac(table, weights=None) -> Estimate:
    """Gwet's AC1 (unweighted) / AC2 (weighted) for two raters (Gwet 2008; 2014).

    ``p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k)`` with ``T_w`` the sum of
    the weights and ``pi_k`` the pooled marginals.  SE: Gwet (2008) / irrCAC
    ``gwet.ac1.table``.
    """
    t, w, n, p, row, col, po = _table_parts(table, weights)
    q = w.shape[0]
    tw = w.sum()
    pik = (row + col) / 2.0
    c = tw / (q * (q - 1)) if q > 1 else np.nan
    pe = c * np.sum(pik * (1.0 - pik), axis=-1)
    ac = _div(po - pe, 1.0 - pe)
    one_k = (1.0 - ac)[..., None, None]
    term = w - 2.0 * one_k * c * (1.0 - (pik[..., :, None] + pik[..., None, :]) / 2.0)
    s1 = np.einsum("...ij,...ij->...", p, term**2)
    var = _div(s1 - (po - 2.0 * (1.0 - ac) * pe) ** 2, n * (1.0 - pe) ** 2)
    return Estimate(_scalar(ac), _scalar(_sqrt(var)))


def brennan_prediger(table, weights=None) -> Estimate:
    """Brennan & Prediger (1981) coefficient: chance agreement ``T_w / q^2`` (uniform).

    SE: ``sqrt((sum p_ij w_ij^2 - p_o^2) / n) / (1 - p_e)`` (Gwet 2014, ``bp2.table``).
    """
    t, w, n, p, row, col, po = _table_parts(table, weights)
    q = w.shape[0]
    pe = w.sum() / q**2
    bp = (po - pe) / (1.0 - pe)
    var = _div(np.einsum("...ij,ij->...", p, w**2) - po**2, n * (1.0 - pe) ** 2)
    return Estimate(_scalar(bp), _scalar(_sqrt(var)))


def pabak(table) -> Estimate:
    """Prevalence- and bias-adjusted kappa, ``2 p_o - 1`` for a 2x2 table (Byrt et al. 1993).

    For ``k`` categories this generalises to ``(k p_o - 1) / (k - 1)``, which is
    Brennan--Prediger's coefficient.  SE: ``k / (k - 1) * sqrt(p_o (1 - p_o) / n)``.
    """
    t = np.asarray(table, dtype=float)
    k = t.shape[-1]
    est = percent_agreement(t)
    po = np.asarray(est.value)
    return Estimate(_scalar((k * po - 1.0) / (k - 1)), _scalar(np.asarray(est.se) * k / (k - 1)))


def prevalence_index(table) -> np.ndarray | float:
    """Byrt, Bishop & Carlin (1993) prevalence index ``|a - d| / n`` of a 2x2 table.

    ``a`` = both raters positive (second category), ``d`` = both negative.  The
    sign is kept (``(a - d) / n``) so a report can say which class dominates.
    """
    t = np.asarray(table, dtype=float)
    n = t.sum(axis=(-1, -2))
    return _scalar(_div(t[..., 1, 1] - t[..., 0, 0], n))


def bias_index(table) -> np.ndarray | float:
    """Byrt, Bishop & Carlin (1993) bias index ``(b - c) / n`` of a 2x2 table.

    ``b`` = rater A positive / rater B negative, ``c`` the reverse: how much the
    two raters' rates of calling the label differ.
    """
    t = np.asarray(table, dtype=float)
    n = t.sum(axis=(-1, -2))
    return _scalar(_div(t[..., 1, 0] - t[..., 0, 1], n))


def specific_agreement(table) -> tuple[Estimate, Estimate]:
    """Specific positive and negative agreement of a 2x2 table.

    ``p_pos = 2a / (2a + b + c)`` and ``p_neg = 2d / (2d + b + c)`` (Cicchetti &
    Feinstein 1990), where index 1 is the positive class.  SEs by the delta
    method of Graham & Bull (1998)::

        var(p_pos) = 4 a (b + c) (a + b + c) / (2a + b + c)^4

    and symmetrically for ``p_neg``.
    """
    t = np.asarray(table, dtype=float)
    a = t[..., 1, 1]
    d = t[..., 0, 0]
    bc = t[..., 0, 1] + t[..., 1, 0]
    ppos = _div(2 * a, 2 * a + bc)
    pneg = _div(2 * d, 2 * d + bc)
    vpos = _div(4 * a * bc * (a + bc), (2 * a + bc) ** 4)
    vneg = _div(4 * d * bc * (d + bc), (2 * d + bc) ** 4)
    return (Estimate(_scalar(ppos), _scalar(_sqrt(vpos))), Estimate(_scalar(pneg), _scalar(_sqrt(vneg))))


def one_vs_rest_tables(table) -> np.ndarray:
    """Collapse a ``(..., k, k)`` table into ``(..., k, 2, 2)`` tables, label ``c`` vs the rest.

    In each 2x2 table index 1 is "label c" and index 0 is "any other label".
    """
    t = np.asarray(table, dtype=float)
    n = t.sum(axis=(-1, -2))[..., None]
    diag = np.diagonal(t, axis1=-2, axis2=-1)
    row = t.sum(axis=-1)
    col = t.sum(axis=-2)
    a = diag  # both c
    b = row - diag  # A says c, B does not
    c = col - diag  # B says c, A does not
    d = n - a - b - c
    out = np.empty(t.shape[:-2] + (t.shape[-1], 2, 2))
    out[..., 1, 1] = a
    out[..., 1, 0] = b
    out[..., 0, 1] = c
    out[..., 0, 0] = d
    return out


# --------------------------------------------------------------------------- many raters (rating counts)


def rating_counts(codes, n_categories: int) -> np.ndarray:
    """Items x raters integer codes (``-1`` = missing) -> items x categories counts."""
    codes = np.asarray(codes)
    n, r = codes.shape
    k = int(n_categories)
    ok = codes >= 0
    rows = np.repeat(np.arange(n), r)[ok.ravel()]
    flat = rows * k + codes.ravel()[ok.ravel()]
    return np.bincount(flat, minlength=n * k).reshape(n, k).astype(float)


def _multi_parts(counts, weights):
    R = np.asarray(counts, dtype=float)
    if R.ndim != 2:
        raise ValueError("counts must be items x categories")
    R = R[R.sum(axis=1) > 0]
    q = R.shape[1]
    w = _weights(weights, q)
    ri = R.sum(axis=1)
    n = R.shape[0]
    rstar = R @ w.T  # r*_ik = sum_l w_kl r_il
    sum_q = np.sum(R * (rstar - 1.0), axis=1)
    two = ri >= 2
    n2 = int(two.sum())
    den = np.where(two, ri * (ri - 1.0), 1.0)
    pa_i = np.where(two, sum_q / den, 0.0)
    pa = pa_i[two].sum() / n2 if n2 else np.nan
    pi = (R / ri[:, None]).mean(axis=0) if n else np.full(q, np.nan)
    return R, w, q, ri, n, n2, two, pa_i, pa, pi


def _linearised_se(n, n2, two, pa_i, pa_or_pe, pe, coef, pe_i=None):
    """Gwet (2014) design-based SE from per-item linearised terms (irrCAC, N = inf)."""
    if n < 2 or n2 == 0 or not np.isfinite(coef):
        return np.nan
    c_i = (n / n2) * (pa_i - pe * two) / (1.0 - pe)
    if pe_i is not None:
        c_i = c_i - 2.0 * (1.0 - coef) * (pe_i - pe) / (1.0 - pe)
    var = np.sum((c_i - coef) ** 2) / (n * (n - 1.0))
    return float(np.sqrt(var))


def percent_agreement_multi(counts, weights=None) -> Estimate:
    """Proportion of agreeing rater pairs, averaged over items with >= 2 ratings.

    ``p_a = mean_i sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1))`` (Fleiss 1971;
    Gwet 2014 for weights and missing ratings); SE from irrCAC ``pa.coeff.raw``.
    """
    R, w, q, ri, n, n2, two, pa_i, pa, pi = _multi_parts(counts, weights)
    se = _linearised_se(n, n2, two, pa_i, pa, 0.0, pa)
    return Estimate(float(pa), se)


def fleiss_kappa(counts, weights=None) -> Estimate:
    """Fleiss' (1971) kappa for many raters; missing ratings and weights as in Gwet (2014).

    ``p_e = sum_kl w_kl pi_k pi_l`` with ``pi_k = mean_i r_ik / r_i`` over every
    rated item.  With complete data and no weights this is exactly Fleiss (1971).
    SE: Gwet's design-based (non-null) variance (irrCAC ``fleiss.kappa.raw``).
    """
    R, w, q, ri, n, n2, two, pa_i, pa, pi = _multi_parts(counts, weights)
    pe = float(pi @ w @ pi)
    kappa = float(_div(pa - pe, 1.0 - pe))
    piw = (w @ pi + w.T @ pi) / 2.0
    pe_i = (R @ piw) / ri
    se = _linearised_se(n, n2, two, pa_i, pa, pe, kappa, pe_i)
    return Estimate(kappa, se)


def gwet_ac_multi(counts, weights=None) -> Estimate:
    """Gwet's AC1/AC2 for many raters with missing ratings (Gwet 2008; 2014)."""
    R, w, q, ri, n, n2, two, pa_i, pa, pi = _multi_parts(counts, weights)
    c = w.sum() / (q * (q - 1)) if q > 1 else np.nan
    pe = float(c * np.sum(pi * (1.0 - pi)))
    ac = float(_div(pa - pe, 1.0 - pe))
    pe_i = c * (R @ (1.0 - pi)) / ri
    se = _linearised_se(n, n2, two, pa_i, pa, pe, ac, pe_i)
    return Estimate(ac, se)


def brennan_prediger_multi(counts, weights=None) -> Estimate:
    """Brennan--Prediger coefficient for many raters (chance agreement ``T_w / q^2``)."""
    R, w, q, ri, n, n2, two, pa_i, pa, pi = _multi_parts(counts, weights)
    pe = float(w.sum() / q**2)
    bp = float((pa - pe) / (1.0 - pe))
    se = _linearised_se(n, n2, two, pa_i, pa, pe, bp)
    return Estimate(bp, se)


def fleiss_category_kappa(counts) -> Estimate:
    """Fleiss' (1971) category-specific kappas: kappa of "label c vs the rest".

    ``kappa_c = 1 - sum_i r_ic (r_i - r_ic) / (sum_i r_i (r_i - 1) ... )``; with
    complete data this is Fleiss (1971, eq. 13).  Computed as Fleiss' kappa of
    the dichotomised counts, which also handles missing ratings; SEs as in
    :func:`fleiss_kappa`.  Returns arrays over categories.
    """
    R = np.asarray(counts, dtype=float)
    vals, ses = [], []
    for c in range(R.shape[1]):
        binary = np.column_stack([R.sum(axis=1) - R[:, c], R[:, c]])
        est = fleiss_kappa(binary)
        vals.append(est.value)
        ses.append(est.se)
    return Estimate(np.array(vals), np.array(ses))


def specific_agreement_multi(counts) -> tuple[Estimate, Estimate]:
    """Specific positive/negative agreement for many raters (Uebersax 1982).

    ``p_s(c) = sum_i r_ic (r_ic - 1) / sum_i r_ic (r_i - 1)`` over items with two
    or more ratings: of all rater pairs in which one rater said *c*, the share in
    which the other did too.  Negative agreement applies the same to "not c".
    With two raters these are ``2a / (2a + b + c)`` and ``2d / (2d + b + c)``.
    SEs: ratio-estimator linearisation over items.  Returns arrays over categories.
    """
    R = np.asarray(counts, dtype=float)
    ri = R.sum(axis=1)
    R = R[ri >= 2]
    ri = ri[ri >= 2]
    out = []
    for X in (R, ri[:, None] - R):
        num = X * (X - 1.0)
        den = X * (ri[:, None] - 1.0)
        value = _div(num.sum(axis=0), den.sum(axis=0))
        n = R.shape[0]
        if n >= 2:
            z = (num - value * den) / np.where(den.sum(axis=0) == 0, 1.0, den.sum(axis=0) / n)
            se = np.sqrt(np.sum((z - z.mean(axis=0)) ** 2, axis=0) / (n * (n - 1.0)))
            se = np.where(np.isfinite(value), se, np.nan)
        else:
            se = np.full(R.shape[1], np.nan)
        out.append(Estimate(value, se))
    return out[0], out[1]


# --------------------------------------------------------------------------- Krippendorff's alpha


def coincidence_matrix(counts) -> np.ndarray:
    """Krippendorff's coincidence matrix ``o_ck = sum_u n_uc (n_uk - [c == k]) / (m_u - 1)``.

    Only pairable units (two or more values) contribute (Krippendorff 2011, sec. C).
    """
    R = np.asarray(counts, dtype=float)
    m = R.sum(axis=1)
    R = R[m >= 2]
    m = m[m >= 2]
    k = R.shape[1]
    o = np.einsum("uc,uk->ck", R / (m - 1.0)[:, None], R) - np.diag((R / (m - 1.0)[:, None]).sum(axis=0))
    return o.reshape(k, k)


def krippendorff_delta2(level: str, n_c, scores=None) -> np.ndarray:
    """Squared difference function ``delta^2_ck`` for a measurement level (Krippendorff 2011).

    ``n_c`` are the coincidence marginals, shape ``(..., k)`` (batched); ``scores``
    are the numeric values of the categories (interval, ratio).

    * nominal: ``0`` if ``c == k`` else ``1``
    * ordinal: ``(sum_{g=c}^{k} n_g - (n_c + n_k) / 2)^2`` -- the interval metric
      on mid-ranks ``cumsum(n) - n / 2``, so an unused level adds no distance
    * interval: ``(v_c - v_k)^2``
    * ratio: ``((v_c - v_k) / (v_c + v_k))^2``
    """
    n_c = np.asarray(n_c, dtype=float)
    k = n_c.shape[-1]
    if level == "nominal":
        return np.broadcast_to(1.0 - np.eye(k), n_c.shape[:-1] + (k, k)).copy()
    if level == "ordinal":
        mid = np.cumsum(n_c, axis=-1) - n_c / 2.0
        return (mid[..., :, None] - mid[..., None, :]) ** 2
    v = np.arange(1.0, k + 1.0) if scores is None else np.asarray(scores, dtype=float)
    if level == "interval":
        d = (v[:, None] - v[None, :]) ** 2
    elif level == "ratio":
        s = v[:, None] + v[None, :]
        d = _div(v[:, None] - v[None, :], s) ** 2
        d = np.where(s == 0, 0.0, d)
    else:
        raise ValueError(f"unknown level {level!r} (nominal, ordinal, interval, ratio)")
    return np.broadcast_to(d, n_c.shape[:-1] + (k, k)).copy()


def krippendorff_alpha_from_coincidence(o, level: str = "nominal", scores=None):
    """Alpha from (a batch of) coincidence matrices ``(..., k, k)``.

    ``alpha = 1 - (n - 1) sum o_ck delta2_ck / sum n_c n_k delta2_ck``
    (Krippendorff 2011).  NaN when no disagreement is possible (one value only).
    """
    o = np.asarray(o, dtype=float)
    n_c = o.sum(axis=-1)
    n = n_c.sum(axis=-1)
    d2 = krippendorff_delta2(level, n_c, scores)
    do = np.einsum("...ck,...ck->...", o, d2)
    de = np.einsum("...c,...k,...ck->...", n_c, n_c, d2)
    return _scalar(1.0 - _div((n - 1.0) * do, de))


def krippendorff_alpha(counts, level: str = "nominal", scores=None) -> Estimate:
    """Krippendorff's alpha at a measurement level, any number of raters, missing data.

    Value: coincidence-matrix form of Krippendorff (2011).  SE: Gwet's (2014)
    linearisation of alpha with agreement weights ``1 - delta2 / max(delta2)``, term for
    term irrCAC's ``krippen.alpha.raw`` (current source): items with fewer than two ratings
    dropped, ``n`` the items left, ``r_i`` their rating counts around the mean ``rbar``,
    the linearised terms of alpha' (the estimate before the ``epsilon = 1 / sum r_i``
    small-sample correction) and ``var = sum (k*_i - alpha')^2 / (n (n - 1))`` -- irrCAC with
    ``N = Inf`` (no finite-population factor).  It reproduces irrCAC's published SE on
    ``cac.raw4raters`` (Krippendorff's 2011 data, with missing ratings): 0.14548 nominal,
    0.129 interval, 0.140 ratio (tests/test_agreement.py).  Where it differs: the ordinal
    level.  irrCAC has no ordinal metric of Krippendorff's (its "ordinal" weights are Gwet's
    rank-based ones); here the weights are Krippendorff's observed ordinal metric (mid-ranks of
    the coincidence marginals), held fixed in the linearisation (the marginals' variability
    through the metric is ignored).  Interval and ratio use ``scores`` (the categories' values,
    or their ranks when they are not numbers); the report names which on unequally spaced
    levels (``workflows.methods``).
    """
    R = np.asarray(counts, dtype=float)
    o = coincidence_matrix(R)
    alpha = float(krippendorff_alpha_from_coincidence(o, level, scores))
    d2 = krippendorff_delta2(level, o.sum(axis=1), scores)
    mx = d2.max() if d2.size else 0.0
    se = np.nan
    ri = R.sum(axis=1)
    R2 = R[ri >= 2]
    ri = ri[ri >= 2]
    n = R2.shape[0]
    if mx > 0 and n >= 2 and np.isfinite(alpha):
        w = 1.0 - d2 / mx
        rbar = ri.mean()
        sum_q = np.sum(R2 * (R2 @ w.T - 1.0), axis=1)
        pa_prime = np.sum(sum_q / (rbar * (ri - 1.0))) / n
        pi = (R2 / rbar).mean(axis=0)
        pe = float(pi @ w @ pi)
        alpha_prime = (pa_prime - pe) / (1.0 - pe)
        pa_i = sum_q / (rbar * (ri - 1.0)) - pa_prime * (ri - rbar) / rbar
        k_i = (pa_i - pe) / (1.0 - pe)
        piw = (w @ pi + w.T @ pi) / 2.0
        pe_i = (R2 @ piw) / rbar - pe * (ri - rbar) / rbar
        k_x = k_i - 2.0 * (1.0 - alpha_prime) * (pe_i - pe) / (1.0 - pe)
        se = float(np.sqrt(np.sum((k_x - alpha_prime) ** 2) / (n * (n - 1.0))))
    return Estimate(alpha, se)
