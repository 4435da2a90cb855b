"""Sample size for a kappa study, planned before the first case is rated (pure functions).

Five published methods, two raters each:

``ci_sample_size``  Donner & Eliasziw (1992) goodness-of-fit approach, confidence-interval form
    (Rotondi & Donner 2012; R ``kappaSize::CIBinary``/``CI3Cats``..``CI5Cats``): the number of
    items so that the expected lower limit of the 95% CI for kappa is at least ``kappa_lower``
    (one-sided) or the expected interval lies within ``kappa_lower``..``kappa_upper`` (two-sided).
``power_sample_size``  Donner & Eliasziw (1992), hypothesis-test form (``kappaSize::PowerBinary``,
    ``Power3Cats``..``Power5Cats``): the number of items for a test of ``H0: kappa = kappa0``
    against ``kappa1`` with the stated power.
``cantor_sample_size``  Cantor (1996) (``irr::N.cohen.kappa``): binary ratings, raters with their
    own positive rates, the Fleiss, Cohen & Everitt (1969) large-sample variance under H0 and H1.
``flack_sample_size``  Flack, Afifi, Lachenbruch & Schouten (1988) (``irr::N2.cohen.kappa``):
    k >= 2 categories with common marginals, the largest variance consistent with them (a
    linear programme over the joint table).
``krippendorff_sample_size``  Krippendorff's minimum sample size for alpha (after Bloch &
    Kraemer 1989): the number of values (and double-rated items) needed to show that alpha is
    at least a smallest acceptable ``alpha_min`` at a level of significance, given the
    probability of the least frequent category.

and ``expected_lower_bound`` (the inverse of ``ci_sample_size``: what lower limit ``n`` items
buy; ``kappaSize::FixedNBinary``).  Every function returns a :class:`SampleSizePlan`
(``n``, the unrounded value, the inputs, the method and its reference, a methods sentence).

The Donner--Eliasziw model: two raters rate an item; with category prevalences ``p_j``
and kappa ``k`` (the common-correlation model), both raters choose category ``j`` with
probability ``p_j**2 + k p_j (1 - p_j)``; the remaining probability is disagreement.  The
goodness-of-fit statistic of the expected counts under ``kappa0`` against those under
``k1`` is ``n * sum_cells (P(kappa0) - P(k1))**2 / P(k1)`` on 1 degree of freedom.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from statistics import NormalDist

import numpy as np

from goldboard.cases.assignment import stratum_allocation
from goldboard.errors import GoldboardError, ParamError
from goldboard.text import md_table

DONNER_ELIASZIW = (
    "Donner A, Eliasziw M. A goodness-of-fit approach to inference procedures for the kappa statistic: "
    "confidence interval construction, significance-testing and sample size estimation. Stat Med 1992;11:1511-19"
)
ROTONDI_DONNER = (
    "Rotondi MA, Donner A. A confidence interval approach to sample size estimation for interobserver "
    "agreement studies with multiple raters and outcomes. J Clin Epidemiol 2012;65:778-84"
)
CANTOR = "Cantor AB. Sample-size calculations for Cohen's kappa. Psychol Methods 1996;1:150-3"
FLACK = (
    "Flack VF, Afifi AA, Lachenbruch PA, Schouten HJA. Sample size determinations for the two rater kappa "
    "statistic. Psychometrika 1988;53:321-5"
)
KRIPPENDORFF = (
    "Krippendorff K. Content analysis: an introduction to its methodology. Thousand Oaks: Sage (2004; 4th ed. 2019)"
)
BLOCH_KRAEMER = (
    "Bloch DA, Kraemer HC. 2 x 2 kappa coefficients: measures of agreement or association. Biometrics 1989;45:269-87"
)


@dataclass(frozen=True)
class SampleSizePlan:
    """One sample-size answer: ``n`` items double-rated (``n_exact`` before rounding up)."""

    method: str
    goal: str
    n: int
    n_exact: float
    kappa: float | None
    prevalences: tuple[float, ...]
    alpha: float
    reference: str
    kappa_null: float | None = None
    kappa_lower: float | None = None
    kappa_upper: float | None = None
    power: float | None = None
    two_sided: bool = False
    warnings: tuple[str, ...] = field(default=())
    #: goal "alpha_min" (Krippendorff): the smallest acceptable alpha, the probability of the least
    #: frequent category, and the number of values (ratings) the published table counts
    alpha_min: float | None = None
    least_frequent: float | None = None
    n_values: int | None = None
    #: goal "ci" with assurance (:func:`assured_sample_size`): the probability the target is met at
    #: ``n`` (asked, and simulated or, with ``exact``, computed exactly), the simulation's size and
    #: seed (None when exact), and the expected-value ``n``
    assurance: float | None = None
    assurance_simulated: float | None = None
    #: the one-sided 95% Wilson lower confidence bound of ``assurance_simulated`` (None when exact),
    #: and the interval simulated (the report's, :func:`report_interval_method`)
    assurance_lower: float | None = None
    interval: str | None = None
    simulations: int | None = None
    seed: int | None = None
    n_expected: int | None = None
    #: the sizes next to ``n`` (``n - 1``, ``n``) whose simulated share the simulation could not settle
    #: above or below the assurance (its two-sided 99% bounds still hold it after every batch): where
    #: another set of simulated studies (``seed``) can put ``n`` an item or two away
    unsettled: tuple[int, ...] = field(default=())
    #: the studies simulated at those sizes (the most at any of them)
    unsettled_studies: int | None = None
    #: two categories: the share is exact (every 2 x 2 table of ``n`` items weighted by its multinomial
    #: probability; :func:`exact_share`), no simulation and no seed; ``share_before`` is the exact share
    #: at ``n - 1`` items, below the assurance
    exact: bool = False
    share_before: float | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        d["prevalences"] = list(self.prevalences)
        d["warnings"] = list(self.warnings)
        d["unsettled"] = list(self.unsettled)
        d["sentence"] = self.sentence()
        return d

    def sentence(self) -> str:
        """A sentence for the methods section."""
        prev = ", ".join(f"{p:.3g}" for p in self.prevalences)
        conf = round(100 * (1 - self.alpha))
        if self.goal == "alpha_min":
            return (
                f"A sample of {self.n} double-rated items ({2 * self.n} ratings by two raters; the minimum is "
                f"{self.n_values} ratings) meets Krippendorff's "
                f"minimum sample size for a smallest acceptable alpha of {self.alpha_min:.3g} at the {self.alpha:.3g} "
                f"level of significance, with the least frequent category expected in {self.least_frequent:.3g} of "
                f"the ratings (after Bloch & Kraemer 1989)."
            )
        if self.goal == "power":
            side = "two-sided" if self.two_sided else "one-sided"
            return (
                f"A sample of {self.n} double-rated items gives {self.power:.0%} power to reject "
                f"H0: kappa = {self.kappa_null:.3g} in favour of kappa = {self.kappa:.3g} "
                f"({side} alpha = {self.alpha:.3g}; expected category prevalences {prev}; {self.method})."
            )
        if self.assurance is not None and self.exact:
            return self._exact_sentence(prev, conf)
        if self.assurance is not None:
            return self._assured_sentence(prev, conf)
        if self.kappa_upper is None:
            return (
                f"A sample of {self.n} double-rated items gives an expected lower limit of the one-sided "
                f"{conf}% confidence interval for kappa of at least {_num(self.kappa_lower)} if kappa is "
                f"{_num(self.kappa)} (expected category prevalences {prev}; {self.method}); the target is met on "
                "average, not in every study."
            )
        return (
            f"A sample of {self.n} double-rated items gives an expected two-sided {conf}% confidence interval for "
            f"kappa of width {_num(self.kappa_upper - self.kappa_lower)} ({_num(self.kappa_lower)} to "
            f"{_num(self.kappa_upper)}) if kappa is {_num(self.kappa)} (expected category prevalences {prev}; "
            f"{self.method}); the target is met on average, not in every study."
        )

    def _target_text(self, conf: int) -> str:
        return (
            f"a lower limit of the one-sided {conf}% confidence interval for kappa of at least {_num(self.kappa_lower)}"
            if self.kappa_upper is None
            else f"a two-sided {conf}% confidence interval for kappa no wider than "
            f"{_num(self.kappa_upper - self.kappa_lower)}"
        )

    def _expected_text(self) -> str:
        return (
            f"{self.n_expected} items meet it only on average (the expected-value plan, goodness-of-fit limits)."
            if self.n_expected is not None and self.n_expected <= self.n
            else f"The expected-value plan ({self.n_expected} items, goodness-of-fit limits) asks more: each "
            f"expected limit within {_num((self.kappa_upper - self.kappa_lower) / 2)} of kappa."
        )

    def _exact_sentence(self, prev: str, conf: int) -> str:
        p = self.assurance
        before = "" if self.share_before is None else f"; {self.n - 1} items: {_share_pct(self.share_before, p)}"
        return (
            f"A sample of {self.n} double-rated items gives {self._target_text(conf)} with probability "
            f"{p:g} (assurance) if kappa is {_num(self.kappa)} (expected category prevalences {prev}), "
            f"for the interval the report prints ({self.interval}): summed over every 2 x 2 table of "
            f"{self.n} items, each weighted by its multinomial probability under the common-correlation model "
            f"(exact: no simulation and no seed; the far tails, under 1e-13 of the probability, count as misses), "
            f"the target is met with probability {_share_pct(self.assurance_simulated, p)} ({self.n} is the "
            f"smallest size the search finds reaching {p:.0%}{before}). " + self._expected_text()
        )

    def _assured_sentence(self, prev: str, conf: int) -> str:
        target = self._target_text(conf)
        stream = "one fixed set of studies" if self.seed is None else f"seed {self.seed}"
        return (
            f"A sample of {self.n} double-rated items gives {target} with probability {self.assurance:g} "
            f"(assurance) if kappa is {_num(self.kappa)} (expected category prevalences {prev}), for the interval "
            f"the report prints ({self.interval}): in {self.simulations} simulated studies of "
            f"{self.n} items ({stream}; two raters under the common-correlation model, the same items "
            f"extended for every size tried) the target was met in {self.assurance_simulated:.1%} (one-sided 95% "
            f"lower confidence bound {self.assurance_lower:.1%}; {self.n} is the smallest size whose bound reaches "
            f"{self.assurance:.0%}). " + self._unsettled_text() + self._expected_text()
        )

    def _unsettled_text(self) -> str:
        """Where the simulation could not settle the share: how precise ``n`` is."""
        if not self.unsettled:
            return ""
        sizes = " and ".join(str(m) for m in self.unsettled)
        return (
            f"The share at {sizes} items lies within its 99% Monte Carlo error of {self.assurance:.0%} after "
            f"{self.unsettled_studies or self.simulations} studies, so another set of simulated studies can put the smallest size an item "
            "or two away. "
        )


def _share_pct(x: float, target: float) -> str:
    """``x`` as a percentage with as few decimals (at least one) as keep it on its side of ``target``."""
    for d in range(1, 7):
        if (round(100 * x, d) < round(100 * target, 6)) == (x < target):
            break
    return f"{100 * x:.{d}f}%"


# -- inputs ---------------------------------------------------------------------------------------


def ndtri(p: float) -> float:
    """The standard normal quantile, ``scipy.special.ndtri`` (``scipy.stats.norm.ppf``), from the
    standard library: ``statistics.NormalDist.inv_cdf`` is Wichura's algorithm AS 241 (Appl Stat
    1988;37:477-84), accurate to about 1e-16, so no scipy import (0.2 s) for a closed formula.
    ``tests/test_planning.py`` holds it to scipy's value over the unit interval."""
    return _STANDARD_NORMAL.inv_cdf(p)


