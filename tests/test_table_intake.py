"""A ratings table (CSV, xlsx, JSON lines) taken into a round: one column in two roles, a free-text
field as the rated field, workbooks with several, hidden or merged sheets, rows or columns, a
study's own file pulled back as a table, JSON lists in a single-choice field, a codes dictionary,
broken CSV quoting, JSON keys given twice, a re-pull of a round from another file, a table without
a valid rating, items added to a round with gold: refused naming the file, row and field, or read
as meant.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from builders import WIDE, pulled_table, study_bytes, study_files, table_study, write_table
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run

PULL_AB = ["--item-col", "case_id", "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"]


def test_repull_of_a_round_from_another_file_is_refused_and_says_how_to_replace(tmp_path):
    """Before: "0 valid ratings ... 6 x already rated from another source", exit 0, and the
    corrected file recorded in study.toml as a source of round 1."""
    s = tmp_path / "st"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    t1 = write_table(
        tmp_path / "t1.csv", ["C1,Supported,Unsupported", "C2,Supported,Supported", "C3,Unsupported,Supported"]
    )
    invoke_cli("pull", "--study", s, "--from-table", t1, *PULL_AB, code=0)
    fixed = ["C1,Unsupported,Unsupported", "C2,Supported,Supported", "C3,Supported,Unsupported"]
    t2 = write_table(tmp_path / "t1_corrected.csv", fixed)
    before = study_files(s)
    line = error_line(invoke_cli("pull", "--study", s, "--from-table", t2, *PULL_AB, "--round", 1))
    assert "t1_corrected.csv: nothing pulled: all 6 of its ratings are already in round 1 from 't1.csv'" in line
    assert "pull it as that source (--source t1.csv: the output lists each change)" in line
    assert "to add it as a new round, give --round 2" in line
    assert study_files(s) == before
    # the advice works: the corrected table replaces t1.csv's ratings
    res = invoke_cli("pull", "--study", s, "--from-table", t2, *PULL_AB, "--round", 1, "--source", "t1.csv", code=0)
    assert "3 changed" in res.output
    rows = (s / "rounds/1/ratings.csv").read_text(encoding="utf-8")
    assert "C1,C1,,,onc_a,safety_label,Unsupported" in rows


def test_table_without_a_valid_rating_is_refused_and_writes_nothing(tmp_path):
    """Before: exit 0, an empty round 1 written and the 2 items recorded as new units."""
    s = tmp_path / "st"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    before = study_files(s)
    bad = write_table(tmp_path / "bad.csv", ["C1,Supportd,Unsup", "C2,x,y"])
    line = error_line(invoke_cli("pull", "--study", s, "--from-table", bad, *PULL_AB))
    assert "bad.csv: nothing pulled: no valid rating in this table (4 held out as invalid; e.g. bad.csv:2: " in line
    assert "'Supportd' is not a value of safety_label" in line
    assert study_files(s) == before


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--item-col", "a", "--rater-cols", "onc_a=a,onc_b=b"], "as --item-col 'a' and as --rater-cols onc_a=a"),
        (
            ["--item-col", "case_id", "--case-col", "a", "--rater-cols", "onc_a=a,onc_b=b"],
            "as --case-col 'a' and as --rater-cols onc_a=a",
        ),
        (
            ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--rationale-col", "onc_a=a,onc_b=b"],
            "as --rater-cols onc_a=a and as --rationale-col onc_a=a",
        ),
        (
            [
                "--item-col",
                "case_id",
                "--rater-cols",
                "onc_a=a,onc_b=b",
                "--rationale-col",
                "onc_a=note_a,onc_b=note_a",
            ],
            "as --rationale-col onc_a=note_a and as --rationale-col onc_b=note_a",
        ),
    ],
)
def test_one_column_in_two_roles_refused(tmp_path, args, needle):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b,note_a,note_b\nC1,Supported,Unsafe,why a,why b\nC2,Unsafe,Unsafe,,\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, "--field", "safety_label", *args))
    assert "w.csv: column" in line and "is read twice" in line and needle in line
    assert not (s / "rounds").exists()


def test_long_table_rater_column_as_item_column_refused_distinct_columns_read(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "l.csv"
    t.write_text("case_id,rater,safety_label\nC1,onc_a,Supported\nC1,onc_b,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, "--item-col", "rater"))
    assert "column 'rater' is read twice, as --item-col 'rater' and as --rater-col 'rater'" in line
    assert not (s / "rounds").exists()
    res = run("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--case-col", "case_id")
    assert res.exit_code == 0, res.output
    assert pulled_table(s)[["rater", "value"]].values.tolist() == [["onc_a", "Supported"], ["onc_b", "Unsafe"]]


def test_free_text_field_as_the_rated_field_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,looks fine,too risky\n")
    line = error_line(
        run(
            "pull",
            "--study",
            s,
            "--from-table",
            t,
            "--item-col",
            "case_id",
            "--rater-cols",
            "onc_a=a,onc_b=b",
            "--field",
            "rationale",
        )
    )
    assert "--field 'rationale': a free-text field of schema mtb_unsafe, never a rating" in line
    assert "--field safety_label" in line and "--rationale-col" in line
    assert not (s / "rounds").exists()


def test_jsonl_id_that_is_a_list_refused_naming_the_line(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "r.jsonl"
    t.write_text(
        '{"case_id": "C1", "rater": "onc_a", "label": "Supported"}\n'
        '{"case_id": "C1", "rater": "onc_b", "label": "Supported"}\n'
        '{"case_id": ["C2"], "rater": "onc_a", "label": "Supported"}\n'
    )
    args = ["--item-col", "case_id", "--label-col", "label", "--field", "safety_label"]
    line = error_line(run("pull", "--study", s, "--from-table", t, *args))
    assert "r.jsonl: line 3: --item-col 'case_id' holds a JSON list ([\"C2\"]), not an id" in line
    t.write_text('{"case_id": "C1", "rater": {"name": "onc_a"}, "label": "Supported"}\n')
    line = error_line(run("pull", "--study", s, "--from-table", t, *args))
    assert "line 1: --rater-col 'rater' holds a JSON object" in line
    assert not (s / "rounds").exists()


def test_jsonl_duplicate_key_refused_naming_line_and_key(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "d.jsonl"
    t.write_text(
        '{"case_id": "C1", "rater": "onc_b", "label": "Supported"}\n'
        '{"case_id": "C1", "rater": "onc_a", "label": "Supported", "label": "Unsupported"}\n'
    )
    line = error_line(run("pull", "--study", s, "--from-table", t, "--label-col", "label", "--field", "safety_label"))
    assert "d.jsonl:2: invalid JSON: key 'label' appears twice in one object" in line
    assert not (s / "rounds").exists()


def test_parse_jsonl_keeps_nested_objects_and_flags_nested_duplicate():
    from goldboard.fileio import parse_jsonl

    ok = list(parse_jsonl('{"a": {"b": 1, "c": [{"d": 2}]}}\n'))
    assert ok == [(1, {"a": {"b": 1, "c": [{"d": 2}]}}, None)]
    ((i, rec, exc),) = parse_jsonl('\n{"a": {"b": 1, "b": 2}}')
    assert (i, rec) == (2, None) and "key 'b' appears twice" in exc.msg


def _workbook(path: Path, sheets: dict[str, list[list]], hidden=(), active: int = 0, merge: str | None = None) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, rows in sheets.items():
        ws = wb.create_sheet(title)
        for row in rows:
            ws.append(row)
        if title in hidden:
            ws.sheet_state = "hidden"
        if merge and title == list(sheets)[0]:
            ws.merge_cells(merge)
    wb.active = active
    wb.save(path)
    return path


MAIN = [
    ["case_id", "a", "b"],
    ["C1", "Supported", "Unsafe"],
    ["C2", "Unsafe", "Unsafe"],
    ["C3", "Supported", "Supported"],
]
OTHER = [["case_id", "a", "b"], ["C9", "Unsafe", "Supported"]]


def test_workbook_with_two_data_sheets_refused_then_read_with_sheet(tmp_path):
    s = table_study(tmp_path)
    t = _workbook(tmp_path / "two.xlsx", {"Main": MAIN, "More": OTHER})
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert "two.xlsx: the workbook has 2 sheet(s) holding data ('Main', 'More'; active: 'Main')" in line
    assert "--sheet NAME" in line
    assert not (s / "rounds").exists()
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--sheet", "Mian"))
    assert line == f"Error: --sheet 'Mian': {t} has no such sheet (sheets: Main, More)"
    res = run("pull", "--study", s, "--from-table", t, *WIDE, "--sheet", "More")
    assert res.exit_code == 0, res.output
    assert pulled_table(s)[["item_id", "rater", "value"]].values.tolist() == [
        ["C9", "onc_a", "Unsafe"],
        ["C9", "onc_b", "Supported"],
    ]


def test_workbook_with_hidden_first_sheet_refused_naming_it(tmp_path):
    s = table_study(tmp_path)
    t = _workbook(tmp_path / "h.xlsx", {"Old": OTHER, "Ratings": MAIN}, hidden=("Old",), active=1)
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert "('Old' (hidden), 'Ratings'; active: 'Ratings')" in line
    assert not (s / "rounds").exists()


def test_workbook_with_one_data_sheet_and_empty_sheets_read(tmp_path):
    s = table_study(tmp_path)
    t = _workbook(tmp_path / "one.xlsx", {"Ratings": MAIN, "Notes": []})
    res = run("pull", "--study", s, "--from-table", t, *WIDE)
    assert res.exit_code == 0, res.output
    assert sorted(set(pulled_table(s)["item_id"])) == ["C1", "C2", "C3"]


def test_workbook_whose_only_data_sheet_is_not_active_refused(tmp_path):
    s = table_study(tmp_path)
    t = _workbook(tmp_path / "na.xlsx", {"Ratings": MAIN, "Notes": []}, active=1)
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert "1 sheet(s) holding data ('Ratings'; active: 'Notes')" in line


def test_workbook_with_merged_rating_cells_refused_naming_the_range(tmp_path):
    s = table_study(tmp_path)
    t = _workbook(tmp_path / "m.xlsx", {"Ratings": MAIN}, merge="B3:B4")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert "m.xlsx: sheet Ratings, cells B3:B4 are merged" in line
    assert not (s / "rounds").exists()


def test_sheet_on_a_csv_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--sheet", "Main"))
    assert "--sheet 'Main'" in line and "is not a workbook" in line


def test_table_adding_items_to_a_round_with_gold_refused_unless_said(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Supported\nC2,Unsafe,Unsafe\nC3,Supported,Unsupported\n")
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    assert run("gold", "export", "--study", s).exit_code == 0
    before = (s / "rounds" / "1" / "ratings.csv").read_bytes()
    plus = tmp_path / "plus.csv"
    plus.write_text(t.read_text() + "C4,Unsafe,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", plus, *WIDE, "--source", "w.csv"))
    assert "round 1 already has gold release v1; this table adds 1 item new to the round ('C4')" in line
    assert "--round 2" in line and "--add-to-adjudicated-round" in line
    assert (s / "rounds" / "1" / "ratings.csv").read_bytes() == before
    # re-pulling the round's own items stays allowed; the user may say so; a new round is fine
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    res = run("pull", "--study", s, "--from-table", plus, *WIDE, "--source", "w.csv", "--add-to-adjudicated-round")
    assert res.exit_code == 0, res.output
    assert "C4" in set(pulled_table(s)["item_id"])


def test_study_round_beyond_the_next_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\n")
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("study", "round", s, 5, "--calibration"))
    assert line == "Error: round 5: the study has rounds 1; a new round is round 2 (rounds are numbered without gaps)"
    assert (s / "study.toml").read_bytes() == toml
    assert run("study", "round", s, 1, "--calibration").exit_code == 0
    assert run("study", "round", s, 2, "--guideline-version", "v2").exit_code == 0  # the next round: recorded ahead


def test_unterminated_csv_quote_is_a_parse_error_with_its_line(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "q.csv"
    t.write_text('case_id,a,b\nC1,"Supported,Supported\nC2,Unsupported,Supported\n')
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert (
        line == f"Error: {t}:2: not valid CSV: the quote opened on line 2 is never closed (the rest of the "
        "file would read as one cell); close the quote or remove it"
    )
    assert not (s / "rounds").exists()


def test_quoted_cells_over_lines_and_literal_quotes_still_read(tmp_path):
    from goldboard.fileio import read_records

    t = tmp_path / "ok.csv"
    t.write_bytes(b'case_id,a\r\nC1,"Sup\r\nported"\r\nC2,"x ""y"""\r\nC3,5" tumour\r\n')
    assert read_records(t) == [
        (2, {"case_id": "C1", "a": "Sup\r\nported"}),
        (4, {"case_id": "C2", "a": 'x "y"'}),
        (5, {"case_id": "C3", "a": '5" tumour'}),
    ]


