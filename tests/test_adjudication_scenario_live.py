"""Issue 22's 12-case scenario against a live Label Studio: two oncologists' ratings, a chair
deciding every disagreement in the review workbook, then `adjudicate push`/`pull` with a
confirmation that has no reason and one changed value, then the old sheet again.

Ends with: only open rows pushed (decided rows only with --include-decided, each showing its
decision in force), gold keeping every reason, 1 change reported for 1 changed value,
`status` showing 0 open, one adjudicator."""

from __future__ import annotations

import json

import pytest
from conftest import invoke_cli
from test_adjudication_live import answer
from test_adjudication_roundtrip import fill
from test_flags import I, P, S, U, ratings_frame

from goldboard.annotate import server as srv
from goldboard.annotate.client import connect
from goldboard.fileio import write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study

pytestmark = pytest.mark.live
run = invoke_cli

# 12 cases, (onc_a, onc_b): 9 disagreements (MTB-01 .. MTB-09), 3 agreements
PAIRS = [(I, S), (S, I), (I, P), (P, I), (S, U), (U, S), (P, U), (U, P), (S, P), (S, S), (P, P), (U, U)]
CASES = [f"MTB-{n:02d}" for n in range(1, 13)]
# the chair's sheet decisions (value, reason), every one with a documented reason
SHEET = {c: (pair[0], f"reason for {c}: ECOG is required before first-line IO") for c, pair in zip(CASES, PAIRS)}


def _study(tmp_path, live_server) -> Study:
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"], url=live_server.url)
    st.data_dir = str(live_server.data_dir)
    st.save()
    rows = [(c, r, "safety_label", v) for c, pair in zip(CASES, PAIRS) for r, v in zip(("onc_a", "onc_b"), pair)]
    write_csv_atomic(ratings_frame(rows), st.ratings_path(1))
    units = [
        {"item_id": c, "case_id": c, "output_id": "", "model": "", "case_text": f"Case {c}", "output_text": ""}
        for c in CASES
    ]
    write_jsonl_atomic(units, st.units_path)
    return st


def _log(st) -> list[dict]:
    return [json.loads(x) for x in st.decisions_path.read_text().splitlines()]


