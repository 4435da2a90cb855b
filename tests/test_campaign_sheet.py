"""Issue 23, the review sheet, decisions log, gold and calibrate: the silent acceptances an
independent re-run of the misuse campaign still found.  Each test failed on the code before
its fix (checked by hand on the commit before).

1. the Disagreements sheet is structure-protected (no sorting, inserting or deleting rows);
   a sheet whose protection was removed is refused unless --unprotected-sheet (recorded):
   a value-only sort (which moves no format, so no per-row check sees it) needs that;
2. a flagged row deleted from the sheet is named;
3. a hand-added log line (an item the study does not have, a repeated id) is refused by
   every reader, naming the line;
4. calibrate refuses a field without ratings and a field named twice, before a look;
5. an edited read-only cell (Agreed value, rater value, model) needs the protection
   removed: refused, saying what the sheet can and cannot change;
6. adjudicator names: reserved words, ids, unknown mapping targets, raters, case twins;
7. a duplicated hidden key names the real row.
"""

from __future__ import annotations

import json
import shutil
import sys
from copy import copy
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from goldboard.adjudicate import review_sheet
from goldboard.adjudicate.decisions import read_decisions
from goldboard.fileio import write_csv_atomic

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_adjudication_roundtrip import fill, make_study, rows_by_item  # noqa: E402
from test_flags import I, P, S, U  # noqa: E402
from test_misuse_inputs import error_line, run  # noqa: E402

SL = "safety_label"


@pytest.fixture()
def study(tmp_path):
    return make_study(tmp_path)


def sheet_for(study, tmp_path, name="review.xlsx") -> Path:
    p = tmp_path / name
    res = run("adjudicate", "sheet", "--study", study.path, "-o", p)
    assert res.exit_code == 0, res.output
    return p


def import_(study, sheet, *extra, who="dr_lee"):
    return run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", who, *extra)


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


# --------------------------------------------------------------------------- 1. value-only sort, protection


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


# --------------------------------------------------------------------------- 2. a deleted row


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


# --------------------------------------------------------------------------- 3. hand-edited log lines


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


# --------------------------------------------------------------------------- 4. calibrate


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


# --------------------------------------------------------------------------- 5. read-only cells


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


# --------------------------------------------------------------------------- 6. adjudicator names


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


# --------------------------------------------------------------------------- 7. a duplicated key


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
