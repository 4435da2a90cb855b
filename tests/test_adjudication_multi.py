"""Multi-select fields (mtb ``missing_info``) in flags, decisions, gold, releases, scoring,
the report and the Label Studio adjudication project (offline, with a fake client).

The whole sheet -> import -> gold round trip with multi rows is in
test_adjudication_roundtrip.py; these tests pin the rules one by one.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.adjudicate.decisions import (
    Proposed,
    format_decision,
    parse_multi_decision,
    read_decisions,
    record_decisions,
)
from goldboard.adjudicate.flags import flag_disagreements, summarize_flags
from goldboard.adjudicate.gold import method_counts, resolve_gold
from goldboard.exports.gold import diff_gold, read_release, write_gold_release
from goldboard.label_configs.schema import BUILTIN_DIR, SchemaError, load_schema, schema_from_dict

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_flags import I, P, S, ratings_frame  # noqa: E402

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]

MI = "missing_info"
ADJ = "adj@example.org"  # the fake server's adjudicator (named by e-mail)


def mtb_rows(spec):
    """spec: item -> ((label_a, mi_a), (label_b, mi_b)); ``None`` = the rater has no row."""
    rows = []
    for item, pair in spec.items():
        for rater, rating in zip(("a", "b"), pair):
            if rating is None:
                continue
            label, mi = rating
            rows.append((item, rater, "safety_label", label))
            if mi is not None:
                rows.append((item, rater, MI, mi))
    return ratings_frame(rows)


SPEC = {
    "X1": ((I, "stage|ecog_status"), (S, "")),  # sets differ (one hidden -> "")
    "X2": ((I, "ECOG_status| stage"), (I, "stage|ecog_status")),  # same set, other order/case/space
    "X3": ((S, ""), (S, "")),  # both hidden: the empty set, unanimous
    "X4": ((P, "ecog_status"), (P, "ecog_status|prior_therapy")),  # label agreed, sets differ
    "X5": ((I, "stage"), (I, None)),  # b rated the item but has no missing_info row: missing
    "X6": ((S, ""), None),  # b did not rate X6 at all
}


def mtb_dict():
    return tomllib.loads((BUILTIN_DIR / "mtb.toml").read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- flags


def test_multi_flags_compare_sets():
    schema = load_schema("mtb")
    flags = flag_disagreements(mtb_rows(SPEC), schema)
    mi = flags[flags.field == MI].set_index("item_id")
    assert sorted(mi.index) == ["X1", "X4", "X5", "X6"]
    assert mi.loc["X1", "kinds"] == ["disagree"] and not mi.loc["X1", "triggered"]
    assert mi.loc["X1", "priority"] == 9 and np.isnan(mi.loc["X1", "gap"])
    assert mi.loc["X1", "boundaries"] == [] and mi.loc["X1", "triggers"] == []
    assert (mi.loc["X1", "value_a"], mi.loc["X1", "value_b"]) == ("stage|ecog_status", "")
    assert (mi.loc["X4", "value_a"], mi.loc["X4", "value_b"]) == ("ecog_status", "ecog_status|prior_therapy")
    assert mi.loc["X5", "kinds"] == ["missing"] and mi.loc["X5", "missing_raters"] == ["b"]
    assert mi.loc["X6", "kinds"] == ["missing"]
    summary = summarize_flags(flags, schema)
    assert summary["disagreements"] == {"safety_label": 1, MI: 2}
    assert summary["by_kind"]["plain_disagreement"] == 2  # X1 and X4 missing_info rows
    # agenda: X1's missing_info row right after its safety-label row; X4 (only a plain multi
    # disagreement, priority 9) after the missing-rating item X6 (priority 6)
    assert list(zip(flags.item_id, flags.field)) == [
        ("X1", "safety_label"),
        ("X1", MI),
        ("X6", "safety_label"),
        ("X6", MI),
        ("X4", MI),
        ("X5", MI),
    ]


def test_multi_field_never_collected_gets_no_flags_or_gold():
    """A ratings table without any missing_info row (e.g. only the label was imported):
    nothing is invented for the multi field."""
    schema = load_schema("mtb")
    spec = {k: tuple(None if r is None else (r[0], None) for r in v) for k, v in SPEC.items()}
    df = mtb_rows(spec)
    flags = flag_disagreements(df, schema)
    assert set(flags.field) == {"safety_label"}
    assert summarize_flags(flags, schema)["disagreements"] == {"safety_label": 1}
    gold = resolve_gold(df, schema)
    assert set(gold.field) == {"safety_label"}


def test_multi_value_outside_schema_is_a_one_line_error():
    from goldboard.errors import GoldboardError

    df = mtb_rows({"X1": ((I, "stage|stgae"), (I, "stage"))})
    with pytest.raises(GoldboardError, match=r"missing_info: 'stgae' is not a value of missing_info"):
        flag_disagreements(df, load_schema("mtb"))


def test_schema_trigger_and_boundary_on_a_multi_field():
    data = mtb_dict()
    data["triggers"].append({"kind": "disagree", "field": MI, "name": "missing_info_differs", "priority": 1})
    data["boundaries"].append(
        {"name": "staging_vs_fitness", "field": MI, "a": ["stage"], "b": ["ecog_status"], "priority": 4}
    )
    schema = schema_from_dict(data)
    df = mtb_rows(
        {
            "Y1": ((I, "stage"), (I, "ecog_status")),  # a ticks side A only she ticked, b side B: crossed
            "Y2": ((I, "stage|ecog_status"), (I, "ecog_status")),  # only a's extra "stage": not crossed
            "Y3": ((I, "stage"), (S, "")),  # label boundary; multi: a's extra value has no side-B partner
        }
    )
    flags = flag_disagreements(df, schema)
    by = {(r.item_id, r.field): r for r in flags.itertuples()}
    assert by["Y1", MI].kinds == ["boundary", "disagree"] and by["Y1", MI].boundaries == ["staging_vs_fitness"]
    assert by["Y1", MI].triggers == ["missing_info_differs"] and by["Y1", MI].priority == 1
    assert by["Y2", MI].kinds == ["disagree"] and by["Y2", MI].boundaries == [] and by["Y2", MI].triggered
    summary = summarize_flags(flags, schema)
    assert summary["by_boundary"]["staging_vs_fitness"] == {
        "field": MI,
        "count": 1,
        "of": 3,
        "share": 1 / 3,
        "priority": 4,
        "explanation": "",
    }
    # the multi trigger's priority 1 puts Y1, Y2 first; within Y3 the label row comes first
    assert list(zip(flags.item_id, flags.field)) == [("Y1", MI), ("Y2", MI), ("Y3", "safety_label"), ("Y3", MI)]


def test_schema_refuses_compatible_pairs_on_a_multi_field():
    data = mtb_dict()
    data["triggers"].append({"kind": "incompatible", "field": MI, "compatible": [["stage", "ecog_status"]]})
    with pytest.raises(SchemaError, match="compatible: not supported on a multi-select field"):
        schema_from_dict(data)
    data["triggers"][-1].pop("compatible")  # plain incompatible = the sets differ
    flags = flag_disagreements(mtb_rows({"Z1": ((I, "stage"), (I, "ecog_status"))}), schema_from_dict(data))
    assert flags.iloc[0].kinds == ["incompatible", "disagree"]


# --------------------------------------------------------------------------- decisions


def test_parse_multi_decision_rules():
    f = load_schema("mtb").field(MI)
    assert parse_multi_decision(f, "ecog_status, STAGE") == ("stage|ecog_status", [])
    assert parse_multi_decision(f, "brain_metastasis;stage\npdl1_expression|stage") == (
        "stage|pdl1_expression|brain_metastasis",
        [],
    )
    assert parse_multi_decision(f, "none") == ("", [])
    assert parse_multi_decision(f, " (None) ") == ("", [])
    assert parse_multi_decision(f, "UNRESOLVED") == ("unresolved", [])
    bad, problems = parse_multi_decision(f, "stgae, ecog, stage")
    assert bad is None and problems == [
        f'"{x}" is not a value of missing_info (allowed: {", ".join(f.categories)}, none, unresolved)'
        for x in ("stgae", "ecog")
    ]
    assert parse_multi_decision(f, "unresolved|stage")[1] == [
        '"unresolved" cannot be combined with other values in decision "unresolved|stage"'
    ]
    assert format_decision(f, "") == "none" and format_decision(f, "stage") == "stage"


def test_parse_multi_decision_field_with_a_none_value_and_a_comma_value():
    data = {
        "name": "t",
        "fields": [
            {"name": "label", "kind": "nominal", "values": ["a", "b"]},
            {"name": "tags", "kind": "multi", "values": ["none", "dose, route", "other"]},
        ],
    }
    f = schema_from_dict(data).field("tags")
    assert parse_multi_decision(f, "None") == ("none", [])  # the field's own value wins
    assert parse_multi_decision(f, "(none)") == ("", [])  # the empty set is then written (none)
    assert format_decision(f, "") == "(none)"
    # a value holds a comma: "," is then not a separator ("|" ";" and line breaks still are)
    assert parse_multi_decision(f, "dose, route; other") == ("dose, route|other", [])


def test_empty_set_decision_is_a_decision_not_unresolved(tmp_path):
    schema = load_schema("mtb")
    df = mtb_rows(SPEC)
    log = tmp_path / "decisions.jsonl"
    record_decisions(
        log,
        [Proposed("X1", MI, "", "nothing is missing", "adj"), Proposed("X4", MI, "unresolved", "ask", "adj")],
        source="sheet",
    )
    assert [e["decision"] for e in read_decisions(log)] == ["", "unresolved"]
    # restating the empty set is a no-op
    assert record_decisions(log, [Proposed("X1", MI, "", "nothing is missing", "adj")], source="sheet").appended == []
    gold = resolve_gold(df, schema, read_decisions(log), ["a", "b"])
    mi = gold[gold.field == MI].set_index("item_id")
    assert (mi.loc["X1", "gold_value"], mi.loc["X1", "method"]) == ("", "adjudicated")
    assert (mi.loc["X4", "gold_value"], mi.loc["X4", "method"], mi.loc["X4", "reason"]) == ("", "unresolved", "ask")
    assert (mi.loc["X2", "gold_value"], mi.loc["X2", "method"]) == ("stage|ecog_status", "unanimous")
    assert (mi.loc["X3", "gold_value"], mi.loc["X3", "method"]) == ("", "unanimous")  # both: nothing ticked
    assert mi.loc["X5", "method"] == "unresolved" and mi.loc["X6", "method"] == "unresolved"
    assert method_counts(gold)[MI] == {"unanimous": 2, "adjudicated": 1, "unresolved": 3}
    assert method_counts(gold)["all"] == {"unanimous": 6, "adjudicated": 1, "unresolved": 5}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "xlsx"])
def test_multi_gold_survives_every_release_format(tmp_path, fmt):
    schema = load_schema("mtb")
    gold = resolve_gold(
        mtb_rows(SPEC),
        schema,
        [{"id": "D1", "item_id": "X1", "field": MI, "decision": "", "adjudicator": "adj", "independent": True}],
        ["a", "b"],
    )
    rel = write_gold_release(gold, tmp_path / "gold", fmt)
    back, man = read_release(rel.path)
    pd.testing.assert_frame_equal(back[list(gold.columns)], gold.reset_index(drop=True), check_dtype=False)
    assert man["counts"][MI] == {"unanimous": 2, "adjudicated": 1, "unresolved": 3}
    changed = gold.copy()
    k = changed.index[(changed.item_id == "X1") & (changed.field == MI)][0]
    changed.loc[k, "gold_value"] = "stage"
    d = diff_gold(back, changed)
    assert list(zip(d.item_id, d.field, d.change, d.old_value, d.new_value)) == [("X1", MI, "value", "", "stage")]


# --------------------------------------------------------------------------- scoring and the report


def _study_with_multi_gold(tmp_path):
    from goldboard.fileio import write_csv_atomic
    from goldboard.study import Study
    from goldboard.workflows import export_gold

    st = Study.init(tmp_path / "s", schema="mtb", raters=["a", "b"])
    df = mtb_rows(SPEC)
    df["case_id"] = df["item_id"]
    write_csv_atomic(df, st.ratings_path(1))
    record_decisions(
        st.decisions_path,
        [Proposed("X1", "safety_label", P, "caveat", "adj"), Proposed("X1", MI, "stage", "only stage", "adj")],
        source="sheet",
    )
    rel = export_gold(st)
    return st, rel


def test_score_study_with_multi_gold_rows(tmp_path):
    st, rel = _study_with_multi_gold(tmp_path)
    assert rel.manifest["fields"] == ["safety_label", MI]
    preds = tmp_path / "preds.csv"
    preds.write_text(
        "case_id,model,predicted_label\nX1,m,Partially Supported\nX2,m,Insufficient Information\n"
        "X3,m,Supported\nX4,m,Supported\nX5,m,Supported\nX6,m,Supported\n"
    )
    res = invoke_cli(*["score", "--study", str(st.path), "--predictions", str(preds), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    g = data["groups"][0]
    # safety_label gold: X1 adjudicated P, X2 I, X3 S, X4 P, X5 I; X6 unresolved (b did not rate it)
    assert data["gold"]["unresolved_excluded"] == 1 and g["n"] == 5
    assert data["field"] == "safety_label" and g["accuracy"]["estimate"] == pytest.approx(3 / 5)  # X1, X2, X3
    res = invoke_cli(*["score", "--study", str(st.path), "--predictions", str(preds), "--field", MI])
    assert res.exit_code != 0 and "Traceback" not in res.output and "missing_info is a multi field" in res.output


def test_report_groups_multi_gold_rows_by_field(tmp_path):
    from goldboard.workflows import build_report

    st, _ = _study_with_multi_gold(tmp_path)
    rep = build_report(st)
    assert rep["adjudication"]["methods"][MI] == {"unanimous": 2, "adjudicated": 1, "unresolved": 3}
    assert rep["adjudication"]["methods"]["safety_label"] == {"unanimous": 4, "adjudicated": 1, "unresolved": 1}
    assert rep["adjudication"]["release"] == "v1"


# --------------------------------------------------------------------------- Label Studio (fake client)


class FakeClient:
    """The few calls push/pull make, in memory."""

    url = "http://ls.test"

    def __init__(self):
        self.conn = type("Conn", (), {"credentials": None})()
        self.projects: dict[int, dict] = {}
        self.tasks: dict[int, list[dict]] = {}

    def create_project(self, title, xml, desc, maximum_annotations=1):
        pid = len(self.projects) + 1
        self.projects[pid] = {"id": pid, "title": title, "label_config": xml}
        self.tasks[pid] = []
        return pid

    def project(self, pid):
        return self.projects[pid]

    def task_data(self, pid):
        return [(t["id"], t["data"]) for t in self.tasks[pid]]

    def import_tasks(self, pid, tasks):
        for t in tasks:
            self.tasks[pid].append(
                {"id": 1000 + sum(map(len, self.tasks.values())), "data": t["data"], "annotations": []}
            )
        return len(tasks)

    def users(self):
        return [{"id": 7, "username": "adj", "email": "adj@example.org"}]

    def update_task_data(self, pid, tid, data):  # the pull brings the "Current decision" line up to date
        next(t for t in self.tasks[pid] if t["id"] == tid)["data"] = dict(data)

    def export(self, pid):
        return self.tasks[pid]

    def annotate(self, pid, item, choices, reason=None):
        task = next(t for t in self.tasks[pid] if t["data"]["item_id"] == item)
        result = [{"from_name": "decision", "to_name": "flags", "type": "choices", "value": {"choices": choices}}]
        if reason:
            result.append({"from_name": "reason", "to_name": "flags", "type": "textarea", "value": {"text": [reason]}})
        task["annotations"].append(
            {
                "id": len(task["annotations"]) + 1,
                "result": result,
                "completed_by": 7,
                "updated_at": "2025-01-01T00:00:00Z",
            }
        )


def test_label_studio_multi_project_push_and_pull(tmp_path):
    from goldboard.adjudicate.decisions import SheetErrors
    from goldboard.annotate.adjudication import adjudication_config, pull_adjudication, push_adjudication
    from goldboard.fileio import write_csv_atomic
    from goldboard.study import Study

    schema = load_schema("mtb")
    root = ET.fromstring(adjudication_config(schema, MI, 2))
    ch = root.find(".//Choices[@name='decision']")
    assert ch.get("choice") == "multiple" and ch.get("required") == "true"
    assert [c.get("alias") for c in ch.findall("Choice")] == schema.field(MI).categories + ["none", "unresolved"]
    single = ET.fromstring(adjudication_config(schema, "safety_label", 2)).find(".//Choices[@name='decision']")
    assert single.get("choice") == "single-radio"

    st = Study.init(tmp_path / "s", schema="mtb", raters=["a", "b"])
    write_csv_atomic(mtb_rows(SPEC), st.ratings_path(1))
    client = FakeClient()
    res = push_adjudication(st, client=client)
    assert res.imported == {"safety_label": 2, MI: 4}
    pid = Study.open(st.path).adjudication["projects"][MI]
    x1 = next(d for _, d in client.task_data(pid) if d["item_id"] == "X1")
    assert x1["rater_1"].startswith("Stage | ECOG status\n") and x1["rater_2"].startswith("none\n")
    assert push_adjudication(Study.open(st.path), client=client).imported == {"safety_label": 0, MI: 0}

    st = Study.open(st.path)
    client.annotate(pid, "X1", ["ecog_status", "stage"])  # onc a's set: no reason needed
    client.annotate(pid, "X4", ["none"], "nothing is missing for a caveat")  # overrides both
    client.annotate(pid, "X5", ["unresolved"])
    res = pull_adjudication(st, client=client)
    assert len(res.record.appended) == 3
    got = {(e["item_id"], e["decision"], e["adjudicator"], e["source"]) for e in read_decisions(st.decisions_path)}
    assert got == {
        ("X1", "stage|ecog_status", ADJ, "label_studio"),
        ("X4", "", ADJ, "label_studio"),
        ("X5", "unresolved", ADJ, "label_studio"),
    }
    assert pull_adjudication(st, client=client).record.appended == []  # re-pull: nothing new

    client.annotate(pid, "X6", ["none", "stage"])  # refused: none with values
    client.annotate(pid, "X4", ["prior_therapy"])  # overrides both without a reason
    with pytest.raises(SheetErrors) as exc:
        pull_adjudication(st, client=client)
    assert any('"none" cannot be combined with other values' in e for e in exc.value.errors)
    assert any("reason required: decision 'prior_therapy' overrides every rater" in e for e in exc.value.errors)
    assert len(read_decisions(st.decisions_path)) == 3
