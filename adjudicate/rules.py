"""Schema-declared cross-field rules (``[[rules]]``, see ``docs/schema-format.md``).

A rule says: whenever ``when`` holds for an item, ``then`` must hold too -- e.g. mtb's
``missing_info_needs_insufficiency``: missing information is ticked only with the label
Insufficient Information or Partially Supported.

What a broken rule means depends on whose value it is:

- **a rater's rating** (raw ratings): kept exactly as rated -- raters' ratings are never
  changed -- but reported (a warning at ``pull`` and ``flag``) and sent to adjudication: both
  fields of the item get a flag of kind ``rule`` (:func:`rating_rule_breaks`), so the review
  sheet has a row for each and the adjudicator can decide them together;
- **a decision** (``adjudicate import`` / ``adjudicate pull``): an error naming the cell or
  task, nothing imported (:func:`decision_rule_errors`) -- the gold it would produce breaks
  the rule, counting the item's other gold values (unanimous or decided earlier);
- **gold** (``gold export``): an error naming each item and both fields, nothing written
  (:func:`gold_rule_errors`) -- a backstop for decision logs written before the rule existed.

A rule is evaluated only when both fields have a value: a missing rating or an unresolved
gold value is not a violation (it is already a flag / an unresolved row).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from goldboard.adjudicate.decisions import UNRESOLVED
from goldboard.cases.ratings import RatingGrid, rating_grid
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import Rule, Schema

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass(frozen=True)
class RatingBreak:
    """One rater's rating of one item that breaks a rule."""

    rule: Rule
    item_id: str
    rater: str
    when_value: str
    then_value: str

    def describe(self) -> str:
        r = self.rule
        return (
            f"item {self.item_id}, rater {self.rater}: {r.when.field} {show(self.when_value)} with "
            f"{r.then.field} {show(self.then_value)} breaks rule {r.name} ({r.describe()}); "
            f"kept as rated, flagged for adjudication"
        )


class RuleErrors(GoldboardError):
    """Gold (or decisions about to be logged) break schema rules; ``errors`` lists each."""

    def __init__(self, what: str, errors: list[str]):
        self.errors = errors
        n = len(errors)
        super().__init__(f"{what}: {n} schema rule violation{'s' if n != 1 else ''}; nothing written")


def show(value: Any) -> str:
    """A value for a message: quoted, ``(none)`` for an empty value."""
    text = "" if value is None else str(value)
    return repr(text) if text else "(none)"


# --------------------------------------------------------------------------- raters' ratings


def rule_break_matrix(grid: RatingGrid, rule: Rule) -> np.ndarray:
    """items x raters: the rater's own rating of the item breaks ``rule`` (both fields rated).

    A rule on a field that is not in ``grid`` (not collected, or not adjudicable) never fires."""
    names = {f.name for f in grid.fields}
    shape = (len(grid.items), len(grid.raters))
    if rule.when.field not in names or rule.then.field not in names or not grid.items:
        return np.zeros(shape, dtype=bool)
    vw, vt = grid.values(rule.when.field), grid.values(rule.then.field)
    known = (grid.codes[rule.when.field] >= 0) & (grid.codes[rule.then.field] >= 0)
    out = np.zeros(shape, dtype=bool)
    for i, j in zip(*np.nonzero(known)):
        out[i, j] = rule.broken(vw[i, j], vt[i, j])
    return out


def rating_rule_breaks(grid: RatingGrid, schema: Schema) -> list[RatingBreak]:
    """Every rater's rating (in force) that breaks a schema rule, by rule, item, rater."""
    out = []
    for rule in schema.rules:
        m = rule_break_matrix(grid, rule)
        if not m.any():
            continue
        vw, vt = grid.values(rule.when.field), grid.values(rule.then.field)
        for i, j in zip(*np.nonzero(m)):
            out.append(RatingBreak(rule, grid.items[i], grid.raters[j], vw[i, j], vt[i, j]))
    return out


# --------------------------------------------------------------------------- gold and decisions


def _gold_values(gold: pd.DataFrame) -> dict[tuple[str, str], tuple[str, str]]:
    """(item, field) -> (gold value, where it comes from) for rows that have a gold value."""
    n = len(gold)
    cols = [gold["item_id"].tolist(), gold["field"].tolist()] + [
        gold[c].tolist() if c in gold.columns else [None] * n
        for c in ("method", "gold_value", "adjudicator", "decision_id")
    ]
    out = {}
    for item, field, method, value, adjudicator, decision_id in zip(*cols):  # columns, not records
        if method == "unresolved":
            continue
        if method == "adjudicated":
            src = f"decided by {adjudicator or '?'}" + (f", {decision_id}" if decision_id else "")
        else:
            src = str(method or "")
        out[(str(item), str(field))] = (str(value or ""), src)
    return out


