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


def test_table_errors_name_the_mapping_parameter_then_the_flag(tmp_path):
    """A ratings-table reader names the mapping parameter after the file; `agree` and `pull`
    print the flag in its place (`agree --raters` is `wide_raters`, `pull --rater-cols` is `rater_cols` in click)."""
    from goldboard.cases.ratings import read_long_table, read_wide_table
    from goldboard.cases.table_import import TableMapping, read_ratings_table
    from goldboard.errors import ParamError
    from goldboard.label_configs.schema import load_schema

    p = tmp_path / "r.csv"
    pd.DataFrame({"item_id": ["i1"], "who": ["a"], "label": ["x"]}).to_csv(p, index=False)
    with pytest.raises(ParamError) as info:
        read_long_table(p)
    assert info.value.param == "rater_col" and str(info.value) == (
        f"{p}: rater_col 'rater': no such column (columns: item_id, who, label)"
    )
    with pytest.raises(ParamError, match=r"raters: no column 'b'"):
        read_wide_table(p, ["who", "b"])
    df = pd.DataFrame({"case_id": ["C1"], "oncologist_a_label": ["Supported"], "_line": [2]})
    with pytest.raises(ParamError) as info:
        read_ratings_table(df, TableMapping(raters={"onc_a": "oncologist_a_label"}), load_schema("mtb"), source="t.csv")
    assert info.value.params == ["raters", "field"]
    assert str(info.value).startswith(
        "raters onc_a=oncologist_a_label: say which schema field the column holds with field"
    )

    res = invoke_cli("agree", p)
    assert res.exit_code == 1 and "Error: " + str(p) + ": --rater-col 'rater': no such column" in res.output
    res = invoke_cli("agree", p, "--raters", "who,b")
    assert res.exit_code == 1 and "--raters: no column 'b'" in res.output

    s = tmp_path / "st"
    assert invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b").exit_code == 0
    t = tmp_path / "t.csv"
    df.drop(columns="_line").to_csv(t, index=False)
    res = invoke_cli("pull", "--study", s, "--from-table", t, "--rater-cols", "onc_a=oncologist_a_label")
    assert res.exit_code == 1
    assert (
        "Error: --rater-cols onc_a=oncologist_a_label: say which schema field the column holds with --field"
        in res.output
    )