_STANDARD_NORMAL = NormalDist()


def _chi2_1_ppf(q: float) -> float:
    """The chi-square quantile on 1 degree of freedom, ``scipy.stats.chi2.ppf(q, 1)``: a chi-square
    variable on 1 degree of freedom is a squared standard normal one, so its ``q`` quantile is the
    square of the normal ``(1 + q) / 2`` quantile, taken from the lower tail as ``(1 - q) / 2``
    (``1 - q`` is exact for the ``q`` of a test level, so the tail keeps its digits)."""
    return ndtri((1 - q) / 2) ** 2


def _unit(name: str, value: float) -> float:
    v = float(value)
    if not 0.0 < v < 1.0:
        raise GoldboardError(f"must lie strictly between 0 and 1, got {value!r}", param=name)
    return v


def _finite_prevalences(arr: np.ndarray) -> None:
    """NaN or infinity is no prevalence (every comparison with NaN is false, so the range
    checks alone would let it through to the formula)."""
    bad = [str(x) for x in arr if not np.isfinite(x)]
    if bad:
        raise GoldboardError(f"every category prevalence must be a number, got {', '.join(bad)}", param="prevalence")


def prevalence_vector(props: float | Sequence[float]) -> np.ndarray:
    """Category prevalences as a vector summing to 1: a single number ``p`` means a binary
    outcome with prevalence ``p`` (``[1 - p, p]``).  2 to 10 categories, each in (0, 1)
    (R's ``kappaSize`` tabulates 2 to 5; the model is the same for more)."""
    if isinstance(props, int | float):
        p = _unit("prevalence", props)
        return np.array([1.0 - p, p])
    arr = np.asarray([float(x) for x in props], dtype=float)
    if len(arr) == 1:
        return prevalence_vector(float(arr[0]))
    if not 2 <= len(arr) <= 10:
        raise GoldboardError(f"2 to 10 category prevalences are supported, got {len(arr)}", param="prevalence")
    _finite_prevalences(arr)
    if np.any(arr <= 0) or np.any(arr >= 1):
        raise GoldboardError("every category prevalence must lie strictly between 0 and 1", param="prevalence")
    if abs(arr.sum() - 1.0) > 1e-3:
        raise GoldboardError(f"the prevalences must sum to 1, they sum to {arr.sum():g}", param="prevalence")
    return arr / arr.sum()


def _check_alpha_power(alpha: float, power: float | None = None) -> None:
    _unit("alpha", alpha)
    if power is not None:
        _unit("power", power)
        if power <= alpha:
            raise GoldboardError(f"must exceed alpha ({alpha:g}), got {power:g}", param="power")


def _small_cells(props: np.ndarray, n: int) -> tuple[str, ...]:
    if np.any(props * n < 5):
        return ("at least one expected category count (prevalence x n) is below 5: the large-sample method is rough",)
    return ()


# -- Donner & Eliasziw (1992) -----------------------------------------------------------------------


def cell_probabilities(kappa: float, props: Sequence[float]) -> np.ndarray:
    """The common-correlation model for two raters: ``[P(both j) for each category j,
    P(disagree)]`` with ``P(both j) = p_j**2 + kappa p_j (1 - p_j)`` (Donner & Eliasziw 1992;
    Bartfay & Donner 2001 for k > 2 categories)."""
    p = np.asarray(props, dtype=float)
    agree = p * p + kappa * p * (1.0 - p)
    return np.append(agree, 1.0 - agree.sum())


