"""`goldboard pull --from-file FORMAT=FILE`: another annotation tool's export into a study round.

The format's reader (:mod:`goldboard.cases.intake.files`: one adapter module per tool, found by
scanning :mod:`goldboard.cases.intake.sources`) yields normalised annotations; this workflow maps
the file's annotators to study raters (``--rater NAME=RATER``, else the same name), holds out what
the study cannot take (an item it does not have, in a study whose units were pushed; an item x
rater another source already rated in the round; a file of which the round would take nothing is
refused, as a table is), runs the intake core and writes the round with
:meth:`Study.write_round`, as for a ratings table: provenance ``<source>:<row>``, the file (SHA-256,
rows, format) recorded in study.toml, re-pulling the same source replacing its own rows only.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.adjudicate.rules import rule_warnings
from goldboard.cases.intake.columns import relaxed_schema
from goldboard.cases.intake.core import Annotation, IntakeResult, Shown, collect
from goldboard.cases.intake.files import (
    FileOptions,
    FileRead,
    check_item_ids,
    file_formats,
    source_kind,
    split_sessions,
)
from goldboard.errors import GoldboardError, ParamError, check_rater_map
from goldboard.study import Study
from goldboard.study_options import free_text_option
from goldboard.text import did_you_mean
from goldboard.workflows.intake import RoundIntake, SourceRead


@dataclass
class FilePullResult:
    pull: IntakeResult
    source: str
    new_items: list[str] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, Any]:
        return self.pull.summary

    def describe(self) -> str:
        s = self.summary
        f = s["file"]
        self.pull.notes = [f"  {len(self.new_items)} new items recorded in units.jsonl"] if self.new_items else []
        if s.get("changes", {}).get("text"):  # what a re-pull of this file changed (RULES: every file source says it)
            self.pull.notes.append("  " + s["changes"]["text"])
        return f"{source_kind(f)} {self.source} ({f['rows']} records):\n" + self.pull.describe()


def pull_file(
    study: Study,
    fmt: str,
    path: str | Path,
    *,
    round_number: int | None = None,
    rater_map: dict[str, str] | None = None,
    field_name: str | None = None,
    item_key: str | None = None,
    source: str | None = None,
    write: bool = True,
    add_to_adjudicated_round: bool = False,
) -> FilePullResult:
    """Read ``path``, an export of the tool ``fmt`` (a name of :func:`file_formats`), into round
    ``round_number`` (default: the latest; round 1 of a study without rounds) through the round
    intake (:class:`~goldboard.workflows.intake.RoundIntake`).  ``add_to_adjudicated_round``: add
    items new to a round that already has decisions or a gold release (else refused, as for a table)."""
    reader, path, source = _open(fmt, path, source)
    read = reader.read(path, study.schema, FileOptions(field=field_name, item_key=item_key, source=source))
    check_read(read, path, reader.noun or f"{reader.name} export")
    who = _annotators(read, list(study.raters), dict(rater_map or {}), path)
    intake = RoundIntake(study, source, "file", round_number, accept=add_to_adjudicated_round)
    intake.admit(path, read)
    taken = intake.take(_source_read(intake, reader, read, who, path), write=write)
    result = FilePullResult(IntakeResult(taken.ratings, taken.invalid, taken.summary), source, taken.new_items)
    result.paths = result.pull.paths = taken.paths
    return result


def _open(fmt: str, path: str | Path, source: str | None) -> tuple[Any, Path, str]:
    """``(the format's reader, the file, the source's name)``, each checked."""
    reader = _format(fmt, path)
    path = Path(path)
    if not path.is_file():
        raise GoldboardError(f"{path}: file not found")
    source = free_text_option(source or path.name, "source", "the name")  # a key of study.toml's [rounds.tables]
    if ":" in source or not source.strip():
        raise ParamError("{source} {name!r}: give a name without ':'", name=source)
    return reader, path, source


def _source_read(intake: RoundIntake, reader: Any, read: FileRead, who: dict[str, str], path: Path) -> SourceRead:
    """The file's read for the intake: each answer validated by the intake core, what the study
    cannot take held out (:meth:`RoundIntake.held_reason`), the summary's warnings."""
    study, n, source = intake.study, intake.n, intake.source
    raters = list(study.raters)
    shown = _shown(read, who, raters, source, intake)
    res = collect(
        shown, relaxed_schema(study.schema, set(read.fields)), raters, n, units=_unit_frame(read, intake.units)
    )
    res.ratings = res.ratings[res.ratings["field"].isin(read.fields)].reset_index(drop=True)
    res.summary["rating_rows"] = int(len(res.ratings))
    given = None
    if any(a.held for _, _, a in read.annotations):  # held by the study (another source, an unknown item)
        answered = [(item, who[name]) for name, item, a in read.annotations if _rates(a, read.fields[0])]
        given = pd.DataFrame(answered, columns=["item_id", "rater"])
    res.summary["warnings"] = read.warnings + res.summary["warnings"] + rule_warnings(res.ratings, study.schema, raters)
    return SourceRead(
        source,
        "file",
        res.ratings,
        res.invalid,
        res.summary,
        path,
        read,
        given=given,
        rated_field=read.fields[0],
        noun=source_kind({"format": reader.name}),
        provenance={"format": reader.name, "rows": read.rows},
        record={"rows": read.rows, "format": reader.name},
        raters_read=set(who.values()),
    )


