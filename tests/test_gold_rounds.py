"""Gold resolution against what the study holds (issue 23, misuse campaign 7b: A07, A04b, M05g).

- A07: a decision made on round 1's disagreement stayed in force in gold v2 although both raters of
  round 2 gave another value (gold "Supported", method adjudicated, beside two "Partially Supported");
  the warnings said "decide again if round 2 changes it" though it did, and the report said "none has
  been adjudicated yet; 6 decisions in force are on rows no longer flagged".
- A04b: a rater removed from study.toml by hand: `gold export` dropped their ratings without a word
  (agree, flag and status warn).
- M05g: a k-of-N table (each item rated by 2 of 4 raters, no design recorded): "0 unanimous, 0
  adjudicated, 30 unresolved" with no reason.

Each test builds the study with the CLI and reads what it prints or writes; each failed on the code
before its fix (checked).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
from builders import wide_table
from conftest import error_line
from conftest import run_cli as run

V = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
IDS = [f"I{k:02d}" for k in range(1, 31)]
A = [V[k % 4] for k in range(30)]
B = [V[(k + 1) % 4] if k < 6 else A[k] for k in range(30)]  # onc_b differs from onc_a on I01-I06
C = [V[(k + 2) % 4] if k >= 24 else A[k] for k in range(30)]  # onc_c differs from onc_a on I25-I30
TABLE = ["--item-col", "case_id", "--field", "safety_label"]


def _wide(path: Path, cols: dict[str, list[str]]) -> Path:
    return wide_table(path, IDS, cols)


def _gold(s: Path, version: str) -> dict[str, dict[str, str]]:
    with (s / "gold" / version / "gold.csv").open() as fh:
        return {r["item_id"]: r for r in csv.DictReader(fh)}


def _decide_as(s: Path, tmp: Path, rater: str) -> None:
    """Write the review sheet, fill every Decision with ``rater``'s value, import it (dr_chair)."""
    sheet = tmp / "review.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Key (do not edit)"].value is None:
            continue
        rec["Decision"].value = rec[f"{rater} value"].value
        rec["Reason"].value = "guideline 4.2"
    wb.save(sheet)
    run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair")


def _two_rounds(tmp: Path, round2: dict[str, list[str]]) -> Path:
    """Round 1: onc_a/onc_b disagree on I01-I06, decided as onc_a rated; gold v1; then ``round2``."""
    s = tmp / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", _wide(tmp / "r1.csv", {"a": A, "b": B}), *TABLE,
        "--rater-cols", "onc_a=a,onc_b=b")  # fmt: skip
    _decide_as(s, tmp, "onc_a")
    run("gold", "export", "--study", s)
    run("pull", "--study", s, "--round", 2, "--from-table", _wide(tmp / "r2.csv", round2), *TABLE,
        "--rater-cols", "onc_a=a,onc_b=b", "--identical-columns-ok")  # fmt: skip
    return s


# --------------------------------------------------------------------------- A07


