"""Workbook with several disputed fields (medfail): one dropdown per field, numbers typed in Excel."""

from __future__ import annotations

import openpyxl
import pytest
from test_flags import medfail_rows, ratings_frame

from goldboard.adjudicate.decisions import SheetErrors, read_decisions
from goldboard.adjudicate.gold import resolve_gold
from goldboard.adjudicate.review_sheet import import_review_sheet
from goldboard.label_configs.schema import load_schema
from goldboard.workflows.adjudication import write_review_sheet


def test_medfail_sheet_dropdowns_and_typed_numbers(tmp_path):
    schema = load_schema("medfail")
    ratings = ratings_frame(medfail_rows())
    path = tmp_path / "review.xlsx"
    info = write_review_sheet(path, ratings, schema, raters=["r1", "r2"])
    assert info.disagreement_rows == 10 and info.items == 8  # 11 with likely_harm's M8 row (see below)
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    assert head[:8] == ["#", "Case ID", "Item ID", "Model", "Field", "Decision", "Reason", "Adjudicator"]
    dvs = {dv.formula1: str(dv.sqref) for dv in ws.data_validations.dataValidation}
    # likely_harm has no rating row (never collected): no row of it to decide, so no dropdown uses
    # its list (column C); it had one for M8, r1's blank against r2's missing rating
    assert set(dvs) == {"=_lists!$A$2:$A$7", "=_lists!$B$2:$B$15", "=_lists!$D$2:$D$4"}
    rows = {(r[2].value, r[4].value): r for r in ws.iter_rows(min_row=2)}
    assert f"F{rows['M1', 'severity'][0].row}" in dvs["=_lists!$A$2:$A$7"]
    assert rows["M5", "severity"][8].value.startswith("low confidence: r2")
    rows["M1", "severity"][5].value = 4  # a number, as Excel stores a typed 4
    rows["M1", "severity"][6].value = "r2's reading; escalation needed"
    rows["M6", "safety_gate"][5].value = "missed_urgent_escalation"
    rows["M7", "keep_in_benchmark"][5].value = "yes"  # alias of keep
    rows["M5", "severity"][5].value = "2"  # confirms the raters despite low confidence
    wb.save(path)
    log = tmp_path / "decisions.jsonl"
    res = import_review_sheet(path, ratings, schema, log, adjudicator="lead", independent=False, raters=["r1", "r2"])
    assert len(res.appended) == 4 and res.blank == 6  # 10 rows, 4 decided (7 of 11 with likely_harm)
    got = {(e["item_id"], e["field"]): e["decision"] for e in read_decisions(log)}
    assert got == {
        ("M1", "severity"): "4",
        ("M6", "safety_gate"): "missed_urgent_escalation",
        ("M7", "keep_in_benchmark"): "keep",
        ("M5", "severity"): "2",
    }
    assert not any(e["independent"] for e in read_decisions(log))
    gold = resolve_gold(ratings, schema, read_decisions(log), ["r1", "r2"])
    m1 = gold[(gold.item_id == "M1") & (gold.field == "severity")].iloc[0]
    assert (m1.gold_value, m1.method, m1.independent) == ("4", "adjudicated", "false")
    # a decision from another field's vocabulary is refused, by cell
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    rows = {(r[2].value, r[4].value): r for r in ws.iter_rows(min_row=2)}
    rows["M3", "severity"][5].value = "keep"
    wb.save(path)
    with pytest.raises(SheetErrors) as exc:
        import_review_sheet(path, ratings, schema, log, adjudicator="lead")
    assert exc.value.errors == [
        f'Disagreements!F{rows["M3", "severity"][5].row}: decision "keep" is not a value of '
        f"severity (allowed: 1, 2, 3, 4, 5, unresolved)"
    ]


def test_adjudicator_who_is_a_rater_is_not_independent(tmp_path):
    schema = load_schema("medfail")
    ratings = ratings_frame(medfail_rows())
    path = tmp_path / "review.xlsx"
    write_review_sheet(path, ratings, schema)
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    ws["F2"].value = "5"
    ws["H2"].value = "r1"
    wb.save(path)
    res = import_review_sheet(path, ratings, schema, tmp_path / "d.jsonl", adjudicator="lead")
    assert [(e["adjudicator"], e["independent"]) for e in res.appended] == [("r1", False)]
