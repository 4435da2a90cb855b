"""`goldboard pull --from-table`: a ratings table (spreadsheet, REDCap export, another tool's
CSV) into a study round, validated exactly like a Label Studio pull.

The table is mapped onto the schema's fields (:mod:`goldboard.cases.table_import`), the table
source (:mod:`goldboard.cases.intake.sources.table`) makes each table rating one normalised
annotation, and the intake core (:mod:`goldboard.cases.intake.core`) validates, canonicalises
(aliases such as ``Insufficient Info``) and deduplicates them, as for every source.  Output, as for
a server pull, written by :meth:`Study.write_round`: ``rounds/N/ratings.csv``, ``rounds/N/invalid.csv``
(held-out rows with the table's cells verbatim and the reasons) and ``rounds/N/pull.json``.

Provenance: a rating read from a table has ``annotation_id`` = ``<source>:<row>`` (the table's
name and its 1-based row, header = row 1) and empty ``task_id``/``project_id``.  The round
records each table (file, SHA-256, rows) in study.toml.  Re-pulling the same table changes
nothing; a changed table *replaces* the round's ratings from that source (ratings from other
sources -- Label Studio, other tables -- stay) and the result says what changed.  An item x rater
already rated in the round by another source is held out, never overwritten; a table from which the
round would take no rating at all (all held out, or none valid) is refused, nothing written.

Items: in a table-born study (no units pushed to Label Studio) an item the study does not know is
new: it is recorded in ``units.jsonl`` (the item is the case id unless ``--output-col`` says
otherwise) so every later command sees it.  In a study whose units were pushed, an unknown item
is held out in invalid.csv.
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.adjudicate.rules import rule_warnings
from goldboard.cases.intake.columns import ColumnRead, collect_columns, read_columns, relaxed_schema, respellings
from goldboard.cases.intake.core import INVALID_COLUMNS, collect
from goldboard.cases.intake.core import IntakeResult as PullResult
from goldboard.cases.intake.sources import table as table_source
from goldboard.cases.ratings import adjudicable_fields, read_ratings_csv
from goldboard.cases.table_import import (
    TableMapping,
    TableRead,
    cell_text,
    cells_json,
    read_codes,
    read_ratings_table,
)
from goldboard.errors import GoldboardError, ParamError, check_rater_map
from goldboard.fileio import (
    duplicate_headers,
    hidden_cells,
    merged_cells,
    merged_error,
    read_csv_cells,
    read_records,
    sha256_file,
    study_own_file,
)
from goldboard.study import Study
from goldboard.study_options import free_text_option
from goldboard.text import did_you_mean
from goldboard.workflows.intake import (  # noqa: F401 (re-exported: the intake's names a table pull used)
    TABLE_MODE,
    RoundIntake,
    SourceRead,
    check_changes_under_adjudication,
    describe_changes,
    raters_in,
    refuse_nothing_pulled,
)


@dataclass
class TablePullResult:
    pull: PullResult
    source: str
    changes: dict[str, Any]
    new_items: list[str] = field(default_factory=list)
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def summary(self) -> dict[str, Any]:
        return self.pull.summary

    def describe(self) -> str:
        """The intake's one summary text, with the items recorded and what changed since the last pull."""
        self.pull.notes = [f"  {len(self.new_items)} new items recorded in units.jsonl"] if self.new_items else []
        self.pull.notes.append("  " + self.changes["text"])
        return self.pull.describe()


