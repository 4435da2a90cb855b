"""The ``goldboard`` command: a thin click layer over importable functions.

Each stage lives in its own module under ``goldboard.cli`` and exposes a list
``commands``; this module gathers them into one group and turns every
user-facing error into a one-line ``Error: ...`` with a non-zero exit.

A stage module is imported only when its command runs (``goldboard agree``
imports ``goldboard.cli.agree``, named after its command, and nothing else of
the CLI): ``goldboard --help`` reads the one-line help of each command from the
module's source (its ``commands`` list and their docstrings) without importing
it, so ``--help``,
``server status`` or ``schema list`` never load pandas, scipy, matplotlib,
scikit-learn, statsmodels or the Label Studio SDK.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import warnings
from pathlib import Path

import click

from goldboard import __version__
from goldboard.errors import GoldboardError, GoldboardWarning
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
    "judge",
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


#: library parameter -> the flag that carries it in every command that has that flag (a
#: command's own ``param_flags`` come first)
SHARED_PARAM_FLAGS = {
    "round_number": "--round",
    "study": "--study",
    "study_dir": "--study",
    "rater_map": "--rater",
    "data_dir": "--data-dir",
    "schema": "--schema",
}


def _click_layout(message: str) -> str:
    """Click's missing-choice message lays its choices out as ``Choose from:\n\tmtb,\n\t...``:
    one line, ``Choose from: mtb, mtb_unsafe, ...`` (the choices are the command's, not data;
    any other line break still shows escaped)."""
    head, sep, tail = message.partition("Choose from:\n\t")
    return head + "Choose from: " + tail.replace(",\n\t", ", ") if sep else message


def flag_for(cmd: click.Command, param: str) -> str | None:
    """The flag of ``cmd`` that carries library parameter ``param``: the command's own
    ``param_flags`` mapping first (e.g. ``score``: ``severity_field`` -> ``--field``),
    else the option of that name (its long form), else :data:`SHARED_PARAM_FLAGS` when
    ``cmd`` has that flag."""
    mapped = getattr(cmd, "param_flags", {}).get(param)
    if mapped:
        return mapped
    options = [p for p in cmd.params if isinstance(p, click.Option)]
    for p in options:
        if p.name == param:
            return max(p.opts, key=len)
    shared = SHARED_PARAM_FLAGS.get(param)
    if shared and any(shared in p.opts for p in options):
        return shared
    return None


def name_flags(cmd: click.Command) -> None:
    """Wrap ``cmd``'s callback (and its subcommands') so a :class:`GoldboardError` about a
    parameter names the flag the user typed."""
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            name_flags(sub)
        return
    callback = cmd.callback
    if callback is None or getattr(callback, "_names_flags", False):
        return
    _refuse_repeated_options(cmd)

    @functools.wraps(callback)
    def wrapped(*args, **kwargs):
        from goldboard.cli._output import guard_outputs

        try:
            guard_outputs(cmd, kwargs)
            return callback(*args, **kwargs)
        except GoldboardError as exc:
            if exc.param and exc.flag is None:
                exc.flag = flag_for(cmd, exc.param)
            for p in getattr(exc, "params", ()):  # an error naming several parameters (cases.problems.ParamError)
                exc.flags.setdefault(p, flag_for(cmd, p) or p)
            raise

    wrapped._names_flags = True
    cmd.callback = wrapped


def repeated_option(cmd: click.Command, ctx: click.Context, args: list[str]) -> click.Option | None:
    """The first option of ``cmd`` that takes one value (not ``multiple``, not a count) and
    appears more than once in ``args`` (``--round 1 --round 2``, ``-o a --output b``,
    ``--seed=1 --seed 2``): click would silently keep the last.  Read with click's own parser,
    so every spelling counts; args click cannot parse are left to click's own error."""
    try:
        _, _, order = cmd.make_parser(ctx).parse_args(args=list(args))
    except click.UsageError:
        return None
    seen: set[str] = set()
    for param in order:
        if not isinstance(param, click.Option) or param.multiple or param.count or param.is_eager:
            continue
        if param.name in seen:
            return param
        seen.add(param.name)
    return None


