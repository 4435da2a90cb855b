"""Messages that say what they name: a ``--round`` the study does not have (or below 1) names the
rounds it has and never advises a pull that is refused; an item id that is no id says what it is
(a list, a number, a blank); the hints and warnings escape an invisible character they show.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from builders import RATERS, WIDE, import_, sheet_for, study_and_file, table_study, task
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run
from test_adjudication_roundtrip import fill, make_study

from goldboard.cases.examples import example_path
from goldboard.study import Study

ROUND_CMDS = [
    ("agree",), ("flag",), ("report", "--format", "markdown"), ("calibrate", "--rule", "kappa_lower>=0.5"),
    ("adjudicate", "sheet", "-o", "{tmp}/s.xlsx"), ("gold", "export"), ("plan", "size", "--from-study", "--width", "0.3"),
]  # fmt: skip


def _round_cmd(cmd, study, tmp_path, n):
    sub = 2 if cmd[0] in ("adjudicate", "gold", "plan") else 1
    args = [a.format(tmp=tmp_path) for a in cmd[sub:]]
    return invoke_cli(*cmd[:sub], "--study", study.path, *args, "--round", n)


@pytest.mark.parametrize("cmd", ROUND_CMDS, ids=lambda c: " ".join(c[:2]))
def test_p24_a_round_the_study_does_not_have_is_named_as_such(tmp_path, cmd):
    study = make_study(tmp_path)
    res = _round_cmd(cmd, study, tmp_path, 7)
    assert res.exit_code == 1, res.output
    assert error_line(res) == f"Error: {study.path}: --round 7: the study has round 1; round 7 does not exist"
    assert "pull" not in res.output  # no advice that `pull --round 7` would refuse
    assert not (tmp_path / "s.xlsx").exists() and not (study.path / "gold").exists()


def test_p24_a_recorded_round_not_pulled_yet_is_still_advised_to_be_pulled(tmp_path):
    study = make_study(tmp_path)
    for n in (1, 2):  # round 1 (ratings written by hand) recorded, then a new round 2 without ratings
        assert invoke_cli("study", "round", study.path, n, "--main").exit_code == 0
    line = error_line(invoke_cli("agree", "--study", study.path, "--round", 2))
    assert (
        line == f"Error: {study.ratings_path(2)}: not pulled yet (run `goldboard pull --study {study.path} --round 2`)"
    )
    line = error_line(invoke_cli("agree", "--study", study.path, "--round", 3))
    assert line == f"Error: {study.path}: --round 3: the study has rounds 1-2; round 3 does not exist"
    line = error_line(invoke_cli("calibrate", "--study", study.path, "--rule", "kappa_lower>=0.5", "--round", 2))
    assert line == f"Error: --round: {study.ratings_path(2)}: round 2 is not pulled yet"  # was "round_: ..."


def test_p24_rounds_with_a_gap_are_listed(tmp_path):
    study = make_study(tmp_path)
    (study.path / "rounds" / "3").mkdir()
    study.ratings_path(3).write_bytes(study.ratings_path(1).read_bytes())
    line = error_line(invoke_cli("flag", "--study", study.path, "--round", 2))
    assert line == f"Error: {study.path}: --round 2: the study has rounds 1, 3; round 2 does not exist"


NOT_IDS = [
    (True, "true: a boolean (true/false), not an item id (text or a whole number)"),
    (False, "false: a boolean (true/false), not an item id (text or a whole number)"),
    (["MTB-0001"], '["MTB-0001"]: a list, not an item id (text or a whole number): the id itself is "MTB-0001", '
                   "without the brackets"),
    (["a", "b"], '["a", "b"]: a list, not an item id (text or a whole number)'),
    ({"id": 1}, '{"id": 1}: an object, not an item id (text or a whole number)'),
    (1.5, "1.5: a decimal number, not an item id (text or a whole number; a script that wrote the id 1 as 1.0?)"),
]  # fmt: skip


@pytest.mark.parametrize("value,what", NOT_IDS, ids=lambda v: json.dumps(v)[:12])
def test_f03_prodigy_item_id_says_what_it_is(tmp_path, value, what):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task(value)])
    res = invoke_cli("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert error_line(res) == f"Error: {f}:2: item_id is {what}; give the item's id, or delete the record"
    assert "empty item id" not in res.output and not (s / "rounds").exists()


def test_f03_an_empty_prodigy_item_id_is_still_empty(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task(None)])
    line = error_line(invoke_cli("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS))
    assert (
        line
        == f"Error: {f}:2: item_id is null: an empty item id (the record names no item); give the item's id, or delete the record"
    )


def _doccano(tmp_path: Path, first: dict) -> tuple[Path, Path]:
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    recs = [{"id": 1, "text": "t", "item_id": "MTB-1", "label": ["Supported"], "Comments": []}, first]
    f = tmp_path / "ana.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return s, f


@pytest.mark.parametrize("value,what", NOT_IDS[:1] + NOT_IDS[4:], ids=lambda v: json.dumps(v)[:12])
def test_f03_doccano_item_id_and_id_say_what_they_are(tmp_path, value, what):
    s, f = _doccano(tmp_path, {"id": 2, "text": "t", "item_id": value, "label": ["Unsupported"], "Comments": []})
    res = invoke_cli("pull", "--study", s, "--from-file", f"doccano={f}", "--rater", "ana=onc_a")
    assert error_line(res) == f"Error: {f}:2: item_id is {what}; give the item's id, or delete the record"
    s2, f2 = _doccano(tmp_path / "b", {"id": value, "text": "t", "label": ["Unsupported"], "Comments": []})
    res = invoke_cli("pull", "--study", s2, "--from-file", f"doccano={f2}", "--rater", "ana=onc_a")
    assert error_line(res) == f"Error: {f2}:2: id is {what}; give the item's id, or delete the record"
    assert not (s / "rounds").exists() and not (s2 / "rounds").exists()


def _ls_export(tmp_path: Path, data: list[dict]) -> tuple[Path, Path]:
    s = tmp_path / "s"
    Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    tasks = []
    for n, d in enumerate(data):
        anns = [
            {
                "id": 1000 + 10 * n + who,
                "completed_by": who,
                "was_cancelled": False,
                "created_at": "2026-01-01T10:00:00Z",
                "result": [
                    {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": [v]}},
                    {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["r"]}},
                ],
            }
            for who, v in ((1, "Supported"), (2, "Unsupported"))
        ]
        tasks.append({"id": 101 + n, "data": {"case_text": "x", "output_text": "y", **d}, "annotations": anns})
    f = tmp_path / "export.json"
    f.write_text(json.dumps(tasks))
    return s, f


@pytest.mark.parametrize("key", ["item_id", "case_id"])
@pytest.mark.parametrize("value,what", NOT_IDS, ids=lambda v: json.dumps(v)[:12])
def test_f03_label_studio_export_item_id_that_is_no_id_is_refused(tmp_path, key, value, what):
    s, f = _ls_export(tmp_path, [{key: "C-1"}, {key: value}])
    more = ["--item-key", "case_id"] if key == "case_id" else []
    res = invoke_cli("pull", "--study", s, "--from-export", f, *more, "--rater", "1=onc_a,2=onc_b")
    line = error_line(res)
    assert line == f"Error: {f}: task 102: data.{key} is {what}; correct the task's data and export again", line
    assert not (s / "rounds").exists()  # never stored as the item 'True' or "['MTB-0001']"


def test_f03_label_studio_item_zero_is_item_zero(tmp_path):
    s, f = _ls_export(tmp_path, [{"item_id": "C-1"}, {"item_id": 0}])
    assert invoke_cli("pull", "--study", s, "--from-export", f, "--rater", "1=onc_a,2=onc_b").exit_code == 0
    with open(s / "rounds/1/ratings.csv", newline="") as fh:
        items = {r["item_id"] for r in csv.DictReader(fh)}
    assert items == {"C-1", "0"}  # was held out as "no item id"


def test_j04_judge_warning_escapes_the_item_id(tmp_path):
    s = tmp_path / "openmtb"
    wide = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
    assert invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    assert (
        invoke_cli(
            "pull", "--study", s, "--from-table", example_path("openmtb"), *wide, "--field", "safety_label"
        ).exit_code
        == 0
    )
    with open(example_path("openmtb"), newline="", encoding="utf-8-sig") as fh:
        rows = [(r["case_id"], "safety_label", r["oncologist_a_label"]) for r in csv.DictReader(fh)]
    first = rows[0][0]
    labels = tmp_path / "judge.csv"
    with open(labels, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([("item_id", "field", "value"), *rows[1:], (first + "\u200b", *rows[0][1:])])
    res = invoke_cli("judge", "--study", s, "--judge", "gpt", "--labels", labels, "--epsilon", "0.2")
    line = next(ln for ln in res.output.splitlines() if "no clinician rated" in ln)
    assert line == (
        f"Warning: gpt: 1 label(s) of items no clinician rated are not used (e.g. '{first}\\u200b'; check the item ids)"
    )
    assert "\u200b" not in res.output


@pytest.mark.parametrize("hidden", ["\u200b", "\u00a0", "\u202e"])
def test_n53_sheet_decision_with_an_invisible_character_is_shown_escaped(tmp_path, hidden):
    study = make_study(tmp_path)
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": ("Unsupported" + hidden + "x", "no data", None)})
    res = import_(study, sheet)
    assert res.exit_code == 1, res.output
    shown = hidden.encode("unicode_escape").decode("ascii")
    assert f'decision "Unsupported{shown}x" is not a value of safety_label (allowed: ' in res.output, res.output
    assert hidden not in res.output
    log = study.path / "decisions.jsonl"
    assert not log.exists() or not log.read_text().strip()  # nothing imported


def _zw_ratings(tmp_path: Path) -> Path:
    """A ratings table whose item 'C-1<U+200B>' breaks the mtb rule (missing info with Supported)."""
    rows = [
        ("C-1\u200b", "onc_a", "safety_label", "Supported"), ("C-1\u200b", "onc_a", "missing_info", "stage"),
        ("C-1\u200b", "onc_b", "safety_label", "Supported"), ("C-1\u200b", "onc_b", "missing_info", ""),
        ("C-2", "onc_a", "safety_label", "Unsupported"), ("C-2", "onc_b", "safety_label", "Supported"),
        ("C-2", "onc_a", "missing_info", ""), ("C-2", "onc_b", "missing_info", ""),
    ]  # fmt: skip
    path = tmp_path / "r.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([("item_id", "rater", "field", "value"), *rows])
    return path


def test_flag_refuses_the_invisible_character_it_once_showed(tmp_path):
    """The rule warning and the agenda showed 'C-1\\u200b' escaped; a plain file's item id holding
    an invisible character is now refused (issue 23: test_ids_twins), the refusal escaped."""
    res = invoke_cli("flag", _zw_ratings(tmp_path), "--schema", "mtb", code=1)
    assert "item_id 'C-1\\u200b' contains invisible or control character U+200B" in res.output, res.output
    assert "\u200b" not in res.output


def test_agree_hint_never_points_at_a_round_nobody_finished(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\nC3,Supported,Supported\n")
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    t2 = tmp_path / "r2.csv"
    t2.write_text("case_id,a\nC1,Supported\nC2,Unsafe\n")
    res = run(
        "pull",
        "--study",
        s,
        "--from-table",
        t2,
        "--item-col",
        "case_id",
        "--rater-cols",
        "onc_a=a",
        "--field",
        "safety_label",
        "--round",
        "2",
    )
    assert res.exit_code == 0, res.output
    res = run("agree", "--study", s)
    assert res.exit_code == 0, res.output
    assert "round 2 has ratings from onc_a only (2 items, each rated in round 1 too): a test-retest round" in res.output
    assert "--round 2 analyses it" not in res.output


ROUND_CMDS_BELOW_ONE = [
    ("agree",), ("report", "--format", "markdown"), ("flag",), ("calibrate", "--rule", "kappa_lower>=0.5"),
    ("adjudicate", "sheet", "-o", "{tmp}/s.xlsx"), ("gold", "export"),
]  # fmt: skip


@pytest.mark.parametrize("n", ["0", "-1"])
@pytest.mark.parametrize("cmd", ROUND_CMDS_BELOW_ONE, ids=lambda c: " ".join(c[:2]))
def test_a_round_below_one_is_one_line(released, tmp_path, cmd, n):
    sub = 2 if cmd[0] in ("adjudicate", "gold") else 1
    args = [a.format(tmp=tmp_path) for a in cmd[sub:]]
    res = run(*cmd[:sub], "--study", released.path, *args, "--round", n)
    assert res.exit_code == 1 and error_line(res) == f"Error: --round {n}: rounds are numbered from 1", res.output
