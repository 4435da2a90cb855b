"""The agreement engine behind ``goldboard agree``: every coefficient with a 95% CI.

Public entry points (what the report and the study workbook call)
------------------------------------------------------------------
``agreement(ratings, field, schema=None, *, categories=None, levels=None, raters=None,
by=None, groups=None, dichotomize=None, n_resamples=0, seed=1, cluster_col=None,
clusters=None, source=None, progress=False) -> dict``
    ``ratings`` is a DataFrame in the ratings-table shape of
    :mod:`goldboard.cases.ratings` (``item_id, rater, field, value``; a ``label``
    column is accepted instead of ``value``; without a ``field`` column every row
    belongs to ``field``).  Returns the JSON contract of issue 3::

        {"n_items", "n_raters", "raters", "categories", "level",
         "statistics": [{"statistic", "weights", "level", "raters", "group", "value",
                         "se", "ci_low", "ci_high", "ci_method", "n_items"}, ...],
         "per_label": [...], "confusion": {...}, "warnings": [...]}

    ``field`` may name a multi-select value as ``"<field>:<value>"`` (analysed as a
    binary present/absent field).  Raises :class:`goldboard.errors.GoldboardError`
    with one line naming where (``file:line`` when the frame carries ``_where`` or
    ``_line`` columns) for an unknown label, fewer than two raters, no ratings, ...

The study-level wrapper (one contract dict per analysable field of a study
round) is :func:`goldboard.workflows.agreement_for_study`: this module never sees
a Study.

``render_table``, ``render_markdown``, ``render_csv``, ``render_json``
    Text renderings (the CLI's ``--format``) live in
    :mod:`goldboard.analysis.agreement_render`.

``landis_koch_band(value) -> str | None``
    The conventional band name.

``bootstrap_sums(units, n_resamples, rng, multiplicity=None)``
    The vectorised resampling primitive (see below), in
    :mod:`goldboard.analysis.resampling` (shared with the scoring engine).

What is computed
----------------
Two raters: percent agreement; Cohen's kappa (unweighted, and linear/quadratic
weights for ordered data) with the Fleiss--Cohen--Everitt (1969) SE; Scott's pi;
Gwet's AC1 (AC2 with weights); Brennan--Prediger; PABAK (two categories);
Krippendorff's alpha at each requested level.  More raters: the same
multi-rater coefficients (Fleiss' kappa instead of Scott's pi) plus pairwise
percent agreement and Cohen's kappas.  ``per_label``: specific positive and
negative agreement, one-vs-rest kappa, PABAK, and (two raters) the prevalence
and bias indices of Byrt, Bishop & Carlin (1993).  ``confusion``: the pairwise
confusion matrices and Krippendorff's coincidence matrix.  Formulas, SEs and
references: :mod:`goldboard.analysis.coefficients`.

Confidence intervals are Wald intervals (``value -/+ 1.96 SE``, truncated to
the coefficient's range; SAS's convention -- Gwet's irrCAC uses ``t(n - 1)``
quantiles, so its printed limits are slightly wider for small ``n`` while the
SEs agree) unless ``n_resamples > 0``: then every row gets a
percentile interval from ``n_resamples`` resamples of items (or of clusters of
items with ``cluster_col``), and ``se`` is the bootstrap standard deviation.
The bootstrap is vectorised: every statistic is a function of per-item sums,
items with identical contributions are pooled, and a resample is a multinomial
count vector over those patterns -- distributionally identical to drawing item
indices with replacement, at the cost of one matrix product for all resamples.

Weights and the ordinal metric always use the full category scale (the
schema's values, or ``categories``), including levels no rater used.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any

import numpy as np

from goldboard.analysis import coefficients as C
from goldboard.analysis import statistics as SD
from goldboard.analysis.agreement_inputs import (
    LEVELS,
    AgreementOptions,
    PreparedRatings,
    ScaleConfig,
    prepare_columns,
    prepare_frame,
    prepare_ratings,
)
from goldboard.analysis.estimate import finite_or_none
from goldboard.analysis.intervals import interval
from goldboard.analysis.resampling import bootstrap_sums, percentile_summary
from goldboard.cases.ratings_columns import RatingColumns
from goldboard.errors import GoldboardError
from goldboard.text import natural_key

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from goldboard.label_configs.schema import Schema

__all__ = [
    "LEVELS",
    "STATISTICS",
    "MIN_ITEMS_FOR_CI",
    "agreement",
    "agreement_prepared",
    "landis_koch_band",
    "statistic_name",
]

STATISTICS = SD.keys()
#: below this many items a 95% CI is flagged as unstable (asymptotic SEs of kappa-type
#: coefficients need a few dozen subjects; cf. Fleiss, Levin & Paik 2003, ch. 18)
MIN_ITEMS_FOR_CI = 30
#: kappa paradox (Feinstein & Cicchetti 1990): raw agreement at least this high ...
PARADOX_MIN_AGREEMENT = 0.80
#: ... while kappa is at most this
PARADOX_MAX_KAPPA = 0.60


# --------------------------------------------------------------------------- small helpers


def landis_koch_band(value: float | None) -> str | None:
    """Landis & Koch (1977) band of a chance-corrected coefficient -- a convention, not a test.

    <0 poor, 0-0.20 slight, >0.20-0.40 fair, >0.40-0.60 moderate, >0.60-0.80 substantial,
    >0.80 almost perfect (the edges printed in the legends: 0.601 is "substantial").
    """
    if value is None or not np.isfinite(value):
        return None
    if value < 0:
        return "poor"
    for upper, name in ((0.20, "slight"), (0.40, "fair"), (0.60, "moderate"), (0.80, "substantial")):
        if value <= upper + 1e-12:
            return name
    return "almost perfect"


_num = finite_or_none


#: the ``ci_method`` column of each interval method (Wald keeps its historical "asymptotic")
CI_METHOD_NAMES = {"wald": "asymptotic", "wilson": "wilson"}


def _estimate_dict(value, se, low=-1.0, high=1.0, n=0, method="wald") -> dict:
    """Estimate, SE and the ``method`` interval (:func:`goldboard.analysis.intervals.interval`)
    from ``n`` items; no interval without a finite estimate and SE."""
    value, se = _num(value), _num(se)
    lo = hi = None
    if value is not None and se is not None:
        lo, hi = (_num(x) for x in interval(method, value, se, n, low, high))
    return {"value": value, "se": se, "ci_low": lo, "ci_high": hi}


# --------------------------------------------------------------------------- multi-rater features


def _multi_features(R: np.ndarray, weight_mats: Mapping[str, np.ndarray]):
    """Additive per-item features of the multi-rater coefficients (Gwet 2014, missing data)."""
    ri = R.sum(axis=1)
    one = (ri >= 1).astype(float)
    two = (ri >= 2).astype(float)
    den = np.where(ri >= 2, ri * (ri - 1.0), 1.0)
    pa = {name: np.where(ri >= 2, np.sum(R * (R @ w.T - 1.0), axis=1) / den, 0.0) for name, w in weight_mats.items()}
    pi = R / np.where(ri > 0, ri, 1.0)[:, None]
    return one, two, pa, pi


def _multi_value(kind: str, w: np.ndarray, pa, two, one, pi):
    """Batched multi-rater coefficient from summed features (B,), (B,), (B,), (B, k)."""
    pa_hat = C._div(pa, two)
    pi_hat = pi / np.where(one == 0, 1.0, one)[:, None]
    q = w.shape[0]
    if kind == "percent_agreement":
        return pa_hat
    if kind == "fleiss_kappa":
        pe = np.einsum("bi,ij,bj->b", pi_hat, w, pi_hat)
    elif kind == "gwet_ac1":
        pe = w.sum() / (q * (q - 1)) * np.sum(pi_hat * (1.0 - pi_hat), axis=1)
    elif kind in ("brennan_prediger", "pabak"):
        pe = np.full_like(pa_hat, w.sum() / q**2)
    else:  # pragma: no cover
        raise ValueError(kind)
    return C._div(pa_hat - pe, 1.0 - pe)


# --------------------------------------------------------------------------- the analysis of one stratum


def _row(statistic, weights, level, raters, group, n_items, value, se, low=-1.0, high=1.0, ci=None) -> dict:
    """One ``statistics`` row of the contract (``level``: the measurement level of an alpha row;
    ``ci``: the interval method asked for, else the statistic's declared default)."""
    method = SD.ci_method_for(statistic, ci)
    est = _estimate_dict(value, se, low, high, n_items, method)
    return {
        "statistic": statistic,
        "weights": weights,
        "level": level,
        "raters": list(raters),
        "group": group,
        "value": est["value"],
        "se": est["se"],
        "ci_low": est["ci_low"],
        "ci_high": est["ci_high"],
        "ci_method": CI_METHOD_NAMES[method] if est["ci_low"] is not None else None,
        "n_items": int(n_items),
    }


def _set_boot(target: dict, se, lo, hi) -> None:
    """Replace an estimate's SE and CI with bootstrap ones (kept as-is when the value is undefined)."""
    if target.get("value") is None:
        return
    target["se"], target["ci_low"], target["ci_high"] = _num(se), _num(lo), _num(hi)
    if "ci_method" in target:
        target["ci_method"] = "bootstrap" if target["ci_low"] is not None else None


def _row_sink(row: dict) -> Callable:
    """The sink that writes a scalar statistic's bootstrap SE and CI into its row."""
    return lambda se, lo, hi: _set_boot(row, se[0], lo[0], hi[0])


@dataclass
class _Boot:
    """What to bootstrap: a feature block per pattern, and batched statistics on its sums.

    Blocks are added (and statistics registered) in a fixed order: the column order of the
    summed features, and so the pooled cluster rows and the seeded intervals, depend on it.
    Without resampling (``enabled`` false) nothing is recorded.
    """

    enabled: bool
    blocks: list[np.ndarray] = dc_field(default_factory=list)
    width: int = 0
    #: (label for warnings, function of the full sums -> (B,) or (B, k), sink(se, lo, hi), low, high)
    specs: list[tuple[str, Callable[[np.ndarray], np.ndarray], Callable, float, float]] = dc_field(default_factory=list)

    def add(self, block: np.ndarray) -> slice:
        """Append a (patterns x features) block; its columns in the summed features."""
        if not self.enabled:
            return slice(0, 0)
        block = np.asarray(block, dtype=float)
        block = block.reshape(block.shape[0], -1)
        s = slice(self.width, self.width + block.shape[1])
        self.blocks.append(block)
        self.width += block.shape[1]
        return s

    def spec(self, label, fn, sink, low=-1.0, high=1.0):
        """Register a statistic: ``fn`` of the resampled sums, ``sink`` receives (se, lo, hi)."""
        if self.enabled:
            self.specs.append((label, fn, sink, low, high))

    def row_spec(self, label, cols, fn, row, low=-1.0, high=1.0):
        """Register a row's statistic computed by ``fn`` from the sums in ``cols``."""
        self.spec(label, lambda S: fn(S[:, cols]), _row_sink(row), low, high)


@dataclass(frozen=True)
class _Stratum:
    """One stratum's coded ratings and the quantities every step of its analysis reads."""

    codes: np.ndarray  # items x raters category codes, -1 missing
    raters: list[str]
    cfg: ScaleConfig
    group: str | None
    weights: dict[str, np.ndarray]  # weight kind ("none", then "linear", "quadratic" if ordered) -> k x k
    R: np.ndarray  # items x categories rating counts
    n_pairable: int  # items with two or more ratings
    patterns: np.ndarray  # distinct rows of ``codes``: what the bootstrap resamples
    inverse: np.ndarray  # item -> its pattern
    pattern_counts: np.ndarray  # items per pattern
    Rp: np.ndarray  # patterns x categories rating counts
    ci: str | None = None  # the interval method asked for (None: each statistic's default)

    @property
    def k(self) -> int:
        return len(self.cfg.categories)

    @property
    def n_items(self) -> int:
        return self.codes.shape[0]

    @property
    def n_raters(self) -> int:
        return self.codes.shape[1]

    @property
    def tag(self) -> str:
        """Warning prefix naming the stratum."""
        return f"[{self.group}] " if self.group is not None else ""

    @property
    def weight_kinds(self) -> list[str]:
        return list(self.weights)


def unique_rows(codes: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(codes, axis=0, return_inverse=True, return_counts=True)`` (inverse flat) of
    an items x raters matrix of codes ``-1..k-1``: each row read as one number in base ``k + 1``
    (first rater most significant), so the distinct rows come out in the same (lexicographic)
    order from a sort of integers instead of rows -- the same arrays, several times quicker."""
    n, m = codes.shape
    if m == 0 or (k + 1) ** m >= 2**62:
        patterns, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
        return patterns, inverse.reshape(-1), counts
    key = np.zeros(n, dtype=np.int64)
    for j in range(m):
        key = key * (k + 1) + (codes[:, j] + 1)
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return codes[first], inverse.reshape(-1), counts


def _stratum(codes: np.ndarray, raters: list[str], cfg: ScaleConfig, group: str | None, ci=None) -> _Stratum:
    """Rating counts, weights and the distinct rating patterns of one stratum."""
    k = len(cfg.categories)
    weight_kinds = ["none"] + (["linear", "quadratic"] if cfg.ordered else [])
    R = C.rating_counts(codes, k)
    patterns, inverse, pcounts = unique_rows(codes, k)
    return _Stratum(
        codes=codes,
        raters=raters,
        cfg=cfg,
        group=group,
        weights={kind: C.agreement_weights(k, kind) for kind in weight_kinds},
        R=R,
        n_pairable=int((R.sum(axis=1) >= 2).sum()),
        patterns=patterns,
        inverse=inverse.reshape(-1),
        pattern_counts=pcounts,
        Rp=C.rating_counts(patterns, k),
        ci=ci,
    )


@dataclass(frozen=True)
class _StratumResult:
    """The contract's lists for one stratum."""

    statistics: list[dict]
    per_label: list[dict]
    pairs: list[dict]  # confusion matrices of the rater pairs
    coincidence: list[dict]
    warnings: list[str]


def _coverage_warnings(st: _Stratum) -> list[str]:
    """Warn when no item, or too few items for a stable CI, have two or more ratings."""
    if st.n_pairable == 0:
        return [f"{st.tag}no item has two or more ratings: nothing to compare"]
    if st.n_pairable < MIN_ITEMS_FOR_CI:
        return [
            f"{st.tag}only {st.n_pairable} item(s) with two or more ratings: 95% CIs from fewer than "
            f"{MIN_ITEMS_FOR_CI} items are unstable; read them as rough"
        ]
    return []


def _paradox_warning(st: _Stratum, pa_row: dict, kappa_row: dict, names: list[str]) -> str | None:
    """The kappa-paradox warning (high raw agreement, low kappa), or None."""
    pa, kap = pa_row["value"], kappa_row["value"]
    if pa is None or kap is None or not (pa >= PARADOX_MIN_AGREEMENT and kap <= PARADOX_MAX_KAPPA):
        return None
    share = st.R.sum(axis=0) / max(st.R.sum(), 1.0)
    top = int(np.argmax(share))
    who = " / ".join(names) if len(names) == 2 else "all raters"
    return (
        f"{st.tag}kappa paradox ({who}): {pa:.1%} raw agreement but {_NAMES[kappa_row['statistic']]} "
        f"{kap:.3f}; {st.cfg.categories[top]!r} makes up {share[top]:.0%} of the ratings (Feinstein & Cicchetti "
        f"1990). Report raw and specific agreement, PABAK/AC1 and prevalence beside kappa"
    )


# ---------------------------------------------------------------- pairs of raters


@dataclass(frozen=True)
class _Pair:
    """Two raters' confusion table over the items both rated, and its bootstrap columns."""

    names: list[str]
    table: np.ndarray  # k x k, rows the first rater
    n_items: int
    cols: slice


def _pair(st: _Stratum, boot: _Boot, a: int, b: int) -> _Pair:
    """The confusion table of raters ``a`` and ``b``; its one-hot cells per pattern go to the bootstrap."""
    k, codes, patterns = st.k, st.codes, st.patterns
    both = (codes[:, a] >= 0) & (codes[:, b] >= 0)
    table = np.bincount(codes[both, a] * k + codes[both, b], minlength=k * k).reshape(k, k).astype(float)
    pboth = (patterns[:, a] >= 0) & (patterns[:, b] >= 0)
    onehot = np.zeros((patterns.shape[0], k * k))
    onehot[np.flatnonzero(pboth), (patterns[pboth, a] * k + patterns[pboth, b])] = 1.0
    return _Pair([st.raters[a], st.raters[b]], table, int(both.sum()), boot.add(onehot))


def _table_stat(st: _Stratum, boot: _Boot, pair: _Pair, statistic, wkind, fn, low=-1.0, high=1.0) -> dict:
    """One two-rater statistic from the pair's table; the bootstrap recomputes ``fn`` on resampled tables."""
    k = st.k
    w = st.weights[wkind] if wkind is not None else None
    est = fn(pair.table, w) if w is not None else fn(pair.table)
    row = _row(
        statistic, wkind or "none", None, pair.names, st.group, pair.n_items, est.value, est.se, low, high, st.ci
    )
    boot.row_spec(
        f"{statistic} ({wkind or 'none'}) {'/'.join(pair.names)}",
        pair.cols,
        lambda S: np.asarray((fn(S.reshape(-1, k, k), w) if w is not None else fn(S.reshape(-1, k, k))).value),
        row,
        low,
        high,
    )
    return row


def _pair_rows(st: _Stratum, boot: _Boot, pair: _Pair, warnings: list[str]) -> list[dict]:
    """The statistics of one pair of raters (the two-rater coefficients only when there are two raters)."""
    stat = functools.partial(_table_stat, st, boot, pair)
    rows = []
    for d in SD.STATISTICS:
        if d.pair is None or (st.n_raters > 2 and not d.every_pair) or (d.binary_only and st.k != 2):
            continue
        kinds = st.weight_kinds if d.weighted else [None]
        rows += [stat(d.key, wk, d.pair, d.low, d.high) for wk in kinds]
    kappas = [r for r in rows if r["statistic"] == "cohen_kappa"]
    a, b = pair.names
    for kr in kappas:
        if kr["value"] is None:
            warnings.append(
                f"{st.tag}Cohen's kappa ({kr['weights']} weights) undefined for {a} / {b}: "
                f"chance agreement is 1 (both used one and the same category)"
            )
    paradox = _paradox_warning(st, rows[0], kappas[0], pair.names)
    if paradox:
        warnings.append(paradox)
    return rows


def _pair_statistics(st: _Stratum, boot: _Boot, warnings: list[str]) -> tuple[list[dict], list[dict], list[_Pair]]:
    """Every pair of raters: (statistics rows, confusion matrices, the pairs)."""
    rows, confusions, pairs = [], [], []
    for a, b in itertools.combinations(range(st.n_raters), 2):
        pair = _pair(st, boot, a, b)
        pairs.append(pair)
        x, y = pair.names
        confusions.append(
            {
                "raters": pair.names,
                "group": st.group,
                "n_items": pair.n_items,
                "matrix": pair.table.astype(int).tolist(),
            }
        )
        if pair.n_items == 0:
            warnings.append(f"{st.tag}raters {x} and {y} rated no item in common")
            continue
        if pair.n_items < st.n_items:
            warnings.append(
                f"{st.tag}raters {x} and {y} both rated {pair.n_items} of {st.n_items} items; "
                f"their pairwise statistics use those {pair.n_items}"
            )
        rows += _pair_rows(st, boot, pair, warnings)
    return rows, confusions, pairs


# ---------------------------------------------------------------- all raters together


@dataclass
class _MultiColumns:
    """Bootstrap columns of the multi-rater features (:func:`_multi_features`).

    ``one``, ``two`` and ``pi`` are repointed to the per-label block's copies of the same
    features when that block is added (:func:`_label_boot_fn_multi`), and the all-raters
    statistics read them at run time: the values are identical, but a column's position
    in the resampled matrix product can change its last bit, and this is the order the
    published seeded intervals were computed in.
    """

    one: slice
    two: slice
    pi: slice
    pa: dict[str, slice]  # per weight kind


def _multi_columns(st: _Stratum, boot: _Boot) -> _MultiColumns | None:
    """Add the multi-rater features of every pattern to the bootstrap (None without resampling)."""
    if not boot.enabled:
        return None
    one, two, pa_i, pi = _multi_features(st.Rp, st.weights)
    c_one, c_two, c_pi = boot.add(one), boot.add(two), boot.add(pi)
    return _MultiColumns(c_one, c_two, c_pi, {wk: boot.add(pa_i[wk]) for wk in st.weight_kinds})


def _multi_stat(st: _Stratum, boot: _Boot, cols: _MultiColumns | None, statistic, wk, fn, low=-1.0, high=1.0):
    """One all-raters statistic row; its bootstrap evaluates :func:`_multi_value` on resampled sums."""
    w = st.weights[wk]
    est = fn(st.R, w)
    row = _row(statistic, wk, None, st.raters, st.group, st.n_pairable, est.value, est.se, low, high, st.ci)
    if cols is not None:
        boot.spec(
            f"{statistic} ({wk})",
            lambda S: _multi_value(
                statistic, w, S[:, cols.pa[wk]][:, 0], S[:, cols.two][:, 0], S[:, cols.one][:, 0], S[:, cols.pi]
            ),
            _row_sink(row),
            low,
            high,
        )
    return row


def _multi_rater_statistics(st: _Stratum, boot: _Boot, cols: _MultiColumns | None, warnings: list[str]) -> list[dict]:
    """More than two raters: percent agreement, Fleiss' kappa, AC1/AC2, Brennan-Prediger (PABAK)."""
    stat = functools.partial(_multi_stat, st, boot, cols)
    rows = []
    for d in SD.STATISTICS:
        if d.multi is None or (d.binary_only and st.k != 2):
            continue
        rows += [stat(d.key, wk, d.multi, d.low, d.high) for wk in (st.weight_kinds if d.weighted else ["none"])]
    pa_row = next(r for r in rows if r["statistic"] == "percent_agreement")
    fk = next(r for r in rows if r["statistic"] == "fleiss_kappa")
    if fk["value"] is None:
        warnings.append(f"{st.tag}Fleiss' kappa undefined: every rating is in one category")
    paradox = _paradox_warning(st, pa_row, fk, st.raters)
    if paradox:
        warnings.append(paradox)
    return rows


# ---------------------------------------------------------------- Krippendorff's alpha


def _coincidence_features(Rp: np.ndarray) -> np.ndarray:
    """Each pattern's additive contribution to the coincidence matrix, flattened (patterns x k*k)."""
    k = Rp.shape[1]
    m = Rp.sum(axis=1)
    scale = np.where(m >= 2, 1.0 / np.where(m >= 2, m - 1.0, 1.0), 0.0)[:, None]
    co = np.einsum("uc,uk->uck", Rp * scale, Rp) - np.einsum("uc,ck->uck", Rp * scale, np.eye(k))
    return co.reshape(len(Rp), k * k)


def _alpha_statistics(st: _Stratum, boot: _Boot, warnings: list[str]) -> list[dict]:
    """Krippendorff's alpha at each requested measurement level (bootstrap: of the coincidence matrix)."""
    k, scores = st.k, st.cfg.scores
    c_co = boot.add(_coincidence_features(st.Rp)) if boot.enabled else slice(0, 0)
    rows = []
    for level in st.cfg.alpha_levels:
        est = C.krippendorff_alpha(st.R, level, scores)
        row = _row("krippendorff_alpha", "none", level, st.raters, st.group, st.n_pairable, est.value, est.se, ci=st.ci)
        if row["value"] is None:
            warnings.append(f"{st.tag}Krippendorff's alpha ({level}) undefined: the pairable ratings do not vary")
        boot.row_spec(
            f"krippendorff_alpha ({level})",
            c_co,
            lambda S, lv=level: np.asarray(C.krippendorff_alpha_from_coincidence(S.reshape(-1, k, k), lv, scores)),
            row,
        )
        rows.append(row)
    return rows


# ---------------------------------------------------------------- per label (one vs rest)

#: per-label estimates in the order of the contract's keys, with each one's lower bound
_LABEL_ESTIMATES = (("positive_agreement", 0.0), ("negative_agreement", 0.0), ("kappa", -1.0), ("pabak", -1.0))


@dataclass(frozen=True)
class _LabelEstimates:
    """One-vs-rest estimates of every category (arrays of length k) and what the entries print."""

    estimates: dict[str, C.Estimate]  # keyed as in _LABEL_ESTIMATES
    prevalence: np.ndarray
    counts_by_rater: dict[str, np.ndarray]
    prevalence_index: Sequence | None  # two raters only
    bias_index: Sequence | None
    n_items: int


def _label_estimates_two(st: _Stratum, pair: _Pair) -> _LabelEstimates:
    """Two raters: one-vs-rest 2x2 tables of their confusion table (Cohen's kappa per label)."""
    table, n_ab = pair.table, pair.n_items
    ovr = C.one_vs_rest_tables(table)
    pos, neg = C.specific_agreement(ovr)
    return _LabelEstimates(
        estimates={
            "positive_agreement": pos,
            "negative_agreement": neg,
            "kappa": C.cohen_kappa(ovr),
            "pabak": C.pabak(ovr),
        },
        # label counts over the items both rated, so they add up to the confusion matrix
        prevalence=(table.sum(axis=0) + table.sum(axis=1)) / max(2.0 * n_ab, 1.0),
        counts_by_rater={st.raters[0]: table.sum(axis=1), st.raters[1]: table.sum(axis=0)},
        prevalence_index=C.prevalence_index(ovr),
        bias_index=C.bias_index(ovr),
        n_items=n_ab,
    )


def _label_estimates_multi(st: _Stratum) -> _LabelEstimates:
    """More raters: specific agreement, Fleiss' kappa per category, Brennan-Prediger per category."""
    R, k = st.R, st.k
    ri = R.sum(axis=1)
    pos, neg = C.specific_agreement_multi(R)
    bps = [C.brennan_prediger_multi(np.column_stack([ri - R[:, c], R[:, c]])) for c in range(k)]
    codes = st.codes
    return _LabelEstimates(
        estimates={
            "positive_agreement": pos,
            "negative_agreement": neg,
            "kappa": C.fleiss_category_kappa(R),
            "pabak": C.Estimate(np.array([b.value for b in bps]), np.array([b.se for b in bps])),
        },
        prevalence=R[ri >= 2].sum(axis=0) / max(R[ri >= 2].sum(), 1.0),
        counts_by_rater={
            st.raters[j]: np.bincount(codes[codes[:, j] >= 0, j], minlength=k) for j in range(st.n_raters)
        },
        prevalence_index=None,
        bias_index=None,
        n_items=st.n_pairable,
    )


def _label_entry(st: _Stratum, le: _LabelEstimates, c: int) -> dict:
    """The ``per_label`` entry of category ``c``."""
    entry = {
        "label": st.cfg.categories[c],
        "group": st.group,
        "raters": list(st.raters),
        "n_items": int(le.n_items),
        "count_by_rater": {r: int(le.counts_by_rater[r][c]) for r in st.raters},
        "prevalence": _num(le.prevalence[c]),
    }
    method = SD.ci_method_for("", st.ci)
    for key, low in _LABEL_ESTIMATES:
        est = le.estimates[key]
        entry[key] = _estimate_dict(np.asarray(est.value)[c], np.asarray(est.se)[c], low, 1.0, le.n_items, method)
    entry["kappa_method"] = "cohen" if st.n_raters == 2 else "fleiss"
    entry["prevalence_index"] = _num(le.prevalence_index[c]) if le.prevalence_index is not None else None
    entry["bias_index"] = _num(le.bias_index[c]) if le.bias_index is not None else None
    entry["ci_method"] = CI_METHOD_NAMES[method] if le.n_items else None
    return entry


def _label_boot_fn_two(k: int, cols: slice) -> Callable[[np.ndarray, str], np.ndarray]:
    """Per-label estimates of resampled sums, two raters: from resampled confusion tables."""

    def label_fn(S, which):
        t = C.one_vs_rest_tables(S[:, cols].reshape(-1, k, k))
        if which == "kappa":
            return np.asarray(C.cohen_kappa(t).value)
        if which == "pabak":
            return np.asarray(C.pabak(t).value)
        p, q = C.specific_agreement(t)
        return np.asarray(p.value if which == "positive_agreement" else q.value)

    return label_fn


def _label_boot_fn_multi(
    st: _Stratum, boot: _Boot, multi_cols: _MultiColumns | None
) -> Callable[[np.ndarray, str], np.ndarray]:
    """Per-label estimates of resampled sums, more raters: adds the per-pattern category features
    (and points ``multi_cols`` at this block's ``one``/``two``/``pi``, see :class:`_MultiColumns`)."""
    Rp = st.Rp
    m2 = (Rp.sum(axis=1) >= 2)[:, None]
    rip = Rp.sum(axis=1)[:, None]
    rest = rip - Rp
    den2 = np.where(m2, rip * (rip - 1.0), 1.0)
    c_ab = boot.add(np.where(m2, (Rp * (Rp - 1.0) + rest * (rest - 1.0)) / den2, 0.0))
    c_pn = boot.add(np.where(m2, Rp * (Rp - 1.0), 0.0))
    c_pd = boot.add(np.where(m2, Rp * (rip - 1.0), 0.0))
    c_nn = boot.add(np.where(m2, rest * (rest - 1.0), 0.0))
    c_nd = boot.add(np.where(m2, rest * (rip - 1.0), 0.0))
    one, two, _, pi = _multi_features(Rp, {})
    c_one, c_two, c_pi = boot.add(one), boot.add(two), boot.add(pi)
    if multi_cols is not None:
        multi_cols.one, multi_cols.two, multi_cols.pi = c_one, c_two, c_pi

    def label_fn(S, which):
        if which == "positive_agreement":
            return C._div(S[:, c_pn], S[:, c_pd])
        if which == "negative_agreement":
            return C._div(S[:, c_nn], S[:, c_nd])
        pa = C._div(S[:, c_ab], S[:, c_two])
        if which == "pabak":
            return 2.0 * pa - 1.0
        p = S[:, c_pi] / np.where(S[:, c_one] == 0, 1.0, S[:, c_one])
        pe = p**2 + (1.0 - p) ** 2
        return C._div(pa - pe, 1.0 - pe)

    return label_fn


def _per_label_bootstrap(
    st: _Stratum, boot: _Boot, pairs: list[_Pair], multi_cols: _MultiColumns | None, per_label: list[dict]
) -> None:
    """Register the bootstrap of the per-label kappa, PABAK and specific agreement."""
    k = st.k
    if st.n_raters == 2:
        label_fn = _label_boot_fn_two(k, pairs[0].cols)
    else:
        label_fn = _label_boot_fn_multi(st, boot, multi_cols)
    for which, low in (("kappa", -1.0), ("pabak", -1.0), ("positive_agreement", 0.0), ("negative_agreement", 0.0)):
        boot.spec(
            f"per-label {which}",
            lambda S, w=which: label_fn(S, w),
            lambda se, lo, hi, w=which: [_set_boot(per_label[c][w], se[c], lo[c], hi[c]) for c in range(k)],
            low,
            1.0,
        )


# ---------------------------------------------------------------- the bootstrap and the stratum


def _run_bootstrap(
    st: _Stratum,
    boot: _Boot,
    n_resamples: int,
    rng: np.random.Generator,
    clusters: np.ndarray | None,
    progress: bool,
) -> list[str]:
    """Resample patterns (or clusters), write every registered SE and CI; warnings for statistics
    undefined in some resamples."""
    F = np.hstack(boot.blocks)
    if clusters is None:
        S = bootstrap_sums(F, n_resamples, rng, st.pattern_counts, progress=progress)
    else:
        _, cinv = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
        G = np.zeros((int(cinv.max()) + 1, F.shape[1]))
        np.add.at(G, cinv.reshape(-1), F[st.inverse])
        S = bootstrap_sums(G, n_resamples, rng, None, progress=progress)
    warnings = []
    for label, fn, sink, low, high in boot.specs:
        se, lo, hi, share_nan = percentile_summary(fn(S), low, high)
        sink(se, lo, hi)
        worst = float(np.max(share_nan))
        if 0.0 < worst < 1.0 and worst >= 0.01:
            warnings.append(
                f"{st.tag}{label}: undefined in {worst:.0%} of bootstrap resamples; its interval uses the others"
            )
    return warnings


def _degenerate_se_warnings(st: _Stratum, stats: list[dict]) -> list[str]:
    """Warn about asymptotic intervals collapsed to the point (SE 0)."""
    degenerate = [r for r in stats if r["ci_method"] == "asymptotic" and r["se"] == 0.0]
    if not degenerate:
        return []
    names = sorted({statistic_name(r) for r in degenerate})
    return [
        f"{st.tag}asymptotic SE is 0 for {', '.join(names)} (a degenerate table, e.g. perfect agreement): "
        f"the Wald interval collapses to the point; do not read it as certainty"
    ]


def _analyse(
    codes: np.ndarray,
    raters: list[str],
    cfg: ScaleConfig,
    group: str | None,
    clusters: np.ndarray | None,
    n_resamples: int,
    rng: np.random.Generator | None,
    progress: bool,
    ci: str | None = None,
) -> _StratumResult:
    """All statistics of one stratum: pairs of raters, all raters together, alpha, per label,
    then (``n_resamples > 0``) one bootstrap for every estimate at once."""
    st = _stratum(codes, raters, cfg, group, ci)
    warnings = _coverage_warnings(st)
    if st.n_pairable == 0:
        return _StratumResult([], [], [], [], warnings)
    boot = _Boot(enabled=n_resamples > 0)
    pair_rows, confusions, pairs = _pair_statistics(st, boot, warnings)
    multi_cols = _multi_columns(st, boot) if st.n_raters > 2 else None
    multi_rows = _multi_rater_statistics(st, boot, multi_cols, warnings) if st.n_raters > 2 else []
    alpha_rows = _alpha_statistics(st, boot, warnings)
    stats = (pair_rows + alpha_rows) if st.n_raters == 2 else (multi_rows + alpha_rows + pair_rows)
    labels = _label_estimates_two(st, pairs[0]) if st.n_raters == 2 else _label_estimates_multi(st)
    per_label = [_label_entry(st, labels, c) for c in range(st.k)]
    if boot.enabled:
        if labels.n_items:
            _per_label_bootstrap(st, boot, pairs, multi_cols, per_label)
        warnings += _run_bootstrap(st, boot, n_resamples, rng, clusters, progress)
        for entry in per_label:
            entry["ci_method"] = "bootstrap" if labels.n_items else None
    warnings += _degenerate_se_warnings(st, stats)
    matrix = [[_num(x) for x in row] for row in C.coincidence_matrix(st.R)]
    coincidence = [{"group": group, "raters": list(raters), "matrix": matrix}]
    return _StratumResult(stats, per_label, confusions, coincidence, warnings)


# --------------------------------------------------------------------------- public API


def agreement(
    ratings: pd.DataFrame | RatingColumns,
    field: str,
    schema: Schema | None = None,
    *,
    categories: Sequence[str] | None = None,
    levels: Sequence[str] | None = None,
    raters: Sequence[str] | None = None,
    by: str | None = None,
    groups: Mapping[str, Any] | None = None,
    dichotomize: str | None = None,
    n_resamples: int = 0,
    seed: int = 1,
    cluster_col: str | None = None,
    clusters: Mapping[str, Any] | None = None,
    source: str | None = None,
    progress: bool = False,
    ci: str | None = None,
) -> dict:
    """Agreement statistics of one field, in the JSON contract of ``goldboard agree``.

    Parameters
    ----------
    ratings : DataFrame
        Ratings-table shape: ``item_id, rater, field, value`` (``label`` accepted
        for ``value``; ``field`` optional).  Optional ``_where`` (``"file:line"``) or
        ``_line`` columns make error messages point at the input row.  A
        :class:`~goldboard.cases.ratings_columns.RatingColumns` (a small study's ratings
        read without pandas) gives the same result; where its columns do not answer
        (:func:`~goldboard.analysis.agreement_inputs.prepare_columns`), its DataFrame is read.
    field : str
        The field to analyse; ``"<field>:<value>"`` for one value of a multi-select field.
    schema : Schema, optional
        Gives the category order (full scale), level and aliases; unknown labels
        are an error.  Without it categories come from ``categories`` or the data.
    categories : list of str, optional
        The full ordered scale, e.g. ``["1", "2", "3", "4", "5"]``.
    levels : list of str, optional
        Measurement levels; the first is the data level (ordered levels add
        weighted kappa and AC2 rows), and alpha is reported at each.  Default:
        the schema's level (nominal without a schema), plus nominal for ordinal data.
    raters : list of str, optional
        Rater order (e.g. ``study.raters``); other raters follow in order of appearance.
    by, groups : stratify by a per-item column of ``ratings`` or an item -> group mapping.
    dichotomize : str, optional
        A category K of an ordered field: analyse ``>= K`` vs ``< K``.
    n_resamples, seed : int
        Number of bootstrap resamples (0: asymptotic CIs only) and the RNG seed.
    cluster_col, clusters : resample clusters (a per-item column, or item -> cluster).
    source : str, optional
        The input file name, for error messages.
    progress : bool
        Show a progress bar on stderr for long bootstraps.
    ci : str, optional
        The interval method of every row without a bootstrap (``"wilson"``, ``"wald"``; see
        :mod:`goldboard.analysis.intervals`); default: each statistic's declared default
        (:mod:`goldboard.analysis.statistics`).

    Returns
    -------
    dict
        See the module docstring.  ``value`` is ``None`` where a coefficient is
        undefined (e.g. kappa when both raters used one category).
    """
    if n_resamples < 0:
        raise GoldboardError("give a number of resamples >= 0", param="n_resamples")
    opts = AgreementOptions(
        field=field,
        schema=schema,
        categories=categories,
        levels=levels,
        raters=raters,
        by=by,
        groups=groups,
        dichotomize=dichotomize,
        cluster_col=cluster_col,
        clusters=clusters,
        source=source,
    )
    if isinstance(ratings, RatingColumns):  # a small study's ratings, read without pandas
        prepared = prepare_columns(ratings, opts)
        ratings = ratings.frame() if prepared is None else ratings
    else:  # plain ratings are coded from whole columns; anything else row by row, as before
        prepared = prepare_frame(ratings, opts)
    return agreement_prepared(
        prepared if prepared is not None else prepare_ratings(ratings, opts), n_resamples, seed, progress, ci
    )


def agreement_prepared(
    prepared: tuple[PreparedRatings, ScaleConfig],
    n_resamples: int = 0,
    seed: int = 1,
    progress: bool = False,
    ci: str | None = None,
) -> dict:
    """:func:`agreement` of ratings already validated and coded (``(PreparedRatings, ScaleConfig)``
    from :func:`~goldboard.analysis.agreement_inputs.prepare_ratings` or one of its column-wise
    twins, e.g. :func:`~goldboard.analysis.agreement_inputs.prepare_pair`): the same contract,
    the same random stream for the same ``seed``."""
    prep, cfg = prepared
    if n_resamples and n_resamples < 200:
        prep.warnings.append(
            f"only {n_resamples} bootstrap resamples: percentile CIs need about 1,000-2,000 to be stable"
        )
    if ci not in (None, "default", *CI_METHOD_NAMES):
        raise GoldboardError(f"unknown interval method {ci!r} ({', '.join(CI_METHOD_NAMES)})", param="ci")
    results, used, warnings = _analyse_strata(prep, cfg, n_resamples, seed, progress, ci)
    if n_resamples and prep.clusters is not None:
        n_clusters = len(set(prep.clusters))
        if n_clusters < MIN_ITEMS_FOR_CI:
            warnings.append(f"only {n_clusters} clusters to resample: cluster-bootstrap CIs are unstable")
    unused = [c for c, u in zip(cfg.categories, used) if not u]
    if unused:
        note = " (weights and the ordinal metric still span the full scale)" if cfg.ordered else ""
        warnings.append(f"categories never used by any rater: {', '.join(unused)}{note}")
    return _contract(prep, cfg, results, warnings)


def _strata(prep: PreparedRatings) -> list[tuple[str | None, np.ndarray]]:
    """(group, item mask): all items first, then each group in natural order."""
    strata: list[tuple[str | None, np.ndarray]] = [(None, np.ones(len(prep.items), bool))]
    if prep.groups is not None:
        for g in sorted(set(prep.groups), key=natural_key):
            strata.append((str(g), prep.groups == g))
    return strata


def _analyse_strata(
    prep: PreparedRatings, cfg: ScaleConfig, n_resamples: int, seed: int, progress: bool, ci: str | None = None
) -> tuple[list[_StratumResult], np.ndarray, list[str]]:
    """Analyse every stratum with one random stream (strata in order): (results, categories
    used by any rater, warnings so far)."""
    rng = np.random.default_rng(seed) if n_resamples else None
    results: list[_StratumResult] = []
    warnings = list(prep.warnings)
    used = np.zeros(len(cfg.categories), dtype=bool)
    for group, mask in _strata(prep):
        codes = prep.codes[mask]
        keep = (codes >= 0).any(axis=0)
        rs = [r for r, kp in zip(prep.raters, keep) if kp]
        if group is not None and len(rs) < 2:
            warnings.append(f"[{group}] fewer than two raters: no agreement statistics for this stratum")
            continue
        codes = codes[:, keep]
        if group is None:
            used = np.bincount(codes[codes >= 0], minlength=len(cfg.categories)) > 0
        clu = prep.clusters[mask] if prep.clusters is not None else None
        result = _analyse(codes, rs, cfg, group, clu, n_resamples, rng, progress, ci)
        results.append(result)
        warnings += result.warnings
    return results, used, warnings


def _contract(prep: PreparedRatings, cfg: ScaleConfig, results: list[_StratumResult], warnings: list[str]) -> dict:
    """The JSON contract (see the module docstring) from the strata's results."""
    return {
        "n_items": int(len(prep.items)),
        "n_raters": int(len(prep.raters)),
        "raters": list(prep.raters),
        "categories": list(cfg.categories),
        "level": cfg.data_level,
        "statistics": [row for r in results for row in r.statistics],
        "per_label": [entry for r in results for entry in r.per_label],
        "confusion": {
            "categories": list(cfg.categories),
            "rows": "first rater of each pair",
            "pairs": [pair for r in results for pair in r.pairs],
            "coincidence": [co for r in results for co in r.coincidence],
        },
        "warnings": warnings,
    }


# --------------------------------------------------------------------------- names

_NAMES = {d.key: d.name for d in SD.STATISTICS}


def statistic_name(row: dict) -> str:
    """Readable name of one statistics row: ``Cohen's kappa (quadratic)``, ``Gwet's AC2``,
    ``Krippendorff's alpha (ordinal)``."""
    name = _NAMES.get(row["statistic"], row["statistic"])
    if row["statistic"] == "gwet_ac1" and row["weights"] != "none":
        name = "Gwet's AC2"
    if row["statistic"] == "krippendorff_alpha":
        return f"{name} ({row['level']})"
    if row["weights"] not in (None, "none"):
        return f"{name} ({row['weights']})"
    return name
