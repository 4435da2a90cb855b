"""One decision in force (issue 22), without a server: a confirmation keeps the reason in
force and is not a change; the same value is never a conflict; adjudicators are study
identities; `status` counts decisions from the log and reads a table-only study."""

from __future__ import annotations

import json

import pytest
from conftest import invoke_cli
from test_flags import I, P, S, U

from goldboard.adjudicate.decisions import (
    DecisionConflicts,
    Proposed,
    change_lines,
    log_base,
    record_decisions,
    resolve_adjudicators,
)
from goldboard.cases.examples import example_path
from goldboard.study import Study

SL = "safety_label"
WHY = "ECOG is required before first-line IO"


def test_confirmation_without_reason_keeps_the_reason_and_is_not_a_change(tmp_path):
    log = tmp_path / "decisions.jsonl"
    record_decisions(log, [Proposed("C-1", SL, P, WHY, "dr_chair")], source="sheet", sheet="review.xlsx")
    res = record_decisions(
        log, [Proposed("C-1", SL, P, "", "dr_chair", origin="label_studio:1:7:t")], source="label_studio"
    )
    (e,) = res.appended
    assert (e["decision"], e["reason"], e["reason_kept"], e["previous_decision"]) == (P, WHY, True, P)
    assert (res.changed, res.confirmed) == (0, 1)
    assert change_lines(res.appended) == [f'"C-1" safety_label: "{P}" confirmed (by dr_chair; reason kept)']
    # pulling the same annotation again: unchanged, also after a later change of the value
    again = record_decisions(
        log, [Proposed("C-1", SL, P, "", "dr_chair", origin="label_studio:1:7:t")], source="label_studio"
    )
    assert (again.appended, again.unchanged) == ([], 1)
    record_decisions(log, [Proposed("C-1", SL, U, "trial excluded ECOG 2", "dr_chair")], source="sheet")
    later = record_decisions(
        log, [Proposed("C-1", SL, P, "", "dr_chair", origin="label_studio:1:7:t")], source="label_studio"
    )
    assert (later.appended, later.unchanged) == ([], 1)


def test_a_new_reason_for_the_same_value_is_a_confirmation_not_a_change(tmp_path):
    log = tmp_path / "decisions.jsonl"
    record_decisions(log, [Proposed("C-1", SL, P, WHY, "dr_chair")], source="sheet")
    res = record_decisions(log, [Proposed("C-1", SL, P, "also PD-L1 pending", "dr_chair")], source="sheet")
    assert (res.changed, res.confirmed) == (0, 1) and res.appended[0]["reason"] == "also PD-L1 pending"
    assert change_lines(res.appended)[0].endswith("confirmed (by dr_chair; new reason)")


def test_an_old_sheet_restating_a_newer_value_is_no_conflict(tmp_path):
    log = tmp_path / "decisions.jsonl"
    record_decisions(
        log, [Proposed("C-1", SL, S, WHY, "dr_chair"), Proposed("C-2", SL, I, WHY, "dr_chair")], source="sheet"
    )
    base = log_base(log, "sheet-1")
    record_decisions(  # later, in Label Studio: C-1 confirmed with another reason, C-2 changed
        log,
        [
            Proposed("C-1", SL, S, "reread the guideline", "dr_chair", origin="ls:1"),
            Proposed("C-2", SL, U, "trial excluded ECOG 2", "dr_chair", origin="ls:2"),
        ],
        source="label_studio",
    )
    old_sheet = [
        Proposed("C-1", SL, S, WHY, "dr_chair", where="Disagreements!F2"),
        Proposed("C-2", SL, I, WHY, "dr_chair", where="Disagreements!F3"),
    ]
    with pytest.raises(DecisionConflicts) as exc:
        record_decisions(log, old_sheet, source="sheet", sheet="review.xlsx", base=base)
    assert [c.item_id for c in exc.value.conflicts] == ["C-2"]  # the same value is never a conflict
    res = record_decisions(log, old_sheet[:1], source="sheet", sheet="review.xlsx", base=base)
    assert (res.appended, res.unchanged) == ([], 1)


def test_adjudicators_are_study_identities():
    ps = [
        Proposed("C-1", SL, S, "", "Dr Chair", where_adjudicator="Disagreements!H2"),
        Proposed("C-2", SL, S, "", "dr_kim", where_adjudicator="Disagreements!H3"),
        Proposed("C-3", SL, S, "", "dr_chair", where_adjudicator="Disagreements!H4"),
    ]
    errors, notes = resolve_adjudicators(ps, ["dr_chair", "onc_a", "onc_b"])
    assert errors == [
        "Disagreements!H2: adjudicator \"Dr Chair\" is another spelling of 'dr_chair'? (this study's "
        "adjudicators and raters: dr_chair, onc_a, onc_b); write that name in the cell, or map this spelling "
        'to a person: --adjudicator-name "Dr Chair=dr_chair"'
    ]
    assert notes == [
        'new adjudicator "dr_kim" (Disagreements!H3): not in this study before (known: dr_chair, onc_a, onc_b)'
    ]
    errors, _ = resolve_adjudicators(ps, ["dr_chair", "onc_a", "onc_b"], {"Dr Chair": "dr_chair"})
    assert errors == [] and ps[0].adjudicator == "dr_chair" and ps[0].extra["adjudicator_as_written"] == "Dr Chair"


