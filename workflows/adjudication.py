"""Adjudication of a study workspace: the review workbook, importing it, gold releases.

Each function reads the study's ratings (:func:`goldboard.study.study_ratings`),
schema, raters, units and decisions log, and calls the study-free function that
does the work (:func:`write_review_sheet`: :func:`review_content` computes what the sheet
shows -- flags, provisional gold, agreement -- and
:func:`goldboard.exports.workbook.write_review_workbook` lays it out,
:func:`goldboard.adjudicate.review_sheet.import_review_sheet`,
:func:`goldboard.exports.gold.write_gold_release`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldboard.adjudicate.decisions import (
    identity_key,
    read_decisions,
)
from goldboard.adjudicate.flags import flag_columns, flag_disagreements, summarize_flags
from goldboard.adjudicate.gold import resolve_gold, resolve_gold_columns
from goldboard.adjudicate.review_sheet import (
    ImportResult,
    import_review_sheet,
    ratings_digest_columns,
    read_sheet_meta,
    sheet_state_rows,
)
from goldboard.adjudicate.rules import check_gold_rules
from goldboard.analysis import statistics as SD
from goldboard.analysis.agreement import agreement
from goldboard.cases.ratings import adjudicable_fields, current_ratings
from goldboard.cases.ratings_columns import RatingColumns, read_rating_columns
from goldboard.errors import GoldboardError, ParamError
from goldboard.label_configs.schema import Schema
from goldboard.study import Study, study_ratings
from goldboard.study_checks import units_file_problem
from goldboard.workflows.gold_release import GoldChecks, gold_manifest
from goldboard.workflows.log_checks import check_log_items

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from goldboard.exports.gold import GoldRelease
    from goldboard.exports.workbook import ReviewContent, WorkbookInfo

#: statistics shown on the Summary sheet (the agreement engine computes more)
#: larger ratings files are read as DataFrames for the review sheet: measured on one round of the
#: OpenMTB layout (load 3): 30,000 ratings (2.1 MB) 5.4-5.6 s CPU from columns against 5.8-6.3 s
#: from DataFrames; 60,000 (4.2 MB) 12.7-13.1 s against 11.5-11.9 s (the workbook dominates both)
SHEET_MAX_BYTES = 2_000_000

HEADLINE_STATISTICS = SD.summary_keys()  # declared in analysis/statistics.py


def headline_agreement(
    ratings: pd.DataFrame,
    schema: Schema,
    raters: Sequence[str] | None = None,
    *,
    round_number: int | None = None,
    in_force: pd.DataFrame | None = None,
) -> tuple[list[dict], str]:
    """Headline agreement per adjudicable field from the agreement engine
    (:func:`goldboard.analysis.agreement.agreement`): percent agreement, Cohen's kappa
    (two raters; weighted too for ordinal fields) or Fleiss' kappa, Krippendorff's alpha;
    all raters together, no strata.

    Returns ``(rows, note)``; ``rows`` is empty with an explanatory ``note`` when the
    engine fails on these ratings (the workbook is still written).  ``in_force``: what
    :func:`~goldboard.cases.ratings.current_ratings` returns for these arguments, when the
    caller has it already (not changed here).
    """
    cur = current_ratings(ratings, raters, round_number=round_number) if in_force is None else in_force
    return _headline_over_fields(cur, schema, raters, lambda name: cur[cur["field"] == name]["rater"].nunique())


def _headline_over_fields(cur: Any, schema: Schema, raters: Any, n_raters: Any) -> tuple[list[dict], str]:
    """The headline rows of every adjudicable single-value field that ``n_raters(field)`` says two or
    more raters rated; ``cur``: the ratings in force, as a DataFrame or as :class:`RatingColumns`."""
    rows, notes = [], []
    for f in adjudicable_fields(schema):
        if f.kind == "multi":  # agreement is per value (present/absent): `goldboard agree`, the report
            continue
        if n_raters(f.name) < 2:
            continue
        try:
            res = agreement(cur, f.name, schema=schema, raters=list(raters) if raters else None)
        except Exception as exc:  # the Summary must not fail because one statistic does
            notes.append(f"{f.name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        rows += _headline_rows(f.name, res)
    return rows, "; ".join(notes)


def review_content(
    ratings: pd.DataFrame,
    schema: Schema,
    *,
    raters: Sequence[str] | None = None,
    decisions: Sequence[dict] = (),
    round_number: int | None = None,
    agreement_rows: list[dict] | None = None,
    agreement_note: str = "",
    state: Sequence[tuple[str, str]] = (),
) -> ReviewContent:
    """What a review sheet of these ratings shows (:class:`ReviewContent`): the flags and
    their summary, the unanimous unflagged rows of the provisional gold, the ratings in
    force, the headline agreement (``agreement_rows`` overrides the engine call) and the
    ``_goldboard`` state rows (default: the state of ``decisions`` and ``ratings``, with a
    fresh sheet id -- every sheet records its origin; the import refuses one without).
    ``round_number``: that round only (default: per item, the latest round every rater rated)."""
    flags = flag_disagreements(ratings, schema, raters, round_number=round_number)
    gold = resolve_gold(ratings, schema, (), raters, round_number=round_number)
    agreed = gold[(gold["method"] == "unanimous")]
    flagged_keys = set(zip(flags["item_id"], flags["field"]))
    agreed = agreed[[(i, f) not in flagged_keys for i, f in zip(agreed["item_id"], agreed["field"])]]
    in_force = current_ratings(ratings, raters, round_number=round_number)  # read once, used twice
    if agreement_rows is None:
        agreement_rows, agreement_note = headline_agreement(
            ratings, schema, raters, round_number=round_number, in_force=in_force
        )
    from goldboard.exports.workbook import ReviewContent  # openpyxl: not for gold export and the report

    return ReviewContent(
        flags=flags,
        summary=summarize_flags(flags, schema),
        agreed=agreed,
        items=len(gold["item_id"].unique()),
        raters=[c[len("value_") :] for c in flags.columns if c.startswith("value_")]
        or [c[len("value_") :] for c in gold.columns if c.startswith("value_")],
        in_force=in_force,
        agreement_rows=agreement_rows,
        agreement_note=agreement_note,
        state=list(state) or sheet_state_rows(list(decisions), ratings),
    )


def write_review_sheet(
    path: str | Path,
    ratings: pd.DataFrame,
    schema: Schema,
    *,
    raters: Sequence[str] | None = None,
    units: pd.DataFrame | None = None,
    decisions: Sequence[dict] = (),
    base_url: str = "",
    study_info: dict[str, Any] | None = None,
    agreement_rows: list[dict] | None = None,
    agreement_note: str = "",
    now: str | None = None,
    round_number: int | None = None,
    state: Sequence[tuple[str, str]] = (),
) -> WorkbookInfo:
    """Compute what the review sheet of ``ratings`` shows (:func:`review_content`) and write
    it (:func:`goldboard.exports.workbook.write_review_workbook`), atomically."""
    decisions = list(decisions)
    content = review_content(
        ratings,
        schema,
        raters=raters,
        decisions=decisions,
        round_number=round_number,
        agreement_rows=agreement_rows,
        agreement_note=agreement_note,
        state=state,
    )
    from goldboard.exports.workbook import write_review_workbook

    return write_review_workbook(
        path, content, schema, units=units, decisions=decisions, base_url=base_url, study_info=study_info, now=now
    )


def write_study_workbook(
    study: Study, path: str | Path, *, round_number: int | None = None, now: str | None = None
) -> WorkbookInfo:
    """Write the review workbook of a study workspace (its ratings, units, decisions, server URL).
    A units file gone or replaced (:func:`~goldboard.study_checks.units_file_problem`) is refused: the sheet would
    show no case or output."""
    problem = units_file_problem(study)
    if problem:
        raise GoldboardError(problem + "; no review sheet written")
    table = plain_round_columns(study, round_number)
    # the ratings first, then the log (the order of the checks, and so of the errors, as always)
    ratings = study_ratings(study, round_number) if table is None else None
    check_log_items(study)
    entries = read_decisions(study.decisions_path)
    info = {
        "study": study.name,
        "workspace": str(study.path),
        "round": "per item, the latest round every rater rated" if round_number is None else round_number,
    }
    quick = None if table is None else study_review_columns(study, entries, round_number, table=table)
    if quick is not None:  # a small plain study: no pandas (issue 19)
        content, units = quick
        from goldboard.exports.workbook import write_review_workbook

        return write_review_workbook(
            path, content, study.schema, units=units, decisions=entries, base_url=study.url, study_info=info, now=now
        )
    if ratings is None:
        ratings = study_ratings(study, round_number)
    return write_review_sheet(
        path,
        ratings,
        study.schema,
        raters=study.grid_raters(),
        units=study.units(),
        decisions=entries,
        base_url=study.url,
        study_info=info,
        now=now,
        state=sheet_state_rows(entries, ratings),  # what the sheet shows: the import checks against it
        round_number=round_number,
    )


def plain_round_columns(study: Study, round_number: int | None = None) -> dict[str, list[str]] | None:
    """The one pulled round's ratings as columns (:func:`read_rating_columns`, up to
    :data:`SHEET_MAX_BYTES`) when the study has one pulled round, no design and ``round_number``
    is that round or ``None``; else ``None``."""
    pulled = study.pulled_rounds()
    if len(pulled) != 1 or round_number not in (None, pulled[0]) or any(r.design for r in study.rounds):
        return None
    if study.lost_ratings_rounds():  # a pulled round's ratings.csv deleted: the frame path names it
        return None
    return read_rating_columns(study.ratings_path(pulled[0]), SHEET_MAX_BYTES)


def study_review_columns(
    study: Study, decisions: list[dict], round_number: int | None = None, *, table: dict[str, list[str]] | None = None
) -> tuple[ReviewContent, list[dict]] | None:
    """:func:`review_content` of a small study read as columns, without pandas, and its units
    as records: the same content by the same rules (flags: :func:`flag_columns`, gold:
    :func:`resolve_gold_columns`, agreement on :class:`RatingColumns`).  ``None`` -- the caller
    reads DataFrames -- for anything but one pulled round without a design in a plain ratings
    file (:func:`plain_round_columns`; ``table``: already read), or when the columns do not
    answer on their own."""
    table = plain_round_columns(study, round_number) if table is None else table
    units = _unit_records(study.units_path)
    if table is None or units is None:
        return None
    n = len(table["item_id"])
    for c in ("rationale", "annotated_at", "task_id", "project_id"):
        table.setdefault(c, [""] * n)
    raters = study.grid_raters()
    flags = flag_columns(table, study.schema, raters, round_number=round_number)
    gold = resolve_gold_columns(table, study.schema, raters, round_number=round_number)
    if flags is None or gold is None:
        return None
    flagged = set(zip(flags["item_id"], flags["field"]))
    keep = [
        m == "unanimous" and (i, f) not in flagged for i, f, m in zip(gold["item_id"], gold["field"], gold["method"])
    ]
    agreed = [{c: v[k] for c, v in gold.items()} for k in range(len(keep)) if keep[k]]
    # the ratings in force of one round: every row, by annotation time (stable), as current_ratings orders them
    order = sorted(range(n), key=table["annotated_at"].__getitem__)
    in_force = {c: [vals[k] for k in order] for c, vals in table.items()}
    frame = lambda: current_ratings(study_ratings(study, round_number), raters, round_number=round_number)  # noqa: E731
    rows, note = _column_agreement(RatingColumns(in_force, frame), study.schema, raters)
    from goldboard.exports.workbook import ReviewContent

    content = ReviewContent(
        flags=flags,
        summary=summarize_flags(flags, study.schema),
        agreed=agreed,
        items=len(set(gold["item_id"])),
        raters=[c[len("value_") :] for c in flags.columns if c.startswith("value_")]
        or [c[len("value_") :] for c in gold if c.startswith("value_")],
        in_force=in_force,
        agreement_rows=rows,
        agreement_note=note,
        state=_state_rows(decisions, table),
    )
    return content, units


def _state_rows(decisions: list[dict], table: dict[str, list[str]]) -> list[tuple[str, str]]:
    """:func:`sheet_state_rows` with the ratings digest of the columns."""
    return sheet_state_rows(decisions, None, ratings_sha256=ratings_digest_columns(table))


def _column_agreement(cur: RatingColumns, schema: Schema, raters: list[str]) -> tuple[list[dict], str]:
    """:func:`headline_agreement` of the ratings in force read as columns."""
    return _headline_over_fields(
        cur, schema, raters, lambda name: len({r for r, g in zip(cur["rater"], cur["field"]) if g == name})
    )


def _headline_rows(field: str, res: dict) -> list[dict]:
    """The headline statistics of one field's :func:`agreement` result."""
    n_raters = res.get("n_raters")
    rows = []
    for st in res.get("statistics", []) or []:
        if st.get("statistic") not in HEADLINE_STATISTICS or st.get("group") not in (None, ""):
            continue
        if n_raters and len(st.get("raters") or []) not in (0, n_raters):
            continue  # pairwise rows of a multi-rater study
        rows.append({"field": field, **st})
    return rows


