"""Prodigy ``db-out`` exports into a study (``pull --from-file prodigy=FILE``).

tests/data/prodigy/ holds files in the shape ``prodigy db-out`` writes (one annotated task per
line; ``answer``, ``accept`` with ``options``, ``label``, ``_annotator_id``/``_session_id`` of named
sessions, ``_input_hash``/``_task_hash``, ``_timestamp``): mtb_review.jsonl, a choice task in blocks
with a ``rationale`` text_input, by ana (who changed one answer later), ben (who skipped one) and
cy (who rejected one, and is no rater); harm_check.jsonl, a yes/no classification (accept/reject).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from conftest import invoke_cli

from goldboard.cases.intake.files import FileOptions, file_formats
from goldboard.label_configs.schema import load_schema
from goldboard.study import Study

DATA = Path(__file__).parent / "data" / "prodigy"
RATERS = "mtb_review-ana=onc_a,mtb_review-ben=onc_b,mtb_review-cy=onc_c"


def run(*args, code=0):
    res = invoke_cli(*[str(a) for a in args])
    assert "Traceback" not in res.output, res.output
    assert res.exit_code == code, res.output
    return res


def csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def test_the_registry_finds_prodigy():
    assert "prodigy" in file_formats()
    assert "prodigy" in run("pull", "--help").output


def test_reader_keeps_every_answer_with_its_annotator_item_and_time():
    read = file_formats()["prodigy"].read(DATA / "mtb_review.jsonl", load_schema("mtb"), FileOptions(source="p"))
    assert read.rows == 8 and read.fields == ["safety_label", "rationale"]
    assert [(who, item) for who, item, _ in read.annotations][:2] == [
        ("mtb_review-ana", "MTB-0001"),
        ("mtb_review-ana", "MTB-0002"),
    ]
    first = read.annotations[0][2]
    assert first.at == "2026-01-01T10:00:00+00:00" and first.annotation_id == "p:1"
    assert json.loads(first.raw)["_task_hash"] == 1122334401


def test_prodigy_choice_export_into_a_study(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    f = DATA / "mtb_review.jsonl"
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", code=1)
    assert "annotator 'mtb_review-ana' is not a rater of this study" in res.output
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert "onc_a: 3 rated, 0 invalid, 1 superseded" in res.output, res.output
    assert "onc_b: 2 rated, 1 invalid" in res.output and "onc_c: 0 rated, 1 invalid" in res.output
    got = csv(s / "rounds/1/ratings.csv")
    assert got[["item_id", "rater", "value", "rationale", "annotation_id"]].values.tolist() == [
        ["MTB-0001", "onc_a", "Supported", "EGFR L858R: osimertinib is first line.", "mtb_review.jsonl:1"],
        ["MTB-0001", "onc_b", "Supported", "Agree.", "mtb_review.jsonl:4"],
        ["MTB-0002", "onc_a", "Insufficient Information", "Stage is missing after all.", "mtb_review.jsonl:7"],
        ["MTB-0002", "onc_b", "Insufficient Information", "Stage missing.", "mtb_review.jsonl:5"],
        ["MTB-0003", "onc_a", "Partially Supported", "ECOG 3: caveat.", "mtb_review.jsonl:3"],
    ]
    assert set(got["annotated_at"]) >= {"2026-01-01T10:00:00+00:00"} and set(got["task_id"]) == {""}
    inv = csv(s / "rounds/1/invalid.csv").set_index("annotation_id")
    assert inv.loc["mtb_review.jsonl:2", "kind"] == "superseded"
    assert inv.loc["mtb_review.jsonl:6", "reason"] == "skipped (cancelled) annotation"
    assert inv.loc["mtb_review.jsonl:6", "was_cancelled"] == "true"
    assert "answer 'reject' of a choice task" in inv.loc["mtb_review.jsonl:8", "reason"]
    assert json.loads(inv.loc["mtb_review.jsonl:8", "result"])["_annotator_id"] == "mtb_review-cy"  # verbatim
    pj = json.loads((s / "rounds/1/pull.json").read_text())
    assert pj["file"]["format"] == "prodigy" and pj["file"]["rows"] == 8
    # the study works on it: agreement over the two raters who rated MTB-0001 and MTB-0002
    agree = json.loads(run("agree", "--study", s, "--format", "json").stdout)
    assert agree["n_items"] == 3
    # the same file again changes nothing
    before = (s / "rounds/1/ratings.csv").read_bytes()
    run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert (s / "rounds/1/ratings.csv").read_bytes() == before


def test_prodigy_yes_no_classification(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="medfail", raters=["onc_a", "onc_b"])
    f = DATA / "harm_check.jsonl"
    rmap = "harm_check-ana=onc_a,harm_check-ben=onc_b"
    run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", rmap, "--field", "likely_harm")
    got = csv(s / "rounds/1/ratings.csv")
    assert got[["item_id", "rater", "field", "value"]].values.tolist() == [
        ["MF-01", "onc_a", "likely_harm", "yes"],
        ["MF-01", "onc_b", "likely_harm", "yes"],
        ["MF-02", "onc_a", "likely_harm", "no"],  # reject of a yes/no question is its absent value
    ]
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", rmap, "--field", "likely_harn", code=1)
    assert "not a rated field of schema medfail" in res.output and "likely_harm" in res.output


def test_a_file_without_annotators_is_the_files_annotator(tmp_path):
    """No line names its annotator (an older Prodigy, one file per annotator): the file's name is
    the annotator, to map with --rater (issue 33; it was refused).  A file naming the annotator on
    some lines only is refused: tests/test_real_exports.py."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps({"text": "x", "label": "Supported", "answer": "accept", "_input_hash": 1}) + "\n")
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", code=1)
    assert "annotator 'bad' is not a rater of this study" in res.output and "--rater bad=RATER" in res.output
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", "bad=onc_a")
    assert "every answer is read as annotator 'bad', the file's name" in res.output
