"""``status`` lists under a round the raters that round expected: a rater added after the round's
pull (``study add-rater`` for a later round) is not shown there as "0 / N items rated"."""

from __future__ import annotations

from conftest import invoke_cli


def _study(tmp_path):
    t = tmp_path / "t.csv"
    rows = "".join(f"c{i},onc_a,Supported\nc{i},onc_b,Unsupported\n" for i in range(4))
    t.write_text("case_id,rater,safety_label\n" + rows, encoding="utf-8")
    s = tmp_path / "s"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    invoke_cli("pull", "--study", s, "--from-table", t, "--item-col", "case_id", code=0)
    return s


def test_a_rater_added_after_a_rounds_pull_is_not_listed_under_it(tmp_path):
    s = _study(tmp_path)
    invoke_cli("study", "add-rater", s, "onc_c", "--no-account", code=0)
    out = invoke_cli("status", "--study", s, code=0).output
    round1 = out.split("round 1:")[1].split("adjudication:")[0]
    assert "onc_a              4 / 4" in round1 and "onc_b              4 / 4" in round1, out
    assert "onc_c" not in round1, out


def test_a_rater_the_rounds_pull_recorded_with_a_blank_column_is_listed_as_0(tmp_path):
    s = blank_column_study(tmp_path)
    out = invoke_cli("status", "--study", s, code=0).output
    assert "onc_b              0 / 2" in out, out


def blank_column_study(tmp_path):
    """A study of onc_a and onc_b whose round-1 table pull had onc_b's column blank (2 items)."""
    t = tmp_path / "t.csv"
    t.write_text("case_id,onc_a,onc_b\nc1,Supported,\nc2,Unsupported,\n", encoding="utf-8")
    s = tmp_path / "s"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    wide = ("--rater-cols", "onc_a=onc_a,onc_b=onc_b", "--field", "safety_label")
    invoke_cli("pull", "--study", s, "--from-table", t, "--item-col", "case_id", *wide, code=0)
    return s
