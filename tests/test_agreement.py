"""Agreement statistics against published worked examples (issue 3).

Every expected number below is copied from the publication named in the test's
docstring, to the precision it was published with.  Data sets are typed in under
``tests/data/agreement/`` (see its README for the sources).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from goldboard.analysis import coefficients as C
from goldboard.analysis.agreement import agreement, landis_koch_band
from goldboard.analysis.agreement_render import render_csv, render_json, render_markdown, render_table
from goldboard.analysis.resampling import bootstrap_sums
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import load_schema
from goldboard.workflows import agreement_for_study

DATA = Path(__file__).resolve().parent / "data" / "agreement"
SKIN = ["terrible", "poor", "marginal", "clear"]


# --------------------------------------------------------------------------- loaders


def table_from_counts(path: Path, a: str, b: str, categories: list[str]) -> np.ndarray:
    return table_from_counts_df(pd.read_csv(path), a, b, categories)


def table_from_counts_df(df: pd.DataFrame, a: str, b: str, categories: list[str]) -> np.ndarray:
    t = np.zeros((len(categories), len(categories)))
    for _, r in df.iterrows():
        t[categories.index(r[a]), categories.index(r[b])] += r["count"]
    return t


def long_from_table(table: np.ndarray, categories: list[str], raters=("A", "B")) -> pd.DataFrame:
    rows = []
    n = 0
    for i, j in itertools.product(range(len(categories)), repeat=2):
        for _ in range(int(table[i, j])):
            n += 1
            rows.append({"item_id": f"i{n}", "rater": raters[0], "field": "f", "value": categories[i]})
            rows.append({"item_id": f"i{n}", "rater": raters[1], "field": "f", "value": categories[j]})
    return pd.DataFrame(rows)


def krippendorff_long() -> pd.DataFrame:
    wide = pd.read_csv(DATA / "krippendorff2011_reliability_data.csv", dtype=str, keep_default_na=False)
    rows = [
        {"item_id": u, "rater": r, "value": v}
        for u, *vals in wide.itertuples(index=False)
        for r, v in zip("ABCD", vals)
    ]
    return pd.DataFrame(rows)  # blanks stay as "" = missing


def fleiss_counts(n_subjects: int = 30) -> np.ndarray:
    return pd.read_csv(DATA / "fleiss1971_diagnoses.csv").iloc[:n_subjects, 1:].to_numpy(float)


def long_from_counts(counts: np.ndarray, categories: list[str]) -> pd.DataFrame:
    """Fleiss' layout has different raters per subject; Fleiss' kappa, AC1 and alpha depend
    only on the counts, so the raters are named r1..rm in category order per subject."""
    rows = []
    for s, row in enumerate(counts.astype(int)):
        labels = [c for c, n in zip(categories, row) for _ in range(n)]
        rows += [{"item_id": f"s{s + 1}", "rater": f"r{j + 1}", "value": lab} for j, lab in enumerate(labels)]
    return pd.DataFrame(rows)


def stat(result: dict, statistic: str, weights: str = "none", level=None, raters=None, group=None) -> dict:
    hits = [
        r
        for r in result["statistics"]
        if r["statistic"] == statistic
        and r["weights"] == weights
        and r["level"] == level
        and r["group"] == group
        and (raters is None or r["raters"] == list(raters))
    ]
    assert len(hits) == 1, (statistic, weights, level, raters, group, hits)
    return hits[0]


# --------------------------------------------------------------------------- Krippendorff (2011)


def test_krippendorff_2011_alpha_at_all_four_levels_with_missing_data():
    """Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability, section C:
    4 observers x 12 units with missing values.  Published: nominal 0.743,
    ordinal 0.815, interval 0.849, ratio 0.797."""
    res = agreement(
        krippendorff_long(),
        "x",
        categories=["1", "2", "3", "4", "5"],
        levels=["nominal", "ordinal", "interval", "ratio"],
    )
    published = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
    for level, value in published.items():
        row = stat(res, "krippendorff_alpha", level=level)
        assert round(row["value"], 3) == value, level
        assert row["n_items"] == 11  # unit 12 holds one value: unpairable
    assert res["n_items"] == 12


def test_krippendorff_2011_matches_krippendorff_package_both_traps_avoided():
    """Cross-check with the ``krippendorff`` package, which wants raters x units and
    defaults to the *interval* level (both traps spelled out here)."""
    krippendorff = pytest.importorskip("krippendorff")
    wide = pd.read_csv(DATA / "krippendorff2011_reliability_data.csv")
    reliability_data = wide[["A", "B", "C", "D"]].to_numpy(float).T  # raters x units
    res = agreement(
        krippendorff_long(),
        "x",
        categories=["1", "2", "3", "4", "5"],
        levels=["nominal", "ordinal", "interval", "ratio"],
    )
    for level in ("nominal", "ordinal", "interval", "ratio"):
        expected = krippendorff.alpha(
            reliability_data=reliability_data, level_of_measurement=level, value_domain=[1, 2, 3, 4, 5]
        )
        assert stat(res, "krippendorff_alpha", level=level)["value"] == pytest.approx(expected, abs=1e-12)
    default = krippendorff.alpha(reliability_data=reliability_data)  # the package's default level
    assert default == pytest.approx(stat(res, "krippendorff_alpha", level="interval")["value"])
    assert default != pytest.approx(stat(res, "krippendorff_alpha", level="nominal")["value"])


# --------------------------------------------------------------------------- Gwet's irrCAC (raw, many raters)


def test_irrcac_cac_raw4raters_multirater_coefficients_and_ses():
    """Gwet, K. L., irrCAC R package README (github.com/kgwet/irrCAC), ``cac.raw4raters``
    (= Krippendorff's 2011 data): pa.coeff.raw 0.8181818 se 0.12561; gwet.ac1.raw
    0.77544 se 0.14295; fleiss.kappa.raw 0.76117 se 0.15302; krippen.alpha.raw
    0.74342 se 0.14548; bp.coeff.raw 0.77273 se 0.14472 (finite population N = inf)."""
    res = agreement(krippendorff_long(), "x", categories=["1", "2", "3", "4", "5"])
    published = {
        "percent_agreement": (0.8181818, 0.12561),
        "gwet_ac1": (0.77544, 0.14295),
        "fleiss_kappa": (0.76117, 0.15302),
        "brennan_prediger": (0.77273, 0.14472),
    }
    for name, (value, se) in published.items():
        row = stat(res, name, raters=list("ABCD"))
        assert round(row["value"], 5) == round(value, 5), name
        assert round(row["se"], 5) == se, name
    alpha = stat(res, "krippendorff_alpha", level="nominal")
    assert round(alpha["value"], 5) == 0.74342
    assert round(alpha["se"], 5) == 0.14548


def test_irrcac_cac_raw4raters_weighted_ac2_and_alpha():
    """irrCAC ``gwet.ac1.raw(cac.raw4raters, weights=...)`` and ``krippen.alpha.raw``
    with linear / quadratic / ratio weights, as reproduced (3 decimals) by the
    irrCAC Python port's test suite (github.com/afergadis/irrCAC): AC2 linear
    0.859 se 0.117, quadratic 0.914 se 0.104; alpha quadratic (= interval) 0.849
    se 0.129, ratio 0.797 se 0.140."""
    res = agreement(krippendorff_long(), "x", categories=["1", "2", "3", "4", "5"], levels=["interval", "ratio"])
    lin = stat(res, "gwet_ac1", "linear", raters=list("ABCD"))
    quad = stat(res, "gwet_ac1", "quadratic", raters=list("ABCD"))
    assert (round(lin["value"], 3), round(lin["se"], 3)) == (0.859, 0.117)
    assert (round(quad["value"], 3), round(quad["se"], 3)) == (0.914, 0.104)
    interval = stat(res, "krippendorff_alpha", level="interval")
    ratio = stat(res, "krippendorff_alpha", level="ratio")
    assert (round(interval["value"], 3), round(interval["se"], 3)) == (0.849, 0.129)
    assert (round(ratio["value"], 3), round(ratio["se"], 3)) == (0.797, 0.140)


def test_irrcac_distrib_6raters_first_15_fleiss_subjects():
    """irrCAC README, ``distrib.6raters`` (Fleiss 1971 subjects 1-15): gwet.ac1.dist
    0.4448007 stderr 0.08418757; fleiss.kappa.dist 0.4139265 stderr 0.08119291;
    bp.coeff.dist 0.4388889 stderr 0.08312142; krippen.alpha.dist 0.4204384."""
    counts = fleiss_counts(15)
    ac1, fk, bp = C.gwet_ac_multi(counts), C.fleiss_kappa(counts), C.brennan_prediger_multi(counts)
    assert (round(ac1.value, 7), round(ac1.se, 8)) == (0.4448007, 0.08418757)
    assert (round(fk.value, 7), round(fk.se, 8)) == (0.4139265, 0.08119291)
    assert (round(bp.value, 7), round(bp.se, 8)) == (0.4388889, 0.08312142)
    assert round(C.krippendorff_alpha(counts).value, 7) == 0.4204384


# --------------------------------------------------------------------------- Fleiss (1971)


def test_fleiss_1971_kappa_and_category_kappas():
    """Fleiss, J. L. (1971), Psychol Bull 76:378-382: 30 patients x 6 psychiatrists x 5
    diagnoses.  Published: overall kappa 0.430; category kappas depression .245,
    personality disorder .245, schizophrenia .520, neurosis .471, other .566;
    category proportions p_j .144, .144, .167, .306, .239."""
    cats = ["depression", "personality_disorder", "schizophrenia", "neurosis", "other"]
    res = agreement(long_from_counts(fleiss_counts(), cats), "dx", categories=cats)
    assert res["n_items"] == 30 and res["n_raters"] == 6
    assert round(stat(res, "fleiss_kappa", raters=[f"r{j}" for j in range(1, 7)])["value"], 3) == 0.430
    by_label = {e["label"]: e for e in res["per_label"] if e["group"] is None}
    for c, kappa, p in zip(cats, (0.245, 0.245, 0.520, 0.471, 0.566), (0.144, 0.144, 0.167, 0.306, 0.239)):
        assert by_label[c]["kappa_method"] == "fleiss"
        assert round(by_label[c]["kappa"]["value"], 3) == kappa, c
        assert round(by_label[c]["prevalence"], 3) == p, c


# --------------------------------------------------------------------------- SAS PROC FREQ


def test_sas_proc_freq_agreement_study_kappa_and_weighted_kappa():
    """SAS/STAT User's Guide, PROC FREQ, Getting Started "Agreement Study" (SkinCondition,
    order=data): Simple Kappa 0.3449, ASE 0.0724, 95% CL 0.2030-0.4868; Weighted Kappa
    (Cicchetti-Allison = linear weights) 0.5082, ASE 0.0655, 95% CL 0.3798-0.6366.
    The ASE is the Fleiss-Cohen-Everitt (1969) non-null SE."""
    table = table_from_counts(DATA / "sas_skin_condition.csv", "derm1", "derm2", SKIN)
    assert table.sum() == 88
    res = agreement(
        long_from_table(table, SKIN, ("derm1", "derm2")), "f", categories=SKIN, levels=["ordinal"], ci="wald"
    )
    k = stat(res, "cohen_kappa")
    assert [round(k[x], 4) for x in ("value", "se", "ci_low", "ci_high")] == [0.3449, 0.0724, 0.2030, 0.4868]
    assert k["ci_method"] == "asymptotic" and k["n_items"] == 88
    w = stat(res, "cohen_kappa", "linear")
    assert [round(w[x], 4) for x in ("value", "se", "ci_low", "ci_high")] == [0.5082, 0.0655, 0.3798, 0.6366]


def test_statsmodels_takes_disagreement_weights_trap():
    """statsmodels' ``cohens_kappa(table, weights=...)`` reads *disagreement* weights.
    Passing our agreement weights there would give a different number; passing the
    distances reproduces SAS's weighted kappa (0.5082) and ours."""
    from statsmodels.stats.inter_rater import cohens_kappa

    table = table_from_counts(DATA / "sas_skin_condition.csv", "derm1", "derm2", SKIN)
    ours = C.cohen_kappa(table, "linear")
    assert cohens_kappa(table, wt="linear").kappa == pytest.approx(ours.value, abs=1e-12)
    assert cohens_kappa(table, wt="linear").std_kappa == pytest.approx(ours.se, abs=1e-12)
    wrong = cohens_kappa(table, weights=C.agreement_weights(4, "linear")).kappa
    assert abs(wrong - ours.value) > 0.05


