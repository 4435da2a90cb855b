"""`goldboard pull`: Label Studio annotations -> rounds/N/ratings.csv (validated)."""

from __future__ import annotations

from pathlib import Path

import click

from goldboard.annotate.pull import pull
from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.text import did_you_mean


@click.command("pull")
@click.option("--study", "study_dir", required=True, type=click.Path(file_okay=False), help="Study workspace.")
@click.option("--round", "round_number", type=int, default=None, help="Round number (default: the latest).")
@click.option(
    "--from-export",
    "exports",
    multiple=True,
    metavar="[RATER=]FILE",
    help="Read a hand-downloaded Label Studio export (JSON or JSON_MIN) instead of the server; "
    "repeatable. RATER= says whose project the file is from (blinded rounds).",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def pull_cmd(study_dir: str, round_number: int | None, exports: tuple[str, ...], quiet: bool) -> None:
    """Pull a round's annotations into rounds/N/ratings.csv.

    Invalid annotations (unknown value or field, missing required field, empty,
    skipped), annotations by anyone else in a rater's project and superseded
    repeats are kept verbatim in rounds/N/invalid.csv and reported;
    rounds/N/pull.json has the counts.

    With --from-export, an export of another round's project, one given for the
    wrong rater (the tasks' project id says whose it is) or the same export given
    twice is an error.
    """
    study = Study.open(study_dir)
    specs: list = []
    for e in exports:
        rater, sep, path = e.partition("=")
        if sep and rater in study.raters:
            specs.append((rater, path))
        elif sep and not rater.strip():
            raise GoldboardError(f"--from-export {e}: give RATER=FILE or FILE")
        elif sep and not Path(e).exists():
            raise GoldboardError(
                f"--from-export {e}: {rater!r} is not a rater of this study ({', '.join(study.raters)})"
                f"{did_you_mean(rater, study.raters)}"
            )
        else:
            specs.append(e)
    res = pull(study, round_number, from_export=specs, progress=not quiet)
    click.echo(res.describe())
    click.echo(f"wrote {res.paths['ratings']}")


commands = [pull_cmd]
