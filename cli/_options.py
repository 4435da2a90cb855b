"""Options shared by several ``goldboard`` commands, declared once.

``study_option``   ``--study DIR`` (parameter ``study_dir``): the study workspace.
``round_option``   ``--round N`` (parameter ``round_``).  Omitted, a command reads
                   :data:`ROUND_DEFAULT_HELP` -- the study's latest pulled round
                   (:meth:`goldboard.study.Study.latest_pulled_round`) for commands that
                   analyse one round (``agree``, ``report``); the ratings in force (per
                   item, the latest round every rater rated: :mod:`goldboard.cases.rounds`)
                   for commands that work on decisions and gold (``flag``, ``adjudicate
                   sheet|push``, ``gold export``), which say so in their help.
``format_option``  ``--format`` (parameter ``fmt``) with the command's choices.
``output_option``  ``-o/--output FILE`` (parameter ``output``): written atomically.
``OutputFile``     the type of every option naming a file a command writes (``-o``, ``--rest``,
                   ``--pdf``, ``--plot`` ...): before the command runs, each is checked against
                   the study's own files, the other outputs and the inputs
                   (:func:`goldboard.cli._output.guard_outputs`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import click

#: the one documented meaning of an omitted --round for commands that analyse one round
ROUND_DEFAULT_HELP = "the latest pulled round"
#: what an omitted --round means for commands that work on the ratings in force
ROUND_IN_FORCE_HELP = "per item, the latest round every rater rated"


class OutputFile(click.Path):
    """A file the command writes (never a folder); see :func:`goldboard.cli._output.guard_outputs`."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)


def study_option(required: bool = True, help: str = "Study workspace.") -> Callable:
    return click.option("--study", "study_dir", required=required, type=click.Path(file_okay=False), help=help)


def round_option(in_force: bool = False, what: str = "Round") -> Callable:
    default = ROUND_IN_FORCE_HELP if in_force else ROUND_DEFAULT_HELP
    return click.option("--round", "round_", type=int, default=None, help=f"{what} (default: {default}).")


def format_option(choices: Sequence[str], default: str | None, help: str | None = None) -> Callable:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=default,
        show_default=default is not None,
        help=help,
    )


def output_option(required: bool = False, help: str = "Write to FILE (atomically) instead of stdout.") -> Callable:
    return click.option("-o", "--output", required=required, type=OutputFile(), help=help)
