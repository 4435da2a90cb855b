"""Campaign 8 (issue 23), helper q9: outputs named for another format, options that do nothing,
misleading messages.  Each test fails on the code before its fix (checked by running it there)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import click
from conftest import error_line, invoke_cli

from goldboard.cli._options import OutputFile
from goldboard.cli._output import FORMAT_SUFFIXES

PULL_AB = [
    "--item-col",
    "case_id",
    "--field",
    "safety_label",
    "--rater-cols",
    "onc_a=oncologist_a_label,onc_b=oncologist_b_label",
]


def _commands() -> list[tuple[tuple[str, ...], click.Command]]:
    from test_campaign_options import _leaf_commands

    return _leaf_commands()


def _study(tmp_path: Path, gold: bool = True) -> Path:
    """The README walk-through study (openmtb, onc_a/onc_b), gold v1 released."""
    t = tmp_path / "t.csv"
    invoke_cli("cases", "example", "openmtb", "-o", t, code=0)
    s = tmp_path / "S"
    invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    invoke_cli("pull", "--study", s, "--from-table", t, *PULL_AB, code=0)
    if gold:
        invoke_cli("gold", "export", "--study", s, code=0)
    return s


def _predictions(tmp_path: Path) -> Path:
    p = tmp_path / "pred.jsonl"
    with open(tmp_path / "t.csv", encoding="utf-8") as fh, open(p, "w", encoding="utf-8") as out:
        for r in csv.DictReader(fh):
            label = r["benchmark_label"].replace("Insufficient Info", "Insufficient Information")
            out.write(json.dumps({"case_id": r["case_id"], "model": "m1", "predicted_label": label}) + "\n")
    return p


# -- D46/D47/D37: score -o s.xlsx wrote a text table into it ---------------------------------------


def test_score_refuses_an_output_named_for_a_format_it_does_not_write(tmp_path):
    """Before: ``score -o s.xlsx`` (s.pdf, s.htm) wrote the plain-text table, exit 0."""
    s = _study(tmp_path)
    pred = _predictions(tmp_path)
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
    for path, cmd in _commands():
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


# -- D24/D14/D23/D17/D20: options ignored without a note; A26: a CI sentence for no bootstrap -------


def test_options_that_do_nothing_on_a_study_are_refused(tmp_path):
    """Before: each exit 0, the option ignored (agree's output byte-identical without it)."""
    s = _study(tmp_path, gold=False)
    cases = [
        (["agree", "--study", s, "--cluster-col", "case_id"], "--cluster-col: applies only with --bootstrap N (N > 0)"),
        (
            ["agree", "--study", s, "--test-retest", "--rounds", "1,2", "--bootstrap", "50", "--cluster-col", "c"],
            "--cluster-col: applies only with --bootstrap N (N > 0), between raters (not --test-retest)",
        ),
        (["agree", "--study", s, "--item-col", "case_id"], "--item-col: applies only with a TABLE (not --study"),
        (["agree", "--study", s, "--rater-col", "who", "--label-col", "lab"], "--rater-col: applies only with a long"),
        (["agree", "--study", s, "--label-col", "lab"], "--label-col: applies only with a long TABLE"),
        (
            ["calibrate", "--study", s, "--rule", "kappa_lower>=0.5", "--change-rule", "--no-record"],
            "--change-rule: applies only after a recorded look (study.toml records none",
        ),
        (
            ["report", "--study", s, "--paper", "a4", "--format", "markdown", "-o", tmp_path / "r.md"],
            "--paper: applies only with the HTML report or --pdf (not --format markdown): leave it out",
        ),
    ]
    before = {p: p.read_bytes() for p in s.rglob("*") if p.is_file()}
    for args, message in cases:
        res = invoke_cli(*args)
        assert res.exit_code == 1 and message in error_line(res), (args, res.output)
    assert {p: p.read_bytes() for p in s.rglob("*") if p.is_file()} == before
    assert not (tmp_path / "r.md").exists()
    # with what they need they still run
    invoke_cli("agree", "--study", s, "--cluster-col", "case_id", "--bootstrap", "50", code=0)
    invoke_cli("report", "--study", s, "--paper", "a4", "-o", tmp_path / "r.html", "--no-supplement", code=0)


def test_change_rule_after_a_look_still_changes_it_and_the_same_rule_gets_a_note(tmp_path):
    s = _study(tmp_path, gold=False)
    invoke_cli("study", "round", s, "1", "--calibration", code=0)
    invoke_cli("calibrate", "--study", s, "--rule", "kappa_lower>=0.5", code=0)  # look 1 recorded
    res = invoke_cli("calibrate", "--study", s, "--rule", "kappa_lower>=0.5", "--change-rule", code=0)
    assert "Note: --change-rule: the rule and fields are the recorded ones; nothing to change" in res.output
    invoke_cli("calibrate", "--study", s, "--rule", "kappa_lower>=0.3", "--change-rule", code=0)
    assert "kappa_lower>=0.5 -> kappa_lower>=0.3" in (s / "study.toml").read_text(encoding="utf-8")


def test_score_without_bootstrap_does_not_claim_bootstrap_intervals(tmp_path):
    """A26: ``--bootstrap 0`` printed '95% CIs: bootstrap percentile (0 resamples, seed 1) ...'."""
    s = _study(tmp_path)
    pred = _predictions(tmp_path)
    out = invoke_cli("score", "--study", s, "--predictions", pred, "--bootstrap", "0", code=0).output
    assert "bootstrap percentile" not in out and "0 resamples" not in out
    assert "95% CIs: Wilson for proportions; none for accuracy, macro-F1, mean severity (--bootstrap 0" in out
    out = invoke_cli("score", "--study", s, "--predictions", pred, "--bootstrap", "20", code=0).output
    assert "95% CIs: bootstrap percentile (20 resamples, seed 1) for accuracy, macro-F1, mean severity" in out


# -- E14p: one export given for two raters was called 'swapped' ------------------------------------


def _ls_export(path: Path) -> Path:
    """A real-shaped Label Studio export: tasks and annotations carry ``"project": 5``."""

    def ann(i: int, user: int, value: str) -> dict:
        return {
            "id": i,
            "completed_by": user,
            "project": 5,
            "was_cancelled": False,
            "created_at": "2026-01-01T10:00:00Z",
            "result": [
                {"from_name": "safety_label", "to_name": "case", "type": "choices", "value": {"choices": [value]}}
            ],
        }

    tasks = [
        {"id": 101, "project": 5, "data": {"case_id": "C-1", "text": "x"}, "annotations": [ann(1002, 1, "Supported")]},
        {"id": 102, "project": 5, "data": {"case_id": "C-2", "text": "y"}, "annotations": [ann(1004, 2, "Unsafe")]},
    ]
    path.write_text(json.dumps(tasks), encoding="utf-8")
    return path


def test_one_export_given_for_two_raters_is_named_so_whatever_its_project_ids(tmp_path):
    """Before: 'its tasks are from project 5, which is onc_b's project in round 1 (onc_a's is 5);
    exports swapped between raters? Give it as onc_b=good.json' -- self-contradictory advice."""
    good = _ls_export(tmp_path / "good.json")
    copy = tmp_path / "good_copy.json"
    copy.write_bytes(good.read_bytes())
    s = tmp_path / "ST"
    invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    before = {p: p.read_bytes() for p in s.rglob("*") if p.is_file()}
    for second in (good, copy):
        res = invoke_cli(
            *["pull", "--study", s, "--from-export", f"onc_a={good}", "--from-export", f"onc_b={second}"],
            *["--item-key", "case_id", "--rater", "1=onc_a,2=onc_b"],
        )
        line = error_line(res)
        assert res.exit_code == 1, res.output
        assert (
            f"onc_b={second}: holds the same Label Studio tasks as onc_a={good} (task 101): one export given twice?"
            in line
        )
        assert "swapped" not in line
        assert {p: p.read_bytes() for p in s.rglob("*") if p.is_file()} == before


def test_a_missing_choice_option_lists_its_choices_on_one_line(tmp_path):
    """A00: ``cases synth -o c.jsonl`` printed 'Choose from:\\n\\tmtb,\\n\\t...' (escaped click layout)."""
    res = invoke_cli("cases", "synth", "-o", tmp_path / "c.jsonl")
    assert res.exit_code == 2
    line = error_line(res)
    assert "Missing option '--schema'. Choose from: mtb, mtb_unsafe, medfail, radsafe" in line
    assert "\\n" not in line and "\\t" not in line
    assert not (tmp_path / "c.jsonl").exists()