def test_workbook_with_two_data_sheets_refused_by_a_command_without_sheet(tmp_path):
    t = _workbook(tmp_path / "two.xlsx", {"Main": MAIN, "More": OTHER})
    out = tmp_path / "s.csv"
    line = error_line(run("plan", "sample", "--cases", t, "-n", "1", "--seed", "1", "-o", out))
    assert "the workbook has 2 sheet(s) holding data ('Main', 'More'; active: 'Main')" in line
    assert line.endswith("save the sheet to read as its own workbook") and "--sheet" not in line
    assert not out.exists()


def test_workbook_merged_cells_outside_the_columns_read_warned_and_read(tmp_path):
    s = table_study(tmp_path)
    rows = [r + [n] for r, n in zip(MAIN, ["note", "long note", None, None])]
    t = _workbook(tmp_path / "m.xlsx", {"Ratings": rows}, merge="D2:D3")
    res = run("pull", "--study", s, "--from-table", t, *WIDE)
    assert res.exit_code == 0, res.output
    assert "warning: cells D2:D3 (note) are merged; that column is not read" in res.output
    assert sorted(set(pulled_table(s)["item_id"])) == ["C1", "C2", "C3"]
    s2 = table_study(tmp_path / "b")
    line = error_line(run("pull", "--study", s2, "--from-table", t, *WIDE, "--rationale-col", "note"))
    assert "m.xlsx: sheet Ratings, cells D2:D3 are merged" in line
    assert not (s2 / "rounds").exists()


