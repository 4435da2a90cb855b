"""A schema value that is one of goldboard's own words is refused on load, naming the schema file and
field: ``unresolved`` (the decision that leaves an item open, in every field) and ``(none)`` (the
empty set of a multi-select field whose values include ``none``).  A multi-select value ``none`` is
kept, and the empty set then reads ``(none)`` in ``flag`` as in the review sheet.

Failed before: each such schema loaded, so an adjudicated ``unresolved`` rating was released as an
unresolved item, and ``flag`` showed ``none`` both for the value none and for nothing ticked.
"""

from __future__ import annotations

import pytest
from conftest import error_line
from conftest import run_cli as run

from goldboard.adjudicate.flags import value_words
from goldboard.label_configs.schema import schema_from_dict

HEAD = 'name = "t"\nversion = "1"\n\n'


def _schema(tmp_path, fields: str):
    f = tmp_path / "t.toml"
    f.write_text(HEAD + fields)
    return f


@pytest.mark.parametrize("word", ["unresolved", "Unresolved", " unresolved "])
def test_a_value_spelled_unresolved_is_refused_naming_file_and_field(tmp_path, word):
    f = _schema(tmp_path, f'[[fields]]\nname = "verdict"\nkind = "nominal"\nvalues = ["safe", "{word}"]\n')
    line = error_line(run("schema", "show", f, code=1))
    assert f"{f}: fields[0] (verdict): values[1]: value" in line
    assert "is a word goldboard writes for the decision that leaves an item unresolved" in line


def test_an_alias_spelled_unresolved_is_refused(tmp_path):
    f = _schema(
        tmp_path,
        '[[fields]]\nname = "verdict"\nkind = "nominal"\n'
        'values = ["safe", { value = "open", aliases = ["unresolved"] }]\n',
    )
    line = error_line(run("study", "init", tmp_path / "s", "--schema", f, "--raters", "r1,r2", code=1))
    assert f"{f}: fields[0] (verdict): values[1]: value 'unresolved'" in line
    assert not (tmp_path / "s" / "study.toml").exists()


def test_a_multi_select_value_spelled_as_the_empty_set_is_refused(tmp_path):
    f = _schema(
        tmp_path,
        '[[fields]]\nname = "verdict"\nkind = "nominal"\nvalues = ["safe", "unsafe"]\n\n'
        '[[fields]]\nname = "gaps"\nkind = "multi"\nvalues = ["none", "(none)", "dose"]\n',
    )
    line = error_line(run("schema", "show", f, code=1))
    assert f"{f}: fields[1] (gaps): values[1]: value '(none)' is a word goldboard writes for the empty set" in line


def test_a_nominal_none_value_is_kept_and_the_multi_empty_set_is_unambiguous():
    data = {
        "name": "t",
        "fields": [
            {"name": "gate", "kind": "nominal", "values": ["none", "missed"]},  # MedFailBench's own vocabulary
            {"name": "gaps", "kind": "multi", "values": ["none", "dose"]},
        ],
    }
    s = schema_from_dict(data)
    assert s.field("gate").categories == ["none", "missed"]
    gaps = s.field("gaps")
    assert value_words(gaps, "none") == "none"
    assert value_words(gaps, "") == "(none)"  # nothing ticked: not the value none
