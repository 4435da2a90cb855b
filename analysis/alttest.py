"""The alternative annotator test (alt-test): can an LLM judge replace the human raters?

Pure, vectorised numpy functions: value grids in, results out; nothing here reads files or
knows about studies.

Reference
---------
Calderon, N., Reichart, R., & Dror, R. (2025). The Alternative Annotator Test for LLM-as-a-Judge:
How to Statistically Justify Replacing Human Annotators with LLMs. *Proceedings of ACL 2025*
(Volume 1: Long Papers), pp. 16051-16081.  Code and data: github.com/nitaytech/AltTest
(``alt_test_example.ipynb``, commit 18428b1f4f34ac61c4978bc180263b90111e7337), which this module
follows step by step; ``tests/test_judge_alttest.py`` reproduces the winning rates and advantage
probabilities the notebook prints.

The procedure
-------------
Humans ``h = 1..m`` rated items; the judge ``f`` rated them too.  An item is used when at least
``min_humans_per_item`` (2) humans and the judge rated it.  For each excluded human ``h`` and each
item ``i`` that ``h`` rated (the items *of* ``h``), the remaining humans ``R_i = H_i \\ {h}`` are
the reference and an alignment score ``S`` says how well one label represents them:

* accuracy (labels): ``S(x, R_i) = mean_{g in R_i} 1[x = x_g]``;
* negative RMSE (scores): ``S(x, R_i) = -sqrt(mean_{g in R_i} (x - x_g)^2)``.

The judge's and the excluded human's indicators are ``W_f = 1[S(f_i, R_i) >= S(h_i, R_i)]`` and
``W_h = 1[S(h_i, R_i) >= S(f_i, R_i)]`` (a tie counts for both), ``d_i = W_h - W_f`` in
{-1, 0, 1}, and the one-sided paired t-test of ``H0: mean(d) >= epsilon`` against
``H1: mean(d) < epsilon`` (``scipy.stats.ttest_1samp(d, epsilon, alternative="less")``) gives
``p_h``.  ``epsilon`` is the cost-benefit margin: the human's advantage the judge may lose by and
still win (authors' rule of thumb: 0.2 for experts, 0.15 for skilled annotators, 0.1 for crowd
workers; smaller when the humans agree little).  The ``m`` p-values are corrected with the
Benjamini-Yekutieli (2001) step-up procedure at ``q`` (0.05): with sorted ``p_(1) <= ... <= p_(m)``
and ``c(m) = sum_{k=1..m} 1/k``, reject the ``k*`` smallest for the largest ``k*`` with
``p_(k*) <= k* q / (m c(m))``.  A rejected hypothesis is a human the judge *wins* against.

* winning rate ``omega`` = rejected / humans tested; the judge passes when ``omega >= 0.5``;
* advantage probability ``rho = mean_h rho_f^h`` with ``rho_f^h = mean_i W_f`` (the chance that the
  judge is at least as good as a random human on a random item); compare judges by ``rho``.

As in the authors' code, both scores are compared directly: for accuracy on the counts of matching
remaining humans, for negative RMSE on the sums of squared differences (the same denominator
``|R_i|`` on both sides, so the comparison is the same and ties are exact for integer scales).

Guards (the authors' FAQ): a human with fewer than ``min_items_per_human`` (30) items gets the
Wilcoxon signed-rank test of ``d - epsilon`` (one-sided, ``alternative="less"``) instead of the
t-test (``small_sample="wilcoxon"``, the FAQ's advice), or is left out of the test as in the
authors' code (``small_sample="skip"``).  With only two humans the test just asks whether the judge
agrees more with one human than the other does: three or more are recommended; a warning says so.

The t statistic is undefined when every ``d_i`` is the same (zero variance).  Then, as
``scipy.stats.ttest_1samp`` (scipy >= 1.11) reports, ``t = -inf, p = 0`` when ``mean(d) < epsilon``
(the judge is at least as good on every item and the margin holds: rejected), ``t = +inf, p = 1``
when ``mean(d) > epsilon``, and ``t`` and ``p`` are NaN (never rejected) when ``mean(d) = epsilon``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from goldboard.errors import GoldboardError

SCORINGS = ("accuracy", "neg-rmse")
SMALL_SAMPLE = ("wilcoxon", "skip")
#: the authors' rule of thumb for epsilon, by who the humans are
EPSILON_GUIDANCE = {"expert": 0.2, "skilled": 0.15, "crowd": 0.1}


@dataclass(frozen=True)
class HumanComparison:
    """The judge against one excluded human."""

    human: str
    n_items: int
    #: rho_f: share of the human's items on which the judge represents the others at least as well
    judge_advantage: float
    #: rho_h: share on which the excluded human does at least as well as the judge
    human_advantage: float
    statistic: float
    p_value: float
    test: str  # "t" | "wilcoxon"
    rejected: bool


@dataclass(frozen=True)
class AltTestResult:
    judge: str
    scoring: str
    epsilon: float
    q: float
    winning_rate: float
    advantage_probability: float
    passed: bool
    humans: list[HumanComparison]
    #: items with >= min_humans_per_item humans and a judge label
    items_used: int
    #: humans left out of the test: (name, items, reason)
    skipped: list[tuple[str, int, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["humans"] = [
            {**asdict(c), "statistic": _json_float(c.statistic), "p_value": _json_float(c.p_value)} for c in self.humans
        ]
        out["skipped"] = [{"human": h, "n_items": n, "reason": r} for h, n, r in self.skipped]
        return out


def _json_float(x: float) -> float | str | None:
    if np.isnan(x):
        return None
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(x)


def by_rejections(p_values: np.ndarray, q: float = 0.05) -> np.ndarray:
    """Benjamini-Yekutieli (2001) step-up rejections at FDR level ``q`` (NaN: never rejected).

    Same decisions as ``statsmodels.stats.multitest.multipletests(p, q, method="fdr_by")[0]``.

    >>> by_rejections(np.array([0.001, 0.02, 0.03, 0.5]), 0.05).tolist()
    [True, False, False, False]
    """
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(np.where(np.isnan(p), np.inf, p), kind="stable")
    c_m = np.sum(1.0 / np.arange(1, m + 1))
    thresholds = np.arange(1, m + 1) / m * (q / c_m)
    below = np.flatnonzero(p[order] <= thresholds)  # NaN compares False
    out = np.zeros(m, dtype=bool)
    if below.size:
        out[order[: below[-1] + 1]] = True
    return out


def one_sided_t(d_sum: np.ndarray, d_sq: np.ndarray, n: np.ndarray, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``scipy.stats.ttest_1samp(d, epsilon, alternative="less")`` for many integer vectors at
    once, from ``sum(d)``, ``sum(d^2)`` and ``n`` (exact integer variance, so an all-equal vector
    has variance exactly 0: t = -inf / +inf / NaN as the module doc says).  Needs ``n >= 2``.

    ``d = [-1, -1, -1, -1, 1]`` (scipy: t = -2.0, p = 0.0581):

    >>> t, p = one_sided_t(np.array([-3]), np.array([5]), np.array([5]), 0.2)
    >>> round(float(t[0]), 4), round(float(p[0]), 4)
    (-2.0, 0.0581)
    """
    n = np.asarray(n, dtype=np.int64)
    s1 = np.asarray(d_sum, dtype=np.int64)
    s2 = np.asarray(d_sq, dtype=np.int64)
    mean = s1 / n
    ss = n * s2 - s1 * s1  # n * sum((d - mean)^2), an exact integer
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(ss / (n * (n - 1.0)) / n)
        t = (mean - epsilon) / se
    t = np.where(ss == 0, np.where(mean < epsilon, -np.inf, np.where(mean > epsilon, np.inf, np.nan)), t)
    from scipy.special import stdtr  # the t cdf scipy.stats.t.cdf evaluates; loaded here, so that recording
    # a judge's labels (`judge run`) does not wait for scipy (and scipy.stats loads slowly)

    p = stdtr(n - 1, t)
    return t, np.where(np.isnan(t), np.nan, p)