def _gof(kappa_design: float, kappa_alt: float, props: np.ndarray) -> float:
    """Per-item goodness-of-fit chi-square of the counts expected under ``kappa_design``
    against the model at ``kappa_alt`` (the denominator)."""
    a = cell_probabilities(kappa_design, props)
    b = cell_probabilities(kappa_alt, props)
    keep = b > 0
    return float(np.sum((a[keep] - b[keep]) ** 2 / b[keep]))


def _check_kappa(name: str, value: float) -> float:
    return _unit(name, value)


def ci_sample_size(
    kappa: float,
    kappa_lower: float,
    props: float | Sequence[float],
    kappa_upper: float | None = None,
    alpha: float = 0.05,
) -> SampleSizePlan:
    """Items needed so that, if kappa is ``kappa``, the expected lower confidence limit is at
    least ``kappa_lower`` (and, given ``kappa_upper``, the expected upper limit at most it).

    Donner & Eliasziw (1992); Rotondi & Donner (2012).  One-sided (``kappa_upper`` None): the
    100(1 - alpha)% lower limit, critical value ``chi2_1(1 - 2 alpha)``; two-sided: the
    100(1 - alpha)% interval, ``chi2_1(1 - alpha)``.  ``n`` is the smallest integer with
    ``n * GOF(kappa, limit) >= critical value`` for each limit given.  (R's ``kappaSize``
    searches integers from 11 upwards and stops at ``GOF >= critical + 0.001``; it can differ
    by one item at a boundary.)
    """
    kappa = _check_kappa("kappa", kappa)
    kappa_lower = _check_kappa("kappa_lower", kappa_lower)
    _check_alpha_power(alpha)
    p = prevalence_vector(props)
    if kappa_lower >= kappa:
        raise GoldboardError(f"must be below the expected kappa {kappa:g}, got {kappa_lower:g}", param="kappa_lower")
    if kappa_upper is not None:
        kappa_upper = _check_kappa("kappa_upper", kappa_upper)
        if kappa_upper <= kappa:
            raise GoldboardError(
                f"must be above the expected kappa {kappa:g}, got {kappa_upper:g}", param="kappa_upper"
            )
    crit = _chi2_1_ppf(1 - (2 * alpha if kappa_upper is None else alpha))
    exact = crit / _gof(kappa, kappa_lower, p)
    if kappa_upper is not None:
        exact = max(exact, crit / _gof(kappa, kappa_upper, p))
    n = math.ceil(exact - 1e-9)
    return SampleSizePlan(
        method="Donner & Eliasziw (1992) goodness-of-fit confidence interval",
        goal="ci",
        n=n,
        n_exact=exact,
        kappa=kappa,
        prevalences=tuple(float(x) for x in p),
        alpha=alpha,
        reference=f"{DONNER_ELIASZIW}; {ROTONDI_DONNER}",
        kappa_lower=kappa_lower,
        kappa_upper=kappa_upper,
        two_sided=kappa_upper is not None,
        warnings=_small_cells(p, n),
    )


def expected_lower_bound(kappa: float, n: int, props: float | Sequence[float], alpha: float = 0.05) -> float:
    """The expected lower limit of the one-sided 100(1 - alpha)% confidence interval for kappa
    from ``n`` double-rated items if kappa is ``kappa`` (the inverse of :func:`ci_sample_size`;
    ``kappaSize::FixedNBinary``): the ``k_L < kappa`` with ``n * GOF(kappa, k_L) = chi2_1(1 - 2 alpha)``.
    Returns 0.0 when even ``k_L = 0`` is not excluded."""
    kappa = _check_kappa("kappa", kappa)
    _check_alpha_power(alpha)
    if int(n) < 2:
        raise GoldboardError(f"must be at least 2, got {n!r}", param="n")
    p = prevalence_vector(props)
    crit = _chi2_1_ppf(1 - 2 * alpha)

    def f(k: float) -> float:
        return n * _gof(kappa, k, p) - crit

    if f(1e-9) < 0:
        return 0.0
    from scipy import optimize  # ~0.5 s to import: only where a root is solved for

    return float(optimize.brentq(f, 1e-9, kappa - 1e-12, xtol=1e-10))


def noncentrality(alpha: float, power: float, df: int = 1) -> float:
    """The non-centrality ``lambda`` of a chi-square on ``df`` degrees of freedom at which a test at
    level ``alpha`` has the given power: ``P(chi2_df(lambda) > chi2_df(1 - alpha)) = power``."""
    from scipy import optimize, stats  # the non-central chi-square is scipy.stats' own

    crit = stats.chi2.ppf(1 - alpha, df)
    return float(optimize.brentq(lambda lam: stats.ncx2.sf(crit, df, lam) - power, 1e-9, 1e4, xtol=1e-12))


def power_sample_size(
    kappa1: float,
    kappa0: float,
    props: float | Sequence[float],
    alpha: float = 0.05,
    power: float = 0.80,
) -> SampleSizePlan:
    """Items needed to reject ``H0: kappa = kappa0`` when kappa is ``kappa1`` (Donner & Eliasziw
    1992, the goodness-of-fit test; ``kappaSize::PowerBinary``, ``Power3Cats``..): ``n = lambda /
    GOF`` with ``lambda`` the 1-df non-centrality for ``alpha`` (two-sided, as the chi-square test
    is) and ``power``, and ``GOF = sum (P(kappa1) - P(kappa0))**2 / P(kappa0)`` per item."""
    kappa1 = _check_kappa("kappa", kappa1)
    kappa0 = _unit("kappa_null", kappa0)
    _check_alpha_power(alpha, power)
    if kappa1 == kappa0:
        raise GoldboardError("must differ from the expected kappa", param="kappa_null")
    p = prevalence_vector(props)
    exact = noncentrality(alpha, power) / _gof(kappa1, kappa0, p)
    n = math.ceil(exact - 1e-9)
    return SampleSizePlan(
        method="Donner & Eliasziw (1992) goodness-of-fit test",
        goal="power",
        n=n,
        n_exact=exact,
        kappa=kappa1,
        prevalences=tuple(float(x) for x in p),
        alpha=alpha,
        reference=DONNER_ELIASZIW,
        kappa_null=kappa0,
        power=power,
        two_sided=True,
        warnings=_small_cells(p, n),
    )


# -- Cantor (1996) and Flack et al. (1988): the Fleiss-Cohen-Everitt variance -------------------------


def cantor_q(kappa: float, rate1: float, rate2: float) -> float:
    """Cantor's (1996) ``Q``: n times the large-sample variance of kappa (Fleiss, Cohen & Everitt
    1969) for a 2x2 table with positive rates ``rate1``, ``rate2`` and the given kappa."""
    q1, q2 = 1.0 - rate1, 1.0 - rate2
    pe = rate1 * rate2 + q1 * q2
    po = kappa * (1.0 - pe) + pe
    p22 = (po - rate1 + q2) / 2.0
    p11 = po - p22
    p12 = rate1 - p11
    p21 = rate2 - p11
    if min(p11, p22, p12, p21) < -1e-12:
        raise GoldboardError(
            f"kappa {kappa:g} is not attainable with positive rates {rate1:g} and {rate2:g}", param="kappa"
        )
    d = 1.0 - pe
    total = (
        p11 * (d - (rate2 + rate1) * (1 - po)) ** 2
        + p22 * (d - (q2 + q1) * (1 - po)) ** 2
        + (1 - po) ** 2 * (p12 * (rate2 + q1) ** 2 + p21 * (q2 + rate1) ** 2)
        - (po * pe - 2 * pe + po) ** 2
    )
    return float(total / d**4)


