"""Study designs beyond "everyone rates everything": overlap subsets and k raters per item.

Pure draws (counts, strata, balance over rater pairs, determinism) and, on a live Label
Studio, an overlap-subset study end to end: push --overlap -> the second rater's project holds
only the double-rated share -> annotate -> pull -> agreement on exactly the overlap (n and a
note) -> flags do not call single-rated items missing -> gold method ``single``.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from conftest import run_cli as run

from goldboard.adjudicate.gold import resolve_gold
from goldboard.annotate.client import connect
from goldboard.annotate.simulate import post_ratings
from goldboard.cases.assignment import overlap_assignment, per_item_assignment
from goldboard.cases.load import load_units
from goldboard.cases.synth import synthesize, write_records
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import load_schema
from goldboard.study import Study

ITEMS = [f"C-{i:02d}" for i in range(50)]


# --------------------------------------------------------------------------- pure draws


def test_overlap_share_primary_and_seed():
    a = overlap_assignment(ITEMS, ["onc_a", "onc_b"], 0.2, seed=7)
    assert a.for_rater("onc_a") == ITEMS  # the primary rates everything
    double = a.for_rater("onc_b")
    assert len(double) == 10 == a.design["double_rated"] and a.multi_items() == double
    assert len(a.single_items()) == 40
    assert a.for_rater("onc_b") == overlap_assignment(ITEMS, ["onc_a", "onc_b"], 0.2, seed=7).for_rater("onc_b")
    assert double != overlap_assignment(ITEMS, ["onc_a", "onc_b"], 0.2, seed=8).for_rater("onc_b")
    assert overlap_assignment(ITEMS, ["onc_a", "onc_b"], 0.2, seed=7, primary="onc_b").for_rater("onc_b") == ITEMS
    # three raters: the others all rate the same share
    a3 = overlap_assignment(ITEMS, ["a", "b", "c"], 0.3, seed=1)
    assert a3.for_rater("b") == a3.for_rater("c") and len(a3.for_rater("b")) == 15


def test_overlap_stratified_is_proportional_and_exact():
    strata = ["clean"] * 30 + ["adversarial"] * 17 + ["rare"] * 3
    a = overlap_assignment(ITEMS, ["onc_a", "onc_b"], 0.2, seed=3, strata=strata)
    got = Counter(strata[ITEMS.index(it)] for it in a.for_rater("onc_b"))
    # 0.2 x (30, 17, 3) = (6, 3.4, 0.6) -> floor (6, 3, 0), the one left goes to the largest remainder
    assert got == Counter({"clean": 6, "adversarial": 3, "rare": 1})
    assert sum(got.values()) == 10 and a.design["strata"]["rare"] == {"items": 3, "double_rated": 1}


def test_overlap_rejects_bad_shares():
    for share in (0, 1.5, -0.1):  # the library names its parameter; `push` names --overlap (below)
        with pytest.raises(GoldboardError, match=rf"^share {share}: give the double-rated share"):
            overlap_assignment(ITEMS, ["a", "b"], share, seed=1)
    with pytest.raises(GoldboardError, match="at least 2 double-rated"):
        overlap_assignment(ITEMS[:5], ["a", "b"], 0.1, seed=1)


@pytest.mark.parametrize("n_raters,k,n_items", [(3, 2, 30), (4, 2, 60), (4, 3, 40), (5, 2, 47)])
def test_per_item_is_balanced_over_pairs(n_raters, k, n_items):
    raters = [f"r{i}" for i in range(n_raters)]
    items = [f"I{i}" for i in range(n_items)]
    a = per_item_assignment(items, raters, k, seed=11)
    assert all(len(rs) == k for rs in a.items.values()) and list(a.items) == items
    pairs = a.pair_counts()
    assert len(pairs) == len(list(itertools.combinations(raters, 2)))
    assert max(pairs.values()) - min(pairs.values()) <= k  # within one combination per pair
    loads = [len(a.for_rater(r)) for r in raters]
    assert sum(loads) == k * n_items and max(loads) - min(loads) <= k
    if n_items % len(list(itertools.combinations(raters, k))) == 0:  # full cycles: exactly equal
        assert len(set(pairs.values())) == 1 and len(set(loads)) == 1


def test_single_items_get_method_single_offline(tmp_path):
    """Gold for an item the design gave to one rater: its one rating, method 'single'; an item
    meant to be double-rated but rated once stays unresolved."""
    schema = load_schema("mtb")
    rows = []
    for item, ratings in {
        "A": {"onc_a": "Supported"},
        "B": {"onc_a": "Unsupported"},
        "C": {"onc_a": "Supported", "onc_b": "Supported"},
    }.items():
        for r, v in ratings.items():
            rows.append(
                {
                    "round": 1,
                    "item_id": item,
                    "case_id": item,
                    "output_id": "",
                    "model": "",
                    "rater": r,
                    "field": "safety_label",
                    "value": v,
                    "rationale": "x",
                }
            )
    df = pd.DataFrame(rows)
    gold = resolve_gold(df, schema, (), ["onc_a", "onc_b"], single_items={"A"}).set_index("item_id")
    assert gold.loc["A", ["gold_value", "method"]].tolist() == ["Supported", "single"]
    assert gold.loc["B", ["gold_value", "method"]].tolist() == ["", "unresolved"]
    assert gold.loc["C", "method"] == "unanimous"


def test_per_item_design_gold_needs_only_the_assigned_raters():
    """Three raters, two per item (``push --per-item 2``): an item both of its raters agree on
    is unanimous -- the third rater was never asked; a disagreement between the two stays
    unresolved; an assigned rater who has not rated yet leaves the item unresolved and
    flagged as missing."""
    from goldboard.adjudicate.flags import flag_disagreements
    from goldboard.cases.rounds import Assigned

    schema = load_schema("mtb")
    plan = {
        "A": {"onc_a": "Supported", "onc_b": "Supported"},
        "B": {"onc_b": "Unsupported", "onc_c": "Unsupported"},
        "C": {"onc_a": "Supported", "onc_c": "Unsupported"},
        "D": {"onc_a": "Supported"},  # onc_c (assigned) has not rated it
    }
    assigned = {"A": {"onc_a", "onc_b"}, "B": {"onc_b", "onc_c"}, "C": {"onc_a", "onc_c"}, "D": {"onc_a", "onc_c"}}
    rows = [
        {
            "round": 1,
            "item_id": item,
            "case_id": item,
            "output_id": "",
            "model": "",
            "rater": r,
            "field": "safety_label",
            "value": v,
            "rationale": "x",
        }
        for item, ratings in plan.items()
        for r, v in ratings.items()
    ]
    df = pd.DataFrame(rows)
    df.attrs["assigned"] = Assigned({(i, 1): rs for i, rs in assigned.items()})
    raters = ["onc_a", "onc_b", "onc_c"]
    gold = resolve_gold(df, schema, (), raters).set_index("item_id")
    assert gold.loc["A", ["gold_value", "method"]].tolist() == ["Supported", "unanimous"]
    assert gold.loc["B", ["gold_value", "method"]].tolist() == ["Unsupported", "unanimous"]
    assert gold.loc["C", "method"] == "unresolved"
    assert gold.loc["D", "method"] == "unresolved"
    flags = flag_disagreements(df, schema, raters)
    flagged = set(flags["item_id"])
    assert "A" not in flagged and "B" not in flagged  # the unasked rater is not "missing"
    assert {"C", "D"} <= flagged


# --------------------------------------------------------------------------- live


@pytest.mark.live
def test_overlap_study_end_to_end(live_server, tmp_path):
    cases, outputs = synthesize("mtb", 10, seed=5)
    cpath, opath = tmp_path / "cases.jsonl", tmp_path / "outputs.jsonl"
    write_records(cases, cpath)
    write_records(outputs, opath)
    units = load_units(cpath, opath, schema="mtb")
    n = len(units)
    s = tmp_path / "overlap"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], data_dir=str(live_server.data_dir))
    res = run("push", "--study", s, cpath, "--outputs", opath, "--overlap", "0.3", "--seed", "5", "--quiet")
    k = round(0.3 * n)
    assert f"{k} (30%) are double-rated (seed 5)" in res.output
    st = Study.open(s)
    rnd = st.round(1)
    assert rnd.design["kind"] == "overlap" and rnd.design["assigned"] == {"onc_a": n, "onc_b": k}
    assignment = pd.read_csv(st.assignment_path(1), dtype=str)
    double = sorted(assignment[assignment.rater == "onc_b"]["item_id"])
    client = connect(st)
    on_server = {r: sorted(d["item_id"] for _, d in client.task_data(pid)) for r, pid in rnd.projects.items()}
    assert on_server["onc_a"] == sorted(units["item_id"]) and on_server["onc_b"] == double
    # pushing again imports nothing and keeps the draw; another design for the round is refused
    again = run("push", "--study", s, cpath, "--outputs", opath, "--quiet")
    assert "0 tasks imported" in again.output and "onc_b" in again.output
    assert sorted(pd.read_csv(st.assignment_path(1), dtype=str).query("rater == 'onc_b'")["item_id"]) == double
    bad = run("push", "--study", s, cpath, "--outputs", opath, "--overlap", "0.5", "--seed", "5", code=1)
    assert "already has a overlap design" in bad.output or "already has an overlap design" in bad.output

    # raters annotate what they were given: agree on half of the overlap, disagree on the rest
    labels = ["Supported", "Unsupported"]
    rows = []
    for i, item in enumerate(units["item_id"]):
        rows.append(
            {"item_id": item, "rater": "onc_a", "field": "safety_label", "value": labels[i % 2], "rationale": "a"}
        )
        if item in double:
            j = double.index(item)
            v = labels[i % 2] if j % 2 == 0 else labels[(i + 1) % 2]
            rows.append({"item_id": item, "rater": "onc_b", "field": "safety_label", "value": v, "rationale": "b"})
    post_ratings(st, pd.DataFrame(rows), progress=False)
    pulled = run("pull", "--study", s, "--quiet")
    assert f"onc_b: {k} rated, 0 invalid, 0 superseded ({k} items: {k} rated + 0 invalid + 0 unannotated)" in (
        pulled.output
    )

    agree = json.loads(run("agree", "--study", s, "--format", "json").stdout)
    kappa = next(x for x in agree["statistics"] if x["statistic"] == "cohen_kappa")
    assert kappa["n_items"] == k == agree["design"]["items_rated_by_two_or_more"]
    assert agree["design"]["double_rated"] == k
    table = run("agree", "--study", s).stdout
    assert f"Agreement uses the {k} double-rated items" in table and "onc_a rated all" in table

    flags = json.loads(run("flag", "--study", s, "--format", "json").stdout)
    n_disagree = sum(1 for j in range(k) if j % 2 == 1)
    assert flags["summary"]["items_flagged"] == n_disagree  # no single-rated item flagged as missing
    assert flags["summary"]["by_kind"]["missing"] == 0

    run("gold", "export", "--study", s)
    gold = pd.read_csv(s / "gold" / "v1" / "gold.csv", dtype=str, keep_default_na=False)
    sl = gold[gold.field == "safety_label"]
    assert (sl["method"] == "single").sum() == n - k
    assert set(sl[sl.method == "single"]["item_id"]) == set(units["item_id"]) - set(double)
    assert (sl["method"] == "unanimous").sum() == k - n_disagree
    assert (sl["method"] == "unresolved").sum() == n_disagree
    single = sl[sl.method == "single"].iloc[0]
    assert single["gold_value"] == single["value_onc_a"] and single["value_onc_b"] == ""
    manifest = json.loads((s / "gold" / "v1" / "manifest.json").read_text())
    assert "single" in json.dumps(manifest)
    report = tmp_path / "report.md"
    run("report", "--study", s, "--format", "markdown", "-o", report)
    text = report.read_text()
    assert f"Design: overlap subset -- onc_a rated all {n} items" in text
    assert f"Agreement uses the {k} double-rated items" in text
    assert f"{n - k} single-rated" in text


def test_stratify_by_unknown_column_is_one_line(tmp_path):
    cases, outputs = synthesize("mtb", 4, seed=1)
    cpath = tmp_path / "cases.jsonl"
    write_records(cases, cpath)
    s = tmp_path / "st"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    res = run("push", "--study", s, cpath, "--overlap", "0.5", "--seed", "1", "--stratify-by", "nope", code=1)
    assert res.output.startswith("Error: --stratify-by 'nope': not an item column or case field")
    res = run("push", "--study", s, cpath, "--overlap", "0.5", code=1)
    assert "--seed: give a seed" in res.output
    res = run("push", "--study", s, cpath, "--overlap", "0.5", "--seed", "1", "--shared", code=1)
    assert "need blinded rounds" in res.output
    # the assignment's parameters (share, k) read as the flags push has
    res = run("push", "--study", s, cpath, "--overlap", "1.5", "--seed", "1", code=1)
    assert res.output.startswith("Error: --overlap 1.5: give the double-rated share as a number in (0, 1]")
    res = run("push", "--study", s, cpath, "--per-item", "3", "--seed", "1", code=1)
    assert res.output.startswith("Error: --per-item 3: give 2 to 2 (the number of raters)")
    assert not Path(s / "rounds").exists()


def test_per_item_push_three_raters_offline(tmp_path):
    """push --per-item 2 with three raters (in-memory server): each project holds its rater's
    items, every pair of raters shares the same number of items, the draw is kept on re-push,
    and pairwise agreement uses each pair's shared items."""
    from test_push_offline import FakeServer, units

    from goldboard.analysis.agreement import agreement
    from goldboard.annotate.push import push

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b", "onc_c"], url="http://fake")
    fake = FakeServer()
    res = push(st, units=units(30), client=fake, per_item=2, seed=4, progress=False)
    assert res.imported == {"onc_a": 20, "onc_b": 20, "onc_c": 20}
    assert "2 raters per item, balanced over rater pairs (seed 4): onc_a 20, onc_b 20, onc_c 20" in res.describe()
    st = Study.open(st.path)
    tasks = {r: {t["item_id"] for t in fake.projects[pid]["tasks"]} for r, pid in st.round(1).projects.items()}
    for a, b in itertools.combinations(tasks, 2):
        assert len(tasks[a] & tasks[b]) == 10
    assert set.union(*tasks.values()) == {f"C{i}::m" for i in range(30)}
    again = push(st, units=units(30), client=fake, progress=False)
    assert again.imported == {"onc_a": 0, "onc_b": 0, "onc_c": 0}
    with pytest.raises(GoldboardError, match="item 'C30::m' is not in it"):
        push(Study.open(st.path), units=units(31), client=fake, progress=False)
    with pytest.raises(GoldboardError, match="already has a per_item design"):
        push(Study.open(st.path), units=units(30), client=fake, per_item=2, seed=5, progress=False)
    rows = [
        {
            "item_id": it,
            "rater": r,
            "field": "safety_label",
            "value": "Supported" if (int(it[1:].split(":")[0]) + r.count("b")) % 3 else "Unsupported",
        }
        for r, its in tasks.items()
        for it in its
    ]
    res = agreement(pd.DataFrame(rows), "safety_label", load_schema("mtb"), raters=["onc_a", "onc_b", "onc_c"])
    pairwise = [s for s in res["statistics"] if s["statistic"] == "cohen_kappa" and s["weights"] == "none"]
    assert len(pairwise) == 3 and {s["n_items"] for s in pairwise} == {10}
