"""A live Label Studio accepts generated configs with hostile strings, and stores the exact values.

Uses the shared live-server fixtures of ``tests/conftest.py`` (one server for the module).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goldboard.label_configs.schema import load_schema, schema_from_dict
from goldboard.label_configs.xml import task_data, to_label_studio_xml

pytestmark = pytest.mark.live

NASTY = "Dose < 5 mg & \"high\" 'risk' > $dose"
EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "custom_schema.toml"


def _nasty():
    return schema_from_dict(
        {
            "name": "nasty",
            "title": 'Title <b>bold</b> & "quotes" $case_text',
            "fields": [
                {
                    "name": "verdict",
                    "kind": "nominal",
                    "primary": True,
                    "values": [{"value": NASTY, "description": "<script>alert(1)</script>"}, "A&B", "costs $100"],
                },
                {
                    "name": "why",
                    "kind": "multi",
                    "values": ["x<y", "y>z"],
                    "shown_when": {"field": "verdict", "values": [NASTY]},
                },
                {"name": "flag", "kind": "binary"},
                {"name": "rationale", "kind": "text"},
            ],
        }
    )


def _client(server):
    from label_studio_sdk import LabelStudio

    return LabelStudio(base_url=server.url, api_key=server.credentials.admin.token, timeout=60)


@pytest.mark.parametrize("make", [_nasty, lambda: load_schema(EXAMPLE)], ids=["escaping", "custom_example"])
def test_server_accepts_config_and_keeps_exact_values(live_server, make):
    schema = make()
    xml = to_label_studio_xml(schema)
    ls = _client(live_server)
    project = ls.projects.create(title=f"goldboard {schema.name}", label_config=xml)
    try:
        ls.projects.validate_label_config(project.id, label_config=xml)
        unit = {
            "item_id": "u1",
            "case_id": "c1",
            "output_id": "u1",
            "model": "m",
            "case_text": "Case with <tags> & $dollar",
            "output_text": "<img src=x onerror=alert(1)>",
        }
        primary = schema.primary_field
        value = primary.categories[0]
        result = [{"from_name": primary.name, "to_name": "output", "type": "choices", "value": {"choices": [value]}}]
        ls.projects.import_tasks(
            project.id,
            request=[{"data": task_data(unit, schema), "annotations": [{"result": result, "ground_truth": False}]}],
        )
        (task,) = list(ls.tasks.list(project=project.id, page_size=10))
        assert task.data["output_text"] == "<img src=x onerror=alert(1)>"  # stored as data, shown as plain Text
        (ann,) = ls.annotations.list(task.id)
        assert ann.result[0]["value"]["choices"] == [value]
    finally:
        ls.projects.delete(project.id)