def _unit_records(path: Path) -> list[dict] | None:
    """The units file as records for the workbook, when every case and output text is text
    (else ``None``: :meth:`Study.units` reads it as a DataFrame, as always)."""
    import json

    if not path.exists():
        return []
    out = []
    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str):
                return None
            if any(not isinstance(rec.get(c, ""), str) for c in ("case_text", "output_text")):
                return None
            out.append(rec)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return out


def import_study_sheet(
    study: Study,
    sheet: str | Path,
    *,
    adjudicator: str,
    independent: bool = True,
    now: str | None = None,
    overrule_newer: bool = False,
    adjudicator_names: dict[str, str] | None = None,
    allow_unverified: bool = False,
    allow_unprotected: bool = False,
) -> ImportResult:
    """:func:`import_review_sheet` for a study workspace (its ratings -- of the round the
    sheet was written for --, schema, raters, name and log).  An Adjudicator cell must name
    one of the study's people (:func:`study_adjudicators`), or be mapped by ``adjudicator_names``."""

    known = check_adjudicator_name(study, adjudicator)
    rnd = read_sheet_meta(sheet).get("round", "")
    round_number = int(rnd) if rnd.isdigit() else None
    ratings = study_ratings(study, round_number)
    check_log_items(study)
    return import_review_sheet(
        sheet,
        ratings,
        study.schema,
        study.decisions_path,
        adjudicator=adjudicator,
        independent=independent,
        raters=study.grid_raters(),
        now=now,
        overrule_newer=overrule_newer,
        study=study.name,
        adjudicators=known,
        adjudicator_names=adjudicator_names,
        allow_unverified=allow_unverified,
        allow_unprotected=allow_unprotected,
        round_number=round_number,
    )


