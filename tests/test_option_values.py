"""Option values used as the user meant, or refused in one line naming the flag: a single-value
option given twice, a seed or resample count out of range, an empty text or path (``--field
"$FIELD"`` with the variable unset), a data dir with a control character, a NaN or infinite
prevalence, a choice option left without its value; nothing is written.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import click
import pytest
from builders import (
    RATERS,
    error_naming,
    file_pull_refused,
    leaf_commands,
    study_and_file,
    study_bytes,
    study_files,
    task,
)
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run
from conftest import run_cli as run_ok

from goldboard.cli._output import EMPTY_TEXT_MEANS_SOMETHING, refuse_empty_text
from goldboard.errors import GoldboardError
from goldboard.study import Study


def test_a_missing_choice_option_lists_its_choices_on_one_line(tmp_path):
    """A00: ``cases synth -o c.jsonl`` printed 'Choose from:\\n\\tmtb,\\n\\t...' (escaped click layout)."""
    res = invoke_cli("cases", "synth", "-o", tmp_path / "c.jsonl")
    assert res.exit_code == 2
    line = error_line(res)
    assert "Missing option '--schema'. Choose from: mtb, mtb_unsafe, medfail, radsafe" in line
    assert "\\n" not in line and "\\t" not in line
    assert not (tmp_path / "c.jsonl").exists()


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


TEXTS = [
    (path, p)
    for path, cmd in leaf_commands()
    for p in cmd.params
    if isinstance(p.type, click.types.StringParamType) and (path[-1], p.name) not in EMPTY_TEXT_MEANS_SOMETHING
]


@pytest.mark.parametrize("path,param", TEXTS, ids=[f"{' '.join(c)} {p.name}" for c, p in TEXTS])
@pytest.mark.parametrize("empty", ["", "  "])
def test_every_empty_text_parameter_is_refused_naming_it(path, param, empty):
    with pytest.raises(GoldboardError, match="an empty value") as err:
        refuse_empty_text(dict(leaf_commands())[path], {param.name: (empty,) if param.multiple else empty})
    flag = max(param.opts, key=len) if isinstance(param, click.Option) else param.human_readable_name
    assert str(err.value).startswith(f"{flag} {empty!r}: an empty value"), str(err.value)


@pytest.mark.parametrize(
    "args",
    [
        ("score", "--field", ""),
        ("score", "--model-col", " "),
        ("judge", "--field", ""),
        ("report", "--release", ""),
        ("calibrate", "--rule", "kappa_lower>=0.6", "--field", ""),
    ],
    ids=lambda a: " ".join(a),
)
def test_an_empty_text_option_is_one_error_line_and_nothing_changes(released, tmp_path, args):
    before = study_files(released.path)
    out = tmp_path / "out.txt"
    res = run(args[0], "--study", released.path, *args[1:], "-o", out)
    line = error_line(res)
    flag = args[-2]
    assert res.exit_code == 1 and line.startswith(f"Error: {flag} {args[-1]!r}: an empty value"), res.output
    assert not out.exists() and study_files(released.path) == before


def test_study_set_url_empty_still_means_the_embedded_server(tmp_path):
    s = tmp_path / "s"
    assert (
        run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", "http://x:8080").exit_code == 0
    )
    res = run("study", "set", s, "--url", "")
    assert res.exit_code == 0 and "(embedded server)" in res.output, res.output


BAD_DIRS = ["dd\nfake line", "dd\r", "dd\t1", "dd\u202e", "dd\x1b[31m", "dd /ls", " dd"]


@pytest.mark.parametrize("name", BAD_DIRS, ids=[ascii(n) for n in BAD_DIRS])
@pytest.mark.parametrize(
    "args",
    [("server", "add-raters", "onc_a"), ("server", "status"), ("server", "login", "onc_a"), ("server", "stop")],
    ids=lambda a: " ".join(a),
)
def test_a_server_data_dir_with_a_control_character_or_stray_space_is_refused(tmp_path, name, args):
    d = str(tmp_path / name)
    res = run(*args, "--data-dir", d)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith("Error: --data-dir '"), res.output
    assert ("control character" in line) != ("leading or trailing space" in line), line
    assert "\n" not in line.removeprefix("Error: ") and list(tmp_path.iterdir()) == [], res.output


def test_the_server_dir_variable_is_checked_and_a_plain_dir_still_works(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "x\ny"))
    res = run("server", "status")
    assert res.exit_code == 1 and error_line(res).startswith("Error: $GOLDBOARD_SERVER_DIR '"), res.output
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "plain dir"))  # a space inside a name is fine
    res = run("server", "status")
    assert res.exit_code == 0 and f"data dir:     {tmp_path / 'plain dir'}" in res.output, res.output


def _single_value_options() -> list[tuple[tuple[str, ...], click.Option]]:
    return [
        (path, p)
        for path, cmd in leaf_commands()
        for p in cmd.params
        if isinstance(p, click.Option) and not (p.multiple or p.count or p.is_eager)
    ]


SINGLE = _single_value_options()


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


def test_an_option_given_once_and_a_multiple_option_repeated_still_work():
    """The check counts only options that take one value: ``calibrate --round 1 --round 2`` is a set."""
    from goldboard.cli import repeated_option
    from goldboard.cli.calibrate import commands

    cmd = commands[0]
    ctx = click.Context(cmd)
    assert repeated_option(cmd, ctx, ["--study", "s", "--round", "1", "--round", "2"]) is None
    assert repeated_option(cmd, ctx, ["--study", "s", "--study=t"]).name == "study_dir"


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


PATHS = [
    (path, p)
    for path, cmd in leaf_commands()
    for p in cmd.params
    if isinstance(p.type, click.Path) and (path, p.name) != (("study", "set"), "data_dir")  # '': the default
]


@pytest.mark.parametrize("path,param", PATHS, ids=[f"{' '.join(c)} {p.name}" for c, p in PATHS])
def test_every_empty_path_parameter_is_refused_naming_it(path, param):
    from goldboard.cli._output import refuse_empty_paths

    with pytest.raises(click.UsageError, match="is empty") as err:
        refuse_empty_paths(dict(leaf_commands())[path], {param.name: ("",) if param.multiple else ""})
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


def test_plan_size_field_without_from_study_is_refused_not_recorded(openmtb_pulled):
    before = study_bytes(openmtb_pulled)
    args = ["plan", "size", "--study", openmtb_pulled, "--kappa", "0.6", "--prevalence", "0.3", "--lower", "0.4"]
    error_naming(run_ok(*args, "--field", "nosuch", code=1), "--field nosuch: names the pilot of --from-study")
    error_naming(run_ok(*args, "--round", "3", code=1), "--round 3: names the pilot of --from-study")
    assert study_bytes(openmtb_pulled) == before


@pytest.mark.parametrize("flag", ["--source", "--item-key", "--field"])
def test_n98_an_empty_option_value_is_refused(tmp_path, flag):
    s, f = study_and_file(tmp_path, [task("MTB-1")])
    out = file_pull_refused(s, f, flag, "")
    assert f"{flag} '': an empty value" in out


def test_n100_adjudicate_pull_refuses_an_empty_adjudicator(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    out = run_ok("adjudicate", "pull", "--study", s, "--adjudicator", "", code=1).output
    assert "--adjudicator '': an empty value" in out  # the one empty-text check of every command


def test_agree_refuses_an_empty_field(tmp_path):
    s, f = study_and_file(
        tmp_path, [task("MTB-1"), task("MTB-1", who="p-ben"), task("MTB-2"), task("MTB-2", who="p-ben")]
    )
    run_ok("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    run_ok("agree", "--study", s)
    assert "--field '': an empty value" in run_ok("agree", "--study", s, "--field", "", code=1).output
