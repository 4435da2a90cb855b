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
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass

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


def evaluate_round(results: dict[str, dict], rules: list[Rule], fields: list[str]) -> dict:
    """One round: ``{"checks": [{field, rule, statistic, value, ci_low, ci_high, n_items, tested, met}],
    "met": bool}``.  A statistic that could not be estimated fails its rule."""
    checks = []
    for f in fields:
        res = results.get(f)
        for rule in rules:
            row = pick_statistic(res, rule.statistic) if res else None
            est = {k: (row or {}).get(k) for k in ("value", "ci_low", "ci_high", "n_items")}
            tested = est[PARTS[rule.part]]
            checks.append(
                {
                    "field": f,
                    "rule": rule.text,
                    "statistic": (row or {}).get("statistic", STATISTICS[rule.statistic][0]),
                    **est,
                    "ci_method": (row or {}).get("ci_method"),
                    "tested": tested,
                    "met": rule.holds(tested),
                }
            )
    return {"checks": checks, "met": bool(checks) and all(c["met"] for c in checks)}


def calibration_verdict(rounds: list[dict]) -> dict:
    """Over the rounds in order (each ``{"round", "met", ...}``): the first round that met the
    rules (``met_at``) and the verdict of the latest round."""
    met_at = next((r["round"] for r in rounds if r["met"]), None)
    latest = rounds[-1] if rounds else None
    return {
        "met_at": met_at,
        "verdict": MET if latest and latest["met"] else CONTINUE,
        "latest_round": latest["round"] if latest else None,
    }
