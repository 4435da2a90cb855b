"""The review sheet and the decisions log: the Disagreements sheet is structure-protected (an
unprotected, sorted or re-saved copy is refused unless said), a deleted row, an edited read-only
cell, a second Disagreements sheet, a sheet over typed but unimported decisions, hand-added or
repeated log lines, hand-edited decisions the schema cannot hold, adjudicator names (reserved words,
case twins, a rater mapped in) -- each named, never imported or logged in silence.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
import shutil
from copy import copy
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from builders import error_naming, fill_sheet, import_, sheet_for
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run
from conftest import run_cli as run_ok
from test_adjudication_roundtrip import fill, make_study, rows_by_item
from test_flags import I, P, S, U

from goldboard.adjudicate import review_sheet
from goldboard.adjudicate.decisions import read_decisions
from goldboard.fileio import write_csv_atomic

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]


@pytest.fixture()
def sheet_study(tmp_path):
    """A study whose round 1 has 10 disagreements among 30 items, and its review workbook."""
    s = tmp_path / "st"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    rows = ["case_id,a,b"]
    for i in range(30):
        a = LABELS[i % 4]
        rows.append(f"C{i:02d},{a},{a if i % 3 else LABELS[(i + 1) % 4]}")
    table = tmp_path / "t.csv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pull = ["--item-col", "case_id", "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"]
    invoke_cli("pull", "--study", s, "--from-table", table, *pull, code=0)
    sheet = tmp_path / "review.xlsx"
    invoke_cli("adjudicate", "sheet", "--study", s, "-o", sheet, code=0)
    return s, sheet


def _fill(ws, label: str) -> None:
    head = [c.value for c in ws[1]]
    col = head.index("Decision") + 1
    for r in range(2, ws.max_row + 1):
        ws.cell(r, col).value = label


@pytest.mark.parametrize("how", ["copy", "pasted rows"])
def test_import_refuses_a_second_disagreements_sheet(sheet_study, tmp_path, how):
    """Before: only 'Disagreements' was read (10 new decisions), the copy's decisions ignored."""
    import openpyxl

    s, sheet = sheet_study
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    _fill(ws, "Supported")
    if how == "copy":
        other = wb.copy_worksheet(ws)
        other.title = "Disagreements (2)"
        _fill(other, "Unsupported")
    else:  # the rows pasted into a sheet of one's own, without the header
        other = wb.create_sheet("meeting 2")
        for row in ws.iter_rows(min_row=2, values_only=True):
            other.append(list(row))
    filled = tmp_path / "filled.xlsx"
    wb.save(filled)
    log = s / "decisions.jsonl"
    before = log.read_bytes() if log.exists() else b""
    res = invoke_cli("adjudicate", "import", "--study", s, filled, "--adjudicator", "dr_chair")
    line = error_line(res)
    assert f"sheets 'Disagreements', '{other.title}' each hold Disagreements rows" in line
    assert "keep 'Disagreements' with the decisions that count" in line
    assert (log.read_bytes() if log.exists() else b"") == before


def test_sheet_output_counts_decisions_typed_into_a_copy(sheet_study, tmp_path):
    """`adjudicate sheet -o` over a workbook whose decisions were typed into a copy of the sheet
    is refused like one typed into Disagreements (before: replaced without a word)."""
    import openpyxl

    s, sheet = sheet_study
    wb = openpyxl.load_workbook(sheet)
    other = wb.copy_worksheet(wb["Disagreements"])
    other.title = "Disagreements (2)"
    _fill(other, "Unsupported")
    wb.save(sheet)
    line = error_line(invoke_cli("adjudicate", "sheet", "--study", s, "-o", sheet))
    assert "holds 10 decision(s) not in the decisions log (e.g. 'Disagreements (2)'!F2;" in line


def _sheet(study, tmp_path, rows):
    p = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", p).exit_code == 0
    fill(p, rows)
    return p


