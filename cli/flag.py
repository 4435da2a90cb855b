"""`goldboard flag`: list the items whose ratings need adjudication, most serious first."""

from __future__ import annotations

import json

import click
import pandas as pd

from goldboard.adjudicate.flags import flag_disagreements, flags_for_output, summarize_flags, summary_lines
from goldboard.cases.ratings import load_ratings_file
from goldboard.cli._options import format_option, output_option, round_option, study_option
from goldboard.errors import GoldboardError
from goldboard.fileio import write_text_atomic
from goldboard.label_configs.schema import load_schema
from goldboard.study import Study, study_ratings


@click.command("flag")
@click.argument("ratings", required=False, type=click.Path(dir_okay=False))
@study_option(required=False, help="Study workspace (reads its pulled ratings).")
@round_option(in_force=True, what="Only this round")
@click.option("--schema", "schema_ref", default=None, help="Schema name or file (needed with a RATINGS file).")
@click.option("--raters", default=None, help="Comma-separated rater order (default: the study's, else sorted).")
@click.option("--triggered-only", is_flag=True, help="Only items that hit a schema boundary or trigger.")
@format_option(["table", "csv", "json"], "table")
@output_option()
def flag_cmd(ratings, study_dir, round_, schema_ref, raters, triggered_only, fmt, output):
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
    if study_dir:
        st = Study.open(study_dir)
        schema = load_schema(schema_ref) if schema_ref else st.schema
        df = study_ratings(st, round_)
        source = "ratings"
        order = order or st.raters
    else:
        if not schema_ref:
            raise GoldboardError("--schema: give the schema of the RATINGS file (e.g. --schema mtb)")
        schema = load_schema(schema_ref)
        df = load_ratings_file(ratings)
        source = ratings
    flags = flag_disagreements(df, schema, order, source=source, round_number=round_)
    for line in flags.attrs["round_selection"].warning_lines():
        click.echo(line if line.startswith("  ") else f"Warning: {line}", err=True)
    for b in flags.attrs.get("rule_breaks", []):
        click.echo(f"Warning: {b.describe()}", err=True)
    if triggered_only:
        flags = flags[flags["triggered"]].reset_index(drop=True)
    summary = summarize_flags(flags, schema)
    if fmt == "json":
        text = (
            json.dumps(
                {
                    "schema": {"name": schema.name, "version": schema.version},
                    "summary": summary,
                    "flags": _json_records(flags),
                },
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    elif fmt == "csv":
        text = flags_for_output(flags).to_csv(index=False)
        for line in summary_lines(summary):
            click.echo(line, err=True)
    else:
        text = format_table(flags, summary_lines(summary))
    if output:
        write_text_atomic(output, text)
        click.echo(f"Wrote {len(flags)} flagged rows ({summary['items_flagged']} items) to {output}", err=True)
    else:
        click.echo(text, nl=False)


def _json_records(flags: pd.DataFrame) -> list[dict]:
    recs = []
    for rec in flags.to_dict(orient="records"):
        rec["gap"] = None if pd.isna(rec["gap"]) else int(rec["gap"])
        recs.append({k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items()})
    return recs


def format_table(flags: pd.DataFrame, summary: list[str], width: int = 28) -> str:
    """A plain-text agenda: one line per flagged item x field, then the summary."""

    out = flags_for_output(flags)
    raters = [c[len("value_") :] for c in flags.columns if c.startswith("value_")]
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
    rows = [[_clip(str(v).replace("\n", " "), width) for v in rec] for rec in out[cols].itertuples(index=False)]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    if not rows:
        lines = ["No disagreements."]
    return "\n".join(lines + [""] + summary) + "\n"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


commands = [flag_cmd]
