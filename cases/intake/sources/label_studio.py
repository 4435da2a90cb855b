"""Label Studio tasks (a server's export, or a hand-downloaded ``JSON`` export) -> intake records.

Pure: the tasks are already read (the server export by :mod:`goldboard.annotate.pull`, an export
file by :func:`goldboard.annotate.pull.read_export_file`).  Each task is one
:class:`~goldboard.cases.intake.core.Shown` (its ``data.item_id``, ``case_id``, ``output_id``,
``model``), each annotation one :class:`~goldboard.cases.intake.core.Annotation` whose entries are
its ``result`` items (``from_name`` -> ``value.choices`` / ``value.rating`` / ``value.text``).
Format: https://labelstud.io/guide/export#Label-Studio-JSON-format-of-annotated-tasks
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

from goldboard.cases.intake.core import Annotation, Answer, Shown, choices_answer, is_choice, short
from goldboard.cases.intake.files import check_item_ids, nested_value, not_an_id
from goldboard.errors import GoldboardError
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
        elif name not in kinds and _region(item):
            continue  # a span/region control beside the classification: no rating (counted by ignored())
        elif name not in kinds:
            out.append((name, Answer()))
        else:
            out.append((name, _text_of(item) if kinds[name] == "text" else _choices_of(item)))
    return out, ""


#: Label Studio result types that mark a region (a span of text, a box, a polygon...) or a relation
#: between regions, never an answer to a question
REGION_TYPES = frozenset(
    "labels hypertextlabels paragraphlabels rectanglelabels polygonlabels keypointlabels brushlabels "
    "ellipselabels timeserieslabels videorectangle rectangle polygon keypoint ellipse brush relation".split()
)


def _region(item: dict) -> bool:
    """Whether a result item marks a region or relation (its ``type``, or a value with offsets or
    coordinates) rather than answering a question."""
    value = item.get("value") if isinstance(item.get("value"), dict) else {}
    return str(item.get("type", "")).lower() in REGION_TYPES or any(k in value for k in ("start", "x", "points"))


def ignored(result: Any, schema: Schema) -> tuple[str, ...]:
    """The controls of a ``result`` that :func:`entries` passes over: region or span controls the
    schema has no field for (a NER ``Labels`` beside the classification), one name per result item."""
    if not isinstance(result, list):
        return ()
    names = set(schema.field_names)
    return tuple(
        str(item.get("from_name"))
        for item in result
        if isinstance(item, dict)
        and isinstance(item.get("from_name"), str)  # any other from_name is an error of entries()
        and item["from_name"] not in names
        and _region(item)
    )


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


def rejected_in_review(ann: dict) -> str:
    """Why an annotation a reviewer rejected is no rating (``""`` when none did).  Label Studio
    Enterprise's review step writes ``review_result`` and a ``reviews`` list (``accepted`` true or
    false; the latest review decides); Community exports neither.  A rejected annotation is
    held out with this reason, as a skipped one is (campaign 7b X20)."""
    result = ann.get("review_result")
    if isinstance(result, dict):
        result = "rejected" if result.get("accepted") is False else ""
    if isinstance(result, str) and result.strip():
        return 'rejected in review (review_result "rejected")' if result.strip().casefold() == "rejected" else ""
    reviews = ann.get("reviews")
    reviews = [r for r in reviews if isinstance(r, dict)] if isinstance(reviews, list) else []
    if not reviews:
        return ""
    _, last = max(enumerate(reviews), key=lambda p: (str(p[1].get("updated_at") or p[1].get("created_at") or ""), p[0]))
    return "rejected in review (reviews[].accepted is false)" if last.get("accepted") is False else ""


def _held(ann: dict) -> str:
    """The reasons a source-level fact holds an annotation out: rejected in review, or a
    ``completed_by`` that names no user id (``"ana"``: not the null of an annotation with no annotator)."""
    reasons = [rejected_in_review(ann)]
    by = ann.get("completed_by")
    if by is not None and user_id(by) is None:
        reasons.append(f"completed_by {short(by)!r} is not a Label Studio user id")
    return "; ".join(r for r in reasons if r)


def annotation(ann: dict, schema: Schema) -> Annotation:
    """One exported annotation as an intake record (its ``result`` read unless it was skipped)."""
    result = ann.get("result")
    cancelled = bool(ann.get("was_cancelled"))
    found, unreadable = ([], "") if cancelled else entries(unpack(result), schema)
    return Annotation(
        entries=found,
        ignored=() if cancelled else ignored(unpack(result), schema),
        unreadable=unreadable,
        held=_held(ann),
        user=user_id(ann.get("completed_by")),
        cancelled=cancelled,
        at=ann.get("updated_at") or ann.get("created_at"),
        lead_time=ann.get("lead_time"),
        annotation_id=ann.get("id"),
        raw=result if isinstance(result, PackedResult) else unpack(result),
    )


def task_item(value: Any, where: str, key: str = "item_id") -> str:
    """A task's item id (its ``data[key]``) as text, ``""`` when it names none; ``0`` is item ``0``.
    A value that is no id (``true``, ``["C-1"]``, an object, ``1.5``) is refused naming the task,
    never stored as the text ``True`` or ``['C-1']``."""
    problem = not_an_id(value)
    if problem:
        raise GoldboardError(
            f"{where}: data.{key} is {json.dumps(value)[:80]}: {problem}; correct the task's data and export again"
        )
    return "" if value is None else str(value)


def shown(
    tasks: list[dict], schema: Schema, project_id: Any = None, rater: str | None = None, item_key: str | None = None
) -> Iterator[Shown]:
    """Every task of one project (or export) as :class:`Shown`; ``rater``: whose blinded project it is
    (``None``: a shared project, attributed by ``completed_by``); ``item_key``: the ``--item-key``
    given, named when a task lacks it."""
    no_item = f"task has no {item_key} in its data (the --item-key given) and no item_id" if item_key else ""
    for task in tasks:
        data = task.get("data")
        nothing = "task has no data (data: null): no item to attribute its annotations to"
        data, why = (data, no_item) if isinstance(data, dict) else ({}, nothing)
        pid = task.get("project", project_id)
        yield Shown(
            item_id=task_item(data.get("item_id"), f"project {pid}: task {task.get('id')}"),
            info={k: str(data.get(k, "") or "") for k in ("case_id", "output_id", "model")},
            rater=rater,
            annotations=[annotation(a, schema) for a in task.get("annotations") or []],
            group=pid,
            task_id=task.get("id"),
            project_id=pid,
            no_item=why,
        )


def _is_time(value: Any) -> bool:
    """An ISO 8601 time as Label Studio writes it (``2026-01-01T10:00:00.123456Z``); ``today`` or
    ``yesterday`` is not one."""
    if not isinstance(value, str):
        return False
    try:
        datetime.datetime.fromisoformat(value.strip())
    except ValueError:
        return False
    return True


def check_export(files: list[tuple[str, list[dict]]], item_key: str | None = None) -> None:
    """What a hand-downloaded export is refused for (nothing written), as the other file sources
    are: an export without a single annotation, item ids that are twins or placeholders
    (:func:`goldboard.cases.intake.files.check_item_ids`; after ``--item-key`` mapped them), and an
    annotation time (``created_at``/``updated_at``, which orders a rater's answers) that is not a
    time.  ``files``: ``(name, tasks)`` per export."""
    first: list[tuple[str, str]] = []
    n_tasks = n_ann = 0
    for name, tasks in files:
        for task in tasks:
            n_tasks += 1
            where = f"{name}: task {task.get('id')}"
            item = task_item((task.get("data") or {}).get("item_id"), where).strip()
            if item:
                first.append((item, f"{where} ({item_key or 'item_id'})"))
            for ann in task.get("annotations") or []:
                n_ann += 1
                for key in ("created_at", "updated_at"):
                    if ann.get(key) is not None and not _is_time(ann[key]):
                        raise GoldboardError(
                            f"{where}, annotation {ann.get('id')}: {key} {json.dumps(ann[key])[:80]} is not a time "
                            f"(Label Studio writes ISO 8601, e.g. 2026-01-01T10:00:00Z; it orders a rater's answers); "
                            f"export the project again, or correct the time"
                        )
    names = ", ".join(name for name, _ in files)
    if not n_ann:
        raise GoldboardError(
            f"{names}: no annotations in this Label Studio export ({n_tasks} tasks); nothing pulled "
            f"(export the project after the raters have annotated, with its annotations)"
        )
    check_item_ids(first)


def _task_ids(files: list[tuple[str, list[dict]]], item_key: str | None) -> Iterator[tuple[str, str]]:
    """``(item id, where)`` of each task holding one (``data.item_id``, after ``--item-key`` mapped it)."""
    for name, tasks in files:
        for task in tasks:
            item = str((task.get("data") or {}).get("item_id", "") or "").strip()
            if item:
                yield item, f"{name}: task {task.get('id')} ({item_key or 'item_id'})"


def check_task_ids(files: list[tuple[str, list[dict]]], item_key: str | None) -> None:
    """The ids of a hand-made project read from the server (``--project``, ``--item-key``) are refused
    as an export's are (:func:`goldboard.cases.intake.files.check_item_ids`: a placeholder, twins),
    naming the task; nothing is written."""
    check_item_ids(_task_ids(files, item_key))


def check_hidden_task_ids(files: list[tuple[str, list[dict]]], item_key: str | None) -> None:
    """A task whose item id (``data.item_id``, else ``data[item_key]``) holds a hidden character
    (:func:`goldboard.cases.ids.hidden_id_reason`: a zero-width space, a control character, a U+2028
    at its end, which ``str.strip`` would cut off) is refused naming the task, as every intake
    refuses such an id; checked on the raw value, before the ids are mapped and stripped."""
    from goldboard.cases import ids

    for name, tasks in files:
        for task in tasks:
            data = task.get("data") or {}
            key = "item_id" if str(data.get("item_id", "") or "").strip() else item_key
            raw = nested_value(data, key) if key else None
            hidden = ids.hidden_id_reason("item id", raw) if isinstance(raw, str) else None
            if hidden:
                raise GoldboardError(f"{name}: task {task.get('id')} ({item_key or 'item_id'}): {hidden}")


def check_some_valid(summary: dict, names: str) -> None:
    """An export none of whose annotations is a valid rating (each one held out as invalid) is
    refused, nothing written, as ``--from-file`` refuses it; ``summary``: the intake's ``pull.json``."""
    if summary.get("rating_rows") or not summary.get("annotations"):
        return
    if summary.get("invalid_annotations", 0) + summary.get("superseded_annotations", 0) < summary["annotations"]:
        return  # some were held out for the study's reasons (rated from another source): recorded as before
    reasons = summary.get("invalid_reasons") or {}
    top = next(iter(reasons.items()), None)
    raise GoldboardError(
        f"{names}: no valid annotation in this Label Studio export ({summary['annotations']} annotations, "
        f"{summary.get('invalid_annotations', 0)} invalid{f'; {top[1]} x {top[0]}' if top else ''}); nothing pulled "
        f"(check the labelling config against the study's schema)"
    )


__all__ = [
    "task_item",
    "rejected_in_review",
    "check_some_valid",
    "check_export",
    "entries",
    "annotation",
    "shown",
    "user_id",
    "pack",
    "unpack",
    "PackedResult",
    "check_task_ids",
    "check_hidden_task_ids",
]
