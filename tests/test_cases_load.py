"""Loading cases and model outputs: every input format, every error message, all problems at once."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import invoke_cli

from goldboard.cases import CaseFileError, inspect_files, load_units, prediction_text, validate_files
from goldboard.cases.units import UNIT_COLUMNS
from goldboard.errors import GoldboardError

DATA = Path(__file__).parent / "data" / "cases"


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copy(DATA / name, dst)
    return dst


def _write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def _strs(problems) -> list[str]:
    return [str(p) for p in problems]


# --------------------------------------------------------------------------- formats


def test_openmtb_cases_with_named_prediction_lists():
    df = load_units(DATA / "openmtb_cases.json", DATA / "openmtb_predictions.json", schema="mtb")
    assert list(df.columns[: len(UNIT_COLUMNS)]) == UNIT_COLUMNS
    assert len(df) == 6  # 3 cases x 2 systems
    assert sorted(df["model"].unique()) == ["Base LLM (sim-small)", "Checklist (sim-large)"]
    assert df["item_id"].is_unique and (df["item_id"] == df["output_id"]).all()
    row = df[(df.case_id == "T-002") & (df.model == "Checklist (sim-large)")].iloc[0]
    # reference labels kept in the case and canonicalised (alias Insufficient Info)
    assert row["case"]["support_label"] == "Insufficient Info"
    assert row["reference"] == {"safety_label": "Insufficient Information", "missing_info": "stage|ecog_status"}
    assert row["prediction"] == {"safety_label": "Insufficient Information"}
    # output text composed from the prediction, readable
    assert row["output_text"].splitlines()[0] == "Assessment: Insufficient Information"
    assert "Missing information flagged: stage, ecog_status" in row["output_text"]
    assert "Summary: Stage and ECOG missing." in row["output_text"]
    # case text composed from the displayed fields; reference labels are never shown
    assert "Genomic alteration: ALK fusion (EML4-ALK)" in row["case_text"]
    assert "Brain metastases: no" in row["case_text"]
    # the blanked stage reads "not documented" (what Insufficient Information rests on); no label leaks
    assert "Insufficient" not in row["case_text"] and "Stage: not documented" in row["case_text"].splitlines()
    assert not df["synthetic"].any()


def test_openmtb_inputs_jsonl_and_prediction_array_model_from_file_stem():
    df = load_units(DATA / "openmtb_inputs.jsonl", DATA / "agent_predictions.json", schema="mtb")
    assert list(df["model"]) == ["agent_predictions"] * 2
    assert list(df["item_id"]) == ["T-001::agent_predictions", "T-002::agent_predictions"]
    assert df.iloc[1]["prediction"] == {"safety_label": "Partially Supported"}
    assert df.iloc[0]["reference"] == {}


def test_prediction_false_positive_missing_fields_are_shown_not_rejected():
    # predicted_missing_fields is model output: an off-vocabulary name is displayed, not an error
    df = load_units(DATA / "openmtb_cases.json", DATA / "openmtb_predictions.json", schema="mtb")
    row = df[(df.case_id == "T-002") & (df.model == "Base LLM (sim-small)")].iloc[0]
    assert "smoking_history" in row["output_text"]


def test_medfail_cases_and_raw_outputs():
    df = load_units(DATA / "medfail_cases.jsonl", DATA / "medfail_raw_outputs.jsonl", schema="medfail")
    assert list(df["item_id"]) == ["MF-01::sim-a", "MF-01::sim-b", "MF-02::sim-a"]
    assert df.iloc[1]["output_text"].startswith("It is probably indigestion")
    assert "Prompt: My father (68)" in df.iloc[0]["case_text"]
    assert "Specialty: emergency medicine" in df.iloc[0]["case_text"]
    # `prompt` is accepted for prompt_text; reference gates are checked and canonical
    assert "Prompt: How much ibuprofen" in df.iloc[2]["case_text"]
    assert df.iloc[0]["reference"] == {"safety_gate": "missed_urgent_escalation"}
    assert df.iloc[2]["reference"] == {"safety_gate": "unsafe_remote_dosing"}


def test_medfail_raw_outputs_alone_give_cases_and_outputs():
    res = inspect_files(DATA / "medfail_raw_outputs.jsonl", schema="medfail")
    assert res.ok, _strs(res.problems)
    assert res.summary["cases"] == 2 and res.summary["outputs"] == 3
    assert list(res.units["model"]) == ["sim-a", "sim-b", "sim-a"]


def test_radsafe_json_options_dict_list_and_numbered_flags():
    df = load_units(DATA / "radsafe_questions.json", schema="radsafe")
    assert list(df["item_id"]) == ["1", "2"]  # integer ids become text
    q1, q2 = df.iloc[0], df.iloc[1]
    assert q1["option_A"] == "CT angiography of the head and neck" and q1["option_E"].startswith("Discharge")
    assert "Evidence: In suspected acute ischemic stroke" in q1["case_text"]  # from metadata.evidence_clean
    assert q1["reference"]["unsafe_B"] == "yes" and q1["reference"]["unsafe_A"] == "no"
    assert q1["reference"]["contradicts_D"] == "yes" and q1["reference"]["high_risk_D"] == "no"
    assert q2["option_D"] == "Air bronchograms" and q2["option_E"] == ""  # list options -> A..D
    assert q2["reference"] == {}


def test_radsafe_csv_option_columns():
    df = load_units(DATA / "radsafe_questions.csv", schema="radsafe")
    row = df.iloc[0]
    assert (row["option_A"], row["option_B"], row["option_C"], row["option_D"]) == (
        "Ultrasound",
        "CT with contrast",
        "No imaging",
        "",
    )
    assert row["reference"] == {"high_risk_B": "yes"}


def test_radsafe_outputs_do_not_multiply_units(tmp_path):
    out = _write_jsonl(
        tmp_path / "answers.jsonl",
        [
            {"question_id": 1, "model": "m1", "answer": "A", "condition": "closed_book"},
            {"question_id": 1, "model": "m1", "answer": "B", "condition": "clean_evidence"},
            {"question_id": 2, "model": "m1", "answer": "C", "condition": "closed_book"},
        ],
    )
    df = load_units(DATA / "radsafe_questions.json", out, schema="radsafe")
    assert len(df) == 2 and list(df["output_id"]) == ["", ""]
    outs = inspect_files(DATA / "radsafe_questions.json", out, schema="radsafe").outputs
    assert list(outs["output_id"]) == ["1::m1::closed_book", "1::m1::clean_evidence", "2::m1::closed_book"]


def test_generic_csv_pair():
    df = load_units(DATA / "generic_cases.csv", DATA / "generic_outputs.csv", schema="mtb")
    assert list(df["item_id"]) == ["C-1::sim-a", "C-1::sim-b", "C-2::sim-a"]
    assert df.iloc[0]["case_text"].startswith("A 55-year-old")
    assert df.iloc[1]["output_text"] == "Recommend erlotinib, which is equivalent to osimertinib."


def test_generic_xlsx_pair_with_numeric_ids_and_output_ids(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["case_id", "text", "synthetic"])
    ws.append([1, "First case text", True])
    ws.append([2, "Second case text", False])
    wb.save(tmp_path / "cases.xlsx")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["output_id", "case_id", "model", "output"])
    ws.append(["o-1", 1, "m", "answer one"])
    ws.append(["o-2", 1, "m", "answer two (second sample)"])
    ws.append(["o-3", 2.0, "m", "answer three"])
    wb.save(tmp_path / "outputs.xlsx")
    df = load_units(tmp_path / "cases.xlsx", tmp_path / "outputs.xlsx", schema="mtb")
    assert list(df["item_id"]) == ["o-1", "o-2", "o-3"]
    assert list(df["case_id"]) == ["1", "1", "2"]
    assert list(df["synthetic"]) == [True, True, False]


def test_cases_without_outputs_are_units_themselves():
    df = load_units(DATA / "generic_cases.csv", schema="mtb")
    assert list(df["item_id"]) == ["C-1", "C-2"] and list(df["output_id"]) == ["", ""]


def test_prediction_text_docstring_example():
    assert prediction_text(
        {"predicted_label": "Unsupported", "predicted_abstain": True, "predicted_missing_fields": ["stage"]}
    ) == ("Assessment: Unsupported\nAbstain / refer to a human reviewer: yes\nMissing information flagged: stage")


# --------------------------------------------------------------------------- errors


def test_every_problem_reported_at_once_with_file_line_field(tmp_path):
    cases = _write_jsonl(
        tmp_path / "cases.jsonl",
        [
            {"case_id": "C-1", "text": "ok", "support_label": "Supported"},
            {"case_id": "C-2", "text": "ok", "support_label": "Maybe"},  # 2: label outside schema
            {"case_id": "C-1", "text": "again"},  # 3: duplicate id
            {"text": "no id"},  # 4: missing id
            '{"case_id": "C-5", "text": ',  # 5: invalid JSON
            {"case_id": "C-6"},  # 6: no text
            {"case_id": "C-7", "text": "x", "missing_info_flags": ["stage", "smoking"]},  # 7: bad multi value
        ],
    )
    outputs = _write_jsonl(
        tmp_path / "outputs.jsonl",
        [
            {"case_id": "C-1", "model": "m", "output": "fine"},
            {"case_id": "C-9", "model": "m", "output": "for an unknown case"},  # 2
            {"case_id": "C-1", "model": "m", "output": "same model again"},  # 3: duplicate output
            {"case_id": "C-2", "model": "m"},  # 4: no output text
            {"case_id": "C-2", "model": "m2", "predicted_label": "Safe"},  # 5: label outside schema, no text
            {"model": "m", "output": "no case"},  # 6: missing case id
            {"output_id": "x", "case_id": "C-2", "model": "m3", "output": "a"},  # 7
            {"output_id": "x", "case_id": "C-7", "model": "m3", "output": "b"},  # 8: duplicate output id
        ],
    )
    problems = [p for p in validate_files(cases, outputs, schema="mtb") if p.is_error]
    got = _strs(problems)
    c, o = str(cases), str(outputs)
    expected = [
        f"{c}:2: support_label: 'Maybe' is not a value of safety_label (allowed: Supported, Partially Supported, "
        f"Unsupported, Insufficient Information)",
        f"{c}:3: case_id: duplicate id 'C-1' (first at line 1)",
        f"{c}:4: case_id: missing (give one of: case_id, scenario_id, question_id, prompt_id, id)",
        f"{c}:5: invalid JSON: Expecting value (column 28)",
        f"{c}:6: text: no case text to show",
        f"{c}:7: missing_info_flags: 'smoking' is not a value of missing_info",
        f"{o}:2: case_id: unknown case 'C-9' (not in {c})",
        f"{o}:3: model: case 'C-1' already has an output from model 'm' at line 1 (add an output_id column to keep both)",
        f"{o}:4: output: missing (give one of:",
        f"{o}:5: predicted_label: 'Safe' is not a value of safety_label",
        f"{o}:5: output: missing: the file's other outputs give the model's text in output",
        f"{o}:6: case_id: missing",
        f"{o}:8: output_id: duplicate id 'x' (first at line 7)",
    ]
    assert len(got) == len(expected), "\n".join(got)
    for g, e in zip(got, expected):
        assert g.startswith(e), f"{g!r} does not start with {e!r}"
    warnings = [str(p) for p in validate_files(cases, outputs, schema="mtb") if not p.is_error]
    assert warnings == [
        f"{c}:6: case_id: warning: case 'C-6' has no model output; it is not an item to rate",
        f"{c}:7: case_id: warning: case 'C-7' has no model output; it is not an item to rate",
    ]


def test_load_units_raises_with_all_problems(tmp_path):
    cases = _write_jsonl(
        tmp_path / "cases.jsonl", [{"case_id": "A", "text": "t"}, {"case_id": "A", "text": "u"}, {"case_id": "B"}]
    )
    with pytest.raises(CaseFileError) as ei:
        load_units(cases, schema="mtb")
    msg = str(ei.value)
    assert isinstance(ei.value, GoldboardError)
    assert msg.splitlines()[0] == "2 problems in the case files:"
    assert f"{cases}:2: case_id: duplicate id 'A' (first at line 1)" in msg
    assert f"{cases}:3: text: no case text to show" in msg
    assert len(ei.value.problems) == 2


def test_json_array_problems_point_at_the_record_line(tmp_path):
    data = json.loads((DATA / "openmtb_cases.json").read_text())
    data[1]["support_label"] = "Probably fine"
    p = tmp_path / "benchmark_cases.json"
    p.write_text(json.dumps(data, indent=2))
    line_of_second = p.read_text().splitlines().index("  {", 2) + 1
    (prob,) = validate_files(p, schema="mtb")
    assert prob.line == line_of_second
    assert str(prob).startswith(f"{p}:{line_of_second}: support_label: 'Probably fine' is not a value")


@pytest.mark.parametrize(
    "content,suffix,expected",
    [
        ("", ".jsonl", "file is empty"),
        ("   \n", ".json", "file is empty"),
        ("", ".csv", "file is empty"),
        ("case_id,text\n", ".csv", "no data rows under the header"),
        ("[]", ".json", "no records"),
        ("{}", ".txt", "unsupported file type .txt"),
    ],
)
def test_empty_and_unsupported_files(tmp_path, content, suffix, expected):
    p = tmp_path / f"cases{suffix}"
    p.write_text(content)
    got = _strs(validate_files(p, schema="mtb"))
    assert got == [f"{p}: {expected}"] or (got and got[0].startswith(f"{p}: {expected}")), got


def test_missing_file(tmp_path):
    assert _strs(validate_files(tmp_path / "nope.jsonl", schema="mtb")) == [
        f"{tmp_path / 'nope.jsonl'}: file not found"
    ]


def test_radsafe_problems(tmp_path):
    p = _write_jsonl(
        tmp_path / "q.jsonl",
        [
            {"question_id": "Q1", "question": "q?"},  # no options
            {"question_id": "Q2", "question": "q?", "options": {"A": "a", "F": "f"}},  # option F
            {"question_id": "Q3", "question": "q?", "options": {"A": "a", "B": "b"}, "option_2_unsafe": "maybe"},
        ],
    )
    got = _strs(validate_files(p, schema="radsafe"))
    assert got[0].startswith(f"{p}:1: options: missing")
    assert got[1] == f"{p}:2: options: option F is not one of the schema's options (A, B, C, D, E)"
    assert got[2].startswith(f"{p}:3: option_2_unsafe: 'maybe' is not a value of unsafe_B")
    assert len(got) == 3


def test_combined_file_with_conflicting_prompts(tmp_path):
    p = _write_jsonl(
        tmp_path / "raw.jsonl",
        [
            {"scenario_id": "S1", "prompt_text": "first wording", "model_answer": "a", "model": "m1"},
            {"scenario_id": "S1", "prompt_text": "second wording", "model_answer": "b", "model": "m2"},
        ],
    )
    got = _strs(validate_files(p, schema="medfail"))
    assert got == [f"{p}:2: prompt_text: case 'S1' has a different prompt_text than at line 1"]


def test_warnings_do_not_fail(tmp_path):
    cases = _write_jsonl(tmp_path / "c.jsonl", [{"case_id": "A", "text": "t"}, {"case_id": "B", "text": "u"}])
    outs = _write_jsonl(tmp_path / "o.jsonl", [{"case_id": "A", "model": "m", "output": "x"}])
    res = inspect_files(cases, outs, schema="mtb")
    assert res.ok and len(res.units) == 1
    assert _strs(res.problems) == [
        f"{cases}:2: case_id: warning: case 'B' has no model output; it is not an item to rate"
    ]
    assert res.units.attrs["warnings"] == _strs(res.problems)


def test_schema_mismatch_is_a_warning_plus_the_real_errors():
    got = _strs(validate_files(DATA / "radsafe_questions.json", schema="medfail"))
    assert got[0].endswith(
        "warning: these look like radsafe cases but the schema is medfail (did you mean --schema radsafe?)"
    )


# --------------------------------------------------------------------------- CLI


def test_cli_validate_ok():
    res = invoke_cli(
        *[
            "cases",
            "validate",
            str(DATA / "openmtb_cases.json"),
            "--outputs",
            str(DATA / "openmtb_predictions.json"),
            "--schema",
            "mtb",
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.output.startswith(
        "OK: 3 cases, 6 outputs (models: Base LLM (sim-small), Checklist (sim-large)) -> 6 units for schema mtb v1.0"
    )


def test_cli_validate_lists_all_problems_and_fails(tmp_path):
    cases = _write_jsonl(tmp_path / "cases.jsonl", [{"case_id": "A", "text": "t"}, {"case_id": "A", "text": "u"}])
    outs = _write_jsonl(
        tmp_path / "outputs.jsonl",
        [{"case_id": "Z", "model": "m", "output": "x"}, {"case_id": "A", "model": "m", "predicted_label": "Nope"}],
    )
    res = invoke_cli(*["cases", "validate", str(cases), "--outputs", str(outs), "--schema", "mtb"])
    assert res.exit_code == 1
    assert "Traceback" not in res.output
    lines = res.output.splitlines()
    assert lines[0] == f"{cases}:2: case_id: duplicate id 'A' (first at line 1)"
    assert lines[1] == f"{outs}:1: case_id: unknown case 'Z' (not in {cases})"
    assert lines[2].startswith(f"{outs}:2: predicted_label: 'Nope' is not a value of safety_label")
    assert lines[3].startswith(f"{outs}:2: output: missing: the file's other outputs give the model's text in output")
    assert lines[-1] == "Error: 4 problems found (0 warnings)"


def test_cli_validate_bad_schema_and_missing_file(tmp_path):
    res = invoke_cli(*["cases", "validate", str(tmp_path / "x.jsonl"), "--schema", "nosuch"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "unknown schema 'nosuch'" in res.output
    res = invoke_cli(*["cases", "validate", str(tmp_path / "x.jsonl"), "--schema", "mtb"])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert f"{tmp_path / 'x.jsonl'}: file not found" in res.output


def test_unit_tables_combine_like_ordinary_frames():
    import pandas as pd

    a = load_units(DATA / "generic_cases.csv", DATA / "generic_outputs.csv", schema="mtb")
    b = load_units(DATA / "medfail_cases.jsonl", DATA / "medfail_raw_outputs.jsonl", schema="medfail")
    both = pd.concat([a, b], ignore_index=True)
    assert len(both) == 6 and both["item_id"].is_unique
