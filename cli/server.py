"""`goldboard server start|status|stop`: the embedded Label Studio server."""

from __future__ import annotations

import shlex

import click

from goldboard.annotate import server as srv
from goldboard.cli._options import OutputFile, study_option
from goldboard.errors import GoldboardError

_DATA_DIR_HELP = "Server data dir (default: $GOLDBOARD_SERVER_DIR or ~/.goldboard/server)."


def _data_dir_option(help: str = _DATA_DIR_HELP):
    return click.option("--data-dir", type=click.Path(file_okay=False), default=None, help=help)


_data_dir = _data_dir_option()
#: start and stop: the study's server or none (status and login show or log in to any data dir asked for)
_study_data_dir_only = _data_dir_option(
    "Server data dir (default: the one the study records, with --study or in a study's folder; else "
    "$GOLDBOARD_SERVER_DIR or ~/.goldboard/server). For a study, one that differs from its record is refused."
)


_study = study_option(
    required=False,
    help="Study workspace: the server its study.toml records (default: the current folder, when it is a study).",
)


def _study_in_force(study_dir: str | None):
    """The study of --study, else of the current folder when it holds study.toml, else None."""
    from pathlib import Path

    from goldboard.study import STUDY_FILE, Study

    if study_dir is None and not (Path.cwd() / STUDY_FILE).is_file():
        return None
    return Study.open(study_dir or ".")


def _study_data_dir(data_dir: str | None, study_dir: str | None) -> str | None:
    """The data dir to use: --data-dir, else the one the study records (--study, or the current
    folder when it holds study.toml), else None ($GOLDBOARD_SERVER_DIR or the default).  A study
    on a remote server is refused in one line: it has no embedded server to show or log in to."""
    from goldboard.study import STUDY_FILE
    from goldboard.study_options import shown_url

    if data_dir is not None:
        return data_dir
    st = _study_in_force(study_dir)
    if st is None:
        return None
    if st.url:
        raise GoldboardError(
            f"{st.path / STUDY_FILE}: the study uses the Label Studio server at {shown_url(st.url)}, not an embedded "
            "server: open it there (or give --data-dir for an embedded one)"
        )
    return st.data_dir or None


def _recorded_data_dir(data_dir: str | None, study_dir: str | None, verb: str) -> str | None:
    """``server start|stop``: the data dir the study records (--study, or the current folder when it
    holds study.toml), else --data-dir.  Refused in one line: a study on a remote server (not
    goldboard's to start or stop) and a --data-dir other than the study's record -- a start there
    would be a second, empty server beside the one holding the study's projects."""
    from goldboard.study import STUDY_FILE
    from goldboard.study_options import shown_url

    st = _study_in_force(study_dir)
    if st is None:
        return data_dir
    toml = (st.path / STUDY_FILE).resolve()
    if st.url:
        raise GoldboardError(
            f"{toml}: the study uses the Label Studio server at {shown_url(st.url)}, not goldboard's embedded "
            f"server: goldboard does not {verb} it"
        )
    recorded = st.data_dir or None
    if data_dir is not None and srv.resolved_data_dir(data_dir) != srv.resolved_data_dir(recorded):
        raise GoldboardError(
            f"--data-dir {data_dir}: {toml} records the server data dir {srv.resolved_data_dir(recorded)}; "
            f"drop --data-dir (or change the record: `goldboard study set {toml.parent} --data-dir DIR`)"
        )
    click.echo(f"Server data dir {srv.resolved_data_dir(recorded)} (recorded in {toml}).", err=True)
    return recorded


@click.group("server")
def server_group() -> None:
    """Run the embedded Label Studio server (127.0.0.1 unless --host).

    \b
    Users: an admin plus one user per rater (and adjudicator), with random
    passwords and API tokens kept in DATA_DIR/credentials.toml (mode 0600).
    Each rater and adjudicator sits in a Label Studio organization of their own:
    the server shows nobody another person's projects (blinding enforced).
    Hand each person their login with `goldboard server login NAME`.
    """


