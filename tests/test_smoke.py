from conftest import invoke_cli


def test_help_lists_study():
    res = invoke_cli(*["--help"])
    assert res.exit_code == 0
    assert "study" in res.output


def test_study_init_needs_two_raters(tmp_path):
    res = invoke_cli(*["study", "init", str(tmp_path / "s"), "--schema", "mtb", "--raters", "onc_a"])
    assert res.exit_code == 1
    assert "at least two raters" in res.output
    assert "Traceback" not in res.output
