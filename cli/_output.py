"""Shared output step of the CLI commands: text to stdout or to a file (atomically)."""

from __future__ import annotations

from collections.abc import Iterable

import click

from goldboard.fileio import write_text_atomic


def emit(text: str, output: str | None, warnings: Iterable[str] = ()) -> None:
    """Print each warning on stderr, then ``text`` to stdout, or write it to ``output``
    atomically (saying so on stderr).  Stdout carries only the requested format."""
    for w in warnings:
        click.echo(f"Warning: {w}", err=True)
    if output:
        write_text_atomic(output, text)
        click.echo(f"Wrote {output}", err=True)
    else:
        click.echo(text, nl=False)
