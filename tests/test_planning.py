"""`goldboard plan`: sample size for a kappa study against published worked examples, independent
checks where no printed output exists, the pilot-round inputs, and the double-rated set.

Published outputs pinned here (the printed digits):
* irr 0.84.1 ``N.cohen.kappa`` (Cantor 1996) documented example, rdrr.io "Example output":
  ``N.cohen.kappa(0.5, 0.5, 0.7, 0.85)`` -> ``[1] 96``.
* irr 0.84.1 ``N2.cohen.kappa`` (Flack et al. 1988) documented examples, rdrr.io "Example output":
  ``N2.cohen.kappa(c(0.2, 0.25, 0.55), k1=0.6, k0=0.4)`` -> 101; ``power=0.9`` -> 136;
  ``N2.cohen.kappa(c(0.2, 0.05, 0.2, 0.05, 0.2, 0.3), k1=0.5, k0=0.1)`` -> 18.
* The 1-df non-centrality for alpha 0.05 / power 0.80, 7.85 (Cohen 1988, Table 9.4.1 / any
  non-central chi-square table), which the Donner-Eliasziw power form divides by.

No printed output of R kappaSize (Donner & Eliasziw 1992) was found; its forms are pinned to
kappaSize 1.2's computed outputs in test_planning_kappasize.py, and checked here by simulating the
procedure they plan for (fixed seed, bounded): the goodness-of-fit test's power at the planned n,
and the goodness-of-fit lower confidence limit's average at the planned n.  Krippendorff's minimum
sample size for alpha: test_planning_krippendorff.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from goldboard.analysis import planning as pl
from goldboard.errors import GoldboardError


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(dict(kappa1=0.7, kappa0=0.85, rate1=0.5, rate2=0.5), 96, id="irr-N.cohen.kappa-doc-example-96"),
    ],
)
def test_cantor_reproduces_irr_example(args, expected):
    assert pl.cantor_sample_size(**args).n == expected


@pytest.mark.parametrize(
    ("marg", "k1", "k0", "power", "expected"),
    [
        pytest.param([0.2, 0.25, 0.55], 0.6, 0.4, 0.8, 101, id="irr-N2.cohen.kappa-doc-3cat-power80-101"),
        pytest.param([0.2, 0.25, 0.55], 0.6, 0.4, 0.9, 136, id="irr-N2.cohen.kappa-doc-3cat-power90-136"),
        pytest.param([0.2, 0.05, 0.2, 0.05, 0.2, 0.3], 0.5, 0.1, 0.8, 18, id="irr-N2.cohen.kappa-doc-6cat-18"),
    ],
)
def test_flack_reproduces_irr_examples(marg, k1, k0, power, expected):
    assert pl.flack_sample_size(k1, k0, marg, power=power).n == expected


def test_noncentrality_matches_table():
    # Cohen (1988) power tables: lambda = 7.85 for df 1, alpha .05, power .80
    assert pl.noncentrality(0.05, 0.80) == pytest.approx(7.85, abs=0.005)


@pytest.mark.parametrize(("k", "r1", "r2"), [(0.6, 0.3, 0.3), (0.4, 0.2, 0.35), (0.85, 0.5, 0.5), (0.0, 0.1, 0.4)])
def test_cantor_q_equals_fleiss_closed_form(k, r1, r2):
    """Cantor's Q (cell by cell) equals the closed form of the same Fleiss-Cohen-Everitt variance
    used by Stata's kapssi (Harrison 2004): n Var = (1-k)[4 p1 p2 q1 q2 (1+k) + (1-2p1)(1-2p2)
    (p1 q2 + p2 q1) k (2-k)] / (p1 q2 + p2 q1)^2."""
    q1, q2 = 1 - r1, 1 - r2
    d = r1 * q2 + r2 * q1
    closed = (1 - k) * (4 * r1 * r2 * q1 * q2 * (1 + k) + (1 - 2 * r1) * (1 - 2 * r2) * d * k * (2 - k)) / d**2
    assert pl.cantor_q(k, r1, r2) == pytest.approx(closed, rel=1e-12)


def test_flack_binary_equals_cantor_equal_rates():
    # with two categories and common marginals the table is fixed: worst case = the only case
    for k1, k0, p in [(0.6, 0.4, 0.3), (0.8, 0.5, 0.45)]:
        a = pl.flack_sample_size(k1, k0, [1 - p, p]).n_exact
        b = pl.cantor_sample_size(k1, k0, p, p).n_exact
        assert a == pytest.approx(b, rel=1e-9)


def _gof_binary(counts: np.ndarray, k0: float) -> np.ndarray:
    """Donner-Eliasziw goodness-of-fit statistic of observed (neg-neg, discordant, pos-pos) counts
    against kappa = k0, prevalence estimated from the data (1 df)."""
    n = counts.sum(axis=-1)
    ph = (2 * counts[..., 2] + counts[..., 1]) / (2 * n)
    p0 = np.stack([(1 - ph) ** 2 + k0 * ph * (1 - ph), 2 * (1 - k0) * ph * (1 - ph), ph**2 + k0 * ph * (1 - ph)], -1)
    e = n[..., None] * p0
    return ((counts - e) ** 2 / e).sum(-1)


def _cells(kappa: float, p: float) -> np.ndarray:
    both_neg, both_pos, disagree = pl.cell_probabilities(kappa, [1 - p, p])
    return np.array([both_neg, disagree, both_pos])


def test_power_form_gives_its_power_in_simulation():
    plan = pl.power_sample_size(0.6, 0.4, 0.3)
    rng = np.random.default_rng(2026)
    crit = stats.chi2.ppf(0.95, 1)
    power = (_gof_binary(rng.multinomial(plan.n, _cells(0.6, 0.3), size=20000), 0.4) > crit).mean()
    size = (_gof_binary(rng.multinomial(plan.n, _cells(0.4, 0.3), size=20000), 0.4) > crit).mean()
    half = (_gof_binary(rng.multinomial(plan.n // 2, _cells(0.6, 0.3), size=20000), 0.4) > crit).mean()
    assert power == pytest.approx(0.80, abs=0.03)  # measured 0.817 at n=191
    assert size == pytest.approx(0.05, abs=0.01)
    assert half < 0.6


@pytest.mark.parametrize(("kappa", "lower", "p"), [(0.6, 0.4, 0.3), (0.8, 0.6, 0.5)])
def test_ci_form_gives_its_lower_limit_in_simulation(kappa, lower, p):
    """At the planned n the goodness-of-fit one-sided 95% lower limit, computed on simulated
    samples, averages the target lower limit (measured 0.394 and 0.597)."""
    plan = pl.ci_sample_size(kappa, lower, p)
    rng = np.random.default_rng(7)
    counts = rng.multinomial(plan.n, _cells(kappa, p), size=1000).astype(float)
    grid = np.arange(-0.2, 0.999, 0.002)
    inside = np.stack([_gof_binary(counts, g) for g in grid], 1) <= stats.chi2.ppf(0.90, 1)
    limits = grid[np.argmax(inside, axis=1)]
    assert limits.mean() == pytest.approx(lower, abs=0.02)
    assert pl.expected_lower_bound(kappa, plan.n, p) == pytest.approx(lower, abs=0.01)


def test_ci_two_sided_needs_both_limits_and_more_items():
    one = pl.ci_sample_size(0.6, 0.5, [0.3, 0.7])
    two = pl.ci_sample_size(0.6, 0.5, [0.3, 0.7], kappa_upper=0.7)
    assert two.n > one.n
    # the expected interval at n excludes both limits; at n - 1 one of them is not excluded
    crit = stats.chi2.ppf(0.95, 1)
    p = pl.prevalence_vector([0.3, 0.7])
    assert min(two.n * pl._gof(0.6, 0.5, p), two.n * pl._gof(0.6, 0.7, p)) >= crit
    assert min((two.n - 1) * pl._gof(0.6, 0.5, p), (two.n - 1) * pl._gof(0.6, 0.7, p)) < crit


def test_binary_model_is_kappa():
    # the model's cell probabilities reproduce the kappa they were built from
    for k, p in [(0.3, 0.2), (0.7, 0.5)]:
        nn, pp, _ = pl.cell_probabilities(k, [1 - p, p])
        po = nn + pp
        pe = p**2 + (1 - p) ** 2
        assert (po - pe) / (1 - pe) == pytest.approx(k)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pl.ci_sample_size(0.6, 0.7, 0.3), "below the expected kappa"),
        (lambda: pl.ci_sample_size(0.6, 0.4, [0.3, 0.3]), "sum to 1"),
        (lambda: pl.power_sample_size(0.6, 0.4, 0.3, power=0.01), "must exceed alpha"),
        (lambda: pl.prevalence_vector([0.5, 0.5, 0.0]), "strictly between 0 and 1"),
    ],
)
def test_bad_inputs_are_one_line_errors(call, message):
    with pytest.raises(GoldboardError, match=message):
        call()


def test_stratified_sample_keeps_every_stratum_and_is_seeded():
    strata = ["a"] * 50 + ["b"] * 30 + ["c"] * 2
    s1 = pl.stratified_sample(strata, 20, seed=3)
    s2 = pl.stratified_sample(strata, 20, seed=3)
    s3 = pl.stratified_sample(strata, 20, seed=4)
    assert s1 == s2 and s1 != s3 and len(set(s1)) == 20
    drawn = [strata[i] for i in s1]
    assert drawn.count("c") >= 1
    # proportional after the one-per-stratum floor: 17 spare over 49/29/1 -> 10.5/6.3/0.2
    assert (drawn.count("a"), drawn.count("b"), drawn.count("c")) == (12, 7, 1)
    with pytest.raises(GoldboardError, match="only 82"):
        pl.stratified_sample(strata, 83)


# -- CLI ------------------------------------------------------------------------------------------


def test_cli_size_json_and_sentence(cli):
    res = cli("plan", "size", "--kappa", 0.6, "--null", 0.4, "--prevalence", "0.2,0.25,0.55", "--format", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    methods = {p["method"]: p["n"] for p in out["plans"]}
    assert methods["Flack et al. (1988) worst-case variance test"] == 101
    assert out["sentence"].startswith(f"A sample of {out['plans'][0]['n']} double-rated items gives 80% power")
    res = cli("plan", "size", "--kappa", 0.7, "--lower", 0.5, "--prevalence", "0.2,0.5,0.3")
    assert res.exit_code == 0
    n = pl.ci_sample_size(0.7, 0.5, [0.2, 0.5, 0.3]).n
    assert f"A sample of {n} double-rated items gives an expected lower limit of the one-sided 95%" in res.stdout


def test_cli_size_binary_lists_cantor(cli):
    res = cli("plan", "size", "--kappa", 0.7, "--null", 0.85, "--prevalence", 0.5, "--rates", "0.5,0.5")
    assert res.exit_code == 0, res.output
    assert "Cantor (1996)" in res.stdout and " 96 " in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kappa", 0.6, "--prevalence", 0.3], "give exactly one goal"),
        (["--kappa", 0.6, "--lower", 0.7, "--prevalence", 0.3], "--lower: must be below"),
        (["--kappa", 0.6, "--lower", 0.4, "--prevalence", "0.3,x"], "--prevalence: expected comma-separated"),
        (["--lower", 0.4], "give --kappa and --prevalence"),
        (["--kappa", 0.6, "--lower", 0.4, "--prevalence", 0.3, "--rates", "0.3,0.4"], "--rates: the raters' own"),
    ],
)
def test_cli_size_errors(cli, args, message):
    res = cli("plan", "size", *args)
    assert res.exit_code != 0
    assert message in res.output and res.output.count("\n") == 1


def test_cli_from_study_uses_pilot(cli, tmp_path):
    from test_report import make_study

    from goldboard.workflows.planning import pilot_inputs

    st = make_study(tmp_path, n=40)
    pilot = pilot_inputs(st, field="safety_label")
    ratings = st.ratings(1)
    sub = ratings[ratings["field"] == "safety_label"]
    shares = sub["value"].value_counts(normalize=True)
    assert dict(zip(pilot.categories, pilot.prevalences)) == pytest.approx(shares.to_dict())
    res = cli(
        "plan",
        "size",
        "--study",
        st.path,
        "--from-study",
        "--field",
        "safety_label",
        "--width",
        0.3,
        "--format",
        "json",
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["pilot"]["kappa"] == pytest.approx(pilot.kappa)
    expected = pl.ci_sample_size(pilot.kappa, pilot.kappa - 0.15, pilot.prevalences, kappa_upper=pilot.kappa + 0.15)
    assert out["plans"][0]["n"] == expected.n
    assert out["sentence"].startswith("Planning inputs came from pilot round 1 (40 items")


def test_cli_sample_writes_stratified_cases(cli, tmp_path):
    cases = tmp_path / "cases.jsonl"
    recs = [
        {"case_id": f"c{i}", "text": f"t{i}", "error_type": "rare" if i < 2 else ("x" if i % 2 else "y")}
        for i in range(40)
    ]
    cases.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "double.jsonl"
    res = cli("plan", "sample", "--cases", cases, "--by", "error_type", "-n", 10, "--seed", 5, "-o", out)
    assert res.exit_code == 0, res.output
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(got) == 10 and all(g in recs for g in got)
    assert any(g["error_type"] == "rare" for g in got)
    again = tmp_path / "again.jsonl"
    cli("plan", "sample", "--cases", cases, "--by", "error_type", "-n", 10, "--seed", 5, "-o", again)
    assert again.read_text() == out.read_text()
    res = cli("plan", "sample", "--cases", cases, "--by", "specialty", "-n", 10, "-o", tmp_path / "z.jsonl")
    assert res.exit_code != 0 and "no record has a column 'specialty'" in res.output
    assert not (tmp_path / "z.jsonl").exists()


def test_normal_and_chi_square_quantiles_match_scipy():
    """planning's quantiles come from the standard library (no scipy import for a closed formula):
    they must be scipy's to the last digits over the whole unit interval, tails included."""
    from scipy.special import ndtri as scipy_ndtri
    from scipy.stats import chi2

    from goldboard.analysis.planning import _chi2_1_ppf, ndtri

    grid = np.concatenate([np.logspace(-12, -1, 45), np.linspace(0.01, 0.99, 197), 1 - np.logspace(-12, -1, 45)])
    for p in grid:
        assert ndtri(p) == pytest.approx(scipy_ndtri(p), rel=1e-13, abs=1e-13), p
    for q in grid[grid >= 0.01]:  # a critical value's level: 1 - alpha or 1 - 2 alpha
        assert _chi2_1_ppf(q) == pytest.approx(chi2.ppf(q, 1), rel=1e-12), q
