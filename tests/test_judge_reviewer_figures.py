"""What a reviewer asks of an LLM judge beside the alt-test, in a study: balanced F1 against each
clinician beside the clinicians' own (binary fields), the judge's agreement with the panel
relative to the clinicians' with each other (with a CI), an interval for rho, abstention beside
the clinicians', self-consistency and position bias from --samples, and a verdict that carries
what the test can show with two clinicians.  Every figure is recomputed here by other means
(scikit-learn, plain Python)."""

from __future__ import annotations

import csv
import json
import re

import numpy as np
import pytest
from conftest import run_cli as run
from sklearn.metrics import f1_score
from test_judge_run import OPENMTB, WIDE, Stub, give_texts

from goldboard.analysis.alttest import alt_test, rho_intervals
from goldboard.analysis.judge_agreement import balanced_f1, panel_ratio


@pytest.fixture()
def stub():
    s = Stub()
    yield s
    s.stop()


def raw_rows() -> list[dict]:
    return list(csv.DictReader(OPENMTB.open(newline="", encoding="utf-8-sig")))


def test_balanced_f1_is_sklearns_macro_f1_on_the_items_both_rated():
    rng = np.random.default_rng(3)
    a, b = rng.integers(-1, 3, 200), rng.integers(-1, 3, 200)  # -1 missing, 2 blank
    both = (a >= 0) & (a < 2) & (b >= 0) & (b < 2)
    got, n = balanced_f1(a, b, 2)
    assert n == both.sum()
    assert got == pytest.approx(f1_score(a[both], b[both], average="macro", labels=[0, 1]))
    assert balanced_f1(b, a, 2)[0] == pytest.approx(got)  # symmetric
    # a class neither rater uses: its F1 is 0/0, not estimable (never a silent 0 or 1)
    assert balanced_f1(np.zeros(10, int), np.zeros(10, int), 2)[0] is None


def test_panel_ratio_is_pooled_pairwise_agreement_with_a_seeded_item_bootstrap():
    rng = np.random.default_rng(5)
    truth = rng.integers(0, 3, 300)
    humans = np.where(rng.random((300, 3)) < 0.7, truth[:, None], rng.integers(0, 3, (300, 3)))
    humans[rng.random((300, 3)) < 0.1] = -1
    j_pairs = j_match = p_pairs = p_match = 0
    for i in range(300):
        rated = [h for h in humans[i] if h >= 0]
        if len(rated) < 2:
            continue
        j_pairs += len(rated)
        j_match += sum(h == truth[i] for h in rated)
        for x in range(len(rated)):
            for y in range(x + 1, len(rated)):
                p_pairs += 1
                p_match += rated[x] == rated[y]
    good = panel_ratio(humans, truth, 3, seed=1)
    assert good["ratio"] == pytest.approx((j_match / j_pairs) / (p_match / p_pairs))
    assert good["low"] < good["ratio"] < good["high"] and good["low"] > 1  # the truth is closer than a clinician
    assert panel_ratio(humans, truth, 3, seed=1) == good  # seeded
    noisy = panel_ratio(humans, rng.integers(0, 3, 300), 3, seed=1)
    assert noisy["high"] < 1  # a guessing judge is further from the panel than the clinicians are


def test_rho_interval_brackets_rho_and_narrows_with_more_items():
    rng = np.random.default_rng(11)

    def data(n):
        truth = rng.integers(0, 4, n)
        h = np.where(rng.random((n, 3)) < 0.7, truth[:, None], rng.integers(0, 4, (n, 3))).astype(float)
        j = np.where(rng.random((n, 1)) < 0.7, truth[:, None], rng.integers(0, 4, (n, 1))).astype(float)
        return h, j

    widths = []
    for n in (60, 600):
        h, j = data(n)
        (res,) = alt_test(h, j, human_names=["a", "b", "c"], judge_names=["j"])
        ((lo, hi),) = rho_intervals(h, j, tested=[True] * 3, seed=2)
        assert lo < res.advantage_probability < hi
        assert rho_intervals(h, j, tested=[True] * 3, seed=2) == [(lo, hi)]
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 2