def gold_rule_errors(gold: pd.DataFrame, schema: Schema) -> list[str]:
    """One line per gold item that breaks a rule, naming the item, both fields, their values and
    where each value comes from (unanimous / decided by whom)."""
    if not schema.rules or not len(gold):
        return []
    resolved = gold["field"] if "method" not in gold.columns else gold.loc[gold["method"] != "unresolved", "field"]
    fields = set(resolved.astype(str).unique().tolist())
    if not any(r.when.field in fields and r.then.field in fields for r in schema.rules):
        return []  # no field pair of a rule has gold at all (a whole-column look, before the per-row one)
    values = _gold_values(gold)
    with_field: dict[str, set[str]] = {}  # field -> items with a gold value of it
    for item, field in values:
        with_field.setdefault(field, set()).add(item)
    both = [with_field.get(r.when.field, set()) & with_field.get(r.then.field, set()) for r in schema.rules]
    if not any(both):  # no item has gold for both fields of any rule
        return []
    items = list(dict.fromkeys(gold["item_id"].astype(str)))
    errors = []
    for item in items:
        for rule, can in zip(schema.rules, both):
            if item not in can:
                continue
            w, t = values.get((item, rule.when.field)), values.get((item, rule.then.field))
            if w is None or t is None or not rule.broken(w[0], t[0]):
                continue
            errors.append(
                f"item {item}: {rule.when.field} {show(w[0])} ({w[1]}) with {rule.then.field} {show(t[0])} "
                f"({t[1]}) breaks rule {rule.name} ({rule.describe()}); decide both fields "
                f"(`goldboard adjudicate sheet`)"
            )
    return errors


def check_gold_rules(gold: pd.DataFrame, schema: Schema, what: str = "gold") -> None:
    """Raise :class:`RuleErrors` when gold breaks a schema rule."""
    errors = gold_rule_errors(gold, schema)
    if errors:
        raise RuleErrors(what, errors)


def decision_rule_errors(proposed: Iterable[Any], gold: pd.DataFrame, schema: Schema) -> list[str]:
    """Errors for proposed decisions (``Proposed``: item_id, field, decision, where) whose
    resulting gold -- the proposals over the gold in force -- breaks a rule.  Each error starts
    with the proposal's cell (or task) and names the other field's value and source."""
    proposed = list(proposed)
    if not schema.rules or not proposed:
        return []
    values = _gold_values(gold)
    mine: dict[tuple[str, str], Any] = {}
    for p in proposed:
        key = (p.item_id, p.field)
        mine[key] = p
        if p.decision == UNRESOLVED:
            values.pop(key, None)
        else:
            values[key] = (p.decision, p.where or "this import")
    errors = []
    for item in dict.fromkeys(p.item_id for p in proposed):
        for rule in schema.rules:
            kw, kt = (item, rule.when.field), (item, rule.then.field)
            if kw not in mine and kt not in mine:
                continue
            w, t = values.get(kw), values.get(kt)
            if w is None or t is None or not rule.broken(w[0], t[0]):
                continue
            first = mine.get(kt) or mine[kw]
            other_field, other = (rule.when.field, w) if first is mine.get(kt) else (rule.then.field, t)
            this_value = t[0] if first is mine.get(kt) else w[0]
            hint = (
                ""
                if (item, other_field) in mine
                else f" ({other_field} is not being decided here: choose a {first.field} allowed with it)"
            )
            errors.append(
                f"{first.where or 'item ' + item}: {first.field} {show(this_value)} with {other_field} "
                f"{show(other[0])} ({other[1]}) breaks rule {rule.name} ({rule.describe()}) for item "
                f"{item}{hint}"
            )
    return errors


def rule_warnings(ratings: pd.DataFrame, schema: Schema, raters: list[str], limit: int = 20) -> list[str]:
    """Ratings that break a schema cross-field rule: kept as rated (never changed), reported,
    and flagged for adjudication (see :mod:`goldboard.adjudicate.rules`)."""
    if not schema.rules or not len(ratings):
        return []
    breaks = rating_rule_breaks(rating_grid(ratings, schema, raters), schema)
    out = [b.describe() for b in breaks[:limit]]
    if len(breaks) > limit:
        out.append(f"... and {len(breaks) - limit} more ratings that break a schema rule (see `goldboard flag`)")
    return out


__all__ = [
    "rule_warnings",
    "RatingBreak",
    "RuleErrors",
    "check_gold_rules",
    "decision_rule_errors",
    "gold_rule_errors",
    "rating_rule_breaks",
    "rule_break_matrix",
    "show",
]
