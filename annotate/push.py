"""Push: annotation units -> Label Studio projects, blinded by default, idempotent.

**Blinded** (default): one project per rater per round, the same tasks in each.
On the embedded server each rater's project lives in that rater's own Label Studio
organization, so the server itself refuses every other rater (project list, project
page, tasks, annotations by id); after the import goldboard checks this with each
rater's own account and records the result in the round (``[rounds.access.push]``, see
:mod:`goldboard.annotate.blinding`).  On your team's Label Studio, where goldboard holds
no rater accounts, the blinding is by *separate projects* only: each rater is told the
URL of their own project and must annotate only there.  Pull checks it either way: an
annotation in a rater's project by any other known user is held out, never credited.

**Shared** (``--shared``): one project, every rater annotates every
task (``maximum_annotations`` = number of raters), for studies without blinding.

The label config is :func:`goldboard.label_configs.xml.to_label_studio_xml` of
the study's schema; on every later push each project's config on the server must
still match it (else :class:`~goldboard.annotate.client.ConfigMismatch`).

Idempotent: before importing, the project's existing tasks are listed
(``include=id,data``, one request per 1000 tasks; skipped for a project this push
just created) and only missing ``item_id`` s are imported, in batches of up to
:data:`DEFAULT_BATCH_BYTES` of JSON per request (far below Label Studio's
``DATA_UPLOAD_MAX_MEMORY_SIZE``, 250 MB; ``batch_size`` caps the tasks per request
too), never retried by the SDK.  When the server has several app workers (the
embedded server started with ``--workers``, or ``jobs=``), the raters' projects
are listed and filled concurrently, one thread per project.  A push that died half-way (server gone, Ctrl-C) is completed by
running it again: exact task count, no duplicates.  An item whose text differs
from what the server already shows is an error (an item never changes once
pushed).  Project ids are written to study.toml as soon as a project exists;
``units.jsonl`` (all units ever pushed, with the rounds they are in) is
rewritten atomically.
"""

from __future__ import annotations

import html
import json
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.annotate.client import Client, ConfigChanged, ProjectGone, ProjectNotFound, connect, jobs_for
from goldboard.annotate.pull import configs_match, rater_user_ids
from goldboard.cases.assignment import (
    ASSIGNMENT_COLUMNS,
    Assignment,
    overlap_assignment,
    per_item_assignment,
)
from goldboard.cases.load import load_units
from goldboard.cases.names import check_value_spellings
from goldboard.cases.units import item_kind
from goldboard.errors import GoldboardError, LabelStudioError, ParamError
from goldboard.exports.round_use import RoundUse, read_units_file, round_items, round_use  # noqa: F401 (re-exported)
from goldboard.fileio import write_csv_atomic, write_jsonl_atomic
from goldboard.label_configs.xml import instructions_text, task_data, to_label_studio_xml
from goldboard.study import Study
from goldboard.study_options import free_text_option
from goldboard.text import did_you_mean

#: JSON bytes per import request: one request per few thousand tasks, so push runs near the
#: speed of one bulk import, with a progress bar that still moves
DEFAULT_BATCH_BYTES = 4 * 1024 * 1024
SHARED_KEY = "*"


@dataclass
class PushResult:
    round: int
    mode: str
    url: str
    projects: dict[str, int]
    units: int
    imported: dict[str, int] = field(default_factory=dict)  # key -> tasks created now
    already: dict[str, int] = field(default_factory=dict)  # key -> tasks that were there
    created_projects: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    access: str = ""  # the blinding check, one sentence
    design: dict[str, Any] = field(default_factory=dict)
    #: a case-level round of a schema with a model-output pane (said, so nobody expects the pane)
    case_level_note: str = ""

    def describe(self) -> str:
        lines = [f"round {self.round} ({self.mode}): {self.units} items on {self.url}"]
        if self.case_level_note:
            lines.append(f"  {self.case_level_note}")
        for key, pid in self.projects.items():
            who = "shared project (all raters)" if key == SHARED_KEY else f"{key}"
            new = " (new project)" if key in self.created_projects else ""
            lines.append(
                f"  {who}: {self.url}/projects/{pid}/data{new} -- {self.imported.get(key, 0)} tasks "
                f"imported, {self.already.get(key, 0)} already there"
            )
        d = self.design
        if d.get("kind") == "overlap":
            lines.append(
                f"  design: overlap -- {d['primary']} rates all {d['items']} items; "
                f"{d['double_rated']} ({d['share']:.0%}) are double-rated (seed {d['seed']}"
                + (f", stratified by {d['stratify_by']}" if d.get("stratify_by") else "")
                + ")"
            )
        elif d.get("kind") == "per_item":
            lines.append(
                f"  design: {d['per_item']} raters per item, balanced over rater pairs (seed {d['seed']}"
                + (f", stratified by {d['stratify_by']}" if d.get("stratify_by") else "")
                + "): "
                + ", ".join(f"{r} {n}" for r, n in d.get("assigned", {}).items())
            )
        if self.mode == "blinded" and self.access:
            lines.append(f"  blinding: {self.access}")
        if self.mode == "blinded":
            lines.append(
                "  Give each rater only their own login (`goldboard server login RATER` on the embedded server)."
            )
        for w in self.warnings:
            lines.append(f"  warning: {w}")
        return "\n".join(lines)


