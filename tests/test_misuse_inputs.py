"""Misuse suite (issue 11, "nothing a user typed or a file held is silently dropped or bent").

Each test drives the CLI the way a new user would misuse it and checks that goldboard
refuses (one line, non-zero exit, a did-you-mean where a name was mistyped) or warns,
instead of silently dropping or bending data.  Push/pull scenarios run against a live
Label Studio (``tests/test_misuse_live.py``); this module needs no server.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from builders import study_files as _snapshot
from conftest import error_line
from conftest import invoke_cli as run

from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.cases.synth import synthesize, write_records
from goldboard.fileio import write_csv_atomic, write_jsonl_atomic
from goldboard.label_configs.schema import builtin_names, load_schema
from goldboard.label_configs.xml import to_label_studio_xml
from goldboard.study import Study

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"


# --------------------------------------------------------------------------- 1. case columns


def mtb_case(case_id: str, **extra) -> dict:
    return {
        "case_id": case_id,
        "patient_summary": "62-year-old man, never-smoker, metastatic lung adenocarcinoma.",
        "histology": "adenocarcinoma",
        "stage": "IVB",
        "genomic_alteration": "EGFR exon 19 deletion",
        "proposed_therapy": "osimertinib 80 mg daily",
        **extra,
    }


def test_validate_reports_each_case_column_no_rater_sees_with_did_you_mean(tmp_path):
    cases = tmp_path / "cases.jsonl"
    write_records(
        [
            mtb_case("C1", **{"PD-L1": "TPS 80%", "ECOG": "1", "biomarker": "NGS tissue panel"}),
            mtb_case("C2", **{"PD-L1": "TPS 5%", "ECOG": "3", "biomarker": ""}),
        ],
        cases,
    )
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert res.exit_code == 0, res.output  # usable, but not silently
    out = res.output
    for column, meant in (("PD-L1", "pdl1"), ("ECOG", "ecog"), ("biomarker", "biomarker_assay")):
        line = next(ln for ln in out.splitlines() if f" {column}: warning:" in ln)
        assert "no rater will see it" in line and f"did you mean {meant!r}" in line, line
        assert line.startswith(str(cases)), line
    assert "3 warnings" in out and "0 warnings" not in out
    # the fix the warning suggests works: renamed columns are shown, no warning left
    write_records([mtb_case("C1", pdl1="TPS 80%", ecog="1", biomarker_assay="NGS tissue panel")], cases)
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert res.exit_code == 0 and "no rater will see" not in res.output and "0 warnings" in res.output


def test_unknown_column_without_close_display_field_is_still_reported(tmp_path):
    cases = tmp_path / "cases.csv"
    pd.DataFrame([mtb_case("C1", smoking_pack_years="40")]).to_csv(cases, index=False)
    res = run("cases", "validate", cases, "--schema", "mtb")
    line = next(ln for ln in res.output.splitlines() if "smoking_pack_years" in ln)
    assert "warning" in line and "no rater will see it" in line and "did you mean" not in line
    assert "case_fields" in line  # says how to show it


def test_hidden_by_design_columns_are_listed_not_warned():
    """Reference labels and benchmark bookkeeping are never shown (they would give the answer
    away): listed once, not warned about.  The shipped OpenMTB/MedFail/RadSaFE files are clean."""
    for cases, schema in (
        (DATA / "cases" / "openmtb_cases.json", "mtb"),
        (DATA / "cases" / "openmtb_inputs.jsonl", "mtb"),
        (DATA / "cases" / "medfail_cases.jsonl", "medfail"),
        (DATA / "cases" / "radsafe_questions.json", "radsafe"),
        (DATA / "cases" / "generic_cases.csv", "mtb"),
    ):
        res = run("cases", "validate", cases, "--schema", schema)
        assert "no rater will see" not in res.output, (cases, res.output)
    res = run("cases", "validate", DATA / "cases" / "openmtb_cases.json", "--schema", "mtb")
    assert "not shown to raters by design" in res.output and "support_label" in res.output


@pytest.mark.parametrize("schema", ["mtb", "medfail", "radsafe"])
def test_synthetic_cases_show_every_column(tmp_path, schema):
    cases, outputs = synthesize(schema, 5, seed=1)
    write_records(cases, tmp_path / "c.jsonl")
    res = run("cases", "validate", tmp_path / "c.jsonl", "--schema", schema)
    assert res.exit_code == 0 and "no rater will see" not in res.output, res.output


@pytest.mark.parametrize("schema", sorted(builtin_names()))
@pytest.mark.parametrize("ext", ["jsonl", "csv", "json"])
def test_cases_template_validates_cleanly(tmp_path, schema, ext):
    out = tmp_path / f"template.{ext}"
    res = run("cases", "template", "--schema", schema, "-o", out)
    assert res.exit_code == 0, res.output
    res = run("cases", "validate", out, "--schema", schema)
    assert res.exit_code == 0, res.output
    assert "0 warnings" in res.output, res.output
    sch = load_schema(schema)
    text = out.read_text(encoding="utf-8")
    shown = [k for k, _ in sch.display.case_fields if k not in ("case_id", "text")]
    for key in shown:  # every displayed column appears, so the user sees the names to use
        assert key in text, (key, text[:300])


def test_cases_template_never_overwrites_and_names_columns(tmp_path):
    out = tmp_path / "mine.jsonl"
    out.write_text("precious\n")
    res = run("cases", "template", "--schema", "mtb", "-o", out)
    assert "exists" in error_line(res)
    assert out.read_text() == "precious\n"
    res = run("cases", "template", "--schema", "mtb", "-o", tmp_path / "t.txt")
    assert ".jsonl" in error_line(res)
    res = run("cases", "template", "--schema", "mtb", "-o", tmp_path / "ok.jsonl")
    assert "pdl1" in res.output  # prints the columns raters see


def test_readme_lists_each_schemas_case_columns():
    readme = (ROOT / "docs" / "cases-and-schemas.md").read_text(encoding="utf-8")  # was README "Schemas"
    for name in builtin_names():
        sch = load_schema(name)
        m = re.search(rf"Case columns of [^\n]*?`{name}`.*?(?:\n\n|$)", readme, re.S)
        assert m, f"docs/cases-and-schemas.md: no 'Case columns of ... `{name}`' paragraph"
        for key, _ in sch.display.case_fields:
            assert f"`{key}`" in m.group(0), (name, key, m.group(0))


# --------------------------------------------------------------------------- 2. case-level label config


def test_case_level_config_has_no_model_pane():
    sch = load_schema("mtb")
    xml = to_label_studio_xml(sch, show_output=False)
    assert "$output_text" not in xml and "Model output" not in xml and sch.display.output_title not in xml
    assert 'toName="output"' not in xml and 'toName="case"' in xml
    full = to_label_studio_xml(sch)
    assert "$output_text" in full and 'toName="output"' in full
    from label_studio_sdk.label_interface import LabelInterface

    LabelInterface(xml).validate()
    res = run("schema", "config", "mtb", "--case-level")
    assert res.exit_code == 0 and "$output_text" not in res.output


# --------------------------------------------------------------------------- 3/4. raters, flag input


def ratings_rows(pairs: dict[str, tuple[str, ...]], raters: list[str]) -> pd.DataFrame:
    recs = []
    for item, values in pairs.items():
        for r, v in zip(raters, values):
            if v is None:
                continue
            recs.append(
                {c: "" for c in RATINGS_COLUMNS}
                | {"round": 1, "item_id": item, "case_id": item, "rater": r, "field": "safety_label", "value": v}
            )
    return pd.DataFrame(recs, columns=RATINGS_COLUMNS)


THREE = ["onc_a", "onc_b", "onc_c"]
# onc_a and onc_b agree on every item; onc_c disagrees on every item
PAIRS3 = {f"C-{n}": (v, v, w) for n, (v, w) in enumerate([(S, U), (U, S), (P, I), (I, P), (S, I), (U, P)], start=1)}


@pytest.fixture()
def study3(tmp_path):
    st = Study.init(tmp_path / "s3", schema="mtb", raters=THREE, url="http://127.0.0.1:9")
    write_csv_atomic(ratings_rows(PAIRS3, THREE), st.ratings_path(1))
    st.get_or_add_round(1)
    st.save()
    return st


def test_flag_unknown_rater_is_an_error_with_did_you_mean(study3):
    res = run("flag", "--study", study3.path, "--raters", "onc_a,onc_d")
    line = error_line(res)
    assert "onc_d" in line and "not a rater of this study" in line and "did you mean" in line
    res = run("flag", "--study", study3.path, "--raters", "onc_a,onc_b")
    assert res.exit_code == 0 and "No disagreements." in res.output  # a and b agree everywhere
    res = run("flag", "--study", study3.path, "--raters", "onc_a,onc_c")
    assert res.exit_code == 0 and "C-6" in res.output


def test_flag_study_rater_without_ratings(tmp_path):
    st = Study.init(tmp_path / "s", schema="mtb", raters=THREE, url="http://127.0.0.1:9")
    pairs = {item: (a, c) for item, (a, _, c) in PAIRS3.items()}
    write_csv_atomic(ratings_rows(pairs, ["onc_a", "onc_c"]), st.ratings_path(1))  # onc_b has not rated yet
    res = run("flag", "--study", st.path)
    assert res.exit_code == 0 and "C-6" in res.output, res.output
    line = error_line(run("flag", "--study", st.path, "--raters", "onc_a,onc_b"))
    assert "onc_b has no ratings" in line


def test_flag_ratings_file_unknown_rater(tmp_path):
    f = tmp_path / "r.csv"
    write_csv_atomic(ratings_rows(PAIRS3, THREE), f)
    line = error_line(run("flag", f, "--schema", "mtb", "--raters", "onc_a,onc_x"))
    assert "onc_x" in line and "did you mean" in line and str(f) in line


def test_agree_study_raters_selects_raters_and_rejects_unknown(study3):
    def pa(result):
        return next(x["value"] for x in result["statistics"] if x["statistic"] == "percent_agreement")

    res = run("agree", "--study", study3.path, "--format", "json")
    assert res.exit_code == 0, res.output
    every = json.loads(res.stdout)
    assert every["n_raters"] == 3 and pa(every) == pytest.approx(1 / 3)  # one of three pairs agrees
    res = run("agree", "--study", study3.path, "--raters", "onc_a,onc_b", "--format", "json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["n_raters"] == 2 and got["raters"] == ["onc_a", "onc_b"]
    assert pa(got) == pytest.approx(1.0)
    res = run("agree", "--study", study3.path, "--raters", "onc_c,onc_a", "--format", "json")
    assert json.loads(res.stdout)["raters"] == ["onc_c", "onc_a"] and pa(json.loads(res.stdout)) == 0
    line = error_line(run("agree", "--study", study3.path, "--raters", "onc_a,onc_cc"))
    assert "onc_cc" in line and "did you mean 'onc_c'" in line
    assert "two" in error_line(run("agree", "--study", study3.path, "--raters", "onc_a"))


def test_agree_raters_with_label_studio_export_is_refused(tmp_path):
    f = tmp_path / "export.json"
    f.write_text(json.dumps([{"id": 1, "data": {"item_id": "i1"}, "annotations": []}]))
    line = error_line(run("agree", "--from-label-studio", f, "--field", "safety_label", "--raters", "onc_a,onc_b"))
    assert "--raters" in line and "--from-label-studio" in line


@pytest.mark.parametrize(
    "rows,needle",
    [
        ({"C-1": (S,), "C-2": (U,)}, "one rater"),
        ({}, "no ratings"),
    ],
    ids=["one-rater", "zero-rows"],
)
def test_flag_ratings_file_unusable_exits_nonzero(tmp_path, rows, needle):
    f = tmp_path / "r.csv"
    write_csv_atomic(ratings_rows(rows, ["onc_a"]), f)
    line = error_line(run("flag", f, "--schema", "mtb"))
    assert needle in line and str(f) in line


def test_flag_ratings_file_missing_rater_column(tmp_path):
    f = tmp_path / "r.csv"
    ratings_rows(PAIRS3, THREE).drop(columns=["rater"]).to_csv(f, index=False)
    line = error_line(run("flag", f, "--schema", "mtb"))
    assert "'rater'" in line and str(f) in line


def test_flag_duplicate_rating_is_reported(tmp_path):
    df = ratings_rows({"C-1": (S, U), "C-2": (U, U)}, ["onc_a", "onc_b"])
    dup = df.iloc[[0]].assign(value=U)  # onc_a rated C-1 a second time, differently
    f = tmp_path / "r.csv"
    write_csv_atomic(pd.concat([df, dup], ignore_index=True), f)
    line = error_line(run("flag", f, "--schema", "mtb"))
    assert "onc_a" in line and "C-1" in line and "twice" in line and f"{f}:2" in line and f"{f}:6" in line
    same = df.iloc[[0]]  # the same rating twice: counted once, with a warning
    write_csv_atomic(pd.concat([df, same], ignore_index=True), f)
    res = run("flag", f, "--schema", "mtb")
    assert res.exit_code == 0 and "duplicate" in res.output and "C-1" in res.output


# --------------------------------------------------------------------------- 7. plain tables without a schema


def test_plain_table_case_and_space_variants_warn(tmp_path):
    f = tmp_path / "wide.csv"
    pd.DataFrame(
        {
            "item_id": [f"i{n}" for n in range(6)],
            "onc_a": ["Supported", "supported", "Unsupported", " Unsupported", "Supported", "Unsupported"],
            "onc_b": ["Supported", "Supported", "Unsupported", "Unsupported", "Supported ", "unsupported"],
        }
    ).to_csv(f, index=False)
    res = run("agree", f, "--raters", "onc_a,onc_b", "--format", "json")
    assert res.exit_code == 0, res.output
    warnings = json.loads(res.stdout)["warnings"]
    w = [x for x in warnings if "differ only by case or surrounding spaces" in x]
    assert len(w) == 1, warnings
    for spelled in ("'Supported'", "'supported'", "'Supported '", "'Unsupported'", "' Unsupported'", "'unsupported'"):
        assert spelled in w[0]
    assert "--schema" in w[0]
    # with a schema the spellings are one category and nothing is said
    res = run("agree", f, "--raters", "onc_a,onc_b", "--schema", "mtb", "--format", "json")
    assert not [x for x in json.loads(res.stdout)["warnings"] if "differ only" in x]


def test_plain_table_duplicate_header_warns(tmp_path):
    f = tmp_path / "long.csv"
    f.write_text("item_id,rater,label,rater\ni1,x,yes,onc_a\ni1,x,yes,onc_b\ni2,x,no,onc_a\ni2,x,yes,onc_b\n")
    res = run("agree", f, "--format", "json")
    assert res.exit_code == 0, res.output
    warnings = json.loads(res.stdout)["warnings"]
    assert any("duplicate column header" in x and "'rater'" in x and str(f) in x for x in warnings), warnings
    # when the table then fails to analyse, the warning still comes first, explaining why
    f.write_text("item_id,rater,label,rater\ni1,onc_a,yes,x\ni1,onc_b,no,x\n")
    res = run("agree", f)
    assert res.exit_code != 0 and "duplicate column header 'rater'" in res.output, res.output
    x = tmp_path / "wide.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (["item_id", "onc_a", "onc_b", "onc_a"], ["i1", "A", "A", "B"], ["i2", "B", "A", "B"]):
        ws.append(row)
    wb.save(x)
    res = run("agree", x, "--raters", "onc_a,onc_b", "--format", "json")
    warnings = json.loads(res.stdout)["warnings"] if res.exit_code == 0 else [res.output]
    assert any("duplicate column header" in w and "'onc_a'" in w for w in warnings), warnings


# --------------------------------------------------------------------------- 8. schema values


def schema_file(tmp_path: Path, values: list[str], kind: str = "nominal") -> Path:
    f = tmp_path / "s.toml"
    vals = ", ".join(json.dumps(v) for v in values)
    f.write_text(f'name = "odd"\n[[fields]]\nname = "label"\nkind = "{kind}"\nvalues = [{vals}]\n', encoding="utf-8")
    return f


@pytest.mark.parametrize("kind", ["nominal", "multi"])
def test_value_with_multi_separator_refused_when_schema_loads(tmp_path, kind):
    f = schema_file(tmp_path, ["clear", "EGFR|ALK"], kind)
    line = error_line(run("schema", "show", f))
    assert "'EGFR|ALK'" in line and "|" in line and "fields[0]" in line and str(f) in line
    line = error_line(run("study", "init", tmp_path / "st", "--schema", f, "--raters", "a,b"))
    assert "'EGFR|ALK'" in line
    assert not (tmp_path / "st" / "study.toml").exists()


def test_alias_with_multi_separator_refused(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(
        'name = "odd"\n[[fields]]\nname = "label"\nkind = "nominal"\n'
        'values = [{value = "a", aliases = ["a|b"]}, "c"]\n',
        encoding="utf-8",
    )
    assert "'a|b'" in error_line(run("schema", "show", f))


FORMULA_VALUES = ["=DDE", "+1", "-1", "@risk", "plain"]


def test_formula_like_values_decided_with_the_text_the_workbook_offers(tmp_path):
    """A schema value starting with = + - @ is shown neutralised ('=DDE) in the workbook's
    dropdown list; choosing exactly that text imports the real value."""
    sch = schema_file(tmp_path, FORMULA_VALUES)
    st = Study.init(tmp_path / "st", schema=str(sch), raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    pairs = {f"C-{n}": (v, "plain" if v != "plain" else "=DDE") for n, v in enumerate(FORMULA_VALUES, start=1)}
    rows = []
    for item, (a, b) in pairs.items():
        for r, v in (("onc_a", a), ("onc_b", b)):
            rows.append({c: "" for c in RATINGS_COLUMNS} | {"round": 1, "item_id": item, "rater": r} | {"value": v})
    df = pd.DataFrame(rows, columns=RATINGS_COLUMNS).assign(field="label", case_id=lambda d: d["item_id"])
    write_csv_atomic(df, st.ratings_path(1))
    write_jsonl_atomic(
        [
            {"item_id": i, "case_id": i, "output_id": "", "model": "", "case_text": "c", "output_text": ""}
            for i in pairs
        ],
        st.units_path,
    )
    st.get_or_add_round(1)
    st.save()
    sheet = tmp_path / "review.xlsx"
    res = run("adjudicate", "sheet", "--study", st.path, "-o", sheet)
    assert res.exit_code == 0, res.output
    wb = openpyxl.load_workbook(sheet)
    offered = [c.value for c in wb["_lists"]["A"][1:] if c.value is not None]
    offered = [o for o in offered if o.removeprefix("'") in FORMULA_VALUES]
    assert "'=DDE" in offered and "'+1" in offered and "'-1" in offered and "'@risk" in offered
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    col = {h: i for i, h in enumerate(head)}
    chosen = {}
    for row in ws.iter_rows(min_row=2):
        item = row[col["Item ID"]].value
        if item is None:
            continue
        pick = offered[(int(item.split("-")[1])) % len(offered)]
        row[col["Decision"]].value = pick
        row[col["Reason"]].value = "chosen from the dropdown"
        row[col["Adjudicator"]].value = "dr_chair"
        chosen[item] = pick
    wb.save(sheet)
    res = run("adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_chair")
    assert res.exit_code == 0, res.output
    logged = {}
    for line in st.decisions_path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        logged[rec["item_id"]] = rec["decision"]
    assert logged and logged == {k: (v[1:] if v.startswith("'") else v) for k, v in chosen.items()}
    assert set(logged.values()) <= set(FORMULA_VALUES)


# --------------------------------------------------------------------------- 5. exports of another round


def test_pull_export_of_a_project_not_in_the_round_is_refused(tmp_path):
    st = Study.init(tmp_path / "st", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    st.get_or_add_round(1).projects = {"onc_a": 11, "onc_b": 12}
    st.save()
    good = [{"type": "choices", "from_name": "safety_label", "to_name": "output", "value": {"choices": [S]}}]
    task = {
        "id": 5,
        "project": 99,
        "data": {"item_id": "C1::m", "case_id": "C1"},
        "annotations": [{"id": 1, "completed_by": 2, "result": good}],
    }
    f = tmp_path / "old_round.json"
    f.write_text(json.dumps([task]))
    for spec in (str(f), f"onc_a={f}"):
        line = error_line(run("pull", "--study", st.path, "--from-export", spec, "--quiet"))
        assert "project 99" in line and "not a project of round 1" in line and "onc_a=11" in line
    assert not st.ratings_path(1).exists()


# --------------------------------------------------------------------------- 2. case-level rounds (offline)


def case_units(n: int) -> pd.DataFrame:
    from test_push_offline import units

    return units(n).assign(item_id=lambda d: d["case_id"], output_id="", model="", output_text="")


def test_case_level_round_offline_refusal_and_legacy_round(tmp_path):
    from test_push_offline import FakeServer, units

    from goldboard.annotate.push import push
    from goldboard.errors import GoldboardError

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")
    fake = FakeServer()
    push(st, units=case_units(3), client=fake, progress=False)
    st = Study.open(st.path)
    assert st.round(1).item_kind == "case"
    assert all("$output_text" not in p["label_config"] for p in fake.projects.values())
    with pytest.raises(GoldboardError, match=r"round 1 is case-level .* new round: push them with round_number 2"):
        push(st, units=units(3), client=fake, progress=False)
    assert [len(p["tasks"]) for p in fake.projects.values()] == [3, 3]
    # a round pushed before rounds recorded their kind: kind from units.jsonl, old config accepted
    for p in fake.projects.values():
        p["label_config"] = to_label_studio_xml(st.schema)  # the config such a push made (model pane)
    st.round(1).item_kind = ""
    st.save()
    st = Study.open(st.path)
    with pytest.raises(GoldboardError, match="round 1 is case-level"):
        push(st, units=units(3), client=fake, progress=False)
    res = push(Study.open(st.path), units=case_units(4), client=fake, progress=False)
    assert res.imported == {"onc_a": 1, "onc_b": 1}


# --------------------------------------------------------------------------- 6. held-out annotations (offline)


def test_foreign_annotation_never_supersedes_the_raters_own():
    from goldboard.annotate.pull import Source, collect

    def ann(aid, uid, label, at):
        result = [
            {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": [label]}},
            {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["why"]}},
        ]
        return {"id": aid, "completed_by": uid, "result": result, "created_at": at, "updated_at": at}

    task = {
        "id": 1,
        "data": {"item_id": "C1::m", "case_id": "C1", "output_id": "C1::m", "model": "m"},
        "annotations": [
            ann(10, 2, S, "2026-01-01T10:00:00Z"),  # onc_a's own rating
            ann(11, 1, U, "2026-01-02T10:00:00Z"),  # the admin, later, in onc_a's project
            ann(12, 3, I, "2026-01-03T10:00:00Z"),  # onc_b, later still, in onc_a's project
        ],
    }
    res = collect(
        [Source([task], 1, "onc_a")],
        load_schema("mtb"),
        ["onc_a", "onc_b"],
        1,
        user_raters={2: "onc_a", 3: "onc_b"},
        known_users={1: "admin"},
    )
    got = res.ratings[res.ratings.field == "safety_label"]
    assert got[["rater", "value", "annotation_id"]].values.tolist() == [["onc_a", S, "10"]]
    assert sorted(zip(res.invalid.annotation_id, res.invalid.kind)) == [("11", "invalid"), ("12", "invalid")]
    assert res.summary["raters"]["onc_a"]["superseded"] == 0
    assert res.summary["raters"]["onc_a"]["by_other_users"] == 2
    assert "2 annotations by other users held out of onc_a's project" in res.describe()


# --------------------------------------------------------------------------- 12. outputs never overwrite the study


@pytest.fixture()
def study_files(tmp_path):
    """A study with ratings, a decisions log and units, plus an outside cases file."""
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    pairs = {item: (a, c) for item, (a, _, c) in PAIRS3.items()}
    write_csv_atomic(ratings_rows(pairs, ["onc_a", "onc_b"]), st.ratings_path(1))
    st.get_or_add_round(1)
    st.save()
    (st.path / "decisions.jsonl").write_text("")
    write_jsonl_atomic([{"item_id": i, "case_id": i, "rounds": [1]} for i in pairs], st.units_path)
    cases = tmp_path / "cases.jsonl"
    write_jsonl_atomic([mtb_case(f"C-{n}", error_type="x" if n % 2 else "y") for n in range(1, 9)], cases)
    return st.path, cases


SELF_OVERWRITES = [
    ("report", ["report", "--study", "{s}", "-o", "{s}/decisions.jsonl"], "part of the study"),
    ("agree", ["agree", "--study", "{s}", "-o", "{s}/rounds/1/ratings.csv"], "part of the study"),
    ("flag", ["flag", "--study", "{s}", "-o", "{s}/study.toml"], "part of the study"),
    ("plan size", ["plan", "size", "--kappa", "0.6", "--prevalence", "0.3", "--lower", "0.4", "-o", "{s}/units.jsonl"],
     "part of the study"),
    ("calibrate", ["calibrate", "--study", "{s}", "--rule", "kappa_lower>=0.4", "-o", "{s}/decisions.jsonl"],
     "part of the study"),
    ("adjudicate sheet", ["adjudicate", "sheet", "--study", "{s}", "-o", "{s}/gold/sheet.xlsx"], "part of the study"),
    ("schema config", ["schema", "config", "mtb", "-o", "{s}/study.toml"], "part of the study"),
    ("cases synth", ["cases", "synth", "--schema", "mtb", "-n", "3", "-o", "{s}/units.jsonl"], "part of the study"),
    ("report --pdf", ["report", "--study", "{s}", "--pdf", "{s}/rounds/1/ratings.csv"], "part of the study"),
    ("calibrate --plot", ["calibrate", "--study", "{s}", "--rule", "kappa_lower>=0.4", "--plot", "{s}/study.toml"],
     "part of the study"),
    ("hidden lock", ["agree", "--study", "{s}", "-o", "{s}/decisions.jsonl.lock"], "part of the study"),
    ("plan sample --rest = -o", ["plan", "sample", "--cases", "{cases}", "-n", "2", "-o", "{out}/a.jsonl",
                                 "--rest", "{out}/a.jsonl"], "is also the --output file"),
    ("plan sample -o = --cases", ["plan", "sample", "--cases", "{cases}", "-n", "2", "-o", "{cases}"],
     "is also the input --cases"),
    ("agree TABLE -o TABLE", ["agree", "{s}/rounds/1/ratings.csv", "-o", "{s}/rounds/1/ratings.csv"],
     "part of the study"),
]  # fmt: skip


@pytest.mark.parametrize("name,argv,needle", SELF_OVERWRITES, ids=[x[0] for x in SELF_OVERWRITES])
def test_an_output_never_overwrites_the_study_or_an_input(study_files, tmp_path, name, argv, needle):
    """Each output flag pointing at a study's own file, another output or an input of the
    same command: one line, non-zero exit, nothing written anywhere."""
    s, cases = study_files
    out = tmp_path / "out"
    out.mkdir()
    before, cases_before = _snapshot(s), cases.read_bytes()
    res = run(*[a.format(s=s, cases=cases, out=out) for a in argv])
    line = error_line(res)
    assert needle in line, line
    assert _snapshot(s) == before and cases.read_bytes() == cases_before
    assert not list(out.iterdir())


def test_output_through_a_symlink_or_relative_path_is_still_the_study_file(study_files, tmp_path, monkeypatch):
    s, _ = study_files
    link = tmp_path / "link.jsonl"
    link.symlink_to(s / "decisions.jsonl")
    before = _snapshot(s)
    assert "part of the study" in error_line(run("agree", "--study", s, "-o", link))
    monkeypatch.chdir(s / "rounds")
    assert "part of the study" in error_line(run("flag", "--study", "..", "-o", "../decisions.jsonl"))
    assert _snapshot(s) == before


def test_outputs_outside_the_study_files_are_written_and_replaced(study_files, tmp_path):
    """reports/ and a new file in the study folder are free; an existing file outside the study is
    replaced (README "Output files")."""
    s, _ = study_files
    res = run("agree", "--study", s, "--format", "json", "-o", s / "reports" / "agree.json")
    assert res.exit_code == 0 and "statistics" in json.loads((s / "reports" / "agree.json").read_text())
    old = tmp_path / "flags.csv"
    old.write_text("old\n")
    res = run("flag", "--study", s, "--format", "csv", "-o", old)
    assert res.exit_code == 0 and "item_id" in old.read_text().splitlines()[0], res.output


def test_check_output_paths_unit(tmp_path):
    from goldboard.errors import GoldboardError
    from goldboard.fileio import check_output_paths

    (tmp_path / "a.csv").write_text("x")
    import os

    os.link(tmp_path / "a.csv", tmp_path / "b.csv")
    with pytest.raises(GoldboardError, match="is also the input --ratings"):
        check_output_paths([("-o", tmp_path / "b.csv")], [("--ratings", tmp_path / "a.csv")])
    # case-insensitive disks (macOS, Windows): Decisions.jsonl is decisions.jsonl
    (tmp_path / "st").mkdir()
    (tmp_path / "st" / "study.toml").write_text("")
    with pytest.raises(GoldboardError, match="append-only decisions log"):
        check_output_paths([("-o", tmp_path / "st" / "Decisions.JSONL")])
    # a --study that is not initialised yet still protects its folders
    with pytest.raises(GoldboardError, match="gold releases"):
        check_output_paths([("-o", tmp_path / "new" / "gold" / "x.csv")], studies=[tmp_path / "new"])
    check_output_paths([("-o", tmp_path / "c.csv"), ("--rest", tmp_path / "d.csv")], [("--cases", tmp_path / "a.csv")])


# --------------------------------------------------------------------------- 13. typed input checked against its meaning


def table_study(tmp_path: Path, schema: str = "mtb_unsafe") -> Path:
    s = tmp_path / "t"
    res = run("study", "init", s, "--schema", schema, "--raters", "onc_a,onc_b")
    assert res.exit_code == 0, res.output
    return s


def pulled(s: Path, n: int = 1) -> pd.DataFrame:
    return pd.read_csv(s / "rounds" / str(n) / "ratings.csv", dtype=str, keep_default_na=False)


def test_two_raters_from_one_column_or_identical_columns_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "wide.csv"
    t.write_text("case_id,x,y,z\nC-1,Supported,Supported,Unsafe\nC-2,Unsafe,Unsafe,Unsafe\n")
    base = ["pull", "--study", s, "--from-table", t, "--field", "safety_label", "--rater-cols"]
    line = error_line(run(*base, "onc_a=x,onc_b=x"))
    assert "onc_a=x and onc_b=x" in line and "one column 'x'" in line
    line = error_line(run(*base, "onc_a=x,onc_b=y"))
    assert "'x' and 'y' hold the same cell in every row" in line and "--identical-columns-ok" in line
    assert not (s / "rounds").exists()
    assert run(*base, "onc_a=x,onc_b=z").exit_code == 0
    # raters who really agreed on every item: said explicitly, and recorded in the round
    res = run(*base, "onc_a=x,onc_b=y", "--identical-columns-ok", "--round", "2")
    assert res.exit_code == 0, res.output
    assert Study.open(s).round(2).tables["wide.csv"]["identical_columns_ok"] is True


def test_rater_mapping_that_merges_two_raters_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "long.csv"
    t.write_text("case_id,rater,safety_label\nC-1,onc_a,Supported\nC-1,onc_b,Unsafe\nC-2,Dr A,Unsafe\n")
    base = ["pull", "--study", s, "--from-table", t]
    line = error_line(run(*base, "--rater", "onc_b=onc_a"))
    assert "'onc_b' is itself a rater of this study" in line
    line = error_line(run(*base, "--rater", "Dr A=onc_a,Dr B=onc_a"))
    assert "two names mapped to one rater" in line
    line = error_line(run(*base, "--rater", "Dr A=onc_c"))
    assert "'onc_c' is not a rater of this study" in line
    assert not (s / "rounds").exists()


def test_map_users_refuses_two_identities_for_one_rater():
    from goldboard.annotate.pull import map_users
    from goldboard.errors import GoldboardError

    with pytest.raises(GoldboardError, match="is itself a rater"):
        map_users({"onc_b": "onc_a"}, ["onc_a", "onc_b"], {2: "onc_a", 3: "onc_b"}, {})
    with pytest.raises(GoldboardError, match="two names mapped to one rater"):
        map_users({"2": "onc_a", "3": "onc_a"}, ["onc_a", "onc_b"], {}, {2: "x", 3: "y"})


@pytest.mark.parametrize(
    "dictionary,needle",
    [
        ("column,code,label\nlab,1,Supported\nlab,1,Unsupported\n", "code '1' is given twice"),
        ("column,code,label\nlab,1,Supported\nlab,2,supported\n", "label 'supported' is given to two codes"),
        (
            '"Variable / Field Name","Choices, Calculations, OR Slider Labels"\nlab,"1, Supported | 1, Unsupported"\n',
            "code '1' is given twice",
        ),
    ],
)
def test_codes_dictionary_with_repeated_code_or_label_refused(tmp_path, dictionary, needle):
    s = table_study(tmp_path)
    codes = tmp_path / "codes.csv"
    codes.write_text(dictionary)
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,lab\nC-1,onc_a,1\nC-1,onc_b,2\n")
    line = error_line(
        run("pull", "--study", s, "--from-table", t, "--label-col", "lab", "--field", "safety_label", "--codes", codes)
    )
    assert needle in line and str(codes) in line
    assert not (s / "rounds").exists()


def test_conflicting_duplicate_rows_refused_identical_ones_counted(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "dup.csv"
    t.write_text("case_id,rater,safety_label\nC-1,onc_a,Supported\n C-1 ,onc_a,Unsafe\nC-1,onc_b,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t))
    assert "rows 2 and 3" in line and "'C-1' is rated twice by onc_a" in line and "Unsafe" in line
    assert not (s / "rounds").exists()
    t.write_text("case_id,rater,safety_label\nC-1,onc_a,Supported\nC-1,onc_a,Supported\nC-1,onc_b,Unsafe\n")
    res = run("pull", "--study", s, "--from-table", t)
    assert res.exit_code == 0, res.output
    assert "1 repeated row(s)" in res.output and "row 3 = row 2" in res.output
    assert pulled(s)[["rater", "value"]].values.tolist() == [["onc_a", "Supported"], ["onc_b", "Unsafe"]]
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("item_id,rater,field,value\nC-2,onc_a,safety_label,Supported\nC-2,onc_a,safety_label,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", pairs, "--round", "2"))
    assert "rows 2 and 3" in line and "rated twice by onc_a" in line


def test_duplicate_headers_in_a_ratings_table_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,safety_label,safety_label\nC-1,onc_a,Supported,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t))
    assert "'safety_label' appears more than once" in line and str(t) in line


def test_xlsx_formula_without_saved_value_refused_naming_the_cell(tmp_path):
    s = table_study(tmp_path)
    x = tmp_path / "f.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (
        ["case_id", "rater", "safety_label"],
        ["C-1", "onc_a", "Supported"],
        ["C-1", "onc_b", '=IF(1,"Unsafe")'],
    ):
        ws.append(row)
    wb.save(x)  # openpyxl saves no computed value for a formula
    line = error_line(run("pull", "--study", s, "--from-table", x))
    assert "cell C3" in line and "no saved value" in line and str(x) in line
    assert not (s / "rounds").exists()


def test_excel_date_as_item_id_refused(tmp_path):
    import datetime

    s = table_study(tmp_path)
    x = tmp_path / "d.xlsx"
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["case_id", "rater", "safety_label"])
    ws.append([datetime.datetime(2024, 3, 1), "onc_a", "Supported"])
    wb.save(x)
    line = error_line(run("pull", "--study", s, "--from-table", x))
    assert "row 2" in line and "holds a date" in line and "2024-03-01" in line


def test_rationale_column_with_blank_cells_keeps_every_label(tmp_path):
    """6 of 24 comment cells filled: all 24 labels are kept, 18 counted without a rationale."""
    s = table_study(tmp_path, schema="mtb")  # mtb: rationale is required on the labeling page
    t = tmp_path / "wide.csv"
    labels = [S, U, I, P]
    rows = ["case_id,a,b,note_a,note_b"]
    for n in range(12):
        rows.append(
            f"C-{n},{labels[n % 4]},{labels[(n + 1) % 4]},{'why a' if n < 3 else ''},{'why b' if n < 3 else ''}"
        )
    t.write_text("\n".join(rows) + "\n")
    res = run(
        "pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--field", "safety_label",
        "--rater-cols", "onc_a=a,onc_b=b", "--rationale-col", "onc_a=note_a,onc_b=note_b",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    got = pulled(s)
    assert len(got[got.field == "safety_label"]) == 24
    assert "onc_a: 12 rated, 0 invalid, 0 superseded, 9 without a rationale" in res.output
    assert (got.loc[got.rationale != "", "item_id"].unique().tolist()) == ["C-0", "C-1", "C-2"]


def test_table_rule_breaks_are_reported_by_pull(tmp_path):
    s = table_study(tmp_path, schema="mtb")
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,safety_label,missing_info\nC-1,onc_a,Supported,stage\nC-1,onc_b,Supported,\n")
    res = run("pull", "--study", s, "--from-table", t)
    assert res.exit_code == 0, res.output
    assert "warning:" in res.output and "missing_info" in res.output and "C-1" in res.output


def test_nan_and_control_characters_are_held_out_never_a_label(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "t.jsonl"
    rows = [
        {"case_id": "C-1", "rater": "onc_a", "safety_label": float("nan")},
        {"case_id": "C-1", "rater": "onc_b", "safety_label": "Supported\x1f"},
        {"case_id": "C-2", "rater": "onc_a", "safety_label": "Unsafe\x00"},
        {"case_id": "C-2", "rater": "onc_b", "safety_label": "Unsafe"},
    ]
    t.write_text("".join(json.dumps(r) + "\n" for r in rows))  # json writes NaN
    res = run("pull", "--study", s, "--from-table", t)
    assert res.exit_code == 0, res.output
    assert pulled(s)[["item_id", "rater", "value"]].values.tolist() == [["C-2", "onc_b", "Unsafe"]]
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    reasons = dict(zip(inv.annotation_id, inv.reason))
    assert "'NaN' is not a value of safety_label" in reasons["t.jsonl:1"]
    assert "control character U+001F" in reasons["t.jsonl:2"]
    assert "control character U+0000" in reasons["t.jsonl:3"]


def test_label_studio_malformed_annotations_are_held_out_and_named(tmp_path):
    from goldboard.annotate.pull import read_export_file
    from goldboard.label_configs.schema import load_schema

    ok = {"from_name": "rationale", "type": "textarea", "value": {"text": ["r"]}}
    tasks = [
        {"id": 1, "data": {"item_id": "C-1"}, "annotations": [{"id": 11, "completed_by": 2, "result": "Supported"}]},
        {"id": 2, "data": {"item_id": "C-2"}, "annotations": [
            {"id": 12, "completed_by": 2, "result": [{"from_name": "safety_label", "value": None}, ok]}]},
        {"id": 3, "data": None, "annotations": [{"id": 13, "completed_by": 2, "result": [ok]}]},
        {"id": 4, "data": {"item_id": "C-4"}, "annotations": [
            {"id": 14, "completed_by": 2, "result": [{"from_name": "mood", "value": {"choices": ["x"]}}, ok]}]},
        {"id": 5, "data": {"item_id": "C-5"}, "annotations": [
            {"id": 15, "completed_by": 2, "result": [{"from_name": "safety_label", "value": {"choices": [float("nan")]}}, ok]}]},
        {"id": 6, "data": {"item_id": "C-6"}, "annotations": [  # one valid: an export of nothing valid is refused
            {"id": 16, "completed_by": 2, "result": [{"from_name": "safety_label", "value": {"choices": ["Supported"]}}, ok]}]},
    ]  # fmt: skip
    f = tmp_path / "export.json"
    f.write_text(json.dumps(tasks))
    got, fmt = read_export_file(f, load_schema("mtb"))
    assert fmt == "JSON" and len(got) == 6
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    st.get_or_add_round(1).projects = {"onc_a": 11, "onc_b": 12}
    st.save()
    res = run("pull", "--study", st.path, "--quiet", "--from-export", f"onc_a={f}")
    assert res.exit_code == 0, res.output
    inv = pd.read_csv(st.invalid_path(1), dtype=str, keep_default_na=False)
    reasons = dict(zip(inv.annotation_id, inv.reason))
    assert "result is not a list" in reasons["11"]
    assert "safety_label: no value" in reasons["12"]
    assert "task has no data (data: null)" in reasons["13"]
    assert "unknown field 'mood'" in reasons["14"]
    assert "malformed choices" in reasons["15"]
    assert read_ratings_csv(st.ratings_path(1))["item_id"].unique().tolist() == ["C-6"]


@pytest.mark.parametrize(
    "rule,needle",
    [
        ("kappa_upper>=1.5", "can never be met"),
        ("kappa_lower>1", "can never be met"),
        ("alpha_value<-1", "can never be met"),
        ("kappa_lower>=-1", "is met by every round"),
        ("ac1_value<=2", "is met by every round"),
    ],
)
def test_calibrate_rule_that_decides_nothing_refused(rule, needle):
    from goldboard.analysis.calibration import parse_rule
    from goldboard.errors import GoldboardError

    with pytest.raises(GoldboardError, match=needle):
        parse_rule(rule)
    assert parse_rule("kappa_lower>=0.6").threshold == 0.6 and parse_rule("kappa_value>=1").threshold == 1


def test_calibrate_rule_on_a_free_text_field_refused(study_files):
    s, _ = study_files
    before = _snapshot(s)
    line = error_line(run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4", "--field", "rationale"))
    assert "free-text field has no agreement statistic" in line and "--field" in line
    line = error_line(run("calibrate", "--study", s, "--rule", "kappa_upper>=1.5"))
    assert "can never be met" in line and "--rule" in line
    assert _snapshot(s) == before


def test_pull_from_table_into_a_round_with_a_gap_refused(tmp_path):
    s = table_study(tmp_path)
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,safety_label\nC-1,onc_a,Supported\nC-1,onc_b,Unsafe\n")
    line = error_line(run("pull", "--study", s, "--from-table", t, "--round", "3"))
    assert "--round 3" in line and "no rounds yet" in line and "round 1" in line
    assert run("pull", "--study", s, "--from-table", t, "--round", "1").exit_code == 0
    line = error_line(run("pull", "--study", s, "--from-table", t, "--round", "3", "--source", "x"))
    assert "rounds 1" in line and "round 2" in line
    assert run("pull", "--study", s, "--from-table", t, "--round", "2", "--source", "x").exit_code == 0


@pytest.mark.parametrize("name", ["onc a", "=x", "onç", "a/b", ""])
def test_one_rater_name_validator_everywhere(tmp_path, name):
    from goldboard.annotate import server as srv
    from goldboard.errors import GoldboardError

    data_dir = tmp_path / "ls"
    if name:
        with pytest.raises(GoldboardError, match="use letters, digits"):
            srv.prepare_data_dir(data_dir, ["onc_ok", name])
        assert not data_dir.exists()  # checked before anything is written
        line = error_line(run("server", "add-raters", f"onc_ok,{name}", "--data-dir", data_dir))
        assert "use letters, digits" in line and not data_dir.exists()
    line = error_line(run("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", f"onc_ok,{name or 'x,x'}"))
    assert "--raters" in line


@pytest.mark.parametrize(
    "url", ["http://user:s3cret-pw@host:8080", "https://ana:s3cret-pw@ls.example.org/", "http://:s3cret-pw@host"]
)
def test_url_with_a_password_refused_never_stored_or_printed(tmp_path, url):
    s = tmp_path / "s"
    res = run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", url)
    line = error_line(res)
    assert "contains a password" in line and "s3cret-pw" not in res.output
    assert not s.exists()
    assert (
        run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", "http://host:8080").exit_code
        == 0
    )
    before = (s / "study.toml").read_bytes()
    res = run("study", "set", s, "--url", url)
    assert "contains a password" in error_line(res) and "s3cret-pw" not in res.output
    assert (s / "study.toml").read_bytes() == before
    res = run("study", "set", s, "--url", "ftp://u:s3cret-pw@host")
    assert "give an http:// or https:// URL" in error_line(res) and "s3cret-pw" not in res.output


def test_every_output_option_goes_through_the_guard():
    """Every option naming a file a command writes is an OutputFile (checked by the one output
    guard before the command runs): a new -o added as a plain click.Path fails here."""
    import importlib

    import click

    from goldboard.cli import COMMAND_MODULES
    from goldboard.cli._options import OutputFile

    def commands(cmd, path):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from commands(sub, f"{path} {name}")
        else:
            yield path, cmd

    writes = ("-o", "--out", "--output", "--rest", "--pdf", "--plot", "--card")
    seen = []
    for module in COMMAND_MODULES:
        for top in importlib.import_module(f"goldboard.cli.{module}").commands:
            for path, cmd in commands(top, top.name):
                for p in cmd.params:
                    if isinstance(p, click.Option) and any(
                        o in writes or o.endswith(("-out", "-output")) for o in p.opts
                    ):
                        seen.append(f"{path} {max(p.opts, key=len)}")
                        assert isinstance(p.type, OutputFile), f"{path} {p.opts}: not an OutputFile"
    assert len(seen) >= 15 and "plan sample --rest" in seen and "report --pdf" in seen, seen


def test_an_older_study_toml_with_a_password_is_never_printed(tmp_path):
    """A study.toml an older goldboard wrote with http://user:password@host: show and set print
    the URL without the password (and show says how to remove it)."""
    s = tmp_path / "s"
    assert (
        run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", "http://h:8080").exit_code == 0
    )
    toml = s / "study.toml"
    toml.write_text(toml.read_text().replace("http://h:8080", "http://ana:s3cret-pw@h:8080/ls"))
    res = run("study", "show", s)
    assert res.exit_code == 0 and "s3cret-pw" not in res.output and "http://...@h:8080/ls" in res.output
    assert "holds a user name or password" in res.stderr and "--url http://h:8080/ls" in res.stderr
    res = run("study", "set", s, "--url", "http://h:8080/ls")
    assert res.exit_code == 0 and "s3cret-pw" not in res.output and "s3cret-pw" not in toml.read_text()
