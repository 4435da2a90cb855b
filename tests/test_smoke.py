from click.testing import CliRunner

from goldboard.cli import main


def test_help_lists_study():
    res = CliRunner().invoke(main, ["--help"])
    assert res.exit_code == 0
    assert "study" in res.output


def test_study_init_needs_two_raters(tmp_path):
    res = CliRunner().invoke(main, ["study", "init", str(tmp_path / "s"), "--schema", "mtb", "--raters", "onc_a"])
    assert res.exit_code == 1
    assert "at least two raters" in res.output
    assert "Traceback" not in res.output
