"""Label Studio labeling configs generated from a :class:`~goldboard.label_configs.schema.Schema`.

The config is built with :mod:`xml.etree.ElementTree`, so every user-supplied
string (titles, values, descriptions, hints) is XML-escaped by the serializer;
characters XML 1.0 cannot carry are replaced before serialization.

Layout (what a rater sees)::

    Header  schema title (+ instructions as body text)
    View (side by side)
      Header "Case $case_id" Text name="case"   value="$case_text"   (the case id beside LS's task number)
      Header "Model output"  Text name="output" value="$output_text"   (unless display.show_output = false,
                                                                       or the round is case-level)
    per option X (per-option schemas such as radsafe):
      Header "Option X"      Text name="option_X" value="$option_X"   + that option's fields
    every Text sits in its own View with TEXT_STYLE (whitespace kept, long tokens wrapped)
    per field (schema order):
      nominal / ordinal  -> Choices choice="single-radio" (ordinal: showInline), required when the field is
      multi              -> Choices choice="multiple"
      binary             -> one checkbox: Choices choice="multiple" with one Choice whose alias is the
                            "present" value (e.g. "yes"); an unticked box is read back as the absent value
      text               -> TextArea
      shown_when         -> the field sits in a View with visibleWhen="choice-selected"
                            whenTagName=<field> whenChoiceValue=<v1,v2>

Model outputs and cases are untrusted: they are shown only through plain ``Text``
tags (never ``HyperText``), and they reach Label Studio as task data
(:func:`task_data`), never inside the XML.

Label Studio facts relied on (label-studio 1.23 front end):

* ``whenChoiceValue`` is split on commas and matched against a Choice's value or
  alias (``mixins/Visibility.js``, ``mixins/SelectedChoiceMixin.js``); schema
  loading therefore rejects shown_when values that contain a comma.
* A required control inside a hidden ``View`` is not enforced when the View is
  the control's direct parent (``mixins/Required.js``), so conditional fields
  are placed directly in their View.
* Attribute values of ``Choice``/``Header`` are passed through ``parseValue``,
  which substitutes ``$name`` with task data (``utils/data.js``).  Displayed
  strings therefore have a ``$`` that precedes a name character replaced by the
  full-width dollar sign U+FF04; the exact schema value is kept in the Choice's
  ``alias``, which is what Label Studio stores in the annotation result.
* ``Text`` renders one ``<span>`` per line of the task data, separated by
  ``<br>``, with the inherited ``white-space: normal``: newlines survive, but
  leading indentation and runs of spaces collapse, and an unbroken token (a
  URL, a sequence) overflows its pane and is drawn over the neighbouring pane.
  Each ``Text`` is therefore wrapped in a ``View`` styled with :data:`TEXT_STYLE`.
* ``Header`` clamps ``size`` to 1-5 (``size="6"`` looks exactly like ``"5"``,
  a 20px semibold title), and a ``style`` attribute replaces its default
  margin.  Instructions and field descriptions are therefore Headers with
  :data:`NOTE_STYLE` (body-size, normal weight), so they do not read as titles.

Checked by rendering every built-in schema in Label Studio 1.23.2 in headless
Chromium (conditional ``missing_info`` shown only for its two trigger values and
left out of the submitted result when hidden; ``<b>``/``<script>`` in task data
shown literally).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from goldboard.label_configs.schema import Field, Schema
from goldboard.text import cell_text, ls_text, xml_text

CASE_TAG = "case"
OUTPUT_TAG = "output"
OPTION_TAG_PREFIX = "option_"


#: task data keys every generated config may reference (plus ``option_<X>`` per option)
TASK_DATA_KEYS = ("case_text", "output_text", "case_id", "output_id", "item_id", "model")

#: style of the View around every ``Text``: keep indentation and runs of spaces of
#: cases and model outputs, and break a long unbroken token inside its own pane
TEXT_STYLE = "white-space: pre-wrap; overflow-wrap: anywhere"
#: style of secondary Headers (instructions, field descriptions): body text, not a title
NOTE_STYLE = "margin: 0 0 0.75em 0; font-size: 14px; font-weight: 400; line-height: 1.45; white-space: pre-wrap"


def option_tag(option: str) -> str:
    """Name of the Text tag (and task-data key) showing answer option ``option``."""
    return f"{OPTION_TAG_PREFIX}{option}"


_clean = ls_text  # a displayed string: XML-legal, with no ``$name`` Label Studio would substitute
_raw = xml_text  # a stored string (alias): XML-legal only; schema loading already rejects control characters


def _sub(parent: ET.Element, tag: str, **attrs: str) -> ET.Element:
    return ET.SubElement(parent, tag, {k: v for k, v in attrs.items() if v is not None})


def _header(parent: ET.Element, text: str, size: int | None = None) -> None:
    if not text:
        return
    attrs = {"value": _clean(text)}
    if size is not None:
        attrs["size"] = str(size)
    _sub(parent, "Header", **attrs)


def _note(parent: ET.Element, text: str) -> None:
    """Explanatory text (instructions, a field's description) shown as body text."""
    if text:
        _sub(parent, "Header", value=_clean(text), size="5", style=NOTE_STYLE)


def _text(parent: ET.Element, name: str, key: str) -> None:
    """A plain ``Text`` tag ``name`` showing task-data ``key`` (whitespace kept, long tokens wrapped)."""
    box = _sub(parent, "View", style=TEXT_STYLE)
    _sub(box, "Text", name=name, value=f"${key}")


def _target(schema: Schema, f: Field, show_output: bool) -> str:
    if f.option is not None:
        return option_tag(f.option)
    return OUTPUT_TAG if show_output else CASE_TAG


def _visibility(schema: Schema, f: Field) -> dict[str, str] | None:
    """``visibleWhen`` attributes for a conditional field, or None (always visible)."""
    sw = f.shown_when
    if sw is None:
        return None
    ctl = schema.field(sw.field)
    values = list(dict.fromkeys(sw.values))
    if ctl.kind == "binary":
        absent, present = ctl.categories
        if set(values) >= {absent, present}:
            return None
        state = "choice-selected" if present in values else "choice-unselected"
        return {"visibleWhen": state, "whenTagName": ctl.name, "whenChoiceValue": _raw(present)}
    return {
        "visibleWhen": "choice-selected",
        "whenTagName": ctl.name,
        "whenChoiceValue": ",".join(_raw(v) for v in values),
    }


#: style of a value's definition under its name (small, grey, on its own line)
DEFINITION_STYLE = "display: block; font-size: 12px; line-height: 1.35; color: #555; font-weight: 400"


def choice_html(label: str, definition: str = "") -> str:
    """The ``html`` of a Choice: the value's display name with its short definition under it.
    Both are schema text, HTML-escaped here (Label Studio renders ``html`` as markup; the
    stored result is still the Choice's ``alias``)."""
    import html as _html

    out = f"<span>{_html.escape(_clean(label))}</span>"
    if definition:
        out += f'<span style="{DEFINITION_STYLE}">{_html.escape(_clean(definition))}</span>'
    return out


def _choice(parent: ET.Element, label: str, stored: str, definition: str = "") -> None:
    """One Choice: shown as ``label`` (+ ``definition`` under it), stored as ``stored``."""
    if " ".join(definition.split()).casefold() == " ".join(label.split()).casefold():
        definition = ""  # "Brain metastasis status" needs no definition saying the same
    _sub(parent, "Choice", value=_clean(label), alias=_raw(stored), html=choice_html(label, definition))


def _field_elements(parent: ET.Element, schema: Schema, f: Field, show_output: bool) -> None:
    vis = _visibility(schema, f)
    box = _sub(parent, "View", **vis) if vis else parent
    to_name = _target(schema, f, show_output)
    if f.kind == "binary":
        absent, present = f.values
        label = f.title or f.name
        ch = _sub(box, "Choices", name=f.name, toName=to_name, choice="multiple", showInline="true")
        _choice(ch, label, present.value, f.description or present.definition)
        return
    title = f.title or f.name
    if f.required and f.kind != "binary":
        title = f"{title} *"
    _header(box, title, size=5)
    _note(box, f.description)
    if f.kind == "text":
        _sub(
            box,
            "TextArea",
            name=f.name,
            toName=to_name,
            rows="3",
            maxSubmissions="1",
            editable="true",
            required="true" if f.required else None,
            requiredMessage=_clean(f"{f.title or f.name} is required") if f.required else None,
            placeholder=_clean(f.description) if f.description else None,
        )
        return
    attrs: dict[str, str | None] = {"name": f.name, "toName": to_name}
    if f.kind == "multi":
        attrs["choice"] = "multiple"
    else:
        attrs["choice"] = "single-radio"
    if f.kind == "ordinal":
        attrs["showInline"] = "true"
    if f.required:
        attrs["required"] = "true"
        attrs["requiredMessage"] = _clean(f"Choose a value for {f.title or f.name}")
    ch = _sub(box, "Choices", **attrs)
    for v in f.values:
        _choice(ch, v.label, v.value, v.definition)


def instructions_text(schema: Schema) -> str:
    """The instructions shown at the top of the page, ending with the schema and its version
    (so a rater, and a screenshot, always say which codebook was in force)."""
    tail = f"Schema: {schema.name} v{schema.version}."
    return f"{schema.instructions.strip()}\n{tail}" if schema.instructions.strip() else tail


def build_config(schema: Schema, *, show_output: bool | None = None) -> ET.Element:
    """The labeling config as an ElementTree element (see :func:`to_label_studio_xml`)."""
    show_output = schema.display.show_output if show_output is None else (show_output and schema.display.show_output)
    root = ET.Element("View")
    _header(root, schema.title or schema.name, size=3)
    _note(root, instructions_text(schema))

    d = schema.display
    panes = _sub(root, "View", style="display: flex; gap: 1em; align-items: flex-start")
    case_pane = _sub(panes, "View", style="flex: 1 1 50%; min-width: 0")
    # the case id beside Label Studio's task number (#4): "$case_id" is task data Label Studio fills in
    _sub(case_pane, "Header", value=f"{_clean(d.case_title or 'Case')} $case_id", size="4")
    _text(case_pane, CASE_TAG, "case_text")
    if show_output:
        out_pane = _sub(panes, "View", style="flex: 1 1 50%; min-width: 0")
        _header(out_pane, d.output_title or "Model output", size=4)
        _text(out_pane, OUTPUT_TAG, "output_text")

    for opt in d.options:
        opt_fields = [f for f in schema.fields if f.option == opt]
        box = _sub(root, "View", style="border-top: 1px solid #ccc; margin-top: 0.5em; padding-top: 0.25em")
        _header(box, f"Option {opt}", size=4)
        _text(box, option_tag(opt), option_tag(opt))
        flags = _sub(box, "View", style="display: flex; flex-wrap: wrap; gap: 1.5em")
        for f in opt_fields:
            _field_elements(flags if f.kind == "binary" and f.shown_when is None else box, schema, f, show_output)

    rest = [f for f in schema.fields if f.option is None]
    if rest:
        fields_view = _sub(root, "View", style="margin-top: 1em")
        for f in rest:
            _field_elements(fields_view, schema, f, show_output)
    return root


def to_label_studio_xml(schema: Schema, *, show_output: bool | None = None) -> str:
    """The Label Studio labeling config (XML text) for ``schema``.

    ``show_output=False`` is the config of a case-level round (cases pushed without model
    outputs): no model-output pane, and every field is attached to the case.  Default:
    the schema's ``display.show_output``.

    Every config references the task data keys of :func:`task_data`.  The text
    is well-formed XML and passes
    ``label_studio_sdk.label_interface.LabelInterface(xml).validate()``.
    """
    root = build_config(schema, show_output=show_output)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


_cell = cell_text


def task_data(unit_row: Mapping[str, Any], schema: Schema, include_model: bool = True) -> dict[str, str]:
    """The Label Studio task ``data`` for one annotation unit.

    ``unit_row`` is a row of the unit table (:func:`goldboard.cases.load_units`;
    a dict or a pandas Series).  Returns string values for ``case_text``,
    ``output_text``, ``case_id``, ``output_id``, ``item_id``, ``model`` and one
    ``option_<X>`` per schema option -- exactly the keys the config of
    :func:`to_label_studio_xml` may reference, and nothing else (reference labels
    and raw case fields never reach Label Studio).  A missing option is ``""``.

    Label Studio shows task data columns in its Data Manager; pass
    ``include_model=False`` to keep the model name out of the raters' sight.
    """
    get = unit_row.get if hasattr(unit_row, "get") else (lambda k, d=None: unit_row[k])  # noqa: E731
    data = {k: _cell(get(k, "")) for k in TASK_DATA_KEYS}
    if not include_model:
        data.pop("model")
    for opt in schema.display.options:
        key = option_tag(opt)
        data[key] = _cell(get(key, ""))
    return data


__all__ = ["to_label_studio_xml", "build_config", "task_data", "option_tag", "TASK_DATA_KEYS", "CASE_TAG", "OUTPUT_TAG"]
