"""Custom schema files with subtle errors (issue 23, campaign 7: the K group).

Each case is a schema a person could write by mistake that goldboard used to accept silently, read
as something else, or answer with an internal error: values that differ only by letter case, spaces,
Unicode form or how a number is written (``Safe``/``safe``, ``4``/``4.0``), two choices shown with one
text, field names that differ only by case, a priority that is text or below 1, a version written as a
number (``1.10`` read as 1.1), a JSON key given twice, a trigger that can never fire, a one-value
field, and the file encodings (a BOM is read past; UTF-16, YAML and NaN are named).  Every refusal is
one line naming the file, the entry and the values; the valid neighbours of each are still accepted.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from conftest import invoke_cli

from goldboard.label_configs.schema import SchemaError, load_schema, load_schema_file, schema_from_dict
from goldboard.label_configs.xml import to_label_studio_xml

HEAD = 'name = "tri"\nversion = "1"\n'


def _field(values: str, kind: str = "nominal", name: str = "label") -> str:
    return f'[[fields]]\nname = "{name}"\nkind = "{kind}"\nvalues = {values}\n'


def _write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _refused(tmp_path: Path, text: str, *needles: str, name: str = "s.toml") -> str:
    p = _write(tmp_path, text, name)
    with pytest.raises(SchemaError) as ei:
        load_schema_file(p)
    msg = str(ei.value)
    assert "\n" not in msg
    assert msg.startswith(f"{p}:"), msg
    for n in needles:
        assert n in msg, msg
    return msg


def _cli(*args):
    return invoke_cli(*args)


# --------------------------------------------------------------------------- K01 / K02: spelling twins


@pytest.mark.parametrize(
    "values, needles",
    [
        ('["Safe", "safe", "Unsafe"]', ["value 'Safe' and value 'safe'", "letter case"]),
        ('["Safe", "SAFE"]', ["value 'Safe' and value 'SAFE'", "letter case"]),
        ('[4, "4.0", 5]', ["value '4' and value '4.0'", "one number written two ways"]),
        ('["1", "01", "2"]', ["value '1' and value '01'", "one number"]),
        ('["Partially  Supported", "Partially Supported"]', ["differ only in spaces"]),
        ('["Caf\\u00e9", "Cafe\\u0301"]', ["Unicode form"]),
        ('["Safe", { value = "Unsafe", aliases = ["safe"] }]', ["value 'Safe' and alias 'safe' of 'Unsafe'"]),
        ('[{ value = "a", display = "Low" }, { value = "b", display = "low" }]', ["display 'Low' of 'a'", "'b'"]),
    ],
)
def test_values_that_read_alike_are_refused_naming_both(tmp_path, values, needles):
    """Fails on the code before (checked: each schema was accepted and, for Safe/safe, a rating
    'SAFE' was read as 'safe' and 'safe' vs 'Safe' counted as a disagreement)."""
    _refused(tmp_path, HEAD + _field(values), "fields[0] (label): values:", *needles)


def test_case_twins_refused_by_agree_and_flag_in_one_line(tmp_path):
    """The K01 repro: the schema is refused before any rating is read (exit 1, one Error line)."""
    s = _write(tmp_path, HEAD + _field('["Safe", "safe", "Unsafe"]'))
    r = tmp_path / "r.csv"
    r.write_text("item_id,rater,field,value\nC1,a,label,SAFE\nC1,b,label,Safe\nC2,a,label,safe\nC2,b,label,Safe\n")
    for args in (["agree", r, "--schema", s], ["flag", r, "--schema", s, "--format", "csv", "-o", tmp_path / "f.csv"]):
        res = _cli(*args)
        assert res.exit_code == 1, res.output
        lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("Error:"), lines
        assert "'Safe'" in lines[0] and "'safe'" in lines[0] and "label" in lines[0]
    assert not (tmp_path / "f.csv").exists()


def test_spellings_of_one_value_may_differ_in_case(tmp_path):
    """Aliases and a display of the same value that differ only by case stay valid (mtb's
    ``stage``/"Stage", medfail's ``keep``/"Keep"/"yes"/"Yes")."""
    text = HEAD + _field('[{ value = "safe", display = "Safe", aliases = ["SAFE", "Safe "] }, "Unsafe"]')
    sch = load_schema_file(_write(tmp_path, text))
    f = sch.field("label")
    assert f.categories == ["safe", "Unsafe"]
    assert f.normalize("SAFE") == "safe" and f.normalize("unsafe") == "Unsafe"


# --------------------------------------------------------------------------- K03: two choices shown alike


def test_display_equal_to_another_value_is_refused(tmp_path):
    """Fails on the code before (checked: the config had two choices reading 'Unsafe')."""
    text = HEAD + _field('[{ value = "Safe", display = "Unsafe" }, "Unsafe"]')
    _refused(tmp_path, text, "'Safe' and 'Unsafe' would both be shown as 'Unsafe'", "labeling page")
    text = HEAD + _field('[{ value = "a", display = "Unsafe" }, { value = "b", display = "unsafe" }]')
    _refused(tmp_path, text, "display 'Unsafe' of 'a' and display 'unsafe' of 'b'", "read alike")


def test_generated_config_choices_are_distinct_for_every_builtin():
    """The rule the check keeps: no two choices of one control read the same (case-insensitively)."""
    import re

    for name in ("mtb", "mtb_unsafe", "medfail", "radsafe"):
        xml = to_label_studio_xml(load_schema(name))
        for block in re.findall(r"<Choices .*?</Choices>", xml, flags=re.S):
            shown = [v.casefold() for v in re.findall(r'<Choice value="([^"]*)"', block)]
            assert len(shown) == len(set(shown)), (name, shown)


# --------------------------------------------------------------------------- K04: priorities


@pytest.mark.parametrize("prio", ['"high"', "-3", "0", "true", "2.5", '"1"'])
@pytest.mark.parametrize("where", ["boundaries", "triggers", "rules"])
def test_priority_is_a_whole_number_from_1(tmp_path, prio, where):
    """Fails on the code before (checked: "high" on a boundary or trigger was an internal error
    (ValueError), -3 and 0 were accepted and shown under "1 = most serious")."""
    body = HEAD + _field('["Safe", "Unsafe"]') + _field('["a", "b"]', name="other")
    if where == "boundaries":
        body += f'[[boundaries]]\nname = "b1"\nfield = "label"\na = ["Safe"]\nb = ["Unsafe"]\npriority = {prio}\n'
        entry = "boundaries[0] (b1): priority:"
    elif where == "triggers":
        body += f'[[triggers]]\nkind = "disagree"\nfield = "label"\npriority = {prio}\n'
        entry = "triggers[0] (disagree on label): priority:"
    else:
        body += (
            f'[[rules]]\nname = "r1"\nwhen = {{ field = "other", in = ["a"] }}\n'
            f'then = {{ field = "label", in = ["Safe"] }}\npriority = {prio}\n'
        )
        entry = "rules[0] (r1): priority:"
    _refused(tmp_path, body, entry, "whole number >= 1")


def test_priority_1_and_default_accepted(tmp_path):
    body = HEAD + _field('["Safe", "Unsafe"]')
    body += '[[boundaries]]\nname = "b1"\nfield = "label"\na = ["Safe"]\nb = ["Unsafe"]\npriority = 1\n'
    body += '[[triggers]]\nkind = "disagree"\nfield = "label"\n'
    sch = load_schema_file(_write(tmp_path, body))
    assert [b.priority for b in sch.boundaries] == [1] and [t.priority for t in sch.triggers] == [5]


def test_priority_text_is_one_line_not_an_internal_error(tmp_path):
    body = HEAD + _field('["Safe", "Unsafe"]')
    body += '[[boundaries]]\nname = "b1"\nfield = "label"\na = ["Safe"]\nb = ["Unsafe"]\npriority = "high"\n'
    res = _cli("schema", "show", _write(tmp_path, body))
    assert res.exit_code == 1 and "internal error" not in res.stderr
    assert "boundaries[0] (b1): priority" in res.stderr


# --------------------------------------------------------------------------- K05: version


@pytest.mark.parametrize("version", ["1.10", "2.0", "true", "[1]"])
def test_version_written_as_a_number_is_refused(tmp_path, version):
    """Fails on the code before (checked: 1.10 was recorded as "1.1", study init said "v1.1")."""
    text = f'name = "tri"\nversion = {version}\n' + _field('["Safe", "Unsafe"]')
    _refused(tmp_path, text, "version:", 'version = "1.10"')


def test_version_as_a_whole_number_reads_as_typed(tmp_path):
    """``version = 2`` is what was typed (no decimal to lose): kept as "2", so older custom schemas still load."""
    sch = load_schema_file(_write(tmp_path, 'name = "tri"\nversion = 2\n' + _field('["Safe", "Unsafe"]')))
    assert sch.version == "2"


def test_version_as_text_is_kept_exactly(tmp_path):
    sch = load_schema_file(_write(tmp_path, 'name = "tri"\nversion = "1.10"\n' + _field('["Safe", "Unsafe"]')))
    assert sch.version == "1.10"
    sch = load_schema_file(_write(tmp_path, 'name = "tri"\n' + _field('["Safe", "Unsafe"]')))
    assert sch.version == "1"
    data = {"name": "tri", "version": 1.1, "fields": [{"name": "x", "kind": "binary"}]}
    with pytest.raises(SchemaError, match="version: written as a number"):
        schema_from_dict(data)


def test_study_init_refuses_a_number_version(tmp_path):
    s = _write(tmp_path, 'name = "tri"\nversion = 1.10\n' + _field('["Safe", "Unsafe"]'))
    res = _cli("study", "init", tmp_path / "st", "--schema", s, "--raters", "onc_a,onc_b")
    assert res.exit_code != 0 and "version" in res.stderr
    assert not (tmp_path / "st" / "study.toml").exists()


# --------------------------------------------------------------------------- K06: JSON duplicate keys, NaN


def test_json_key_given_twice_is_refused_naming_the_key(tmp_path):
    """Fails on the code before (checked: the last "kind" silently won, the field became ordinal)."""
    text = '{"name": "tri", "fields": [{"name": "label", "kind": "nominal", "values": ["Safe", "Unsafe"], "kind": "ordinal"}]}'
    _refused(tmp_path, text, "invalid JSON", "key 'kind' appears twice in one object", name="s.json")
    text = '{"name": "tri", "name": "tri2", "fields": [{"name": "x", "kind": "binary"}]}'
    _refused(tmp_path, text, "key 'name' appears twice in one object", name="s.json")


def test_toml_key_given_twice_is_refused(tmp_path):
    """TOML forbids it already (tomllib): kept so by this test."""
    text = 'name = "tri"\nname = "x"\n' + _field('["Safe", "Unsafe"]')
    _refused(tmp_path, text, "invalid TOML")


def test_json_nan_is_named_not_called_empty(tmp_path):
    """Fails on the code before (checked: "values[1]: value: must not be empty")."""
    text = '{"name": "tri", "fields": [{"name": "sev", "kind": "ordinal", "values": [1, NaN, 3]}]}'
    _refused(tmp_path, text, "NaN is not a JSON value", name="s.json")
    _refused(tmp_path, text.replace("NaN", "Infinity"), "Infinity", name="s.json")


def test_toml_nan_value_and_empty_alias_are_refused(tmp_path):
    """A TOML ``nan`` value, and an alias "" (which made every blank rating that value)."""
    _refused(tmp_path, HEAD + _field("[1, nan, 3]", kind="ordinal"), "values[1]: value: nan", "text in quotes")
    text = HEAD + _field('[{ value = "Safe", aliases = [""] }, "Unsafe"]')
    msg = _refused(tmp_path, text, "values[0]: aliases[0]: must not be empty")
    assert "blank rating" in msg


# --------------------------------------------------------------------------- K07: field names


def test_field_names_differing_only_by_case_are_refused(tmp_path):
    """Fails on the code before (checked: 'label' and 'Label' were both kept, both titled 'Label')."""
    text = HEAD + _field('["Safe", "Unsafe"]') + _field('["Safe", "Unsafe"]', name="Label")
    _refused(tmp_path, text, "fields: 'label' and 'Label' differ only in letter case")


# --------------------------------------------------------------------------- K08: triggers that never fire, one value


def test_gap_larger_than_the_scale_is_refused(tmp_path):
    """Fails on the code before (checked: min_gap 7 on a 3-value scale was accepted)."""
    base = HEAD + _field('["1", "2", "3"]', kind="ordinal", name="sev")
    trig = '[[triggers]]\nkind = "gap"\nfield = "sev"\nmin_gap = {}\n'
    _refused(tmp_path, base + trig.format(7), "triggers[0] (gap on sev): min_gap: 7 can never fire", "at most 2")
    _refused(tmp_path, base + trig.format(3), "min_gap: 3 can never fire")
    _refused(tmp_path, base + trig.format("true"), "min_gap: give a whole number")
    assert load_schema_file(_write(tmp_path, base + trig.format(2))).triggers[0].min_gap == 2


def test_threshold_at_the_lowest_and_low_confidence_at_the_highest_are_refused(tmp_path):
    base = HEAD + _field('["1", "2", "3"]', kind="ordinal", name="sev")
    _refused(
        tmp_path, base + '[[triggers]]\nkind = "threshold"\nfield = "sev"\nat = "1"\n', "lowest value", "never fire"
    )
    _refused(
        tmp_path,
        base + '[[triggers]]\nkind = "low_confidence"\nfield = "sev"\nat_most = "3"\n',
        "highest value",
        "every item",
    )
    ok = base + '[[triggers]]\nkind = "threshold"\nfield = "sev"\nat = "2"\n'
    ok += '[[triggers]]\nkind = "low_confidence"\nfield = "sev"\nat_most = "2"\n'
    assert len(load_schema_file(_write(tmp_path, ok)).triggers) == 2


@pytest.mark.parametrize("kind", ["ordinal", "nominal"])
def test_rated_field_with_one_value_is_refused(tmp_path, kind):
    """Fails on the code before (checked: an ordinal field with the one value "1" was accepted)."""
    _refused(tmp_path, HEAD + _field('["1"]', kind=kind, name="sev"), "needs at least two values", "cannot vary")


def test_multi_field_with_one_value_stays_valid(tmp_path):
    text = HEAD + _field('["Safe", "Unsafe"]') + _field('["other"]', kind="multi", name="extra")
    assert load_schema_file(_write(tmp_path, text)).field("extra").categories == ["other"]


@pytest.mark.parametrize("key", ["required", "primary", "for_each_option"])
def test_true_false_keys_given_as_text_are_refused(tmp_path, key):
    """``required = "false"`` made the field required (the text is truthy): refused, not inverted."""
    text = HEAD + _field('["Safe", "Unsafe"]') + f'{key} = "false"\n'
    _refused(tmp_path, text, f"{key}: give true or false (without quotes), not 'false'")


def test_invisible_character_in_a_value_is_refused(tmp_path):
    _refused(tmp_path, HEAD + _field('["Safe\\u200b", "Unsafe"]'), "U+200B", "invisible")
    _refused(tmp_path, HEAD + _field('[{ value = "a", display = "Sa\\u200dfe" }, "b"]'), "display", "U+200D")


# --------------------------------------------------------------------------- K09: encodings, YAML


def test_toml_and_json_with_a_bom_are_read_as_meant(tmp_path):
    """Fails on the code before (checked: the TOML said "Invalid statement (at line 1, column 1)",
    the JSON "Unexpected UTF-8 BOM")."""
    body = HEAD + _field('["Safe", "Unsafe"]')
    plain = load_schema_file(_write(tmp_path, body, "plain.toml"))
    p = tmp_path / "bom.toml"
    p.write_bytes(codecs.BOM_UTF8 + body.encode())
    assert load_schema_file(p).to_dict() == plain.to_dict()
    j = tmp_path / "bom.json"
    j.write_bytes(
        codecs.BOM_UTF8
        + json.dumps(
            {
                "name": "tri",
                "version": "1",
                "fields": [{"name": "label", "kind": "nominal", "values": ["Safe", "Unsafe"]}],
            }
        ).encode()
    )
    assert load_schema_file(j).to_dict() == plain.to_dict()


def test_utf16_and_other_encodings_are_named(tmp_path):
    body = HEAD + _field('["Safe", "Unsafe"]')
    p = tmp_path / "u16.toml"
    p.write_bytes(body.encode("utf-16"))
    with pytest.raises(SchemaError, match=r"u16.toml: the file is UTF-16 text: save it as UTF-8$"):
        load_schema_file(p)
    p = tmp_path / "latin1.toml"
    p.write_bytes((HEAD + _field('["Sécurité", "Unsafe"]')).encode("latin-1"))
    with pytest.raises(SchemaError, match=r"latin1.toml: not UTF-8 text \(byte \d+\): save it as UTF-8$"):
        load_schema_file(p)


def test_yaml_schema_is_named_not_called_invalid_toml(tmp_path):
    """Fails on the code before (checked: "invalid TOML: Expected '=' ...")."""
    for name in ("s.yaml", "s.yml"):
        msg = _refused(tmp_path, "name: tri\nfields:\n  - name: label\n", "YAML is not read", name=name)
        assert ".toml or .json" in msg
    res = _cli("schema", "show", tmp_path / "s.yaml")
    assert res.exit_code == 1 and "YAML is not read" in res.stderr


def test_a_misspelt_field_name_gets_a_did_you_mean(tmp_path):
    """k7's K_shown_missing: "shown_when.field 'labl' is not a field" named no candidate."""
    base = HEAD + _field('["Safe", "Unsafe"]') + '[[fields]]\nname = "why"\nkind = "text"\n'
    _refused(tmp_path, base + 'shown_when = { field = "labl", values = ["Unsafe"] }\n', "(did you mean 'label'?)")
    bnd = '[[boundaries]]\nname = "b1"\nfield = "Label"\na = ["Safe"]\nb = ["Unsafe"]\n'
    _refused(tmp_path, base + bnd, "field 'Label' is not a rated field", "(did you mean 'label'?)")
    msg = _refused(tmp_path, base + bnd.replace('"Label"', '"why"'), "field 'why' is not a rated field")
    assert "did you mean" not in msg


def test_compatibility_forms_read_alike(tmp_path):
    """Full-width letters (a CJK keyboard), and the full-width ``＄`` the labeling page shows for
    ``$`` (label_configs/xml.py), would make two choices that read the same."""
    _refused(
        tmp_path, HEAD + _field('["Safe", "\\uff33\\uff41\\uff46\\uff45"]'), "value 'Safe' and value", "read alike"
    )
    _refused(tmp_path, HEAD + _field('["$a", "\\uff04a"]'), "value '$a' and value", "read alike")


def test_a_field_that_waits_on_itself_is_refused(tmp_path):
    """A field shown only when it has a value itself (or through another field shown only when
    it has one) is never shown: accepted on the code before (checked)."""
    a = '[[fields]]\nname = "a"\nkind = "nominal"\nvalues = ["x", "y"]\nshown_when = { field = "%s", values = ["%s"] }\n'
    b = '[[fields]]\nname = "b"\nkind = "nominal"\nvalues = ["p", "q"]\nshown_when = { field = "a", values = ["x"] }\n'
    _refused(tmp_path, HEAD + a % ("a", "x"), "field a: shown_when: the field waits on itself (a -> a")
    _refused(tmp_path, HEAD + a % ("b", "p") + b, "field a: shown_when: the field waits on itself (a -> b -> a")
    c = '[[fields]]\nname = "c"\nkind = "nominal"\nvalues = ["p", "q"]\n'
    sch = load_schema_file(
        _write(
            tmp_path,
            HEAD + a % ("b", "p") + b.replace('field = "a", values = ["x"]', 'field = "c", values = ["p"]') + c,
        )
    )
    assert [f.shown_when.field for f in sch.fields if f.shown_when] == ["b", "c"]  # a chain, no loop


@pytest.mark.parametrize("values", ['["1", "3", "2"]', '["5", "4", "3", "2", "1"]', '["0.5", "2", "1.5"]'])
def test_numeric_ordinal_values_are_listed_lowest_first(tmp_path, values):
    """Accepted on the code before (checked): the ordinal statistics and triggers ranked 3 below 2
    while the interval ones used the numbers."""
    _refused(tmp_path, HEAD + _field(values, kind="ordinal", name="sev"), "lowest first", "ascending")
    ok = load_schema_file(_write(tmp_path, HEAD + _field('["0", "1.5", "2", "10"]', kind="ordinal", name="sev")))
    assert ok.field("sev").numeric_scores() == [0.0, 1.5, 2.0, 10.0]
