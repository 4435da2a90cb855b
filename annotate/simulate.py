"""Simulated raters: put a table of desired ratings into a round's Label Studio projects.

For tests and the demo.  The input is a ratings-shaped DataFrame (columns
``item_id, rater, field, value`` and optionally ``rationale``, ``lead_time``;
one row per item x rater x field, as :mod:`goldboard.cases.ratings`), and every
annotation is attributed exactly as a real rater's would be:

* :func:`post_ratings` -- tasks already pushed: one ``POST /api/annotations``
  per (item, rater) **with that rater's own API token**, so ``completed_by`` is the
  rater, as in the browser.  Measured on 2 cores: ~13 annotations/s sequential,
  ~24/s with 2 worker threads (the default; more threads do not help).
* :func:`push_with_ratings` -- items not pushed yet: :func:`goldboard.annotate.push.push`
  imports each task *with its annotations inside* (``completed_by`` = the rater's
  user id, ``ground_truth`` false -- Label Studio's default would be true).
  ~2,000 annotations/s, about 100x faster; used by the benchmark and large demos.

Values are sent verbatim (no validation), so tests can post invalid ratings and
check that pull holds them out.  :func:`annotation_result` is the inverse of
:func:`goldboard.annotate.pull.parse_result`.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldboard.annotate.client import Client, connect
from goldboard.annotate.push import SHARED_KEY, PushResult, check_rater_accounts, push
from goldboard.cases.ratings import MULTI_SEP
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import Field, Schema
from goldboard.label_configs.xml import CASE_TAG, OUTPUT_TAG, option_tag

if TYPE_CHECKING:  # only for the annotations
    from goldboard.study import Study


def _to_name(schema: Schema, f: Field) -> str:

    if f.option is not None:
        return option_tag(f.option)
    return OUTPUT_TAG if schema.display.show_output else CASE_TAG


def annotation_result(schema: Schema, values: Mapping[str, Any], rationale: str = "") -> list[dict]:
    """Label Studio result items for ``values`` (field -> value as in the ratings table).

    Binary ``no`` and an empty multi are sent as nothing (an unticked box); the
    rationale goes to the schema's rationale field.  Unknown field names are sent
    as they are (``from_name`` = the name), so invalid annotations can be made too.
    """
    out: list[dict] = []
    rat = schema.rationale_field
    names = {f.name: f for f in schema.fields}
    vals = dict(values)
    if rat is not None and rationale and rat.name not in vals:
        vals[rat.name] = rationale
    for name, v in vals.items():
        if v is None or (isinstance(v, float) and pd.isna(v)):
            continue
        v = str(v)
        f = names.get(name)
        if f is None:
            out.append({"from_name": name, "to_name": "output", "type": "choices", "value": {"choices": [v]}})
            continue
        to_name = _to_name(schema, f)
        if f.kind == "text":
            if v:
                out.append({"from_name": name, "to_name": to_name, "type": "textarea", "value": {"text": [v]}})
            continue
        if f.kind == "binary":
            if v == f.categories[0]:
                continue  # unticked
            choices = [v]
        elif f.kind == "multi":
            choices = [c for c in v.split(MULTI_SEP) if c]
            if not choices:
                continue
        else:
            if v == "":
                continue
            choices = [v]
        out.append({"from_name": name, "to_name": to_name, "type": "choices", "value": {"choices": choices}})
    return out


@dataclass
class Annotation:
    item_id: str
    rater: str
    result: list[dict]
    lead_time: float | None = None


def annotations_from_ratings(schema: Schema, ratings: pd.DataFrame) -> list[Annotation]:
    """One :class:`Annotation` per (item, rater) of a ratings-shaped frame, in frame order."""
    need = {"item_id", "rater", "field", "value"}
    if not need <= set(ratings.columns):
        raise GoldboardError(f"ratings: columns {', '.join(sorted(need - set(ratings.columns)))} missing")
    out = []
    df = ratings.copy()
    for c in ("rationale", "lead_time"):
        if c not in df.columns:
            df[c] = ""
    for (item, rater), g in df.groupby(["item_id", "rater"], sort=False):
        values = dict(zip(g["field"].astype(str), g["value"]))
        rationale = next((str(x) for x in g["rationale"] if isinstance(x, str) and x), "")
        lt = next((x for x in g["lead_time"] if str(x) not in ("", "nan", "None")), None)
        out.append(
            Annotation(
                str(item),
                str(rater),
                annotation_result(schema, values, rationale),
                float(lt) if lt is not None else None,
            )
        )
    return out


@dataclass
class SimulateResult:
    posted: int = 0
    annotation_ids: list[int] = field(default_factory=list)
    push: PushResult | None = None


def _tokens(client: Client, raters: list[str], tokens: Mapping[str, str] | None) -> dict[str, str]:
    if tokens:
        missing = [r for r in raters if r not in tokens]
        if missing:
            raise GoldboardError(f"no API token for rater(s) {', '.join(missing)}")
        return dict(tokens)
    creds = client.conn.credentials
    if creds is None:
        raise GoldboardError("simulated raters need each rater's token: use the embedded server or pass tokens=")
    return {r: creds.token_for(r) for r in raters}


def post_ratings(
    study: Study,
    ratings: pd.DataFrame,
    round_number: int | None = None,
    *,
    client: Client | None = None,
    tokens: Mapping[str, str] | None = None,
    workers: int = 2,
    progress: bool = True,
) -> SimulateResult:
    """Post one annotation per (item, rater) of ``ratings`` to the round's existing tasks,
    each with the rater's own token (``completed_by`` = the rater)."""
    client = client or connect(study)
    rnd = study.round(round_number)
    anns = annotations_from_ratings(study.schema, ratings)
    raters = sorted({a.rater for a in anns})
    unknown = [r for r in raters if r not in study.raters]
    if unknown:
        raise GoldboardError(f"ratings: {unknown[0]!r} is not a rater of this study ({', '.join(study.raters)})")
    toks = _tokens(client, raters, tokens)
    task_of: dict[str, dict[str, int]] = {}
    for key, pid in rnd.projects.items():
        task_of[key] = {str(d.get("item_id", "")): tid for tid, d in client.task_data(pid)}
    jobs = []
    for a in anns:
        key = SHARED_KEY if rnd.mode == "shared" else a.rater
        tid = task_of.get(key, {}).get(a.item_id)
        if tid is None:
            raise GoldboardError(
                f"ratings: item {a.item_id!r} has no task in round {rnd.number}'s "
                f"{'shared project' if key == SHARED_KEY else key + ' project'} (push it first)"
            )
        jobs.append((a, tid))
    per_rater = {r: [client.as_token(toks[r], f"{r}'s token") for _ in range(max(1, workers))] for r in raters}
    res = SimulateResult()
    bar = None
    if progress and len(jobs) > 20:
        from tqdm import tqdm

        bar = tqdm(total=len(jobs), desc="Posting annotations", unit="ann", file=sys.stderr)

    def one(i: int) -> int:
        a, tid = jobs[i]
        aid = per_rater[a.rater][i % len(per_rater[a.rater])].create_annotation(tid, a.result, a.lead_time)
        if bar is not None:
            bar.update(1)
        return aid

    try:
        if workers > 1:
            with ThreadPoolExecutor(workers) as ex:
                res.annotation_ids = list(ex.map(one, range(len(jobs))))
        else:
            res.annotation_ids = [one(i) for i in range(len(jobs))]
    finally:
        if bar is not None:
            bar.close()
        for cs in per_rater.values():
            for c in cs:
                c.close()
    res.posted = len(res.annotation_ids)
    return res


