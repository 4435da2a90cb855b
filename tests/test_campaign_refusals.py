"""Issue 23 (campaign 5, j23): a refused command changes nothing, and the Label Studio export
intake checks what the other sources check.  Each test failed on the code before its fix
(checked by running it on the parent commit)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import invoke_cli

from goldboard.cases.examples import example_path

OPENMTB = example_path("openmtb")
WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
WIDE += ["--field", "safety_label"]


def run(*args, code=0):
    res = invoke_cli(*[str(a) for a in args])
    assert "Traceback" not in res.output, res.output
    assert res.exit_code == code, res.output
    return res


def one_error(res, text: str) -> str:
    errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and text in errors[0], res.output
    return errors[0]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of a study (lock files aside) by its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.suffix != ".lock"
    }


@pytest.fixture()
def pulled(tmp_path):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    return s


def judge_labels(tmp_path: Path) -> Path:
    rows = list(csv.DictReader(OPENMTB.open(newline="", encoding="utf-8-sig")))
    p = tmp_path / "bench.csv"
    with open(p, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "field", "value"])
        out.writerows([r["case_id"], "safety_label", r["benchmark_label"]] for r in rows)
    return p


# --------------------------------------------------------------------------- J05/K11 judge


@pytest.mark.parametrize("eps", ["-1", "1.5", "nan"])
def test_j05_k11_judge_with_a_bad_epsilon_records_nothing(pulled, tmp_path, eps):
    labels = judge_labels(tmp_path)
    before = snapshot(pulled)
    res = run("judge", "--study", pulled, "--judge", "bench", "--labels", labels, "--epsilon", eps, code=1)
    one_error(res, "--epsilon: ")
    assert snapshot(pulled) == before  # no judges/labels.csv, no epsilon in study.toml
    run("judge", "--study", pulled, "--judge", "bench", "--labels", labels, "--epsilon", "0.2")
    assert (pulled / "judges" / "labels.csv").exists()


def test_j05_judge_labels_without_the_tested_field_record_nothing(pulled, tmp_path):
    labels = tmp_path / "other.csv"
    labels.write_text("item_id,field,value\nMTB-94338760,missing_info,stage\n")
    before = snapshot(pulled)
    res = run("judge", "--study", pulled, "--judge", "bench", "--labels", labels, "--epsilon", "0.2", code=1)
    one_error(res, "judge bench has no labels of safety_label")
    assert snapshot(pulled) == before


def test_j05_a_recorded_epsilon_out_of_range_names_study_toml(pulled, tmp_path):
    run("judge", "--study", pulled, "--judge", "bench", "--labels", judge_labels(tmp_path), "--epsilon", "0.2")
    toml = pulled / "study.toml"
    toml.write_text(toml.read_text().replace("epsilon = 0.2", "epsilon = -1.0"))
    one_error(run("judge", "--study", pulled, code=1), "study.toml: [extra.judge] epsilon = -1.0 is not a margin")


def test_plan_size_field_without_from_study_is_refused_not_recorded(pulled):
    before = snapshot(pulled)
    args = ["plan", "size", "--study", pulled, "--kappa", "0.6", "--prevalence", "0.3", "--lower", "0.4"]
    one_error(run(*args, "--field", "nosuch", code=1), "--field nosuch: names the pilot of --from-study")
    one_error(run(*args, "--round", "3", code=1), "--round 3: names the pilot of --from-study")
    assert snapshot(pulled) == before


# --------------------------------------------------------------------------- E13/E14 pull --from-export


def ls_annotation(uid: int, label: str, aid: int, at: str = "2026-01-01T10:00:00Z") -> dict:
    return {
        "id": aid, "completed_by": uid, "was_cancelled": False, "created_at": at, "updated_at": at, "lead_time": 10.0,
        "result": [
            {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": [label]}},
            {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["because"]}},
        ],
    }  # fmt: skip


def ls_tasks(ids=("C-1", "C-2", "C-3")) -> list[dict]:
    labels = [("Supported", "Supported"), ("Unsupported", "Supported"), ("Unsafe", "Unsafe")]
    return [
        {
            "id": 100 + k,
            "data": {"case_id": c, "case_text": "x", "output_text": "y"},
            "annotations": [ls_annotation(1, a, 1000 + 2 * k), ls_annotation(2, b, 1001 + 2 * k)],
        }
        for k, (c, (a, b)) in enumerate(zip(ids, labels), start=1)
    ]


def export_file(tmp_path: Path, tasks: list, name: str = "export.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(tasks))
    return p


@pytest.fixture()
def new_study(tmp_path):
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    return s


def pull_export(s: Path, *files, code=0, more=("--rater", "1=onc_a,2=onc_b")):
    args = [a for f in files for a in ("--from-export", f)]
    return run("pull", "--study", s, *args, "--item-key", "case_id", *more, code=code)


def test_e13_the_same_export_twice_leaves_no_round(new_study, tmp_path):
    good = export_file(tmp_path, ls_tasks())
    before = snapshot(new_study)
    one_error(pull_export(new_study, good, good, code=1), "one export given twice?")
    assert snapshot(new_study) == before  # no phantom [[rounds]], no item_key
    pull_export(new_study, good)
    assert "[[rounds]]" in (new_study / "study.toml").read_text()


def test_e14_the_same_export_for_two_raters_leaves_no_round(pulled, tmp_path):
    good = export_file(tmp_path, ls_tasks())
    before = snapshot(pulled)
    res = run("pull", "--study", pulled, "--round", "2", "--from-export", f"onc_a={good}",
              "--from-export", f"onc_b={good}", "--item-key", "case_id", code=1)  # fmt: skip
    one_error(res, "one export given twice?")
    assert snapshot(pulled) == before


# --------------------------------------------------------------------------- Y01 adjudicate sheet over a filled sheet


def fill_sheet(path: Path, n: int | None = None) -> int:
    """Type a Decision (rater A's value), Reason and Adjudicator into the first ``n`` rows."""
    from openpyxl import load_workbook

    wb = load_workbook(path)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    dec, rea, adj = head.index("Decision") + 1, head.index("Reason") + 1, head.index("Adjudicator") + 1
    val = head.index("onc_a value") + 1
    last = ws.max_row if n is None else min(ws.max_row, n + 1)
    for r in range(2, last + 1):
        ws.cell(r, dec).value = ws.cell(r, val).value
        ws.cell(r, rea).value = f"reason {r}"
        ws.cell(r, adj).value = "dr_chair"
    wb.save(path)
    return last - 1


def test_y01_sheet_refuses_to_overwrite_typed_decisions(pulled, tmp_path):
    review = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", pulled, "-o", review)
    run("adjudicate", "sheet", "--study", pulled, "-o", review)  # nothing typed: replaced as before
    typed = fill_sheet(review, 3)
    filled = review.read_bytes()
    res = run("adjudicate", "sheet", "--study", pulled, "-o", review, code=1)
    one_error(res, f"holds {typed} decision(s) not in the decisions log (e.g. Disagreements!F2")
    assert "import it first" in res.output and "--force" in res.output
    assert review.read_bytes() == filled  # the typed decisions are still there
    run("adjudicate", "sheet", "--study", pulled, "-o", tmp_path / "other.xlsx")  # another -o is free
    run("adjudicate", "import", "--study", pulled, review, "--adjudicator", "dr_chair")
    run("adjudicate", "sheet", "--study", pulled, "-o", review)  # imported: the log has them, replaced
    assert review.read_bytes() != filled


def test_y01_force_replaces_a_filled_sheet_and_other_files_are_replaced(pulled, tmp_path):
    review = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", pulled, "-o", review)
    fill_sheet(review)
    filled = review.read_bytes()
    run("adjudicate", "sheet", "--study", pulled, "-o", review, "--force")
    assert review.read_bytes() != filled
    other = tmp_path / "notes.xlsx"
    other.write_bytes(b"not a workbook")
    run("adjudicate", "sheet", "--study", pulled, "-o", other)
    assert other.read_bytes()[:2] == b"PK"


# --------------------------------------------------------------------------- W14 add-rater: the adjudicator or a judge


@pytest.mark.parametrize("name", ["dr_chair", "Dr_Chair"])
def test_w14_add_rater_refuses_the_adjudicator(pulled, tmp_path, name):
    review = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", pulled, "-o", review)
    fill_sheet(review, 2)
    run("adjudicate", "import", "--study", pulled, review, "--adjudicator", "dr_chair")
    before = snapshot(pulled)
    res = run("study", "add-rater", pulled, name, "--no-account", code=1)
    one_error(res, f"{name!r}: already the adjudicator 'dr_chair' of decisions in ")
    assert snapshot(pulled) == before
    run("gold", "export", "--study", pulled)  # the log is still trusted: no "edited by hand?"


def test_w14_add_rater_refuses_a_judge(pulled, tmp_path):
    run("judge", "--study", pulled, "--judge", "bench", "--labels", judge_labels(tmp_path), "--epsilon", "0.2")
    before = snapshot(pulled)
    one_error(run("study", "add-rater", pulled, "bench", "--no-account", code=1), "already the judge 'bench'")
    assert snapshot(pulled) == before


# --------------------------------------------------------------------------- E00-E11 the export's own checks


def refused_export(s: Path, tasks, text: str) -> str:
    f = export_file(s.parent, tasks, "bad.json")
    before = snapshot(s)
    err = one_error(pull_export(s, f, code=1), text)
    assert snapshot(s) == before  # nothing written: no round, no ratings, no item_key
    return err


@pytest.mark.parametrize(
    "a,b,kind",
    [(7, "007", "how a number is written"), ("C-1", "c-1", "letter case"), ("1E5", "100000", "how a number")],
)
def test_e04_item_id_twins_in_an_export_are_refused(new_study, a, b, kind):
    tasks = ls_tasks()
    tasks[0]["data"]["case_id"], tasks[1]["data"]["case_id"] = a, b
    err = refused_export(new_study, tasks, "item ids ")
    assert "task 101 (case_id)" in err and "task 102 (case_id)" in err and kind in err


def test_e05_an_invisible_character_in_an_item_id_is_refused(new_study):
    tasks = ls_tasks()
    tasks[1]["data"]["case_id"] = "C-1\u200b"
    err = refused_export(new_study, tasks, "contains invisible or control character")
    assert "item id 'C-1\\u200b'" in err and "U+200B ZERO WIDTH SPACE" in err and "task 102 (case_id)" in err


def test_e05_an_id_with_an_invisible_character_but_no_look_alike_is_refused_too(new_study):
    """Campaign 6 U03: one rule for every intake -- a lone id holding a zero-width space is not
    the id it looks like either (it was stored raw)."""
    tasks = ls_tasks()
    tasks[1]["data"]["case_id"] = "C-2\u200b"
    err = refused_export(new_study, tasks, "item id 'C-2\\u200b' contains invisible or control character U+200B")
    assert "task 102 (case_id)" in err


@pytest.mark.parametrize("when", ["yesterday", "now", "", 1767261600])
def test_e10_an_annotation_time_that_is_no_time_is_refused(new_study, when):
    tasks = ls_tasks()
    tasks[0]["annotations"][1]["updated_at"] = when
    refused_export(new_study, tasks, f"task 101, annotation 1003: updated_at {json.dumps(when)} is not a time")


def test_e11_an_empty_export_is_refused(new_study):
    refused_export(new_study, [], "no annotations in this Label Studio export (0 tasks); nothing pulled")
    no_annotations = [{**t, "annotations": []} for t in ls_tasks()]
    refused_export(new_study, no_annotations, "no annotations in this Label Studio export (3 tasks)")


def test_e00_an_export_with_no_valid_annotation_is_refused(new_study):
    tasks = ls_tasks()
    for t in tasks:
        for a in t["annotations"]:
            a["result"] = a["result"][:1]  # the required rationale is missing everywhere
    refused_export(new_study, tasks, "no valid annotation in this Label Studio export (6 annotations, 6 invalid; 6 x")


def test_e09_a_task_without_the_item_key_is_held_out_naming_the_key(new_study, tmp_path):
    tasks = ls_tasks()
    del tasks[0]["data"]["case_id"]
    res = pull_export(new_study, export_file(tmp_path, tasks))
    assert "    2 x task has no case_id in its data\n" in res.output
    assert "map one with" not in res.output  # the reason is one line, not split at its ';'
    invalid = (new_study / "rounds/1/invalid.csv").read_text()
    assert "task has no case_id in its data (the --item-key given) and no item_id" in invalid


def test_e_a_good_export_and_a_partly_held_out_one_still_pull(new_study, tmp_path):
    tasks = ls_tasks()
    tasks[0]["annotations"][0]["result"] = tasks[0]["annotations"][0]["result"][:1]
    res = pull_export(new_study, export_file(tmp_path, tasks))
    assert "5 valid annotations" in res.output and "1 x rationale: required but missing" in res.output


# --------------------------------------------------------------------------- G05/M06/T04 releases, M09 ratings


@pytest.fixture()
def two_releases(pulled, tmp_path):
    review = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", pulled, "-o", review)
    fill_sheet(review, 2)
    run("adjudicate", "import", "--study", pulled, review, "--adjudicator", "dr_chair")
    run("gold", "export", "--study", pulled)
    run("adjudicate", "sheet", "--study", pulled, "-o", tmp_path / "review2.xlsx")
    fill_sheet(tmp_path / "review2.xlsx", 4)
    run("adjudicate", "import", "--study", pulled, tmp_path / "review2.xlsx", "--adjudicator", "dr_chair")
    run("gold", "export", "--study", pulled)
    for p in (pulled / "gold").rglob("*"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return pulled


def test_g05_gold_export_refuses_to_build_on_an_edited_release(two_releases):
    s = two_releases
    gold = s / "gold" / "v2" / "gold.csv"
    gold.write_text(gold.read_text().replace(",adjudicated,", ",unanimous,", 1))
    for force in ([], ["--force"]):
        err = one_error(run("gold", "export", "--study", s, *force, code=1), "v2/gold.csv: changed since release v2")
        assert "the next one would name it as its previous" in err
        assert sorted(p.name for p in (s / "gold").iterdir() if not p.name.startswith(".")) == ["v1", "v2"]


def test_t04_a_copied_manifest_is_named_not_the_gold_file(two_releases):
    s = two_releases
    (s / "gold/v2/manifest.json").write_bytes((s / "gold/v1/manifest.json").read_bytes())
    err = one_error(
        run("gold", "diff", "v1", "v2", "--study", s, code=1),
        "v2/manifest.json: the manifest of release v1, in folder v2",
    )
    assert "gold.csv" not in err


def test_m06_swapped_release_folders_are_refused(two_releases):
    s = two_releases
    g = s / "gold"
    (g / "v1").rename(g / "vx")
    (g / "v2").rename(g / "v1")
    (g / "vx").rename(g / "v2")
    one_error(
        run("gold", "diff", "v1", "v2", "--study", s, code=1),
        "v1/manifest.json: the manifest of release v2, in folder v1",
    )
    one_error(
        run("gold", "export", "--study", s, "--force", code=1),
        "v2/manifest.json: the manifest of release v1, in folder v2",
    )


def test_m09_a_deleted_ratings_file_is_named(pulled):
    (pulled / "rounds/1/ratings.csv").unlink()
    for args in (["agree"], ["flag"], ["calibrate", "--rule", "kappa_lower>=0.6"]):
        one_error(run(*args, "--study", pulled, code=1), "rounds/1/ratings.csv: missing, but ")


def test_m09_a_deleted_later_round_is_named_not_passed_over(pulled):
    run("pull", "--study", pulled, "--round", "2", "--from-table", OPENMTB, *WIDE)
    (pulled / "rounds/2/ratings.csv").unlink()
    for args in (["agree"], ["flag"], ["adjudicate", "sheet", "-o", pulled.parent / "r.xlsx"]):
        one_error(run(*args, "--study", pulled, code=1), "rounds/2/ratings.csv: missing, but ")


def test_y01_a_decision_imported_in_another_spelling_counts_as_imported(pulled, tmp_path):
    from openpyxl import load_workbook

    review = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", pulled, "-o", review)
    fill_sheet(review, 3)
    wb = load_workbook(review)
    ws = wb["Disagreements"]
    col = [c.value for c in ws[1]].index("Decision") + 1
    for r in range(2, 5):
        ws.cell(r, col).value = f"  {str(ws.cell(r, col).value).upper()} "  # the import forgives case and spaces
    wb.save(review)
    one_error(run("adjudicate", "sheet", "--study", pulled, "-o", review, code=1), "holds 3 decision(s)")
    run("adjudicate", "import", "--study", pulled, review, "--adjudicator", "dr_chair")
    run("adjudicate", "sheet", "--study", pulled, "-o", review)  # the log has them as the import read them
