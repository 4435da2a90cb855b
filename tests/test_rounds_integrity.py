"""Rounds never silently change gold (issue: a study never silently loses or changes a
rating, a decision or a gold label).

- an incomplete later round does not demote gold: per item, the latest round every rater
  rated is used; the items left on an earlier round are listed (warning + manifest);
- ``--round N`` chooses one round explicitly; every gold row says which round it came from;
- rounds are ordered as numbers (round 10 after round 2) wherever they are listed;
- ``gold diff`` shows provenance changes (adjudicator, reason, method, round).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]

import pandas as pd
import pytest
import tomli_w
from conftest import invoke_cli as run

from goldboard.cases.ratings import RATINGS_COLUMNS
from goldboard.cases.rounds import select_rounds
from goldboard.errors import GoldboardError
from goldboard.exports.gold import read_release
from goldboard.fileio import write_csv_atomic
from goldboard.study import Study

S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"
MI_FIELD = "missing_info"


def rows(round_number: int, spec: list[tuple]) -> pd.DataFrame:
    """spec: (item_id, rater, safety_label[, missing_info]) -> ratings rows of one round."""
    recs = []
    for r in spec:
        item, rater, label = r[:3]
        base = {c: "" for c in RATINGS_COLUMNS} | {
            "round": round_number,
            "item_id": item,
            "case_id": item,
            "rater": rater,
            "rationale": f"{rater} r{round_number}",
            "annotated_at": f"2026-01-{round_number:02d}T10:00:00+00:00",
        }
        recs.append(base | {"field": "safety_label", "value": label})
        recs.append(base | {"field": "missing_info", "value": r[3] if len(r) > 3 else ""})
    return pd.DataFrame(recs, columns=RATINGS_COLUMNS)


def put(study: Study, round_number: int, spec: list[tuple]) -> None:
    write_csv_atomic(rows(round_number, spec), study.ratings_path(round_number))


def gold_rows(release_dir: Path) -> dict[str, dict]:
    gold, _ = read_release(release_dir)
    return {r["item_id"]: r for r in gold[gold.field == "safety_label"].to_dict("records")}


@pytest.fixture()
def study(tmp_path) -> Study:
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"])
    # round 1: X1 unanimous Supported, X2 disagreement, X3 unanimous Unsupported
    put(st, 1, [("X1", "onc_a", S), ("X1", "onc_b", S), ("X2", "onc_a", S), ("X2", "onc_b", I, "stage")])
    return st


# --------------------------------------------------------------------------- the scenario of the issue


def test_incomplete_later_round_does_not_demote_gold(study):
    # round 2 re-rates X1; so far only onc_a has rated it (and disagrees with round 1)
    put(study, 2, [("X1", "onc_a", U)])
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output
    g = gold_rows(study.gold_dir / "v1")
    # before this fix X1 was "unresolved" (round 2's single rating used); now round 1's unanimous gold stands
    assert (g["X1"]["method"], g["X1"]["gold_value"], g["X1"]["round"]) == ("unanimous", S, "1")
    assert (g["X2"]["method"], g["X2"]["round"]) == ("unresolved", "1")
    # the item is listed, never silently used: a warning naming it, the later round and who is missing
    assert "Warning: 1 item has an incomplete later round (round 2)" in res.stderr
    assert "item X1: round 2 rated only by onc_a (missing onc_b); using round 1" in res.stderr
    man = json.loads((study.gold_dir / "v1" / "manifest.json").read_text())
    assert man["rounds"] == {
        "rule": "latest_complete_per_item",
        "round": None,
        "items_per_round": {"1": 2},
        "incomplete_later_rounds": [
            {"item_id": "X1", "round": 2, "used_round": 1, "rated_by": ["onc_a"], "missing": ["onc_b"]}
        ],
        "decisions_on_earlier_rounds": [],
        "decisions_superseded": [],
    }
    assert [s["path"] for s in man["sources"]["ratings"]] == ["rounds/1/ratings.csv"]
    # flags use the same rule and say so
    res = run("flag", "--study", study.path, "--format", "json")
    flags = json.loads(res.stdout)["flags"]
    assert {f["item_id"] for f in flags} == {"X2"}  # X1 is not a "missing onc_b" disagreement
    assert "item X1: round 2 rated only by onc_a" in res.stderr

    # onc_b finishes round 2: round 2 is complete for X1 and now in force
    put(study, 2, [("X1", "onc_a", U), ("X1", "onc_b", U)])
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0 and "Wrote gold release v2" in res.stdout, res.output
    assert "incomplete" not in res.stderr
    g = gold_rows(study.gold_dir / "v2")
    assert (g["X1"]["method"], g["X1"]["gold_value"], g["X1"]["round"]) == ("unanimous", U, "2")
    man = json.loads((study.gold_dir / "v2" / "manifest.json").read_text())
    assert man["rounds"]["items_per_round"] == {"1": 1, "2": 1} and man["rounds"]["incomplete_later_rounds"] == []
    assert [s["round"] for s in man["sources"]["ratings"]] == [1, 2]


def test_explicit_round_is_used_as_chosen(study):
    put(study, 2, [("X1", "onc_a", U)])
    res = run("gold", "export", "--study", study.path, "--round", 2)
    assert res.exit_code == 0, res.output
    g = gold_rows(study.gold_dir / "v1")
    assert set(g) == {"X1"}  # round 2 holds only X1
    assert (g["X1"]["method"], g["X1"]["round"], g["X1"]["value_onc_a"], g["X1"]["value_onc_b"]) == (
        "unresolved",
        "2",
        U,
        "",
    )
    man = json.loads((study.gold_dir / "v1" / "manifest.json").read_text())
    assert man["rounds"]["rule"] == "round" and man["rounds"]["round"] == 2
    assert "incomplete later round" not in res.stderr
    res = run("flag", "--study", study.path, "--round", 2, "--format", "json")
    flags = json.loads(res.stdout)["flags"]
    assert [(f["item_id"], f["field"], f["missing_raters"]) for f in flags] == [
        ("X1", "safety_label", ["onc_b"]),
        ("X1", "missing_info", ["onc_b"]),
    ]
    res = run("gold", "export", "--study", study.path, "--round", 7)
    assert res.exit_code != 0 and "round 7 does not exist" in res.output


def test_item_never_complete_keeps_its_latest_round(study):
    """No complete round at all: the latest round is used and its gaps are 'missing' (unchanged rule)."""
    put(study, 2, [("X9", "onc_a", S)])
    res = run("flag", "--study", study.path, "--format", "json")
    flags = {f["item_id"]: f for f in json.loads(res.stdout)["flags"]}
    assert flags["X9"]["missing_raters"] == ["onc_b"] and "incomplete later round" not in res.stderr


def test_rounds_sort_as_numbers(tmp_path):
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"])
    put(st, 2, [("X1", "onc_a", S), ("X1", "onc_b", S), ("X2", "onc_a", S), ("X2", "onc_b", S)])
    put(st, 10, [("X1", "onc_a", U), ("X1", "onc_b", U)])
    # study.toml written out of order (hand edit / old version): listed in numeric order
    data = tomllib.loads((st.path / "study.toml").read_text())
    data["rounds"] = [{"number": n, "mode": "blinded", "projects": {}} for n in (10, 2, 1)]
    (st.path / "study.toml").write_text(tomli_w.dumps(data))
    st = Study.open(st.path)
    assert [r.number for r in st.rounds] == [1, 2, 10] and st.pulled_rounds() == [2, 10]
    res = run("study", "show", st.path)
    assert [line.split(":")[0] for line in res.stdout.splitlines() if line.startswith("round")] == [
        "round 1",
        "round 2",
        "round 10",
    ]
    res = run("gold", "export", "--study", st.path)
    g = gold_rows(st.gold_dir / "v1")
    assert (g["X1"]["gold_value"], g["X1"]["round"], g["X2"]["round"]) == (U, "10", "2")
    man = json.loads((st.gold_dir / "v1" / "manifest.json").read_text())
    assert [s["path"] for s in man["sources"]["ratings"]] == ["rounds/2/ratings.csv", "rounds/10/ratings.csv"]
    assert man["rounds"]["items_per_round"] == {"2": 1, "10": 1}
    # an incomplete round 10 after a complete round 2: round 2 is used (not round 10, not "round 1x")
    put(st, 10, [("X1", "onc_a", U)])
    put(st, 9, [("X1", "onc_a", P), ("X1", "onc_b", P)])
    res = run("gold", "export", "--study", st.path)
    g = gold_rows(st.gold_dir / "v2")
    assert (g["X1"]["gold_value"], g["X1"]["round"]) == (P, "9")
    assert "round 10 rated only by onc_a (missing onc_b); using round 9" in res.stderr
    man = json.loads((st.gold_dir / "v2" / "manifest.json").read_text())
    assert [s["round"] for s in man["sources"]["ratings"]] == [2, 9]
    assert st.ratings()["round"].unique().tolist() == [10]  # the default single round is the numeric latest


def test_select_rounds_pure():
    df = pd.concat(
        [
            rows(1, [("A", "a", S), ("A", "b", S), ("B", "a", S), ("B", "b", U), ("C", "a", S)]),
            rows(2, [("A", "a", U), ("B", "a", U), ("B", "b", U)]),
            rows(3, [("B", "b", P)]),
        ]
    )
    cur, sel = select_rounds(df, ["a", "b", "c"])  # c never rated: not required
    assert sel.rounds == {"A": 1, "B": 2, "C": 1}
    assert [(x.item_id, x.round, x.used_round, x.missing) for x in sel.incomplete] == [
        ("A", 2, 1, ("b",)),
        ("B", 3, 2, ("a",)),
    ]
    assert sorted(set(zip(cur.item_id, cur["round"]))) == [("A", 1), ("B", 2), ("C", 1)]
    assert sel.items_per_round() == {"1": 2, "2": 1}
    cur, sel = select_rounds(df, ["a", "b"], round_number=3)
    assert sel.rounds == {"B": 3} and sel.incomplete == [] and set(cur["round"]) == {3}


# --------------------------------------------------------------------------- push: rounds that exist, rounds already adjudicated


def cases_file(tmp: Path, n: int, name: str = "cases.jsonl") -> Path:
    from goldboard.cases.synth import synthesize, write_records

    cases, _ = synthesize("mtb", 8, seed=5)  # the first n of the same 8 cases
    p = tmp / name
    write_records(cases[:n], p)
    return p


def decide(study: Study, item_id: str, now: str | None = None) -> None:
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    p = Proposed(item_id, "safety_label", S, "", "dr_chair")
    record_decisions(study.decisions_path, [p], source="sheet", now=now)


def fake_push(study: Study, cases: Path, **kw):
    from test_push_offline import FakeServer

    from goldboard.annotate.push import push

    fake = kw.pop("client", None) or FakeServer()
    return push(Study.open(study.path), cases, client=fake, progress=False, **kw), fake


def test_push_round_needs_the_previous_round(tmp_path):
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    cases = cases_file(tmp_path, 3)
    # refused before any connection (the URL above has no server): a new study starts at round 1
    res = run("push", "--study", st.path, cases, "--round", 2)
    assert res.exit_code != 0
    assert (
        res.output.strip()
        == "Error: --round 2: round 1 does not exist (rounds: none yet); the next new round is 1 (--round 1)"
    )
    _, fake = fake_push(st, cases)
    res = run("push", "--study", st.path, cases, "--round", 3)
    assert res.exit_code != 0 and "--round 3: round 2 does not exist (rounds: 1); the next new round is 2" in res.output
    assert [r.number for r in Study.open(st.path).rounds] == [1]
    res, _ = fake_push(st, cases, round_number=2, client=fake)  # the next round is fine
    assert res.round == 2 and [r.number for r in Study.open(st.path).rounds] == [1, 2]


def test_adding_cases_to_an_adjudicated_round_is_refused(tmp_path):
    from goldboard.annotate.push import round_use

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    three, five = cases_file(tmp_path, 3, "three.jsonl"), cases_file(tmp_path, 5, "five.jsonl")
    _, fake = fake_push(st, three)
    first = Study.open(st.path).units()["item_id"].tolist()
    res, _ = fake_push(st, five, client=fake)  # not adjudicated yet: adding is fine
    assert res.imported == {"onc_a": 2, "onc_b": 2}
    decide(st, first[0])
    assert round_use(Study.open(st.path), 1).decisions == 1
    more = cases_file(tmp_path, 7, "seven.jsonl")
    res = run("push", "--study", st.path, more)
    assert res.exit_code != 0
    msg = res.output.strip()
    assert msg.startswith("Error: round 1 already has 1 adjudication decision on 1 of its 5 items (decisions.jsonl); ")
    assert "pushing 2 new items" in msg and "Push them to a new round (--round 2)" in msg
    assert "--add-to-adjudicated-round" in msg and len(msg.splitlines()) == 1
    assert all(len(p["tasks"]) == 5 for p in fake.projects.values())  # nothing sent
    # re-pushing the round's own items (completing a push) stays allowed
    res, _ = fake_push(st, five, client=fake)
    assert res.imported == {"onc_a": 0, "onc_b": 0}
    # a gold release built on round 1 refuses it too (even without decisions)
    st2 = Study.init(tmp_path / "s2", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    _, fake2 = fake_push(st2, three)
    items = Study.open(st2.path).units()["item_id"].tolist()
    put(st2, 1, [(i, r, S) for i in items for r in ("onc_a", "onc_b")])
    assert run("gold", "export", "--study", st2.path).exit_code == 0
    res = run("push", "--study", st2.path, five)
    assert res.exit_code != 0 and "round 1 already has gold release v1; pushing 2 new items" in res.output
    # the user says so: added, and later rounds are unaffected
    res, _ = fake_push(st2, five, client=fake2, add_to_adjudicated_round=True)
    assert res.imported == {"onc_a": 2, "onc_b": 2}
    # a decision made before a round existed does not lock the new round
    time.sleep(1.1)  # timestamps have one-second resolution
    _, _ = fake_push(st, three, client=fake, round_number=2)
    res, _ = fake_push(st, more, client=fake, round_number=2)
    assert res.round == 2 and res.imported == {"onc_a": 4, "onc_b": 4}
    # a decision says which round it was made on: one made on round 1 (logged now) does not lock round 2,
    # one made on round 2 does
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    eight = cases_file(tmp_path, 8, "eight.jsonl")
    item = first[2]
    record_decisions(st.decisions_path, [Proposed(item, MI_FIELD, "", "", "dr_a", extra={"round": 1})], source="sheet")
    assert round_use(Study.open(st.path), 2).decisions == 0
    record_decisions(
        st.decisions_path, [Proposed(item, MI_FIELD, "stage", "x", "dr_a", extra={"round": 2})], source="sheet"
    )
    assert round_use(Study.open(st.path), 2).decisions == 1
    with pytest.raises(GoldboardError, match="round 2 already has 1 adjudication decision on 1 of its 7 items"):
        fake_push(st, eight, client=fake, round_number=2)


@pytest.mark.live
def test_push_round_refusals_live(live_server, tmp_path):
    """On a real Label Studio: refused pushes create no project and no task."""
    from goldboard.annotate.client import connect

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], data_dir=str(live_server.data_dir))
    four, six = cases_file(tmp_path, 4, "four.jsonl"), cases_file(tmp_path, 6, "six.jsonl")
    res = run("push", "--study", st.path, four, "--quiet")
    assert res.exit_code == 0, res.output
    client = connect(Study.open(st.path))
    projects = dict(Study.open(st.path).round(1).projects)

    res = run("push", "--study", st.path, four, "--round", 3, "--quiet")
    assert res.exit_code != 0 and "--round 3: round 2 does not exist (rounds: 1)" in res.output
    assert [r.number for r in Study.open(st.path).rounds] == [1]  # no round, no project recorded

    decide(st, Study.open(st.path).units()["item_id"].iloc[0])
    res = run("push", "--study", st.path, six, "--quiet")
    assert res.exit_code != 0 and "round 1 already has 1 adjudication decision" in res.output
    assert all(len(client.task_data(pid)) == 4 for pid in projects.values())

    res = run("push", "--study", st.path, six, "--round", 2, "--quiet")
    assert res.exit_code == 0, res.output
    new = Study.open(st.path).round(2).projects
    assert len(new) == 2 and not set(new.values()) & set(projects.values())
    assert all(len(client.task_data(pid)) == 6 for pid in new.values())
    res = run("push", "--study", st.path, six, "--round", 1, "--add-to-adjudicated-round", "--quiet")
    assert res.exit_code == 0 and "2 tasks imported, 4 already there" in res.output
    assert all(len(client.task_data(pid)) == 6 for pid in projects.values())


# --------------------------------------------------------------------------- gold diff shows provenance


def test_gold_diff_shows_provenance_changes(study):
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    log = study.decisions_path
    record_decisions(log, [Proposed("X2", "safety_label", I, "stage unknown", "dr_lee")], source="sheet")
    assert run("gold", "export", "--study", study.path).exit_code == 0
    # same gold value, decided again by someone else for another reason; X1 re-rated (same value) in round 2
    record_decisions(log, [Proposed("X2", "safety_label", I, "ECOG missing too", "dr_kim")], source="sheet")
    put(study, 2, [("X1", "onc_a", S), ("X1", "onc_b", S)])
    res = run("gold", "export", "--study", study.path)
    assert "Wrote gold release v2" in res.stdout, res.output  # provenance alone makes a new release
    res = run("gold", "diff", "v1", "v2", "--study", study.path, "--format", "json")
    changes = {(c["item_id"], c["field"]): c for c in json.loads(res.stdout)["changes"]}
    x1, x2 = changes[("X1", "safety_label")], changes[("X2", "safety_label")]
    assert (x1["change"], x1["changed"], x1["old_round"], x1["new_round"]) == ("provenance", "round", "1", "2")
    assert (x2["change"], x2["changed"]) == ("provenance", "adjudicator, reason, decision")
    assert (x2["old_adjudicator"], x2["new_adjudicator"], x2["old_reason"], x2["new_reason"]) == (
        "dr_lee",
        "dr_kim",
        "stage unknown",
        "ECOG missing too",
    )
    assert x2["old_value"] == x2["new_value"] == I and x2["old_method"] == x2["new_method"] == "adjudicated"
    res = run("gold", "diff", "v1", "v2", "--study", study.path)
    assert "provenance only" in res.stdout
    line = next(x for x in res.stdout.splitlines() if x.startswith("X2") and "safety_label" in x)
    assert "adjudicator dr_lee -> dr_kim; reason stage unknown -> ECOG missing too; decision D000001 -> D000002" in line
    line = next(x for x in res.stdout.splitlines() if x.startswith("X1") and "safety_label" in x)
    assert line.endswith("round 1 -> 2")
    # a value change still leads, with its provenance beside it
    record_decisions(log, [Proposed("X2", "safety_label", P, "caveat, not missing", "dr_kim")], source="sheet")
    run("gold", "export", "--study", study.path)
    res = run("gold", "diff", "v2", "v3", "--study", study.path, "--format", "csv")
    d = pd.read_csv(__import__("io").StringIO(res.stdout), dtype=str, keep_default_na=False)
    row = d[(d.item_id == "X2") & (d.field == "safety_label")].iloc[0]
    assert (row.change, row.changed, row.old_value, row.new_value) == ("value", "value, reason, decision", I, P)


def test_diff_against_a_release_without_round_column():
    from goldboard.exports.gold import diff_gold

    base = {"item_id": ["A"], "field": ["f"], "gold_value": ["x"], "method": ["unanimous"]}
    old = pd.DataFrame(base | {"adjudicator": [""], "reason": [""]})
    new = pd.DataFrame(base | {"adjudicator": [""], "reason": [""], "round": ["1"]})
    assert len(diff_gold(old, new)) == 0  # unknown is not a change
    d = diff_gold(new, new.assign(round="2"))
    assert list(zip(d.change, d.changed)) == [("provenance", "round")]


def test_review_sheet_uses_the_complete_round_and_warns(study, tmp_path):
    import openpyxl

    put(study, 2, [("X1", "onc_a", U)])
    out = tmp_path / "review.xlsx"
    res = run("adjudicate", "sheet", "--study", study.path, "-o", out)
    assert res.exit_code == 0, res.output
    assert "item X1: round 2 rated only by onc_a (missing onc_b); using round 1" in res.stderr
    wb = openpyxl.load_workbook(out)
    dis = {r[2] for r in wb["Disagreements"].iter_rows(min_row=2, values_only=True)}
    agreed = [r for r in wb["Agreed"].iter_rows(values_only=True) if "X1" in r]
    assert "X2" in dis and "X1" not in dis and agreed  # X1 is unanimous (round 1), not "missing onc_b" (round 2)
    assert not any("r2" in str(c) for r in agreed for c in r)  # round 1's rationales, not round 2's
    assert any("onc_a r1" in str(c) for r in agreed for c in r)
    # --round 2 chooses round 2: X1 is on the agenda, onc_b missing (a study rater, absent from round 2)
    res = run("adjudicate", "sheet", "--study", study.path, "-o", out, "--round", 2)
    assert res.exit_code == 0 and "incomplete later round" not in res.stderr, res.output
    rows2 = list(openpyxl.load_workbook(out)["Disagreements"].iter_rows(min_row=2, values_only=True))
    assert {r[2] for r in rows2} == {"X1"} and any("missing: onc_b" in str(c) for r in rows2 for c in r)


def test_decision_records_its_round_and_a_newer_round_is_flagged(study, tmp_path):
    import openpyxl

    from goldboard.adjudicate.decisions import read_decisions

    out = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", out).exit_code == 0
    wb = openpyxl.load_workbook(out)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if (rec["Item ID"].value, rec["Field"].value) == ("X2", "safety_label"):
            rec["Decision"].value, rec["Adjudicator"].value = I, "dr_lee"
    wb.save(out)
    assert run("adjudicate", "import", "--study", study.path, out, "--adjudicator", "dr_lee").exit_code == 0
    (entry,) = read_decisions(study.decisions_path)
    assert (entry["item_id"], entry["round"]) == ("X2", 1)
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0 and "Warning" not in res.stderr
    # round 2 re-rates X2 completely and its raters disagree again: the decision stays in force, and the
    # export says so (a unanimous round 2 on another value supersedes it: tests/test_gold_rounds.py)
    put(study, 2, [("X2", "onc_a", S), ("X2", "onc_b", U)])
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output
    g = gold_rows(study.gold_dir / "v2")
    assert (g["X2"]["method"], g["X2"]["gold_value"], g["X2"]["round"]) == ("adjudicated", I, "2")
    assert (
        "Warning: item X2 safety_label: decision D000001 ('Insufficient Information') was made on round 1; "
        "round 2's raters disagree again (the item is on the review sheet's agenda, with this decision in force); "
        "the decision stays in force" in res.stderr
    )
    man = json.loads((study.gold_dir / "v2" / "manifest.json").read_text())
    assert man["rounds"]["decisions_on_earlier_rounds"] == [
        {
            "item_id": "X2",
            "field": "safety_label",
            "decision_id": "D000001",
            "decision": I,
            "decision_round": 1,
            "round": 2,
            "later": "disagrees",
        }
    ]
    assert man["rounds"]["decisions_superseded"] == []


def test_flag_file_round_that_has_no_ratings_is_an_error(tmp_path):
    f = tmp_path / "ratings.csv"
    write_csv_atomic(pd.concat([rows(1, [("X1", "onc_a", S), ("X1", "onc_b", U)]), rows(2, [("X1", "onc_a", S)])]), f)
    res = run("flag", f, "--schema", "mtb", "--round", 7)
    assert res.exit_code != 0
    assert res.output.strip() == f"Error: {f}: --round 7: no ratings in that round (rounds: 1, 2)"
    res = run("flag", f, "--schema", "mtb", "--round", 2, "--format", "json")  # onc_b is a rater, missing in round 2
    flags = json.loads(res.stdout)["flags"]
    assert [(x["item_id"], x["field"], x["missing_raters"]) for x in flags][0] == ("X1", "safety_label", ["onc_b"])
    res = run("flag", f, "--schema", "mtb", "--format", "json")  # default: round 1 (complete), round 2 listed
    assert [x["kinds"] for x in json.loads(res.stdout)["flags"]][0][-1] == "disagree"
    assert "item X1: round 2 rated only by onc_a (missing onc_b); using round 1" in res.stderr


def test_design_rounds_are_complete_when_the_assigned_raters_rated(tmp_path):
    """--per-item designs: a round is complete for an item when the raters the design gave it
    to have rated it (not every study rater)."""
    from goldboard.study import Round

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    for n, who in ((1, "onc_a,onc_b"), (2, "onc_a,onc_c")):
        st.rounds.append(Round(number=n, design={"kind": "per_item", "per_item": 2, "seed": 1}))
        st.round_dir(n).mkdir(parents=True, exist_ok=True)
        st.assignment_path(n).write_text("item_id,rater\n" + "".join(f"X1,{r}\n" for r in who.split(",")))
    st.save()
    put(st, 1, [("X1", "onc_a", S), ("X1", "onc_b", S)])
    put(st, 2, [("X1", "onc_a", U)])  # onc_c (assigned) has not rated yet
    res = run("gold", "export", "--study", st.path)
    assert res.exit_code == 0, res.output
    g = gold_rows(st.gold_dir / "v1")
    assert (g["X1"]["method"], g["X1"]["gold_value"], g["X1"]["round"]) == ("unanimous", S, "1")
    assert "item X1: round 2 rated only by onc_a (missing onc_c); using round 1" in res.stderr
    put(st, 2, [("X1", "onc_a", U), ("X1", "onc_c", U)])  # complete for its design, although onc_b did not
    res = run("gold", "export", "--study", st.path)
    g = gold_rows(st.gold_dir / "v2")
    assert (g["X1"]["round"], g["X1"]["value_onc_a"], g["X1"]["value_onc_c"]) == ("2", U, U)
    assert "incomplete" not in res.stderr
