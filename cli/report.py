"""`goldboard report`: the agreement report (HTML or Markdown)."""

from __future__ import annotations

from pathlib import Path

import click

from goldboard.cli._options import RESAMPLES, SEED, OutputFile, format_option, output_option, round_option, study_option
from goldboard.study import Study
from goldboard.study_checks import edited_rounds
from goldboard.text import one_line
from goldboard.workflows import write_report
from goldboard.workflows.report import supplement_replaced


@click.command("report")
@study_option()
@output_option(help="Output file (default: STUDY/reports/report.html or report.md).")
@format_option(["html", "markdown"], "html")
@round_option(what="Round to report")
@click.option("--release", default=None, help="Gold release to compare raters against (default: the latest, e.g. v1).")
@click.option(
    "--bootstrap",
    type=RESAMPLES,
    default=0,
    show_default=True,
    help="Bootstrap resamples for percentile CIs (0: asymptotic CIs).",
)
@click.option(
    "--seed", type=SEED, default=1, show_default=True, help="Bootstrap seed (only with --bootstrap N > 0 or --ci auto)."
)
@click.option(
    "--predictions",
    type=click.Path(dir_okay=False),
    default=None,
    help="Model predictions to score against the gold release (adds a model-scoring section).",
)
@click.option(
    "--ci",
    "ci",
    type=click.Choice(["default", "wald", "auto"]),
    default="default",
    show_default=True,
    help="default: each statistic's interval (Wilson score at the effective sample size; docs/intervals.md); "
    "wald: estimate -/+ 1.96 SE; auto: Wald, with percentile bootstrap (2000 resamples) for fields where Wald "
    "intervals behave badly (n < 30, estimates near 1); the methods text says which.",
)
@click.option(
    "--rule", "rules", multiple=True, help="Stopping rule for the calibration section (default: calibrate's)."
)
@click.option("--pdf", type=OutputFile(), default=None, help="Also print the HTML report to this PDF.")
@click.option(
    "--paper",
    type=click.Choice(["a4", "letter"], case_sensitive=False),
    default=None,
    help="Printed page size of the HTML report and the PDF, not of Markdown (default: from the locale -- "
    "Letter for en_US and other Letter countries, else A4).",
)
@click.option("--no-supplement", is_flag=True, help="Do not write the CSV supplement (every table as CSV).")
def report_cmd(
    study_dir: str,
    output: str | None,
    fmt: str,
    round_number: int | None,
    release: str | None,
    bootstrap: int,
    seed: int,
    predictions: str | None,
    ci: str,
    rules: tuple[str, ...],
    pdf: str | None,
    paper: str | None,
    no_supplement: bool,
) -> None:
    """Write the study's agreement report: study, methods, agreement with 95% CIs, confusion
    matrices, boundary disagreements, adjudication, before/after gold (GRRAS structure).

    The HTML is self-contained (images embedded) and opens offline. Also: the sample-size
    plan (`plan size --study`), calibration rounds against the stopping rule (`calibrate`),
    the gold-label distribution, disagreement -> resolution per named boundary, time on task;
    every table as CSV in supplement/ beside the report; --pdf prints it with headless Chromium.
    """

    check_report_names(output, fmt, pdf)
    study = Study.open(study_dir)
    edited = edited_rounds(study)  # a hand-edited ratings.csv: said in the report, and on screen once written
    replaced = None if no_supplement else supplement_replaced(study, output, fmt)
    path = write_report(
        study,
        output,
        fmt=fmt,
        round_number=round_number,
        n_resamples=bootstrap,
        seed=seed,
        release=release,
        predictions=predictions,
        rules=list(rules) or None,
        ci=ci,
        supplement=not no_supplement,
        pdf=pdf,
        paper=paper,
        edited=edited,
    )
    for line in [*edited, *([replaced] if replaced else [])]:
        click.echo(f"Warning: {one_line(line)}", err=True)
    click.echo(str(path))
    if not no_supplement:
        click.echo(str(path.parent / "supplement"))
    if pdf:
        click.echo(str(pdf))


def check_report_names(output: str | None, fmt: str, pdf: str | None) -> None:
    """``--pdf`` names a PDF (``-o`` named for another format is refused for every command by
    :func:`goldboard.cli._output.refuse_format_mismatch`)."""
    if pdf and Path(pdf).suffix.lower() != ".pdf":
        raise click.BadParameter(f"{pdf!r}: --pdf writes a PDF; give a name ending in .pdf", param_hint="--pdf")


#: options that do nothing without another (refused when given alone: cli._output.refuse_idle_options)
report_cmd.applies_only_with = {
    "seed": ("--bootstrap N (N > 0) or --ci auto", lambda kw: kw["bootstrap"] > 0 or kw["ci"] == "auto"),
    "paper": ("the HTML report or --pdf (not --format markdown)", lambda kw: kw["fmt"] == "html" or bool(kw["pdf"])),
}

#: what --pdf writes (cli._output.refuse_output_named_for_another_format; -o: refuse_format_mismatch)
report_cmd.output_formats = {"pdf": ("a PDF", ("pdf",), False)}

commands = [report_cmd]
