"""Text never breaks the study's own files, and every error is one line.

- Round trips: every file goldboard writes reads back exactly -- ratings.csv,
  invalid.csv, gold.csv/jsonl/json/xlsx, flags.csv, decisions.jsonl, units.jsonl,
  pull.json, ``agree --format csv`` -- for every string of the hostile corpus
  (``tests/hostile.py``: bare CR, U+2028/U+2029/U+0085, bidi overrides, NUL, formula
  and DDE payloads, HTML, a 144,000-character cell).
- The CSV policy (README "Security"): CSV and JSON files are exact data files; the
  .xlsx files people open hold formula-like text as neutralised text cells, which
  goldboard's own reader restores.
- Markdown escapes HTML; terminal tables and error lines carry no control or bidi
  characters from the data.
- The tracebacks once seen are one-line errors naming the file (and line or cell).
"""

from __future__ import annotations

import csv
import io
import json
import random

import hostile
import openpyxl
import pandas as pd
import pytest
from click.testing import CliRunner

from goldboard.adjudicate.decisions import read_decisions
from goldboard.annotate.push import _read_units_file
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.cli import main
from goldboard.fileio import (
    csv_text,
    iter_jsonl,
    read_csv_frame,
    read_records,
    write_csv_atomic,
    write_jsonl_atomic,
)
from goldboard.study import Study
from goldboard.text import one_line, terminal_text

S, U = "Supported", "Unsupported"
RATERS = ["onc_a", "onc_b"]
#: every character that str.splitlines() splits on; CSV and JSONL must keep each inside its cell/record
SPLITLINES_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
TERMINAL_UNSAFE = set("\x1b\x07\x00\r\x9b\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def run(*args, **kw):
    res = CliRunner().invoke(main, [str(a) for a in args], **kw)
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def one_error_line(res, *needles):
    """Non-zero exit, exactly one stderr line, starting Error: and containing each needle."""
    assert res.exit_code != 0, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


def plain_id(text: str, k: int) -> str:
    """Item id ``k`` made of hostile ``text`` as a plain ratings file may hold it: without its
    hidden characters (control, format, line separators, variation selectors: refused in an id,
    issue 23) and the blanks around it (no part of an id)."""
    from test_fuzz_inputs import _hidden_char

    return ("".join(ch for ch in text if not _hidden_char(ch)) + f"#{k}").strip(" \u00a0")


def ratings_frame(texts: list[str], *, raw_ids: bool = False) -> pd.DataFrame:
    """A ratings table with one hostile text per row in rationale and case_id, and in item_id
    without what an id may not hold (:func:`plain_id`; ``raw_ids``: as it is, ``TEXT#k``)."""
    rows = []
    for k, t in enumerate(texts):
        for r in RATERS:
            rows.append(
                {
                    "round": "1",
                    "item_id": f"{t}#{k}" if raw_ids else plain_id(t, k),
                    "case_id": t,
                    "rater": r,
                    "field": "safety_label",
                    "value": S if r == "onc_a" or k % 2 else U,
                    "rationale": t,
                }
            )
    return pd.DataFrame(rows).reindex(columns=RATINGS_COLUMNS).astype(object).where(lambda d: d.notna(), "")


# --------------------------------------------------------------------------- round trips


def test_csv_writer_quotes_every_line_break():
    """The reported bug: pandas/csv with "\\n" record ends leave a bare CR unquoted."""
    df = pd.DataFrame({"a": ["x\ry", "p\u2028q", "\r", "a\r\nb"], "b": ["1", "2", "3", "4"]})
    text = csv_text(df)
    assert '"x\ry"' in text and '"\r"' in text and '"a\r\nb"' in text
    assert text.endswith("\r\n") and text.startswith("a,b\r\n")
    for rows in (
        list(csv.reader(io.StringIO(text, newline=""))),
        [list(r) for r in pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False).itertuples(index=False)],
    ):
        rows = rows[1:] if rows[0] == ["a", "b"] else rows
        assert [r[0] for r in rows] == list(df["a"])