def _z_n(tau0: float, tau1: float, kappa1: float, kappa0: float, alpha: float, power: float, two_sided: bool):
    za = ndtri(1 - alpha / (2 if two_sided else 1))
    zb = ndtri(power)
    return ((za * tau0 + zb * tau1) / (kappa1 - kappa0)) ** 2


def cantor_sample_size(
    kappa1: float,
    kappa0: float,
    rate1: float,
    rate2: float | None = None,
    alpha: float = 0.05,
    power: float = 0.80,
    two_sided: bool = False,
) -> SampleSizePlan:
    """Binary ratings, raters with their own positive rates (Cantor 1996; ``irr::N.cohen.kappa``):
    ``n = ((z_alpha sqrt(Q0) + z_beta sqrt(Q1)) / (kappa1 - kappa0))**2`` with ``Q0``, ``Q1``
    :func:`cantor_q` at ``kappa0`` and ``kappa1``.  One-sided unless ``two_sided``."""
    rate1 = _unit("prevalence", rate1)
    rate2 = rate1 if rate2 is None else _unit("prevalence", rate2)
    _check_alpha_power(alpha, power)
    if not -1 < kappa0 < 1 or not -1 < kappa1 < 1:
        raise GoldboardError("kappa values must lie between -1 and 1", param="kappa")
    if kappa1 == kappa0:
        raise GoldboardError("must differ from the expected kappa", param="kappa_null")
    exact = _z_n(
        math.sqrt(cantor_q(kappa0, rate1, rate2)),
        math.sqrt(cantor_q(kappa1, rate1, rate2)),
        kappa1,
        kappa0,
        alpha,
        power,
        two_sided,
    )
    n = math.ceil(exact - 1e-9)
    return SampleSizePlan(
        method="Cantor (1996) large-sample test",
        goal="power",
        n=n,
        n_exact=exact,
        kappa=kappa1,
        prevalences=(1 - (rate1 + rate2) / 2, (rate1 + rate2) / 2) if rate1 != rate2 else (1 - rate1, rate1),
        alpha=alpha,
        reference=CANTOR,
        kappa_null=kappa0,
        power=power,
        two_sided=two_sided,
    )


def flack_max_tau(marginals: Sequence[float], kappa: float) -> float:
    """The largest standard deviation (times sqrt(n)) of kappa over all k x k tables with the given
    common marginals and agreement ``kappa`` (Flack et al. 1988): the Fleiss-Cohen-Everitt (1969)
    variance is linear in the cell probabilities once the marginals and the diagonal sum are
    fixed, so its maximum is a linear programme."""
    m = np.asarray(marginals, dtype=float)
    k = len(m)
    pe = float(np.sum(m * m))
    po = kappa + pe * (1 - kappa)
    if po <= 0:
        raise GoldboardError(f"kappa {kappa:g} is not attainable with these marginals", param="kappa")
    d = 1 - pe
    # objective: sum_ij c_ij p_ij (the cell-dependent part of the variance numerator)
    c = (1 - po) ** 2 * (m[:, None] + m[None, :]) ** 2
    np.fill_diagonal(c, -(1 - po) * 2 * m * (2 * d - (1 - po) * 2 * m))
    a_eq, b_eq = [], []
    for i in range(k):
        row = np.zeros((k, k))
        row[i, :] = 1
        a_eq.append(row.ravel())
        b_eq.append(m[i])
        col = np.zeros((k, k))
        col[:, i] = 1
        a_eq.append(col.ravel())
        b_eq.append(m[i])
    a_eq.append(np.eye(k).ravel())
    b_eq.append(po)
    from scipy import optimize

    res = optimize.linprog(-c.ravel(), A_eq=np.array(a_eq), b_eq=np.array(b_eq), bounds=(0, None), method="highs")
    if not res.success:
        raise GoldboardError(f"kappa {kappa:g} is not attainable with these marginals", param="kappa")
    tau_sq = po * d**2 + (-res.fun) - (po * pe - 2 * pe + po) ** 2
    if tau_sq <= 0:
        raise GoldboardError("these inputs give no positive variance", param="kappa")
    return float(math.sqrt(tau_sq) / d**2)


def flack_sample_size(
    kappa1: float,
    kappa0: float,
    marginals: Sequence[float],
    alpha: float = 0.05,
    power: float = 0.80,
    two_sided: bool = False,
) -> SampleSizePlan:
    """k >= 2 categories, common marginals, worst-case variance (Flack et al. 1988;
    ``irr::N2.cohen.kappa``): ``n = ((z_alpha tau0 + z_beta tau1) / (kappa1 - kappa0))**2`` with
    ``tau`` from :func:`flack_max_tau`.  One-sided unless ``two_sided``.  Up to 10 categories."""
    m = np.asarray([float(x) for x in marginals], dtype=float)
    if not 2 <= len(m) <= 10:
        raise GoldboardError("2 to 10 category prevalences are supported", param="prevalence")
    _finite_prevalences(m)
    if np.any(m < 0) or abs(m.sum() - 1) > 1e-9:
        raise GoldboardError("the prevalences must be non-negative and sum to 1", param="prevalence")
    _check_alpha_power(alpha, power)
    if abs(kappa0) > 1 or abs(kappa1) > 1:
        raise GoldboardError("kappa values must lie between -1 and 1", param="kappa")
    if kappa1 == kappa0:
        raise GoldboardError("must differ from the expected kappa", param="kappa_null")
    exact = _z_n(flack_max_tau(m, kappa0), flack_max_tau(m, kappa1), kappa1, kappa0, alpha, power, two_sided)
    n = math.ceil(exact - 1e-9)
    return SampleSizePlan(
        method="Flack et al. (1988) worst-case variance test",
        goal="power",
        n=n,
        n_exact=exact,
        kappa=kappa1,
        prevalences=tuple(float(x) for x in m),
        alpha=alpha,
        reference=FLACK,
        kappa_null=kappa0,
        power=power,
        two_sided=two_sided,
    )


# -- Krippendorff's minimum sample size for alpha ----------------------------------------------------


def intraclass_kappa_variance(kappa: float, prevalence: float) -> float:
    """``n`` times the large-sample variance of the intraclass kappa of two raters and a binary
    outcome (Bloch & Kraemer 1989): ``(1 - k) [(1 - k)(1 - 2k) + k (2 - k) / (2 p (1 - p))]``, the
    inverse Fisher information of the common-correlation model :func:`cell_probabilities`."""
    k, p = float(kappa), float(prevalence)
    return (1 - k) * ((1 - k) * (1 - 2 * k) + k * (2 - k) / (2 * p * (1 - p)))


