"""Statistics behind `goldboard score`, checked against published worked examples."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score, precision_recall_fscore_support

from goldboard.analysis.resampling import bootstrap_cell_counts, percentile_interval
from goldboard.analysis.scoring_stats import (
    accuracy_from_confusion,
    bootstrap_label_metrics,
    bootstrap_mean_of_levels,
    confusion_from_codes,
    macro_f1_from_confusion,
    mcnemar_test,
    naive_bootstrap_loop,
    paired_difference,
    per_label_prf,
    wilson_interval,
)

# OpenMTB-Audit MTB-AuditAgent, results/confusion_matrices_4label.json (rows truth S/PS/U/II)
AGENT_CM = np.array([[168, 23, 9, 0], [0, 56, 4, 0], [0, 0, 180, 0], [4, 0, 4, 52]])


def expand(cm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    k = cm.shape[0]
    true = np.repeat(np.repeat(np.arange(k), cm.shape[1]), cm.ravel())
    pred = np.repeat(np.tile(np.arange(cm.shape[1]), k), cm.ravel())
    return true, pred


# --------------------------------------------------------------------------- Wilson


@pytest.mark.parametrize(
    "k,n,lo,hi",
    [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0000, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_matches_newcombe_1998(k, n, lo, hi):
    """Newcombe RG. Two-sided confidence intervals for the single proportion: comparison of
    seven methods. Stat Med 1998;17:857-872, Table II, method 3 (score method without
    continuity correction), to the published 4 decimals."""
    got = wilson_interval(k, n)
    assert round(got[0], 4) == lo
    assert round(got[1], 4) == hi


def test_wilson_edges():
    assert wilson_interval(0, 0) == (None, None)
    lo, hi = wilson_interval(10, 10)
    assert hi == 1.0 and 0.69 < lo < 0.73  # 10/10: (0.7225, 1)


# --------------------------------------------------------------------------- McNemar


def test_mcnemar_agresti_presidential_approval():
    """Agresti A. Categorical Data Analysis, 3rd ed. (2013), sec. 11.1, Table 11.1:
    1600 people's approval of the President in two surveys; approve->disapprove 150,
    disapprove->approve 86.  z = (86 - 150) / sqrt(86 + 150) = -4.17, z^2 = 17.36, P < 0.001."""
    r = mcnemar_test(150, 86)
    assert round(r["chi2"], 2) == 17.36
    assert round(-np.sqrt(r["chi2"]), 2) == -4.17
    assert r["p_chi2"] < 0.001
    assert r["method"] == "chi2-continuity-corrected"  # 236 discordant pairs: asymptotic
    assert r["chi2_cc"] == pytest.approx((abs(150 - 86) - 1) ** 2 / 236)


def test_mcnemar_fagerland_small_sample():
    """Fagerland MW, Lydersen S, Laake P. The McNemar test for binary matched-pairs data:
    mid-p and asymptotic are better than exact conditional. BMC Med Res Methodol 2013;13:91.
    Airway hyper-responsiveness before/after stem cell transplantation, discordant pairs 1 and 7:
    exact conditional p = 0.070, mid-p = 0.039, asymptotic McNemar p = 0.034."""
    r = mcnemar_test(1, 7)
    assert r["method"] == "exact-binomial"  # 8 discordant pairs < 25
    assert round(r["p_value"], 3) == 0.070
    assert round(r["p_midp"], 3) == 0.039
    assert round(r["p_chi2"], 3) == 0.034


def test_mcnemar_openmtb_agent_vs_rag():
    """OpenMTB-Audit results/bootstrap_mcnemar_results.json: MTB-AuditAgent vs RAG+EV (GPT-4o),
    b = 197, c = 18: chi2_no_cc 149.0279, chi2_with_cc 147.3674."""
    r = mcnemar_test(197, 18)
    assert round(r["chi2"], 4) == 149.0279
    assert round(r["chi2_cc"], 4) == 147.3674


def test_mcnemar_matches_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar

    for b, c in [(0, 5), (3, 9), (11, 13), (40, 25)]:
        r = mcnemar_test(b, c)
        ex = mcnemar([[10, b], [c, 10]], exact=True)
        asy = mcnemar([[10, b], [c, 10]], exact=False, correction=True)
        assert r["p_exact"] == pytest.approx(ex.pvalue)
        assert r["p_chi2_cc"] == pytest.approx(asy.pvalue)
    assert mcnemar_test(0, 0)["p_value"] == 1.0
    # b == c: no evidence of a difference.  The continuity correction is capped at |b - c|
    # (statsmodels gives (0 - 1)^2 / (b + c) > 0 here); every p-value is 1.
    tie = mcnemar_test(30, 30)
    assert tie["chi2_cc"] == 0.0 and tie["p_value"] == 1.0 and tie["p_exact"] == 1.0
    assert tie["p_midp"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- classification metrics


def test_agent_confusion_matrix_published_accuracy_and_macro_f1():
    """OpenMTB-Audit agent (confusion matrix above): accuracy 0.912 and macro-F1 0.898
    (paper; results/bootstrap_mcnemar_results.json gives macro_f1 0.8981)."""
    assert round(float(accuracy_from_confusion(AGENT_CM, 4)), 3) == 0.912
    mf1 = float(macro_f1_from_confusion(AGENT_CM, 4))
    assert round(mf1, 3) == 0.898
    assert round(mf1, 4) == 0.8981
    true, pred = expand(AGENT_CM)
    assert mf1 == pytest.approx(f1_score(true, pred, average="macro"))


def test_per_label_metrics_match_sklearn_with_unanswered():
    rng = np.random.default_rng(7)
    k = 4
    true = rng.integers(0, k, 300)
    pred = np.where(rng.random(300) < 0.7, true, rng.integers(0, k + 1, 300))  # k = no answer
    cm = confusion_from_codes(true, pred, k, no_answer=True)
    p, r, f = per_label_prf(cm, k)
    sp, sr, sf, _ = precision_recall_fscore_support(true, pred, labels=list(range(k)), zero_division=np.nan)
    np.testing.assert_allclose(p, sp)
    np.testing.assert_allclose(r, sr)
    np.testing.assert_allclose(f, sf)
    assert float(accuracy_from_confusion(cm, k)) == pytest.approx((true == pred).mean())
    assert float(macro_f1_from_confusion(cm, k)) == pytest.approx(
        f1_score(true, pred, labels=list(range(k)), average="macro")
    )


def test_macro_f1_label_set_is_present_labels():
    # label 2 never occurs in truth or prediction: left out of the mean (sklearn default)
    true = np.array([0, 0, 1, 1, 3])
    pred = np.array([0, 1, 1, 1, 3])
    cm = confusion_from_codes(true, pred, 4, no_answer=False)
    assert float(macro_f1_from_confusion(cm, 4)) == pytest.approx(f1_score(true, pred, average="macro"))


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_cell_counts_equal_explicit_loop():
    rng_cells = np.random.default_rng(3)
    cells = rng_cells.integers(0, 6, 57)
    got = bootstrap_cell_counts(cells, 6, 40, np.random.default_rng(11), chunk_elems=10**9)
    idx = np.random.default_rng(11).integers(0, 57, size=(40, 57))
    want = np.stack([np.bincount(cells[i], minlength=6) for i in idx])
    np.testing.assert_array_equal(got, want)


def test_bootstrap_cell_counts_chunked():
    cells = np.repeat(np.arange(3), [10, 30, 60])
    got = bootstrap_cell_counts(cells, 3, 3000, np.random.default_rng(0), chunk_elems=250)  # 2 rows per chunk
    assert got.shape == (3000, 3)
    assert (got.sum(axis=1) == 100).all()
    np.testing.assert_allclose(got.mean(axis=0), [10, 30, 60], atol=0.5)
    with pytest.raises(ValueError):
        bootstrap_cell_counts(np.array([0, 5]), 3, 2, np.random.default_rng(0))


def test_agent_bootstrap_ci_consistent_with_published_ci():
    """OpenMTB-Audit reports accuracy 91.2% (95% CI 88.6-93.6; 10,000 percentile bootstrap
    resamples, results/bootstrap_mcnemar_results.json).  Our percentile CI from 2,000
    resamples must agree within Monte Carlo error: the lattice spacing of the statistic
    (1/n = 0.002) plus 3 Monte Carlo standard errors of a 2.5% bootstrap quantile,
    sqrt(a(1-a)/B) / f(q) with f the normal density of the accuracy at q."""
    true, pred = expand(AGENT_CM)
    n, B, a = true.size, 2000, 0.025
    p = 0.912
    sd = np.sqrt(p * (1 - p) / n)
    density = stats.norm.pdf(stats.norm.ppf(a)) / sd
    tol = 1 / n + 3 * np.sqrt(a * (1 - a) / B) / density
    for seed in range(1, 6):
        r = bootstrap_label_metrics(true, pred, 4, B, seed)
        est, lo, hi = r["accuracy"]
        assert est == pytest.approx(0.912)
        assert abs(lo - 0.886) <= tol, (seed, lo, tol)
        assert abs(hi - 0.936) <= tol, (seed, hi, tol)
        f_est, f_lo, f_hi = r["macro_f1"]
        assert f_lo < f_est < f_hi


@pytest.mark.slow  # ~6 s: the naive sklearn loop
def test_vectorised_bootstrap_agrees_with_naive_sklearn_loop():
    true, pred = expand(AGENT_CM)
    fast = bootstrap_label_metrics(true, pred, 4, 1000, 5, no_answer=False)
    slow = naive_bootstrap_loop(true, pred, [0, 1, 2, 3], 1000, 6)
    for m in ("accuracy", "macro_f1"):
        assert fast[m][1] == pytest.approx(slow[m][0], abs=0.006)
        assert fast[m][2] == pytest.approx(slow[m][1], abs=0.006)


def test_bootstrap_is_reproducible_and_seed_dependent():
    true, pred = expand(AGENT_CM)
    a = bootstrap_label_metrics(true, pred, 4, 300, 1)
    b = bootstrap_label_metrics(true, pred, 4, 300, 1)
    c = bootstrap_label_metrics(true, pred, 4, 300, 2)
    assert a == b
    assert a["macro_f1"] != c["macro_f1"]
    assert bootstrap_label_metrics(true, pred, 4, 0, 1)["accuracy"][1:] == (None, None)


def test_bootstrap_mean_of_levels():
    codes = np.array([0, 3, 4, 1, 2])  # severities 1, 4, 5, 2, 3
    mean, lo, hi = bootstrap_mean_of_levels(codes, [1, 2, 3, 4, 5], 4000, 0)
    assert mean == 3.0
    assert 1.0 <= lo < 3.0 < hi <= 5.0
    # the bootstrap distribution of a mean has sd ~ population sd / sqrt(n)
    assert hi - lo == pytest.approx(2 * 1.96 * np.sqrt(2.0 / 5), rel=0.2)


def test_percentile_interval_ignores_nan():
    assert percentile_interval(np.array([np.nan, np.nan])) == (None, None)
    lo, hi = percentile_interval(np.r_[np.arange(101.0), np.nan])
    assert (lo, hi) == pytest.approx((2.5, 97.5))


# --------------------------------------------------------------------------- paired difference


def test_paired_difference_openmtb_agent_vs_rag():
    """OpenMTB-Audit McNemar table: both correct 259, agent only 197, baseline only 18,
    both wrong 26 -> accuracies 0.912 (agent) and 0.554 (RAG+EV GPT-4o), as published."""
    a = np.r_[np.ones(259), np.ones(197), np.zeros(18), np.zeros(26)].astype(bool)
    b = np.r_[np.ones(259), np.zeros(197), np.ones(18), np.zeros(26)].astype(bool)
    r = paired_difference(a, b, 2000, 1)
    assert r["accuracy_a"] == pytest.approx(0.912)
    assert r["accuracy_b"] == pytest.approx(0.554)
    d = r["difference"]
    assert d["estimate"] == pytest.approx((197 - 18) / 500)
    # paired bootstrap SE of a difference of correlated proportions:
    # sqrt((b + c) / n^2 - (b - c)^2 / n^3)
    se = np.sqrt((197 + 18) / 500**2 - (197 - 18) ** 2 / 500**3)
    assert d["low"] == pytest.approx(d["estimate"] - 1.96 * se, abs=0.01)
    assert d["high"] == pytest.approx(d["estimate"] + 1.96 * se, abs=0.01)
    assert r["mcnemar"]["b"] == 197 and r["mcnemar"]["c"] == 18
