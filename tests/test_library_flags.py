"""Library code never spells a CLI flag (README "Layout").

An error about an argument names the library *parameter* (``GoldboardError(..., param="seed")``,
or ``errors.ParamError("{round_number} {n}: ...")`` when the sentence names parameters mid-line);
the click layer maps each parameter to the flag the user typed (``goldboard.cli.flag_for``).  A
suggested command line in backticks (``run `goldboard pull --study S` ``) is a command to copy,
not a parameter of the call that failed, and may keep its flags.

The scan parses every module of the package outside ``cli/`` and looks at the string literals of
every ``raise`` and of every call of an ``...Error``/``...Warning`` class, and at the string
arguments of the name checks (``check_names``, ``check_rater_name``, ``check_rater_map``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from goldboard.errors import GoldboardError, ParamError, check_names, check_rater_map

ROOT = Path(__file__).resolve().parents[1]
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
COMMAND = re.compile(r"`goldboard [^`]*`")
NAME_CHECKS = {"check_names", "check_rater_name", "check_rater_map"}


def library_modules() -> list[Path]:
    skip = {"cli", "tests", "benchmarks", "build", "docs"}
    out = []
    for p in sorted(ROOT.rglob("*.py")):
        rel = p.relative_to(ROOT)
        if rel.parts[0] in skip or rel.parts[0].startswith(".") or "egg-info" in rel.parts[0]:
            continue
        out.append(p)
    return out


def _call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def flag_spellings(source: str) -> list[tuple[int, str]]:
    """``(line, flag)`` for every ``--flag`` in an error's text (outside a backticked command),
    and every flag handed on as a value: a parameter's default (``option="--name"``) or an
    argument of a call (``_per_item(..., "--by")``), except to another program's command line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for value in _handed_on(node):
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and FLAG.fullmatch(value.value):
                found.append((value.lineno, value.value))
        if isinstance(node, ast.Raise) and node.exc is not None:
            targets = [node.exc]
        elif isinstance(node, ast.Call) and (
            _call_name(node).endswith(("Error", "Warning")) or _call_name(node) in NAME_CHECKS
        ):
            targets = [node]
        else:
            continue
        for target in targets:
            for line, text in _texts(target):
                found += [(line, m) for m in FLAG.findall(COMMAND.sub("", text))]
    return sorted(set(found))


#: calls that run another program, whose flags are that program's
OTHER_PROGRAMS = {"call_command"}