def test_gold_export_refuses_a_hand_edited_decision_the_schema_cannot_hold(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_lee")})
    assert run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee").exit_code == 0
    log = study.decisions_path
    entry = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    entry["decision"], entry["id"] = "Bogus", "D000002"  # a new id: a repeated one is refused first
    log.write_text(log.read_text(encoding="utf-8") + json.dumps(entry) + "\n", encoding="utf-8")
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code != 0
    line = res.output.strip().splitlines()[-1]
    assert "decisions.jsonl: entry" in line and "'Bogus' is not a value of safety_label" in line, line
    assert "item 'C-1'" in line or 'item "C-1"' in line, line
    assert not study.gold_dir.exists() or not any(study.gold_dir.iterdir())  # nothing written


def test_gold_export_accepts_the_log_goldboard_wrote(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_lee")})
    assert run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee").exit_code == 0
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output


def test_a_spelling_mapped_to_a_rater_is_recorded_as_not_independent(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_chair")})
    res = run(
        "adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_chair",
        "--adjudicator-name", "dr_chair=onc_a",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    (d,) = read_decisions(study.decisions_path)
    assert d["adjudicator"] == "onc_a" and d["adjudicator_as_written"] == "dr_chair"
    assert d["independent"] is False
    assert "by onc_a, a rater of this study: recorded as not independent" in res.output


def test_an_adjudicator_who_is_not_a_rater_stays_independent(tmp_path):
    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, "ECOG 2", "dr_chair")})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_chair")
    assert res.exit_code == 0, res.output
    (d,) = read_decisions(study.decisions_path)
    assert d["independent"] is True


def test_a_reason_cell_excel_turned_into_a_date_is_refused_naming_the_cell(tmp_path):
    import datetime as dt

    study = make_study(tmp_path)
    sheet = _sheet(study, tmp_path, {"C-1": (P, dt.datetime(2024, 3, 1), "dr_lee")})
    before = study.decisions_path.read_bytes() if study.decisions_path.exists() else None
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code != 0
    assert "Disagreements!" in res.output and "the Reason cell holds a date or time (2024-03-01" in res.output
    after = study.decisions_path.read_bytes() if study.decisions_path.exists() else None
    assert after == before  # nothing imported


SL = "safety_label"


@pytest.fixture()
def study(tmp_path):
    return make_study(tmp_path)


def unprotect(path: Path, sheet: str = "Disagreements") -> None:
    """What Excel's Review > Unprotect Sheet (no password) leaves."""
    wb = openpyxl.load_workbook(path)
    wb[sheet].protection.sheet = False
    wb.save(path)


def decision_cells(path: Path) -> tuple[openpyxl.Workbook, list]:
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    col = head.index("Decision") + 1
    return wb, [ws.cell(r, col) for r in range(2, ws.max_row + 1)]


def sort_values_only(path: Path) -> None:
    """The Decision column sorted by its values alone (formats, and so the per-row checks, left in
    place): a permuted column pasted back as values, or a script rewriting the values."""
    wb, cells = decision_cells(path)
    values = sorted(str(c.value) for c in cells if c.value)
    for c, v in zip((c for c in cells if c.value), values):
        c.value = v
    wb.save(path)


#: nine decisions (I and P: allowed with any missing_info, mtb rule)
ALL_FILLED = {f"C-{n}": ((P if n % 2 else I), f"reason {n}", None) for n in range(1, 10)}


def test_the_sheet_is_protected_and_an_unprotected_one_is_refused_unless_the_flag_recorded(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    assert review_sheet.sheet_protection_problem(sheet) is None
    fill(sheet, ALL_FILLED)
    sort_values_only(sheet)  # only possible in Excel/LibreOffice after removing the protection
    unprotect(sheet)
    assert review_sheet.sheet_protection_problem(sheet) == "sheet Disagreements is not protected"
    res = import_(study, sheet)
    line = error_line(res)
    assert line.startswith("Error: review.xlsx: sheet Disagreements is not protected (its protection was removed)")
    assert "--unprotected-sheet" in line and "nothing imported" in line
    assert not study.decisions_path.exists()
    res = import_(study, sheet, "--unprotected-sheet")
    assert res.exit_code == 0, res.output
    assert all(e.get("unprotected_sheet") is True for e in read_decisions(study.decisions_path))


def test_protection_loosened_to_allow_sorting_is_refused(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    wb = openpyxl.load_workbook(sheet)
    wb["Disagreements"].protection.sort = False  # re-protected with "Sort" allowed
    wb.save(sheet)
    fill(sheet, {"C-1": (U, "no data", None)})
    assert "sheet Disagreements's protection allows sort" in error_line(import_(study, sheet))


@pytest.mark.slow  # LibreOffice resaves the workbook (soffice start: seconds)
def test_libreoffice_keeps_the_protection_on_a_resave(study, tmp_path):
    import subprocess

    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    if soffice is None:
        pytest.skip("LibreOffice not installed")
    sheet = sheet_for(study, tmp_path)
    out = tmp_path / "lo"
    subprocess.run(
        [soffice, f"-env:UserInstallation=file://{out / 'profile'}", "--headless", "--calc", "--convert-to",
         "xlsx:Calc MS Excel 2007 XML", "--outdir", str(out), str(sheet)],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    assert review_sheet.sheet_protection_problem(out / sheet.name) is None


@pytest.mark.slow  # ~10 s: LibreOffice
def test_libreoffice_does_not_sort_the_protected_sheet_but_an_unprotected_one(study, tmp_path):
    """LibreOffice's own sort command (selected rows, Data > Sort Descending) leaves the protected
    sheet as it is; once its protection is removed the same command sorts it."""
    import subprocess

    uno_python = next(
        (
            p
            for p in ("/usr/bin/python3", shutil.which("python3"))
            if p and subprocess.run([p, "-c", "import uno"], capture_output=True).returncode == 0
        ),
        None,
    )
    if not (shutil.which("soffice") or shutil.which("libreoffice")) or uno_python is None:
        pytest.skip("LibreOffice with python3-uno not installed")
    sheet = sheet_for(study, tmp_path)
    fill(sheet, ALL_FILLED)
    bare = tmp_path / "unprotected.xlsx"
    shutil.copy(sheet, bare)
    unprotect(bare)
    last = openpyxl.load_workbook(sheet)["Disagreements"].max_row
    script = Path(__file__).resolve().parent / "lo_sort_rows.py"
    out = {}
    for name, path in (("protected", sheet), ("unprotected", bare)):
        res = subprocess.run(
            [uno_python, str(script), str(path), f"A2:Q{last}", str(tmp_path / f"lo-{name}")],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        out[name] = res.stdout.strip().splitlines()[-1] if res.stdout.strip() else res.stderr
    assert out == {"protected": "protected=True reordered=False", "unprotected": "protected=False reordered=True"}, out


def test_a_deleted_row_is_named(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    gone = rows_by_item(ws)[1]["C-10"]["Decision"].row
    ws.delete_rows(gone)  # a script (the protected sheet refuses it in Excel and LibreOffice)
    wb.save(sheet)
    res = import_(study, sheet)
    assert res.exit_code == 0, res.output
    assert "review.xlsx: 1 flagged row is missing from sheet Disagreements (deleted?)" in res.output
    assert 'Warning: review.xlsx: missing row: item "C-10", safety_label' in res.output
    assert "2 new decisions" in res.output
    # an intact sheet: nothing said
    res = import_(study, sheet_for(study, tmp_path, "fresh.xlsx"))
    assert "missing" not in res.output, res.output


def _decided(study, tmp_path) -> Path:
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    assert import_(study, sheet).exit_code == 0
    return study.decisions_path


def test_a_log_line_for_an_item_the_study_does_not_have_is_refused(study, tmp_path):
    log = _decided(study, tmp_path)
    entry = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
    entry.update(id="D000099", item_id="C-GHOST", case_id="C-GHOST")
    log.write_text(log.read_text(encoding="utf-8") + json.dumps(entry) + "\n", encoding="utf-8")
    report = ("report", "--format", "markdown", "-o", tmp_path / "r.md")
    for argv in (("gold", "export"), ("adjudicate", "sheet", "-o", tmp_path / "again.xlsx"), report):
        line = error_line(run(*argv, "--study", study.path))
        assert f"{log}:3: decision D000099 is for item " in line and "C-GHOST" in line, line
        assert "the study's ratings do not have in round 1" in line.replace("this study's", "the study's")
    assert not study.gold_dir.exists() or not any(study.gold_dir.iterdir())
    assert not (tmp_path / "again.xlsx").exists() and not (tmp_path / "r.md").exists()


def test_a_repeated_decision_id_is_refused_by_every_reader(study, tmp_path):
    log = _decided(study, tmp_path)
    first = log.read_text(encoding="utf-8").splitlines()[0]
    log.write_text(log.read_text(encoding="utf-8") + first + "\n", encoding="utf-8")
    for argv in (("gold", "export"), ("status",), ("adjudicate", "sheet", "-o", tmp_path / "again.xlsx")):
        line = error_line(run(*argv, "--study", study.path))
        assert f"{log}:3: decision id D000001 repeats line 1" in line, (argv, line)
    assert not study.gold_dir.exists() or not any(study.gold_dir.iterdir())


def test_calibrate_refuses_a_field_without_ratings_and_a_field_named_twice(study):
    ratings = pd.read_csv(study.ratings_path(1), dtype=str, keep_default_na=False)
    write_csv_atomic(ratings[ratings["field"] != "missing_info"], study.ratings_path(1))  # nobody rated it
    toml = (study.path / "study.toml").read_bytes()
    res = run("calibrate", "--study", study.path, "--rule", "kappa_lower>=0.6", "--field", "missing_info")
    line = error_line(res)
    assert "--field" in line and "'missing_info': round 1 has no ratings of this field from two raters" in line
    assert "no look recorded" in line
    res = run("calibrate", "--study", study.path, "--rule", "kappa_lower>=0.6", "--field", SL, "--field", SL)
    assert "'safety_label' given twice" in error_line(res)
    assert (study.path / "study.toml").read_bytes() == toml  # no look, no rule recorded
    res = run("calibrate", "--study", study.path, "--rule", "kappa_lower>=0.6", "--field", SL)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("where", ["Agreed", "Disagreements"])
def test_an_edited_read_only_cell_is_refused_naming_what_the_sheet_can_change(study, tmp_path, where):
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None)})
    wb = openpyxl.load_workbook(sheet)
    ws = wb[where]
    if where == "Agreed":
        ws.cell(2, 5).value = U  # an agreed value "overridden"
    else:
        rows_by_item(ws)[1]["C-7"]["onc_a value"].value = S  # a rater's value "corrected"
    ws.protection.sheet = False  # Excel and LibreOffice refuse the edit while the sheet is protected
    wb.save(sheet)
    line = error_line(import_(study, sheet))
    assert f"sheet {where} is not protected" in line
    assert "read-only cells (an agreed value, a rater's value, the model) edited" in line
    assert "an agreed value is the raters' unanimous rating; no sheet changes it" in line
    assert not study.decisions_path.exists()


@pytest.mark.parametrize("what", ["agreed", "model", "rater"])
def test_an_edited_read_only_cell_with_the_protection_kept_is_refused_naming_the_cell(study, tmp_path, what):
    """A script (openpyxl keeps the protection) edits a cell the import never reads: named, not ignored."""
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None)})
    wb = openpyxl.load_workbook(sheet)
    rows = rows_by_item(wb["Disagreements"])[1]
    if what == "agreed":
        cell = wb["Agreed"].cell(2, 5)
        before, cell.value = cell.value, U if cell.value != U else S
        needle = f'the agreed value "{before}" was edited to "{cell.value}"'
    elif what == "model":
        cell = rows["C-7"]["Model"]
        cell.value = "gpt-5"
        needle = 'Model "" was edited to "gpt-5" (item "C-7", safety_label); it is read-only'
    else:
        cell = rows["C-7"]["onc_a value"]
        before, cell.value = cell.value, S if cell.value != S else U
        needle = f'onc_a value "{before}" was edited to "{cell.value}" (item "C-7", safety_label); it is read-only'
    wb.save(sheet)
    res = import_(study, sheet)
    assert res.exit_code == 1, res.output
    assert f"{cell.parent.title}!{cell.coordinate}: {needle}" in res.output, res.output
    assert not study.decisions_path.exists()


