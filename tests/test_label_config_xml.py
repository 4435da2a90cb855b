"""Label Studio XML generated from schemas: structure, escaping, LS validation."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest
from label_studio_sdk.label_interface import LabelInterface

from goldboard.label_configs.schema import SchemaError, builtin_names, load_schema, schema_from_dict
from goldboard.label_configs.xml import DEFINITION_STYLE, TASK_DATA_KEYS, task_data, to_label_studio_xml

BUILTINS = ["mtb", "mtb_unsafe", "medfail", "radsafe"]

NASTY = "Dose < 5 mg & \"high\" 'risk' > $dose ]]> <!-- x -->"


def _nasty_schema() -> dict:
    return {
        "name": "nasty",
        "title": 'Title with <b>bold</b> & "quotes" & $case_text',
        "instructions": "Read <script>alert(1)</script> carefully & rate.",
        "display": {
            "case_fields": [{"name": "text", "title": "Case <text>"}],
            "case_title": "Case & <context>",
            "output_title": 'Answer "quoted"',
        },
        "fields": [
            {
                "name": "verdict",
                "kind": "nominal",
                "title": "Verdict <1>",
                "primary": True,
                "description": "Pick & choose",
                "values": [
                    {"value": NASTY, "description": 'desc with "quotes" & <tags>', "aliases": ["nasty"]},
                    {"value": "A&B", "hint": "hint <i>"},
                    {"value": 'it\'s "fine"'},
                    {"value": "costs $100"},
                ],
            },
            {"name": "level", "kind": "ordinal", "values": ["1", "2", "3"]},
            {
                "name": "why",
                "kind": "multi",
                "values": ["x<y", "y>z"],
                "shown_when": {"field": "verdict", "values": [NASTY, "A&B"]},
            },
            {"name": "flag", "kind": "binary", "title": "Flag & <mark>"},
            {"name": "flag_note", "kind": "text", "shown_when": {"field": "flag", "values": ["no"]}},
            {"name": "rationale", "kind": "text", "required": True, "description": "Why? <explain>"},
        ],
    }


def _controls(root: ET.Element) -> dict[str, ET.Element]:
    return {el.get("name"): el for el in root.iter() if el.tag in ("Choices", "TextArea")}


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_config_is_valid_label_studio_xml(name):
    schema = load_schema(name)
    xml = to_label_studio_xml(schema)
    root = ET.fromstring(xml)  # well-formed
    LabelInterface(xml).validate()  # raises on an invalid config
    assert root.tag == "View"
    assert "HyperText" not in xml
    texts = {el.get("name"): el.get("value") for el in root.iter("Text")}
    assert texts["case"] == "$case_text"
    if schema.display.show_output:
        assert texts["output"] == "$output_text"
    else:
        assert "output" not in texts
    for opt in schema.display.options:
        assert texts[f"option_{opt}"] == f"$option_{opt}"
    # every field has exactly one control with its name, pointing at an object tag
    controls = _controls(root)
    assert set(controls) == set(schema.field_names)
    for f in schema.fields:
        el = controls[f.name]
        assert el.get("toName") in texts
        if f.kind == "text":
            assert el.tag == "TextArea"
            continue
        choices = el.findall("Choice")
        if f.kind == "binary":
            assert el.get("choice") == "multiple" and len(choices) == 1
            assert choices[0].get("alias") == f.categories[1]
        else:
            assert [c.get("alias") for c in choices] == f.categories
            assert el.get("choice") == ("multiple" if f.kind == "multi" else "single-radio")
            if f.kind in ("nominal", "ordinal"):
                assert (el.get("required") == "true") == f.required
            if f.kind == "ordinal":
                assert el.get("showInline") == "true"


@pytest.mark.parametrize("name", BUILTINS)
def test_text_panes_keep_whitespace_and_wrap_long_tokens(name):
    """Label Studio's ``Text`` renders one span per line with the inherited ``white-space: normal``
    (indentation collapses; a long URL overflows into the neighbouring pane -- seen in Chromium with
    label-studio 1.23.2), so every Text must sit directly in a View that sets both properties."""
    root = ET.fromstring(to_label_studio_xml(load_schema(name)))
    parent = {c: p for p in root.iter() for c in p}
    texts = list(root.iter("Text"))
    assert texts
    for t in texts:
        box = parent[t]
        assert box.tag == "View" and list(box) == [t]
        style = box.get("style", "")
        assert "white-space: pre-wrap" in style and "overflow-wrap: anywhere" in style


def test_instructions_and_descriptions_are_body_text_not_titles():
    """Label Studio clamps Header ``size`` to 1-5 (size 6 renders like the 20px field titles);
    explanatory text gets an explicit body-text style instead."""
    schema = schema_from_dict(_nasty_schema())
    root = ET.fromstring(to_label_studio_xml(schema))
    headers = {h.get("value"): h for h in root.iter("Header")}
    assert all(1 <= int(h.get("size", "4")) <= 5 for h in headers.values())
    instructions = next(h for h in headers if h.startswith("Read <script>"))
    assert instructions == "Read <script>alert(1)</script> carefully & rate.\nSchema: nasty v" + schema.version + "."
    for text in (instructions, "Pick & choose", "Why? <explain>"):
        style = headers[text].get("style", "")
        assert "font-weight: 400" in style and "font-size: 14px" in style
    # titles keep Label Studio's heading look
    assert headers["Verdict <1> *"].get("style") is None
    assert headers['Title with <b>bold</b> & "quotes" & \uff04case_text'].get("style") is None


def test_builtins_are_all_covered():
    assert sorted(BUILTINS) == builtin_names()


def test_mtb_hints_and_condition():
    root = ET.fromstring(to_label_studio_xml(load_schema("mtb")))
    controls = _controls(root)
    label = controls["safety_label"]
    assert label.get("required") == "true"
    # definitions are visible under each option (Choice html), never a hover tooltip over the options
    assert all(c.get("hint") is None for c in root.iter("Choice"))
    html = {c.get("alias"): c.get("html") for c in label.findall("Choice")}
    assert html["Partially Supported"] == (
        "<span>Partially Supported</span>"
        f'<span style="{DEFINITION_STYLE}">The therapy is reasonable, but a clinical caveat (e.g. poor ECOG status) '
        "needs oncologist review.</span>"
    )
    # display names beside the stored values: the rater reads "ECOG status", the result stores ecog_status
    mi = {c.get("alias"): (c.get("value"), c.get("html")) for c in controls["missing_info"].findall("Choice")}
    assert list(mi) == [
        "stage",
        "ecog_status",
        "prior_therapy",
        "pdl1_expression",
        "brain_metastasis",
        "biomarker_validation",
        "variant_actionability",
    ]
    assert mi["ecog_status"][0] == "ECOG status" and mi["pdl1_expression"][0] == "PD-L1 expression"
    assert "ECOG performance status" in mi["ecog_status"][1]
    # every missing-information value has a definition line of its own (not its name again)
    for alias, (label, html) in mi.items():
        assert html.count("<span") == 2 and f">{label}</span>" not in html.split("</span>", 1)[1], (alias, html)
    assert "Whether brain metastases are present or excluded (brain imaging)" in mi["brain_metastasis"][1]
    # the schema and its version close the instructions
    assert any(h.get("value", "").endswith("Schema: mtb v1.0.") for h in root.iter("Header"))
    # missing_info sits directly in the conditional View (so LS skips its checks when hidden)
    parent = {c: p for p in root.iter() for c in p}
    view = parent[controls["missing_info"]]
    assert view.tag == "View"
    assert view.get("visibleWhen") == "choice-selected"
    assert view.get("whenTagName") == "safety_label"
    assert view.get("whenChoiceValue") == "Insufficient Information,Partially Supported"


def test_radsafe_option_layout():
    schema = load_schema("radsafe")
    root = ET.fromstring(to_label_studio_xml(schema))
    controls = _controls(root)
    for opt in "ABCDE":
        for flag in ("high_risk", "unsafe", "contradicts"):
            el = controls[f"{flag}_{opt}"]
            assert el.get("toName") == f"option_{opt}"
            assert [c.get("alias") for c in el.findall("Choice")] == ["yes"]
    headers = [h.get("value") for h in root.iter("Header")]
    assert [h for h in headers if h.startswith("Option ")] == [f"Option {o}" for o in "ABCDE"]


def test_escaping_round_trips_every_user_string():
    schema = schema_from_dict(_nasty_schema())
    xml = to_label_studio_xml(schema)
    root = ET.fromstring(xml)  # would raise if anything leaked unescaped
    LabelInterface(xml).validate()
    assert "<script>" not in xml and "<b>" not in xml
    assert "&lt;script&gt;" in xml
    controls = _controls(root)
    verdict = controls["verdict"].findall("Choice")
    # the stored value (alias) is exactly the schema value, whatever it contains
    assert [c.get("alias") for c in verdict] == [NASTY, "A&B", 'it\'s "fine"', "costs $100"]
    # displayed text cannot trigger Label Studio's $variable substitution
    shown = [c.get("value") for c in verdict]
    assert all("$" not in s for s in shown)
    assert shown[3] == "costs \uff04100"
    # definitions reach Label Studio's html attribute escaped: tags in schema text are shown, never run
    assert "&lt;tags&gt;" in verdict[0].get("html") and "<tags>" not in verdict[0].get("html")
    assert "desc with &quot;quotes&quot; &amp; &lt;tags&gt;" in verdict[0].get("html")
    headers = [h.get("value") for h in root.iter("Header")]
    assert 'Title with <b>bold</b> & "quotes" & \uff04case_text' in headers
    # conditional on two values containing XML metacharacters
    parent = {c: p for p in root.iter() for c in p}
    view = parent[controls["why"]]
    assert view.get("whenChoiceValue") == f"{NASTY},A&B"
    # a condition on a binary field's absent value -> visible while the box is unticked
    view = parent[controls["flag_note"]]
    assert view.get("visibleWhen") == "choice-unselected"
    assert view.get("whenTagName") == "flag" and view.get("whenChoiceValue") == "yes"


def test_illegal_xml_characters_in_descriptions_are_replaced():
    d = _nasty_schema()
    d["title"] = "bell\x07 and nul\x00"
    d["fields"][0]["description"] = "vertical tab \x0b here"
    xml = to_label_studio_xml(schema_from_dict(d))
    ET.fromstring(xml)
    LabelInterface(xml).validate()
    assert "\x07" not in xml and "\x00" not in xml


def test_control_character_in_a_value_is_a_schema_error():
    d = _nasty_schema()
    d["fields"][1]["values"] = ["1", "2\x07"]
    with pytest.raises(SchemaError, match="control character"):
        schema_from_dict(d)


def test_shown_when_value_with_comma_is_rejected():
    d = _nasty_schema()
    d["fields"][0]["values"].append("yes, but")
    d["fields"][2]["shown_when"] = {"field": "verdict", "values": ["yes, but"]}
    with pytest.raises(SchemaError, match="comma"):
        schema_from_dict(d)


@pytest.mark.parametrize("bad", ["case", "output", "option_A"])
def test_reserved_field_names_are_rejected(bad):
    d = _nasty_schema()
    d["fields"][1]["name"] = bad
    with pytest.raises(SchemaError, match="reserved"):
        schema_from_dict(d)


def test_task_data_keys_match_the_config():
    for name in BUILTINS:
        schema = load_schema(name)
        xml = to_label_studio_xml(schema)
        refs = {el.get("value")[1:] for el in ET.fromstring(xml).iter("Text")}
        row = {
            "item_id": "o1",
            "case_id": "c1",
            "output_id": "o1",
            "model": "m",
            "case_text": "case",
            "output_text": "out",
            "synthetic": True,
            "option_A": "first",
            "case": {"secret": "gold"},
        }
        data = task_data(row, schema)
        assert refs <= set(data)
        assert set(data) == set(TASK_DATA_KEYS) | {f"option_{o}" for o in schema.display.options}
        assert all(isinstance(v, str) for v in data.values())
        assert "secret" not in str(data)


def test_task_data_blank_cells_and_model_blinding():
    pd = pytest.importorskip("pandas")
    schema = load_schema("radsafe")
    row = pd.Series(
        {
            "item_id": "q1",
            "case_id": "q1",
            "output_id": "",
            "model": "",
            "case_text": "Q",
            "output_text": math.nan,
            "option_A": "a",
            "option_E": None,
        }
    )
    data = task_data(row, schema, include_model=False)
    assert "model" not in data
    assert data["output_text"] == "" and data["option_E"] == "" and data["option_B"] == ""
    assert data["option_A"] == "a"


@pytest.mark.parametrize("name", builtin_names())
def test_case_pane_header_shows_the_case_id(name):
    """Label Studio numbers tasks (#4); the case pane's title carries the case id beside it."""
    schema = load_schema(name)
    root = ET.fromstring(to_label_studio_xml(schema))
    heads = [h.get("value") for h in root.iter("Header")]
    assert f"{schema.display.case_title or 'Case'} $case_id" in heads
    assert "case_id" in TASK_DATA_KEYS
