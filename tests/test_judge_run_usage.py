"""`goldboard judge run` is a command like the others: its usage and errors name it `goldboard judge
run` (not `goldboard run`, a command that does not exist), and an option given twice is refused
rather than silently keeping the last."""

from __future__ import annotations

from conftest import error_line, invoke_cli

RUN = ["judge", "run", "--judge", "j", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--no-progress"]


def test_help_and_usage_errors_name_goldboard_judge_run():
    res = invoke_cli("judge", "run", "--help", code=0)
    usage = res.output.splitlines()[0]  # the test runner calls the program "main"
    assert usage.startswith("Usage: ") and usage.endswith(" judge run [OPTIONS]"), usage
    line = error_line(invoke_cli("judge", "run", "--bogus", code=2))
    assert "No such option '--bogus'" in line and " judge run --help`)" in line, line


def test_an_option_given_twice_is_refused(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    line = error_line(invoke_cli(*RUN, "--study", a, "--study", b, code=2))
    assert line.startswith("Error: --study given more than once"), line
    assert " judge run --help`)" in line