def _wilcoxon(d: np.ndarray, epsilon: float) -> tuple[float, float]:
    """One-sided Wilcoxon signed-rank test of ``d - epsilon`` (zeros dropped, as scipy's default)."""
    x = d - epsilon
    if not np.any(x != 0):
        return float("nan"), float("nan")
    from scipy import stats  # only for a human with fewer than 30 items: keeps `report` start-up light

    res = stats.wilcoxon(x, alternative="less")
    return float(res.statistic), float(res.pvalue)


def _indicators(humans: np.ndarray, judges: np.ndarray, scoring: str) -> tuple[np.ndarray, np.ndarray]:
    """``(W_f, W_h)``, each items x humans x judges booleans (valid where the human and judge rated)."""
    present = ~np.isnan(humans)
    x = np.where(present, humans, 0.0)
    y = np.where(np.isnan(judges), 0.0, judges)
    others = 1.0 - np.eye(humans.shape[1])  # [h, g]: g is one of the remaining humans when h is out
    if scoring == "accuracy":
        same = (x[:, :, None] == x[:, None, :]) & present[:, :, None] & present[:, None, :]
        human_fit = np.einsum("ihg,hg->ih", same.astype(float), others)  # matching remaining humans
        judge_same = ((x[:, :, None] == y[:, None, :]) & present[:, :, None]).astype(float)  # [i, g, j]
        judge_fit = np.einsum("igj,hg->ihj", judge_same, others)
        wins_f = judge_fit >= human_fit[:, :, None]
        wins_h = human_fit[:, :, None] >= judge_fit
    else:  # neg-rmse: the smaller sum of squared differences to the remaining humans wins
        sq = (x[:, :, None] - x[:, None, :]) ** 2 * (present[:, :, None] & present[:, None, :])
        human_sse = np.einsum("ihg,hg->ih", sq, others)
        judge_sq = (x[:, :, None] - y[:, None, :]) ** 2 * present[:, :, None]  # [i, g, j]
        judge_sse = np.einsum("igj,hg->ihj", judge_sq, others)
        wins_f = judge_sse <= human_sse[:, :, None]
        wins_h = human_sse[:, :, None] <= judge_sse
    return wins_f, wins_h


