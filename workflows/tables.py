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
import shlex
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.adjudicate.rules import rule_warnings
from goldboard.cases.intake import rounds as intake_rounds
from goldboard.cases.intake.columns import ColumnRead, collect_columns, read_columns, relaxed_schema, respellings
from goldboard.cases.intake.core import INVALID_COLUMNS, collect
from goldboard.cases.intake.core import IntakeResult as PullResult
from goldboard.cases.intake.sources import table as table_source
from goldboard.cases.ratings import RATINGS_COLUMNS, adjudicable_fields, read_ratings_csv
from goldboard.cases.table_import import (
    TableMapping,
    TableRead,
    cell_text,
    cells_json,
    read_codes,
    read_ratings_table,
)
from goldboard.errors import GoldboardError, ParamError
from goldboard.fileio import (
    atomic_write,
    duplicate_headers,
    hidden_cells,
    merged_cells,
    merged_error,
    read_csv_cells,
    read_records,
    sha256_file,
    study_own_file,
)
from goldboard.study import Study, check_rater_map, free_text_option
from goldboard.text import did_you_mean, utc_now
from goldboard.workflows.intake import (  # noqa: F401 (describe_changes, check_changes_under_adjudication: re-exported)
    TABLE_MODE,
    SourceRead,
    check_additions,
    check_changes_under_adjudication,
    describe_changes,
    file_round,
    fresh_units,
    merge_invalid,
    record_units,
    sha256_of,
    take_into_round,
    units_in_round,
    units_records,
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
    latest round, or round 1 of a study without rounds).  See the module docstring.  The cyclic
    garbage collector is paused while it runs (:func:`no_cycle_collection`)."""
    path = Path(path)
    source = free_text_option(source or path.name, "source", "the name")  # a key of study.toml's [rounds.tables]
    read = _read_table_ratings(study, path, mapping, source, codes)
    raters = list(study.raters)

    rnd, new_round = file_round(study, round_number)
    n = rnd.number

    # items: known units, or new ones for a table-born study
    units = units_records(study)
    known = {str(u["item_id"]): u for u in units}
    pushed = [u for u in units if not str(u.get("source", "")).startswith("table:")]
    table_born = not pushed and not any(r.projects for r in study.rounds)
    unknown = [it for it in read.items if it not in known]
    held_unknown: set[str] = set(unknown) if unknown and not table_born else set()
    check_additions(study, path, read, known, n, None if table_born else set(unknown), add_to_adjudicated_round)

    res, ratings, invalid = _validate_table(study, read, source, path, n, units)
    extra_invalid = [_held_row(n, source, read, line, "", "", reason, cells) for line, reason, cells in read.problems]

    # the round's other sources stay; this source's previous rows are replaced
    rpath, ipath = study.ratings_path(n), study.invalid_path(n)
    old_mine, others = intake_rounds.split(intake_rounds.previous(rpath), source)
    taken = intake_rounds.given_by(others)
    counts = {r: Counter() for r in raters}
    given = ratings
    if len(ratings) and (held_unknown or taken):
        ratings = _hold_out(ratings, read, source, n, held_unknown, taken, counts, extra_invalid)
    refuse_nothing_pulled(study, path, n, ratings, given, taken, held_unknown, invalid)
    if extra_invalid:
        invalid = pd.concat([invalid, pd.DataFrame(extra_invalid, columns=INVALID_COLUMNS)], ignore_index=True)

    _table_summary(res, raters, counts, read, invalid, ratings, rnd)
    _table_notes(
        res,
        study,
        read,
        ratings,
        intake_rounds.overlap_warnings(others, ratings, n, path.name, units_in_round(known, n)),
    )
    changes = describe_changes(old_mine, ratings, source, first=source not in rnd.tables)
    take = SourceRead(source, old_mine, ratings, "table", changes)
    take_into_round(study, n, take, ratings, invalid, res.summary, accept=add_to_adjudicated_round, write=False)
    sha = sha256_of(path)
    res.summary["table"] = _table_provenance(source, path, sha, read, mapping)
    res.summary["changes"] = changes

    merged = pd.concat([others, ratings], ignore_index=True)[RATINGS_COLUMNS] if len(others) else ratings
    merged_invalid = merge_invalid(ipath, invalid, source)
    new_items = [it for it in read.items if it not in known and table_born]
    result = TablePullResult(
        pull=PullResult(ratings=merged, invalid=merged_invalid, summary=res.summary, item_counts=res.item_counts),
        source=source,
        changes=changes,
        new_items=new_items,
    )
    if not write:
        return result

    in_round = _record_units(study, units, read, n, source, set(read.items) - held_unknown, new_items)
    paths = take_into_round(study, n, take, merged, merged_invalid, res.summary, accept=add_to_adjudicated_round)
    rnd.tables[source] = _round_table_record(path, sha, read, mapping)
    if new_round:
        rnd.mode = TABLE_MODE
    rnd.units = in_round
    study.save()
    result.paths = paths
    return result


def _table_provenance(source: str, path: Path, sha: str, read: TableRead, mapping: TableMapping) -> dict[str, Any]:
    """pull.json's ``table`` entry: which file (and its SHA-256) gave this source's rows, in which shape."""
    return {
        "source": source,
        "file": str(path),
        "sha256": sha,
        "rows": read.rows,
        "fields": read.fields,
        "shape": "wide" if mapping.wide else "long",
    }


def _round_table_record(path: Path, sha: str, read: TableRead, mapping: TableMapping) -> dict[str, Any]:
    """study.toml's ``[rounds.tables.SOURCE]`` entry: the file read, when, and the options a re-pull repeats."""
    return {
        "file": str(path),
        "sha256": sha,
        "rows": read.rows,
        "pulled_at": utc_now(),
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


def _record_units(
    study: Study,
    units: list[dict],
    read: TableRead | ColumnRead,
    n: int,
    source: str,
    in_table: set[str],
    new_items: list[str],
) -> int:
    """units.jsonl as :func:`record_units` writes it (returns the units of round ``n``); a table
    read by columns writes its new items' lines from the columns, never a dict per item."""
    if not isinstance(read, ColumnRead) or not new_items:
        record_units(study, units, read, n, source, in_table, new_items)
        return sum(1 for u in units if n in (u.get("rounds") or []))
    with study.locked():  # units.jsonl is read again under the lock: another command's items kept
        return _write_column_units(study, units, read, n, source, in_table, fresh_units(study, units, new_items))


def _write_column_units(
    study: Study, units: list[dict], read: ColumnRead, n: int, source: str, in_table: set[str], new_items: list[str]
) -> int:
    import json

    enc = json.encoder.encode_basestring  # what json.dumps(..., ensure_ascii=False) writes a str as
    for u in units:
        if str(u["item_id"]) in in_table and n not in (u.get("rounds") or []):
            u["rounds"] = sorted({*(int(x) for x in u.get("rounds") or []), n})
    new = set(new_items)
    at = [i for i, it in enumerate(read.items) if it in new]
    info = read.item_info
    tail = f', "case_text": "", "output_text": "", "rounds": [{int(n)}], "source": {enc(f"table:{source}")}}}\n'
    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode
    with atomic_write(study.units_path) as fh:
        fh.write("".join(encode(u) + "\n" for u in units))
        for start in range(0, len(at), 4096):
            fh.write(
                "".join(
                    f'{{"item_id": {enc(read.items[i])}, "case_id": {enc(info.case[i] or read.items[i])}, '
                    f'"output_id": {enc(info.output[i])}, "model": {enc(info.model[i])}{tail}'
                    for i in at[start : start + 4096]
                )
            )
    return sum(1 for u in units if n in (u.get("rounds") or [])) + len(at)


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


def _table_notes(
    res: PullResult, study: Study, read: TableRead, ratings: pd.DataFrame, overlap: list[str] | None = None
) -> None:
    """The summary's notes on the table: repeated rows read once, ratings without a rationale,
    ratings that break a schema rule (kept as rated, as a Label Studio pull reports them), and
    ``overlap`` (a rater sharing no item with the round: issue 33)."""
    warnings = res.summary.setdefault("warnings", [])
    if read.repeats:
        shown = ", ".join(f"row {a} = row {b}" for a, b in read.repeats[:5])
        warnings.append(
            f"{len(read.repeats)} repeated row(s) give the same answer as an earlier row of the same item and "
            f"rater and were read once ({shown}{', ...' if len(read.repeats) > 5 else ''})"
        )
    warnings.extend(read.merged)
    warnings.extend(overlap or [])
    res.summary["table_repeated_rows"] = len(read.repeats)
    _rationale_counts(res, study, read, ratings)
    if _rules_may_fire(ratings, study.schema):
        warnings.extend(rule_warnings(ratings, study.schema, list(study.raters)))


def _rules_may_fire(ratings: pd.DataFrame, schema: Any) -> bool:
    """Whether a schema rule can break on ``ratings``: a rule on a field that gets no flags (not
    adjudicable), or on a multi-select field without a rating row, never fires
    (:func:`goldboard.adjudicate.rules.rule_break_matrix`), so without a rule on two live fields
    :func:`rule_warnings` is empty and the rating grid it builds is not needed."""
    if not schema.rules or not len(ratings):
        return False
    collected = set(ratings["field"].unique().tolist())
    live = {f.name for f in adjudicable_fields(schema) if f.kind != "multi" or f.name in collected}
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
    n: int,
    held_unknown: set[str],
    taken: dict[tuple[str, str], str],
    counts: dict[str, Counter],
    extra_invalid: list[dict],
) -> pd.DataFrame:
    """Drop ratings of unknown items and of item x rater another source gave, each held out as an invalid row."""
    by_line = {tr.line: tr.cells for tr in read.ratings}
    drop = [item in held_unknown or (item, rater) in taken for item, rater in zip(ratings["item_id"], ratings["rater"])]
    held = ratings[drop]
    for (item, rater, aid), _ in held.groupby(["item_id", "rater", "annotation_id"], sort=False):
        line = int(str(aid).rsplit(":", 1)[1])
        cells = read.cells_at(line) if isinstance(read, ColumnRead) else by_line.get(line, {})
        if item in held_unknown:
            reason = f"item {item!r} is not in this study's units (push it, or use a table-born study)"
        else:
            reason = f"{rater} already rated {item!r} in round {n} ({taken[(item, rater)]})"
        extra_invalid.append(_held_row(n, source, read, line, rater, item, reason, cells))
        counts[rater]["moved"] += 1
    return ratings[[not d for d in drop]]


