"""95% interval methods for the agreement coefficients: pure, vectorised numpy.

Every method takes a coefficient's estimate, its standard error, the number of items it
rests on and the coefficient's range ``[low, high]``, and returns ``(ci_low, ci_high)``
arrays (NaN where no interval exists).  :data:`METHODS` names them; the statistic
declarations (:mod:`goldboard.analysis.statistics`) say which one each coefficient uses by
default.

``wald``
    ``value -/+ 1.96 SE`` truncated to the range (SAS's convention).  Collapses to the point
    when ``SE = 0`` (perfect agreement), and undercovers at small ``n`` with skewed labels.
``wilson``
    Wilson's (1927) score interval with the *effective sample size* of the estimate,
    ``n* = u (1 - u) / SE_u^2`` on the coefficient rescaled to ``u = (value - low) / (high -
    low)``, capped at the items (Korn & Graubard 1998, who derived it for proportions from
    complex samples; Agresti & Coull 1998 on why the score interval holds its level where the
    Wald interval does not).  For two-rater percent agreement ``n*`` is the number of items,
    so this is exactly the Wilson interval of "agreeing items out of n".  It is asymmetric
    near the bound, and at perfect agreement (``SE = 0``) it is the honest one-sided interval
    ``[low + (high - low) n / (n + z^2), high]`` -- never ``[1, 1]``.

>>> lo, hi = wilson(1.0, 0.0, 30, 0.0, 1.0)
>>> round(float(lo), 4), float(hi)
(0.8865, 1.0)
>>> lo, hi = wilson(0.8, (0.8 * 0.2 / 50) ** 0.5, 50, 0.0, 1.0)  # 40 of 50 items agree
>>> round(float(lo), 4), round(float(hi), 4)
(0.6696, 0.8876)

References
----------
Agresti, A., & Coull, B. A. (1998). Approximate is better than "exact" for interval
    estimation of binomial proportions. *The American Statistician*, 52, 119-126.
Korn, E. L., & Graubard, B. I. (1998). Confidence intervals for proportions with small
    expected number of positive counts estimated from survey data. *Survey Methodology*,
    24, 193-201.
Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
    inference. *JASA*, 22, 209-212.
"""

from __future__ import annotations

import numpy as np

from goldboard.analysis.coefficients import Z95

__all__ = ["METHODS", "interval", "wald", "wilson"]

#: the interval methods, by the name ``--ci`` and the ``ci_method`` column use
METHODS = ("wilson", "wald")


def wald(value, se, n, low=-1.0, high=1.0, z: float = Z95):
    """``value -/+ z SE`` truncated to ``[low, high]`` (``n`` unused)."""
    value = np.asarray(value, dtype=float)
    se = np.asarray(se, dtype=float)
    return np.clip(value - z * se, low, high), np.clip(value + z * se, low, high)


def wilson(value, se, n, low=-1.0, high=1.0, z: float = Z95):
    """Wilson score interval at the effective sample size (Korn & Graubard 1998): see the module."""
    value = np.asarray(value, dtype=float)
    se = np.asarray(se, dtype=float)
    n = np.asarray(n, dtype=float)
    span = high - low
    u = np.clip((value - low) / span, 0.0, 1.0)
    se_u = se / span
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(se_u > 0, u * (1.0 - u) / se_u**2, n)
    n_eff = np.where(np.isfinite(n_eff), n_eff, n)
    n_eff = np.where(n_eff > 0, n_eff, n)
    z2 = z * z
    with np.errstate(divide="ignore", invalid="ignore"):
        centre = (u + z2 / (2 * n_eff)) / (1 + z2 / n_eff)
        half = z / (1 + z2 / n_eff) * np.sqrt(u * (1 - u) / n_eff + z2 / (4 * n_eff**2))
    # SE 0 inside the range is a degenerate table (no interval); at a bound it is perfect agreement
    ok = np.isfinite(value) & np.isfinite(se) & (n > 0) & ((se > 0) | (u == 0.0) | (u == 1.0))
    lo = np.where(u == 0.0, low, low + span * np.clip(centre - half, 0.0, 1.0))
    hi = np.where(u == 1.0, high, low + span * np.clip(centre + half, 0.0, 1.0))
    lo, hi = np.where(ok, lo, np.nan), np.where(ok, hi, np.nan)
    return lo, hi


_FUNCS = {"wald": wald, "wilson": wilson}


def interval(method: str, value, se, n, low=-1.0, high=1.0):
    """``(ci_low, ci_high)`` of ``method`` (one of :data:`METHODS`); NaN without an SE."""
    if method not in _FUNCS:
        raise ValueError(f"unknown interval method {method!r} ({', '.join(METHODS)})")
    lo, hi = _FUNCS[method](value, se, n, low, high)
    bad = ~(np.isfinite(np.asarray(value, dtype=float)) & np.isfinite(np.asarray(se, dtype=float)))
    lo, hi = np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)
    return (float(lo), float(hi)) if np.ndim(lo) == 0 else (lo, hi)
