"""Blinding enforced by the embedded server (each person in a Label Studio organization of
their own), checked over the REST API with each rater's own token, and recorded in the round.

The browser side (log in as a rater, open URLs) is in ``tests/test_browser_raters.py``.
"""

from __future__ import annotations

import json

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


# --------------------------------------------------------------------------- every write route


#: lists Label Studio's URL conf (run in the embedded server's environment): [pattern, methods] per route
_ROUTES_SCRIPT = r"""
import json, os, sys
import label_studio
sys.path.insert(0, os.path.dirname(label_studio.__file__))
import django
django.setup()
from django.urls import URLResolver, get_resolver

out = []
def walk(patterns, prefix):
    for p in patterns:
        if isinstance(p, URLResolver):
            walk(p.url_patterns, prefix + str(p.pattern))
            continue
        cb = p.callback
        cls = getattr(cb, "cls", None) or getattr(cb, "view_class", None)
        actions = getattr(cb, "actions", None)
        if actions:
            methods = [m.upper() for m in actions]
        elif cls is not None:
            methods = [m.upper() for m in cls.http_method_names if hasattr(cls, m)]
        else:
            methods = ["POST", "PUT", "PATCH", "DELETE"]  # a function view: try every write
        out.append([prefix + str(p.pattern), sorted(set(methods))])
walk(get_resolver().url_patterns, "")
print("ROUTES " + json.dumps(out))
"""
WRITE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
#: routes that act on rater B's own credentials or session (they would only lock B out of the test)
_OWN_CREDENTIALS = ("token", "logout", "reset-password", "reset_password", "user/login", "user/signup")


