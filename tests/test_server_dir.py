"""A server started with GOLDBOARD_SERVER_DIR is recorded in the study (issue 22), and a missing
server's error names `study set --data-dir`."""

from __future__ import annotations

import pytest
from conftest import invoke_cli

from goldboard.annotate.client import ServerUnreachable, resolve_connection
from goldboard.study import Study


def test_study_init_records_goldboard_server_dir(tmp_path, monkeypatch):
    server = tmp_path / "team-server"
    server.mkdir()
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(server))
    res = invoke_cli("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", "onc_a,onc_b")
    assert res.exit_code == 0, res.output
    assert "(from GOLDBOARD_SERVER_DIR) recorded in study.toml" in res.output
    st = Study.open(tmp_path / "s")
    assert st.data_dir == str(server.resolve())
    # a new shell without the variable: the study still names its server, and the error says how to fix it
    monkeypatch.delenv("GOLDBOARD_SERVER_DIR")
    with pytest.raises(ServerUnreachable) as exc:
        resolve_connection(st)
    assert f"({server.resolve()}) is not running" in str(exc.value)
    assert f"`goldboard study set {st.path} --data-dir DIR`" in str(exc.value)


def test_study_init_with_url_records_no_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "x"))
    res = invoke_cli("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", "a,b", "--url", "http://ls:8080")
    assert res.exit_code == 0, res.output
    assert Study.open(tmp_path / "s").data_dir == ""


def test_study_init_help_lists_every_builtin_schema():
    from goldboard.label_configs.schema import builtin_names

    res = invoke_cli("study", "init", "--help")
    text = " ".join(res.output.split())
    assert "mtb_unsafe" in builtin_names()
    for name in builtin_names():
        assert name in text
