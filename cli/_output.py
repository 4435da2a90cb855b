"""Shared output step of the CLI commands: text to stdout or to a file (atomically)."""

from __future__ import annotations

import os
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


#: the file-name endings of each ``--format`` (and of ``report --pdf``): ``-o`` with another
#: format's ending is refused (:func:`refuse_format_mismatch`)
FORMAT_SUFFIXES = {
    "csv": (".csv",),
    "json": (".json",),
    "jsonl": (".jsonl", ".ndjson"),
    "markdown": (".md", ".markdown"),
    "html": (".html", ".htm"),
    "xlsx": (".xlsx",),
    "pdf": (".pdf",),
    "png": (".png",),
    "xml": (".xml",),
}


def refuse_format_mismatch(cmd: click.Command, kwargs: dict) -> None:
    """One rule for every command with ``--format`` and ``-o``: an output named with another
    format's ending (``agree --format csv -o out.json``, ``report -o r.pdf``) is refused, saying
    which option writes that format; a name with no known ending (``out.txt``) is the user's choice."""
    output, fmt = kwargs.get("output"), kwargs.get("fmt")
    if not output or not fmt or "fmt" not in {p.name for p in cmd.params}:
        return
    suffix = os.path.splitext(str(output))[1].lower()
    other = next((f for f, ends in FORMAT_SUFFIXES.items() if suffix in ends), None)
    if other is None or other == fmt:
        return
    choices = next((list(p.type.choices) for p in cmd.params if p.name == "fmt" and hasattr(p.type, "choices")), [])
    if other in choices:
        how = f"--format {other} writes it"
    elif other == "pdf" and any(p.name == "pdf" for p in cmd.params):
        how = "--pdf FILE prints the report to PDF"
    else:
        own = FORMAT_SUFFIXES.get(fmt)
        how = f"name the file {' or '.join(own)}" if own else "name the file for what it holds (e.g. .txt)"
    raise click.BadParameter(
        f"{str(output)!r} ends in {suffix} but -o writes {fmt} (--format {fmt}); {how}", param_hint="-o/--output"
    )


def refuse_output_named_for_another_format(cmd: click.Command, kwargs: dict) -> None:
    """The same rule for an output option without ``--format`` (``score -o s.xlsx`` wrote a text
    table into it): a command declares what each writes, ``cmd.output_formats = {param: (what,
    formats of FORMAT_SUFFIXES it writes, any_name)}``; a name ending in another format's ending
    is refused, and so is a name with no known ending unless ``any_name``.  ``score -o`` with
    ``--format`` is left to :func:`refuse_format_mismatch`."""
    for name, (what, formats, any_name) in getattr(cmd, "output_formats", {}).items():
        value = kwargs.get(name)
        if not value or (name == "output" and kwargs.get("fmt")):
            continue
        suffix = os.path.splitext(str(value))[1].lower()
        other = next((f for f, ends in FORMAT_SUFFIXES.items() if suffix in ends), None)
        if other in formats or (other is None and any_name):
            continue
        param = next(p for p in cmd.params if p.name == name)
        flag = "-o" if "-o" in param.opts else _flag(param)
        endings = [e for f in formats for e in FORMAT_SUFFIXES[f]] + (["e.g. .txt"] if any_name else [])
        names = " or ".join([", ".join(endings[:-1]), endings[-1]] if len(endings) > 1 else endings)
        raise click.BadParameter(
            f"{str(value)!r} ends in {suffix or '(no ending)'} but {flag} writes {what}; name the file {names}",
            param_hint="/".join(param.opts),
        )


def refuse_idle_options(cmd: click.Command, kwargs: dict) -> None:
    """An option given on the command line that has no effect in this run is an error, never
    silently ignored (``agree --seed 5`` without ``--bootstrap``; ``plan size --simulations``
    without ``--assurance``).  A command declares them as ``cmd.applies_only_with = {param:
    (what it needs, as the user types it, predicate over the parameters)}``."""
    needs = getattr(cmd, "applies_only_with", None)
    ctx = click.get_current_context(silent=True)
    if not needs or ctx is None:
        return
    for name, (companion, applies) in needs.items():
        source = ctx.get_parameter_source(name)
        if source in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP) or applies(kwargs):
            continue
        raise GoldboardError(f"applies only with {companion}: leave it out", param=name)


def guard_outputs(cmd: click.Command, kwargs: dict) -> None:
    """The one output guard, run before every command (:mod:`goldboard.cli`): each value of
    an :class:`OutputFile` option must not be a study's own file, another output of the
    command or one of its input files (:func:`goldboard.fileio.check_output_paths`); an
    output named for another format, and an option that does nothing here, are refused."""
    refuse_empty_paths(cmd, kwargs)
    refuse_empty_text(cmd, kwargs)
    refuse_idle_options(cmd, kwargs)
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
    refuse_format_mismatch(cmd, kwargs)  # after: a study's own file is named as such first
    refuse_output_named_for_another_format(cmd, kwargs)
