"""Issue 23, campaign 7b (j7): Label Studio export shapes and score input files.  Each test builds the
input, runs the CLI and reads the line or the file written; each fails on the code before its fix
(checked by hand on the commit before, by reverting the fix).

1. X21: round 1's own export pulled again with ``--round 2`` was accepted (the same annotation ids), and
   test-retest then reported perfect agreement: annotations another round holds are refused, naming it.
2. X08: task data holding an ``item_id`` key was used instead of the ``--item-key case_id`` given: the
   key the user named wins, and a task whose ``item_id`` differs is said once.
3. X20/X16: an annotation rejected in review was pulled as a rating (held out now, with the reason, as a
   skipped one is); "annotated by user None" for a null ``completed_by``.
4. S08/J02: a ``;``-separated CSV (Excel in many locales) was "missing column ... columns:
   case_id;model;predicted_label": the file is named as separated by ``;``, not commas.
5. S05: ``probabilities`` summing to 1.8 and a ``confidence`` of 1.7 were ignored in labels mode without
   a word: a column score does not use is said once; a value out of range where it is used is refused.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import error_line, invoke_cli  # noqa: E402

from goldboard.cases.examples import example_path  # noqa: E402
from goldboard.study import Study  # noqa: E402

MAP = ("--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")


def _result(value: str) -> list[dict]:
    return [
        {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": [value]}},
        {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["x"]}},
    ]


def export_tasks(n: int = 2, first_ann: int = 1002) -> list[dict]:
    """A Label Studio JSON export of ``n`` tasks (case_id C-1 ...), each annotated by users 1 and 2."""
    tasks = []
    for k in range(n):
        anns = [
            {
                "id": first_ann + 2 * k + who - 1,
                "completed_by": who,
                "was_cancelled": False,
                "created_at": "2026-01-01T10:00:00Z",
                "updated_at": "2026-01-01T10:00:00Z",
                "result": _result(value),
            }
            for who, value in ((1, "Supported"), (2, "Unsupported"))
        ]
        tasks.append(
            {"id": 101 + k, "project": 5, "data": {"case_id": f"C-{k + 1}", "output_text": "y"}, "annotations": anns}
        )
    return tasks


def study_with_export(tmp_path: Path, tasks: list[dict], name: str = "export.json") -> tuple[Path, Path]:
    s = tmp_path / "s"
    if not s.exists():
        Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    f = tmp_path / name
    f.write_text(json.dumps(tasks))
    return s, f


def ratings(s: Path, n: int = 1) -> list[dict]:
    with open(s / f"rounds/{n}/ratings.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def invalid(s: Path, n: int = 1) -> list[dict]:
    with open(s / f"rounds/{n}/invalid.csv", newline="") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- 1. X21 one export, two rounds


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


class _OneProjectServer:
    """A Label Studio server holding one shared project (5) with :func:`export_tasks`: what a server
    pull reads (its users, the project, the export)."""

    url = "http://127.0.0.1:1"
    conn = type("Conn", (), {"credentials": None, "workers": 1})()

    def users(self):
        return [{"id": 1, "email": "ana@x.org", "username": "ana"}, {"id": 2, "email": "ben@x.org", "username": "ben"}]

    def project(self, pid):
        return {"label_config": "<View/>"}

    def export(self, pid, each=None):
        tasks = export_tasks()
        return [each(t) for t in tasks] if each else tasks


def test_x21_a_server_pull_of_the_same_project_into_round_2_is_refused(tmp_path):
    from goldboard.errors import GoldboardError
    from goldboard.workflows.intake import pull

    s, _ = study_with_export(tmp_path, [])
    study = Study.open(s)
    for n in (1, 2):  # a hand-made project recorded for two rounds
        study.get_or_add_round(n, mode="shared").projects = {"*": 5}
    study.save()
    users = {"ana@x.org": "onc_a", "ben@x.org": "onc_b"}
    pull(study, 1, client=_OneProjectServer(), item_key="case_id", rater_map=users, progress=False)
    with pytest.raises(GoldboardError) as exc:
        pull(study, 2, client=_OneProjectServer(), item_key="case_id", rater_map=users, progress=False)
    assert str(exc.value).startswith("project 5: 4 of its annotations were already pulled into round 1 ("), exc.value
    assert not (s / "rounds/2").exists()


# --------------------------------------------------------------------------- 2. X08 --item-key wins


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


# --------------------------------------------------------------------------- 3. X20 rejected in review, X16 no annotator


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


# --------------------------------------------------------------------------- 4. S08/J02 another dialect's delimiter


def _reference(tmp_path: Path) -> Path:
    p = tmp_path / "reference.jsonl"
    p.write_text("".join(json.dumps({"case_id": f"C{n}", "support_label": "Supported"}) + "\n" for n in range(1, 9)))
    return p


def _excel_csv(path: Path, header: list[str], rows: list[list[str]], sep: str = ";") -> Path:
    """A table as Excel saves "CSV" in a locale whose decimal mark is a comma: BOM, ';', CRLF."""
    text = "".join(sep.join(r) + "\r\n" for r in [header, *rows])
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    return path


SEMI = "the file is separated by ';', not commas (header {h!r}): save it as CSV UTF-8 (comma delimited), or as .xlsx"


def test_s08_score_names_a_semicolon_separated_predictions_file(tmp_path):
    header = ["case_id", "model", "predicted_label"]
    preds = _excel_csv(tmp_path / "p.csv", header, [[f"C{n}", "gpt", "Supported"] for n in range(1, 9)])
    res = invoke_cli("score", "--gold", _reference(tmp_path), "--schema", "mtb", "--predictions", preds)
    line = error_line(res)  # was "id: missing column (looked for item_id, ...; columns: case_id;model;predicted_label)"
    assert line == f"Error: {preds}:1: " + SEMI.format(h="case_id;model;predicted_label"), line


def _study_with_gold_ratings(tmp_path: Path) -> tuple[Path, list[str]]:
    s = tmp_path / "s"
    invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    wide = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
    invoke_cli("pull", "--study", s, "--from-table", example_path("openmtb"), *wide, "--field", "safety_label", code=0)
    with open(example_path("openmtb"), encoding="utf-8") as fh:
        return s, [r["case_id"] for r in csv.DictReader(fh)]


def test_j02_judge_labels_and_a_table_pull_name_the_semicolons_too(tmp_path):
    s, ids = _study_with_gold_ratings(tmp_path)
    labels = _excel_csv(
        tmp_path / "j.csv", ["item_id", "field", "value"], [[i, "safety_label", "Supported"] for i in ids]
    )
    before = (s / "study.toml").read_bytes()
    line = error_line(invoke_cli("judge", "--study", s, "--judge", "gpt", "--labels", labels, "--epsilon", "0.2"))
    assert line == f"Error: {labels}:1: " + SEMI.format(h="item_id;field;value"), line  # was "no 'item_id' column"
    assert (s / "study.toml").read_bytes() == before
    table = _excel_csv(tmp_path / "t.csv", ["case_id", "a", "b"], [[i, "Supported", "Supported"] for i in ids])
    args = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label", "--round", "2"]
    line = error_line(invoke_cli("pull", "--study", s, "--from-table", table, *args))
    assert line == f"Error: {table}:1: " + SEMI.format(h="case_id;a;b"), line  # was "no such column"


@pytest.mark.parametrize(
    "name,sep,says",
    [
        ("p.csv", "\t", "separated by tabs, not commas (header 'case_id\\tpredicted_label'): name it .tsv"),
        ("p.tsv", ",", "separated by commas, not tabs (header 'case_id,predicted_label'): name it .csv"),
        ("p.tsv", ";", "separated by ';', not tabs"),
    ],
)
def test_s08_other_dialects_are_named(tmp_path, name, sep, says):
    preds = _excel_csv(
        tmp_path / name, ["case_id", "predicted_label"], [[f"C{n}", "Supported"] for n in range(1, 9)], sep
    )
    line = error_line(invoke_cli("score", "--gold", _reference(tmp_path), "--schema", "mtb", "--predictions", preds))
    assert says in line, line


def test_s08_a_one_column_table_is_still_read(tmp_path):
    from goldboard.fileio import read_table

    p = tmp_path / "ids.csv"
    p.write_text("case_id\nC;1\nC2\n")  # one column; a ';' in a cell is data
    assert read_table(p)["case_id"].tolist() == ["C;1", "C2"]


# --------------------------------------------------------------------------- 5. S05 columns score does not read


def _jsonl(path: Path, recs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def test_s05_probabilities_and_a_label_mode_confidence_are_said_to_be_unused(tmp_path):
    recs = [
        {"case_id": f"C{n}", "model": "gpt", "predicted_label": "Supported", "confidence": 1.7,
         "probabilities": {"Supported": 0.9, "Unsupported": 0.9}}
        for n in range(1, 9)
    ]  # fmt: skip
    preds = _jsonl(tmp_path / "p.jsonl", recs)
    res = invoke_cli("score", "--gold", _reference(tmp_path), "--schema", "mtb", "--predictions", preds, code=0)
    out = res.output
    assert out.count("- confidence: not used by label scoring") == 1, out  # once, not per row; was not said
    assert out.count("- probabilities: not used by score (it scores the predicted label)") == 1, out
    plain = _jsonl(
        tmp_path / "q.jsonl",
        [{k: v for k, v in r.items() if k in ("case_id", "model", "predicted_label")} for r in recs],
    )
    out2 = invoke_cli("score", "--gold", _reference(tmp_path), "--schema", "mtb", "--predictions", plain, code=0).output
    assert "not used" not in out2


def test_s05_options_confidence_mixing_scales_is_refused():
    import pandas as pd

    from goldboard.analysis.scoring_inputs import _confidences
    from goldboard.errors import GoldboardError

    df = pd.DataFrame({"confidence": ["0.9", "1.7", ""], "_line": [2, 3, 4]})
    with pytest.raises(GoldboardError) as exc:  # was: both divided by 100, 0.9 read as 0.009
        _confidences(df, "confidence", df["_line"].to_numpy(), "p.csv")
    assert str(exc.value) == (
        "p.csv:3: confidence: '1.7' is above 1 while line 2 holds '0.9': one file mixes 0-1 and 0-100 % "
        "confidences; write them all on one scale"
    )
    ok = pd.DataFrame({"confidence": ["90", "17", "0"], "_line": [2, 3, 4]})
    conf, rescaled = _confidences(ok, "confidence", ok["_line"].to_numpy(), "p.csv")
    assert rescaled and conf.tolist() == [0.9, 0.17, 0.0]


def test_x11_a_csv_export_is_named_without_programmer_text(tmp_path):
    s, _ = study_with_export(tmp_path, [])
    f = tmp_path / "project-5.csv"
    f.write_text("id,case_id,safety_label,annotator\n101,C-1,Supported,1\n")
    line = error_line(invoke_cli("pull", "--study", s, "--from-export", f, *MAP))
    assert line == (
        f"Error: {f}:1: not a Label Studio JSON export (not JSON: Expecting value; a CSV/TSV export: export the "
        "project as JSON (or JSON_MIN) instead)"
    ), line  # was "(JSONDecodeError)"