def test_jsonl_line_ending_in_a_comma_is_named_as_such(tmp_path):
    """M18: ``{...},`` lines were refused as "invalid JSON: Extra data" (Python's jargon)."""
    t = tmp_path / "t.jsonl"
    t.write_text(
        '{"case_id":"C1","rater":"onc_a","label":"Supported"},\n{"case_id":"C1","rater":"onc_b","label":"Unsafe"},\n'
    )
    line = _pull_refused_long(tmp_path, t)
    assert "t.jsonl:1: " in line and "a comma after the record; JSON Lines has one object per line, no commas" in line
    assert "Extra data" not in line, line


def _pull_refused_long(tmp_path, table) -> str:
    s = tmp_path / "s"
    assert run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    args = ["--item-col", "case_id", "--rater-col", "rater", "--label-col", "label", "--field", "safety_label"]
    res = run("pull", "--study", s, "--from-table", table, *args)
    line = error_line(res)
    assert not (s / "rounds").exists(), "nothing written"
    return line


def hidden_workbook(path: Path, *, rows: tuple[int, ...] = (), cols: tuple[str, ...] = ()) -> Path:
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    for rec in [
        ("case_id", "a", "b", "note"),
        ("C1", "Supported", "Unsafe", "x"),
        ("C2", "Unsafe", "Unsafe", "y"),
        ("C3", "Supported", "Supported", "z"),
        ("C4", "Unsafe", "Supported", "w"),
    ]:
        ws.append(rec)
    for r in rows:
        ws.row_dimensions[r].hidden = True
    for c in cols:
        ws.column_dimensions[c].hidden = True
    wb.save(path)
    return path