def test_a_sheet_of_an_earlier_round_is_compared_with_that_round(study, tmp_path):
    """A --round 1 sheet shows round 1's values; with round 2 pulled since (other values), its
    read-only cells and rows are those of round 1: nothing is reported, and an edit still is."""
    ratings = pd.read_csv(study.ratings_path(1), dtype=str, keep_default_na=False)
    again = ratings.assign(round="2")
    again.loc[(again["field"] == SL) & (again["rater"] == "onc_a"), "value"] = U
    write_csv_atomic(again, study.ratings_path(2))
    sheet = tmp_path / "r1.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet, "--round", "1").exit_code == 0
    fill(sheet, {"C-1": (U, "no data", None)})
    edited = tmp_path / "r1-edited.xlsx"
    shutil.copy(sheet, edited)
    res = import_(study, sheet)
    assert res.exit_code == 0 and "1 new decisions" in res.output and "Warning" not in res.output, res.output
    wb = openpyxl.load_workbook(edited)
    cell = rows_by_item(wb["Disagreements"])[1]["C-7"]["onc_a value"]
    assert cell.value == I  # round 1's value (round 2 says Unsupported)
    cell.value = U
    wb.save(edited)
    res = import_(study, edited)
    assert f'Disagreements!{cell.coordinate}: onc_a value "{I}" was edited to "{U}"' in res.output, res.output


