"""`goldboard gold ...`: versioned gold releases."""

from __future__ import annotations

import json

import click

from goldboard.adjudicate.gold import decision_round_lines
from goldboard.adjudicate.rules import RuleErrors
from goldboard.cli._options import format_option, round_option, study_option
from goldboard.cli._output import echo_data
from goldboard.cli.flag import clipped
from goldboard.errors import GoldboardError
from goldboard.exports.gold import diff_releases, list_releases, provenance_text, read_manifest, release_problem
from goldboard.fileio import csv_text
from goldboard.study import Study
from goldboard.study_checks import units_gaps
from goldboard.text import one_line
from goldboard.workflows import export_gold
from goldboard.workflows.adjudication import missing_rating_line


@click.group("gold")
def gold_group() -> None:
    """Release gold labels (gold/vN, never overwritten) and compare releases."""


@gold_group.command("export")
@study_option()
@format_option(["csv", "jsonl", "json", "xlsx"], "csv")
@click.option("--force", is_flag=True, help="Cut a new release even when gold is unchanged since the last one.")
@round_option(in_force=True, what="Resolve from this round only")
@click.option(
    "--allow-edited-ratings",
    is_flag=True,
    help="Release gold although a round's ratings.csv changed since its pull (edited by hand); "
    "the manifest lists the edited files (sources.edited_ratings).",
)
@click.option(
    "--allow-missing-releases",
    is_flag=True,
    help="Release gold although a release a later one names as its previous is gone from gold/ (deleted "
    "by hand); the manifest lists the missing releases (missing_releases).",
)
@click.option(
    "--only-study-raters",
    is_flag=True,
    help="Release gold although a round holds ratings by a name study.toml does not list as a rater "
    "(removed or renamed by hand): their ratings are left out, and the manifest lists them "
    "(sources.left_out_raters).",
)
def export_cmd(
    study_dir: str,
    fmt: str,
    force: bool,
    round_number: int | None,
    allow_edited_ratings: bool,
    allow_missing_releases: bool,
    only_study_raters: bool,
) -> None:
    """Resolve gold (decisions > unanimous > unresolved) and write release gold/vN.

    \b
    Rounds: by default each item uses the latest round in which every study
    rater rated it. A later round that only some raters have rated so far is
    not used; those items are listed in a warning and in the manifest
    (rounds.incomplete_later_rounds). Each gold row says which round it
    came from (column round). --round N uses round N only. A decision made
    on an earlier round than the item's ratings now come from is listed in
    a warning: it stays in force unless the later round's raters all gave
    another value, which is then gold (method unanimous).

    Schema cross-field rules (e.g. mtb: missing_info only with Insufficient
    Information or Partially Supported) are checked: a gold item that breaks one
    is listed and nothing is written.

    If nothing changed since the latest release, no release is written (exit 0);
    use --force to cut one anyway, e.g. in another format.

    Nothing is written while a folder under gold/ reads as a release but is not
    one (v2 with an invisible character, V2), or while a release a later one
    names as its previous is gone (deleted by hand; --allow-missing-releases
    releases anyway, and the manifest lists the gap).
    """

    st = Study.open(study_dir)
    try:
        rel = export_gold(
            st,
            fmt,
            force=force,
            round_number=round_number,
            allow_edited_ratings=allow_edited_ratings,
            allow_missing_releases=allow_missing_releases,
            only_study_raters=only_study_raters,
        )
    except RuleErrors as exc:
        for line in exc.errors:
            click.echo(one_line(line), err=True)
        raise GoldboardError(str(exc)) from None
    for e in (rel.manifest.get("sources") or {}).get("edited_ratings") or [] if rel.created else []:
        why = "cannot be checked against its pull (pull.json missing or damaged)" if e.get("unchecked") else ""
        click.echo(
            f"Warning: {e['path']} {why or 'changed since its pull (edited by hand)'}; released as asked, "
            "the manifest says so",
            err=True,
        )
    for name in rel.manifest.get("missing_releases") or [] if rel.created else []:
        click.echo(
            f"Warning: release {name} is missing from {st.gold_dir}; released as asked, the manifest says so",
            err=True,
        )
    for e in (rel.manifest.get("sources") or {}).get("left_out_raters") or [] if rel.created else []:
        click.echo(
            f"Warning: round {e['round']}: {e['ratings']} ratings by {one_line(e['rater'])!r}, not a rater of the "
            "study, left out of this release as asked (--only-study-raters); the manifest says so",
            err=True,
        )
    for line in units_gaps(st) if rel.created else []:  # a rated item without its unit (units.jsonl)
        click.echo(f"Warning: {one_line(line)}", err=True)
    for name in rel.cleaned:
        click.echo(f"Note: removed {st.gold_dir / name}, an unfinished release folder left by an interrupted export")
    if rel.gold is not None:
        for line in rel.gold.attrs["round_selection"].warning_lines():
            click.echo(f"Warning: {one_line(line)}" if not line.startswith("  ") else one_line(line), err=True)
        missing = missing_rating_line(st, (rel.manifest.get("rounds") or {}).get("unresolved_missing_rating") or {})
        if missing:
            click.echo(one_line(missing), err=True)
        attrs = rel.gold.attrs
        for line in decision_round_lines(attrs["decisions_on_earlier_rounds"], attrs["decisions_superseded"]):
            click.echo(one_line(line), err=True)
    c = rel.manifest["counts"]["all"]
    summary = (
        f"{c['unanimous']} unanimous, {c['adjudicated']} adjudicated, "
        + (f"{c['single']} single (one rater by design), " if c.get("single") else "")
        + f"{c['unresolved']} unresolved"
    )
    short = (rel.manifest.get("rounds") or {}).get("unresolved_missing_rating") or {}
    if short:
        summary += f", {short['rows']} of them only for a missing rating: see the warning"
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
    """Show what changed between two releases (e.g. v1 v2): gold values, and beside them
    the provenance -- method, round, adjudicator, reason, independence, decision.

    change: added | removed | value | method | provenance (same value and method,
    other adjudicator, reason or round) | ratings (only the raters' values under
    the gold value changed: a rating edited after its decision). The csv and json
    formats give every old_/new_ pair.
    """

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
        + (f" ({int((diff['change'] == 'provenance').sum())} provenance only)" if len(diff) else "")
    )
    if len(diff):
        head = ["item", "field", "change", "old", "new", "old method", "new method", "provenance (old -> new)"]
        rows = []
        for rec in diff.to_dict("records"):
            cells = [rec["item_id"], rec["field"], rec["change"], rec["old_value"], rec["new_value"]]
            cells += [rec["old_method"], rec["new_method"]]
            rows.append([clipped(one_line(x), 30) for x in cells] + [one_line(provenance_text(rec))])
        widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(head)]
        click.echo("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        for r in rows:
            click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


@gold_group.command("list")
@study_option()
def list_cmd(study_dir: str) -> None:
    """List the study's gold releases (each verified against its manifest: a changed
    gold file is named in a warning, and every command that reads it refuses it)."""

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
        problem = release_problem(p, m)
        if problem:
            click.echo(f"Warning: {one_line(problem)}", err=True)


commands = [gold_group]
