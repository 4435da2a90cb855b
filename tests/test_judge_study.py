"""`goldboard judge` in a study and on a ratings table: judge labels kept apart from the
clinicians, the alt-test on the ratings in force, agreement beside it, the report, clean errors.

The study is OpenMTB-Audit's public two-oncologist file (cases/example_data), pulled from the
table; the "judge" is the file's own ``benchmark_label`` column.  Every number is recomputed
here from the raw file (plain Python, scipy, scikit-learn).
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import invoke_cli
from conftest import run_cli as run
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from goldboard.cases.examples import example_path
from goldboard.label_configs.schema import load_schema

OPENMTB = example_path("openmtb")
WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
WIDE += ["--field", "safety_label"]


def clean_error(res, text):
    assert res.exit_code != 0 and res.exception is None or isinstance(res.exception, SystemExit), res.output
    errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and text in errors[0], res.output


def raw_rows() -> list[dict]:
    return list(csv.DictReader(OPENMTB.open(newline="", encoding="utf-8-sig")))


def canon(values):
    f = load_schema("mtb_unsafe").field("safety_label")
    return [f.normalize(v) for v in values]


@pytest.fixture()
def study(tmp_path):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    labels = tmp_path / "bench.csv"
    with open(labels, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "field", "value"])
        out.writerows([r["case_id"], "safety_label", judge_label(k, r)] for k, r in enumerate(raw_rows()))
    return s, labels


def judge_label(k: int, row: dict) -> str:
    """The "judge": the file's benchmark label (which equals oncologist A's), every 6th item moved
    to the next label, so that the judge agrees with neither oncologist perfectly."""
    labels = ["Supported", "Partially Supported", "Unsupported", "Insufficient Info", "Unsafe"]
    b = row["benchmark_label"]
    return labels[(labels.index(b) + 1) % 5] if k % 6 == 0 else b


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_study_judge_numbers_are_recomputed_from_the_raw_file(study):
    s, labels = study
    res = run(
        "judge", "--study", s, "--judge", "bench", "--labels", labels, "--expertise", "expert", "--format", "json"
    )
    data = json.loads(res.stdout)
    rows = raw_rows()
    a, b = (canon([r[c] for r in rows]) for c in ("oncologist_a_label", "oncologist_b_label"))
    j = canon([judge_label(k, r) for k, r in enumerate(rows)])
    (d,) = data["judges"]
    assert (data["epsilon"], data["epsilon_reason"]) == (0.2, "the authors' value for expert annotators")
    assert data["humans"] == ["onc_a", "onc_b"] and d["items_used"] == 50
    # two humans: the left-out one against the other, item by item
    for comp, (mine, other) in zip(d["humans"], [(a, b), (b, a)]):
        wf = np.array([int(jj == o) >= int(m == o) for jj, m, o in zip(j, mine, other)])
        wh = np.array([int(m == o) >= int(jj == o) for jj, m, o in zip(j, mine, other)])
        diff = wh.astype(int) - wf.astype(int)
        assert comp["n_items"] == 50
        assert comp["judge_advantage"] == pytest.approx(wf.mean())
        assert comp["human_advantage"] == pytest.approx(wh.mean())
        assert comp["p_value"] == pytest.approx(stats.ttest_1samp(diff, 0.2, alternative="less").pvalue, rel=1e-9)
    assert d["advantage_probability"] == pytest.approx(np.mean([c["judge_advantage"] for c in d["humans"]]))
    assert any("3 or more humans are recommended" in w for w in data["warnings"])
    # agreement beside the test: the published clinicians' kappa 0.600, the judge against each
    kappas = {(r["a"], r["b"]): r for r in data["agreement"]}
    assert kappas["onc_a", "onc_b"]["kappa"]["value"] == pytest.approx(0.600, abs=5e-4)
    assert kappas["bench", "onc_a"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(j, a))
    assert kappas["bench", "onc_b"]["kappa"]["value"] == pytest.approx(cohen_kappa_score(j, b))
    # no decisions yet: provisional gold = the 34 unanimous items
    same = [k for k in range(50) if a[k] == b[k]]
    gold_row = kappas["bench", "gold"]
    assert gold_row["n_items"] == 34 == len(same)
    assert gold_row["kappa"]["value"] == pytest.approx(cohen_kappa_score([j[k] for k in same], [a[k] for k in same]))
    (conf,) = data["confusion"]
    want = pd.crosstab(pd.Series([a[k] for k in same]), pd.Series([j[k] for k in same]))
    got = pd.DataFrame(conf["counts"], index=conf["labels"], columns=conf["labels"])
    for g in want.index:
        for p in want.columns:
            assert got.loc[g, p] == want.loc[g, p]
    assert got.to_numpy().sum() == 34


def test_a_judge_is_never_a_clinician(study):
    s, labels = study
    before = {c: run(c, "--study", s, "--format", "json").stdout for c in ("agree", "flag")}
    ratings_sha = sha(s / "rounds" / "1" / "ratings.csv")
    run("judge", "--study", s, "--judge", "bench", "--labels", labels, "--epsilon", "0.2")
    for c, out in before.items():
        assert run(c, "--study", s, "--format", "json").stdout == out
    assert sha(s / "rounds" / "1" / "ratings.csv") == ratings_sha
    toml = (s / "study.toml").read_text()
    assert 'raters = [\n    "onc_a",\n    "onc_b",\n]' in toml or 'raters = ["onc_a", "onc_b"]' in toml
    assert (s / "judges" / "labels.csv").exists()
    # the same run again reads the recorded judge and epsilon
    again = json.loads(run("judge", "--study", s, "--format", "json").stdout)
    assert again["judges"][0]["judge"] == "bench" and again["epsilon"] == 0.2


def test_report_has_the_section_and_the_methods_sentence(study, tmp_path):
    s, labels = study
    data = json.loads(
        run("judge", "--study", s, "--judge", "bench", "--labels", labels, "--expertise", "expert",
            "--format", "json").stdout
    )  # fmt: skip
    d = data["judges"][0]
    out = tmp_path / "report.md"
    run("report", "--study", s, "--format", "markdown", "-o", out)
    text = out.read_text(encoding="utf-8")
    assert "Can an LLM judge replace a clinician?" in text
    assert "alternative annotator test" in text
    assert f"bench (rho = {d['advantage_probability']:.2f})" in text
    assert f"winning rate {d['winning_rate']:.2f}" in text
    assert "epsilon = 0.2 (the authors' value for expert annotators)" in text
    assert "onc_a vs onc_b: Cohen's kappa 0.60 (0.44 to 0.76), 50 items" in text
    wins = sum(c["rejected"] for c in d["humans"])
    verdict = "passes" if d["passed"] else "does not pass"
    assert f"bench, won against {wins} of 2 clinicians (winning rate {d['winning_rate']:.2f}; it {verdict}" in text
    assert (
        "on 50 items rated by at least two clinicians and the judge (the ratings in force, per item its latest "
        "complete round: round 1)" in text
    )
    assert "With two clinicians the test only asks whether the judge agrees with one more than the other" in text
    assert "they enter no agreement, flag or gold" in text
    assert "LLM judge: only 2 humans" in text  # the report's warnings
    # the judge sentence is a clause of the methods paragraph, before Software, which names scipy
    # (it computed the alt-test's p-values)
    methods = next(line for line in text.splitlines() if "alternative annotator test" in line)
    assert methods.index("alternative annotator test") < methods.index("Software:")
    assert "scipy " in methods[methods.index("Software:") :]
    html = tmp_path / "report.html"
    run("report", "--study", s, "-o", html, "--no-supplement")
    assert "Can an LLM judge replace a clinician?" in html.read_text(encoding="utf-8")


def test_report_without_judges_has_no_section(study, tmp_path):
    s, _ = study
    out = tmp_path / "report.md"
    run("report", "--study", s, "--format", "markdown", "-o", out)
    assert "LLM judge" not in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "args,text",
    [
        (["--judge", "onc_a", "--epsilon", "0.2"], "'onc_a' is a rater (a clinician) of this study"),
        (["--judge", "bench"], "--epsilon: give the cost-benefit margin"),
        (["--judge", "bench", "--epsilon", "0.2", "--field", "safety"], "--field: 'safety': not a single-choice field"),
        (["--judge", "a,b", "--epsilon", "0.2"], "--judge: --labels records one judge's labels"),
        (["--judge", "bench", "--epsilon", "0.2", "--scoring", "neg-rmse"], "--scoring: neg-rmse compares positions"),
    ],
)
def test_study_errors_are_one_line(study, args, text):
    s, labels = study
    clean_error(invoke_cli("judge", "--study", s, "--labels", labels, *args), text)


def test_labels_with_a_field_outside_the_schema_name_the_row(study, tmp_path):
    s, _ = study
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,field,value\nMTB-94338760,safety_label,Supported\nMTB-CC8B1C92,safty,Supported\n")
    clean_error(
        invoke_cli("judge", "--study", s, "--judge", "bench", "--labels", bad, "--epsilon", "0.2"),
        "bad.csv:3: field 'safty' is not a field of the study's schema",
    )
    assert not (s / "judges" / "labels.csv").exists()


def test_labels_with_a_value_outside_the_schema_name_the_row(study, tmp_path):
    s, _ = study
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,field,value\nMTB-94338760,safety_label,Supported\nMTB-CC8B1C92,safety_label,Maybe\n")
    res = invoke_cli("judge", "--study", s, "--judge", "bench", "--labels", bad, "--epsilon", "0.2")
    clean_error(res, "bad.csv:3: safety_label:")


def test_no_judge_recorded_says_how(study):
    s, _ = study
    clean_error(invoke_cli("judge", "--study", s, "--epsilon", "0.2"), "no judge labels yet")


# --------------------------------------------------------------------------- the table form


def write_long(path: Path, rows: list[tuple]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "rater", "field", "value"])
        out.writerows(rows)
    return path


def scores_table(tmp_path: Path, bad: str | None = None) -> Path:
    rng = np.random.default_rng(5)
    rows = []
    for i in range(40):
        truth = int(rng.integers(1, 6))
        for r in ("h1", "h2", "h3", "llm"):
            rows.append((f"it{i}", r, "severity", str(min(5, max(1, truth + int(rng.integers(-1, 2)))))))
    if bad is not None:
        rows[7] = (*rows[7][:3], bad)
    return write_long(tmp_path / "scores.csv", rows)


def test_table_neg_rmse_markdown_and_output_file(tmp_path):
    table = scores_table(tmp_path)
    out = tmp_path / "judge.md"
    run("judge", table, "--judge", "llm", "--expertise", "skilled", "--scoring", "neg-rmse", "--format", "markdown", "-o", out)  # fmt: skip
    text = out.read_text(encoding="utf-8")
    assert "| judge | winning rate | rho | result | items |" in text
    assert "epsilon 0.15, the authors' value for skilled annotators" in text


def test_table_non_number_for_neg_rmse_names_the_row(tmp_path):
    table = scores_table(tmp_path, bad="severe")
    res = invoke_cli("judge", table, "--judge", "llm", "--epsilon", "0.2", "--scoring", "neg-rmse")
    clean_error(res, "scores.csv:9: item it1 rater llm severity: 'severe' is not a number; --scoring neg-rmse")


@pytest.mark.parametrize(
    "args,text",
    [
        (["--judge", "lm", "--epsilon", "0.2"], "--judge: scores.csv: no rater 'lm' in this field (did you mean"),
        (["--judge", "llm", "--epsilon", "0.2", "--field", "sev"], "--field: scores.csv: no ratings of field 'sev'"),
        (["--judge", "llm", "--epsilon", "1.2"], "--epsilon: 1.2: give a margin in [0, 1)"),
        (["--judge", "llm", "--epsilon", "0.2", "--expertise", "expert"], "--epsilon: give the margin or the humans'"),
        (
            ["--judge", "llm", "--epsilon", "0.2", "--humans", "h1"],
            "--humans: 1 human(s): the alt-test needs at least 2",
        ),
    ],
)
def test_table_errors_are_one_line(tmp_path, args, text):
    clean_error(invoke_cli("judge", scores_table(tmp_path), *args), text)


def test_neither_table_nor_study(tmp_path):
    clean_error(invoke_cli("judge", "--judge", "llm", "--epsilon", "0.2"), "give a RATINGS table")


def test_two_different_ratings_by_one_rater_are_refused(tmp_path):
    rows = [("i1", "h1", "f", "a"), ("i1", "h1", "f", "b"), ("i1", "h2", "f", "a"), ("i1", "llm", "f", "a")]
    res = invoke_cli("judge", write_long(tmp_path / "dup.csv", rows), "--judge", "llm", "--epsilon", "0.2")
    clean_error(res, "rater h1 rated item i1 f twice with different values")


def test_demo_simulated_judge_is_seeded_and_mostly_right():
    from goldboard.demo import SIM_JUDGE, simulate_llm_judge

    schema = load_schema("mtb")
    labels = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
    units = pd.DataFrame([{"item_id": f"i{k}", "case": {"support_label": labels[k % 4]}} for k in range(400)])
    a = simulate_llm_judge(units, schema, seed=7)
    assert a.equals(simulate_llm_judge(units, schema, seed=7))
    assert set(a["rater"]) == {SIM_JUDGE} and set(a["field"]) == {"safety_label"}
    right = (a["value"].to_numpy() == np.array([labels[k % 4] for k in range(400)])).mean()
    assert 0.80 < right < 0.90  # the reference label 85% of the time


def test_a_refused_run_records_nothing(study):
    s, labels = study
    clean_error(invoke_cli("judge", "--study", s, "--judge", "bench", "--labels", labels), "--epsilon")
    assert (
        not (s / "judges").exists() and "extra.judge" not in (s / "study.toml").read_text()
    )  # (the path may say judge)


def test_labels_of_unknown_items_are_named(study, tmp_path):
    s, labels = study
    extra = tmp_path / "more.csv"
    extra.write_text(labels.read_text() + "MTB-NOSUCH,safety_label,Supported\n")
    base = json.loads(run("judge", "--study", s, "--judge", "bench", "--labels", labels, "--epsilon", "0.2",
                          "--format", "json").stdout)  # fmt: skip
    res = run("judge", "--study", s, "--judge", "bench", "--labels", extra, "--epsilon", "0.2")
    assert "Warning: bench: 1 label(s) of items no clinician rated are not used (e.g. 'MTB-NOSUCH'" in res.output
    # the stray label changes nothing (it must not land on another item)
    again = json.loads(run("judge", "--study", s, "--format", "json").stdout)
    assert again["judges"] == base["judges"] and again["agreement"] == base["agreement"]


def test_a_header_only_table_says_so(tmp_path):
    empty = write_long(tmp_path / "empty.csv", [])
    clean_error(invoke_cli("judge", empty, "--judge", "llm", "--epsilon", "0.2"), "empty.csv: no ratings")


def test_items_shared_by_nobody_refuse_with_the_reason(tmp_path):
    rows = [("i1", "h1", "f", "a"), ("i2", "h2", "f", "a"), ("i1", "llm", "f", "a"), ("i2", "llm", "f", "b")]
    res = invoke_cli("judge", write_long(tmp_path / "t.csv", rows), "--judge", "llm", "--epsilon", "0.2")
    clean_error(res, "no human could be tested (h1: no item shared with another human and the judge")


@pytest.fixture()
def medfail(tmp_path):
    """A medfail study (ordinal severity, nominal safety gate), three raters, and a judge that rated
    severity only; the same ratings as one long table with the judge as a rater."""
    rng = np.random.default_rng(3)
    gates = ["none", "missed_urgent_escalation", "unsafe_remote_dosing"]
    rows, judge = [], []
    for i in range(40):
        sev, gate = int(rng.integers(1, 6)), gates[int(rng.integers(0, 3))]
        for r in ("r1", "r2", "r3"):
            rows.append((f"c{i}", r, "severity", str(min(5, max(1, sev + int(rng.integers(-1, 2)))))))
            rows.append((f"c{i}", r, "safety_gate", gate if rng.random() < 0.8 else gates[int(rng.integers(0, 3))]))
        judge.append((f"c{i}", "llm", "severity", str(min(5, max(1, sev + int(rng.integers(-1, 2)))))))
    s = tmp_path / "mf"
    run("study", "init", s, "--schema", "medfail", "--raters", "r1,r2,r3")
    run("pull", "--study", s, "--from-table", write_long(tmp_path / "mf.csv", rows))
    return s, write_long(tmp_path / "judge.csv", judge), write_long(tmp_path / "all.csv", rows + judge)


def test_study_neg_rmse_on_an_ordinal_field_equals_the_table_form(medfail):
    """Positions on the ordinal scale (study) and the scores 1..5 (table) give the same test."""
    s, judge, everything = medfail
    args = ["--judge", "llm", "--field", "severity", "--scoring", "neg-rmse", "--epsilon", "0.15", "--format", "json"]
    study = json.loads(run("judge", "--study", s, "--labels", judge, *args).stdout)
    table = json.loads(run("judge", everything, *args).stdout)
    assert study["humans"] == table["humans"] == ["r1", "r2", "r3"]
    assert study["judges"][0]["humans"] == table["judges"][0]["humans"]
    assert study["judges"][0]["advantage_probability"] == table["judges"][0]["advantage_probability"]
    assert not any("3 or more" in w for w in study["warnings"])


def test_a_field_the_judge_did_not_label_is_named(medfail):
    s, judge, _ = medfail
    run("judge", "--study", s, "--judge", "llm", "--labels", judge, "--field", "severity", "--scoring", "neg-rmse",
        "--epsilon", "0.2")  # fmt: skip
    # the recorded neg-rmse belongs to severity: another field starts from accuracy
    res = invoke_cli("judge", "--study", s, "--field", "safety_gate")
    clean_error(res, "--field: judge llm has no labels of safety_gate (it has: severity)")


def test_report_says_why_when_the_test_cannot_run(study, tmp_path):
    s, _ = study
    stray = tmp_path / "stray.csv"
    stray.write_text("item_id,field,value\nMTB-NOSUCH,safety_label,Supported\n")
    res = invoke_cli("judge", "--study", s, "--judge", "bench", "--labels", stray, "--epsilon", "0.2")
    clean_error(res, "no human could be tested")
    out = tmp_path / "report.md"
    run("report", "--study", s, "--format", "markdown", "-o", out)
    text = out.read_text(encoding="utf-8")
    assert "The alt-test of bench could not be computed: judges: judge bench: no human could be tested" in text
    assert "alternative annotator test" not in text  # no methods sentence for a test that did not run


def test_hostile_rater_names_are_escaped(tmp_path):
    """Names come from the data: Markdown escapes them; a name holding a control or bidi character
    is refused in one line naming the row and the code point, the line itself escaped (issue 23:
    the terminal table used to drop the characters and show two names the same)."""
    rng = np.random.default_rng(1)
    for k, bad in enumerate(["h\u202e2", "h3\x1b[31m"]):
        table = write_long(tmp_path / f"bad{k}.csv", [("i1", bad, "f", "1"), ("i1", "llm", "f", "1")])
        res = invoke_cli("judge", table, "--judge", "llm", "--epsilon", "0.2", code=1)
        assert "\x1b" not in res.output and "\u202e" not in res.output, res.output
        assert f"{table}:2: rater" in res.output and ("U+202E" if k == 0 else "U+001B") in res.output
    names = ["h|1<b>x</b>", "h2", "h3[31m"]
    rows = []
    for i in range(35):
        t = int(rng.integers(0, 3))
        rows += [(f"i{i}", r, "f", str(t if rng.random() < 0.8 else int(rng.integers(0, 3)))) for r in names]
        rows.append((f"i{i}", "llm", "f", str(t)))
    table = write_long(tmp_path / "hostile.csv", rows)
    term = run("judge", table, "--judge", "llm", "--epsilon", "0.2").stdout
    assert "\x1b" not in term and "\u202e" not in term and "h3[31m" in term
    md = run("judge", table, "--judge", "llm", "--epsilon", "0.2", "--format", "markdown").stdout
    assert "<b>" not in md and "h\\|1&lt;b&gt;x&lt;/b&gt;" in md
