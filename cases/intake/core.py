"""The one intake of ratings: normalised annotations from any source -> a round's ratings.

Pure (no server, no file): a source adapter (:mod:`goldboard.cases.intake.sources`, the Label
Studio server pull in :mod:`goldboard.annotate.pull`) turns what it read into :class:`Shown`
records -- one item shown to a rater (a Label Studio task, a table's item for one rater), with
the :class:`Annotation` records made on it -- and :func:`collect` runs one pipeline on them:

1. **attribute** each annotation to a study rater: the rater the source names (a table row, a
   blinded rater's project -- where, when the rater's server user is known, an annotation by any
   other user is held out, never credited to the rater), else the source account
   (``user_raters``: user id -> rater);
2. **validate** its answers against the schema (:func:`validate`): unknown fields, a value not in
   the schema, two values for a single choice, a required field missing, an empty or skipped
   annotation -- held out *whole* with its reasons and its answer verbatim, never dropped, never
   "fixed";
3. **keep the latest** annotation per item x rater (``at``, then id); the others are listed as
   ``superseded``;
4. **hold out** (``invalid`` rows with provenance and reason) and **summarise** (one
   :class:`IntakeResult`, whose :meth:`IntakeResult.describe` is the summary text).

The round's files are written by :meth:`goldboard.study.Study.write_round`, nowhere else.
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

from goldboard.cases.ratings import MULTI_SEP, RATINGS_COLUMNS
from goldboard.label_configs.schema import Field, Schema, ValueNotInSchema
from goldboard.text import utc_now

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
#: why an annotation without an annotator (Label Studio ``completed_by: null``) is held out: no one to credit
NO_ANNOTATOR = "an annotation with no annotator: completed_by is null"
NO_ITEM = "task has no item_id in its data (not pushed by goldboard: map one with --item-key KEY)"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Answer:
    """One field's answer as the source gave it: ``choices`` (a choice field), ``text`` (a text
    field), or ``error`` (the source could not read it: the reason, without the field's name)."""

    choices: tuple[Any, ...] | None = None
    text: str | None = None
    error: str = ""


@dataclass
class Annotation:
    """One rater's answers to one item, normalised, with where they came from.

    ``entries``: ``(field name, Answer)`` in the source's order; a name ``None`` is an entry the
    source could not read at all (``Answer.error`` is the whole reason).  ``unreadable``: the
    whole annotation could not be read (e.g. ``empty result``).  ``user``: the source account
    (a Label Studio user id) or ``None``.  ``at``: when it was made or last changed, as the source
    gave it; ``raw``: the answer verbatim for invalid.csv (``raw_is_text``: already the text to
    write, e.g. a table's cells as JSON).  ``held``: a reason the caller (who knows the study) holds
    it out for, e.g. an item the study does not have."""

    entries: list[tuple[str | None, Answer]] = field(default_factory=list)
    unreadable: str = ""
    user: int | None = None
    cancelled: bool = False
    at: Any = None
    lead_time: Any = None
    annotation_id: Any = None
    raw: Any = None
    raw_is_text: bool = False
    #: a reason the caller holds it out for (the study's view: an unknown item, a rating another source gave)
    held: str = ""
    #: answers of the source's controls the schema has no field for and that are no rating (a Label
    #: Studio span or region control beside the classification): their names, ignored and counted
    ignored: tuple[str, ...] = ()


@dataclass
class Shown:
    """One item shown to a rater (or, ``rater`` ``None``, to every rater of a shared project) and
    the annotations made on it.  ``check_user``: the rater is named by a blinded project, so an
    annotation by another known user is not theirs (a table names its rater: ``False``).
    ``group``: where the item was shown (two :class:`Shown` of one item in one group are a
    duplicate task); ``task_id``/``project_id``: provenance written to the round's files."""

    item_id: str
    info: dict[str, str]
    rater: str | None
    annotations: list[Annotation]
    group: Any = None
    task_id: Any = None
    project_id: Any = None
    check_user: bool = True
    #: why the item is missing when ``item_id`` is empty (default :data:`NO_ITEM`)
    no_item: str = ""


# --------------------------------------------------------------------------- one annotation


def control_chars(text: str) -> list[str]:
    """The control characters in ``text`` (``U+0000``...), tab, CR and LF excepted: a label holding
    one is not the label it looks like (a spreadsheet or a script put it there)."""
    return sorted({f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\t\r\n"})


def short(x: Any, n: int = 80) -> str:
    s = x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, default=str)
    return s if len(s) <= n else s[: n - 1] + "…"


def is_choice(c: Any) -> bool:
    """A choice is text or a finite number (never NaN/Infinity, a bool, null or an object)."""
    if isinstance(c, bool) or not isinstance(c, (str, int, float)):
        return False
    return not isinstance(c, float) or math.isfinite(c)


def choices_answer(ch: Any) -> Answer:
    """The answer of a choice field given as ``ch`` (one choice or a list of them)."""
    if isinstance(ch, str):
        ch = [ch]
    if not isinstance(ch, list) or not all(is_choice(c) for c in ch):
        return Answer(error=f"malformed choices {short(ch)!r}")
    return Answer(choices=tuple(ch))


@dataclass(frozen=True)
class _Fields:
    """A schema's fields as validation reads them, computed once per pull (not once per annotation)."""

    fields: tuple[Field, ...]
    by_name: dict[str, Field]
    categories: dict[str, list[str]]
    order: dict[str, dict[str, int]]

    @classmethod
    def of(cls, schema: Schema) -> _Fields:
        cats = {f.name: f.categories for f in schema.fields}
        return cls(
            tuple(schema.fields),
            {f.name: f for f in schema.fields},
            cats,
            {n: {v: i for i, v in enumerate(c)} for n, c in cats.items()},
        )


def validate(
    entries: list[tuple[str | None, Answer]], schema: Schema, fields: _Fields | None = None
) -> tuple[dict[str, str], list[str]]:
    """Read one annotation's answers against ``schema``: ``(values, problems)``.

    ``values`` maps field name -> canonical value for every field answered (binary: an unticked
    box is the absent value; multi: ``|``-joined in schema order, ``""`` when nothing is ticked;
    text: the text).  ``problems`` lists one-line reasons it is not a valid rating (empty: valid).
    Choice values are read with :meth:`Field.normalize` (exact, aliases, case/space-insensitive).
    """
    fs = fields or _Fields.of(schema)
    problems: list[str] = []
    answers: dict[str, Answer] = {}
    for name, ans in entries:
        if name is None:
            problems.append(ans.error)
        elif name not in fs.by_name:
            problems.append(f"unknown field {name!r}")
        elif name in answers:
            problems.append(f"{name}: answered twice")
        else:
            answers[name] = ans
    values: dict[str, str] = {}
    for f in fs.fields:
        ans = answers.get(f.name)
        if ans is not None and ans.error:
            problems.append(f"{f.name}: {ans.error}")
        elif f.kind == "text":
            if ans is not None:
                values[f.name] = ans.text or ""
        else:
            _choice_value(f, list(ans.choices or ()) if ans is not None else [], values, problems, fs)
    if not problems:
        for f in fs.fields:
            if not f.required or not _shown(f, values):
                continue
            v = values.get(f.name)
            if v is None or (f.kind in ("text", "multi") and not v.strip()):
                problems.append(f"{f.name}: required but missing")
    return values, problems


def _choice_value(f: Field, choices: list[Any], values: dict[str, str], problems: list[str], fs: _Fields) -> None:
    """The canonical value of choice field ``f`` answered ``choices`` into ``values``, or its problems."""
    canon: list[str] = []
    bad = False
    cats = fs.categories[f.name]
    for c in choices:
        if isinstance(c, str) and c in fs.order[f.name]:
            canon.append(c)  # the schema's own spelling (what normalize returns first)
            continue
        bad_chars = control_chars(c) if isinstance(c, str) else []
        if bad_chars:
            problems.append(f"{f.name}: {short(c)!r} contains control character {', '.join(bad_chars)}")
            bad = True
            continue
        try:
            canon.append(f.normalize(c))
        except ValueNotInSchema:
            problems.append(f"{f.name}: {short(c)!r} is not a value of {f.name} (allowed: {', '.join(cats)})")
            bad = True
    if bad:
        return
    canon = list(dict.fromkeys(canon))
    if f.kind == "binary":
        absent, present = cats
        if len(canon) > 1:
            problems.append(f"{f.name}: both {absent!r} and {present!r}")
            return
        values[f.name] = canon[0] if canon else absent
    elif f.kind == "multi":
        values[f.name] = MULTI_SEP.join(sorted(canon, key=fs.order[f.name].__getitem__))
    elif len(canon) > 1:
        problems.append(f"{f.name}: {len(canon)} values for a single-choice field ({', '.join(canon)})")
    elif canon:
        values[f.name] = canon[0]


def _shown(f: Field, values: dict[str, str]) -> bool:
    sw = f.shown_when
    if sw is None:
        return True
    got = values.get(sw.field)
    if got is None:
        return False
    return bool(set(got.split(MULTI_SEP)) & set(sw.values))


# --------------------------------------------------------------------------- the result


@dataclass
class IntakeResult:
    """A round's ratings, its held-out annotations and ``pull.json`` (``summary``) from one intake."""

    ratings: pd.DataFrame
    invalid: pd.DataFrame
    summary: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)
    #: item -> task data, for tasks mapped by ``item_key`` (projects goldboard did not create)
    items_data: dict[str, dict] = field(default_factory=dict)

    #: lines the caller adds before the warnings (items recorded, what changed since the last pull)
    notes: list[str] = field(default_factory=list)
    #: rater -> (items, unannotated) as collected (a table's pull.json leaves them out; the text shows them)
    item_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: the raters a partial read covered (``pull --from-export onc_a=FILE`` of a blinded round); None: every rater
    read_raters: set[str] | None = None

    def describe(self) -> str:
        """The one summary text of a pull, whatever the source (read from :attr:`summary`)."""
        s = self.summary
        tab = s.get("table")
        if tab is not None:
            head = f"{s['valid_annotations']} valid ratings from {tab['source']} ({tab['rows']} rows)"
        else:
            head = f"{s['valid_annotations']} valid annotations"
        lines = [f"round {s['round']}: {head} -> {len(self.ratings)} rating rows"]
        lines += [f"  {r}: {_rater_line(r, c, self.item_counts.get(r))}" for r, c in s["raters"].items()]
        if s["invalid_annotations"] or s["superseded_annotations"]:
            lines.append(
                f"  held out: {s['invalid_annotations']} invalid, {s['superseded_annotations']} superseded "
                + ("" if tab is not None else "annotations ")
                + f"(see {self.paths.get('invalid', 'invalid.csv')})"
            )
            for reason, n in list(s["invalid_reasons"].items())[:8]:
                lines.append(f"    {n} x {reason}")
        norm = s.get("normalised") or []
        if norm:
            n = sum(x["n"] for x in norm)
            shown = ", ".join(f"{x['from']!r} -> {x['to']} ({x['n']})" for x in norm[:6])
            more = f", ... {len(norm) - 6} more spellings (pull.json)" if len(norm) > 6 else ""
            lines.append(f"  {n} value{'s' if n != 1 else ''} read in the schema's spelling: {shown}{more}")
        lines += self.notes
        for w in s.get("warnings", []):
            lines.append(f"  warning: {w}")
        return "\n".join(lines)


def _rater_line(r: str, c: dict[str, Any], counts: tuple[int, int] | None = None) -> str:
    """``onc_a: 3 rated, 1 invalid, 1 superseded[; N by other users][, N blank][, ...] (5 items: 3 rated
    + 1 invalid + 1 unannotated)``: each item once, the arithmetic a reader can check (a superseded
    annotation is of an item counted already; a blank cell is no rating)."""
    line = f"{c['valid']} rated, {c['invalid']} invalid, {c['superseded']} superseded"
    if c.get("by_other_users"):
        n = c["by_other_users"]
        by = "annotation by another user" if n == 1 else "annotations by other users"
        line += f"; {n} {by} held out of {r}'s project"
    if c.get("blank"):
        line += f", {c['blank']} blank"
    if c.get("no_rationale"):
        line += f", {c['no_rationale']} without a rationale"
    items, unannotated = counts or (c.get("items"), c.get("unannotated"))
    if items is not None and unannotated is not None:
        what = "item" if items == 1 else "items"
        line += f" ({items} {what}: {c['valid']} rated + {c['invalid']} invalid + {unannotated} unannotated)"
    return line


# --------------------------------------------------------------------------- the pipeline


def ts(value: Any) -> str:
    """A timestamp as UTC ISO text (``""`` when absent; text that is no time stays as it is)."""
    if value in (None, ""):
        return ""
    try:
        t = pd.Timestamp(value)
    except (ValueError, TypeError):
        return str(value)
    if t.tzinfo is None:
        t = t.tz_localize("UTC")
    return t.tz_convert("UTC").isoformat()


def num(value: Any) -> str:
    """An id or a number as text: ``12`` for ``12.0``, ``""`` when absent."""
    if value is None or value == "":
        return ""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(x):
        return ""
    return repr(int(x)) if x.is_integer() else repr(x)


def int_or(x: Any) -> int:
    try:
        return int(x)
    except (TypeError, ValueError):
        return -1


def reason_kind(reason: str) -> str:
    """A reason without the quoted specifics, for counting."""
    if " already rated " in reason:  # Annotation.held: another source gave this item x rater
        return "already rated from another source"
    if ": " in reason and not reason.startswith(("annotated by", "task ")):
        head, rest = reason.split(": ", 1)
        if "is not a value" in rest:
            return f"{head}: value not in schema"
        return f"{head}: {rest.split(' (')[0]}"
    return reason.split(" (")[0]


def collect(
    shown: Iterable[Shown],
    schema: Schema,
    raters: list[str],
    round_number: int,
    *,
    user_raters: dict[int, str] | None = None,
    known_users: dict[int, str] | None = None,
    units: pd.DataFrame | None = None,
) -> IntakeResult:
    """Attribute, validate, keep the latest and hold out (see the module docstring).

    ``user_raters`` maps a source account (server user id) to a rater; ``known_users`` maps
    other accounts to a name (e.g. ``admin``), for messages.  ``units`` (item_id, case_id,
    output_id, model) fills ids a record lacks and orders the ratings.
    """
    unit_info = _unit_info(units)
    shown = list(shown)
    seen = _attribute(shown, schema, raters, round_number, dict(user_raters or {}), known_users, unit_info)
    kept = _keep_latest(seen, schema, raters, round_number)
    ratings = _sorted_ratings(pd.DataFrame(kept.rows, columns=RATINGS_COLUMNS), unit_info, raters, schema)
    invalid = pd.DataFrame(seen.invalid_rows, columns=INVALID_COLUMNS)
    summary = _summary(seen, kept, schema, raters, round_number, ratings)
    ignored = Counter(name for sh in shown for ann in sh.annotations for name in ann.ignored)
    if ignored:
        names = ", ".join(f"{n!r} ({c})" for n, c in ignored.most_common())
        summary["warnings"].insert(
            0,
            f"{sum(ignored.values())} answer(s) of control(s) the schema has no field for ignored: {names} "
            f"(span or region labels, no rating); the schema's fields were read",
        )
        summary["ignored_controls"] = dict(ignored)
    counts = {r: (c["items"], c["unannotated"]) for r, c in summary["raters"].items()}
    return IntakeResult(ratings=ratings, invalid=invalid, summary=summary, item_counts=counts)


@dataclass
class _Attributed:
    """Every annotation, attributed and validated: the candidates per (item, rater), the held out, counts."""

    candidates: dict[tuple[str, str], list[dict]]  # (item, rater) -> annotations
    expected: dict[str, set[str]]  # rater -> items shown to the rater
    invalid_rows: list[dict] = field(default_factory=list)
    task_count: int = 0
    total_ann: int = 0
    seen_task_items: dict[tuple[Any, str], list[Any]] = field(default_factory=lambda: defaultdict(list))
    unattributed: int = 0
    by_project_only: set[str] = field(default_factory=set)
    held_out_foreign: Counter = field(default_factory=Counter)  # rater -> annotations by others in their project


_ROW_ORDER = ["round", "item_id", "case_id", "output_id", "model", "rater", "field", "value", "rationale"]
_ROW_ORDER += ["annotated_at", "lead_time", "annotation_id", "task_id", "project_id"]
assert _ROW_ORDER == RATINGS_COLUMNS, "_keep_latest builds rating rows as tuples in RATINGS_COLUMNS order"


@dataclass(frozen=True)
class _Kept:
    """The latest valid annotation per (item, rater) as rating rows, and the per-rater counts."""

    rows: list[tuple]  # in RATINGS_COLUMNS order (a tuple holds a row in a third of a dict's memory)
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
    shown: Iterable[Shown],
    schema: Schema,
    raters: list[str],
    round_number: int,
    user_raters: dict[int, str],
    known_users: dict[int, str] | None,
    unit_info: dict[str, dict],
) -> _Attributed:
    """Steps 1 and 2 of the module docstring for every annotation."""
    rater_user = {r: uid for uid, r in user_raters.items()}
    names = {**(known_users or {}), **user_raters}
    fields = _Fields.of(schema)
    seen = _Attributed(candidates=defaultdict(list), expected={r: set() for r in raters})
    memo: dict[str, tuple[dict[str, str], list[str]]] = {}
    for sh in shown:
        seen.task_count += 1
        item = sh.item_id
        info = {"item_id": item, **{k: sh.info.get(k, "") for k in ("case_id", "output_id", "model")}}
        if item in unit_info:
            for k in ("case_id", "output_id", "model"):
                if not info[k]:
                    info[k] = unit_info[item].get(k, "")
        if item:
            seen.seen_task_items[(sh.group, item)].append(sh.task_id)
            for r in [sh.rater] if sh.rater else raters:
                if r in seen.expected:
                    seen.expected[r].add(item)
        for ann in sh.annotations:
            seen.total_ann += 1
            uid = ann.user
            base = {**info, "task_id": sh.task_id, "project_id": sh.project_id, "annotation": ann, "uid": uid}
            reasons: list[str] = []
            who = f"{names[uid]} (user {uid})" if uid in names else f"user {uid}"
            foreign = False
            if sh.rater is not None:
                rater = sh.rater
                own = rater_user.get(rater) if sh.check_user else None
                if own is None:
                    if sh.check_user:
                        seen.by_project_only.add(rater)
                elif uid != own:
                    foreign = True
                    reasons.append(f"annotated by {who} in {rater}'s project" if uid is not None else NO_ANNOTATOR)
            else:
                rater = user_raters.get(uid, "") if uid is not None else ""
                if not rater:
                    seen.unattributed += 1
                    if uid is not None:
                        reasons.append(f"annotated by {who}, who is not a study rater")
                    elif not ann.held:  # a held reason names what completed_by is instead
                        reasons.append(NO_ANNOTATOR)
            if not item:
                reasons.append(sh.no_item or NO_ITEM)
            if ann.held:
                reasons.append(ann.held)
            if ann.cancelled:
                reasons.append("skipped (cancelled) annotation")
                values: dict[str, str] = {}
            elif ann.unreadable:
                values = {}
                reasons.append(ann.unreadable)
            else:
                values, problems = _validate_cached(ann.entries, schema, fields, memo)
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


