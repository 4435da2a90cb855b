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

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from goldboard.analysis import coefficients as C
from goldboard.analysis.agreement_inputs import LEVELS, AgreementOptions, ScaleConfig, prepare_ratings
from goldboard.analysis.estimate import EstimateCI, finite_or_none
from goldboard.analysis.resampling import bootstrap_sums, percentile_summary
from goldboard.errors import GoldboardError
from goldboard.text import natural_key

if TYPE_CHECKING:  # pragma: no cover
    from goldboard.label_configs.schema import Schema

__all__ = [
    "LEVELS",
    "STATISTICS",
    "MIN_ITEMS_FOR_CI",
    "agreement",
    "landis_koch_band",
    "statistic_name",
]

STATISTICS = (
    "percent_agreement",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "gwet_ac1",
    "brennan_prediger",
    "scott_pi",
    "pabak",
)
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

    <0 poor, 0-.20 slight, .21-.40 fair, .41-.60 moderate, .61-.80 substantial,
    .81-1 almost perfect.
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


def _estimate_dict(value, se, low=-1.0, high=1.0) -> dict:
    return EstimateCI.wald(value, se, low, high).agreement_dict()


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


def _row(statistic, weights, level, raters, group, n_items, value, se, low=-1.0, high=1.0) -> dict:
    est = _estimate_dict(value, se, low, high)
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
        "ci_method": "asymptotic" if est["ci_low"] is not None else None,
        "n_items": int(n_items),
    }


def _set_boot(target: dict, se, lo, hi) -> None:
    """Replace an estimate's SE and CI with bootstrap ones (kept as-is when the value is undefined)."""
    if target.get("value") is None:
        return
    target["se"], target["ci_low"], target["ci_high"] = _num(se), _num(lo), _num(hi)
    if "ci_method" in target:
        target["ci_method"] = "bootstrap" if target["ci_low"] is not None else None


@dataclass
class _Boot:
    """What to bootstrap: a feature block per pattern, and batched statistics on its sums."""

    blocks: list[np.ndarray] = dc_field(default_factory=list)
    width: int = 0
    #: (label for warnings, function of the full sums -> (B,) or (B, k), sink(se, lo, hi), low, high)
    specs: list[tuple[str, Callable[[np.ndarray], np.ndarray], Callable, float, float]] = dc_field(default_factory=list)

    def add(self, block: np.ndarray) -> slice:
        block = np.asarray(block, dtype=float)
        block = block.reshape(block.shape[0], -1)
        s = slice(self.width, self.width + block.shape[1])
        self.blocks.append(block)
        self.width += block.shape[1]
        return s

    def spec(self, label, fn, sink, low=-1.0, high=1.0):
        self.specs.append((label, fn, sink, low, high))