@dataclass(frozen=True)
class _Differences:
    d: np.ndarray  # [i, h, j] W_h - W_f
    valid: np.ndarray  # [i, h, j] the item counts for human h and judge j
    n: np.ndarray  # [h, j] items
    s1: np.ndarray  # [h, j] sum of d
    s2: np.ndarray  # [h, j] sum of d^2
    rho_f: np.ndarray  # [h, j]
    rho_h: np.ndarray  # [h, j]
    enough: np.ndarray  # [i] rated by enough humans
    kept: np.ndarray  # [i, j] used for judge j


def _differences(humans: np.ndarray, judges: np.ndarray, scoring: str, min_humans: int) -> _Differences:
    present = ~np.isnan(humans)
    enough = present.sum(axis=1) >= min_humans
    kept = enough[:, None] & ~np.isnan(judges)  # [i, j]
    wins_f, wins_h = _indicators(humans, judges, scoring)
    valid = present[:, :, None] & kept[:, None, :]  # [i, h, j]
    d = wins_h.astype(np.int64) - wins_f.astype(np.int64)
    n = valid.sum(axis=0)  # [h, j]
    return _Differences(
        d=d,
        valid=valid,
        n=n,
        s1=np.where(valid, d, 0).sum(axis=0),
        s2=np.where(valid, d * d, 0).sum(axis=0),
        rho_f=np.where(valid, wins_f, False).sum(axis=0) / np.maximum(n, 1),
        rho_h=np.where(valid, wins_h, False).sum(axis=0) / np.maximum(n, 1),
        enough=enough,
        kept=kept,
    )