def _refuse_repeated_options(cmd: click.Command) -> None:
    """Before ``cmd`` parses its arguments, refuse an option that takes one value given twice
    (a usage error naming it) instead of keeping the last."""
    parse_args = cmd.parse_args

    def checked(ctx: click.Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            param = repeated_option(cmd, ctx, args)
            if param is not None:
                spellings = "/".join(p for p in param.opts + param.secondary_opts)
                raise click.UsageError(
                    f"{spellings} given more than once: it takes one value and only the last would count; give it once",
                    ctx=ctx,
                )
        return parse_args(ctx, args)

    cmd.parse_args = checked


def _is_case_file_error(exc: BaseException) -> bool:
    """``exc`` is a :class:`goldboard.cases.problems.CaseFileError` (not imported here: the
    ``goldboard.cases`` package loads pandas, and ``--help`` must not; a raised one is loaded)."""
    mod = sys.modules.get("goldboard.cases.problems")
    return mod is not None and isinstance(exc, mod.CaseFileError)


class GoldboardGroup(click.Group):
    """A click group that prints user errors as one line instead of a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("once", GoldboardWarning)
                warnings.showwarning = _show_warning
                return super().invoke(ctx)
        except GoldboardError as exc:
            if _is_case_file_error(exc):  # a list of problems: the Error line, then one line per problem
                head, *problems = str(exc).split("\n")
                click.echo(f"Error: {one_line(head)}", err=True)
                for p in problems:
                    click.echo(one_line(p), err=True)
                sys.exit(exc.exit_code)
            click.echo(f"Error: {one_line(exc)}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.NoArgsIsHelpError:
            raise
        except click.UsageError as exc:  # one line too (click would add two lines of usage)
            where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
            click.echo(f"Error: {one_line(_click_layout(exc.format_message()))} (see `{where} --help`)", err=True)
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


def _module_commands(module: str) -> list[tuple[str, str]]:
    """``(command name, help)`` of the commands a stage module lists in ``commands``, read from its
    source without importing it (a click decorator's first string argument names the command;
    the function's docstring is its help)."""
    import ast  # only for --help and an unknown command name

    spec = importlib.util.find_spec(f"goldboard.cli.{module}")
    if spec is None or not spec.origin:
        return []
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    listed: list[str] = []
    for n in tree.body:
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "commands" for t in n.targets):
            if isinstance(n.value, (ast.List, ast.Tuple)):
                listed = [e.id for e in n.value.elts if isinstance(e, ast.Name)]
    out = []
    for fname in listed:
        fn = funcs.get(fname)
        if fn is None:
            raise LookupError(fname)
        name = fname.replace("_", "-")
        for dec in fn.decorator_list:
            if (
                isinstance(dec, ast.Call)
                and isinstance(dec.func, ast.Attribute)
                and dec.func.attr in ("command", "group")
                and dec.args
                and isinstance(dec.args[0], ast.Constant)
            ):
                name = str(dec.args[0].value)
        out.append((name, ast.get_docstring(fn) or ""))
    return out


class LazyGroup(GoldboardGroup):
    """Commands are found by name and imported on first use; ``--help`` lists them from source."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._listing: dict[str, tuple[str, str]] | None = None

    @property
    def _lazy(self) -> dict[str, tuple[str, str]]:
        """command -> (module, help), read from every stage module's source on first use (--help,
        an unknown name): parsing them all costs more than running a small command."""
        if self._listing is None:
            self._listing = {}
            for module in COMMAND_MODULES:
                try:
                    found = _module_commands(module)
                except (SyntaxError, LookupError, OSError, UnicodeDecodeError):  # unusual source: import it
                    found = [(c.name, c.help or "") for c in self._import(module)]
                for name, help_ in found:
                    self._listing[name] = (module, help_)
        return self._listing

    @staticmethod
    def _import(module: str) -> list[click.Command]:
        return list(importlib.import_module(f"goldboard.cli.{module}").commands)

    def list_commands(self, ctx):  # keep the study order in --help
        return list(self._lazy) + [c for c in self.commands if c not in self._lazy]

    def get_command(self, ctx, cmd_name):
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            self._add_module(cmd_name)  # the usual case: the stage module is named after its command
        if cmd_name not in self.commands and cmd_name in self._lazy:
            self._add_module(self._lazy[cmd_name][0])
        return self.commands.get(cmd_name)

    def _add_module(self, module: str) -> None:
        for cmd in self._import(module):
            if cmd.name not in self.commands:
                name_flags(cmd)
                self.add_command(cmd)

    def format_commands(self, ctx, formatter) -> None:
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            if name in self.commands:
                rows.append((name, self.commands[name].get_short_help_str(limit)))
            else:
                rows.append((name, click.Command(name, help=self._lazy[name][1]).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="goldboard")
def main() -> None:
    """goldboard: clinician label studies for medical-AI safety benchmarks.

    \b
    A study goes: schema -> cases -> plan -> push -> (raters annotate in Label Studio)
    -> pull -> calibrate -> agree -> flag -> adjudicate -> gold export -> report -> score.
    Run `goldboard demo` to see the whole loop on synthetic cases.
    """
