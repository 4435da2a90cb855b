"""`goldboard agree --study S --test-retest --rounds 1,2`: intra-rater agreement per rater.

Checked against independent computations on the same ratings: scikit-learn's
``cohen_kappa_score`` (unweighted and quadratic-weighted kappa) and the ``krippendorff``
package's ``alpha`` (nominal, ordinal), plus the published OpenMTB-Audit value: when onc_a's
"retest" round holds oncologist B's labels, the intra-rater kappa must be the published
inter-rater kappa 0.600.
"""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from conftest import run_cli as run
from sklearn.metrics import cohen_kappa_score

from goldboard.cases.examples import example_path

OPENMTB = example_path("openmtb")
CATS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Info", "Unsafe"]


def stat(entry, name, weights="none"):
    return next(s for s in entry["statistics"] if s["statistic"] == name and s["weights"] == weights)


def alpha(x, y, cats, level):
    codes = {c: i for i, c in enumerate(cats)}
    data = np.array([[codes[v] for v in x], [codes[v] for v in y]], dtype=float)
    return krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=list(range(len(cats))))


@pytest.fixture()
def two_rounds(tmp_path):
    raw = pd.read_csv(OPENMTB)
    b = raw["oncologist_b_label"].tolist()
    b2 = [CATS[(CATS.index(v) + 1) % 5] if i % 7 == 3 else v for i, v in enumerate(b)]  # onc_b changes 7 of 50
    r2 = pd.DataFrame({"case_id": raw["case_id"], "a2": raw["oncologist_b_label"], "b2": b2}).iloc[:45]
    t2 = tmp_path / "round2.csv"
    r2.to_csv(t2, index=False)
    s = tmp_path / "retest"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run(
        "pull", "--study", s, "--from-table", OPENMTB, "--item-col", "case_id",
        "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label", "--field", "safety_label",
    )  # fmt: skip
    run(
        "pull",
        "--study",
        s,
        "--from-table",
        t2,
        "--round",
        "2",
        "--rater-cols",
        "onc_a=a2,onc_b=b2",
        "--field",
        "safety_label",
    )
    return s, raw, b2


def test_intra_rater_kappa_and_alpha_match_independent_computations(two_rounds):
    s, raw, b2 = two_rounds
    out = json.loads(run("agree", "--study", s, "--test-retest", "--rounds", "1,2", "--format", "json").stdout)
    assert out["rounds"] == [1, 2] and set(out["raters"]) == {"onc_a", "onc_b"}
    a, b = out["raters"]["onc_a"], out["raters"]["onc_b"]
    assert a["n_items"] == b["n_items"] == 45  # only items rated in both rounds
    # onc_a: round 1 = oncologist A, round 2 = oncologist B (first 45 cases)
    x, y = raw["oncologist_a_label"][:45], raw["oncologist_b_label"][:45]
    assert stat(a, "cohen_kappa")["value"] == pytest.approx(cohen_kappa_score(x, y), abs=1e-12)
    k_alpha = next(s for s in a["statistics"] if s["statistic"] == "krippendorff_alpha")
    assert k_alpha["value"] == pytest.approx(alpha(x, y, CATS, "nominal"), abs=1e-12)
    # onc_b: 7 changed labels out of 50, 45 in both rounds
    x, y = raw["oncologist_b_label"][:45], b2[:45]
    kb = stat(b, "cohen_kappa")
    assert kb["value"] == pytest.approx(cohen_kappa_score(x, y), abs=1e-12)
    assert stat(b, "percent_agreement")["value"] == pytest.approx(np.mean(np.array(x) == np.array(y)))
    assert kb["ci_low"] < kb["value"] < kb["ci_high"] and kb["ci_method"] == "wilson"  # the default interval (issue 34)
    table = run("agree", "--study", s, "--test-retest", "--rounds", "1,2").stdout
    assert "Test-retest (intra-rater) agreement on safety_label: round 1 vs round 2" in table
    assert f"{kb['value']:.3f}" in table


def test_published_kappa_as_a_retest(tmp_path):
    """All 50 cases: onc_a's 'retest' holds oncologist B's labels -> kappa 0.600 as published."""
    raw = pd.read_csv(OPENMTB)
    t2 = tmp_path / "r2.csv"
    raw[["case_id", "oncologist_b_label"]].rename(columns={"oncologist_b_label": "safety_label"}).assign(
        rater="onc_a"
    ).to_csv(t2, index=False)
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run(
        "pull",
        "--study",
        s,
        "--from-table",
        OPENMTB,
        "--item-col",
        "case_id",
        "--rater-cols",
        "onc_a=oncologist_a_label",
        "--field",
        "safety_label",
    )
    run("pull", "--study", s, "--from-table", t2, "--round", "2")
    out = json.loads(run("agree", "--study", s, "--test-retest", "--rounds", "1,2", "--format", "json").stdout)
    k = stat(out["raters"]["onc_a"], "cohen_kappa")
    assert round(k["value"], 3) == 0.600 and k["n_items"] == 50
    assert out["raters"]["onc_b"]["n_items"] == 0 and out["raters"]["onc_b"]["statistics"] == []
    assert any("onc_b: 0 item(s) rated in both rounds" in w for w in out["warnings"])


def test_ordinal_retest_weighted_kappa(tmp_path):
    """medfail severity (ordinal 1-5): quadratic-weighted kappa over the full scale = sklearn's
    with labels 1..5; ordinal alpha = the krippendorff package's."""
    rng = np.random.default_rng(4)
    r1 = rng.integers(1, 6, size=40)
    r2 = np.clip(r1 + rng.choice([-1, 0, 0, 1], size=40), 1, 4)  # level 5 never used in round 2
    s = tmp_path / "mf"
    run("study", "init", s, "--schema", "medfail", "--raters", "rev_1,rev_2")
    for rnd, vals in ((1, r1), (2, r2)):
        t = tmp_path / f"r{rnd}.csv"
        pd.DataFrame({"item": [f"P{i}" for i in range(40)], "rater": "rev_1", "severity": vals}).to_csv(t, index=False)
        run("pull", "--study", s, "--from-table", t, "--item-col", "item", "--round", str(rnd))
    out = json.loads(run("agree", "--study", s, "--test-retest", "--rounds", "1,2", "--format", "json").stdout)
    e = out["raters"]["rev_1"]
    want = cohen_kappa_score(r1, r2, weights="quadratic", labels=[1, 2, 3, 4, 5])
    assert stat(e, "cohen_kappa", "quadratic")["value"] == pytest.approx(want, abs=1e-12)
    assert stat(e, "cohen_kappa", "linear")["value"] == pytest.approx(
        cohen_kappa_score(r1, r2, weights="linear", labels=[1, 2, 3, 4, 5]), abs=1e-12
    )
    ordinal = next(s for s in e["statistics"] if s["statistic"] == "krippendorff_alpha" and s["level"] == "ordinal")
    assert ordinal["value"] == pytest.approx(
        alpha([str(v) for v in r1], [str(v) for v in r2], ["1", "2", "3", "4", "5"], "ordinal"), abs=1e-12
    )


def test_retest_errors(two_rounds):
    s, _, _ = two_rounds
    assert "give two different rounds" in run("agree", "--study", s, "--test-retest", "--rounds", "1,1", code=1).output
    assert (
        "round 3 has no safety_label ratings"
        in run("agree", "--study", s, "--test-retest", "--rounds", "1,3", code=1).output
    )
    assert "give the two rounds" in run("agree", "--study", s, "--test-retest", code=1).output
    assert "needs --study" in run("agree", str(OPENMTB), "--test-retest", "--rounds", "1,2", code=1).output