def check_adjudicator_name(study: Study, adjudicator: str) -> list[str]:
    """The study's people (:func:`study_adjudicators`); a :class:`ParamError` naming ``adjudicator``
    when it is another spelling of one of them (``Dr Chair`` for ``dr_chair``: the same letters and
    digits, case, spaces and punctuation aside): one person, one name.  A name merely close to one
    (``dr_y`` beside ``dr_x``) is another person: ``--adjudicator`` declares a new adjudicator."""
    known = study_adjudicators(study)
    key = identity_key(adjudicator)
    hits = [] if adjudicator in known else [k for k in known if identity_key(k) == key]
    if hits:
        raise ParamError(
            "{adjudicator} {name!r}: another spelling of {hits}? (this study's adjudicators and raters: {known}); "
            "one person is one name",
            name=adjudicator,
            hits=" or ".join(repr(h) for h in hits),
            known=", ".join(known),
        )
    return known


def study_adjudicators(study: Study) -> list[str]:
    """The people who may decide in a study: the adjudicators already in its decisions log,
    the Label Studio adjudicator recorded in study.toml, and its raters."""
    logged = [str(e.get("adjudicator")) for e in read_decisions(study.decisions_path) if e.get("adjudicator")]
    recorded = str((study.adjudication or {}).get("adjudicator") or "")
    return list(dict.fromkeys([*logged, *([recorded] if recorded else []), *study.raters]))


