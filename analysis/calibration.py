"""Calibration rounds with a stopping rule (pure: agreement contract dicts in, verdicts out).

A rule reads ``<statistic>_<part> <op> <number>``, e.g. ``kappa_lower>=0.6``:

=============  ===========================================================
statistic      ``kappa`` (Cohen's for two raters, Fleiss' for more; unweighted),
               ``alpha`` (Krippendorff's, at the field's level), ``ac1`` (Gwet's)
part           ``lower`` (the 95% CI's lower limit), ``value`` (the estimate),
               ``upper`` (the upper limit)
op             ``>=``, ``>``, ``<=``, ``<``
=============  ===========================================================

Demanding the *lower* limit rather than the estimate is what makes a small calibration
round safe to stop on: the rule is met only when the round's data make agreement below the
threshold implausible (at the 95% level), not when a lucky estimate crosses it.  A round
meets the rules when every rule holds for every field named; the calibration is done at the
first round that meets them.

Error control (what a "rule met" promises)
------------------------------------------
Checking the rule after every round is a sequential test: each look is another chance to stop
falsely.  A calibration therefore plans a maximum number of looks ``K`` (``--max-looks``,
default :data:`DEFAULT_MAX_LOOKS`) and tests every look at the Bonferroni-adjusted one-sided
level ``0.025 / K`` (the 95% rule's 2.5% per side, split over the looks), so the chance of a false
stop over all ``K`` looks is at most 2.5% -- where each look's limit keeps its level.  For Cohen's
kappa (below) it does.  The plain Wald limits of Fleiss' kappa, AC1 and alpha do not: they
undercover in the tail at 30-200 items, and a seeded simulation at the boundary measured false
stops over 5 looks up to 7.5% (Fleiss), 14.5% (AC1) and 14.8% (alpha).  Their critical value is
therefore widened for small ``n`` by a factor fitted to that simulation (:func:`wald_critical`,
:data:`WALD_WIDENING`), which brings every simulated scenario to 2.5% or below for 1 and 5 looks
(``benchmarks/bench_stopping.py``); beyond 5 planned looks this is not checked and the verdict
says so.

The tested limit is the one that stays informative at the boundary:

* Cohen's kappa (two raters; ``kappa_lower``/``kappa_upper``): the more conservative of two
  limits (:func:`kappa_rule_limits`).  The goodness-of-fit confidence limit of Donner & Eliasziw
  (1992, Stat Med 11:1511-19) under the common-correlation model -- cells "both chose category j"
  and "disagree", prevalences estimated from both raters, the limit where the chi-square (1 df)
  statistic reaches its ``1 - 2 * level`` quantile -- does not collapse to the estimate when the
  raters agree perfectly (6 of 6 agreements on two labels: 0.515 at the 2.5% level, not 1.000).
  The Wald limit with the Fleiss-Cohen-Everitt SE does not lean on that model, so where the model
  misfits (more than two categories with unequal agreement per category) the rule does not
  become narrower than Wald; where the model is rejected at the estimate (no goodness-of-fit
  limit) the Wald limit alone is tested and the check says the model misfits
  (:func:`gof_misfits`); a collapsed Wald interval (zero SE) is ignored.
* every other statistic: the estimate -/+ :func:`wald_critical` times its SE (the bootstrap SD
  with ``--bootstrap``): ``z(1 - level)`` widened by ``1 + B / sqrt(n)``.

A look whose limit cannot be computed (a statistic that is not estimable, a zero or missing
SE, one category only) is "cannot be decided": it never meets a rule.  The false-stop rate
(true kappa 0.5, rule ``kappa_lower>=0.6``, 1-5 looks; 12 items over 4 categories, and a binary
label with prevalence 0.1) is checked by a seeded simulation of this code in
``tests/test_calibration_looks.py``, with the power to stop when kappa is 0.9.
"""

from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass

import numpy as np

from goldboard.errors import GoldboardError

#: rule statistic -> agreement-engine statistic names, in preference order
STATISTICS = {
    "kappa": ("cohen_kappa", "fleiss_kappa"),
    "alpha": ("krippendorff_alpha",),
    "ac1": ("gwet_ac1",),
}
PARTS = {"lower": "ci_low", "value": "value", "upper": "ci_high"}
OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
_RULE_RE = re.compile(r"^\s*([a-z0-9]+)_(lower|value|upper)\s*(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$")

CONTINUE = "continue calibrating"
MET = "rule met"
UNDECIDED = "cannot be decided"

