"""Pull: Label Studio annotations -> the tidy ratings table, validated against the schema.

One export request per project (``GET /api/projects/<id>/export?exportType=JSON
&download_all_tasks=true``), never one request per task.  Every annotation is

1. **attributed** to a rater: in a blinded round by its project (and, when the
   rater's server user is known, the annotation's ``completed_by`` must be that
   user -- an annotation by anyone else in a rater's project is held out, never
   credited to the rater); in a shared round by ``completed_by`` -> rater (the
   embedded server's credentials, else the server's user list matched on
   username, e-mail or e-mail local part, or ``[extra.rater_users]`` in study.toml);
2. **validated** against the schema -- Label Studio stores whatever it is sent:
   unknown ``from_name``, a value not in the schema, two values for a single
   choice, a required field missing, an empty result, a skipped (cancelled)
   annotation.  Such an annotation is held out *whole* in ``rounds/N/invalid.csv``
   with its result verbatim and the reasons, and reported -- never dropped
   silently, never "fixed".  Choice values are read with the schema's
   :meth:`~goldboard.label_configs.schema.Field.normalize` (exact spelling, then
   declared aliases, then case/whitespace-insensitive); anything else is invalid;
3. **deduplicated**: when a rater annotated one item more than once, the latest
   (``updated_at``, then id) is kept and the others are listed (``superseded`` rows
   in invalid.csv, counted in pull.json).  An annotation held out because another
   user made it in the rater's project never takes part: it cannot supersede the
   rater's own rating.

``--from-export`` files are checked against the round: tasks of a project that is not
in the round, an export given for a rater whose project it is not (exports swapped;
the tasks' project id, or for JSON_MIN the annotators' accounts, say whose it is) and
the same tasks given twice are errors.

Output (each written atomically): ``rounds/N/ratings.csv`` (RATINGS_COLUMNS:
binary unticked -> ``no``; multi -> values ``|``-joined in schema order, empty
selection ``""``; the schema's rationale field -> the ``rationale`` column; other
text fields -> rows), ``rounds/N/invalid.csv`` and ``rounds/N/pull.json``
(counts, reasons, unannotated items per rater).

``--from-export`` reads hand-downloaded exports instead: Label Studio ``JSON``
(tasks with annotations) or ``JSON_MIN`` (one flat row per annotation; it has no
project id and omits skipped annotations, so prefer ``JSON``).
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.adjudicate.rules import rating_rule_breaks
from goldboard.annotate.client import connect, jobs_for
from goldboard.cases.ratings import MULTI_SEP, RATINGS_COLUMNS, rating_grid, read_ratings_csv
from goldboard.errors import GoldboardError, LabelStudioError, check_rater_map
from goldboard.fileio import iter_jsonl, read_csv_frame, write_csv_atomic, write_text_atomic
from goldboard.label_configs.schema import Field, Schema, ValueNotInSchema
from goldboard.label_configs.xml import TASK_DATA_KEYS, to_label_studio_xml
from goldboard.text import did_you_mean, utc_now

INVALID_COLUMNS = [
    "round",
    "kind",
    "reason",
    "rater",
    "item_id",
    "case_id",
    "output_id",
    "model",
    "task_id",
    "project_id",
    "annotation_id",
    "completed_by",
    "annotated_at",
    "lead_time",
    "was_cancelled",
    "result",
]
#: keys of a JSON_MIN row that are not annotation fields
JSON_MIN_META = {
    "id",
    "annotator",
    "annotation_id",
    "created_at",
    "updated_at",
    "lead_time",
    "drafts",
    "predictions",
    "meta",
    "project",
}


# --------------------------------------------------------------------------- one annotation


def parse_result(result: Any, schema: Schema) -> tuple[dict[str, str], list[str]]:
    """Read one annotation ``result`` (a list of Label Studio result items) against ``schema``.

    Returns ``(values, problems)``: ``values`` maps field name -> canonical value for
    every field the annotation answers (binary: ``yes``/``no`` -- an unticked box is the
    absent value; multi: ``|``-joined in schema order, ``""`` when nothing is ticked;
    text: the text, several submissions joined by newlines).  ``problems`` lists
    one-line reasons the annotation is not a valid rating (empty list: valid).
    """
    problems: list[str] = []
    if not isinstance(result, list):
        return {}, [f"result is not a list ({type(result).__name__})"]
    if not result:
        return {}, ["empty result"]
    fields = {f.name: f for f in schema.fields}
    items: dict[str, dict] = {}
    for i, item in enumerate(result):
        if not isinstance(item, dict):
            problems.append(f"result[{i}] is not an object")
            continue
        name = item.get("from_name")
        if not isinstance(name, str) or name not in fields:
            problems.append(f"unknown field {name if isinstance(name, str) else _short(name)!r}")
            continue
        if name in items:
            problems.append(f"{name}: answered twice")
            continue
        items[name] = item
    values: dict[str, str] = {}
    for f in schema.fields:
        item = items.get(f.name)
        if f.kind == "text":
            if item is not None:
                text, err = _text_of(item)
                if err:
                    problems.append(f"{f.name}: {err}")
                else:
                    values[f.name] = text
            continue
        choices: list[Any] = []
        if item is not None:
            choices, err = _choices_of(item)
            if err:
                problems.append(f"{f.name}: {err}")
                continue
        canon: list[str] = []
        bad = False
        for c in choices:
            bad_chars = control_chars(c) if isinstance(c, str) else []
            if bad_chars:
                problems.append(f"{f.name}: {_short(c)!r} contains control character {', '.join(bad_chars)}")
                bad = True
                continue
            try:
                canon.append(f.normalize(c))
            except ValueNotInSchema:
                problems.append(
                    f"{f.name}: {_short(c)!r} is not a value of {f.name} (allowed: {', '.join(f.categories)})"
                )
                bad = True
        if bad:
            continue
        canon = list(dict.fromkeys(canon))
        if f.kind == "binary":
            absent, present = f.categories
            if len(canon) > 1:
                problems.append(f"{f.name}: both {absent!r} and {present!r}")
                continue
            values[f.name] = canon[0] if canon else absent
        elif f.kind == "multi":
            order = {v: i for i, v in enumerate(f.categories)}
            values[f.name] = MULTI_SEP.join(sorted(canon, key=order.__getitem__))
        else:
            if len(canon) > 1:
                problems.append(f"{f.name}: {len(canon)} values for a single-choice field ({', '.join(canon)})")
                continue
            if canon:
                values[f.name] = canon[0]
    if not problems:
        for f in schema.fields:
            if not f.required or not _shown(f, values):
                continue
            v = values.get(f.name)
            if v is None or (f.kind in ("text", "multi") and not v.strip()):
                problems.append(f"{f.name}: required but missing")
    return values, problems


def _shown(f: Field, values: dict[str, str]) -> bool:
    sw = f.shown_when
    if sw is None:
        return True
    got = values.get(sw.field)
    if got is None:
        return False
    return bool(set(got.split(MULTI_SEP)) & set(sw.values))


def _choices_of(item: dict) -> tuple[list[Any], str]:
    value = item.get("value")
    if not isinstance(value, dict):
        return [], "no value"
    if "choices" in value:
        ch = value["choices"]
        if isinstance(ch, str):
            ch = [ch]
        if not isinstance(ch, list) or not all(_is_choice(c) for c in ch):
            return [], f"malformed choices {_short(ch)!r}"
        return ch, ""
    if "rating" in value:
        if not _is_choice(value["rating"]):
            return [], f"malformed rating {_short(value['rating'])!r}"
        return [value["rating"]], ""
    if "text" in value:
        return [], "a text answer for a choice field"
    return [], f"unsupported value {_short(value)!r}"


def _is_choice(c: Any) -> bool:
    """A choice is text or a finite number (never NaN/Infinity, a bool, null or an object)."""
    if isinstance(c, bool) or not isinstance(c, (str, int, float)):
        return False
    return not isinstance(c, float) or math.isfinite(c)


def control_chars(text: str) -> list[str]:
    """The control characters in ``text`` (``U+0000``...), tab, CR and LF excepted: a label holding
    one is not the label it looks like (a spreadsheet or a script put it there)."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\r\n"})


