"""Output files are named for what is written: an ``-o`` ending of a format the command does not write
(``agree -o x.json`` writing CSV), ``-`` for a file, leading or trailing blanks or a control
character in the name, the output given by both spellings: refused naming the option, nothing
written; each command's own endings still work.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from builders import demo_study, leaf_commands, plain_ratings, readme_predictions, readme_study
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run

from goldboard.cli._options import OutputFile
from goldboard.cli._output import FORMAT_SUFFIXES


def test_agree_csv_into_a_json_name_is_refused(tmp_path):
    """O09: ``agree --format csv -o out.json`` wrote CSV into a .json file, exit 0."""
    out = tmp_path / "out.json"
    res = invoke_cli("agree", plain_ratings(tmp_path), "--format", "csv", "-o", out)
    assert (
        res.exit_code == 2
        and "'out.json' ends in .json but -o writes csv (--format csv); --format json writes it"
        in error_line(res).replace(str(tmp_path) + "/", "")
    )
    assert not out.exists()
    invoke_cli("agree", plain_ratings(tmp_path), "--format", "json", "-o", out, code=0)  # its own ending
    invoke_cli(
        "agree", plain_ratings(tmp_path), "--format", "csv", "-o", tmp_path / "out.txt", code=0
    )  # no known ending


def test_every_format_and_output_command_refuses_another_formats_ending():
    """One rule for every command with --format and -o: each format choice, with an output named
    for another format (one the command writes, else .pdf), is refused before the command runs."""
    walked = 0
    for path, cmd in leaf_commands():
        names = {p.name: p for p in cmd.params}
        if "fmt" not in names or "output" not in names:
            continue
        choices = list(names["fmt"].type.choices)
        for fmt in choices:
            other = next((c for c in choices if c != fmt and c in FORMAT_SUFFIXES), "pdf")
            if other == fmt:
                continue
            args = [*path, *_required_args(cmd), "--format", fmt, "-o", f"x{FORMAT_SUFFIXES[other][0]}"]
            res = invoke_cli(*args)
            assert res.exit_code == 2 and f"-o writes {fmt} (--format {fmt})" in res.output, (args, res.output)
            walked += 1
    assert (
        walked >= 20
    )  # agree, calibrate, flag, gold diff? (no -o), judge x2, plan size, report, schema, score, status ...


def _required_args(cmd: click.Command) -> list[str]:
    args: list[str] = []
    for p in cmd.params:
        if not p.required:
            continue
        if isinstance(p, click.Argument):
            args.append("x")
        else:
            args += [p.opts[0], "x"]
    return args


def test_score_refuses_an_output_named_for_a_format_it_does_not_write(tmp_path):
    """Before: ``score -o s.xlsx`` (s.pdf, s.htm) wrote the plain-text table, exit 0."""
    s = readme_study(tmp_path)
    pred = readme_predictions(tmp_path)
    for name in ("s.xlsx", "s.pdf", "s.htm", "s.jsonl"):
        res = invoke_cli("score", "--study", s, "--predictions", pred, "-o", tmp_path / name)
        line = error_line(res).replace(str(tmp_path) + "/", "")
        assert res.exit_code == 2, (name, res.output)
        suffix = Path(name).suffix
        assert f"'{name}' ends in {suffix} but -o writes the table, or Markdown, CSV or JSON by the file's" in line
        assert "name the file .md, .markdown, .csv, .json or e.g. .txt" in line
        assert not (tmp_path / name).exists()
    # the endings it writes still work, and name the format
    invoke_cli("score", "--study", s, "--predictions", pred, "-o", tmp_path / "s.csv", code=0)
    assert (tmp_path / "s.csv").read_text(encoding="utf-8").startswith("kind,model,")
    invoke_cli("score", "--study", s, "--predictions", pred, "-o", tmp_path / "s.txt", code=0)
    # --format given: the --format rule names the option that writes it
    res = invoke_cli("score", "--study", s, "--predictions", pred, "--format", "csv", "-o", tmp_path / "s.md")
    assert res.exit_code == 2 and "-o writes csv (--format csv); --format markdown writes it" in res.output


def _arg(p: click.Parameter) -> str:
    if isinstance(p.type, click.Choice):
        return str(p.type.choices[0])
    if isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType)):
        return "1"
    return "x_in"


def _required(cmd: click.Command) -> list[str]:
    args: list[str] = []
    for p in cmd.params:
        if p.required:
            value = _arg(p)
            if isinstance(p.type, OutputFile):  # a required output: a name of its own format
                own = sorted(_writes(cmd, p)[0] & set(FORMAT_SUFFIXES))
                value = f"ok{FORMAT_SUFFIXES[own[0]][0] if own else '.txt'}"
            args += [value] if isinstance(p, click.Argument) else [p.opts[0], value]
    return args


#: options required through their deprecated alias's callback (click does not see them as required)
EXTRA = {("plan", "sample"): ["-n", "1"]}


def _writes(cmd: click.Command, param: click.Parameter) -> tuple[set[str], bool] | None:
    """The formats of FORMAT_SUFFIXES ``param`` writes, and whether any other name is taken;
    None when the command declares nothing for it."""
    declared = getattr(cmd, "output_formats", {})
    if param.name in declared:
        _, formats, any_name = declared[param.name]
        return set(formats), any_name
    fmt = next((p for p in cmd.params if p.name == "fmt"), None)
    if param.name == "output" and fmt is not None and fmt.default is not None:
        return {fmt.default}, True  # the --format rule, with the default format
    return None


def test_every_output_option_refuses_an_ending_of_a_format_it_does_not_write(tmp_path, monkeypatch):
    """One rule for every option that writes a file: each ending of FORMAT_SUFFIXES that the
    option does not write (a text table into .xlsx/.pdf/.html, XML into .json, JSONL into .json)
    is refused before the command reads anything, exit 2, nothing written.  Every output option
    of every command is covered: by --format or by its command's ``output_formats``."""
    monkeypatch.chdir(tmp_path)
    walked, commands = 0, set()
    for path, cmd in leaf_commands():
        for param in cmd.params:
            if not isinstance(param.type, OutputFile) or param.name.startswith("deprecated_"):
                continue
            writes = _writes(cmd, param)
            assert writes is not None, (path, param.name)  # declare what it writes
            formats, _ = writes
            flag = "-o" if "-o" in param.opts else max(param.opts, key=len)
            for other, ends in FORMAT_SUFFIXES.items():
                if other in formats:
                    continue
                name = f"x{ends[0]}"
                base = _required(cmd) + EXTRA.get(path, [])
                if param.required:  # given by _required: replace its value
                    i = base.index(param.opts[0])
                    base = base[:i] + base[i + 2 :]
                main = next((p for p in cmd.params if "-o" in p.opts), None)
                if (
                    main is not None and main is not param and not set(main.opts) & set(base)
                ):  # -o (required by its callback)
                    own = sorted(_writes(cmd, main)[0] & set(FORMAT_SUFFIXES))
                    base += ["-o", f"ok{FORMAT_SUFFIXES[own[0]][0] if own else '.txt'}"]
                res = invoke_cli(*path, *base, param.opts[0], name)
                assert res.exit_code == 2, (path, name, res.output)
                assert f"'{name}' ends in {ends[0]} but {flag} writes" in res.output, (path, name, res.output)
                assert not (tmp_path / name).exists()
                walked += 1
                commands.add(" ".join(path))
    expected = {"score", "agree", "flag", "calibrate", "judge", "plan judge", "plan size", "plan sample", "report"}
    expected |= {"cases synth", "cases example", "cases template", "schema config", "adjudicate sheet", "server login"}
    assert expected <= commands, expected - commands
    assert walked >= 120


