"""Issue 32, live: after the meeting, one rater edits 2 annotations and another deletes 3 through
Label Studio's API; the next ``goldboard pull --study S`` is refused (exit 1, the study
byte-identical), and with ``--add-to-adjudicated-round`` it is taken with every replaced rating kept
in ``rounds/1/superseded.csv`` and listed.  Before, the re-pull exited 0 and the old values were kept
nowhere."""

from __future__ import annotations

import csv

import pandas as pd
import pytest
from conftest import invoke_cli
from test_intake_repull import snapshot
from test_live_roundtrip import cases_files

from goldboard.adjudicate.decisions import Proposed, record_decisions
from goldboard.annotate import server as srv
from goldboard.annotate.client import connect
from goldboard.annotate.simulate import annotation_result, post_ratings
from goldboard.cases.ratings import read_ratings_csv
from goldboard.study import Study

pytestmark = pytest.mark.live
RATERS = ["onc_a", "onc_b"]


def pulled_supported_study(live_server, tmp_path, n: int) -> tuple[Study, list[str], object]:
    """A study pushed to the live server with ``n`` cases, every item rated "Supported" by both
    raters through Label Studio's API, and pulled: the study, its items, the admin client."""
    cases, outputs = cases_files(tmp_path, n=n)
    st = Study.init(tmp_path / "s", schema="mtb", raters=RATERS, data_dir=str(live_server.data_dir))
    invoke_cli("push", "--study", st.path, cases, "--outputs", outputs, code=0)
    st = Study.open(st.path)
    items = sorted(st.units()["item_id"])
    rows = [
        {"item_id": i, "rater": r, "field": "safety_label", "value": "Supported", "rationale": f"{r} ok"}
        for i in items
        for r in RATERS
    ]
    client = connect(st)
    post_ratings(st, pd.DataFrame(rows), client=client, progress=False)
    invoke_cli("pull", "--study", st.path, code=0)
    return st, items, client


def test_a_server_re_pull_changing_decided_ratings_is_refused_then_kept_when_accepted(live_server, tmp_path):
    st, items, client = pulled_supported_study(live_server, tmp_path, n=4)
    record_decisions(  # the meeting: every item decided (unanimous Supported)
        st.decisions_path, [Proposed(i, "safety_label", "Supported", "", "dr_chair") for i in items], source="sheet"
    )
    got = read_ratings_csv(st.ratings_path(1))
    got = got[got["field"] == "safety_label"].sort_values("item_id")
    ann = {(r["item_id"], r["rater"]): int(r["annotation_id"]) for r in got.to_dict("records")}
    creds = srv.read_credentials(live_server.data_dir)
    as_a = client.as_token(creds.token_for("onc_a"), "onc_a's token")
    as_b = client.as_token(creds.token_for("onc_b"), "onc_b's token")
    result = annotation_result(st.schema, {"safety_label": "Unsupported"}, "changed my mind")
    for i in items[:2]:  # onc_a edits two annotations after the meeting
        as_a.sdk.annotations.update(ann[(i, "onc_a")], result=result)
    for i in items[2:5]:  # onc_b deletes three
        as_b.delete_annotation(ann[(i, "onc_b")])
    before = snapshot(st.path)

    res = invoke_cli("pull", "--study", st.path)
    assert res.exit_code == 1, res.output
    line = res.output.strip().splitlines()[-1]
    assert line.startswith("Error: round 1 already has 8 adjudication decisions on 8 of its 8 items"), line
    assert "would change what was adjudicated" in line and "--add-to-adjudicated-round" in line, line
    assert f"{items[0]} onc_a safety_label: 'Supported' -> 'Unsupported'" in line, line
    assert snapshot(st.path) == before  # nothing written

    res = invoke_cli("pull", "--study", st.path, "--add-to-adjudicated-round", code=0)
    with open(st.path / "rounds/1/superseded.csv", newline="") as fh:
        kept = [r for r in csv.DictReader(fh) if r["field"] == "safety_label"]
    want = [(i, "onc_a", "Unsupported") for i in items[:2]] + [(i, "onc_b", "") for i in items[2:5]]
    assert sorted((r["item_id"], r["rater"], r["new_value"]) for r in kept) == sorted(want)
    assert all(r["value"] == "Supported" and r["annotation_id"] for r in kept)
    for i, r, new in want:
        shown = f"{i} {r} safety_label: 'Supported' -> " + (repr(new) if new else "removed")
        assert shown in res.output, res.output
    now = read_ratings_csv(st.ratings_path(1))
    now = now[now["field"] == "safety_label"]
    assert len(now) == 2 * len(items) - 3 and (now["value"] == "Unsupported").sum() == 2
    client.close()