def check_read(read: FileRead, path: Path, noun: str) -> None:
    """What every file source is refused for, as a table is: no answer of the field at all, an item id
    that is a missing-value placeholder or a number in scientific notation, item ids that are twins
    by the id rules (:func:`goldboard.cases.ids.id_key`), and two different answers
    by one annotator to one item that the file does not order in time (one line must be wrong)."""
    line = {}  # item -> the file line of its first answer, for a message
    for _, item, a in read.annotations:
        line.setdefault(item, _line(a, path))
    check_item_ids((item, str(line.get(item, path))) for item in read.items)
    _check_unordered_twins(read, path)
    field_name = read.fields[0]
    if not any(n == field_name for _, _, a in read.annotations for n, _ in a.entries):
        reasons = [f"{_line(a, path)}: {a.unreadable}" for _, _, a in read.annotations if a.unreadable][:1]
        raise ParamError(
            "{where}: no answer of field {name} in this {noun} ({what}); nothing pulled (check the file and {field})",
            where=path,
            name=field_name,
            noun=noun,
            what=f"{read.rows} records, {len(read.annotations)} answers{'; e.g. ' + reasons[0] if reasons else ''}",
        )


def _rates(a: Annotation, field_name: str) -> bool:
    """Whether answer ``a`` holds a rating of field ``field_name`` (not skipped, not unreadable)."""
    return not a.cancelled and not a.unreadable and any(n == field_name for n, _ in a.entries)


def _check_unordered_twins(read: FileRead, path: Path) -> None:
    by: dict[tuple[str, str], list[Annotation]] = defaultdict(list)
    for who, item, a in read.annotations:
        for b in by[(who, item)]:
            if b.at == a.at and (b.entries, b.cancelled, b.unreadable) != (a.entries, a.cancelled, a.unreadable):
                when = f"at the same time {a.at}" if a.at else "with no time to order them"
                raise GoldboardError(
                    f"{_line(b, path)}, {_line(a, path)}: two different answers by {who} to item {item!r} {when}; "
                    f"which one is meant cannot be told (line order is not a rule): delete the wrong one"
                )
        by[(who, item)].append(a)


def _line(a: Annotation, path: Path) -> str:
    """``path:line`` of an annotation (its id is ``source:line``, or ``source:member/line``)."""
    return f"{path}:{str(a.annotation_id).split(':', 1)[-1]}"


def _format(fmt: str, path: str | Path) -> Any:
    formats = file_formats()
    if fmt not in formats:
        names = sorted(formats)
        raise GoldboardError(
            f"{fmt}={path}: {fmt!r} is not a format goldboard reads{did_you_mean(fmt, names)} "
            f"(formats: {', '.join(names)})",
            param="from_file",
        )
    return formats[fmt]


def _annotators(read: FileRead, raters: list[str], rater_map: dict[str, str], path: Path) -> dict[str, str]:
    """Annotator (as the file names them) -> study rater: ``--rater NAME=RATER``, else the same name."""
    people, notes = split_sessions(read, rater_map, raters)  # issue 33: several unnamed sessions -> one person
    check_rater_map(people, raters)
    read.warnings.extend(notes)
    names = list(dict.fromkeys([*read.shown, *(a for a, _, _ in read.annotations)]))
    who = {}
    for name in names:
        rater = rater_map.get(name) or (name if name in raters else None)
        if rater is None:
            raise ParamError(
                "{path}: annotator {name!r} is not a rater of this study{hint} (raters: {raters}); map it with "
                "{rater_map} {name}=RATER",
                path=path,
                name=name,
                hint=did_you_mean(name, raters),
                raters=", ".join(raters),
            )
        who[name] = rater
    return who


def _shown(
    read: FileRead,
    who: dict[str, str],
    raters: list[str],
    source: str,
    intake: RoundIntake,
) -> list[Shown]:
    """Each item shown to each rater with the rater's annotations of it; what the study cannot take is held."""
    anns: dict[tuple[str, str], list[Annotation]] = defaultdict(list)
    items_of: dict[str, list[str]] = defaultdict(list)
    for name, items in read.shown.items():
        items_of[who[name]].extend(items)
    for name, item, a in read.annotations:
        rater = who[name]
        a.held = intake.held_reason(item, rater) or a.held
        anns[(rater, item)].append(a)
        items_of[rater].append(item)
    order = [r for r in raters if r in items_of] + [r for r in items_of if r not in raters]
    return [
        Shown(
            item, read.item_info.get(item, {}), rater, anns.get((rater, item), []), f"{source}/{rater}", None, "", False
        )
        for rater in order
        for item in dict.fromkeys(items_of[rater])
    ]


def _unit_frame(read: FileRead, units: list[dict]) -> pd.DataFrame:
    cols = ["item_id", "case_id", "output_id", "model"]
    rows = [{"item_id": str(u["item_id"]), **{k: str(u.get(k, "") or "") for k in cols[1:]}} for u in units]
    rows += [{"item_id": it, **{k: read.item_info[it].get(k, "") for k in cols[1:]}} for it in read.items]
    return pd.DataFrame(rows, columns=cols).drop_duplicates("item_id")


__all__ = ["pull_file", "FilePullResult"]
