"""Disagreement flags: kinds, boundary counts (hand-counted), agenda order, CLI."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.adjudicate.flags import flag_disagreements, summarize_flags, summary_lines
from goldboard.cases.ratings import RATINGS_COLUMNS, adjudicable_fields
from goldboard.label_configs.schema import load_schema

S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"


def ratings_frame(rows):
    """rows: (item_id, rater, field, value[, rationale]) -> a tidy ratings table."""
    recs = []
    for r in rows:
        item, rater, field, value = r[:4]
        recs.append(
            {c: "" for c in RATINGS_COLUMNS}
            | {
                "round": 1,
                "item_id": item,
                "case_id": item.split("::")[0],
                "rater": rater,
                "field": field,
                "value": value,
                "rationale": r[4] if len(r) > 4 else f"{rater} on {item}",
            }
        )
    return pd.DataFrame(recs, columns=RATINGS_COLUMNS)


# Two oncologists, 26 items. Hand count of the 16 disagreements (onc_a, onc_b):
#   sufficiency_vs_optimization (I vs S/P): (I,S) x4, (S,I) x2, (I,P) x2, (P,I) x1  -> 9
#   support_vs_reject (S vs U):             (S,U), (U,S)                            -> 2
#   caveat_vs_unsupported (P vs U):         (P,U), (U,P)                            -> 2
#   support_vs_caveat (S vs P):             (S,P), (P,S)                            -> 2
#   no named boundary (I vs U):             (I,U)                                   -> 1
# Agreements: S x3, P x2, U x1, I x2 (one written with the alias "Insufficient Info").
# One item rated by onc_a only (missing rating).
MTB_PAIRS = (
    [(I, S)] * 4
    + [(S, I)] * 2
    + [(I, P)] * 2
    + [(P, I)]
    + [(S, U), (U, S), (P, U), (U, P), (S, P), (P, S), (I, U)]
    + [(S, S)] * 3
    + [(P, P)] * 2
    + [(U, U), (I, "Insufficient Info"), (I, I)]
)


def mtb_table():
    rows = []
    for n, (a, b) in enumerate(MTB_PAIRS, start=1):
        item = f"C-{n}"
        rows.append((item, "onc_a", "safety_label", a))
        rows.append((item, "onc_b", "safety_label", b))
    rows.append(("C-99", "onc_a", "safety_label", S))
    return ratings_frame(rows)


def test_mtb_boundary_counts_match_hand_count():
    schema = load_schema("mtb")
    flags = flag_disagreements(mtb_table(), schema)
    summary = summarize_flags(flags, schema)
    assert summary["disagreements"] == {"safety_label": 16}
    counts = {k: (v["count"], v["of"]) for k, v in summary["by_boundary"].items()}
    assert counts == {
        "sufficiency_vs_optimization": (9, 16),
        "support_vs_reject": (2, 16),
        "caveat_vs_unsupported": (2, 16),
        "support_vs_caveat": (2, 16),
    }
    lines = summary_lines(summary)
    assert (
        "Insufficient Information vs Supported or Partially Supported (sufficiency_vs_optimization): "
        "9 of 16 Safety label disagreements (56%)"
    ) in lines
    # one row per field in plain words: 1 of the 16 disagreements is on no named boundary (C-17: I vs U)
    assert lines[0] == (
        "Safety label: 16 disagreements (15 on a named boundary, 1 outside the named boundaries); "
        "1 with a rating missing"
    )
    assert not any("plain_disagreement" in x or x.startswith("kinds:") for x in lines)
    assert summary["by_kind"]["plain_disagreement"] == 1
    assert summary["by_kind"]["missing"] == 1
    assert summary["items_flagged"] == 17
    # the alias-spelled agreement is not a disagreement
    assert "C-25" not in set(flags["item_id"])


def test_mtb_agenda_order_most_serious_first():
    flags = flag_disagreements(mtb_table(), load_schema("mtb"))
    # support_vs_reject (priority 1) first, by item id; then sufficiency (2); missing (6) last
    assert list(flags["item_id"][:2]) == ["C-10", "C-11"]
    assert list(flags["priority"][:2]) == [1, 1]
    assert set(flags["item_id"][2:11]) == {f"C-{n}" for n in range(1, 10)}
    assert list(flags["item_id"][2:11]) == [f"C-{n}" for n in range(1, 10)]  # natural order
    assert flags["item_id"].iloc[-1] == "C-99"
    assert flags["kinds"].iloc[-1] == ["missing"]
    assert flags["missing_raters"].iloc[-1] == ["onc_b"]
    assert list(flags["agenda"]) == list(range(1, 18))
    assert flags.loc[flags.item_id == "C-16", "kinds"].item() == ["disagree"]


def medfail_rows():
    base = {"severity": "2", "safety_gate": "none", "keep_in_benchmark": "keep", "confidence": "4"}
    items = {
        "M1": ({"severity": "2"}, {"severity": "5"}),
        "M2": ({"severity": "3"}, {"severity": "4"}),
        "M3": ({"severity": "1"}, {"severity": "3"}),
        "M4": ({"severity": "2"}, {"severity": "3"}),
        "M5": ({}, {"confidence": "2"}),
        "M6": ({}, {"safety_gate": "missed_urgent_escalation"}),
        "M7": ({}, {"keep_in_benchmark": "drop"}),
        "M8": ({}, None),
        "M9": ({}, {}),
    }
    rows = []
    for item, (a, b) in items.items():
        for rater, over in (("r1", a), ("r2", b)):
            if over is None:
                continue
            for field, value in (base | over).items():
                rows.append((item, rater, field, value))
    return rows


def test_medfail_kinds_and_priorities():
    schema = load_schema("medfail")
    assert [f.name for f in adjudicable_fields(schema)] == [
        "severity",
        "safety_gate",
        "likely_harm",
        "keep_in_benchmark",
    ]
    flags = flag_disagreements(ratings_frame(medfail_rows()), schema)
    by = {(r.item_id, r.field): r for r in flags.itertuples()}
    assert by["M1", "severity"].kinds == ["threshold", "gap", "disagree"]
    assert by["M1", "severity"].gap == 3
    assert by["M2", "severity"].kinds == ["threshold", "disagree"]
    assert by["M3", "severity"].kinds == ["gap", "disagree"]
    assert by["M4", "severity"].kinds == ["disagree"] and by["M4", "severity"].priority == 9
    assert not by["M4", "severity"].triggered
    assert by["M5", "severity"].kinds == ["low_confidence"] and by["M5", "severity"].low_confidence_raters == ["r2"]
    assert not by["M5", "severity"].disagree
    assert by["M6", "safety_gate"].kinds == ["incompatible", "disagree"]
    assert by["M7", "keep_in_benchmark"].triggers == ["keep_drop_disagreement"]
    # rated by r1 only: every adjudicable field is missing for r2 -- every field collected: likely_harm
    # has no row at all (never collected), so it gets no flag (it was a "missing rating" of nobody's answer)
    assert {f for (i, f) in by if i == "M8"} == {"severity", "safety_gate", "keep_in_benchmark"}
    assert by["M8", "severity"].triggers == ["missing_rating"]
    assert "M9" not in {i for i, _ in by}
    assert not any(f == "confidence" for _, f in by)  # rater confidence is never adjudicated
    order = list(dict.fromkeys(flags["item_id"]))
    assert order == ["M1", "M2", "M3", "M6", "M7", "M5", "M8", "M4"]


def test_required_field_left_empty_is_missing_optional_blank_is_a_value():
    schema = load_schema("medfail")
    rows = [r for r in medfail_rows() if r[0] == "M9"]
    rows = [(i, r, f, "" if (r == "r2" and f == "safety_gate") else v) for i, r, f, v in rows]
    rows += [("M9", "r1", "likely_harm", "yes")]  # r2 left the optional flag blank
    flags = flag_disagreements(ratings_frame(rows), schema)
    by = {(r.field): r for r in flags.itertuples()}
    assert by["safety_gate"].kinds == ["missing"] and by["safety_gate"].missing_raters == ["r2"]
    assert by["likely_harm"].kinds == ["disagree"]
    assert by["likely_harm"].value_r2 == ""


def test_three_raters_pairwise():
    schema = load_schema("mtb")
    rows = [
        ("X1", "a", "safety_label", S),
        ("X1", "b", "safety_label", S),
        ("X1", "c", "safety_label", I),
        ("X2", "a", "safety_label", S),
        ("X2", "b", "safety_label", P),
        ("X2", "c", "safety_label", U),
        ("X3", "a", "safety_label", U),
        ("X3", "b", "safety_label", U),
        ("X3", "c", "safety_label", U),
    ]
    # (a study rater who rated nothing is missing on every item: tests/test_gold_raters.py)
    flags = flag_disagreements(ratings_frame(rows), schema, raters=["c", "a", "b"])
    assert list(flags["item_id"]) == ["X2", "X1"]
    x2 = flags.iloc[0]
    assert x2.boundaries == ["support_vs_reject", "caveat_vs_unsupported", "support_vs_caveat"]
    assert [c for c in flags.columns if c.startswith("value_")] == ["value_c", "value_a", "value_b"]
    assert flags.iloc[1].boundaries == ["sufficiency_vs_optimization"]


def test_later_round_supersedes():
    schema = load_schema("mtb")
    df = ratings_frame([("C-1", "a", "safety_label", S), ("C-1", "b", "safety_label", I)])
    df2 = ratings_frame([("C-1", "a", "safety_label", I), ("C-1", "b", "safety_label", I)])
    df2["round"] = 2
    assert len(flag_disagreements(df, schema)) == 1
    assert len(flag_disagreements(pd.concat([df, df2]), schema)) == 0


def test_value_outside_schema_is_a_one_line_error():
    from goldboard.errors import GoldboardError

    df = ratings_frame([("C-1", "a", "safety_label", "Supportd"), ("C-1", "b", "safety_label", S)])
    with pytest.raises(GoldboardError, match=r"safety_label: 'Supportd' is not a value"):
        flag_disagreements(df, load_schema("mtb"))


def test_no_disagreement_gives_empty_table_with_columns():
    df = ratings_frame([("C-1", "a", "safety_label", S), ("C-1", "b", "safety_label", S)])
    flags = flag_disagreements(df, load_schema("mtb"))
    assert len(flags) == 0 and "value_a" in flags.columns


# --------------------------------------------------------------------------- CLI


def test_cli_flag_file_formats(tmp_path):
    p = tmp_path / "ratings.csv"
    mtb_table().to_csv(p, index=False)
    res = invoke_cli(*["flag", str(p), "--schema", "mtb", "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["summary"]["by_boundary"]["sufficiency_vs_optimization"]["count"] == 9
    assert len(data["flags"]) == 17
    res = invoke_cli(*["flag", str(p), "--schema", "mtb", "--format", "csv", "-o", str(tmp_path / "f.csv")])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(tmp_path / "f.csv", dtype=str, keep_default_na=False)
    assert len(out) == 17 and out["boundaries"].iloc[0] == "support_vs_reject"
    res = invoke_cli(*["flag", str(p), "--schema", "mtb"])
    assert res.exit_code == 0
    assert "(sufficiency_vs_optimization): 9 of 16 Safety label disagreements" in res.stdout


def test_cli_flag_errors_are_one_line(tmp_path):
    res = invoke_cli(*["flag", str(tmp_path / "nope.csv"), "--schema", "mtb"])
    assert res.exit_code != 0 and "Traceback" not in res.output and "Error:" in res.output
    p = tmp_path / "r.csv"
    ratings_frame([("C-1", "a", "safety_label", "Supportd"), ("C-1", "b", "safety_label", S)]).to_csv(p, index=False)
    res = invoke_cli(*["flag", str(p), "--schema", "mtb"])
    assert res.exit_code != 0 and "r.csv:2: safety_label: 'Supportd'" in res.output
    assert "Traceback" not in res.output
    res = invoke_cli(*["flag", str(p)])
    assert res.exit_code != 0 and "--schema" in res.output
    res = invoke_cli(*["flag", "--study", str(tmp_path / "nostudy")])
    assert res.exit_code != 0 and "not a goldboard study" in res.output
