"""Options shared by several ``goldboard`` commands, declared once.

``study_option``   ``--study DIR`` (parameter ``study_dir``): the study workspace.
``round_option``   ``--round N`` (parameter ``round_number``).  Omitted, a command reads
                   :data:`ROUND_DEFAULT_HELP` -- the study's latest pulled round
                   (:meth:`goldboard.study.Study.latest_pulled_round`) for commands that
                   analyse one round (``agree``, ``report``); the ratings in force (per
                   item, the latest round every rater rated: :mod:`goldboard.cases.rounds`)
                   for commands that work on decisions and gold (``flag``, ``adjudicate
                   sheet|push``, ``gold export``), which say so in their help.
``format_option``  ``--format`` (parameter ``fmt``) with the command's choices.
``output_option``  ``-o/--output FILE`` (parameter ``output``): written atomically.
``outputs_output_option``  ``--outputs-output FILE``: also write the model outputs of the cases written.
``n_cases_option`` ``-n/--n-cases N``: how many cases (``--cases`` is always a cases FILE).
``deprecated_alias``  an old spelling of an option, kept hidden for one release: it works,
                   and says on stderr which spelling replaces it (``tests/test_cli_options.py``
                   fails on a second visible spelling of one meaning).
``OutputFile``     the type of every option naming a file a command writes (``-o``, ``--rest``,
                   ``--pdf``, ``--plot`` ...): before the command runs, each is checked against
                   the study's own files, the other outputs and the inputs
                   (:func:`goldboard.cli._output.guard_outputs`).
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

import click
from click.core import ParameterSource

from goldboard.text import BIDI_CONTROLS

#: the one documented meaning of an omitted --round for commands that analyse one round
ROUND_DEFAULT_HELP = "the latest pulled round"
#: what an omitted --round means for commands that work on the ratings in force
ROUND_IN_FORCE_HELP = "per item, the latest round every rater rated"


#: a random seed: what every generator goldboard seeds accepts (numpy's legacy RandomState
#: and scikit-learn take 0..2**32-1; a negative seed crashed ``plan sample --seed -1``)
SEED = click.IntRange(0, 2**32 - 1)
#: the most bootstrap resamples or simulations a command draws (README "Agreement"): percentile
#: CIs are stable from about 2,000; ``--bootstrap 99999999999`` asked for 36 TiB
MAX_RESAMPLES = 100_000
RESAMPLES = click.IntRange(0, MAX_RESAMPLES)


class OutputFile(click.Path):
    """A file the command writes (never a folder); see :func:`goldboard.cli._output.guard_outputs`.
    A path holding a control, line-break or bidi-control character (``-o $'units.jsonl\\n'``, a
    pasted escape sequence) or a part with a leading/trailing space (``'units.jsonl '``) is
    refused: it would write a file whose name looks like another's.  ``-`` is refused too (no
    command writes its file to stdout through ``-o -``; without ``-o`` a command prints)."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = os.fsdecode(value) if isinstance(value, (str, bytes, os.PathLike)) else str(value)
        bad = sorted(
            {f"U+{ord(ch):04X}" for ch in text if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in BIDI_CONTROLS}
        )
        if bad:
            shown = text.encode("unicode_escape").decode("ascii")
            self.fail(f"'{shown}': the file name contains control character(s) {', '.join(bad)}", param, ctx)
        if text == "-":
            self.fail("'-' is not standard output here: omit the option to print to stdout, or name a file", param, ctx)
        if any(part != part.strip() for part in text.split(os.sep) if part):
            self.fail(f"{text!r}: a leading or trailing space in the file name (a pasted name?)", param, ctx)
        return super().convert(value, param, ctx)


class SharedOption(click.Option):
    """An option declared here, once for every command (``tests/test_cli_options.py`` checks
    that every ``--study``, ``--round``, ``--format`` and ``-o/--output`` is one)."""


def study_option(required: bool = True, help: str = "Study workspace.", *, dest: str = "study_dir") -> Callable:
    return click.option(
        "--study", dest, cls=SharedOption, required=required, type=click.Path(file_okay=False), help=help
    )


