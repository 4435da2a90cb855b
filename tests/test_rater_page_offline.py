"""What raters read, offline: display names beside stored values, definitions, absent case
fields as "not documented", and that none of it changes what is stored or matched."""

from __future__ import annotations

import pytest

from goldboard.annotate.pull import configs_match
from goldboard.annotate.push import _same_text
from goldboard.cases.units import NOT_DOCUMENTED, compose_case_text, without_not_documented
from goldboard.label_configs.schema import SchemaError, load_schema, schema_from_dict
from goldboard.label_configs.xml import to_label_studio_xml


def _schema(values):
    return schema_from_dict(
        {
            "name": "t",
            "version": "2",
            "title": "T",
            "fields": [{"name": "f", "kind": "nominal", "values": values}],
        }
    )


def test_display_name_is_read_but_the_value_is_stored():
    s = _schema(
        [{"value": "ecog_status", "display": "ECOG  status", "description": "ECOG performance status"}, "other"]
    )
    v = s.field("f").values[0]
    assert (v.value, v.label, v.definition) == ("ecog_status", "ECOG status", "ECOG performance status")
    # what a rater reads in a review sheet is understood; the canonical value is unchanged
    assert (
        s.field("f").normalize("ECOG status") == "ecog_status"
        and s.field("f").normalize("ecog_status") == "ecog_status"
    )
    assert s.to_dict()["fields"][0]["values"][0]["display"] == "ECOG status"
    with pytest.raises(SchemaError, match="display: must be a string"):
        _schema([{"value": "x", "display": 3}, "y"])


def test_builtin_missing_info_values_have_readable_names():
    f = load_schema("mtb").field("missing_info")
    assert [v.label for v in f.values] == [
        "Stage",
        "ECOG status",
        "Prior therapy",
        "PD-L1 expression",
        "Brain metastasis status",
        "Biomarker validation",
        "Variant actionability",
    ]
    assert f.categories == [
        "stage",
        "ecog_status",
        "prior_therapy",
        "pdl1_expression",
        "brain_metastasis",
        "biomarker_validation",
        "variant_actionability",
    ]
    gates = load_schema("medfail").field("safety_gate")
    assert all("_" not in v.label for v in gates.values)


def test_absent_case_fields_read_not_documented_in_place():
    schema = load_schema("mtb")
    text = compose_case_text(
        {"patient_summary": "62M", "stage": "IV", "ecog": None, "pdl1": " ", "brain_mets": False}, schema
    )
    lines = text.splitlines()
    assert lines[:4] == ["Summary: 62M", f"Histology: {NOT_DOCUMENTED}", "Stage: IV", f"ECOG: {NOT_DOCUMENTED}"]
    assert f"PD-L1: {NOT_DOCUMENTED}" in lines and "Brain metastases: no" in lines  # False is documented
    # keys sharing a title are one line; a case with none of the displayed fields keeps its text
    medfail = load_schema("medfail")
    assert compose_case_text({"text": "hi", "specialty": "ED"}, medfail) == "Specialty: ED\nPrompt: hi"
    assert compose_case_text({"text": "only text"}, schema) == "only text"
    assert compose_case_text({}, schema) == ""  # nothing to show: validation reports it


def test_a_case_pushed_before_not_documented_counts_as_unchanged():
    old = "Summary: 62M\nStage: IV"
    new = f"Summary: 62M\nHistology: {NOT_DOCUMENTED}\nStage: IV"
    assert without_not_documented(new) == old
    assert _same_text("case_text", old, new) and _same_text("case_text", new, new)
    assert not _same_text("case_text", old, new.replace("IV", "III"))
    assert not _same_text("output_text", "a", f"a\nX: {NOT_DOCUMENTED}")  # only case texts


def test_config_match_ignores_display_names_but_not_stored_values():
    schema = load_schema("mtb")
    now = to_label_studio_xml(schema)
    before = now.replace('value="ECOG status" alias="ecog_status"', 'value="ecog_status" alias="ecog_status"')
    assert before != now and configs_match(before, now)  # a project made by an older goldboard still matches
    changed = now.replace('alias="ecog_status"', 'alias="ecog"')
    assert not configs_match(changed, now)
