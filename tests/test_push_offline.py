"""Push and client without a server: error translation (mocked HTTP), token sources,
idempotency bookkeeping against an in-memory fake server."""

from __future__ import annotations

import json
import os

import httpx
import pandas as pd
import pytest
from label_studio_sdk import LabelStudio

from goldboard.annotate.client import (
    AuthenticationFailed,
    Client,
    Connection,
    ProjectNotFound,
    ServerError,
    ServerUnreachable,
    resolve_connection,
)
from goldboard.annotate.push import SHARED_KEY, project_title, push
from goldboard.errors import GoldboardError
from goldboard.study import Study

TOKEN = "tok-" + "9" * 36


def mocked(handler) -> Client:
    c = Client(Connection("http://ls.test", TOKEN, "test"), timeout=5)
    c.sdk = LabelStudio(
        base_url="http://ls.test",
        api_key=TOKEN,
        max_retries=0,
        httpx_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    return c


def test_wrong_token_message_has_no_token():
    seen = []

    def handler(request):
        seen.append(request.headers["Authorization"])
        return httpx.Response(401, json={"detail": "Invalid token."})

    with pytest.raises(AuthenticationFailed) as ei:
        mocked(handler).whoami()
    msg = str(ei.value)
    assert "refused the API token from test" in msg and "HTTP 401" in msg and "Invalid token" in msg
    assert TOKEN not in msg and TOKEN not in repr(ei.value) and "\n" not in msg
    assert seen[0] == f"Token {TOKEN}"  # legacy token scheme


def test_project_gone_and_server_error():
    def handler(request):
        if "/projects/" in request.url.path:
            return httpx.Response(404, json={"detail": "Not found."})
        return httpx.Response(500, text=f"boom {TOKEN}")

    c = mocked(handler)
    with pytest.raises(ProjectNotFound, match="project 42 no longer exists on http://ls.test") as ei:
        c.project(42)
    assert ei.value.project_id == 42
    with pytest.raises(ServerError, match="HTTP 500") as ei:
        c.whoami()
    assert TOKEN not in str(ei.value)


def test_import_is_never_retried():
    calls = []

    def handler(request):
        calls.append(request.url.path)
        return httpx.Response(503, text="busy")

    with pytest.raises(ServerError, match="HTTP 503 while importing 2 tasks into project 3"):
        mocked(handler).import_tasks(3, [{"data": {"item_id": "a"}}, {"data": {"item_id": "b"}}])
    assert len(calls) == 1


@pytest.mark.parametrize(
    "exc,msg",
    [
        (httpx.ConnectError("refused"), "cannot reach Label Studio at http://ls.test"),
        (httpx.ReadTimeout("slow"), "did not answer within 5 s"),
    ],
)
def test_network_failures(exc, msg):
    def handler(request):
        raise exc

    with pytest.raises(ServerUnreachable, match=msg):
        mocked(handler).whoami()


def test_client_repr_hides_token():
    c = Client(Connection("http://ls.test", TOKEN, "LABEL_STUDIO_API_KEY"))
    assert TOKEN not in repr(c) and TOKEN not in repr(c.conn)


# --------------------------------------------------------------------------- token sources


def test_token_from_env_then_config_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "none"))
    with pytest.raises(AuthenticationFailed, match="no API token for https://ls.example.org: set LABEL_STUDIO_API_KEY"):
        resolve_connection(url="https://ls.example.org/")
    cfg = tmp_path / "cfg" / "goldboard" / "credentials.toml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('["https://ls.example.org"]\ntoken = "from-config-123"\n')
    os.chmod(cfg, 0o644)
    with pytest.raises(GoldboardError, match="readable by other users"):
        resolve_connection(url="https://ls.example.org")
    os.chmod(cfg, 0o600)
    conn = resolve_connection(url="https://ls.example.org")
    assert conn.token == "from-config-123" and "config file" in conn.source
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", "from-env-456")
    conn = resolve_connection(url="https://ls.example.org")
    assert conn.token == "from-env-456" and conn.source == "LABEL_STUDIO_API_KEY"


def test_embedded_server_not_running(tmp_path):
    with pytest.raises(ServerUnreachable, match="embedded Label Studio server .* is not running"):
        resolve_connection(data_dir=tmp_path / "srv")


# --------------------------------------------------------------------------- push against a fake server


