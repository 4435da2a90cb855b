"""A Label Studio export (or server pull) taken into a round: annotations another round holds, the
``--item-key`` given against the task's own ``item_id``, review verdicts, annotations without an
annotator, twin or hidden item ids, empty or unusable exports, the same export given twice or for two
raters: refused naming the file and task, nothing written (study.toml byte for byte as it was).

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import (
    MAP,
    OneProjectServer,
    error_naming,
    export_tasks,
    invalid,
    ls_tasks,
    ratings,
    study_bytes,
    study_files,
    study_with_export,
)
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run
from conftest import run_cli as run_ok

from goldboard.errors import GoldboardError
from goldboard.study import Study


def test_x21_round_1_export_pulled_again_as_round_2_is_refused(tmp_path):
    s, f = study_with_export(tmp_path, export_tasks())
    invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    toml = (s / "study.toml").read_bytes()
    res = invoke_cli("pull", "--study", s, "--round", "2", "--from-export", f, *MAP)
    line = error_line(res)
    assert line.startswith(f"Error: {f}: 4 of its annotations were already pulled into round 1 ("), line
    assert "annotation 1002 by onc_a on task 101" in line and "round 2?" in line, line
    assert not (s / "rounds/2").exists()  # nothing written: no round 2, no phantom round in study.toml
    assert (s / "study.toml").read_bytes() == toml


def test_x21_one_annotation_of_another_round_is_enough_and_new_annotations_pass(tmp_path):
    s, f = study_with_export(tmp_path, export_tasks())
    invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    retest = export_tasks(first_ann=2002)  # the raters annotated anew: new annotation ids
    s, f2 = study_with_export(tmp_path, retest, "retest.json")
    invoke_cli("pull", "--study", s, "--round", "2", "--from-export", f2, *MAP, code=0)
    assert {r["annotation_id"] for r in ratings(s, 2)} == {"2002", "2003", "2004", "2005"}
    third = export_tasks(first_ann=3002)
    third[1]["annotations"][0]["id"] = 1004  # onc_a's round-1 annotation of task 102 slipped into round 3's export
    s, f3 = study_with_export(tmp_path, third, "r3.json")
    line = error_line(invoke_cli("pull", "--study", s, "--round", "3", "--from-export", f3, *MAP))
    assert "1 of its annotations were already pulled into round 1" in line, line
    assert not (s / "rounds/3").exists()


def test_x21_re_pulling_the_same_round_is_still_allowed(tmp_path):
    s, f = study_with_export(tmp_path, export_tasks())
    invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    invoke_cli("pull", "--study", s, "--round", "1", "--from-export", f, *MAP, code=0)
    assert len(ratings(s)) == 8


def test_x21_a_server_pull_of_the_same_project_into_round_2_is_refused(tmp_path):
    from goldboard.workflows.intake import pull

    s, _ = study_with_export(tmp_path, [])
    study = Study.open(s)
    for n in (1, 2):  # a hand-made project recorded for two rounds
        study.get_or_add_round(n, mode="shared").projects = {"*": 5}
    study.save()
    users = {"ana@x.org": "onc_a", "ben@x.org": "onc_b"}
    pull(study, 1, client=OneProjectServer(), item_key="case_id", rater_map=users, progress=False)
    with pytest.raises(GoldboardError) as exc:
        pull(study, 2, client=OneProjectServer(), item_key="case_id", rater_map=users, progress=False)
    assert str(exc.value).startswith("project 5: 4 of its annotations were already pulled into round 1 ("), exc.value
    assert not (s / "rounds/2").exists()


def _with_item_id(tasks: list[dict]) -> list[dict]:
    for t in tasks:  # keys a hand-made project's tasks may hold besides the one named by --item-key
        t["data"].update(item_id="Z-" + t["data"]["case_id"], rater="onc_b", field="missing_info", value="Unsafe")
    return tasks


def test_x08_item_key_given_wins_over_a_data_item_id_and_is_said(tmp_path):
    s, f = study_with_export(tmp_path, _with_item_id(export_tasks()))
    res = invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    assert {r["item_id"] for r in ratings(s)} == {"C-1", "C-2"}  # was Z-C-1, Z-C-2
    assert (
        "warning: 2 task(s) also hold a data.item_id that differs from their case_id (task 101: item_id 'Z-C-1', "
        "case_id 'C-1'): items are named by --item-key case_id, as given"
    ) in res.output, res.output
    units = [json.loads(line) for line in (s / "units.jsonl").read_text().splitlines()]
    assert {u["item_id"] for u in units} == {"C-1", "C-2"}
    # the key recorded in study.toml is repeated by a plain re-pull: the same items
    invoke_cli("pull", "--study", s, "--from-export", f, code=0)
    assert {r["item_id"] for r in ratings(s)} == {"C-1", "C-2"}


def test_x08_a_round_goldboard_pushed_keeps_its_own_item_ids(tmp_path):
    s, f = study_with_export(tmp_path, _with_item_id(export_tasks()))
    study = Study.open(s)
    rnd = study.get_or_add_round(1, mode="shared")
    rnd.projects, rnd.units = {"*": 5}, 2  # pushed by goldboard: its tasks' item_id is goldboard's
    study.save()
    res = invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    assert {r["item_id"] for r in ratings(s)} == {"Z-C-1", "Z-C-2"}
    assert "differs from their case_id" not in res.output


def _pull_one(tmp_path: Path, tasks: list[dict]):
    s, f = study_with_export(tmp_path, tasks)
    return s, invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)


def test_x20_an_annotation_rejected_in_review_is_held_out_with_the_reason(tmp_path):
    tasks = export_tasks()
    tasks[1]["annotations"][0].update(reviews=[{"id": 1, "accepted": False, "created_by": 9}], review_result="rejected")
    s, res = _pull_one(tmp_path, tasks)
    assert "1 x rejected in review" in res.output, res.output
    assert ("C-2", "onc_a") not in {(r["item_id"], r["rater"]) for r in ratings(s)}  # was pulled as a rating
    held = invalid(s)
    assert [(h["annotation_id"], h["reason"]) for h in held] == [
        ("1004", 'rejected in review (review_result "rejected")')
    ]
    assert "Supported" in held[0]["result"]  # kept verbatim


def test_x20_the_latest_review_decides(tmp_path):
    tasks = export_tasks()
    reviews = [
        {"id": 1, "accepted": False, "created_at": "2026-01-02T10:00:00Z"},
        {"id": 2, "accepted": True, "created_at": "2026-01-03T10:00:00Z"},  # fixed and accepted
    ]
    tasks[0]["annotations"][0]["reviews"] = reviews
    tasks[1]["annotations"][1]["reviews"] = reviews[::-1]  # listed in another order: the later one still decides
    tasks[1]["annotations"][0]["reviews"] = [
        dict(reviews[1], accepted=True),
        dict(reviews[0], created_at="2026-01-04T10:00:00Z"),
    ]
    s, res = _pull_one(tmp_path, tasks)
    assert [h["annotation_id"] for h in invalid(s)] == ["1004"]
    assert invalid(s)[0]["reason"] == "rejected in review (reviews[].accepted is false)"


def test_x20_a_server_pull_keeps_the_reviews_it_reads(tmp_path):
    from goldboard.annotate.pull import slim_task

    task = export_tasks()[0]
    task["annotations"][0].update(reviews=[{"accepted": False}], review_result="rejected", drafts=[1])
    slim = slim_task(task)["annotations"][0]
    assert slim["reviews"] == [{"accepted": False}] and slim["review_result"] == "rejected" and "drafts" not in slim


def test_x16_an_annotation_with_no_annotator_is_named_as_such(tmp_path):
    tasks = export_tasks()
    tasks[0]["annotations"][0]["completed_by"] = None
    tasks[1]["annotations"][0]["completed_by"] = "ana"
    s, res = _pull_one(tmp_path, tasks)
    assert "None" not in res.output, res.output  # was "annotated by user None, who is not a study rater"
    assert "1 x an annotation with no annotator: completed_by is null" in res.output, res.output
    reasons = sorted(h["reason"] for h in invalid(s))
    assert reasons == [
        "an annotation with no annotator: completed_by is null",
        "completed_by 'ana' is not a Label Studio user id",
    ], reasons


def test_x11_a_csv_export_is_named_without_programmer_text(tmp_path):
    s, _ = study_with_export(tmp_path, [])
    f = tmp_path / "project-5.csv"
    f.write_text("id,case_id,safety_label,annotator\n101,C-1,Supported,1\n")
    line = error_line(invoke_cli("pull", "--study", s, "--from-export", f, *MAP))
    assert line == (
        f"Error: {f}:1: not a Label Studio JSON export (not JSON: Expecting value; a CSV/TSV export: export the "
        "project as JSON (or JSON_MIN) instead)"
    ), line  # was "(JSONDecodeError)"


def _ls_export_of_one_rater(path: Path) -> Path:
    """A real-shaped Label Studio export: tasks and annotations carry ``"project": 5``."""

    def ann(i: int, user: int, value: str) -> dict:
        return {
            "id": i,
            "completed_by": user,
            "project": 5,
            "was_cancelled": False,
            "created_at": "2026-01-01T10:00:00Z",
            "result": [
                {"from_name": "safety_label", "to_name": "case", "type": "choices", "value": {"choices": [value]}}
            ],
        }

    tasks = [
        {"id": 101, "project": 5, "data": {"case_id": "C-1", "text": "x"}, "annotations": [ann(1002, 1, "Supported")]},
        {"id": 102, "project": 5, "data": {"case_id": "C-2", "text": "y"}, "annotations": [ann(1004, 2, "Unsafe")]},
    ]
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def test_one_export_given_for_two_raters_is_named_so_whatever_its_project_ids(tmp_path):
    """Before: 'its tasks are from project 5, which is onc_b's project in round 1 (onc_a's is 5);
    exports swapped between raters? Give it as onc_b=good.json' -- self-contradictory advice."""
    good = _ls_export_of_one_rater(tmp_path / "good.json")
    copy = tmp_path / "good_copy.json"
    copy.write_bytes(good.read_bytes())
    s = tmp_path / "ST"
    invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    before = {p: p.read_bytes() for p in s.rglob("*") if p.is_file()}
    for second in (good, copy):
        res = invoke_cli(
            *["pull", "--study", s, "--from-export", f"onc_a={good}", "--from-export", f"onc_b={second}"],
            *["--item-key", "case_id", "--rater", "1=onc_a,2=onc_b"],
        )
        line = error_line(res)
        assert res.exit_code == 1, res.output
        assert (
            f"onc_b={second}: holds the same Label Studio tasks as onc_a={good} (task 101): one export given twice?"
            in line
        )
        assert "swapped" not in line
        assert {p: p.read_bytes() for p in s.rglob("*") if p.is_file()} == before


def _ls_export_of_three_tasks(path: Path) -> Path:
    def ann(aid, who, label):
        return {
            "id": aid, "completed_by": who, "was_cancelled": False, "created_at": "2026-01-01T10:00:00Z",
            "updated_at": "2026-01-01T10:00:00Z", "lead_time": 10.0,
            "result": [{"from_name": "safety_label", "to_name": "output", "type": "choices",
                        "value": {"choices": [label]}},
                       {"from_name": "rationale", "to_name": "output", "type": "textarea",
                        "value": {"text": ["why"]}}],
        }  # fmt: skip

    tasks = [
        {"id": 100 + n, "data": {"case_id": f"C-{n}", "case_text": "x", "output_text": "y"},
         "annotations": [ann(1000 + 2 * n, 1, "Supported"), ann(1001 + 2 * n, 2, "Unsupported")]}
        for n in range(1, 4)
    ]  # fmt: skip
    path.write_text(json.dumps(tasks))
    return path


@pytest.mark.parametrize("round_args", [(), ("--round", "1")], ids=["new study", "--round 1"])
def test_a_refused_pull_from_exports_leaves_study_toml_as_it_was(tmp_path, round_args):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    export = _ls_export_of_three_tasks(tmp_path / "good.json")
    before = study_files(s)
    res = run(
        "pull", "--study", s, *round_args, "--from-export", f"onc_a={export}", "--from-export", f"onc_b={export}",
        "--item-key", "case_id",
    )  # fmt: skip
    assert res.exit_code == 1 and "one export given twice?" in error_line(res), res.output
    assert study_files(s) == before
    res = run("pull", "--study", s, "--from-export", export, "--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")
    assert res.exit_code == 0, res.output  # the same export given once: pulled, the round recorded
    assert [r.number for r in Study.open(s).rounds] == [1] and Study.open(s).extra["item_key"] == "case_id"


@pytest.mark.parametrize(
    "second,needle",
    [("007", "item ids '7' and '007' differ only in how a number is written"),
     ("7\u200b", "item id '7\\u200b' contains invisible or control character U+200B")],
)  # fmt: skip
def test_ids_of_a_hand_made_project_export_are_checked_like_a_table(tmp_path, second, needle):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    export = _ls_export_of_three_tasks(tmp_path / "e.json")
    tasks = json.loads(export.read_text())
    tasks[0]["data"]["case_id"], tasks[1]["data"]["case_id"] = "7", second
    export.write_text(json.dumps(tasks))
    before = study_files(s)
    res = run("pull", "--study", s, "--from-export", export, "--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")
    assert res.exit_code == 1 and needle in error_line(res), res.output
    assert study_files(s) == before


def export_file(tmp_path: Path, tasks: list, name: str = "export.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(tasks))
    return p


@pytest.fixture()
def new_study(tmp_path):
    s = tmp_path / "s"
    run_ok("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    return s


def pull_export(s: Path, *files, code=0, more=("--rater", "1=onc_a,2=onc_b")):
    args = [a for f in files for a in ("--from-export", f)]
    return run_ok("pull", "--study", s, *args, "--item-key", "case_id", *more, code=code)


def test_e13_the_same_export_twice_leaves_no_round(new_study, tmp_path):
    good = export_file(tmp_path, ls_tasks())
    before = study_bytes(new_study)
    error_naming(pull_export(new_study, good, good, code=1), "one export given twice?")
    assert study_bytes(new_study) == before  # no phantom [[rounds]], no item_key
    pull_export(new_study, good)
    assert "[[rounds]]" in (new_study / "study.toml").read_text()


def test_e14_the_same_export_for_two_raters_leaves_no_round(openmtb_pulled, tmp_path):
    good = export_file(tmp_path, ls_tasks())
    before = study_bytes(openmtb_pulled)
    res = run_ok("pull", "--study", openmtb_pulled, "--round", "2", "--from-export", f"onc_a={good}",
              "--from-export", f"onc_b={good}", "--item-key", "case_id", code=1)  # fmt: skip
    error_naming(res, "one export given twice?")
    assert study_bytes(openmtb_pulled) == before


def refused_export(s: Path, tasks, text: str) -> str:
    f = export_file(s.parent, tasks, "bad.json")
    before = study_bytes(s)
    err = error_naming(pull_export(s, f, code=1), text)
    assert study_bytes(s) == before  # nothing written: no round, no ratings, no item_key
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