def _handed_on(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    if isinstance(node, ast.Call) and _call_name(node) not in OTHER_PROGRAMS:
        return [*node.args, *(k.value for k in node.keywords)]
    return []


def _texts(node: ast.AST) -> list[tuple[int, str]]:
    """The string literals under ``node``; an f-string as one text (``{}`` for each value)."""
    if isinstance(node, ast.JoinedStr):
        parts = [v.value if isinstance(v, ast.Constant) else "{}" for v in node.values]
        return [(node.lineno, "".join(map(str, parts)))]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [(node.lineno, node.value)]
    return [t for child in ast.iter_child_nodes(node) for t in _texts(child)]


def test_the_scan_finds_a_flag_in_an_error():
    src = (
        "def f(n):\n"
        "    raise GoldboardError(f'--round {n}: rounds are numbered from 1')\n"
        "def g():\n"
        "    raise GoldboardError('no ratings (run `goldboard pull --study S`)')\n"
        "def h(names):\n"
        "    check_names(names, [], option='--raters', what='a rater')\n"
        "def k():\n"
        "    raise ParamError('{round_number}: rounds are numbered from 1')\n"
        "def m(name, option='--name'):\n"
        "    return _per_item(name, '--by'), call_command('migrate', '--no-color')\n"
    )
    assert flag_spellings(src) == [(2, "--round"), (6, "--raters"), (9, "--name"), (10, "--by")]


def test_library_errors_name_parameters_not_flags():
    bad = {}
    for p in library_modules():
        rel = p.relative_to(ROOT).as_posix()
        hits = flag_spellings(p.read_text(encoding="utf-8"))
        if hits:
            bad[rel] = hits
    assert not bad, "library errors spell CLI flags (name the parameter instead): " + "; ".join(
        f"{rel}:{line} {flag}" for rel, hits in bad.items() for line, flag in hits
    )


def test_param_error_reads_the_parameter_or_the_flag():
    err = ParamError("{round_number} {n}: round {prev} does not exist", n=5, prev=4)
    assert str(err) == "round_number 5: round 4 does not exist"
    assert err.param == "round_number"
    err.flags["round_number"] = "--round"
    assert str(err) == "--round 5: round 4 does not exist"
    with pytest.raises(GoldboardError, match=r"^raters: 'x' is not a rater"):
        check_names(["x"], ["a", "b"], param="raters", what="a rater")
    with pytest.raises(GoldboardError, match=r"^rater_map ana=onc_c: 'onc_c' is not a rater"):
        check_rater_map({"ana": "onc_c"}, ["onc_a", "onc_b"])


def test_the_cli_names_the_flag_of_a_library_parameter():
    """A library error about ``round_number`` reads ``--round`` in a command that has ``--round``
    (whatever the command's parameter is called), and the library name elsewhere."""
    from goldboard.cli import GoldboardGroup, name_flags
    from goldboard.cli._options import round_option

    @click.command("with-round")
    @round_option(dest="pilot_round")  # another parameter name: the shared mapping still finds --round
    def with_round(pilot_round):
        raise ParamError("{round_number} {n}: rounds are numbered from 1", n=pilot_round)

    @click.command("without")
    def without():
        raise GoldboardError("give a seed", param="seed")

    group = GoldboardGroup("g", commands=[with_round, without])
    name_flags(group)
    res = CliRunner().invoke(group, ["with-round", "--round", "0"])
    assert res.exit_code == 1
    assert "Error: --round 0: rounds are numbered from 1" in res.output
    res = CliRunner().invoke(group, ["without"])
    assert "Error: seed: give a seed" in res.output


@pytest.mark.parametrize(
    "args,line",
    [
        (
            ["plan", "size", "--kappa", "0.6", "--prevalence", "0.3,0.7", "--lower", "0.4", "--least-frequent", "0.2"],
            "Error: --least-frequent: the least frequent category's probability applies to --alpha-min",
        ),
        (["score", "--gold", "g", "--study", "s"], "Error: --gold and --study: give one of them"),
        (
            ["study", "init", "{tmp}/s", "--schema", "mtb", "--raters", "a,a"],
            "Error: --raters: rater names must be unique",
        ),
        (
            ["agree", "{tmp}/t.csv", "--dichotomize", "x"],
            "Error: --dichotomize x: field label is nominal; dichotomizing needs an ordered scale "
            "(--level ordinal or an ordinal schema field)",
        ),
    ],
    ids=["plan-size", "score", "study-init", "agree"],
)
def test_users_read_the_flag_they_typed(tmp_path, args, line):
    """Library errors (parameters ``least_frequent``/``alpha_min``, ``gold``/``study``,
    ``raters``, ``dichotomize``/``levels``) print the flags of the command that ran."""
    from conftest import invoke_cli

    (tmp_path / "t.csv").write_text("item_id,rater,label\n1,a,x\n1,b,y\n", encoding="utf-8")
    res = invoke_cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert res.exit_code == 1
    assert [ln for ln in res.output.splitlines() if ln.startswith("Error:")] == [line]


def test_a_server_error_keeps_its_exit_code_and_names_the_flag(tmp_path):
    """PortBusy is a ParamError and a LabelStudioError: exit code 2, ``--port`` named."""
    import socket

    from conftest import error_line, invoke_cli

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        res = invoke_cli("server", "start", "--data-dir", tmp_path / "srv", "--port", port)
    assert res.exit_code == 2
    assert error_line(res) == f"Error: port {port} on 127.0.0.1 is busy; choose another with --port"
