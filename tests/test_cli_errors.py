"""The library names the parameter; the CLI names the flag the user typed."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.analysis.agreement import agreement
from goldboard.errors import GoldboardError


def _ratings():
    rows = [{"item_id": f"i{i}", "rater": r, "field": "f", "value": "x"} for i in range(4) for r in ("a", "b")]
    return pd.DataFrame(rows)


def test_library_error_names_the_parameter():
    with pytest.raises(GoldboardError) as info:
        agreement(_ratings(), "f", levels=["bogus"])
    assert info.value.param == "levels" and str(info.value).startswith("levels: 'bogus' is not one of")


def test_cli_maps_the_parameter_to_its_flag(tmp_path):
    p = tmp_path / "r.csv"
    _ratings().to_csv(p, index=False)
    res = invoke_cli("agree", p, "--categories", "x,x")
    assert res.exit_code != 0 and "Error: --categories: duplicate category" in res.output


def test_score_never_names_a_flag_it_does_not_have(tmp_path):
    # the medfail scorer's parameter is severity_field; `goldboard score` carries it in --field
    from goldboard.cli import flag_for
    from goldboard.cli.score import score_cmd

    assert flag_for(score_cmd, "severity_field") == "--field"
    assert flag_for(score_cmd, "compare") == "--compare"
    assert all("--severity-field" not in o for p in score_cmd.params for o in getattr(p, "opts", []))
