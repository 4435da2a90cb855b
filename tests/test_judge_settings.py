"""A judge run refused for its settings (an epsilon out of range, labels without the tested field,
an empty field) records nothing in study.toml; an epsilon already recorded out of range names
study.toml.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import pytest
from builders import error_naming, judge_labels, study_bytes, study_files
from conftest import error_line
from conftest import invoke_cli as run
from conftest import run_cli as run_ok


def test_judge_with_labels_and_an_empty_field_records_nothing(released, tmp_path):
    labels = tmp_path / "gpt.csv"
    labels.write_text("item_id,field,value\nC-1,safety_label,Supported\nC-2,safety_label,Unsupported\n")
    before = study_files(released.path)
    res = run(
        "judge", "--study", released.path, "--judge", "gpt", "--labels", labels, "--expertise", "expert",
        "--field", "",
    )  # fmt: skip
    assert res.exit_code == 1 and error_line(res).startswith("Error: --field '': an empty value"), res.output
    assert study_files(released.path) == before


@pytest.mark.parametrize(
    "opts,needle",
    [
        (["--epsilon", "-1"], "--epsilon: -1.0: give a margin in [0, 1)"),
        (["--epsilon", "1.5"], "--epsilon: 1.5: give a margin"),
        (["--epsilon", "nan"], "--epsilon: nan: give a margin"),
    ],
)
def test_judge_refused_for_its_settings_records_nothing(released, tmp_path, opts, needle):
    labels = tmp_path / "gpt.csv"
    labels.write_text("item_id,field,value\n" + "".join(f"C-{n},safety_label,Supported\n" for n in range(1, 10)))
    before = study_files(released.path)
    res = run("judge", "--study", released.path, "--judge", "gpt", "--labels", labels, *opts)
    assert res.exit_code == 1 and needle in error_line(res), res.output
    assert study_files(released.path) == before


@pytest.mark.parametrize("eps", ["-1", "1.5", "nan"])
def test_j05_k11_judge_with_a_bad_epsilon_records_nothing(openmtb_pulled, tmp_path, eps):
    labels = judge_labels(tmp_path)
    before = study_bytes(openmtb_pulled)
    res = run_ok("judge", "--study", openmtb_pulled, "--judge", "bench", "--labels", labels, "--epsilon", eps, code=1)
    error_naming(res, "--epsilon: ")
    assert study_bytes(openmtb_pulled) == before  # no judges/labels.csv, no epsilon in study.toml
    run_ok("judge", "--study", openmtb_pulled, "--judge", "bench", "--labels", labels, "--epsilon", "0.2")
    assert (openmtb_pulled / "judges" / "labels.csv").exists()


def test_j05_judge_labels_without_the_tested_field_record_nothing(openmtb_pulled, tmp_path):
    labels = tmp_path / "other.csv"
    labels.write_text("item_id,field,value\nMTB-94338760,missing_info,stage\n")
    before = study_bytes(openmtb_pulled)
    res = run_ok("judge", "--study", openmtb_pulled, "--judge", "bench", "--labels", labels, "--epsilon", "0.2", code=1)
    error_naming(res, "judge bench has no labels of safety_label")
    assert study_bytes(openmtb_pulled) == before


def test_j05_a_recorded_epsilon_out_of_range_names_study_toml(openmtb_pulled, tmp_path):
    run_ok(
        "judge", "--study", openmtb_pulled, "--judge", "bench", "--labels", judge_labels(tmp_path), "--epsilon", "0.2"
    )
    toml = openmtb_pulled / "study.toml"
    toml.write_text(toml.read_text().replace("epsilon = 0.2", "epsilon = -1.0"))
    error_naming(
        run_ok("judge", "--study", openmtb_pulled, code=1), "study.toml: [extra.judge] epsilon = -1.0 is not a margin"
    )
