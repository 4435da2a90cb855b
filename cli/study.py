"""`goldboard study ...`: create and inspect a study workspace."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from goldboard.annotate import server as srv
from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.study_options import check_free_text, shown_url
from goldboard.text import did_you_mean
from goldboard.workflows.calibration import recorded_looks
from goldboard.workflows.methods import set_study_facts
from goldboard.workflows.study_edit import add_rater


@click.group("study")
def study_group() -> None:
    """Create and inspect a study workspace (schema, raters, server, rounds)."""


@study_group.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--schema",
    "schema",
    required=True,
    help="Built-in schema name (mtb, mtb_unsafe, medfail, radsafe) or a schema file (.toml/.json).",
)
@click.option("--raters", required=True, help="Comma-separated rater names, e.g. onc_a,onc_b.")
@click.option("--url", default="", help="Label Studio URL (default: the embedded server).")
@click.option("--name", default="", help="Study name (default: the folder name).")
@click.option(
    "--data-dir",
    default="",
    type=click.Path(file_okay=False),
    help="Embedded server data dir, when not the default (~/.goldboard/server; $GOLDBOARD_SERVER_DIR when set, "
    "recorded).",
)
def init_cmd(directory: str, schema: str, raters: str, url: str, name: str, data_dir: str) -> None:
    """Create a study workspace in DIRECTORY.

    \b
    Without --url the study uses the embedded server (`goldboard server start`).
    With --url, the API token comes from $LABEL_STUDIO_API_KEY or from
    ~/.config/goldboard/credentials.toml (["URL"] token = "..."); it is never
    stored in the workspace.

    DIRECTORY inside another study's own folders (rounds/, gold/, judges/, a
    hidden folder) is refused; a folder directly in a study's folder is fine.
    """
    from_env = not data_dir and not url and bool(os.environ.get("GOLDBOARD_SERVER_DIR"))
    if from_env:
        data_dir = str(srv.default_data_dir())  # recorded: a new shell without the variable finds the server
    st = Study.init(
        directory,
        schema=schema,
        raters=raters.split(","),
        url=url,
        name=name,
        data_dir=str(Path(data_dir).expanduser().resolve()) if data_dir else "",
    )
    if from_env:  # said once it is true (a refused init records nothing)
        click.echo(f"Embedded server data dir {data_dir} (from GOLDBOARD_SERVER_DIR) recorded in study.toml", err=True)
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
    click.echo(
        f"server:  {shown_url(st.url) or '(embedded' + (' ' + st.data_dir if st.data_dir else ' default') + ')'}"
    )
    if shown_url(st.url) != st.url:
        click.echo(
            f"Warning: {st.path / 'study.toml'}: the server URL holds a user name or password; remove it with "
            f"`goldboard study set {st.path} --url {shown_url(st.url).replace('...@', '')}`",
            err=True,
        )
    for r in st.rounds:
        projects = ", ".join(f"{k}={v}" for k, v in r.projects.items())
        extra = ""
        if r.calibration:
            extra += ", calibration"
        if r.guideline_version:
            extra += f", guideline {r.guideline_version}"
        kind = {"case": ", case-level", "output": ", case x model output"}.get(r.item_kind, "")
        click.echo(f"round {r.number}: {r.mode}{kind}{extra}, {r.units} units, projects: {projects or '(none)'}")
        for name, t in r.tables.items():
            click.echo(f"  table {name}: {t.get('rows', '?')} rows, sha256 {str(t.get('sha256', ''))[:12]}…")
        if r.design:
            d = r.design
            what = (
                f"overlap {float(d.get('share', 0)):.0%} ({d.get('double_rated')} double-rated)"
                if d.get("kind") == "overlap"
                else f"{d.get('per_item')} raters per item"
            )
            click.echo(
                f"  design: {what}, seed {d.get('seed')}" + (f", by {d['stratify_by']}" if d.get("stratify_by") else "")
            )


@study_group.command("set")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--url", default=None, help="Label Studio URL ('' for the embedded server).")
@click.option(
    "--data-dir",
    default=None,
    type=click.Path(file_okay=False),
    help="Embedded server data dir ('' for the default ~/.goldboard/server).",
)
@click.option("--name", default=None, help="Study name.")
@click.option(
    "--rater-info",
    "rater_info",
    multiple=True,
    help="RATER=TEXT: the rater's qualifications and training, free text for the report's methods "
    "(e.g. 'onc_a=board-certified oncologist, 8 years; 1 h training on guideline v1.0'); repeatable; "
    "RATER= clears it.",
)
@click.option("--case-source", default=None, help="Where the cases came from, free text for the report's methods.")
def set_cmd(
    directory: str,
    url: str | None,
    data_dir: str | None,
    name: str | None,
    rater_info: tuple[str, ...],
    case_source: str | None,
) -> None:
    """Change a study's server URL, embedded data dir or name (no need to recreate it), or record
    facts the report's methods cite (rater qualifications and training, the case source; shown
    as "not recorded" until set).

    The rounds keep their Label Studio project ids: a new --url must reach the same
    server (e.g. a new address); for another server, push to a new round.
    """
    st = Study.open(directory)
    if url is None and data_dir is None and name is None and not rater_info and case_source is None:
        raise click.UsageError("give --url, --data-dir, --name, --rater-info and/or --case-source")
    info = {}
    for pair in rater_info:
        rater, eq, text = pair.partition("=")
        if not eq or not rater.strip():
            raise GoldboardError(f"--rater-info {pair!r}: write RATER=TEXT, e.g. onc_a='oncologist, 8 years'")
        check_free_text(re.sub(r"[\t\r\n]", " ", text), f"--rater-info {rater.strip()}=...")
        info[rater.strip()] = text
    if case_source is not None:
        check_free_text(re.sub(r"[\t\r\n]", " ", case_source), "--case-source")  # line breaks: one space
    changes = st.set(
        url=url,
        data_dir=(str(Path(data_dir).expanduser().resolve()) if data_dir else "") if data_dir is not None else None,
        name=name,
    )
    changes += set_study_facts(st, info, case_source)
    if not changes:
        click.echo(f"{st.path}: nothing changed")
        return
    for c in changes:
        click.echo(f"{st.path}: {c}")
    if (url is not None or data_dir is not None) and any(r.projects for r in st.rounds):
        click.echo(
            "Note: the rounds' Label Studio project ids are kept; they must exist on the server the study now "
            "points to (push to a new round otherwise).",
            err=True,
        )


@study_group.command("add-rater")
@click.argument("directory", type=click.Path(file_okay=False))
@click.argument("name")
@click.option("--no-account", is_flag=True, help="Embedded server: do not create the rater's Label Studio account now.")
def add_rater_cmd(directory: str, name: str, no_account: bool) -> None:
    """Add rater NAME to a study (with an embedded-server account).

    The next push creates the new rater's project in the round; earlier rounds'
    statistics are unchanged (the new rater has no ratings there).
    """
    st = Study.open(directory)
    res = add_rater(st, name, create_account=not no_account)
    click.echo(res)


@study_group.command("round")
@click.argument("directory", type=click.Path(file_okay=False))
@click.argument("round_number", metavar="NUMBER", type=int)
@click.option("--calibration/--main", default=None, help="Mark the round as a calibration round (or a main round).")
@click.option("--guideline-version", default=None, help="Guideline (codebook) version the raters used.")
def round_cmd(directory: str, round_number: int, calibration: bool | None, guideline_version: str | None) -> None:
    """Record what round NUMBER was: calibration or main, and the guideline version used
    (for rounds pulled from files, or pushed before the guideline was versioned)."""
    st = Study.open(directory)
    if calibration is None and guideline_version is None:
        raise GoldboardError("give --calibration/--main and/or --guideline-version")
    r = st.mark_round(round_number, calibration=calibration, guideline_version=guideline_version)
    click.echo(
        f"round {r.number}: {'calibration' if r.calibration else 'main'} round"
        + (f", guideline {r.guideline_version}" if r.guideline_version else "")
        + (f" (entry put back in study.toml for the ratings {st.round_dir(r.number)} holds)" if r.restored else "")
    )
    taken = recorded_looks(st)
    if calibration is False and r.number in taken:
        click.echo(
            f"Warning: calibration look {taken.index(r.number) + 1} was taken on round {r.number}; it stays counted "
            "by `goldboard calibrate` and the report (the false-stop rate counts every look taken)",
            err=True,
        )


#: ``study round DIR NUMBER``: the round is an argument (see goldboard.cli.flag_for)
round_cmd.param_flags = {"round_number": "NUMBER"}

commands = [study_group]
