"""`goldboard --help` and the commands that need no statistics start without loading the
heavy libraries (pandas, scipy, matplotlib, scikit-learn, statsmodels, the Label Studio SDK).

Checked in a fresh interpreter (``sys.modules`` after the command ran), not by timing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from goldboard.cli import COMMAND_MODULES, main

HEAVY = ("pandas", "scipy", "matplotlib", "sklearn", "statsmodels", "label_studio_sdk", "numpy", "openpyxl")

PROBE = """
import json, sys
from click.testing import CliRunner
from goldboard.cli import main
res = CliRunner().invoke(main, json.loads(sys.argv[1]))
print(json.dumps({"exit": res.exit_code, "output": res.output,
                  "loaded": sorted(m for m in json.loads(sys.argv[2]) if m in sys.modules)}))
"""


def loaded_by(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--version"], ["server", "status", "--data-dir", "{tmp}"], ["server", "--help"], ["schema", "list"]],
)
def test_light_commands_load_no_heavy_library(args, tmp_path):
    got = loaded_by([a.replace("{tmp}", str(tmp_path / "srv")) for a in args])
    assert got["exit"] == 0, got["output"]
    assert got["loaded"] == [], f"`goldboard {' '.join(args)}` imported {got['loaded']}"


def test_help_lists_every_command_with_its_own_help():
    """The listing read from source says what each command's own --help says (no drift)."""
    import importlib

    listing = CliRunner().invoke(main, ["--help"], terminal_width=200).output
    names = []
    for module in COMMAND_MODULES:
        for cmd in importlib.import_module(f"goldboard.cli.{module}").commands:
            names.append(cmd.name)
            line = next(ln for ln in listing.splitlines() if ln.strip().startswith(cmd.name + " "))
            assert line.split(None, 1)[1].strip() == cmd.get_short_help_str(200 - 6 - len("adjudicate")), cmd.name
    order = [ln.split()[0] for ln in listing.split("Commands:")[1].splitlines() if ln.strip()]
    assert order == names  # the study order


def test_a_lazily_loaded_command_runs_and_reports_errors_in_one_line(tmp_path):
    res = CliRunner().invoke(main, ["pull", "--study", str(tmp_path / "none")])
    assert res.exit_code != 0 and "Traceback" not in res.output and "Error:" in res.output
    res = CliRunner().invoke(main, ["no-such-command"])
    assert res.exit_code == 2 and "No such command" in res.output
