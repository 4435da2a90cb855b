"""`goldboard report`: the agreement report (HTML or Markdown)."""

from __future__ import annotations

import click

from goldboard.cli._options import format_option, output_option, round_option, study_option
from goldboard.study import Study
from goldboard.workflows import write_report


@click.command("report")
@study_option()
@output_option(help="Output file (default: STUDY/reports/report.html or report.md).")
@format_option(["html", "markdown"], "html")
@round_option(what="Round to report")
@click.option("--release", default=None, help="Gold release to compare raters against (default: the latest, e.g. v1).")
@click.option(
    "--bootstrap",
    type=int,
    default=0,
    show_default=True,
    help="Bootstrap resamples for percentile CIs (0: asymptotic CIs).",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Bootstrap seed.")
@click.option(
    "--predictions",
    type=click.Path(dir_okay=False),
    default=None,
    help="Model predictions to score against the gold release (adds a model-scoring section).",
)
def report_cmd(
    study_dir: str,
    output: str | None,
    fmt: str,
    round_: int | None,
    release: str | None,
    bootstrap: int,
    seed: int,
    predictions: str | None,
) -> None:
    """Write the study's agreement report: study, methods, agreement with 95% CIs, confusion
    matrices, boundary disagreements, adjudication, before/after gold (GRRAS structure).

    The HTML is self-contained (images embedded) and opens offline.
    """

    study = Study.open(study_dir)
    path = write_report(
        study, output, fmt=fmt, round=round_, bootstrap=bootstrap, seed=seed, release=release, predictions=predictions
    )
    click.echo(str(path))


commands = [report_cmd]
