"""Tables, ids, names, URLs and paths an independent re-run of the misuse campaign still found
silently accepted after issue 23 ("every input is used as the user meant, or refused").  Each
test fails on the code before its fix.

Oracle for every refusal: one ``Error:`` line naming the file, row/cell (or flag) and field, a
non-zero exit, no traceback, and nothing written (no round, the study file unchanged).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_campaign_inputs import WIDE, pulled, table_study
from test_misuse_inputs import error_line, run  # the shared no-traceback runner and its one error line


def study_bytes(s: Path) -> dict[str, bytes]:
    return {str(p.relative_to(s)): p.read_bytes() for p in sorted(s.rglob("*")) if p.is_file() and p.suffix != ".lock"}


# --------------------------------------------------------------------------- 1. case-only twin ids


def test_item_ids_differing_only_in_case_refused_naming_both_rows(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "twins.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\nc1,Supported,Supported\n")
    before = study_bytes(s)
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert "twins.csv: rows 2 and 4: item ids 'C1' and 'c1' differ only in letter case (case_id)" in line
    assert study_bytes(s) == before


def test_item_id_differing_only_in_case_from_a_study_item_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "r1.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\n")
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    t2 = tmp_path / "r2.csv"
    t2.write_text("case_id,a,b\nc1,Supported,Unsafe\nC2,Unsafe,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t2, *WIDE, "--round", "2"))
    assert "r2.csv: item id 'c1' looks like the study's item 'C1' (the two ids differ only in letter case)" in line
    assert not (s / "rounds" / "2").exists()


def test_case_ids_differing_only_in_case_refused_by_cases_validate(tmp_path):
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,text\nC1,first\nc1,second\n")
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert res.exit_code != 0
    assert "cases.csv:3: case_id: 'c1' and 'C1' (line 2) differ only in letter case" in res.output


# --------------------------------------------------------------------------- 2. placeholder ids


@pytest.mark.parametrize("placeholder", ["NA", "N/A", "NULL", "#N/A", "None", "nan", "-", "NaN", "<NA>", "null"])
def test_missing_value_placeholder_as_item_id_refused_naming_the_row(tmp_path, placeholder):
    s = table_study(tmp_path)
    t = tmp_path / "na.csv"
    t.write_text(f"case_id,a,b\nC1,Supported,Unsafe\n{placeholder},Unsafe,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE))
    assert f"na.csv: row 3: case_id {placeholder!r} is what a spreadsheet, R or pandas writes for a missing" in line
    assert not (s / "rounds").exists()


def test_placeholder_id_in_xlsx_and_jsonl_refused(tmp_path):
    s = table_study(tmp_path)
    x = tmp_path / "na.xlsx"
    pd.DataFrame({"case_id": ["C1", "#N/A"], "a": ["Supported", "Unsafe"], "b": ["Unsafe", "Unsafe"]}).to_excel(
        x, index=False
    )
    assert "na.xlsx: row 3: case_id '#N/A'" in error_line(run("pull", "--study", s, "--from-table", x, *WIDE))
    j = tmp_path / "na.jsonl"
    j.write_text(
        '{"case_id": "C1", "a": "Supported", "b": "Unsafe"}\n{"case_id": "None", "a": "Unsafe", "b": "Unsafe"}\n'
    )
    assert "na.jsonl: line 2: case_id 'None'" in error_line(run("pull", "--study", s, "--from-table", j, *WIDE))
    assert not (s / "rounds").exists()


def test_ids_and_labels_that_only_contain_na_are_read_as_written(tmp_path):
    """``NA-12``, ``NAT1`` and ``None-1`` are real ids; a label cell ``NA`` is no value of the
    field and is held out by validation as written, never read as a blank cell."""
    s = table_study(tmp_path)
    t = tmp_path / "ok.csv"
    t.write_text("case_id,a,b\nNA-12,Supported,Unsafe\nNAT1,Unsafe,Unsafe\nNone-1,NA,Unsafe\n")
    res = run("pull", "--study", s, "--from-table", t, *WIDE)
    assert res.exit_code == 0, res.output
    assert sorted(set(pulled(s)["item_id"])) == ["NA-12", "NAT1", "None-1"]
    held = pulled(s, "invalid.csv")
    assert held["annotation_id"].tolist() == ["ok.csv:4"] and "'NA'" in held["reason"][0]


def test_placeholder_case_id_refused_by_cases_validate(tmp_path):
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,text\nC1,first\n#N/A,second\n")
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert res.exit_code != 0
    assert "cases.csv:3: case_id: '#N/A' is what a spreadsheet, R or pandas writes for a missing value" in res.output


# --------------------------------------------------------------------------- 3. hidden rows and columns


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
    assert sorted(set(pulled(s)["item_id"])) == ["C1", "C2", "C3", "C4"]
    from goldboard.study import Study

    assert Study.open(s).rounds[0].tables["h.xlsx"]["hidden_read"] == {"rows": [3], "columns": ["a"]}
    t = tmp_path / "w.csv"  # a CSV has nothing hidden: the flag means nothing there
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--read-hidden", "--round", "2"))
    assert "--read-hidden: " in line and "w.csv is not a workbook" in line


# --------------------------------------------------------------------------- 4. the study's own files as a table


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


# --------------------------------------------------------------------------- 5. rater names


@pytest.mark.parametrize("word", ["unresolved", "Unresolved", "unanimous", "adjudicated", "single", "none", "gold"])
def test_words_goldboard_writes_refused_as_rater_names(tmp_path, word):
    line = error_line(run("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", f"onc_a,{word}"))
    assert f"--raters: {word!r} is a word goldboard writes itself" in line
    assert not (tmp_path / "s").exists()
    s = table_study(tmp_path)
    before = study_bytes(s)
    assert f"{word!r} is a word goldboard writes itself" in error_line(run("study", "add-rater", s, word))
    assert study_bytes(s) == before
    res = run("server", "add-raters", f"onc_c,{word}", "--data-dir", tmp_path / "ls")
    assert f"rater name: {word!r} is a word goldboard writes itself" in error_line(res)
    assert not (tmp_path / "ls").exists()


def test_server_add_raters_refuses_names_differing_only_in_case(tmp_path):
    res = run("server", "add-raters", "onc_a,ONC_A", "--data-dir", tmp_path / "ls")
    assert "rater name 'ONC_A': given as 'onc_a', which differs only in letter case" in error_line(res)
    assert not (tmp_path / "ls").exists()  # nothing written


def test_server_add_raters_refuses_a_case_twin_of_an_existing_account(tmp_path):
    from goldboard.annotate import server as srv

    d = tmp_path / "ls"
    d.mkdir()
    creds = srv.Credentials(path=d / srv.CREDENTIALS_FILE, admin=srv._new_user(srv.ADMIN))
    creds.users["onc_a"] = srv._new_user("onc_a")
    creds.save()
    before = (d / srv.CREDENTIALS_FILE).read_bytes()
    res = run("server", "add-raters", "Onc_A", "--data-dir", d)
    assert "rater name 'Onc_A': the server already has 'onc_a', which differs only in letter case" in error_line(res)
    assert (d / srv.CREDENTIALS_FILE).read_bytes() == before


# --------------------------------------------------------------------------- 6. an old spelling beside the new one


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


# --------------------------------------------------------------------------- 7. a JSON list as a single-choice label


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


# --------------------------------------------------------------------------- 8. control characters, ports, output paths


@pytest.mark.parametrize(
    "args,needle",
    [
        (
            ["round", "{s}", "1", "--guideline-version", "v1\x1b[31m"],
            "--guideline-version: the version 'v1\\x1b[31m' contains",
        ),
        (["round", "{s}", "1", "--guideline-version", "v1\u202e"], "control character(s) U+202E"),
        (
            ["set", "{s}", "--url", "http://lab\tstudio:8080"],
            "--url: the URL contains invisible or control character(s) U+0009",
        ),
        (
            ["set", "{s}", "--url", "http://ls.example\u202e:8080"],
            "--url: the URL contains invisible or control character(s) U+202E",
        ),
        (
            ["set", "{s}", "--rater-info", "onc_a=oncologist\x07"],
            "--rater-info onc_a=...: the text 'oncologist\\x07' contains",
        ),
        (
            ["set", "{s}", "--rater-info", "onc_a=\u202eoncologist"],
            "--rater-info onc_a=...: the text '\\u202eoncologist' contains",
        ),
        (
            ["set", "{s}", "--case-source", "OpenMTB\x1f"],
            "--case-source: the text 'OpenMTB\\x1f' contains invisible or control character(s) U+001F",
        ),
        (
            ["set", "{s}", "--data-dir", "/tmp/ls\x01"],
            "--data-dir: the path '/tmp/ls\\x01' contains invisible or control character(s) U+0001",
        ),
        (["set", "{s}", "--url", "http://127.0.0.1:99999"], "the port must be a number from 1 to 65535"),
        (["set", "{s}", "--url", "http://127.0.0.1:0"], "the port must be a number from 1 to 65535"),
    ],
)
def test_free_text_into_study_toml_with_control_characters_or_a_bad_port_refused(tmp_path, args, needle):
    s = table_study(tmp_path)
    before = study_bytes(s)
    line = error_line(run("study", *[a.replace("{s}", str(s)) for a in args]))
    assert needle in line
    assert study_bytes(s) == before


def test_init_url_port_out_of_range_refused(tmp_path):
    res = run("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", "a1,b1", "--url", "http://h:65536")
    assert "--url 'http://h:65536': the port must be a number from 1 to 65535" in error_line(res)
    assert not (tmp_path / "s").exists()


def test_line_breaks_in_rater_info_become_one_space_and_are_shown(tmp_path):
    s = table_study(tmp_path)
    res = run("study", "set", s, "--rater-info", "onc_a=board-certified\noncologist")
    assert res.exit_code == 0 and "rater onc_a: board-certified oncologist" in res.output, res.output


@pytest.mark.parametrize("name", ["units.jsonl\n", "a\rb.jsonl", "t\x1b[2Jx.jsonl", "x\u202elmth.jsonl"])
def test_output_path_with_a_control_character_refused(tmp_path, name):
    out = tmp_path / "NW" / name
    (tmp_path / "NW").mkdir()
    res = run("cases", "template", "--schema", "mtb", "-o", out)
    line = error_line(res)
    assert "--output" in line and "the file name contains control character(s)" in line
    assert list((tmp_path / "NW").iterdir()) == []


def test_table_source_name_with_a_control_character_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, *WIDE, "--source", "clinic\x1b[8m"))
    assert "--source: the name 'clinic\\x1b[8m' contains invisible or control character(s) U+001B" in line
    assert not (s / "rounds").exists()


# --------------------------------------------------------------------------- 9. a codes dictionary naming no value


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
    assert sorted(pulled(s)["value"]) == ["Supported", "Unsafe", "Unsafe", "Unsafe"]


# --------------------------------------------------------------------------- 10. JSON keys given twice, lenient CSV


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
    got = pulled(s)
    assert sorted(got.loc[got["rater"] == "onc_a", "rationale"]) == ['5" tall', 'he said "no"', "two\nlines"]


@pytest.mark.parametrize("port", ["0", "99999"])
def test_server_start_port_out_of_range_refused_before_anything_is_written(tmp_path, port):
    res = run("server", "start", "--port", port, "--data-dir", tmp_path / "ls")
    assert "--port" in error_line(res) and "1<=x<=65535" in error_line(res)
    assert not (tmp_path / "ls").exists()


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