# --------------------------------------------------------------------------- weighted kappa: vcd, Cohen (1968)

SEXFUN = ["never", "fairly_often", "very_often", "always"]
MS = ["certain", "probable", "possible", "doubtful"]
COHEN68 = ["personality_disorder", "neurosis", "psychosis"]


def test_vcd_kappa_sexualfun_weighted_kappa_ase_z_and_ci():
    """R package vcd, ``Kappa(SexualFun)`` (default weights "Equal-Spacing" =
    1 - |i - j| / (k - 1), i.e. linear; ASE = Fleiss-Cohen-Everitt 1969), output printed
    in the vcdExtra reference page for ``print.Kappa`` (github.com/friendly/vcdExtra,
    docs/reference/print.Kappa.md):

        Unweighted 0.1293 ASE 0.06860 z 1.885  lower -0.00512 upper 0.2638
        Weighted   0.2374 ASE 0.07832 z 3.031  lower  0.08388 upper 0.3909

    Data: vcd ``SexualFun``, 91 couples, Husband x Wife (Rdatasets csv/vcd/SexualFun.csv,
    vincentarelbundock/Rdatasets)."""
    table = table_from_counts(DATA / "vcd_sexualfun.csv", "husband", "wife", SEXFUN)
    assert table.sum() == 91
    res = agreement(
        long_from_table(table, SEXFUN, ("husband", "wife")), "f", categories=SEXFUN, levels=["ordinal"], ci="wald"
    )
    published = {
        "none": (0.1293, 0.06860, 1.885, -0.00512, 0.2638),
        "linear": (0.2374, 0.07832, 3.031, 0.08388, 0.3909),
    }
    for weights, (value, ase, z, lower, upper) in published.items():
        k = stat(res, "cohen_kappa", weights)
        assert k["n_items"] == 91 and k["ci_method"] == "asymptotic"
        assert round(k["value"], 4) == value, weights
        assert round(k["se"], 5) == ase, weights
        assert round(k["value"] / k["se"], 3) == z, weights
        assert round(k["ci_low"], 5) == lower, weights
        assert round(k["ci_high"], 4) == upper, weights


