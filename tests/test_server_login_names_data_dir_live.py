"""``server login`` for a stopped server names the data dir to start, the one the study records.

In a new shell (no ``$GOLDBOARD_SERVER_DIR``) in the study's folder, ``goldboard server login onc_a``
finds the data dir study.toml records, but its note said "start it with `goldboard server start`":
run as written, that starts a second, empty server on ~/.goldboard/server.  The note now names the
data dir (``--data-dir DIR``)."""

from __future__ import annotations

import livestudio
import pytest
from conftest import run_cli

pytestmark = pytest.mark.live


def test_the_note_names_the_recorded_data_dir(ls_template, tmp_path, monkeypatch):
    ddir = livestudio.copy_data_dir(ls_template, tmp_path / "lsdata")  # a data dir, no server running
    s = tmp_path / "st"
    run_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--data-dir", ddir)
    monkeypatch.delenv("GOLDBOARD_SERVER_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(s)  # a new shell in the study's folder
    res = run_cli("server", "login", "onc_a")
    assert f"start it with `goldboard server start --data-dir {ddir}`" in res.stderr, res.stderr
