"""The sample-size sentence says which planning inputs came from the pilot (claims.md; issue 23, R16).

`plan size --study ST --from-study --kappa 0.7 --lower 0.5 --prevalence 0.5,0.5` computed n from the
typed kappa and prevalences, yet recorded `pilot_round = 1` and the report's methods printed
"Planning inputs came from pilot round 1 (50 items, observed kappa 0.67)".  Now every combination
of --from-study with typed inputs is either refused (the pilot feeds nothing) or printed with the
inputs that were the pilot's and the ones that were given; each test builds the study, runs plan
size, runs the report and reads the sentence.  The tests of the mixed and refused combinations
failed on the code before the fix (checked).
"""

from __future__ import annotations

import csv
import random
import shutil
from pathlib import Path

import pytest
from conftest import error_line
from conftest import run_cli as run

from goldboard.analysis import planning as pl
from goldboard.study import Study
from goldboard.workflows.planning import pilot_inputs

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]


@pytest.fixture(scope="module")
def pilot_study(tmp_path_factory) -> Path:
    """A study whose pulled round 1 (50 items, two raters) is the pilot (the campaign's R16 table)."""
    tmp = tmp_path_factory.mktemp("pilot")
    random.seed(2)
    with (tmp / "t.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "a", "b"])
        for i in range(50):
            a = random.choice(LABELS)
            w.writerow([f"C{i:02d}", a, a if i % 3 else random.choice(LABELS)])
    s = tmp / "st"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    run(
        "pull",
        "--study",
        s,
        "--from-table",
        tmp / "t.csv",
        "--item-col",
        "case_id",
        "--field",
        "safety_label",
        "--rater-cols",
        "onc_a=a,onc_b=b",
    )
    return s


def _fresh(pilot_study: Path, tmp_path: Path) -> Path:
    """A copy of the pilot study per test (each test records its own plan)."""
    s = tmp_path / "st"
    shutil.copytree(pilot_study, s)
    return s


def _report(s: Path) -> str:
    out = s.parent / "report.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement")
    return out.read_text().replace("\\", "")


def _methods_plan_sentence(s: Path) -> str:
    """The report's methods text from its sample-size clause on."""
    text = _report(s)
    assert "Sample size: " in text, text
    return text.split("Sample size: ", 1)[1]


def _plan(s: Path, *args) -> dict:
    run("plan", "size", "--study", s, *args)
    return Study.open(s).extra["plan"]


def test_pilot_kappa_and_prevalences_say_so(pilot_study, tmp_path):
    s = _fresh(pilot_study, tmp_path)
    p = pilot_inputs(Study.open(s), field="safety_label")
    rec = _plan(s, "--from-study", "--lower", 0.5)
    assert rec["n"] == pl.ci_sample_size(p.kappa, 0.5, p.prevalences).n
    assert rec["pilot_round"] == 1 and rec["pilot_inputs"] == "kappa, prevalences"
    sentence = _methods_plan_sentence(s)
    assert sentence.startswith(f"Planning inputs came from pilot round 1 (50 items, observed kappa {p.kappa:.2f}).")


def test_a_typed_kappa_is_named_as_given_and_the_prevalences_as_the_pilots(pilot_study, tmp_path):
    s = _fresh(pilot_study, tmp_path)
    p = pilot_inputs(Study.open(s), field="safety_label")
    rec = _plan(s, "--from-study", "--kappa", 0.7, "--lower", 0.5)
    assert rec["n"] == pl.ci_sample_size(0.7, 0.5, p.prevalences).n
    assert rec["kappa"] == 0.7 and rec["pilot_inputs"] == "prevalences"
    sentence = _methods_plan_sentence(s)
    assert "Planning inputs came from" not in sentence
    assert sentence.startswith(
        "The expected category prevalences came from pilot round 1 (50 items); the expected kappa of 0.7 was set "
        f"for the plan, not taken from the pilot (observed kappa {p.kappa:.2f}). A sample of {rec['n']} "
    )
    prev = ", ".join(f"{x:.3g}" for x in p.prevalences)
    assert f"if kappa is 0.7 (expected category prevalences {prev};" in sentence


def test_typed_prevalences_are_named_as_given_and_the_kappa_as_the_pilots(pilot_study, tmp_path):
    s = _fresh(pilot_study, tmp_path)
    p = pilot_inputs(Study.open(s), field="safety_label")
    rec = _plan(s, "--from-study", "--prevalence", "0.5,0.5", "--lower", 0.5)
    assert rec["n"] == pl.ci_sample_size(p.kappa, 0.5, [0.5, 0.5]).n
    assert rec["pilot_inputs"] == "kappa"
    sentence = _methods_plan_sentence(s)
    observed = ", ".join(f"{c} {x:.2f}" for c, x in zip(p.categories, p.prevalences))
    assert sentence.startswith(
        f"The expected kappa came from pilot round 1 (50 items, observed kappa {p.kappa:.2f}); the category "
        f"prevalences were set for the plan, not taken from the pilot (observed {observed}). A sample of {rec['n']} "
    )
    assert "(expected category prevalences 0.5, 0.5;" in sentence


def test_from_study_with_every_input_typed_is_refused_and_nothing_recorded(pilot_study, tmp_path):
    s = _fresh(pilot_study, tmp_path)
    before = (s / "study.toml").read_bytes()
    res = run(
        "plan", "size", "--study", s, "--from-study", "--kappa", 0.7, "--prevalence", "0.5,0.5", "--lower", 0.5, code=1
    )
    assert error_line(res) == (
        "Error: --from-study: --kappa and --prevalence are both given, so no planning input comes from pilot "
        "round 1; leave out --from-study, or one of them to take the pilot's"
    )
    assert (s / "study.toml").read_bytes() == before
    assert "Sample size: no plan recorded" in _report(s)


@pytest.mark.parametrize("flag,value", [("--least-frequent", 0.2), ("--prevalence", "0.2,0.8")])
def test_alpha_min_from_study_with_a_typed_probability_is_refused(pilot_study, tmp_path, flag, value):
    s = _fresh(pilot_study, tmp_path)
    before = (s / "study.toml").read_bytes()
    res = run("plan", "size", "--study", s, "--from-study", "--alpha-min", 0.8, flag, value, code=1)
    assert error_line(res) == (
        f"Error: {flag}: with --alpha-min --from-study takes the least frequent category's probability from pilot "
        f"round 1; give {flag} or --from-study, not both"
    )
    assert (s / "study.toml").read_bytes() == before


def test_alpha_min_from_the_pilot_names_its_least_frequent_category(pilot_study, tmp_path):
    s = _fresh(pilot_study, tmp_path)
    p = pilot_inputs(Study.open(s), field="safety_label", need_kappa=False)
    least, label = min(zip(p.prevalences, p.categories))
    rec = _plan(s, "--from-study", "--alpha-min", 0.8)
    assert rec["n"] == pl.krippendorff_sample_size(0.8, least).n and rec["pilot_inputs"] == "least_frequent"
    assert _methods_plan_sentence(s).startswith(
        f"Planning inputs came from pilot round 1 (50 items; least frequent category {label!r}, {least:.2f} of the "
        "ratings). "
    )


def test_typed_inputs_without_from_study_name_no_pilot(pilot_study, tmp_path):
    s = _fresh(pilot_study, tmp_path)
    rec = _plan(s, "--kappa", 0.7, "--prevalence", "0.5,0.5", "--lower", 0.5)
    assert "pilot_round" not in rec and "pilot_inputs" not in rec and rec["n"] == 51
    assert _methods_plan_sentence(s).startswith("A sample of 51 double-rated items gives an expected lower limit")