def _validate_cached(
    entries: list[tuple[str | None, Answer]], schema: Schema, fields: _Fields, memo: dict
) -> tuple[dict[str, str], list[str]]:
    """:func:`validate`, once per distinct set of choice answers in a pull (a table of 200,000 items
    holds a handful of distinct labels).  The key is the entries' ``repr``, which tells ``1`` from
    ``1.0`` and ``"1"`` (all read differently); answers with text (a rationale) are not memoised, so
    the memo stays as small as the set of distinct labels.  Callers get their own copies."""
    if any(ans.text is not None for _, ans in entries):
        return validate(entries, schema, fields)
    key = repr(entries)
    got = memo.get(key)
    if got is None:
        got = memo[key] = validate(entries, schema, fields)
    return dict(got[0]), list(got[1])


def _keep_latest(seen: _Attributed, schema: Schema, raters: list[str], round_number: int) -> _Kept:
    """Step 3: the latest annotation per (item, rater) becomes rating rows (when valid); the others are held out."""
    rationale = schema.rationale_field
    row_fields = [f for f in schema.fields if not (rationale is not None and f.name == rationale.name)]
    invalid_rows = seen.invalid_rows
    rows: list[dict] = []
    stats = {r: Counter() for r in raters}
    rated: dict[str, set[str]] = {r: set() for r in raters}
    for (item, rater), anns in seen.candidates.items():
        if len(anns) > 1:
            anns.sort(key=lambda a: (ts(a["annotation"].at), int_or(a["annotation"].annotation_id)))
        latest = anns[-1]
        st = stats.setdefault(rater, Counter())
        for old in anns[:-1]:
            st["superseded"] += 1
            invalid_rows.append(
                _invalid_row(
                    round_number,
                    "superseded",
                    f"superseded by annotation {latest['annotation'].annotation_id} "
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
        ann: Annotation = latest["annotation"]
        # a row is head + (field, value) + tail, in RATINGS_COLUMNS order (checked at import below)
        head = (round_number, item, latest["case_id"], latest["output_id"], latest["model"], rater)
        tail = (
            latest["values"].get(rationale.name, "") if rationale is not None else "",
            ts(ann.at),
            num(ann.lead_time),
            num(ann.annotation_id),
            num(latest["task_id"]),
            num(latest["project_id"]),
        )
        for f in row_fields:
            v = latest["values"].get(f.name)
            if v is None:
                if f.kind == "multi":
                    v = ""
                else:
                    continue  # not answered (optional or hidden)
            rows.append((*head, f.name, v, *tail))
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


def _summary(
    seen: _Attributed, kept: _Kept, schema: Schema, raters: list[str], round_number: int, ratings: pd.DataFrame
) -> dict[str, Any]:
    """``pull.json``: counts, reasons, unannotated items per rater, warnings."""
    invalid_rows, stats, expected = seen.invalid_rows, kept.stats, seen.expected
    warnings: list[str] = []
    order = {r: i for i, r in enumerate(raters)}
    for r in sorted(seen.by_project_only, key=lambda x: (order.get(x, len(order)), x)):
        warnings.append(f"{r}: server user unknown, annotations attributed by project only")
    dups = {f"{item}": ids for (pid, item), ids in seen.seen_task_items.items() if len(ids) > 1}
    if dups:
        warnings.append(f"{len(dups)} items appear in more than one task of a project (e.g. {next(iter(dups))})")
    reasons = Counter()
    for row in invalid_rows:
        if row["kind"] == "invalid":
            for part in row["reason"].split("; "):
                reasons[reason_kind(part)] += 1
    # each item of a rater is counted once: rated (latest annotation valid), invalid (latest held
    # out) or unannotated (none at all); superseded annotations are of items counted already
    annotated: dict[str, set[str]] = defaultdict(set)
    for item, r in seen.candidates:
        annotated[r].add(item)
    per_rater = {}
    for r in sorted(
        set(raters) | set(stats), key=lambda x: (x not in raters, raters.index(x) if x in raters else 0, x)
    ):
        items = expected.get(r, set()) | annotated[r]
        miss = sorted(items - annotated[r])
        per_rater[r] = {
            "valid": stats.get(r, Counter())["valid"],
            "invalid": stats.get(r, Counter())["invalid"],
            "superseded": stats.get(r, Counter())["superseded"],
            "by_other_users": seen.held_out_foreign[r],
            "items": len(items),
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


def _invalid_row(round_number: int, kind: str, reason: str, a: dict) -> dict:
    ann: Annotation = a["annotation"]
    return {
        "round": round_number,
        "kind": kind,
        "reason": reason,
        "rater": a.get("rater", ""),
        "item_id": a.get("item_id", ""),
        "case_id": a.get("case_id", ""),
        "output_id": a.get("output_id", ""),
        "model": a.get("model", ""),
        "task_id": num(a.get("task_id")),
        "project_id": num(a.get("project_id")),
        "annotation_id": num(ann.annotation_id),
        "completed_by": "" if a.get("uid") is None else str(a["uid"]),
        "annotated_at": ts(ann.at),
        "lead_time": num(ann.lead_time),
        "was_cancelled": "true" if ann.cancelled else "false",
        "result": _raw_text(ann),
    }


def _raw_text(ann: Annotation) -> str:
    """The annotation's answer verbatim: text as given (or made by a callable, only for the rows held
    out), UTF-8 JSON bytes decoded, else as JSON."""
    if callable(ann.raw):
        return ann.raw()
    if ann.raw_is_text:
        return ann.raw
    if isinstance(ann.raw, bytes):
        return ann.raw.decode("utf-8")
    return json.dumps(ann.raw, ensure_ascii=False)


__all__ = [
    "Answer",
    "Annotation",
    "Shown",
    "IntakeResult",
    "INVALID_COLUMNS",
    "collect",
    "validate",
    "choices_answer",
    "control_chars",
]
