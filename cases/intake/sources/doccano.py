"""doccano's text-classification export (JSONL; a zip with one file per annotator) -> intake records.

Format, read in full in doccano's source (github.com/doccano/doccano, ``backend/data_export``, at
commit ab6b765e; docs/tutorial.md "Export the dataset"):

* ``pipeline/examples/text_classification/example.jsonl`` -- one example per line,
  ``{"text": ..., "label": [...]}``;
* ``models.py`` ``ExportedExample.to_dict`` -- each line is ``{"id": <example id>, "text": ...,
  **meta}`` (the keys the example was imported with, e.g. ``item_id``);
* ``pipeline/factories.py`` (DOCUMENT_CLASSIFICATION, JSONL) + ``formatters.py`` -- ``label`` is the
  sorted list of the category names the annotator chose (``[]``: not labelled), ``Comments`` the
  annotator's comment texts;
* ``celery_tasks.py`` -- a project without "collaborative annotation" exports a zip holding
  ``<username>.jsonl`` per project member (every example, each with that member's labels); a
  collaborative project exports ``all.jsonl``, every member's labels merged.

Reading: the annotator is the member file's name (``ana.jsonl`` -> ``ana``; map with ``--rater``);
a member who labelled nothing is not read (noted); ``all.jsonl`` is refused (it does not say who
chose what).  The item is ``--item-key``, else ``item_id``, else doccano's example ``id``.  The
labels answer the field (``--field``, default the schema's primary field); an example with no
label was shown and not rated; the comments, joined by newlines, are the rationale.  doccano exports
no time of the label, so one id twice in a member's file with different labels is refused
(:func:`goldboard.workflows.files.check_read`, naming both lines), never settled by line order.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from goldboard.cases.intake.core import Annotation, Answer, choices_answer
from goldboard.cases.intake.files import FileFormat, FileOptions, FileRead, ids_of, item_id, target_field
from goldboard.errors import GoldboardError
from goldboard.fileio import not_utf8_error, parse_jsonl
from goldboard.label_configs.schema import Schema


def _members(path: Path) -> list[tuple[str, str, str]]:
    """``(annotator, where, text)`` of each member file: a zip's ``*.jsonl``, or the one JSONL file."""
    if path.suffix.lower() != ".zip":
        return [(path.stem, str(path), _text(path.read_bytes(), str(path)))]
    try:
        with zipfile.ZipFile(path) as z:
            names = sorted(n for n in z.namelist() if n.lower().endswith(".jsonl") and not n.endswith("/"))
            members = [(Path(n).stem, f"{path}:{n}", _text(z.read(n), f"{path}:{n}")) for n in names]
    except zipfile.BadZipFile:
        raise GoldboardError(f"{path}: not a zip file (doccano exports a .zip, or give one member's .jsonl)") from None
    if not members:
        raise GoldboardError(f"{path}: no .jsonl file in the zip (export the project as JSONL)")
    if [m[0] for m in members] == ["all"]:
        raise GoldboardError(
            f"{path}: all.jsonl is a collaborative project's export, which merges every annotator's labels; "
            f"turn 'collaborative annotation' off in the project's settings and export again (one file per annotator)"
        )
    return members


def _text(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise not_utf8_error(where, data) from None


def read(path: Path, schema: Schema, options: FileOptions) -> FileRead:
    field = target_field(schema, options)
    rationale = schema.rationale_field
    out = FileRead([], {}, {}, rows=0, fields=[field.name])
    for who, where, text in _members(path):
        records = _records(where, text)
        if not any(rec.get("label") for _, rec in records):
            out.warnings.append(f"{where}: no labels (a project member who labelled nothing); not read")
            continue
        prefix = "" if path.suffix.lower() != ".zip" else f"{who}/"
        for line, rec in records:
            out.rows += 1
            item = item_id(rec, options, "id", where=f"{where}:{line}")
            if not item:
                raise GoldboardError(f"{where}:{line}: no item id ({options.item_key or 'item_id'} or id)")
            out.item_info.setdefault(item, ids_of(rec))
            out.shown.setdefault(who, []).append(item)
            if rec.get("label") in (None, [], ""):
                continue  # shown, not labelled
            ann = Annotation(entries=[(field.name, choices_answer(rec["label"]))])
            comments = _comments(rec.get("Comments"))
            if comments and rationale is not None:
                ann.entries.append((rationale.name, Answer(text=comments)))
            ann.annotation_id = f"{options.source}:{prefix}{line}"
            ann.raw, ann.raw_is_text = json.dumps(rec, ensure_ascii=False), True
            out.annotations.append((who, item, ann))
    return out


def _records(where: str, text: str) -> list[tuple[int, dict]]:
    out = []
    for line, rec, exc in parse_jsonl(text):
        if exc is not None:
            raise GoldboardError(f"{where}:{line}: invalid JSON (a doccano JSONL export): {exc.msg}")
        if not isinstance(rec, dict) or "label" not in rec:
            raise GoldboardError(f"{where}:{line}: not a doccano text-classification example (no 'label')")
        out.append((line, rec))
    return out


def _comments(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return "\n".join(str(c).strip() for c in value if isinstance(c, str) and c.strip())
    return ""


FORMAT = FileFormat(
    "doccano", "doccano JSONL export, a zip with one file per annotator", read, noun="doccano JSONL export"
)