def test_ratings_csv_round_trip_every_hostile_string(tmp_path):
    texts = hostile.corpus_with_huge()
    df = ratings_frame(texts, raw_ids=True)
    path = tmp_path / "ratings.csv"
    write_csv_atomic(df, path)
    back = read_ratings_csv(path)
    assert list(back["item_id"]) == list(df["item_id"])
    assert list(back["rationale"]) == list(df["rationale"])
    assert list(back["case_id"]) == list(df["case_id"])
    # any CSV reader: the csv module (no field-size error on the huge cell) and pandas
    with open(path, encoding="utf-8", newline="") as fh:
        csv.field_size_limit(1 << 24)
        assert [r["rationale"] for r in csv.DictReader(fh)] == list(df["rationale"])
    assert list(pd.read_csv(path, dtype=str, keep_default_na=False)["rationale"]) == list(df["rationale"])


def test_any_csv_reader_reads_the_huge_cell(tmp_path):
    """A cell over the csv module's 131,072-character default limit is read, not a traceback."""
    path = tmp_path / "table.csv"
    path.write_text(f'item_id,rater,value,note\r\nA,onc_a,{S},"{hostile.HUGE}"\r\nA,onc_b,{S},x\r\n', encoding="utf-8")
    recs = read_records(path)
    assert recs[0][1]["note"] == hostile.HUGE and recs[1] == (
        3,
        {"item_id": "A", "rater": "onc_b", "value": S, "note": "x"},
    )
    res = run("agree", path, "--label-col", "value", "--categories", f"{S},{U}", "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_items"] == 1


def test_jsonl_lines_split_at_lf_and_cr_only(tmp_path):
    recs = [{"item_id": f"C{k}", "reason": t} for k, t in enumerate(hostile.corpus_with_huge())]
    path = tmp_path / "units.jsonl"
    write_jsonl_atomic(recs, path)
    assert [r for _, r in iter_jsonl(path)] == recs
    assert _read_units_file(path) == recs
    # a file written by another tool with CR LF line ends reads the same
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert [r for _, r in iter_jsonl(crlf)] == recs


def test_units_jsonl_round_trip_through_study(tmp_path):
    st = Study.init(tmp_path / "st", "mtb", RATERS)
    units = [
        {"item_id": f"{t}#{k}", "case_id": str(k), "output_id": "", "model": "m", "case_text": t, "output_text": t}
        for k, t in enumerate(hostile.CORPUS)
    ]
    write_jsonl_atomic(units, st.units_path)
    back = st.units()
    assert list(back["item_id"]) == [u["item_id"] for u in units]
    assert list(back["case_text"]) == [u["case_text"] for u in units]


def test_decisions_log_with_line_separators_reads_back(tmp_path):
    """U+2028/U+2029/U+0085 in a reason made the decisions log unreadable by goldboard itself."""
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    path = tmp_path / "decisions.jsonl"
    reasons = [t for t in hostile.CORPUS if t.strip()] + [hostile.HUGE]
    proposed = [
        Proposed(item_id=f"C{k}", field="safety_label", decision=S, reason=r, adjudicator="dr", independent=True)
        for k, r in enumerate(reasons)
    ]
    record_decisions(path, proposed, source="sheet")
    assert [d["reason"] for d in read_decisions(path)] == reasons


def test_pull_writes_ratings_invalid_and_pull_json_exactly(tmp_path):
    """Through the CLI: hostile rationales (also an invalid annotation's) and item ids come
    back exactly from ratings.csv, invalid.csv and pull.json."""
    from test_fuzz_inputs import _visible_id, export, new_study, pull_args

    st = new_study(tmp_path / "st")
    rng = random.Random(5)
    # an id holding a hidden character (zero-width space, tab, U+2028) is refused (test_ids_hidden_characters)
    items = [_visible_id(f"{t}#{k}::m") for k, t in enumerate(hostile.CORPUS)]
    files, want = {}, {}
    for rater in RATERS:
        rows = []
        for item in items:
            rationale = hostile.mixed(rng) + "."  # never blank: every annotation is valid
            rows.append((item, S, rationale))
            want[(item, rater)] = rationale
        data = export(rater, rows)
        if rater == "onc_b":  # one invalid annotation (a value outside the schema) and one unannotated task
            data[0]["annotations"][0]["result"][0]["value"]["choices"] = ["=Zzz\u2028"]
            data[1]["annotations"] = []
        files[rater] = tmp_path / f"{rater}.json"
        files[rater].write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    res = run(*pull_args(st.path, files))
    assert res.exit_code == 0, res.output
    ratings = read_ratings_csv(st.ratings_path(1))
    got = {(r.item_id, r.rater): r.rationale for r in ratings.itertuples() if r.field == "safety_label"}
    del want[(items[0], "onc_b")], want[(items[1], "onc_b")]
    assert got == want
    invalid = read_csv_frame(st.invalid_path(1))
    assert list(invalid["item_id"]) == [items[0]]
    assert '"=Zzz\u2028"' in invalid["result"].iloc[0] or "=Zzz\\u2028" in invalid["result"].iloc[0]
    summary = json.loads(st.pull_report_path(1).read_text(encoding="utf-8"))
    assert items[1] in summary["raters"]["onc_b"]["unannotated_items"]  # the id exactly as pushed


