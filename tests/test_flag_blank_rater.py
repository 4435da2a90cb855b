"""``flag --raters`` naming a rater whose pulled column was blank says that the rater rated nothing
(a pull recorded them), not "pull them first"; a rater no pull has read yet still gets "pull them first"."""

from __future__ import annotations

from conftest import error_line, invoke_cli
from test_status_round_raters import blank_column_study


def test_a_blank_pulled_rater_is_named_as_rated_nothing_and_an_unpulled_one_as_not_pulled(tmp_path):
    s = blank_column_study(tmp_path)
    blank = error_line(invoke_cli("flag", "--study", s, "--raters", "onc_a,onc_b", code=1))
    assert blank.startswith("Error: --raters: onc_b has no ratings in ratings: a pull recorded the rater"), blank
    invoke_cli("study", "add-rater", s, "onc_c", "--no-account", code=0)
    later = error_line(invoke_cli("flag", "--study", s, "--raters", "onc_a,onc_c", code=1))
    assert later == "Error: --raters: onc_c has no ratings in ratings (pull them first)", later