def project_title(study_name: str, key: str, round_number: int) -> str:
    """``<rater> · round N · <study>`` (Label Studio allows 3-50 characters)."""
    who = "shared" if key == SHARED_KEY else key
    title = f"{who} · round {round_number} · {study_name}"
    return title if len(title) <= 50 else title[:49] + "…"


_read_units_file = read_units_file  # the name tests/test_text_safety.py reads it by


def _merge_units(study: Study, units: pd.DataFrame, round_number: int) -> list[dict]:
    """All units ever pushed (existing order, then new), each with the rounds it is in."""
    records: dict[str, dict] = {}
    for rec in read_units_file(study.units_path):
        rec["rounds"] = [int(r) for r in (rec.get("rounds") or [])]
        records[str(rec["item_id"])] = rec
    # pandas' JSON writer turns NaN into null and numpy scalars into numbers, nested dicts included
    for rec in json.loads(units.to_json(orient="records", force_ascii=False, double_precision=15)):
        item = str(rec["item_id"])
        prev = records.get(item)
        if prev is not None and str(prev.get("source", "")).startswith("table:"):
            # an item first seen in a ratings table (no case text): the push gives it its text
            rec["rounds"] = sorted(set(prev["rounds"]) | {round_number})
            records[item] = rec
            continue
        if prev is not None:
            for k in ("case_text", "output_text"):
                if not _same_text(k, prev.get(k, ""), rec.get(k, "")):
                    raise GoldboardError(
                        f"{study.units_path}: item {item!r}: {k} differs from the one pushed "
                        f"before; an item never changes once pushed (give it a new id)"
                    )
            rounds = sorted(set(prev["rounds"]) | {round_number})
            prev.update(rec)
            prev["rounds"] = rounds
        else:
            rec["rounds"] = [round_number]
            records[item] = rec
    return list(records.values())


def _same_text(key: str, a: Any, b: Any) -> bool:
    """Task data ``key`` unchanged?  A case text composed before goldboard showed absent case
    fields as "not documented" counts as the same text (the item did not change)."""
    a, b = str(a or ""), str(b or "")
    if a == b:
        return True
    if key == "case_text":
        from goldboard.cases.units import without_not_documented

        return without_not_documented(a) == without_not_documented(b)
    return False


def _strata_values(units: pd.DataFrame, column: str) -> list[Any]:
    if column in units.columns and column not in ("case", "output"):
        vals = units[column].tolist()
    elif "case" in units.columns and any(isinstance(c, dict) and column in c for c in units["case"]):
        vals = [c.get(column) if isinstance(c, dict) else None for c in units["case"]]
    else:
        cols = [c for c in units.columns if c not in ("case", "output", "reference", "prediction")]
        raise ParamError(
            "{stratify_by} {column!r}: not an item column or case field (item columns: {cols})",
            column=column,
            cols=", ".join(cols),
        )
    out = ["" if v is None or (isinstance(v, float) and pd.isna(v)) else str(v) for v in vals]
    items = units["item_id"].tolist() if "item_id" in units.columns else list(range(len(out)))
    # look-alike values are refused; values that differ only in case reach push's warnings
    units.attrs["strata_warnings"] = check_value_spellings(out, lambda i: f"item {items[i]}", column=column)
    return out


