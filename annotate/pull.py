"""Pull: Label Studio annotations -> the tidy ratings table, validated against the schema.

The Label Studio source of the ratings intake: this module reads a server's projects (or
hand-downloaded exports), :mod:`goldboard.cases.intake.sources.label_studio` turns each task into
intake records, the intake core (:mod:`goldboard.cases.intake.core`) runs the steps below, and
:func:`goldboard.workflows.intake.pull` puts the read into the round.

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
import warnings
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldboard.adjudicate.rules import rule_warnings
from goldboard.annotate.client import ServerError, connect, jobs_for
from goldboard.annotate.config_match import configs_match
from goldboard.cases.intake.core import INVALID_COLUMNS, IntakeResult, int_or, validate
from goldboard.cases.intake.core import collect as intake_collect
from goldboard.cases.intake.files import nested_value
from goldboard.cases.intake.rounds import LABEL_STUDIO, sources_of
from goldboard.cases.intake.sources import label_studio as ls_source
from goldboard.cases.ratings import read_ratings_csv
from goldboard.errors import GoldboardError, GoldboardWarning, LabelStudioError, ParamError, check_rater_map
from goldboard.fileio import escape_lone_surrogates, iter_jsonl, surrogates_kept_note
from goldboard.label_configs.schema import Schema
from goldboard.label_configs.xml import TASK_DATA_KEYS, to_label_studio_xml
from goldboard.text import did_you_mean

if TYPE_CHECKING:  # only for the annotations
    from goldboard.study import Study

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
    The Label Studio source reads the result (:func:`ls_source.entries`), the intake core
    validates it (:func:`goldboard.cases.intake.core.validate`).
    """
    found, unreadable = ls_source.entries(result, schema)
    if unreadable:
        return {}, [unreadable]
    return validate(found, schema)


# --------------------------------------------------------------------------- exports


def tasks_from_json_min(rows: list[dict], schema: Schema) -> list[dict]:
    """Convert a ``JSON_MIN`` export (one flat row per annotation, choices flattened)
    into full-JSON-shaped tasks.  Every key that is neither annotation metadata nor a schema
    field is task data (kept whole: a project goldboard did not create has its own, e.g.
    ``image``); such a key holding an object or list (a control's answer) also becomes a result
    with that ``from_name``, so validation reports it as an unknown field."""

    data_keys = set(TASK_DATA_KEYS) | {f"option_{o}" for o in schema.display.options}
    fields = {f.name: f for f in schema.fields}
    tasks: dict[Any, dict] = {}
    for row in rows:
        tid = row.get("id")
        # issue 33: the task data kept whole (a project goldboard did not create has its own keys: image, ...)
        data = {k: v for k, v in row.items() if k not in JSON_MIN_META and k not in fields}
        task = tasks.setdefault(tid, {"id": tid, "data": data, "annotations": []})
        if row.get("annotation_id") is None and row.get("annotator") is None:
            continue  # a task without annotation
        result = []
        for k, v in row.items():
            if k in data_keys or k in JSON_MIN_META or (k not in fields and not isinstance(v, (dict, list))):
                continue  # task data, or annotation metadata (a control's answer is an object or a list)
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
        what = f"not JSON: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else "not UTF-8 text"
        if path.suffix.lower() in (".csv", ".tsv"):  # Label Studio's CSV/TSV export: it drops who annotated what
            what += "; a CSV/TSV export: export the project as JSON (or JSON_MIN) instead"
        raise GoldboardError(f"{path}{where}: not a Label Studio JSON export ({what})") from None
    except RecursionError:
        raise GoldboardError(f"{path}: not a Label Studio JSON export (nested too deeply to read)") from None
    except IsADirectoryError:
        raise GoldboardError(f"{path}: is a folder, not a file") from None
    if not isinstance(data, list):
        raise GoldboardError(f"{path}: a Label Studio export is a JSON array of tasks")
    data, halves = escape_lone_surrogates(data)  # half an emoji in a rationale: kept whole, said so
    if halves:
        warnings.warn(GoldboardWarning(surrogates_kept_note(str(path), halves)), stacklevel=2)
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


PullResult = IntakeResult