def test_vcd_kappa_mspatients_strata_weighted_kappa_and_ase():
    """vcd ``apply(MSPatients, 3, Kappa)``, printed in the vcdExtra reference page for
    ``print.Kappa`` (github.com/friendly/vcdExtra, docs/reference/print.Kappa.md):

        Winnipeg     Unweighted 0.2079 ASE 0.05046 z 4.121; Weighted 0.3797 ASE 0.05167 z 7.350
        New Orleans  Unweighted 0.2965 ASE 0.07850 z 3.777; Weighted 0.4773 ASE 0.07303 z 6.535

    Data: Westlund & Kurland (1953) via vcd ``MSPatients`` (New Orleans neurologist x
    Winnipeg neurologist x patients; Rdatasets csv/vcd/MSPatients.csv).  Run through
    ``by=`` so each stratum is one group of the same report."""
    df = pd.read_csv(DATA / "vcd_mspatients.csv")
    parts = []
    for patients, sub in df.groupby("patients"):
        t = table_from_counts_df(sub, "new_orleans_neurologist", "winnipeg_neurologist", MS)
        long = long_from_table(t, MS, ("new_orleans", "winnipeg"))
        long["item_id"] = patients + "-" + long["item_id"]
        long["patients"] = patients
        parts.append(long)
    res = agreement(pd.concat(parts, ignore_index=True), "f", categories=MS, levels=["ordinal"], by="patients")
    published = {
        ("winnipeg", "none"): (149, 0.2079, 0.05046, 4.121),
        ("winnipeg", "linear"): (149, 0.3797, 0.05167, 7.350),
        ("new_orleans", "none"): (69, 0.2965, 0.07850, 3.777),
        ("new_orleans", "linear"): (69, 0.4773, 0.07303, 6.535),
    }
    for (group, weights), (n, value, ase, z) in published.items():
        k = stat(res, "cohen_kappa", weights, group=group)
        assert k["n_items"] == n
        assert round(k["value"], 4) == value, (group, weights)
        assert round(k["se"], 5) == ase, (group, weights)
        assert round(k["value"] / k["se"], 3) == z, (group, weights)