class FakeServer(Client):
    """An in-memory Label Studio with the calls push makes."""

    def __init__(self, fail_after: int | None = None):
        self.conn = Connection("http://fake", "t", "fake")
        self.url = "http://fake"
        self.projects: dict[int, dict] = {}
        self.imports = 0
        self.fail_after = fail_after

    def project(self, pid):
        if pid not in self.projects:
            raise ProjectNotFound(f"project {pid} gone", pid)
        return self.projects[pid]

    def create_project(self, title, label_config, description="", **kw):
        pid = len(self.projects) + 1
        self.projects[pid] = {
            "id": pid, "title": title, "label_config": label_config, "tasks": [], "description": description,
        }  # fmt: skip
        return pid

    def find_projects(self, title, org=None):
        return [{**p, "task_number": len(p["tasks"])} for p in self.projects.values() if p["title"] == title]

    def task_data(self, pid, page_size=1000):
        return [(i, d) for i, d in enumerate(self.projects[pid]["tasks"], start=1)]

    def users(self):
        return [{"id": i, "email": f"{n}@example.org", "username": n} for i, n in enumerate(["onc_a", "onc_b"], 2)]

    def import_tasks(self, pid, tasks):
        self.imports += 1
        if self.fail_after is not None and self.imports > self.fail_after:
            raise ServerUnreachable("cannot reach Label Studio at http://fake while importing")
        self.projects[pid]["tasks"].extend(t["data"] for t in tasks)
        return len(tasks)


def units(n: int, text: str = "case") -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": [f"C{i}::m" for i in range(n)],
            "case_id": [f"C{i}" for i in range(n)],
            "output_id": [f"C{i}::m" for i in range(n)],
            "model": "m",
            "case_text": [f"{text} {i}" for i in range(n)],
            "output_text": "out",
            "synthetic": True,
        }
    )


@pytest.fixture()
def study(tmp_path):
    return Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")


def test_interrupted_push_then_rerun_is_exact(study):
    fake = FakeServer(fail_after=4)  # onc_a: 3 batches, onc_b: 1 batch, then the server is gone
    with pytest.raises(ServerUnreachable, match="35 of 50 missing tasks were imported before -- run the same push"):
        push(study, units=units(25), client=fake, batch_size=10, progress=False)
    st = Study.open(study.path)
    assert set(st.round(1).projects) == {"onc_a", "onc_b"}  # recorded before any import
    assert [len(p["tasks"]) for p in fake.projects.values()] == [25, 10]
    fake.fail_after = None
    res = push(st, units=units(25), client=fake, batch_size=10, progress=False)
    assert res.imported == {"onc_a": 0, "onc_b": 15} and res.already == {"onc_a": 25, "onc_b": 10}
    for p in fake.projects.values():
        items = [t["item_id"] for t in p["tasks"]]
        assert len(items) == 25 == len(set(items))
    assert len(fake.projects) == 2 and Study.open(study.path).round(1).units == 25


def test_more_units_later_and_units_file(study):
    fake = FakeServer()
    push(study, units=units(3), client=fake, progress=False)
    res = push(Study.open(study.path), units=units(5), client=fake, progress=False)
    assert res.imported == {"onc_a": 2, "onc_b": 2}
    u = Study.open(study.path).units()
    assert list(u.item_id) == [f"C{i}::m" for i in range(5)] and all(r == [1] for r in u.rounds)


def test_changed_item_is_refused(study):
    fake = FakeServer()
    push(study, units=units(2), client=fake, progress=False)
    with pytest.raises(GoldboardError, match="item 'C0::m': case_text on the server .* differs"):
        push(Study.open(study.path), units=units(2, text="edited"), client=fake, progress=False)


def test_shared_mode_one_project_and_mode_conflict(study):
    fake = FakeServer()
    res = push(study, units=units(2), client=fake, shared=True, progress=False)
    assert list(res.projects) == [SHARED_KEY] and res.mode == "shared"
    with pytest.raises(GoldboardError, match="round 1 is shared"):
        push(Study.open(study.path), units=units(2), client=fake, shared=False, progress=False)
    res = push(Study.open(study.path), units=units(2), client=fake, round_number=2, shared=False, progress=False)
    assert set(res.projects) == {"onc_a", "onc_b"} and Study.open(study.path).round(2).mode == "blinded"


def test_duplicate_item_ids_refused(study):
    u = pd.concat([units(2), units(1)], ignore_index=True)
    with pytest.raises(GoldboardError, match="item 'C0::m' appears twice"):
        push(study, units=u, client=FakeServer(), progress=False)


def test_project_title_fits_label_studio_limit():
    t = project_title("a-very-long-study-name-" * 4, "onc_a", 12)
    assert len(t) <= 50 and t.startswith("onc_a · round 12 · ")
    assert project_title("s", SHARED_KEY, 1) == "shared · round 1 · s"


# --------------------------------------------------------------------------- batching, listing, concurrency