def normalised_spellings(read: TableRead, schema) -> list[dict[str, Any]]:
    """Cells whose value was read as a schema value spelled otherwise (``supported``, ``Supported ``,
    an alias): ``[{"field", "from", "to", "n"}]``, most frequent first.  Never a guess: only what
    :meth:`Field.normalize` maps (case, spaces, declared aliases, display names)."""
    seen: Counter = Counter(key for tr in read.ratings for key in respellings(tr.values, schema))
    return [{"field": k[0], "from": k[1], "to": k[2], "n": n} for k, n in seen.most_common()]


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a table is read: a pull makes a few objects
    per rating and none of them in cycles, yet every full collection walks them all (a third of
    a 20,000-item pull's time, more at 200,000).  Reference counting still frees everything; the
    collector is switched back on (if it was on) however the pull ends."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@no_cycle_collection()
def pull_table(
    study: Study,
    path: str | Path,
    mapping: TableMapping,
    *,
    round_number: int | None = None,
    source: str | None = None,
    codes: str | Path | None = None,
    write: bool = True,
    add_to_adjudicated_round: bool = False,
) -> TablePullResult:
    """Read the ratings table ``path`` into round ``round_number`` of ``study`` (default: the
    latest round, or round 1 of a study without rounds) through the round intake
    (:class:`~goldboard.workflows.intake.RoundIntake`).  See the module docstring.  The cyclic
    garbage collector is paused while it runs (:func:`no_cycle_collection`)."""
    path = Path(path)
    source = free_text_option(source or path.name, "source", "the name")  # a key of study.toml's [rounds.tables]
    read = _read_table_ratings(study, path, mapping, source, codes)
    intake = RoundIntake(study, source, "table", round_number, accept=add_to_adjudicated_round)
    intake.admit(path, read)
    res, ratings, invalid = _validate_table(study, read, source, path, intake.n, intake.units)
    taken = intake.take(_source_read(intake, read, res, ratings, invalid, path, mapping), write=write)
    pull = PullResult(ratings=taken.ratings, invalid=taken.invalid, summary=res.summary, item_counts=res.item_counts)
    return TablePullResult(pull, source, taken.changes, taken.new_items, taken.paths)


def _source_read(
    intake: RoundIntake,
    read: TableRead | ColumnRead,
    res: PullResult,
    ratings: pd.DataFrame,
    invalid: pd.DataFrame,
    path: Path,
    mapping: TableMapping,
) -> SourceRead:
    """The table's read for the intake: what the study cannot take held out (:meth:`RoundIntake.held_reason`),
    the problem rows and the held ones in invalid.csv with their cells, the summary's counts and notes."""
    study, n, source = intake.study, intake.n, intake.source
    extra_invalid = [_held_row(n, source, read, line, "", "", reason, cells) for line, reason, cells in read.problems]
    counts = {r: Counter() for r in study.raters}
    given = ratings
    if len(ratings) and (intake.held_unknown or intake.taken):
        ratings = _hold_out(ratings, read, source, intake, counts, extra_invalid)
    checked = invalid
    if extra_invalid:
        invalid = pd.concat([invalid, pd.DataFrame(extra_invalid, columns=INVALID_COLUMNS)], ignore_index=True)
    _table_summary(res, list(study.raters), counts, read, invalid, ratings)
    _table_notes(res, study, read, ratings)
    return SourceRead(
        source,
        "table",
        ratings,
        invalid,
        res.summary,
        path,
        read,
        given=given,
        checked_invalid=checked,
        provenance=_table_provenance(read, mapping),
        record=_round_table_record(read, mapping),
        raters_read=raters_in(given, invalid),
    )


def _table_provenance(read: TableRead, mapping: TableMapping) -> dict[str, Any]:
    """pull.json's ``table`` entry (after the source, the file and its SHA-256): the rows, fields and shape read."""
    return {
        "rows": read.rows,
        "fields": read.fields,
        "shape": "wide" if mapping.wide else "long",
    }


def _round_table_record(read: TableRead, mapping: TableMapping) -> dict[str, Any]:
    """study.toml's ``[rounds.tables.SOURCE]`` entry (after the file and its SHA-256): the rows read and the
    options a re-pull repeats."""
    return {
        "rows": read.rows,
        **({"identical_columns_ok": True} if mapping.identical_ok else {}),
        **({"hidden_read": read.hidden} if read.hidden else {}),
        **({"sheet": mapping.sheet} if mapping.sheet else {}),
    }


def _read_table_ratings(
    study: Study, path: Path, mapping: TableMapping, source: str, codes: str | Path | None
) -> TableRead:
    """The table's ratings mapped onto the schema; every rater named must be a study rater."""
    schema = study.schema
    if ":" in source or not source.strip():
        raise ParamError("{source} {name!r}: give a name without ':'", name=source)
    _not_the_studys_own(study, path)
    code_map = read_codes(codes) if codes else None
    df = _cells_frame(path, mapping.sheet)
    _not_a_copy_of_a_round(study, path, df)
    dup = duplicate_headers(path, mapping.sheet)
    if dup:
        raise GoldboardError(
            f"{path}: column {dup[0]!r} appears more than once in the header row; rename the copies so each "
            f"column has its own name (only one of them would be read)"
        )
    raters = list(study.raters)
    for r in mapping.raters:
        if r not in raters:
            raise ParamError(
                "{raters} {r}=...: {r!r} is not a rater of this study{hint} "
                "(raters: {names}; add one with `goldboard study add-rater`)",
                r=r,
                hint=did_you_mean(r, raters),
                names=", ".join(raters),
            )
    check_rater_map(mapping.rater_names, raters)
    read: TableRead | ColumnRead | None = read_columns(df, mapping, schema, raters, source=str(path), codes=code_map)
    if read is None:  # a table the column reader does not express: read row by row
        read = read_ratings_table(df, mapping, schema, source=str(path), codes=code_map)
    title, merged = merged_cells(path, mapping.sheet)
    for rng, cols in merged:
        if set(cols) & set(read.columns):
            raise merged_error(path, title, rng)
        read.merged.append(f"cells {rng} ({', '.join(cols)}) are merged; that column is not read")
    _check_hidden(path, mapping, read, set(df["_line"]))
    for tr in read.ratings:
        if tr.rater not in raters:
            raise ParamError(
                "{path}:{line}: rater {rater!r} is not a rater of this study{hint} "
                "(raters: {names}; map a name with {rater_map} NAME=RATER)",
                path=path,
                line=tr.line,
                rater=tr.rater,
                hint=did_you_mean(tr.rater, raters),
                names=", ".join(raters),
            )
    if not read.rating_count:
        raise GoldboardError(f"{path}: no ratings found (every rating cell is blank)")
    return read


def _not_the_studys_own(study: Study, path: Path) -> None:
    """A table is ratings from outside the study: one of the study's own files (a round's
    ``ratings.csv``, ``units.jsonl``, a gold release, a report goldboard wrote), or a copy whose
    bytes equal a round's ratings or a gold release's, is refused -- pulled as a new round it
    would pass the study's own ratings off as a second, independent rating of the items."""
    if path.is_file():
        own = study_own_file(path, [study.path])
        inside = own is not None and Path(os.path.abspath(own[0])) == Path(os.path.abspath(study.path))
        reports = study.reports_dir
        if inside or Path(os.path.abspath(path)).is_relative_to(os.path.abspath(reports)):
            what = own[1] if own is not None else "a report goldboard wrote"
            raise GoldboardError(
                f"{path}: is the study's own file ({what}), not a ratings table from outside it; pull the "
                f"table the raters filled in"
            )
    size = path.stat().st_size if path.is_file() else -1
    for folder in (study.path / "rounds", study.gold_dir):
        for own_file in sorted(folder.glob("*/*.csv")) if folder.is_dir() else []:
            if own_file.stat().st_size == size and sha256_file(own_file) == sha256_file(path):
                raise GoldboardError(
                    f"{path}: holds the same bytes as the study's {own_file.relative_to(study.path)}: a copy of "
                    f"the study's own ratings, not a new rating of the items; pull the table the raters filled in"
                )


def _not_a_copy_of_a_round(study: Study, path: Path, df: pd.DataFrame) -> None:
    """A table in goldboard's own ratings layout whose rows (item, rater, field, value) are
    exactly a round's -- a copy re-saved by a spreadsheet, so its bytes changed -- is refused
    like the file itself (:func:`_not_the_studys_own`)."""
    key_cols = ["item_id", "rater", "field", "value"]
    if not {*key_cols, "annotation_id"} <= set(df.columns):
        return
    mine = Counter(tuple(cell_text(v) for v in row) for row in df[key_cols].itertuples(index=False))
    for n in study.pulled_rounds():
        theirs = read_ratings_csv(study.ratings_path(n))
        if len(theirs) == sum(mine.values()) and mine == Counter(
            map(tuple, theirs[key_cols].astype(str).itertuples(index=False))
        ):
            raise GoldboardError(
                f"{path}: holds the same ratings as the study's rounds/{n}/ratings.csv (item, rater, field and value "
                f"on every row): a copy of the study's own ratings, not a new rating of the items; pull the table the "
                f"raters filled in"
            )


def _check_hidden(path: Path, mapping: TableMapping, read: TableRead, lines: set[int]) -> None:
    """XLSX rows holding data that are hidden (by hand, a filter, a collapsed outline), and
    hidden columns the mapping reads, are refused naming them: whoever hid them may have meant
    "not these", and they would be read like the rest.  ``mapping.read_hidden`` reads them
    (recorded in the round, and said in a warning)."""
    if mapping.read_hidden and path.suffix.lower() not in (".xlsx", ".xlsm"):
        raise GoldboardError(f"{path} is not a workbook (only .xlsx has hidden rows and columns)", param="read_hidden")
    if path.suffix.lower() not in (".xlsx", ".xlsm"):
        return  # only a workbook hides rows and columns (and its reader need not be imported)
    title, rows, cols = hidden_cells(path, mapping.sheet)
    rows = [r for r in rows if r in lines]
    cols = [(letter, name) for letter, name in cols if name in read.columns]
    if not rows and not cols:
        return
    shown_rows = ", ".join(map(str, rows[:8])) + (", ..." if len(rows) > 8 else "")
    shown_cols = ", ".join(f"{letter} ({name})" for letter, name in cols)
    what = " and ".join(
        x
        for x in (
            f"{len(rows)} hidden row{'s' if len(rows) != 1 else ''} ({shown_rows})" if rows else "",
            f"hidden column{'s' if len(cols) != 1 else ''} {shown_cols}" if cols else "",
        )
        if x
    )
    if not mapping.read_hidden:
        raise ParamError(
            "{path}: sheet {title}: {what} would be read like the visible cells (hidden by hand, by a filter or "
            "an outline); unhide them, delete what is not ratings, or pass {read_hidden} to read them",
            path=path,
            title=title,
            what=what,
        )
    read.hidden = {"rows": rows, "columns": [name for _, name in cols]}
    read.merged.append(f"sheet {title}: read {what} (--read-hidden)")


def _cells_frame(path: Path, sheet: str | None = None) -> pd.DataFrame:
    """The table's cells as read (objects; a cell a row lacks is ``None``, never pandas' NaN, so
    a ``NaN`` the file itself holds stays distinguishable), with the ``_line`` column."""
    if sheet is None:
        df = read_csv_cells(path)  # a plain CSV/TSV: read as columns, never one dict per row
        if df is not None:
            return df
    recs = read_records(path, sheet, sheet_option=True)
    cols = list(dict.fromkeys(k for _, r in recs for k in r))
    df = pd.DataFrame([[r.get(k) for k in cols] for _, r in recs], columns=cols, dtype=object)
    df["_line"] = [line for line, _ in recs]
    return df


def _validate_table(
    study: Study, read: TableRead | ColumnRead, source: str, path: Path, n: int, units: list[dict]
) -> tuple[PullResult, pd.DataFrame, pd.DataFrame]:
    """Validation by the intake core, as for every source (the table adapter shows each item to
    each rater, each table rating one annotation); returns the result, its ratings and invalid rows."""
    schema = study.schema
    raters = list(study.raters)
    fields_in_table = set(read.fields)
    # a field the table lacks, and the rationale (an optional value in a table: a blank comment
    # cell is recorded as no rationale and counted, never a reason to drop the label), are not required
    if isinstance(read, ColumnRead):  # read and validated by columns: the same rows, built as columns
        res = collect_columns(read, schema, n, source)
        res.summary["normalised"] = read.normalised
        ratings = res.ratings
        if len(ratings):
            ratings = ratings[ratings["field"].isin(fields_in_table)].copy()
        return res, ratings, res.invalid.copy()
    relaxed = relaxed_schema(schema, fields_in_table)
    unit_frame = pd.DataFrame(
        [{"item_id": it, **read.item_info[it]} for it in read.items]
        + [{k: str(u.get(k, "") or "") for k in ("item_id", "case_id", "output_id", "model")} for u in units],
        columns=["item_id", "case_id", "output_id", "model"],
    ).drop_duplicates("item_id")
    res = collect(table_source.shown(read, relaxed, raters, source), relaxed, raters, n, units=unit_frame)
    res.summary["normalised"] = normalised_spellings(read, schema)
    ratings = res.ratings
    if len(ratings):
        ratings = ratings[ratings["field"].isin(fields_in_table)].copy()
    invalid = res.invalid.copy()
    return res, ratings, invalid


def _table_notes(res: PullResult, study: Study, read: TableRead, ratings: pd.DataFrame) -> None:
    """The summary's notes on the table: repeated rows read once, ratings without a rationale, and
    ratings that break a schema rule (kept as rated, as a Label Studio pull reports them)."""
    warnings = res.summary.setdefault("warnings", [])
    if read.repeats:
        shown = ", ".join(f"row {a} = row {b}" for a, b in read.repeats[:5])
        warnings.append(
            f"{len(read.repeats)} repeated row(s) give the same answer as an earlier row of the same item and "
            f"rater and were read once ({shown}{', ...' if len(read.repeats) > 5 else ''})"
        )
    warnings.extend(read.merged)
    res.summary["table_repeated_rows"] = len(read.repeats)
    _rationale_counts(res, study, read, ratings)
    if _rules_may_fire(ratings, study.schema):
        warnings.extend(rule_warnings(ratings, study.schema, list(study.raters)))


def _rules_may_fire(ratings: pd.DataFrame, schema: Any) -> bool:
    """Whether a schema rule can break on ``ratings``: a rule on a field that gets no flags (not
    adjudicable), or on a field without a rating row, never fires
    (:func:`goldboard.adjudicate.rules.rule_break_matrix`), so without a rule on two live fields
    :func:`rule_warnings` is empty and the rating grid it builds is not needed."""
    if not schema.rules or not len(ratings):
        return False
    collected = set(ratings["field"].unique().tolist())
    live = {f.name for f in adjudicable_fields(schema) if f.name in collected}
    return any(r.when.field in live and r.then.field in live for r in schema.rules)


def _rationale_counts(res: PullResult, study: Study, read: TableRead, ratings: pd.DataFrame) -> None:
    """With a rationale column: per rater, the ratings kept without a rationale (blank cell)."""
    rationale = study.schema.rationale_field
    if rationale is None or rationale.name not in read.fields or not len(ratings):
        return
    per_item = ratings.groupby(["rater", "item_id"], sort=False)["rationale"].agg(lambda x: any(str(v) for v in x))
    for (rater, _), has in per_item.items():
        c = res.summary["raters"].setdefault(rater, {"valid": 0, "invalid": 0, "superseded": 0})
        c["no_rationale"] = c.get("no_rationale", 0) + (0 if has else 1)


def _held_row(
    n: int, source: str, read: TableRead, tr_line: int, rater: str, item: str, reason: str, cells: dict
) -> dict:
    """An invalid.csv row for a table rating held out at the study level, with its cells verbatim."""
    info = read.item_info.get(item, {})
    return {
        **dict.fromkeys(INVALID_COLUMNS, ""),
        "round": n,
        "kind": "invalid",
        "reason": reason,
        "rater": rater,
        "item_id": item,
        "case_id": info.get("case_id", ""),
        "output_id": info.get("output_id", ""),
        "model": info.get("model", ""),
        "annotation_id": f"{source}:{tr_line}",
        "was_cancelled": "false",
        "result": cells_json(cells),
    }


def _hold_out(
    ratings: pd.DataFrame,
    read: TableRead,
    source: str,
    intake: RoundIntake,
    counts: dict[str, Counter],
    extra_invalid: list[dict],
) -> pd.DataFrame:
    """Drop the ratings the round does not take (an unknown item, an item x rater another source
    gave: :meth:`RoundIntake.held_reason`), each held out as an invalid row with its cells."""
    by_line = {tr.line: tr.cells for tr in read.ratings}
    n, held_unknown, taken = intake.n, intake.held_unknown, intake.taken
    drop = [item in held_unknown or (item, rater) in taken for item, rater in zip(ratings["item_id"], ratings["rater"])]
    held = ratings[drop]
    for (item, rater, aid), _ in held.groupby(["item_id", "rater", "annotation_id"], sort=False):
        line = int(str(aid).rsplit(":", 1)[1])
        cells = read.cells_at(line) if isinstance(read, ColumnRead) else by_line.get(line, {})
        reason = intake.held_reason(item, rater)
        extra_invalid.append(_held_row(n, source, read, line, rater, item, reason, cells))
        counts[rater]["moved"] += 1
    return ratings[[not d for d in drop]]


def _table_summary(
    res: PullResult,
    raters: list[str],
    counts: dict[str, Counter],
    read: TableRead,
    invalid: pd.DataFrame,
    ratings: pd.DataFrame,
) -> None:
    """Rewrite the pull summary's counts after the study-level checks (and drop what a table has no use for)."""
    per = res.summary["raters"]
    for r in raters:
        c = per.setdefault(r, {"valid": 0, "invalid": 0, "superseded": 0})
        c["valid"] -= counts[r]["moved"]
        c["invalid"] += counts[r]["moved"]
        c["blank"] = int(read.blank.get(r, 0))
        c.pop("unannotated_items", None)
        c.pop("unannotated", None)
        c.pop("items", None)
    n_invalid = int((invalid["kind"] == "invalid").sum()) if len(invalid) else 0
    reasons = Counter()
    for reason in invalid.loc[invalid["kind"] == "invalid", "reason"] if len(invalid) else []:
        for part in str(reason).split("; "):
            reasons[part.split(" (")[0] if "already rated" not in part else "already rated from another source"] += 1
    res.summary.update(
        valid_annotations=sum(c["valid"] for c in per.values()),
        invalid_annotations=n_invalid,
        superseded_annotations=int(len(invalid) - n_invalid),
        rating_rows=int(len(ratings)),
        invalid_reasons=dict(reasons.most_common()),
    )
    for k in ("tasks", "annotations", "unattributed_annotations", "duplicate_tasks"):
        res.summary.pop(k, None)


__all__ = ["pull_table", "TablePullResult", "describe_changes", "TABLE_MODE"]