#: why a kappa rule tests the Wald limit alone
MISFIT = "the common-correlation model misfits (goodness-of-fit test at the estimate rejects it)"

#: planned maximum number of looks when none is given
DEFAULT_MAX_LOOKS = 5
#: the one-sided error rate of the whole calibration (the 95% rule's lower side)
NOMINAL = 0.025

#: the most planned looks the simulation in ``benchmarks/bench_stopping.py`` checks the widened Wald
#: limits for (1 and 5 looks are fitted, 5 checked)
MEASURED_LOOKS = 5

#: why a kappa rule tests the Wald limit alone
MISFIT = "the common-correlation model misfits (goodness-of-fit test at the estimate rejects it)"

#: planned maximum number of looks when none is given
DEFAULT_MAX_LOOKS = 5
#: the one-sided error rate of the whole calibration (the 95% rule's lower side)
NOMINAL = 0.025

#: the largest false-stop rate over 5 planned looks a seeded simulation at the boundary measured per
#: statistic (``benchmarks/bench_stopping.py``: rule ``STAT_lower>=0.6``, 2-3 raters, 30-200 items a
#: round, balanced, skewed and category-specific agreement; rounded up to 0.01).  Only Cohen's kappa
#: (goodness-of-fit/Wald limit) keeps the Bonferroni level; the Wald limits of the others do not.
MEASURED_FALSE_STOP = {"cohen_kappa": NOMINAL, "fleiss_kappa": 0.08, "gwet_ac1": 0.15, "krippendorff_alpha": 0.15}
#: the looks :data:`MEASURED_FALSE_STOP` was measured for
MEASURED_LOOKS = 5


@dataclass(frozen=True)
class Rule:
    statistic: str
    part: str
    op: str
    threshold: float

    @property
    def text(self) -> str:
        return f"{self.statistic}_{self.part}{self.op}{self.threshold:g}"

    def holds(self, x: float | None) -> bool:
        return x is not None and x == x and OPS[self.op](x, self.threshold)


def parse_rule(text: str) -> Rule:
    """``"kappa_lower>=0.6"`` -> :class:`Rule`; a one-line error naming what is wrong."""
    m = _RULE_RE.match(text or "")
    if not m:
        raise GoldboardError(
            f"{text!r}: write STATISTIC_PART OP NUMBER, e.g. kappa_lower>=0.6 "
            f"(statistics: {', '.join(STATISTICS)}; parts: {', '.join(PARTS)})",
            param="rule",
        )
    stat, part, op, num = m.groups()
    if stat not in STATISTICS:
        raise GoldboardError(f"{text!r}: unknown statistic {stat!r} (use {', '.join(STATISTICS)})", param="rule")
    rule = Rule(stat, part, op, float(num))
    _check_meaningful(text, rule)
    return rule


#: every rule statistic (kappa, alpha, AC1) and its limits lie in [-1, 1]
STAT_RANGE = (-1.0, 1.0)


def _check_meaningful(text: str, rule: Rule) -> None:
    """A rule that no round can meet (``kappa_upper>=1.5``, ``kappa_lower>1``) or that every
    round meets (``kappa_lower>=-1``, ``alpha_value<=1``) decides nothing: a one-line error."""
    lo, hi = STAT_RANGE
    t, op = rule.threshold, rule.op
    never = (op in (">=", ">") and (t > hi or (t == hi and op == ">"))) or (
        op in ("<=", "<") and (t < lo or (t == lo and op == "<"))
    )
    always = (op in (">=", ">") and (t < lo or (t == lo and op == ">="))) or (
        op in ("<=", "<") and (t > hi or (t == hi and op == "<="))
    )
    if never or always:
        raise GoldboardError(
            f"{text!r}: {rule.statistic} lies between {lo:g} and {hi:g}, so this rule "
            f"{'can never be met' if never else 'is met by every round'}; give a threshold inside that range "
            f"(e.g. {rule.statistic}_lower>=0.6)",
            param="rule",
        )


_PART_ORDER = {"lower": 0, "value": 1, "upper": 2}


