"""With more than one judge in a study (the demo has a simulated one and a real one), the verdict
and the methods paragraph account for every judge, not only the one with the highest rho: its
result, its kappa and alpha with 95% CIs against each clinician and against gold, rho's interval,
the panel ratio and its abstention, and the items each was tested on."""

from __future__ import annotations

import csv
import json

import pytest
from conftest import run_cli as run
from test_judge_run import OPENMTB, openmtb_study


def _ci(est: dict) -> str:
    if est["low"] is None:  # kappa 1 on the items gold is unanimous on: a Wald interval of width 0
        return f"{est['value']:.2f} (CI not estimable: degenerate table)"
    return f"{est['value']:.2f} ({est['low']:.2f} to {est['high']:.2f})"


@pytest.fixture()
def study(tmp_path):
    s = openmtb_study(tmp_path, texts=False)
    rows = list(csv.DictReader(OPENMTB.open(newline="", encoding="utf-8-sig")))
    close, flat = tmp_path / "close.csv", tmp_path / "flat.csv"
    # onc_a's labels, but onc_b's on every fifth item (a judge close to the clinicians, not a copy)
    close.write_text(
        "item_id,field,value\n"
        + "".join(f"{r['case_id']},safety_label,{r['oncologist_b_label' if i % 5 == 0 else 'oncologist_a_label']}\n"
                  for i, r in enumerate(rows))
    )  # fmt: skip
    flat.write_text("item_id,field,value\n" + "".join(f"{r['case_id']},safety_label,Supported\n" for r in rows[:36]))
    run("judge", "--study", s, "--judge", "close", "--labels", close, "--expertise", "expert")
    run("judge", "--study", s, "--judge", "flat", "--labels", flat, "--expertise", "expert")
    return s


def test_the_verdict_and_the_methods_name_every_judge(study, tmp_path):
    args = ["judge", "--study", study, "--judge", "close,flat", "--expertise", "expert"]
    data = json.loads(run(*args, "--format", "json").stdout)
    assert [d["judge"] for d in data["judges"]] == ["close", "flat"]  # highest rho first
    verdict = data["verdict"]
    for d in data["judges"]:
        result = "passes" if d["passed"] else "does not pass"
        assert f"{d['judge']} {result} the alt-test on safety_label (winning rate {d['winning_rate']:.2f}" in verdict
    assert verdict.count("With two clinicians") == 1
    out = tmp_path / "r.md"
    run("report", "--study", study, "--format", "markdown", "-o", out)
    methods = next(line for line in out.read_text().splitlines() if "alternative annotator test" in line)
    assert "on items (close: 50; flat: 36) rated by at least two clinicians and the judge" in methods
    for name in ("close", "flat"):
        rows = [r for r in data["agreement"] if r["kind"] == "judge" and r["a"] == name]
        assert [r["b"] for r in rows] == ["onc_a", "onc_b", "gold"]
        kappas = "; ".join(f"against {r['b']} {_ci(r['kappa'])} ({r['n_items']} items)" for r in rows)
        alphas = "; ".join(f"against {r['b']} {_ci(r['alpha'])}" for r in rows)
        assert (
            f"Agreement of {name} on safety_label (95% CIs): Cohen's kappa {kappas}; Krippendorff's alpha {alphas}."
            in methods
        )
        d = next(x for x in data["judges"] if x["judge"] == name)
        assert (
            f"For {name}, rho was {d['advantage_probability']:.2f} ({d['rho_low']:.2f} to {d['rho_high']:.2f})"
            in methods
        )
        ratio = next(r for r in data["panel_ratio"] if r["judge"] == name)
        assert (
            f"{name}'s agreement with the clinicians relative to the clinicians' agreement with each other" in methods
        )
        assert f"{ratio['ratio']:.2f} (95% CI" in methods
        ab = next(r for r in data["abstention"]["rows"] if r["rater"] == name)
        assert f"{name} abstained on {100 * ab['any']['rate']:.0f}% of {ab['n_items']} items" in methods
    # the close judge is closer to onc_a than the flat one
    kappa = {r["a"]: r["kappa"]["value"] for r in data["agreement"] if r["kind"] == "judge" and r["b"] == "onc_a"}
    assert kappa["close"] > 0.6 > kappa["flat"]
