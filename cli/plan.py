"""`goldboard plan`: how many items to double-rate, and which ones."""

from __future__ import annotations

from pathlib import Path

import click

from goldboard.analysis.planning import (
    ASSURANCE_SIMULATIONS,
    assured_sample_size,
    plan_record,
    plan_sample_size,
    render_plans,
)
from goldboard.cli._options import (
    MAX_RESAMPLES,
    SEED,
    OutputFile,
    format_option,
    n_cases_option,
    output_option,
    outputs_output_option,
    round_option,
    study_option,
)
from goldboard.cli._output import emit
from goldboard.cli.judge import plan_judge_cmd
from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.text import terminal_text

# the study workflows load pandas (and the report's plotting): imported when a command uses them,
# so `plan size --alpha-min ...` (a closed formula) starts in a blink


def plan_inputs_from_study(*args, **kwargs):
    from goldboard.workflows.planning import plan_inputs_from_study as run

    return run(*args, **kwargs)


def sample_cases_file(*args, **kwargs):
    from goldboard.workflows.planning import sample_cases_file as run

    return run(*args, **kwargs)


def record_plan(*args, **kwargs):
    from goldboard.workflows.report_extras import record_plan as run

    return run(*args, **kwargs)


def record_sampling(*args, **kwargs):
    from goldboard.workflows.methods import record_sampling as run

    return run(*args, **kwargs)