def resolve_assignment(
    study: Study,
    units: pd.DataFrame,
    round_number: int,
    *,
    overlap: float | None = None,
    per_item: int | None = None,
    seed: int | None = None,
    stratify_by: str | None = None,
) -> Assignment | None:
    """The round's assignment: drawn now (``overlap``/``per_item``) or the one recorded at the
    round's first push; ``None`` when every rater rates every item."""
    if overlap is not None and per_item is not None:
        raise ParamError("{overlap} and {per_item}: choose one design")
    items = units["item_id"].astype(str).tolist()
    path = study.assignment_path(round_number)
    rnd = next((r for r in study.rounds if r.number == round_number), None)
    recorded = dict(rnd.design) if rnd is not None and rnd.design else None
    if recorded is not None and path.exists():
        asked = overlap is not None or per_item is not None
        same = (
            (overlap is None or (recorded.get("kind") == "overlap" and recorded.get("share") == overlap))
            and (per_item is None or (recorded.get("kind") == "per_item" and recorded.get("per_item") == per_item))
            and (seed is None or recorded.get("seed") == seed)
            and (stratify_by is None or recorded.get("stratify_by") == stratify_by)
        )
        if asked and not same:
            raise ParamError(
                "round {n} already has a {kind} design (seed {seed}); "
                "push a different design to a new round ({round_number} {nxt})",
                n=round_number,
                kind=recorded.get("kind"),
                seed=recorded.get("seed"),
                nxt=max(r.number for r in study.rounds) + 1,
            )
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        table: dict[str, list[str]] = {}
        for it, r in zip(df["item_id"], df["rater"]):
            table.setdefault(it, []).append(r)
        new = [it for it in items if it not in table]
        if new:
            raise ParamError(
                "round {n} has a fixed {kind} assignment ({path}); item {item!r} is "
                "not in it -- push new items to a new round ({round_number} {nxt})",
                n=round_number,
                kind=recorded.get("kind"),
                path=path,
                item=new[0],
                nxt=max(r.number for r in study.rounds) + 1,
            )
        return Assignment(table, recorded)
    if overlap is None and per_item is None:
        return None
    if rnd is not None and rnd.projects:
        raise ParamError(
            "round {n} was pushed without a design (every rater rates every item); push the "
            "design to a new round ({round_number} {nxt})",
            n=round_number,
            nxt=max(r.number for r in study.rounds) + 1,
        )
    if seed is None:
        raise GoldboardError("give a seed so the random draw can be repeated and reported", param="seed")
    strata = _strata_values(units, stratify_by) if stratify_by else None
    if overlap is not None:
        a = overlap_assignment(items, list(study.raters), overlap, seed=seed, strata=strata)
    else:
        a = per_item_assignment(items, list(study.raters), int(per_item), seed=seed, strata=strata)
    if stratify_by:
        a.design["stratify_by"] = stratify_by
    return a


def push(
    study: Study,
    cases_path: str | Path | None = None,
    outputs_path: str | Path | None = None,
    *,
    round_number: int | None = None,
    shared: bool | None = None,
    hide_model: bool | None = None,
    client: Client | None = None,
    units: pd.DataFrame | None = None,
    batch_size: int | None = None,
    progress: bool = True,
    annotations: Mapping[tuple[str, str], list[dict]] | None = None,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
    jobs: int | None = None,
    calibration: bool | None = None,
    guideline_version: str | None = None,
    overlap: float | None = None,
    per_item: int | None = None,
    seed: int | None = None,
    stratify_by: str | None = None,
    add_to_adjudicated_round: bool = False,
) -> PushResult:
    """Push the units of ``cases_path`` (+ ``outputs_path``) to a round's projects.

    Designs (blinded rounds only, see :mod:`goldboard.cases.assignment`): ``overlap`` (share
    double-rated: the first rater rates all, the others a random share) or ``per_item`` (k
    raters per item, balanced over rater pairs), drawn with ``seed``, optionally stratified
    by ``stratify_by`` (an item column or case field).  The draw is written to
    ``rounds/N/assignment.csv`` and ``study.toml`` before any import; pushing the round again
    reuses it (a different design for a round that has one is an error).

    ``units`` may be given instead of files (a :func:`goldboard.cases.load.load_units`
    frame).  ``round_number``: default the latest round (1 for a new study).
    ``shared``: None keeps the round's mode (blinded for a new round).
    ``hide_model``: leave the model name out of the task data, so raters do not see it in
    Label Studio's task list (goldboard keeps it in ``units.jsonl``; pull fills it back).
    None keeps the round's setting (shown for a new round); a round cannot change it
    once it has projects.
    ``calibration`` / ``guideline_version``: recorded on the round in ``study.toml`` (a
    calibration round, the guideline/codebook version the raters use); None leaves them.
    ``annotations``: ``{(project key, item_id): [annotation, ...]}`` imported *inside*
    newly created tasks -- only for :mod:`goldboard.annotate.simulate` (demo and
    benchmarks); the CLI never sends annotations.
    ``batch_bytes``: JSON bytes per import request; ``batch_size``: at most this many tasks
    per request as well (None: no count limit).
    ``jobs``: projects filled at once (None: the server's app workers when goldboard knows
    them -- the embedded server's ``--workers`` -- else 1).
    ``add_to_adjudicated_round``: allow adding new items to a round that already has
    adjudication decisions or a gold release (see :func:`check_round_choice`).
    """

    if guideline_version is not None:  # checked before anything is read or made, as `study round` checks it
        guideline_version = free_text_option(guideline_version, "guideline_version", "the version")
    units, kind = _checked_units(study, cases_path, outputs_path, units, batch_size, batch_bytes)
    if round_number is None:
        round_number = max((r.number for r in study.rounds), default=1)
    if round_number < 1:
        raise ParamError("{round_number} {n}: rounds are numbered from 1", n=round_number)
    check_round_choice(study, round_number, units["item_id"].astype(str), add_to_adjudicated_round)
    mode = _round_mode(study, round_number, kind, shared, cases_path, outputs_path)
    design_asked = overlap is not None or per_item is not None
    if design_asked and mode == "shared":
        raise ParamError(
            "{overlap}/{per_item} need blinded rounds (one project per rater holds only that rater's items); "
            "Label Studio Community cannot assign tasks within a shared project"
        )
    assignment = resolve_assignment(
        study, units, round_number, overlap=overlap, per_item=per_item, seed=seed, stratify_by=stratify_by
    )
    plan = _PushPlan(
        cases_path=cases_path,
        outputs_path=outputs_path,
        units=units,
        kind=kind,
        round_number=round_number,
        mode=mode,
        assignment=assignment,
        hide_model=hide_model,
        calibration=calibration,
        guideline_version=guideline_version,
        annotations=annotations,
        batch_size=batch_size,
        batch_bytes=batch_bytes,
        jobs=jobs,
        progress=progress,
    )
    if client is None:
        with connect(study) as own:
            return _push_to(study, own, plan)
    return _push_to(study, client, plan)


