"""Options that would do nothing where they are given (``--bootstrap`` without intervals, a report
option with ``--format markdown``, a table option without a table...) are refused naming the option
and what it needs, for every command that declares them; with what they need they still work.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json

import click
import pytest
from builders import leaf_commands, plain_ratings, readme_predictions, readme_study
from conftest import error_line, invoke_cli
from conftest import invoke_cli as run

_CLUSTER = "--bootstrap N (N > 0), between raters (not --test-retest)"
_LONG = "a long TABLE (not --raters, --study or --from-label-studio)"
_HTML = "the HTML report or --pdf (not --format markdown)"


#: (command, option) -> arguments that leave the option without the one it needs; every
#: declared pair is walked (the declarations: each command's ``applies_only_with``)
IDLE = {
    ("agree", "seed"): (["x.csv", "--seed", "5"], "--bootstrap N (N > 0)"),
    # campaign 8b D24/D14/D23/D20 (test_options_that_do_nothing_on_a_study_are_refused reads each on a real study)
    ("agree", "cluster_col"): (["x.csv", "--cluster-col", "case_id"], _CLUSTER),
    ("agree", "item_col"): (["--study", "S", "--item-col", "c"], "a TABLE (not --study or --from-label-studio)"),
    ("agree", "rater_col"): (["--study", "S", "--rater-col", "c"], _LONG),
    ("agree", "label_col"): (["x.csv", "--raters", "a,b", "--label-col", "c"], _LONG),
    ("report", "paper"): (["--study", "S", "--format", "markdown", "--paper", "a4"], _HTML),
    ("report", "seed"): (["--study", "S", "--seed", "5"], "--bootstrap N (N > 0) or --ci auto"),
    ("calibrate", "seed"): (["--study", "S", "--rule", "kappa_lower>=0.6", "--seed", "5"], "--bootstrap N (N > 0)"),
    ("score", "seed"): (["--study", "S", "--bootstrap", "0", "--seed", "5"], "--bootstrap N (N > 0)"),
    ("plan size", "simulations"): (["--kappa", ".7", "--lower", ".5", "--simulations", "200"], "--assurance"),
    ("plan size", "seed"): (["--kappa", ".7", "--lower", ".5", "--seed", "3"], "--assurance"),
    ("plan size", "power"): (["--kappa", ".7", "--lower", ".5", "--power", ".9"], "--null"),
    ("plan size", "two_sided"): (["--kappa", ".7", "--lower", ".5", "--two-sided"], "--null"),
    ("plan size", "no_record"): (["--kappa", ".7", "--lower", ".5", "--no-record"], "--study"),
}


def test_options_that_do_nothing_are_refused_everywhere(tmp_path, monkeypatch):
    """O10/O13: ``plan size --simulations 200`` without --assurance and ``agree --seed 5`` without
    --bootstrap were ignored without a word.  Every declared pair is walked, and the table above
    is exactly the declarations; an option whose help says "With --X" is declared (or refused by
    its command's own code: listed in OWN_CHECK)."""
    monkeypatch.chdir(tmp_path)
    declared = {
        (" ".join(path), name): companion
        for path, cmd in leaf_commands()
        for name, (companion, _) in getattr(cmd, "applies_only_with", {}).items()
    }
    assert set(declared) == set(IDLE)
    for (path, name), (args, companion) in IDLE.items():
        assert declared[(path, name)] == companion
        res = invoke_cli(*path.split(), *args)
        line = error_line(res)
        flag = "--" + name.replace("_", "-")
        assert f"{flag}: applies only with {companion}: leave it out" in line, (path, line)
    own_check = {("plan size", "least_frequent"), ("plan size", "assurance"), ("judge", "labels")}
    own_check |= {("agree", "test_retest"), ("agree", "wide_raters")}  # input modes, checked by agree
    for path, cmd in leaf_commands():
        for p in cmd.params:
            key = (" ".join(path), p.name)
            if isinstance(p, click.Option) and (p.help or "").startswith("With --"):
                assert key in declared or key in own_check, key


def test_the_options_still_work_with_what_they_need(tmp_path):
    invoke_cli("agree", plain_ratings(tmp_path), "--bootstrap", 200, "--seed", 5, code=0)
    args = ["plan", "size", "--kappa", ".7", "--prevalence", ".5,.5"]
    invoke_cli(*args, "--lower", ".5", "--assurance", ".8", "--simulations", 200, "--seed", 3, code=0)
    invoke_cli(*args, "--null", ".4", "--power", ".9", "--two-sided", code=0)


def test_options_that_do_nothing_on_a_study_are_refused(tmp_path):
    """Before: each exit 0, the option ignored (agree's output byte-identical without it)."""
    s = readme_study(tmp_path, gold=False)
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
    s = readme_study(tmp_path, gold=False)
    invoke_cli("study", "round", s, "1", "--calibration", code=0)
    invoke_cli("calibrate", "--study", s, "--rule", "kappa_lower>=0.5", code=0)  # look 1 recorded
    res = invoke_cli("calibrate", "--study", s, "--rule", "kappa_lower>=0.5", "--change-rule", code=0)
    assert "Note: --change-rule: the rule and fields are the recorded ones; nothing to change" in res.output
    invoke_cli("calibrate", "--study", s, "--rule", "kappa_lower>=0.3", "--change-rule", code=0)
    assert "kappa_lower>=0.5 -> kappa_lower>=0.3" in (s / "study.toml").read_text(encoding="utf-8")


def test_score_without_bootstrap_does_not_claim_bootstrap_intervals(tmp_path):
    """A26: ``--bootstrap 0`` printed '95% CIs: bootstrap percentile (0 resamples, seed 1) ...'."""
    s = readme_study(tmp_path)
    pred = readme_predictions(tmp_path)
    out = invoke_cli("score", "--study", s, "--predictions", pred, "--bootstrap", "0", code=0).output
    assert "bootstrap percentile" not in out and "0 resamples" not in out
    assert "95% CIs: Wilson for proportions; none for accuracy, macro-F1, mean severity (--bootstrap 0" in out
    out = invoke_cli("score", "--study", s, "--predictions", pred, "--bootstrap", "20", code=0).output
    assert "95% CIs: bootstrap percentile (20 resamples, seed 1) for accuracy, macro-F1, mean severity" in out


@pytest.mark.parametrize(
    "opts,needle",
    [
        (["--compare", "gpt,gpt"], "--compare: 'gpt,gpt': a model compared with itself"),
        (["--critical-at", "bogus"], "--critical-at: applies only when scoring model outputs"),
        (["--confident-at", "0.9"], "--confident-at: applies only when scoring multiple choice"),
        (["--collapse-share", "5"], "--collapse-share: 5: give a share between 0 and 1"),
        (["--collapse-share", "-1"], "--collapse-share: -1: give a share between 0 and 1"),
    ],
)
def test_score_options_that_cannot_mean_anything_here_are_refused(released, tmp_path, opts, needle):
    preds = tmp_path / "pred.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"case_id": f"C-{n}", "model": m, "predicted_label": "Supported"}) + "\n"
            for n in range(1, 10)
            for m in ("gpt", "llama")
        )
    )
    res = run("score", "--study", released.path, "--predictions", preds, *opts)
    assert res.exit_code == 1 and error_line(res).startswith(f"Error: {needle}"), res.output
    res = run("score", "--study", released.path, "--predictions", preds, "--compare", "gpt,llama")
    assert res.exit_code == 0, res.output  # the same run with meaningful options
