"""Who rates what: the study designs beyond "every rater rates every item".

* **Overlap subset** (:func:`overlap_assignment`): the first (primary) rater rates every item;
  the other raters rate the same random share of the items (``share`` = 0.2: 20%), drawn with a
  seed, optionally stratified by a column (proportional allocation per stratum, rounded by largest
  remainder so the total is exactly ``round(share * n)``).  Agreement is then measured on the
  double-rated share; the other items have one rating each (gold method ``single``).
* **k ratings per item** (:func:`per_item_assignment`): each item is rated by ``k`` of the ``N``
  raters; items are dealt, in a seeded random order (within strata when stratified), over the
  ``C(N, k)`` rater combinations in turn, so every combination -- hence every pair of raters --
  rates the same number of items (within one) and every rater carries the same load (within
  one per combination cycle).

Both are pure and deterministic for a given seed and item order; the result is an
:class:`Assignment` (item -> raters), written by push as ``rounds/N/assignment.csv``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from goldboard.errors import ParamError

ASSIGNMENT_COLUMNS = ["item_id", "rater"]


@dataclass
class Assignment:
    """``items``: item -> raters (in study rater order); ``design``: how it was drawn."""

    items: dict[str, list[str]]
    design: dict[str, Any] = field(default_factory=dict)

    def for_rater(self, rater: str) -> list[str]:
        return [it for it, rs in self.items.items() if rater in rs]

    def single_items(self) -> list[str]:
        return [it for it, rs in self.items.items() if len(rs) == 1]

    def multi_items(self) -> list[str]:
        return [it for it, rs in self.items.items() if len(rs) > 1]

    def pair_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        raters = sorted({r for rs in self.items.values() for r in rs}, key=self._order)
        for a, b in itertools.combinations(raters, 2):
            out[f"{a}/{b}"] = sum(1 for rs in self.items.values() if a in rs and b in rs)
        return out

    def _order(self, r: str) -> int:
        order = self.design.get("raters") or []
        return order.index(r) if r in order else len(order)

    def rows(self) -> list[dict[str, str]]:
        return [{"item_id": it, "rater": r} for it, rs in self.items.items() for r in rs]


def _strata(items: Sequence[str], strata: Sequence[Any] | None) -> dict[Any, list[int]]:
    groups: dict[Any, list[int]] = {}
    for i, _ in enumerate(items):
        key = "" if strata is None else strata[i]
        groups.setdefault(key, []).append(i)
    return groups


def overlap_assignment(
    items: Sequence[str],
    raters: Sequence[str],
    share: float,
    *,
    seed: int,
    strata: Sequence[Any] | None = None,
    primary: str | None = None,
) -> Assignment:
    """The primary rater (default: the first) rates every item; the others a random ``share``."""
    if not 0 < share <= 1:
        raise ParamError("{share} {value}: give the double-rated share as a number in (0, 1], e.g. 0.2", value=share)
    if len(raters) < 2:
        raise ParamError("{share} needs at least two raters")
    primary = primary or raters[0]
    if primary not in raters:
        raise ParamError(
            "{primary} {name!r}: not a rater of this study ({raters})", name=primary, raters=", ".join(raters)
        )
    n = len(items)
    target = int(math.floor(share * n + 0.5))
    if n and target < 2:
        raise ParamError(
            "{share} {value}: {value:g} of {n} items is {target}; agreement needs at least 2 double-rated items",
            value=share,
            n=n,
            target=target,
        )
    rng = np.random.default_rng(seed)
    groups = _strata(items, strata)
    keys = list(groups)
    exact = np.array([share * len(groups[k]) for k in keys])
    take = np.floor(exact).astype(int)
    rest = target - int(take.sum())
    if rest > 0:
        # largest remainder, ties broken at random (seeded)
        frac = exact - take
        order = sorted(range(len(keys)), key=lambda j: (-round(frac[j], 12), rng.random()))
        for j in order[:rest]:
            take[j] += 1
    chosen: set[int] = set()
    for j, k in enumerate(keys):
        idx = np.array(groups[k])
        if take[j]:
            chosen.update(int(x) for x in rng.choice(idx, size=int(take[j]), replace=False))
    others = [r for r in raters if r != primary]
    out = {it: ([r for r in raters if r == primary or i in chosen and r in others]) for i, it in enumerate(items)}
    design = {
        "kind": "overlap",
        "share": share,
        "seed": seed,
        "primary": primary,
        "raters": list(raters),
        "items": n,
        "double_rated": len(chosen),
    }
    if strata is not None:
        design["strata"] = {str(k): {"items": len(groups[k]), "double_rated": int(take[j])} for j, k in enumerate(keys)}
    return Assignment(out, design)


def per_item_assignment(
    items: Sequence[str],
    raters: Sequence[str],
    k: int,
    *,
    seed: int,
    strata: Sequence[Any] | None = None,
) -> Assignment:
    """Each item rated by ``k`` raters, balanced over every combination of ``k`` raters."""
    if not 2 <= k <= len(raters):
        raise ParamError("{k} {value}: give 2 to {n} (the number of raters)", value=k, n=len(raters))
    rng = np.random.default_rng(seed)
    combos = list(itertools.combinations(raters, k))
    rng.shuffle(combos)
    order: list[int] = []
    for idx in _strata(items, strata).values():
        order.extend(int(x) for x in rng.permutation(idx))
    out: dict[str, list[str]] = {}
    for pos, i in enumerate(order):
        combo = combos[pos % len(combos)]
        out[items[i]] = [r for r in raters if r in combo]
    out = {it: out[it] for it in items}
    design = {"kind": "per_item", "per_item": k, "seed": seed, "raters": list(raters), "items": len(items)}
    return Assignment(out, design)


def design_note(design: dict[str, Any], n_multi: int) -> str:
    """One sentence for agreement output: the round's design and the ``n_multi`` items (rated
    by two or more raters) that agreement is measured on."""
    kind = design.get("kind")
    seed = design.get("seed")
    strat = f", stratified by {design['stratify_by']}" if design.get("stratify_by") else ""
    if kind == "overlap":
        others = [r for r in design.get("raters", []) if r != design.get("primary")]
        return (
            f"Design: overlap subset -- {design.get('primary')} rated all {design.get('items')} items, "
            f"{', '.join(others)} a random {float(design.get('share', 0)):.0%} share "
            f"({design.get('double_rated')} items, seed {seed}{strat}). Agreement uses the {n_multi} "
            f"double-rated items; the other items have one rating each (gold method 'single')."
        )
    if kind == "per_item":
        return (
            f"Design: {design.get('per_item')} raters per item, balanced over rater pairs (seed {seed}{strat}). "
            f"Each pairwise statistic uses the items its two raters share; {n_multi} items have two or more ratings."
        )
    return ""


__all__ = ["design_note", "Assignment", "overlap_assignment", "per_item_assignment", "ASSIGNMENT_COLUMNS"]