@dataclass(frozen=True)
class _PushPlan:
    """A push checked against the study (units, round, mode, design) and its import options."""

    cases_path: str | Path | None
    outputs_path: str | Path | None
    units: pd.DataFrame
    kind: str
    round_number: int
    mode: str
    assignment: Assignment | None
    hide_model: bool | None
    calibration: bool | None
    guideline_version: str | None
    annotations: Mapping[tuple[str, str], list[dict]] | None
    batch_size: int | None
    batch_bytes: int
    jobs: int | None
    progress: bool


def _checked_units(
    study: Study,
    cases_path: str | Path | None,
    outputs_path: str | Path | None,
    units: pd.DataFrame | None,
    batch_size: int | None,
    batch_bytes: int,
) -> tuple[pd.DataFrame, str]:
    """The units to push (loaded from the files unless given) and their item kind; checks the batch limits."""
    schema = study.schema
    if units is None:
        if cases_path is None:
            raise GoldboardError("push: give a cases file")

        units = load_units(cases_path, outputs_path, schema=schema)
    if not len(units):
        raise GoldboardError(f"{cases_path}: no items to push")
    ids = units["item_id"].astype(str)
    dup = ids[ids.duplicated()]
    if len(dup):
        raise GoldboardError(f"{cases_path}: item {dup.iloc[0]!r} appears twice")
    if batch_size is not None and batch_size < 1:
        raise GoldboardError("must be at least 1", param="batch_size")
    if batch_bytes < 1:
        raise GoldboardError("batch_bytes must be at least 1")
    return units, item_kind(units)


def _round_mode(
    study: Study,
    round_number: int,
    kind: str,
    shared: bool | None,
    cases_path: str | Path | None,
    outputs_path: str | Path | None,
) -> str:
    """``blinded`` or ``shared`` (the existing round's unless ``shared`` says); refuses a change of kind or mode."""
    existing_round = next((r for r in study.rounds if r.number == round_number), None)
    mode = "shared" if shared else "blinded"
    if existing_round is not None:
        had = study.round_item_kind(existing_round)
        if had and had != kind:
            nxt = max(r.number for r in study.rounds) + 1
            raise ParamError(
                "round {n} is {had}; {files} are {kind} -- pushing them would "
                "add a second copy of every case. Start a new round: push them with {round_number} {nxt}",
                n=round_number,
                had=KIND_TEXT[had],
                files=f"{cases_path or 'these units'}{' + ' + str(outputs_path) if outputs_path else ''}",
                kind=KIND_TEXT[kind],
                nxt=nxt,
            )
        if shared is None:
            mode = existing_round.mode
        elif existing_round.mode != mode and existing_round.projects:
            raise ParamError(
                "round {n} is {had}; push {mode} tasks to a new round ({round_number} {nxt})",
                n=round_number,
                had=existing_round.mode,
                mode=mode,
                nxt=max(r.number for r in study.rounds) + 1,
            )
    return mode