def test_a_name_with_no_known_ending_is_refused_where_only_one_format_is_written(tmp_path):
    """cases synth, cases template and adjudicate sheet write only their own formats: any other name
    is refused by the same rule (it was their own check, exit 1)."""
    res = invoke_cli("cases", "synth", "--schema", "mtb", "-n", "3", "-o", tmp_path / "c.txt")
    assert res.exit_code == 2 and "but -o writes synthetic records as JSONL or JSON; name the file" in res.output
    assert "name the file .jsonl, .ndjson or .json" in res.output
    invoke_cli("cases", "synth", "--schema", "mtb", "-n", "3", "-o", tmp_path / "c.ndjson", code=0)


def test_output_given_by_both_spellings_is_refused_and_nothing_written(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    res = run("plan", "sample", "--cases", "x.csv", "-n", "2", "-o", a, f"--output={b}")
    assert "-o/--output given more than once" in error_line(res)
    assert not a.exists() and not b.exists()


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


@pytest.mark.parametrize("name", ["units.jsonl\n", "a\rb.jsonl", "t\x1b[2Jx.jsonl", "x\u202elmth.jsonl"])
def test_output_path_with_a_control_character_refused(tmp_path, name):
    out = tmp_path / "NW" / name
    (tmp_path / "NW").mkdir()
    res = run("cases", "template", "--schema", "mtb", "-o", out)
    line = error_line(res)
    assert "--output" in line and "the file name contains control character(s)" in line
    assert list((tmp_path / "NW").iterdir()) == []
