"""Every agreement statistic goldboard reports, declared once.

A :class:`Statistic` says what the engine (:mod:`goldboard.analysis.agreement`), the report's
tables, the methods paragraph and the CLI need: its key (the ``statistic`` column), its names,
the functions that compute it from a two-rater table and from multi-rater counts, whether it
takes weights, its range, where its standard error comes from, the interval methods it supports
(:mod:`goldboard.analysis.intervals`) and its default one.  Adding a coefficient is one entry
in :data:`STATISTICS` (in report order) plus its test.

Krippendorff's alpha is declared here too (names, SE source, intervals); the engine computes it
per measurement level from the coincidence matrix rather than from ``pair``/``multi``.

>>> [s.key for s in STATISTICS][:3]
['percent_agreement', 'cohen_kappa', 'fleiss_kappa']
>>> BY_KEY["gwet_ac1"].default_ci, BY_KEY["gwet_ac1"].ci_methods
('wilson', ('wilson', 'wald'))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from goldboard.analysis import coefficients as C
from goldboard.analysis.intervals import METHODS

__all__ = ["BY_KEY", "STATISTICS", "Statistic", "ci_method_for", "headline_keys", "keys", "names", "summary_keys"]


@dataclass(frozen=True)
class Statistic:
    """One agreement coefficient (see the module docstring)."""

    key: str
    #: the name in tables and warnings ("Cohen's kappa")
    name: str
    #: the name in the methods paragraph ("Cohen's kappa", "percent agreement")
    prose: str
    #: where its standard error comes from (two raters, more raters)
    se_source: tuple[str, str]
    #: ``fn(table[, weights]) -> Estimate`` of two raters' ``(..., k, k)`` table, or None
    pair: Callable | None = None
    #: the pair statistic is reported for every rater pair (True) or only when there are two raters
    every_pair: bool = False
    #: ``fn(counts, weights) -> Estimate`` of items x categories counts (more than two raters), or None
    multi: Callable | None = None
    #: computed with linear and quadratic weights too on ordered fields
    weighted: bool = False
    #: only for two-category fields
    binary_only: bool = False
    low: float = -1.0
    high: float = 1.0
    ci_methods: tuple[str, ...] = METHODS
    default_ci: str = "wilson"
    #: shown in the report's headline table
    headline: bool = True
    #: shown in the review workbook's summary (the adjudication's headline agreement)
    summary: bool = False


_LIN = "Gwet's (2008) linearisation"
_DESIGN = "Gwet's (2014) design-based variance"

STATISTICS: tuple[Statistic, ...] = (
    Statistic(
        "percent_agreement",
        "Percent agreement",
        "percent agreement",
        (_LIN, _DESIGN),
        pair=C.percent_agreement,
        every_pair=True,
        multi=C.percent_agreement_multi,
        low=0.0,
        summary=True,
    ),
    Statistic(
        "cohen_kappa",
        "Cohen's kappa",
        "Cohen's kappa",
        ("Fleiss, Cohen & Everitt (1969)", "Fleiss, Cohen & Everitt (1969)"),
        pair=C.cohen_kappa,
        every_pair=True,
        weighted=True,
        summary=True,
    ),
    Statistic("fleiss_kappa", "Fleiss' kappa", "Fleiss' kappa", (_DESIGN, _DESIGN), multi=C.fleiss_kappa, summary=True),
    Statistic("scott_pi", "Scott's pi", "Scott's pi", (_LIN, _LIN), pair=C.scott_pi),
    Statistic(
        "krippendorff_alpha",
        "Krippendorff's alpha",
        "Krippendorff's alpha",
        ("Gwet's (2014) linearisation", "Gwet's (2014) linearisation"),
        summary=True,
    ),
    Statistic(
        "gwet_ac1", "Gwet's AC1", "Gwet's AC1", (_LIN, _DESIGN), pair=C.gwet_ac, multi=C.gwet_ac_multi, weighted=True
    ),
    Statistic(
        "brennan_prediger",
        "Brennan-Prediger",
        "Brennan-Prediger's coefficient",
        (_LIN, _DESIGN),
        pair=C.brennan_prediger,
        multi=C.brennan_prediger_multi,
    ),
    Statistic(
        "pabak",
        "PABAK",
        "PABAK",
        ("k/(k-1) times the SE of percent agreement", "k/(k-1) times the SE of percent agreement"),
        pair=C.pabak,
        multi=C.brennan_prediger_multi,
        binary_only=True,
    ),
)

BY_KEY = {s.key: s for s in STATISTICS}


def keys() -> tuple[str, ...]:
    """The statistics' keys in report order."""
    return tuple(BY_KEY)


def headline_keys() -> tuple[str, ...]:
    """The statistics of the report's headline table, in report order."""
    return tuple(s.key for s in STATISTICS if s.headline)


def summary_keys() -> tuple[str, ...]:
    """The statistics of the review workbook's summary (the adjudication's headline agreement)."""
    return tuple(s.key for s in STATISTICS if s.summary)


def names(prose: bool = False) -> dict[str, str]:
    """``{key: name}`` in report order: the tables' names, or (``prose``) the methods text's."""
    return {s.key: s.prose if prose else s.name for s in STATISTICS}


def ci_method_for(key: str, ci: str | None) -> str:
    """The interval method of statistic ``key``: ``ci`` when it supports it, else its default
    (``ci`` None or ``"default"``: the declared default)."""
    stat = BY_KEY.get(key)
    default = stat.default_ci if stat else "wilson"
    if ci in (None, "default"):
        return default
    if ci not in METHODS:
        raise ValueError(f"unknown interval method {ci!r} ({', '.join(METHODS)})")
    return ci if stat is None or ci in stat.ci_methods else default