def _push_to(study: Study, client: Client, plan: _PushPlan) -> PushResult:
    """On a connected server: projects, what is missing, the units record, the import (steps 1-4), blinding check."""
    account_warnings = check_rater_accounts(client, study.raters)
    ddir = getattr(getattr(client, "conn", None), "data_dir", None)
    if ddir and not study.url and not study.data_dir:  # e.g. GOLDBOARD_SERVER_DIR: a new shell finds it too
        study.data_dir = str(ddir)
        study.save()
    xml = to_label_studio_xml(study.schema, show_output=plan.kind == "output")
    if not any(r.number == plan.round_number and r.projects for r in study.rounds):
        _merge_units(study, plan.units, plan.round_number)  # a new round: a changed item refused before any project
    rnd, legacy_xml = _update_round(study, plan)
    creds = getattr(getattr(client, "conn", None), "credentials", None)
    routes = bool(getattr(client, "routes_by_org", False))
    if plan.mode == "shared" and routes:
        raise ParamError(
            "push {shared}: this embedded server keeps each rater in a Label Studio organization of their own "
            "(server-enforced blinding), so no project can be shared by all raters; push blinded (the default)"
        )
    keys = [SHARED_KEY] if plan.mode == "shared" else list(study.raters)
    result = PushResult(round=rnd.number, mode=plan.mode, url=client.url, projects={}, units=0)
    result.warnings.extend(account_warnings)
    result.warnings.extend(_case_file_warnings(plan.units))
    if plan.assignment is not None:  # strata an overlap draw left without a double-rated item
        result.warnings.extend(plan.assignment.warnings)
    result.warnings.extend(plan.units.attrs.get("strata_warnings", []))

    # 1. projects: verify the recorded ones, create the missing ones (recorded at once)
    for key in keys:
        result.projects[key] = _project_for(study, client, rnd, key, xml, legacy_xml, routes, result)

    # 2. what is already there (not asked of projects this push created); an item must not have changed
    tasks = [task_data(row, study.schema, include_model=rnd.show_model) for row in plan.units.to_dict("records")]
    workers = jobs_for(client, plan.jobs, len(keys))
    failed = threading.Event()  # set on an error or Ctrl-C: the other projects' threads stop after their request
    missing = _missing_tasks(client, rnd, keys, tasks, plan, workers, failed, result)

    # 3. record the units (and the design) before importing (a crash mid-import leaves a consistent workspace)
    _record_units(study, rnd, plan, result)

    # 4. import what is missing, a batch per request (projects at once when the server has workers)
    data_size = {t["item_id"]: _json_size(t) + len('{"data": }') for t in tasks}  # once, not per project
    _import_missing(client, rnd, keys, missing, data_size, plan, workers, failed, result)
    result.units = rnd.units
    if plan.kind == "case" and study.schema.display.show_output and result.created_projects:
        result.case_level_note = (
            f"case-level round: no --outputs, so raters label the cases themselves (one item per case); the "
            f"schema's '{study.schema.display.output_title or 'Model output'}' pane is left out. To have "
            "model outputs labelled, push them to a new round with --outputs."
        )
    if plan.mode == "blinded":
        from goldboard.annotate.blinding import check_round_access, describe_access

        rnd.access = {**rnd.access, "push": check_round_access(client, study, rnd, when="push")}
        study.save()
        result.access = describe_access(rnd.access["push"])
        if creds is not None and not rnd.access["push"].get("enforced"):
            result.warnings.append(f"blinding: {result.access}")
    return result


def _update_round(study: Study, plan: _PushPlan) -> tuple[Any, str | None]:
    """The round (added when new) with this push's settings, and the legacy config an old case-level round may have."""
    rnd = study.get_or_add_round(plan.round_number, mode=plan.mode)
    if plan.calibration is not None:
        rnd.calibration = plan.calibration
    if plan.guideline_version is not None:
        rnd.guideline_version = plan.guideline_version.strip()
    # a case-level round pushed before rounds recorded their kind has the model pane in its config
    legacy = rnd.projects and not rnd.item_kind and plan.kind == "case"
    legacy_xml = to_label_studio_xml(study.schema) if legacy else None
    rnd.item_kind = plan.kind
    if not rnd.projects:
        rnd.mode = plan.mode
        if plan.hide_model is not None:
            rnd.show_model = not plan.hide_model
    elif plan.hide_model is not None and plan.hide_model == rnd.show_model:
        raise ParamError(
            "round {n} {shows} the model name; push to a new round to change that ({round_number} {nxt})",
            n=rnd.number,
            shows="shows" if rnd.show_model else "hides",
            nxt=max(r.number for r in study.rounds) + 1,
        )
    return rnd, legacy_xml


def _case_file_warnings(units: pd.DataFrame) -> list[str]:
    """The load warnings a rater would miss in full, the others as one count."""
    load_warnings = [str(w) for w in units.attrs.get("warnings", [])]
    out = [w for w in load_warnings if "no rater will see it" in w]
    others = sum(1 for w in load_warnings if "no rater will see it" not in w)
    if others:
        out.append(
            f"{others} other warning{'s' if others != 1 else ''} about the case files "
            f"(list them with `goldboard cases validate`)"
        )
    return out