def test_import_flag_spelling_of_a_known_adjudicator_is_an_error(tmp_path):
    from test_adjudication_roundtrip import fill, make_study

    st = make_study(tmp_path)
    sheet = tmp_path / "review.xlsx"
    assert invoke_cli("adjudicate", "sheet", "--study", st.path, "-o", sheet).exit_code == 0
    fill(sheet, {"C-10": (S, None, None)})
    assert invoke_cli("adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_chair").exit_code == 0
    sheet2 = tmp_path / "review2.xlsx"
    assert invoke_cli("adjudicate", "sheet", "--study", st.path, "-o", sheet2).exit_code == 0
    fill(sheet2, {"C-1": (P, "ECOG 2", None)})
    res = invoke_cli("adjudicate", "import", "--study", st.path, sheet2, "--adjudicator", "Dr. Chair")
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert "--adjudicator 'Dr. Chair': another spelling of 'dr_chair'?" in res.output


def test_status_of_a_table_study_needs_no_server_and_counts_sheet_decisions(tmp_path):
    s = tmp_path / "openmtb"
    assert invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    res = invoke_cli(
        "pull", "--study", s, "--from-table", example_path("openmtb"), "--item-col", "case_id",
        "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label", "--field", "safety_label",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    res = invoke_cli("status", "--study", s)
    assert res.exit_code == 0, res.output
    assert "Label Studio: not used (ratings from a ratings table)" in res.output
    assert "onc_a             50 / 50    items rated (100%)  from a ratings table, last pulled 20" in res.output
    assert "adjudication: 16 of 16 flagged rows still to decide (16 label disagreements; " in res.output
    sheet = tmp_path / "review.xlsx"
    assert invoke_cli("adjudicate", "sheet", "--study", s, "-o", sheet).exit_code == 0
    import openpyxl

    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Key (do not edit)"].value:
            rec["Decision"].value = "unresolved"
    wb.save(sheet)
    res = invoke_cli("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair")
    assert res.exit_code == 0, res.output
    got = json.loads(invoke_cli("status", "--study", s, "--format", "json").output)
    assert got["decisions_open"] == 16 and got["decisions"]["safety_label"]["unresolved"] == 16
    assert got["rounds"]["1"][0]["source"] == "table" and Study.open(s).url in ("", got["url"] or "")


def test_report_counts_people_not_spellings(tmp_path):
    """A log written before identities were checked ("Dr Chair" from a sheet cell, dr_chair from
    Label Studio): the report names one adjudicator with both spellings."""
    from test_adjudication_roundtrip import make_study

    st = make_study(tmp_path)
    record_decisions(st.decisions_path, [Proposed("C-10", SL, S, "", "Dr Chair")], source="sheet")
    record_decisions(
        st.decisions_path, [Proposed("C-1", SL, P, "ECOG 2", "dr_chair"), Proposed("C-2", SL, S, "", "dr_chair")],
        source="label_studio",
    )  # fmt: skip
    out = tmp_path / "report.md"
    res = invoke_cli("report", "--study", st.path, "-o", out, "--format", "markdown")
    assert res.exit_code == 0, res.output
    lines = [x for x in out.read_text().splitlines() if x.startswith("- Adjudicator ")]
    assert lines == ["- Adjudicator dr_chair: 3 decisions logged, independent (also written Dr Chair)"]


def test_status_counts_flagged_rows_not_disagreements(tmp_path):
    """A row flagged for a missing rating is no disagreement: status said "1 decisions open of 1
    disagreements" where flag and the report say "0 label disagreements and 1 missing rating"."""
    s = tmp_path / "s"
    assert invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b").exit_code == 0
    t = tmp_path / "t.csv"
    t.write_text("case_id,a,b\nC-1,Supported,Supported\nC-2,Supported,\nC-3,Supported,Unsupported\n", encoding="utf-8")
    cols = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label"]
    assert invoke_cli("pull", "--study", s, "--from-table", t, *cols).exit_code == 0
    res = invoke_cli("status", "--study", s)
    assert res.exit_code == 0, res.output
    assert "adjudication: 2 of 2 flagged rows still to decide (1 label disagreement, 1 other trigger; " in res.output
    assert "disagreements" not in res.output.split("adjudication:")[1].split("\n")[0].split("(")[0]