def _analyse(
    codes: np.ndarray,
    raters: list[str],
    cfg: ScaleConfig,
    group: str | None,
    clusters: np.ndarray | None,
    n_resamples: int,
    rng: np.random.Generator | None,
    progress: bool,
) -> tuple[list[dict], list[dict], list[dict], list[dict], list[str]]:
    """All statistics of one stratum: (statistics, per_label, confusion pairs, coincidence, warnings)."""
    cats = cfg.categories
    k = len(cats)
    n_items, n_r = codes.shape
    tag = f"[{group}] " if group is not None else ""
    warnings: list[str] = []
    weight_kinds = ["none"] + (["linear", "quadratic"] if cfg.ordered else [])
    W = {kind: C.agreement_weights(k, kind) for kind in weight_kinds}

    R = C.rating_counts(codes, k)
    ri = R.sum(axis=1)
    n_pairable = int((ri >= 2).sum())
    if n_pairable == 0:
        warnings.append(f"{tag}no item has two or more ratings: nothing to compare")
        return [], [], [], [], warnings
    if n_pairable < MIN_ITEMS_FOR_CI:
        warnings.append(
            f"{tag}only {n_pairable} item(s) with two or more ratings: 95% CIs from fewer than "
            f"{MIN_ITEMS_FOR_CI} items are unstable; read them as rough"
        )

    # distinct rating patterns: the bootstrap works on these, not on every item
    patterns, inverse, pcounts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    Rp = C.rating_counts(patterns, k)
    boot = _Boot()

    def boot_row(label, cols, fn, row, low=-1.0, high=1.0):
        if n_resamples:
            boot.spec(
                label, lambda S: fn(S[:, cols]), lambda se, lo, hi: _set_boot(row, se[0], lo[0], hi[0]), low, high
            )

    all_rows, pair_rows, alpha_rows = [], [], []
    pairs_out = []

    def paradox_check(pa_row, kappa_row, names):
        pa, kap = pa_row["value"], kappa_row["value"]
        if pa is None or kap is None or not (pa >= PARADOX_MIN_AGREEMENT and kap <= PARADOX_MAX_KAPPA):
            return
        share = R.sum(axis=0) / max(R.sum(), 1.0)
        top = int(np.argmax(share))
        who = " / ".join(names) if len(names) == 2 else "all raters"
        warnings.append(
            f"{tag}kappa paradox ({who}): {pa:.1%} raw agreement but {_NAMES[kappa_row['statistic']]} "
            f"{kap:.3f}; {cats[top]!r} makes up {share[top]:.0%} of the ratings (Feinstein & Cicchetti "
            f"1990). Report raw and specific agreement, PABAK/AC1 and prevalence beside kappa"
        )

    # ---------------------------------------------------------------- pairs of raters
    pair_cols: dict[tuple[int, int], tuple[slice, np.ndarray, int]] = {}
    for a, b in itertools.combinations(range(n_r), 2):
        names = [raters[a], raters[b]]
        both = (codes[:, a] >= 0) & (codes[:, b] >= 0)
        n_ab = int(both.sum())
        table = np.bincount(codes[both, a] * k + codes[both, b], minlength=k * k).reshape(k, k).astype(float)
        pairs_out.append({"raters": names, "group": group, "n_items": n_ab, "matrix": table.astype(int).tolist()})
        pboth = (patterns[:, a] >= 0) & (patterns[:, b] >= 0)
        onehot = np.zeros((patterns.shape[0], k * k))
        onehot[np.flatnonzero(pboth), (patterns[pboth, a] * k + patterns[pboth, b])] = 1.0
        cols = boot.add(onehot) if n_resamples else slice(0, 0)
        pair_cols[(a, b)] = (cols, table, n_ab)
        if n_ab == 0:
            warnings.append(f"{tag}raters {names[0]} and {names[1]} rated no item in common")
            continue
        if n_ab < n_items:
            warnings.append(
                f"{tag}raters {names[0]} and {names[1]} both rated {n_ab} of {n_items} items; "
                f"their pairwise statistics use those {n_ab}"
            )

        def table_stat(statistic, wkind, fn, low=-1.0, high=1.0, names=names, cols=cols, table=table, n_ab=n_ab):
            w = W[wkind] if wkind is not None else None
            est = fn(table, w) if w is not None else fn(table)
            row = _row(statistic, wkind or "none", None, names, group, n_ab, est.value, est.se, low, high)
            boot_row(
                f"{statistic} ({wkind or 'none'}) {'/'.join(names)}",
                cols,
                lambda S, fn=fn, w=w: np.asarray(
                    (fn(S.reshape(-1, k, k), w) if w is not None else fn(S.reshape(-1, k, k))).value
                ),
                row,
                low,
                high,
            )
            return row

        rows = [table_stat("percent_agreement", None, C.percent_agreement, 0.0, 1.0)]
        kappas = [table_stat("cohen_kappa", wk, C.cohen_kappa) for wk in weight_kinds]
        rows += kappas
        if n_r == 2:
            rows.append(table_stat("scott_pi", "none", C.scott_pi))
            rows += [table_stat("gwet_ac1", wk, C.gwet_ac) for wk in weight_kinds]
            rows.append(table_stat("brennan_prediger", "none", C.brennan_prediger))
            if k == 2:
                rows.append(table_stat("pabak", None, C.pabak))
        for kr in kappas:
            if kr["value"] is None:
                warnings.append(
                    f"{tag}Cohen's kappa ({kr['weights']} weights) undefined for {names[0]} / {names[1]}: "
                    f"chance agreement is 1 (both used one and the same category)"
                )
        paradox_check(rows[0], kappas[0], names)
        pair_rows += rows

    # ---------------------------------------------------------------- all raters together
    if n_r > 2:
        if n_resamples:
            one, two, pa_i, pi = _multi_features(Rp, W)
            c_one, c_two, c_pi = boot.add(one), boot.add(two), boot.add(pi)
            c_pa = {wk: boot.add(pa_i[wk]) for wk in weight_kinds}

        def multi_stat(statistic, wk, fn, low=-1.0, high=1.0):
            est = fn(R, W[wk])
            row = _row(statistic, wk, None, raters, group, n_pairable, est.value, est.se, low, high)
            if n_resamples:
                boot.spec(
                    f"{statistic} ({wk})",
                    lambda S, s=statistic, w=W[wk], cp=c_pa[wk]: _multi_value(
                        s, w, S[:, cp][:, 0], S[:, c_two][:, 0], S[:, c_one][:, 0], S[:, c_pi]
                    ),
                    lambda se, lo, hi, row=row: _set_boot(row, se[0], lo[0], hi[0]),
                    low,
                    high,
                )
            all_rows.append(row)
            return row

        pa_row = multi_stat("percent_agreement", "none", C.percent_agreement_multi, 0.0, 1.0)
        fk = multi_stat("fleiss_kappa", "none", C.fleiss_kappa)
        for wk in weight_kinds:
            multi_stat("gwet_ac1", wk, C.gwet_ac_multi)
        multi_stat("brennan_prediger", "none", C.brennan_prediger_multi)
        if k == 2:
            multi_stat("pabak", "none", C.brennan_prediger_multi)
        if fk["value"] is None:
            warnings.append(f"{tag}Fleiss' kappa undefined: every rating is in one category")
        paradox_check(pa_row, fk, raters)

    # ---------------------------------------------------------------- Krippendorff's alpha
    coincidence = C.coincidence_matrix(R)
    if n_resamples:
        m = Rp.sum(axis=1)
        scale = np.where(m >= 2, 1.0 / np.where(m >= 2, m - 1.0, 1.0), 0.0)[:, None]
        co = np.einsum("uc,uk->uck", Rp * scale, Rp) - np.einsum("uc,ck->uck", Rp * scale, np.eye(k))
        c_co = boot.add(co.reshape(len(Rp), k * k))
    for level in cfg.alpha_levels:
        est = C.krippendorff_alpha(R, level, cfg.scores)
        row = _row("krippendorff_alpha", "none", level, raters, group, n_pairable, est.value, est.se)
        if row["value"] is None:
            warnings.append(f"{tag}Krippendorff's alpha ({level}) undefined: the pairable ratings do not vary")
        boot_row(
            f"krippendorff_alpha ({level})",
            c_co if n_resamples else slice(0, 0),
            lambda S, lv=level: np.asarray(C.krippendorff_alpha_from_coincidence(S.reshape(-1, k, k), lv, cfg.scores)),
            row,
        )
        alpha_rows.append(row)

    stats = (pair_rows + alpha_rows) if n_r == 2 else (all_rows + alpha_rows + pair_rows)

    # ---------------------------------------------------------------- per label (one vs rest)
    per_label: list[dict] = []
    counts_by_rater = {raters[j]: np.bincount(codes[codes[:, j] >= 0, j], minlength=k) for j in range(n_r)}
    if n_r == 2:
        cols, table, n_ab = pair_cols[(0, 1)]
        ovr = C.one_vs_rest_tables(table)
        kap = C.cohen_kappa(ovr)
        pos, neg = C.specific_agreement(ovr)
        pab = C.pabak(ovr)
        pidx, bidx = C.prevalence_index(ovr), C.bias_index(ovr)
        # label counts over the items both rated, so they add up to the confusion matrix
        counts_by_rater = {raters[0]: table.sum(axis=1), raters[1]: table.sum(axis=0)}
        share = (table.sum(axis=0) + table.sum(axis=1)) / max(2.0 * n_ab, 1.0)
        ests = {
            "positive_agreement": (pos, 0.0),
            "negative_agreement": (neg, 0.0),
            "kappa": (kap, -1.0),
            "pabak": (pab, -1.0),
        }
    else:
        share = R[ri >= 2].sum(axis=0) / max(R[ri >= 2].sum(), 1.0)
        pos, neg = C.specific_agreement_multi(R)
        kap = C.fleiss_category_kappa(R)
        bps = [C.brennan_prediger_multi(np.column_stack([ri - R[:, c], R[:, c]])) for c in range(k)]
        pab = C.Estimate(np.array([b.value for b in bps]), np.array([b.se for b in bps]))
        ests = {
            "positive_agreement": (pos, 0.0),
            "negative_agreement": (neg, 0.0),
            "kappa": (kap, -1.0),
            "pabak": (pab, -1.0),
        }
        pidx = bidx = [None] * k
        n_ab = n_pairable
    for c in range(k):
        entry = {
            "label": cats[c],
            "group": group,
            "raters": list(raters),
            "n_items": int(n_ab),
            "count_by_rater": {r: int(counts_by_rater[r][c]) for r in raters},
            "prevalence": _num(share[c]),
        }
        for key, (est, low) in ests.items():
            entry[key] = _estimate_dict(np.asarray(est.value)[c], np.asarray(est.se)[c], low, 1.0)
        entry["kappa_method"] = "cohen" if n_r == 2 else "fleiss"
        entry["prevalence_index"] = _num(pidx[c]) if pidx[c] is not None else None
        entry["bias_index"] = _num(bidx[c]) if bidx[c] is not None else None
        entry["ci_method"] = "asymptotic" if n_ab else None
        per_label.append(entry)
    if n_resamples and n_ab:
        if n_r == 2:

            def label_fn(S, which, cols=pair_cols[(0, 1)][0]):
                t = C.one_vs_rest_tables(S[:, cols].reshape(-1, k, k))
                if which == "kappa":
                    return np.asarray(C.cohen_kappa(t).value)
                if which == "pabak":
                    return np.asarray(C.pabak(t).value)
                p, q = C.specific_agreement(t)
                return np.asarray(p.value if which == "positive_agreement" else q.value)
        else:
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

        start = len(per_label) - k
        for which, low in (("kappa", -1.0), ("pabak", -1.0), ("positive_agreement", 0.0), ("negative_agreement", 0.0)):
            boot.spec(
                f"per-label {which}",
                lambda S, w=which: label_fn(S, w),
                lambda se, lo, hi, w=which: [_set_boot(per_label[start + c][w], se[c], lo[c], hi[c]) for c in range(k)],
                low,
                1.0,
            )

    # ---------------------------------------------------------------- run the bootstrap
    if n_resamples:
        F = np.hstack(boot.blocks)
        if clusters is None:
            S = bootstrap_sums(F, n_resamples, rng, pcounts, progress=progress)
        else:
            _, cinv = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
            G = np.zeros((int(cinv.max()) + 1, F.shape[1]))
            np.add.at(G, cinv.reshape(-1), F[inverse])
            S = bootstrap_sums(G, n_resamples, rng, None, progress=progress)
        for label, fn, sink, low, high in boot.specs:
            se, lo, hi, share_nan = percentile_summary(fn(S), low, high)
            sink(se, lo, hi)
            worst = float(np.max(share_nan))
            if 0.0 < worst < 1.0 and worst >= 0.01:
                warnings.append(
                    f"{tag}{label}: undefined in {worst:.0%} of bootstrap resamples; its interval uses the others"
                )
        for entry in per_label:
            entry["ci_method"] = "bootstrap" if n_ab else None
    degenerate = [r for r in stats if r["ci_method"] == "asymptotic" and r["se"] == 0.0]
    if degenerate:
        names = sorted({statistic_name(r) for r in degenerate})
        warnings.append(
            f"{tag}asymptotic SE is 0 for {', '.join(names)} (a degenerate table, e.g. perfect agreement): "
            f"the Wald interval collapses to the point; do not read it as certainty"
        )
    coinc_out = [{"group": group, "raters": list(raters), "matrix": [[_num(x) for x in row] for row in coincidence]}]
    return stats, per_label, pairs_out, coinc_out, warnings