def _project_for(
    study: Study,
    client: Client,
    rnd: Any,
    key: str,
    xml: str,
    legacy_xml: str | None,
    routes: bool,
    result: PushResult,
) -> int:
    """``key``'s project id: the recorded one (checked: exists, schema's config) or a new one, saved at once."""
    schema = study.schema
    pid = rnd.projects.get(key)
    who = "the shared project" if key == SHARED_KEY else f"{key}'s project"
    if pid is not None:
        try:
            proj = client.project(pid)
        except ProjectNotFound:
            raise ProjectGone(
                "round {n}: {who} (id {pid}) no longer exists on {url} (deleted?); its annotations are gone from "
                "the server (ratings already pulled stay in {ratings}); push to a new round with {round_number} {nxt}",
                pid,
                n=rnd.number,
                who=who,
                pid=pid,
                url=client.url,
                ratings=study.ratings_path(rnd.number),
                nxt=max(r.number for r in study.rounds) + 1,
            ) from None
        if not configs_match(proj["label_config"], xml) and not (
            legacy_xml is not None and configs_match(proj["label_config"], legacy_xml)
        ):
            raise ConfigChanged(
                "round {n}: {who} (id {pid}) on {url}: its label config no longer matches schema {schema} "
                "(edited in Label Studio?); restore it, or push to a new round with {round_number} {nxt}",
                n=rnd.number,
                who=who,
                pid=pid,
                url=client.url,
                schema=f"{schema.name} v{schema.version}",
                nxt=max(r.number for r in study.rounds) + 1,
            )
        return pid
    desc = (
        f"goldboard study {study.name}, round {rnd.number}, "
        + ("shared by all raters" if key == SHARED_KEY else f"rater {key} only (blinded)")
        + f"; schema {schema.name} v{schema.version}."
    )
    instr = html.escape(instructions_text(schema)).replace("\n", "<br>")
    title = project_title(study.name, key, rnd.number)
    org = {"org": key} if routes and key != SHARED_KEY else {}
    pid = _orphan_project(client, title, desc, result, who, **org)
    if pid is None:
        pid = client.create_project(
            title,
            xml,
            desc,
            maximum_annotations=len(study.raters) if key == SHARED_KEY else 1,
            instructions_html=instr,
            **org,
        )
    rnd.projects[key] = pid
    study.save()
    result.created_projects.append(key)
    return pid


def _orphan_project(client: Client, title: str, desc: str, result: PushResult, who: str, **org: str) -> int | None:
    """An empty project with this push's title and description that no study records: made by an
    earlier push whose answer to the creation was lost (a dropped connection, a cut answer).  It is
    taken, said aloud, rather than a second project made beside it; ``None`` when there is none."""
    found = sorted(
        (p for p in client.find_projects(title, **org) if p["description"] == desc and not p["task_number"]),
        key=lambda p: p["id"],
    )
    if not found:
        return None
    pid = found[0]["id"]
    others = f" ({len(found) - 1} more such empty projects are left as they are)" if len(found) > 1 else ""
    result.warnings.append(
        f"{who}: took the empty project {pid} ({title!r}) an earlier push made and never recorded (its "
        f"answer was lost) instead of making a second one{others}"
    )
    return pid


def _missing_tasks(
    client: Client,
    rnd: Any,
    keys: list[str],
    tasks: list[dict],
    plan: _PushPlan,
    workers: int,
    failed: threading.Event,
    result: PushResult,
) -> dict[str, list[dict]]:
    """``{key: tasks of that project not on the server yet}``; counts the ones already there in ``result``."""
    by_item = {t["item_id"]: t for t in tasks}
    assignment = plan.assignment

    def present_in(key: str) -> tuple[dict[str, int], list[str]]:
        if key in result.created_projects:
            return {}, []
        return _present(client, rnd.projects[key], by_item, plan.cases_path)

    missing: dict[str, list[dict]] = {}
    for key, (present, warns) in zip(keys, _map(present_in, keys, workers, failed)):
        result.warnings.extend(warns)
        mine = tasks if assignment is None else [t for t in tasks if key in assignment.items.get(t["item_id"], ())]
        missing[key] = [t for t in mine if t["item_id"] not in present]
        result.already[key] = sum(1 for t in mine if t["item_id"] in present)
    return missing