def krippendorff_sample_size(alpha_min: float, least_frequent: float, significance: float = 0.05) -> SampleSizePlan:
    """Krippendorff's minimum sample size for alpha: two raters, the smallest acceptable alpha
    ``alpha_min``, the (one-sided) level of ``significance``, and ``least_frequent``, the
    probability ``p_c`` of the least frequent category (``1 / k`` for ``k`` equally used ones).

    Krippendorff's table (2004, 2019; after Bloch & Kraemer 1989, eq. 3.7) counts values, i.e.
    ratings ("codings" in the ATLAS.ti manual, which reprints it for two coders)::

        N_values = 2 z**2 [ (1 + a)(3 - a) / (4 (1 - a) p_c (1 - p_c)) - a ],   a = alpha_min,

    ``z`` the standard normal quantile ``1 - significance``; two raters rate ``N_values / 2``
    items.  This form reproduces the printed values (139 for ``a`` = .800, ``p_c`` = .25,
    significance .05; 81 for ``a`` = .667) and its bracket is :func:`intraclass_kappa_variance` at
    ``(1 + a) / 2`` (an alpha half way from ``a`` to 1) over that distance squared,
    ``((1 - a) / 2)**2``: the number of items at which such an alpha lies ``z`` standard errors
    above ``a``.  Both counts are rounded up: ``n`` the items, ``n_values`` the table's values.
    """
    a = _unit("alpha_min", alpha_min)
    p = float(least_frequent)
    if not 0.0 < p <= 0.5:
        raise GoldboardError(
            f"the least frequent category's probability must lie in (0, 0.5], got {least_frequent!r}",
            param="least_frequent",
        )
    sig = float(significance)
    if not 0.0 < sig < 0.5:
        raise GoldboardError(
            f"the level of significance must lie strictly between 0 and 0.5, got {significance!r}", param="alpha"
        )
    z = ndtri(1 - sig)
    bracket = (1 + a) * (3 - a) / (4 * (1 - a) * p * (1 - p)) - a
    exact = float(z * z * bracket)
    n_values = math.ceil(2 * exact - 1e-9)
    n = math.ceil(exact - 1e-9)
    warnings = ()
    if p * n < 5:
        warnings = (f"the least frequent category is expected in only {p * n:.1f} of {n} items",)
    return SampleSizePlan(
        method="Krippendorff minimum for alpha (after Bloch & Kraemer 1989)",
        goal="alpha_min",
        n=n,
        n_exact=exact,
        kappa=None,
        prevalences=(1.0 - p, p),
        alpha=sig,
        reference=f"{KRIPPENDORFF}; {BLOCH_KRAEMER}",
        alpha_min=a,
        least_frequent=p,
        n_values=n_values,
        warnings=warnings,
    )


def plan_sample_size(
    kappa: float | None,
    props: float | Sequence[float] | None,
    *,
    kappa_lower: float | None = None,
    width: float | None = None,
    kappa_null: float | None = None,
    alpha_min: float | None = None,
    least_frequent: float | None = None,
    alpha: float = 0.05,
    power: float = 0.80,
    two_sided: bool = False,
    rates: Sequence[float] | None = None,
) -> list[SampleSizePlan]:
    """Every applicable method for one question, the primary (Donner & Eliasziw) first.

    Exactly one goal: ``kappa_lower`` (expected lower 95% limit, one-sided), ``width`` (expected
    two-sided 95% interval ``kappa -/+ width/2``), ``kappa_null`` (test against a null kappa;
    adds Flack et al. and, for binary ratings, Cantor -- with the raters' own positive
    ``rates`` when given) or ``alpha_min`` (Krippendorff's minimum sample size for alpha, at the
    level of significance ``alpha``; no ``kappa`` needed; the least frequent category's
    probability is ``least_frequent`` or else the smallest of ``props``)."""
    goals = [g for g in (kappa_lower, width, kappa_null, alpha_min) if g is not None]
    if len(goals) != 1:
        raise ParamError("give exactly one goal: {kappa_lower}, {width}, {kappa_null} or {alpha_min}")
    if least_frequent is not None and alpha_min is None:
        raise ParamError("{least_frequent}: the least frequent category's probability applies to {alpha_min}")
    if alpha_min is not None:
        if rates is not None:
            raise ParamError("{rates}: the raters' own rates apply to {kappa_null} with a binary outcome")
        if least_frequent is None and props is None:
            raise GoldboardError("give the least frequent category's probability or the category prevalences")
        p = None if props is None else prevalence_vector(props)
        plan = krippendorff_sample_size(alpha_min, float(p.min()) if least_frequent is None else least_frequent, alpha)
        if p is not None and least_frequent is None:
            plan = replace(plan, prevalences=tuple(float(x) for x in p))
        return [plan]
    if kappa is None or props is None:
        raise GoldboardError("give the expected kappa and the category prevalences")
    p = prevalence_vector(props)
    if rates is not None and (kappa_null is None or len(p) != 2):
        raise ParamError("{rates}: the raters' own rates apply to {kappa_null} with a binary outcome")
    if kappa_lower is not None:
        return [ci_sample_size(kappa, kappa_lower, p, alpha=alpha)]
    if width is not None:
        w = float(width)
        if not 0 < w < 2:
            raise GoldboardError(f"must lie between 0 and 2, got {width!r}", param="width")
        lo, hi = kappa - w / 2, kappa + w / 2
        if lo <= 0 or hi >= 1:
            raise GoldboardError(
                f"kappa {kappa:g} -/+ {w / 2:g} must stay within (0, 1) for this method", param="width"
            )
        return [ci_sample_size(kappa, lo, p, kappa_upper=hi, alpha=alpha)]
    plans = [power_sample_size(kappa, kappa_null, p, alpha=alpha, power=power)]
    plans.append(flack_sample_size(kappa, kappa_null, p, alpha=alpha, power=power, two_sided=two_sided))
    if len(p) == 2:
        r1, r2 = (rates[0], rates[1]) if rates else (p[1], p[1])
        plans.append(cantor_sample_size(kappa, kappa_null, r1, r2, alpha=alpha, power=power, two_sided=two_sided))
    return plans


# -- the double-rated set ---------------------------------------------------------------------------


def stratified_sample(strata: Sequence[str], n: int, seed: int = 1) -> list[int]:
    """Positions of ``n`` of the items, drawn without replacement within each stratum.

    ``n`` at least the number of strata: one item from every stratum, so a rare error type or
    specialty is never left out of the double-rated set, and the rest allocated proportionally
    to the items each stratum has left (largest remainders, in exact integer arithmetic; a tie
    goes to the larger stratum, then is broken at random with the seed -- never by the
    stratum's name).  ``n`` below the number of strata: not every stratum can be represented;
    ``n`` strata are drawn as a simple random sample without replacement (Cochran WG,
    *Sampling Techniques*, 3rd ed., Wiley 1977, ch. 2), so every stratum has the same chance
    ``n / strata`` whatever its size, and one item is drawn from each.  Which strata get the
    remainder or a place is drawn from a stream of its own (``SeedSequence(seed).spawn``); the
    items within a stratum by ``numpy.random.default_rng(seed)``; the same inputs and seed give
    the same set.  Returned in the items' original order.  The allocation is
    :func:`goldboard.cases.assignment.stratum_allocation`, which push's overlap design shares."""
    n = int(n)
    total = len(strata)
    if n < 1:
        raise GoldboardError(f"must be at least 1, got {n}", param="n")
    if n > total:
        raise GoldboardError(f"asks for {n} items but the file has only {total}", param="n")
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    names = sorted(groups)
    alloc = stratum_allocation([len(groups[g]) for g in names], n, seed)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for g, k in zip(names, alloc):
        if k:
            chosen += [int(x) for x in rng.choice(groups[g], size=k, replace=False)]
    return sorted(chosen)


# -- renderings -------------------------------------------------------------------------------------

PLAN_COLUMNS = ("method", "goal", "n", "n_exact", "kappa", "kappa_null", "kappa_lower", "kappa_upper", "power")


def _num(x: float) -> str:
    """A planning number at the precision of its inputs (3 decimals at most, no trailing zeros):
    ``0.2``, ``0.198``, never ``0.197826``."""
    return f"{round(float(x), 3):g}"


