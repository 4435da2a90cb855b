"""The decisions log never silently loses or changes a decision.

- a changed decision needs a (new) reason; import and pull print every change;
- the log is replaced in one step (no torn lines); a torn tail left by an older
  goldboard is ignored with a warning, moved aside (kept) on the next write, and every
  command keeps working;
- a review sheet remembers the log it was written from: a row that would replace a
  newer decision is a conflict (listed, nothing imported) unless --overrule-newer,
  which the log records; idempotency is by content (an Excel/LibreOffice re-save of
  the same sheet imports nothing); a sheet of another study, schema or ratings state
  is refused with one line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from goldboard.adjudicate.decisions import (
    DecisionConflicts,
    Proposed,
    SheetBase,
    SheetErrors,
    change_lines,
    entries_digest,
    log_base,
    read_decisions,
    record_decisions,
)
from goldboard.errors import GoldboardError, GoldboardWarning
from goldboard.label_configs.schema import load_schema

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_adjudication_roundtrip import MI, fill, make_study, rows_by_item, run, sha  # noqa: E402,F401
from test_flags import I, P, S, U  # noqa: E402

SL = "safety_label"


@pytest.fixture()
def study(tmp_path):
    return make_study(tmp_path)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_bytes().split(b"\n") if x.strip()]


# --------------------------------------------------------------------------- reasons and what changed


def test_changing_a_decision_needs_a_new_reason(tmp_path):
    log = tmp_path / "decisions.jsonl"
    record_decisions(log, [Proposed("X1", SL, S, "", "adj")], source="sheet")  # a first decision: no reason needed
    before = log.read_bytes()
    with pytest.raises(SheetErrors) as exc:
        record_decisions(log, [Proposed("X1", SL, U, "", "adj", where="Disagreements!F7")], source="sheet")
    assert exc.value.errors == [
        'Disagreements!F7: reason required: this changes the decision in force for item "X1", safety_label from '
        f'"{S}" (D000001 by adj) to "{U}"; give one'
    ]
    # the old reason left in the cell does not explain the change
    record_decisions(log, [Proposed("X2", SL, S, "onc_a is right", "adj")], source="sheet")
    before = log.read_bytes()
    with pytest.raises(SheetErrors) as exc:
        record_decisions(log, [Proposed("X2", SL, P, "onc_a is right", "adj", where_reason="G9")], source="sheet")
    assert exc.value.errors[0].startswith("G9: reason required")
    assert exc.value.errors[0].endswith("the cell still holds the reason of the decision it replaces")
    assert log.read_bytes() == before  # nothing recorded
    res = record_decisions(log, [Proposed("X2", SL, P, "caveat on ECOG", "adj2")], source="sheet")
    assert [(e["previous_id"], e["previous_decision"], e["decision"]) for e in res.appended] == [("D000002", S, P)]
    assert change_lines(res.appended) == [f'"X2" safety_label: "{S}" -> "{P}" (by adj2)']
    # the empty set of a multi-select field reads "none", a first decision "(undecided)"
    res = record_decisions(log, [Proposed("X3", MI, "", "nothing missing", "adj")], source="sheet")
    assert change_lines(res.appended, load_schema("mtb")) == ['"X3" missing_info: (undecided) -> "none" (by adj)']


def test_import_prints_every_change_and_names_the_cell_without_reason(study, tmp_path):
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    fill(sheet, {"C-10": (S, None, None), "C-1": (P, "ECOG 2", "dr_kim")})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    assert f'  "C-10" safety_label: (undecided) -> "{S}" (by dr_lee)' in res.output
    assert f'  "C-1" safety_label: (undecided) -> "{P}" (by dr_kim)' in res.output
    sheet2 = tmp_path / "review2.xlsx"  # regenerated: decisions pre-filled, reasons too
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet2).exit_code == 0
    fill(sheet2, {"C-10": (U, None, None)})
    cell = rows_by_item(__import__("openpyxl").load_workbook(sheet2)["Disagreements"])[1]["C-10"]["Reason"]
    before = study.decisions_path.read_bytes()
    res = run("adjudicate", "import", "--study", study.path, sheet2, "--adjudicator", "dr_lee")
    assert res.exit_code == 1
    assert f"Disagreements!{cell.coordinate}: reason required" in res.output
    assert study.decisions_path.read_bytes() == before


# --------------------------------------------------------------------------- one atomic write per batch


def test_log_is_replaced_in_one_step_and_temp_leftovers_are_removed(tmp_path, monkeypatch):
    log = tmp_path / "decisions.jsonl"
    record_decisions(log, [Proposed("X1", SL, S, "", "adj")], source="sheet")
    first = log.read_bytes()
    # a writer killed after writing its temp copy leaves it beside the log: the next write removes it
    (tmp_path / ".decisions.jsonl.abc123.tmp").write_text('{"half": ')
    calls = []
    real = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (calls.append(Path(dst).name), real(src, dst)))
    res = record_decisions(
        log, [Proposed("X2", SL, U, "r", "adj"), Proposed("X3", SL, I, "r", "adj")], source="sheet", now="T"
    )
    assert calls == ["decisions.jsonl"]  # the whole batch: one replacement of the file
    assert res.notes == ["removed 1 unfinished temporary copy of decisions.jsonl left by an interrupted write"]
    assert not list(tmp_path.glob(".decisions.jsonl.*.tmp"))
    data = log.read_bytes()
    assert data.startswith(first) and data.endswith(b"\n")  # earlier entries byte-identical
    new = lines(log)[1:]
    assert [e["id"] for e in new] == ["D000002", "D000003"] and len({e["batch"] for e in new}) == 1


def test_torn_tail_is_ignored_with_a_warning_then_moved_aside(study, tmp_path):
    log = study.decisions_path
    record_decisions(log, [Proposed("C-10", SL, S, "", "adj", case_id="C-10")], source="sheet")
    good = log.read_bytes()
    torn = b'{"id": "D000002", "item_id": "C-1", "field": "safety_la'
    log.write_bytes(good + torn)  # what an interrupted line-by-line append of an older goldboard left
    with pytest.warns(GoldboardWarning, match=r"decisions.jsonl:2: the last line is incomplete \(55 bytes"):
        assert [e["id"] for e in read_decisions(log)] == ["D000001"]
    # every command still works and says so once, on one line
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output
    torn_said = [ln for ln in res.output.splitlines() if ln.startswith("Warning:") and "decisions.jsonl" in ln]
    assert len(torn_said) == 1 and "the last line is incomplete" in torn_said[0], res.output
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    fill(sheet, {"C-1": (P, "ECOG 2", "dr_kim")})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    assert "moved an incomplete last line (55 bytes" in res.output
    aside = list(study.path.glob("decisions.jsonl.torn-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == torn  # kept, never deleted
    assert log.read_bytes().startswith(good)
    assert [(e["id"], e["item_id"]) for e in lines(log)] == [("D000001", "C-10"), ("D000002", "C-1")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_decisions(log)  # repaired: no warning any more


def test_log_lines_split_on_newline_only(tmp_path):
    log = tmp_path / "decisions.jsonl"
    reason = "line\u2028separator, paragraph\u2029, NEL\u0085 and a bare\rCR"
    record_decisions(log, [Proposed("X1", SL, P, reason, "adj")], source="sheet")
    assert [e["reason"] for e in read_decisions(log)] == [reason]


# --------------------------------------------------------------------------- conflicts (record level)


def _base(log: Path, sheet_id: str = "sheet-1") -> SheetBase:
    return log_base(log, sheet_id)


def test_newer_decisions_are_conflicts_listed_and_nothing_recorded(tmp_path):
    log = tmp_path / "decisions.jsonl"
    record_decisions(log, [Proposed("X1", SL, S, "", "adj"), Proposed("X2", SL, S, "", "adj")], source="sheet")
    base = _base(log)  # the sheet is written now: it shows X1 = X2 = S
    assert (base.entries, base.last_id) == (2, "D000002")
    record_decisions(  # later, in Label Studio
        log,
        [Proposed("X1", SL, U, "trial data", "dr_lee", origin="ls:1"), Proposed("X2", SL, P, "caveat", "dr_lee")],
        source="label_studio",
        now="2026-01-02T10:00:00+00:00",
    )
    before = log.read_bytes()
    stale = [
        Proposed("X1", SL, S, "as the raters", "adj", where="Disagreements!F2"),  # would revert D000003
        Proposed("X2", SL, P, "caveat", "adj", where="Disagreements!F3"),  # restates what is in force: fine
        Proposed("X3", SL, I, "", "adj", where="Disagreements!F4"),  # a new decision: fine
    ]
    with pytest.raises(DecisionConflicts) as exc:
        record_decisions(log, stale, source="sheet", sheet="review.xlsx", base=base)
    assert exc.value.errors == [
        f'Disagreements!F2: item "X1", safety_label: the sheet\'s "{S}" would replace the newer decision "{U}" '
        "(D000003 by dr_lee at 2026-01-02T10:00:00+00:00, from Label Studio), made after this sheet was written"
    ]
    assert "review.xlsx: 1 row would replace decisions made after this sheet was written; nothing imported" in str(
        exc.value
    )
    assert log.read_bytes() == before
    # --overrule-newer records the supersession
    res = record_decisions(log, stale, source="sheet", sheet="review.xlsx", base=base, overrule_newer=True)
    got = [(e["item_id"], e["decision"], e["previous_id"], e.get("overrules_newer")) for e in res.appended]
    assert got == [("X1", S, "D000003", "D000003"), ("X3", I, None, None)]
    assert change_lines(res.appended)[0] == f'"X1" safety_label: "{U}" -> "{S}" (by adj; overrules newer D000003)'


def test_a_second_import_of_one_sheet_id_conflicts_and_its_stale_values_too(tmp_path):
    log = tmp_path / "decisions.jsonl"
    base = _base(log, "sheet-A")  # empty log
    record_decisions(log, [Proposed("X1", SL, S, "", "adj", origin="sheet:sheet-A")], source="sheet", base=base)
    # the same sheet id imported again with another value (a second filled copy of the workbook, or
    # this one edited after its import): a conflict, listed; nothing recorded without overrule_newer
    second = [Proposed("X1", SL, U, "second look", "adj", origin="sheet:sheet-A", where="F2")]
    with pytest.raises(DecisionConflicts) as exc:
        record_decisions(log, second, source="sheet", base=base)
    assert "an earlier import of this same sheet id (another copy of this workbook?)" in exc.value.errors[0]
    res = record_decisions(log, second, source="sheet", base=base, overrule_newer=True)
    assert [(e["decision"], e["overrules_newer"]) for e in res.appended] == [(U, "D000001")]
    # an older copy of that sheet (X1 still S, already imported once) would revert it: conflict
    with pytest.raises(DecisionConflicts) as exc:
        record_decisions(
            log, [Proposed("X1", SL, S, "", "adj", origin="sheet:sheet-A", where="F2")], source="sheet", base=base
        )
    assert (
        "was imported from this sheet before and has since been replaced by the newer decision" in exc.value.errors[0]
    )
    # another sheet written before those decisions conflicts with both
    with pytest.raises(DecisionConflicts):
        record_decisions(
            log,
            [Proposed("X1", SL, P, "x", "adj", origin="sheet:B")],
            source="sheet",
            base=SheetBase("B", 0, entries_digest([])),
        )


def test_sheet_from_another_log_is_refused_in_one_line(tmp_path):
    log = tmp_path / "decisions.jsonl"
    record_decisions(log, [Proposed("X1", SL, S, "", "adj")], source="sheet")
    other = tmp_path / "other.jsonl"
    record_decisions(other, [Proposed("X1", SL, U, "", "adj")], source="sheet")
    with pytest.raises(GoldboardError, match=r"^review.xlsx: written from another decisions log") as exc:
        record_decisions(log, [Proposed("X2", SL, S, "", "a")], source="sheet", sheet="review.xlsx", base=_base(other))
    assert "\n" not in str(exc.value)


# --------------------------------------------------------------------------- stale review sheets (CLI)


def resave(path: Path, how: str, out_dir: Path) -> Path:
    """The workbook as Excel/LibreOffice would save it again: same content, other bytes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if how == "libreoffice":
        soffice = shutil.which("soffice") or shutil.which("libreoffice")
        if soffice is None:
            pytest.skip("LibreOffice not installed (apt-get install libreoffice-calc-nogui); openpyxl re-save runs")
        subprocess.run(
            [
                soffice,
                f"-env:UserInstallation=file://{out_dir / 'lo-profile'}",
                "--headless",
                "--calc",
                "--convert-to",
                "xlsx:Calc MS Excel 2007 XML",
                "--outdir",
                str(out_dir),
                str(path),
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )
    else:
        import datetime as dt

        import openpyxl

        wb = openpyxl.load_workbook(path)  # as a spreadsheet program saves: its own metadata, column widths
        wb.properties.lastModifiedBy = "Excel"
        wb.properties.modified = dt.datetime(2030, 1, 2, 3, 4, 5)
        wb["Disagreements"].column_dimensions["G"].width = 31
        wb.save(out_dir / path.name)
    out = out_dir / path.name
    assert out.exists() and sha(out) != sha(path)
    return out


def decide(study, sheet: Path, rows: dict, who: str = "dr_lee") -> object:
    fill(sheet, rows)
    return run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", who)


@pytest.mark.slow  # 10-15 s: LibreOffice re-saves the workbook
@pytest.mark.parametrize("how", ["libreoffice", "openpyxl"])
def test_stale_resaved_sheet_conflicts_instead_of_reverting_newer_decisions(study, tmp_path, how):
    log = study.decisions_path
    v1 = tmp_path / "v1.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", v1).exit_code == 0
    res = decide(
        study,
        v1,
        {
            "C-10": (S, "onc_a read the label", None),
            "C-1": (P, "ECOG 2", "dr_kim"),
            "C-7": (I, "no stage", None),
            ("C-2", MI): ("pdl1_expression", "PD-L1 missing", None),
        },
    )
    assert res.exit_code == 0 and "4 new decisions" in res.output, res.output
    # the same sheet re-saved by a spreadsheet program: other bytes, same content -> nothing imported
    copy = resave(v1, how, tmp_path / "resaved")
    before = log.read_bytes()
    res = run("adjudicate", "import", "--study", study.path, copy, "--adjudicator", "dr_lee")
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 4 unchanged" in res.output, res.output
    assert log.read_bytes() == before
    # later, a fresh sheet changes two decisions
    v2 = tmp_path / "v2.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", v2).exit_code == 0
    res = decide(
        study,
        v2,
        {"C-10": (U, "trial evidence reread", "dr_chair"), ("C-2", MI): ("stage", "staging missing", "dr_chair")},
    )
    assert res.exit_code == 0 and "0 new decisions, 2 changed" in res.output, res.output
    newer = {(e["item_id"], e["field"]): e for e in read_decisions(log)[-2:]}
    # the old sheet, re-saved, imported again: both rows are conflicts, listed; nothing imported
    before = log.read_bytes()
    res = run("adjudicate", "import", "--study", study.path, copy, "--adjudicator", "dr_lee")
    assert res.exit_code == 1
    _, rows = rows_by_item(__import__("openpyxl").load_workbook(v1)["Disagreements"])
    _, mrows = rows_by_item(__import__("openpyxl").load_workbook(v1)["Disagreements"], MI)
    c10, c2 = rows["C-10"]["Decision"].coordinate, mrows["C-2"]["Decision"].coordinate
    stamp = newer[("C-10", "safety_label")]["timestamp"]
    assert (
        f'Disagreements!{c10}: item "C-10", safety_label: the sheet\'s "{S}" was imported from this sheet before '
        f'and has since been replaced by the newer decision "{U}" ({newer[("C-10", "safety_label")]["id"]} by '
        f"dr_chair at {stamp}, from v2.xlsx), made after this sheet was written"
    ) in res.output
    assert f'Disagreements!{c2}: item "C-2", missing_info: the sheet\'s "pdl1_expression"' in res.output
    assert '"stage" (' in res.output
    assert "v1.xlsx: 2 rows would replace decisions made after this sheet was written; nothing imported" in res.output
    assert "--overrule-newer" in res.output and "Traceback" not in res.output
    assert log.read_bytes() == before
    # an old sheet edited further (not only re-saved) conflicts the same way
    fill(copy, {"C-10": (P, "a third view", None)})
    res = run("adjudicate", "import", "--study", study.path, copy, "--adjudicator", "dr_lee")
    assert res.exit_code == 1 and "would replace the newer decision" in res.output and log.read_bytes() == before
    # --overrule-newer: recorded, each entry naming the newer decision it overrules
    res = run("adjudicate", "import", "--study", study.path, copy, "--adjudicator", "dr_lee", "--overrule-newer")
    assert res.exit_code == 0, res.output
    assert f'"C-10" safety_label: "{U}" -> "{P}" (by dr_lee; overrules newer' in res.output
    tail = read_decisions(log)[-2:]
    assert {(e["item_id"], e["decision"], e["overrules_newer"]) for e in tail} == {
        ("C-10", P, newer[("C-10", "safety_label")]["id"]),
        ("C-2", "pdl1_expression", newer[("C-2", MI)]["id"]),
    }


