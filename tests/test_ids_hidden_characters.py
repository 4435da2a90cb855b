"""Ids holding a hidden character (a control character, a zero-width space or other invisible format
character, a line separator, a variation selector: :func:`goldboard.cases.ids.is_hidden`) are not
the id they look like: held out by row in a ratings table, refused naming the file and line (or
task) in a Prodigy, doccano or Label Studio export, a cases file and a sampler's cases file, always
with the same words (:func:`goldboard.cases.ids.hidden_id_problem`); free-text options holding one
are one line naming the flag.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from builders import RATERS, WIDE, ls_tasks, pulled_table, study_and_file, study_files, table_of_ids, table_study, task
from conftest import error_line
from conftest import invoke_cli as run

from goldboard.cases.ids import hidden_id_problem, hidden_id_reason
from goldboard.cases.ratings import read_ratings_csv
from goldboard.study import Study

#: one hidden character of each kind: zero-width space, word joiner, BOM inside an id, soft hyphen,
#: zero-width joiner, Hangul filler and variation selector (default-ignorable, no Cf), a line
#: separator (Zl) and BEL (Cc)
HIDDEN = ["\u200b", "\u2060", "\ufeff", "\u00ad", "\u200d", "\u3164", "\ufe0f", "\u2028", "\x07"]


def _study(tmp_path: Path, **kw) -> Path:
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], **kw)
    return s


def _units_text(s: Path) -> str:
    return (s / "units.jsonl").read_text(encoding="utf-8") if (s / "units.jsonl").exists() else ""


@pytest.mark.parametrize("ch", HIDDEN, ids=[f"U+{ord(c):04X}" for c in HIDDEN])
@pytest.mark.parametrize("fmt", ["csv", "xlsx"])
def test_a_lone_table_id_with_a_hidden_character_is_held_out_by_row(tmp_path, ch, fmt):
    """Campaign 6 U03: the only spelling of the id was stored raw (the CSV column reader missed it)."""
    if fmt == "xlsx" and unicodedata.category(ch) == "Cc":
        pytest.skip("an XLSX cell cannot hold a control character")
    s = _study(tmp_path)
    bad = f"MTB-1{ch}"
    rows = [["case_id", "a", "b"], [bad, "Supported", "Supported"], ["MTB-2", "Unsupported", "Supported"]]
    t = tmp_path / f"t.{fmt}"
    if fmt == "csv":
        t.write_text("".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    else:
        wb = openpyxl.Workbook()
        for r in rows:
            wb.active.append(r)
        wb.save(t)
    res = run("pull", "--study", s, "--from-table", t, *WIDE)
    assert res.exit_code == 0, res.output
    reason = hidden_id_reason("case_id", bad)
    got = read_ratings_csv(s / "rounds/1/ratings.csv")
    assert set(got["item_id"]) == {"MTB-2"} and ch not in _units_text(s)
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    assert inv["reason"].tolist() == [reason] and inv["annotation_id"].tolist() == [f"t.{fmt}:2"]
    assert f"1 x {reason}" in res.output  # the summary names it (escaped, never raw)
    assert ch not in res.output


def test_the_same_words_in_every_intake(tmp_path):
    """A table holds the row out, a Prodigy file, a Label Studio export, a cases file, a
    sampler's cases file and an outputs file refuse it: each with the same words and the place."""
    bad = "MTB-1\u200b"
    problem = hidden_id_problem(bad)
    assert problem == (
        "'MTB-1\\u200b' contains invisible or control character U+200B ZERO WIDTH SPACE, so it is not the id it "
        "looks like: type the id again"
    )
    # Prodigy (a lone id: refused before too, other words)
    s, f = study_and_file(tmp_path / "p", [task("MTB-0"), task(bad, who="p-ben")])
    line = error_line(run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS))
    assert line == f"Error: {f}:2: item id {problem}" and not (s / "rounds").exists()
    # Label Studio export, a lone id (stored raw before)
    s = _study(tmp_path / "e")
    e = tmp_path / "e" / "e.json"
    e.write_text(json.dumps(ls_tasks(("C-1", bad, "C-3"))))
    before = study_files(s)
    line = error_line(
        run("pull", "--study", s, "--from-export", e, "--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")
    )
    assert line == f"Error: {e}: task 102 (case_id): item id {problem}" and study_files(s) == before
    # a cases file (accepted before: N55)
    c = tmp_path / "c.csv"
    c.write_text(f"case_id,patient_summary,proposed_therapy\nC-0,a,b\n{bad},c,d\n", encoding="utf-8")
    res = run("cases", "validate", c, "--schema", "mtb")
    assert res.exit_code == 1 and f"{c}:3: case_id: {problem}" in res.output, res.output
    # the sampler reads the cases file as cases validate does (copied it verbatim before: N56)
    out = tmp_path / "sample.csv"
    line = error_line(run("plan", "sample", "--cases", c, "-n", "1", "-o", out))
    assert line == f"Error: {c}: line 3: case id {problem}" and not out.exists()
    # an outputs file's output id
    o = tmp_path / "o.csv"
    o.write_text(f"case_id,output_id,model,output_text\nC-0,{bad},m,text\n", encoding="utf-8")
    ok = tmp_path / "ok.csv"
    ok.write_text("case_id,patient_summary,proposed_therapy\nC-0,a,b\n", encoding="utf-8")
    res = run("cases", "validate", ok, "--outputs", o, "--schema", "mtb")
    assert res.exit_code == 1 and f"{o}:2: output_id: {problem}" in res.output, res.output