def missing_rating_line(study: Study, record: dict[str, Any]) -> str:
    """Why gold rows are unresolved although the raters who rated them agree (one line, ``""`` when
    none): a study rater's rating is missing -- in a round without a design (a table pull), every
    study rater is expected on every item -- and what to do."""
    if not record:
        return ""
    shown = ", ".join(record["first_items"][:3]) + (", ..." if record["items"] > 3 else "")
    rounds = record["rounds"]
    plain = [n for n in rounds if not any(r.number == n and r.design for r in study.rounds)]
    rows, items = record["rows"], record["items"]
    text = (
        f"Warning: {rows} gold row{'s are' if rows != 1 else ' is'} unresolved only because a study "
        f"rater's rating is missing ({items} item{'s' if items != 1 else ''}: {shown}): the raters who rated "
        f"{'them' if rows != 1 else 'it'} agree, or one rated"
    )
    none = record.get("raters_without_ratings") or []
    if none:
        text += (
            f"; {', '.join(none)} rated none of the items: gold is never taken from the other "
            f"rater{'s' if len(study.grid_raters()) - len(none) != 1 else ''} alone"
        )
    if plain:
        recorded, grid = study.round_raters(), study.grid_raters()
        expected = set().union(*(recorded.get(n, grid) for n in plain))  # the raters each round's pull recorded
        text += (
            f"; round {', '.join(map(str, plain))} records no design, so every study rater "
            f"({', '.join(r for r in study.raters if r in expected)}) is expected to rate every item (a table pull "
            "cannot record that each item went to only some raters, k of N; `push --per-item` does)"
        )
    return text + (
        "; decide them on the review sheet (`goldboard adjudicate sheet` lists them as flagged rows with a "
        "missing rating), or pull the missing ratings"
    )


