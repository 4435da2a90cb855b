"""Round trip on a real Label Studio: push synthetic cases, two raters annotate through
the API with their own tokens, pull, and the ratings table is checked cell by cell.
Plus: interrupted push + rerun, invalid annotations kept aside, every built-in schema's
config accepted by the server, and the error paths (token, reachability, deleted
project, changed config), each a one-line error with a non-zero exit."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.annotate import server as srv
from goldboard.annotate.client import Client, ServerUnreachable, connect
from goldboard.annotate.push import push
from goldboard.annotate.simulate import annotation_result, post_ratings, push_with_ratings
from goldboard.cases.load import load_units
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.cases.synth import synthesize, write_records
from goldboard.errors import LabelStudioError
from goldboard.label_configs.schema import builtin_names, load_schema
from goldboard.label_configs.xml import to_label_studio_xml
from goldboard.study import Study
from goldboard.workflows.intake import pull

pytestmark = pytest.mark.live
RATERS = ["onc_a", "onc_b"]


# every test here runs on the embedded SQLite server and on PostgreSQL behind gunicorn workers
@pytest.fixture(scope="module")
def live_server(backend_server):
    return backend_server


@pytest.fixture()
def fresh_server(fresh_backend_server):
    return fresh_backend_server


def cases_files(tmp: Path, schema: str = "mtb", n: int = 8, seed: int = 3) -> tuple[Path, Path | None]:
    cases, outputs = synthesize(schema, n, seed=seed)
    c = tmp / f"{schema}_cases.jsonl"
    write_records(cases, c)
    if not outputs:
        return c, None
    o = tmp / f"{schema}_outputs.jsonl"
    write_records(outputs, o)
    return c, o


def new_study(tmp: Path, server, schema: str = "mtb", name: str = "study") -> Study:
    return Study.init(tmp / name, schema=schema, raters=RATERS, data_dir=str(server.data_dir))


run = invoke_cli


def desired_mtb(units: pd.DataFrame) -> pd.DataFrame:
    """Deterministic, varied ratings for both raters (multi, empty multi, tricky rationale)."""
    labels = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
    missing = ["", "stage", "ecog_status|pdl1_expression", "stage|prior_therapy|brain_metastasis"]
    rows = []
    for i, item in enumerate(units["item_id"]):
        for j, r in enumerate(RATERS):
            lab = labels[(i + 2 * j * (i % 2)) % 4]
            mi = missing[(i + j) % 4] if lab in ("Insufficient Information", "Partially Supported") else ""
            rat = f"{r} on {item}: «ECOG» =1+1, line1\nline2" if i % 3 == 0 else f"{r} #{i}"
            for fname, v in (("safety_label", lab), ("missing_info", mi)):
                rows.append(
                    {
                        "item_id": item,
                        "rater": r,
                        "field": fname,
                        "value": v,
                        "rationale": rat,
                        "lead_time": 10 + i + j / 4,
                    }
                )
    return pd.DataFrame(rows)


def server_tasks(client: Client, pid: int) -> dict[str, int]:
    return {d["item_id"]: tid for tid, d in client.task_data(pid)}


# --------------------------------------------------------------------------- the round trip


def test_blinded_round_trip_cell_by_cell(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path)
    st = new_study(tmp_path, live_server)
    res = run("push", "--study", st.path, cases, "--outputs", outputs)
    assert res.exit_code == 0, res.output
    st = Study.open(st.path)
    rnd = st.round(1)
    assert rnd.mode == "blinded" and set(rnd.projects) == set(RATERS)
    assert rnd.projects["onc_a"] != rnd.projects["onc_b"]
    units = load_units(cases, outputs, schema="mtb")
    assert rnd.units == len(units) == 16
    client = connect(st)
    creds = srv.read_credentials(live_server.data_dir)
    for secret in creds.secrets():
        assert secret not in res.output
    for r in RATERS:  # same tasks in each rater's project, with the ids raters see
        tasks = dict((d["item_id"], d) for _, d in client.task_data(rnd.projects[r]))
        assert sorted(tasks) == sorted(units["item_id"])
        u = units.set_index("item_id")
        for item, d in tasks.items():
            assert (d["case_id"], d["output_id"], d["model"]) == (
                u.loc[item, "case_id"],
                u.loc[item, "output_id"],
                u.loc[item, "model"],
            )
            assert d["output_text"] == u.loc[item, "output_text"]
    want = desired_mtb(units)
    posted = post_ratings(st, want, progress=False)
    assert posted.posted == 2 * len(units)

    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0, res.output
    got = read_ratings_csv(st.ratings_path(1))
    assert list(got.columns) == RATINGS_COLUMNS
    assert len(got) == len(want)
    task_ids = {r: server_tasks(client, rnd.projects[r]) for r in RATERS}
    g = got.set_index(["item_id", "rater", "field"])
    assert not g.index.duplicated().any()
    u = units.set_index("item_id")
    for w in want.itertuples():
        row = g.loc[(w.item_id, w.rater, w.field)]
        assert row["value"] == w.value
        assert row["rationale"] == w.rationale
        assert row["round"] == 1
        assert (row["case_id"], row["output_id"], row["model"]) == (
            u.loc[w.item_id, "case_id"],
            u.loc[w.item_id, "output_id"],
            u.loc[w.item_id, "model"],
        )
        assert row["project_id"] == str(rnd.projects[w.rater])
        assert row["task_id"] == str(task_ids[w.rater][w.item_id])
        assert int(row["annotation_id"]) in posted.annotation_ids
        assert float(row["lead_time"]) == w.lead_time
        assert pd.Timestamp(row["annotated_at"]).tzinfo is not None
    inv = pd.read_csv(st.invalid_path(1), dtype=str)
    assert len(inv) == 0
    summary = json.loads(st.pull_report_path(1).read_text())
    assert summary["valid_annotations"] == 2 * len(units)
    assert all(summary["raters"][r]["unannotated"] == 0 for r in RATERS)

    # rerun push: nothing new, nothing duplicated
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet")
    assert res.exit_code == 0 and "0 tasks imported, 16 already there" in res.output
    assert all(len(client.task_data(pid)) == 16 for pid in rnd.projects.values())


def test_shared_round_is_refused_where_the_server_keeps_raters_apart(live_server, tmp_path):
    # the embedded server puts each rater in an organization of their own: one project cannot be
    # reached by all raters, so --shared is refused with the reason, before anything is created
    cases, outputs = cases_files(tmp_path, n=3)
    st = new_study(tmp_path, live_server)
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--shared", "--quiet")
    assert res.exit_code == 1 and "organization of their own" in res.output and "Traceback" not in res.output
    assert not Study.open(st.path).rounds or not Study.open(st.path).round(1).projects


def test_invalid_annotations_are_kept_aside_not_lost(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=2)
    st = new_study(tmp_path, live_server)
    push(st, cases, outputs, progress=False)
    client = connect(st)
    creds = srv.read_credentials(live_server.data_dir)
    a = client.as_token(creds.token_for("onc_a"))
    b = client.as_token(creds.token_for("onc_b"))
    rnd = st.round(1)
    ta, tb = server_tasks(client, rnd.projects["onc_a"]), server_tasks(client, rnd.projects["onc_b"])
    items = sorted(ta)
    bad_choice = [
        {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": ["Probably fine"]}},
        {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["hm"]}},
    ]
    unknown_field = annotation_result(st.schema, {"safety_label": "Supported", "mood": "happy"}, "ok")
    good = annotation_result(st.schema, {"safety_label": "Unsupported"}, "no evidence")
    ids = {
        "bad": a.create_annotation(ta[items[0]], bad_choice),
        "unknown": b.create_annotation(tb[items[0]], unknown_field),
        "empty": a.create_annotation(ta[items[1]], []),
        "old": b.create_annotation(tb[items[1]], annotation_result(st.schema, {"safety_label": "Supported"}, "v1")),
        "new": b.create_annotation(tb[items[1]], good),
    }
    # onc_b cannot annotate in onc_a's project: the server refuses (onc_a's organization)
    with pytest.raises(LabelStudioError):
        b.create_annotation(ta[items[2]], good)
    # an account that is no rater (the organization's own goldboard account) annotates there: held out
    ids["intruder"] = client.as_token(creds.org_token("onc_a")).create_annotation(ta[items[2]], good)
    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0, res.output
    assert "held out: 4 invalid, 1 superseded" in res.output
    got = read_ratings_csv(st.ratings_path(1))
    assert set(got.annotation_id) == {str(ids["new"])}
    assert got[got.field == "safety_label"].value.tolist() == ["Unsupported"]
    inv = pd.read_csv(st.invalid_path(1), dtype=str, keep_default_na=False).set_index("annotation_id")
    assert set(inv.index) == {str(ids[k]) for k in ("bad", "unknown", "empty", "old", "intruder")}
    assert "'Probably fine' is not a value of safety_label" in inv.loc[str(ids["bad"]), "reason"]
    assert json.loads(inv.loc[str(ids["bad"]), "result"]) == bad_choice  # verbatim
    assert "unknown field 'mood'" in inv.loc[str(ids["unknown"]), "reason"]
    assert inv.loc[str(ids["empty"]), "reason"] == "empty result"
    assert inv.loc[str(ids["old"]), "kind"] == "superseded"
    assert "annotated by goldboard-org-onc_a (user" in inv.loc[str(ids["intruder"]), "reason"]
    assert inv.loc[str(ids["intruder"]), "rater"] == "onc_a"
    summary = json.loads(st.pull_report_path(1).read_text())
    # each item once (cl22): an item whose only annotation was held out as invalid is "invalid", not
    # also "unannotated" (the intruder's annotation is not onc_a's: that item is unannotated)
    n = len(items)
    assert summary["raters"]["onc_a"]["unannotated"] == n - 2 and summary["raters"]["onc_a"]["invalid"] == 2
    assert summary["raters"]["onc_b"]["unannotated"] == n - 2 and summary["raters"]["onc_b"]["invalid"] == 1
    assert "onc_a: 0 rated, 2 invalid, 0 superseded; 1 annotation by another user held out of onc_a's project " in (
        res.output
    )
    assert f"({n} items: 0 rated + 2 invalid + {n - 2} unannotated)" in res.output, res.output
    assert f"onc_b: 1 rated, 1 invalid, 1 superseded ({n} items: 1 rated + 1 invalid + {n - 2} unannotated)" in (
        res.output
    )


def test_every_builtin_schema_round_trips(live_server, tmp_path):
    for name in builtin_names():
        schema = load_schema(name)
        cases, outputs = cases_files(tmp_path, schema=name, n=2)
        st = new_study(tmp_path, live_server, schema=name, name=f"study_{name}")
        units = load_units(cases, outputs, schema=name)
        client = connect(st)
        rows = []
        for i, item in enumerate(units["item_id"]):
            for r in RATERS:
                for f in schema.fields:
                    if f.kind == "text":
                        continue
                    if f.kind == "multi":
                        v = "|".join(f.categories[: 1 + (i % 2)])
                    else:
                        v = f.categories[(i + len(r)) % len(f.categories)]
                    rows.append({"item_id": item, "rater": r, "field": f.name, "value": v, "rationale": f"why {i}"})
        want = pd.DataFrame(rows)
        push_with_ratings(st, units, want, progress=False)  # the server parses the config on project creation
        for pid in st.round(1).projects.values():
            client.validate_label_config(pid, to_label_studio_xml(schema))
        res = run("pull", "--study", st.path, "--quiet")
        assert res.exit_code == 0, (name, res.output)
        got = read_ratings_csv(st.ratings_path(1)).set_index(["item_id", "rater", "field"])
        rat = schema.rationale_field
        expected = want if rat is None else want[want.field != rat.name]
        assert len(got) == len(expected), name
        for w in expected.itertuples():
            assert got.loc[(w.item_id, w.rater, w.field), "value"] == w.value, (name, w)
            if rat is not None:
                assert got.loc[(w.item_id, w.rater, w.field), "rationale"] == w.rationale


def test_server_dies_mid_push_then_rerun_completes(fresh_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=10)  # 20 units
    st = new_study(tmp_path, fresh_server)
    port, data_dir = fresh_server.port, fresh_server.data_dir

    class Dying(Client):
        calls = 0

        def import_tasks(self, project_id, tasks):
            Dying.calls += 1
            if Dying.calls == 3:
                fresh_server.stop()  # the server dies after two batches went in
            return super().import_tasks(project_id, tasks)

    client = Dying(connect(st).conn)
    with pytest.raises(ServerUnreachable, match="cannot reach Label Studio.*run the same push again"):
        push(st, cases, outputs, client=client, batch_size=7, progress=False, jobs=1)
    st = Study.open(st.path)
    assert set(st.round(1).projects) == set(RATERS)  # recorded before the crash
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet")
    assert res.exit_code != 0 and "not running" in res.output
    with srv.EmbeddedServer(data_dir, port=port):
        res = run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet")
        assert res.exit_code == 0, res.output
        client = connect(st)
        for r, pid in st.round(1).projects.items():
            items = [d["item_id"] for _, d in client.task_data(pid)]
            assert len(items) == 20 and len(set(items)) == 20, r
        assert "6 tasks imported, 14 already there" in res.output  # onc_a: 2 batches of 7 went in
        assert "20 tasks imported, 0 already there" in res.output  # onc_b: nothing yet
        res = run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet")
        assert res.output.count("0 tasks imported, 20 already there") == 2


# --------------------------------------------------------------------------- error paths


def test_wrong_token_and_unreachable_server(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=1)
    st = Study.init(tmp_path / "ext", schema="mtb", raters=RATERS, url=live_server.url)
    wrong = "f" * 40
    res = run("push", "--study", st.path, cases, "--outputs", outputs, env={"LABEL_STUDIO_API_KEY": wrong})
    assert res.exit_code == 2
    assert "refused the API token from LABEL_STUDIO_API_KEY" in res.output and "401" in res.output
    assert wrong not in res.output
    assert len(res.output.strip().splitlines()) == 1
    dead = Study.init(tmp_path / "dead", schema="mtb", raters=RATERS, url=f"http://127.0.0.1:{srv.free_port()}")
    res = run("push", "--study", dead.path, cases, "--outputs", outputs, env={"LABEL_STUDIO_API_KEY": wrong})
    assert res.exit_code == 2 and "cannot reach Label Studio at http://127.0.0.1:" in res.output
    assert wrong not in res.output
    res = run("pull", "--study", dead.path)
    assert res.exit_code != 0 and "no rounds yet" in res.output
    off = Study.init(tmp_path / "off", schema="mtb", raters=RATERS, data_dir=str(tmp_path / "no-server"))
    res = run("push", "--study", off.path, cases, "--outputs", outputs)
    assert res.exit_code == 2 and "embedded Label Studio server" in res.output and "is not running" in res.output


def test_deleted_project_and_changed_config(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=1)
    st = new_study(tmp_path, live_server)
    push(st, cases, outputs, progress=False)
    client = connect(st)
    pa, pb = st.round(1).projects["onc_a"], st.round(1).projects["onc_b"]
    xml = to_label_studio_xml(st.schema)
    client.update_project_config(
        pb,
        xml.replace(
            '<Choice value="Unsupported" alias="Unsupported"', '<Choice value="Not supported" alias="Not supported"'
        ),
    )
    res = run("push", "--study", st.path, cases, "--outputs", outputs)
    assert res.exit_code == 2 and f"onc_b's project (id {pb})" in res.output
    assert "label config no longer matches schema mtb" in res.output
    assert "push to a new round with --round 2" in res.output  # the library names round_number, the CLI the flag
    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0 and "label config on the server differs" in res.output
    client.delete_project(pa)
    res = run("push", "--study", st.path, cases, "--outputs", outputs)
    assert res.exit_code == 2 and f"onc_a's project (id {pa}) no longer exists" in res.output
    assert "push to a new round with --round 2" in res.output
    res = run("pull", "--study", st.path)
    assert res.exit_code == 2 and f"project {pa} no longer exists" in res.output
    assert not st.ratings_path(1).exists() or "onc_a" not in st.ratings_path(1).read_text()


# --------------------------------------------------------------------------- several users at once


def test_pull_keeps_working_while_another_rater_pushes_and_posts(live_server, tmp_path):
    """One study is pulled (twice, projects exported at once) while another study is pushed and a
    rater posts annotations: everything finishes (bounded), nothing is lost or doubled, and the
    pulls read exactly the ratings that were there."""
    import threading

    cases, outputs = cases_files(tmp_path, n=30, seed=5)  # 60 units
    units = load_units(cases, outputs, schema="mtb")
    want = desired_mtb(units)
    st = new_study(tmp_path, live_server, name="pulled")
    push_with_ratings(st, units, want, progress=False)
    st = Study.open(st.path)
    other = new_study(tmp_path, live_server, name="pushed")
    (tmp_path / "other").mkdir()
    cases2, outputs2 = cases_files(tmp_path / "other", n=150, seed=9)  # 300 units
    posting = new_study(tmp_path, live_server, name="posting")
    push(posting, cases, outputs, progress=False)
    posting = Study.open(posting.path)
    errors: list[BaseException] = []
    pulls: list = []

    def guarded(fn):
        def run_it():
            try:
                fn()
            except BaseException as exc:  # reported below
                errors.append(exc)

        return run_it

    def pull_twice():
        for _ in range(2):
            with connect(st) as c:
                pulls.append(pull(st, client=c, progress=False, write=False, jobs=2))

    def push_other():
        with connect(other) as c:
            push(other, cases2, outputs2, client=c, progress=False, batch_size=50)

    def post_as_rater():
        post_ratings(posting, want[want.rater == "onc_b"].head(40), progress=False)

    threads = [threading.Thread(target=guarded(f)) for f in (pull_twice, push_other, post_as_rater)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a client was still waiting after 300 s"
    assert not errors, errors
    expected = want.set_index(["item_id", "rater", "field"])["value"].sort_index()
    for res in pulls:
        got = res.ratings.set_index(["item_id", "rater", "field"])["value"].sort_index()
        assert got.equals(expected)
    client = connect(other)
    for pid in Study.open(other.path).round(1).projects.values():
        items = [d["item_id"] for _, d in client.task_data(pid)]
        assert len(items) == 300 == len(set(items))
    assert len(pulls) == 2
    posted = pull(posting, progress=False, write=False)
    assert posted.summary["valid_annotations"] == 20 and posted.summary["invalid_annotations"] == 0