def _floats(text: str | None, flag: str) -> list[float] | None:
    if text is None:
        return None
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise GoldboardError(f"{flag}: expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise GoldboardError(f"{flag}: expected comma-separated numbers, got {text!r}")
    return values


@click.group("plan")
def plan_group() -> None:
    """Design the agreement study: sample size (`plan size`) and the double-rated set (`plan sample`)."""


@plan_group.command("size")
@click.option("--kappa", type=float, default=None, help="Expected kappa (default with --from-study: the pilot's).")
@click.option(
    "--prevalence",
    default=None,
    help="Expected category prevalences, comma-separated (e.g. 0.2,0.5,0.3), or one number for a binary "
    "outcome's positive rate. Default with --from-study: the pilot's.",
)
@click.option("--lower", "kappa_lower", type=float, default=None, help="Goal: expected lower 95% limit >= LOWER.")
@click.option("--width", type=float, default=None, help="Goal: expected two-sided 95% CI kappa -/+ WIDTH/2.")
@click.option("--null", "kappa_null", type=float, default=None, help="Goal: test H0 kappa = NULL (with --power).")
@click.option(
    "--alpha-min",
    "alpha_min",
    type=float,
    default=None,
    help="Goal: Krippendorff's alpha of at least ALPHA_MIN (e.g. 0.667, 0.8, 0.9): Krippendorff's minimum "
    "sample size, at the --alpha level of significance.",
)
@click.option(
    "--least-frequent",
    "least_frequent",
    type=float,
    default=None,
    help="With --alpha-min: probability of the least frequent category (1/k for k equally used categories). "
    "Default: the smallest --prevalence, or the pilot's with --from-study.",
)
@click.option("--power", type=float, default=0.80, show_default=True, help="Power of the test (only with --null).")
@click.option(
    "--alpha",
    type=float,
    default=0.05,
    show_default=True,
    help="Type I error rate (with --alpha-min: the level of significance).",
)
@click.option(
    "--assurance",
    type=float,
    default=None,
    help="With --lower/--width: the n at which the target is met with this probability (e.g. 0.8), for the "
    "interval the report prints: exact for two categories (every 2 x 2 table), else by simulation (the share's 95% "
    "lower confidence bound reaches it); without it the target is met on average (expected) only.",
)
@click.option(
    "--simulations",
    type=click.IntRange(100, MAX_RESAMPLES),
    default=ASSURANCE_SIMULATIONS,
    show_default=True,
    help="With --assurance and three or more categories: simulated studies per n (up to 16 times as many where "
    "the share is close to P).",
)
@click.option(
    "--seed",
    type=SEED,
    default=None,
    help="With --assurance and three or more categories: draw the simulated studies from this seed instead of "
    "the one fixed set (the n can then differ by an item or two between seeds; two categories are exact).",
)
@click.option(
    "--two-sided", is_flag=True, help="With --null: two-sided Cantor / Flack tests (the chi-square test always is)."
)
@click.option("--rates", default=None, help="Binary, Cantor (1996): the two raters' own positive rates, e.g. 0.3,0.4.")
@study_option(required=False, help="The study this plan is for: recorded in its study.toml for the report.")
@click.option(
    "--from-study",
    "from_study",
    is_flag=True,
    help="Use the --study's pilot round prevalences and kappa (with --alpha-min: its least frequent category); "
    "a --kappa or --prevalence given replaces that input, and the sentence says so.",
)
@click.option("--no-record", is_flag=True, help="With --study: do not record the plan in study.toml.")
@round_option(what="Pilot round")
@click.option("--field", default=None, help="Field of the pilot (default: the schema's first categorical field).")
@format_option(["table", "markdown", "json"], "table")
@output_option()
def size_cmd(
    kappa,
    prevalence,
    kappa_lower,
    width,
    kappa_null,
    alpha_min,
    least_frequent,
    power,
    alpha,
    assurance,
    simulations,
    seed,
    two_sided,
    rates,
    study_dir,
    from_study,
    no_record,
    round_number,
    field,
    fmt,
    output,
) -> None:
    """Items two raters must both rate so kappa (or Krippendorff's alpha) is estimated precisely enough.

    \b
    One goal:
      --lower L           expected lower limit of the one-sided 95% CI >= L
                          (Donner & Eliasziw 1992; R kappaSize CIBinary/CI3Cats..)
      --width W           expected two-sided 95% CI within kappa -/+ W/2
      add --assurance P   the n at which that target is met with probability P
                          (seeded simulation), not only on average
      --null K0           test H0 kappa = K0 with --power (Donner & Eliasziw 1992,
                          kappaSize PowerBinary..; Flack et al. 1988, irr N2.cohen.kappa;
                          binary: Cantor 1996, irr N.cohen.kappa)
      --alpha-min A       Krippendorff's minimum sample size for alpha >= A at the
                          --alpha level of significance, given the least frequent
                          category's probability (--least-frequent); no --kappa
    \b
    Examples:
      goldboard plan size --kappa 0.7 --lower 0.5 --prevalence 0.2,0.5,0.3
      goldboard plan size --study S --from-study --null 0.4 --power 0.9 --format json
      goldboard plan size --alpha-min 0.8 --least-frequent 0.25 --alpha 0.05

    Prints a table (or Markdown/JSON) and a sentence for the methods section. --lower and
    --width plans meet their target on average ("expected"): about half of the studies of that
    size miss --lower. With --assurance P the first row (and the sentence) is the n that meets
    it with probability P, the second the expected-value n.
    """
    pilot = None
    study = Study.open(study_dir) if study_dir else None
    if from_study and study is None:
        raise GoldboardError("--from-study needs --study DIR")
    for flag, value in (("--field", field), ("--round", round_number)):
        if value is not None and not from_study:  # else recorded as a plan the study's pilot never fed
            raise GoldboardError(
                f"{flag} {value}: names the pilot of --from-study; give --from-study (or leave it out)"
            )
    if alpha_min is not None and kappa is not None:
        raise GoldboardError("--kappa: not used with --alpha-min (Krippendorff's minimum needs no expected value)")
    props = _floats(prevalence, "--prevalence")
    if from_study:
        kappa, props, pilot = plan_inputs_from_study(
            study,
            kappa,
            props,
            alpha_min=alpha_min,
            least_frequent=least_frequent,
            field=field,
            round_number=round_number,
        )
    elif alpha_min is not None:
        if least_frequent is None and props is None:
            raise GoldboardError("give --least-frequent (or --prevalence), or --study DIR --from-study")
    elif kappa is None or props is None:
        raise GoldboardError("give --kappa and --prevalence, or --study DIR --from-study")
    r = _floats(rates, "--rates")
    if r is not None and len(r) != 2:
        raise GoldboardError("--rates: give the two raters' positive rates, e.g. 0.3,0.4")
    plans = plan_sample_size(
        kappa,
        None if props is None else (props if len(props) > 1 else props[0]),
        kappa_lower=kappa_lower,
        width=width,
        kappa_null=kappa_null,
        alpha_min=alpha_min,
        least_frequent=least_frequent,
        alpha=alpha,
        power=power,
        two_sided=two_sided,
        rates=r,
    )
    if assurance is not None:
        if kappa_lower is None and width is None:
            raise GoldboardError("--assurance: applies to --lower or --width")
        plans = [assured_sample_size(plans[0], assurance, simulations=simulations, seed=seed), *plans]
    text = render_plans(plans, fmt, pilot)
    if study is not None and not no_record:
        record_plan(study, plan_record(plans, pilot))
        click.echo(f"Recorded the plan in {study.path / 'study.toml'} (the report's methods cite it)", err=True)
    emit(text, output)


size_cmd.param_flags = {"kappa_lower": "--lower", "kappa_upper": "--width", "kappa_null": "--null"}


@plan_group.command("sample")
@click.option("--cases", required=True, type=click.Path(dir_okay=False), help="Cases file (JSONL/JSON/CSV/XLSX).")
@click.option("--by", default=None, help="Stratify by this case column (e.g. error_type, specialty).")
@n_cases_option("Number of cases to draw.", dest="n", old=["--n"], type=int, required=True)
@click.option("--seed", type=SEED, default=1, show_default=True, help="Random seed (same seed, same set).")
@output_option(required=True, help="Cases file to write (JSONL, or CSV for a .csv name), atomically.")
@click.option("--outputs", type=click.Path(dir_okay=False), default=None, help="Model outputs file of the cases.")
@outputs_output_option("Write the drawn cases' outputs here.")
@click.option("--rest", "rest_output", type=OutputFile(), default=None, help="Write the other cases here.")
@study_option(
    required=False,
    help="Record the draw (cases file, n, strata, seed) in this study's study.toml: the report's methods cite it.",
)
def sample_cmd(cases, by, n, seed, output, outputs, outputs_output, rest_output, study_dir) -> None:
    """Draw the double-rated set: N cases stratified by a case column, with a seed. The files it
    writes feed `goldboard push`.

    \b
    N at least the number of strata: one case from every stratum, the rest proportional to
    the cases each stratum has left (largest remainders; a tie goes to the larger stratum,
    then is drawn with the seed). N below the number of strata: a warning (not every stratum
    can be represented); N strata are drawn at random with the seed, each equally likely
    whatever its size (a simple random sample of strata, Cochran 1977), one case from each.

    
    Example (a calibration set, its outputs, and the rest for the main round):
      goldboard plan sample --cases cases.jsonl --by error_type -n 12 --seed 1 -o cal.jsonl \\
          --outputs outputs.jsonl --outputs-output cal_outputs.jsonl --rest main.jsonl
    """
    study = Study.open(study_dir) if study_dir else None
    res = sample_cases_file(cases, by, n, seed, output, outputs, outputs_output, rest_output)
    if study is not None:
        available = sum(a for a, _ in res["strata"].values())
        record_sampling(study, Path(cases).name, res["n"], available, seed, by, res["strata"])
        click.echo(f"Recorded the draw in {study.path / 'study.toml'} (the report's methods cite it)", err=True)
    click.echo(f"Wrote {res['n']} cases to {res['output']} (seed {seed}{', by ' + by if by else ''})", err=True)
    if res["outputs_output"]:
        click.echo(f"Wrote their {res['n_outputs']} outputs to {res['outputs_output']}", err=True)
    if res["rest_output"]:
        click.echo(f"Wrote the other cases to {res['rest_output']}", err=True)
    for w in res["warnings"]:
        click.echo(f"Warning: {w}", err=True)
    shown = {s: terminal_text(s) for s in res["strata"]}  # a zero-width space shows as \u200b
    width = max(len("stratum"), *(len(t) for t in shown.values()))
    click.echo(f"{'stratum'.ljust(width)}  available  drawn")
    for s, (avail, drawn) in sorted(res["strata"].items()):
        click.echo(f"{shown[s].ljust(width)}  {avail:9d}  {drawn:5d}")


#: options that do nothing without another (refused when given alone: cli._output.refuse_idle_options)
size_cmd.applies_only_with = {
    "simulations": ("--assurance", lambda kw: kw["assurance"] is not None),
    "seed": ("--assurance", lambda kw: kw["assurance"] is not None),
    "power": ("--null", lambda kw: kw["kappa_null"] is not None),
    "two_sided": ("--null", lambda kw: kw["kappa_null"] is not None),
    "no_record": ("--study", lambda kw: kw["study_dir"] is not None),
}

sample_cmd.param_flags = {"output": "--output", "outputs": "--outputs"}

#: what each output option writes (cli._output.refuse_output_named_for_another_format)
sample_cmd.output_formats = {
    name: ("cases as JSONL (CSV for a .csv name)", ("jsonl", "csv"), True)
    for name in ("output", "outputs_output", "rest_output")
}

commands = [plan_group]

# `goldboard plan judge` (how many items the alt-test needs) lives with `goldboard judge`
plan_group.add_command(plan_judge_cmd)