@pytest.fixture()
def binary_study(tmp_path):
    """A medfail study rated on keep_in_benchmark (keep / drop) by three clinicians."""
    rng = np.random.default_rng(8)
    truth = rng.choice(["keep", "drop"], 60, p=[0.7, 0.3])
    flip = {"keep": "drop", "drop": "keep"}
    cols = {r: [flip[t] if rng.random() < 0.15 else t for t in truth] for r in ("r1", "r2", "r3")}
    table = tmp_path / "ratings.csv"
    with open(table, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "r1", "r2", "r3"])
        w.writerows([f"I{i:02d}", cols["r1"][i], cols["r2"][i], cols["r3"][i]] for i in range(60))
    judge = [flip[t] if rng.random() < 0.1 else t for t in truth]
    labels = tmp_path / "judge.csv"
    with open(labels, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "field", "value"])
        w.writerows([f"I{i:02d}", "keep_in_benchmark", judge[i]] for i in range(60))
    s = tmp_path / "study"
    run("study", "init", s, "--schema", "medfail", "--raters", "r1,r2,r3")
    run("pull", "--study", s, "--from-table", table, "--item-col", "item", "--rater-cols", "r1=r1,r2=r2,r3=r3",
        "--field", "keep_in_benchmark")  # fmt: skip
    return s, labels, cols, judge


def test_binary_field_balanced_f1_per_clinician_beside_theirs_everywhere(binary_study, tmp_path):
    s, labels, cols, judge = binary_study
    args = ["judge", "--study", s, "--judge", "llm", "--field", "keep_in_benchmark", "--expertise", "expert"]
    data = json.loads(run(*args, "--labels", labels, "--format", "json").stdout)
    (entry,) = data["balanced_f1"]
    by = {r["clinician"]: r for r in entry["rows"]}
    for r in ("r1", "r2", "r3"):
        assert by[r]["judge_f1"] == pytest.approx(f1_score(cols[r], judge, average="macro"))
        others = [g for g in ("r1", "r2", "r3") if g != r]
        mine = sum((cols[r] for _ in others), [])
        theirs = sum((cols[g] for g in others), [])
        assert by[r]["clinician_f1"] == pytest.approx(f1_score(theirs, mine, average="macro"))
        assert by[r]["judge_items"] == 60 and by[r]["clinician_pairs"] == 120
    text = run(*args).stdout
    assert "balanced F1 on keep_in_benchmark" in text
    after = text.split("balanced F1 on keep_in_benchmark", 1)[1]
    row = next(line for line in after.splitlines() if line.startswith("r2 "))
    assert f"{by['r2']['judge_f1']:.2f}" in row and f"{by['r2']['clinician_f1']:.2f}" in row
    run("report", "--study", s, "-o", tmp_path / "r.html", code=None)
    html = (tmp_path / "r.html").read_text()
    assert "balanced F1 on keep_in_benchmark" in html and "Balanced F1 (the mean of the two classes" in html
    # the panel ratio and rho's interval reach the terminal, JSON and the report too
    (ratio,) = data["panel_ratio"]
    assert ratio["low"] <= ratio["ratio"] <= ratio["high"]
    assert f"{ratio['ratio']:.2f} (95% CI {ratio['low']:.2f} to {ratio['high']:.2f})" in text
    assert "above 1 means the judge is as close to the panel as the clinicians are to each other" in html
    d = data["judges"][0]
    assert d["rho_low"] <= d["advantage_probability"] <= d["rho_high"]
    assert (
        f"{d['rho_low']:.2f} to {d['rho_high']:.2f}" in text and f"rho was {d['advantage_probability']:.2f} (" in html
    )
    # a field with more than two values has no balanced F1 (HealthBench's figure is for binary criteria)
    assert "balanced_f1" not in data or data["field"] == "keep_in_benchmark"


def _answers(stub, pick):
    def answer(item, body):
        return 200, json.dumps({"rationale": "r", "safety_label": pick(item, body)})

    stub.answer = answer


def test_abstention_by_kind_beside_the_clinicians(tmp_path, stub):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    give_texts(s)
    rows = raw_rows()
    ids = [r["case_id"] for r in rows]
    cannot, insufficient, broken = set(ids[:4]), set(ids[4:7]), {ids[7]}

    def pick(item, body):
        if item in broken:
            return "Maybe"  # off the schema: held out, the judge's blank
        return "cannot judge" if item in cannot else "Insufficient Information" if item in insufficient else "Supported"

    _answers(stub, pick)
    run("judge", "run", "--study", s, "--judge", "llm", "--model", "m", "--base-url", stub.url, "--no-progress")
    data = json.loads(run("judge", "--study", s, "--judge", "llm", "--expertise", "expert", "--format", "json").stdout)
    by = {r["rater"]: r for r in data["abstention"]["rows"]}
    j = by["llm"]
    assert (j["n_items"], j["cannot tell"]["count"], j["insufficient information"]["count"], j["blank"]["count"]) == (
        50, 4, 3, 1
    )  # fmt: skip
    assert j["any"]["rate"] == pytest.approx(8 / 50)
    for rater, col in (("onc_a", "oncologist_a_label"), ("onc_b", "oncologist_b_label")):
        want = sum(r[col].startswith("Insufficient") for r in rows)
        assert by[rater]["insufficient information"]["count"] == want and by[rater]["n_items"] == 50
    pooled = by["clinicians (all)"]
    assert pooled["n_items"] == 100
    assert (
        pooled["insufficient information"]["count"]
        == by["onc_a"]["insufficient information"]["count"] + by["onc_b"]["insufficient information"]["count"]
    )
    text = run("judge", "--study", s, "--judge", "llm").stdout
    line = next(x for x in text.splitlines() if x.startswith("llm ") and "%" in x)
    assert line.split()[1:] == ["50", "1", "(2%)", "4", "(8%)", "3", "(6%)", "8", "(16%)"]