# --------------------------------------------------------------------------- public API


def agreement(
    ratings: pd.DataFrame,
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
) -> dict:
    """Agreement statistics of one field, in the JSON contract of ``goldboard agree``.

    Parameters
    ----------
    ratings : DataFrame
        Ratings-table shape: ``item_id, rater, field, value`` (``label`` accepted
        for ``value``; ``field`` optional).  Optional ``_where`` (``"file:line"``) or
        ``_line`` columns make error messages point at the input row.
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
    prep, cfg = prepare_ratings(ratings, opts)
    rng = np.random.default_rng(seed) if n_resamples else None
    if n_resamples and n_resamples < 200:
        prep.warnings.append(
            f"only {n_resamples} bootstrap resamples: percentile CIs need about 1,000-2,000 to be stable"
        )
    strata: list[tuple[str | None, np.ndarray]] = [(None, np.ones(len(prep.items), bool))]
    if prep.groups is not None:
        for g in sorted(set(prep.groups), key=natural_key):
            strata.append((str(g), prep.groups == g))
    statistics, per_label, pairs, coinc = [], [], [], []
    warnings = list(prep.warnings)
    used = np.zeros(len(cfg.categories), dtype=bool)
    for group, mask in strata:
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
        s, pl, pr, co, w = _analyse(codes, rs, cfg, group, clu, n_resamples, rng, progress)
        statistics += s
        per_label += pl
        pairs += pr
        coinc += co
        warnings += w
    if n_resamples and prep.clusters is not None:
        n_clusters = len(set(prep.clusters))
        if n_clusters < MIN_ITEMS_FOR_CI:
            warnings.append(f"only {n_clusters} clusters to resample: cluster-bootstrap CIs are unstable")
    unused = [c for c, u in zip(cfg.categories, used) if not u]
    if unused:
        note = " (weights and the ordinal metric still span the full scale)" if cfg.ordered else ""
        warnings.append(f"categories never used by any rater: {', '.join(unused)}{note}")
    return {
        "n_items": int(len(prep.items)),
        "n_raters": int(len(prep.raters)),
        "raters": list(prep.raters),
        "categories": list(cfg.categories),
        "level": cfg.data_level,
        "statistics": statistics,
        "per_label": per_label,
        "confusion": {
            "categories": list(cfg.categories),
            "rows": "first rater of each pair",
            "pairs": pairs,
            "coincidence": coinc,
        },
        "warnings": warnings,
    }


# --------------------------------------------------------------------------- names

_NAMES = {
    "percent_agreement": "Percent agreement",
    "cohen_kappa": "Cohen's kappa",
    "fleiss_kappa": "Fleiss' kappa",
    "krippendorff_alpha": "Krippendorff's alpha",
    "gwet_ac1": "Gwet's AC1",
    "brennan_prediger": "Brennan-Prediger",
    "scott_pi": "Scott's pi",
    "pabak": "PABAK",
}


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
