"""One result type for "an estimate with its confidence interval".

:class:`EstimateCI` is what the engines compute; the JSON contracts keep their own
keys, written by two adapters:

- agreement rows (``goldboard agree``): ``{"value", "se", "ci_low", "ci_high"}``
  (:meth:`EstimateCI.agreement_dict`);
- scores (``goldboard score``): ``{"estimate", "low", "high", "method"}``
  (:meth:`EstimateCI.score_dict`).

Non-finite numbers (NaN, inf) become ``None``: the JSON has no NaN.

>>> e = EstimateCI.wald(0.5, 0.1)
>>> round(e.low, 4), round(e.high, 4), sorted(e.agreement_dict())
(0.304, 0.696, ['ci_high', 'ci_low', 'se', 'value'])
>>> EstimateCI(0.25, 0.1, float("nan"), method="wilson").score_dict()
{'estimate': 0.25, 'low': 0.1, 'high': None, 'method': 'wilson'}
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from goldboard.analysis.coefficients import wald_ci


def finite_or_none(x) -> float | None:
    """JSON-safe float: ``None`` for a missing, NaN or infinite value."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class EstimateCI:
    """A point estimate with its interval (``low``/``high``), optional SE and method."""

    value: float | None
    low: float | None = None
    high: float | None = None
    se: float | None = None
    method: str | None = None

    @classmethod
    def wald(cls, value, se, lower_bound: float = -1.0, upper_bound: float = 1.0) -> EstimateCI:
        """``value -/+ 1.96 SE`` truncated to the coefficient's range (no interval without an SE)."""
        value, se = finite_or_none(value), finite_or_none(se)
        if value is None or se is None:
            return cls(value, None, None, se, "wald")
        lo, hi = wald_ci(value, se, lower_bound, upper_bound)
        return cls(value, finite_or_none(lo), finite_or_none(hi), se, "wald")

    def agreement_dict(self) -> dict:
        return {
            "value": finite_or_none(self.value),
            "se": finite_or_none(self.se),
            "ci_low": finite_or_none(self.low),
            "ci_high": finite_or_none(self.high),
        }

    def score_dict(self) -> dict:
        return {
            "estimate": finite_or_none(self.value),
            "low": finite_or_none(self.low),
            "high": finite_or_none(self.high),
            "method": self.method,
        }
