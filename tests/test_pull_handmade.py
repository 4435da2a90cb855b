"""Pull from a Label Studio project goldboard did not create (live server).

A hand-made project: its own label config (a single Text pane, the spelling 'Insufficient
Info'), tasks keyed by ``case_id`` (no ``item_id``), annotators who are Label Studio users with
other names than the study's raters, one annotation by a non-rater.  ``pull --project ID
--item-key case_id --rater USER=RATER`` maps it; a later plain ``pull`` repeats it; the same
project's hand-downloaded export gives the same ratings offline (``--from-export`` with user ids).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import run_cli as run

from goldboard.annotate import server as srv
from goldboard.annotate.client import connect
from goldboard.study import Study

pytestmark = pytest.mark.live

CONFIG = """<View>
  <Text name="text" value="$patient_summary"/>
  <Choices name="safety_label" toName="text" choice="single" required="true">
    <Choice value="Supported"/><Choice value="Partially Supported"/>
    <Choice value="Unsupported"/><Choice value="Insufficient Info"/>
  </Choices>
  <TextArea name="rationale" toName="text"/>
</View>"""
CASES = [
    ("H-1", "Stage IV NSCLC, EGFR L858R, ECOG 1.", "Osimertinib"),
    ("H-2", "NSCLC, KRAS G12C, stage unknown.", "Sotorasib"),
    ("H-3", "NSCLC, ALK fusion, ECOG 3.", "Alectinib"),
]
LABELS = {  # (onc_a, onc_b)
    "H-1": ("Supported", "Supported"),
    "H-2": ("Insufficient Info", "Supported"),
    "H-3": ("Partially Supported", "Partially Supported"),
}


def result(label: str, why: str) -> list[dict]:
    return [
        {"from_name": "safety_label", "to_name": "text", "type": "choices", "value": {"choices": [label]}},
        {"from_name": "rationale", "to_name": "text", "type": "textarea", "value": {"text": [why]}},
    ]


def test_hand_made_project_live_and_from_export(convention_server, tmp_path):
    # a hand-made project shared by two raters: a team's own Label Studio, i.e. everyone in one
    # organization (the embedded default keeps each rater in an organization of their own)
    live_server = convention_server
    s = tmp_path / "hand"
    Study.init(s, schema="mtb", raters=["dr_a", "dr_b"], data_dir=str(live_server.data_dir))
    st = Study.open(s)
    creds = srv.read_credentials(live_server.data_dir)
    admin = connect(st)
    pid = admin.create_project("hand-made MTB review", CONFIG, maximum_annotations=2)
    admin.import_tasks(
        pid, [{"data": {"case_id": c, "patient_summary": p, "proposed_therapy": t}} for c, p, t in CASES]
    )
    tasks = {d["case_id"]: tid for tid, d in admin.task_data(pid)}
    for j, user in enumerate(["onc_a", "onc_b"]):
        me = admin.as_token(creds.users[user].token, f"{user}'s token")
        for case, labels in LABELS.items():
            me.create_annotation(tasks[case], result(labels[j], f"{user} on {case}"), lead_time=12.5)
        me.close()
    admin.create_annotation(tasks["H-1"], result("Unsupported", "admin tried it"))  # not a rater

    email_b = creds.users["onc_b"].email
    res = run("pull", "--study", s, "--project", pid, "--item-key", "case_id", "--rater", f"onc_a=dr_a,{email_b}=dr_b")
    assert "dr_a: 3 rated, 0 invalid" in res.output and "dr_b: 3 rated, 0 invalid" in res.output
    assert "3 new items recorded in units.jsonl" in res.output
    got = pd.read_csv(s / "rounds/1/ratings.csv", dtype=str, keep_default_na=False)
    sl = got[got.field == "safety_label"].set_index(["item_id", "rater"])["value"]
    assert sl["H-2", "dr_a"] == "Insufficient Information"  # the project's spelling, canonicalised
    assert sl["H-1", "dr_b"] == "Supported" and len(sl) == 6
    assert set(got["project_id"]) == {str(pid)}
    assert got[(got.item_id == "H-3") & (got.rater == "dr_b")]["rationale"].iloc[0] == "onc_b on H-3"
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    assert len(inv) == 1 and "not a study rater" in inv["reason"].iloc[0] and inv["item_id"].iloc[0] == "H-1"
    st = Study.open(s)
    assert st.round(1).projects == {"*": pid} and st.round(1).mode == "shared"
    assert st.extra["item_key"] == "case_id" and st.extra["label_studio_users"]["onc_a"] == "dr_a"
    units = {u["item_id"]: u for u in map(json.loads, (s / "units.jsonl").read_text().splitlines())}
    assert "EGFR L858R" in units["H-1"]["case_text"]
    pj = json.loads((s / "rounds/1/pull.json").read_text())
    assert any("label config on the server differs" in w for w in pj["warnings"])

    # a later plain pull repeats the mapping; agreement and flags work on the study
    before = (s / "rounds/1/ratings.csv").read_bytes()
    run("pull", "--study", s, "--quiet")
    assert (s / "rounds/1/ratings.csv").read_bytes() == before
    flags = json.loads(run("flag", "--study", s, "--format", "json").stdout)
    assert flags["summary"]["items_flagged"] == 1
    assert flags["summary"]["by_boundary"]["sufficiency_vs_optimization"]["count"] == 1

    # the hand-downloaded export, offline (unreachable URL), raters by user id
    export = tmp_path / "export.json"
    export.write_text(json.dumps(admin.export(pid)))
    admin.close()
    s2 = tmp_path / "offline"
    Study.init(s2, schema="mtb", raters=["dr_a", "dr_b"], url="http://127.0.0.1:9")
    ida, idb = creds.users["onc_a"].id, creds.users["onc_b"].id
    res = run(
        "pull", "--study", s2, "--from-export", export, "--item-key", "case_id", "--rater", f"{ida}=dr_a,{idb}=dr_b"
    )
    got2 = pd.read_csv(s2 / "rounds/1/ratings.csv", dtype=str, keep_default_na=False)
    cols = ["item_id", "rater", "field", "value", "rationale", "annotation_id"]
    assert got2[cols].values.tolist() == got[cols].values.tolist()
    # a user the server does not have: one line with did-you-mean
    res = run("pull", "--study", s, "--project", pid, "--rater", "onc_c=dr_a", code=1)
    assert "no Label Studio user 'onc_c'" in res.output and "did you mean" in res.output


def test_hand_made_project_ids_with_a_hidden_character_are_refused_live(convention_server, tmp_path):
    """Issue 23 (campaign 6 U03): a task whose --item-key value holds a zero-width space was stored
    as a new item that looks like 'H-1'; refused naming the task, study.toml and the round untouched."""
    from goldboard.cases.ids import hidden_id_reason

    s = tmp_path / "hidden"
    Study.init(s, schema="mtb", raters=["dr_a", "dr_b"], data_dir=str(convention_server.data_dir))
    creds = srv.read_credentials(convention_server.data_dir)
    admin = connect(Study.open(s))
    pid = admin.create_project("hand-made, a pasted id", CONFIG, maximum_annotations=2)
    admin.import_tasks(pid, [{"data": {"case_id": "H-1\u200b", "patient_summary": "p", "proposed_therapy": "t"}}])
    ((tid, _),) = admin.task_data(pid)
    me = admin.as_token(creds.users["onc_a"].token, "onc_a's token")
    me.create_annotation(tid, result("Supported", "fine"), lead_time=3.0)
    me.close()
    admin.close()
    before = (s / "study.toml").read_bytes()
    res = run("pull", "--study", s, "--project", pid, "--item-key", "case_id", "--rater", "onc_a=dr_a", code=1)
    assert f"task {tid} (case_id): {hidden_id_reason('item id', 'H-1' + chr(0x200B))}" in res.output, res.output
    assert (s / "study.toml").read_bytes() == before and not (s / "rounds").exists()
