"""Gold resolution rules and immutable versioned releases."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.adjudicate.decisions import Proposed, read_decisions, record_decisions
from goldboard.adjudicate.gold import gold_digest, resolve_gold
from goldboard.errors import GoldboardError
from goldboard.exports.gold import (
    diff_gold,
    list_releases,
    read_release,
    write_gold_release,
)
from goldboard.label_configs.schema import load_schema

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flags import I, P, S, U, medfail_rows, ratings_frame  # noqa: E402


def three_raters():
    return ratings_frame(
        [
            ("X1", "a", "safety_label", S),
            ("X1", "b", "safety_label", S),
            ("X1", "c", "safety_label", S),
            ("X2", "a", "safety_label", S),
            ("X2", "b", "safety_label", S),
            ("X2", "c", "safety_label", I),
            ("X3", "a", "safety_label", U),
            ("X3", "b", "safety_label", U),  # c did not rate X3
        ]
    )


def test_resolution_rules_three_raters(tmp_path):
    schema = load_schema("mtb")
    log = tmp_path / "decisions.jsonl"
    gold = resolve_gold(three_raters(), schema, read_decisions(log), ["a", "b", "c"])
    assert list(zip(gold.item_id, gold.method, gold.gold_value)) == [
        ("X1", "unanimous", S),
        ("X2", "unresolved", ""),
        ("X3", "unresolved", ""),
    ]
    assert list(gold.value_c) == [S, I, ""]
    record_decisions(
        log,
        [
            Proposed("X2", "safety_label", S, "", "adj"),
            Proposed("X1", "safety_label", P, "caveat missed by all", "adj"),
        ],
        source="sheet",
    )
    gold = resolve_gold(three_raters(), schema, read_decisions(log), ["a", "b", "c"])
    assert list(zip(gold.method, gold.gold_value)) == [("adjudicated", P), ("adjudicated", S), ("unresolved", "")]
    # latest decision wins, even an explicit "unresolved"
    record_decisions(log, [Proposed("X2", "safety_label", "unresolved", "reopened", "adj2")], source="sheet")
    gold = resolve_gold(three_raters(), schema, read_decisions(log), ["a", "b", "c"])
    x2 = gold[gold.item_id == "X2"].iloc[0]
    assert (x2.method, x2.gold_value, x2.adjudicator, x2.reason) == ("unresolved", "", "adj2", "reopened")
    entries = read_decisions(log)
    assert entries[-1]["previous_id"] == entries[0]["id"] and entries[-1]["previous_decision"] == S
    # a decision for an item not in the ratings is kept aside, not invented into gold
    record_decisions(log, [Proposed("Z9", "safety_label", S, "", "adj")], source="sheet")
    gold = resolve_gold(three_raters(), schema, read_decisions(log), ["a", "b", "c"])
    assert len(gold) == 3 and [e["item_id"] for e in gold.attrs["orphan_decisions"]] == ["Z9"]


def test_medfail_gold_fields_exclude_rater_confidence():
    gold = resolve_gold(ratings_frame(medfail_rows()), load_schema("medfail"))
    # likely_harm has no row in the ratings (never collected): no gold, never "9 unanimous" of blanks
    assert set(gold.field) == {"severity", "safety_gate", "keep_in_benchmark"}
    m5 = gold[(gold.item_id == "M5") & (gold.field == "severity")].iloc[0]
    assert (m5.method, m5.gold_value) == ("unanimous", "2")  # low confidence, but the raters agree
    m8 = gold[gold.item_id == "M8"]
    assert set(m8.method) == {"unresolved"}  # r2 never rated M8


def test_record_decisions_is_idempotent_per_origin(tmp_path):
    log = tmp_path / "d.jsonl"
    p = Proposed("X2", "safety_label", S, "r", "adj", origin="sheet:abc")
    assert len(record_decisions(log, [p], source="sheet").appended) == 1
    assert record_decisions(log, [p], source="sheet").appended == []
    # an LS decision changes it; re-importing the old sheet does not revert it
    record_decisions(log, [Proposed("X2", "safety_label", I, "r2", "adj", origin="ls:1:t")], source="label_studio")
    assert record_decisions(log, [p], source="sheet").appended == []
    assert [e["decision"] for e in read_decisions(log)] == [S, I]
    with pytest.raises(ValueError):
        record_decisions(log, [p], source="email")


def test_corrupt_log_line_is_reported_by_line(tmp_path):
    log = tmp_path / "d.jsonl"
    log.write_text('{"item_id": "X", "field": "f", "decision": "S"}\n{oops\n')
    with pytest.raises(GoldboardError, match=r"d.jsonl:2: invalid JSON"):
        read_decisions(log)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "xlsx"])
def test_release_formats_round_trip(tmp_path, fmt):
    gold = resolve_gold(three_raters(), load_schema("mtb"))
    gold.loc[0, "item_id"] = "=X1"  # an id that looks like a formula survives every format
    rel = write_gold_release(gold, tmp_path / "gold", fmt, manifest={"study": "t"})
    assert rel.created and rel.version == "v1" and rel.file.name == f"gold.{fmt}"
    back, man = read_release(rel.path)
    pd.testing.assert_frame_equal(back[list(gold.columns)], gold.reset_index(drop=True), check_dtype=False)
    assert man["gold_sha256"] == gold_digest(gold) and man["study"] == "t"
    assert not os.stat(rel.file).st_mode & stat.S_IWUSR  # released files are read-only


def test_releases_never_overwritten_unchanged_refused_force_allowed(tmp_path):
    gold = resolve_gold(three_raters(), load_schema("mtb"))
    gdir = tmp_path / "gold"
    v1 = write_gold_release(gold, gdir)
    again = write_gold_release(gold, gdir)
    assert not again.created and again.version == "v1"
    forced = write_gold_release(gold, gdir, "xlsx", force=True)
    assert forced.created and forced.version == "v2" and forced.manifest["forced"]
    changed = gold.copy()
    changed.loc[1, ["gold_value", "method"]] = [S, "adjudicated"]
    v3 = write_gold_release(changed, gdir)
    assert v3.version == "v3" and v3.manifest["previous"] == "v2" and not v3.manifest["forced"]
    assert [p.name for _, p in list_releases(gdir)] == ["v1", "v2", "v3"]
    assert not [p for p in gdir.iterdir() if p.name.startswith(".")]  # no temp folder left
    assert json.loads((v1.path / "manifest.json").read_text())["version"] == "v1"
    d = diff_gold(gold, changed)
    assert list(zip(d.item_id, d.change, d.old_value, d.new_value)) == [("X2", "value", "", S)]


def test_failed_write_leaves_no_release(tmp_path, monkeypatch):
    import goldboard.exports.gold as g

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(g, "write_gold_file", boom)
    gold = resolve_gold(three_raters(), load_schema("mtb"))
    with pytest.raises(OSError):
        g.write_gold_release(gold, tmp_path / "gold")
    assert list((tmp_path / "gold").iterdir()) == []


def test_diff_added_removed_method():
    old = pd.DataFrame(
        {
            "item_id": ["A", "B", "C"],
            "field": ["f"] * 3,
            "gold_value": ["x", "y", "z"],
            "method": ["unanimous", "unanimous", "unanimous"],
            "adjudicator": "",
            "reason": "",
        }
    )
    new = pd.DataFrame(
        {
            "item_id": ["B", "C", "D"],
            "field": ["f"] * 3,
            "gold_value": ["y", "z", "w"],
            "method": ["adjudicated", "unanimous", "unanimous"],
            "adjudicator": "",
            "reason": "",
        }
    )
    d = diff_gold(old, new)
    assert list(zip(d.item_id, d.change)) == [("A", "removed"), ("B", "method"), ("D", "added")]


def test_gold_cli_errors_and_list(tmp_path):

    from goldboard.fileio import write_csv_atomic
    from goldboard.study import Study

    res = invoke_cli(*["gold", "export", "--study", str(tmp_path / "none")])
    assert res.exit_code != 0 and "not a goldboard study" in res.output and "Traceback" not in res.output
    st = Study.init(tmp_path / "s", schema="mtb", raters=["a", "b", "c"])
    res = invoke_cli(*["gold", "export", "--study", str(st.path)])
    assert res.exit_code != 0 and "no ratings pulled yet" in res.output and "Traceback" not in res.output
    res = invoke_cli(*["gold", "list", "--study", str(st.path)])
    assert res.exit_code == 0 and "No gold releases yet" in res.output
    write_csv_atomic(three_raters(), st.ratings_path(1))
    res = invoke_cli(*["gold", "export", "--study", str(st.path), "--format", "xlsx"])
    assert res.exit_code == 0 and "Wrote gold release v1" in res.output and "1 unanimous" in res.output
    res = invoke_cli(*["gold", "list", "--study", str(st.path)])
    assert res.exit_code == 0 and res.output.startswith("v1 ") and "xlsx" in res.output
    res = invoke_cli(*["gold", "diff", "v1", "x", "--study", str(st.path)])
    assert res.exit_code != 0 and "looks like v1" in res.output and "Traceback" not in res.output