def _round_from_one(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """``--round 0`` or ``--round -1`` names no round (rounds are numbered from 1): one line, before a
    command reads ``rounds/0/`` and advises pulling a round that cannot exist."""
    from goldboard.errors import GoldboardError

    for n in value if isinstance(value, tuple) else (value,):
        if n is not None and n < 1:
            raise GoldboardError(f"--round {n}: rounds are numbered from 1")
    return value


def round_option(
    in_force: bool = False,
    what: str = "Round",
    *,
    dest: str = "round_number",
    help: str | None = None,
    multiple: bool = False,
) -> Callable:
    """``--round N``; ``help`` replaces the sentence built from ``what`` and the default;
    ``multiple``: a set of rounds (repeat the option)."""
    default = ROUND_IN_FORCE_HELP if in_force else ROUND_DEFAULT_HELP
    return click.option(
        "--round",
        dest,
        cls=SharedOption,
        type=int,
        default=None,
        multiple=multiple,
        callback=_round_from_one,
        help=help or f"{what} (default: {default}).",
    )


class Choices(click.Choice):
    """A choice whose former spellings (``old``: spelling -> the choice now) still work, hidden
    from ``--help``, with the same deprecation note as :func:`deprecated_alias`."""

    def __init__(self, choices: Sequence[str], old: dict[str, str] | None = None) -> None:
        super().__init__(list(choices))
        self.old = dict(old or {})

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.old:
            flag = max(param.opts, key=len) if isinstance(param, click.Option) else "the value"
            click.echo(
                f"Note: {flag} {value} is deprecated (kept for one release); use {flag} {self.old[value]}.", err=True
            )
            value = self.old[value]
        return super().convert(value, param, ctx)


#: the ``--format`` vocabulary of a command that prints a result (``tests/test_cli_options.py``)
PRINT_FORMATS = ("table", "markdown", "csv", "json")


def format_option(
    choices: Sequence[str], default: str | None, help: str | None = None, old: dict[str, str] | None = None
) -> Callable:
    """``--format`` (parameter ``fmt``); ``old``: former spellings of a choice (``text`` -> ``table``)."""
    return click.option(
        "--format",
        "fmt",
        cls=SharedOption,
        type=Choices(choices, old),
        default=default,
        show_default=default is not None,
        help=help,
    )


class _AliasOption(click.Option):
    """A :func:`deprecated_alias`: given together with the option it is another spelling of
    (``--raters X --rater-cols Y``), the command is refused -- one of the two would silently win."""

    def __init__(self, *args: Any, new: str, dest: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.new_flag, self.dest = new, dest

    def handle_parse_result(self, ctx: click.Context, opts: Any, args: list[str]) -> Any:
        if opts.get(self.name) not in (None, ()) and opts.get(self.dest) not in (None, ()):
            raise click.UsageError(
                f"{self.opts[0]} and {self.new_flag} both given: {self.opts[0]} is the old spelling of "
                f"{self.new_flag}; give {self.new_flag} only",
                ctx=ctx,
            )
        return super().handle_parse_result(ctx, opts, args)


def deprecated_alias(old: str, new: str, dest: str, type: Any = None, multiple: bool = False) -> Callable:
    """``old`` (e.g. ``--out``), hidden, as another spelling of the option ``new`` whose
    parameter is ``dest``: its value goes to ``dest`` and stderr says
    ``Note: --out is deprecated (kept for one release); use -o/--output.``"""

    def use_new(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value in (None, ()) or ctx.get_parameter_source(param.name) != ParameterSource.COMMANDLINE:
            return value
        click.echo(f"Note: {old} is deprecated (kept for one release); use {new}.", err=True)
        ctx.params[dest] = value
        ctx.set_parameter_source(dest, ParameterSource.COMMANDLINE)  # the default of `new` does not overwrite it
        return value

    return click.option(
        old,
        f"deprecated_{dest}",
        cls=_AliasOption,
        new=new,
        dest=dest,
        hidden=True,
        expose_value=False,
        type=type,
        multiple=multiple,
        default=None,
        callback=use_new,
    )


def aliased_option(
    opts: Sequence[str], dest: str, old: Sequence[str] = (), *, required: bool = False, help: str = "", **kwargs: Any
) -> Callable:
    """``click.option(*opts, dest, ...)`` with the former spellings ``old`` as hidden
    :func:`deprecated_alias` es.  ``required`` is then checked after the aliases (click's own
    check would refuse before an alias could fill the value); the message is click's."""
    new = "/".join(opts)
    aliases = [deprecated_alias(o, new, dest, kwargs.get("type"), kwargs.get("multiple", False)) for o in old]
    if required and old:

        def required_here(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
            # an alias given on the command line is processed first and has filled ``dest``
            if value is None and ctx.params.get(dest) is None:
                raise click.MissingParameter(ctx=ctx, param=param)
            return value

        kwargs["callback"] = required_here
        help = f"{help}  [required]"
    cls = SharedOption if "-o" in opts else click.Option
    option = click.option(*opts, dest, cls=cls, required=required and not old, help=help, **kwargs)

    def apply(f: Callable) -> Callable:
        for alias in aliases:
            f = alias(f)
        return option(f)

    return apply


def output_option(
    required: bool = False,
    help: str = "Write to FILE (atomically) instead of stdout.",
    *,
    dest: str = "output",
    old: Sequence[str] = (),
) -> Callable:
    """``-o/--output FILE``; ``old``: former spellings (``--out``) kept as hidden aliases."""
    return aliased_option(["-o", "--output"], dest, old, required=required, help=help, type=OutputFile())


def outputs_output_option(help: str, *, dest: str = "outputs_output", old: Sequence[str] = ()) -> Callable:
    """``--outputs-output FILE``: the model outputs of the cases a command writes."""
    return aliased_option(["--outputs-output"], dest, old, help=help, type=OutputFile(), default=None)


def n_cases_option(help: str, *, dest: str = "n_cases", old: Sequence[str] = (), **kwargs: Any) -> Callable:
    """``-n/--n-cases N``: how many cases (``--cases`` names a cases file, never a count)."""
    return aliased_option(["-n", "--n-cases"], dest, old, help=help, **kwargs)