def test_push_refuses_a_cases_file_with_a_hidden_id_before_reaching_the_server(tmp_path):
    s = _study(tmp_path, url="http://127.0.0.1:9")
    c = tmp_path / "c.csv"
    c.write_text("case_id,patient_summary,proposed_therapy\nC-1\u2060,a,b\n", encoding="utf-8")
    before = study_files(s)
    res = run("push", "--study", s, c)
    problem = hidden_id_problem("C-1\u2060")
    assert res.exit_code == 1 and f"{c}:2: case_id: {problem}" in res.output, res.output
    assert study_files(s) == before


def test_the_column_reader_finds_every_hidden_character():
    """Oracle: every code point Unicode files as a control (Cc), format (Cf) or line/paragraph
    separator (Zl, Zp) is found by the CSV column reader's pattern (which missed U+200B before),
    so no such id reaches the fast path."""
    from goldboard.cases.intake.columns import _found

    hidden = [chr(o) for o in range(0x110000) if unicodedata.category(chr(o)) in ("Cc", "Cf", "Zl", "Zp")]
    col = pd.Series([f"MTB{c}1" for c in hidden], dtype="str")
    assert _found(col, "control").all()
    plain = pd.Series(["MTB-1", "Café", "C 1", "日本", "a\u00a0b"], dtype="str")
    assert not _found(plain, "control").any()


def _table(tmp_path: Path) -> Path:
    t = tmp_path / "good.csv"
    t.write_text("case_id,a,b\nC-1,Supported,Unsupported\nC-2,Supported,Supported\n")
    return t


@pytest.mark.parametrize(
    "argv,flag,what,text",
    [
        (["study", "round", "{s}", "1", "--guideline-version", "v2\u200b"], "--guideline-version", "the version",
         "v2\u200b"),
        (["pull", "--study", "{s}", "--from-table", "{t}", *WIDE, "--source", "good\u200b.csv"], "--source", "the name",
         "good\u200b.csv"),
        (["pull", "--study", "{s}", "--from-file", "prodigy={p}", "--rater", RATERS, "--source", "p\u2060"], "--source",
         "the name", "p\u2060"),
        (["pull", "--study", "{s}", "--from-export", "{e}", "--item-key", "case_id\u200b", "--rater",
          "1=onc_a,2=onc_b"], "--item-key", "the key", "case_id\u200b"),
        (["push", "--study", "{s}", "{c}", "--guideline-version", "v1\ufeff"], "--guideline-version", "the version",
         "v1\ufeff"),
        (["study", "set", "{s}", "--name", "Pilot\u200d"], "--name", "the name", "Pilot\u200d"),
        (["study", "set", "{s}", "--case-source", "OpenMTB\u00ad"], "--case-source", "the text", "OpenMTB\u00ad"),
    ],
)  # fmt: skip
def test_a_free_text_option_with_a_hidden_character_is_one_line_naming_the_flag(tmp_path, argv, flag, what, text):
    """Campaign 6 U16/N15/N59: stored raw in study.toml and printed as if it were 'v2'."""
    s = _study(tmp_path, url="http://127.0.0.1:9")
    t = _table(tmp_path)
    _, p = study_and_file(tmp_path / "pf", [task("C-1"), task("C-1", who="p-ben")])
    e = tmp_path / "e.json"
    e.write_text(json.dumps(ls_tasks()))
    c = tmp_path / "c.csv"
    c.write_text("case_id,patient_summary,proposed_therapy\nC-1,a,b\n")
    before = study_files(s)
    res = run(*[a.format(s=s, t=t, p=p, e=e, c=c) for a in argv])
    ch = next(c for c in text if not c.isascii())
    code = f"U+{ord(ch):04X} {unicodedata.name(ch)}"
    escaped = text.replace(ch, ch.encode("unicode_escape").decode("ascii"))
    assert res.exit_code == 1
    assert error_line(res) == (
        f"Error: {flag}: {what} '{escaped}' contains invisible or control character(s) {code}; type it again"
    )
    assert study_files(s) == before