def _record_units(study: Study, rnd: Any, plan: _PushPlan, result: PushResult) -> None:
    """Write the assignment, ``units.jsonl`` and study.toml (each atomically) before any import."""
    assignment = plan.assignment
    if assignment is not None:
        write_csv_atomic(pd.DataFrame(assignment.rows(), columns=ASSIGNMENT_COLUMNS), study.assignment_path(rnd.number))
        rnd.design = {**assignment.design, "assigned": {r: len(assignment.for_rater(r)) for r in study.raters}}
        result.design = rnd.design
    with study.locked():  # another push's units are read and kept (two pushes at once take turns)
        merged = _merge_units(study, plan.units, rnd.number)
        write_jsonl_atomic(merged, study.units_path)
        rnd.units = sum(1 for r in merged if rnd.number in r["rounds"])
        study.save()


def _import_missing(
    client: Client,
    rnd: Any,
    keys: list[str],
    missing: dict[str, list[dict]],
    data_size: dict[str, int],
    plan: _PushPlan,
    workers: int,
    failed: threading.Event,
    result: PushResult,
) -> None:
    """Import ``missing`` in batches (``workers`` projects at once) with a progress bar; an error or
    Ctrl-C says how far it got and that the same push finishes it."""
    annotations, batch_bytes, batch_size = plan.annotations, plan.batch_bytes, plan.batch_size
    total = sum(len(v) for v in missing.values())
    bar = _bar(total, plan.progress)
    lock = threading.Lock()
    done = [0]

    def fill(key: str) -> int:
        made = 0
        payload, sizes = [], []
        for t in missing[key]:
            p: dict[str, Any] = {"data": t}
            n = data_size[t["item_id"]]
            if annotations:
                anns = annotations.get((key, t["item_id"]))
                if anns:
                    p["annotations"] = anns
                    n += _json_size(anns) + len(', "annotations": ')
            payload.append(p)
            sizes.append(n)
        for batch in _batches(payload, batch_bytes, batch_size, sizes):
            if failed.is_set():
                break
            try:
                made += client.import_tasks(rnd.projects[key], batch)
            except LabelStudioError as exc:
                failed.set()
                with lock:
                    n = done[0]
                raise type(exc)(
                    f"{exc}; {n} of {total} missing tasks were imported before -- run the same "
                    f"push again to finish (it adds only what is missing)"
                ) from None
            with lock:
                done[0] += len(batch)
                bar.update(len(batch))
        return made

    try:
        for key, made in zip(keys, _map(fill, keys, workers, failed)):
            result.imported[key] = made
    except KeyboardInterrupt:
        raise PushInterrupted(
            f"push interrupted: {done[0]} of {total} missing tasks were imported (a batch being sent may have "
            f"arrived too) -- run the same push again to finish (it adds only what is missing)"
        ) from None
    finally:
        bar.close()


def _present(client: Client, pid: int, by_item: dict[str, dict], cases_path: Any) -> tuple[dict[str, int], list[str]]:
    """``{item_id: task id}`` of a project's goldboard tasks, and warnings; raises when an item changed."""
    present: dict[str, int] = {}
    warnings: list[str] = []
    foreign = 0
    for tid, data in client.task_data(pid):
        item = str(data.get("item_id", "") or "")
        if not item:
            foreign += 1
            continue
        if item in present:
            warnings.append(
                f"project {pid}: item {item!r} is in tasks {present[item]} and {tid} "
                f"(duplicate not made by this push; pull keeps one rating per rater)"
            )
            continue
        present[item] = tid
        want = by_item.get(item)
        if want is not None:
            diff = [k for k, v in want.items() if not _same_text(k, data.get(k, ""), v)]
            if diff:
                raise GoldboardError(
                    f"item {item!r}: {diff[0]} on the server (task {tid}, project {pid}) differs "
                    f"from {cases_path or 'the units'}; an item never changes once pushed "
                    f"(give it a new id or push to a new round)"
                )
    if foreign:
        warnings.append(f"project {pid}: {foreign} tasks without item_id (not pushed by goldboard)")
    return present, warnings


def _json_size(x: Any) -> int:
    return len(json.dumps(x, ensure_ascii=False).encode("utf-8"))


def _batches(
    payload: list[dict], max_bytes: int, max_tasks: int | None, sizes: list[int] | None = None
) -> Iterator[list[dict]]:
    """Consecutive slices of ``payload`` of at most ``max_bytes`` of JSON (at least one task each)
    and at most ``max_tasks`` tasks; ``sizes``: each item's JSON size when already known."""
    batch: list[dict] = []
    size = 2
    for i, p in enumerate(payload):
        n = (sizes[i] if sizes is not None else _json_size(p)) + 1
        if batch and (size + n > max_bytes or (max_tasks is not None and len(batch) >= max_tasks)):
            yield batch
            batch, size = [], 2
        batch.append(p)
        size += n
    if batch:
        yield batch


