"""`goldboard cases template` writes a file `goldboard cases validate` accepts, for every built-in
schema and for a schema file without ``display.case_fields`` (whose case pane shows the case's
``text``): template, then validate, exit 0 -- in each format the template writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke_cli

from goldboard.label_configs.schema import builtin_names

NO_CASE_FIELDS = """
name = "verdicts"
version = "1"
[[fields]]
name = "verdict"
kind = "nominal"
values = ["yes", "no"]
"""

#: a per-option schema without case fields: the template has text and option_A, option_B
OPTIONS_NO_CASE_FIELDS = """
name = "picks"
version = "1"
[display]
options = ["A", "B"]
[[fields]]
name = "wrong"
kind = "binary"
for_each_option = true
"""


def _schema_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "schema.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _template_then_validate(tmp_path: Path, schema: str, suffix: str) -> str:
    out = tmp_path / f"cases{suffix}"
    res = invoke_cli("cases", "template", "--schema", schema, "-o", out)
    assert res.exit_code == 0, res.output
    res = invoke_cli("cases", "validate", out, "--schema", schema)
    assert res.exit_code == 0, res.output
    assert res.output.startswith("OK: 2 cases"), res.output
    return out.read_text(encoding="utf-8")


def test_every_builtin_schema_is_covered():
    assert {"mtb", "mtb_unsafe", "medfail", "radsafe"} <= set(builtin_names())


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
@pytest.mark.parametrize("name", builtin_names())
def test_the_template_of_a_builtin_schema_validates(tmp_path, name, suffix):
    _template_then_validate(tmp_path, name, suffix)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_the_template_of_a_schema_without_case_fields_validates(tmp_path, suffix):
    text = _template_then_validate(tmp_path, _schema_file(tmp_path, NO_CASE_FIELDS), suffix)
    assert "<Case text of case 1>" in text  # the column the case pane shows


def test_the_template_of_a_per_option_schema_without_case_fields_validates(tmp_path):
    text = _template_then_validate(tmp_path, _schema_file(tmp_path, OPTIONS_NO_CASE_FIELDS), ".csv")
    assert text.splitlines()[0] == "case_id,text,option_A,option_B"
