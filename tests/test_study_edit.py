"""`goldboard study set` and `study add-rater`: edit a study instead of recreating it."""

from __future__ import annotations

import pytest
from conftest import run_cli as run

from goldboard.annotate import server as srv
from goldboard.annotate.client import connect
from goldboard.cases.synth import synthesize, write_records
from goldboard.study import Study


def test_study_set_url_data_dir_name(tmp_path):
    s = tmp_path / "st"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    before = (s / "study.toml").read_text()
    res = run("study", "set", s, "--url", "https://ls.example.org/", "--name", "NSCLC pilot")
    assert "url: (embedded server) -> https://ls.example.org" in res.output and "name: st -> NSCLC pilot" in res.output
    st = Study.open(s)
    assert (st.url, st.name, st.raters) == ("https://ls.example.org", "NSCLC pilot", ["onc_a", "onc_b"])
    assert st.created_at in before  # nothing else rewritten
    assert "nothing changed" in run("study", "set", s, "--name", "NSCLC pilot").output
    run("study", "set", s, "--url", "", "--data-dir", tmp_path / "ls")
    st = Study.open(s)
    assert st.url == "" and st.data_dir == str((tmp_path / "ls").resolve())
    assert "http:// or https://" in run("study", "set", s, "--url", "ls.example.org", code=1).output
    assert run("study", "set", s, code=2).exit_code == 2


def test_add_rater_checks_and_remote_server(tmp_path):
    s = tmp_path / "st"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", "https://ls.example.org")
    res = run("study", "add-rater", s, "onc_c")
    assert "added rater onc_c (raters: onc_a, onc_b, onc_c)" in res.output
    assert "create a Label Studio account for onc_c on https://ls.example.org" in res.output
    assert Study.open(s).raters == ["onc_a", "onc_b", "onc_c"]
    assert "already a rater" in run("study", "add-rater", s, "onc_c", code=1).output
    assert "use letters, digits" in run("study", "add-rater", s, "dr smith", code=1).output
    assert "reserved" in run("study", "add-rater", s, "admin", code=1).output


@pytest.mark.live
def test_add_rater_embedded_account_and_next_push(fresh_server, tmp_path):
    """The new rater gets an account on the embedded server (with a working token), and the
    next push of the round creates only their project, with the round's tasks."""
    cases, outputs = synthesize("mtb", 3, seed=2)
    c, o = tmp_path / "c.jsonl", tmp_path / "o.jsonl"
    write_records(cases, c)
    write_records(outputs, o)
    s = tmp_path / "st"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], data_dir=str(fresh_server.data_dir))
    run("push", "--study", s, c, "--outputs", o, "--quiet")
    res = run("study", "add-rater", s, "onc_c")
    assert "Label Studio account 'onc_c'" in res.output
    creds = srv.read_credentials(fresh_server.data_dir)
    for secret in creds.secrets():
        assert secret not in res.output
    assert creds.users["onc_c"].id is not None
    res = run("push", "--study", s, c, "--outputs", o, "--quiet")
    st = Study.open(s)
    rnd = st.round(1)
    assert set(rnd.projects) == {"onc_a", "onc_b", "onc_c"}
    client = connect(st)
    assert len(list(client.task_data(rnd.projects["onc_c"]))) == len(list(client.task_data(rnd.projects["onc_a"])))
    # the new rater's own token works (the account really exists)
    me = client.as_token(creds.users["onc_c"].token, "onc_c's token")
    assert me.whoami()["username"] == "onc_c"
