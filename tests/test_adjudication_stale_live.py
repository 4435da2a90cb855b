"""A stale Label Studio adjudication never comes back (issue 32), against a real server.

The chair decides C-1 in Label Studio; a review sheet then decides otherwise.  Label Studio keeps
the chair's answer selected; clicking Update re-submits it (a new ``updated_at``).  Before the fix
``adjudicate pull`` logged that as a change (the old decision back in force, exit 0) and the page
still named the chair's decision as current.  Now the pull refuses it as a conflict, the task's
"Current decision" line names the sheet's decision, and ``--overrule-newer`` puts it back on purpose.
"""

from __future__ import annotations

import json
import time

import pytest
from conftest import invoke_cli
from test_adjudication_live import answer
from test_flags import MTB_PAIRS, P, U, mtb_table

from goldboard.adjudicate.decisions import Proposed, latest_decisions, read_decisions, record_decisions
from goldboard.annotate import server as srv
from goldboard.annotate.client import connect
from goldboard.fileio import write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study

pytestmark = pytest.mark.live
run = invoke_cli


def in_force(st):
    return latest_decisions(read_decisions(st.decisions_path))[("C-1", "safety_label")]


def test_old_answer_resubmitted_is_refused_and_page_shows_decision_in_force(live_server, tmp_path, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"], url=live_server.url)
    st.data_dir = str(live_server.data_dir)
    st.save()
    df = mtb_table()
    df["rationale"] = "judged on " + df["item_id"]
    write_csv_atomic(df, st.ratings_path(1))
    units = [
        {
            "item_id": f"C-{n}",
            "case_id": f"C-{n}",
            "output_id": "",
            "model": "m",
            "case_text": f"Case {n}",
            "output_text": f"Therapy {n}",
        }
        for n in range(1, len(MTB_PAIRS) + 1)
    ]
    write_jsonl_atomic(units, st.units_path)
    assert run("adjudicate", "push", "--study", st.path).exit_code == 0
    st = Study.open(st.path)
    pid = st.adjudication["projects"]["safety_label"]
    client = connect(st)
    tasks = {d["item_id"]: tid for tid, d in client.task_data(pid)}
    chair = client.as_token(srv.read_credentials(live_server.data_dir).token_for("adjudicator"))
    aid = chair.create_annotation(tasks["C-1"], answer(P, "ECOG 2 is a caveat"))
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 0, res.output
    assert in_force(st)["decision"] == P

    # the review sheet decides otherwise (what `adjudicate import` logs)
    time.sleep(1.1)  # the sheet's entry is logged after the Label Studio answer, to the second
    record_decisions(
        st.decisions_path,
        [
            Proposed(
                item_id="C-1",
                field="safety_label",
                decision=U,
                reason="the meeting: unsafe",
                adjudicator="dr_x",
                where="review.xlsx!G2",
            )
        ],
        source="sheet",
        sheet="review.xlsx",
    )
    time.sleep(1.1)
    chair.sdk.annotations.update(aid, result=answer(P, "ECOG 2 is a caveat"))  # Update on the old answer
    before = st.decisions_path.read_bytes()
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 1, res.output
    assert f"project {pid} task {tasks['C-1']} annotation {aid}" in res.output
    assert "older than the decision in force" in res.output and "--overrule-newer" in res.output
    assert "Traceback" not in res.output
    assert st.decisions_path.read_bytes() == before and in_force(st)["decision"] == U
    page = dict(client.task_data(pid))[tasks["C-1"]]["current_decision"]
    assert page.startswith(f"Current decision: {U}") and "dr_x" in page and "review sheet review.xlsx" in page

    res = run("adjudicate", "pull", "--study", st.path, "--overrule-newer")
    assert res.exit_code == 0, res.output
    entry = in_force(st)
    assert entry["decision"] == P and entry["overrules_newer"]
    log = [json.loads(x) for x in st.decisions_path.read_text().splitlines()]
    assert [e["decision"] for e in log] == [P, U, P]