def test_flags_csv_and_agree_csv_round_trip(tmp_path):
    df = ratings_frame(hostile.CORPUS)
    path = tmp_path / "ratings.csv"
    write_csv_atomic(df, path)
    out = tmp_path / "flags.csv"
    res = run("flag", path, "--schema", "mtb", "--format", "csv", "-o", out)
    assert res.exit_code == 0, res.output
    with open(out, encoding="utf-8", newline="") as fh:
        flagged = [r["item_id"] for r in csv.DictReader(fh)]
    assert sorted(flagged) == sorted(plain_id(t, k) for k, t in enumerate(hostile.CORPUS) if k % 2 == 0)
    # agree --format csv: strata named by hostile text (--by) come back exactly
    # (look-alike spellings of one stratum -- '=1+1' and its full-width twin -- are refused since
    # issue 23's campaign 8: each is written here as the first spelling of its look-alike group)
    from goldboard.text import spelling_key

    spelled: dict[str, str] = {}
    df["stratum"] = df["case_id"].map(lambda t: spelled.setdefault(spelling_key(t), t) if t.strip() else "blank")
    write_csv_atomic(df, path)
    res = run("agree", path, "--label-col", "value", "--by", "stratum", "--format", "csv")
    assert res.exit_code == 0, res.output
    groups = {r["group"] for r in csv.DictReader(io.StringIO(res.stdout_bytes.decode("utf-8"), newline=""))}
    # strata are compared stripped (as ids and labels are); each comes back exactly as agree named it
    assert {g for g in groups if g} == {s.strip() for s in df["stratum"]}


# --------------------------------------------------------------------------- the CSV policy


def test_policy_csv_is_exact_xlsx_is_neutralised_and_restored(tmp_path):
    """gold.csv keeps '=HYPERLINK(...)' exactly (a data file); gold.xlsx holds it as a text
    cell with the neutralising quote (a file for people); read_release restores the text."""
    from test_fuzz_inputs import export, new_study, pull_args

    from goldboard.exports.gold import read_release

    st = new_study(tmp_path / "st")
    payloads = [f for f in hostile.FORMULAS if f.strip() and f[0] not in "\t\r"]
    files = {}
    for rater, label in (("onc_a", S), ("onc_b", S)):
        rows = [(f"C{k}::m", label, p) for k, p in enumerate(payloads)]
        files[rater] = tmp_path / f"{rater}.json"
        files[rater].write_text(json.dumps(export(rater, rows)))
    assert run(*pull_args(st.path, files)).exit_code == 0
    # the ratings table (data) holds the rationales exactly
    with open(st.ratings_path(1), encoding="utf-8", newline="") as fh:
        got = {r["rationale"] for r in csv.DictReader(fh)}
    assert set(payloads) <= got
    for fmt in ("csv", "xlsx"):
        res = run("gold", "export", "--study", st.path, "--format", fmt, "--force")
        assert res.exit_code == 0, res.output
    gold_csv, gold_xlsx = st.gold_dir / "v1", st.gold_dir / "v2"
    item_ids = {f"C{k}::m" for k in range(len(payloads))}
    # csv: exact (formula-like item ids would be too; the ids here are plain)
    assert set(read_release(gold_csv)[0]["item_id"]) == item_ids
    # xlsx: every text cell is a string cell, never a formula; formula-like text carries the quote
    wb = openpyxl.load_workbook(gold_xlsx / "gold.xlsx")
    for row in wb["Gold"].iter_rows():
        for c in row:
            assert c.data_type != "f"
    evil = tmp_path / "evil.csv"
    write_csv_atomic(ratings_frame(payloads), evil)
    flags = run("flag", evil, "--schema", "mtb", "--format", "csv")
    assert set(payloads) & {r["case_id"] for r in csv.DictReader(io.StringIO(flags.stdout_bytes.decode(), newline=""))}


# --------------------------------------------------------------------------- markdown and terminal