#: simulated studies per n of an assurance plan (``plan size --assurance``): enough that the share's
#: 95% lower confidence bound lies within about 0.5 percentage points of the share at P = 0.8
ASSURANCE_SIMULATIONS = 20000
#: at most this many batches of ``simulations`` studies at one size, while the share's bounds straddle P
ASSURANCE_MAX_BATCHES = 16
#: the seed of the one fixed set of simulated studies every assurance plan uses (none given): the same
#: plan gives the same n on every run, whatever seed the rest of a session uses
ASSURANCE_STREAM = 34
#: confidence of the lower bound an assurance plan's share must reach (one-sided, Wilson score)
ASSURANCE_CONFIDENCE = 0.95

#: interval methods of the agreement engine's rows (``ci_method``) the assurance simulation can
#: compute for a batch of tables, and the words that name them
_SIMULABLE = {
    "asymptotic": "Wald (Fleiss-Cohen-Everitt SE)",
    "wald": "Wald (Fleiss-Cohen-Everitt SE)",
    "wilson": "Wilson score at the effective sample size (Fleiss-Cohen-Everitt SE; Korn & Graubard 1998)",
}


def report_interval_method(statistic: str = "cohen_kappa") -> str:
    """The interval method the agreement engine reports by default for ``statistic`` (two raters):
    the ``ci_method`` of its row for a small study, asked of :func:`goldboard.analysis.agreement.agreement`
    itself, so an assurance plan follows the report when the default changes."""
    row = _engine_row(np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]), statistic)
    return str(row.get("ci_method") or "")


def _engine_row(table: np.ndarray, statistic: str = "cohen_kappa") -> dict:
    """The agreement engine's overall row of ``statistic`` for a two-rater ``table`` (K x K counts)."""
    import pandas as pd

    from goldboard.analysis.agreement import agreement

    k = table.shape[0]
    recs, item = [], 0
    for i in range(k):
        for j in range(k):
            for _ in range(int(table[i, j])):
                recs += [(f"i{item}", "a", f"c{i}"), (f"i{item}", "b", f"c{j}")]
                item += 1
    df = pd.DataFrame(recs, columns=["item_id", "rater", "value"])
    res = agreement(df, "label", categories=[f"c{i}" for i in range(k)])
    return next(
        r
        for r in res["statistics"]
        if r["statistic"] == statistic and r.get("group") is None and r.get("weights") in ("none", None)
    )