def test_sheet_for_other_ratings_or_study_is_refused_in_one_line(study, tmp_path):
    import pandas as pd

    from goldboard.fileio import write_csv_atomic
    from goldboard.study import Study

    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    fill(sheet, {"C-10": (S, "x", None)})
    # the same ratings in another study (same schema) -> refused
    other = Study.init(tmp_path / "other", schema="mtb", raters=["onc_a", "onc_b"])
    other.ratings_path(1).parent.mkdir(parents=True)
    shutil.copy(study.ratings_path(1), other.ratings_path(1))
    res = run("adjudicate", "import", "--study", other.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 1
    assert res.output == "Error: review.xlsx: this sheet was made for study 'study', not 'other'; nothing imported\n"
    # another schema -> refused
    med = Study.init(tmp_path / "med", schema="medfail", raters=["onc_a", "onc_b"])
    med.ratings_path(1).parent.mkdir(parents=True)
    shutil.copy(study.ratings_path(1), med.ratings_path(1))
    res = run("adjudicate", "import", "--study", med.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 1 and res.output.count("\n") == 1
    assert res.output.startswith("Error: review.xlsx: this sheet was made for schema mtb v1.0, the study uses medfail")
    # the ratings changed since the sheet was written (a rater corrected a label and it was pulled)
    df = pd.read_csv(study.ratings_path(1), dtype=str, keep_default_na=False)
    df.loc[(df.item_id == "C-3") & (df.rater == "onc_b") & (df.field == "safety_label"), "value"] = U
    write_csv_atomic(df, study.ratings_path(1))
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 1 and res.output.count("\n") == 1
    assert res.output.startswith("Error: review.xlsx: written from other ratings than the study has now")
    assert not study.decisions_path.exists()


def test_sheet_without_log_state_counts_as_older_than_every_decision(study, tmp_path):
    """A sheet from an older goldboard (no log state), imported with --unverified-sheet (without
    it: refused, tests/test_records_integrity.py): new decisions import, but a row that changes
    any logged decision is a conflict."""
    import openpyxl

    v1 = tmp_path / "v1.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", v1).exit_code == 0
    assert decide(study, v1, {"C-10": (S, "onc_a", None)}).exit_code == 0
    old = tmp_path / "old.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", old).exit_code == 0
    wb = openpyxl.load_workbook(old)
    ws = wb["_goldboard"]
    for row in list(ws.iter_rows()):
        if row[0].value in ("sheet_id", "log_entries", "log_sha256", "log_last_id", "ratings_sha256"):
            row[0].value = row[1].value = None
    wb.save(old)
    fill(old, {"C-1": (P, "ECOG 2", "dr_kim")})
    unverified = ("adjudicate", "import", "--study", study.path, old, "--adjudicator", "dr_lee", "--unverified-sheet")
    res = run(*unverified)
    assert res.exit_code == 0 and "1 new decisions, 0 changed, 1 unchanged" in res.output, res.output
    fill(old, {"C-10": (U, "second look", None)})
    res = run(*unverified)
    assert res.exit_code == 1 and "would replace the newer decision" in res.output
