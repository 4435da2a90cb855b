"""Inputs an independent campaign found silently accepted after issue 23 ("every input is
used as the user meant, or refused"): each test fails on the code before the fix.

Oracle for every refusal: one ``Error:`` line naming the file/row/flag, a non-zero exit, no
traceback, and the study unchanged (no round written).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from test_misuse_inputs import error_line, run  # the shared no-traceback runner and its one error line


def table_study(tmp_path: Path) -> Path:
    s = tmp_path / "t"
    res = run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    assert res.exit_code == 0, res.output
    return s


def pulled(s: Path, name: str = "ratings.csv") -> pd.DataFrame:
    return pd.read_csv(s / "rounds" / "1" / name, dtype=str, keep_default_na=False)


WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label"]


# --------------------------------------------------------------------------- 1. control characters in ids


def test_item_id_with_control_character_held_out_by_row(tmp_path):
    """``C6\\x00`` and ``C\\x07`` are not the ids they look like (and ``C\\x1f`` would be cut to
    ``C`` by a strip): each row is held out naming the character, like a label holding one."""
    s = table_study(tmp_path)
    t = tmp_path / "ids.csv"
    t.write_bytes(
        b"case_id,a,b\nC1,Supported,Unsafe\nC6\x00,Supported,Supported\nC\x07,Unsafe,Unsafe\nC\x1f,Unsafe,Unsafe\n"
    )
    res = run("pull", "--study", s, "--from-table", t, *WIDE)
    assert res.exit_code == 0, res.output
    assert sorted(set(pulled(s)["item_id"])) == ["C1"]
    held = pulled(s, "invalid.csv")
    assert held["annotation_id"].tolist() == ["ids.csv:3", "ids.csv:4", "ids.csv:5"]
    assert [r.split(" contains ")[1] for r in held["reason"]] == [
        "invisible or control character U+0000, so it is not the id it looks like: type the id again",
        "invisible or control character U+0007, so it is not the id it looks like: type the id again",
        "invisible or control character U+001F, so it is not the id it looks like: type the id again",
    ]
    assert "3 invalid" in res.output


# --------------------------------------------------------------------------- 2. one column in two roles


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
    assert pulled(s)[["rater", "value"]].values.tolist() == [["onc_a", "Supported"], ["onc_b", "Unsafe"]]


# --------------------------------------------------------------------------- 3. a free-text field as the rating


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


# --------------------------------------------------------------------------- 5. JSONL ids and keys


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


# --------------------------------------------------------------------------- 12-13. plan inputs


def test_plan_sample_duplicate_case_id_refused_naming_both_lines(tmp_path):
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,label\nC1,Supported\nC2,Unsafe\nC3,Supported\nC1,Unsafe\n")
    out = tmp_path / "s.csv"
    line = error_line(run("plan", "sample", "--cases", cases, "-n", "2", "--seed", "1", "-o", out))
    assert "cases.csv: lines 2 and 5: case id 'C1' appears twice" in line
    assert not out.exists()
    cases.write_text("case_id,label\nC1,Supported\nC2,Unsafe\nC3,Supported\n")
    assert run("plan", "sample", "--cases", cases, "-n", "2", "--seed", "1", "-o", out).exit_code == 0
    assert len(pd.read_csv(out)) == 2


@pytest.mark.parametrize("prev,bad", [("0.5,0.5,nan", "nan"), ("0.5,inf", "inf"), ("-inf,0.5,0.5", "-inf")])
def test_plan_size_prevalence_nan_or_inf_refused_in_one_line(prev, bad):
    res = run("plan", "size", "--kappa", "0.7", "--lower", "0.5", "--prevalence", prev)
    assert res.exit_code == 1, res.output
    assert error_line(res) == f"Error: --prevalence: every category prevalence must be a number, got {bad}"


def test_flack_sample_size_nan_marginal_refused():
    from goldboard.analysis.planning import flack_sample_size
    from goldboard.errors import GoldboardError

    with pytest.raises(GoldboardError, match="must be a number, got nan"):
        flack_sample_size(0.5, 0.7, [0.5, 0.5, float("nan")])


# --------------------------------------------------------------------------- 4. workbooks: sheets and merged cells


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
    assert pulled(s)[["item_id", "rater", "value"]].values.tolist() == [
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
    assert sorted(set(pulled(s)["item_id"])) == ["C1", "C2", "C3"]


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


# --------------------------------------------------------------------------- 6. look-alike ids (Unicode form)

NFC, NFD = "Caf\u00e9", "Cafe\u0301"


def test_item_ids_equal_after_nfc_refused_naming_both_rows(tmp_path):
    """Chosen: refused (never two items, never silently one): the rows may be two raters'
    ratings of one case or two cases, and only the user knows which."""
    s = table_study(tmp_path)
    t = tmp_path / "l.csv"
    t.write_text(f"case_id,rater,safety_label\n{NFC},onc_a,Supported\n{NFD},onc_a,Unsupported\n{NFC},onc_b,Supported\n")
    line = error_line(run("pull", "--study", s, "--from-table", t))
    assert "l.csv: rows 2 and 3: item ids 'Caf\\xe9' and 'Cafe\\u0301' look the same" in line and "NFC vs NFD" in line
    assert not (s / "rounds").exists()


def test_item_id_nfd_form_of_a_study_item_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "a.csv"
    t.write_text(f"case_id,rater,safety_label\n{NFC},onc_a,Supported\n{NFC},onc_b,Unsafe\n")
    assert run("pull", "--study", s, "--from-table", t).exit_code == 0
    t2 = tmp_path / "b.csv"
    t2.write_text(f"case_id,rater,safety_label\n{NFD},onc_a,Supported\n{NFD},onc_b,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t2, "--round", "2"))
    assert "b.csv: item id 'Cafe\\u0301' looks like the study's item 'Caf\\xe9'" in line
    assert not (s / "rounds" / "2").exists()


# --------------------------------------------------------------------------- 7. new items into an adjudicated round


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
    assert "C4" in set(pulled(s)["item_id"])


# --------------------------------------------------------------------------- 9-11. study settings


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


def test_raters_differing_only_in_case_refused(tmp_path):
    line = error_line(run("study", "init", tmp_path / "x", "--schema", "mtb", "--raters", "onc_a,ONC_A"))
    assert "'onc_a' and 'ONC_A' differ only in letter case" in line
    assert not (tmp_path / "x").exists()
    s = table_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("study", "add-rater", s, "Onc_A", "--no-account"))
    assert "'Onc_A': the study has rater 'onc_a', which differs only in letter case" in line
    assert (s / "study.toml").read_bytes() == toml


@pytest.mark.parametrize("url", ["http://host/?token=abc", "https://ls.example.org/?x=1", "http://host:8080/ls#abc"])
def test_study_url_with_a_query_refused_without_repeating_it(tmp_path, url):
    res = run("study", "init", tmp_path / "x", "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", url)
    line = error_line(res)
    assert "the URL has a query or fragment" in line and "abc" not in line and "x=1" not in line
    assert not (tmp_path / "x").exists()
    s = table_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("study", "set", s, "--url", url))
    assert "abc" not in line and "x=1" not in line
    assert (s / "study.toml").read_bytes() == toml


@pytest.mark.parametrize("name,code", [("My\u202estudy", "U+202E"), ("a\x07b", "U+0007"), ("a\u2028b", "U+2028")])
def test_study_name_with_control_or_bidi_character_refused(tmp_path, name, code):
    from goldboard.cases.ids import escape_hidden

    s = table_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("study", "set", s, "--name", name))
    assert line.startswith(
        f"Error: --name: the name '{escape_hidden(name)}' contains invisible or control character(s) {code}"
    )
    assert (s / "study.toml").read_bytes() == toml
    line = error_line(
        run("study", "init", tmp_path / "y", "--schema", "mtb", "--raters", "onc_a,onc_b", "--name", name)
    )
    assert code in line and not (tmp_path / "y").exists()
    assert run("study", "set", s, "--name", "Étude 2").exit_code == 0


# --------------------------------------------------------------------------- 8. calibration rules


def _calibration_study(tmp_path: Path) -> Path:
    s = table_study(tmp_path)
    t = tmp_path / "cal.csv"
    rows = [("Supported", "Supported"), ("Unsafe", "Unsafe"), ("Supported", "Unsupported"), ("Unsafe", "Unsafe")] * 5
    t.write_text("case_id,a,b\n" + "".join(f"C{i},{a},{b}\n" for i, (a, b) in enumerate(rows)))
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    assert run("study", "round", s, 1, "--calibration").exit_code == 0
    return s


@pytest.mark.parametrize(
    "rules,needle",
    [
        (["kappa_lower>=0.6", "kappa_lower<0.5"], "'kappa_lower>=0.6' and 'kappa_lower<0.5' contradict each other"),
        (["kappa_upper<0.5", "kappa_lower>=0.6"], "(kappa_lower never exceeds kappa_upper)"),
        (["alpha_value>0.7", "alpha_value<=0.7"], "'alpha_value>0.7' and 'alpha_value<=0.7' contradict"),
    ],
)
def test_contradictory_calibration_rules_refused(tmp_path, rules, needle):
    s = _calibration_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    args = [x for r in rules for x in ("--rule", r)]
    line = error_line(run("calibrate", "--study", s, *args))
    assert line.startswith("Error: --rule: ") and needle in line
    assert (s / "study.toml").read_bytes() == toml


def test_compatible_and_repeated_rules_accepted():
    from goldboard.analysis.calibration import check_rules, parse_rule

    rules = [parse_rule(r) for r in ("kappa_lower>=0.6", "kappa_lower>=0.6", "kappa_upper<=0.95", "alpha_lower<0.5")]
    assert [r.text for r in check_rules(rules)] == ["kappa_lower>=0.6", "kappa_upper<=0.95", "alpha_lower<0.5"]


def test_rule_changed_after_a_look_refused_unless_said_and_recorded(tmp_path):
    s = _calibration_study(tmp_path)
    assert run("calibrate", "--study", s, "--rule", "kappa_lower>=0.6").exit_code == 0
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4"))
    assert "has taken 1 look(s)" in line and "(rule kappa_lower>=0.6 -> kappa_lower>=0.4)" in line
    assert "--change-rule" in line
    assert (s / "study.toml").read_bytes() == toml
    assert run("calibrate", "--study", s, "--rule", "kappa_lower>=0.6").exit_code == 0  # the same rule: fine
    res = run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4", "--change-rule")
    assert res.exit_code == 0, res.output
    from goldboard.study import Study

    rec = Study.open(s).extra["calibration"]
    assert rec["rules"] == ["kappa_lower>=0.4"]
    assert rec["rule_changes"] == ["after look 1: rule kappa_lower>=0.6 -> kappa_lower>=0.4"]
    assert run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4").exit_code == 0
    assert Study.open(s).extra["calibration"]["rule_changes"] == rec["rule_changes"]  # kept on record


# --------------------------------------------------------------------------- 14. unclear messages


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


def test_agree_hint_never_points_at_a_round_nobody_finished(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "w.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\nC3,Supported,Supported\n")
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    t2 = tmp_path / "r2.csv"
    t2.write_text("case_id,a\nC1,Supported\nC2,Unsafe\n")
    res = run(
        "pull",
        "--study",
        s,
        "--from-table",
        t2,
        "--item-col",
        "case_id",
        "--rater-cols",
        "onc_a=a",
        "--field",
        "safety_label",
        "--round",
        "2",
    )
    assert res.exit_code == 0, res.output
    res = run("agree", "--study", s)
    assert res.exit_code == 0, res.output
    assert "round 2 has ratings from onc_a only (2 items, each rated in round 1 too): a test-retest round" in res.output
    assert "--round 2 analyses it" not in res.output


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
    assert sorted(set(pulled(s)["item_id"])) == ["C1", "C2", "C3"]
    s2 = table_study(tmp_path / "b")
    line = error_line(run("pull", "--study", s2, "--from-table", t, *WIDE, "--rationale-col", "note"))
    assert "m.xlsx: sheet Ratings, cells D2:D3 are merged" in line
    assert not (s2 / "rounds").exists()
