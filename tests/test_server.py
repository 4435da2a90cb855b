"""Embedded server: credentials, ports, environment, pid safety; one live CLI start/status/stop."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time

import livestudio
import pytest
from conftest import invoke_cli

from goldboard.annotate import server as srv
from goldboard.errors import GoldboardError


def test_credentials_file_is_private_and_repr_hides_secrets(tmp_path):
    creds = srv.Credentials(
        path=tmp_path / "credentials.toml", admin=srv._new_user("admin"), users={"onc_a": srv._new_user("onc_a")}
    )
    creds.save()
    assert stat.S_IMODE((tmp_path / "credentials.toml").stat().st_mode) == 0o600
    back = srv.read_credentials(tmp_path)
    assert back.token_for("onc_a") == creds.users["onc_a"].token
    text = repr(back) + repr(back.users["onc_a"])
    for secret in creds.secrets():
        assert secret not in text
    assert len(creds.admin.token) == 40 and creds.admin.token != creds.users["onc_a"].token
    with pytest.raises(GoldboardError, match="no Label Studio user for rater 'onc_z'"):
        back.token_for("onc_z")
    os.chmod(tmp_path / "credentials.toml", 0o644)
    with pytest.raises(GoldboardError, match="readable by other users"):
        srv.read_credentials(tmp_path)


def test_child_environment_is_allow_listed(tmp_path, monkeypatch):
    for k, v in {
        "USERNAME": "x",
        "PASSWORD": "y",
        "PORT": "1",
        "HOST": "h",
        "DEBUG": "true",
        "LABEL_STUDIO_API_KEY": "secret",
        "DJANGO_DB": "default",
        "POSTGRE_PASSWORD": "pg-secret",
        "HEARTEX_PORT": "2",
    }.items():
        monkeypatch.setenv(k, v)
    env = srv._child_env(tmp_path)
    for k in ("USERNAME", "PASSWORD", "PORT", "HOST", "DEBUG", "LABEL_STUDIO_API_KEY", "HEARTEX_PORT"):
        assert k not in env
    assert env["DJANGO_DB"] == "sqlite" and "POSTGRE_PASSWORD" not in env  # the caller's database is not used
    assert env["HOME"] == str(tmp_path / "home")
    assert env["LABEL_STUDIO_BASE_DATA_DIR"] == str(tmp_path / "ls")
    assert env["LABEL_STUDIO_LATEST_VERSION_CHECK"] == "false"
    assert env["LABEL_STUDIO_COLLECT_ANALYTICS"] == "false"
    assert env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] == "true"
    assert env["SENTRY_DSN"] == ""


def test_busy_port_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        assert not srv.port_is_free(port)
        res = invoke_cli(*["server", "start", "--port", str(port), "--data-dir", str(tmp_path / "d")])
    assert res.exit_code != 0
    assert f"port {port} on 127.0.0.1 is busy" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "d" / srv.PID_FILE).exists()


def _record_start(tmp_path, monkeypatch) -> tuple[srv.EmbeddedServer, list]:
    """An EmbeddedServer whose launch and seed only record what they were given, in order."""
    events: list = []

    def launch(self, settings, detach, env=None):
        events.append(("launch", dict(env or {})))

    def seed(d, users, secrets_, isolate=None, migrated_marker=None):
        events.append(("seed", migrated_marker))
        if migrated_marker is not None:
            migrated_marker.write_text("migrated\n")
        orgs = {n: {"id": i + 10, "owner_id": i + 20} for i, n in enumerate(isolate.orgs)} if isolate else {}
        return {u.name: i + 1 for i, u in enumerate(users)}, orgs

    monkeypatch.setattr(srv.EmbeddedServer, "_launch", launch)
    monkeypatch.setattr(srv.EmbeddedServer, "_wait_ready", lambda self, creds: None)
    monkeypatch.setattr(srv, "_run_seed", seed)
    return srv.EmbeddedServer(tmp_path / "d", port=srv.free_port(), raters=["onc_a"]), events


def test_a_first_start_boots_label_studio_while_the_seed_migrates(tmp_path, monkeypatch):
    """A new SQLite data dir: the server process starts first, told to wait for the file the seed
    writes once the database is migrated (its Django start-up overlaps the migration)."""
    server, events = _record_start(tmp_path, monkeypatch)
    server.start()
    assert [e[0] for e in events] == ["launch", "seed"]
    marker = events[1][1]
    assert events[0][1] == {srv.WAIT_FOR_ENV: str(marker)} and marker.exists()


def test_a_migrated_data_dir_starts_the_server_after_seeding_without_waiting(tmp_path, monkeypatch):
    server, events = _record_start(tmp_path, monkeypatch)
    server.start()  # first start: seeds, marks the database seeded
    (tmp_path / "d" / "ls" / "label_studio.sqlite3").write_bytes(b"")  # (the real seed creates it)
    events.clear()
    server.raters.append("onc_b")  # a new rater: seeded before the server starts, no waiting
    server.start()
    assert events == [("seed", None), ("launch", {})]


def test_stop_never_kills_a_foreign_pid(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (d / srv.PID_FILE).write_text(json.dumps({"pid": other.pid, "port": 1, "url": "http://127.0.0.1:1"}))
        assert srv.server_status(d).running is False
        res = invoke_cli(*["server", "stop", "--data-dir", str(d)])
        assert res.exit_code == 0 and "No running embedded server" in res.output
        assert other.poll() is None  # still alive
        assert not (d / srv.PID_FILE).exists()  # stale pid file removed
    finally:
        other.kill()
        other.wait()


def test_status_without_server(tmp_path):
    res = invoke_cli(*["server", "status", "--data-dir", str(tmp_path / "none")])
    assert res.exit_code == 0 and "not running" in res.output


def test_log_tail_scrubs_secrets(tmp_path):
    (tmp_path / srv.LOG_FILE).write_text("line one\nAuthorization: Token abcdefabcdef123\nlast\n")
    tail = srv._log_tail(tmp_path, ["abcdefabcdef123"])
    assert "abcdefabcdef123" not in tail and "***" in tail and "last" in tail


@pytest.mark.live
def test_cli_start_status_stop_detached(ls_template, tmp_path):
    d = livestudio.copy_data_dir(ls_template, tmp_path / "server")
    port = srv.free_port()
    creds = srv.read_credentials(d)
    try:
        res = invoke_cli(*["server", "start", "--port", str(port), "--data-dir", str(d), "--raters", "onc_a,onc_b"])
        assert res.exit_code == 0, res.output
        st = srv.server_status(d)
        assert st.running and st.url == f"http://127.0.0.1:{port}"
        res2 = invoke_cli(*["server", "status", "--data-dir", str(d)])
        for out in (res.output, res2.output):
            assert f"http://127.0.0.1:{port}" in out
            assert "onc_a@goldboard.local" in out and "admin@goldboard.local" in out
            assert str(d / "credentials.toml") in out
            for secret in creds.secrets():
                assert secret not in out
        again = invoke_cli(*["server", "start", "--port", str(srv.free_port()), "--data-dir", str(d)])
        assert again.exit_code != 0 and "already running" in again.output
        assert "Starting Label Studio" not in again.output  # the error comes first, alone
        log = (d / srv.LOG_FILE).read_text()
        for secret in creds.secrets():
            assert secret not in log
    finally:
        res3 = invoke_cli(*["server", "stop", "--data-dir", str(d)])
    assert "Stopped" in res3.output
    pid = st.pid
    end = time.monotonic() + 10
    while srv._pid_alive(pid) and time.monotonic() < end:
        time.sleep(0.1)
    assert not srv._pid_alive(pid)
    assert srv.port_is_free(port)
    assert "not running" in invoke_cli(*["server", "status", "--data-dir", str(d)]).output
