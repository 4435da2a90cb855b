"""Options, ids and output names an independent campaign found silently accepted (issue 23,
"every input is used as the user meant, or refused"): each test fails on the code before the fix.

Oracle for every refusal: one ``Error:`` line naming the flag (or file/row), a non-zero exit, no
traceback, and nothing written.
"""

from __future__ import annotations

import importlib

import click
import pytest
from test_misuse_inputs import error_line, run  # the shared no-traceback runner and its one error line

from goldboard.cli import COMMAND_MODULES


def _leaf_commands() -> list[tuple[tuple[str, ...], click.Command]]:
    out = []

    def walk(path: tuple[str, ...], cmd: click.Command) -> None:
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                walk((*path, name), sub)
        else:
            out.append((path, cmd))

    for module in COMMAND_MODULES:
        for cmd in importlib.import_module(f"goldboard.cli.{module}").commands:
            walk((cmd.name,), cmd)
    return out


def _single_value_options() -> list[tuple[tuple[str, ...], click.Option]]:
    return [
        (path, p)
        for path, cmd in _leaf_commands()
        for p in cmd.params
        if isinstance(p, click.Option) and not (p.multiple or p.count or p.is_eager)
    ]


SINGLE = _single_value_options()


# --------------------------------------------------------------------------- 1. an option given twice


@pytest.mark.parametrize("path,option", SINGLE, ids=[f"{' '.join(c)} {o.opts[0]}" for c, o in SINGLE])
def test_every_single_value_option_given_twice_is_refused_naming_it(path, option, tmp_path, monkeypatch):
    """MO01/MO01b/M35: ``--round 1 --round 2``, ``pull --field a --field b``: click kept the last
    one silently; now every command refuses, before it reads or writes anything."""
    first, second = option.opts[0], max(option.opts, key=len)
    given = [first, second] if option.is_flag else [first, "1", f"{second}=2" if second.startswith("--") else second]
    if not option.is_flag and not second.startswith("--"):
        given.append("2")
    monkeypatch.chdir(tmp_path)
    res = run(*path, *given, env={"GOLDBOARD_HOME": str(tmp_path / "home")})
    line = error_line(res)
    assert res.exit_code == 2, res.output
    assert "given more than once" in line and first in line, line
    assert list(tmp_path.iterdir()) == [], "nothing written"


def test_round_given_twice_names_round_not_a_missing_round(tmp_path):
    res = run("agree", "--study", tmp_path, "--round", "1", "--round", "2")
    line = error_line(res)
    assert "--round given more than once" in line and "not pulled" not in line, line


