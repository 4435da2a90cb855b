"""Blinding enforced by the embedded server (each person in a Label Studio organization of
their own), checked over the REST API with each rater's own token, and recorded in the round.

The browser side (log in as a rater, open URLs) is in ``tests/test_browser_raters.py``.
"""

from __future__ import annotations

import httpx
import pytest
from test_live_roundtrip import RATERS, cases_files, desired_mtb, new_study, run

from goldboard.annotate import server as srv
from goldboard.annotate.client import connect
from goldboard.annotate.simulate import post_ratings
from goldboard.cases.load import load_units
from goldboard.cases.ratings import read_ratings_csv
from goldboard.study import Study

pytestmark = pytest.mark.live


def _as(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Token {token}"}, timeout=30)


def _adjudicated_study(server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=4)
    st = new_study(tmp_path, server)
    assert run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet").exit_code == 0
    st = Study.open(st.path)
    post_ratings(st, desired_mtb(load_units(cases, outputs, schema="mtb")), progress=False)
    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0, res.output
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair")
    assert res.exit_code == 0, res.output
    return Study.open(st.path), res.output


def test_server_refuses_rater_b_everything_of_rater_a_and_of_adjudication(live_server, tmp_path):
    st, out = _adjudicated_study(live_server, tmp_path)
    assert "no rater can list, open or read them" in out and "dr_chair's own Label Studio organization" in out
    creds = srv.read_credentials(live_server.data_dir)
    pa, pb = st.round(1).projects["onc_a"], st.round(1).projects["onc_b"]
    adj = list(st.adjudication["projects"].values())
    assert adj
    admin = connect(st)
    task_a = admin.task_data(pa)[0][0]
    ann_a = next(a["id"] for t in admin.export(pa) for a in t["annotations"])
    with _as(live_server.url, creds.token_for("onc_b")) as b:
        assert {p["id"] for p in b.get("/api/projects/", params={"page_size": 100}).json()["results"]} == {pb}
        for pid in (pa, *adj):
            assert b.get(f"/api/projects/{pid}/").status_code == 404
            assert b.get("/api/tasks/", params={"project": pid}).status_code in (403, 404)
            assert b.get(f"/api/projects/{pid}/export", params={"exportType": "JSON"}).status_code in (403, 404)
        assert b.get(f"/api/tasks/{task_a}/").status_code == 404
        assert b.get(f"/api/annotations/{ann_a}/").status_code == 403  # revoked membership of onc_a's organization
        assert b.post(f"/api/tasks/{task_a}/annotations/", json={"result": []}).status_code in (403, 404)
        # switching to onc_a's organization is undone by the server (goldboard's guard app)
        me = b.get("/api/current-user/whoami").json()
        b.patch(f"/api/users/{me['id']}/", json={"active_organization": creds.orgs["onc_a"].id})
        assert b.get("/api/current-user/whoami").json()["active_organization"] == creds.orgs["onc_b"].id
        assert {p["id"] for p in b.get("/api/projects/").json()["results"]} == {pb}
    # the quietest labeling page the project settings allow; the instructions carry the schema version
    with _as(live_server.url, creds.org_token("onc_b")) as owner:
        proj = owner.get(f"/api/projects/{pb}/").json()
    for setting in (
        "show_instruction",
        "show_skip_button",
        "show_annotation_history",
        "show_collab_predictions",
        "enable_empty_annotation",
        "evaluate_predictions_automatically",
    ):
        assert proj[setting] is False, setting
    assert "Schema: mtb v1.0." in proj["expert_instruction"]
    # the adjudicator sees the adjudication projects and nothing else
    with _as(live_server.url, creds.token_for("dr_chair")) as c:
        assert {p["id"] for p in c.get("/api/projects/", params={"page_size": 100}).json()["results"]} == set(adj)
        assert c.get(f"/api/projects/{pa}/").status_code == 404
    # the evidence is in the round and in the adjudication record
    acc = st.round(1).access
    assert acc["push"]["enforced"] is True and acc["push"]["method"] == "organizations"
    assert acc["pull"]["enforced"] is True and "annotation by id" in acc["pull"]["checks"]
    assert acc["pull"]["raters"]["onc_b"] == {"own": pb, "opens_own": True, "reaches": []}
    assert st.adjudication["access"]["enforced"] is True
    assert st.adjudication["access"]["raters_reach"] == {"onc_a": [], "onc_b": []}
    assert st.adjudication["access"]["adjudicator_opens"] is True
    # ... and in the report's methods text
    res = run("report", "--study", st.path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r.md").read_text()
    assert "enforced by the Label Studio server" in text and "checked with each rater's own account" in text
    # "independently" rests on that enforced check (issue 21), and the adjudication counts on the log
    assert "2 raters (onc_a, onc_b) independently labelled" in text


def test_a_rater_cannot_adjudicate_in_label_studio(live_server, tmp_path):
    st, _ = _adjudicated_study(live_server, tmp_path)
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "other")
    assert res.exit_code == 1 and "are dr_chair's" in res.output


def test_convention_server_records_that_blinding_is_not_enforced(convention_server, tmp_path):
    # one organization, as on a team's own Label Studio: every rater reaches every project,
    # and goldboard says so instead of claiming blinding
    cases, outputs = cases_files(tmp_path, n=2)
    st = new_study(tmp_path, convention_server)
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet")
    assert res.exit_code == 0, res.output
    assert "NOT blinded by the server" in res.output and "onc_b reaches project of onc_a" in res.output
    acc = Study.open(st.path).round(1).access["push"]
    assert acc["method"] == "convention" and acc["enforced"] is False
    assert acc["raters"]["onc_b"]["reaches"] == ["project of onc_a"]


def test_shared_round_attributes_by_user(convention_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=3)
    st = new_study(tmp_path, convention_server)
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--shared", "--quiet")
    assert res.exit_code == 0, res.output
    st = Study.open(st.path)
    assert st.round(1).mode == "shared" and list(st.round(1).projects) == ["*"]
    units = load_units(cases, outputs, schema="mtb")
    want = desired_mtb(units)
    post_ratings(st, want, progress=False)
    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0, res.output
    got = read_ratings_csv(st.ratings_path(1)).set_index(["item_id", "rater", "field"])
    assert len(got) == len(want)
    for w in want.itertuples():
        assert got.loc[(w.item_id, w.rater, w.field), "value"] == w.value
    # a blinded push to the shared round is refused
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--blinded")
    assert res.exit_code != 0 and "round 1 is shared" in res.output


def test_external_url_with_token_in_env_works(convention_server, tmp_path, monkeypatch):
    # a team's own Label Studio: goldboard holds only an API token, no rater accounts
    cases, outputs = cases_files(tmp_path, n=1)
    st = Study.init(tmp_path / "ext", schema="mtb", raters=RATERS, url=convention_server.url)
    token = srv.read_credentials(convention_server.data_dir).admin.token
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet", env={"LABEL_STUDIO_API_KEY": token})
    assert res.exit_code == 0, res.output
    assert token not in res.output and token not in (st.path / "study.toml").read_text()
    acc = Study.open(st.path).round(1).access["push"]
    assert acc["method"] == "convention" and acc["enforced"] is False and "not checked" in acc["note"]
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", token)
    # external server: raters are matched to users by name (onc_a@goldboard.local)
    want = desired_mtb(load_units(cases, outputs, schema="mtb"))
    creds = srv.read_credentials(convention_server.data_dir)
    post_ratings(Study.open(st.path), want, tokens={r: creds.token_for(r) for r in RATERS}, progress=False)
    res = run("pull", "--study", st.path, "--quiet", env={"LABEL_STUDIO_API_KEY": token})
    assert res.exit_code == 0 and "warning" not in res.output, res.output
    assert len(read_ratings_csv(Study.open(st.path).ratings_path(1))) == len(want)
    res = run("report", "--study", st.path, "--format", "markdown", "-o", tmp_path / "r.md")
    assert "not enforced by the server" in (tmp_path / "r.md").read_text()