def test_cohen_1968_weighted_kappa_with_custom_disagreement_weights():
    """Cohen, J. (1968). Weighted kappa. Psychol Bull 70:213-220, Table 1 (N = 200; Judge B
    rows, Judge A columns) with his ratio-scaled disagreement weights v (0 on the diagonal;
    1 personality disorder-neurosis, 3 personality disorder-psychosis, 6 neurosis-psychosis).
    Published values as quoted, with the table, in the DMAR R package
    (github.com/yelleKneK/DMAR, tests/testthat/test-cohen_kappa.R and
    vignettes/weighted_kappa.Rmd; also psych ``?cohen.kappa``: "cohen reports .492 and
    .348", "Cohen reports kw = .353"):

    * kappa = .492;  kappa_w = .348 with q'_o = sum v p_o = .90, q'_c = sum v p_c = 1.38
    * 6 <-> 1 weights interchanged: kappa_w = .574 (1 - 1.10 / 2.58)
    * asymmetric validity weights (applied as in DMAR's test): kappa_w = .353 (.86 / 1.33)
    * the Fleiss-Cohen-Everitt (1969) SE of kappa_w on these data: .0755 (DMAR vignette);
      psych::cohen.kappa 2.5.3, pinned in DMAR's test: kappa 0.4915254237288135,
      se 0.05100181557607786; kappa_w 0.3478260869565211, se 0.07550401525482291.

    goldboard takes *agreement* weights, so Cohen's v enter as ``1 - v / max(v)``; kappa_w
    is invariant to that rescaling.  Cohen's own 1968 SEs (.0901, .0916) come from formulas
    that FCE (1969) corrected and are deliberately not reproduced."""
    table = table_from_counts(DATA / "cohen1968_table1.csv", "judge_b", "judge_a", COHEN68)
    assert table.sum() == 200
    v = np.array([[0, 1, 3], [1, 0, 6], [3, 6, 0]], float)
    k = C.cohen_kappa(table)
    assert round(k.value, 3) == 0.492
    assert k.value == pytest.approx(0.4915254237288135, abs=1e-12)
    assert k.se == pytest.approx(0.05100181557607786, abs=1e-12)

    kw = C.cohen_kappa(table, 1.0 - v / 6.0)
    assert round(kw.value, 3) == 0.348
    assert round(kw.se, 4) == 0.0755
    assert kw.value == pytest.approx(0.3478260869565211, abs=1e-12)
    assert kw.se == pytest.approx(0.07550401525482291, abs=1e-12)
    # weighted observed disagreement q'_o = max(v) * (1 - weighted p_o) = .90
    assert round(6.0 * (1.0 - C.percent_agreement(table, 1.0 - v / 6.0).value), 2) == 0.90
    # a different positive scaling of the same disagreements changes nothing
    other = C.cohen_kappa(table, 1.0 - v / 10.0)
    assert other.value == pytest.approx(kw.value, abs=1e-12) and other.se == pytest.approx(kw.se, abs=1e-12)

    swap = v.copy()
    swap[v == 6], swap[v == 1] = 1, 6
    assert round(C.cohen_kappa(table, 1.0 - swap / 6.0).value, 3) == 0.574

    validity = np.array([[0, 1, 2], [1, 0, 2], [4, 6, 0]], float)
    kv = C.cohen_kappa(table, 1.0 - validity / 6.0)
    assert round(kv.value, 3) == 0.353
    assert round(6.0 * (1.0 - C.percent_agreement(table, 1.0 - validity / 6.0).value), 2) == 0.86
    # asymmetric weights: the transposed table with transposed weights is the same study
    kt = C.cohen_kappa(table.T, (1.0 - validity / 6.0).T)
    assert kt.value == pytest.approx(kv.value, abs=1e-12) and kt.se == pytest.approx(kv.se, abs=1e-12)


# --------------------------------------------------------------------------- Gwet's irrCAC (two raters)


def test_irrcac_cont3x3abstractors_two_rater_coefficients_and_ses():
    """irrCAC README, ``cont3x3abstractors``: kappa2.table 0.7964094 se 0.05891072;
    scott2.table 0.7962397 se 0.05905473; gwet.ac1.table 0.8493305 se 0.04321747;
    bp2.table 0.835 se 0.04693346; pa2.table 0.89 se 0.03128898."""
    cats = ["Ectopic", "AIU", "NIU"]
    table = table_from_counts(DATA / "gwet_cont3x3abstractors.csv", "rater1", "rater2", cats)
    res = agreement(long_from_table(table, cats), "f", categories=cats)
    published = {
        "cohen_kappa": (0.7964094, 0.05891072),
        "scott_pi": (0.7962397, 0.05905473),
        "gwet_ac1": (0.8493305, 0.04321747),
        "brennan_prediger": (0.835, 0.04693346),
        "percent_agreement": (0.89, 0.03128898),
    }
    for name, (value, se) in published.items():
        row = stat(res, name)
        assert round(row["value"], 7) == value, name
        assert round(row["se"], 8) == se, name


def test_irrcac_cont3x3abstractors_ac2_weighted():
    """irrCAC ``gwet.ac1.table(cont3x3abstractors, weights=...)`` (3 decimals, via the
    irrCAC Python port's tests): AC2 linear 0.900, quadratic 0.940; kappa2.table linear
    0.843, quadratic 0.892."""
    cats = ["Ectopic", "AIU", "NIU"]
    table = table_from_counts(DATA / "gwet_cont3x3abstractors.csv", "rater1", "rater2", cats)
    assert round(C.gwet_ac(table, "linear").value, 3) == 0.900
    assert round(C.gwet_ac(table, "quadratic").value, 3) == 0.940
    assert round(C.cohen_kappa(table, "linear").value, 3) == 0.843
    assert round(C.cohen_kappa(table, "quadratic").value, 3) == 0.892


