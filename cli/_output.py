"""Shared output step of the CLI commands: text to stdout or to a file (atomically)."""

from __future__ import annotations

from collections.abc import Iterable

import click
from click.core import ParameterSource

from goldboard.cli._options import OutputFile
from goldboard.errors import GoldboardError
from goldboard.fileio import check_output_paths, write_text_atomic
from goldboard.text import one_line, terminal_text


def echo_data(text: str) -> None:
    """Write a data format (CSV, JSON, Markdown) to stdout exactly as rendered: click
    would otherwise strip ANSI escape sequences -- data, here -- when stdout is a pipe."""
    click.echo(text, nl=False, color=True)


def emit(text: str, output: str | None, warnings: Iterable[str] = (), *, terminal: bool = False) -> None:
    """Print each warning on stderr, then ``text`` to stdout, or write it to ``output``
    atomically (saying so on stderr).  Stdout carries only the requested format.

    ``terminal``: ``text`` is a table for people (not a data format): control and
    bidi-override characters coming from the data are removed (:func:`terminal_text`).
    Data formats are written exactly."""
    for w in warnings:
        click.echo(f"Warning: {one_line(w)}", err=True)
    if terminal:
        text = terminal_text(text)
    if output:
        write_text_atomic(output, text)
        click.echo(f"Wrote {output}", err=True)
    else:
        echo_data(text)


#: parameters that name a study folder (its own files are never an output)
STUDY_PARAMS = ("study_dir", "study", "directory")


def _flag(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


#: the one path option where ``''`` is a documented value: ``study set --data-dir ''`` (the default)
EMPTY_MEANS_DEFAULT = {("set", "data_dir")}


def refuse_empty_paths(cmd: click.Command, kwargs: dict) -> None:
    """A path option or argument given as ``""`` (``--study "$STUDY"`` with the variable unset)
    is a usage error: read as the current folder it would run on whatever study is there
    (except :data:`EMPTY_MEANS_DEFAULT`)."""
    ctx = click.get_current_context(silent=True)
    for param in cmd.params:
        value = kwargs.get(param.name)
        if value is None or not isinstance(param.type, click.Path):
            continue
        if (cmd.name, param.name) in EMPTY_MEANS_DEFAULT:
            continue
        if ctx is not None and ctx.get_parameter_source(param.name) is ParameterSource.DEFAULT:
            continue  # a command's own default ("" meaning: none)
        values = value if isinstance(value, (tuple, list)) else (value,)
        if any(str(v) == "" for v in values):
            raise click.UsageError(
                f"{_flag(param)} is empty (an unset shell variable?): give a file or folder name "
                f"(`.` for the current folder)"
            )


#: text options where ``''`` is a documented value: ``study set --url ''`` (the embedded server)
#: and ``study set --case-source ''`` (clears it)
EMPTY_TEXT_MEANS_SOMETHING = {("set", "url"), ("set", "case_source")}


def refuse_empty_text(cmd: click.Command, kwargs: dict) -> None:
    """A text option or argument given as ``""`` or blanks (``--field "$FIELD"`` with the variable
    unset) is an error naming the flag, never read as the option left out (except
    :data:`EMPTY_TEXT_MEANS_SOMETHING`); a repeated option holding one empty value too."""
    ctx = click.get_current_context(silent=True)
    for param in cmd.params:
        value = kwargs.get(param.name)
        if value is None or not isinstance(param.type, click.types.StringParamType):
            continue
        if (cmd.name, param.name) in EMPTY_TEXT_MEANS_SOMETHING:
            continue
        if ctx is not None and ctx.get_parameter_source(param.name) is ParameterSource.DEFAULT:
            continue  # a command's own default ("" meaning: none)
        values = value if isinstance(value, (tuple, list)) else (value,)
        empty = next((v for v in values if isinstance(v, str) and not v.strip()), None)
        if empty is not None:
            optional = isinstance(param, click.Option) and not param.required
            raise GoldboardError(
                f"{_flag(param)} {empty!r}: an empty value (an unset shell variable?); give one"
                + (", or leave the option out" if optional else "")
            )


def guard_outputs(cmd: click.Command, kwargs: dict) -> None:
    """The one output guard, run before every command (:mod:`goldboard.cli`): each value of
    an :class:`OutputFile` option must not be a study's own file, another output of the
    command or one of its input files (:func:`goldboard.fileio.check_output_paths`)."""
    refuse_empty_paths(cmd, kwargs)
    refuse_empty_text(cmd, kwargs)
    outputs, inputs, studies = [], [], []
    for param in cmd.params:
        value = kwargs.get(param.name)
        if value is None or not isinstance(param.type, click.Path):
            continue
        values = value if isinstance(value, (tuple, list)) else (value,)
        if isinstance(param.type, OutputFile):
            outputs += [(_flag(param), v) for v in values]
        elif not param.type.dir_okay:
            inputs += [(_flag(param), v) for v in values]
        elif param.name in STUDY_PARAMS:
            studies += list(values)
    check_output_paths(outputs, inputs, studies)
