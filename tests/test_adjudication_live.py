"""Adjudication in a real Label Studio server: push only the disagreements, adjudicate, pull."""

from __future__ import annotations

import json

import pytest
from conftest import invoke_cli
from test_flags import MTB_PAIRS, I, P, S, U, mtb_table

from goldboard.annotate import server as srv
from goldboard.annotate.client import AuthenticationFailed, connect
from goldboard.fileio import write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study

pytestmark = pytest.mark.live

EVIL = '=HYPERLINK("http://evil.example/","<b>click</b>")'


run = invoke_cli


def answer(decision, reason=None):
    result = [{"from_name": "decision", "to_name": "flags", "type": "choices", "value": {"choices": [decision]}}]
    if reason:
        result.append({"from_name": "reason", "to_name": "flags", "type": "textarea", "value": {"text": [reason]}})
    return result


def test_push_adjudicate_pull(live_server, tmp_path, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"], url=live_server.url)
    st.data_dir = str(live_server.data_dir)
    st.save()
    df = mtb_table()
    df["rationale"] = "judged on " + df["item_id"]  # rationales that do not name the rater
    write_csv_atomic(df, st.ratings_path(1))
    units = [
        {
            "item_id": f"C-{n}",
            "case_id": f"C-{n}",
            "output_id": "",
            "model": "model-x",
            "case_text": f"Case {n}",
            "output_text": f"Therapy {n}",
        }
        for n in range(1, len(MTB_PAIRS) + 1)
    ]
    units[0]["output_text"] = EVIL
    write_jsonl_atomic(units, st.units_path)

    res = run("adjudicate", "push", "--study", st.path, "--anonymise")
    assert res.exit_code == 0, res.output
    assert "17 tasks imported, 0 already there" in res.output
    st = Study.open(st.path)
    pid = st.adjudication["projects"]["safety_label"]
    client = connect(st)
    config = client.project(pid)["label_config"]
    assert "HyperText" not in config and "<Text" in config
    tasks = {d["item_id"]: (tid, d) for tid, d in client.task_data(pid)}
    assert len(tasks) == 17 and "C-25" not in tasks  # agreed items are not pushed
    c1 = tasks["C-1"][1]
    assert c1["output_text"] == EVIL  # shown verbatim in a plain Text tag
    assert {c1["rater_1_name"], c1["rater_2_name"]} == {"Rater 1", "Rater 2"}
    assert sorted(c1[k].split("\n")[0] for k in ("rater_1", "rater_2")) == [I, S]
    assert not any("onc_" in v or "model-x" in v for _, d in tasks.values() for v in map(str, d.values()))
    # idempotent
    res = run("adjudicate", "push", "--study", st.path, "--anonymise")
    assert res.exit_code == 0 and "0 tasks imported, 17 already there" in res.output
    res = run("adjudicate", "push", "--study", st.path)
    assert res.exit_code != 0 and "--anonymise" in res.output

    # the projects are in the adjudicator's own organization (default name "adjudicator"): a rater is refused
    creds = srv.read_credentials(live_server.data_dir)
    adjudicator = client.as_token(creds.token_for("adjudicator"))
    adjudicator.create_annotation(tasks["C-1"][0], answer(P, "ECOG 2 is a caveat, not missing information"))
    adjudicator.create_annotation(tasks["C-10"][0], answer(S))
    with pytest.raises(AuthenticationFailed):
        client.as_token(creds.token_for("onc_a")).create_annotation(tasks["C-11"][0], answer(S))
    client.create_annotation(tasks["C-11"][0], answer("unresolved", "need the trial protocol"))  # study lead

    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 0, res.output
    assert "3 new decisions (1 of them 'unresolved': left open, no value decided), 0 changed, 0 unchanged" in res.output
    log = [json.loads(x) for x in st.decisions_path.read_text().splitlines()]
    got = {e["item_id"]: (e["decision"], e["adjudicator"], e["independent"], e["source"]) for e in log}
    assert got == {
        "C-1": (P, "adjudicator", True, "label_studio"),
        "C-10": (S, "adjudicator", True, "label_studio"),
        "C-11": ("unresolved", "admin", True, "label_studio"),
    }
    before = st.decisions_path.read_bytes()
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 3 unchanged" in res.output
    assert st.decisions_path.read_bytes() == before

    # an override without a reason blocks the whole pull; nothing recorded
    bad = client.create_annotation(tasks["C-2"][0], answer(U))
    client.create_annotation(tasks["C-3"][0], answer(I))  # valid, still not recorded
    # a second annotation changing C-10 (S -> U) without a reason: changing a decision needs one
    change = client.create_annotation(tasks["C-10"][0], answer(U))
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code != 0
    assert f"project {pid} task {tasks['C-2'][0]}" in res.output and "reason required" in res.output
    assert (
        f"project {pid} task {tasks['C-10'][0]} annotation {change} (item C-10, safety_label): reason required: "
        f'this changes the decision in force for item "C-10", safety_label from "{S}"'
    ) in res.output
    assert st.decisions_path.read_bytes() == before
    client.delete_annotation(bad)
    client.delete_annotation(change)
    client.create_annotation(tasks["C-10"][0], answer(U, "the trial excluded ECOG 2"))
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 0, res.output
    assert f'  "C-3" safety_label: (undecided) -> "{I}" (by admin)' in res.output  # every change printed
    assert f'  "C-10" safety_label: "{S}" -> "{U}" (by admin)' in res.output
    assert "1 new decisions, 1 changed, 3 unchanged" in res.output

    res = run("gold", "export", "--study", st.path)
    assert res.exit_code == 0, res.output
    gold = (st.gold_dir / "v1" / "gold.csv").read_text()
    assert f"C-1,C-1,,,safety_label,{P},adjudicated" in gold
    assert "C-11,C-11,,,safety_label,,unresolved" in gold
    assert f"C-10,C-10,,,safety_label,{U},adjudicated" in gold


def test_push_pull_multi_select_field(live_server, tmp_path, monkeypatch):
    """missing_info (multi-select) gets its own project with Choices choice="multiple"; ticked
    values, none and unresolved come back canonical."""
    from test_adjudication_roundtrip import MI, mtb_table_with_missing_info

    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"], url=live_server.url)
    st.data_dir = str(live_server.data_dir)
    st.save()
    write_csv_atomic(mtb_table_with_missing_info(), st.ratings_path(1))
    res = run("adjudicate", "push", "--study", st.path)
    assert res.exit_code == 0, res.output
    assert "safety_label: project" in res.output and "17 tasks imported" in res.output
    assert f"{MI}: project" in res.output and "12 tasks imported" in res.output
    st = Study.open(st.path)
    pid = st.adjudication["projects"][MI]
    client = connect(st)
    config = client.project(pid)["label_config"]
    assert 'choice="multiple"' in config and "HyperText" not in config
    tasks = {d["item_id"]: (tid, d) for tid, d in client.task_data(pid)}
    assert tasks["C-1"][1]["rater_1"].startswith("Stage | ECOG status") and tasks["C-1"][1]["rater_2"].startswith(
        "none"
    )
    client.create_annotation(tasks["C-1"][0], answer_multi(["ecog_status", "stage"]))
    client.create_annotation(tasks["C-2"][0], answer_multi(["none"]))
    client.create_annotation(
        tasks["C-24"][0], answer_multi(["variant_actionability", "biomarker_validation"], "both are missing")
    )
    client.create_annotation(tasks["C-21"][0], answer_multi(["unresolved"]))
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 0, res.output
    assert "4 new decisions" in res.output
    log = {e["item_id"]: e["decision"] for e in map(json.loads, st.decisions_path.read_text().splitlines())}
    assert log == {
        "C-1": "stage|ecog_status",
        "C-2": "",
        "C-24": "biomarker_validation|variant_actionability",
        "C-21": "unresolved",
    }
    res = run("gold", "export", "--study", st.path)
    assert res.exit_code == 0, res.output
    gold = (st.gold_dir / "v1" / "gold.csv").read_text()
    assert f"C-2,C-2,,,{MI},,adjudicated" in gold and f"C-1,C-1,,,{MI},stage|ecog_status,adjudicated" in gold


def answer_multi(choices, reason=None):
    result = [{"from_name": "decision", "to_name": "flags", "type": "choices", "value": {"choices": choices}}]
    if reason:
        result.append({"from_name": "reason", "to_name": "flags", "type": "textarea", "value": {"text": [reason]}})
    return result