def collect(
    sources: Iterable[Source],
    schema: Schema,
    raters: list[str],
    round_number: int,
    *,
    user_raters: dict[int, str] | None = None,
    known_users: dict[int, str] | None = None,
    units: pd.DataFrame | None = None,
    item_key: str | None = None,
) -> PullResult:
    """Attribute, validate and deduplicate the annotations of ``sources`` (Label Studio tasks):
    each task read by :mod:`goldboard.cases.intake.sources.label_studio`, then the intake core
    (:func:`goldboard.cases.intake.core.collect`).  Pure: no I/O."""
    shown = (sh for src in sources for sh in ls_source.shown(src.tasks, schema, src.project_id, src.rater, item_key))
    return intake_collect(
        shown, schema, raters, round_number, user_raters=user_raters, known_users=known_users, units=units
    )


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


def _map_items(sources: list[Source], item_key: str, *, key_wins: bool = True) -> tuple[dict[str, dict], list[str]]:
    """``--item-key``: each task's item is its ``data[item_key]`` (a task without it keeps its
    ``item_id``); ``key_wins`` ``False`` (a round goldboard pushed, whose tasks carry goldboard's
    own ``item_id``): only tasks without ``item_id`` take the key.  Returns ``(item -> task data,
    warnings)``: a task whose ``item_id`` differs from the key the user named is said once, never
    used silently instead of it (campaign 7b X08)."""
    out: dict[str, dict] = {}
    differ: list[tuple[Any, str, str]] = []
    for src in sources:
        for task in src.tasks:
            data = task.get("data") or {}
            where = f"{src.label or f'project {src.project_id}'}: task {task.get('id')}"
            own = ls_source.task_item(data.get("item_id"), where).strip()
            if key_wins or not own:
                key = ls_source.task_item(nested_value(data, item_key), where, item_key).strip()  # dotted: issue 33
                if key and key != own:
                    if own and item_key != "item_id":
                        differ.append((task.get("id"), own, key))
                    task["data"] = data = {**data, "item_id": key}
            item = ls_source.task_item(data.get("item_id"), where)
            if item:
                out.setdefault(item, data)
    warnings = []
    if differ:
        tid, own, key = differ[0]
        warnings.append(
            f"{len(differ)} task(s) also hold a data.item_id that differs from their {item_key} (task {tid}: "
            f"item_id {own!r}, {item_key} {key!r}): items are named by --item-key {item_key}, as given"
        )
    return out, warnings


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
                raise ParamError(
                    "{rater_map} {key}={rater}: no Label Studio user {name}{hint}{users}",
                    key=key,
                    rater=rater,
                    name=repr(key),
                    hint=did_you_mean(key, known),
                    users=f" (users: {', '.join(known[:10])})"
                    if known
                    else "; give the user id instead (e.g. 17=onc_a)",
                )
            if len(hits) > 1:
                raise ParamError(
                    "{rater_map} {key}={rater}: {name} matches {n} users; give the user id",
                    key=key,
                    rater=rater,
                    name=repr(key),
                    n=len(hits),
                )
        uid = hits[0]
        for u, r in list(user_raters.items()):
            if r == rater and u != uid:  # the explicit mapping wins over an automatic one
                others[u] = r
                del user_raters[u]
        user_raters[uid] = rater
        others.pop(uid, None)
    return user_raters, others


