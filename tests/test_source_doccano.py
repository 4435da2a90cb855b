"""doccano text-classification exports into a study (``pull --from-file doccano=FILE``).

tests/data/doccano/ holds files in the shape doccano's JSONL export writes (backend/data_export:
``{"id", "text", **meta, "label": [...], "Comments": [...]}`` per example): mtb_doccano_export.zip,
a project without collaborative annotation (one ``<username>.jsonl`` per member: admin labelled
nothing, ana labelled all three with comments, ben two -- one with two labels on a single-choice
field); ana.jsonl, one member's file on its own; collaborative_export.zip, ``all.jsonl``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from conftest import invoke_cli

from goldboard.cases.intake.files import file_formats
from goldboard.study import Study

DATA = Path(__file__).parent / "data" / "doccano"


def run(*args, code=0):
    res = invoke_cli(*[str(a) for a in args])
    assert "Traceback" not in res.output, res.output
    assert res.exit_code == code, res.output
    return res


def csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def study(tmp_path: Path) -> Path:
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    return s


def test_the_registry_finds_doccano():
    assert "doccano" in file_formats() and "doccano" in run("pull", "--help").output


def test_doccano_per_annotator_zip_into_a_study(tmp_path):
    s = study(tmp_path)
    f = DATA / "mtb_doccano_export.zip"
    res = run("pull", "--study", s, "--from-file", f"doccano={f}", "--rater", "ana=onc_a,ben=onc_b")
    assert "onc_a: 3 rated, 0 invalid, 0 superseded (3 items: 3 rated + 0 invalid + 0 unannotated)" in res.output
    # "1 rated, 1 invalid, 0 superseded, 2 unannotated" of 3 items counted MTB-0002 twice (cl22)
    assert "onc_b: 1 rated, 1 invalid, 0 superseded (3 items: 1 rated + 1 invalid + 1 unannotated)" in res.output
    assert "admin.jsonl: no labels" in res.output  # a member who labelled nothing is not read, and said so
    got = csv(s / "rounds/1/ratings.csv")
    assert got[["item_id", "rater", "value", "rationale", "annotation_id"]].values.tolist() == [
        ["MTB-0001", "onc_a", "Supported", "", "mtb_doccano_export.zip:ana/1"],
        ["MTB-0001", "onc_b", "Supported", "", "mtb_doccano_export.zip:ben/1"],
        ["MTB-0002", "onc_a", "Insufficient Information", "Stage is missing.", "mtb_doccano_export.zip:ana/2"],
        ["MTB-0003", "onc_a", "Partially Supported", "ECOG 3.\nCheck dosing.", "mtb_doccano_export.zip:ana/3"],
    ]
    inv = csv(s / "rounds/1/invalid.csv")
    assert inv["annotation_id"].tolist() == ["mtb_doccano_export.zip:ben/2"]
    assert "2 values for a single-choice field" in inv["reason"].iloc[0]
    assert json.loads(inv["result"].iloc[0])["label"] == ["Supported", "Unsupported"]  # verbatim
    pj = json.loads((s / "rounds/1/pull.json").read_text())
    assert pj["raters"]["onc_b"]["unannotated_items"] == ["MTB-0003"]  # no annotation (MTB-0002's is invalid)
    assert Study.open(s).round(1).tables["mtb_doccano_export.zip"]["format"] == "doccano"


def test_one_members_file_and_the_collaborative_export(tmp_path):
    s = study(tmp_path)
    res = run("pull", "--study", s, "--from-file", f"doccano={DATA / 'ana.jsonl'}", code=1)
    assert "annotator 'ana' is not a rater of this study" in res.output
    res = run("pull", "--study", s, "--from-file", f"doccano={DATA / 'ana.jsonl'}", "--rater", "ana=onc_a")
    assert "onc_a: 3 rated" in res.output
    assert csv(s / "rounds/1/ratings.csv")["annotation_id"].tolist()[0] == "ana.jsonl:1"
    res = run("pull", "--study", s, "--from-file", f"doccano={DATA / 'collaborative_export.zip'}", code=1)
    assert "all.jsonl is a collaborative project's export" in res.output
    bad = tmp_path / "x.zip"
    bad.write_text("not a zip")
    assert "not a zip file" in run("pull", "--study", s, "--from-file", f"doccano={bad}", code=1).output