def check_rules(rules: list[Rule]) -> list[Rule]:
    """The rules of one call, each once (a rule given twice is one rule); two rules on one
    statistic that no round can meet together (``kappa_lower>=0.6`` and ``kappa_lower<0.5``, or
    ``kappa_upper<0.5`` with ``kappa_lower>=0.6``: the lower limit never exceeds the estimate,
    nor the estimate the upper limit) are a one-line error naming both."""
    out = list(dict.fromkeys(rules))
    for a in out:
        for b in out:
            if a.statistic != b.statistic or a.op not in (">=", ">") or b.op not in ("<=", "<"):
                continue
            if _PART_ORDER[a.part] > _PART_ORDER[b.part]:
                continue
            if a.threshold > b.threshold or (a.threshold == b.threshold and (a.op == ">" or b.op == "<")):
                why = "" if a.part == b.part else f" ({a.statistic}_{a.part} never exceeds {b.statistic}_{b.part})"
                raise GoldboardError(
                    f"{a.text!r} and {b.text!r} contradict each other: no round can meet both{why}; "
                    f"give the rule you mean",
                    param="rule",
                )
    return out


def pick_statistic(result: dict, statistic: str) -> dict | None:
    """The overall row of ``statistic`` in one agreement contract dict: all raters,
    unweighted (alpha: at the field's level), ungrouped."""
    rows = [r for r in result["statistics"] if r.get("group") is None]
    n_raters = len(result["raters"])
    for name in STATISTICS[statistic]:
        for r in rows:
            if r["statistic"] != name or len(r["raters"]) != n_raters:
                continue
            if name == "krippendorff_alpha":
                if r.get("level") not in (result.get("level"), None):
                    continue
            elif r.get("weights") not in ("none", None):
                continue
            return r
    return None


def stated_false_stop(statistic: str, max_looks: int) -> float | None:
    """The false-stop rate over ``max_looks`` planned looks a rule on ``statistic`` keeps: 0.025 for
    Cohen's kappa (its goodness-of-fit/Wald limit), and for the others (Wald limits widened for small
    ``n``, :func:`wald_critical`) up to the :data:`MEASURED_LOOKS` looks the simulation in
    ``benchmarks/bench_stopping.py`` checks; None beyond them (not checked)."""
    if statistic == "cohen_kappa" or int(max_looks) <= MEASURED_LOOKS:
        return NOMINAL
    return None


#: the small-sample widening of each statistic's Wald critical value (:func:`wald_critical`), fitted
#: by the seeded simulation at the boundary in ``benchmarks/bench_stopping.py --fit`` (the largest
#: factor any scenario needed, for 1 and for 5 looks)
WALD_WIDENING = {"fleiss_kappa": 3.1, "gwet_ac1": 2.6, "krippendorff_alpha": 4.8}


def wald_critical(statistic: str, level: float, n_items: int) -> float:
    """The critical value a rule's Wald limit uses at one-sided ``level`` with ``n_items`` items:
    ``z(1 - level) * (1 + B / sqrt(n))`` with the statistic's :data:`WALD_WIDENING` ``B`` -- the
    plain ``z`` undercovers in the tail at 30-200 items (false stops over 5 looks up to 15% for
    AC1), so each statistic's ``z`` is widened by the factor the simulation needed."""
    from scipy import stats

    z = float(stats.norm.ppf(1 - level))
    b = WALD_WIDENING.get(statistic, 0.0)
    return z * (1 + b / math.sqrt(max(int(n_items or 1), 1)))


def look_level(max_looks: int) -> float:
    """The Bonferroni-adjusted one-sided level of each look: ``0.025 / max_looks``."""
    if int(max_looks) < 1:
        raise GoldboardError(f"max_looks must be at least 1, got {max_looks}", param="max_looks")
    return NOMINAL / int(max_looks)


