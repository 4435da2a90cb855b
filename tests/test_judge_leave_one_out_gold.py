"""The judge section's "clinician vs gold" rows compare like with like: each clinician against a
gold without that clinician (the decision in force, else the other clinicians' agreed value), never
against a gold made of the clinician's own unanimity with the others (which scored both OpenMTB-Audit
oncologists 1.00 on the 34 items they agree on).  Failed on the code before (checked)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from conftest import run_cli as run
from sklearn.metrics import cohen_kappa_score
from test_judge_study import WIDE, canon, judge_label, raw_rows

from goldboard.cases.examples import example_path
from goldboard.workflows.judge import leave_one_out_gold


def test_each_clinician_is_scored_against_the_other_not_against_itself(tmp_path):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", example_path("openmtb"), *WIDE)
    labels = tmp_path / "bench.csv"
    with open(labels, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "field", "value"])
        out.writerows([r["case_id"], "safety_label", judge_label(k, r)] for k, r in enumerate(raw_rows()))
    res = run("judge", "--study", s, "--judge", "bench", "--labels", labels, "--epsilon", "0.2", "--format", "json")
    rows = {(r["kind"], r["a"]): r for r in json.loads(res.stdout)["agreement"]}
    a, b = (canon([r[c] for r in raw_rows()]) for c in ("oncologist_a_label", "oncologist_b_label"))
    for who in ("onc_a", "onc_b"):
        row = rows["gold", who]
        # no decision: gold without onc_a is onc_b's rating on all 50 items, the published kappa 0.600
        assert row["b"] == f"gold without {who}" and row["n_items"] == 50
        assert row["kappa"]["value"] == pytest.approx(cohen_kappa_score(a, b)) == pytest.approx(0.600, abs=5e-4)
    out = tmp_path / "r.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement")
    text = out.read_text(encoding="utf-8").replace("\\", "")
    assert "each clinician against leave-one-out gold" in text
    assert "| clinician vs leave-one-out gold | onc_a | gold without onc_a | 50 | 0.60" in text, text


def test_leave_one_out_gold_keeps_decisions_and_drops_what_rests_on_the_clinician():
    # 5 items x 3 clinicians (-1: not rated); k = 3 categories
    h = np.array([[0, 0, 0], [1, 1, 2], [2, -1, -1], [0, 1, -1], [1, 0, 0]])
    gold = np.array([0, 2, -1, 1, -1])
    decided = np.array([False, True, False, True, False])
    # clinician 0: item 0 the others' 0; item 1 the decision 2; item 2 rated by 0 alone -> none;
    # item 3 the decision 1; item 4 the others' 0 (item 4's gold was unresolved)
    assert leave_one_out_gold(h, 0, gold, decided, 3).tolist() == [0, 2, -1, 1, 0]
    # clinician 1: item 2 has clinician 0's 2, item 4 clinicians 0 and 2 disagree -> none
    assert leave_one_out_gold(h, 1, gold, decided, 3).tolist() == [0, 2, 2, 1, -1]
