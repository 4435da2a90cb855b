"""One spelling of each option (issue 20): every option of every ``goldboard`` command is
listed by walking the click group, and a second visible spelling of one meaning fails.

- a short flag stands for one long flag everywhere (``-o`` is ``--output``, ``-n`` is ``--n-cases``);
- no two visible flags are spellings of one word (``--out`` beside ``--output``);
- a flag means one kind of value everywhere (``--cases`` is a file, never a count; ``--level``
  is the measurement level, never the confidence level; ``--raters`` names raters, a
  ``RATER=COLUMN`` mapping is ``--rater-cols``);
- the ``--format`` choices are one vocabulary (``table``, never ``text`` for the same thing).

Old spellings stay for one release as hidden aliases (``cli/_options.deprecated_alias``):
they work and say which spelling replaces them.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from goldboard.cli import main

#: words that are spellings of one another in a flag (left: the spelling not to use)
SAME_WORD = {"out": "output", "md": "markdown", "text": "table"}
#: ``--format`` values that are spellings of one another (left: not to use)
SAME_FORMAT = {"text": "table", "md": "markdown", "txt": "table"}


def walk(cmd: click.Command, path: tuple[str, ...] = ()):
    if isinstance(cmd, click.Group):
        for name in cmd.list_commands(click.Context(cmd)):
            yield from walk(cmd.get_command(click.Context(cmd), name), (*path, name))
    else:
        yield " ".join(path), cmd


def visible_options(group: click.Command = main) -> list[tuple[str, click.Option]]:
    """``(command, option)`` for every option a user sees in ``--help`` (``--help`` itself aside)."""
    return [
        (name, p)
        for name, cmd in walk(group)
        for p in cmd.params
        if isinstance(p, click.Option) and not p.hidden and "--help" not in p.opts
    ]


def _kind(p: click.Option) -> str:
    if p.is_flag:
        return "flag"
    if p.metavar and "=" in p.metavar.split("]")[-1]:
        return "mapping"  # RATER=COLUMN,...: not a list of names
    t = p.type
    if isinstance(t, click.Path):
        return "path"
    if isinstance(t, (click.IntRange, click.types.IntParamType)):
        return "int"
    if isinstance(t, (click.FloatRange, click.types.FloatParamType)):
        return "float"
    return "text"  # free text and choices of names


def spelling_problems(options: list[tuple[str, click.Option]]) -> list[str]:
    """Every second spelling of one meaning among ``options``."""
    problems = []
    shorts: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    words: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    kinds: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    formats: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for cmd, p in options:
        longs = [o for o in p.opts if o.startswith("--")]
        for s in (o for o in p.opts if not o.startswith("--")):
            shorts[s][longs[0] if longs else "(no long flag)"].append(cmd)
        for flag in longs:
            norm = "-".join(SAME_WORD.get(w, w) for w in flag[2:].split("-"))
            words[norm][flag].append(cmd)
            kinds[flag][_kind(p)].append(cmd)
        if "--format" in p.opts and isinstance(p.type, click.Choice):
            for value in p.type.choices:
                formats[SAME_FORMAT.get(value, value)][value].append(cmd)
    for s, longs in sorted(shorts.items()):
        if len(longs) > 1:
            problems.append(f"{s} stands for {', '.join(f'{k} ({_cmds(v)})' for k, v in sorted(longs.items()))}")
    for _, spellings in sorted(words.items()):
        if len(spellings) > 1:
            problems.append(f"one word, spelled {', '.join(f'{k} ({_cmds(v)})' for k, v in sorted(spellings.items()))}")
    for flag, by_kind in sorted(kinds.items()):
        if len(by_kind) > 1:
            problems.append(f"{flag} takes {', '.join(f'a {k} ({_cmds(v)})' for k, v in sorted(by_kind.items()))}")
    for _, spellings in sorted(formats.items()):
        if len(spellings) > 1:
            problems.append(
                f"--format spells one format {', '.join(f'{k} ({_cmds(v)})' for k, v in sorted(spellings.items()))}"
            )
    return problems


def _cmds(cmds: list[str]) -> str:
    return ", ".join(sorted(set(cmds)))


def test_every_option_has_one_spelling():
    problems = spelling_problems(visible_options())
    assert not problems, "\n".join(problems)


def test_the_check_finds_a_second_spelling():
    # the shapes the CLI had before issue 20
    @click.group()
    def g():
        pass

    @g.command("a")
    @click.option("-o", "--out", "out")
    @click.option("-n", "n", type=int)
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]))
    def a(out, n, fmt):
        pass

    @g.command("b")
    @click.option("-o", "--output", "output")
    @click.option("-n", "--cases", "n_cases", type=int)
    @click.option("--format", "fmt", type=click.Choice(["table", "json"]))
    def b(output, n_cases, fmt):
        pass

    @g.command("c")
    @click.option("--cases", type=click.Path())
    @click.option("--level", type=click.Choice(["nominal"]))
    def c(cases, level):
        pass

    @g.command("d")
    @click.option("--confidence-level", "--level", "level", type=float)
    @click.option("--old", hidden=True)
    @click.option("--raters", "rater_cols", metavar="RATER=COLUMN,...")
    def d(level, old, rater_cols):
        pass

    @g.command("e")
    @click.option("--raters", help="Comma-separated rater names.")
    def e(raters):
        pass

    problems = spelling_problems(visible_options(g))
    assert problems == [
        "-n stands for (no long flag) (a), --cases (b)",
        "-o stands for --out (a), --output (b)",
        "one word, spelled --out (a), --output (b)",
        "--cases takes a int (b), a path (c)",
        "--level takes a float (d), a text (c)",
        "--raters takes a mapping (d), a text (e)",
        "--format spells one format table (b), text (a)",
    ]


def _note(old: str, new: str) -> str:
    return f"Note: {old} is deprecated (kept for one release); use {new}."


#: old spellings kept for one release: (arguments with the old spelling, the note it prints)
OLD_SPELLINGS = [
    (["cases", "synth", "--schema", "mtb", "-n", "5", "--out", "{tmp}/a.jsonl"], _note("--out", "-o/--output")),
    (
        ["cases", "synth", "--schema", "mtb", "-n", "5", "-o", "{tmp}/a.jsonl", "--outputs-out", "{tmp}/b.jsonl"],
        _note("--outputs-out", "--outputs-output"),
    ),
    (["cases", "template", "--schema", "mtb", "--out", "{tmp}/a.jsonl"], _note("--out", "-o/--output")),
    (["cases", "example", "openmtb", "--out", "{tmp}/a.csv"], _note("--out", "-o/--output")),
    (["schema", "config", "mtb", "--no-check", "--out", "{tmp}/a.xml"], _note("--out", "-o/--output")),
    (["schema", "show", "mtb", "--format", "text"], _note("--format text", "--format table")),
    (
        [
            "plan",
            "judge",
            "--humans",
            "2",
            "--categories",
            "3",
            "--epsilon",
            "0.2",
            "--datasets",
            "1",
            "--boots",
            "1",
            "--format",
            "json",
        ],
        _note("--humans", "--n-humans"),
    ),
]


@pytest.mark.parametrize("args,note", OLD_SPELLINGS, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
def test_an_old_spelling_still_works_and_says_so(tmp_path, args, note):
    args = [a.format(tmp=tmp_path) for a in args]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert note in res.stderr
    for written in (Path(a) for a in args if a.startswith(str(tmp_path))):
        assert written.stat().st_size > 0


def test_an_old_spelling_gives_the_same_result(tmp_path):
    old = CliRunner().invoke(main, ["schema", "show", "mtb", "--format", "text"])
    new = CliRunner().invoke(main, ["schema", "show", "mtb"])
    assert old.stdout == new.stdout and old.stdout
    plan = ["plan", "judge", "--epsilon", "0.2", "--datasets", "1", "--boots", "1", "--format", "json"]
    old = CliRunner().invoke(main, [*plan, "--humans", "4", "--categories", "3"])
    new = CliRunner().invoke(main, [*plan, "--n-humans", "4", "--n-categories", "3"])
    assert old.stdout == new.stdout and '"n_humans": 4,' in new.stdout
    sample = ["plan", "sample", "--cases", "{tmp}/c.jsonl", "--seed", "1", "-o"]
    CliRunner().invoke(main, ["cases", "synth", "--schema", "mtb", "-n", "9", "-o", f"{tmp_path}/c.jsonl"])
    old = CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in sample] + [f"{tmp_path}/o.jsonl", "--n", "4"])
    new = CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in sample] + [f"{tmp_path}/n.jsonl", "-n", "4"])
    assert old.exit_code == new.exit_code == 0, old.output + new.output
    assert _note("--n", "-n/--n-cases") in old.stderr
    assert (tmp_path / "o.jsonl").read_bytes() == (tmp_path / "n.jsonl").read_bytes()


def test_a_required_output_given_by_no_spelling_is_still_refused(tmp_path):
    res = CliRunner().invoke(main, ["cases", "synth", "--schema", "mtb", "-n", "5"])
    assert res.exit_code == 2
    assert "Missing option '-o' / '--output'" in res.output + res.stderr


#: options every command takes from one declaration in cli/_options.py
SHARED = ("--study", "--round", "--format", "-o")


def inline_declarations(options: list[tuple[str, click.Option]]) -> list[str]:
    from goldboard.cli._options import SharedOption

    return [
        f"{cmd}: {'/'.join(p.opts)}"
        for cmd, p in options
        if any(o in SHARED for o in p.opts) and not isinstance(p, SharedOption)
    ]


def test_shared_options_are_declared_once():
    assert inline_declarations(visible_options()) == []


def test_the_check_finds_an_inline_declaration():
    from goldboard.cli._options import study_option

    @click.command("x")
    @study_option()
    @click.option("--round", "round_number", type=int)
    def x(study_dir, round_number):
        pass

    assert inline_declarations([("x", p) for p in x.params]) == ["x: --round"]


def test_demo_cases_still_sets_the_number_of_cases(monkeypatch):
    import goldboard.cli.demo as demo_cli

    seen = {}
    monkeypatch.setattr(demo_cli, "run_demo", lambda directory, **kw: seen.update(kw))
    res = CliRunner().invoke(main, ["demo", "--cases", "12"])
    assert res.exit_code == 0, res.output
    assert seen["n_cases"] == 12 and _note("--cases", "-n/--n-cases") in res.stderr
    seen.clear()
    assert CliRunner().invoke(main, ["demo", "-n", "13"]).exit_code == 0 and seen["n_cases"] == 13


def test_pull_raters_old_name_reads_the_same_ratings(tmp_path):
    """``pull --raters RATER=COLUMN`` (old name of ``--rater-cols``): byte-identical ratings.csv."""
    run = CliRunner().invoke
    assert run(main, ["cases", "example", "openmtb", "-o", str(tmp_path / "t.csv")]).exit_code == 0
    got = {}
    for flag in ("--raters", "--rater-cols"):
        s = str(tmp_path / flag.strip("-"))
        assert run(main, ["study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b"]).exit_code == 0
        cols = ["--item-col", "case_id", flag, "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
        res = run(
            main, ["pull", "--study", s, "--from-table", str(tmp_path / "t.csv"), *cols, "--field", "safety_label"]
        )
        assert res.exit_code == 0, res.output
        assert (_note("--raters", "--rater-cols") in res.stderr) == (flag == "--raters")
        got[flag] = (Path(s) / "rounds" / "1" / "ratings.csv").read_bytes()
    assert got["--raters"] == got["--rater-cols"] and got["--raters"].count(b"\n") == 101


#: test modules that drive click's CliRunner themselves, and why (every other one uses
#: conftest's invoke_cli / run_cli / error_line)
OWN_RUNNER = {
    "conftest.py": "the one runner",
    "test_cli_options.py": "reads stdout and stderr apart",
    "test_cli_startup.py": "a fresh interpreter per probe; --help at a fixed terminal width",
    "test_fuzz_inputs.py": "the fuzz oracle judges tracebacks itself",
    "test_text_safety.py": "hostile text may echo anything, the oracle judges it",
    "test_text_live.py": "hostile text may echo anything, the oracle judges it",
    "test_import_kill.py": "runs the CLI in a forked child",
    "test_library_flags.py": "invokes a test group, not goldboard",
}


def test_one_cli_runner_in_the_suite():
    """No test module grows its own CLI helper again (issue 20: fifteen did)."""
    tests = Path(__file__).resolve().parent
    own = sorted(p.name for p in tests.glob("*.py") if "CliRunner()" in p.read_text(encoding="utf-8"))
    assert set(own) <= set(OWN_RUNNER), sorted(set(own) - set(OWN_RUNNER))


#: the commands whose ``--format`` is the format of the FILE they write, not of a printed result
FILE_FORMATS = {"gold export": {"csv", "jsonl", "json", "xlsx"}, "report": {"html", "markdown"}}


def format_problems(options: list[tuple[str, click.Option]]) -> list[str]:
    """A printed result's ``--format`` is one of ``PRINT_FORMATS`` (README "Layout"); only the
    commands of :data:`FILE_FORMATS` name file formats, and only theirs."""
    from goldboard.cli._options import PRINT_FORMATS

    problems = []
    for cmd, p in options:
        if "--format" not in p.opts or not isinstance(p.type, click.Choice):
            continue
        allowed = FILE_FORMATS.get(cmd, set(PRINT_FORMATS))
        extra = [c for c in p.type.choices if c not in allowed]
        if extra:
            problems.append(f"{cmd} --format {', '.join(extra)}: not one of {', '.join(sorted(allowed))}")
    return problems


def test_format_is_one_vocabulary():
    assert not format_problems(visible_options())

    @click.group()
    def g():
        pass

    @g.command("status")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]))
    def status(fmt):
        pass

    @g.command("report")
    @click.option("--format", "fmt", type=click.Choice(["html", "pdf"]))
    def report(fmt):
        pass

    assert format_problems(visible_options(g)) == [
        "report --format pdf: not one of html, markdown",
        "status --format text: not one of csv, json, markdown, table",
    ]
