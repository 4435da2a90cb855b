"""The team path's database check against a real PostgreSQL (password authentication)."""

from __future__ import annotations

import os

import pytest

from goldboard.annotate import serverdb
from goldboard.errors import GoldboardError

pytestmark = pytest.mark.live


def test_database_check_with_right_and_wrong_password(pg, tmp_path, monkeypatch):
    for k in serverdb.PASSWORD_ENV:
        monkeypatch.delenv(k, raising=False)
    s = serverdb.Settings(database=pg.db, password_file=str(pg.password_file))
    serverdb.check_database(s)  # the right password, from the 0600 file
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    os.chmod(wrong, 0o600)
    with pytest.raises(GoldboardError, match="cannot connect to PostgreSQL .*password authentication failed") as e:
        serverdb.check_database(serverdb.Settings(database=pg.db, password_file=str(wrong)))
    assert "not-the-password" not in str(e.value)
    with pytest.raises(GoldboardError, match="no password given: set GOLDBOARD_DB_PASSWORD"):
        serverdb.check_database(serverdb.Settings(database=pg.db))
    monkeypatch.setenv("GOLDBOARD_DB_PASSWORD", pg.password_file.read_text().strip())
    serverdb.check_database(serverdb.Settings(database=pg.db))  # the right password, from the environment
