"""`goldboard study ...`: create and inspect a study workspace."""

from __future__ import annotations

import click

from goldboard.annotate import server as srv
from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.text import did_you_mean


@click.group("study")
def study_group() -> None:
    """Create and inspect a study workspace (schema, raters, server, rounds)."""


@study_group.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--schema", "schema", required=True, help="Built-in schema name (mtb, medfail, radsafe) or a schema file."
)
@click.option("--raters", required=True, help="Comma-separated rater names, e.g. onc_a,onc_b.")
@click.option("--url", default="", help="Label Studio URL (default: the embedded server).")
@click.option("--name", default="", help="Study name (default: the folder name).")
@click.option(
    "--data-dir",
    default="",
    type=click.Path(file_okay=False),
    help="Embedded server data dir, when not the default (~/.goldboard/server).",
)
def init_cmd(directory: str, schema: str, raters: str, url: str, name: str, data_dir: str) -> None:
    """Create a study workspace in DIRECTORY.

    \b
    Without --url the study uses the embedded server (`goldboard server start`).
    With --url, the API token comes from $LABEL_STUDIO_API_KEY or from
    ~/.config/goldboard/credentials.toml (["URL"] token = "..."); it is never
    stored in the workspace.
    """
    from pathlib import Path

    st = Study.init(
        directory,
        schema=schema,
        raters=raters.split(","),
        url=url,
        name=name,
        data_dir=str(Path(data_dir).expanduser().resolve()) if data_dir else "",
    )
    click.echo(
        f"Created study {st.name!r} in {st.path} (schema {st.schema.name} v{st.schema.version}, "
        f"raters: {', '.join(st.raters)})"
    )
    if not st.url:
        _warn_missing_accounts(st)


def _warn_missing_accounts(st: Study) -> None:
    """Embedded server with accounts already: say which rater names have none (a typo?)."""
    path = srv.credentials_path(st.data_dir or None)
    if not path.exists():
        return
    try:
        have = sorted(srv.read_credentials(st.data_dir or None).users)
    except GoldboardError:
        return
    for r in st.raters:
        if r not in have:
            click.echo(
                f"warning: rater {r!r} has no account on the embedded Label Studio{did_you_mean(r, have)}; "
                f"push refuses until the name in {st.path / 'study.toml'} is fixed or the account is made "
                f"with `goldboard server add-raters {r}`",
                err=True,
            )


@study_group.command("show")
@click.argument("directory", type=click.Path(file_okay=False))
def show_cmd(directory: str) -> None:
    """Show a study's schema, raters, server and rounds."""
    st = Study.open(directory)
    click.echo(f"study:   {st.name} ({st.path})")
    click.echo(f"schema:  {st.schema.name} v{st.schema.version} ({st.schema_ref})")
    click.echo(f"raters:  {', '.join(st.raters)}")
    click.echo(f"server:  {st.url or '(embedded' + (' ' + st.data_dir if st.data_dir else ' default') + ')'}")
    for r in st.rounds:
        projects = ", ".join(f"{k}={v}" for k, v in r.projects.items())
        kind = {"case": ", case-level", "output": ", case x model output"}.get(r.item_kind, "")
        click.echo(f"round {r.number}: {r.mode}{kind}, {r.units} units, projects: {projects or '(none)'}")


commands = [study_group]