def test_a_unanimous_later_round_supersedes_a_decision_made_on_an_earlier_disagreement(tmp_path):
    """Round 2: both raters give onc_b's round-1 value on I01-I06 (the decisions took onc_a's)."""
    s = _two_rounds(tmp_path, {"a": B, "b": B})
    res = run("gold", "export", "--study", s)
    g = _gold(s, "v2")
    # before: I01 gold 'Supported', adjudicated, beside value_onc_a = value_onc_b = 'Partially Supported'
    assert (g["I01"]["gold_value"], g["I01"]["method"], g["I01"]["round"]) == ("Partially Supported", "unanimous", "2")
    assert g["I01"]["decision_id"] == "" and g["I01"]["adjudicator"] == ""
    assert all(g[i]["gold_value"] == B[k] and g[i]["method"] == "unanimous" for k, i in enumerate(IDS))
    assert "(30 rows: 30 unanimous, 0 adjudicated, 0 unresolved)" in res.stdout
    assert (
        "Warning: item I01 safety_label: decision D000002 ('Supported') was made on round 1's disagreement; "
        "round 2's raters all gave 'Partially Supported', so the decision no longer settles the item: gold is "
        "round 2's unanimous value (the decision stays in the log)" in res.stderr
    )
    assert "decide again" not in res.stderr and res.stderr.count("no longer settles") == 6
    man = json.loads((s / "gold" / "v2" / "manifest.json").read_text())
    sup = {d["item_id"]: d for d in man["rounds"]["decisions_superseded"]}
    assert sorted(sup) == IDS[:6] and man["rounds"]["decisions_on_earlier_rounds"] == []
    assert sup["I01"] == {
        "item_id": "I01",
        "field": "safety_label",
        "decision_id": "D000002",
        "decision": "Supported",
        "decision_round": 1,
        "round": 2,
        "unanimous_value": "Partially Supported",
    }
    assert man["sources"]["decisions"]["entries"] == 6 and man["sources"]["decisions"]["in_force"] == 0
    # the report: no "none has been adjudicated yet; 6 decisions in force ..." beside "16 adjudicated"
    out = tmp_path / "rep" / "r.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement")
    text = out.read_text().replace("\\", "")
    assert "none has been adjudicated yet" not in text and "decisions in force" not in text
    assert (
        "(0 label disagreements); 6 decisions made on an earlier round's disagreement no longer settle their "
        "rows: the raters of each item's later round all gave another value, which gold takes (the decisions "
        "stay in the log)." in text
    )
    assert "- Decisions logged: 6" in text and "- safety_label: 30 unanimous, 0 adjudicated, 0 unresolved" in text
    # status: before, not a word about the 6 decisions
    assert (
        f"warning: {s}/decisions.jsonl: 6 decisions made on round 1 (D000001, D000002, D000003, ...) no longer "
        "settle their items: the raters of each item's later round all gave another value, which gold takes "
        "(`goldboard gold export` lists them)" in run("status", "--study", s).stdout
    )


def test_a_later_round_that_agrees_or_disagrees_again_keeps_the_decision_and_says_which(tmp_path):
    """Round 2: I01-I03 unanimous on the decided value (onc_a's), I04-I06 disagree again."""
    a2 = list(A)
    b2 = [A[k] if k < 3 else B[k] for k in range(30)]
    s = _two_rounds(tmp_path, {"a": a2, "b": b2})
    res = run("gold", "export", "--study", s)
    g = _gold(s, "v2")
    assert [(g[i]["gold_value"], g[i]["method"]) for i in IDS[:6]] == [(A[k], "adjudicated") for k in range(6)]
    assert "(30 rows: 24 unanimous, 6 adjudicated, 0 unresolved)" in res.stdout
    assert (
        "Note: item I01 safety_label: decision D000002 ('Supported') was made on round 1; round 2's raters all "
        "gave the decided value; the decision stays in force" in res.stderr
    )
    assert (
        "Warning: item I04 safety_label: decision D000001 ('Insufficient Information') was made on round 1; "
        "round 2's raters disagree again (the item is on the review sheet's agenda, with this decision in "
        "force); the decision stays in force" in res.stderr
    )
    man = json.loads((s / "gold" / "v2" / "manifest.json").read_text())
    later = {d["item_id"]: d["later"] for d in man["rounds"]["decisions_on_earlier_rounds"]}
    assert later == {"I01": "agrees", "I02": "agrees", "I03": "agrees"} | dict.fromkeys(IDS[3:6], "disagrees")
    assert man["rounds"]["decisions_superseded"] == [] and man["sources"]["decisions"]["in_force"] == 6
    assert "no longer settle" not in run("status", "--study", s).output
    # the warning's claim: the item is on the review sheet's agenda, with this decision in force
    sheet = tmp_path / "r2.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    ws = openpyxl.load_workbook(sheet)["Disagreements"]
    head = [c.value for c in ws[1]]
    rows = {r[head.index("Item ID")]: r for r in ws.iter_rows(min_row=2, values_only=True) if r[0]}
    assert sorted(rows) == ["I04", "I05", "I06"]
    assert rows["I04"][head.index("Decision")] == "Insufficient Information"
    assert rows["I04"][head.index("Adjudicator")] == "dr_chair"


