"""Who rates what: the study designs beyond "every rater rates every item".

* **Overlap subset** (:func:`overlap_assignment`): the first (primary) rater rates every item;
  the other raters rate the same random share of the items (``share`` = 0.2: 20%), drawn with a
  seed, optionally stratified by a column (proportional allocation per stratum, rounded by largest
  remainder so the total is exactly ``round(share * n)``; a tie goes to the larger stratum, then
  is drawn with the seed; with fewer double-rated items than strata, that many strata are drawn at
  random, each equally likely, one item each: :func:`stratum_allocation`, the rule ``plan sample``
  uses too).  Agreement is then measured on the double-rated share; the other items have one
  rating each (gold method ``single``).
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
from fractions import Fraction
from typing import Any

import numpy as np

from goldboard.errors import ParamError

ASSIGNMENT_COLUMNS = ["item_id", "rater"]


@dataclass
class Assignment:
    """``items``: item -> raters (in study rater order); ``design``: how it was drawn."""

    items: dict[str, list[str]]
    design: dict[str, Any] = field(default_factory=dict)
    #: what the draw could not do as asked (strata left without a double-rated item), for push to print
    warnings: list[str] = field(default_factory=list)

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
    sizes = [len(groups[k]) for k in keys]
    quotas = [_exact(share) * size for size in sizes]
    take = stratum_allocation(sizes, target, seed, quotas=quotas)
    if target > sum(math.floor(q) for q in quotas):
        # the draw before issue 23 took one number per stratum here (its tie-break): kept, so an
        # allocation without a tie draws the same items with the same seed as before
        rng.random(len(keys))
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
    warnings: list[str] = []
    if strata is not None:
        design["strata"] = {str(k): {"items": len(groups[k]), "double_rated": int(take[j])} for j, k in enumerate(keys)}
        design["allocation"] = "random_strata" if target < len(keys) else "proportional"
        warnings = _left_out_warnings(design, target)
    return Assignment(out, design, warnings)


def _exact(share: float) -> Fraction:
    """``share`` as the decimal the user typed (0.2 is 1/5, not the float next to it)."""
    return Fraction(repr(float(share)))


def _left_out_warnings(design: dict[str, Any], target: int) -> list[str]:
    """The strata an overlap draw left without a double-rated item, in one warning."""
    strata = design["strata"]
    empty = [s for s, v in strata.items() if not v["double_rated"]]
    if not empty:
        return []
    names = ", ".join(repr(s) for s in empty[:10]) + (f" and {len(empty) - 10} more" if len(empty) > 10 else "")
    if design["allocation"] == "random_strata":
        return [
            f"the overlap share gives {target} double-rated items for {len(strata)} strata: not every stratum can "
            f"get one; {target} strata were drawn at random with the seed (each equally likely), one item each; "
            f"none from {names}"
        ]
    return [
        f"proportional allocation of the {target} double-rated items gives no item to {len(empty)} of the "
        f"{len(strata)} strata (their share rounds to 0): {names}"
    ]


def stratum_allocation(
    sizes: Sequence[int], n: int, seed: int, *, quotas: Sequence[Fraction] | None = None
) -> list[int]:
    """How many of ``n`` items each stratum (of ``sizes`` items) gives: the one allocation rule
    of ``plan sample`` (:func:`goldboard.analysis.planning.stratified_sample`) and of push's
    overlap design (:func:`overlap_assignment`).

    ``n`` below the number of strata: not every stratum can be represented; ``n`` strata are
    drawn as a simple random sample without replacement (Cochran WG, *Sampling Techniques*, 3rd
    ed., Wiley 1977, ch. 2), each with the same chance ``n / strata`` whatever its size, one
    item from each.  Otherwise each stratum gives its exact ``quotas`` (default: one item from
    every stratum and the rest proportional to the items each has left -- plan sample's rule)
    rounded by largest remainder, in exact arithmetic, so the total is ``n``: a tie goes to the
    larger stratum, then is broken at random with the seed -- never by the stratum's name or
    place.  The random choices come from a stream of their own (``SeedSequence(seed).spawn``),
    so they do not shift the draw of the items within the strata."""
    draw = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    k = len(sizes)
    if n < k:
        alloc = [0] * k
        for j in draw.choice(k, size=n, replace=False):
            alloc[int(j)] = 1
        return alloc
    if quotas is None:
        remaining = n - k
        spare = [s - 1 for s in sizes]
        if not remaining:
            return [1] * k
        quotas = [1 + Fraction(remaining * sp, sum(spare)) for sp in spare]
    alloc = [math.floor(q) for q in quotas]
    rest = [q - a for q, a in zip(quotas, alloc)]
    tie = draw.random(k)
    order = sorted(range(k), key=lambda j: (-rest[j], -sizes[j], tie[j]))
    for j in order[: n - sum(alloc)]:
        alloc[j] += 1
    return alloc


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


def _strata_clause(design: dict[str, Any]) -> str:
    """How an overlap draw spread its items over the strata, as recorded: with fewer items than
    strata, which strata got one was drawn at random; strata proportional allocation left out
    are counted.  Nothing for a round recorded before the rule was (no ``allocation``)."""
    strata = design.get("strata") or {}
    if not strata or not design.get("stratify_by") or design.get("allocation") is None:
        return ""
    got = sum(1 for v in strata.values() if v.get("double_rated"))
    if design["allocation"] == "random_strata":
        return f": {got} of its {len(strata)} strata drawn at random, each equally likely, one item each"
    if got < len(strata):
        return f": proportional allocation, no item from {len(strata) - got} of its {len(strata)} strata"
    return ""


def design_note(design: dict[str, Any], n_multi: int) -> str:
    """One sentence for agreement output: the round's design and the ``n_multi`` items (rated
    by two or more raters) that agreement is measured on."""
    kind = design.get("kind")
    seed = design.get("seed")
    strat = f", stratified by {design['stratify_by']}" if design.get("stratify_by") else ""
    if kind == "overlap":
        strat += _strata_clause(design)
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


__all__ = [
    "design_note",
    "Assignment",
    "overlap_assignment",
    "per_item_assignment",
    "stratum_allocation",
    "ASSIGNMENT_COLUMNS",
]