def test_hidden_rows_of_a_workbook_refused_naming_them(tmp_path):
    s = table_study(tmp_path)
    x = hidden_workbook(tmp_path / "h.xlsx", rows=(3, 5))
    before = study_bytes(s)
    line = error_line(run("pull", "--study", s, "--from-table", x, *WIDE))
    assert "h.xlsx: sheet Sheet: 2 hidden rows (3, 5) would be read like the visible cells" in line
    assert "--read-hidden" in line
    assert study_bytes(s) == before


def test_hidden_column_read_refused_a_hidden_column_not_read_ignored(tmp_path):
    s = table_study(tmp_path)
    x = hidden_workbook(tmp_path / "c.xlsx", cols=("C",))
    line = error_line(run("pull", "--study", s, "--from-table", x, *WIDE))
    assert "c.xlsx: sheet Sheet: hidden column C (b) would be read" in line
    assert not (s / "rounds").exists()
    x2 = hidden_workbook(tmp_path / "d.xlsx", cols=("D",))  # the note column: not read
    res = run("pull", "--study", s, "--from-table", x2, *WIDE)
    assert res.exit_code == 0 and "warning" not in res.output, res.output


def test_read_hidden_reads_them_says_so_and_records_it_in_the_round(tmp_path):
    s = table_study(tmp_path)
    x = hidden_workbook(tmp_path / "h.xlsx", rows=(3,), cols=("B",))
    res = run("pull", "--study", s, "--from-table", x, *WIDE, "--read-hidden")
    assert res.exit_code == 0, res.output
    assert "warning: sheet Sheet: read 1 hidden row (3) and hidden column B (a) (--read-hidden)" in res.output
    assert sorted(set(pulled_table(s)["item_id"])) == ["C1", "C2", "C3", "C4"]
    from goldboard.study import Study

    assert Study.open(s).rounds[0].tables["h.xlsx"]["hidden_read"] == {"rows": [3], "columns": ["a"]}
    t = tmp_path / "w.csv"  # a CSV has nothing hidden: the flag means nothing there
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--read-hidden", "--round", "2"))
    assert "--read-hidden: " in line and "w.csv is not a workbook" in line


