"""Item and case ids that read alike are one question, never two items: ids differing only in letter
case, Unicode form (NFC/NFD), an invisible character, leading zeros or how a number is written
(``1``/``1.0``, ``7``/``007``, scientific notation), missing-value placeholders (``NA``, ``-``) as
ids -- refused naming the file, both rows and the difference, in tables, plain ratings files,
Prodigy/doccano files and the sampler; ids that only look close stay apart, and a lone ``1E5`` is
kept as typed with a warning.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from builders import (
    RATERS,
    WIDE,
    file_pull_refused,
    one_error,
    pulled_table,
    study_and_file,
    study_bytes,
    table_of_ids,
    table_study,
    task,
)
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run
from conftest import run_cli as run_ok

from goldboard.cases.ids import id_key
from goldboard.cases.ratings import read_ratings_csv
from goldboard.study import Study

S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"
A = [S, S, U, I, P, S, U, I]
B = [S, U, U, S, P, I, U, P]
HEADER = "round,item_id,case_id,output_id,model,rater,field,value,rationale,annotated_at,lead_time,annotation_id"
NFC = unicodedata.normalize("NFC", "Caf\u00e9")
NFD = unicodedata.normalize("NFD", "Caf\u00e9")


#: (first spelling of item 1, its twin, a word of the difference); the twin is onc_b's item 1
TWINS = [
    ("C-1", "C-1\u200b", "U+200B"),
    ("C1", "c1", "letter case"),
    ("7", "007", "how a number is written"),
    (NFC, NFD, "Unicode form"),
]


TWIN_IDS = ["zero-width", "case", "zeros", "nfd"]


def ratings(path: Path, ids_a: list[str], ids_b: list[str], rater_b: str = "onc_b") -> Path:
    """onc_a rates ``ids_a`` with labels A, ``rater_b`` rates ``ids_b`` with labels B (a row each,
    onc_a's first: item n's rows are lines 2n and 2n + 1)."""
    rows = [HEADER]
    for a_id, b_id, a, b in zip(ids_a, ids_b, A, B):
        rows.append(f"1,{a_id},{a_id},,,onc_a,safety_label,{a},,,,")
        rows.append(f"1,{b_id},{b_id},,,{rater_b},safety_label,{b},,,,")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def items(first: str = "C1") -> list[str]:
    return [first] + [f"X{n}" for n in range(2, 9)]


def command(name: str, f: Path) -> list:
    return {
        "agree": ["agree", f, "--schema", "mtb", "--field", "safety_label"],
        "flag": ["flag", f, "--schema", "mtb", "--format", "csv"],
        "judge": ["judge", f, "--judge", "gpt", "--epsilon", "0.2"],
    }[name]


@pytest.mark.parametrize("first, twin, kind", TWINS, ids=TWIN_IDS)
@pytest.mark.parametrize("cmd", ["agree", "flag", "judge"])
def test_plain_ratings_refuse_twin_item_ids(tmp_path, cmd, first, twin, kind):
    """Before: exit 0, item 1 counted twice ("rated by only one rater")."""
    f = ratings(tmp_path / "r.csv", items(first), items(twin), "gpt" if cmd == "judge" else "onc_b")
    err = one_error(invoke_cli(*command(cmd, f)))
    assert err.startswith(f"Error: {f}:3: item_id ") and f"({f}:2)" in err and kind in err, err
    assert "one item typed twice" in err, err


@pytest.mark.parametrize("cmd", ["agree", "flag"])
def test_plain_ratings_read_an_id_with_blanks_around_it_as_that_id(tmp_path, cmd):
    """'C1 ' is C1 (as a pull reads it): no twin error, the same result as the clean file."""
    clean = ratings(tmp_path / "clean.csv", items(), items())
    spaced = ratings(tmp_path / "spaced.csv", items(), items("C1 "))
    more = ["--format", "json"] if cmd == "agree" else []
    want, got = invoke_cli(*command(cmd, clean), *more), invoke_cli(*command(cmd, spaced), *more)
    assert want.exit_code == got.exit_code == 0, got.output
    if cmd == "agree":
        w, g = json.loads(want.stdout), json.loads(got.stdout)
        assert g["n_items"] == w["n_items"] == 8 and g["statistics"] == w["statistics"]
    else:
        assert got.stdout == want.stdout


def test_plain_ratings_keep_ids_that_only_look_close(tmp_path):
    """C01 and C1, 1.5 and 15, MTB-1 and MTB-01 are different ids (no twins by the id rules)."""
    ids = ["C01", "C1", "1.5", "15", "MTB-1", "MTB-01", "x", "y"]
    f = ratings(tmp_path / "r.csv", ids, ids)
    res = invoke_cli(*command("agree", f), "--format", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["n_items"] == 8, res.output


@pytest.mark.parametrize(
    "bad, code",
    [("C-1\u200b", "U+200B ZERO WIDTH SPACE"), ("C-1\x1f", "U+001F"), ("C-1\u2028", "U+2028 LINE SEPARATOR")],
    ids=["zero-width", "unit-separator", "line-separator"],
)
def test_plain_ratings_refuse_a_lone_id_with_a_hidden_character(tmp_path, bad, code):
    """Before: exit 0 ('C-1\\x1f' was even read as C-1: str.strip cut the U+001F off)."""
    ids = items(bad)
    f = tmp_path / "r.jsonl"  # (JSON lines: a CSV cell cannot hold U+2028 in every reader)
    f.write_text(
        "".join(
            json.dumps({"item_id": i, "rater": r, "field": "safety_label", "value": v}) + "\n"
            for i, a, b in zip(ids, A, B)
            for r, v in (("onc_a", a), ("onc_b", b))
        ),
        encoding="utf-8",
    )
    err = one_error(invoke_cli(*command("flag", f)))
    assert err.startswith(f"Error: {f}:1: item_id ") and code in err and "type the id again" in err, err


def test_long_table_names_the_item_column(tmp_path):
    f = tmp_path / "long.csv"
    f.write_text("case,who,label\n" + "".join(f"{i},{r},{v}\n" for i, r, v in [("C1", "a", S), ("c1", "b", S)]))
    err = one_error(invoke_cli("agree", f, "--item-col", "case", "--rater-col", "who", "--label-col", "label"))
    assert f"{f}:3: item id (column 'case') 'c1' and 'C1' ({f}:2) differ only in letter case" in err, err


def test_wide_table_refuses_twin_item_ids(tmp_path):
    f = tmp_path / "wide.csv"
    f.write_text(
        "item_id,onc_a,onc_b\n" + "".join(f"{i},{a},{b}\n" for i, a, b in zip([NFC, *items()[1:7], NFD], A, B)),
        encoding="utf-8",
    )
    err = one_error(invoke_cli("agree", f, "--raters", "onc_a,onc_b", "--schema", "mtb", "--field", "safety_label"))
    assert f"{f}:9: item_id " in err and f"({f}:2)" in err and "Unicode form" in err, err


def test_label_studio_exports_refuse_one_item_written_two_ways(tmp_path):
    """One export per rater: 'C1' in one, 'c1' in the other is one item."""
    files = []
    for k, (first, labels) in enumerate((("C1", A), ("c1", B))):
        tasks = [
            {
                "id": 100 * k + n,
                "data": {"item_id": first if n == 1 else f"X{n}"},
                "annotations": [
                    {
                        "id": 1000 * k + n,
                        "completed_by": {"id": k + 1, "email": f"r{k}@x.org"},
                        "was_cancelled": False,
                        "result": [
                            {
                                "from_name": "safety_label",
                                "to_name": "case",
                                "type": "choices",
                                "value": {"choices": [lab]},
                            }
                        ],
                    }
                ],
            }
            for n, lab in enumerate(labels, 1)
        ]
        (tmp_path / f"e{k}.json").write_text(json.dumps(tasks))
        files += ["--from-label-studio", tmp_path / f"e{k}.json"]
    err = one_error(invoke_cli("agree", *files, "--field", "safety_label", "--schema", "mtb"))
    assert "item_id 'c1' and 'C1'" in err and "letter case" in err and "e1.json" in err and "e0.json" in err, err


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


KEPT = "is kept as the text typed, but a spreadsheet opening a file with it reads it as a number"


def test_a_lone_1e5_item_id_in_a_table_is_kept_as_typed_with_a_warning(tmp_path):
    s, t, res = table_of_ids(tmp_path, ["1E5", "2.5e3", "C1"])
    assert res.exit_code == 0, res.output
    warn = [ln for ln in res.output.splitlines() if KEPT in ln]
    assert warn == [
        f"Warning: {t}: item id '1E5' (and '2.5e3') {KEPT} in scientific notation (1E5 = 100000) and saves it so: "
        "format the id column as Text before editing such a file in Excel or LibreOffice"
    ], res.output
    assert sorted(set(read_ratings_csv(s / "rounds/1/ratings.csv")["item_id"])) == ["1E5", "2.5e3", "C1"]


@pytest.mark.parametrize(
    "ids,needle",
    [(["1.23E+05", "C1"], "is a number in scientific notation"), (["1E5", "100000"], "differ only in how a number")],
)
def test_excel_s_notation_and_a_1e5_twin_stay_errors(tmp_path, ids, needle):
    s, t, res = table_of_ids(tmp_path, ids)
    assert res.exit_code == 1 and needle in error_line(res) and KEPT not in res.output, res.output
    assert not (s / "rounds/1/ratings.csv").exists()


def test_plain_ids_get_no_warning(tmp_path):
    _, _, res = table_of_ids(tmp_path, ["1", "007X", "E5", "C1E5"])
    assert res.exit_code == 0 and "Warning" not in res.output.replace("no account", ""), res.output


def test_a_lone_1e5_item_id_in_a_prodigy_file_is_kept_with_the_same_warning(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("1E5")])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert res.exit_code == 0 and f"Warning: {f}: item id '1E5' {KEPT}" in res.output, res.output
    assert "1E5" in set(read_ratings_csv(s / "rounds/1/ratings.csv")["item_id"])


@pytest.mark.parametrize(
    "content",
    ["case_id,text\n7,a\n007,b\nC2,c\n", '{"case_id": 7, "text": "a"}\n{"case_id": "007", "text": "b"}\n'],
    ids=["csv", "jsonl number"],
)
def test_plan_sample_refuses_twin_case_ids(tmp_path, content):
    cases = tmp_path / ("cases.csv" if content.startswith("case_id") else "cases.jsonl")
    cases.write_text(content)
    out = tmp_path / "s.csv"
    res = run("plan", "sample", "--cases", cases, "-n", "1", "--seed", "1", "-o", out)
    line = error_line(res)
    assert res.exit_code == 1 and ("lines 2 and 3" in line or "lines 1 and 2" in line), res.output
    assert "case ids '7' and '007' differ only in how a number is written" in line and not out.exists()


PULL = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label"]


def _pull_refused(tmp_path, table) -> str:
    s = tmp_path / "s"
    assert run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    res = run("pull", "--study", s, "--from-table", table, *PULL)
    line = error_line(res)
    assert not (s / "rounds").exists() and not (s / "units.jsonl").exists(), "nothing written"
    return line


def test_id_in_scientific_notation_is_refused(tmp_path):
    """M07: ``1.23E+05`` (Excel showing a long id as a number) was stored as an item id."""
    t = tmp_path / "t.csv"
    t.write_text("case_id,a,b\nC1,Supported,Supported\n1.23E+05,Unsafe,Supported\n")
    line = _pull_refused(tmp_path, t)
    assert "'1.23E+05' is a number in scientific notation" in line and "t.csv: row 3" in line, line


def test_ids_1_and_1p0_in_one_table_are_refused_naming_both_rows(tmp_path):
    """M14: ``1`` and ``1.0`` (a float-ised id column) became two items."""
    t = tmp_path / "t.csv"
    t.write_text("case_id,a,b\n1,Supported,Supported\n2,Unsafe,Unsafe\n1.0,Unsafe,Supported\n")
    line = _pull_refused(tmp_path, t)
    assert "rows 2 and 4" in line and "'1' and '1.0'" in line and "how a number is written" in line, line


def test_xlsx_numeric_7_beside_text_007_is_refused_naming_both_rows(tmp_path):
    """M29: a numeric 7 (Excel stripped the zeros) beside a text '007' became two items."""
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["case_id", "a", "b"])
    ws.append([7, "Supported", "Supported"])
    ws.append(["007", "Unsafe", "Supported"])
    t = tmp_path / "t.xlsx"
    wb.save(t)
    line = _pull_refused(tmp_path, t)
    assert "rows 2 and 3" in line and "'7' and '007'" in line, line


def test_plain_numeric_ids_and_decimals_still_pull(tmp_path):
    s = tmp_path / "s"
    assert run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    t = tmp_path / "t.csv"
    t.write_text("case_id,a,b\n1,Supported,Supported\n2,Unsafe,Unsafe\n1.5,Unsafe,Supported\nE1,Unsafe,Unsafe\n")
    res = run("pull", "--study", s, "--from-table", t, *PULL)
    assert res.exit_code == 0, res.output


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
    assert sorted(set(pulled_table(s)["item_id"])) == ["NA-12", "NAT1", "None-1"]
    held = pulled_table(s, "invalid.csv")
    assert held["annotation_id"].tolist() == ["ok.csv:4"] and "'NA'" in held["reason"][0]


def test_placeholder_case_id_refused_by_cases_validate(tmp_path):
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,text\nC1,first\n#N/A,second\n")
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert res.exit_code != 0
    assert "cases.csv:3: case_id: '#N/A' is what a spreadsheet, R or pandas writes for a missing value" in res.output


def test_id_key_numbers_by_value():
    assert id_key("1E5") == id_key("100000") and id_key("-0") == id_key("0") == id_key("0.0")
    assert id_key("7") == id_key("007") == id_key("7.0") and id_key("-5") != id_key("5")


@pytest.mark.parametrize("a,b", [("C1", "c1"), ("7", "007"), ("7", "7.0"), ("1E5", "100000"), ("-0", "0")])
def test_n06_item_ids_twins_by_the_table_rules_are_refused(tmp_path, a, b):
    s, f = study_and_file(tmp_path, [task(a), task(b, who="p-ben")])
    out = file_pull_refused(s, f)
    assert f"{f}:1, {f}:2: item ids {a!r} and {b!r}" in out


@pytest.mark.parametrize("item", ["NA", "#N/A", "1.23E+05"])
def test_n22_placeholder_and_scientific_item_ids_are_refused_as_in_tables(tmp_path, item):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task(item)])
    out = file_pull_refused(s, f)
    assert f"{f}:2: item id {item!r} is " in out


def test_n06_doccano_twin_ids_are_refused_in_the_shared_path(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    f = tmp_path / "onc_a.jsonl"
    f.write_text(json.dumps({"id": 1, "item_id": "C1", "label": ["Supported"]}) + "\n")
    f.write_text(f.read_text() + json.dumps({"id": 2, "item_id": "c1", "label": ["Unsupported"]}) + "\n")
    out = run_ok("pull", "--study", s, "--from-file", f"doccano={f}", code=1).output
    assert "item ids 'C1' and 'c1' differ only in letter case" in out