def push_with_ratings(
    study: Study,
    units: pd.DataFrame,
    ratings: pd.DataFrame,
    round_number: int | None = None,
    *,
    shared: bool | None = None,
    client: Client | None = None,
    batch_size: int | None = None,
    progress: bool = True,
    jobs: int | None = None,
) -> SimulateResult:
    """Push ``units`` with the annotations of ``ratings`` imported inside the new tasks
    (``completed_by`` = each rater's user id, ``ground_truth`` = false).  Items already
    on the server are left alone (push is idempotent); post their ratings with
    :func:`post_ratings`."""
    client = client or connect(study)
    anns = annotations_from_ratings(study.schema, ratings)
    creds = client.conn.credentials
    if creds is None:
        raise GoldboardError("push_with_ratings needs the embedded server (rater user ids)")
    check_rater_accounts(client, list(study.raters))  # never creates one: seed raters at server start
    existing = next((r for r in study.rounds if r.number == round_number), None) if round_number else None
    mode_shared = shared if shared is not None else (existing.mode == "shared" if existing else False)
    payload: dict[tuple[str, str], list[dict]] = {}
    for a in anns:
        if a.rater not in creds.users:
            raise GoldboardError(f"ratings: {a.rater!r} is not a rater of this study")
        ann: dict[str, Any] = {"result": a.result, "completed_by": creds.users[a.rater].id, "ground_truth": False}
        if a.lead_time is not None:
            ann["lead_time"] = a.lead_time
        key = SHARED_KEY if mode_shared else a.rater
        payload.setdefault((key, a.item_id), []).append(ann)
    pr = push(
        study,
        units=units,
        round_number=round_number,
        shared=shared,
        client=client,
        batch_size=batch_size,
        progress=progress,
        annotations=payload,
        jobs=jobs,
    )
    return SimulateResult(posted=sum(len(v) for (k, i), v in payload.items()), push=pr)


__all__ = [
    "annotation_result",
    "annotations_from_ratings",
    "post_ratings",
    "push_with_ratings",
    "Annotation",
    "SimulateResult",
]
