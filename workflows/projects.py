"""Pull from Label Studio projects goldboard did not create (set up by hand, or by another tool).

Such a project's tasks have no ``item_id``: ``item_key`` names the task data key that holds the
item (``case_id``).  Its annotators are Label Studio users, not study raters: ``rater_map`` maps
each user (e-mail, username or numeric user id) to a rater.  A shared project (everyone annotates
in one project; ``--project ID``) attributes each annotation by its annotator; one project per rater
(``--project onc_a=12``) attributes by project and checks the annotator.

The first such pull records the projects in the round (study.toml) and the mapping under
``[extra]`` (``item_key``, ``label_studio_users``), so a later plain ``goldboard pull --study S``
repeats it.  Items the study does not know are recorded in ``units.jsonl`` with the case text
composed from the task data (the schema's displayed case fields), so the review workbook shows
the case.  Validation, invalid.csv and pull.json are exactly those of any pull.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from goldboard.annotate.pull import PullResult, read_export_file
from goldboard.cases.units import compose_case_text
from goldboard.errors import GoldboardError, ParamError, check_rater_map
from goldboard.fileio import atomic_write, iter_jsonl, write_jsonl_atomic
from goldboard.study import STUDY_FILE, Study
from goldboard.study_options import free_text_option
from goldboard.text import did_you_mean
from goldboard.workflows.intake import pull

SHARED = "*"


def _projects_dict(specs: list[tuple[str | None, int]], raters: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for rater, pid in specs:
        key = rater or SHARED
        if rater is not None and rater not in raters:
            raise ParamError(
                "{projects} {rater}={pid}: {rater!r} is not a rater of this study{hint} (raters: {raters})",
                rater=rater,
                pid=pid,
                hint=did_you_mean(rater, raters),
                raters=", ".join(raters),
            )
        if key in out:
            raise GoldboardError(f"{'a shared project' if key == SHARED else rater} given twice", param="projects")
        out[key] = pid
    if SHARED in out and len(out) > 1:
        raise GoldboardError(
            "give one shared project (ID) or one project per rater (RATER=ID), not both", param="projects"
        )
    return out


def _study_toml_kept_if_refused(fn: Callable[..., PullResult]) -> Callable[..., PullResult]:
    """A pull that is refused (or interrupted) leaves ``study.toml`` byte for byte as it was:
    the round, its projects and the mapping recorded before the pull ran are put back (a refused
    ``--from-export`` left a phantom round and ``item_key``: campaign 5 E13/E14)."""

    @functools.wraps(fn)
    def kept(study: Study, *args: Any, **kwargs: Any) -> PullResult:
        path = study.path / STUDY_FILE
        before = path.read_bytes() if path.exists() else None
        try:
            return fn(study, *args, **kwargs)
        except BaseException:
            if before is not None and path.exists() and path.read_bytes() != before:
                with atomic_write(path, "wb", encoding=None) as fh:
                    fh.write(before)
            raise

    return kept


@_study_toml_kept_if_refused
def pull_projects(
    study: Study,
    *,
    projects: list[tuple[str | None, int]] = (),  # type: ignore[assignment]
    exports: list[Any] = (),  # type: ignore[assignment]
    item_key: str | None = None,
    rater_map: dict[str, str] | None = None,
    round_number: int | None = None,
    client: Any = None,
    progress: bool = True,
    add_to_adjudicated_round: bool = False,
) -> PullResult:
    """Pull hand-made projects (or their exports) into a round; see the module docstring."""
    raters = list(study.raters)
    extra = study.extra
    changed = False
    if item_key:  # a key of the task data, stored in study.toml: a hidden character in it is refused
        item_key = free_text_option(item_key, "item_key", "the key")
        if extra.get("item_key") != item_key:
            extra["item_key"] = item_key
            changed = True
    item_key = item_key or extra.get("item_key")
    stored = dict(extra.get("label_studio_users") or {})
    if rater_map:
        check_rater_map(rater_map, raters)
        # a rater named again is mapped anew: their earlier mapping goes (never two users for one rater)
        stored = {k: r for k, r in stored.items() if r not in rater_map.values()}
        stored.update(rater_map)
        check_rater_map(stored, raters)
        extra["label_studio_users"] = stored
        changed = True
    if projects:
        want = _projects_dict(list(projects), raters)
        existing = next((r for r in study.rounds if r.number == round_number), None) if round_number else None
        if existing is None and round_number is None and study.rounds:
            existing = study.round(None)
        if existing is not None and existing.projects and existing.projects != want:
            raise ParamError(
                "round {n} already has projects {have}; pull other projects into a new round ({round_number} {nxt})",
                n=existing.number,
                have=", ".join(f"{k}={v}" for k, v in existing.projects.items()),
                nxt=max(r.number for r in study.rounds) + 1,
            )
        mode = "shared" if SHARED in want else "blinded"
        rnd = existing if existing is not None else study.get_or_add_round(round_number, mode=mode)
        if rnd.projects != want:
            rnd.projects = dict(want)
            rnd.mode = mode
            changed = True
        round_number = rnd.number
    elif exports and (
        not study.rounds or (round_number is not None and all(r.number != round_number for r in study.rounds))
    ):
        # a hand-made project's export into a new round: the round's project is the export's
        shared = all(not isinstance(e, tuple) for e in exports)
        rnd = study.get_or_add_round(round_number, mode="shared" if shared else "blinded")
        round_number = rnd.number
        for spec in exports:
            rater, path = spec if isinstance(spec, tuple) else (None, spec)
            tasks, _ = read_export_file(path, study.schema)
            pids = {int(t["project"]) for t in tasks if str(t.get("project", "")).isdigit()}
            if len(pids) == 1:
                rnd.projects[rater or SHARED] = pids.pop()
        changed = True
    # the round, item key and user mapping are recorded only once the pull has read and checked
    # every source: a refused pull leaves study.toml as it was (no phantom round)
    res = pull(
        study,
        round_number,
        client=client,
        from_export=exports,
        progress=progress,
        item_key=item_key,
        rater_map=stored or None,
        add_to_adjudicated_round=add_to_adjudicated_round,
    )
    if changed:
        study.save()
    n_new = record_units(study, res, res.summary["round"])
    if n_new:
        res.summary.setdefault("warnings", [])
        res.summary["new_units"] = n_new
    return res


def record_units(study: Study, res: PullResult, round_number: int) -> int:
    """Add the items of ``res`` that the study does not know to ``units.jsonl`` (case text from
    the task data); returns how many were added."""
    if not res.items_data:
        return 0
    with study.locked():  # read and rewritten under the study lock: another command's units are kept
        return _record_units(study, res, round_number)


def _record_units(study: Study, res: PullResult, round_number: int) -> int:
    path: Path = study.units_path
    units = [rec for _, rec in iter_jsonl(path, " (units.jsonl)")] if path.exists() else []
    known = {str(u["item_id"]) for u in units}
    rated = set(res.ratings["item_id"]) if len(res.ratings) else set()
    added = 0
    for item, data in res.items_data.items():
        if item in known or item not in rated:
            continue
        units.append(
            {
                "item_id": item,
                "case_id": str(data.get("case_id", "") or item),
                "output_id": str(data.get("output_id", "") or ""),
                "model": str(data.get("model", "") or ""),
                "case_text": compose_case_text(data, study.schema),
                "output_text": str(data.get("output_text", "") or ""),
                "rounds": [round_number],
                "source": "label-studio",
            }
        )
        added += 1
    if added:
        write_jsonl_atomic(units, path)
    return added


__all__ = ["pull_projects", "record_units"]