def test_output_given_by_both_spellings_is_refused_and_nothing_written(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    res = run("plan", "sample", "--cases", "x.csv", "-n", "2", "-o", a, f"--output={b}")
    assert "-o/--output given more than once" in error_line(res)
    assert not a.exists() and not b.exists()


def test_an_option_given_once_and_a_multiple_option_repeated_still_work():
    """The check counts only options that take one value: ``calibrate --round 1 --round 2`` is a set."""
    from goldboard.cli import repeated_option
    from goldboard.cli.calibrate import commands

    cmd = commands[0]
    ctx = click.Context(cmd)
    assert repeated_option(cmd, ctx, ["--study", "s", "--round", "1", "--round", "2"]) is None
    assert repeated_option(cmd, ctx, ["--study", "s", "--study=t"]).name == "study_dir"


# --------------------------------------------------------------------------- 2. seeds and resample counts

RANDOM_OPTIONS = [(path, o) for path, o in SINGLE if {"--seed", "--bootstrap", "--simulations"} & set(o.opts)]


def test_every_seed_and_resample_option_is_bounded():
    """Every ``--seed`` is 0..2**32-1 and every resample count has the documented upper bound."""
    from goldboard.cli._options import MAX_RESAMPLES

    seen = set()
    for path, o in RANDOM_OPTIONS:
        seen.add(o.opts[0])
        assert isinstance(o.type, click.IntRange), (path, o.opts)
        if "--seed" in o.opts:
            assert (o.type.min, o.type.max) == (0, 2**32 - 1), (path, o.opts)
        else:
            assert o.type.max == MAX_RESAMPLES, (path, o.opts)
    assert seen == {"--seed", "--bootstrap", "--simulations"}
    assert len(RANDOM_OPTIONS) >= 14


@pytest.mark.parametrize("path,option", RANDOM_OPTIONS, ids=[f"{' '.join(c)} {o.opts[0]}" for c, o in RANDOM_OPTIONS])
@pytest.mark.parametrize("value", ["-1", "99999999999"])
def test_out_of_range_seed_or_resamples_is_one_line_naming_the_flag(path, option, value):
    res = run(*path, option.opts[0], value)
    line = error_line(res)
    assert res.exit_code == 2 and option.opts[0] in line and "internal error" not in line, line


def test_sample_negative_seed_and_huge_bootstrap_are_refused_not_internal_errors(tmp_path):
    """MO09 ``plan sample --seed -1`` (numpy: "expected non-negative integer", exit 3) and MO21
    ``agree --bootstrap 99999999999`` (MemoryError, exit 3)."""
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,text\nC1,a\nC2,b\nC3,c\n")
    out = tmp_path / "s.csv"
    res = run("plan", "sample", "--cases", cases, "-n", "2", "--seed", "-1", "-o", out)
    assert res.exit_code == 2 and "--seed" in error_line(res) and not out.exists()
    res = run("agree", "--study", tmp_path, "--bootstrap", "99999999999")
    assert res.exit_code == 2 and "--bootstrap" in error_line(res) and "100000" in error_line(res)


# --------------------------------------------------------------------------- 3. an empty path


PATHS = [
    (path, p)
    for path, cmd in _leaf_commands()
    for p in cmd.params
    if isinstance(p.type, click.Path) and (path, p.name) != (("study", "set"), "data_dir")  # '': the default
]


@pytest.mark.parametrize("path,param", PATHS, ids=[f"{' '.join(c)} {p.name}" for c, p in PATHS])
def test_every_empty_path_parameter_is_refused_naming_it(path, param):
    from goldboard.cli._output import refuse_empty_paths

    with pytest.raises(click.UsageError, match="is empty") as err:
        refuse_empty_paths(dict(_leaf_commands())[path], {param.name: ("",) if param.multiple else ""})
    flag = max(param.opts, key=len) if isinstance(param, click.Option) else param.human_readable_name
    assert flag in str(err.value)


def test_empty_study_inside_a_study_does_not_run_on_the_current_folder(tmp_path, monkeypatch):
    """MO22: ``status --study ""`` (an unset $STUDY) ran on the study in the current folder."""
    s = tmp_path / "s"
    assert run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    monkeypatch.chdir(s)
    before = sorted(p.name for p in s.iterdir())
    for args in (("status", "--study", ""), ("agree", "--study", ""), ("agree", "--study", ".", "-o", "")):
        res = run(*args)
        line = error_line(res)
        assert res.exit_code == 2 and "is empty" in line, line
        assert ("-o/--output" if "-o" in args else "--study") in line or "--output" in line, line
    assert sorted(p.name for p in s.iterdir()) == before


def test_study_set_data_dir_empty_still_means_the_default(tmp_path):
    s = tmp_path / "s"
    assert (
        run(
            "study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", "--data-dir", tmp_path / "d"
        ).exit_code
        == 0
    )
    res = run("study", "set", s, "--data-dir", "")
    assert res.exit_code == 0, res.output
    assert "data_dir" not in (s / "study.toml").read_text() or str(tmp_path / "d") not in (s / "study.toml").read_text()


# --------------------------------------------------------------------------- 4. output names


def demo_study(tmp_path):
    """A study with one pulled round (a ratings table, no server)."""
    s = tmp_path / "s"
    assert run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b").exit_code == 0
    t = tmp_path / "r.csv"
    t.write_text("case_id,a,b\n" + "".join(f"C{i},Supported,{'Unsafe' if i % 3 else 'Supported'}\n" for i in range(12)))
    res = run(
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
        "safety_label",
    )
    assert res.exit_code == 0, res.output
    return s


@pytest.mark.parametrize(
    "args,needle",
    [
        (["-o", "r.pdf"], "--pdf FILE"),
        (["-o", "r.md"], "--format markdown"),
        (["-o", "r.html", "--format", "markdown"], "--format html"),
        (["--pdf", "r.html"], "but --pdf writes a PDF; name the file .pdf"),  # the one -o rule (q9)
    ],
)
def test_report_output_named_for_another_format_is_refused(tmp_path, monkeypatch, args, needle):
    """MO04: ``report -o r.pdf`` wrote an HTML document into a file named .pdf."""
    s = demo_study(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    res = run("report", "--study", s, *args)
    line = error_line(res)
    assert res.exit_code == 2 and needle in line, line
    assert list(out.iterdir()) == [] and not (s / "reports").exists()


def test_report_output_with_its_own_format_ending_still_works(tmp_path):
    s = demo_study(tmp_path)
    res = run("report", "--study", s, "-o", tmp_path / "r.md", "--format", "markdown", "--no-supplement")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r.md").read_text().lstrip().startswith("#")


@pytest.mark.parametrize("cmd", [["report", "--study", "{s}"], ["agree", "--study", "{s}"]])
def test_output_dash_is_refused_not_a_file_named_dash(tmp_path, monkeypatch, cmd):
    """MO23: ``report -o -`` wrote an HTML file literally named ``-`` (and ./supplement)."""
    s = demo_study(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    res = run(*[c.format(s=s) for c in cmd], "-o", "-")
    line = error_line(res)
    assert res.exit_code == 2 and "--output" in line and "stdout" in line, line
    assert list(out.iterdir()) == []


@pytest.mark.parametrize("name", ["units.jsonl ", " a.csv", "sub /a.csv"])
def test_output_name_with_leading_or_trailing_space_is_refused(tmp_path, name):
    """LS19b: ``agree -o 'STUDY/units.jsonl '`` wrote a look-alike of the study's items file."""
    s = demo_study(tmp_path)
    before = sorted(p.name for p in s.iterdir())
    res = run("agree", "--study", s, "-o", f"{s}/{name}")
    line = error_line(res)
    assert res.exit_code == 2 and "space" in line and "--output" in line, line
    assert sorted(p.name for p in s.iterdir()) == before


# --------------------------------------------------------------------------- 5. spreadsheet id artefacts

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


# --------------------------------------------------------------------------- 7. messages


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


# --------------------------------------------------------------------------- 6. a rater not of the study


@pytest.mark.parametrize("extra", [[], ["--by", "case_id"]])  # the column fast path, and the pandas path
def test_agree_names_ratings_by_a_rater_removed_from_study_toml(tmp_path, extra):
    """MD9: onc_b removed from study.toml by hand was still analysed by agree with no note."""
    import re

    s = demo_study(tmp_path)
    toml = s / "study.toml"
    text = toml.read_text()
    edited = re.sub(r'"onc_b",?\s*', "", text, count=1)
    assert edited != text
    toml.write_text(edited)
    # a study of one rater is one that `study init` refuses: every reader refuses it, naming study.toml
    # (campaign 5 H01); a rater removed from a larger study is named by status (test_campaign_files)
    res = run("agree", "--study", s, *extra, code=1)
    err = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
    assert len(err) == 1 and f"{toml}: [study] raters: 1 rater(s); a study needs at least two" in err[0], res.output
    res = run("agree", "--study", demo_study(tmp_path / "b"))
    assert "not a rater of the study" not in res.output