# --------------------------------------------------------------------------- A04b


def test_gold_export_refuses_ratings_by_a_rater_removed_from_study_toml(tmp_path):
    """3 raters, 12 decisions (I25-I30 only because onc_c disagreed), onc_c removed by hand."""
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b,onc_c")
    run("pull", "--study", s, "--from-table", _wide(tmp_path / "t3.csv", {"a": A, "b": B, "c": C}), *TABLE,
        "--rater-cols", "onc_a=a,onc_b=b,onc_c=c")  # fmt: skip
    _decide_as(s, tmp_path, "onc_a")
    run("gold", "export", "--study", s)
    toml = s / "study.toml"
    toml.write_text(toml.read_text().replace('    "onc_c",\n', ""))
    assert "onc_c" not in toml.read_text()
    # before: v2 written without onc_c's 30 ratings and no word (rows I25-I30 'adjudicated', a = b)
    res = run("gold", "export", "--study", s, "--force", code=None)
    assert error_line(res) == (
        f"Error: {s}/rounds/1/ratings.csv: 30 ratings by 'onc_c', not a rater of the study ({s}/study.toml "
        "lists onc_a, onc_b): removed or renamed by hand? no gold release written: add them back with "
        "`goldboard study add-rater`, or pass --only-study-raters to release gold from the study raters' ratings "
        "only (the manifest records who was left out)"
    )
    assert sorted(p.name for p in (s / "gold").iterdir()) == ["v1"]
    # on purpose: released from the study raters, said on stderr and in the manifest
    res = run("gold", "export", "--study", s, "--only-study-raters")
    assert (
        "Warning: round 1: 30 ratings by 'onc_c', not a rater of the study, left out of this release as asked "
        "(--only-study-raters); the manifest says so" in res.stderr
    )
    man = json.loads((s / "gold" / "v2" / "manifest.json").read_text())
    assert man["sources"]["left_out_raters"] == [{"rater": "onc_c", "round": 1, "ratings": 30}]
    assert man["raters"] == ["onc_a", "onc_b"] and "value_onc_c" not in _gold(s, "v2")["I25"]


# --------------------------------------------------------------------------- M05g


def test_k_of_n_table_gold_says_why_agreeing_pairs_are_unresolved(tmp_path):
    """4 raters, each item rated by 2 of them (blank cells), the pair agreeing on 24 items."""
    cols: dict[str, list[str]] = {c: [""] * 30 for c in "abcd"}
    pairs = [(0, 1), (2, 3), (0, 2), (1, 3), (0, 3), (1, 2)]
    for k in range(30):
        p, q = pairs[k % 6]
        cols["abcd"[p]][k] = V[k % 4]
        cols["abcd"[q]][k] = V[k % 4] if k % 5 else V[(k + 1) % 4]  # I01, I06, I11, ... disagree
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b,onc_c,onc_d")
    run("pull", "--study", s, "--from-table", _wide(tmp_path / "kofn.csv", cols), *TABLE,
        "--rater-cols", "onc_a=a,onc_b=b,onc_c=c,onc_d=d")  # fmt: skip
    res = run("gold", "export", "--study", s)
    # before: "(30 rows: 0 unanimous, 0 adjudicated, 30 unresolved)" and not a word why
    assert (
        "(30 rows: 0 unanimous, 0 adjudicated, 30 unresolved, 24 of them only for a missing rating: see the "
        "warning)" in res.stdout
    )
    assert (
        "Warning: 24 gold rows are unresolved only because a study rater's rating is missing (24 items: I02, I03, "
        "I04, ...): the raters who rated them agree, or one rated; round 1 records no design, so every study "
        "rater (onc_a, onc_b, onc_c, onc_d) is expected to rate every item (a table pull cannot record that each "
        "item went to only some raters, k of N; `push --per-item` does); decide them on the review sheet "
        "(`goldboard adjudicate sheet` lists them as flagged rows with a missing rating), or pull the missing "
        "ratings" in res.stderr
    )
    man = json.loads((s / "gold" / "v1" / "manifest.json").read_text())
    rec = man["rounds"]["unresolved_missing_rating"]
    agreeing = [i for k, i in enumerate(IDS) if k % 5]
    assert rec == {"rows": 24, "items": 24, "rounds": [1], "first_items": agreeing[:10]}
    # the review sheet the warning points to lists them, each with its missing raters
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    ws = openpyxl.load_workbook(sheet)["Disagreements"]
    head = [c.value for c in ws[1]]
    flags = {
        r[head.index("Item ID")]: r[head.index("Flags")] for r in ws.iter_rows(min_row=2, values_only=True) if r[0]
    }
    assert set(agreeing) <= set(flags), flags
    assert all("missing" in flags[i].lower() for i in agreeing), flags


