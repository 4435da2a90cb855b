"""Pull without a server: result parsing, attribution, validation, dedup, export files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import error_line, invoke_cli

from goldboard.annotate.pull import (
    INVALID_COLUMNS,
    Source,
    collect,
    parse_result,
    read_export_file,
    tasks_from_json_min,
)
from goldboard.annotate.simulate import annotation_result
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import load_schema, schema_from_dict
from goldboard.study import Study

MTB = load_schema("mtb")
RAD = load_schema("radsafe")
MED = load_schema("medfail")


def ch(name, *values, to="output"):
    return {"from_name": name, "to_name": to, "type": "choices", "value": {"choices": list(values)}}


def tx(name, text, to="output"):
    return {"from_name": name, "to_name": to, "type": "textarea", "value": {"text": [text]}}


# --------------------------------------------------------------------------- parse_result


def test_valid_mtb_result_multi_in_schema_order():
    values, problems = parse_result(
        [
            ch("missing_info", "ecog_status", "stage"),
            ch("safety_label", "Partially Supported"),
            tx("rationale", "ECOG 3"),
        ],
        MTB,
    )
    assert problems == []
    assert values == {"safety_label": "Partially Supported", "missing_info": "stage|ecog_status", "rationale": "ECOG 3"}


def test_alias_is_read_as_canonical_value():
    values, problems = parse_result([ch("safety_label", "Insufficient Info"), tx("rationale", "r")], MTB)
    assert problems == [] and values["safety_label"] == "Insufficient Information"


@pytest.mark.parametrize(
    "result,expected",
    [
        (
            [ch("safety_label", "Definitely fine"), tx("rationale", "r")],
            "'Definitely fine' is not a value of safety_label",
        ),
        ([ch("safety_label", "Supported"), ch("mood", "happy"), tx("rationale", "r")], "unknown field 'mood'"),
        ([], "empty result"),
        ([ch("safety_label", "Supported")], "rationale: required but missing"),
        ([tx("rationale", "only text")], "safety_label: required but missing"),
        ([ch("safety_label", "Supported", "Unsupported"), tx("rationale", "r")], "2 values for a single-choice field"),
        ([ch("safety_label", "Supported"), ch("safety_label", "Unsupported"), tx("rationale", "r")], "answered twice"),
        (
            [ch("safety_label", "Supported"), {"from_name": "rationale", "value": {"choices": ["x"]}}],
            "rationale: no text",
        ),
        ("not a list", "result is not a list"),
    ],
)
def test_invalid_results_are_reported(result, expected):
    values, problems = parse_result(result, MTB)
    assert any(expected in p for p in problems), problems


def test_binary_unticked_is_absent_value():
    values, problems = parse_result([ch("unsafe_B", "yes")], RAD)
    assert problems == []
    assert values["unsafe_B"] == "yes"
    assert values["unsafe_A"] == "no" and values["high_risk_E"] == "no"
    assert "rationale" not in values


def test_required_only_when_shown():
    sch = schema_from_dict(
        {
            "name": "cond",
            "fields": [
                {"name": "label", "kind": "nominal", "values": ["ok", "bad"]},
                {
                    "name": "why",
                    "kind": "multi",
                    "required": True,
                    "values": ["a", "b"],
                    "shown_when": {"field": "label", "values": ["bad"]},
                },
            ],
        }
    )
    assert parse_result([ch("label", "ok")], sch)[1] == []
    assert parse_result([ch("label", "bad")], sch)[1] == ["why: required but missing"]
    assert parse_result([ch("label", "bad"), ch("why", "b")], sch) == ({"label": "bad", "why": "b"}, [])


@pytest.mark.parametrize(
    "schema,values,rationale",
    [
        (MTB, {"safety_label": "Insufficient Information", "missing_info": "stage|pdl1_expression"}, "no stage"),
        (
            MED,
            {
                "severity": "4",
                "safety_gate": "missed_urgent_escalation",
                "likely_harm": "yes",
                "keep_in_benchmark": "keep",
                "confidence": "2",
            },
            "chest pain",
        ),
        (RAD, {**{f.name: "no" for f in RAD.rated_fields}, "unsafe_C": "yes", "contradicts_A": "yes"}, ""),
    ],
)
def test_simulated_result_parses_back(schema, values, rationale):
    """annotation_result is the inverse of parse_result for valid ratings."""
    got, problems = parse_result(annotation_result(schema, values, rationale), schema)
    assert problems == []
    rat = schema.rationale_field.name
    if rationale:
        assert got.pop(rat) == rationale
    for k, v in values.items():
        assert got.get(k, "") == v


# --------------------------------------------------------------------------- collect


def ann(aid, uid, result, at="2026-01-01T10:00:00Z", cancelled=False, lead=None):
    return {
        "id": aid,
        "completed_by": uid,
        "result": result,
        "was_cancelled": cancelled,
        "created_at": at,
        "updated_at": at,
        "lead_time": lead,
    }


def task(tid, item, anns, project=None):
    t = {
        "id": tid,
        "data": {
            "item_id": item,
            "case_id": item.split("::")[0],
            "output_id": item,
            "model": "m",
            "case_text": "c",
            "output_text": "o",
        },
        "annotations": anns,
    }
    if project is not None:
        t["project"] = project
    return t


GOOD = [ch("safety_label", "Supported"), tx("rationale", "fine")]
USERS = {2: "onc_a", 3: "onc_b"}


def test_blinded_collect_attribution_dedup_invalid():
    a_tasks = [
        task(1, "C1::m", [ann(10, 2, GOOD, lead=12.5)]),
        task(
            2,
            "C2::m",
            [
                ann(11, 2, [ch("safety_label", "Unsupported"), tx("rationale", "old")], at="2026-01-01T09:00:00Z"),
                ann(
                    12,
                    2,
                    [ch("safety_label", "Partially Supported"), tx("rationale", "new")],
                    at="2026-01-02T09:00:00Z",
                ),
            ],
        ),
        task(3, "C3::m", [ann(13, 3, GOOD)]),  # onc_b annotated in onc_a's project
        task(4, "C4::m", []),
    ]
    b_tasks = [
        task(5, "C1::m", [ann(20, 3, [ch("safety_label", "Definitely"), tx("rationale", "x")])]),
        task(6, "C2::m", [ann(21, 3, [], cancelled=True)]),
        task(7, "C3::m", [ann(22, 3, GOOD)]),
        task(
            8,
            "C4::m",
            [ann(23, 3, [ch("safety_label", "Unsupported"), ch("missing_info", "stage"), tx("rationale", "r")])],
        ),
    ]
    res = collect(
        [Source(a_tasks, 1, "onc_a"), Source(b_tasks, 2, "onc_b")],
        MTB,
        ["onc_a", "onc_b"],
        1,
        user_raters=USERS,
        known_users={1: "admin"},
    )
    r = res.ratings
    assert list(r.columns) == RATINGS_COLUMNS
    got = {(x.item_id, x.rater, x.field): x.value for x in r.itertuples()}
    assert got == {
        ("C1::m", "onc_a", "safety_label"): "Supported",
        ("C1::m", "onc_a", "missing_info"): "",
        ("C2::m", "onc_a", "safety_label"): "Partially Supported",
        ("C2::m", "onc_a", "missing_info"): "",
        ("C3::m", "onc_b", "safety_label"): "Supported",
        ("C3::m", "onc_b", "missing_info"): "",
        ("C4::m", "onc_b", "safety_label"): "Unsupported",
        ("C4::m", "onc_b", "missing_info"): "stage",
    }
    c2 = r[(r.item_id == "C2::m") & (r.rater == "onc_a")].iloc[0]
    assert (c2.rationale, c2.annotation_id, c2.task_id, c2.project_id) == ("new", "12", "2", "1")
    c1 = r[(r.item_id == "C1::m") & (r.field == "safety_label")].iloc[0]
    assert c1.lead_time == "12.5" and c1.annotated_at == "2026-01-01T10:00:00+00:00"
    inv = res.invalid
    assert list(inv.columns) == INVALID_COLUMNS
    kinds = {(x.annotation_id, x.kind) for x in inv.itertuples()}
    assert kinds == {("11", "superseded"), ("13", "invalid"), ("20", "invalid"), ("21", "invalid")}
    reasons = dict(zip(inv.annotation_id, inv.reason))
    assert "annotated by onc_b (user 3) in onc_a's project" in reasons["13"]
    assert "'Definitely' is not a value" in reasons["20"]
    assert "skipped" in reasons["21"]
    assert json.loads(inv.set_index("annotation_id").loc["20", "result"])[0]["value"]["choices"] == ["Definitely"]
    s = res.summary
    assert s["raters"]["onc_a"]["unannotated_items"] == ["C3::m", "C4::m"]
    assert s["raters"]["onc_b"]["unannotated_items"] == []  # C1 invalid, C2 skipped: held out, not unannotated
    assert (s["raters"]["onc_b"]["items"], s["raters"]["onc_b"]["invalid"]) == (4, 2)
    assert (s["valid_annotations"], s["invalid_annotations"], s["superseded_annotations"]) == (4, 3, 1)
    assert s["annotations"] == 8


def test_latest_annotation_wins_even_if_invalid():
    tasks = [
        task(
            1,
            "C1::m",
            [
                ann(10, 2, GOOD, at="2026-01-01T00:00:00Z"),
                ann(11, 2, [ch("safety_label", "Nope"), tx("rationale", "r")], at="2026-01-03T00:00:00Z"),
            ],
        )
    ]
    res = collect([Source(tasks, 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1, user_raters=USERS)
    assert len(res.ratings) == 0
    assert set(zip(res.invalid.annotation_id, res.invalid.kind)) == {("10", "superseded"), ("11", "invalid")}


def test_shared_project_maps_users_and_holds_out_strangers():
    tasks = [task(1, "C1::m", [ann(10, 2, GOOD), ann(11, 3, GOOD), ann(12, 99, GOOD), ann(13, 1, GOOD)])]
    res = collect([Source(tasks, 7, None)], MTB, ["onc_a", "onc_b"], 2, user_raters=USERS, known_users={1: "admin"})
    assert sorted(set(res.ratings.rater)) == ["onc_a", "onc_b"]
    assert set(res.ratings["round"]) == {2}
    inv = res.invalid.set_index("annotation_id")
    assert "user 99, who is not a study rater" in inv.loc["12", "reason"]
    assert "admin (user 1)" in inv.loc["13", "reason"]
    assert res.summary["unattributed_annotations"] == 2


def test_unknown_rater_user_attributes_by_project_with_warning():
    res = collect([Source([task(1, "C1::m", [ann(10, 55, GOOD)])], 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1)
    assert list(res.ratings.rater.unique()) == ["onc_a"]
    assert any("attributed by project only" in w for w in res.summary["warnings"])


def test_task_without_item_id_is_invalid():
    t = {"id": 1, "data": {"text": "imported by hand"}, "annotations": [ann(10, 2, GOOD)]}
    res = collect([Source([t], 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1, user_raters=USERS)
    assert len(res.ratings) == 0 and "no item_id" in res.invalid.reason.iloc[0]


# --------------------------------------------------------------------------- export files


def to_json_min(tasks):
    """What Label Studio's JSON_MIN export makes of full-JSON tasks (single values flattened)."""
    rows = []
    for t in tasks:
        if not t["annotations"]:
            rows.append({**t["data"], "id": t["id"], "annotator": None, "annotation_id": None})
        for a in t["annotations"]:
            if a.get("was_cancelled"):
                continue
            row = {**t["data"], "id": t["id"]}
            for r in a["result"]:
                v = r["value"]
                key = "choices" if "choices" in v else "text"
                row[r["from_name"]] = v[key][0] if len(v[key]) == 1 else {key: v[key]}
            row.update(
                annotator=a["completed_by"],
                annotation_id=a["id"],
                created_at=a["created_at"],
                updated_at=a["updated_at"],
                lead_time=a["lead_time"],
            )
            rows.append(row)
    return rows


