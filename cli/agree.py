"""`goldboard agree`: agreement statistics with 95% CIs from any ratings source.

The command is thin: a reader of :mod:`goldboard.workflows.agreement`
(``study_agreement_input``, ``export_agreement_input``, ``table_agreement_input``)
turns each input into a ratings-shaped DataFrame (``item_id, rater, field, value``
plus the file's other columns and a ``_where`` column naming ``file:line`` for error
messages), then :func:`goldboard.analysis.agreement.agreement` does the statistics
and a renderer prints them.  The readers underneath:

* :func:`goldboard.cases.ratings.read_long_table` -- CSV/TSV/XLSX/JSONL/JSON, one row
  per rating (``goldboard pull``'s ``ratings.csv`` included: ``value`` is found when
  there is no ``label`` column);
* :func:`goldboard.cases.ratings.read_wide_table` -- one column per rater;
* :func:`goldboard.annotate.export_file.read_label_studio_export` -- Label Studio's
  full JSON export or JSON_MIN.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from goldboard.analysis.agreement import LEVELS, agreement
from goldboard.analysis.agreement_render import render_csv, render_json, render_markdown, render_table
from goldboard.analysis.intervals import METHODS
from goldboard.cli._options import RESAMPLES, SEED, format_option, output_option, round_option, study_option
from goldboard.cli._output import emit
from goldboard.errors import GoldboardError
from goldboard.fileio import csv_text
from goldboard.label_configs.schema import load_schema
from goldboard.study import Study
from goldboard.text import one_line
from goldboard.workflows.agreement import (
    design_summary,
    export_agreement_input,
    retest_for_study,
    study_agreement_input,
    table_agreement_input,
)

if TYPE_CHECKING:  # pandas is loaded where a frame is needed: `agree --study` on a small study needs none
    import pandas as pd


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    return [p for p in parts if p]


def _load_schema(ref: str | None):
    if ref is None:
        return None

    return load_schema(ref)


def _choose_field(df: pd.DataFrame, field: str | None, schema, source: str) -> str:
    if field is not None and not field.strip():
        raise GoldboardError(f"--field {field!r}: an empty value; give a field, or leave the option out")
    if field:
        return field
    fields = sorted({str(v) for v in df["field"]}) if "field" in df.columns else []
    if schema is not None:
        primary = schema.primary_field.name
        if not fields or primary in fields:
            if fields:  # (no fields at all: the error that follows says so; no note before it)
                click.echo(
                    f"Note: analysing the schema's primary field {primary!r} (choose another with --field)", err=True
                )
            return primary
    if len(fields) == 1:
        return fields[0]
    if len(fields) > 1:
        raise GoldboardError(
            f"{source}: several fields ({', '.join(fields[:8])}{', ...' if len(fields) > 8 else ''}); "
            f"choose one with --field"
        )
    return "label"


@click.command("agree")
@click.argument("table", required=False, type=click.Path(dir_okay=False))
@study_option(required=False, help="Read a study's pulled ratings and schema.")
@round_option(what="Study round")
@click.option(
    "--test-retest",
    is_flag=True,
    help="With --study and --rounds A,B: intra-rater agreement of each rater between two rounds "
    "(same rater, same items), kappa and alpha with 95% CIs.",
)
@click.option("--rounds", "rounds_", default=None, metavar="A,B", help="The two rounds for --test-retest, e.g. 1,2.")
@click.option(
    "--from-label-studio",
    "ls_files",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Label Studio JSON export (full or JSON_MIN); repeat for one export per rater.",
)
@click.option("--field", help="Field to analyse; FIELD:VALUE for one value of a multi-select field.")
@click.option("--item-col", default="item_id", show_default=True, help="Item column of a TABLE (long and wide).")
@click.option("--rater-col", default="rater", show_default=True, help="Rater column of a long TABLE.")
@click.option("--label-col", default=None, help="Label column of a long TABLE (default: label, else value).")
@click.option(
    "--raters",
    "wide_raters",
    help="Wide TABLE: comma-separated rater columns, e.g. onc_a,onc_b. With --study: compare only these "
    "study raters. A name that is not a rater is an error.",
)
@click.option("--schema", "schema_ref", help="Schema (built-in name or file): categories, order, level, aliases.")
@click.option("--categories", help="Full ordered scale, e.g. 1,2,3,4,5 (weights span it even if a level is unused).")
@click.option(
    "--level",
    "levels",
    multiple=True,
    type=click.Choice(LEVELS),
    help="Measurement level (repeatable; alpha is reported at each). Default: the schema's.",
)
@click.option("--by", help="Stratify by a per-item column (error category, specialty, model).")
@click.option("--dichotomize", help="Analyse >= K vs < K on an ordered scale, e.g. 4.")
@click.option(
    "--bootstrap",
    type=RESAMPLES,
    default=0,
    show_default=True,
    help="Bootstrap resamples for percentile CIs (0: asymptotic CIs).",
)
@click.option("--seed", type=SEED, default=1, show_default=True, help="Bootstrap seed (only with --bootstrap N > 0).")
@click.option("--cluster-col", help="With --bootstrap N: resample clusters of items (e.g. case_id) instead of items.")
@click.option(
    "--ci",
    "ci",
    type=click.Choice(["default", *METHODS]),
    default="default",
    show_default=True,
    help="Interval method without --bootstrap: default = each statistic's (Wilson score at the effective "
    "sample size; docs/intervals.md), or wald (estimate -/+ 1.96 SE).",
)
@format_option(["table", "markdown", "csv", "json"], "table")
@output_option()
def agree_cmd(
    table,
    study_dir,
    round_number,
    test_retest,
    rounds_,
    ls_files,
    field,
    item_col,
    rater_col,
    label_col,
    wide_raters,
    schema_ref,
    categories,
    levels,
    by,
    dichotomize,
    bootstrap,
    seed,
    cluster_col,
    ci,
    fmt,
    output,
) -> None:
    """Agreement between raters: kappa, alpha and companions, each with a 95% CI.

    \b
    Input (one of):
      TABLE                     long table, one row per rating (CSV/XLSX/JSONL);
                                `goldboard pull`'s ratings.csv works as is
      TABLE --raters A,B        wide table, one column per rater
      --study DIR [--round N]   a study's pulled ratings and its schema
                                (--raters A,B: only these study raters)
      --from-label-studio FILE  Label Studio JSON / JSON_MIN export (with --field)
      --study DIR --test-retest --rounds 1,2
                                intra-rater (test-retest) agreement per rater

    Stdout carries only the requested format; warnings go to stderr (and into
    the JSON's "warnings").
    """
    sources = sum([table is not None, study_dir is not None, bool(ls_files)])
    if sources != 1:
        raise GoldboardError("give exactly one input: a TABLE file, --study DIR, or --from-label-studio FILE")
    if test_retest or rounds_:
        _retest(study_dir, rounds_, round_number, field, schema_ref, bootstrap, seed, fmt, output)
        return
    schema = _load_schema(schema_ref)
    raters = _split(wide_raters) if wide_raters is not None else None
    if study_dir is not None:
        inp = study_agreement_input(
            study_dir, round_number, schema=schema, raters=raters, by=by, cluster_col=cluster_col
        )
        schema = inp.schema
    elif ls_files:
        inp = export_agreement_input(ls_files, field, schema, raters=raters)
    else:
        inp = table_agreement_input(table, raters=raters, item_col=item_col, rater_col=rater_col, label_col=label_col)
    df, table_warnings = inp.ratings, list(inp.warnings)
    try:
        field = _choose_field(df, inp.field or field, schema, inp.source)
        result = agreement(
            df,
            field,
            schema,
            categories=_split(categories),
            levels=list(levels) or None,
            raters=inp.raters,
            by=None if inp.groups is not None else by,
            groups=inp.groups,
            dichotomize=dichotomize,
            n_resamples=bootstrap,
            seed=seed,
            cluster_col=None if inp.clusters is not None else cluster_col,
            clusters=inp.clusters,
            source=inp.source,
            progress=bootstrap > 0,
            ci=ci,
        )
    except GoldboardError:
        for w in table_warnings:  # they may explain the error (e.g. the wrong 'rater' column was read)
            click.echo(f"Warning: {one_line(w)}", err=True)
        raise
    if table_warnings:
        result["warnings"] = table_warnings + list(result["warnings"])
    design = design_summary(inp.study, inp.round_number, df, field) if inp.study is not None else None
    if design is not None:
        result["design"] = design
    _render(result, field, fmt, output, dichotomize=dichotomize, by=by, note=design["note"] if design else "")


def _render(result: dict, field: str, fmt: str, output: str | None, *, dichotomize, by, note: str) -> None:
    """Print (or write) the agreement result in ``fmt``, the design note under a table or Markdown."""
    title = f"Agreement on {field}"
    if dichotomize:
        title += f" (dichotomized at {dichotomize})"
    if by:
        title += f", by {by}"
    text = {
        "table": lambda r: render_table(r, title),
        "markdown": lambda r: render_markdown(r, title),
        "csv": render_csv,
        "json": render_json,
    }[fmt](result)
    if note and fmt in ("table", "markdown"):
        text = text.rstrip("\n") + "\n\n" + note + "\n"
    emit(text, output, result["warnings"], terminal=fmt == "table")


def _retest(study_dir, rounds_, round_number, field, schema_ref, bootstrap, seed, fmt, output) -> None:
    """``agree --study S --test-retest --rounds A,B``: intra-rater agreement per rater."""
    import pandas as pd

    from goldboard.analysis.retest import render_retest_table, retest_rows

    if study_dir is None:
        raise GoldboardError("--test-retest needs --study DIR (the rounds are a study's)")
    if not rounds_:
        raise GoldboardError("--test-retest: give the two rounds, e.g. --rounds 1,2")
    if round_number is not None:
        raise GoldboardError("--test-retest compares --rounds A,B; leave out --round")
    try:
        rounds = [int(x) for x in rounds_.split(",")]
    except ValueError:
        raise GoldboardError(f"--rounds {rounds_!r}: give two round numbers, e.g. 1,2") from None
    study = Study.open(study_dir)
    schema = _load_schema(schema_ref) or study.schema
    if field is None:
        field = _choose_field(pd.DataFrame({"field": []}), None, schema, str(study.path))
    result = retest_for_study(study, rounds, field, schema=schema, n_resamples=bootstrap, seed=seed)
    if fmt == "json":
        text = json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    elif fmt == "csv":
        text = csv_text(pd.DataFrame(retest_rows(result)))
    else:
        text = render_retest_table(result, markdown=fmt == "markdown")
    emit(text, output, result["warnings"], terminal=fmt == "table")


#: library parameters under another flag name (see goldboard.cli.flag_for)
agree_cmd.param_flags = {
    "levels": "--level",
    "raters": "--raters",
    "n_resamples": "--bootstrap",
    "files": "--from-label-studio",
    "rounds": "--rounds",
}


def _long_table(kw: dict) -> bool:
    return kw["table"] is not None and kw["wide_raters"] is None


#: options that do nothing without another (refused when given alone: cli._output.refuse_idle_options)
agree_cmd.applies_only_with = {
    "seed": ("--bootstrap N (N > 0)", lambda kw: kw["bootstrap"] > 0),
    # clusters are resampled by the between-rater bootstrap only: the asymptotic CIs and test-retest do not use them
    "cluster_col": (
        "--bootstrap N (N > 0), between raters (not --test-retest)",
        lambda kw: kw["bootstrap"] > 0 and not (kw["test_retest"] or kw["rounds_"]),
    ),
    # they name a TABLE's columns; a study's ratings and an export have their own
    "item_col": ("a TABLE (not --study or --from-label-studio)", lambda kw: kw["table"] is not None),
    "rater_col": ("a long TABLE (not --raters, --study or --from-label-studio)", _long_table),
    "label_col": ("a long TABLE (not --raters, --study or --from-label-studio)", _long_table),
}

commands = [agree_cmd]
