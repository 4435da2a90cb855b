"""Prodigy's ``db-out`` export (JSONL: one annotated task per line) -> intake records.

Format (Prodigy's documentation; read 2026-12):

* https://prodi.gy/docs/api-interfaces -- every task is a JSON object; "annotated tasks contain an
  additional ``answer`` key mapping to either ``accept``, ``reject`` or ``ignore``", and this format
  "will be used when exporting annotations via the ``db-out`` command".  The ``choice`` interface
  shows ``options`` (``[{"id": ..., "text": ...}]``) and stores the ids of the selected options
  under ``accept``; the ``classification`` interface shows one ``label`` to accept or reject.
* https://prodi.gy/docs/recipes#db-out -- ``prodigy db-out DATASET > file.jsonl``.
* https://prodi.gy/docs/api-web-app, https://prodi.gy/docs/review -- with named multi-user sessions
  (``?session=alex``) each answer carries ``_session_id`` and ``_annotator_id``
  (``DATASET-alex``); ``_input_hash``/``_task_hash`` identify the input and the question;
  ``_timestamp`` is when the answer was saved (Unix seconds).

Reading: the annotator is ``_annotator_id`` (else ``_session_id``); a file in which no record
names its annotator (an older Prodigy, one file per annotator) is read as one annotator named by
the file (``ana.jsonl`` -> ``ana``, said aloud; map it with ``--rater``), and a file naming the
annotator on some lines only is refused naming a line of each; the item is ``--item-key``,
else ``item_id``, at the top level or in ``meta``, else ``_input_hash`` (only when the record has no
item key at all: ``item_id: null`` or ``""`` is refused naming the line).  A ``_timestamp`` that is
not a number is refused naming the line.  A choice answer is the
accepted option ids, read as values of the field (``--field``, default the schema's primary
field; option ids are the schema's values or aliases); a classification answer is its ``label``
when accepted; for a yes/no (binary) field, whose name, title or present value is the label,
accept is the present value and reject the absent one (elsewhere a rejected label holds no rating).  An
``ignore`` answer is a skipped annotation, and a ``reject`` of a choice or an ``accept`` with no
option ticked holds no rating: each is held out with the reason, never dropped nor counted rated.  A text answer under the schema's rationale field name (a
``text_input`` with that ``field_id``) or ``user_input`` is the rationale.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from pathlib import Path
from typing import Any

from goldboard.cases.intake.core import Annotation, Answer, choices_answer
from goldboard.cases.intake.files import FileFormat, FileOptions, FileRead, ids_of, item_id, target_field
from goldboard.errors import GoldboardError
from goldboard.fileio import iter_jsonl
from goldboard.label_configs.schema import Field, Schema


def read(path: Path, schema: Schema, options: FileOptions) -> FileRead:
    field = target_field(schema, options)
    rationale = schema.rationale_field
    out = FileRead([], {}, {}, rows=0, fields=[field.name])
    first: dict[str, int] = {}  # the first line that names its annotator, and that names none
    for line, rec in iter_jsonl(path, " (a Prodigy db-out export)"):
        out.rows += 1
        if not isinstance(rec, dict):
            raise GoldboardError(f"{path}:{line}: not a Prodigy task (a JSON object)")
        who = _annotator(rec, path, line, out, first)
        item = item_id(rec, options, "_input_hash", where=f"{path}:{line}")
        if not item:
            raise GoldboardError(f"{path}:{line}: no item id ({options.item_key or 'item_id'} or _input_hash)")
        out.item_info.setdefault(item, ids_of(rec))
        out.shown.setdefault(who, []).append(item)
        stamp = rec.get("_timestamp")
        if "_timestamp" in rec and (isinstance(stamp, bool) or not isinstance(stamp, (int, float))):
            raise GoldboardError(
                f"{path}:{line}: _timestamp {json.dumps(stamp)} is not a number (Prodigy writes Unix seconds); "
                f"the time decides which of an annotator's answers is the latest"
            )
        _check_stamp(stamp, f"{path}:{line}")
        ann = _annotation(rec, field, rationale, schema)
        ann.annotation_id, ann.raw, ann.raw_is_text = (
            f"{options.source}:{line}",
            json.dumps(rec, ensure_ascii=False),
            True,
        )
        out.annotations.append((who, item, ann))
    if rationale is not None and any(n == rationale.name for _, _, a in out.annotations for n, _ in a.entries):
        out.fields.append(rationale.name)
    return out


def _annotator(rec: dict, path: Path, line: int, out: FileRead, first: dict[str, int]) -> str:
    """Whose answer a record is: its ``_annotator_id`` (else ``_session_id``); in a file whose
    records name no annotator at all (an older Prodigy, one file per annotator), the file's name,
    said aloud.  A file naming the annotator on some lines only is refused naming a line of each."""
    who = rec.get("_annotator_id") or rec.get("_session_id")
    has = isinstance(who, str) and bool(who.strip())
    key = "named" if has else "unnamed"
    first.setdefault(key, line)
    if "named" in first and "unnamed" in first:
        raise _mixed(path, first["named"], first["unnamed"])
    if has:
        if UNNAMED_SESSION.fullmatch(str(who)):
            out.sessions.add(str(who))
        return str(who)
    if line == first["unnamed"]:
        out.warnings.append(
            f"no _annotator_id or _session_id (an older Prodigy, or one file per annotator): every answer is read "
            f"as annotator {path.stem!r}, the file's name; map it with --rater {path.stem}=RATER"
        )
    return path.stem


#: Prodigy's name for a session started without ``?session=NAME``: its start time (``2024-02-06_10-17-19``,
#: after ``DATASET-`` in ``_annotator_id``): a session, not a person -- several may be mapped to one rater
UNNAMED_SESSION = re.compile(r"(?:.*-)?\d{4}-\d{2}-\d{2}(?:_\d{2}-\d{2}-\d{2})?")


def _mixed(path: Path, with_id: int, without: int) -> GoldboardError:
    return GoldboardError(
        f"{path}:{max(with_id, without)}: line {without} names no annotator (_annotator_id, _session_id) and "
        f"line {with_id} does: whose "
        f"answer is it? give each annotator's answers in a file of their own (one file per annotator is read "
        f"as the file's name)"
    )


def _annotation(rec: dict, field: Field, rationale: Field | None, schema: Schema) -> Annotation:
    """One task's answer: its choice or label, and the rationale text when there is one."""
    answer = rec.get("answer")
    ann = Annotation(at=_when(rec.get("_timestamp")))
    if answer == "ignore":
        ann.cancelled = True
        return ann
    if answer not in ("accept", "reject"):
        ann.unreadable = f"answer {answer!r} is not accept, reject or ignore"
        return ann
    value = _value(rec, answer, field, schema)
    if isinstance(value, str):
        ann.unreadable = value
        return ann
    ann.entries.append((field.name, value))
    text = rec.get(rationale.name) if rationale is not None else None
    text = text if isinstance(text, str) else rec.get("user_input")
    if rationale is not None and isinstance(text, str) and text.strip():
        ann.entries.append((rationale.name, Answer(text=text)))
    return ann


