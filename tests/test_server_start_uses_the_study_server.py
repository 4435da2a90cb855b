"""``server start`` and ``server stop`` act on the server the study records.

Typed in a study's folder (a new shell, no ``$GOLDBOARD_SERVER_DIR``), a bare ``goldboard server
start`` used to start a second, empty server on ~/.goldboard/server while the study's projects live
in the data dir study.toml records.  Like ``server status`` and ``server login``, start and stop now
take ``--study`` (default: the current folder, when it is a study) and use the recorded data dir; a
``--data-dir`` that differs from the record, and a study on a remote Label Studio, are one line each.
The start itself is replaced by a recorder: these tests check which data dir and port it is given."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import error_line, run_cli

from goldboard.annotate import server as srv


@pytest.fixture
def started(monkeypatch, tmp_path) -> list:
    """``srv.start_server`` and ``srv.stop_server`` record their data dir (and port) instead of acting."""
    calls: list = []

    def start(data_dir=None, port=srv.DEFAULT_PORT, **kwargs):
        calls.append(("start", srv.resolved_data_dir(data_dir), port))
        return srv.ServerInfo(data_dir=srv.resolved_data_dir(data_dir), running=True, port=port)

    def stop(data_dir=None, timeout=15.0):
        calls.append(("stop", srv.resolved_data_dir(data_dir), None))
        return True

    monkeypatch.setattr(srv, "start_server", start)
    monkeypatch.setattr(srv, "stop_server", stop)
    monkeypatch.delenv("GOLDBOARD_SERVER_DIR", raising=False)  # a new shell
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return calls


def _study(tmp_path: Path, *server: str) -> Path:
    s = tmp_path / "st"
    run_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", *server)
    return s


def test_start_in_the_study_folder_starts_the_recorded_data_dir(tmp_path, monkeypatch, started):
    ls = tmp_path / "lsdata"
    s = _study(tmp_path, "--data-dir", ls)
    monkeypatch.chdir(s)
    res = run_cli("server", "start", "--port", 8123)
    assert started == [("start", ls.resolve(), 8123)]
    assert f"Server data dir {ls.resolve()} (recorded in {s.resolve() / 'study.toml'})" in res.output


def test_start_with_study_starts_the_recorded_data_dir(tmp_path, monkeypatch, started):
    ls = tmp_path / "lsdata"
    s = _study(tmp_path, "--data-dir", ls)
    monkeypatch.chdir(tmp_path)  # not a study folder
    run_cli("server", "start", "--study", s)
    assert started == [("start", ls.resolve(), srv.DEFAULT_PORT)]


def test_stop_in_the_study_folder_stops_the_recorded_data_dir(tmp_path, monkeypatch, started):
    ls = tmp_path / "lsdata"
    s = _study(tmp_path, "--data-dir", ls)
    monkeypatch.chdir(s)
    assert "Stopped Label Studio." in run_cli("server", "stop").output
    assert started == [("stop", ls.resolve(), None)]


@pytest.mark.parametrize("command", ["start", "stop"])
def test_a_data_dir_other_than_the_record_is_refused_naming_both(tmp_path, monkeypatch, started, command):
    ls = tmp_path / "lsdata"
    s = _study(tmp_path, "--data-dir", ls)
    other = tmp_path / "other"
    line = error_line(run_cli("server", command, "--study", s, "--data-dir", other, code=None))
    assert f"--data-dir {other}: " in line and f"records the server data dir {ls.resolve()}" in line, line
    assert started == [] and not other.exists()


def test_the_recorded_data_dir_given_again_is_accepted(tmp_path, monkeypatch, started):
    ls = tmp_path / "lsdata"
    s = _study(tmp_path, "--data-dir", ls)
    monkeypatch.chdir(s)
    run_cli("server", "start", "--data-dir", ls)
    assert started == [("start", ls.resolve(), srv.DEFAULT_PORT)]


def test_a_study_on_the_default_server_starts_the_default_data_dir(tmp_path, monkeypatch, started):
    s = _study(tmp_path)
    run_cli("server", "start", "--study", s)
    assert started == [("start", srv.default_data_dir().resolve(), srv.DEFAULT_PORT)]
    line = error_line(run_cli("server", "start", "--study", s, "--data-dir", tmp_path / "x", code=None))
    assert f"records the server data dir {srv.default_data_dir().resolve()}" in line


@pytest.mark.parametrize("command", ["start", "stop"])
def test_a_study_on_a_remote_server_is_not_goldboards_to_start(tmp_path, monkeypatch, started, command):
    s = _study(tmp_path, "--url", "https://ls.example.org")
    monkeypatch.chdir(s)
    line = error_line(run_cli("server", command, code=None))
    assert "the study uses the Label Studio server at https://ls.example.org" in line
    assert f"goldboard does not {command} it" in line
    assert started == []


def test_outside_a_study_the_data_dir_given_is_started(tmp_path, monkeypatch, started):
    monkeypatch.chdir(tmp_path)
    run_cli("server", "start", "--data-dir", tmp_path / "d")
    run_cli("server", "stop", "--data-dir", tmp_path / "d")
    d = (tmp_path / "d").resolve()
    assert started == [("start", d, srv.DEFAULT_PORT), ("stop", d, None)]