# --------------------------------------------------------------------------- Feinstein & Cicchetti (1990)


def _fc_tables():
    df = pd.read_csv(DATA / "feinstein_cicchetti_1990.csv").set_index("table")
    # index 1 = "yes" (positive), rows = rater A
    return {name: np.array([[r.both_no, r.a_no_b_yes], [r.a_yes_b_no, r.both_yes]], float) for name, r in df.iterrows()}


def test_feinstein_cicchetti_paradoxes_and_warning():
    """Feinstein & Cicchetti (1990), J Clin Epidemiol 43:543-549.  First paradox: both
    tables have p_o = .85 but kappa .70 (balanced prevalence) vs .32 (skewed).  Second
    paradox: p_o = .60 with kappa .13 (symmetric imbalance) vs .26 (asymmetric).  The
    skewed table must trigger the kappa-paradox warning; the balanced one must not."""
    t = _fc_tables()
    expected = {
        "first_paradox_a": (0.85, 0.70),
        "first_paradox_b": (0.85, 0.32),
        "second_paradox_a": (0.60, 0.13),
        "second_paradox_b": (0.60, 0.26),
    }
    results = {}
    for name, (po, kappa) in expected.items():
        res = agreement(long_from_table(t[name], ["no", "yes"]), "f", categories=["no", "yes"])
        results[name] = res
        assert round(stat(res, "percent_agreement")["value"], 2) == po
        assert round(stat(res, "cohen_kappa")["value"], 2) == kappa
    assert any("kappa paradox" in w for w in results["first_paradox_b"]["warnings"])
    assert not any("kappa paradox" in w for w in results["first_paradox_a"]["warnings"])


def test_prevalence_bias_pabak_and_specific_agreement_on_paradox_table():
    """Byrt, Bishop & Carlin (1993) indices and Cicchetti & Feinstein (1990) specific
    agreement on Feinstein & Cicchetti's skewed table (a=80, b=10, c=5, d=5; n=100),
    from the definitions: PI = (a - d)/n = .75, BI = (b - c)/n = .05,
    PABAK = 2 p_o - 1 = .70, p_pos = 2a/(2a+b+c) = 160/175, p_neg = 2d/(2d+b+c) = .40."""
    table = _fc_tables()["first_paradox_b"]
    res = agreement(long_from_table(table, ["no", "yes"]), "f", categories=["no", "yes"])
    yes = next(e for e in res["per_label"] if e["label"] == "yes")
    assert yes["prevalence_index"] == pytest.approx(0.75)
    assert yes["bias_index"] == pytest.approx(0.05)
    assert yes["pabak"]["value"] == pytest.approx(0.70)
    assert stat(res, "pabak")["value"] == pytest.approx(0.70)
    assert yes["positive_agreement"]["value"] == pytest.approx(160 / 175)
    assert yes["negative_agreement"]["value"] == pytest.approx(0.40)
    # one-vs-rest kappa of the positive label of a binary field is the kappa itself
    assert yes["kappa"]["value"] == pytest.approx(stat(res, "cohen_kappa")["value"])
    assert yes["kappa"]["se"] == pytest.approx(stat(res, "cohen_kappa")["se"])
    # Graham & Bull (1998) delta-method SE: var = 4a(b+c)(a+b+c)/(2a+b+c)^4
    assert yes["positive_agreement"]["se"] == pytest.approx(math.sqrt(4 * 80 * 15 * 95 / 175**4))


def test_specific_agreement_many_raters_reduces_to_two_rater_formula():
    """Uebersax (1982) multi-rater specific agreement equals 2a/(2a+b+c) with two raters."""
    table = _fc_tables()["second_paradox_b"]
    counts = np.array(
        [[2, 0]] * int(table[0, 0]) + [[1, 1]] * int(table[0, 1] + table[1, 0]) + [[0, 2]] * int(table[1, 1])
    )
    pos, neg = C.specific_agreement_multi(counts)
    p2, n2 = C.specific_agreement(table)
    assert pos.value[1] == pytest.approx(p2.value) and neg.value[1] == pytest.approx(n2.value)


# --------------------------------------------------------------------------- full scale (MedFailBench pitfall)


def test_weights_span_the_full_scale_even_for_unused_levels():
    """Severity 1-5 where nobody used 3: weights over the observed levels (the
    MedFailBench script's pitfall) move 2 and 4 one step apart; goldboard keeps the
    schema's full 1-5 scale and says so."""
    schema = load_schema("medfail")
    pairs = [
        ("1", "1"),
        ("2", "4"),
        ("4", "4"),
        ("5", "4"),
        ("2", "2"),
        ("1", "2"),
        ("5", "5"),
        ("4", "5"),
        ("2", "1"),
        ("4", "2"),
    ] * 4
    rows = []
    for i, (a, b) in enumerate(pairs):
        rows += [
            {"item_id": f"i{i}", "rater": "r1", "field": "severity", "value": a},
            {"item_id": f"i{i}", "rater": "r2", "field": "severity", "value": b},
        ]
    df = pd.DataFrame(rows)
    res = agreement(df, "severity", schema)
    assert res["categories"] == ["1", "2", "3", "4", "5"] and res["level"] == "ordinal"
    full = C.cohen_kappa(_table(pairs, ["1", "2", "3", "4", "5"]), "linear").value
    observed_only = C.cohen_kappa(_table(pairs, ["1", "2", "4", "5"]), "linear").value
    assert stat(res, "cohen_kappa", "linear")["value"] == pytest.approx(full)
    assert abs(full - observed_only) > 0.01
    assert any("never used" in w and "3" in w and "full scale" in w for w in res["warnings"])
    # ordinal alpha with the full domain equals the krippendorff package given value_domain
    krippendorff = pytest.importorskip("krippendorff")
    data = np.array([[float(a) for a, _ in pairs], [float(b) for _, b in pairs]])
    assert stat(res, "krippendorff_alpha", level="ordinal")["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5])
    )
    # default levels for ordinal data: the schema's level plus nominal
    assert [r["level"] for r in res["statistics"] if r["statistic"] == "krippendorff_alpha"] == ["ordinal", "nominal"]