def _value(rec: dict, answer: str, field: Field, schema: Schema) -> Answer | str:
    """The field's answer of an accepted/rejected task, or the reason it holds none."""
    if isinstance(rec.get("options"), list):
        if answer == "reject":
            return "answer 'reject' of a choice task: the rater rejected the question, it holds no rating"
        if rec.get("accept") in (None, [], ""):
            return (
                "answer 'accept' with no option ticked: accept was pressed with nothing chosen, it holds no rating "
                "(for 'none of these', give the choice block an option saying so)"
            )
        return _block_answer(rec, field, schema)
    label = rec.get("label")
    if label is None:
        return "neither options/accept (a choice task) nor label (a classification task)"
    if field.kind == "binary":  # one yes/no question: accept is its present value, reject its absent one
        absent, present = field.categories
        names = {field.name.casefold(), str(getattr(field, "title", "") or "").casefold(), present.casefold()}
        if str(label).strip().casefold() not in names:
            return f"label {label!r} is not the yes/no field {field.name}"
        return choices_answer(present if answer == "accept" else absent)
    if answer == "accept":
        return choices_answer(label)
    return f"answer 'reject' of label {label!r}: says what the item is not, which only a yes/no field records"


def _knows(f: Field, value: Any) -> bool:
    try:
        f.normalize(value)
    except ValueError:
        return False
    return True


def _block_answer(rec: dict, field: Field, schema: Schema) -> Answer | str:
    """The accepted options of a choice block that may carry several schema fields (its option ids
    the values of two fields: ``Supported`` and ``stage``): read one field at a time, the ticks that
    are another field's values left to that field (``--field`` reads it).  A tick that is no field's
    value stays, so the core names it; a block with ticks of other fields only is held out saying so."""
    ticked = rec.get("accept")
    if not isinstance(ticked, list):
        return choices_answer(ticked)
    others = [f for f in schema.rated_fields if f.name != field.name and f.kind != "text"]
    mine, elsewhere = [], {}
    for v in ticked:
        owner = next((f for f in others if _knows(f, v)), None) if not _knows(field, v) else None
        if owner is None:
            mine.append(v)
        else:
            elsewhere.setdefault(owner.name, []).append(str(v))
    if elsewhere and not mine:
        names = ", ".join(f"{', '.join(map(repr, vs))} of {n}" for n, vs in elsewhere.items())
        return (
            f"no option of {field.name} ticked: the block's ticks are {names} (a block carrying several fields is read "
            f"one field at a time: give --field {next(iter(elsewhere))} to read that one)"
        )
    return choices_answer(mine)


#: the latest plausible answer time (2100-01-01 UTC, Unix seconds)
LATEST_STAMP = 4_102_444_800


def _check_stamp(stamp: Any, where: str) -> None:
    """A ``_timestamp`` that is no time Prodigy could have written -- not finite, before 1970, after
    2100, or in milliseconds (as a JS or pandas script writes it) -- is refused naming the line
    (it crashed as "year 57972 is out of range")."""
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
        return
    if math.isfinite(stamp) and 0 <= stamp <= LATEST_STAMP:
        return
    hint = (
        " (it looks like milliseconds, as a JS or pandas script writes them: Prodigy writes seconds)"
        if math.isfinite(stamp) and 0 < stamp / 1000 <= LATEST_STAMP
        else ""
    )
    raise GoldboardError(
        f"{where}: _timestamp {json.dumps(stamp)} is no time between 1970 and 2100 in Unix seconds{hint}; the "
        "time decides which of an annotator's answers is the latest: correct it"
    )


def _when(stamp: Any) -> str | None:
    if isinstance(stamp, bool) or not isinstance(stamp, (int, float)):
        return None
    return datetime.datetime.fromtimestamp(stamp, tz=datetime.timezone.utc).isoformat()


FORMAT = FileFormat(
    "prodigy",
    "Prodigy db-out JSONL: choice and accept/reject answers, named sessions",
    read,
    noun="Prodigy db-out export",
)