def _write_routes(data_dir) -> list[tuple[str, str]]:
    """Every (path pattern, write method) of Label Studio's URL conf under /api/, as Django resolves it."""
    import re
    import subprocess
    import sys as _sys

    out = subprocess.run(
        [_sys.executable, "-c", _ROUTES_SCRIPT],
        env=srv._child_env(data_dir),
        cwd=data_dir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    line = next(x for x in out.stdout.splitlines() if x.startswith("ROUTES "))
    routes = []
    for pattern, methods in json.loads(line[len("ROUTES ") :]):
        path = re.sub(r"\\\.\(\?P<format>[^)]*\)/?\$?", "", pattern).replace("^", "").replace("$", "")
        if "format" in path or not path.startswith("api/") or any(w in path for w in _OWN_CREDENTIALS):
            continue
        routes += [(path, m) for m in methods if m in WRITE_METHODS]
    return sorted(set(routes))


def _fill(path: str, ids: dict) -> str:
    """A route pattern with another person's object ids for its parameters."""
    import re

    def value(name: str, before: str) -> str:
        name = name.lower()
        for key, words in (
            ("view", ("views",)),
            ("annotation", ("annotations", "annotation")),
            ("task", ("tasks", "task")),
            ("user", ("users", "user")),
            ("organization", ("organizations", "organization")),
        ):
            if key in name or (name in ("pk", "id") and before.rstrip("/").split("/")[-1] in words):
                return str(ids[key])
        return str(ids["project"])

    def sub(m):
        return value(m.group("name"), path[: m.start()])

    path = re.sub(r"<(?:\w+:)?(?P<name>\w+)>", sub, path)
    return "/" + re.sub(r"\(\?P<(?P<name>\w+)>[^)]*\)", sub, path)


def _state(url: str, token: str, project: int) -> dict:
    """What another person's project holds, as its own organization sees it (changes = a cross-boundary write)."""
    with _as(url, token) as c:
        p = c.get(f"/api/projects/{project}/").json()
        tasks = c.get("/api/tasks/", params={"project": project, "page_size": 1000, "fields": "all"}).json()
        views = c.get("/api/dm/views/", params={"project": project}).json()
        ml = c.get("/api/ml/", params={"project": project}).json()
        hooks = c.get("/api/webhooks/", params={"project": project})
    drop = {"updated_at", "queue_total", "queue_done", "task_number", "config_suitable_for_bulk_annotation"}
    return {
        "project": {k: v for k, v in p.items() if k not in drop},
        "tasks": sorted(
            (
                t["id"],
                json.dumps(t.get("data"), sort_keys=True),
                sorted((a["id"], json.dumps(a["result"], sort_keys=True)) for a in t.get("annotations") or []),
                len(t.get("predictions") or []),
            )
            for t in tasks["tasks"]
        ),
        "views": sorted(v["id"] for v in views),
        "ml": sorted(m["id"] for m in ml) if isinstance(ml, list) else ml,
        "webhooks": hooks.status_code,
    }


def test_rater_b_cannot_write_into_rater_a_or_adjudication_on_any_route(live_server, tmp_path):
    """Every write route of Label Studio's URL conf, tried as rater B against rater A's project
    and the adjudication project: nothing of theirs changes, A's task list still loads, and a
    Data Manager tab for another person's project is answered like one for a project id that
    does not exist (201 vs 400 revealed which ids exist)."""
    st, _ = _adjudicated_study(live_server, tmp_path)
    creds = srv.read_credentials(live_server.data_dir)
    pa, pb = st.round(1).projects["onc_a"], st.round(1).projects["onc_b"]
    adj = list(st.adjudication["projects"].values())[0]
    admin = connect(st)
    owner_a, owner_adj = creds.org_token("onc_a"), creds.org_token("dr_chair")
    with _as(live_server.url, owner_a) as a:
        view_a = a.post("/api/dm/views/", json={"project": pa, "data": {"title": "A's tab"}}).json()["id"]
    ids = {
        "project": pa,
        "task": admin.task_data(pa)[0][0],
        "annotation": next(x["id"] for t in admin.export(pa) for x in t["annotations"]),
        "view": view_a,
        "user": creds.users["onc_a"].id,
        "organization": creds.orgs["onc_a"].id,
    }
    before = {pa: _state(live_server.url, owner_a, pa), adj: _state(live_server.url, owner_adj, adj)}
    routes = _write_routes(live_server.data_dir)
    assert len(routes) >= 60 and ("api/dm/views/", "POST") in routes, routes
    body = {"project": pa, "task": ids["task"], "data": {"title": "B's tab", "filters": {"conjunction": "and"}}}
    answers = {}
    with _as(live_server.url, creds.token_for("onc_b")) as b:
        for path, method in routes:
            for target in (pa, adj):
                url = _fill(path, {**ids, "project": target})
                # with the project named in body and query, and without (the route's own checks)
                for named in (True, False):
                    extra = {"project": target} if named else {}
                    payload = {**body, **extra} if named else {"task": ids["task"], "data": body["data"]}
                    r = b.request(method, url, json=payload, params=extra)
                    answers[(method, url, named)] = r.status_code
                    if r.status_code < 300 and f"/{target}" in url:
                        raise AssertionError(f"{method} {url} as onc_b: {r.status_code} {r.text[:200]}")
        # 201-vs-400 no longer tells which project ids exist
        tab = {"data": {"title": "x"}}
        foreign = b.post("/api/dm/views/", json={**tab, "project": pa})
        missing = b.post("/api/dm/views/", json={**tab, "project": 999999})
        foreign_task = b.post("/api/tasks/", json={"project": pa, "data": {"text": "x"}})
        missing_task = b.post("/api/tasks/", json={"project": 999999, "data": {"text": "x"}})
        for one, other in ((foreign, missing), (foreign_task, missing_task)):
            assert one.status_code == other.status_code == 404, (one.text, other.text)
            assert one.json()["detail"] == other.json()["detail"] == "No Project matches the given query."
        # B's own project still takes B's own writes (the guard is not a blanket refusal)
        assert b.post("/api/dm/views/", json={**tab, "project": pb}).status_code == 201
    after = {pa: _state(live_server.url, owner_a, pa), adj: _state(live_server.url, owner_adj, adj)}
    counts: dict[int, int] = {}
    for code in answers.values():
        counts[code] = counts.get(code, 0) + 1
    print(f"{len(routes)} write routes, {len(answers)} requests as onc_b; answers: {dict(sorted(counts.items()))}")
    print("2xx (none of them names another person's object):", sorted(k for k, v in answers.items() if v < 300))
    assert after == before, [(k, before[k], after[k]) for k in before if before[k] != after[k]]
    with _as(live_server.url, creds.token_for("onc_a")) as a:
        assert a.get("/api/tasks/", params={"project": pa, "view": view_a}).status_code == 200
    # Label Studio's database (it holds the API tokens) is owner-only, in an owner-only folder
    import stat as _stat

    dbs = list((live_server.data_dir / "ls").glob("*.sqlite3"))
    assert dbs and all(_stat.S_IMODE(p.stat().st_mode) == 0o600 for p in dbs)
    assert _stat.S_IMODE(live_server.data_dir.stat().st_mode) == 0o700