def _table(pairs, cats):
    t = np.zeros((len(cats), len(cats)))
    for a, b in pairs:
        t[cats.index(a), cats.index(b)] += 1
    return t


# --------------------------------------------------------------------------- engine behaviour


def _two_raters(values_a, values_b, field="f", **extra):
    rows = []
    for i, (a, b) in enumerate(zip(values_a, values_b)):
        for r, v in (("A", a), ("B", b)):
            if v is not None:
                rows.append({"item_id": f"i{i}", "rater": r, "field": field, "value": v, **extra})
    return pd.DataFrame(rows)


def test_contract_shape_exactly():
    res = agreement(krippendorff_long(), "x", categories=["1", "2", "3", "4", "5"], levels=["ordinal"])
    assert list(res) == [
        "n_items",
        "n_raters",
        "raters",
        "categories",
        "level",
        "statistics",
        "per_label",
        "confusion",
        "warnings",
    ]
    keys = [
        "statistic",
        "weights",
        "level",
        "raters",
        "group",
        "value",
        "se",
        "ci_low",
        "ci_high",
        "ci_method",
        "n_items",
    ]
    for row in res["statistics"]:
        assert list(row) == keys
        assert row["statistic"] in (
            "percent_agreement",
            "cohen_kappa",
            "fleiss_kappa",
            "krippendorff_alpha",
            "gwet_ac1",
            "brennan_prediger",
            "scott_pi",
            "pabak",
        )
        assert row["weights"] in ("none", "linear", "quadratic")
        assert row["ci_method"] in ("asymptotic", "wilson", "bootstrap", None)
    # krippendorff_alpha appears once per level; weighted kappa rows carry their weights
    assert sum(r["statistic"] == "krippendorff_alpha" for r in res["statistics"]) == 1
    assert {r["weights"] for r in res["statistics"] if r["statistic"] == "cohen_kappa"} == {
        "none",
        "linear",
        "quadratic",
    }
    text = render_json(res)  # no NaN anywhere (allow_nan=False)
    assert '"warnings"' in text


def test_pairwise_statistics_use_items_both_raters_rated_and_say_so():
    res = agreement(_two_raters(["a", "b", "a", None, "b"], ["a", "b", None, "a", "b"]), "f")
    k = stat(res, "cohen_kappa")
    assert k["n_items"] == 3 and res["n_items"] == 5
    assert any("both rated 3 of 5 items" in w for w in res["warnings"])
    assert any("2 item(s) rated by only one rater" in w for w in res["warnings"])


def test_empty_values_are_dropped_as_missing_with_a_warning():
    df = _two_raters(["a", "b", "a", "b"], ["a", "b", "", "b"])
    res = agreement(df, "f")
    assert any("1 rating(s) of field f dropped as missing" in w for w in res["warnings"])
    assert stat(res, "cohen_kappa")["n_items"] == 3


def test_kappa_undefined_when_both_raters_use_one_category():
    res = agreement(_two_raters(["a"] * 5, ["a"] * 5), "f", categories=["a", "b"])
    k = stat(res, "cohen_kappa")
    assert k["value"] is None and k["ci_low"] is None and k["ci_method"] is None
    assert stat(res, "percent_agreement")["value"] == 1.0
    assert any("undefined" in w for w in res["warnings"])
    render_json(res)


def test_schema_aliases_and_unknown_label_error_names_file_line_and_field():
    schema = load_schema("mtb")
    df = _two_raters(
        ["Supported", "Insufficient Info", "Unsupported"],
        ["Supported", "Insufficient Information", "Unsupported"],
        field="safety_label",
    )
    res = agreement(df, "safety_label", schema)
    assert stat(res, "percent_agreement")["value"] == 1.0
    assert res["categories"][-1] == "Insufficient Information"
    bad = df.copy()
    bad.loc[3, "value"] = "Maybe"
    bad["_where"] = [f"ratings.csv:{i + 2}" for i in range(len(bad))]
    with pytest.raises(GoldboardError, match=r"^ratings\.csv:5: field safety_label: 'Maybe' is not a value"):
        agreement(bad, "safety_label", schema)


def test_one_rater_only_is_an_error():
    df = pd.DataFrame({"item_id": ["1", "2"], "rater": ["A", "A"], "value": ["x", "y"]})
    with pytest.raises(GoldboardError, match="only one rater"):
        agreement(df, "f")


def test_conflicting_duplicate_rating_is_an_error_identical_is_counted_once():
    df = _two_raters(["a", "b", "a"], ["a", "b", "b"])
    same = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    res = agreement(same, "f")
    assert any("duplicate" in w for w in res["warnings"])
    assert stat(res, "cohen_kappa")["n_items"] == 3
    conflict = pd.concat([df, df.iloc[[0]].assign(value="b")], ignore_index=True)
    with pytest.raises(GoldboardError, match="rated item i0 twice"):
        agreement(conflict, "f")


