"""The report's inputs of a small study read as columns, without pandas (issue 19).

:func:`report_columns` reads one plain round (:func:`~goldboard.cases.ratings_columns.read_rating_columns`)
and computes what :func:`goldboard.workflows.report.build_report` reads from the DataFrames by the
DataFrame path's own rules: the round and its rule (:func:`~goldboard.workflows.agreement.study_round_choice`),
the flags (:func:`~goldboard.adjudicate.flags.flag_columns`), the provisional gold
(:func:`~goldboard.adjudicate.gold.resolve_gold_columns`) and, per field, the agreement engine on
:class:`~goldboard.cases.ratings_columns.RatingColumns` (:func:`agreement_columns`).  The report is
then assembled and rendered by the very same code; its helpers read the columns where they are given
them (``prevalence``, ``ratings_count_text``, ``gold_distribution`` ...).

``None`` -- the caller reads DataFrames, as always -- for anything else: several pulled rounds, a
round pushed with a design, ``--round`` or ``--release`` naming something else, a gold release or a
decision in the log (the gold then comes from them), a ratings file over :data:`REPORT_MAX_BYTES` or
not plain, and whenever the flags or the gold columns do not answer on their own (a repeated rating,
a value outside the schema).  Where a helper meets what its columns cannot say (a threshold view, a
lead time), it reads ``RatingColumns.frame()``: the same DataFrame the DataFrame path reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldboard.adjudicate.flags import FlagColumns, flag_columns
from goldboard.adjudicate.gold import resolve_gold_columns
from goldboard.analysis.agreement import agreement
from goldboard.cases.ratings import RATINGS_COLUMNS
from goldboard.cases.ratings_columns import RatingColumns, read_rating_columns
from goldboard.study import Study
from goldboard.text import cell_text
from goldboard.workflows.agreement import analysable_fields, study_round_choice

#: larger ratings files are read as DataFrames for the report (pandas' import then weighs less
#: than the column work); the review sheet's cut, see README "Benchmarks"
REPORT_MAX_BYTES = 2_000_000

#: the gold columns the report reads (method counts, distribution, resolution, rater vs gold)
GOLD_READ = ("item_id", "field", "gold_value", "method")


@dataclass
class ColumnInputs:
    """What :func:`~goldboard.workflows.report.build_report` reads from a study, as columns."""

    round: int
    ratings: RatingColumns
    round_rule: str
    gold: dict[str, list[str]]
    flags: FlagColumns


def report_columns(study: Study, round_number: int | None, release: str | None) -> ColumnInputs | None:
    """The report's inputs of a small plain study as columns, or ``None`` (see the module doc)."""
    pulled = study.pulled_rounds()
    if release or len(pulled) != 1 or round_number not in (None, pulled[0]) or any(r.design for r in study.rounds):
        return None
    gdir = study.gold_dir
    if gdir.exists() and any(p.is_dir() and p.name[1:].isdigit() for p in gdir.glob("v*")):
        return None  # a gold release: the DataFrame path reads and verifies it
    if study.decisions_path.exists() and study.decisions_path.read_bytes().strip():
        return None  # gold's rule 1 (decisions in force) is the DataFrame path's, which reads the log once
    rnd = pulled[0]
    cols = read_rating_columns(study.ratings_path(rnd), REPORT_MAX_BYTES)
    if cols is None:
        return None
    n = len(cols["item_id"])
    table = {c: cols.get(c, [""] * n) for c in RATINGS_COLUMNS} | cols  # read_ratings_csv's missing columns
    raters = study.grid_raters()
    flags = flag_columns(table, study.schema, raters)
    gold = resolve_gold_columns(table, study.schema, raters)
    if flags is None or gold is None:
        return None
    if round_number is None:
        pairs = {rnd: (table["item_id"], table["rater"])}
        rule = study_round_choice(study, study.latest_pulled_round(), pairs, {}).rule  # no design: nobody assigned
    else:
        rule = f"round {round_number}, chosen with --round"
    ratings = RatingColumns(table, lambda: study.ratings(rnd))
    return ColumnInputs(rnd, ratings, rule, {c: gold[c] for c in GOLD_READ}, flags)


def agreement_columns(
    study: Study,
    round_number: int,
    ratings: RatingColumns,
    fields: list[str] | None,
    n_resamples: int,
    seed: int,
    ci: str | None = None,
) -> dict[str, dict]:
    """:func:`~goldboard.workflows.agreement.agreement_for_study` of a round held as columns: the
    same fields, the same raters-with-ratings rule, the agreement engine on the columns (where
    they do not answer, on the DataFrame with its ``_line`` numbers, as agreement_for_study reads it)."""
    schema = study.schema
    source = str(study.ratings_path(round_number))

    def frame() -> Any:
        import numpy as np

        df = ratings.frame()
        return df.assign(_line=np.arange(len(df)) + 2)

    table = RatingColumns({c: ratings[c] for c in ratings.columns}, frame)
    out: dict[str, dict] = {}
    for name in analysable_fields(schema) if fields is None else fields:
        base = name.partition(":")[0]
        at = [i for i, f in enumerate(ratings["field"]) if f == base]
        who, vals = ratings["rater"], ratings["value"]
        with_ = {who[i] for i in at} if ":" in name else {who[i] for i in at if cell_text(vals[i]).strip() != ""}
        if len(with_) < 2:
            continue
        out[name] = agreement(
            table, name, schema, raters=study.raters, n_resamples=n_resamples, seed=seed, source=source, ci=ci
        )
    return out


__all__ = ["GOLD_READ", "REPORT_MAX_BYTES", "ColumnInputs", "agreement_columns", "report_columns"]
