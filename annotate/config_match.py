"""Does a Label Studio project's label config ask the same questions as the schema's?

Used by pull (a project whose config differs is named in a warning; every result is still
validated against the schema), push and the adjudication projects.
"""

from __future__ import annotations


def _controls(xml_text: str) -> list[tuple]:
    """What a label config *asks* (not how it looks): every named control tag with its
    target, mode and requiredness, and every choice's stored value (alias), in order.
    Presentation (Views, Headers, styles, hints) is left out, so a goldboard upgrade that
    only improves the layout keeps matching existing projects."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(xml_text.strip())
    out = []
    for el in root.iter():
        if el.tag in ("View", "Header", "Style") or "name" not in el.attrib:
            continue
        keep = {
            k: el.attrib.get(k, "")
            for k in (
                "name",
                "toName",
                "value",
                "choice",
                "required",
                "visibleWhen",
                "whenTagName",
                "whenChoiceValue",
                "maxRating",
            )
        }
        # what is stored (the alias, else the value); display names and definitions are presentation
        choices = tuple(c.attrib.get("alias") or c.attrib.get("value", "") for c in el.iter("Choice"))
        out.append((el.tag, tuple(sorted(keep.items())), choices))
    for el in root.iter("View"):  # conditional visibility is part of what the rater is asked
        if "visibleWhen" in el.attrib:
            out.append(
                (
                    "View",
                    el.attrib.get("visibleWhen", ""),
                    el.attrib.get("whenTagName", ""),
                    el.attrib.get("whenChoiceValue", ""),
                )
            )
    return out


def configs_match(server_xml: str, schema_xml: str) -> bool:
    """True when the server's label config asks the same questions as the schema's:
    identical text, or the same controls, targets and choice values (see :func:`_controls`)."""
    if server_xml.strip() == schema_xml.strip():
        return True
    import xml.etree.ElementTree as ET

    try:
        return _controls(server_xml) == _controls(schema_xml)
    except ET.ParseError:
        return False


__all__ = ["configs_match"]