@server_group.command("start")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=srv.DEFAULT_PORT,
    show_default=True,
    help="Port (exactly this one).",
)
@click.option(
    "--host",
    default=srv.HOST,
    show_default=True,
    help="Address to listen on: 127.0.0.1 = this computer only; 0.0.0.0 = every network interface, so raters "
    "on other computers of your network can log in (plain HTTP: see the warning it prints).",
)
@_study_data_dir_only
@_study
@click.option(
    "--raters",
    default="",
    help="Comma-separated rater names to create accounts for, e.g. onc_a,onc_b (later: `server add-raters`).",
)
@click.option(
    "--blinding",
    type=click.Choice([srv.BLINDING_ORGS, srv.BLINDING_CONVENTION]),
    default=None,
    help="New data dirs only. organizations (default): each person in a Label Studio organization of their "
    "own, enforced by the server. convention: one organization, everyone can open every project "
    "(needed for push --shared).",
)
@click.option(
    "--timeout", type=float, default=srv.START_TIMEOUT, show_default=True, help="Seconds to wait for the server."
)
@click.option(
    "--database",
    metavar="URL",
    default=None,
    help="postgresql://USER@HOST:PORT/DB for a team's PostgreSQL (password from $GOLDBOARD_DB_PASSWORD, "
    "$PGPASSWORD or --db-password-file, never in the URL), or 'sqlite' (the default: a file in the data dir). "
    "Remembered for later starts.",
)
@click.option(
    "--workers",
    type=int,
    default=None,
    help="Serve with gunicorn and this many worker processes (0: Label Studio's own one-process server, "
    "the default). Remembered for later starts.",
)
@click.option(
    "--db-password-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="File (mode 0600) whose first line is the PostgreSQL password; its path is remembered, not its content.",
)
def start_cmd(
    port: int,
    host: str,
    data_dir: str | None,
    raters: str,
    blinding: str | None,
    timeout: float,
    database: str | None,
    workers: int | None,
    db_password_file: str | None,
    study_dir: str | None,
) -> None:
    """Start Label Studio in the background (a first start sets up the database: about a minute on SQLite).

    With --study, or in a study's folder, it starts the server the study records
    (its data dir); a study on a remote Label Studio has none to start.

    \b
    A team server: PostgreSQL behind several workers, e.g.
      export GOLDBOARD_DB_PASSWORD=...   # or --db-password-file FILE
      goldboard server start --database postgresql://ls@127.0.0.1:5432/labelstudio --workers 4
    """
    host = srv.check_host(host)
    data_dir = _recorded_data_dir(data_dir, study_dir, "start")
    srv.check_not_running(data_dir)  # before "Starting ...": a running server is an error, not a start
    warning = srv.lan_warning(host, port)
    if warning:
        click.echo(warning, err=True)
    click.echo(
        "Starting Label Studio (a first start sets up the database: about a minute on SQLite, minutes on PostgreSQL)...",
        err=True,
    )
    info = srv.start_server(
        data_dir,
        port=port,
        raters=[r for r in raters.split(",") if r.strip()],
        timeout=timeout,
        host=host,
        blinding=blinding,
        database=database,
        workers=workers,
        db_password_file=db_password_file,
    )
    click.echo(info.describe())
    if info.raters:
        click.echo("Give each person their own login: goldboard server login NAME (prints one login only).")


@server_group.command("login")
@click.argument("name")
@_data_dir
@click.option(
    "--card",
    type=OutputFile(),
    default=None,
    help="Write the login to this file (mode 0600) instead of printing it.",
)
@click.option(
    "--url",
    default=None,
    help="The address this person opens, if not the server's own (e.g. http://localhost:8080 through an SSH "
    "tunnel, or your reverse proxy's https:// address).",
)
@_study
def login_cmd(name: str, data_dir: str | None, card: str | None, url: str | None, study_dir: str | None) -> None:
    """Give one rater or adjudicator a fresh password and show their login.

    Prints NAME's URL, e-mail and a new random password (or writes them to
    --card FILE, mode 0600) -- never anyone else's. The previous password stops
    working at once: running it again is the password reset.
    """
    ddir = _study_data_dir(data_dir, study_dir)
    login = srv.new_login(ddir, name, url=url)
    if card:
        path = srv.write_login_card(login, card)
        click.echo(f"Wrote {name}'s login card to {path} (mode 0600). Hand it to {name} only.")
    else:
        click.echo(login.card(), nl=False)
    if not login.running:
        # the data dir named: in a new shell a bare `server start` would start a second, empty server
        where = shlex.quote(str(srv.resolved_data_dir(ddir)))
        click.echo(
            f"Note: the server is not running; start it with `goldboard server start --data-dir {where}`.", err=True
        )


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
@_study
def status_cmd(data_dir: str | None, study_dir: str | None) -> None:
    """Show whether the server runs, its URL, database, workers, users and the credentials file
    (of the server the study records, with --study or in a study's folder)."""
    click.echo(srv.server_status(_study_data_dir(data_dir, study_dir)).describe())


@server_group.command("stop")
@_study_data_dir_only
@_study
def stop_cmd(data_dir: str | None, study_dir: str | None) -> None:
    """Stop the server started for this data dir (only that process): with --study, or in a
    study's folder, the server the study records."""
    data_dir = _recorded_data_dir(data_dir, study_dir, "stop")
    if srv.stop_server(data_dir):
        click.echo("Stopped Label Studio.")
    else:
        click.echo("No running embedded server for this data dir.")


#: library parameters that reach the server under another name (see goldboard.cli.flag_for)
start_cmd.param_flags = {"password_file": "--db-password-file"}

#: what --card writes (cli._output.refuse_output_named_for_another_format)
login_cmd.output_formats = {"card": ("a plain-text login card", (), True)}

commands = [server_group]
