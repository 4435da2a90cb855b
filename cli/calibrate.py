"""`goldboard calibrate`: is the calibration good enough to start the main rounds?"""

from __future__ import annotations

import click

from goldboard.analysis.calibration import parse_rule
from goldboard.cli._options import RESAMPLES, SEED, OutputFile, format_option, output_option, round_option, study_option
from goldboard.cli._output import emit
from goldboard.errors import GoldboardError
from goldboard.exports.calibration import calibration_curve_png, render_calibration
from goldboard.fileio import atomic_write
from goldboard.study import Study
from goldboard.workflows.calibration import calibration_for_study, rule_change
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
@round_option(dest="rounds", multiple=True, help="Rounds to show (default: the calibration rounds).")
@click.option(
    "--bootstrap",
    type=RESAMPLES,
    default=0,
    show_default=True,
    help="Bootstrap the 95% CIs shown (0: Wald); alpha/ac1 rules then use the bootstrap SE (with the same widened "
    "critical value); kappa rules always test the goodness-of-fit/Wald limit.",
)
@click.option("--seed", type=SEED, default=1, show_default=True, help="Bootstrap seed (only with --bootstrap N > 0).")
@click.option("--plot", type=OutputFile(), default=None, help="Also write the round curve as PNG.")
@click.option(
    "--max-looks",
    type=click.IntRange(min=1),
    default=None,
    help="Planned maximum number of looks (rounds checked against the rule); each look is tested at one-sided "
    "level 0.025/MAX_LOOKS (Bonferroni; checked by simulation up to 5 looks). Default: the number recorded in "
    "study.toml, else 5. Fixed once a look "
    "is recorded.",
)
@click.option(
    "--change-rule",
    is_flag=True,
    help="Change the stopping rule (or its fields) after a recorded look; the change is recorded in study.toml.",
)
@click.option("--no-record", is_flag=True, help="Do not record the rule in study.toml for the report.")
@format_option(["table", "markdown", "json"], "table")
@output_option()
def calibrate_cmd(
    study_dir, rules, fields, rounds, bootstrap, seed, max_looks, change_rule, plot, no_record, fmt, output
) -> None:
    """Per calibration round: the statistic with its 95% CI against the stopping rule, and a
    verdict -- continue calibrating, or the rule is met.

    \b
    Mark calibration rounds when pushing:
      goldboard push --study S cases.jsonl --round 1 --calibration --guideline-version v1.0
    or afterwards: goldboard study round S 1 --calibration --guideline-version v1.0
    \b
    Example:
      goldboard calibrate --study S --rule 'kappa_lower>=0.6' --field safety_label

    The lower limit is the safe thing to demand of a small round. Checking after every round
    is a sequential test: each round is a look, tested at the Bonferroni-adjusted one-sided
    level 0.025/MAX_LOOKS. Cohen's kappa is tested with the more conservative of the
    Donner-Eliasziw goodness-of-fit limit (which does not collapse at perfect agreement) and the
    Wald limit (the Wald limit alone where the goodness-of-fit model misfits), and keeps a 2.5%
    chance of a false stop over the planned looks; Fleiss' kappa, AC1 and alpha test a Wald limit
    whose critical value is widened for small n so that they keep it too, as a seeded simulation
    at the boundary checks for up to 5 planned looks (beyond them the verdict says it is not
    checked). A limit
    that cannot be computed reads "cannot be decided" and never meets a rule (a note says whether
    more items can help). The rule, fields, planned and taken looks are
    recorded in study.toml so `goldboard report` shows the same curve and verdict (unless
    --no-record). Exit status is 0 either way.
    """
    study = Study.open(study_dir)
    recorded = study.extra.get("calibration") or {}
    if max_looks and recorded.get("looks") and recorded.get("max_looks") not in (None, max_looks):
        raise GoldboardError(
            f"this calibration planned {recorded['max_looks']} looks and has taken {recorded['looks']}; the plan "
            f"cannot change after a look (asked for {max_looks})",
            param="max_looks",
        )
    change = rule_change(study, [parse_rule(r) for r in rules], list(fields) or [study.schema.primary_field.name])
    if change_rule and not recorded.get("looks"):
        raise GoldboardError(
            "applies only after a recorded look (study.toml records none: the rule is not fixed yet): leave it out",
            param="change_rule",
        )
    if change_rule and change is None:
        click.echo("Note: --change-rule: the rule and fields are the recorded ones; nothing to change", err=True)
    data = calibration_for_study(
        study,
        rules,
        fields=fields,
        rounds=rounds,
        n_resamples=bootstrap,
        seed=seed,
        max_looks=max_looks,
        change_rule=change_rule,
    )
    if not no_record:
        changes = list(recorded.get("rule_changes") or [])
        record_rules(
            study,
            data["rules"],
            data["fields"],
            bootstrap,
            seed,
            data["max_looks"],
            data["looks"],
            data["level"],
            data["look_rounds"],
        )
        if change_rule and change:
            changes.append(f"after look {recorded.get('looks')}: {change}")
        if changes:  # every change made after a look stays on record
            study.extra["calibration"]["rule_changes"] = changes
            study.save()
    if plot:
        png = calibration_curve_png(data)
        with atomic_write(plot, mode="wb") as fh:
            fh.write(png)
        click.echo(f"Wrote {plot}", err=True)
    emit(render_calibration(data, fmt), output)


calibrate_cmd.param_flags = {"rule": "--rule", "field": "--field", "max_looks": "--max-looks"}

#: options that do nothing without another (refused when given alone: cli._output.refuse_idle_options)
calibrate_cmd.applies_only_with = {"seed": ("--bootstrap N (N > 0)", lambda kw: kw["bootstrap"] > 0)}

#: what --plot writes (cli._output.refuse_output_named_for_another_format)
calibrate_cmd.output_formats = {"plot": ("a PNG image", ("png",), False)}

commands = [calibrate_cmd]
