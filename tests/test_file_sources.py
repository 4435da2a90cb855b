"""Prodigy and doccano files taken into a round (``pull --from-file``): a null or empty item id,
two different answers at one time, a timestamp that is no time, an empty file, a field the file
never answers or answers only invalidly, a file whose every answer another source gave: refused
naming the file and line, with the words a table pull uses.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from builders import RATERS, file_pull_refused, one_error, study_and_file, study_files, task
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run
from conftest import run_cli as run_ok

from goldboard.study import Study

PRODIGY = Path(__file__).parent / "data" / "prodigy" / "mtb_review.jsonl"
PRODIGY_RATERS = ["--rater", "mtb_review-ana=onc_a,mtb_review-ben=onc_b,mtb_review-cy=onc_c"]


def test_file_pull_whose_every_answer_another_source_gave_is_refused(tmp_path):
    """Before: exit 0, "0 rated ... x already rated from another source", and the copy recorded in
    study.toml as a second source of round 1."""
    s = tmp_path / "st"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    first = tmp_path / "mtb_review.jsonl"
    shutil.copy(PRODIGY, first)
    invoke_cli("pull", "--study", s, "--from-file", f"prodigy={first}", *PRODIGY_RATERS, code=0)
    copy = tmp_path / "mtb_review_fixed.jsonl"
    shutil.copy(PRODIGY, copy)
    before = study_files(s)
    err = one_error(invoke_cli("pull", "--study", s, "--from-file", f"prodigy={copy}", *PRODIGY_RATERS, "--round", 1))
    assert f"{copy}: nothing pulled: " in err and "already in round 1 from 'mtb_review.jsonl'" in err, err
    assert "with this file's, pull it as that source (--source mtb_review.jsonl" in err, err
    assert "give --round 2" in err, err
    assert study_files(s) == before
    # the advice works: as that source it replaces it; as round 2 it is a new round
    invoke_cli(
        "pull", "--study", s, "--from-file", f"prodigy={copy}", *PRODIGY_RATERS, "--source", "mtb_review.jsonl", code=0
    )
    invoke_cli("pull", "--study", s, "--from-file", f"prodigy={copy}", *PRODIGY_RATERS, "--round", 2, code=0)
    assert sorted(Study.open(s).round(1).tables) == ["mtb_review.jsonl"]


def test_file_pull_with_some_new_answers_is_still_taken(tmp_path):
    """A file of which only some answers were given by another source pulls the rest (unchanged)."""
    s = tmp_path / "st"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,label\nMTB-0001,onc_a,Supported\n")
    invoke_cli("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-col", "rater",
               "--label-col", "label", "--field", "safety_label", code=0)  # fmt: skip
    res = invoke_cli("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", *PRODIGY_RATERS, "--round", 1, code=0)
    assert "1 x already rated from another source" in res.output, res.output


def test_file_pull_whose_every_item_the_pushed_study_lacks_is_refused(tmp_path):
    """A study whose units were pushed: a file all of whose items it does not know is refused,
    pointing at --item-key (before: exit 0, the file recorded as a source of round 1)."""
    s = tmp_path / "st"
    st = Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    rnd = st.get_or_add_round(1)
    rnd.projects = {"onc_a": 11, "onc_b": 12, "onc_c": 13}
    st.save()
    unit = {"item_id": "MTB-9", "case_id": "MTB-9", "output_id": "", "model": "", "case_text": "x", "rounds": [1]}
    (s / "units.jsonl").write_text(json.dumps(unit) + "\n")
    before = study_files(s)
    err = one_error(invoke_cli("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", *PRODIGY_RATERS))
    assert "nothing pulled: all 6 ratings are of items not in this study's units" in err, err
    assert "check --item-key" in err, err
    assert study_files(s) == before


@pytest.mark.parametrize("at,hint", [(1767261600000, "looks like milliseconds"), (99999999999999, ""), (-5, "")])
def test_a_prodigy_timestamp_out_of_range_is_one_line_naming_the_line(tmp_path, at, hint):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-2", at=at)])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {f}:2: _timestamp {at} is no time between 1970 and 2100")
    assert hint in line and not (s / "rounds").exists(), res.output


@pytest.mark.parametrize("meta", [{"item_id": None}, {"item_id": ""}, {"item_id": "  "}])
def test_n14_a_null_or_empty_item_id_is_refused_not_read_as_the_input_hash(tmp_path, meta):
    bad = task("x")
    bad["meta"] = meta
    s, f = study_and_file(tmp_path, [task("MTB-1"), bad])
    out = file_pull_refused(s, f)
    assert f"{f}:2: item_id is " in out and "empty item id" in out


def test_n14_no_item_key_at_all_still_falls_back_to_the_input_hash(tmp_path):
    rec = task("x")
    del rec["meta"]
    s, f = study_and_file(tmp_path, [rec])
    run_ok("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert "123" in (s / "rounds/1/ratings.csv").read_text()


def test_n102_a_field_whose_answers_are_all_invalid_is_refused(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-2")])
    out = file_pull_refused(s, f, "--field", "missing_info")
    # issue 33: a choice block is read one field at a time: the ticks are safety_label's, said so
    assert f"{f}: no answer of field missing_info" in out and "--field safety_label to read that one" in out


def test_n13_two_different_answers_at_one_time_are_refused_naming_both_lines(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-1", value="Unsupported")])
    out = file_pull_refused(s, f)
    assert f"{f}:1, {f}:2: two different answers by p-ana to item 'MTB-1' at the same time" in out


def test_n13_a_later_answer_still_supersedes(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-1", value="Unsupported", at=1767261700)])
    res = run_ok("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert "1 superseded" in res.output


def test_n29_doccano_id_twice_with_different_labels_is_refused(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / "onc_a.jsonl"
    lines = [{"id": 1, "label": ["Supported"]}, {"id": 1, "label": ["Unsupported"]}]
    f.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = run_ok("pull", "--study", s, "--from-file", f"doccano={f}", code=1).output
    assert f"{f}:1, {f}:2: two different answers by onc_a to item '1' with no time to order them" in out


@pytest.mark.parametrize("stamp", ["yesterday", None, True, [1]])
def test_n10_a_timestamp_that_is_not_a_number_is_refused(tmp_path, stamp):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-2", at=stamp)])
    out = file_pull_refused(s, f)
    assert f"{f}:2: _timestamp {json.dumps(stamp)} is not a number" in out


def test_n08_an_empty_export_is_refused(tmp_path):
    s, f = study_and_file(tmp_path, [])
    out = file_pull_refused(s, f)
    assert f"{f}: no answer of field safety_label" in out


def test_n102_a_field_the_file_never_answers_is_refused(tmp_path):
    rec = task("MTB-1")
    for k in ("options", "accept"):
        del rec[k]
    rec.update(label="Supported", answer="reject")  # a rejected label of a categorical field holds no rating
    s, f = study_and_file(tmp_path, [rec])
    out = file_pull_refused(s, f, "--field", "safety_label")
    assert f"{f}: no answer of field safety_label" in out and "answer 'reject' of label" in out


def test_n13_the_same_answer_twice_at_one_time_is_not_a_conflict(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-1")])
    res = run_ok("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert "onc_a: 1 rated" in res.output