@pytest.fixture()
def pulled_study(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "r1.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\n")
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    return s


@pytest.mark.parametrize(
    "rel,what",
    [("rounds/1/ratings.csv", "ratings rounds"), ("rounds/1/invalid.csv", "ratings rounds"), ("units.jsonl", "items")],
)
def test_a_study_file_pulled_as_a_table_refused(pulled_study, rel, what):
    s = pulled_study
    before = study_bytes(s)
    line = error_line(run("pull", "--study", s, "--from-table", s / rel, "--round", "2"))
    assert f"{s / rel}: is the study's own file ({what}" in line
    assert study_bytes(s) == before


def test_a_copy_of_a_rounds_ratings_pulled_as_a_table_refused(pulled_study, tmp_path):
    s = pulled_study
    copy = tmp_path / "ratings_copy.csv"
    copy.write_bytes((s / "rounds" / "1" / "ratings.csv").read_bytes())
    before = study_bytes(s)
    line = error_line(run("pull", "--study", s, "--from-table", copy, "--round", "2"))
    assert "ratings_copy.csv: holds the same bytes as the study's rounds/1/ratings.csv" in line
    assert study_bytes(s) == before


def test_a_report_written_into_the_study_pulled_as_a_table_refused(pulled_study, tmp_path):
    s = pulled_study
    (s / "reports").mkdir()
    t = s / "reports" / "r2.csv"
    t.write_text("case_id,a,b\nC1,Unsafe,Unsafe\nC2,Unsafe,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--round", "2"))
    assert "r2.csv: is the study's own file (a report goldboard wrote)" in line
    assert not (s / "rounds" / "2").exists()


@pytest.mark.parametrize("order", ["new_first", "old_first"])
def test_deprecated_raters_with_rater_cols_refused(tmp_path, order):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\n")
    new, old = ["--rater-cols", "onc_a=a,onc_b=b"], ["--raters", "onc_a=b,onc_b=a"]
    both = new + old if order == "new_first" else old + new
    res = run("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--field", "safety_label", *both)
    line = error_line(res)
    assert "--raters and --rater-cols both given: --raters is the old spelling of --rater-cols" in line
    assert not (s / "rounds").exists()
    res = run("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--field", "safety_label", *old)
    assert res.exit_code == 0 and "--raters is deprecated" in res.output  # alone, the old spelling still works