def refuse_nothing_pulled(
    study: Study,
    path: Path,
    n: int,
    kept: pd.DataFrame,
    given: pd.DataFrame,
    taken: dict[tuple[str, str], str],
    held_unknown: set[str],
    invalid: pd.DataFrame,
    *,
    noun: str = "table",
    id_param: str = "item_col",
) -> None:
    """A table (``pull --from-table``) or another tool's file (``pull --from-file``, ``noun``
    "file", its item ids chosen by ``id_param`` "item_key") from which the round would take no
    rating is refused, nothing written ("nothing pulled", exit 1), naming why: every rating
    already given in the round by another source (with the way to replace that source, or to add
    a round), every item unknown to a pushed study, or no valid rating at all.  ``kept``: the
    ratings the round would take; ``given``: every rating read (``item_id``, ``rater``)."""
    if len(kept):
        return
    pairs = list(zip(given["item_id"], given["rater"])) if len(given) else []
    by = Counter(taken[k] for k in pairs if k in taken and k[0] not in held_unknown)
    unknown = sum(1 for item, _ in pairs if item in held_unknown)
    nxt = max(r.number for r in study.rounds) + 1
    if by:
        names = ", ".join(f"{name!r}" for name, _ in by.most_common())
        files = [
            name for name, _ in by.most_common() if not name.startswith("Label Studio") and name != "another source"
        ]
        held = sum(by.values())
        count = f"all {held} of its ratings" if held == len(pairs) else f"{held} of its {len(pairs)} ratings"
        also = f", and {unknown} are of items not in this study" if unknown else ""
        replace = (
            "To replace the ratings from {first} with this " + noun + "'s, pull it as that source ({source} {quoted}: "
            "the output lists each change); to add it as a new round"
            if files
            else "To add it as a new round"
        )
        raise ParamError(
            "{path}: nothing pulled: {count} are already in round {n} from {names}{also}; a source's ratings are "
            "never overwritten by another's. " + replace + ", give {round_number} {nxt}",
            path=str(path),
            count=count,
            n=n,
            names=names,
            also=also,
            first=repr(files[0]) if files else "",
            quoted=shlex.quote(files[0]) if files else "",
            nxt=nxt,
        )
    if unknown:
        raise ParamError(
            "{path}: nothing pulled: all {unknown} ratings are of items not in this study's units "
            "(push them first, or check {" + id_param + "})",
            path=str(path),
            unknown=unknown,
        )
    held = invalid[invalid["kind"] == "invalid"] if len(invalid) else invalid
    first = f"; e.g. {held['annotation_id'].iloc[0]}: {held['reason'].iloc[0]}" if len(held) else ""
    raise GoldboardError(
        f"{path}: nothing pulled: no valid rating in this {noun} ({len(held)} held out as invalid{first}); "
        "check the rater columns and the field's values"
    )


def _table_summary(
    res: PullResult,
    raters: list[str],
    counts: dict[str, Counter],
    read: TableRead,
    invalid: pd.DataFrame,
    ratings: pd.DataFrame,
    rnd: Any,
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
        mode=TABLE_MODE if not rnd.projects else rnd.mode,
    )
    for k in ("tasks", "annotations", "unattributed_annotations", "duplicate_tasks"):
        res.summary.pop(k, None)


__all__ = ["pull_table", "TablePullResult", "describe_changes", "refuse_nothing_pulled", "TABLE_MODE"]