def _adjudicators(sheet: Path, cells: dict[str, str]) -> None:
    wb = openpyxl.load_workbook(sheet)
    rows = rows_by_item(wb["Disagreements"])[1]
    for item, who in cells.items():
        rows[item]["Decision"].value = I if item != "C-1" else U
        rows[item]["Reason"].value = f"reason {item}"
        rows[item]["Adjudicator"].value = who
    wb.save(sheet)


@pytest.mark.parametrize("word", ["unresolved", "Unresolved", "none"])
def test_a_reserved_word_is_no_adjudicator(study, tmp_path, word):
    sheet = sheet_for(study, tmp_path)
    _adjudicators(sheet, {"C-1": word})
    res = import_(study, sheet)
    assert res.exit_code == 1 and f'adjudicator "{word}" is a word the decisions log uses' in res.output
    assert not study.decisions_path.exists()
    line = error_line(import_(study, sheet, who=word))
    assert "is a word the decisions log uses, not a person's name" in line


def test_adjudicator_option_names_are_ids(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    _adjudicators(sheet, {"C-1": ""})
    assert "--adjudicator: 'dr chair': use letters, digits, _ - . only" in error_line(
        import_(study, sheet, who="dr chair")
    )
    res = import_(study, sheet, "--adjudicator-name", "X=dr lee")
    assert "use letters, digits, _ - . only" in error_line(res)
    assert not study.decisions_path.exists()


def test_a_mapping_to_a_new_name_is_said(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    _adjudicators(sheet, {"C-1": "X"})
    res = import_(study, sheet, "--adjudicator-name", "X=zed")
    assert res.exit_code == 0, res.output
    assert 'Note: new adjudicator "zed" (Disagreements!H' in res.output and "not in this study before" in res.output


def test_a_rater_in_the_adjudicator_cell_is_said_on_screen(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    _adjudicators(sheet, {"C-1": "onc_a"})
    res = import_(study, sheet, "--not-independent")
    assert res.exit_code == 0, res.output
    assert "Note: 1 decision(s) by onc_a, a rater of this study: recorded as not independent" in res.output
    assert [e["independent"] for e in read_decisions(study.decisions_path)] == [False]


def test_two_new_names_differing_only_in_case_are_one_person(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    _adjudicators(sheet, {"C-1": "Dr_Kim", "C-7": "dr_kim"})
    res = import_(study, sheet)
    assert res.exit_code == 1 and "differ only in case or punctuation: one person is one name" in res.output
    assert not study.decisions_path.exists()


def test_a_case_twin_of_a_known_adjudicator_is_refused_in_a_cell_and_in_a_mapping(study, tmp_path):
    first = sheet_for(study, tmp_path, "first.xlsx")
    _adjudicators(first, {"C-1": "dr_kim"})
    assert import_(study, first).exit_code == 0  # dr_kim is now in the log
    sheet = sheet_for(study, tmp_path)
    _adjudicators(sheet, {"C-7": "X", "C-10": "X"})
    res = import_(study, sheet, "--adjudicator-name", "X=DR_KIM")
    assert res.exit_code == 1, res.output
    line = "--adjudicator-name X=DR_KIM: 'DR_KIM' is another spelling of 'dr_kim' (one person is one name)"
    assert res.output.count(line) == 1, res.output
    res = import_(study, sheet, "--adjudicator-name", "X=dr_kim")
    assert res.exit_code == 0 and "new adjudicator" not in res.output, res.output


def test_a_duplicated_hidden_key_names_the_real_row(study, tmp_path):
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    rows = rows_by_item(ws)[1]
    src, dst = rows["C-1"], rows["C-7"]
    for head, cell in src.items():
        if head != "Decision":
            dst[head].value, dst[head]._style = cell.value, copy(cell._style)  # row C-1 pasted over C-7's
    wb.save(sheet)
    res = import_(study, sheet)
    assert res.exit_code == 1, res.output
    r1, r7 = src["Decision"].row, dst["Decision"].row
    assert f'duplicate row: same item "C-1" and field safety_label as row {r1}' in res.output
    assert "row ?" not in res.output and f"{r7}: duplicate row" in res.output


def test_log_items_are_checked_against_every_round(study, tmp_path):
    """A decision on a round-1 item is no "hand-added" line when a command reads round 2 only:
    the demo's report (round 2, decisions from round 1's sheet) was refused with "decision
    D000001 is for item 'C-1', which this study's ratings do not have"."""
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (S, "guideline 4.2", "dr_lee")})
    assert import_(study, sheet).exit_code == 0
    r1 = pd.read_csv(study.ratings_path(1), dtype=str, keep_default_na=False)
    r2 = r1[r1["item_id"].isin(["C-2", "C-3", "C-4"])].copy()
    r2["item_id"] = r2["item_id"].str.replace("C-", "R2-", regex=False)
    r2["round"] = "2"
    study.mark_round(1)
    study.mark_round(2)
    write_csv_atomic(r2, study.ratings_path(2))
    for args in (
        ["report", "--study", study.path, "--format", "markdown", "-o", tmp_path / "r.md"],
        ["adjudicate", "sheet", "--study", study.path, "--round", "2", "-o", tmp_path / "r2.xlsx"],
        ["gold", "export", "--study", study.path, "--round", "2"],
    ):
        res = run(*args)
        assert res.exit_code == 0, (args[:2], res.output)
    # a line for an item no round has is still refused
    entry = json.loads(study.decisions_path.read_text(encoding="utf-8").splitlines()[0])
    entry.update(id="D999999", item_id="C-404")
    with open(study.decisions_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    res = run("report", "--study", study.path, "--format", "markdown", "-o", tmp_path / "r3.md")
    assert res.exit_code != 0 and "C-404" in error_line(res)


def test_sheet_over_a_filled_unimported_workbook_is_refused_and_replaced_once_imported(tmp_path):
    import openpyxl

    study = make_study(tmp_path)
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    typed = sheet.read_bytes()
    res = run("adjudicate", "sheet", "--study", study.path, "-o", sheet)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: -o {sheet}: holds 2 decision(s) not in the decisions log"), (
        line
    )
    assert "import it first" in line and "--force" in line, line
    assert sheet.read_bytes() == typed and not study.decisions_path.exists()
    assert import_(study, sheet).exit_code == 0
    res = run("adjudicate", "sheet", "--study", study.path, "-o", sheet)  # imported: replaced, pre-filled
    assert res.exit_code == 0 and sheet.read_bytes() != typed, res.output
    res = run("adjudicate", "sheet", "--study", study.path, "-o", sheet)  # only the decisions in force: replaced
    assert res.exit_code == 0, res.output
    other = tmp_path / "other.xlsx"
    openpyxl.Workbook().save(other)  # not a review workbook: replaced as the README says
    assert run("adjudicate", "sheet", "--study", study.path, "-o", other).exit_code == 0


def _sheet_items(path, field="safety_label") -> list[str]:
    import openpyxl
    from test_adjudication_roundtrip import rows_by_item

    return list(rows_by_item(openpyxl.load_workbook(path)["Disagreements"], field)[1])


def test_blank_row_keeping_a_decision_in_force_says_so_not_unresolved(tmp_path):
    """C10/ML4: a fresh sheet with a decided row's Decision cleared (or laptop A re-imported after
    laptop B) said "1 left blank (unresolved)" while the earlier decision stays in force."""
    from test_adjudication_roundtrip import fill, make_study

    from goldboard.adjudicate.decisions import read_decisions

    st = make_study(tmp_path)
    first = tmp_path / "first.xlsx"
    assert run("adjudicate", "sheet", "--study", st.path, "-o", first).exit_code == 0
    item = _sheet_items(first)[0]
    fill(first, {item: ("Supported", "guideline", "dr_lee")})
    res = run("adjudicate", "import", "--study", st.path, first, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    again = tmp_path / "again.xlsx"
    assert run("adjudicate", "sheet", "--study", st.path, "-o", again).exit_code == 0
    fill(again, {item: (None, None, None)})  # the adjudicator cleared the pre-filled decision
    n_rows = len(_sheet_items(again)) + len(_sheet_items(again, "missing_info"))
    before = read_decisions(st.path / "decisions.jsonl")
    res = run("adjudicate", "import", "--study", st.path, again, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    summary = next(ln for ln in res.output.splitlines() if ln.startswith("again.xlsx:"))
    assert f"{n_rows} left blank (1 keep the decision already in force, {n_rows - 1} still to decide;" in summary, (
        summary
    )
    assert "write unresolved to reopen it" in summary
    assert read_decisions(st.path / "decisions.jsonl") == before  # the decision stays in force


def test_adjudicator_name_mapping_that_matches_no_cell_is_noted(tmp_path):
    """LS12b: ``--adjudicator-name X=zed`` where no Adjudicator cell says X was silently unused."""
    from test_adjudication_roundtrip import fill, make_study

    st = make_study(tmp_path)
    sheet = tmp_path / "s.xlsx"
    assert run("adjudicate", "sheet", "--study", st.path, "-o", sheet).exit_code == 0
    fill(sheet, {_sheet_items(sheet)[0]: ("Supported", "guideline", "Dr Lee")})
    res = run(
        "adjudicate",
        "import",
        "--study",
        st.path,
        sheet,
        "--adjudicator",
        "dr_lee",
        "--adjudicator-name",
        "Dr Lee=dr_lee",
        "--adjudicator-name",
        "X=zed",
    )
    assert res.exit_code == 0, res.output
    notes = [ln for ln in res.output.splitlines() if ln.startswith("Note: --adjudicator-name")]
    assert notes == [
        "Note: --adjudicator-name X=zed: no Adjudicator cell of the sheet says 'X'; the mapping was not used"
    ]


def test_y01_sheet_refuses_to_overwrite_typed_decisions(openmtb_pulled, tmp_path):
    review = tmp_path / "review.xlsx"
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)  # nothing typed: replaced as before
    typed = fill_sheet(review, 3)
    filled = review.read_bytes()
    res = run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review, code=1)
    error_naming(res, f"holds {typed} decision(s) not in the decisions log (e.g. Disagreements!F2")
    assert "import it first" in res.output and "--force" in res.output
    assert review.read_bytes() == filled  # the typed decisions are still there
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", tmp_path / "other.xlsx")  # another -o is free
    run_ok("adjudicate", "import", "--study", openmtb_pulled, review, "--adjudicator", "dr_chair")
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)  # imported: the log has them, replaced
    assert review.read_bytes() != filled


def test_y01_force_replaces_a_filled_sheet_and_other_files_are_replaced(openmtb_pulled, tmp_path):
    review = tmp_path / "review.xlsx"
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)
    fill_sheet(review)
    filled = review.read_bytes()
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review, "--force")
    assert review.read_bytes() != filled
    other = tmp_path / "notes.xlsx"
    other.write_bytes(b"not a workbook")
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", other)
    assert other.read_bytes()[:2] == b"PK"


def test_y01_a_decision_imported_in_another_spelling_counts_as_imported(openmtb_pulled, tmp_path):
    from openpyxl import load_workbook

    review = tmp_path / "review.xlsx"
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)
    fill_sheet(review, 3)
    wb = load_workbook(review)
    ws = wb["Disagreements"]
    col = [c.value for c in ws[1]].index("Decision") + 1
    for r in range(2, 5):
        ws.cell(r, col).value = f"  {str(ws.cell(r, col).value).upper()} "  # the import forgives case and spaces
    wb.save(review)
    error_naming(run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review, code=1), "holds 3 decision(s)")
    run_ok("adjudicate", "import", "--study", openmtb_pulled, review, "--adjudicator", "dr_chair")
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)  # the log has them as the import read them