def test_agree_markdown_escapes_html(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "item_id,rater,value\n"
        "1,<b>onc</b>,<script>x</script>\n1,r2,<script>x</script>\n"
        "2,<b>onc</b>,a|b\n2,r2,a|b\n3,<b>onc</b>,<script>x</script>\n3,r2,a|b\n",
        encoding="utf-8",
    )
    res = run("agree", path, "--format", "markdown")
    assert res.exit_code == 0, res.output
    assert "<script" not in res.stdout and "<b>" not in res.stdout
    assert "&lt;script&gt;" in res.stdout


def test_terminal_tables_strip_control_and_bidi(tmp_path):
    df = ratings_frame(hostile.BIDI_CONTROL + ["\x1b[2J\x1b[Hcleared", "a\rb"])
    df["stratum"] = "s"
    path = tmp_path / "r.csv"
    write_csv_atomic(df, path)
    for args in (
        ["flag", path, "--schema", "mtb"],
        ["agree", path, "--label-col", "value", "--by", "case_id"],
    ):
        res = run(*args)
        assert res.exit_code == 0, res.output
        shown = res.stdout_bytes.decode("utf-8")
        assert not (set(shown) & TERMINAL_UNSAFE), (args[0], sorted(set(shown) & TERMINAL_UNSAFE))
    df["item_id"] = ratings_frame(hostile.BIDI_CONTROL + ["\x1b[2J\x1b[Hcleared", "a\rb"], raw_ids=True)["item_id"]
    write_csv_atomic(df, path)  # the hostile text in the ids: refused (issue 23), the refusal escaped
    res = run("flag", path, "--schema", "mtb")
    assert res.exit_code == 1 and "invisible or control character" in res.output, res.output
    assert not (set(res.output) & TERMINAL_UNSAFE)
    # model names, item ids and values from the files, in the one-line summaries too
    cases, outputs = tmp_path / "c.jsonl", tmp_path / "o.jsonl"
    cases.write_text(json.dumps({"case_id": "C1", "text": "x"}) + "\n")
    outputs.write_text(json.dumps({"case_id": "C1", "model": "m\u202eevil\x1b[2J\r", "output": "o"}) + "\n")
    res = run("cases", "validate", cases, "--outputs", outputs, "--schema", "mtb")
    # a model name holding control characters is refused (cases/names.py), and the refusal shows them escaped
    assert res.exit_code != 0 and "'m\\u202eevil\\x1b[2J" in res.output, res.output
    assert not (set(res.output) & TERMINAL_UNSAFE)
    assert terminal_text("a\u202eb\x1b[0m\tc\n") == "a\\u202eb[0m\tc\n"  # a bidi control shown, not obeyed
    assert one_line("x\ry\u2028z\x85\x00") == "x\\ry\\u2028z\\x85"


def test_error_quoting_data_stays_one_line(tmp_path):
    """An error message quoting a value with line breaks and escapes is still one line."""
    path = tmp_path / "r.csv"
    df = ratings_frame(["x"])
    df.loc[0, "value"] = "Sup\rported\u2028\x1b[31m"
    write_csv_atomic(df, path)
    line = one_error_line(run("flag", path, "--schema", "mtb"), "r.csv")
    assert "\\r" in line and "\x1b" not in line


# --------------------------------------------------------------------------- one-line errors


@pytest.fixture()
def pulled(tmp_path):
    """A study with round 1 pulled and round 2 pulled before anyone annotated."""
    from test_fuzz_inputs import export, new_study, pull_args

    st = new_study(tmp_path / "st")
    files = {}
    for rater, labels in (("onc_a", [S, S, U]), ("onc_b", [S, U, U])):
        files[rater] = tmp_path / f"{rater}.json"
        files[rater].write_text(json.dumps(export(rater, [(f"C{k}::m", v, "r") for k, v in enumerate(labels)])))
    assert run(*pull_args(st.path, files)).exit_code == 0
    st = Study.open(st.path)
    st.get_or_add_round(2).projects = {"onc_a": 21, "onc_b": 22}
    st.save()
    # what a server pull of a round nobody annotated writes (an empty export file is refused: issue 23, E11)
    from goldboard.annotate.pull import collect

    res = collect([], st.schema, list(st.raters), 2)
    st.write_round(2, res.ratings, res.invalid, res.summary)
    assert len(read_ratings_csv(st.ratings_path(2))) == 0
    return st