def test_dichotomize_at_4_on_severity():
    """>= 4 vs < 4: the kappa of the collapsed 2x2 table."""
    schema = load_schema("medfail")
    a = ["1", "2", "4", "5", "3", "4", "2", "5", "1", "4"] * 3
    b = ["2", "2", "5", "3", "3", "4", "4", "5", "1", "2"] * 3
    res = agreement(_two_raters(a, b, field="severity"), "severity", schema, dichotomize="4")
    assert res["categories"] == ["<4", ">=4"] and res["level"] == "nominal"
    hi = lambda v: int(int(v) >= 4)
    t = np.zeros((2, 2))
    for x, y in zip(a, b):
        t[hi(x), hi(y)] += 1
    assert stat(res, "cohen_kappa")["value"] == pytest.approx(C.cohen_kappa(t).value)
    assert not any(r["weights"] != "none" for r in res["statistics"] if r["statistic"] == "cohen_kappa")
    with pytest.raises(GoldboardError, match="dichotomiz"):
        agreement(_two_raters(["a", "b"], ["a", "b"]), "f", dichotomize="b")


def test_by_strata_equal_the_subset_analysed_alone():
    a = ["x", "y", "x", "y", "x", "x", "y", "y", "x", "y"] * 4
    b = ["x", "y", "y", "y", "x", "x", "x", "y", "x", "y"] * 4
    df = _two_raters(a, b)
    df["model"] = df["item_id"].map(lambda i: "m1" if int(i[1:]) % 3 else "m2")
    res = agreement(df, "f", by="model")
    for g in ("m1", "m2"):
        alone = agreement(df[df["model"] == g], "f")
        assert stat(res, "cohen_kappa", group=g)["value"] == pytest.approx(stat(alone, "cohen_kappa")["value"])
        assert stat(res, "cohen_kappa", group=g)["n_items"] == stat(alone, "cohen_kappa")["n_items"]
    assert stat(res, "cohen_kappa")["n_items"] == 40
    assert {e["group"] for e in res["per_label"]} == {None, "m1", "m2"}
    bad = df.copy()
    bad.loc[0, "model"] = "other"
    with pytest.raises(GoldboardError, match="one per item"):
        agreement(bad, "f", by="model")


def test_multi_select_value_as_binary_field():
    schema = load_schema("mtb")
    df = _two_raters(
        ["stage|ecog_status", "", "stage", "pdl1_expression"],
        ["stage", "ecog_status", "", "pdl1_expression|stage"],
        field="missing_info",
    )
    res = agreement(df, "missing_info:stage", schema)
    assert res["categories"] == ["no", "yes"]
    t = stat(res, "percent_agreement")
    assert t["value"] == pytest.approx(2 / 4) and t["n_items"] == 4  # "" = nothing ticked, not missing
    with pytest.raises(GoldboardError, match="multi-select"):
        agreement(df, "missing_info", schema)


def test_landis_koch_bands_are_the_published_cutpoints():
    """Landis & Koch (1977), Biometrics 33:159-174, Table 1 (a convention)."""
    assert [landis_koch_band(v) for v in (-0.1, 0.0, 0.2, 0.21, 0.4, 0.6, 0.61, 0.8, 0.81, 1.0)] == [
        "poor",
        "slight",
        "slight",
        "fair",
        "fair",
        "moderate",
        "substantial",
        "substantial",
        "almost perfect",
        "almost perfect",
    ]
    assert landis_koch_band(None) is None


def test_renderers_label_the_landis_koch_convention():
    table = table_from_counts(DATA / "sas_skin_condition.csv", "derm1", "derm2", SKIN)
    res = agreement(
        long_from_table(table, SKIN, ("derm1", "derm2")), "f", categories=SKIN, levels=["ordinal"], ci="wald"
    )
    for text in (render_table(res, "Skin"), render_markdown(res, "Skin")):
        assert "Landis & Koch (1977) convention" in text and "0.345" in text and "0.203 to 0.487" in text
    csv_text = render_csv(res)
    assert csv_text.splitlines()[0] == "statistic,weights,level,raters,group,n_items,value,se,ci_low,ci_high,ci_method"
    assert "cohen_kappa,linear,,derm1;derm2,,88,0.508" in csv_text


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_sums_equal_index_resampling_exactly():
    """A multinomial count vector over pooled patterns is the tally of a resampled index
    vector: feeding bincount(index) as multiplicities reproduces the naive recomputation."""
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(200, 2))
    patterns, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    onehot = np.zeros((len(patterns), 9))
    onehot[np.arange(len(patterns)), patterns[:, 0] * 3 + patterns[:, 1]] = 1
    for _ in range(5):
        idx = rng.integers(0, 200, 200)
        naive = C.cohen_kappa(np.bincount(codes[idx, 0] * 3 + codes[idx, 1], minlength=9).reshape(3, 3)).value
        tally = np.bincount(inverse.reshape(-1)[idx], minlength=len(patterns))
        fast = C.cohen_kappa((tally @ onehot).reshape(3, 3)).value
        assert fast == pytest.approx(naive, abs=1e-12)
    S = bootstrap_sums(np.c_[onehot, np.ones(len(patterns))], 500, np.random.default_rng(1), counts)
    assert np.all(S[:, -1] == 200)  # every resample draws exactly n items
    S2 = bootstrap_sums(np.c_[onehot, np.ones(len(patterns))], 500, np.random.default_rng(1), counts)
    assert np.array_equal(S, S2)  # seeded: reproducible


