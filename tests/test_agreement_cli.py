"""`goldboard agree` through click's CliRunner: every input path and every bad-input error."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import invoke_cli

from goldboard.cases.ratings import RATINGS_COLUMNS

DATA = Path(__file__).resolve().parent / "data" / "agreement"
SKIN = ["terrible", "poor", "marginal", "clear"]


def run(*args):
    return invoke_cli("agree", *args)


def ok(*args):
    res = run(*args)
    assert res.exit_code == 0, res.output
    return res


def fails(*args, match: str):
    res = run(*args)
    assert res.exit_code != 0, res.output
    assert res.stdout == ""
    err = res.stderr.strip().splitlines()
    assert err and err[-1].startswith("Error: ") and match in err[-1], res.stderr
    assert len([line for line in err if line.startswith("Error")]) == 1
    return res


def skin_pairs():
    df = pd.read_csv(DATA / "sas_skin_condition.csv")
    pairs = []
    for r in df.itertuples():
        pairs += [(r.derm1, r.derm2)] * r.count
    return pairs


@pytest.fixture()
def long_csv(tmp_path):
    rows = []
    for i, (a, b) in enumerate(skin_pairs()):
        rows += [{"item_id": f"P{i}", "rater": "derm1", "label": a}, {"item_id": f"P{i}", "rater": "derm2", "label": b}]
    p = tmp_path / "skin.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    return p


def ratings_table(pairs, field="severity", raters=("med_a", "med_b"), model=lambda i: "m1"):
    rows = []
    for i, (a, b) in enumerate(pairs):
        for r, v in zip(raters, (a, b)):
            rows.append(
                {
                    "round": 1,
                    "item_id": f"O{i}",
                    "case_id": f"C{i // 2}",
                    "output_id": f"O{i}",
                    "model": model(i),
                    "rater": r,
                    "field": field,
                    "value": v,
                    "rationale": "",
                    "annotated_at": "",
                    "lead_time": "",
                    "annotation_id": "",
                    "task_id": "",
                    "project_id": "",
                }
            )
    return pd.DataFrame(rows, columns=RATINGS_COLUMNS)


SEVERITY_PAIRS = [
    ("1", "1"),
    ("2", "3"),
    ("4", "4"),
    ("5", "4"),
    ("2", "2"),
    ("4", "5"),
    ("1", "2"),
    ("3", "3"),
    ("5", "5"),
    ("4", "2"),
] * 4


# --------------------------------------------------------------------------- input paths


def test_long_csv_table_matches_sas(long_csv):
    """SAS PROC FREQ Agreement Study: simple kappa 0.3449, ASE 0.0724 (CL 0.2030, 0.4868)."""
    res = ok(long_csv, "--categories", ",".join(SKIN), "--level", "ordinal", "--format", "json", "--ci", "wald")
    out = json.loads(res.stdout)
    k = next(r for r in out["statistics"] if r["statistic"] == "cohen_kappa" and r["weights"] == "none")
    assert [round(k[x], 4) for x in ("value", "se", "ci_low", "ci_high")] == [0.3449, 0.0724, 0.2030, 0.4868]
    assert out["categories"] == SKIN and out["level"] == "ordinal"


def test_default_table_format_and_warnings_on_stderr_only(tmp_path):
    p = tmp_path / "few.csv"
    pd.DataFrame(
        {"item_id": ["1", "1", "2", "2"], "rater": ["a", "b", "a", "b"], "label": ["x", "x", "y", "x"]}
    ).to_csv(p, index=False)
    res = ok(p)
    assert "Cohen's kappa" in res.stdout and "Landis & Koch (1977) convention" in res.stdout
    assert "Warning:" not in res.stdout
    assert "Warning: only 2 item(s)" in res.stderr


def test_pull_ratings_table_value_column_and_field_selection(tmp_path):
    df = pd.concat(
        [ratings_table(SEVERITY_PAIRS), ratings_table([("keep", "drop")] * 40, field="keep_in_benchmark")],
        ignore_index=True,
    )
    p = tmp_path / "ratings.csv"
    df.to_csv(p, index=False)
    out = json.loads(ok(p, "--schema", "medfail", "--field", "severity", "--format", "json").stdout)
    assert out["categories"] == ["1", "2", "3", "4", "5"] and out["level"] == "ordinal"
    assert out["n_items"] == 40 and out["raters"] == ["med_a", "med_b"]
    fails(p, match="several fields (keep_in_benchmark, severity); choose one with --field")
    res = ok(p, "--schema", "medfail", "--format", "csv")  # schema: defaults to the primary field
    assert "primary field 'severity'" in res.stderr
    assert res.stdout.startswith("statistic,weights,level,raters,group,n_items,value,se,ci_low,ci_high,ci_method\n")


def test_xlsx_and_jsonl_long_tables(tmp_path):
    df = ratings_table(SEVERITY_PAIRS)[["item_id", "rater", "value"]].rename(columns={"value": "score"})
    df["score"] = df["score"].astype(int)  # spreadsheets hand back numbers
    x = tmp_path / "r.xlsx"
    df.to_excel(x, index=False)
    j = tmp_path / "r.jsonl"
    df.to_json(j, orient="records", lines=True)
    a = json.loads(ok(x, "--label-col", "score", "--categories", "1,2,3,4,5", "--format", "json").stdout)
    b = json.loads(ok(j, "--label-col", "score", "--categories", "1,2,3,4,5", "--format", "json").stdout)
    assert a["statistics"] == b["statistics"]


def test_wide_table(tmp_path):
    p = tmp_path / "wide.csv"
    pd.DataFrame(
        {
            "case": [f"c{i}" for i in range(40)],
            "onc_a": [a for a, _ in SEVERITY_PAIRS],
            "onc_b": [b for _, b in SEVERITY_PAIRS],
        }
    ).to_csv(p, index=False)
    out = json.loads(
        ok(
            p,
            "--raters",
            "onc_a,onc_b",
            "--item-col",
            "case",
            "--schema",
            "medfail",
            "--field",
            "severity",
            "--format",
            "json",
        ).stdout
    )
    assert out["raters"] == ["onc_a", "onc_b"] and out["n_items"] == 40
    fails(p, "--raters", "onc_a,onc_c", "--item-col", "case", match="--raters: no column 'onc_c'")
    fails(p, "--raters", "onc_a", "--item-col", "case", match="at least two rater columns")


def _ls_full_export(pairs, field="safety_label", users=(7, {"id": 8, "email": "onc_b@example.org"})):
    tasks = []
    for i, (a, b) in enumerate(pairs):
        anns = []
        for j, (u, v) in enumerate(zip(users, (a, b))):
            anns.append(
                {
                    "id": 100 * i + j,
                    "completed_by": u,
                    "was_cancelled": False,
                    "result": [
                        {"from_name": field, "to_name": "case", "type": "choices", "value": {"choices": [v]}},
                        {
                            "from_name": "rationale",
                            "to_name": "case",
                            "type": "textarea",
                            "value": {"text": ["because"]},
                        },
                    ],
                }
            )
        tasks.append({"id": 1000 + i, "data": {"item_id": f"C{i}", "case_text": "..."}, "annotations": anns})
    return tasks


MTB_PAIRS = [
    ("Supported", "Supported"),
    ("Insufficient Info", "Partially Supported"),
    ("Unsupported", "Unsupported"),
    ("Partially Supported", "Partially Supported"),
] * 8


def test_label_studio_full_json_export(tmp_path):
    p = tmp_path / "export.json"
    p.write_text(json.dumps(_ls_full_export(MTB_PAIRS)))
    out = json.loads(
        ok("--from-label-studio", p, "--field", "safety_label", "--schema", "mtb", "--format", "json").stdout
    )
    assert out["raters"] == ["7", "onc_b@example.org"] and out["n_items"] == 32
    pa = next(r for r in out["statistics"] if r["statistic"] == "percent_agreement")
    assert pa["value"] == pytest.approx(0.75)
    assert "Insufficient Information" in out["categories"]  # alias mapped to its canonical spelling


def test_label_studio_one_export_per_rater_and_cancelled_annotation(tmp_path):
    """Blind double annotation uses one project per rater: two exports, items matched on data.item_id."""
    full = _ls_full_export(MTB_PAIRS)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    ta = [{**t, "id": t["id"] + 5000, "annotations": [t["annotations"][0]]} for t in full]
    tb = [{**t, "annotations": [t["annotations"][1]]} for t in full]
    tb[0]["annotations"][0] = {**tb[0]["annotations"][0], "was_cancelled": True, "result": []}
    a.write_text(json.dumps(ta))
    b.write_text(json.dumps(tb))
    res = ok(
        "--from-label-studio",
        a,
        "--from-label-studio",
        b,
        "--field",
        "safety_label",
        "--schema",
        "mtb",
        "--format",
        "json",
    )
    out = json.loads(res.stdout)
    assert out["n_raters"] == 2
    kappa = next(r for r in out["statistics"] if r["statistic"] == "cohen_kappa")
    assert kappa["n_items"] == 31  # the cancelled annotation is missing, and said so
    assert "dropped as missing" in res.stderr


def test_label_studio_json_min_export(tmp_path):
    rows = []
    for i, (a, b) in enumerate(MTB_PAIRS):
        rows.append({"id": 1000 + i, "item_id": f"C{i}", "annotator": 7, "annotation_id": 2 * i, "safety_label": a})
        rows.append(
            {
                "id": 1000 + i,
                "item_id": f"C{i}",
                "annotator": 8,
                "annotation_id": 2 * i + 1,
                "safety_label": {"choices": [b]} if i % 2 else b,
            }
        )
    p = tmp_path / "min.json"
    p.write_text(json.dumps(rows))
    out = json.loads(ok("--from-label-studio", p, "--schema", "mtb", "--format", "json").stdout)
    assert out["raters"] == ["7", "8"] and out["n_items"] == 32


def test_study_directory_with_round_and_by_model(tmp_path):
    from goldboard.study import Study

    st = Study.init(tmp_path / "study", schema="medfail", raters=["med_b", "med_a"])
    df = ratings_table(SEVERITY_PAIRS, model=lambda i: "gpt" if i % 2 else "llama")
    st.ratings_path(2).parent.mkdir(parents=True)
    df.to_csv(st.ratings_path(2), index=False)
    out = json.loads(ok("--study", st.path, "--round", 2, "--by", "model", "--format", "json").stdout)
    assert out["raters"] == ["med_b", "med_a"]  # the study's rater order
    assert {r["group"] for r in out["statistics"]} == {None, "gpt", "llama"}
    out2 = json.loads(ok("--study", st.path, "--dichotomize", "4", "--format", "json").stdout)  # latest round
    assert out2["categories"] == ["<4", ">=4"]
    fails("--study", st.path, "--round", 3, match="--round 3: the study has round 2; round 3 does not exist")


def test_study_unknown_label_names_the_ratings_line(tmp_path):
    from goldboard.study import Study

    st = Study.init(tmp_path / "study", schema="medfail", raters=["med_a", "med_b"])
    df = ratings_table(SEVERITY_PAIRS)
    df.loc[5, "value"] = "7"
    st.ratings_path(1).parent.mkdir(parents=True)
    df.to_csv(st.ratings_path(1), index=False)
    fails(
        "--study",
        st.path,
        "--round",
        1,
        "--field",
        "severity",
        match=f"{st.ratings_path(1)}:7: field severity: '7' is not a value of severity",
    )


def test_bootstrap_and_cluster_options(long_csv, tmp_path):
    out = json.loads(ok(long_csv, "--bootstrap", 500, "--seed", 3, "--format", "json").stdout)
    assert {r["ci_method"] for r in out["statistics"]} == {"bootstrap"}
    again = json.loads(ok(long_csv, "--bootstrap", 500, "--seed", 3, "--format", "json").stdout)
    assert again == out  # seeded
    fails(long_csv, "--bootstrap", 100, "--cluster-col", "case_id", match="--cluster-col 'case_id': no such column")


def test_output_file_formats(long_csv, tmp_path):
    for fmt in ("table", "markdown", "csv", "json"):
        target = tmp_path / f"out.{fmt}"
        res = ok(long_csv, "--format", fmt, "-o", target)
        assert res.stdout == "" and target.read_text()
        assert f"Wrote {target}" in res.stderr
    assert json.loads((tmp_path / "out.json").read_text())["n_items"] == 88
    assert (tmp_path / "out.markdown").read_text().count("|---|") >= 2
    assert not list(tmp_path.glob(".out.*.tmp"))


# --------------------------------------------------------------------------- bad input


def test_unknown_label_for_the_schema(tmp_path):
    p = tmp_path / "r.csv"
    pd.DataFrame(
        {
            "item_id": ["1", "1", "2", "2"],
            "rater": ["a", "b", "a", "b"],
            "label": ["Supported", "Supported", "Safe-ish", "Unsupported"],
        }
    ).to_csv(p, index=False)
    fails(
        p,
        "--schema",
        "mtb",
        "--field",
        "safety_label",
        match=f"{p}:4: field safety_label: 'Safe-ish' is not a value of safety_label",
    )


def test_unknown_label_for_categories(tmp_path):
    p = tmp_path / "r.csv"
    pd.DataFrame(
        {"item_id": ["1", "1", "2", "2"], "rater": ["a", "b", "a", "b"], "label": ["1", "2", "6", "2"]}
    ).to_csv(p, index=False)
    fails(p, "--categories", "1,2,3,4,5", match=f"{p}:4: field label: '6' is not one of the categories")


def test_one_rater_only(tmp_path):
    p = tmp_path / "r.csv"
    pd.DataFrame({"item_id": ["1", "2"], "rater": ["a", "a"], "label": ["x", "y"]}).to_csv(p, index=False)
    fails(p, match="only one rater (a) rated it; agreement needs at least two raters")


def test_empty_file(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    fails(p, match=f"{p}: file is empty")
    h = tmp_path / "header.csv"
    h.write_text("item_id,rater,label\n")
    fails(h, match="no data rows")
    e = tmp_path / "empty.json"
    e.write_text("[]")
    fails("--from-label-studio", e, "--field", "x", match="no tasks")


def test_missing_columns(tmp_path):
    p = tmp_path / "r.csv"
    pd.DataFrame({"item_id": ["1", "1"], "who": ["a", "b"], "label": ["x", "y"]}).to_csv(p, index=False)
    fails(p, match="--rater-col 'rater': no such column (columns: item_id, who, label)")
    fails(p, "--rater-col", "annotator", match="--rater-col 'annotator': no such column")
    q = tmp_path / "nolabel.csv"
    pd.DataFrame({"item_id": ["1", "1"], "rater": ["a", "b"], "grade": ["x", "y"]}).to_csv(q, index=False)
    fails(q, match="no label column: looked for 'label' and 'value'")


def test_bad_option_combinations(long_csv, tmp_path):
    fails(match="give exactly one input")
    fails(long_csv, "--study", tmp_path, match="give exactly one input")
    fails("--from-label-studio", long_csv, match="needs --field")
    fails(long_csv, "--dichotomize", "poor", match="dichotomizing needs an ordered scale")
    fails(long_csv, "--schema", "nonexistent", match="unknown schema 'nonexistent'")
    fails(long_csv, "--schema", "mtb", "--field", "rationale", match="free text")
    fails("--study", tmp_path / "nope", match="not a goldboard study")
    res = run(long_csv, "--level", "cardinal")
    assert res.exit_code != 0 and "Invalid value for '--level'" in res.output


def test_not_a_label_studio_export(tmp_path):
    p = tmp_path / "x.json"
    p.write_text(json.dumps([{"foo": 1}]))
    fails("--from-label-studio", p, "--field", "x", match="not a Label Studio JSON export")
    q = tmp_path / "broken.json"
    q.write_text('[{"id": 1,\n "annotations": [}]')
    fails("--from-label-studio", q, "--field", "x", match=f"{q}:2: invalid JSON")
    r = tmp_path / "nofield.json"
    r.write_text(json.dumps(_ls_full_export(MTB_PAIRS[:2])))
    fails("--from-label-studio", r, "--field", "severity", match="no annotation has a result for field 'severity'")


def test_label_studio_binary_unticked_box_is_the_absent_value(tmp_path):
    """With a schema the export is read as `goldboard pull` reads it: a binary flag left
    unticked is "no", not a missing rating (radsafe's per-option checkboxes)."""
    tasks = []
    flags = [(True, True), (False, False), (True, False), (False, False)] * 10
    for i, (a, b) in enumerate(flags):
        anns = []
        for u, ticked in ((1, a), (2, b)):
            result = [{"from_name": "rationale", "to_name": "case", "type": "textarea", "value": {"text": ["x"]}}]
            if ticked:
                result.append(
                    {"from_name": "unsafe_A", "to_name": "case", "type": "choices", "value": {"choices": ["yes"]}}
                )
            anns.append({"id": 10 * i + u, "completed_by": u, "result": result})
        tasks.append({"id": i, "data": {"item_id": f"Q{i}"}, "annotations": anns})
    p = tmp_path / "radsafe.json"
    p.write_text(json.dumps(tasks))
    out = json.loads(
        ok("--from-label-studio", p, "--schema", "radsafe", "--field", "unsafe_A", "--format", "json").stdout
    )
    assert out["categories"] == ["no", "yes"] and out["n_items"] == 40
    pa = next(r for r in out["statistics"] if r["statistic"] == "percent_agreement")
    assert pa["value"] == pytest.approx(0.75) and pa["n_items"] == 40


def test_label_studio_value_not_in_schema_names_task_and_annotation(tmp_path):
    tasks = _ls_full_export(MTB_PAIRS[:4])
    tasks[2]["annotations"][1]["result"][0]["value"]["choices"] = ["Probably fine"]
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(tasks))
    fails(
        "--from-label-studio",
        p,
        "--schema",
        "mtb",
        "--field",
        "safety_label",
        match=f"{p}: task 1002, annotation 201: field safety_label: 'Probably fine' is not a value of safety_label",
    )