def _text_of(item: dict) -> tuple[str, str]:
    value = item.get("value")
    if not isinstance(value, dict) or "text" not in value:
        return "", "no text"
    t = value["text"]
    if isinstance(t, str):
        t = [t]
    if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
        return "", f"malformed text {_short(t)!r}"
    return "\n".join(t), ""


def _short(x: Any, n: int = 80) -> str:
    s = x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, default=str)
    return s if len(s) <= n else s[: n - 1] + "…"


# --------------------------------------------------------------------------- exports


def _user_id(completed_by: Any) -> int | None:
    if isinstance(completed_by, dict):
        completed_by = completed_by.get("id")
    try:
        return int(completed_by) if completed_by is not None else None
    except (TypeError, ValueError):
        return None


def tasks_from_json_min(rows: list[dict], schema: Schema) -> list[dict]:
    """Convert a ``JSON_MIN`` export (one flat row per annotation, choices flattened)
    into full-JSON-shaped tasks.  Keys that are neither task data (``item_id`` ...),
    annotation metadata nor schema fields become results with that ``from_name``, so
    validation reports them as unknown fields."""

    data_keys = set(TASK_DATA_KEYS) | {f"option_{o}" for o in schema.display.options}
    fields = {f.name: f for f in schema.fields}
    tasks: dict[Any, dict] = {}
    for row in rows:
        tid = row.get("id")
        task = tasks.setdefault(tid, {"id": tid, "data": {k: row[k] for k in data_keys if k in row}, "annotations": []})
        if row.get("annotation_id") is None and row.get("annotator") is None:
            continue  # a task without annotation
        result = []
        for k, v in row.items():
            if k in data_keys or k in JSON_MIN_META:
                continue
            f = fields.get(k)
            if f is not None and f.kind == "text":
                value = v if isinstance(v, dict) else {"text": [v] if isinstance(v, str) else v}
                result.append({"from_name": k, "type": "textarea", "value": value})
            elif isinstance(v, dict):
                result.append({"from_name": k, "type": "choices", "value": v})
            else:
                result.append(
                    {"from_name": k, "type": "choices", "value": {"choices": v if isinstance(v, list) else [v]}}
                )
        task["annotations"].append(
            {
                "id": row.get("annotation_id"),
                "completed_by": row.get("annotator"),
                "result": result,
                "was_cancelled": False,
                "created_at": row.get("created_at"),
                "updated_at": row.get("updated_at"),
                "lead_time": row.get("lead_time"),
            }
        )
    return list(tasks.values())


