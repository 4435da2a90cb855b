"""Krippendorff's minimum sample size for alpha (`goldboard plan size --alpha-min`).

Printed digits pinned here:
* ATLAS.ti Windows manual (v22), "Inter-coder agreement: Sample Size and Decision Rules"
  (doc.atlasti.com/ManualWin.v22/ICA/ICASampleSizeAndDecisionRules.html), which reprints
  Krippendorff's (2019) table for two coders ("Krippendorff (2019) uses Bloch and Kraemer's
  formula 3.7 (1989:276)"): a semantic domain of 4 equally used codes (p_c = 0.25), smallest
  acceptable alpha 0.800 at the 0.05 level of significance -> "a minimum of 139 codings"; alpha
  0.667 at the same level -> "a minimum of 81 codings".  The manual counts codings (values; two per
  item with two coders) and notes that for more coders z**2 is multiplied by the number of coders.

No copy of the printed equation or of the full table could be retrieved, so the formula is also
checked independently: its bracket is Bloch & Kraemer's (1989) large-sample variance of the
intraclass kappa at (1 + alpha_min) / 2 over ((1 - alpha_min) / 2)**2, and that variance is checked
against the inverse Fisher information of the two-rater binary model computed numerically here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from goldboard.analysis import planning as pl
from goldboard.errors import GoldboardError


@pytest.mark.parametrize(
    ("alpha_min", "p_c", "significance", "values", "items"),
    [
        pytest.param(0.800, 0.25, 0.05, 139, 70, id="ATLAS.ti-manual-Krippendorff2019-a800-pc25-p05-139-codings"),
        pytest.param(0.667, 0.25, 0.05, 81, 41, id="ATLAS.ti-manual-Krippendorff2019-a667-pc25-p05-81-codings"),
    ],
)
def test_reproduces_printed_values(alpha_min, p_c, significance, values, items):
    plan = pl.krippendorff_sample_size(alpha_min, p_c, significance)
    assert plan.n_values == values
    assert plan.n == items  # two raters: ceil(values / 2)


def _inverse_fisher_kappa(kappa: float, p: float, h: float = 1e-6) -> float:
    """n Var(kappa-hat) of the maximum-likelihood kappa from the three observable cells
    (both negative, discordant, both positive) of two raters, prevalence unknown."""

    def cells(k, q):
        return np.array([(1 - q) ** 2 + k * q * (1 - q), 2 * (1 - k) * q * (1 - q), q * q + k * q * (1 - q)])

    probs = cells(kappa, p)
    dk = (cells(kappa + h, p) - cells(kappa - h, p)) / (2 * h)
    dp = (cells(kappa, p + h) - cells(kappa, p - h)) / (2 * h)
    jac = np.stack([dk, dp], 1)
    info = (jac.T / probs) @ jac
    return float(np.linalg.inv(info)[0, 0])


@pytest.mark.parametrize(("kappa", "p"), [(0.9, 0.25), (0.5, 0.1), (0.8335, 0.5), (0.95, 0.05)])
def test_bloch_kraemer_variance_is_the_inverse_fisher_information(kappa, p):
    assert pl.intraclass_kappa_variance(kappa, p) == pytest.approx(_inverse_fisher_kappa(kappa, p), rel=1e-6)


@pytest.mark.parametrize(("a", "p", "sig"), [(0.667, 0.5, 0.1), (0.8, 0.1, 0.01), (0.9, 0.05, 0.005)])
def test_formula_is_a_test_of_alpha_min_at_the_halfway_alpha(a, p, sig):
    """items = z**2 Var((1 + a)/2) / ((1 - a)/2)**2: an alpha half way to 1 is significantly above a."""
    z = stats.norm.ppf(1 - sig)
    halfway = (1 + a) / 2
    expected = z**2 * _inverse_fisher_kappa(halfway, p) / (halfway - a) ** 2
    plan = pl.krippendorff_sample_size(a, p, sig)
    assert plan.n_exact == pytest.approx(expected, rel=1e-5)
    assert plan.n_values == int(np.ceil(2 * plan.n_exact))


def test_stricter_goals_need_more_items():
    base = pl.krippendorff_sample_size(0.8, 0.25, 0.05).n
    assert pl.krippendorff_sample_size(0.9, 0.25, 0.05).n > base
    assert pl.krippendorff_sample_size(0.667, 0.25, 0.05).n < base
    assert pl.krippendorff_sample_size(0.8, 0.1, 0.05).n > base
    assert pl.krippendorff_sample_size(0.8, 0.25, 0.01).n > base
    assert pl.krippendorff_sample_size(0.8, 0.5, 0.05).n < base


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0.8, 0.6, 0.05), "least frequent category's probability must lie in"),
        ((0.8, 0.0, 0.05), "least frequent category's probability must lie in"),
        ((1.0, 0.25, 0.05), "strictly between 0 and 1"),
        ((0.8, 0.25, 0.5), "level of significance"),
    ],
)
def test_bad_inputs_are_one_line_errors(args, message):
    with pytest.raises(GoldboardError, match=message):
        pl.krippendorff_sample_size(*args)


def test_plan_sample_size_takes_the_smallest_prevalence():
    (plan,) = pl.plan_sample_size(None, [0.5, 0.3, 0.2], alpha_min=0.8)
    assert plan.least_frequent == pytest.approx(0.2)
    assert plan.prevalences == pytest.approx((0.5, 0.3, 0.2))
    assert plan.n == pl.krippendorff_sample_size(0.8, 0.2).n
    (binary,) = pl.plan_sample_size(None, 0.7, alpha_min=0.8)  # positive rate 0.7 -> least frequent 0.3
    assert binary.least_frequent == pytest.approx(0.3)
    with pytest.raises(GoldboardError, match="exactly one goal"):
        pl.plan_sample_size(0.6, 0.3, alpha_min=0.8, kappa_lower=0.4)
    with pytest.raises(GoldboardError, match="applies to alpha_min"):
        pl.plan_sample_size(0.6, 0.3, kappa_lower=0.4, least_frequent=0.3)


# -- CLI ------------------------------------------------------------------------------------------


def test_cli_alpha_min_table_json_and_sentence(cli):
    res = cli("plan", "size", "--alpha-min", 0.8, "--least-frequent", 0.25)
    assert res.exit_code == 0, res.output
    assert "139 ratings" in res.stdout and "Krippendorff" in res.stdout and "Bloch & Kraemer" in res.stdout
    res = cli("plan", "size", "--alpha-min", 0.667, "--prevalence", "0.25,0.25,0.25,0.25", "--format", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    (plan,) = out["plans"]
    assert (plan["n"], plan["n_values"], plan["goal"], plan["kappa"]) == (41, 81, "alpha_min", None)
    # "41 double-rated items (81 ratings by two raters)": 41 items rated twice are 82 ratings (cl22)
    assert out["sentence"].startswith(
        "A sample of 41 double-rated items (82 ratings by two raters; the minimum is 81 ratings) meets Krippendorff"
    ), out["sentence"]
    res = cli("plan", "size", "--alpha-min", 0.8, "--least-frequent", 0.25, "--format", "markdown")
    assert res.exit_code == 0 and "| 70 |" in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--alpha-min", 0.8], "give --least-frequent"),
        (["--alpha-min", 0.8, "--least-frequent", 0.2, "--kappa", 0.6], "--kappa: not used with --alpha-min"),
        (["--alpha-min", 0.8, "--least-frequent", 0.7], "--least-frequent: the least frequent"),
        (["--alpha-min", 0.8, "--least-frequent", 0.2, "--alpha", 0.6], "--alpha: the level of significance"),
        (["--kappa", 0.6, "--lower", 0.4, "--prevalence", 0.3, "--least-frequent", 0.3], "--least-frequent:"),
        (["--alpha-min", 0.8, "--prevalence", ","], "--prevalence: expected comma-separated"),
    ],
)
def test_cli_alpha_min_errors(cli, args, message):
    res = cli("plan", "size", *args)
    assert res.exit_code != 0
    assert message in res.output and res.output.count("\n") == 1


def test_cli_alpha_min_from_study_uses_the_least_frequent_pilot_category(cli, tmp_path):
    from test_report import make_study

    from goldboard.workflows.planning import pilot_inputs

    st = make_study(tmp_path, n=40)
    pilot = pilot_inputs(st, field="safety_label")
    least = min(pilot.prevalences)
    res = cli(
        "plan",
        "size",
        "--study",
        st.path,
        "--from-study",
        "--field",
        "safety_label",
        "--alpha-min",
        0.8,
        "--format",
        "json",
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["plans"][0]["least_frequent"] == pytest.approx(least)
    assert out["plans"][0]["n"] == pl.krippendorff_sample_size(0.8, least).n
    label = pilot.categories[pilot.prevalences.index(least)]
    assert out["sentence"].startswith(
        f"Planning inputs came from pilot round 1 (40 items; least frequent category {label!r}"
    )
    rec = st.__class__.open(st.path).extra["plan"]
    assert rec["goal"] == "alpha_min" and rec["n_values"] == out["plans"][0]["n_values"] and "kappa" not in rec