def _gof_x2(k, p, obs, n):
    """Donner-Eliasziw goodness-of-fit chi-square of kappa ``k`` (batch ``(...)``) for tables with
    category prevalences ``p`` ``(..., K)``, observed cell shares ``obs`` ``(..., K + 1)`` (both
    chose category j; disagree) and ``n`` items."""
    pjj = p * p + k[..., None] * p * (1 - p)
    pd_ = (1 - k) * (1 - (p * p).sum(axis=-1))
    cells = np.concatenate([pjj, pd_[..., None]], axis=-1)
    used = np.concatenate([p > 0, np.ones_like(pd_, dtype=bool)[..., None]], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(cells > 0, (obs - cells) ** 2 / np.where(cells > 0, cells, 1), np.where(obs > 0, np.inf, 0))
    return n * np.where(used, terms, 0).sum(axis=-1)


def gof_limits(tables, level: float, side: str = "lower") -> np.ndarray:
    """The one-sided ``level`` goodness-of-fit confidence limit of Cohen's kappa for each
    two-rater table in ``tables`` ``(..., K, K)`` (Donner & Eliasziw 1992; the module docstring):
    the kappa where the chi-square statistic reaches its ``1 - 2 * level`` quantile (1 df),
    searched by bisection between the estimate and the end of kappa's range.  NaN where it is
    undefined: fewer than 2 items, only one category used, or (more than two categories, rare)
    a model that misfits even at the estimate -- a limit that is then not computed, never the
    estimate itself."""
    from scipy import stats

    t = np.asarray(tables, dtype=float)
    n = t.sum(axis=(-1, -2))
    safe_n = np.where(n > 0, n, 1.0)
    p = (t.sum(axis=-1) + t.sum(axis=-2)) / (2 * safe_n[..., None])
    diag = np.diagonal(t, axis1=-2, axis2=-1)
    obs = np.concatenate([diag, (n - diag.sum(axis=-1))[..., None]], axis=-1) / safe_n[..., None]
    s2 = (p * p).sum(axis=-1)
    valid = (n >= 2) & ((p > 0).sum(axis=-1) >= 2)
    khat = np.where(valid, (diag.sum(axis=-1) / safe_n - s2) / np.where(valid, 1 - s2, 1), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        floor = np.max(np.where(p > 0, -p / np.where(p < 1, 1 - p, 1), -np.inf), axis=-1)
    end = np.maximum(floor, -1.0) + 1e-9 if side == "lower" else np.full_like(khat, 1.0 - 1e-12)
    crit = stats.chi2.ppf(1 - 2 * level, 1)
    out, inside = end.copy(), khat.copy()  # ``inside`` stays within the interval, ``out`` beyond
    reached = _gof_x2(end, p, obs, n) <= crit  # the whole range is inside: the limit is its end
    for _ in range(50):
        mid = (out + inside) / 2
        ok = _gof_x2(mid, p, obs, n) <= crit
        inside, out = np.where(ok, mid, inside), np.where(ok, out, mid)
    fits = _gof_x2(khat, p, obs, n) <= crit  # rare (> 2 categories): the model misfits even at the estimate
    return np.where(valid & fits, np.where(reached, end, inside), np.nan)


def gof_limit(table, level: float, side: str = "lower") -> float | None:
    """:func:`gof_limits` of one table; None when undefined."""
    v = float(gof_limits(np.asarray(table, dtype=float), level, side))
    return None if v != v else v


def kappa_rule_limits(tables, level: float, side: str = "lower") -> np.ndarray:
    """The limit a kappa rule tests for each two-rater table ``(..., K, K)``: the more conservative
    of the goodness-of-fit limit (:func:`gof_limits`, informative at perfect agreement) and the
    Wald limit ``kappa -/+ z(1 - level) SE`` with the Fleiss-Cohen-Everitt SE (which does not lean
    on the common-correlation model, so a misfitting model cannot narrow the limit); the Wald
    limit is ignored where its SE is zero (a collapsed interval).  NaN where the goodness-of-fit
    limit is undefined."""
    from scipy import stats

    from goldboard.analysis.coefficients import cohen_kappa

    t = np.asarray(tables, dtype=float)
    gof = gof_limits(t, level, side)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = cohen_kappa(t)
    value, se = np.asarray(est.value, dtype=float), np.asarray(est.se, dtype=float)
    z = float(stats.norm.ppf(1 - level))
    wald = value - z * se if side == "lower" else value + z * se
    usable = np.isfinite(wald) & (se > 0)
    pick = np.minimum if side == "lower" else np.maximum
    both = np.where(usable, pick(gof, np.where(usable, wald, 0.0)), gof)
    # the model misfits (no goodness-of-fit limit on a table with a usable SE): the Wald limit alone
    return np.where(np.isnan(gof) & usable, np.where(usable, wald, 0.0), both)


def gof_misfits(tables, level: float) -> np.ndarray:
    """Whether the common-correlation model is rejected at the estimate for each two-rater table
    ``(..., K, K)`` (its goodness-of-fit chi-square above the ``1 - 2 * level`` quantile, 1 df), so
    that :func:`gof_limits` has no limit; False where the table has fewer than 2 items or one category."""
    t = np.asarray(tables, dtype=float)
    lower = gof_limits(t, level, "lower")
    n = t.sum(axis=(-1, -2))
    used = ((t.sum(axis=-1) + t.sum(axis=-2)) > 0).sum(axis=-1)
    return np.isnan(lower) & (n >= 2) & (used >= 2)


def best_possible_limit(table, level: float) -> float | None:
    """The goodness-of-fit lower limit had the two raters agreed on every item of ``table`` (same
    category shares): the most a round of this size can show at ``level``."""
    t = np.asarray(table, dtype=float)
    return gof_limit(np.diag((t.sum(axis=0) + t.sum(axis=1)) / 2), level)


def _pair_table(result: dict) -> list | None:
    pairs = [p for p in result.get("confusion", {}).get("pairs", []) if p.get("group") is None]
    return pairs[0]["matrix"] if len(pairs) == 1 else None


def tested_limit(result: dict, row: dict | None, rule: Rule, level: float) -> tuple[float | None, str]:
    """The number a rule tests at one look, and how it was computed; None when it cannot be
    decided (not estimable, degenerate)."""
    if row is None or row.get("value") is None or row["value"] != row["value"]:
        return None, "not estimable"
    if rule.part == "value":
        return float(row["value"]), "estimate (no error control)"
    table = _pair_table(result) if row["statistic"] == "cohen_kappa" and len(row["raters"]) == 2 else None
    if table is not None:
        lim = float(kappa_rule_limits(np.asarray(table, dtype=float), level, rule.part))
        how = f"goodness-of-fit/Wald, the lower of the two, one-sided level {level:.3g}"
        if rule.part == "upper":
            how = how.replace("lower of", "higher of")
        if bool(gof_misfits(np.asarray(table, dtype=float), level)):
            how = f"Wald: {MISFIT}, one-sided level {level:.3g}"
        return (lim, how) if lim == lim else (None, "not estimable (one category only, or a zero SE)")

    se = row.get("se")
    if se is None or se != se or se <= 0:
        return None, "not estimable (zero or missing SE: degenerate table)"
    z = wald_critical(row["statistic"], level, row.get("n_items") or 1)
    sign = -1 if rule.part == "lower" else 1
    widened = " (z widened for small n)" if WALD_WIDENING.get(row["statistic"]) else ""
    return (
        float(row["value"]) + sign * z * float(se),
        f"estimate {'-' if sign < 0 else '+'} {z:.3f} SE{widened}, one-sided level {level:.3g}",
    )


def evaluate_round(
    results: dict[str, dict], rules: list[Rule], fields: list[str], max_looks: int = DEFAULT_MAX_LOOKS
) -> dict:
    """One round (one look): ``{"checks": [{field, rule, statistic, value, ci_low, ci_high,
    n_items, tested, tested_how, level, decided, met}], "met": bool, "decided": bool}``.  A check
    whose limit cannot be computed is undecided and fails its rule."""
    level = look_level(max_looks)
    checks = []
    for f in fields:
        res = results.get(f)
        for rule in rules:
            row = pick_statistic(res, rule.statistic) if res else None
            est = {k: (row or {}).get(k) for k in ("value", "ci_low", "ci_high", "n_items")}
            tested, how = tested_limit(res, row, rule, level) if res else (None, "no ratings")
            best = None
            if "goodness-of-fit" in how and rule.part == "lower" and rule.op in (">=", ">"):
                best = best_possible_limit(_pair_table(res), level)
            checks.append(
                {
                    "field": f,
                    "rule": rule.text,
                    "statistic": (row or {}).get("statistic", STATISTICS[rule.statistic][0]),
                    **est,
                    "ci_method": (row or {}).get("ci_method"),
                    "tested": tested,
                    "tested_how": how,
                    "level": level,
                    "decided": tested is not None,
                    "best_possible": best,
                    "met": rule.holds(tested),
                }
            )
    return {
        "checks": checks,
        "met": bool(checks) and all(c["met"] for c in checks),
        "decided": bool(checks) and all(c["decided"] for c in checks),
    }


def calibration_verdict(rounds: list[dict]) -> dict:
    """Over the rounds in order (each ``{"round", "met", "decided", ...}``): the first round that
    met the rules (``met_at``) and the verdict of the latest round (met, continue, or cannot be
    decided when its limit could not be computed)."""
    met_at = next((r["round"] for r in rounds if r["met"]), None)
    latest = rounds[-1] if rounds else None
    if latest and latest["met"]:
        verdict = MET
    elif latest and not latest.get("decided", True):
        verdict = UNDECIDED
    else:
        verdict = CONTINUE
    return {"met_at": met_at, "verdict": verdict, "latest_round": latest["round"] if latest else None}
