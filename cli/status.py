"""`goldboard status`: progress per rater and round, decisions open (reads only)."""

from __future__ import annotations

import json

import click

from goldboard.cli._options import format_option, study_option


@click.command("status")
@study_option()
@format_option(["table", "json"], "table", old={"text": "table"})
def status_cmd(study_dir: str, fmt: str) -> None:
    """Progress without pulling: per round and rater, tasks done / total and the last
    annotation (and when Label Studio last saw the rater); rounds pulled from a table:
    items rated per rater and when the table was pulled (no server needed). Then the
    adjudication: per field, disagreements decided / left unresolved / open, counted
    from decisions.jsonl whatever the source (review sheet or Label Studio), by whom.
    Reads the study (and Label Studio, for Label Studio rounds); writes nothing."""
    from goldboard.annotate.status import study_status
    from goldboard.study import Study

    st = study_status(Study.open(study_dir))
    click.echo(json.dumps(st.to_dict(), indent=1) if fmt == "json" else st.describe())


commands = [status_cmd]
