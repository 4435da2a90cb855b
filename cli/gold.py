"""`goldboard gold ...`: versioned gold releases."""

from __future__ import annotations

import json

import click

from goldboard.cli._options import format_option, study_option
from goldboard.cli._output import echo_data
from goldboard.cli.flag import _clip
from goldboard.exports.gold import diff_releases, list_releases, read_manifest
from goldboard.fileio import csv_text
from goldboard.study import Study
from goldboard.text import one_line
from goldboard.workflows import export_gold


@click.group("gold")
def gold_group() -> None:
    """Release gold labels (gold/vN, never overwritten) and compare releases."""


@gold_group.command("export")
@study_option()
@format_option(["csv", "jsonl", "json", "xlsx"], "csv")
@click.option("--force", is_flag=True, help="Cut a new release even when gold is unchanged since the last one.")
def export_cmd(study_dir: str, fmt: str, force: bool) -> None:
    """Resolve gold (decisions > unanimous > unresolved) and write release gold/vN.

    If nothing changed since the latest release, no release is written (exit 0);
    use --force to cut one anyway, e.g. in another format.
    """

    st = Study.open(study_dir)
    rel = export_gold(st, fmt, force=force)
    for name in rel.cleaned:
        click.echo(f"Note: removed {st.gold_dir / name}, an unfinished release folder left by an interrupted export")
    c = rel.manifest["counts"]["all"]
    summary = (
        f"{c['unanimous']} unanimous, {c['adjudicated']} adjudicated, "
        + (f"{c['single']} single (one rater by design), " if c.get("single") else "")
        + f"{c['unresolved']} unresolved"
    )
    if not rel.created:
        click.echo(
            f"Gold unchanged since {rel.version} ({summary}); nothing written. Use --force to cut a new release anyway."
        )
        return
    click.echo(f"Wrote gold release {rel.version}: {rel.file} ({rel.manifest['rows']} rows: {summary})")


@gold_group.command("diff")
@click.argument("old")
@click.argument("new")
@study_option()
@format_option(["table", "csv", "json"], "table")
def diff_cmd(old: str, new: str, study_dir: str, fmt: str) -> None:
    """Show gold values and methods that changed between two releases (e.g. v1 v2)."""

    st = Study.open(study_dir)
    diff, ma, mb = diff_releases(st.gold_dir, old, new)
    if fmt == "json":
        click.echo(
            json.dumps(
                {"old": ma["version"], "new": mb["version"], "changes": diff.to_dict(orient="records")},
                indent=2,
                ensure_ascii=False,
            )
        )
        return
    if fmt == "csv":
        echo_data(csv_text(diff))
        return
    click.echo(
        f"{ma['version']} ({ma.get('created_at', '')}) -> {mb['version']} ({mb.get('created_at', '')}): "
        f"{len(diff)} changed item x field rows"
    )
    if len(diff):
        head = ["item", "field", "change", "old", "new", "old method", "new method"]
        rows = [
            [_clip(one_line(x), 30) for x in r]
            for r in diff[
                ["item_id", "field", "change", "old_value", "new_value", "old_method", "new_method"]
            ].itertuples(index=False)
        ]
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
        click.echo("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        for r in rows:
            click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


@gold_group.command("list")
@study_option()
def list_cmd(study_dir: str) -> None:
    """List the study's gold releases."""

    st = Study.open(study_dir)
    rels = list_releases(st.gold_dir)
    if not rels:
        click.echo("No gold releases yet (run `goldboard gold export`).")
    for _, p in rels:
        m = read_manifest(p)
        c = m.get("counts", {}).get("all", {})
        click.echo(
            f"{p.name}  {m.get('created_at', '')}  {m.get('format', '')}  rows {m.get('rows', '')}: "
            f"{c.get('unanimous', 0)} unanimous, {c.get('adjudicated', 0)} adjudicated, "
            f"{c.get('unresolved', 0)} unresolved"
        )


commands = [gold_group]