def mtb_study(tmp_path: Path) -> Path:
    s = tmp_path / "m"
    assert run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b").exit_code == 0
    return s


def test_json_list_in_a_single_choice_field_refused_naming_line_and_field(tmp_path):
    s = mtb_study(tmp_path)
    t = tmp_path / "l.jsonl"
    t.write_text(
        '{"case_id": "C1", "rater": "onc_a", "safety_label": ["Supported"]}\n'
        '{"case_id": "C1", "rater": "onc_b", "safety_label": "Supported"}\n'
    )
    line = error_line(run("pull", "--study", s, "--from-table", t))
    assert "l.jsonl: line 1: 'safety_label' (safety_label) holds a JSON list ([\"Supported\"])" in line
    assert "takes one value" in line
    assert not (s / "rounds").exists()
    j = tmp_path / "w.json"  # a wide JSON array: the record is named
    j.write_text('[{"case_id": "C1", "a": "Unsupported", "b": {"v": "Supported"}}]')
    wide = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label"]
    line = error_line(run("pull", "--study", s, "--from-table", j, *wide))
    assert "w.json: record 1: 'b' (safety_label) holds a JSON object" in line


def test_json_list_in_a_multi_select_field_is_read(tmp_path):
    s = mtb_study(tmp_path)
    t = tmp_path / "m.jsonl"
    t.write_text(
        '{"case_id": "C1", "rater": "onc_a", "safety_label": "Insufficient Information", '
        '"missing_info": ["stage", "ecog_status"], "rationale": "no stage"}\n'
        '{"case_id": "C1", "rater": "onc_b", "safety_label": "Supported", "rationale": "fine"}\n'
    )
    res = run("pull", "--study", s, "--from-table", t)
    assert res.exit_code == 0, res.output
    got = pd.read_csv(s / "rounds" / "1" / "ratings.csv", dtype=str, keep_default_na=False)
    mine = (got["field"] == "missing_info") & (got["rater"] == "onc_a")
    assert got.loc[mine, "value"].tolist() == ["stage|ecog_status"]


