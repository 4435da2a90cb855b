"""Gold release folders as their readers find them: a release edited after it was cut, a manifest
copied from another release, swapped release folders, a release compared with itself, a release cut
over a changed one: refused or warned naming the folder, never read on in silence.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import csv
import os

import pytest
from builders import error_naming, fill_sheet
from conftest import error_line
from conftest import invoke_cli as run
from conftest import run_cli as run_ok


def test_gold_diff_of_a_release_with_itself_is_refused(tmp_path):
    table = tmp_path / "t.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "a", "b"])
        for i in range(12):
            w.writerow([f"C{i}", "Supported" if i % 2 else "Unsupported", "Supported" if i % 3 else "Unsupported"])
    s = tmp_path / "st"
    run_ok("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    run_ok(
        "pull",
        "--study",
        s,
        "--from-table",
        table,
        "--item-col",
        "case_id",
        "--field",
        "safety_label",
        "--rater-cols",
        "onc_a=a,onc_b=b",
    )
    run_ok("gold", "export", "--study", s)
    for old, new in (("v1", "v1"), ("1", "v1")):
        res = run_ok("gold", "diff", old, new, "--study", s, code=1)
        assert error_line(res) == (
            f"Error: {old} and {new} are both release v1: a release compared with itself (a typo?); give two "
            "different releases (releases: v1)"
        )


def test_a_release_cut_over_a_changed_release_is_refused(released):
    """G05: the new release would name the changed one as its previous: nothing written (the
    wording is test_study_folder_edits')."""
    v1 = released.path / "gold" / "v1" / "gold.csv"
    os.chmod(v1, 0o644)
    v1.write_text(v1.read_text().replace(",adjudicated,", ",unanimous,", 1))
    res = run("gold", "export", "--study", released.path, "--force")
    assert res.exit_code == 1 and f"{v1}: changed since release v1 was written" in error_line(res), res.output
    assert not (released.path / "gold" / "v2").exists()


@pytest.fixture()
def two_releases(openmtb_pulled, tmp_path):
    review = tmp_path / "review.xlsx"
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)
    fill_sheet(review, 2)
    run_ok("adjudicate", "import", "--study", openmtb_pulled, review, "--adjudicator", "dr_chair")
    run_ok("gold", "export", "--study", openmtb_pulled)
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", tmp_path / "review2.xlsx")
    fill_sheet(tmp_path / "review2.xlsx", 4)
    run_ok("adjudicate", "import", "--study", openmtb_pulled, tmp_path / "review2.xlsx", "--adjudicator", "dr_chair")
    run_ok("gold", "export", "--study", openmtb_pulled)
    for p in (openmtb_pulled / "gold").rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return openmtb_pulled


def test_g05_gold_export_refuses_to_build_on_an_edited_release(two_releases):
    s = two_releases
    gold = s / "gold" / "v2" / "gold.csv"
    gold.write_text(gold.read_text().replace(",adjudicated,", ",unanimous,", 1))
    for force in ([], ["--force"]):
        err = error_naming(
            run_ok("gold", "export", "--study", s, *force, code=1), "v2/gold.csv: changed since release v2"
        )
        assert "the next one would name it as its previous" in err
        assert sorted(p.name for p in (s / "gold").iterdir() if not p.name.startswith(".")) == ["v1", "v2"]


def test_t04_a_copied_manifest_is_named_not_the_gold_file(two_releases):
    s = two_releases
    (s / "gold/v2/manifest.json").write_bytes((s / "gold/v1/manifest.json").read_bytes())
    err = error_naming(
        run_ok("gold", "diff", "v1", "v2", "--study", s, code=1),
        "v2/manifest.json: the manifest of release v1, in folder v2",
    )
    assert "gold.csv" not in err


def test_m06_swapped_release_folders_are_refused(two_releases):
    s = two_releases
    g = s / "gold"
    (g / "v1").rename(g / "vx")
    (g / "v2").rename(g / "v1")
    (g / "vx").rename(g / "v2")
    error_naming(
        run_ok("gold", "diff", "v1", "v2", "--study", s, code=1),
        "v1/manifest.json: the manifest of release v2, in folder v1",
    )
    error_naming(
        run_ok("gold", "export", "--study", s, "--force", code=1),
        "v2/manifest.json: the manifest of release v1, in folder v2",
    )
