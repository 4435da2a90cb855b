"""What ``score`` and ``judge`` read: a predictions or labels file saved by Excel in another dialect
(';' separated, a BOM) is named with the way to save it, a one-column table is still read, and
probabilities or a confidence option that nothing uses are said to be unused or refused.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from builders import write_jsonl
from conftest import error_line, invoke_cli

from goldboard.cases.examples import example_path


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


def test_s05_probabilities_and_a_label_mode_confidence_are_said_to_be_unused(tmp_path):
    recs = [
        {"case_id": f"C{n}", "model": "gpt", "predicted_label": "Supported", "confidence": 1.7,
         "probabilities": {"Supported": 0.9, "Unsupported": 0.9}}
        for n in range(1, 9)
    ]  # fmt: skip
    preds = write_jsonl(tmp_path / "p.jsonl", recs)
    res = invoke_cli("score", "--gold", _reference(tmp_path), "--schema", "mtb", "--predictions", preds, code=0)
    out = res.output
    assert out.count("- confidence: not used by label scoring") == 1, out  # once, not per row; was not said
    assert out.count("- probabilities: not used by score (it scores the predicted label)") == 1, out
    plain = write_jsonl(
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
