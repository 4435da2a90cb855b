"""The ``goldboard`` command: a thin click layer over importable functions.

Each stage lives in its own module under ``goldboard.cli`` and exposes a list
``commands``; this module gathers them into one group and turns every
user-facing error into a one-line ``Error: ...`` with a non-zero exit.
"""

from __future__ import annotations

import functools
import importlib
import os
import sys
import warnings

import click

from goldboard import __version__
from goldboard.cases.problems import CaseFileError
from goldboard.errors import GoldboardError, GoldboardWarning
from goldboard.label_configs.schema import SchemaError, ValueNotInSchema
from goldboard.text import one_line

#: stage modules, in the order of a study
COMMAND_MODULES = [
    "schema",
    "cases",
    "server",
    "study",
    "plan",
    "push",
    "pull",
    "status",
    "agree",
    "calibrate",
    "flag",
    "adjudicate",
    "gold",
    "score",
    "report",
    "demo",
]


_default_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A :class:`GoldboardWarning` is one ``Warning: ...`` line on stderr."""
    if issubclass(category, GoldboardWarning):
        click.echo(f"Warning: {one_line(message)}", err=True)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


def flag_for(cmd: click.Command, param: str) -> str | None:
    """The flag of ``cmd`` that carries library parameter ``param``: the command's own
    ``param_flags`` mapping first (e.g. ``score``: ``severity_field`` -> ``--field``),
    else the option of that name (its long form)."""
    mapped = getattr(cmd, "param_flags", {}).get(param)
    if mapped:
        return mapped
    for p in cmd.params:
        if isinstance(p, click.Option) and p.name == param:
            return max(p.opts, key=len)
    return None


def _name_flags(cmd: click.Command) -> None:
    """Wrap ``cmd``'s callback (and its subcommands') so a :class:`GoldboardError` about a
    parameter names the flag the user typed."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            _name_flags(sub)
        return
    callback = cmd.callback
    if callback is None or getattr(callback, "_names_flags", False):
        return

    @functools.wraps(callback)
    def wrapped(*args, **kwargs):
        try:
            return callback(*args, **kwargs)
        except GoldboardError as exc:
            if exc.param and exc.flag is None:
                exc.flag = flag_for(cmd, exc.param)
            raise

    wrapped._names_flags = True
    cmd.callback = wrapped


class GoldboardGroup(click.Group):
    """A click group that prints user errors as one line instead of a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("once", GoldboardWarning)
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except CaseFileError as exc:  # a list of problems: the Error line, then one line per problem
            head, *problems = str(exc).split("\n")
            click.echo(f"Error: {one_line(head)}", err=True)
            for p in problems:
                click.echo(one_line(p), err=True)
            sys.exit(exc.exit_code)
        except GoldboardError as exc:
            click.echo(f"Error: {one_line(exc)}", err=True)
            sys.exit(exc.exit_code)
        except (SchemaError, ValueNotInSchema) as exc:
            click.echo(f"Error: {one_line(exc)}", err=True)
            sys.exit(1)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:  # one line too (click would add two lines of usage)
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            click.echo(f"Error: {one_line(exc.format_message())} (see `{where} --help`)", err=True)
            sys.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # click's own control flow (--help, prompts) and messages
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            sys.exit(130)
        except OSError as exc:  # disk full, permission denied, a folder where a file should be
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"Error: {one_line(where)}{one_line(exc.strerror or exc)}", err=True)
            sys.exit(1)
        except Exception as exc:  # a bug: still one line for the user; the traceback on request
            if os.environ.get("GOLDBOARD_DEBUG"):
                raise
            click.echo(
                f"Error: internal error ({type(exc).__name__}: {one_line(str(exc))[:300]}); this is a goldboard "
                f"bug -- please report it with the output of the same command run with GOLDBOARD_DEBUG=1",
                err=True,
            )
            sys.exit(3)

    def list_commands(self, ctx):  # keep the study order in --help
        return list(self.commands)


@click.group(cls=GoldboardGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="goldboard")
def main() -> None:
    """goldboard: clinician label studies for medical-AI safety benchmarks.

    \b
    A study goes: schema -> cases -> plan -> push -> (raters annotate in Label Studio)
    -> pull -> calibrate -> agree -> flag -> adjudicate -> gold export -> report -> score.
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
        _name_flags(_cmd)
        main.add_command(_cmd)
