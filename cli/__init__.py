"""The ``goldboard`` command: a thin click layer over importable functions.

Each stage lives in its own module under ``goldboard.cli`` and exposes a list
``commands``; this module gathers them into one group and turns every
user-facing error into a one-line ``Error: ...`` with a non-zero exit.
"""

from __future__ import annotations

import importlib
import sys

import click

from goldboard import __version__
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import SchemaError, ValueNotInSchema

#: stage modules, in the order of a study
COMMAND_MODULES = [
    "schema",
    "cases",
    "server",
    "study",
    "push",
    "pull",
    "status",
    "agree",
    "flag",
    "adjudicate",
    "gold",
    "score",
    "report",
    "demo",
]


class GoldboardGroup(click.Group):
    """A click group that prints user errors as one line instead of a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except GoldboardError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except (SchemaError, ValueNotInSchema) as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)

    def list_commands(self, ctx):  # keep the study order in --help
        return list(self.commands)


@click.group(cls=GoldboardGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="goldboard")
def main() -> None:
    """goldboard: clinician label studies for medical-AI safety benchmarks.

    \b
    A study goes: schema -> cases -> push -> (raters annotate in Label Studio)
    -> pull -> agree -> flag -> adjudicate -> gold export -> report -> score.
    Run `goldboard demo` to see the whole loop on synthetic cases.
    """


for _name in COMMAND_MODULES:
    try:
        _mod = importlib.import_module(f"goldboard.cli.{_name}")
    except ModuleNotFoundError as _exc:  # a stage not built yet
        if _exc.name != f"goldboard.cli.{_name}":
            raise
        continue
    for _cmd in _mod.commands:
        main.add_command(_cmd)
