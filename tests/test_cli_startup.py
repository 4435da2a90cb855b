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


API_PROBE = """
import json, sys
import goldboard as gb
before = sorted(m for m in json.loads(sys.argv[1]) + ["goldboard.api"] if m in sys.modules)
import goldboard.api as api
print(json.dumps({"before": before, "all": sorted(gb.__all__), "api": sorted(api.__all__),
                  "same": all(getattr(gb, n) is getattr(api, n) for n in api.__all__),
                  "api_loads": sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)}))
"""


def test_import_goldboard_is_cheap_and_hands_on_the_api():
    """`import goldboard as gb` loads no heavy library and not the API; `gb.X` is `goldboard.api.X`
    for every public name, and importing the API itself loads none of the heavy libraries either
    (each function imports what it needs)."""
    out = subprocess.run(
        [sys.executable, "-c", API_PROBE, json.dumps(HEAVY)], capture_output=True, text=True, timeout=120, check=True
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["before"] == [], got
    assert set(got["all"]) - {"__version__"} == set(got["api"]) and got["same"], got
    assert got["api_loads"] == [], f"import goldboard.api loaded {got['api_loads']}"


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


# -- the commands of a small study load what they use, and no more (issue 19) -----------------------

#: modules the latency table's commands must not load unless listed as allowed below
WATCHED = (*HEAVY, "scipy.stats", "scipy.optimize", "jinja2", "httpx", "PIL")

#: command -> the watched modules it may load (everything else it loads fails the test):
#: agreement on a small study reads ratings.csv with the csv module and computes with numpy
#: (cases/ratings_columns.py; --by, --cluster-col, --dichotomize, --test-retest, a design or a
#: large file read a DataFrame); so do flags (adjudicate/flags.py flag_columns: one plain round
#: without a design; several rounds, a design, a repeated rating or a value outside the schema read
#: a DataFrame); so does the report (workflows/report_columns.py: one plain round, no design, no decision
#: and no gold release; else DataFrames); the review workbook is openpyxl's, its content read as
#: columns too (workflows/adjudication.py study_review_columns: one plain round, no design); the
#: Krippendorff minimum is a closed formula (the normal quantile from the standard library)
MAY_LOAD = {
    "agree": ["numpy"],
    "agree-json": ["numpy"],
    "agree-raters": ["numpy"],
    "flag": ["numpy"],
    "plan-size": ["numpy"],
    "adjudicate-sheet": ["PIL", "numpy", "openpyxl"],  # openpyxl imports PIL itself
    "report-markdown": ["numpy"],
    "report-html": ["PIL", "jinja2", "matplotlib", "numpy"],  # the heatmaps and the template, no pandas
}

STUDY_COMMANDS = {
    "agree": ["agree", "--study", "{S}"],
    "agree-json": ["agree", "--study", "{S}", "--format", "json"],
    "agree-raters": ["agree", "--study", "{S}", "--raters", "onc_b,onc_a", "--format", "csv"],
    "flag": ["flag", "--study", "{S}"],
    "plan-size": ["plan", "size", "--alpha-min", "0.8", "--least-frequent", "0.25"],
    "adjudicate-sheet": ["adjudicate", "sheet", "--study", "{S}", "-o", "{tmp}/sheet.xlsx"],
    "report-markdown": ["report", "--study", "{S}", "--format", "markdown", "-o", "{tmp}/report.md"],
    "report-html": ["report", "--study", "{S}", "-o", "{tmp}/report.html"],
}


@pytest.fixture(scope="module")
def openmtb_study(tmp_path_factory):
    """The 50-item OpenMTB-Audit study of the README, pulled from its two-oncologist table."""
    root = tmp_path_factory.mktemp("openmtb")
    runner = CliRunner()
    for args in (
        ["cases", "example", "openmtb", "-o", str(root / "t.csv")],
        ["study", "init", str(root / "S"), "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b"],
        ["pull", "--study", str(root / "S"), "--from-table", str(root / "t.csv"), "--item-col", "case_id"]
        + ["--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label", "--field", "safety_label"],
    ):
        res = runner.invoke(main, args)
        assert res.exit_code == 0, res.output
    return root / "S"


def study_loaded_by(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args), json.dumps(WATCHED)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(STUDY_COMMANDS))
def test_study_commands_load_only_what_they_use(name, openmtb_study, tmp_path):
    args = [a.replace("{S}", str(openmtb_study)).replace("{tmp}", str(tmp_path)) for a in STUDY_COMMANDS[name]]
    got = study_loaded_by(args)
    assert got["exit"] == 0, got["output"]
    extra = sorted(set(got["loaded"]) - set(MAY_LOAD[name]))
    assert extra == [], f"`goldboard {' '.join(STUDY_COMMANDS[name])}` imported {extra}"


def test_the_markdown_report_draws_no_heatmap_and_says_the_same(openmtb_study, tmp_path):
    """The Markdown report skips the confusion heatmaps (it shows none): same text as when they are drawn."""
    from goldboard.exports.report import render_markdown
    from goldboard.study import Study
    from goldboard.workflows.report import build_report

    st = Study.open(openmtb_study)
    with_images, without = build_report(st), build_report(st, images=False)
    assert all(c["png"] for f in with_images["fields"] for c in f["confusions"])
    assert all(c["png"] is None for f in without["fields"] for c in f["confusions"])
    for d in (with_images, without):
        d["generated_at"] = "T"
    assert render_markdown(with_images) == render_markdown(without)