def read_export_file(path: str | Path, schema: Schema) -> tuple[list[dict], str]:
    """Read a hand-downloaded Label Studio export; returns ``(tasks, format)`` with
    ``format`` ``"JSON"`` or ``"JSON_MIN"``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise GoldboardError(f"{path}: file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f":{exc.lineno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise GoldboardError(f"{path}{where}: not a Label Studio JSON export ({type(exc).__name__})") from None
    except RecursionError:
        raise GoldboardError(f"{path}: not a Label Studio JSON export (nested too deeply to read)") from None
    except IsADirectoryError:
        raise GoldboardError(f"{path}: is a folder, not a file") from None
    if not isinstance(data, list):
        raise GoldboardError(f"{path}: a Label Studio export is a JSON array of tasks")
    for i, rec in enumerate(data, start=1):
        if not isinstance(rec, dict):
            raise GoldboardError(f"{path}: record {i}: not a JSON object")
    if not data:
        return [], "JSON"
    if any("annotations" in r or "data" in r for r in data):
        # the task's shape is checked here; what an annotation says (a result that is not a list,
        # an item with ``value: null``, an unknown field) is validated per annotation by
        # parse_result: such an annotation is held out in invalid.csv with its reason
        for i, rec in enumerate(data, start=1):
            if not isinstance(rec.get("data") or {}, dict) or not isinstance(rec.get("annotations") or [], list):
                raise GoldboardError(f"{path}: record {i}: malformed task (data/annotations)")
            for j, ann in enumerate(rec.get("annotations") or [], start=1):
                if not isinstance(ann, dict):
                    raise GoldboardError(f"{path}: record {i}, annotation {j}: not a JSON object")
        return data, "JSON"
    for i, rec in enumerate(data, start=1):
        if "id" not in rec:
            raise GoldboardError(f"{path}: record {i}: no task id: not a Label Studio JSON or JSON_MIN export")
    return tasks_from_json_min(data, schema), "JSON_MIN"


# --------------------------------------------------------------------------- collection


@dataclass
class Source:
    """Tasks from one project (or one export file) and how to attribute them."""

    tasks: list[dict]
    project_id: int | None = None
    rater: str | None = None  # blinded: the rater whose project this is; None: shared (by completed_by)
    label: str = ""


@dataclass
class PullResult:
    ratings: pd.DataFrame
    invalid: pd.DataFrame
    summary: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)
    #: item -> task data, for tasks mapped by ``item_key`` (projects goldboard did not create)
    items_data: dict[str, dict] = field(default_factory=dict)

    def describe(self) -> str:
        s = self.summary
        lines = [f"round {s['round']}: {s['valid_annotations']} valid annotations -> {len(self.ratings)} rating rows"]
        for r, c in s["raters"].items():
            lines.append(
                f"  {r}: {c['valid']} rated, {c['invalid']} invalid, {c['superseded']} superseded, "
                f"{c['unannotated']} unannotated"
                + (
                    f"; {c['by_other_users']} annotations by other users held out of {r}'s project"
                    if c.get("by_other_users")
                    else ""
                )
            )
        if s["invalid_annotations"] or s["superseded_annotations"]:
            lines.append(
                f"  held out: {s['invalid_annotations']} invalid, {s['superseded_annotations']} superseded "
                f"annotations (see {self.paths.get('invalid', 'invalid.csv')})"
            )
            for reason, n in list(s["invalid_reasons"].items())[:8]:
                lines.append(f"    {n} x {reason}")
        for w in s.get("warnings", []):
            lines.append(f"  warning: {w}")
        return "\n".join(lines)


def _ts(value: Any) -> str:
    if value in (None, ""):
        return ""
    try:
        t = pd.Timestamp(value)
    except (ValueError, TypeError):
        return str(value)
    if t.tzinfo is None:
        t = t.tz_localize("UTC")
    return t.tz_convert("UTC").isoformat()


def _num(value: Any) -> str:
    if value is None or value == "":
        return ""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return ""
    return repr(int(x)) if x.is_integer() else repr(x)


def _reason_kind(reason: str) -> str:
    """A reason without the quoted specifics, for counting."""
    if ": " in reason and not reason.startswith(("annotated by", "task ")):
        head, rest = reason.split(": ", 1)
        if "is not a value" in rest:
            return f"{head}: value not in schema"
        return f"{head}: {rest.split(' (')[0]}"
    return reason.split(" (")[0]


def collect(
    sources: Iterable[Source],
    schema: Schema,
    raters: list[str],
    round_number: int,
    *,
    user_raters: dict[int, str] | None = None,
    known_users: dict[int, str] | None = None,
    units: pd.DataFrame | None = None,
) -> PullResult:
    """Attribute, validate and deduplicate the annotations of ``sources``.

    ``user_raters`` maps a server user id to a rater (when known); ``known_users``
    maps other known user ids to a name (e.g. ``admin``), for messages.  ``units``
    (item_id, case_id, output_id, model) fills ids a task's data lacks.
    Pure: no I/O.
    """
    unit_info = _unit_info(units)
    seen = _attribute(sources, schema, raters, round_number, dict(user_raters or {}), known_users, unit_info)
    kept = _keep_latest(seen, schema, raters, round_number)
    ratings = _sorted_ratings(pd.DataFrame(kept.rows, columns=RATINGS_COLUMNS), unit_info, raters, schema)
    invalid = pd.DataFrame(seen.invalid_rows, columns=INVALID_COLUMNS)
    summary = _pull_summary(seen, kept, schema, raters, round_number, ratings)
    return PullResult(ratings=ratings, invalid=invalid, summary=summary)


@dataclass
class _Attributed:
    """Every annotation of a pull, attributed and validated: the candidates per (item, rater), the held out, counts."""

    candidates: dict[tuple[str, str], list[dict]]  # (item, rater) -> annotations
    expected: dict[str, set[str]]  # rater -> items in the rater's projects
    invalid_rows: list[dict] = field(default_factory=list)
    task_count: int = 0
    total_ann: int = 0
    seen_task_items: dict[tuple[Any, str], list[Any]] = field(default_factory=lambda: defaultdict(list))
    unattributed: int = 0
    by_project_only: set[str] = field(default_factory=set)
    held_out_foreign: Counter = field(default_factory=Counter)  # rater -> annotations by others in their project


@dataclass(frozen=True)
class _Kept:
    """The latest valid annotation per (item, rater) as rating rows, and the per-rater counts."""

    rows: list[dict]
    stats: dict[str, Counter]
    rated: dict[str, set[str]]


def _unit_info(units: pd.DataFrame | None) -> dict[str, dict]:
    """``{item_id: {item_id, case_id, output_id, model}}`` from the units, in their order."""
    unit_info: dict[str, dict] = {}
    if units is not None and len(units):
        for rec in (
            units[[c for c in ("item_id", "case_id", "output_id", "model") if c in units.columns]]
            .astype(str)
            .to_dict("records")
        ):
            unit_info[rec["item_id"]] = rec
    return unit_info


def _attribute(
    sources: Iterable[Source],
    schema: Schema,
    raters: list[str],
    round_number: int,
    user_raters: dict[int, str],
    known_users: dict[int, str] | None,
    unit_info: dict[str, dict],
) -> _Attributed:
    """Step 1 and 2 of the module docstring for every annotation of ``sources``."""
    rater_user = {r: uid for uid, r in user_raters.items()}
    names = {**(known_users or {}), **user_raters}
    seen = _Attributed(candidates=defaultdict(list), expected={r: set() for r in raters})
    for src in sources:
        for task in src.tasks:
            seen.task_count += 1
            data = task.get("data") or {}
            item = str(data.get("item_id", "") or "")
            info = {
                "item_id": item,
                "case_id": str(data.get("case_id", "") or ""),
                "output_id": str(data.get("output_id", "") or ""),
                "model": str(data.get("model", "") or ""),
            }
            if item in unit_info:
                for k in ("case_id", "output_id", "model"):
                    if not info[k]:
                        info[k] = unit_info[item].get(k, "")
            pid = task.get("project", src.project_id)
            if item:
                seen.seen_task_items[(pid, item)].append(task.get("id"))
                for r in [src.rater] if src.rater else raters:
                    if r in seen.expected:
                        seen.expected[r].add(item)
            for ann in task.get("annotations") or []:
                seen.total_ann += 1
                uid = _user_id(ann.get("completed_by"))
                base = {**info, "task_id": task.get("id"), "project_id": pid, "annotation": ann, "uid": uid}
                reasons: list[str] = []
                rater = ""
                who = f"{names[uid]} (user {uid})" if uid in names else f"user {uid}"
                foreign = False
                if src.rater is not None:
                    rater = src.rater
                    own = rater_user.get(rater)
                    if own is None:
                        seen.by_project_only.add(rater)
                    elif uid != own:
                        foreign = True
                        reasons.append(f"annotated by {who} in {rater}'s project")
                else:
                    rater = user_raters.get(uid, "") if uid is not None else ""
                    if not rater:
                        seen.unattributed += 1
                        reasons.append(f"annotated by {who}, who is not a study rater")
                if not item:
                    reasons.append(
                        "task has no item_id in its data (not pushed by goldboard; map one with --item-key KEY)"
                    )
                if ann.get("was_cancelled"):
                    reasons.append("skipped (cancelled) annotation")
                    values: dict[str, str] = {}
                else:
                    values, problems = parse_result(_unpack(ann.get("result")), schema)
                    reasons.extend(problems)
                base.update(rater=rater, values=values, reasons=reasons)
                if foreign:  # held out; it is not the rater's, so it never displaces the rater's own rating
                    seen.held_out_foreign[rater] += 1
                    seen.invalid_rows.append(_invalid_row(round_number, "invalid", "; ".join(reasons), base))
                elif rater and item:
                    seen.candidates[(item, rater)].append(base)
                else:
                    seen.invalid_rows.append(_invalid_row(round_number, "invalid", "; ".join(reasons), base))
    return seen


def _keep_latest(seen: _Attributed, schema: Schema, raters: list[str], round_number: int) -> _Kept:
    """Step 3: the latest annotation per (item, rater) becomes rating rows (when valid); the others are held out."""
    rationale = schema.rationale_field
    row_fields = [f for f in schema.fields if not (rationale is not None and f.name == rationale.name)]
    invalid_rows = seen.invalid_rows
    rows: list[dict] = []
    stats = {r: Counter() for r in raters}
    rated: dict[str, set[str]] = {r: set() for r in raters}
    for (item, rater), anns in seen.candidates.items():
        anns.sort(
            key=lambda a: (
                _ts(a["annotation"].get("updated_at") or a["annotation"].get("created_at")),
                _int_or(a["annotation"].get("id")),
            )
        )
        latest = anns[-1]
        st = stats.setdefault(rater, Counter())
        for old in anns[:-1]:
            st["superseded"] += 1
            invalid_rows.append(
                _invalid_row(
                    round_number,
                    "superseded",
                    f"superseded by annotation {latest['annotation'].get('id')} "
                    f"of the same rater"
                    + (f" (was also invalid: {'; '.join(old['reasons'])})" if old["reasons"] else ""),
                    old,
                )
            )
        if latest["reasons"]:
            st["invalid"] += 1
            invalid_rows.append(_invalid_row(round_number, "invalid", "; ".join(latest["reasons"]), latest))
            continue
        st["valid"] += 1
        rated.setdefault(rater, set()).add(item)
        ann = latest["annotation"]
        common = {
            "round": round_number,
            "item_id": item,
            "case_id": latest["case_id"],
            "output_id": latest["output_id"],
            "model": latest["model"],
            "rater": rater,
            "rationale": latest["values"].get(rationale.name, "") if rationale is not None else "",
            "annotated_at": _ts(ann.get("updated_at") or ann.get("created_at")),
            "lead_time": _num(ann.get("lead_time")),
            "annotation_id": _num(ann.get("id")),
            "task_id": _num(latest["task_id"]),
            "project_id": _num(latest["project_id"]),
        }
        for f in row_fields:
            v = latest["values"].get(f.name)
            if v is None:
                if f.kind == "multi":
                    v = ""
                else:
                    continue  # not answered (optional or hidden)
            rows.append({**common, "field": f.name, "value": v})
    return _Kept(rows=rows, stats=stats, rated=rated)


def _sorted_ratings(
    ratings: pd.DataFrame, unit_info: dict[str, dict], raters: list[str], schema: Schema
) -> pd.DataFrame:
    """Rating rows in units order, then rater order, then schema field order."""
    if len(ratings):
        item_order = {it: i for i, it in enumerate(unit_info)} if unit_info else {}
        rater_order = {r: i for i, r in enumerate(raters)}
        field_order = {f.name: i for i, f in enumerate(schema.fields)}
        ratings["_i"] = ratings["item_id"].map(lambda x: item_order.get(x, len(item_order)))
        ratings["_r"] = ratings["rater"].map(lambda x: rater_order.get(x, len(rater_order)))
        ratings["_f"] = ratings["field"].map(field_order)
        ratings = (
            ratings.sort_values(["_i", "item_id", "_r", "rater", "_f"], kind="stable")
            .drop(columns=["_i", "_r", "_f"])
            .reset_index(drop=True)
        )
    return ratings


def _pull_summary(
    seen: _Attributed, kept: _Kept, schema: Schema, raters: list[str], round_number: int, ratings: pd.DataFrame
) -> dict[str, Any]:
    """``pull.json``: counts, reasons, unannotated items per rater, warnings."""
    invalid_rows, stats, expected, rated = seen.invalid_rows, kept.stats, seen.expected, kept.rated
    warnings: list[str] = []
    for r in seen.by_project_only:
        warnings.append(f"{r}: server user unknown, annotations attributed by project only")
    dups = {f"{item}": ids for (pid, item), ids in seen.seen_task_items.items() if len(ids) > 1}
    if dups:
        warnings.append(f"{len(dups)} items appear in more than one task of a project (e.g. {next(iter(dups))})")
    reasons = Counter()
    for row in invalid_rows:
        if row["kind"] == "invalid":
            for part in row["reason"].split("; "):
                reasons[_reason_kind(part)] += 1
    per_rater = {}
    for r in sorted(
        set(raters) | set(stats), key=lambda x: (x not in raters, raters.index(x) if x in raters else 0, x)
    ):
        miss = sorted(expected.get(r, set()) - rated.get(r, set()))
        per_rater[r] = {
            "valid": stats.get(r, Counter())["valid"],
            "invalid": stats.get(r, Counter())["invalid"],
            "superseded": stats.get(r, Counter())["superseded"],
            "by_other_users": seen.held_out_foreign[r],
            "items": len(expected.get(r, set())),
            "unannotated": len(miss),
            "unannotated_items": miss,
        }
    n_invalid = sum(1 for row in invalid_rows if row["kind"] == "invalid")
    return {
        "round": round_number,
        "schema": f"{schema.name} v{schema.version}",
        "pulled_at": utc_now(),
        "tasks": seen.task_count,
        "annotations": seen.total_ann,
        "valid_annotations": sum(c["valid"] for c in per_rater.values()),
        "invalid_annotations": n_invalid,
        "superseded_annotations": len(invalid_rows) - n_invalid,
        "unattributed_annotations": seen.unattributed,
        "rating_rows": int(len(ratings)),
        "invalid_reasons": dict(reasons.most_common()),
        "raters": per_rater,
        "duplicate_tasks": dups,
        "warnings": warnings,
    }


def _int_or(x: Any) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        return -1


def _invalid_row(round_number: int, kind: str, reason: str, a: dict) -> dict:
    ann = a["annotation"]
    return {
        "round": round_number,
        "kind": kind,
        "reason": reason,
        "rater": a.get("rater", ""),
        "item_id": a.get("item_id", ""),
        "case_id": a.get("case_id", ""),
        "output_id": a.get("output_id", ""),
        "model": a.get("model", ""),
        "task_id": _num(a.get("task_id")),
        "project_id": _num(a.get("project_id")),
        "annotation_id": _num(ann.get("id")),
        "completed_by": "" if a.get("uid") is None else str(a["uid"]),
        "annotated_at": _ts(ann.get("updated_at") or ann.get("created_at")),
        "lead_time": _num(ann.get("lead_time")),
        "was_cancelled": "true" if ann.get("was_cancelled") else "false",
        "result": json.dumps(_unpack(ann.get("result")), ensure_ascii=False),
    }


# --------------------------------------------------------------------------- the study-level pull


def rater_user_ids(
    client: Any, raters: list[str], explicit: dict[str, str] | None = None
) -> tuple[dict[int, str], dict[int, str]]:
    """``(user id -> rater, other user id -> name)`` for the study's raters on ``client``'s server.

    Embedded server: from its credentials file.  Otherwise from the server's user list:
    ``explicit`` (rater -> e-mail or username) first, then username == rater, e-mail == rater
    or e-mail local part == rater.  A rater matching two users is an error.
    """
    explicit = explicit or {}
    creds = getattr(client.conn, "credentials", None)
    if creds is not None:
        ids = creds.user_ids()
        return (
            {uid: n for uid, n in ids.items() if n in raters},
            {uid: n for uid, n in ids.items() if n not in raters},
        )
    users = client.users()
    out: dict[int, str] = {}
    for r in raters:
        want = explicit.get(r)
        if want:
            hits = [u for u in users if want in (u["email"], u["username"])]
        else:
            hits = [u for u in users if r in (u["username"], u["email"], u["email"].split("@")[0])]
        if len(hits) > 1:
            raise GoldboardError(
                f"rater {r!r} matches {len(hits)} Label Studio users "
                f"({', '.join(u['email'] for u in hits)}); set [extra.rater_users] in study.toml"
            )
        if hits:
            out[int(hits[0]["id"])] = r
    others = {int(u["id"]): u["email"] or u["username"] for u in users if int(u["id"]) not in out}
    return out, others


def rule_warnings(ratings: pd.DataFrame, schema: Schema, raters: list[str], limit: int = 20) -> list[str]:
    """Ratings that break a schema cross-field rule: kept as rated (never changed), reported,
    and flagged for adjudication (see :mod:`goldboard.adjudicate.rules`)."""
    if not schema.rules or not len(ratings):
        return []
    breaks = rating_rule_breaks(rating_grid(ratings, schema, raters), schema)
    out = [b.describe() for b in breaks[:limit]]
    if len(breaks) > limit:
        out.append(f"... and {len(breaks) - limit} more ratings that break a schema rule (see `goldboard flag`)")
    return out


def _map_items(sources: list[Source], item_key: str) -> dict[str, dict]:
    """Tasks without ``item_id`` take it from ``data[item_key]``; returns item -> task data."""
    out: dict[str, dict] = {}
    for src in sources:
        for task in src.tasks:
            data = task.get("data") or {}
            if not str(data.get("item_id", "") or "").strip():
                key = str(data.get(item_key, "") or "").strip()
                if key:
                    task["data"] = data = {**data, "item_id": key}
            item = str(data.get("item_id", "") or "")
            if item:
                out.setdefault(item, data)
    return out


def map_users(
    rater_map: dict[str, str],
    raters: list[str],
    user_raters: dict[int, str],
    others: dict[int, str],
    users: list[dict] | None = None,
) -> tuple[dict[int, str], dict[int, str]]:
    """Apply ``--rater USER=RATER`` (user id, e-mail or username -> study rater) on top of the
    automatic mapping; ``users`` is the server's user list (id, email, username) when known.
    Returns ``(user id -> rater, other user id -> name)``."""
    user_raters, others = dict(user_raters), dict(others)
    check_rater_map(rater_map, raters)
    for key, rater in rater_map.items():
        if key.isdigit():
            hits = [int(key)]
        else:
            hits = [int(u["id"]) for u in users or [] if key in (u["email"], u["username"])]
            if not hits:
                hits = [u for u, name in {**others, **user_raters}.items() if name == key]
            if not hits:
                known = sorted(
                    {x for u in users or [] for x in (u["username"], u["email"]) if x} | set(others.values())
                )
                raise GoldboardError(
                    f"--rater {key}={rater}: no Label Studio user {key!r}{did_you_mean(key, known)}"
                    + (f" (users: {', '.join(known[:10])})" if known else "; give the user id instead (e.g. 17=onc_a)")
                )
            if len(hits) > 1:
                raise GoldboardError(f"--rater {key}={rater}: {key!r} matches {len(hits)} users; give the user id")
        uid = hits[0]
        for u, r in list(user_raters.items()):
            if r == rater and u != uid:  # the explicit mapping wins over an automatic one
                others[u] = r
                del user_raters[u]
        user_raters[uid] = rater
        others.pop(uid, None)
    return user_raters, others


def pull(
    study: Any,
    round_number: int | None = None,
    *,
    client: Any = None,
    from_export: Iterable[str | Path | tuple[str, str | Path]] = (),
    write: bool = True,
    progress: bool = True,
    jobs: int | None = None,
    item_key: str | None = None,
    rater_map: dict[str, str] | None = None,
) -> PullResult:
    """Pull a round's annotations into ``rounds/N/ratings.csv`` (+ invalid.csv, pull.json).

    ``from_export``: hand-downloaded export files instead of the server; an item may be
    ``(rater, path)`` to say whose project the file is (needed for a blinded round when
    the file has no project id, i.e. JSON_MIN, and the annotators' ids are unknown).
    ``jobs``: projects exported at once (None: the server's app workers when goldboard knows
    them -- the embedded server's ``--workers`` -- else 1).

    Projects goldboard did not create: ``item_key`` names the task data key that holds the
    item id when a task has no ``item_id`` (e.g. ``case_id``); ``rater_map`` maps Label Studio
    users -- e-mail, username or user id -- to study raters (``{"ana@x.org": "onc_a"}``).
    """

    schema: Schema = study.schema
    rnd = study.round(round_number)
    raters = list(study.raters)
    from_export = list(from_export)
    if from_export:
        read = _read_exports(study, rnd, from_export, client, rater_map)
    else:
        read = _read_server(
            study, rnd, client, write=write, progress=progress, jobs=jobs, item_key=item_key, rater_map=rater_map
        )
    sources, user_raters, others, server_users = read.sources, read.user_raters, read.others, read.server_users
    items_data = _map_items(sources, item_key) if item_key else {}
    if rater_map:
        if server_users is None and client is not None:
            server_users = client.users()
        user_raters, others = map_users(rater_map, raters, user_raters, others, server_users)
    units = _unit_ids(study)
    res = collect(sources, schema, raters, rnd.number, user_raters=user_raters, known_users=others, units=units)
    res.items_data = items_data
    res.summary["warnings"] = read.warnings + res.summary["warnings"] + rule_warnings(res.ratings, schema, raters)
    res.summary["mode"] = rnd.mode
    res.summary["source"] = read.origin
    res.summary["projects"] = dict(rnd.projects)
    access_check = read.access_check
    if access_check is not None:
        from goldboard.annotate.blinding import describe_access

        res.summary["blinding"] = access_check
        res.summary["warnings"] = res.summary["warnings"] + (
            [] if access_check.get("enforced") or access_check.get("note") else [describe_access(access_check)]
        )
        if write:
            rnd.access = {**rnd.access, "pull": access_check}
            study.save()
    if write:
        _write_pull(study, rnd, res, sources, from_export=bool(from_export))
    return res


@dataclass(frozen=True)
class _Read:
    """What a pull read: the sources, who is who on the server, where from, and the reader's warnings."""

    sources: list[Source]
    user_raters: dict[int, str]
    others: dict[int, str]
    origin: Any  # the server URL, or one record per export file
    warnings: list[str]
    access_check: dict | None = None  # the blinding check (server pulls of blinded rounds)
    server_users: list[dict] | None = None


def _read_exports(
    study: Any,
    rnd: Any,
    from_export: list[str | Path | tuple[str, str | Path]],
    client: Any,
    rater_map: dict[str, str] | None,
) -> _Read:
    """The sources of hand-downloaded export files, each checked against the round (owner, tasks given twice)."""
    schema: Schema = study.schema
    raters = list(study.raters)
    project_rater = {int(pid): r for r, pid in rnd.projects.items() if r != "*"}
    user_raters, others = _export_user_ids(study, rnd, client, rater_map)
    sources: list[Source] = []
    origin: list[dict] = []
    warnings: list[str] = []
    seen_tasks: dict[Any, tuple[int, str]] = {}  # Label Studio task id -> the export that holds it
    for n_spec, spec in enumerate(from_export):
        rater, path = spec if isinstance(spec, tuple) else (None, spec)
        if rater is not None and rater not in raters:
            raise GoldboardError(
                f"--from-export {rater}={path}: {rater!r} is not a rater of this study "
                f"({', '.join(raters)}){did_you_mean(rater, raters)}"
            )
        tasks, fmt = read_export_file(path, schema)
        label = f"{rater}={path}" if rater else str(path)
        _check_export_owner(tasks, label, rater, rnd, project_rater, user_raters)
        for t in tasks:
            tid = t.get("id")
            if tid is None:
                continue
            if tid in seen_tasks and seen_tasks[tid][0] != n_spec:
                raise GoldboardError(
                    f"--from-export {label}: holds the same Label Studio tasks as {seen_tasks[tid][1]} "
                    f"(task {tid}): one export given twice? Give each rater's own project export once"
                )
            seen_tasks[tid] = (n_spec, label)
        origin.append({"file": str(path), "format": fmt, "rater": rater})
        if fmt == "JSON_MIN":
            warnings.append(f"{path}: JSON_MIN export has no skipped annotations and no project id")
        if rater is None and rnd.mode == "blinded":
            by_pid: dict[Any, list[dict]] = defaultdict(list)
            for t in tasks:
                by_pid[t.get("project")].append(t)
            for pid, ts in by_pid.items():
                if pid is not None and _int_or(pid) in project_rater:
                    sources.append(Source(ts, int(pid), project_rater[int(pid)], str(path)))
                elif user_raters:
                    sources.append(Source(ts, pid, None, str(path)))  # attribute by completed_by
                else:
                    raise GoldboardError(
                        f"{path}: cannot tell whose project this export is from "
                        f"(no project id of round {rnd.number}); give it as RATER=FILE"
                    )
        else:
            pid = rnd.projects.get(rater) if rater else rnd.projects.get("*")
            sources.append(Source(tasks, pid, rater, str(path)))
    return _Read(sources, user_raters, others, origin, warnings)


def _export_user_ids(
    study: Any, rnd: Any, client: Any, rater_map: dict[str, str] | None
) -> tuple[dict[int, str], dict[int, str]]:
    """``(user id -> rater, other user id -> name)`` for exports: the client, the embedded server's
    credentials, or (a shared round's annotators) the server's user list; empty when not needed."""
    raters = list(study.raters)
    explicit = dict(getattr(study, "extra", {}).get("rater_users", {}) or {})
    if client is not None:
        return rater_user_ids(client, raters, explicit)
    with_creds = _embedded_ids(study, raters)
    if with_creds:
        return with_creds
    if rnd.mode == "shared" and not all(k.isdigit() for k in (rater_map or {"": ""})):
        # annotators -> raters needs the server's user list (unless --rater gives user ids)
        try:
            return rater_user_ids(connect(study), raters, explicit)
        except LabelStudioError as exc:
            raise GoldboardError(
                f"shared round {rnd.number}: mapping the export's annotators to raters "
                f"needs the server's user list, which failed: {exc}"
            ) from None
    return {}, {}


def _read_server(
    study: Any,
    rnd: Any,
    client: Any,
    *,
    write: bool,
    progress: bool,
    jobs: int | None,
    item_key: str | None,
    rater_map: dict[str, str] | None,
) -> _Read:
    """The round's projects exported from the server (``jobs`` at once), with the blinding check when writing."""
    schema: Schema = study.schema
    raters = list(study.raters)
    explicit = dict(getattr(study, "extra", {}).get("rater_users", {}) or {})
    warnings: list[str] = []
    access_check: dict | None = None
    server_users: list[dict] | None = None
    if not rnd.projects:
        raise GoldboardError(f"{study.path}: round {rnd.number} has no Label Studio projects (push first)")
    own_client = client is None
    client = client or connect(study)
    origin = client.url
    user_raters, others = rater_user_ids(client, raters, explicit)
    items = sorted(rnd.projects.items())
    xmls: list[str] = []
    try:
        case_level = study.round_item_kind(rnd) == "case"
        xmls.append(to_label_studio_xml(schema, show_output=not case_level))
        if case_level and not getattr(rnd, "item_kind", ""):  # pushed before rounds recorded their kind
            xmls.append(to_label_studio_xml(schema))
    except Exception:  # pragma: no cover - config generation is push's concern
        pass

    def export(item: tuple[str, int]) -> tuple[Source, str | None]:
        r, pid = item
        proj = client.project(pid)
        warn = None
        if xmls and not any(configs_match(proj["label_config"], x) for x in xmls):
            warn = (
                f"project {pid} ({r}): label config on the server differs from schema "
                f"{schema.name} v{schema.version}; every result is validated against the schema"
            )
        # goldboard's own projects: keep only what collect reads (the whole task for --item-key,
        # whose task data become units)
        tasks = client.export(pid, each=None if item_key else slim_task)
        return Source(tasks, pid, None if r == "*" else r, f"project {pid}"), warn

    sources: list[Source] = []
    workers = jobs_for(client, jobs, len(items))
    for src, warn in _exports(export, items, workers, progress):
        sources.append(src)
        if warn:
            warnings.append(warn)
    if rnd.mode == "blinded" and write:
        access_check = _check_access_at_pull(client, study, rnd, sources)
    if rater_map:
        server_users = client.users()
    if own_client:
        client.close()
    return _Read(sources, user_raters, others, origin, warnings, access_check, server_users)


def _write_pull(study: Any, rnd: Any, res: PullResult, sources: list[Source], *, from_export: bool) -> None:
    """Write ratings.csv, invalid.csv and pull.json atomically (keeping table ratings and uncovered raters)."""
    paths = {
        "ratings": study.ratings_path(rnd.number),
        "invalid": study.invalid_path(rnd.number),
        "summary": study.pull_report_path(rnd.number),
    }
    res.ratings = keep_table_ratings(paths["ratings"], res)
    if from_export and rnd.mode == "blinded":
        _keep_uncovered_raters(paths, res, _covered_raters(sources, res))
    write_csv_atomic(res.ratings, paths["ratings"])
    write_csv_atomic(res.invalid, paths["invalid"])
    write_text_atomic(paths["summary"], json.dumps(res.summary, indent=1, ensure_ascii=False, default=str) + "\n")
    res.paths = paths


def _check_access_at_pull(client: Any, study: Any, rnd: Any, sources: list[Source]) -> dict:
    """The blinding check of :mod:`goldboard.annotate.blinding` at pull time, with one
    annotation id per project (so reading an annotation by id is tried too)."""
    from goldboard.annotate.blinding import check_round_access

    ann_ids: dict[int, int] = {}
    for src in sources:
        for t in src.tasks:
            a = next((a for a in t.get("annotations") or [] if isinstance(a, dict) and a.get("id")), None)
            if a is not None and src.project_id is not None:
                ann_ids[int(src.project_id)] = int(a["id"])
                break
    return check_round_access(client, study, rnd, when="pull", annotation_ids=ann_ids)


def _covered_raters(sources: list[Source], res: PullResult) -> set[str]:
    """The raters whose blinded projects this pull read: named exports, and the raters an
    unnamed export's annotations were attributed to."""
    covered = {s.rater for s in sources if s.rater}
    if any(not s.rater for s in sources):
        covered |= set(res.ratings["rater"].astype(str)) | set(res.invalid["rater"].astype(str))
    return covered - {""}


def _keep_uncovered_raters(paths: dict[str, Path], res: PullResult, covered: set[str]) -> None:
    """``pull --from-export onc_a=FILE`` reads onc_a's project only: the round's ratings (and
    held-out annotations) of the other raters stay as the last pull left them -- a partial
    pull never deletes a rater's ratings."""
    kept: dict[str, int] = {}
    for key, cols in (("ratings", RATINGS_COLUMNS), ("invalid", INVALID_COLUMNS)):
        path = paths[key]
        if not path.exists():
            continue
        old = read_ratings_csv(path) if key == "ratings" else read_csv_frame(path, " (invalid annotations)")
        if not len(old) or "rater" not in old.columns:
            continue
        mine = getattr(res, key)
        keep = old[~old["rater"].astype(str).isin(covered)]
        if key == "ratings":  # table rows were already kept by keep_table_ratings
            keep = keep[~is_table_row(keep)]
        if not len(keep):
            continue
        setattr(res, key, pd.concat([mine, keep.reindex(columns=cols, fill_value="")], ignore_index=True))
        for r in keep["rater"].astype(str):
            kept[r] = kept.get(r, 0) + 1
    if kept:
        res.summary["kept_from_previous_pull"] = kept
        res.summary.setdefault("warnings", []).append(
            "kept the earlier pull's rows of raters whose projects this pull did not read: "
            + ", ".join(f"{r} ({n})" for r, n in sorted(kept.items()))
        )
    res.summary["rating_rows"] = int(len(res.ratings))


def is_table_row(df: pd.DataFrame) -> pd.Series:
    """Rows of a ratings table that came from a ratings table (``pull --from-table``):
    ``annotation_id`` = ``SOURCE:ROW``, no task or project id."""
    aid = df["annotation_id"].astype(str)
    return (df["task_id"].astype(str) == "") & (df["project_id"].astype(str) == "") & aid.str.contains(":")


def keep_table_ratings(path: Path, res: PullResult) -> pd.DataFrame:
    """A Label Studio pull rewrites the round's ratings; ratings that entered the round from a
    ratings table stay (an item x rater rated in both keeps the Label Studio rating and the
    table's is named in a warning -- it stays in the table file and study.toml names that file)."""
    if not path.exists():
        return res.ratings
    old = read_ratings_csv(path)
    if not len(old):
        return res.ratings
    tab = old[is_table_row(old)]
    if not len(tab):
        return res.ratings
    have = set(zip(res.ratings["item_id"].astype(str), res.ratings["rater"].astype(str)))
    clash = [(i, r) in have for i, r in zip(tab["item_id"].astype(str), tab["rater"].astype(str))]
    n_clash = sum(clash)
    if n_clash:
        res.summary.setdefault("warnings", []).append(
            f"{n_clash} rating rows from ratings tables are replaced by Label Studio ratings of the same item and rater"
        )
    kept = tab[[not c for c in clash]]
    out = pd.concat([res.ratings, kept[RATINGS_COLUMNS]], ignore_index=True) if len(kept) else res.ratings
    res.summary["table_rating_rows_kept"] = int(len(kept))
    res.summary["rating_rows"] = int(len(out))
    return out


def _check_export_owner(
    tasks: list[dict],
    label: str,
    rater: str | None,
    rnd: Any,
    project_rater: dict[int, str],
    user_raters: dict[int, str],
) -> None:
    """Refuse an export that is not what the user says it is: tasks of a project that is not
    in this round, or (``RATER=FILE``) of another rater's project -- exports swapped between
    raters -- or, without project ids (JSON_MIN), annotated only by another rater's account."""
    projects = ", ".join(f"{k}={v}" for k, v in rnd.projects.items()) or "none"
    pids = sorted({_int_or(t.get("project")) for t in tasks if t.get("project") is not None})
    for pid in pids:
        owner = project_rater.get(pid)
        if pid not in project_rater and pid != rnd.projects.get("*"):
            raise GoldboardError(
                f"--from-export {label}: its tasks are from Label Studio project {pid}, which is not a project "
                f"of round {rnd.number} (projects: {projects}); an export of another round or study?"
            )
        if rater is not None and owner is not None and owner != rater:
            raise GoldboardError(
                f"--from-export {label}: its tasks are from project {pid}, which is {owner}'s project in round "
                f"{rnd.number} ({rater}'s is {rnd.projects.get(rater)}); exports swapped between raters? "
                f"Give it as {owner}={label.split('=', 1)[-1]}"
            )
    if rater is None or pids or not user_raters:
        return
    by = Counter(
        user_raters.get(_user_id(a.get("completed_by")), "")
        for t in tasks
        for a in (t.get("annotations") or [])
        if isinstance(a, dict)
    )
    raters_seen = {r for r in by if r}
    if raters_seen and rater not in raters_seen and len(raters_seen) == 1:
        other = next(iter(raters_seen))
        raise GoldboardError(
            f"--from-export {label}: every annotation in it was made by {other}'s account, not {rater}'s; "
            f"exports swapped between raters? Give it as {other}={label.split('=', 1)[-1]}"
        )


UNIT_ID_KEYS = ("item_id", "case_id", "output_id", "model")


def _unit_ids(study: Any) -> pd.DataFrame | None:
    """item_id, case_id, output_id and model of every unit pushed (``units.jsonl`` checked as
    :meth:`Study.units` checks it, but only these four keys kept: the case and output texts of
    every unit are never held as a table)."""
    path = getattr(study, "units_path", None)
    if path is None:
        return study.units() if hasattr(study, "units") else None
    path = Path(path)
    if not path.exists():
        return None
    rows = []
    for i, rec in iter_jsonl(path, " in the units file"):
        if not isinstance(rec, dict) or "item_id" not in rec:
            raise GoldboardError(f"{path}:{i}: not an item record (a JSON object with an item_id)")
        rows.append({k: "" if rec.get(k) is None else str(rec.get(k)) for k in UNIT_ID_KEYS})
    return pd.DataFrame(rows, columns=list(UNIT_ID_KEYS))


def _embedded_ids(study: Any, raters: list[str]) -> tuple[dict[int, str], dict[int, str]] | None:
    if getattr(study, "url", ""):
        return None
    from goldboard.annotate import server as srv  # lazy: the server module (tomli_w) only when needed

    try:
        creds = srv.read_credentials(getattr(study, "data_dir", "") or None)
    except GoldboardError:
        return None
    ids = creds.user_ids()
    return ({u: n for u, n in ids.items() if n in raters}, {u: n for u, n in ids.items() if n not in raters})


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


#: what :func:`collect` reads of an exported task, of its data and of each annotation
TASK_KEYS = ("id", "project")
DATA_KEYS = ("item_id", "case_id", "output_id", "model")
ANNOTATION_KEYS = ("id", "completed_by", "result", "was_cancelled", "lead_time", "created_at", "updated_at")


class PackedResult(bytes):
    """An annotation's ``result`` kept as its UTF-8 JSON (a few hundred bytes instead of a few KB
    of dicts) between the export and :func:`collect`, which unpacks it where it reads it."""


def _pack(result: Any) -> Any:
    return PackedResult(json.dumps(result, ensure_ascii=False).encode("utf-8")) if isinstance(result, list) else result


def _unpack(result: Any) -> Any:
    return json.loads(result) if isinstance(result, PackedResult) else result


def slim_task(t: Any) -> Any:
    """One exported task with only what :func:`collect` reads (the case and output texts,
    predictions and Label Studio's bookkeeping dropped); anything else is kept as it is."""
    if not isinstance(t, dict):
        return t
    slim = {k: t[k] for k in TASK_KEYS if k in t}
    data = t.get("data")
    slim["data"] = {k: data[k] for k in DATA_KEYS if k in data} if isinstance(data, dict) else data
    anns = t.get("annotations")
    if isinstance(anns, list):
        slim["annotations"] = [_slim_annotation(a) if isinstance(a, dict) else a for a in anns]
    else:
        slim["annotations"] = anns
    return slim


def _slim_annotation(a: dict) -> dict:
    out = {k: a[k] for k in ANNOTATION_KEYS if k in a}
    if "result" in out:
        out["result"] = _pack(out["result"])
    return out


def slim_export(tasks: list) -> list:
    """:func:`slim_task` of every task of an export."""
    return [slim_task(t) for t in tasks]


def _exports(fn: Any, items: list, workers: int, progress: bool) -> list:
    """``[fn(i) for i in items]`` in order, ``workers`` at once; the first error is raised after
    every started export finished."""
    if workers <= 1:
        return [fn(i) for i in _progress(items, progress, "Exporting projects")]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="goldboard-export") as ex:
        futures = [ex.submit(fn, i) for i in items]
        bar = _progress(futures, progress, "Exporting projects")
        for f in bar:
            f.exception()  # wait, in order
    for f in futures:
        if f.exception() is not None:
            raise f.exception()
    return [f.result() for f in futures]


def _progress(items: list, show: bool, label: str):
    if not show or len(items) < 2:
        return items
    from goldboard.text import progress_bar

    return progress_bar(items, desc=label, unit="project", leave=False)


__all__ = [
    "pull",
    "collect",
    "parse_result",
    "read_export_file",
    "slim_export",
    "slim_task",
    "tasks_from_json_min",
    "rater_user_ids",
    "map_users",
    "configs_match",
    "Source",
    "PullResult",
    "INVALID_COLUMNS",
]