def test_study_by_a_case_field_from_units(tmp_path):
    """--by error_type: not a ratings column, so it is looked up in units.jsonl's case fields."""
    from goldboard.study import Study

    st = Study.init(tmp_path / "study", schema="medfail", raters=["med_a", "med_b"])
    df = ratings_table(SEVERITY_PAIRS)
    st.ratings_path(1).parent.mkdir(parents=True)
    df.to_csv(st.ratings_path(1), index=False)
    with open(st.units_path, "w") as fh:
        for i in range(len(SEVERITY_PAIRS)):
            fh.write(
                json.dumps(
                    {
                        "item_id": f"O{i}",
                        "case_id": f"C{i // 2}",
                        "output_id": f"O{i}",
                        "model": "m1",
                        "case_text": "",
                        "output_text": "",
                        "case": {"error_type": "wrong_drug" if i % 4 else "none"},
                    }
                )
                + "\n"
            )
    out = json.loads(
        ok(
            "--study", st.path, "--by", "error_type", "--cluster-col", "case_id", "--bootstrap", 200, "--format", "json"
        ).stdout
    )
    assert {r["group"] for r in out["statistics"]} == {None, "none", "wrong_drug"}
    assert {r["ci_method"] for r in out["statistics"]} == {"bootstrap"}
    fails("--study", st.path, "--by", "specialty", match="--by 'specialty': no such ratings, item or case column")


