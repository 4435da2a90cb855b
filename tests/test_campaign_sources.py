"""Issue 23 (campaign 4): silent acceptances of the Prodigy/doccano file sources and of empty
option values.  Each test failed on the code before its fix (checked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke_cli

from goldboard.cases.ids import id_key
from goldboard.study import Study

RATERS = "p-ana=onc_a,p-ben=onc_b"


def run(*args, code=0):
    res = invoke_cli(*[str(a) for a in args])
    assert "Traceback" not in res.output, res.output
    assert res.exit_code == code, res.output
    return res


def task(item, who="p-ana", value="Supported", at=1767261600, **extra):
    rec = {"text": "t", "meta": {"item_id": item}, "options": [{"id": value, "text": value}], "accept": [value]}
    rec.update({"answer": "accept", "_input_hash": 123, "_timestamp": at, "_annotator_id": who}, **extra)
    return rec


def study_and_file(tmp_path: Path, records: list[dict], name: str = "p.jsonl") -> tuple[Path, Path]:
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / name
    f.write_text("".join(json.dumps(r) + "\n" for r in records))
    return s, f


def pull_refused(s: Path, f: Path, *more) -> str:
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS, *more, code=1)
    assert not (s / "rounds/1/ratings.csv").exists()  # nothing written
    return res.output


@pytest.mark.parametrize("meta", [{"item_id": None}, {"item_id": ""}, {"item_id": "  "}])
def test_n14_a_null_or_empty_item_id_is_refused_not_read_as_the_input_hash(tmp_path, meta):
    bad = task("x")
    bad["meta"] = meta
    s, f = study_and_file(tmp_path, [task("MTB-1"), bad])
    out = pull_refused(s, f)
    assert f"{f}:2: item_id is " in out and "empty item id" in out


def test_n14_no_item_key_at_all_still_falls_back_to_the_input_hash(tmp_path):
    rec = task("x")
    del rec["meta"]
    s, f = study_and_file(tmp_path, [rec])
    run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert "123" in (s / "rounds/1/ratings.csv").read_text()


def test_id_key_numbers_by_value():
    assert id_key("1E5") == id_key("100000") and id_key("-0") == id_key("0") == id_key("0.0")
    assert id_key("7") == id_key("007") == id_key("7.0") and id_key("-5") != id_key("5")


@pytest.mark.parametrize("a,b", [("C1", "c1"), ("7", "007"), ("7", "7.0"), ("1E5", "100000"), ("-0", "0")])
def test_n06_item_ids_twins_by_the_table_rules_are_refused(tmp_path, a, b):
    s, f = study_and_file(tmp_path, [task(a), task(b, who="p-ben")])
    out = pull_refused(s, f)
    assert f"{f}:1, {f}:2: item ids {a!r} and {b!r}" in out


@pytest.mark.parametrize("item", ["NA", "#N/A", "1.23E+05"])
def test_n22_placeholder_and_scientific_item_ids_are_refused_as_in_tables(tmp_path, item):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task(item)])
    out = pull_refused(s, f)
    assert f"{f}:2: item id {item!r} is " in out


def test_n06_doccano_twin_ids_are_refused_in_the_shared_path(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / "onc_a.jsonl"
    f.write_text(json.dumps({"id": 1, "item_id": "C1", "label": ["Supported"]}) + "\n")
    f.write_text(f.read_text() + json.dumps({"id": 2, "item_id": "c1", "label": ["Unsupported"]}) + "\n")
    out = run("pull", "--study", s, "--from-file", f"doccano={f}", code=1).output
    assert "item ids 'C1' and 'c1' differ only in letter case" in out


def test_n102_a_field_whose_answers_are_all_invalid_is_refused(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-2")])
    out = pull_refused(s, f, "--field", "missing_info")
    # issue 33: a choice block is read one field at a time: the ticks are safety_label's, said so
    assert f"{f}: no answer of field missing_info" in out and "--field safety_label to read that one" in out


def test_n13_two_different_answers_at_one_time_are_refused_naming_both_lines(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-1", value="Unsupported")])
    out = pull_refused(s, f)
    assert f"{f}:1, {f}:2: two different answers by p-ana to item 'MTB-1' at the same time" in out


def test_n13_a_later_answer_still_supersedes(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-1", value="Unsupported", at=1767261700)])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert "1 superseded" in res.output


def test_n29_doccano_id_twice_with_different_labels_is_refused(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / "onc_a.jsonl"
    lines = [{"id": 1, "label": ["Supported"]}, {"id": 1, "label": ["Unsupported"]}]
    f.write_text("".join(json.dumps(r) + "\n" for r in lines))
    out = run("pull", "--study", s, "--from-file", f"doccano={f}", code=1).output
    assert f"{f}:1, {f}:2: two different answers by onc_a to item '1' with no time to order them" in out


@pytest.mark.parametrize("stamp", ["yesterday", None, True, [1]])
def test_n10_a_timestamp_that_is_not_a_number_is_refused(tmp_path, stamp):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-2", at=stamp)])
    out = pull_refused(s, f)
    assert f"{f}:2: _timestamp {json.dumps(stamp)} is not a number" in out


def test_n08_an_empty_export_is_refused(tmp_path):
    s, f = study_and_file(tmp_path, [])
    out = pull_refused(s, f)
    assert f"{f}: no answer of field safety_label" in out


def test_n102_a_field_the_file_never_answers_is_refused(tmp_path):
    rec = task("MTB-1")
    for k in ("options", "accept"):
        del rec[k]
    rec.update(label="Supported", answer="reject")  # a rejected label of a categorical field holds no rating
    s, f = study_and_file(tmp_path, [rec])
    out = pull_refused(s, f, "--field", "safety_label")
    assert f"{f}: no answer of field safety_label" in out and "answer 'reject' of label" in out


@pytest.mark.parametrize("flag", ["--source", "--item-key", "--field"])
def test_n98_an_empty_option_value_is_refused(tmp_path, flag):
    s, f = study_and_file(tmp_path, [task("MTB-1")])
    out = pull_refused(s, f, flag, "")
    assert f"{flag} '': an empty value" in out


def test_n100_adjudicate_pull_refuses_an_empty_adjudicator(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    out = run("adjudicate", "pull", "--study", s, "--adjudicator", "", code=1).output
    assert "--adjudicator '': an empty value" in out  # the one empty-text check of every command


def test_agree_refuses_an_empty_field(tmp_path):
    s, f = study_and_file(
        tmp_path, [task("MTB-1"), task("MTB-1", who="p-ben"), task("MTB-2"), task("MTB-2", who="p-ben")]
    )
    run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    run("agree", "--study", s)
    assert "--field '': an empty value" in run("agree", "--study", s, "--field", "", code=1).output


def test_n13_the_same_answer_twice_at_one_time_is_not_a_conflict(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-1")])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert "onc_a: 1 rated" in res.output