def read_pull(
    study: Study,
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
    """Read a round's annotations (Label Studio's source of the round intake: nothing is written;
    :func:`goldboard.workflows.intake.pull` puts the read into ``rounds/N/ratings.csv``, invalid.csv
    and pull.json).  ``write``: the read is for a write (a blinded round's access is checked).

    ``from_export``: hand-downloaded export files instead of the server; an item may be
    ``(rater, path)`` to say whose project the file is (needed for a blinded round when
    the file has no project id, i.e. JSON_MIN, and the annotators' ids are unknown).
    ``jobs``: projects exported at once (None: the server's app workers when goldboard knows
    them -- the embedded server's ``--workers`` -- else 1).

    Projects goldboard did not create: ``item_key`` names the task data key that holds the
    item id (e.g. ``case_id``; it wins over an ``item_id`` the data also hold, with a warning,
    except in a round goldboard pushed); ``rater_map`` maps Label Studio
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
    if item_key or from_export:  # an id holding a hidden character, before _map_items strips the ids
        ls_source.check_hidden_task_ids([(src.label or "project", src.tasks) for src in sources], item_key)
    items_data, key_warnings = _map_items(sources, item_key, key_wins=not rnd.units) if item_key else ({}, [])
    if from_export:  # what the other file sources are refused for (nothing written)
        ls_source.check_export([(src.label, src.tasks) for src in sources], item_key)
    elif item_key:  # a hand-made project's ids come from its task data: checked as an export's
        ls_source.check_task_ids([(src.label or "project", src.tasks) for src in sources], item_key)
    if rater_map:
        if server_users is None and client is not None:
            server_users = client.users()
        user_raters, others = map_users(rater_map, raters, user_raters, others, server_users)
    units = _unit_ids(study)
    res = collect(
        sources, schema, raters, rnd.number, user_raters=user_raters, known_users=others, units=units, item_key=item_key
    )
    res.items_data = items_data
    _check_not_in_other_round(study, rnd.number, res.ratings, ", ".join(dict.fromkeys(src.label for src in sources)))
    if from_export:
        ls_source.check_some_valid(res.summary, ", ".join(dict.fromkeys(src.label for src in sources)))
    res.summary["warnings"] = (
        read.warnings + key_warnings + res.summary["warnings"] + rule_warnings(res.ratings, schema, raters)
    )
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
    if from_export and rnd.mode == "blinded":
        res.read_raters = _covered_raters(sources, res)
    return res


def _covered_raters(sources: list[Source], res: PullResult) -> set[str]:
    """The raters whose blinded projects this pull read: named exports, and the raters an
    unnamed export's annotations were attributed to."""
    covered = {s.rater for s in sources if s.rater}
    if any(not s.rater for s in sources):
        covered |= set(res.ratings["rater"].astype(str)) | set(res.invalid["rater"].astype(str))
    return covered - {""}


def _check_not_in_other_round(study: Study, round_number: int, ratings: pd.DataFrame, labels: str) -> None:
    """Refuse Label Studio annotations another round already holds (the same rater, task and
    annotation id in that round's ratings): round 1's export pulled again as round 2 made a
    test-retest of each annotation with itself (campaign 7b X21).  A later round's ratings are
    new annotations (a new project, or new annotations in it), never the ones pulled before."""
    if not len(ratings):
        return
    mine = ratings[(sources_of(ratings) == LABEL_STUDIO) & (ratings["annotation_id"].astype(str) != "")]
    keys = pd.Index(_annotation_keys(mine).unique())
    if not len(keys):
        return
    for other in sorted(study.rounds, key=lambda r: r.number):
        path = study.ratings_path(other.number)
        if other.number == round_number or not path.exists():
            continue
        old = read_ratings_csv(path)
        old_keys = _annotation_keys(old[sources_of(old) == LABEL_STUDIO])
        same = sorted(keys[keys.isin(old_keys)])
        if same:
            rater, task, ann = same[0].split("\x1f")
            raise GoldboardError(
                f"{labels}: {len(same)} of its annotations were already pulled into round {other.number} "
                f"({path}; e.g. annotation {ann} by {rater} on task {task}): the same annotations given for "
                f"round {round_number}? A round's ratings are new annotations (a retest round is annotated "
                f"anew, in a new project); nothing pulled"
            )


def _annotation_keys(df: pd.DataFrame) -> pd.Series:
    """``rater<US>task_id<US>annotation_id`` of each row: which rater's Label Studio annotation it is."""
    return df["rater"].astype(str) + "\x1f" + df["task_id"].astype(str) + "\x1f" + df["annotation_id"].astype(str)


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
    study: Study,
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
            raise ParamError(
                "{from_export} {rater}={path}: {name} is not a rater of this study ({raters}){hint}",
                rater=rater,
                path=path,
                name=repr(rater),
                raters=", ".join(raters),
                hint=did_you_mean(rater, raters),
            )
        tasks, fmt = read_export_file(path, schema)
        label = f"{rater}={path}" if rater else str(path)
        for t in tasks:  # before the owner check: one export given twice is that, whatever its project ids
            tid = t.get("id")
            if tid is None:
                continue
            if tid in seen_tasks and seen_tasks[tid][0] != n_spec:
                raise ParamError(
                    "{from_export} {label}: holds the same Label Studio tasks as {first} "
                    "(task {tid}): one export given twice? Give each rater's own project export once",
                    label=label,
                    first=seen_tasks[tid][1],
                    tid=tid,
                )
            seen_tasks[tid] = (n_spec, label)
        _check_export_owner(tasks, label, rater, rnd, project_rater, user_raters)
        origin.append({"file": str(path), "format": fmt, "rater": rater})
        if fmt == "JSON_MIN":
            warnings.append(f"{path}: JSON_MIN export has no skipped annotations and no project id")
        if rater is None and rnd.mode == "blinded":
            by_pid: dict[Any, list[dict]] = defaultdict(list)
            for t in tasks:
                by_pid[t.get("project")].append(t)
            for pid, ts in by_pid.items():
                if pid is not None and int_or(pid) in project_rater:
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
    study: Study, rnd: Any, client: Any, rater_map: dict[str, str] | None
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
    study: Study,
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
        halves = 0

        def each(task: Any) -> Any:
            nonlocal halves
            task, n = escape_lone_surrogates(task)  # half an emoji in a rationale: kept whole, said so
            halves += n
            return task if item_key else slim_task(task)

        try:
            tasks = client.export(pid, each=each)
        except ServerError as exc:
            if "surrogates not allowed" not in str(exc):
                raise
            # half an emoji in a text: Label Studio's export (and every read of the task) fails with HTTP 500
            tasks, db = client.export_from_database(pid, each=each)
            read = f"project {pid} ({r}): Label Studio cannot export it (a text holds half an emoji); read from {db}"
            warn = f"{warn}; {read}" if warn else read
        if halves:
            kept = surrogates_kept_note(f"project {pid} ({r})", halves)
            warn = f"{warn}; {kept}" if warn else kept
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


def _check_access_at_pull(client: Any, study: Study, rnd: Any, sources: list[Source]) -> dict:
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
    pids = sorted({int_or(t.get("project")) for t in tasks if t.get("project") is not None})
    for pid in pids:
        owner = project_rater.get(pid)
        if pid not in project_rater and pid != rnd.projects.get("*"):
            raise ParamError(
                "{from_export} {label}: its tasks are from Label Studio project {pid}, which is not a project "
                "of round {n} (projects: {projects}); an export of another round or study?",
                label=label,
                pid=pid,
                n=rnd.number,
                projects=projects,
            )
        if rater is not None and owner is not None and owner != rater and rnd.projects.get(rater) != pid:
            raise ParamError(
                "{from_export} {label}: its tasks are from project {pid}, which is {owner}'s project in round "
                "{n} ({rater}'s is {theirs}); exports swapped between raters? Give it as {owner}={path}",
                label=label,
                pid=pid,
                owner=owner,
                n=rnd.number,
                rater=rater,
                theirs=rnd.projects.get(rater),
                path=label.split("=", 1)[-1],
            )
    if rater is None or pids or not user_raters:
        return
    by = Counter(
        user_raters.get(ls_source.user_id(a.get("completed_by")), "")
        for t in tasks
        for a in (t.get("annotations") or [])
        if isinstance(a, dict)
    )
    raters_seen = {r for r in by if r}
    if raters_seen and rater not in raters_seen and len(raters_seen) == 1:
        other = next(iter(raters_seen))
        raise ParamError(
            "{from_export} {label}: every annotation in it was made by {other}'s account, not {rater}'s; "
            "exports swapped between raters? Give it as {other}={path}",
            label=label,
            other=other,
            rater=rater,
            path=label.split("=", 1)[-1],
        )


UNIT_ID_KEYS = ("item_id", "case_id", "output_id", "model")


def _unit_ids(study: Study) -> pd.DataFrame | None:
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


def _embedded_ids(study: Study, raters: list[str]) -> tuple[dict[int, str], dict[int, str]] | None:
    if getattr(study, "url", ""):
        return None
    from goldboard.annotate import server as srv  # lazy: the server module (tomli_w) only when needed

    try:
        creds = srv.read_credentials(getattr(study, "data_dir", "") or None)
    except GoldboardError:
        return None
    ids = creds.user_ids()
    return ({u: n for u, n in ids.items() if n in raters}, {u: n for u, n in ids.items() if n not in raters})


#: what :func:`collect` reads of an exported task, of its data and of each annotation
TASK_KEYS = ("id", "project")
DATA_KEYS = ("item_id", "case_id", "output_id", "model")
ANNOTATION_KEYS = (
    "id",
    "completed_by",
    "result",
    "was_cancelled",
    "lead_time",
    "created_at",
    "updated_at",
    "reviews",
    "review_result",
)


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
        out["result"] = ls_source.pack(out["result"])
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
    "read_pull",
    "rule_warnings",
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