def test_spaces_around_a_source_or_a_guideline_version_are_no_part_of_it(tmp_path):
    """``--source ' good.csv '`` was stored as the key '  good.csv ' beside 'good.csv'."""
    s = _study(tmp_path)
    t = _table(tmp_path)
    res = run("pull", "--study", s, "--from-table", t, *WIDE, "--source", "  good.csv ")
    assert res.exit_code == 0 and "first pull of good.csv:" in res.output, res.output
    assert list(Study.open(s).round(1).tables) == ["good.csv"]
    res = run("pull", "--study", s, "--from-table", t, *WIDE)  # the same source: re-pulled, not a second one
    assert list(Study.open(s).round(1).tables) == ["good.csv"]
    run("study", "round", s, "1", "--guideline-version", " v2\n")
    assert Study.open(s).round(1).guideline_version == "v2"


@pytest.mark.parametrize("end", ["\x1f", "\u2028", "\x85"], ids=["U+001F", "U+2028", "U+0085"])
def test_a_hidden_character_at_the_end_of_a_file_id_is_refused_not_cut_off(tmp_path, end):
    """``str.strip`` cut U+001F, U+2028, U+0085 off the end of a Prodigy or Label Studio id (a table
    held the row out): only spaces and line ends around an id are no part of it."""
    bad = f"MTB-1{end}"
    s, f = study_and_file(tmp_path / "p", [task("MTB-0"), task(bad, who="p-ben")])
    line = error_line(run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS))
    assert line == f"Error: {f}:2: item id {hidden_id_problem(bad)}" and not (s / "rounds").exists()
    s = _study(tmp_path / "e")
    e = tmp_path / "e" / "e.json"
    e.write_text(json.dumps(ls_tasks(("C-1", bad, "C-3"))))
    line = error_line(
        run("pull", "--study", s, "--from-export", e, "--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")
    )
    assert line == f"Error: {e}: task 102 (case_id): item id {hidden_id_problem(bad)}"


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
    assert sorted(set(pulled_table(s)["item_id"])) == ["C1"]
    held = pulled_table(s, "invalid.csv")
    assert held["annotation_id"].tolist() == ["ids.csv:3", "ids.csv:4", "ids.csv:5"]
    assert [r.split(" contains ")[1] for r in held["reason"]] == [
        "invisible or control character U+0000, so it is not the id it looks like: type the id again",
        "invisible or control character U+0007, so it is not the id it looks like: type the id again",
        "invisible or control character U+001F, so it is not the id it looks like: type the id again",
    ]
    assert "3 invalid" in res.output


ZW = "MTB-1\u200b"


def test_a_table_id_with_a_zero_width_space_is_held_out_by_row(tmp_path):
    s, t, res = table_of_ids(tmp_path, [ZW, "MTB-1", "MTB-2"])
    assert (
        res.exit_code == 0 and "case_id 'MTB-1\\u200b' contains invisible or control character U+200B" in res.output
    ), res.output
    assert set(read_ratings_csv(s / "rounds/1/ratings.csv")["item_id"]) == {"MTB-1", "MTB-2"}
    assert "U+200B" in (s / "rounds/1/invalid.csv").read_text() and ZW not in (s / "units.jsonl").read_text()


def test_a_prodigy_id_with_a_zero_width_space_is_refused_naming_the_line(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task(ZW, who="p-ben")])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {f}:2: item id 'MTB-1\\u200b' contains invisible"), line
    assert not (s / "rounds").exists()


def test_cases_whose_ids_differ_by_an_invisible_character_are_twins(tmp_path):
    from goldboard.cases.ids import id_key

    assert id_key(ZW) == id_key("MTB-1") == id_key("mtb-1\ufeff")
    cases = tmp_path / "cases.csv"
    cases.write_text(f"case_id,patient_summary,proposed_therapy\nMTB-1,a,b\n{ZW},c,d\n", encoding="utf-8")
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert (
        res.exit_code == 1
        and ":3: case_id: 'MTB-1\\u200b' contains invisible or control character U+200B" in res.output
    )