def test_sheet_then_label_studio_then_old_sheet(live_server, tmp_path, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    st = _study(tmp_path, live_server)
    sheet = tmp_path / "review.xlsx"
    res = run("adjudicate", "sheet", "--study", st.path, "-o", sheet)
    assert res.exit_code == 0 and "9 rows to decide" in res.output, res.output
    fill(sheet, {c: (v, why, "Dr Chair") for c, (v, why) in list(SHEET.items())[:9]})

    # "Dr Chair" in the cells, dr_chair on the command line: one person, two spellings -> an error
    res = run("adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_chair")
    assert res.exit_code != 0
    assert "Disagreements!H" in res.output and "'dr_chair'" in res.output and "--adjudicator-name" in res.output
    assert not st.decisions_path.exists() or not st.decisions_path.read_text().strip()
    # mapped explicitly: logged as dr_chair, the spelling kept
    res = run(
        "adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_chair",
        "--adjudicator-name", "Dr Chair=dr_chair",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "9 new decisions, 0 changed" in res.output
    assert {(e["adjudicator"], e.get("adjudicator_as_written")) for e in _log(st)} == {("dr_chair", "Dr Chair")}
    assert run("gold", "export", "--study", st.path).exit_code == 0  # v1

    # status: decisions in force counted from the log (no Label Studio round: no server needed)
    got = json.loads(run("status", "--study", st.path, "--format", "json").output)
    assert got["decisions_open"] == 0 and got["decisions"]["safety_label"]["decided"] == 9
    assert got["decisions"]["safety_label"]["sources"] == {"sheet": 9}

    # push: every row is decided, so nothing is pushed by default
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair")
    assert res.exit_code == 0, res.output
    assert "every disagreement has a decision in force (9 rows): nothing pushed" in res.output
    assert not (Study.open(st.path).adjudication or {}).get("projects")
    # --include-decided: all 9, each showing the decision in force
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair", "--include-decided")
    assert res.exit_code == 0, res.output
    assert "9 tasks imported, 0 already there" in res.output
    st = Study.open(st.path)
    pid = st.adjudication["projects"]["safety_label"]
    client = connect(st)
    assert 'value="$current_decision"' in client.project(pid)["label_config"]
    tasks = {d["item_id"]: (tid, d) for tid, d in client.task_data(pid)}
    assert len(tasks) == 9
    for c in CASES[:9]:
        want = f"Current decision: {SHEET[c][0]} (by dr_chair, in the review sheet review.xlsx, "
        assert tasks[c][1]["current_decision"].startswith(want), tasks[c][1]["current_decision"]
        assert tasks[c][1]["current_decision"].endswith(f"; reason: {SHEET[c][1]})")

    # the chair in Label Studio: MTB-02 confirmed without a reason, MTB-05 changed with one
    creds = srv.read_credentials(live_server.data_dir)
    chair = client.as_token(creds.token_for("dr_chair"))
    chair.create_annotation(tasks["MTB-02"][0], answer(SHEET["MTB-02"][0]))
    chair.create_annotation(tasks["MTB-05"][0], answer(U, "the trial excluded ECOG 2"))
    res = run("adjudicate", "pull", "--study", st.path)
    assert res.exit_code == 0, res.output
    assert "0 new decisions, 1 changed, 1 confirmed (same value), 0 unchanged" in res.output
    assert f'"MTB-05" safety_label: "{S}" -> "{U}" (by dr_chair)' in res.output
    assert f'"MTB-02" safety_label: "{S}" confirmed (by dr_chair; reason kept)' in res.output
    assert "->" not in [x for x in res.output.splitlines() if "MTB-02" in x][0]
    latest = {e["item_id"]: e for e in _log(st)}
    assert latest["MTB-02"]["reason"] == SHEET["MTB-02"][1] and latest["MTB-02"]["reason_kept"] is True
    assert {e["adjudicator"] for e in _log(st)} == {"dr_chair"}  # one adjudicator
    res = run("adjudicate", "pull", "--study", st.path)  # pulling again changes nothing
    assert res.exit_code == 0 and "0 new decisions, 0 changed, 2 unchanged" in res.output, res.output

    # gold keeps every reason: v1 -> v2 differs in MTB-05 only
    assert run("gold", "export", "--study", st.path).exit_code == 0
    res = run("gold", "diff", "v1", "v2", "--study", st.path, "--format", "json")
    assert res.exit_code == 0, res.output
    changes = json.loads(res.output)["changes"]
    assert [r["item_id"] for r in changes if r["change"] == "value"] == ["MTB-05"]
    for r in changes:  # a confirmation may show as provenance (a new decision id), never as a lost reason
        if r["item_id"] != "MTB-05":
            assert r["old_reason"] == r["new_reason"] != "", r

    # status: 0 open, one adjudicator, 8 in the sheet and 1 in Label Studio
    got = json.loads(run("status", "--study", st.path, "--format", "json").output)
    assert got["decisions_open"] == 0 and got["adjudicator"] == "dr_chair"
    assert got["decisions"]["safety_label"]["sources"] == {"sheet": 7, "label_studio": 2}
    text = run("status", "--study", st.path).output
    assert "adjudication (dr_chair): 0 of 9 flagged rows still to decide (" in text

    # a push again: nothing new; the tasks show the Label Studio decisions (brought up to date by the pull)
    res = run("adjudicate", "push", "--study", st.path, "--adjudicator", "dr_chair")
    assert res.exit_code == 0 and "0 tasks imported, 9 already there" in res.output, res.output
    assert "updated current decision" not in res.output  # the pull did it (issue 32)
    tasks = {d["item_id"]: d for _, d in client.task_data(pid)}
    assert tasks["MTB-05"]["current_decision"].startswith(f"Current decision: {U} (by dr_chair, in Label Studio, ")
    assert tasks["MTB-02"]["current_decision"].endswith(f"; reason: {SHEET['MTB-02'][1]})")

    # the old sheet again: identical values are no conflict; the one replaced value is
    before = st.decisions_path.read_bytes()
    res = run(
        "adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_chair",
        "--adjudicator-name", "Dr Chair=dr_chair",
    )  # fmt: skip
    assert res.exit_code != 0
    conflicts = [x for x in res.output.splitlines() if "made after this sheet was written" in x and "item" in x]
    assert len(conflicts) == 1 and '"MTB-05"' in conflicts[0], res.output
    assert "1 row would replace" in res.output
    assert st.decisions_path.read_bytes() == before