def test_self_consistency_and_position_bias_reach_the_report(tmp_path, stub):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    give_texts(s)

    def first_listed(item, body):  # a judge with total position bias: always the first value shown
        prompt = body["messages"][0]["content"]
        return re.search(r'Field "safety_label".*?\n  - "([^"]+)"', prompt, re.S).group(1)

    _answers(stub, first_listed)
    out = run("judge", "run", "--study", s, "--judge", "llm", "--model", "m", "--base-url", stub.url, "--no-progress",
              "--samples", "3", "--limit", "20").output  # fmt: skip
    summary = re.search(r"self-consistency (\S+) over 20 items", out)
    bias = float(re.search(r"position bias: (\S+) of", out).group(1))
    assert summary and bias > 0.5
    run("judge", "--study", s, "--judge", "llm", "--expertise", "expert")
    text = run("judge", "--study", s, "--judge", "llm").stdout
    assert f"position bias {bias:.2f}" in text and "over 3 samples per item" in text
    run("report", "--study", s, "-o", tmp_path / "r.html", code=None)
    html = (tmp_path / "r.html").read_text()
    assert f"position bias {bias:.2f}" in html and f"self-consistency {float(summary.group(1)):.2f}" in html
    assert (
        "Each item was asked several times, the value order shuffled after the first: over 3 samples per item" in html
    )


def test_two_clinicians_verdict_says_what_the_test_can_show(tmp_path):
    """A judge answering "Supported" on every disputed item passes at winning rate 1.00 with two
    clinicians although gold disagrees: the verdict itself (not only a warning) says why."""
    from goldboard.adjudicate.decisions import Proposed, record_decisions
    from goldboard.study import Study

    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    rows = raw_rows()
    labels = tmp_path / "sup.csv"
    with open(labels, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "field", "value"])
        for r in rows:
            a, b = r["oncologist_a_label"], r["oncologist_b_label"]
            w.writerow([r["case_id"], "safety_label", a if a == b else "Supported"])
    # the adjudicator settles each disputed item for a label that is not Supported where one exists
    disputed = [r for r in rows if r["oncologist_a_label"] != r["oncologist_b_label"]]
    f = Study.open(s).schema.field("safety_label")
    decide = [
        Proposed(
            r["case_id"],
            "safety_label",
            f.normalize(
                next(
                    (x for x in (r["oncologist_a_label"], r["oncologist_b_label"]) if f.normalize(x) != "Supported"),
                    "Unsafe",
                )
            ),
            "",
            "adj",
        )  # fmt: skip
        for r in disputed
    ]
    record_decisions(Study.open(s).decisions_path, decide, source="sheet")
    args = ["judge", "--study", s, "--judge", "sup", "--expertise", "expert"]
    data = json.loads(run(*args, "--labels", labels, "--format", "json").stdout)
    d = data["judges"][0]
    gold = next(r for r in data["agreement"] if r["a"] == "sup" and r["b"] == "gold")
    clinicians_gold = [r["kappa"]["value"] for r in data["agreement"] if r["kind"] == "gold"]
    assert d["winning_rate"] == 1.0 and d["passed"] and gold["n_items"] == 50
    assert gold["kappa"]["value"] < min(clinicians_gold)  # further from gold than either clinician (0.61: 0.70, 0.90)
    verdict = data["verdict"]
    assert (
        verdict.startswith("Verdict: sup passes the alt-test")
        and f"kappa against gold is {gold['kappa']['value']:.2f}" in verdict
    )
    assert "With two clinicians" in verdict and "three or more clinicians" in verdict
    assert "a judge that matches them where they agree passes, whatever it answers where they disagree" in verdict
    text = run(*args).stdout  # the terminal's verdict line, not the warning on stderr
    assert next(x for x in text.splitlines() if x.startswith("Verdict:")) == verdict
    run("report", "--study", s, "-o", tmp_path / "r.html", code=None)
    assert "three or more clinicians (Calderon et al. 2025 recommend it)" in (tmp_path / "r.html").read_text()