def test_bootstrap_se_matches_naive_loop_and_asymptotic_se():
    """Same distribution as the textbook loop: bootstrap SEs of kappa from the vectorised
    engine and from 2,000 index resamples agree within Monte-Carlo error, and both
    agree with the Fleiss-Cohen-Everitt SE on the SAS table."""
    table = table_from_counts(DATA / "sas_skin_condition.csv", "derm1", "derm2", SKIN)
    df = long_from_table(table, SKIN, ("derm1", "derm2"))
    res = agreement(df, "f", categories=SKIN, n_resamples=2000, seed=1)
    k = stat(res, "cohen_kappa")
    assert k["ci_method"] == "bootstrap" and k["value"] == pytest.approx(0.3448753, abs=1e-6)
    x = np.repeat(np.arange(4), table.sum(axis=1).astype(int))
    y = np.concatenate([np.repeat(np.arange(4), table[i].astype(int)) for i in range(4)])
    rng = np.random.default_rng(7)
    naive = []
    for _ in range(2000):
        idx = rng.integers(0, 88, 88)
        naive.append(C.cohen_kappa(np.bincount(x[idx] * 4 + y[idx], minlength=16).reshape(4, 4)).value)
    assert k["se"] == pytest.approx(np.std(naive, ddof=1), rel=0.10)
    assert k["se"] == pytest.approx(0.0724, rel=0.10)
    assert k["ci_low"] < 0.3449 < k["ci_high"]
    assert all(e["ci_method"] == "bootstrap" for e in res["per_label"])


def test_bootstrap_many_raters_alpha_and_fleiss():
    res = agreement(long_from_counts(fleiss_counts(), ["d", "p", "s", "n", "o"]), "dx", n_resamples=1000, seed=3)
    raters = [f"r{j}" for j in range(1, 7)]
    fk = stat(res, "fleiss_kappa", raters=raters)
    alpha = stat(res, "krippendorff_alpha", level="nominal", raters=raters)
    for row, asym in ((fk, C.fleiss_kappa(fleiss_counts()).se), (alpha, C.krippendorff_alpha(fleiss_counts()).se)):
        assert row["ci_method"] == "bootstrap"
        assert row["se"] == pytest.approx(asym, rel=0.25)
        assert row["ci_low"] < row["value"] < row["ci_high"]


def test_cluster_bootstrap_widens_the_interval_for_correlated_items():
    """Each case contributes 5 model outputs with identical ratings; resampling cases
    (clusters) must give a wider interval than resampling the correlated items."""
    rng = np.random.default_rng(5)
    a, b, case = [], [], []
    for c in range(40):
        x = str(rng.integers(0, 2))
        y = x if rng.random() < 0.7 else str(1 - int(x))
        for _ in range(5):
            a.append(x)
            b.append(y)
            case.append(f"C{c}")
    df = _two_raters(a, b)
    df["case_id"] = df["item_id"].map(lambda i: case[int(i[1:])])
    items = stat(agreement(df, "f", n_resamples=1000, seed=2), "cohen_kappa")
    clusters = stat(agreement(df, "f", n_resamples=1000, seed=2, cluster_col="case_id"), "cohen_kappa")
    assert clusters["se"] > 1.5 * items["se"]


# --------------------------------------------------------------------------- study entry point


def test_agreement_for_study_every_analysable_field(tmp_path):
    from goldboard.study import Study

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"])
    labels_a = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"] * 5
    labels_b = ["Supported", "Supported", "Unsupported", "Insufficient Information"] * 5
    rows = []
    for i, (x, y) in enumerate(zip(labels_a, labels_b)):
        for r, v, mi in (("onc_a", x, "stage"), ("onc_b", y, "stage|ecog_status")):
            rows.append(
                {"round": 1, "item_id": f"C{i}", "case_id": f"C{i}", "rater": r, "field": "safety_label", "value": v}
            )
            rows.append(
                {"round": 1, "item_id": f"C{i}", "case_id": f"C{i}", "rater": r, "field": "missing_info", "value": mi}
            )
    st.ratings_path(1).parent.mkdir(parents=True)
    pd.DataFrame(rows).to_csv(st.ratings_path(1), index=False)
    out = agreement_for_study(Study.open(tmp_path / "s"))
    assert "safety_label" in out and "missing_info:stage" in out and "missing_info:ecog_status" in out
    assert out["safety_label"]["raters"] == ["onc_a", "onc_b"]
    assert stat(out["missing_info:stage"], "percent_agreement")["value"] == 1.0
    assert stat(out["missing_info:ecog_status"], "percent_agreement")["value"] == 0.0


def test_per_label_counts_add_up_to_the_confusion_matrix():
    table = table_from_counts(DATA / "sas_skin_condition.csv", "derm1", "derm2", SKIN)
    res = agreement(long_from_table(table, SKIN, ("derm1", "derm2")), "f", categories=SKIN)
    m = np.array(res["confusion"]["pairs"][0]["matrix"])
    assert m.tolist() == table.astype(int).tolist()
    for c, e in enumerate(res["per_label"]):
        assert e["count_by_rater"] == {"derm1": int(m[c].sum()), "derm2": int(m[:, c].sum())}


def test_unknown_field_lists_the_fields_present():
    df = _two_raters(["a", "b"], ["a", "b"], field="severity")
    with pytest.raises(GoldboardError, match=r"no ratings for field safety \(fields in the table: severity\)"):
        agreement(df, "safety")
    with pytest.raises(GoldboardError, match="every rating is empty"):
        agreement(_two_raters(["", ""], ["", ""]), "f")


def test_items_without_a_cluster_are_their_own_clusters():
    df = _two_raters(["a", "b", "a", "b"] * 10, ["a", "b", "b", "b"] * 10)
    df["case_id"] = df["item_id"].map(lambda i: "" if int(i[1:]) % 2 else f"C{int(i[1:]) // 4}")
    res = agreement(df, "f", n_resamples=200, seed=1, cluster_col="case_id")
    assert any("have no cluster" in w for w in res["warnings"])
    assert stat(res, "cohen_kappa")["ci_method"] == "bootstrap"
