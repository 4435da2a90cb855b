"""Shared output step of the CLI commands: text to stdout or to a file (atomically)."""

from __future__ import annotations

from collections.abc import Iterable

import click

from goldboard.fileio import write_text_atomic
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