def test_report_and_sheet_on_a_round_nobody_annotated(pulled, tmp_path):
    st = pulled
    # the report reads the latest complete round and says why (issue 22); --round 2 is the error
    res = run("report", "--study", st.path, "-o", tmp_path / "r.html")
    assert res.exit_code == 0, res.output
    assert "round 1, the latest complete round; round 2 has no ratings yet" in (tmp_path / "r.html").read_text()
    (tmp_path / "r.html").unlink()
    one_error_line(
        run("report", "--study", st.path, "--round", "2", "-o", tmp_path / "r.html"),
        "round 2 has no ratings yet",
    )
    one_error_line(
        run("adjudicate", "sheet", "--study", st.path, "--round", "2", "-o", tmp_path / "s.xlsx"),
        "rounds/2/ratings.csv",
        "round 2 has no ratings yet",
    )
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "s.xlsx").exists()
    assert run("report", "--study", st.path, "--round", "1", "-o", tmp_path / "r.html").exit_code == 0


@pytest.mark.parametrize(
    "name,content,needle",
    [
        ("deep.json", hostile.deep_json().encode(), "nested too deeply"),
        (
            "deep.jsonl",
            b'{"item_id": ' + hostile.deep_json().encode() + b"}\n",
            "deep.jsonl:1: invalid JSON: nested too deeply to read",
        ),
        ("book.ods", hostile.ods_bytes(), ".ods spreadsheets are not read; save it as .xlsx"),
        ("book.xls", b"\xd0\xcf\x11\xe0" + b"\0" * 60, ".xls spreadsheets are not read"),
        (
            "broken.xlsx",
            hostile.damage_xlsx(hostile.xlsx_bytes([["item_id", "rater", "value"], ["a", "b", "c"]])),
            "xl/worksheets/sheet1.xml is not well-formed XML",
        ),
        ("bad.csv", b'item_id,rater,value\n"a,onc_a,x\n', "bad.csv"),
        (
            "latin1.csv",
            "item_id,rater,value\nCaf\xe9,a,b\n".encode("latin-1"),
            "latin1.csv:2: not UTF-8 text (column 4: byte 0xE9",
        ),
    ],
)
def test_once_seen_tracebacks_are_one_line(tmp_path, name, content, needle):
    f = tmp_path / name
    f.write_bytes(content)
    for args in (
        ["agree", f],
        ["flag", f, "--schema", "mtb"],
        ["score", "--gold", f, "--schema", "mtb", "--predictions", f],
    ):
        one_error_line(run(*args), name, needle if args[0] != "flag" or not name.endswith(".csv") else name)


def test_damaged_review_workbook_is_one_line(pulled, tmp_path):
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", pulled.path, "--round", "1", "-o", sheet).exit_code == 0
    for member in ("xl/worksheets/sheet2.xml", "xl/workbook.xml", "xl/styles.xml"):
        bad = tmp_path / "bad.xlsx"
        bad.write_bytes(hostile.damage_xlsx(sheet.read_bytes(), member))
        one_error_line(
            run("adjudicate", "import", "--study", pulled.path, bad, "--adjudicator", "dr"), "bad.xlsx", member
        )
    ods = tmp_path / "review.ods"
    ods.write_bytes(hostile.ods_bytes())
    one_error_line(
        run("adjudicate", "import", "--study", pulled.path, ods, "--adjudicator", "dr"),
        "review.ods",
        "save it as .xlsx",
    )


def test_unreadable_cases_file_is_one_error_not_one_per_output(tmp_path):
    cases = tmp_path / "cases.json"
    cases.write_text("{oops")
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text("".join(json.dumps({"case_id": f"C{i}", "model": "m", "output": "x"}) + "\n" for i in range(60)))
    res = run("cases", "validate", cases, "--outputs", outputs, "--schema", "mtb")
    assert res.exit_code == 1
    assert res.stdout.strip().splitlines() == [
        f"{cases}:1: invalid JSON: Expecting property name enclosed in double quotes (column 2)"
    ]
    st = Study.init(tmp_path / "st", "mtb", RATERS, url="http://127.0.0.1:9")
    one_error_line(
        run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet"), "cases.json:1: invalid JSON"
    )