def _map(fn: Any, keys: list[str], workers: int, stop: threading.Event | None = None) -> list:
    """``[fn(k) for k in keys]``, on ``workers`` threads when more than one; the first error is raised
    after every started call has finished (nothing is left running).  On Ctrl-C ``stop`` is set
    (``fn`` checks it between requests) and the interrupt is raised once the threads are done."""
    if workers <= 1 or len(keys) <= 1:
        return [fn(k) for k in keys]
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="goldboard") as ex:
        futures = [ex.submit(fn, k) for k in keys]
        try:
            errors = [f.exception() for f in futures]
        except BaseException:
            if stop is not None:
                stop.set()
            for f in futures:
                f.cancel()
            raise
    for e in errors:
        if e is not None:
            raise e
    return [f.result() for f in futures]


def check_round_choice(
    study: Study, round_number: int, item_ids: Iterable[str], add_to_adjudicated_round: bool = False
) -> None:
    """Refuse a push that would silently change a study's rounds (before anything is sent):

    - ``--round N`` for a new round N when round N-1 does not exist (a typo such as
      ``--round 12`` for ``2`` would otherwise open round 12);
    - new items added to a round that already has adjudication decisions or a gold
      release (its adjudication and gold would silently stop covering the round),
      unless ``add_to_adjudicated_round``.  Re-pushing the round's own items (completing
      an interrupted push) is always allowed.
    """
    numbers = sorted(r.number for r in study.rounds)
    nxt = (numbers[-1] + 1) if numbers else 1
    if round_number not in numbers:
        if round_number > 1 and round_number - 1 not in numbers:
            have = ", ".join(map(str, numbers)) or "none yet"
            raise ParamError(
                "{round_number} {n}: round {prev} does not exist (rounds: {have}); "
                "the next new round is {nxt} ({round_number} {nxt})",
                n=round_number,
                prev=round_number - 1,
                have=have,
                nxt=nxt,
            )
        return
    in_round = round_items(study, round_number)
    new = [i for i in dict.fromkeys(item_ids) if i not in in_round]
    if not new or add_to_adjudicated_round:
        return
    use = round_use(study, round_number, in_round)
    if use.decisions or use.releases:
        raise ParamError(
            "round {n} already has {use}; pushing {count} new item{s} (e.g. {item!r}) into it would change what "
            "was adjudicated. Push them to a new round ({round_number} {nxt}), or pass {add_to_adjudicated_round} "
            "to add them anyway",
            n=round_number,
            use=use.describe(),
            count=len(new),
            s="s" if len(new) != 1 else "",
            item=new[0],
            nxt=nxt,
        )


class PushInterrupted(GoldboardError):
    """Ctrl-C during the import: says how far it got and that rerunning completes it."""

    exit_code = 130


#: how a round's items are described in messages
KIND_TEXT = {
    "case": "case-level (one item per case, no model outputs)",
    "output": "case x model output (one item per output)",
}


def check_rater_accounts(client: Client, raters: list[str]) -> list[str]:
    """Every study rater must have a Label Studio account; push never creates one.

    Embedded server: a rater missing from its credentials file is an error with a
    did-you-mean (a misspelt ``study init --raters`` name must not become a new account);
    ``goldboard server add-raters NAME`` creates an account on purpose.  Other servers:
    a rater that matches no user is a warning (pull then attributes that rater's project
    by project only).  Returns the warnings.
    """
    creds = client.conn.credentials
    if creds is not None:
        missing = [r for r in raters if r not in creds.users or creds.users[r].id is None]
        if missing:
            have = sorted(creds.users)
            r = missing[0]
            raise GoldboardError(
                f"rater {r!r} has no account on the embedded Label Studio ({client.url}; accounts: "
                f"{', '.join(have) or 'none'}){did_you_mean(r, have)}. push never creates accounts: if "
                f"the study's rater name is misspelt, fix it in study.toml; if {r!r} is a new rater, create the "
                f"account with `goldboard server add-raters {','.join(missing)}`"
            )
        return []
    try:
        found, others = rater_user_ids(client, raters)
    except LabelStudioError:
        return []
    matched = set(found.values())
    names = list(others.values())
    return [
        f"rater {r!r} matches no user on {client.url}{did_you_mean(r, names)}; their project's annotations "
        f"will be attributed by project only (set [extra.rater_users] in study.toml to name their account)"
        for r in raters
        if r not in matched
    ]


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, show: bool):
    if not show or total == 0:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc="Importing tasks", unit="task", file=sys.stderr)


__all__ = [
    "push",
    "PushInterrupted",
    "resolve_assignment",
    "PushResult",
    "RoundUse",
    "check_round_choice",
    "round_use",
    "project_title",
    "DEFAULT_BATCH_BYTES",
    "SHARED_KEY",
]
