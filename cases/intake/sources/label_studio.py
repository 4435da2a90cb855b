"""Label Studio tasks (a server's export, or a hand-downloaded ``JSON`` export) -> intake records.

Pure: the tasks are already read (the server export by :mod:`goldboard.annotate.pull`, an export
file by :func:`goldboard.annotate.pull.read_export_file`).  Each task is one
:class:`~goldboard.cases.intake.core.Shown` (its ``data.item_id``, ``case_id``, ``output_id``,
``model``), each annotation one :class:`~goldboard.cases.intake.core.Annotation` whose entries are
its ``result`` items (``from_name`` -> ``value.choices`` / ``value.rating`` / ``value.text``).
Format: https://labelstud.io/guide/export#Label-Studio-JSON-format-of-annotated-tasks
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from goldboard.cases.intake.core import Annotation, Answer, Shown, choices_answer, is_choice, short
from goldboard.label_configs.schema import Schema


class PackedResult(bytes):
    """An annotation's ``result`` kept as its UTF-8 JSON (a few hundred bytes instead of a few KB
    of dicts) between the export and the intake, which unpacks it where it reads it."""


def pack(result: Any) -> Any:
    return PackedResult(json.dumps(result, ensure_ascii=False).encode("utf-8")) if isinstance(result, list) else result


def unpack(result: Any) -> Any:
    return json.loads(result) if isinstance(result, PackedResult) else result


def user_id(completed_by: Any) -> int | None:
    """The user id of an annotation's ``completed_by`` (an id, or an object with ``id``)."""
    if isinstance(completed_by, dict):
        completed_by = completed_by.get("id")
    try:
        return int(completed_by) if completed_by is not None else None
    except (TypeError, ValueError):
        return None


def entries(result: Any, schema: Schema) -> tuple[list[tuple[str | None, Answer]], str]:
    """``(entries, unreadable)`` of one annotation ``result`` (a list of Label Studio result items)."""
    if not isinstance(result, list):
        return [], f"result is not a list ({type(result).__name__})"
    if not result:
        return [], "empty result"
    kinds = {f.name: f.kind for f in schema.fields}
    out: list[tuple[str | None, Answer]] = []
    for i, item in enumerate(result):
        if not isinstance(item, dict):
            out.append((None, Answer(error=f"result[{i}] is not an object")))
            continue
        name = item.get("from_name")
        if not isinstance(name, str):
            out.append((None, Answer(error=f"unknown field {short(name)!r}")))
        elif name not in kinds:
            out.append((name, Answer()))
        else:
            out.append((name, _text_of(item) if kinds[name] == "text" else _choices_of(item)))
    return out, ""


def _choices_of(item: dict) -> Answer:
    value = item.get("value")
    if not isinstance(value, dict):
        return Answer(error="no value")
    if "choices" in value:
        return choices_answer(value["choices"])
    if "rating" in value:
        if not is_choice(value["rating"]):
            return Answer(error=f"malformed rating {short(value['rating'])!r}")
        return Answer(choices=(value["rating"],))
    if "text" in value:
        return Answer(error="a text answer for a choice field")
    return Answer(error=f"unsupported value {short(value)!r}")


def _text_of(item: dict) -> Answer:
    value = item.get("value")
    if not isinstance(value, dict) or "text" not in value:
        return Answer(error="no text")
    t = value["text"]
    if isinstance(t, str):
        t = [t]
    if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
        return Answer(error=f"malformed text {short(t)!r}")
    return Answer(text="\n".join(t))


def annotation(ann: dict, schema: Schema) -> Annotation:
    """One exported annotation as an intake record (its ``result`` read unless it was skipped)."""
    result = ann.get("result")
    cancelled = bool(ann.get("was_cancelled"))
    found, unreadable = ([], "") if cancelled else entries(unpack(result), schema)
    return Annotation(
        entries=found,
        unreadable=unreadable,
        user=user_id(ann.get("completed_by")),
        cancelled=cancelled,
        at=ann.get("updated_at") or ann.get("created_at"),
        lead_time=ann.get("lead_time"),
        annotation_id=ann.get("id"),
        raw=result if isinstance(result, PackedResult) else unpack(result),
    )


def shown(tasks: list[dict], schema: Schema, project_id: Any = None, rater: str | None = None) -> Iterator[Shown]:
    """Every task of one project (or export) as :class:`Shown`; ``rater``: whose blinded project it is
    (``None``: a shared project, attributed by ``completed_by``)."""
    for task in tasks:
        data = task.get("data") or {}
        pid = task.get("project", project_id)
        yield Shown(
            item_id=str(data.get("item_id", "") or ""),
            info={k: str(data.get(k, "") or "") for k in ("case_id", "output_id", "model")},
            rater=rater,
            annotations=[annotation(a, schema) for a in task.get("annotations") or []],
            group=pid,
            task_id=task.get("id"),
            project_id=pid,
        )


__all__ = ["entries", "annotation", "shown", "user_id", "pack", "unpack", "PackedResult"]