def test_table_source_name_with_a_control_character_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--source", "clinic\x1b[8m"))
    assert "--source: the name 'clinic\\x1b[8m' contains invisible or control character(s) U+001B" in line
    assert not (s / "rounds").exists()


@pytest.mark.parametrize(
    "codes,needle",
    [
        (
            "column,code,label\nsafety_label,1,Supported\nsafety_label,2,Unsafe\nsafety_label,3,Maybe\n",
            "codes.csv:4: safety_label: code '3' -> 'Maybe' is not a value of safety_label",
        ),
        (  # a dictionary named like the rater's column
            "column,code,label\nb,1,Supportd\nb,2,Unsafe\n",
            "codes.csv:2: b: code '1' -> 'Supportd' is not a value of safety_label (did you mean 'Supported'",
        ),
        (  # a REDCap data dictionary
            'Variable / Field Name,Field Type,"Choices, Calculations, OR Slider Labels"\n'
            'safety_label,radio,"1, Supported | 2, Unsafe | 3, Not sure"\n',
            "codes.csv:2: safety_label: code '3' -> 'Not sure' is not a value of safety_label",
        ),
    ],
)
def test_codes_dictionary_with_a_label_not_in_the_schema_refused_before_reading(tmp_path, codes, needle):
    s = table_study(tmp_path)
    t = tmp_path / "coded.csv"
    t.write_text("case_id,a,b\nC1,1,2\nC2,2,2\n")  # code 3 is never used: the dictionary itself is wrong
    c = tmp_path / "codes.csv"
    c.write_text(codes)
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--codes", c))
    assert needle in line and "no rating was read" in line
    assert not (s / "rounds").exists()


def test_codes_dictionary_with_aliases_and_unrelated_variables_is_read(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "coded.csv"
    t.write_text("case_id,a,b,sex\nC1,1,2,1\nC2,2,2,2\n")
    c = tmp_path / "codes.csv"
    c.write_text("column,code,label\nsafety_label,1,supported\nsafety_label,2,Unsafe\nsex,1,female\nsex,2,male\n")
    res = run("pull", "--study", s, "--from-table", t, *WIDE, "--codes", c)
    assert res.exit_code == 0, res.output
    assert sorted(pulled_table(s)["value"]) == ["Supported", "Unsafe", "Unsafe", "Unsafe"]


def test_json_array_record_with_a_key_given_twice_refused_naming_the_record(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "d.json"
    t.write_text(
        '[{"case_id": "C1", "a": "Supported", "b": "Unsafe"},\n'
        ' {"case_id": "C2", "a": "Unsafe", "b": "Unsafe", "a": "Supported"}]\n'
    )
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert "d.json: record 2: key 'a' appears twice in one object (which value is meant?)" in line
    assert not (s / "rounds").exists()
    t.write_text('{"ratings": [{"case_id": "C1", "a": "Supported", "b": "Unsafe"}], "ratings": []}')
    assert "key 'ratings' appears twice" in error_line(run("pull", "--study", s, "--from-table", t, *WIDE))


def test_cases_json_with_a_key_given_twice_is_a_problem_naming_the_line(tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text('[{"case_id": "C1", "text": "first"},\n {"case_id": "C2", "text": "a", "text": "b"}]\n')
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert res.exit_code != 0
    assert "cases.json:2: text: key appears twice in one object" in res.output


@pytest.mark.parametrize("cell", ['"Supported"x', '"Supported" ', '"Sup"ported'])
def test_csv_cell_with_text_after_its_closing_quote_refused_naming_the_line(tmp_path, cell):
    s = table_study(tmp_path)
    t = tmp_path / "q.csv"
    t.write_text(f"case_id,a,b\nC1,Unsafe,Unsafe\nC2,{cell},Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert "q.csv:3: not valid CSV: text follows a closing quote inside a cell" in line
    assert not (s / "rounds").exists()


def test_csv_quotes_written_by_spreadsheets_are_read(tmp_path):
    """A quoted cell, a doubled quote inside it, a quote inside an unquoted cell and a line
    break inside a quoted cell are all valid CSV: read as written."""
    s = table_study(tmp_path)
    t = tmp_path / "ok.csv"
    t.write_text(
        'case_id,a,b,rationale\nC1,"Supported",Unsafe,"he said ""no"""\nC2,Unsafe,Unsafe,"two\nlines"\nC3,Unsafe,Unsafe,5" tall\n'
    )
    res = run("pull", "--study", s, "--from-table", t, *WIDE, "--rationale-col", "onc_a=rationale")
    assert res.exit_code == 0, res.output
    got = pulled_table(s)
    assert sorted(got.loc[got["rater"] == "onc_a", "rationale"]) == ['5" tall', 'he said "no"', "two\nlines"]


def test_a_resaved_copy_of_a_rounds_ratings_pulled_as_a_table_refused(pulled_study, tmp_path):
    """Saved again by a spreadsheet (other line ends, rows sorted), the bytes differ but the
    ratings are the round's own: refused like the file itself."""
    s = pulled_study
    df = pd.read_csv(s / "rounds" / "1" / "ratings.csv", dtype=str, keep_default_na=False)
    copy = tmp_path / "resaved.csv"
    df.sort_values(["rater", "item_id"], ascending=False).to_csv(copy, index=False, lineterminator="\r\n")
    line = error_line(run("pull", "--study", s, "--from-table", copy, "--round", "2"))
    assert "resaved.csv: holds the same ratings as the study's rounds/1/ratings.csv" in line
    assert not (s / "rounds" / "2").exists()
    df.loc[0, "value"] = "Unsupported"  # one rating differs: a table of its own, read
    df.to_csv(copy, index=False)
    assert run("pull", "--study", s, "--from-table", copy, "--round", "2").exit_code == 0