def test_table_prints_not_estimable_where_the_report_does():
    """Issue 21: the terminal table printed `0.000 (0.000 to 0.000)` and `-0.000` where the report
    says "not estimable"; the band legend's edges are the ones the label follows."""
    import pandas as pd

    from goldboard.analysis.agreement import agreement, landis_koch_band
    from goldboard.analysis.agreement_render import render_table
    from goldboard.exports.report import LANDIS_KOCH_NOTE, _ci_est, _with_ci

    rows = [(f"i{i}", r, v) for i in range(12) for r, v in (("a", "yes"), ("b", "yes" if i % 3 else "no"))]
    res = agreement(pd.DataFrame(rows, columns=["item_id", "rater", "value"]), "f", categories=["yes", "no"], ci="wald")
    text = render_table(res)
    kappa = next(r for r in res["statistics"] if r["statistic"] == "cohen_kappa")
    assert kappa["se"] == 0 and _ci_est(kappa) == "not estimable (degenerate table)"
    line = next(x for x in text.splitlines() if x.startswith("Cohen's kappa"))
    assert "not estimable (degenerate table)" in line and "0.000 to 0.000" not in text
    assert "-0.000" not in text and "(CI not estimable: degenerate table)" in text
    assert _with_ci(0.0, 0.0, 0.0) == "0.000 (CI not estimable: degenerate table)"
    # an undefined kappa (both raters used one category) reads "not estimable" in both
    one = [(f"i{i}", r, "yes") for i in range(5) for r in ("a", "b")]
    res1 = agreement(pd.DataFrame(one, columns=["item_id", "rater", "value"]), "f", categories=["yes", "no"])
    line = next(x for x in render_table(res1).splitlines() if x.startswith("Cohen's kappa"))
    assert line.split()[6:9] == ["not", "estimable", "not"]  # value and CI
    # the band of 0.601 follows the printed edges: above 0.60 is "substantial", 0.60 itself "moderate"
    assert landis_koch_band(0.601) == "substantial" and landis_koch_band(0.60) == "moderate"
    assert ">0.60-0.80 substantial" in text and ">0.40-0.60 moderate" in text
    assert ">0.60-0.80 substantial" in LANDIS_KOCH_NOTE
