"""`server start --host` (LAN) with its warning, and `server login NAME` (fresh password,
login card 0600, never another person's login).  Live tests send traffic to loopback only."""

from __future__ import annotations

import time

import httpx
import livestudio
import pytest
from conftest import invoke_cli as _run

from goldboard.annotate import server as srv
from goldboard.errors import GoldboardError

# --------------------------------------------------------------------------- offline


def test_host_is_checked_and_the_lan_warning_says_what_it_means():
    assert srv.check_host("localhost") == "127.0.0.1" and srv.check_host("0.0.0.0") == "0.0.0.0"
    with pytest.raises(GoldboardError, match="^host my-laptop: give an IP address"):
        srv.check_host("my-laptop")
    assert srv.lan_warning("127.0.0.1", 8080) == "" and srv.lan_warning("::1", 8080) == ""
    w = srv.lan_warning("0.0.0.0", 8080)
    for needed in ("WARNING", "every network interface", "port 8080", "plain HTTP", "unencrypted", "SSH tunnel"):
        assert needed in w
    assert srv.public_url("0.0.0.0", 8080).endswith(":8080") and "0.0.0.0" not in srv.public_url("0.0.0.0", 8080)
    assert srv.public_url("192.168.1.20", 8080) == "http://192.168.1.20:8080"


def test_cli_refuses_a_host_name_in_one_line():
    res = _run("server", "start", "--host", "not an address", "--data-dir", "/nonexistent/x")
    assert res.exit_code == 1 and res.stderr.count("\n") == 1 and "give an IP address" in res.stderr


# --------------------------------------------------------------------------- live


@pytest.mark.live
def test_start_on_all_interfaces_warns_and_answers_on_loopback(ls_template, tmp_path):
    d = livestudio.copy_data_dir(ls_template, tmp_path / "server")
    port = srv.free_port()
    try:
        res = _run("server", "start", "--host", "0.0.0.0", "--port", port, "--data-dir", d)
        assert res.exit_code == 0, res.output + res.stderr
        assert "WARNING: Label Studio listens on every network interface" in res.stderr
        assert "plain HTTP" in res.stderr and f"port {port}" in res.stderr
        st = srv.server_status(d)
        assert st.running and st.host == "0.0.0.0" and st.url == f"http://127.0.0.1:{port}"
        assert f"listening:    0.0.0.0 (plain HTTP); raters open {st.public_url}" in res.output
        # the server really listens beyond 127.0.0.1: the process's listening socket is the wildcard address
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
        listening = open("/proc/net/tcp").read().splitlines()[1:]
        mine = [ln.split() for ln in listening if ln.split()[1].endswith(f":{port:04X}") and ln.split()[3] == "0A"]
        assert mine and all(cols[1].startswith("00000000:") for cols in mine), mine
    finally:
        _run("server", "stop", "--data-dir", d)


@pytest.mark.live
def test_login_gives_one_person_a_fresh_password_and_nobody_else(ls_template, tmp_path):
    d = livestudio.copy_data_dir(ls_template, tmp_path / "server")
    before = srv.read_credentials(d)
    with srv.EmbeddedServer(d, port=srv.free_port()) as server:
        url = server.url

        def can_log_in(email: str, password: str) -> bool:
            with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as c:
                c.get("/user/login/")
                r = c.post(
                    "/user/login/",
                    data={"email": email, "password": password, "csrfmiddlewaretoken": c.cookies.get("csrftoken")},
                    headers={"Referer": f"{url}/user/login/"},
                )
                return r.status_code == 302 and "/user/login" not in r.headers.get("location", "")

        old = before.users["onc_b"]
        assert can_log_in(old.email, old.password)
        res = _run("server", "login", "onc_b", "--data-dir", d)
        assert res.exit_code == 0, res.output + res.stderr
        after = srv.read_credentials(d)
        new = after.users["onc_b"].password
        assert new != old.password and f"Password:  {new}" in res.output
        assert f"Open:      {url}/user/login/" in res.output and "E-mail:    onc_b@goldboard.local" in res.output
        # nobody else's login, and no API token, is shown
        for secret in before.secrets():
            assert secret not in res.output
        assert "onc_a" not in res.output and "admin" not in res.output
        assert after.users["onc_a"].password == before.users["onc_a"].password
        # the old password stops working at once; the new one works
        time.sleep(0.2)
        assert not can_log_in(old.email, old.password)
        assert can_log_in(old.email, new)
        # a login card instead: 0600, nothing printed but where it is
        card = tmp_path / "onc_a-login.txt"
        res = _run("server", "login", "onc_a", "--data-dir", d, "--card", card, "--url", "http://localhost:9999")
        assert res.exit_code == 0 and str(card) in res.output and "Password" not in res.output
        assert (card.stat().st_mode & 0o777) == 0o600
        text = card.read_text()
        assert "http://localhost:9999/user/login/" in text and srv.read_credentials(d).users["onc_a"].password in text
        assert can_log_in("onc_a@goldboard.local", srv.read_credentials(d).users["onc_a"].password)
    # unknown people and goldboard's own accounts are one-line errors
    res = _run("server", "login", "nobody", "--data-dir", d)
    assert res.exit_code == 1 and "no Label Studio login for 'nobody'" in res.stderr and "onc_a, onc_b" in res.stderr
    res = _run("server", "login", "admin", "--data-dir", d)
    assert res.exit_code == 1 and "goldboard's own account" in res.stderr
