"""The team server's settings: database URL, password sources, workers, server.toml (no server needed)."""

from __future__ import annotations

import os

import pytest
from conftest import error_line, invoke_cli

from goldboard.annotate import server as srv
from goldboard.annotate import serverdb
from goldboard.errors import GoldboardError

URL = "postgresql://ls@db.example.org:6543/labelstudio"


def test_parse_database_url():
    db = serverdb.parse_database(URL)
    assert (db.user, db.host, db.port, db.name, db.sslmode) == ("ls", "db.example.org", 6543, "labelstudio", "")
    assert db.url == URL
    assert (
        serverdb.parse_database("postgres://ls@h/db?sslmode=require").url == "postgresql://ls@h:5432/db?sslmode=require"
    )
    assert serverdb.parse_database("sqlite") is None and serverdb.parse_database("") is None


@pytest.mark.parametrize(
    "url, message",
    [
        ("postgresql://ls:hunter2@h:5432/db", "contains a password"),
        ("mysql://ls@h/db", "give postgresql://USER@HOST:PORT/DB"),
        ("postgresql://h:5432/db", "no user"),
        ("postgresql://ls@h:5432/", "no database name"),
        ("postgresql://ls@h:99999/db", "not a database URL"),
        ("postgresql://ls@h/db?sslmode=maybe", "sslmode 'maybe'"),
        ("postgresql://ls@h/db?options=-c", "unsupported URL parameter 'options'"),
    ],
)
def test_bad_database_urls(url, message):
    with pytest.raises(GoldboardError, match=message):
        serverdb.parse_database(url)


def test_password_in_url_is_refused_by_the_cli_without_echoing_it(tmp_path):
    res = invoke_cli("server", "start", "--data-dir", tmp_path / "d", "--database", "postgresql://ls:hunter2@h/db")
    assert error_line(res).startswith("Error: --database: the URL contains a password")
    assert "hunter2" not in res.output


def test_password_sources(tmp_path, monkeypatch):
    for k in serverdb.PASSWORD_ENV:
        monkeypatch.delenv(k, raising=False)
    assert serverdb.database_password() == ""
    monkeypatch.setenv("PGPASSWORD", "from-pg")
    assert serverdb.database_password() == "from-pg"
    monkeypatch.setenv("GOLDBOARD_DB_PASSWORD", "from-gb")
    assert serverdb.database_password() == "from-gb"
    f = tmp_path / "pw"
    f.write_text("from-file\nignored\n")
    os.chmod(f, 0o644)
    with pytest.raises(GoldboardError, match="readable by other users"):
        serverdb.database_password(f)
    os.chmod(f, 0o600)
    assert serverdb.database_password(f) == "from-file"
    with pytest.raises(GoldboardError, match="not found"):
        serverdb.database_password(tmp_path / "missing")


def test_settings_are_remembered_and_passed_to_label_studio_only_in_its_environment(tmp_path, monkeypatch):
    d = tmp_path / "srv"
    d.mkdir()
    f = tmp_path / "pw"
    f.write_text("s3cret\n")
    os.chmod(f, 0o600)
    s = serverdb.configure(d, URL, 3, f)
    assert (s.backend, s.workers, s.password_file) == ("postgresql", 3, str(f.resolve()))
    text = (d / serverdb.SETTINGS_FILE).read_text()
    assert "s3cret" not in text and URL in text
    again = serverdb.configure(d)  # nothing asked: what was recorded
    assert again.database_key == URL and again.workers == 3
    env = srv._child_env(d)
    assert env["DJANGO_DB"] == "default" and env["POSTGRE_HOST"] == "db.example.org"
    assert env["POSTGRE_PORT"] == "6543" and env["POSTGRE_NAME"] == "labelstudio" and env["POSTGRE_USER"] == "ls"
    assert env["POSTGRE_PASSWORD"] == "s3cret"
    info = srv.server_status(d)
    assert (info.backend, info.workers) == ("postgresql", 3)
    out = info.describe()
    assert f"database:     PostgreSQL {URL}" in out and "workers:      3 (gunicorn)" in out and "s3cret" not in out
    # users were never created in this database: they will be (re)seeded
    assert not serverdb.database_ready(d, again)
    serverdb.mark_seeded(d)
    assert serverdb.database_ready(d, serverdb.read_settings(d))
    # back to SQLite: the password file is forgotten, the users must be seeded there
    s = serverdb.configure(d, "sqlite", 0)
    assert s.backend == "sqlite" and s.password_file == "" and not serverdb.database_ready(d, s)
    assert srv._child_env(d)["DJANGO_DB"] == "sqlite"


def test_workers_range_and_password_file_only_for_postgresql(tmp_path):
    d = tmp_path / "srv"
    d.mkdir()
    with pytest.raises(GoldboardError, match="^workers 100"):
        serverdb.configure(d, workers=100)
    with pytest.raises(GoldboardError, match="^password_file is for a PostgreSQL database"):
        serverdb.configure(d, password_file=tmp_path / "pw")


def test_gunicorn_command_serves_label_studio_on_loopback(tmp_path):
    pytest.importorskip("label_studio")
    pytest.importorskip("gunicorn")
    cmd = serverdb.gunicorn_cmd("127.0.0.1", 8123, 4, tmp_path / "ls")
    assert cmd[1:4] == ["-m", "gunicorn", "label_studio.core.wsgi:application"]
    assert cmd[cmd.index("--bind") + 1] == "127.0.0.1:8123" and cmd[cmd.index("--workers") + 1] == "4"
    # server stop recognises it as this data dir's server
    assert str(tmp_path / "ls") in cmd


def test_server_stop_recognises_a_gunicorn_server_of_this_data_dir_only(tmp_path):
    import json
    import subprocess
    import sys

    d = tmp_path / "srv"
    (d / "ls").mkdir(parents=True)
    fake = [sys.executable, "-c", "import time; time.sleep(60)", "-m", "gunicorn", "label_studio.core.wsgi:application"]
    other = subprocess.Popen([*fake, "--chdir", str(tmp_path / "elsewhere" / "ls")])
    ours = subprocess.Popen([*fake, "--chdir", str(d / "ls")])
    try:
        (d / srv.PID_FILE).write_text(json.dumps({"pid": other.pid, "port": 1, "url": "http://127.0.0.1:1"}))
        assert not srv.server_status(d).running and srv.stop_server(d) is False  # someone else's: left alone
        assert other.poll() is None
        (d / srv.PID_FILE).write_text(json.dumps({"pid": ours.pid, "port": 1, "url": "http://127.0.0.1:1"}))
        assert srv.server_status(d).running
        assert srv.stop_server(d) is True
        assert ours.wait(10) is not None
    finally:
        for p in (other, ours):
            p.kill()
            p.wait()


def test_unreachable_database_is_one_clear_line_before_anything_starts(tmp_path, monkeypatch):
    pytest.importorskip("psycopg")
    monkeypatch.setenv("GOLDBOARD_DB_PASSWORD", "pw-never-shown")
    port = srv.free_port()  # nothing listens there
    res = invoke_cli(
        "server",
        "start",
        "--data-dir",
        tmp_path / "d",
        "--port",
        srv.free_port(),
        "--database",
        f"postgresql://ls@127.0.0.1:{port}/labelstudio",
        "--workers",
        "2",
    )
    assert error_line(res).startswith("Error: cannot connect")
    assert f"cannot connect to PostgreSQL postgresql://ls@127.0.0.1:{port}/labelstudio" in res.output
    assert "pw-never-shown" not in res.output
    assert not (tmp_path / "d" / "credentials.toml").exists()  # nothing seeded, no server started