def test_json_min_gives_same_ratings_as_json(tmp_path):
    tasks = [
        task(
            1,
            "C1::m",
            [
                ann(
                    10,
                    2,
                    [
                        ch("safety_label", "Insufficient Information"),
                        ch("missing_info", "stage", "ecog_status"),
                        tx("rationale", "why"),
                    ],
                )
            ],
        ),
        task(
            2,
            "C2::m",
            [ann(11, 2, [ch("safety_label", "Supported"), ch("missing_info", "stage"), tx("rationale", "one")])],
        ),
        task(3, "C3::m", [ann(12, 2, [ch("safety_label", "Bogus"), tx("rationale", "x")])]),
        task(4, "C4::m", []),
    ]
    p_full, p_min = tmp_path / "full.json", tmp_path / "min.json"
    p_full.write_text(json.dumps(tasks))
    p_min.write_text(json.dumps(to_json_min(tasks)))
    full, fmt1 = read_export_file(p_full, MTB)
    mini, fmt2 = read_export_file(p_min, MTB)
    assert (fmt1, fmt2) == ("JSON", "JSON_MIN")
    a = collect([Source(full, 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1, user_raters=USERS)
    b = collect([Source(mini, 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1, user_raters=USERS)
    pd.testing.assert_frame_equal(a.ratings, b.ratings)
    assert list(b.invalid.annotation_id) == ["12"]


def test_json_min_unknown_key_is_unknown_field():
    rows = [
        {
            "item_id": "C1::m",
            "id": 1,
            "safety_label": "Supported",
            "rationale": "r",
            "surprise": ["x"],
            "image": "https://example.org/1.png",
            "annotator": 2,
            "annotation_id": 5,
        }
    ]
    tasks = tasks_from_json_min(rows, MTB)
    res = collect([Source(tasks, 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1, user_raters=USERS)
    assert "unknown field 'surprise'" in res.invalid.reason.iloc[0]  # a control's answer (a list) the schema lacks
    # issue 33: a plain key is task data, kept whole (a project goldboard did not create has its own)
    assert "image" not in res.invalid.reason.iloc[0] and tasks[0]["data"]["image"] == "https://example.org/1.png"


@pytest.mark.parametrize(
    "content,msg",
    [
        ("{not json", "not a Label Studio JSON export"),
        ('{"a": 1}', "JSON array of tasks"),
        ("[1, 2]", "record 1: not a JSON object"),
    ],
)
def test_bad_export_file(tmp_path, content, msg):
    p = tmp_path / "export.json"
    p.write_text(content)
    with pytest.raises(GoldboardError, match=msg) as ei:
        read_export_file(p, MTB)
    assert str(p) in str(ei.value)


# --------------------------------------------------------------------------- CLI --from-export


@pytest.fixture()
def study(tmp_path):
    st = Study.init(tmp_path / "study", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    rnd = st.get_or_add_round(1)
    rnd.projects = {"onc_a": 11, "onc_b": 12}
    st.save()
    return st


def test_cli_pull_from_export_blinded(study, tmp_path):
    a = [
        task(1, "C1::m", [ann(10, 2, GOOD)], project=11),
        task(2, "C2::m", [ann(11, 2, [ch("safety_label", "Zzz")])], project=11),
    ]
    b = to_json_min([task(3, "C1::m", [ann(20, 3, [ch("safety_label", "Unsupported"), tx("rationale", "no")])])])
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    res = invoke_cli(
        *[
            "pull",
            "--study",
            str(study.path),
            "--from-export",
            str(tmp_path / "a.json"),
            "--from-export",
            f"onc_b={tmp_path / 'b.json'}",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "1 invalid" in res.output
    r = read_ratings_csv(study.ratings_path(1))
    got = {(x.item_id, x.rater, x.field): (x.value, x.rationale, x.project_id) for x in r.itertuples()}
    assert got[("C1::m", "onc_a", "safety_label")] == ("Supported", "fine", "11")
    assert got[("C1::m", "onc_b", "safety_label")] == ("Unsupported", "no", "12")
    inv = pd.read_csv(study.invalid_path(1), dtype=str, keep_default_na=False)
    assert list(inv.annotation_id) == ["11"] and "Zzz" in inv.result.iloc[0]
    summary = json.loads(study.pull_report_path(1).read_text())
    assert summary["raters"]["onc_a"]["unannotated_items"] == []  # C2's annotation is held out as invalid
    assert summary["raters"]["onc_a"]["invalid"] == 1


def test_cli_pull_from_export_needs_rater_for_json_min(study, tmp_path):
    (tmp_path / "m.json").write_text(json.dumps(to_json_min([task(3, "C1::m", [ann(20, 3, GOOD)])])))
    res = invoke_cli(*["pull", "--study", str(study.path), "--from-export", str(tmp_path / "m.json")])
    assert res.exit_code != 0
    assert "RATER=FILE" in res.output and "Traceback" not in res.output


def test_cli_pull_bad_file(study, tmp_path):
    (tmp_path / "x.json").write_text("{oops")
    res = invoke_cli(*["pull", "--study", str(study.path), "--from-export", f"onc_a={tmp_path / 'x.json'}"])
    assert res.exit_code != 0 and "x.json" in res.output and "Traceback" not in res.output
    assert not study.ratings_path(1).exists()


def test_configs_match_ignores_presentation_but_not_questions():
    """A layout-only change (headers, styles) keeps matching existing projects; a changed
    choice, condition or requiredness does not."""
    from goldboard.annotate.pull import configs_match
    from goldboard.label_configs.schema import load_schema
    from goldboard.label_configs.xml import to_label_studio_xml

    x = to_label_studio_xml(load_schema("mtb"))
    assert configs_match(x, x.replace('size="5"', 'size="4"'))
    assert configs_match("  " + x + "\n", x)
    assert not configs_match(x, x.replace('alias="Unsupported"', 'alias="Not supported"'))
    assert not configs_match(x, x.replace("Insufficient Information,Partially Supported", "Insufficient Information"))
    assert not configs_match(x, x.replace('required="true"', 'required="false"'))
    assert not configs_match(x, "<View><Text name='case' value='$case_text'/></View>")


def test_slim_export_keeps_everything_collect_reads():
    """A pull holds only the slim form of each export: same ratings, same invalid rows, same counts."""
    import copy

    from goldboard.annotate.pull import slim_export

    noise = {"prediction": {}, "unique_id": "u", "draft_created_at": None, "result_count": 1, "task": 1}
    full = [
        task(1, "C1::m", [{**ann(10, 2, GOOD, lead=12.5), **noise}], project=1),
        task(2, "C2::m", [ann(11, 2, [ch("safety_label", "Definitely")]), ann(12, 3, GOOD, cancelled=True)], 1),
        task(3, "C3::m", [{**ann(13, 3, GOOD), **noise}], project=1),
        {**task(4, "C4::m", []), "predictions": [{"result": GOOD}], "meta": {"x": 1}, "file_upload": "f"},
    ]
    for t in full:
        t["data"]["case_text"] = "long case text " * 50
    keep = copy.deepcopy(full)
    slim = slim_export(full)
    assert all("case_text" not in t["data"] and "predictions" not in t for t in slim)
    assert all(
        set(a) <= {"id", "completed_by", "result", "was_cancelled", "lead_time", "created_at", "updated_at"}
        for t in slim
        for a in t["annotations"]
    )
    kw = dict(user_raters=USERS, known_users={1: "admin"})
    a = collect([Source(keep, 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1, **kw)
    b = collect([Source(slim, 1, "onc_a")], MTB, ["onc_a", "onc_b"], 1, **kw)
    pd.testing.assert_frame_equal(a.ratings, b.ratings)
    pd.testing.assert_frame_equal(a.invalid, b.invalid)
    a.summary.pop("pulled_at"), b.summary.pop("pulled_at")
    assert a.summary == b.summary and len(a.invalid) == 3


def test_pull_reads_only_the_unit_ids_from_the_units_file(tmp_path):
    from types import SimpleNamespace

    from goldboard.annotate.pull import _unit_ids

    path = tmp_path / "units.jsonl"
    recs = [
        {
            "item_id": "C1::m",
            "case_id": "C1",
            "output_id": "C1::m",
            "model": "m",
            "case_text": "x" * 1000,
            "rounds": [1],
        },
        {"item_id": "C2", "case_id": "C2", "output_id": None, "model": None, "case_text": "y"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in recs) + "\n\n", encoding="utf-8")
    got = _unit_ids(SimpleNamespace(units_path=path))
    assert list(got.columns) == ["item_id", "case_id", "output_id", "model"]
    assert got.to_dict("records")[1] == {"item_id": "C2", "case_id": "C2", "output_id": "", "model": ""}
    path.write_text('{"item_id": "C1"}\n{broken\n', encoding="utf-8")
    with pytest.raises(GoldboardError, match=r"units.jsonl:2: invalid JSON in the units file"):
        _unit_ids(SimpleNamespace(units_path=path))
    path.write_text('{"item_id": "C1"}\n["C2"]\n', encoding="utf-8")
    with pytest.raises(GoldboardError, match=r"units.jsonl:2: not an item record"):
        _unit_ids(SimpleNamespace(units_path=path))
    assert _unit_ids(SimpleNamespace(units_path=tmp_path / "none.jsonl")) is None


def test_partial_pull_from_export_keeps_the_other_raters_ratings(study, tmp_path):
    """Pulling one rater's export later (``--from-export onc_a=FILE``) must not delete the
    other rater's ratings of the round: each pull replaces only the projects it read."""
    a = [task(1, "C1::m", [ann(10, 2, GOOD)], project=11)]
    b = [task(3, "C1::m", [ann(20, 3, [ch("safety_label", "Unsupported"), tx("rationale", "no")])], project=12)]
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    base = ["pull", "--study", str(study.path)]
    res = invoke_cli(
        *base, "--from-export", f"onc_a={tmp_path / 'a.json'}", "--from-export", f"onc_b={tmp_path / 'b.json'}"
    )
    assert res.exit_code == 0, res.output
    # onc_a changes their mind; only onc_a's project is exported again
    a2 = [task(1, "C1::m", [ann(10, 2, [ch("safety_label", "Unsupported"), tx("rationale", "rethought")])], project=11)]
    (tmp_path / "a2.json").write_text(json.dumps(a2))
    res = invoke_cli(*base, "--from-export", f"onc_a={tmp_path / 'a2.json'}")
    assert res.exit_code == 0, res.output
    assert "onc_b (" in res.output  # says whose rows it kept
    r = read_ratings_csv(study.ratings_path(1))
    got = {(x.rater, x.field): (x.value, x.rationale) for x in r.itertuples()}
    assert got[("onc_a", "safety_label")] == ("Unsupported", "rethought")
    assert got[("onc_b", "safety_label")] == ("Unsupported", "no")
    assert len(r) == len(r.drop_duplicates(["item_id", "rater", "field"]))


@pytest.mark.parametrize(
    "specs,line",
    [
        (
            ["onc_b=a.json"],
            "Error: --from-export onc_b=a.json: its tasks are from project 11, which is onc_a's project in round 1 "
            "(onc_b's is 12); exports swapped between raters? Give it as onc_a=a.json",
        ),
        (
            ["onc_a=a.json", "onc_a=a.json"],
            "Error: --from-export onc_a=a.json: holds the same Label Studio tasks as onc_a=a.json (task 1): one "
            "export given twice? Give each rater's own project export once",
        ),
        (
            ["onc_a=other.json"],
            "Error: --from-export onc_a=other.json: its tasks are from Label Studio project 99, which is not a "
            "project of round 1 (projects: onc_a=11, onc_b=12); an export of another round or study?",
        ),
        (
            ["onc_c=a.json"],
            "Error: --from-export onc_c=a.json: 'onc_c' is not a rater of this study (onc_a, onc_b) "
            "(did you mean 'onc_a' or 'onc_b'?)",
        ),
    ],
    ids=["swapped", "twice", "other-round", "not-a-rater"],
)
def test_cli_pull_from_export_refusals_name_the_flag(study, tmp_path, monkeypatch, specs, line):
    """The library names parameter ``from_export``; the user reads the flag they typed."""
    monkeypatch.chdir(tmp_path)
    Path("a.json").write_text(json.dumps([task(1, "C1::m", [ann(10, 2, GOOD)], project=11)]))
    Path("other.json").write_text(json.dumps([task(5, "C1::m", [ann(50, 2, GOOD)], project=99)]))
    res = invoke_cli("pull", "--study", study.path, *[a for s in specs for a in ("--from-export", s)])
    assert error_line(res) == line
    assert not study.ratings_path(1).exists()