def test_resolve_gold_decisions_on_an_earlier_round_by_what_the_later_round_gave():
    """Library level: each case of a decision made on round 1, the item re-rated in round 2 -- the
    raters agree on another value (an ``unresolved`` decision too; a multi-select set in another
    order), agree with it, disagree again."""
    import sys

    import pandas as pd

    from goldboard.adjudicate.gold import resolve_gold
    from goldboard.label_configs.schema import load_schema

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_flags import ratings_frame

    r1 = [(i, r, "safety_label", v) for i in ("X1", "X2", "X3", "X4", "X5") for r, v in (("a", V[0]), ("b", V[1]))]
    r1 += [("X5", r, "missing_info", v) for r, v in (("a", "stage"), ("b", "stage|ecog_status"))]
    r2 = [("X1", r, "safety_label", V[2]) for r in "ab"] + [("X2", r, "safety_label", V[2]) for r in "ab"]
    r2 += [("X3", r, "safety_label", V[0]) for r in "ab"] + [("X4", "a", "safety_label", V[0])]
    r2 += [("X4", "b", "safety_label", V[1])] + [("X5", r, "safety_label", V[3]) for r in "ab"]
    r2 += [("X5", r, "missing_info", "stage|ecog_status") for r in "ab"]
    one, two = ratings_frame(r1), ratings_frame(r2).assign(round=2)

    def dec(n, item, field, value):
        return {"id": f"D{n:06d}", "item_id": item, "field": field, "decision": value, "round": 1}

    log = [dec(1, "X1", "safety_label", V[0]), dec(2, "X2", "safety_label", "unresolved")]
    log += [dec(3, "X3", "safety_label", V[0]), dec(4, "X4", "safety_label", V[0])]
    log += [dec(5, "X5", "safety_label", V[3]), dec(6, "X5", "missing_info", "ecog_status|stage")]
    gold = resolve_gold(pd.concat([one, two], ignore_index=True), load_schema("mtb"), log, ["a", "b"])
    got = {
        (i, f): (v, m, d) for i, f, v, m, d in gold[["item_id", "field", "gold_value", "method", "decision_id"]].values
    }
    assert got[("X1", "safety_label")] == (V[2], "unanimous", "")  # superseded: another unanimous value
    assert got[("X2", "safety_label")] == (V[2], "unanimous", "")  # an 'unresolved' decision too
    assert got[("X3", "safety_label")] == (V[0], "adjudicated", "D000003")  # agrees
    assert got[("X4", "safety_label")] == (V[0], "adjudicated", "D000004")  # disagrees again
    assert got[("X5", "missing_info")][1:] == ("adjudicated", "D000006")  # the same set, in another order
    assert [d["decision_id"] for d in gold.attrs["decisions_superseded"]] == ["D000001", "D000002"]
    later = {d["decision_id"]: d["later"] for d in gold.attrs["decisions_on_earlier_rounds"]}
    assert later == {"D000003": "agrees", "D000004": "disagrees", "D000005": "agrees", "D000006": "agrees"}