def write_gold_release(*args: Any, **kwargs: Any) -> GoldRelease:
    """:func:`goldboard.exports.gold.write_gold_release`, imported when a release is written
    (it imports pandas; the review sheet of a small study does not)."""
    from goldboard.exports.gold import write_gold_release as write

    return write(*args, **kwargs)


def export_gold(
    study: Study,
    fmt: str = "csv",
    *,
    force: bool = False,
    now: str | None = None,
    round_number: int | None = None,
    allow_edited_ratings: bool = False,
    allow_missing_releases: bool = False,
    only_study_raters: bool = False,
) -> GoldRelease:
    """Resolve a study's gold and write the next release (see :func:`write_gold_release`).

    ``round_number``: resolve from that round only; default: per item, the latest round
    in which every study rater rated it (items with an incomplete later round are listed
    in the manifest's ``rounds.incomplete_later_rounds`` and in
    ``release.gold.attrs["round_selection"]``; decisions in force made on an earlier round
    than the item's ratings in ``rounds.decisions_on_earlier_rounds``).  Raises
    :class:`~goldboard.adjudicate.rules.RuleErrors` (nothing written) when a gold item
    breaks a schema cross-field rule.  A ``rounds/N/ratings.csv`` changed since its pull
    (:func:`~goldboard.study_checks.ratings_edit_problem`) is refused (nothing written) unless
    ``allow_edited_ratings``; the manifest then lists it (``sources.edited_ratings``).  A release
    a later one names as its previous, gone from ``gold/``, is refused unless
    ``allow_missing_releases`` (manifest: ``missing_releases``).  Ratings by a name study.toml does not list as a rater are refused (nothing written) unless
    ``only_study_raters`` (:func:`~goldboard.workflows.gold_release.removed_raters`; manifest: ``sources.left_out_raters``).
    """

    if study.units_path.exists() and not study.units_path.is_file():  # a folder: refused before anything is written
        raise GoldboardError(units_file_problem(study) + "; no release written")
    checks = GoldChecks(
        study,
        round_number=round_number,
        allow_edited_ratings=allow_edited_ratings,
        allow_missing_releases=allow_missing_releases,
        only_study_raters=only_study_raters,
    )
    inputs = checks.verify()  # every input read once and verified: the first problem raised, nothing written
    gold = resolve_gold(inputs.ratings, inputs.schema, inputs.entries, study.grid_raters(), round_number=round_number)
    check_gold_rules(gold, inputs.schema, f"{study.gold_dir}: gold export")
    manifest = gold_manifest(study, gold, inputs)
    rel = write_gold_release(gold, study.gold_dir, fmt, manifest=manifest, force=force, now=now)
    rel.gold = gold
    return rel
