"""`goldboard flag`: list the items whose ratings need adjudication, most serious first."""

from __future__ import annotations

import csv
import io
import json
from typing import TYPE_CHECKING

import click

from goldboard.adjudicate.flags import (
    FlagColumns,
    flag_columns,
    flag_disagreements,
    flag_output_columns,
    flags_for_output,
    summarize_flags,
    summary_lines,
)
from goldboard.cases.ratings import duplicate_ratings, load_ratings_file
from goldboard.cases.ratings_columns import read_rating_columns
from goldboard.cases.rounds import round_numbers
from goldboard.cli._options import format_option, output_option, round_option, study_option
from goldboard.cli._output import echo_data
from goldboard.errors import GoldboardError, check_names
from goldboard.fileio import CSV_LINETERMINATOR, csv_text, write_text_atomic
from goldboard.label_configs.schema import Schema, load_schema
from goldboard.study import Study, study_ratings
from goldboard.study_checks import edited_rounds
from goldboard.text import one_line, terminal_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@click.command("flag")
@click.argument("ratings", required=False, type=click.Path(dir_okay=False))
@study_option(required=False, help="Study workspace (reads its pulled ratings).")
@round_option(in_force=True, what="Only this round")
@click.option("--schema", "schema_ref", default=None, help="Schema name or file (needed with a RATINGS file).")
@click.option(
    "--raters",
    default=None,
    help="Comma-separated raters to compare, in this order (default: every rater; the study's order, else "
    "sorted). A name that is not a rater is an error.",
)
@click.option("--triggered-only", is_flag=True, help="Only items that hit a schema boundary or trigger.")
@format_option(["table", "csv", "json"], "table")
@output_option()
def flag_cmd(ratings, study_dir, round_number, schema_ref, raters, triggered_only, fmt, output):
    """List every item whose ratings disagree, with the kinds of disagreement.

    \b
    goldboard flag --study DIR [--round N]
    goldboard flag RATINGS.csv --schema mtb

    Items are ordered as a meeting agenda: most clinically serious first
    (schema priority), then the larger ordinal gap, then item id.  The
    summary counts flags per kind and per named boundary.

    A rating that breaks a schema cross-field rule (e.g. mtb: missing_info
    ticked with Supported) is kept as rated, reported on stderr and flagged
    (kind rule) on both fields, so the adjudicator decides them together.

    Rounds: each item uses the latest round in which every rater rated it; an
    item whose later round is only partly rated keeps its earlier ratings and
    is listed in a warning (stderr).
    """

    if bool(ratings) == bool(study_dir):
        raise GoldboardError("give either a RATINGS file (with --schema) or --study DIR")
    order = [r.strip() for r in raters.split(",") if r.strip()] if raters else None
    flags = st = None
    if study_dir:
        st = Study.open(study_dir)
        schema = load_schema(schema_ref) if schema_ref else st.schema
        flags = _study_flag_columns(st, schema, order, round_number)
    if flags is None:  # the DataFrame path: a RATINGS file, or a study the columns do not answer
        flags, schema = _frame_flags(ratings, st, schema if st is not None else None, schema_ref, order, round_number)
    # a hand-edited ratings.csv is said, as agree says it (once the ratings were read: a file that
    # cannot be read is one Error line)
    for line in edited_rounds(st) if st is not None else []:
        click.echo(f"Warning: {one_line(line)}", err=True)
    for b in flags.attrs.get("rule_breaks", []):
        click.echo(f"Warning: {one_line(b.describe())}", err=True)
    if triggered_only:
        if isinstance(flags, FlagColumns):
            flags = flags.only(flags["triggered"])
        else:
            flags = flags[flags["triggered"]].reset_index(drop=True)
    summary = summarize_flags(flags, schema)
    if fmt == "json":
        text = (
            json.dumps(
                {
                    "schema": {"name": schema.name, "version": schema.version},
                    "summary": summary,
                    "flags": flags.records() if isinstance(flags, FlagColumns) else _json_records(flags),
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    elif fmt == "csv":
        text = (
            _csv_text(flag_output_columns(flags))
            if isinstance(flags, FlagColumns)
            else csv_text(flags_for_output(flags))
        )
        for line in summary_lines(summary):
            click.echo(line, err=True)
    else:
        text = terminal_text(format_table(flags, summary_lines(summary)))
    if output:
        write_text_atomic(output, text)
        click.echo(f"Wrote {len(flags)} flagged rows ({summary['items_flagged']} items) to {output}", err=True)
    else:
        echo_data(text)


def _study_flag_columns(
    st: Study, schema: Schema, order: list[str] | None, round_number: int | None
) -> FlagColumns | None:
    """The flags of a small study read without pandas (:func:`~goldboard.adjudicate.flags.flag_columns`):
    one pulled round, pushed without a design, its ``ratings.csv`` plain and small enough for
    :func:`~goldboard.cases.ratings_columns.read_rating_columns`.  ``None``: read it as a DataFrame."""
    pulled = st.pulled_rounds()
    if len(pulled) != 1 or round_number not in (None, pulled[0]) or any(r.design for r in st.rounds):
        return None
    if st.lost_ratings_rounds():  # a pulled round's ratings.csv deleted: the frame path names it
        return None
    table = read_rating_columns(st.ratings_path(pulled[0]))
    if table is None:
        return None
    source = str(st.ratings_path(round_number)) if round_number is not None else "ratings"
    order = _check_raters(table["rater"], order, st.raters, source, expected=st.grid_raters())
    return flag_columns(table, schema, order, round_number=round_number)


def _frame_flags(
    ratings, st: Study | None, schema: Schema | None, schema_ref, order, round_number
) -> tuple[pd.DataFrame, Schema]:
    """The flags of a RATINGS file or a study's every pulled round (``schema``: the study's, or
    the one given), read as a DataFrame, with the warnings of the reading (repeated ratings,
    incomplete later rounds) on stderr."""
    if st is not None:
        df = study_ratings(st, round_number)
        source = str(st.ratings_path(round_number)) if round_number is not None else "ratings"
    else:
        if not schema_ref:
            raise GoldboardError("--schema: give the schema of the RATINGS file (e.g. --schema mtb)")
        schema = load_schema(schema_ref)
        df = load_ratings_file(ratings)
        source = ratings
        if round_number is not None:
            rounds = sorted(set(round_numbers(df["round"]))) if "round" in df.columns else [1]
            if round_number not in rounds:
                raise GoldboardError(
                    f"{source}: --round {round_number}: no ratings in that round (rounds: {', '.join(map(str, rounds))})"
                )
    order = _check_raters(
        df["rater"].astype(str).tolist(),
        order,
        st.raters if st is not None else None,
        source,
        expected=st.grid_raters() if st is not None else None,
    )
    for w in duplicate_ratings(df, source):
        click.echo(f"Warning: {one_line(w)}", err=True)
    if st is None:  # a field the schema does not have is never compared: said, never dropped silently
        known = {f.name for f in schema.fields}
        counts = df["field"].astype(str).value_counts()
        for name, n in counts.items():
            if name not in known:
                click.echo(
                    f"Warning: {one_line(source)}: field {one_line(repr(name))} ({n} rating{'s' if n != 1 else ''}) is "
                    f"not a field of schema {schema.name} ({', '.join(sorted(known))}): not compared",
                    err=True,
                )
    flags = flag_disagreements(df, schema, order, source=source, round_number=round_number)
    for line in flags.attrs["round_selection"].warning_lines():
        click.echo(one_line(line) if line.startswith("  ") else f"Warning: {one_line(line)}", err=True)
    return flags, schema


def _csv_text(columns: dict[str, list]) -> str:
    """:func:`~goldboard.fileio.csv_text` of a table held as columns: the same quoting and record ends."""
    buf = io.StringIO(newline="")
    out = csv.writer(buf, lineterminator=CSV_LINETERMINATOR, quoting=csv.QUOTE_MINIMAL)
    out.writerow(list(columns))
    out.writerows(zip(*columns.values()))
    return buf.getvalue()


def _check_raters(
    rater_values: list[str],
    order: list[str] | None,
    study_raters: list[str] | None,
    source: str,
    expected: list[str] | None = None,
) -> list:
    """The raters to compare: every name must be a study rater (or, for a RATINGS file, a rater
    in the file) with ratings, and at least two must have ratings -- never a silent "No
    disagreements." because a name was mistyped or only one rater is there.  ``rater_values``:
    the ratings' rater column.  ``expected`` (a study's :meth:`~goldboard.study.Study.grid_raters`):
    by default these are compared, a rater of them without a rating (a blank column) being missing on
    every item, as gold, the review sheet and ``status`` count it."""
    if len(rater_values) == 0:
        raise GoldboardError(f"{source}: no ratings (nothing to compare)")
    present = [r for r in dict.fromkeys(rater_values) if r.strip()]
    if order is None and expected is not None:
        order = list(expected) + [r for r in present if r not in expected and r not in (study_raters or ())]
    elif order is None:
        order = [r for r in (study_raters or sorted(present)) if r in present] + (
            [r for r in present if r not in study_raters] if study_raters else []
        )
    else:
        if study_raters is not None:
            order = check_names(order, study_raters, param="raters", what="a rater of this study")
        else:
            order = check_names(order, present, param="raters", what=f"a rater in {source}")
        idle = [r for r in order if r not in present]
        pulled = [r for r in idle if r in (expected or ())]  # a pull recorded them: a blank column, rated nothing
        if pulled:
            raise GoldboardError(
                f"--raters: {pulled[0]} has no ratings in {source}: a pull recorded the rater with a blank "
                "column (every item is a missing rating); name raters with ratings"
            )
        if idle:
            raise GoldboardError(f"--raters: {idle[0]} has no ratings in {source} (pull them first)")
        if len(order) < 2:
            raise GoldboardError("--raters: name at least two raters to compare, e.g. --raters onc_a,onc_b")
    if len(present) < 2 or len(order) < 2:
        who = ", ".join(present) or "nobody"
        raise GoldboardError(f"{source}: only one rater ({who}) has ratings; flags compare at least two raters")
    return order


def _json_records(flags: pd.DataFrame) -> list[dict]:
    recs = []
    for rec in flags.to_dict(orient="records"):
        gap = rec["gap"]
        rec["gap"] = None if gap is None or gap != gap else int(gap)  # None or NaN: no gap
        recs.append({k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items()})
    return recs


def format_table(flags: pd.DataFrame | FlagColumns, summary: list[str], width: int = 28) -> str:
    """A plain-text agenda: one line per flagged item x field, then the summary."""

    out = flag_output_columns(flags)
    raters = [c[len("value_") :] for c in out if c.startswith("value_")]
    cols = [
        "agenda",
        "item_id",
        "field",
        *[f"value_{r}" for r in raters],
        "priority",
        "gap",
        "kinds",
        "boundaries",
        "triggers",
    ]
    heads = ["#", "item", "field", *raters, "prio", "gap", "kinds", "boundary", "triggers"]
    rows = [[clipped(str(v).replace("\n", " "), width) for v in rec] for rec in zip(*(out[c] for c in cols))]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if not rows:
        lines = ["No disagreements."]
    return "\n".join(lines + [""] + summary) + "\n"


def clipped(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


commands = [flag_cmd]
