"""`goldboard pull --from-file FORMAT=FILE`: the file-source registry and its workflow (issue 20).

A format is a module of ``cases/intake/sources`` with ``FORMAT``; here a fake format stands in
(monkeypatched registry), so these tests need no real tool's file: the Prodigy and doccano
adapters have their own tests (test_source_prodigy.py, test_source_doccano.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.cases.intake.core import Annotation, choices_answer
from goldboard.cases.intake.files import FileFormat, FileRead, file_formats
from goldboard.study import Study


def _read(path: Path, schema, options) -> FileRead:
    anns, shown = [], {}
    for i, rec in enumerate(json.loads(path.read_text()), start=1):
        shown.setdefault(rec["who"], []).append(rec["item"])
        if rec.get("label") is not None:
            a = Annotation(
                entries=[("safety_label", choices_answer(rec["label"]))], annotation_id=f"{options.source}:{i}"
            )
            a.raw, a.raw_is_text = json.dumps(rec), True
            anns.append((rec["who"], rec["item"], a))
    info = {r["item"]: {"case_id": r["item"], "output_id": "", "model": ""} for r in json.loads(path.read_text())}
    return FileRead(anns, shown, info, rows=len(info), fields=["safety_label"])


FAKE = FileFormat("fake", "a test format", _read)


@pytest.fixture()
def fake(monkeypatch):
    monkeypatch.setattr("goldboard.workflows.files.file_formats", lambda: {"fake": FAKE})


def run(*args, code=0):
    res = invoke_cli(*[str(a) for a in args])
    assert "Traceback" not in res.output, res.output
    assert res.exit_code == code, res.output
    return res


def test_registry_lists_only_modules_with_a_format():
    formats = file_formats()
    assert all(isinstance(f, FileFormat) for f in formats.values())
    assert "label_studio" not in formats and "table" not in formats  # adapters without FORMAT


def test_a_file_source_into_a_table_born_study(fake, tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / "x.json"
    rows = [
        {"who": "ana", "item": "C-1", "label": "Supported"},
        {"who": "onc_b", "item": "C-1", "label": "Zzz"},
        {"who": "ana", "item": "C-2", "label": None},
    ]
    f.write_text(json.dumps(rows))
    res = run("pull", "--study", s, "--from-file", f"fake={f}", code=1)
    assert "annotator 'ana' is not a rater of this study" in res.output and "--rater ana=RATER" in res.output
    res = run("pull", "--study", s, "--from-file", f"fake={f}", "--rater", "ana=onc_a")
    assert "onc_a: 1 rated, 0 invalid, 0 superseded (2 items: 1 rated + 0 invalid + 1 unannotated)" in res.output
    assert "onc_b: 0 rated, 1 invalid" in res.output and "2 new items recorded in units.jsonl" in res.output
    got = pd.read_csv(s / "rounds/1/ratings.csv", dtype=str, keep_default_na=False)
    assert got[["item_id", "rater", "field", "value", "annotation_id", "task_id"]].values.tolist() == [
        ["C-1", "onc_a", "safety_label", "Supported", "x.json:1", ""]
    ]  # one row: missing_info (a field the file does not answer) is not written as an empty selection
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    assert inv["annotation_id"].tolist() == ["x.json:2"] and json.loads(inv["result"].iloc[0])["label"] == "Zzz"
    st = Study.open(s)
    assert st.round(1).tables["x.json"]["format"] == "fake"
    # a second file source into the same round: the first one's rows stay; a rating it gave is held out
    g = tmp_path / "y.json"
    g.write_text(json.dumps([{"who": "onc_a", "item": "C-1", "label": "Unsupported"}]))
    res = run("pull", "--study", s, "--from-file", f"fake={g}", code=1)  # it takes nothing: refused
    assert "nothing pulled: all 1 of its ratings are already in round 1 from 'x.json'" in res.output
    g.write_text(
        json.dumps(
            [
                {"who": "onc_a", "item": "C-1", "label": "Unsupported"},
                {"who": "onc_b", "item": "C-2", "label": "Supported"},
            ]
        )
    )
    res = run("pull", "--study", s, "--from-file", f"fake={g}")
    assert "onc_a: 0 rated, 1 invalid" in res.output and "1 x already rated from another source" in res.output
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False).set_index("annotation_id")
    assert "onc_a already rated 'C-1' in round 1 (x.json)" in inv.loc["y.json:1", "reason"]
    assert "x.json:2" in inv.index  # the first source's held-out row stays
    got = pd.read_csv(s / "rounds/1/ratings.csv", dtype=str, keep_default_na=False)
    assert got[["item_id", "rater", "value"]].values.tolist() == [
        ["C-1", "onc_a", "Supported"],
        ["C-2", "onc_b", "Supported"],
    ]


def test_unknown_format_names_the_formats(fake, tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    res = run("pull", "--study", s, "--from-file", f"fakr={tmp_path / 'x.json'}", code=1)
    assert "'fakr' is not a format goldboard reads" in res.output and "did you mean 'fake'" in res.output
    res = run("pull", "--study", s, "--from-file", "fake", code=1)
    assert "give FORMAT=FILE" in res.output


THIRD = """
import json
from goldboard.cases.intake.core import Annotation, choices_answer
from goldboard.cases.intake.files import FileFormat, FileRead


def read(path, schema, options):
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    anns = [
        (r["by"], r["case"], Annotation(entries=[("safety_label", choices_answer(r["says"]))],
                                        annotation_id=f"{options.source}:{i}"))
        for i, r in enumerate(rows, start=1)
    ]
    info = {r["case"]: {"case_id": r["case"], "output_id": "", "model": ""} for r in rows}
    return FileRead(anns, {}, info, rows=len(rows), fields=["safety_label"])


FORMAT = FileFormat("third_tool", "a third tool's JSONL", read)
"""


def test_a_third_source_is_one_module_in_the_sources_package(tmp_path, monkeypatch):
    """A new tool's adapter, dropped beside the others (here: a folder added to the package's
    path), is found by the registry and pulled end to end: nothing else changes."""
    from goldboard.cases.intake import sources
    from goldboard.workflows.files import pull_file

    folder = tmp_path / "more_sources"
    folder.mkdir()
    (folder / "third_tool.py").write_text(THIRD)
    monkeypatch.setattr(sources, "__path__", [*sources.__path__, str(folder)])
    assert "third_tool" in file_formats() and {"prodigy", "doccano"} <= set(file_formats())
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / "third.jsonl"
    f.write_text('{"by": "onc_a", "case": "C-1", "says": "Unsupported"}\n{"by": "onc_b", "case": "C-1", "says": "x"}\n')
    res = pull_file(st, "third_tool", f)
    assert "onc_a: 1 rated, 0 invalid" in res.describe() and "onc_b: 0 rated, 1 invalid" in res.describe()
    got = pd.read_csv(st.ratings_path(1), dtype=str, keep_default_na=False)
    assert got[["item_id", "rater", "value", "annotation_id"]].values.tolist() == [
        ["C-1", "onc_a", "Unsupported", "third.jsonl:1"]
    ]
