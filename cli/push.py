"""`goldboard push`: send annotation units to Label Studio (blinded by default)."""

from __future__ import annotations

import click

from goldboard.annotate.push import DEFAULT_BATCH_BYTES, push
from goldboard.cli._options import SEED, round_option, study_option
from goldboard.study import Study
from goldboard.text import terminal_text


@click.command("push")
@study_option()
@click.argument("cases", type=click.Path(dir_okay=False))
@click.option("--outputs", type=click.Path(dir_okay=False), default=None, help="Model outputs file.")
@round_option(
    dest="round_number", help="Round number (default: the latest, 1 for a new study). A new round N needs round N-1."
)
@click.option(
    "--shared/--blinded",
    "shared",
    default=None,
    help="Shared: one project for all raters. Blinded (default): one project per rater.",
)
@click.option(
    "--hide-model",
    is_flag=True,
    default=None,
    help="Keep the model name out of the tasks (raters see data columns in Label Studio's task list).",
)
@click.option(
    "--overlap",
    type=float,
    default=None,
    metavar="SHARE",
    help="Overlap design: the first rater rates every item, the others a random SHARE (e.g. 0.2) "
    "for reliability. Needs --seed.",
)
@click.option(
    "--per-item",
    type=int,
    default=None,
    metavar="K",
    help="K raters per item, balanced over rater pairs (e.g. 3 raters, --per-item 2). Needs --seed.",
)
@click.option("--seed", type=SEED, default=None, help="Seed of the --overlap/--per-item draw (recorded in study.toml).")
@click.option(
    "--stratify-by",
    default=None,
    metavar="COLUMN",
    help="Draw --overlap/--per-item within strata of a case field or item column (e.g. case_type). "
    "--overlap allocates proportionally (largest remainders; a tie goes to the larger stratum, then to the "
    "seed); with fewer double-rated items than strata, that many strata are drawn at random with the seed, "
    "each equally likely, one item each, and a warning names the strata left without one.",
)
@click.option(
    "--batch-size",
    type=int,
    default=None,
    help=f"At most this many tasks per import request (default: no count limit; requests of up to "
    f"{DEFAULT_BATCH_BYTES // 2**20} MiB).",
)
@click.option(
    "--jobs",
    type=int,
    default=None,
    help="Projects filled at once (default: the embedded server's --workers, else 1). "
    "More than 1 helps only a server with several app workers.",
)
@click.option(
    "--calibration",
    is_flag=True,
    default=None,
    help="Mark the round as a calibration round (see `goldboard calibrate`).",
)
@click.option("--guideline-version", default=None, help="Guideline (codebook) version the raters use in this round.")
@click.option(
    "--add-to-adjudicated-round",
    is_flag=True,
    help="Add new cases to a round that already has adjudication decisions or a gold release.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def push_cmd(
    study_dir: str,
    cases: str,
    outputs: str | None,
    round_number: int | None,
    shared: bool | None,
    hide_model: bool | None,
    overlap: float | None,
    per_item: int | None,
    seed: int | None,
    stratify_by: str | None,
    batch_size: int | None,
    jobs: int | None,
    calibration: bool | None,
    guideline_version: str | None,
    add_to_adjudicated_round: bool,
    quiet: bool,
) -> None:
    """Push CASES (+ --outputs) to the study's Label Studio projects.

    \b
    Blinded (default): one project per rater per round, the same tasks in each.
    On the embedded server each rater's project sits in that rater's own Label
    Studio organization, so the server refuses it to everyone else; goldboard
    checks that with each rater's account after the push and records it in
    study.toml (the report states it). On your team's Label Studio blinding rests
    on separate projects only: send each rater only the link to their own project.
    Pull holds out any annotation made in a rater's project by another known user.

    Model-blind rating: --hide-model keeps the model name out of the tasks (the
    labeling page never shows it; Label Studio's task list shows data columns).
    Give outputs opaque output_ids too, since default ids contain the model name.

    Case-level rounds: without --outputs each case is one item and the labeling
    page has no model pane (raters label the cases themselves). A round holds
    one kind of item: pushing outputs into a case-level round, or bare cases
    into a case x output round, is refused -- push them to a new round.

    Case columns that no rater will see (not displayed by the schema) are
    listed as warnings, as `goldboard cases validate` does.

    Accounts: push never creates a Label Studio account. A study rater without
    one on the embedded server is an error (a misspelt name?); create accounts
    with `goldboard server add-raters NAME` or `server start --raters`.

    Idempotent: running it again (e.g. after a push that died half-way) imports
    only the tasks that are missing. Tasks go in requests of a few MB each; on a
    server with several app workers the raters' projects are filled at once.

    \b
    Designs (who rates what; written to rounds/N/assignment.csv):
      --overlap 0.2 --seed 7 [--stratify-by case_type]
          the first rater rates all items, the others the same random 20%;
          agreement uses the double-rated items, gold of the others is 'single'
      --per-item 2 --seed 7   each item rated by 2 of the raters, balanced over pairs

    \b
    Rounds: --round N opens a new round only when round N-1 exists. New cases
    are refused in a round that already has adjudication decisions or a gold
    release (push them to a new round, or pass --add-to-adjudicated-round).
    """
    study = Study.open(study_dir)
    res = push(
        study,
        cases,
        outputs,
        round_number=round_number,
        shared=shared,
        hide_model=hide_model or None,
        batch_size=batch_size,
        jobs=jobs,
        progress=not quiet,
        calibration=calibration,
        guideline_version=guideline_version,
        overlap=overlap,
        per_item=per_item,
        seed=seed,
        stratify_by=stratify_by,
        add_to_adjudicated_round=add_to_adjudicated_round,
    )
    click.echo(terminal_text(res.describe()))


#: design parameters under another flag name (see goldboard.cli.flag_for)
push_cmd.param_flags = {"share": "--overlap", "k": "--per-item"}

commands = [push_cmd]