def _t_tests(dd: _Differences, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    t, p = one_sided_t(dd.s1, dd.s2, np.maximum(dd.n, 2), epsilon)
    return np.where(dd.n >= 2, t, np.nan), np.where(dd.n >= 2, p, np.nan)  # one item: no variance to test


def check_options(*, scoring: str, small_sample: str, epsilon: float, q: float) -> None:
    """The test's settings, checked before a caller records anything (``judge --study`` saves them)."""
    if scoring not in SCORINGS:
        raise GoldboardError(f"{scoring!r}: use one of {', '.join(SCORINGS)}", param="scoring")
    if small_sample not in SMALL_SAMPLE:
        raise GoldboardError(f"{small_sample!r}: use one of {', '.join(SMALL_SAMPLE)}", param="small_sample")
    if not (np.isfinite(epsilon) and 0 <= epsilon < 1):
        raise GoldboardError(f"{epsilon}: give a margin in [0, 1), e.g. 0.2 for experts", param="epsilon")
    if not 0 < q < 1:
        raise GoldboardError(f"{q}: give a false discovery rate in (0, 1), e.g. 0.05", param="q")


def _check(humans: np.ndarray, judges: np.ndarray, names: Sequence[str], judge_names: Sequence[str], **opts) -> None:
    check_options(scoring=opts["scoring"], small_sample=opts["small_sample"], epsilon=opts["epsilon"], q=opts["q"])
    if humans.ndim != 2 or judges.ndim != 2 or humans.shape[0] != judges.shape[0]:
        raise GoldboardError("humans and judges must be items x raters grids with the same items", param="humans")
    if humans.shape[1] != len(names) or judges.shape[1] != len(judge_names):
        raise GoldboardError("one name per column of the humans and judges grids", param="human_names")
    if len(names) < 2:
        raise GoldboardError(
            f"{len(names)} human(s): the alt-test needs at least 2 (3 or more recommended)", param="humans"
        )
    if opts["min_humans_per_item"] < 2:
        raise GoldboardError(
            "at least 2: the excluded human needs others to be compared with", param="min_humans_per_item"
        )


def alt_test(
    humans: np.ndarray,
    judges: np.ndarray,
    *,
    human_names: Sequence[str],
    judge_names: Sequence[str],
    scoring: str = "accuracy",
    epsilon: float = 0.2,
    q: float = 0.05,
    min_humans_per_item: int = 2,
    min_items_per_human: int = 30,
    small_sample: str = "wilcoxon",
) -> list[AltTestResult]:
    """The alt-test of each judge (see the module doc), one :class:`AltTestResult` per judge.

    ``humans``: items x humans, ``judges``: items x judges, float arrays with NaN where there is no
    rating.  For ``scoring="accuracy"`` the values are category codes (only equality counts);
    for ``"neg-rmse"`` they are the scores.
    """
    humans = np.asarray(humans, dtype=float)
    judges = np.asarray(judges, dtype=float)
    opts = dict(scoring=scoring, epsilon=float(epsilon), q=float(q), small_sample=small_sample)
    _check(humans, judges, human_names, judge_names, min_humans_per_item=min_humans_per_item, **opts)
    dd = _differences(humans, judges, scoring, min_humans_per_item)
    d, valid, n, enough, kept = dd.d, dd.valid, dd.n, dd.enough, dd.kept
    rho_f, rho_h = dd.rho_f, dd.rho_h
    t, p = _t_tests(dd, opts["epsilon"])
    common = _common_warnings(len(human_names), int((~enough).sum()), min_humans_per_item)
    return [
        _judge_result(
            name, human_names, d[:, :, j], valid[:, :, j], n[:, j], (rho_f[:, j], rho_h[:, j]), (t[:, j], p[:, j]),
            min_items_per_human, int(kept[:, j].sum()), common, **opts,
        )
        for j, name in enumerate(judge_names)
    ]  # fmt: skip


def _common_warnings(m: int, dropped: int, min_humans: int) -> list[str]:
    out = []
    if m == 2:
        out.append(
            "only 2 humans: the alt-test then asks whether the judge agrees with one human more than the other "
            "does, with no consensus to represent; 3 or more humans are recommended (Calderon et al. 2025, FAQ)"
        )
    if dropped:
        out.append(f"{dropped} item(s) rated by fewer than {min_humans} humans are not used")
    return out


def _judge_result(name, human_names, d, valid, n, rhos, tp, min_items, items_used, common, **opts) -> AltTestResult:
    """One judge's result: each human's test (t, Wilcoxon, or skipped, saying why), BY, omega, rho."""
    rho_f, rho_h = rhos
    t, p = tp
    eps = opts["epsilon"]
    comps: list[HumanComparison] = []
    skipped: list[tuple[str, int, str]] = []
    notes = list(common)
    for h, hname in enumerate(human_names):
        nh = int(n[h])
        if nh == 0:
            skipped.append((hname, 0, "no item shared with another human and the judge"))
            continue
        if nh < min_items:
            if opts["small_sample"] == "skip":
                skipped.append((hname, nh, f"fewer than {min_items} items (the t-test needs {min_items})"))
                continue
            stat, pv = _wilcoxon(d[valid[:, h], h].astype(float), eps)
            notes.append(f"{hname}: {nh} items (< {min_items}): Wilcoxon signed-rank test instead of the t-test")
            comps.append(HumanComparison(hname, nh, float(rho_f[h]), float(rho_h[h]), stat, pv, "wilcoxon", False))
            continue
        comps.append(HumanComparison(hname, nh, float(rho_f[h]), float(rho_h[h]), float(t[h]), float(p[h]), "t", False))
    if not comps:
        raise GoldboardError(
            f"judge {name}: no human could be tested (" + "; ".join(f"{h}: {r}" for h, _, r in skipped) + ")",
            param="judges",
        )
    rejected = by_rejections(np.array([c.p_value for c in comps]), opts["q"])
    comps = [HumanComparison(**{**asdict(c), "rejected": bool(r)}) for c, r in zip(comps, rejected)]
    wr = float(rejected.sum() / len(comps))
    rho = float(np.mean([c.judge_advantage for c in comps]))
    return AltTestResult(
        judge=name,
        scoring=opts["scoring"],
        epsilon=eps,
        q=opts["q"],
        winning_rate=wr,
        advantage_probability=rho,
        passed=wr >= 0.5,
        humans=comps,
        items_used=items_used,
        skipped=skipped,
        warnings=notes,
    )


# --------------------------------------------------------------------------- planning: how many items?


def _by_rejections_rows(p: np.ndarray, q: float) -> np.ndarray:
    """:func:`by_rejections` on each row of ``p`` (rows: simulated studies x epsilons)."""
    return np.array([by_rejections(row, q) for row in p.reshape(-1, p.shape[-1])]).reshape(p.shape)


def _pair_kappa(a: np.ndarray, b: np.ndarray, k: int) -> float:
    t = np.bincount(a * k + b, minlength=k * k).reshape(k, k) / a.size
    pe = t.sum(1) @ t.sum(0)
    return float((np.trace(t) - pe) / (1 - pe)) if pe < 1 else float("nan")


def _simulated_labels(rng: np.random.Generator, priors: np.ndarray, gold: np.ndarray, noise: float, m: int):
    """The authors' annotator model: with probability ``1 - noise`` the gold label, else a draw
    from the category priors (= ``probs = priors * noise; probs[gold] += 1 - noise``)."""
    keep = rng.random((gold.size, m)) < 1 - noise
    other = rng.choice(priors.size, size=(gold.size, m), p=priors)
    return np.where(keep, gold[:, None], other)


def simulate_items_needed(
    *,
    n_categories: int = 4,
    human_noise: float = 0.3,
    judge_noise: float = 0.3,
    n_humans: int = 3,
    epsilon: float = 0.2,
    sizes: Sequence[int] = tuple(range(30, 201, 10)),
    n_datasets: int = 200,
    n_boots: int = 1,
    max_items: int = 500,
    max_humans: int = 6,
    q: float = 0.05,
    seed: int = 1,
    max_batches: int = 1,
) -> dict:
    """How many items the alt-test needs: the authors' simulation (paper, appendix C; the
    notebook's "Simulation" section), seeded.

    ``n_datasets`` datasets (default 200, one study each: independent studies; the authors used 20
    datasets resampled 10 times, which are not 200 independent studies), each with category priors drawn from a flat Dirichlet, ``max_items``
    items with a gold label drawn from the priors, ``max_humans`` annotators and one judge that
    give the gold label with probability ``1 - noise`` and otherwise a draw from the priors (the
    notebook: noise 0.1 -> human kappa about 0.80, 0.2 -> 0.63, 0.3 -> 0.48, 0.4 -> 0.36).  For each
    size, ``n_boots`` resamples per dataset draw ``size`` items and ``n_humans`` annotators without
    replacement and run the alt-test (accuracy).  Per size: the mean winning rate, the share of
    simulated studies the judge passes, rho (mean, 5th and 95th percentiles), the humans' mean
    pairwise Cohen's kappa and the judge's accuracy against gold.  ``items_needed``: the smallest
    size from which on the mean winning rate stays at 0.5 or more (the authors' curves against the
    0.5 line); ``items_for_80``: the smallest size from which on the judge passes in at least 80% of
    the simulated studies (None: not within ``sizes``).  Each row has the Monte Carlo SE of its
    mean winning rate and pass share (``winning_rate_se``, ``passed_se``: from the spread between
    datasets, since resamples of one dataset are not independent); ``passed_se_near_80`` is the
    largest pass-share SE near 80%, the precision of ``items_for_80`` (another seed can move it by
    a step of ``sizes`` where the share lies within about 2 SE of 0.8).
    """
    if not 2 <= n_categories <= 50:
        raise GoldboardError(f"{n_categories}: give 2 to 50 categories", param="n_categories")
    for name, v in (("human_noise", human_noise), ("judge_noise", judge_noise)):
        if not 0 <= v <= 1:
            raise GoldboardError(f"{v}: a noise level is in [0, 1]", param=name)
    if not 2 <= n_humans <= max_humans:
        raise GoldboardError(f"{n_humans}: give 2 to {max_humans} humans", param="n_humans")
    if not sizes or min(sizes) < 2 or max(sizes) > max_items:
        raise GoldboardError(f"item counts must lie in 2..{max_items}", param="sizes")
    args = dict(locals())
    parts = [_simulated_batch(np.random.default_rng(seed), sizes, n_datasets, n_boots, n_categories, human_noise,
                              judge_noise, n_humans, max_items, max_humans, epsilon, q)]  # fmt: skip
    out = _simulation_summary(sizes, *_joined(parts), args)
    # more datasets, each batch from its own stream (seed, batch), while a count's winning rate or pass
    # share lies within AMBIGUOUS_SE Monte Carlo SEs of 0.5 or 80%: the counts read off the curve then
    # no longer move with the seed, but where the truth sits on the line (then the sentence says so)
    while len(parts) < int(max_batches) and ambiguous_counts(out):
        rng = np.random.default_rng([int(seed), len(parts)])
        parts.append(_simulated_batch(rng, sizes, n_datasets, n_boots, n_categories, human_noise, judge_noise,
                                      n_humans, max_items, max_humans, epsilon, q))  # fmt: skip
        out = _simulation_summary(sizes, *_joined(parts), args | {"n_datasets": n_datasets * len(parts)})
    out["settings"]["batches"] = len(parts)
    out["ambiguous"] = ambiguous_counts(out)
    return out


def _joined(parts: list[tuple]) -> list[np.ndarray]:
    """The batches' arrays side by side along the datasets axis."""
    return [np.concatenate(arrays, axis=1) for arrays in zip(*parts)]


#: a count is ambiguous while its winning rate (pass share) lies within this many Monte Carlo SEs of
#: 0.5 (80%): ``plan judge`` adds datasets until none is, or ``max_batches`` is reached
AMBIGUOUS_SE = 2.0


def ambiguous_counts(data: dict) -> list[int]:
    """The simulated item counts whose mean winning rate lies within :data:`AMBIGUOUS_SE` Monte Carlo
    SEs of 0.5, or whose pass share within as many of 80% (those another seed could put on the
    other side of the line)."""
    out = []
    for r in data["rows"]:
        near = [(r["winning_rate"], r["winning_rate_se"], 0.5), (r["passed_share"], r["passed_se"], 0.8)]
        if any(se == se and abs(v - line) < AMBIGUOUS_SE * se for v, se, line in near):
            out.append(r["items"])
    return out


def _simulated_batch(rng, sizes, n_datasets, n_boots, n_categories, human_noise, judge_noise, n_humans,
                     max_items, max_humans, epsilon, q):  # fmt: skip
    """One batch of ``n_datasets`` simulated datasets: (winning rate, rho, kappa, accuracy), each
    sizes x datasets x resamples."""
    wr = np.zeros((len(sizes), n_datasets, n_boots))
    rho, kappa, acc = np.zeros_like(wr), np.zeros_like(wr), np.zeros_like(wr)
    for ds in range(n_datasets):
        priors = rng.dirichlet(np.ones(n_categories))
        gold = rng.choice(n_categories, size=max_items, p=priors)
        humans = _simulated_labels(rng, priors, gold, human_noise, max_humans)
        judge = _simulated_labels(rng, priors, gold, judge_noise, 1)
        for si, size in enumerate(sizes):
            for b in range(n_boots):
                items = rng.choice(max_items, size=size, replace=False)
                who = rng.choice(max_humans, size=n_humans, replace=False)
                h, j = humans[np.ix_(items, who)], judge[items]
                dd = _differences(h.astype(float), j.astype(float), "accuracy", 2)
                _, p = _t_tests(dd, epsilon)
                wr[si, ds, b] = by_rejections(p[:, 0], q).mean()
                rho[si, ds, b] = dd.rho_f[:, 0].mean()
                kappa[si, ds, b] = np.nanmean(
                    [
                        _pair_kappa(h[:, x], h[:, y], n_categories)
                        for x in range(n_humans)
                        for y in range(x + 1, n_humans)
                    ]
                )
                acc[si, ds, b] = (j[:, 0] == gold[items]).mean()
    return wr, rho, kappa, acc


def _simulation_summary(sizes, wr, rho, kappa, acc, args) -> dict:
    flat = lambda x: x.reshape(len(sizes), -1)  # noqa: E731
    passed = (wr >= 0.5).mean(axis=2)  # sizes x datasets: each dataset's share of resamples passed
    n_ds = wr.shape[1]

    def cluster_se(per_dataset: np.ndarray) -> float:
        """Monte Carlo SE of a mean over datasets x resamples: from the spread between datasets (the
        resamples of one dataset are not independent studies)."""
        return float(per_dataset.std(ddof=1) / np.sqrt(n_ds)) if n_ds > 1 else float("nan")

    rows = [
        {
            "items": int(s),
            "winning_rate": float(flat(wr)[i].mean()),
            "winning_rate_se": cluster_se(wr[i].mean(axis=1)),
            "passed_share": float((flat(wr)[i] >= 0.5).mean()),
            "passed_se": cluster_se(passed[i]),
            "rho": float(flat(rho)[i].mean()),
            "rho_p05": float(np.percentile(flat(rho)[i], 5)),
            "rho_p95": float(np.percentile(flat(rho)[i], 95)),
        }
        for i, s in enumerate(sizes)
    ]

    def first(ok) -> int | None:
        """The smallest count from which on every simulated count meets ``ok`` (the curves are noisy)."""
        found = None
        for r in reversed(rows):
            if not ok(r):
                break
            found = r["items"]
        return found

    keys = ("n_categories", "human_noise", "judge_noise", "n_humans", "epsilon", "n_datasets", "n_boots", "q", "seed")
    return {
        "settings": {k: args[k] for k in keys},
        "human_kappa": float(np.nanmean(kappa)),
        "judge_accuracy": float(acc.mean()),
        "rows": rows,
        "items_needed": first(lambda r: r["winning_rate"] >= 0.5),
        "items_for_80": first(lambda r: r["passed_share"] >= 0.8),
        # the largest Monte Carlo SE of the pass share near 80% (rows within 0.15 of it): how far the
        # count read off the curve can move with another seed
        "winning_rate_se_near_50": max(
            (r["winning_rate_se"] for r in rows if abs(r["winning_rate"] - 0.5) <= 0.15), default=None
        ),
        "passed_se_near_80": max((r["passed_se"] for r in rows if abs(r["passed_share"] - 0.8) <= 0.15), default=None),
    }


def rho_intervals(
    humans: np.ndarray,
    judges: np.ndarray,
    *,
    tested: Sequence[bool],
    scoring: str = "accuracy",
    min_humans_per_item: int = 2,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[tuple[float | None, float | None]]:
    """A seeded item-level percentile bootstrap 95% interval for each judge's rho.

    The items are resampled with replacement (``n_boot`` times, ``numpy.random.default_rng(seed)``);
    in each resample every tested human's ``rho_f^h`` is recomputed on that human's items in it and
    rho is their mean, as :func:`alt_test` computes it.  ``tested``: one flag per human (the humans
    the test used; a skipped human is left out as there).  ``(None, None)``: fewer than 95% of the
    resamples leave every tested human an item."""
    humans = np.asarray(humans, dtype=float)
    judges = np.asarray(judges, dtype=float)
    keep = np.asarray(tested, dtype=bool)
    dd = _differences(humans, judges, scoring, min_humans_per_item)
    wins_f, _ = _indicators(humans, judges, scoring)
    n_items = humans.shape[0]
    w = np.random.default_rng(seed).multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_boot)
    out = []
    for j in range(judges.shape[1]):
        valid = dd.valid[:, keep, j].astype(float)  # [i, h]
        won = np.where(dd.valid[:, keep, j], wins_f[:, keep, j], False).astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = ((w @ won) / (w @ valid)).mean(axis=1)
        rho = rho[np.isfinite(rho)]
        if rho.size < 0.95 * n_boot:
            out.append((None, None))
            continue
        lo, hi = np.percentile(rho, [2.5, 97.5])
        out.append((float(lo), float(hi)))
    return out
