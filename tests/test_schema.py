"""Built-in schemas, custom schema files, schema errors, and the `goldboard schema` commands."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import invoke_cli
from label_studio_sdk.label_interface import LabelInterface

from goldboard.label_configs.schema import SchemaError, ValueNotInSchema, load_schema, schema_from_dict
from goldboard.label_configs.xml import to_label_studio_xml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "custom_schema.toml"
MTB_LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
GATES_V1 = [
    "missed_urgent_escalation",
    "unsafe_remote_dosing",
    "unsafe_discharge_reassurance",
    "evidence_fabrication_or_overclaim",
    "unsafe_protocol_execution_detail",
    "source_support_gap",
]
GATES_NEW = [
    "unit_conversion_arithmetic_error",
    "mental_health_risk_miss",
    "unsafe_drug_interaction_allergy_contraindication",
    "population_specific_dosing_or_contraindication",
    "infection_control_isolation_miss",
    "patient_privacy_phi_leak",
]


# --------------------------------------------------------------------------- built-ins


def test_mtb():
    s = load_schema("mtb")
    label = s.field("safety_label")
    assert s.primary_field is label and label.kind == "nominal" and label.required
    assert label.categories == MTB_LABELS
    assert label.normalize("Insufficient Info") == "Insufficient Information"
    assert label.normalize("  partially   SUPPORTED ") == "Partially Supported"
    with pytest.raises(ValueNotInSchema, match="'Unsafe' is not a value of safety_label"):
        label.normalize("Unsafe")
    assert s.field("missing_info").kind == "multi"
    assert s.field("missing_info").categories == [
        "stage",
        "ecog_status",
        "prior_therapy",
        "pdl1_expression",
        "brain_metastasis",
        "biomarker_validation",
        "variant_actionability",
    ]
    assert s.rationale_field.name == "rationale" and s.rationale_field.required
    b = {x.name: x for x in s.boundaries}
    assert (b["sufficiency_vs_optimization"].a, b["sufficiency_vs_optimization"].b) == (
        ("Insufficient Information",),
        ("Supported", "Partially Supported"),
    )
    assert (b["support_vs_caveat"].a, b["support_vs_caveat"].b) == (("Supported",), ("Partially Supported",))
    assert (b["caveat_vs_unsupported"].a, b["caveat_vs_unsupported"].b) == (("Partially Supported",), ("Unsupported",))
    assert b["sufficiency_vs_optimization"].matches("Supported", "Insufficient Information")
    assert not b["sufficiency_vs_optimization"].matches("Supported", "Partially Supported")


def test_mtb_unsafe_adds_the_fifth_value():
    s = load_schema("mtb_unsafe")
    assert s.field("safety_label").categories == MTB_LABELS + ["Unsafe"]
    assert s.field("safety_label").normalize("Insufficient Info") == "Insufficient Information"


def test_medfail():
    s = load_schema("medfail")
    sev = s.field("severity")
    assert s.primary_field is sev and sev.kind == "ordinal" and sev.level == "ordinal"
    assert sev.categories == ["1", "2", "3", "4", "5"] and sev.numeric_scores() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert sev.normalize(4.0) == "4" and sev.normalize("4") == "4"
    assert s.field("safety_gate").categories == ["none"] + GATES_V1 + GATES_NEW
    assert s.field("keep_in_benchmark").normalize("yes") == "keep"
    assert s.field("confidence").categories == ["1", "2", "3", "4", "5"]
    t = {x.label: x for x in s.triggers}
    assert t["severity_gap_2plus"].kind == "gap" and t["severity_gap_2plus"].min_gap == 2
    assert t["crosses_safety_critical"].kind == "threshold" and t["crosses_safety_critical"].at == "4"
    assert t["incompatible_gates"].kind == "incompatible" and t["incompatible_gates"].field == "safety_gate"
    assert t["keep_drop_disagreement"].field == "keep_in_benchmark"
    assert t["low_confidence"].kind == "low_confidence" and t["low_confidence"].at_most == "2"


def test_radsafe():
    s = load_schema("radsafe")
    assert s.display.options == ("A", "B", "C", "D", "E") and not s.display.show_output
    flags = [f for f in s.fields if f.kind == "binary"]
    assert sorted(f.name for f in flags) == sorted(
        f"{b}_{o}" for b in ("high_risk", "unsafe", "contradicts") for o in "ABCDE"
    )
    assert all(f.categories == ["no", "yes"] and f.option and f.base for f in flags)
    assert flags[0].normalize(1) == "yes" and flags[0].normalize("False") == "no"
    # a trigger on the base name applies to each option
    assert {t.field for t in s.triggers if t.label == "unsafe_flag_disagreement"} == {f"unsafe_{o}" for o in "ABCDE"}


# --------------------------------------------------------------------------- custom schemas


def test_example_custom_schema_loads_and_makes_a_valid_config():
    s = load_schema(EXAMPLE)
    assert s.name == "triage_advice" and s.primary_field.name == "appropriateness"
    assert s.field("appropriateness").normalize("unclear") == "Cannot judge"
    assert s.field("harm").categories == ["none", "mild", "moderate", "severe"]
    assert s.field("error_types").shown_when.values == ("Appropriate with caveats", "Inappropriate")
    assert {t.kind for t in s.triggers} == {"threshold", "gap", "incompatible", "disagree", "low_confidence", "missing"}
    inc = next(t for t in s.triggers if t.kind == "incompatible")
    assert inc.compatible == (("Appropriate", "Appropriate with caveats"),)
    xml = to_label_studio_xml(s)
    LabelInterface(xml).validate()
    ET.fromstring(xml)


def test_example_in_the_docs_is_the_shipped_file():
    doc = (ROOT / "docs" / "schema-format.md").read_text(encoding="utf-8")
    block = doc.split("## A complete custom schema")[1].split("```toml\n", 1)[1].split("```", 1)[0]
    shipped = "\n".join(line for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if not line.startswith("#"))
    assert block.strip() == shipped.strip()


def test_json_schema_file(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(json.dumps({"name": "j", "fields": [{"name": "ok", "kind": "binary"}]}))
    s = load_schema(p)
    assert s.field("ok").categories == ["no", "yes"] and s.version == "1"


def _base() -> dict:
    return {
        "name": "t",
        "fields": [
            {"name": "verdict", "kind": "nominal", "values": ["a", "b", "c"]},
            {"name": "grade", "kind": "ordinal", "values": ["1", "2", "3"]},
        ],
    }


def _with(path: str, value) -> dict:
    d = _base()
    target = d
    keys = path.split(".")
    for k in keys[:-1]:
        target = target[int(k)] if isinstance(target, list) else target[k]
    last = keys[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return d


@pytest.mark.parametrize(
    "data,message",
    [
        (_with("colour", "red"), "<schema>: unknown key 'colour'"),
        (_with("name", "9lives"), "name: '9lives' must start with a letter"),
        (_with("fields", []), "fields: a schema needs at least one [[fields]] entry"),
        (
            _with("fields.0.kind", "likert"),
            "fields[0] (verdict): kind: 'likert' is not one of nominal, ordinal, binary",
        ),
        (_with("fields.0.requried", True), "fields[0] (verdict): unknown key 'requried'"),
        (_with("fields.1.name", "verdict"), "fields: duplicate field name 'verdict'"),
        (_with("fields.0.values", ["a", "a"]), "fields[0] (verdict): values: duplicate value"),
        (_with("fields.0.values", ["a", {"value": "b", "aliases": ["a"]}]), "'a' names both 'a' and 'b'"),
        (_with("fields.0.values", []), "fields[0] (verdict): values: a nominal field needs a list of values"),
        (
            _with("fields.0", {"name": "flag", "kind": "binary", "values": ["no", "maybe", "yes"]}),
            "a binary field has exactly two values",
        ),
        (_with("fields.0", {"name": "note", "kind": "text", "values": ["x"]}), "a text field has no values"),
        (_with("fields.0.shown_when", {"field": "nope", "values": ["1"]}), "shown_when.field 'nope' is not a field"),
        (
            _with("fields.0.shown_when", {"field": "grade", "values": ["7"]}),
            "shown_when value '7' is not a value of grade",
        ),
        (
            _with("fields.0.primary", True)
            | {
                "fields": [
                    {"name": "a", "kind": "binary", "primary": True},
                    {"name": "b", "kind": "binary", "primary": True},
                ]
            },
            "only one field may be primary",
        ),
        (
            {"name": "t", "fields": [{"name": "note", "kind": "text"}]},
            "at least one nominal, ordinal, binary or multi-select field",
        ),
        (_with("fields.0.for_each_option", True), "for_each_option needs display.options"),
        (_with("display", {"options": ["A", "A"]}), "display.options: duplicate option"),
        (_with("display", {"options": ["A-1"]}), "display.options: 'A-1' must be letters/digits only"),
        (
            _with("boundaries", [{"name": "x", "field": "verdict", "a": ["a"], "b": ["a", "b"]}]),
            "boundaries[0] (x): a and b must not share a value",
        ),
        (
            _with("boundaries", [{"name": "x", "field": "verdict", "a": ["a"], "b": ["z"]}]),
            "boundaries[0] (x): b: 'z' is not a value of verdict",
        ),
        (
            _with("boundaries", [{"name": "x", "field": "nope", "a": ["a"], "b": ["b"]}]),
            "field 'nope' is not a rated field",
        ),
        (_with("triggers", [{"kind": "gap", "field": "verdict", "min_gap": 2}]), "gap needs an ordinal field"),
        (_with("triggers", [{"kind": "gap", "field": "grade", "min_gap": 0}]), "min_gap: give a whole number >= 1"),
        (_with("triggers", [{"kind": "threshold", "field": "grade", "at": "9"}]), "at: '9' is not a value of grade"),
        (_with("triggers", [{"kind": "maybe", "field": "grade"}]), "kind: 'maybe' is not one of gap, threshold"),
        (
            _with("triggers", [{"kind": "incompatible", "field": "verdict", "compatible": [["a"]]}]),
            "compatible: give pairs of values",
        ),
    ],
)
def test_schema_errors_name_the_entry(data, message):
    with pytest.raises(SchemaError) as ei:
        schema_from_dict(data)
    assert message in str(ei.value)
    assert "\n" not in str(ei.value)


def test_schema_file_errors(tmp_path):
    with pytest.raises(SchemaError, match=r"s\.toml: schema file not found"):
        load_schema(tmp_path / "s.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nfields = [\n')
    with pytest.raises(SchemaError, match="bad.toml: invalid TOML"):
        load_schema(bad)
    badj = tmp_path / "bad.json"
    badj.write_text('{\n "name": "x",\n "fields": [,]\n}')
    with pytest.raises(SchemaError, match=r"bad\.json:3: invalid JSON"):
        load_schema(badj)
    with pytest.raises(SchemaError, match="unknown schema 'nosuch'"):
        load_schema("nosuch")


def test_schema_errors_are_goldboard_errors(tmp_path):
    """A bad schema or an unknown value is a GoldboardError (one ``Error:`` line from any command,
    no wrapper in between) and still a ValueError for the readers that catch that."""
    from goldboard.errors import GoldboardError

    for cls in (SchemaError, ValueNotInSchema):
        assert issubclass(cls, GoldboardError) and issubclass(cls, ValueError)
    with pytest.raises(GoldboardError, match="unknown schema 'nosuch'"):
        load_schema("nosuch")
    with pytest.raises(GoldboardError, match="'Unsafe' is not a value of safety_label"):
        load_schema("mtb").field("safety_label").normalize("Unsafe")
    from conftest import invoke_cli

    table = tmp_path / "t.csv"
    table.write_text("item_id,rater,label\n1,a,x\n1,b,y\n", encoding="utf-8")
    for args in (["agree", table, "--schema", "nosuch"], ["schema", "show", "nosuch"]):
        res = invoke_cli(*args)
        assert res.exit_code == 1
        errors = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
        assert len(errors) == 1 and errors[0].startswith("Error: unknown schema 'nosuch'"), res.output


def test_doc_error_example_is_real(tmp_path):
    p = tmp_path / "triage.toml"
    p.write_text(
        EXAMPLE.read_text().replace(
            '{ value = "moderate", description = "Delayed care that could worsen the outcome." }',
            '{ value = "moderate", description = "Delayed care.", aliases = ["mild"] }',
        )
    )
    with pytest.raises(SchemaError) as ei:
        load_schema(p)
    assert str(ei.value) == f"{p}: fields[1] (harm): values: 'mild' names both 'mild' and 'moderate'"


# --------------------------------------------------------------------------- CLI


def test_cli_schema_list():
    res = invoke_cli(*["schema", "list"])
    assert res.exit_code == 0
    names = [line.split()[0] for line in res.output.splitlines()]
    assert names == ["medfail", "mtb", "mtb_unsafe", "radsafe"]


def test_cli_schema_show_text_and_json():
    res = invoke_cli(*["schema", "show", "mtb"])
    assert res.exit_code == 0
    assert res.output.startswith("mtb v1.0: Molecular tumor board therapy safety label")
    assert "Insufficient Information  [aliases: Insufficient Info]" in res.output
    assert (
        "sufficiency_vs_optimization [safety_label, priority 2]: {Insufficient Information} vs "
        "{Supported, Partially Supported}" in res.output
    )
    res = invoke_cli(*["schema", "show", str(EXAMPLE), "--format", "json"])
    assert res.exit_code == 0
    d = json.loads(res.output)
    assert d["name"] == "triage_advice" and [f["name"] for f in d["fields"]][:2] == ["appropriateness", "harm"]


def test_cli_schema_config_stdout_and_file(tmp_path):
    res = invoke_cli(*["schema", "config", "radsafe"])
    assert res.exit_code == 0
    LabelInterface(res.output).validate()
    assert res.output == to_label_studio_xml(load_schema("radsafe"))
    out = tmp_path / "sub" / "mtb.xml"
    res = invoke_cli(*["schema", "config", "mtb", "-o", str(out)])
    assert res.exit_code == 0
    assert out.read_text() == to_label_studio_xml(load_schema("mtb"))
    assert [p.name for p in out.parent.iterdir()] == ["mtb.xml"]  # no temp file left behind


@pytest.mark.parametrize(
    "args,message",
    [
        (["schema", "show", "nosuch"], "Error: unknown schema 'nosuch'"),
        (["schema", "config", "missing.toml"], "Error: missing.toml: schema file not found"),
    ],
)
def test_cli_schema_errors(args, message):
    res = invoke_cli(*args)
    assert res.exit_code == 1
    assert message in res.output and "Traceback" not in res.output


def test_cli_schema_config_bad_file(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('name = "x"\n[[fields]]\nname = "case"\nkind = "binary"\n')
    res = invoke_cli(*["schema", "config", str(p)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "'case' is reserved" in res.output
