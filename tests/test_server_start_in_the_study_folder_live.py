"""A bare ``server start`` in a study's folder (a new shell) starts the server the study records,
and a bare ``server stop`` there stops it: no second, empty server on ~/.goldboard/server."""

from __future__ import annotations

import livestudio
import pytest
from conftest import run_cli

from goldboard.annotate import server as srv

pytestmark = pytest.mark.live


def test_start_and_stop_in_the_study_folder_use_the_recorded_data_dir(ls_template, tmp_path, monkeypatch):
    ddir = livestudio.copy_data_dir(ls_template, tmp_path / "lsdata")
    s = tmp_path / "st"
    run_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--data-dir", ddir)
    monkeypatch.delenv("GOLDBOARD_SERVER_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(s)  # a new shell in the study's folder
    port = srv.free_port()
    try:
        res = run_cli("server", "start", "--port", port, "--timeout", 120)
        assert f"data dir:     {ddir.resolve()}" in res.output, res.output
        assert srv.server_status(ddir).running and srv.server_status(ddir).port == port
        assert not srv.default_data_dir().exists()  # no second server's data dir
        assert "Stopped Label Studio." in run_cli("server", "stop").output
        assert not srv.server_status(ddir).running
    finally:
        srv.stop_server(ddir)
        srv.stop_server(srv.default_data_dir())  # a start there (the defect) must not outlive the test
