"""`goldboard status`: progress per rater and round, decisions open -- read from a live server,
and nothing in the study changes."""

from __future__ import annotations

import hashlib
import json

import pytest
from test_live_roundtrip import cases_files, desired_mtb, new_study, run

from goldboard.annotate.simulate import post_ratings
from goldboard.cases.load import load_units
from goldboard.study import Study

pytestmark = pytest.mark.live


def _snapshot(root) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


def test_status_counts_per_rater_and_open_decisions_without_writing(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=3)
    st = new_study(tmp_path, live_server)
    assert run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet").exit_code == 0
    st = Study.open(st.path)
    units = load_units(cases, outputs, schema="mtb")
    n = len(units)
    want = desired_mtb(units)
    items = list(units["item_id"])
    # onc_a labels everything, onc_b only the first two items
    post_ratings(st, want[(want.rater == "onc_a") | want.item_id.isin(items[:2])], progress=False)
    before = _snapshot(st.path)
    res = run("status", "--study", st.path, "--format", "json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    rows = {r["rater"]: r for r in got["rounds"]["1"]}
    assert (rows["onc_a"]["done"], rows["onc_a"]["total"]) == (n, n)
    assert (rows["onc_b"]["done"], rows["onc_b"]["total"]) == (2, n)
    assert rows["onc_a"]["last_annotation"].startswith("20") and rows["onc_b"]["last_annotation"].startswith("20")
    text = run("status", "--study", st.path).output
    assert f"onc_b              2 / {n}" in text and "done" in text
    assert _snapshot(st.path) == before  # reads, never writes
    # the adjudicator's open decisions
    post_ratings(st, want[(want.rater == "onc_b") & ~want.item_id.isin(items[:2])], progress=False)
    assert run("pull", "--study", st.path, "--quiet").exit_code == 0
    assert run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair").exit_code == 0
    st = Study.open(st.path)
    got = json.loads(run("status", "--study", st.path, "--format", "json").output)
    total = sum(a["total"] for a in got["adjudication"].values())
    assert got["adjudicator"] == "dr_chair" and total > 0 and got["decisions_open"] == total
    assert "still to decide (" in run("status", "--study", st.path).output