class CountingServer(FakeServer):
    def __init__(self, workers: int = 1, **kw):
        super().__init__(**kw)
        self.conn = Connection("http://fake", "t", "fake", workers=workers)
        self.listings: list[int] = []
        self.batches: list[tuple[int, int]] = []

    def task_data(self, pid, page_size=1000):
        self.listings.append(pid)
        return super().task_data(pid, page_size)

    def import_tasks(self, pid, tasks):
        self.batches.append((pid, len(tasks)))
        return super().import_tasks(pid, tasks)


def test_batches_are_sized_by_payload_bytes():
    from goldboard.annotate.push import _batches

    payload = [{"data": {"item_id": f"{i:03d}", "text": "x" * 100}} for i in range(50)]
    one = len(json.dumps(payload[0]).encode()) + 1
    batches = list(_batches(payload, max_bytes=10 * one + 2, max_tasks=None))
    assert [len(b) for b in batches] == [10] * 5
    assert [t for b in batches for t in b] == payload  # order kept, nothing lost or repeated
    assert [len(b) for b in _batches(payload, max_bytes=10**9, max_tasks=15)] == [15, 15, 15, 5]
    assert [len(b) for b in _batches(payload[:3], max_bytes=1, max_tasks=None)] == [1, 1, 1]  # never empty


def test_default_push_sends_few_big_requests_and_lists_only_projects_it_did_not_create(study):
    fake = CountingServer()
    res = push(study, units=units(600), client=fake, progress=False)
    assert res.imported == {"onc_a": 600, "onc_b": 600}
    assert fake.listings == []  # both projects were created by this push: nothing to list
    assert fake.batches == [(1, 600), (2, 600)]  # one request per project (600 small tasks < 4 MiB)
    res = push(Study.open(study.path), units=units(700), client=fake, progress=False, batch_bytes=30_000)
    assert sorted(fake.listings) == [1, 2]  # existing projects are listed (idempotent resume)
    assert res.imported == {"onc_a": 100, "onc_b": 100} and res.already == {"onc_a": 600, "onc_b": 600}
    assert all(n < 200 for _, n in fake.batches[2:])  # ~30 kB requests


def test_projects_are_filled_concurrently_when_the_server_has_workers(study):
    import threading

    barrier = threading.Barrier(2, timeout=20)

    class Concurrent(CountingServer):
        def import_tasks(self, pid, tasks):
            barrier.wait()  # both raters' imports must be in flight at once, else BrokenBarrierError
            return super().import_tasks(pid, tasks)

    fake = Concurrent(workers=4)
    res = push(study, units=units(30), client=fake, progress=False, batch_size=10)
    assert res.imported == {"onc_a": 30, "onc_b": 30}
    for p in fake.projects.values():
        assert [t["item_id"] for t in p["tasks"]] == [f"C{i}::m" for i in range(30)]


def test_concurrent_push_that_fails_reports_and_resumes_exactly(study):
    fake = CountingServer(workers=2, fail_after=3)
    with pytest.raises(ServerUnreachable, match="missing tasks were imported before -- run the same push"):
        push(study, units=units(25), client=fake, batch_size=10, progress=False)
    fake.fail_after = None
    res = push(Study.open(study.path), units=units(25), client=fake, batch_size=10, progress=False)
    assert sum(res.imported.values()) + sum(res.already.values()) == 50
    for p in fake.projects.values():
        items = [t["item_id"] for t in p["tasks"]]
        assert len(items) == 25 == len(set(items))


def test_serial_when_jobs_is_one(study):
    fake = CountingServer(workers=4)
    push(study, units=units(30), client=fake, progress=False, batch_size=10, jobs=1)
    assert [pid for pid, _ in fake.batches] == [1, 1, 1, 2, 2, 2]


def test_export_is_read_task_by_task_through_each():
    import io

    from goldboard.annotate.client import read_json_array

    tasks = [
        {"id": i, "data": {"item_id": f"C{i}", "text": "é" * 50}, "annotations": [{"lead_time": 1.5}]} for i in range(5)
    ]
    raw = json.dumps(tasks, ensure_ascii=False).encode()
    assert read_json_array(io.BytesIO(raw)) == tasks
    assert read_json_array(io.BytesIO(raw), lambda t: t["data"]["item_id"]) == [f"C{i}" for i in range(5)]
    for bad in (b'{"detail": "x"}', b"[{", b"<html>", b""):
        with pytest.raises(ValueError):
            read_json_array(io.BytesIO(bad))

    def handler(request):
        assert request.url.path == "/api/projects/7/export"
        return httpx.Response(200, content=raw)

    got = mocked(handler).export(7, each=lambda t: (t["id"], t["annotations"][0]["lead_time"]))
    assert got == [(i, 1.5) for i in range(5)]
    with pytest.raises(ServerError, match="export of project 7 that is not a JSON list of tasks"):
        mocked(lambda r: httpx.Response(200, content=b"[1, 2")).export(7)
