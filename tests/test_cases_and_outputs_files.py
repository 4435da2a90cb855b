"""Cases and model-output files of odd shapes: a blank model, an output without its text, a header
line repeated mid-file (two CSV files pasted together) in cases, sampler, table and plain ratings
files, a Latin-1 or UTF-16 file, a displayed column blank in every case: each an error or warning
naming the file, line and field, never read as something else.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
import pytest
from builders import write_jsonl
from conftest import error_line
from conftest import run_cli as run_ok

from goldboard import fileio
from goldboard.cases import inspect_files, validate_files
from goldboard.errors import GoldboardError


@pytest.fixture()
def synth(tmp_path) -> tuple[Path, list[dict]]:
    """Three synthetic MTB cases and their six outputs (each with text and a predicted_label)."""
    cases, outs = tmp_path / "cases.jsonl", tmp_path / "outs.jsonl"
    run_ok("cases", "synth", "--schema", "mtb", "-n", 3, "--seed", 3, "-o", cases, "--outputs-output", outs)
    return cases, [json.loads(line) for line in outs.read_text().splitlines()]


def _errors(cases: Path, outputs: Path | None = None) -> list[str]:
    return [str(p) for p in validate_files(cases, outputs, schema="mtb") if p.is_error]


@pytest.mark.parametrize("key,blank", [("model", "  "), ("model", None), ("model", "")])
def test_a_blank_model_is_an_error_naming_line_and_field_not_the_file_name(synth, tmp_path, key, blank):
    cases, outs = synth
    outs[1][key] = blank
    path = write_jsonl(tmp_path / "o_blankmodel.jsonl", outs)
    assert _errors(cases, path) == [
        f"{path}:2: model: blank: name the model that wrote this output (the file's name is used only when the "
        "file has no model column)"
    ]
    res = run_ok("cases", "validate", cases, "--outputs", path, "--schema", "mtb", code=1)
    assert "OK:" not in res.output and "models: o_blankmodel" not in res.output


def test_a_blank_model_cell_of_a_csv_is_an_error_and_no_model_column_keeps_the_file_name(synth, tmp_path):
    cases, outs = synth
    rows = [{k: o[k] for k in ("case_id", "model", "output")} for o in outs]
    rows[3]["model"] = ""
    path = tmp_path / "outs.csv"
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["case_id", "model", "output"])
        w.writeheader()
        w.writerows(rows)
    assert _errors(cases, path) == [
        f"{path}:5: model: blank: name the model that wrote this output (the file's name is used only when the file has no model column)"
    ]
    one_model = write_jsonl(tmp_path / "gpt-x.jsonl", [{k: o[k] for k in ("case_id", "output")} for o in outs[::2]])
    res = inspect_files(cases, one_model, schema="mtb")
    assert res.ok and res.summary["models"] == ["gpt-x"]  # documented: no model column, the file's stem


@pytest.mark.parametrize("how", ["null", "blank", "absent"])
def test_an_output_without_its_text_among_outputs_with_text_is_an_error(synth, tmp_path, how):
    cases, outs = synth
    if how == "absent":
        del outs[0]["output"]
    else:
        outs[0]["output"] = None if how == "null" else " \t"
    path = write_jsonl(tmp_path / "o_text.jsonl", outs)
    word = "missing" if how == "absent" else "blank"
    assert _errors(cases, path) == [
        f"{path}:1: output: {word}: the file's other outputs give the model's text in output; raters would see "
        "only a text composed from predicted_label here (give the text, or no text column at all)"
    ]


def test_prediction_records_without_any_text_column_are_still_composed(synth, tmp_path):
    cases, outs = synth
    for o in outs:
        del o["output"]
    res = inspect_files(cases, write_jsonl(tmp_path / "preds.jsonl", outs), schema="mtb")
    assert res.ok and len(res.units) == 6
    assert all(t.startswith("Assessment: ") for t in res.units["output_text"])


PASTED = "case_id,patient_summary,proposed_therapy\nC1,s1,osimertinib\nC2,s2,osimertinib\n"


def test_cases_validate_refuses_a_header_repeated_mid_file(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text(PASTED + " case_id , patient_summary,proposed_therapy\nC3,s3,osimertinib\n")
    res = run_ok("cases", "validate", path, "--schema", "mtb", code=1)
    assert res.stdout.splitlines()[0] == (
        f"{path}:4: the header row repeated here (two files pasted together?): remove this line"
    )


def test_plan_sample_refuses_a_repeated_header_and_writes_nothing(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text(PASTED + PASTED)
    for seed in (1, 4, 5, 6):  # the seeds that drew 'case_id' before
        out = tmp_path / f"s{seed}.csv"
        res = run_ok("plan", "sample", "--cases", path, "-n", 2, "--seed", seed, "-o", out, code=1)
        assert error_line(res) == (
            f"Error: {path}:4: the header row repeated here (two files pasted together?): remove this line"
        )
        assert not out.exists()


@pytest.mark.parametrize("shape", ["wide", "long"])
def test_pull_from_table_refuses_a_repeated_header_on_both_readers(tmp_path, shape):
    s = tmp_path / "st"
    run_ok("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    if shape == "wide":
        head, rows = "case_id,a,b\n", "C1,Supported,Supported\nC2,Unsupported,Supported\n"
        args = ["--rater-cols", "onc_a=a,onc_b=b"]
    else:
        head, rows = "case_id,rater,label\n", "C1,onc_a,Supported\nC1,onc_b,Unsupported\n"
        args = ["--rater-col", "rater", "--label-col", "label"]
    table = tmp_path / "t.csv"
    table.write_text(head + rows + head + rows.replace("C1", "C3").replace("C2", "C4"))
    assert fileio.read_csv_cells(table) is None  # the column reader leaves it to the records reader
    with pytest.raises(GoldboardError, match=r"t\.csv:4: the header row repeated here"):
        fileio.read_records(table)
    res = run_ok(
        "pull", "--study", s, "--from-table", table, "--item-col", "case_id", "--field", "safety_label", *args, code=1
    )
    assert (
        error_line(res)
        == f"Error: {table}:4: the header row repeated here (two files pasted together?): remove this line"
    )
    assert not (s / "rounds").exists()


def test_a_workbook_with_its_header_repeated_is_refused_naming_the_row(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["case_id", "text"], ["C1", "t1"], ["case_id", "text"], ["C2", "t2"]):
        ws.append(row)
    path = tmp_path / "cases.xlsx"
    wb.save(path)
    with pytest.raises(GoldboardError) as exc:
        fileio.read_records(path)
    assert (
        str(exc.value)
        == f"{path}: sheet Sheet, row 3: the header row repeated here (two files pasted together?): remove this line"
    )


def test_a_row_that_only_shares_the_first_cell_with_the_header_is_data(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_text("case_id,text\ncase_id,a case really named so\n")
    assert [r for _, r in fileio.read_records(path)] == [{"case_id": "case_id", "text": "a case really named so"}]


def test_a_latin1_cases_file_names_line_column_byte_and_the_advice(tmp_path):
    path = tmp_path / "cases.csv"
    path.write_bytes(b"case_id,patient_summary,proposed_therapy\nC1,caf\xe9 summary,osimertinib\n")
    res = run_ok("cases", "validate", path, "--schema", "mtb", code=1)
    assert res.stdout.splitlines()[0] == (
        f"{path}:2: not UTF-8 text (column 7: byte 0xE9, 'é' in Windows-1252 or Latin-1); save it as 'CSV UTF-8' "
        "(Excel: Save As, CSV UTF-8) or as UTF-8 text"
    )
    with pytest.raises(GoldboardError, match=r"cases\.csv:2: not UTF-8 text \(column 7: byte 0xE9"):
        fileio.read_records(path)


def test_a_latin1_jsonl_and_a_utf16_csv_get_the_same_helper(tmp_path):
    jl = tmp_path / "cases.jsonl"
    jl.write_bytes(b'{"case_id": "C1", "text": "ok"}\n{"case_id": "C2", "text": "na\xefve"}\n')
    assert _errors(jl) == [
        f"{jl}:2: not UTF-8 text (column 30: byte 0xEF, 'ï' in Windows-1252 or Latin-1); save it as UTF-8 text"
    ]
    u16 = tmp_path / "cases.csv"
    u16.write_bytes("case_id,text\nC1,t\n".encode("utf-16"))
    with pytest.raises(GoldboardError) as exc:
        fileio.read_records(u16)
    assert (
        str(exc.value)
        == f"{u16}:1: not UTF-8 text: it is UTF-16; save it as 'CSV UTF-8' (Excel: Save As, CSV UTF-8) or as UTF-8 text"
    )


def test_a_displayed_column_blank_in_every_case_is_a_warning_naming_it(tmp_path):
    path = tmp_path / "blank.csv"
    path.write_text("case_id,patient_summary,proposed_therapy,pdl1\nC1,s1,osimertinib,\nC2,s2,osimertinib,\n")
    res = inspect_files(path, schema="mtb")
    assert res.ok
    assert [str(p) for p in res.problems] == [
        f"{path}:2: pdl1: warning: blank in all 2 cases: raters will read 'PD-L1: not documented' in every case "
        "(was the column emptied by an export? fill it, or leave the column out)"
    ]
    path.write_text("case_id,patient_summary,proposed_therapy,pdl1\nC1,s1,osimertinib,\nC2,s2,osimertinib,50%\n")
    assert inspect_files(path, schema="mtb").problems == []  # filled once: a case's missing value, no note


@pytest.mark.parametrize("reader", ["flag", "doccano"])
def test_the_other_readers_of_a_users_text_file_give_the_same_message(tmp_path, reader):
    """`flag FILE` read a ratings CSV's codec error raw ("'utf-8' codec can't decode byte 0xe9 in
    position 29"); a doccano export said only "not UTF-8 text"."""
    if reader == "flag":
        path = tmp_path / "r.csv"
        path.write_bytes(b"item_id,rater,field,value\nC1,onc_a,safety_label,Supported\nCaf\xe9,onc_a,safety_label,x\n")
        res = run_ok("flag", path, "--schema", "mtb", code=1)
        want = f"{path}:3: not UTF-8 text (column 4: byte 0xE9, 'é' in Windows-1252 or Latin-1); save it as 'CSV UTF-8'"
    else:
        s = tmp_path / "st"
        run_ok("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
        path = tmp_path / "d.jsonl"
        path.write_bytes(b'{"id": 1, "text": "caf\xe9", "label": ["Supported"]}\n')
        res = run_ok("pull", "--study", s, "--from-file", f"doccano={path}", "--rater", "d=onc_a", code=1)
        want = f"{path}:1: not UTF-8 text (column 23: byte 0xE9, 'é' in Windows-1252 or Latin-1); save it as UTF-8 text"
    assert error_line(res).startswith(f"Error: {want}")


@pytest.mark.parametrize("command", ["flag", "agree"])
def test_a_plain_ratings_file_with_its_header_repeated_is_refused(tmp_path, command):
    """`flag r.csv` counted the repeated header as an item 'item_id' missing a rating."""
    head = "item_id,rater,field,value\n"
    path = tmp_path / "r.csv"
    path.write_text(
        head
        + "C1,onc_a,safety_label,Supported\nC1,onc_b,safety_label,Supported\n"
        + head
        + "C2,onc_a,safety_label,Supported\nC2,onc_b,safety_label,Unsupported\n"
    )
    args = ["--schema", "mtb"] if command == "flag" else []
    res = run_ok(command, path, *args, code=1)
    assert (
        error_line(res)
        == f"Error: {path}:4: the header row repeated here (two files pasted together?): remove this line"
    )
