"""`goldboard server start|status|stop`: the embedded Label Studio server."""

from __future__ import annotations

import click

from goldboard.annotate import server as srv
from goldboard.errors import GoldboardError

_data_dir = click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Server data dir (default: $GOLDBOARD_SERVER_DIR or ~/.goldboard/server).",
)


@click.group("server")
def server_group() -> None:
    """Run the embedded Label Studio server (127.0.0.1 only).

    \b
    Users: an admin plus one user per rater, with random passwords and API
    tokens kept in DATA_DIR/credentials.toml (mode 0600, never printed).
    Give each rater their own e-mail and password from that file.
    """


@server_group.command("start")
@click.option(
    "--port", type=int, default=srv.DEFAULT_PORT, show_default=True, help="Port on 127.0.0.1 (exactly this one)."
)
@_data_dir
@click.option(
    "--raters",
    default="",
    help="Comma-separated rater names to create accounts for, e.g. onc_a,onc_b (later: `server add-raters`).",
)
@click.option(
    "--timeout", type=float, default=srv.START_TIMEOUT, show_default=True, help="Seconds to wait for the server."
)
def start_cmd(port: int, data_dir: str | None, raters: str, timeout: float) -> None:
    """Start Label Studio in the background (first start: ~30 s to set up the database)."""
    click.echo("Starting Label Studio (the first start sets up the database, ~30 s)...", err=True)
    info = srv.start_server(data_dir, port=port, raters=[r for r in raters.split(",") if r.strip()], timeout=timeout)
    click.echo(info.describe())


@server_group.command("add-raters")
@click.argument("raters")
@_data_dir
def add_raters_cmd(raters: str, data_dir: str | None) -> None:
    """Create Label Studio accounts for RATERS (comma-separated), running server or not.

    
    The only commands that create accounts are this one and `server start --raters`;
    `push` never does (a misspelt rater name must not become a new account).
    Passwords and API tokens go to DATA_DIR/credentials.toml (mode 0600), never
    to the terminal.
    """
    names = [r.strip() for r in raters.split(",") if r.strip()]
    if not names:
        raise GoldboardError("RATERS: give at least one rater name, e.g. onc_c")
    before = set(srv.read_credentials(data_dir).users) if srv.credentials_path(data_dir).exists() else set()
    creds = srv.prepare_data_dir(data_dir, names)
    new = [r for r in names if r not in before]
    old = [r for r in names if r in before]
    if new:
        click.echo(f"Created Label Studio accounts: {', '.join(new)} (credentials in {creds.path})")
    if old:
        click.echo(f"Already had accounts: {', '.join(old)}")


@server_group.command("status")
@_data_dir
def status_cmd(data_dir: str | None) -> None:
    """Show whether the server runs, its URL, its users and the credentials file."""
    click.echo(srv.server_status(data_dir).describe())


@server_group.command("stop")
@_data_dir
def stop_cmd(data_dir: str | None) -> None:
    """Stop the server started for this data dir (only that process)."""
    if srv.stop_server(data_dir):
        click.echo("Stopped Label Studio.")
    else:
        click.echo("No running embedded server for this data dir.")


commands = [server_group]
