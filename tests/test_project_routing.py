"""Routing a project to the organization that holds it (embedded server, one organization per
person) when the project listing misses it: a push creating projects while a pull lists them
shifts the listing's pages, and an existing project must never be called deleted."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from label_studio_sdk import LabelStudio

from goldboard.annotate.client import Client, Connection, ProjectNotFound
from goldboard.annotate.server_accounts import Credentials, Org, User

URL = "http://ls.test"


def _user(name: str, token: str, uid: int) -> User:
    return User(name=name, email=f"{name}@x.test", password="pw-" + name, token=token, id=uid)


def _creds(tmp_path: Path) -> Credentials:
    return Credentials(
        path=tmp_path / "credentials.toml",
        admin=_user("admin", "tok-admin", 1),
        users={"onc_a": _user("onc_a", "tok-a", 2), "onc_b": _user("onc_b", "tok-b", 3)},
        orgs={
            "onc_a": Org("onc_a", _user("goldboard-org-onc_a", "tok-org-a", 4), id=2),
            "onc_b": Org("onc_b", _user("goldboard-org-onc_b", "tok-org-b", 5), id=3),
        },
    )


#: project id -> the token of the organization owner whose organization holds it
HOLDS = {1: "tok-org-a", 2: "tok-org-b"}


def _server(listing_sees_nothing: bool):
    """A fake server: each organization owner sees only their projects by id; the listing
    shows them unless ``listing_sees_nothing`` (a listing that a concurrent push shifted)."""
    calls: list[tuple[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        token = request.headers["Authorization"].split()[-1]
        path = request.url.path
        calls.append((token, path))
        m = re.fullmatch(r"/api/projects/(\d+)/?", path)
        if m:
            pid = int(m.group(1))
            if HOLDS.get(pid) != token:
                return httpx.Response(404, json={"detail": "Not found."})
            return httpx.Response(200, json={"id": pid, "title": f"p{pid}", "label_config": "<View/>"})
        if path.rstrip("/") == "/api/projects":
            if int(request.url.params.get("page", "1")) > 1:
                return httpx.Response(404, json={"detail": "Invalid page."})
            mine = [] if listing_sees_nothing else [p for p, t in HOLDS.items() if t == token]
            results = [{"id": p, "title": f"p{p}"} for p in mine]
            return httpx.Response(200, json={"count": len(results), "next": None, "previous": None, "results": results})
        return httpx.Response(500, text="unexpected " + path)

    return handler, calls


def _client(tmp_path: Path, handler) -> Client:
    c = Client(Connection(URL, "tok-admin", "test", tmp_path, _creds(tmp_path)), timeout=5)

    def sdk(token: str) -> LabelStudio:
        return LabelStudio(
            base_url=URL,
            api_key=token,
            max_retries=0,
            httpx_client=httpx.Client(transport=httpx.MockTransport(handler)),
        )

    c.sdk = sdk("tok-admin")
    c._org_sdks = {p: sdk(o.owner.token) for p, o in c.conn.credentials.orgs.items()}
    return c


@pytest.mark.parametrize("pid", [1, 2])
def test_project_missing_from_a_shifted_listing_is_found_by_id(tmp_path, pid):
    handler, calls = _server(listing_sees_nothing=True)
    c = _client(tmp_path, handler)
    assert c.project(pid)["id"] == pid
    assert c.org_of_project(pid) == ("onc_a" if pid == 1 else "onc_b")
    assert ("tok-admin", f"/api/projects/{pid}/") not in calls  # never asked the admin, who cannot see it


def test_project_in_no_organization_is_still_reported_gone(tmp_path):
    handler, _ = _server(listing_sees_nothing=True)
    c = _client(tmp_path, handler)
    with pytest.raises(ProjectNotFound, match="project 7 no longer exists on http://ls.test") as ei:
        c.project(7)
    assert ei.value.project_id == 7


def test_listed_project_needs_no_lookup_by_id(tmp_path):
    handler, calls = _server(listing_sees_nothing=False)
    c = _client(tmp_path, handler)
    assert c.project(1)["id"] == 1
    by_id = [t for t, p in calls if p.rstrip("/") == "/api/projects/1"]
    assert by_id == ["tok-org-a"]  # the one read itself, routed from the listing
