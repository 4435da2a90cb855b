"""Schema-declared cross-field rules (``[[rules]]``): declared and validated in the schema,
checked at decision import (sheet and Label Studio) and gold export; a rater's rating that breaks
one is kept as rated, reported and flagged for adjudication."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from conftest import invoke_cli as run

from goldboard.adjudicate.decisions import read_decisions
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.fileio import write_csv_atomic
from goldboard.label_configs.schema import SchemaError, load_schema, schema_from_dict
from goldboard.study import Study

S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"
MI = "missing_info"
RULE = "missing_info_needs_insufficiency"


def ratings(spec) -> pd.DataFrame:
    """spec: (item, rater, safety_label, missing_info)."""
    recs = []
    for item, rater, label, mi in spec:
        base = {c: "" for c in RATINGS_COLUMNS} | {"round": 1, "item_id": item, "case_id": item, "rater": rater}
        recs.append(base | {"field": "safety_label", "value": label, "rationale": f"{rater} on {item}"})
        recs.append(base | {"field": MI, "value": mi, "rationale": f"{rater} on {item}"})
    return pd.DataFrame(recs, columns=RATINGS_COLUMNS)


SPEC = [
    ("X1", "onc_a", S, "stage"),  # onc_a breaks the rule; onc_b agrees on both fields
    ("X1", "onc_b", S, "stage"),
    ("X2", "onc_a", I, "stage"),  # fine: labels differ, missing_info unanimous "stage"
    ("X2", "onc_b", P, "stage"),
    ("X3", "onc_a", S, ""),  # fine, unanimous
    ("X3", "onc_b", S, ""),
]


@pytest.fixture()
def study(tmp_path) -> Study:
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"])
    write_csv_atomic(ratings(SPEC), st.ratings_path(1))
    return st


def fill(path: Path, decisions: dict) -> None:
    wb = openpyxl.load_workbook(path)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        key = (rec["Item ID"].value, rec["Field"].value)
        if key in decisions:
            rec["Decision"].value, rec["Reason"].value = decisions[key]
            rec["Adjudicator"].value = "dr_lee"
    wb.save(path)


def cell_of(path: Path, item: str, field: str) -> str:
    ws = openpyxl.load_workbook(path)["Disagreements"]
    head = [c.value for c in ws[1]]
    col = head.index("Decision") + 1
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if (rec["Item ID"].value, rec["Field"].value) == (item, field):
            return f"Disagreements!{openpyxl.utils.get_column_letter(col)}{rec['Item ID'].row}"
    raise KeyError((item, field))


# --------------------------------------------------------------------------- the schema format


def test_mtb_declares_the_rule():
    sch = load_schema("mtb")
    (rule,) = sch.rules
    assert rule.name == RULE and rule.describe() == (
        "if missing_info not empty then safety_label in {Insufficient Information, Partially Supported}"
    )
    assert [rule.broken(mi, lab) for mi, lab in [("stage", S), ("stage", U), ("stage", I), ("stage", P), ("", S)]] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert load_schema("mtb_unsafe").rules[0].broken("stage", "Unsafe")
    text = run("schema", "show", "mtb").stdout
    assert f"  {RULE} [priority 2]: if missing_info not empty then safety_label in" in text
    shown = json.loads(run("schema", "show", "mtb", "--format", "json").stdout)
    assert shown["rules"][0]["when"] == {"field": MI, "empty": False}
    assert shown["rules"][0]["then"] == {"field": "safety_label", "in": [I, P]}


BASE = {
    "name": "t",
    "fields": [
        {"name": "label", "kind": "nominal", "values": ["ok", "bad", "unknown"]},
        {"name": "why", "kind": "multi", "values": ["a", "b"]},
        {"name": "note", "kind": "text"},
    ],
}


@pytest.mark.parametrize(
    "rule,message",
    [
        ({"name": "r", "when": {"field": "why", "empty": False}}, "then: give a table"),
        ({"name": "r", "when": {"field": "nope", "empty": False}, "then": {}}, "field 'nope' is not a rated field"),
        ({"name": "r", "when": {"field": "note", "empty": False}, "then": {}}, "field 'note' is not a rated field"),
        (
            {
                "name": "r",
                "when": {"field": "why", "empty": False, "in": ["a"]},
                "then": {"field": "label", "in": ["ok"]},
            },
            "when: give exactly one of in, not_in, empty",
        ),
        (
            {"name": "r", "when": {"field": "why", "empty": False}, "then": {"field": "label", "in": ["fine"]}},
            "rules[0] (r): then: in: 'fine' is not a value of label",
        ),
        (
            {"name": "r", "when": {"field": "why", "empty": "no"}, "then": {"field": "label", "in": ["ok"]}},
            "empty: give true or false",
        ),
        (
            {"name": "r", "when": {"field": "why", "empty": False}, "then": {"field": "why", "in": ["a"]}},
            "two different fields",
        ),
        ({"name": "r", "if": {}}, "unknown key 'if'"),
        ({"when": {}}, "name: required"),
    ],
)
def test_rule_declarations_are_checked(rule, message):
    with pytest.raises(SchemaError, match=None) as ei:
        schema_from_dict(BASE | {"rules": [rule]}, source="t.toml")
    assert message in str(ei.value) and str(ei.value).startswith("t.toml: rules[0]")


def test_custom_rule_tests():
    sch = schema_from_dict(
        BASE
        | {
            "rules": [
                {
                    "name": "bad_needs_why",
                    "when": {"field": "label", "in": ["bad"]},
                    "then": {"field": "why", "empty": False},
                },
                {
                    "name": "no_b_when_ok",
                    "when": {"field": "label", "in": ["ok"]},
                    "then": {"field": "why", "not_in": ["b"]},
                },
            ]
        }
    )
    r1, r2 = sch.rules
    assert r1.broken("bad", "") and not r1.broken("bad", "a") and not r1.broken("ok", "")
    assert r2.broken("ok", "a|b") and not r2.broken("ok", "a") and not r2.broken("unknown", "b")


# --------------------------------------------------------------------------- raters' ratings: kept, warned, flagged


def test_rating_that_breaks_a_rule_is_kept_warned_and_flagged(study):
    before = read_ratings_csv(study.ratings_path(1))
    res = run("flag", "--study", study.path, "--format", "json")
    assert res.exit_code == 0
    assert (
        f"Warning: item X1, rater onc_a: missing_info 'stage' with safety_label 'Supported' breaks rule {RULE}"
        in res.stderr
    )
    assert "item X1, rater onc_b:" in res.stderr and "X2" not in res.stderr and "X3" not in res.stderr
    flags = json.loads(res.stdout)["flags"]
    x1 = {f["field"]: f for f in flags if f["item_id"] == "X1"}
    # raters agree on both fields, yet both rows are on the agenda so the adjudicator can fix the pair
    assert set(x1) == {"safety_label", MI}
    assert all(f["kinds"] == ["rule"] and f["triggers"] == [RULE] and f["priority"] == 2 for f in x1.values())
    assert json.loads(res.stdout)["summary"]["by_kind"]["rule"] == 2
    pd.testing.assert_frame_equal(read_ratings_csv(study.ratings_path(1)), before)  # never changed


# --------------------------------------------------------------------------- gold export


def test_gold_export_refuses_gold_that_breaks_a_rule(study):
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code != 0
    assert res.stderr.splitlines()[0] == (
        f"item X1: missing_info 'stage' (unanimous) with safety_label 'Supported' (unanimous) breaks rule {RULE} "
        "(if missing_info not empty then safety_label in {Insufficient Information, Partially Supported}); "
        "decide both fields (`goldboard adjudicate sheet`)"
    )
    assert "gold export: 1 schema rule violation; nothing written" in res.output
    assert not study.gold_dir.exists() or list(study.gold_dir.iterdir()) == []


# --------------------------------------------------------------------------- decision import


def test_sheet_import_checks_rules_on_the_resulting_gold(study, tmp_path):
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", study.path, "-o", sheet).exit_code == 0
    # X2: safety_label decided Supported while missing_info stays unanimous "stage" -> refused
    fill(sheet, {("X2", "safety_label"): (S, "caveat not relevant")})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code != 0 and read_decisions(study.decisions_path) == []
    ref = cell_of(sheet, "X2", "safety_label")
    assert res.stderr.splitlines()[0] == (
        f"{ref}: safety_label 'Supported' with missing_info 'stage' (unanimous) breaks rule {RULE} "
        "(if missing_info not empty then safety_label in {Insufficient Information, Partially Supported}) for item "
        "X2 (missing_info is not being decided here: choose a safety_label allowed with it)"
    )
    assert "1 problem found; nothing imported" in res.output
    # X1 (flagged by the rule): deciding the label alone keeps the break; deciding both fields fixes it
    fill(sheet, {("X2", "safety_label"): (P, "caveat"), ("X1", "safety_label"): (S, "complete")})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code != 0 and cell_of(sheet, "X1", "safety_label") in res.stderr
    fill(sheet, {("X1", MI): ("none", "nothing missing")})
    res = run("adjudicate", "import", "--study", study.path, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    assert {(e["item_id"], e["field"], e["decision"]) for e in read_decisions(study.decisions_path)} == {
        ("X1", "safety_label", S),
        ("X1", MI, ""),
        ("X2", "safety_label", P),
    }
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0 and "Wrote gold release v1" in res.stdout, res.output


def test_old_log_that_breaks_a_rule_is_caught_at_export(study):
    """A decision logged before the rule existed (written straight to the log) is caught by gold export."""
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    record_decisions(
        study.decisions_path,
        [Proposed("X1", MI, "", "fixed", "dr_lee"), Proposed("X2", "safety_label", U, "no evidence", "dr_kim")],
        source="sheet",
    )
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code != 0
    assert res.stderr.splitlines() == [
        f"item X2: missing_info 'stage' (unanimous) with safety_label 'Unsupported' (decided by dr_kim, D000002) "
        f"breaks rule {RULE} (if missing_info not empty then safety_label in {{Insufficient Information, "
        "Partially Supported}); decide both fields (`goldboard adjudicate sheet`)",
        "Error: " + str(study.gold_dir) + ": gold export: 1 schema rule violation; nothing written",
    ]


def test_label_studio_adjudication_pull_checks_rules(study):
    """The same check on decisions made in the Label Studio adjudication projects."""
    from test_adjudication_multi import FakeClient

    from goldboard.adjudicate.decisions import SheetErrors
    from goldboard.annotate.adjudication import pull_adjudication, push_adjudication

    client = FakeClient()
    push_adjudication(study, client=client)
    st = Study.open(study.path)
    pid = st.adjudication["projects"]["safety_label"]
    client.annotate(pid, "X2", [S], "caveat not relevant")
    with pytest.raises(SheetErrors) as ei:
        pull_adjudication(st, client=client)
    (err,) = ei.value.errors
    assert f"safety_label 'Supported' with missing_info 'stage' (unanimous) breaks rule {RULE}" in err and "X2" in err
    assert read_decisions(st.decisions_path) == []


@pytest.mark.live
def test_pull_reports_a_rating_that_breaks_a_rule_live(live_server, tmp_path):
    """On a real Label Studio: a rater's annotation with missing_info ticked under Supported is
    pulled exactly as rated and reported."""
    from test_rounds_integrity import cases_file

    from goldboard.annotate.simulate import post_ratings

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], data_dir=str(live_server.data_dir))
    cases = cases_file(tmp_path, 2)
    assert run("push", "--study", st.path, cases, "--quiet").exit_code == 0
    st = Study.open(st.path)
    items = st.units()["item_id"].tolist()
    want = ratings(
        [
            (items[0], "onc_a", S, "stage|ecog_status"),
            (items[0], "onc_b", S, ""),
            (items[1], "onc_a", I, "stage"),
            (items[1], "onc_b", I, "stage"),
        ]
    )
    post_ratings(st, want[["item_id", "rater", "field", "value", "rationale"]], progress=False)
    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0, res.output
    assert (
        f"warning: item {items[0]}, rater onc_a: missing_info 'stage|ecog_status' with safety_label 'Supported' "
        f"breaks rule {RULE}" in res.output
    )
    assert f"item {items[1]}" not in res.output and "rater onc_b" not in res.output
    got = read_ratings_csv(st.ratings_path(1)).set_index(["item_id", "rater", "field"])
    assert got.loc[(items[0], "onc_a", MI), "value"] == "stage|ecog_status"  # kept as rated