def report_limits(tables, alpha_side: float, method: str) -> tuple[np.ndarray, np.ndarray]:
    """The lower and upper limits the report prints for each two-rater table ``(..., K, K)``, at
    one-sided level ``alpha_side`` per side, by the engine's ``method``
    (:func:`report_interval_method`); NaN where the report prints "not estimable" (a zero SE)."""
    from goldboard.analysis.coefficients import cohen_kappa

    if method not in _SIMULABLE:
        raise GoldboardError(
            f"the report's interval for Cohen's kappa is {method!r}, which the assurance simulation cannot compute; "
            "plan for the expected value instead (no assurance)",
            param="assurance",
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        est = cohen_kappa(np.asarray(tables, dtype=float))
    v, se = np.asarray(est.value, dtype=float), np.asarray(est.se, dtype=float)
    z = ndtri(1 - alpha_side)
    if method == "wilson":
        from goldboard.analysis.intervals import wilson

        n = np.asarray(tables, dtype=float).sum(axis=(-2, -1))
        with np.errstate(divide="ignore", invalid="ignore"):
            lo, hi = wilson(v, se, n, -1.0, 1.0, z=z)
        bad = ~(np.isfinite(v) & np.isfinite(se))
        return np.where(bad, np.nan, lo), np.where(bad, np.nan, hi)
    ok = np.isfinite(v) & np.isfinite(se) & (se > 0)
    lo = np.where(ok, np.clip(v - z * se, -1.0, 1.0), np.nan)
    hi = np.where(ok, np.clip(v + z * se, -1.0, 1.0), np.nan)
    return lo, hi


def _check_report_limits(tables: np.ndarray, method: str) -> None:
    """The simulated 95% limits equal the engine's own on a few of the simulated tables: a plan never
    simulates an interval other than the one the report prints."""
    lo, hi = report_limits(tables, 0.025, method)
    for t, a, b in zip(tables, lo, hi):
        row = _engine_row(t)
        got = (row.get("ci_low"), row.get("ci_high"))
        if a != a:  # not estimable here: the engine prints no interval (or a collapsed one)
            continue
        if got[0] is None or abs(got[0] - a) > 1e-9 or abs(got[1] - b) > 1e-9:
            raise GoldboardError(
                f"the simulated interval ({a:.4f} to {b:.4f}) is not the report's ({got[0]} to {got[1]}, "
                f"{row.get('ci_method')}); the assurance plan cannot promise what the report shows",
                param="assurance",
            )


def _straddles(hits: int, total: int, target: float) -> bool:
    """Whether the two-sided 99% Wilson bounds of ``hits / total`` still hold ``target`` between them."""
    return wilson_lower(hits, total, 0.995) < target < 1 - wilson_lower(total - hits, total, 0.995)


def wilson_lower(hits: int, total: int, confidence: float = ASSURANCE_CONFIDENCE) -> float:
    """One-sided Wilson score lower confidence bound of a share ``hits / total``."""
    if total <= 0:
        return 0.0
    z = ndtri(confidence)
    p = hits / total
    centre = p + z * z / (2 * total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return max(0.0, (centre - half) / (1 + z * z / total))


class _Studies:
    """Simulated studies of the plan's model, drawn in batches of ``batch`` studies whose items come
    in blocks with seeds of their own ``(seed, batch, block)``: the study of ``n`` items is the first
    ``n`` items of each study (common random numbers), so the share meeting the target changes with
    ``n`` only through the items added, and the same seed gives the same tables whatever the order
    the sizes are asked in."""

    BLOCK = 16

    def __init__(self, plan: SampleSizePlan, batch: int, seed: int):
        self.p = cell_table(plan.kappa, np.asarray(plan.prevalences, dtype=float)).ravel()
        self.k = len(plan.prevalences)
        self.s, self.seed = int(batch), int(seed)

    def _counts(self, cells: np.ndarray) -> np.ndarray:
        kk = self.k * self.k
        idx = cells + (np.arange(self.s) * kk)[:, None]
        return np.bincount(idx.ravel(), minlength=self.s * kk).reshape(self.s, kk)

    def tables(self, n: int, batch: int = 0) -> np.ndarray:
        """The tables ``(batch, K, K)`` of the first ``n`` items of the studies of batch ``batch``."""
        t = np.zeros((self.s, self.k * self.k), dtype=np.int64)
        for b, start in enumerate(range(0, int(n), self.BLOCK)):
            rng = np.random.default_rng([self.seed, int(batch), b])
            cells = rng.choice(self.k * self.k, size=(self.s, self.BLOCK), p=self.p)
            t += self._counts(cells[:, : min(self.BLOCK, int(n) - start)])
        return t.reshape(self.s, self.k, self.k).astype(float)


#: the most 2 x 2 tables the exact share may enumerate at twice the expected-value ``n``; a two-category
#: plan with more (large ``n``) is simulated instead
EXACT_MAX_TABLES = 6_000_000
#: the exact share enumerates each cell count within Bernstein's tail bound of its mean for this
#: probability per side (``t = c/3 + sqrt(c^2/9 + 2 c var)``, ``c = ln(1/tail)``): the tables left out
#: hold under ``6 * tail`` (< 1e-13) of the probability and count as misses, so the share is never
#: overstated
_EXACT_TAIL = 1e-14
_EXACT_CHUNK = 400_000


def _exact_ranges(plan: SampleSizePlan, n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    p = cell_table(plan.kappa, np.asarray(plan.prevalences, dtype=float)).ravel()
    c = -math.log(_EXACT_TAIL)
    ranges = []
    for q in p[:3]:
        m = n * q
        t = c / 3 + math.sqrt(c * c / 9 + 2 * c * n * q * (1 - q))
        ranges.append(np.arange(max(0, math.floor(m - t)), min(n, math.ceil(m + t)) + 1))
    return p, ranges


def exact_table_count(plan: SampleSizePlan, n: int) -> int:
    """How many 2 x 2 tables :func:`exact_share` enumerates at ``n`` items (at most; before dropping
    impossible ones)."""
    return math.prod(len(r) for r in _exact_ranges(plan, n)[1])


def exact_share(plan: SampleSizePlan, n: int, method: str) -> float:
    """The exact probability that a study of ``n`` items meets a two-category CI plan's target with
    the report's interval ``method``: every 2 x 2 table (its first three cells within Bernstein's
    bound of their means, :data:`_EXACT_TAIL`) weighted by its multinomial probability under the
    common-correlation model.  Tables left out count as misses, so the share is never overstated."""
    p, (ra, rb, rc) = _exact_ranges(plan, int(n))
    logp = np.log(np.where(p > 0, p, 1e-300))
    lg = np.array([math.lgamma(i + 1) for i in range(int(n) + 1)])
    step = max(1, _EXACT_CHUNK // (len(rb) * len(rc)))
    met = 0.0
    for i in range(0, len(ra), step):
        a, b, c = (x.ravel() for x in np.meshgrid(ra[i : i + step], rb, rc, indexing="ij"))
        keep = a + b + c <= n
        t = np.stack([a[keep], b[keep], c[keep], int(n) - (a + b + c)[keep]], axis=1)
        w = np.exp(lg[int(n)] - lg[t].sum(axis=1) + (t * logp).sum(axis=1))
        met += float(w[_meets(plan, t.reshape(-1, 2, 2).astype(float), method)].sum())
    return met


def _smallest(ok, start: int, max_n: int, assurance: float) -> int:
    """The size where ``ok`` turns true: doubling from ``start``, then bisecting."""
    lo, hi = 1, max(int(start), 2)
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > max_n:
            raise GoldboardError(f"{assurance:g} is not reached with {max_n} items for this plan", param="assurance")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _exact_assured(plan: SampleSizePlan, assurance: float, method: str, max_n: int) -> SampleSizePlan:
    """:func:`assured_sample_size` for two categories: the exact share, no simulation."""
    seen: dict[int, float] = {}

    def ok(n: int) -> bool:
        if n not in seen:
            seen[n] = exact_share(plan, n, method)
        return seen[n] >= assurance

    hi = _smallest(ok, plan.n, max_n, assurance)
    before = seen.get(hi - 1, exact_share(plan, hi - 1, method) if hi > 1 else None)
    return replace(
        plan,
        method=f"exact distribution of the report's interval, {_SIMULABLE[method]}",
        n=hi,
        n_exact=float(hi),
        assurance=assurance,
        assurance_simulated=seen[hi],
        interval=_SIMULABLE[method],
        n_expected=plan.n,
        warnings=_small_cells(np.asarray(plan.prevalences), hi),
        exact=True,
        share_before=before,
    )


def assured_sample_size(
    plan: SampleSizePlan,
    assurance: float,
    simulations: int = ASSURANCE_SIMULATIONS,
    seed: int | None = None,
    max_n: int = 20000,
) -> SampleSizePlan:
    """The smallest ``n`` at which a confidence-interval plan's target (``plan.goal == "ci"``) is
    met with probability ``assurance``, for the interval the report prints.

    Two categories (and at most :data:`EXACT_MAX_TABLES` tables at twice the expected ``n``): the
    probability is exact (:func:`exact_share`: every 2 x 2 table of ``n`` items weighted by its
    multinomial probability), so ``n`` is the smallest size whose exact share reaches
    ``assurance`` where the search (doubling from the expected-value ``n``, then bisecting) turns;
    ``simulations`` and ``seed`` play no part and ``n`` cannot move with a seed.

    Otherwise a seeded simulation: ``simulations`` studies of ``n`` items from the Donner-Eliasziw
    common-correlation model (the plan's kappa and prevalences), each analysed with the agreement
    engine's default interval for Cohen's kappa (:func:`report_interval_method`; checked equal to
    the engine's own limits on some of the simulated tables).  The target: the one-sided ``1 -
    alpha`` lower limit at least ``kappa_lower``; or, two-sided, a ``1 - alpha`` interval no wider
    than ``kappa_upper - kappa_lower``; a study whose interval is not estimable misses it.  ``n``
    is the smallest size whose share of studies meeting the target has a one-sided 95% Wilson
    lower confidence bound of at least ``assurance``.  The studies of every size share their items
    (:class:`_Studies`).  The studies are one fixed set (:data:`ASSURANCE_STREAM`) unless ``seed``
    is given; other sets can put the smallest size an item or two apart where the share lies within
    its Monte Carlo error of ``assurance`` (``unsettled``; ``benchmarks/bench_assurance.py``)."""
    if plan.goal != "ci":
        raise ParamError("{assurance}: applies to a confidence-interval goal ({kappa_lower} or {width})")
    assurance = _unit("assurance", assurance)
    if int(simulations) < 100:
        raise GoldboardError(f"must be at least 100, got {simulations!r}", param="simulations")
    method = report_interval_method("cohen_kappa")
    studies = _Studies(plan, simulations, ASSURANCE_STREAM if seed is None else seed)
    _check_report_limits(studies.tables(max(plan.n, 10))[:8], method)
    if len(plan.prevalences) == 2 and exact_table_count(plan, 2 * max(plan.n, 2)) <= EXACT_MAX_TABLES:
        return _exact_assured(plan, assurance, method, max_n)
    seen: dict[int, tuple[int, int]] = {}

    def ok(n: int) -> bool:
        """The share at ``n`` is settled above ``assurance`` (its lower bound reaches it); more batches
        are simulated (up to ``MAX_BATCHES``) while the two-sided 99% bounds still straddle it."""
        hit, total = seen.get(n, (0, 0))
        while True:
            if total and not _straddles(hit, total, assurance):
                break
            if total >= ASSURANCE_MAX_BATCHES * int(simulations):
                break
            hit += _hits_at(plan, studies.tables(n, total // int(simulations)), method)
            total += int(simulations)
        seen[n] = (hit, total)
        return wilson_lower(hit, total) >= assurance

    hi = _smallest(ok, plan.n, max_n, assurance)
    unsettled = tuple(m for m in (hi - 1, hi) if m in seen and _straddles(*seen[m], assurance))
    return replace(
        plan,
        method=f"simulation of the report's interval, {_SIMULABLE[method]}",
        n=hi,
        n_exact=float(hi),
        assurance=assurance,
        assurance_simulated=seen[hi][0] / seen[hi][1],
        assurance_lower=wilson_lower(*seen[hi]),
        interval=_SIMULABLE[method],
        simulations=seen[hi][1],
        seed=None if seed is None else int(seed),
        n_expected=plan.n,
        warnings=_small_cells(np.asarray(plan.prevalences), hi),
        unsettled=unsettled,
        unsettled_studies=max((seen[m][1] for m in unsettled), default=None),
    )


def _meets(plan: SampleSizePlan, tables: np.ndarray, method: str) -> np.ndarray:
    """Which of the tables meet a CI plan's target with the report's interval (not estimable: a miss)."""
    if plan.kappa_upper is None:
        lower, _ = report_limits(tables, plan.alpha, method)
        ok = lower >= plan.kappa_lower
    else:
        lower, upper = report_limits(tables, plan.alpha / 2, method)
        ok = (upper - lower) <= (plan.kappa_upper - plan.kappa_lower) + 1e-12
    return np.nan_to_num(ok, nan=0.0).astype(bool)


def _hits_at(plan: SampleSizePlan, tables: np.ndarray, method: str) -> int:
    """How many of the simulated studies (``tables``) meet a CI plan's target with the report's interval."""
    return int(np.sum(_meets(plan, tables, method)))


def _assurance_at(plan: SampleSizePlan, n: int, simulations: int, seed: int) -> float:
    """Share of ``simulations`` seeded studies of ``n`` items that meet a CI plan's target."""
    method = report_interval_method("cohen_kappa")
    return _hits_at(plan, _Studies(plan, simulations, seed).tables(n), method) / int(simulations)


def cell_table(kappa: float, props: Sequence[float]) -> np.ndarray:
    """The two raters' K x K cell probabilities under the common-correlation model."""
    p = np.asarray(props, dtype=float)
    table = (1 - kappa) * np.outer(p, p)
    table[np.diag_indices(len(p))] += kappa * p
    return table


def _goal_text(p: SampleSizePlan) -> str:
    if p.goal == "alpha_min":
        return f"alpha >= {p.alpha_min:g} (least frequent category p = {p.least_frequent:g}; {p.n_values} ratings)"
    if p.goal == "power":
        return (
            f"test H0 kappa={p.kappa_null:g} vs {p.kappa:g}, power {p.power:g}, {'two' if p.two_sided else 'one'}-sided"
        )
    if p.kappa_upper is None:
        how = f"with probability {p.assurance:g}" if p.assurance is not None else "expected"
        return f"lower limit >= {_num(p.kappa_lower)} (one-sided), {how}"
    width = _num(p.kappa_upper - p.kappa_lower)
    if p.assurance is not None:
        return f"CI width <= {width} (two-sided), with probability {p.assurance:g}"
    return f"expected CI within {_num(p.kappa_lower)} to {_num(p.kappa_upper)} (width {width}, two-sided)"


def plan_sentence(plans: Sequence[SampleSizePlan], pilot: dict | None = None) -> str:
    """The methods sentence of the primary (first) plan, prefixed by what came from the pilot
    (``pilot["used"]``, from ``plan_inputs_from_study``: the inputs taken from the pilot round;
    absent: all of them) and what was given instead."""
    sentence = plans[0].sentence() if plans else ""
    if not pilot or not plans:
        return sentence
    used = pilot.get("used", ["least_frequent"] if plans[0].goal == "alpha_min" else ["kappa", "prevalences"])
    least = min(zip(pilot["prevalences"], pilot["categories"]))
    where = f"pilot round {pilot['round']} ({pilot['n_items']} items"
    if plans[0].goal == "alpha_min":
        if "least_frequent" not in used or abs(least[0] - plans[0].least_frequent) > 1e-12:
            return sentence  # an explicit probability, not the pilot's
        return (
            f"Planning inputs came from {where}; least frequent category {least[1]!r}, {least[0]:.2f} of the ratings). "
            + sentence
        )
    observed = "not estimable" if pilot.get("kappa") is None else f"{pilot['kappa']:.2f}"
    if "kappa" in used and "prevalences" in used:
        return f"Planning inputs came from {where}, observed kappa {observed}). " + sentence
    pilot_prev = ", ".join(f"{c} {x:.2f}" for c, x in zip(pilot["categories"], pilot["prevalences"]))
    if "prevalences" in used:
        return (
            f"The expected category prevalences came from {where}); the expected kappa of {_num(plans[0].kappa)} "
            f"was set for the plan, not taken from the pilot (observed kappa {observed}). " + sentence
        )
    if "kappa" in used:
        return (
            f"The expected kappa came from {where}, observed kappa {observed}); the category prevalences were set "
            f"for the plan, not taken from the pilot (observed {pilot_prev}). " + sentence
        )
    return sentence


def plan_used_scipy(record: dict) -> bool:
    """Whether scipy computed a recorded plan (``plan_record``): a power plan solves the non-central
    chi-square (``scipy.stats``) and Flack's linear program (``scipy.optimize``); the interval plans,
    their assurance simulation and Krippendorff's minimum are closed formulas on numpy and the
    standard library's normal quantile (``ndtri``). The methods paragraph names scipy only then."""
    return record.get("goal") == "power"


def plan_record(plans: Sequence[SampleSizePlan], pilot: dict | None = None) -> dict:
    """What a study records of its plan: the sentence and the primary plan's key numbers."""
    p = plans[0]
    rec = {"sentence": plan_sentence(plans, pilot), "method": p.method, "goal": p.goal, "n": p.n}
    rec["two_sided"] = bool(p.two_sided or (p.goal == "ci" and p.kappa_upper is not None))
    for key in ("kappa_lower", "kappa_upper", "alpha", "assurance", "n_expected", "simulations", "seed"):
        if getattr(p, key) is not None:
            rec[key] = getattr(p, key)
    if p.kappa is not None:
        rec["kappa"] = p.kappa
    if p.alpha_min is not None:
        rec.update(alpha_min=p.alpha_min, least_frequent=p.least_frequent, n_values=p.n_values)
    if pilot:
        rec["pilot_round"] = pilot["round"]
        used = pilot.get("used", ["least_frequent"] if p.goal == "alpha_min" else ["kappa", "prevalences"])
        rec["pilot_inputs"] = ", ".join(used)  # the inputs the pilot gave; the others were typed
    return rec


def render_plans(plans: Sequence[SampleSizePlan], fmt: str = "table", pilot: dict | None = None) -> str:
    """``table`` (plain text), ``markdown`` or ``json`` (``{"pilot", "plans", "sentence"}``); the
    first plan is the primary one and gives the methods sentence."""
    sentence = plan_sentence(plans, pilot)
    if fmt == "json":
        return (
            json.dumps({"pilot": pilot, "plans": [p.to_dict() for p in plans], "sentence": sentence}, indent=2) + "\n"
        )
    head = ("Method", "Goal", "Items (n)", "Exact", "Prevalences", "Sig. level")
    rows = [
        (p.method, _goal_text(p), p.n, f"{p.n_exact:.1f}", ", ".join(f"{x:.3f}" for x in p.prevalences), f"{p.alpha:g}")
        for p in plans
    ]
    notes = [w for p in plans for w in p.warnings]
    refs = list(dict.fromkeys(p.reference for p in plans))
    if fmt == "markdown":
        out = md_table(head, rows, right=(2, 3)) + "\n\n" + sentence + "\n"
        out += "".join(f"\n- Note: {w}" for w in notes)
        return out + "\n\nReferences: " + " | ".join(refs) + "\n"
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = "\n".join(lines) + "\n\n" + sentence + "\n"
    if pilot and pilot.get("dropped_categories"):
        out += f"Note: categories not used in the pilot were left out: {', '.join(pilot['dropped_categories'])}\n"
    out += "".join(f"Note: {w}\n" for w in notes)
    out += "References:\n" + "".join(f"  {r}\n" for r in refs)
    return out
