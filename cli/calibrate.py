"""`goldboard calibrate`: is the calibration good enough to start the main rounds?"""

from __future__ import annotations

import click

from goldboard.cli._options import OutputFile, format_option, output_option, study_option
from goldboard.cli._output import emit
from goldboard.exports.calibration import calibration_curve_png, render_calibration
from goldboard.fileio import atomic_write
from goldboard.study import Study
from goldboard.workflows.calibration import calibration_for_study
from goldboard.workflows.report_extras import record_rules


@click.command("calibrate")
@study_option()
@click.option(
    "--rule",
    "rules",
    multiple=True,
    required=True,
    help="Stopping rule, e.g. 'kappa_lower>=0.6' (kappa|alpha|ac1 _ lower|value|upper; repeat: all must hold).",
)
@click.option("--field", "fields", multiple=True, help="Field the rule applies to (repeatable; default: primary).")
@click.option("--round", "rounds", type=int, multiple=True, help="Rounds to show (default: the calibration rounds).")
@click.option("--bootstrap", type=click.IntRange(min=0), default=0, show_default=True, help="Bootstrap CIs (0: Wald).")
@click.option("--seed", type=int, default=1, show_default=True, help="Bootstrap seed.")
@click.option("--plot", type=OutputFile(), default=None, help="Also write the round curve as PNG.")
@click.option("--no-record", is_flag=True, help="Do not record the rule in study.toml for the report.")
@format_option(["table", "markdown", "json"], "table")
@output_option()
def calibrate_cmd(study_dir, rules, fields, rounds, bootstrap, seed, plot, no_record, fmt, output) -> None:
    """Per calibration round: the statistic with its 95% CI against the stopping rule, and a
    verdict -- continue calibrating, or the rule is met.

    \b
    Mark calibration rounds when pushing:
      goldboard push --study S cases.jsonl --round 1 --calibration --guideline-version v1.0
    or afterwards: goldboard study round S 1 --calibration --guideline-version v1.0
    \b
    Example:
      goldboard calibrate --study S --rule 'kappa_lower>=0.6' --field safety_label

    The lower CI limit is the safe thing to demand of a small round. The rule and fields are
    recorded in study.toml so `goldboard report` shows the same curve and verdict (unless
    --no-record). Exit status is 0 either way.
    """
    study = Study.open(study_dir)
    data = calibration_for_study(study, rules, fields=fields, rounds=rounds, n_resamples=bootstrap, seed=seed)
    if not no_record:
        record_rules(study, data["rules"], data["fields"], bootstrap, seed)
    if plot:
        png = calibration_curve_png(data)
        with atomic_write(plot, mode="wb") as fh:
            fh.write(png)
        click.echo(f"Wrote {plot}", err=True)
    emit(render_calibration(data, fmt), output)


calibrate_cmd.param_flags = {"round_": "--round", "rule": "--rule", "field": "--field"}

commands = [calibrate_cmd]