def test_ctrl_c_during_push_says_how_far_and_to_rerun(tmp_path, monkeypatch):
    import contextlib

    from test_push_offline import FakeServer, units

    import goldboard.annotate.push as push_mod

    class Interrupting(FakeServer):
        calls = 0

        def import_tasks(self, pid, tasks):
            self.calls += 1
            if self.calls == 3:  # onc_a's third batch: 20 of 50 tasks are in
                raise KeyboardInterrupt
            return super().import_tasks(pid, tasks)

    fake = Interrupting()
    monkeypatch.setattr(push_mod, "connect", lambda study: contextlib.nullcontext(fake))
    monkeypatch.setattr(push_mod, "load_units", lambda *a, **k: units(25))
    st = Study.init(tmp_path / "st", "mtb", RATERS, url="http://fake")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("{}\n")
    res = run("push", "--study", st.path, cases, "--batch-size", "10", "--quiet")
    assert res.exit_code == 130
    line = one_error_line(res, "push interrupted: 20 of 50 missing tasks were imported", "run the same push again")
    assert "Traceback" not in line
    # rerunning the same push completes it: every item once in each project
    res = run("push", "--study", st.path, cases, "--batch-size", "10", "--quiet")
    assert res.exit_code == 0, res.output
    for p in fake.projects.values():
        items = [t["item_id"] for t in p["tasks"]]
        assert len(items) == 25 == len(set(items))


def test_an_unexpected_bug_is_one_line_and_the_traceback_is_on_request(tmp_path, monkeypatch):
    import goldboard.cli.schema as schema_cli

    def boom(*a, **k):
        raise ValueError("unexpected\nsecond line")

    monkeypatch.setattr(schema_cli, "describe_schema", boom)
    res = run("schema", "show", "mtb")
    assert res.exit_code == 3
    one_error_line(res, "internal error (ValueError: unexpected\\nsecond line)", "GOLDBOARD_DEBUG=1")
    res = CliRunner().invoke(main, ["schema", "show", "mtb"], env={"GOLDBOARD_DEBUG": "1"})
    assert isinstance(res.exception, ValueError)


def test_an_unwritable_output_is_one_line(tmp_path):
    path = tmp_path / "t.csv"
    write_csv_atomic(ratings_frame(["a", "b", "c"]), path)
    (tmp_path / "a_file").write_text("x")
    res = run("agree", path, "--format", "csv", "-o", tmp_path / "a_file" / "out.csv")
    assert res.exit_code == 1
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]  # after the statistics' warnings
    assert len(errors) == 1 and "a_file/out.csv: cannot write here" in errors[0], res.stderr


def test_bare_cr_makes_no_phantom_rows_and_the_manifest_certifies_the_real_file(tmp_path):
    """The reported corruption: a bare CR in a rationale and in a reason used to split the
    CSV row (phantom rows, cut text) while the release manifest certified the broken file."""
    import hashlib

    from test_fuzz_inputs import export, new_study, pull_args

    from goldboard.adjudicate.decisions import Proposed, record_decisions

    st = new_study(tmp_path / "st")
    files = {}
    for rater, label in (("onc_a", S), ("onc_b", U)):
        rows = [(f"C{k}::m", label, f"line one\rline two {k}\r") for k in range(3)]
        files[rater] = tmp_path / f"{rater}.json"
        files[rater].write_text(json.dumps(export(rater, rows)))
    assert run(*pull_args(st.path, files)).exit_code == 0
    with open(st.ratings_path(1), encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 3 * 2 * 2  # one row per item x rater x field (safety_label, missing_info)
    assert {r["field"] for r in rows} == {"safety_label", "missing_info"}
    assert {r["rationale"] for r in rows} == {f"line one\rline two {k}\r" for k in range(3)}
    reason = "overruled:\rsee the\u2028minutes"
    record_decisions(
        st.decisions_path,
        [Proposed(item_id="C0::m", field="safety_label", decision=S, reason=reason, adjudicator="dr")],
        source="sheet",
    )
    res = run("gold", "export", "--study", st.path)
    assert res.exit_code == 0, res.output
    release = st.gold_dir / "v1"
    manifest = json.loads((release / "manifest.json").read_text())
    data = (release / "gold.csv").read_bytes()
    assert manifest["files"]["gold.csv"]["sha256"] == hashlib.sha256(data).hexdigest()
    with open(release / "gold.csv", encoding="utf-8", newline="") as fh:
        gold = list(csv.DictReader(fh))
    assert len(gold) == manifest["rows"]
    assert [g["reason"] for g in gold if g["item_id"] == "C0::m" and g["field"] == "safety_label"] == [reason]
