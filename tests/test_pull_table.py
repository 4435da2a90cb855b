"""`goldboard pull --from-table`: ratings tables into a study round.

The worked example is OpenMTB-Audit's public two-oncologist file (cases/example_data/README.md):
published Cohen's kappa 0.600 and 16 disagreements, 9 of them at information sufficiency vs
treatment optimization.  The kappa is also recomputed here independently (scikit-learn) from the
raw file, so the test fails if the import drops, duplicates or mislabels a rating.
"""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from conftest import run_cli as run

from goldboard.cases.examples import example_path
from goldboard.cases.table_import import TableMapping, read_codes, read_ratings_table
from goldboard.fileio import read_table
from goldboard.label_configs.schema import load_schema
from goldboard.study import Study

DATA = Path(__file__).parent / "data" / "ratings"
OPENMTB = example_path("openmtb")
WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
WIDE += ["--field", "safety_label"]
I, S, P = "Insufficient Information", "Supported", "Partially Supported"


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def openmtb_study(tmp_path: Path) -> Path:
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    return s


def ratings(s: Path, n: int = 1) -> pd.DataFrame:
    return pd.read_csv(s / "rounds" / str(n) / "ratings.csv", dtype=str, keep_default_na=False)


def test_fixture_is_the_public_file():
    """The fixture is OpenMTB-Audit's file byte for byte (SHA-256 of the CRLF original) and is
    internally consistent: its own oncologists_agree column matches the two label columns."""
    assert sha(OPENMTB) == "470d43a45f297b10e1e28414970bbeb8b372d59e9b11afe6c58db5ffb30e19ac"
    rows = list(csv.DictReader(OPENMTB.open(newline="")))
    assert len(rows) == 50
    assert all((r["oncologist_a_label"] == r["oncologist_b_label"]) == (r["oncologists_agree"] == "True") for r in rows)


def test_openmtb_from_table_to_gold_and_report(tmp_path):
    """The README's worked example, command by command: study init -> pull --from-table ->
    agree (kappa 0.600) -> flag (9 of 16 at sufficiency_vs_optimization) -> review workbook,
    filled -> import -> gold v1 -> report."""
    from sklearn.metrics import cohen_kappa_score

    s = openmtb_study(tmp_path)
    res = run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    assert "onc_a: 50 rated, 0 invalid" in res.output and "onc_b: 50 rated, 0 invalid" in res.output
    assert "50 new items recorded in units.jsonl" in res.output
    got = ratings(s)
    assert len(got) == 100 and set(got["field"]) == {"safety_label"}
    # values canonicalised through the schema: the file's 'Insufficient Info' is the alias
    assert "Insufficient Info" not in set(got["value"]) and (got["value"] == I).sum() == 12
    # provenance: the table's name and row (header = row 1), no Label Studio ids
    first = got.iloc[0]
    assert (first["item_id"], first["case_id"], first["rater"], first["value"]) == ("MTB-94338760",) * 2 + (
        "onc_a",
        S,
    )
    assert first["annotation_id"] == "openmtb_expert_annotations_50cases.csv:2" and first["task_id"] == ""
    units = [json.loads(x) for x in (s / "units.jsonl").read_text().splitlines()]
    assert len(units) == 50 and units[0]["item_id"] == "MTB-94338760" and units[0]["rounds"] == [1]
    shown = run("study", "show", s).output
    assert "round 1: table, 50 units" in shown and "table openmtb_expert_annotations_50cases.csv: 50 rows" in shown
    summary = json.loads((s / "rounds" / "1" / "pull.json").read_text())
    assert summary["table"]["sha256"] == sha(OPENMTB) and summary["table"]["rows"] == 50
    assert summary["valid_annotations"] == 100 and summary["invalid_annotations"] == 0

    # agreement: the published kappa, and the same number computed independently from the raw file
    raw = pd.read_csv(OPENMTB)
    independent = cohen_kappa_score(raw["oncologist_a_label"], raw["oncologist_b_label"])
    agree = json.loads(run("agree", "--study", s, "--format", "json").stdout)
    kappa = next(x for x in agree["statistics"] if x["statistic"] == "cohen_kappa")
    assert round(kappa["value"], 3) == 0.600 and kappa["value"] == pytest.approx(independent, abs=1e-12)
    assert kappa["n_items"] == 50

    flags = json.loads(run("flag", "--study", s, "--format", "json").stdout)
    b = flags["summary"]["by_boundary"]["sufficiency_vs_optimization"]
    assert (b["count"], b["of"]) == (9, 16)
    assert flags["summary"]["items_flagged"] == 16

    sheet = tmp_path / "review.xlsx"
    assert "16 rows to decide (16 items)" in run("adjudicate", "sheet", "--study", s, "-o", sheet).output
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    decided = {}
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Field"].value != "safety_label":
            continue
        a, b_ = rec["onc_a value"].value, rec["onc_b value"].value
        # the chair keeps 'Insufficient Information' at the sufficiency boundary, else onc_b's label
        decision = I if I in (a, b_) else b_
        rec["Decision"].value, rec["Reason"].value, rec["Adjudicator"].value = decision, "review meeting", "dr_chair"
        decided[rec["Item ID"].value] = decision
    wb.save(sheet)
    assert len(decided) == 16
    out = run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair").output
    assert "16 new decisions" in out
    run("gold", "export", "--study", s)
    gold = pd.read_csv(s / "gold" / "v1" / "gold.csv", dtype=str, keep_default_na=False)
    assert len(gold) == 50
    assert gold["method"].value_counts().to_dict() == {"unanimous": 34, "adjudicated": 16}
    g = gold.set_index("item_id")["gold_value"]
    assert all(g[item] == v for item, v in decided.items())
    assert g["MTB-09E73637"] == "Unsafe" and g["MTB-7F817157"] == I
    report = tmp_path / "report.md"
    run("report", "--study", s, "--format", "markdown", "-o", report)
    text = report.read_text()
    assert "| Cohen's kappa | onc_a / onc_b | 50 | 0.600 |" in text
    assert "imported from a ratings table" in text and "in Label Studio" not in text.split("## Results")[0]


def test_repull_is_idempotent_and_a_changed_table_says_what_changed(tmp_path):
    s = openmtb_study(tmp_path)
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    before = {p.name: sha(p) for p in [s / "rounds/1/ratings.csv", s / "rounds/1/invalid.csv", s / "units.jsonl"]}
    res = run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    assert "no change" in res.output
    assert before == {
        p.name: sha(p) for p in [s / "rounds/1/ratings.csv", s / "rounds/1/invalid.csv", s / "units.jsonl"]
    }

    # the same file name, edited: one label changed, one row dropped
    edited = tmp_path / "v2" / OPENMTB.name
    edited.parent.mkdir()
    lines = OPENMTB.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("Supported,Partially Supported,True,False", "Supported,Unsupported,True,False")
    del lines[50]  # MTB-CFB88676
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    res = run("pull", "--study", s, "--from-table", edited, *WIDE)
    assert "0 added, 2 removed, 1 changed" in res.output
    assert "MTB-94338760 onc_b safety_label: 'Partially Supported' -> 'Unsupported'" in res.output
    got = ratings(s)
    assert len(got) == 98 and "MTB-CFB88676" not in set(got["item_id"])
    pj = json.loads((s / "rounds/1/pull.json").read_text())
    assert pj["changes"]["changed"] == 1 and pj["changes"]["removed"] == 2


def test_other_sources_stay_and_are_never_overwritten(tmp_path):
    """Two tables (one per rater) into one round; re-pulling one replaces only its own ratings; a
    rating another source already gave for the same item x rater is held out, not overwritten."""
    s = openmtb_study(tmp_path)
    raw = pd.read_csv(OPENMTB)
    a = tmp_path / "onc_a.csv"
    raw[["case_id", "oncologist_a_label"]].assign(rater="onc_a").rename(
        columns={"oncologist_a_label": "safety_label"}
    ).to_csv(a, index=False)
    b = tmp_path / "onc_b.csv"
    raw[["case_id", "oncologist_b_label"]].assign(rater="onc_b").rename(
        columns={"oncologist_b_label": "safety_label"}
    ).to_csv(b, index=False)
    run("pull", "--study", s, "--from-table", a, "--item-col", "case_id")
    run("pull", "--study", s, "--from-table", b, "--item-col", "case_id")
    got = ratings(s)
    assert got.groupby("rater").size().to_dict() == {"onc_a": 50, "onc_b": 50}
    # onc_a's file now also (wrongly) carries an onc_b rating: held out, onc_b's own rating stays
    extra = pd.concat(
        [pd.read_csv(a), pd.DataFrame([{"case_id": "MTB-94338760", "safety_label": "Unsafe", "rater": "onc_b"}])]
    )
    extra.to_csv(a, index=False)
    res = run("pull", "--study", s, "--from-table", a, "--item-col", "case_id")
    assert "already rated" in res.output
    got = ratings(s)
    assert got[(got.item_id == "MTB-94338760") & (got.rater == "onc_b")]["value"].tolist() == [P]
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    row = inv[inv["annotation_id"] == "onc_a.csv:52"].iloc[0]
    assert "onc_b already rated 'MTB-94338760' in round 1 (onc_b.csv)" in row["reason"]
    assert json.loads(row["result"]) == {"case_id": "MTB-94338760", "safety_label": "Unsafe", "rater": "onc_b"}


def test_invalid_values_are_held_out_verbatim(tmp_path):
    s = openmtb_study(tmp_path)
    t = tmp_path / "ratings.csv"
    t.write_text(
        "case_id,rater,safety_label,rationale\n"
        "C-1,onc_a,Supportd,typo\n"
        "C-1,onc_b,supported ,case and spaces are fine\n"
        'C-2,onc_a,=HYPERLINK("x"),formula\n'
        "C-2,onc_b,,\n"
        "C-3,onc_a,Unsafe,\n"
        "C-4,onc_a,Unsafe,a blank rationale cell (C-3) is no rationale: never a reason to drop the label\n",
        encoding="utf-8",
    )
    res = run("pull", "--study", s, "--from-table", t, "--item-col", "case_id")
    assert "onc_a: 2 rated, 2 invalid, 0 superseded, 1 without a rationale" in res.output, res.output
    assert "onc_b: 1 rated, 0 invalid, 0 superseded, 1 blank" in res.output
    got = ratings(s)
    assert got[["item_id", "rater", "value"]].values.tolist() == [
        ["C-1", "onc_b", S],
        ["C-3", "onc_a", "Unsafe"],
        ["C-4", "onc_a", "Unsafe"],
    ]
    assert got.loc[0, "rationale"] == "case and spaces are fine"
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False).set_index("annotation_id")
    assert "'Supportd' is not a value of safety_label" in inv.loc["ratings.csv:2", "reason"]
    assert json.loads(inv.loc["ratings.csv:2", "result"]) == {
        "case_id": "C-1",
        "rater": "onc_a",
        "safety_label": "Supportd",
        "rationale": "typo",
    }
    assert json.loads(inv.loc["ratings.csv:4", "result"])["safety_label"] == '=HYPERLINK("x")'
    assert "ratings.csv:6" not in inv.index


def test_rater_names_must_be_study_raters(tmp_path):
    s = openmtb_study(tmp_path)
    t = tmp_path / "r.csv"
    t.write_text("case_id,rater,safety_label\nC-1,onc_a,Supported\nC-1,onc_bb,Supported\n", encoding="utf-8")
    res = run("pull", "--study", s, "--from-table", t, "--item-col", "case_id", code=1)
    assert res.output.strip().splitlines() == [
        f"Error: {t}:3: rater 'onc_bb' is not a rater of this study (did you mean 'onc_b' or 'onc_a'?) "
        "(raters: onc_a, onc_b; map a name with --rater NAME=RATER)"
    ]
    assert not (s / "rounds").exists()
    # a name mapped onto a study rater
    run("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater", "onc_bb=onc_b")
    assert sorted(ratings(s)["rater"]) == ["onc_a", "onc_b"]
    res = run(
        "pull",
        "--study",
        s,
        "--from-table",
        OPENMTB,
        "--item-col",
        "case_id",
        "--rater-cols",
        "onc_x=oncologist_a_label",
        "--field",
        "safety_label",
        code=1,
    )
    assert "'onc_x' is not a rater of this study" in res.output
    res = run(
        "pull",
        "--study",
        s,
        "--from-table",
        OPENMTB,
        "--item-col",
        "case_id",
        "--rater-cols",
        "onc_a=oncologist_a_lable",
        "--field",
        "safety_label",
        code=1,
    )
    assert "--rater-cols onc_a=oncologist_a_lable: no such column (did you mean 'oncologist_a_label'" in res.output
    res = run("pull", "--study", s, "--label-col", "x", code=1)
    assert "--label-col: a ratings-table option; use it with --from-table FILE" in res.output


def test_redcap_coded_export_with_data_dictionary(tmp_path):
    """The docs' REDCap example: raw (coded) export + data dictionary: coded radio choices,
    coded reviewer, checkbox columns missing_info___N, code 4 = the alias 'Insufficient Info'."""
    s = tmp_path / "rc"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    res = run(
        "pull",
        "--study",
        s,
        "--from-table",
        DATA / "redcap_export_raw.csv",
        "--item-col",
        "case_id",
        "--rater-col",
        "reviewer",
        "--codes",
        DATA / "redcap_data_dictionary.csv",
    )
    assert "onc_a: 3 rated, 0 invalid" in res.output, res.output
    got = ratings(s).set_index(["item_id", "rater", "field"])["value"]
    assert got["MTB-0002", "onc_a", "safety_label"] == I
    assert got["MTB-0002", "onc_a", "missing_info"] == "ecog_status|prior_therapy"
    assert got["MTB-0002", "onc_b", "safety_label"] == P and got["MTB-0002", "onc_b", "missing_info"] == "ecog_status"
    assert got["MTB-0001", "onc_b", "safety_label"] == S
    # all boxes unticked: an empty selection, written as a Label Studio pull writes it
    assert got["MTB-0001", "onc_a", "missing_info"] == ""
    r = ratings(s)
    assert set(r[(r.item_id == "MTB-0003") & (r.rater == "onc_b")]["rationale"]) == {"Not supported after progression."}
    codes = read_codes(DATA / "redcap_data_dictionary.csv")
    assert codes["safety_label"]["4"] == "Insufficient Info" and codes["reviewer"] == {"1": "onc_a", "2": "onc_b"}


def test_several_fields_in_one_file_xlsx_and_jsonl(tmp_path):
    s = tmp_path / "multi"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    rows = [
        {
            "case": "C-1",
            "who": "onc_a",
            "safety_label": "Insufficient Info",
            "missing_info": "stage; ecog_status",
            "why": "no stage",
        },
        {"case": "C-1", "who": "onc_b", "safety_label": "Supported", "missing_info": "", "why": "fine"},
    ]
    x = tmp_path / "ratings.xlsx"
    pd.DataFrame(rows).to_excel(x, index=False)
    run("pull", "--study", s, "--from-table", x, "--item-col", "case", "--rater-col", "who", "--rationale-col", "why")
    got = ratings(s)
    assert got[["rater", "field", "value", "rationale"]].values.tolist() == [
        ["onc_a", "safety_label", I, "no stage"],
        ["onc_a", "missing_info", "stage|ecog_status", "no stage"],
        ["onc_b", "safety_label", S, "fine"],
        ["onc_b", "missing_info", "", "fine"],  # nothing ticked, as a Label Studio pull writes it
    ]
    assert got["annotation_id"].tolist() == ["ratings.xlsx:2"] * 2 + ["ratings.xlsx:3"] * 2
    # JSONL with a list-valued multi-select, into round 2
    j = tmp_path / "ratings.jsonl"
    j.write_text("\n".join(json.dumps({**r, "missing_info": ["stage"] if r["who"] == "onc_a" else []}) for r in rows))
    run("pull", "--study", s, "--from-table", j, "--item-col", "case", "--rater-col", "who", "--round", "2")
    got2 = ratings(s, 2)
    assert got2[got2.field == "missing_info"]["value"].tolist() == ["stage", ""]
    assert [r.number for r in Study.open(s).rounds] == [1, 2]


def test_field_value_pairs_and_wide_pattern():
    """Pure mapping: the ratings.csv shape (field/value) and a wide pattern column {field}_a."""
    schema = load_schema("mtb")
    df = pd.DataFrame(
        {
            "item_id": ["X", "X", "X"],
            "rater": ["onc_a"] * 3,
            "field": ["safety_label", "missing_info", "rationale"],
            "value": ["Partially Supported", "stage", "caveat"],
            "_line": [2, 3, 4],
        }
    )
    read = read_ratings_table(df, TableMapping(), schema)
    (r,) = read.ratings
    assert r.values == {"safety_label": P, "missing_info": "stage"} and r.rationale == "caveat" and r.lines == [2, 3, 4]
    wide = pd.DataFrame(
        {"case_id": ["A"], "safety_label_1": [S], "missing_info_1": [""], "safety_label_2": [I], "_line": [2]}
    )
    read = read_ratings_table(wide, TableMapping(raters={"onc_a": "{field}_1", "onc_b": "{field}_2"}), schema)
    assert [(x.rater, x.values) for x in read.ratings] == [
        ("onc_a", {"safety_label": S}),
        ("onc_b", {"safety_label": I}),
    ]


def test_unknown_items_held_out_in_a_pushed_study(tmp_path):
    """A study whose units were pushed: a table's rating for an item the study does not know is
    held out (in a table-born study it would become a new unit)."""
    s = openmtb_study(tmp_path)
    st = Study.open(s)
    rnd = st.get_or_add_round(1)
    rnd.projects = {"onc_a": 11, "onc_b": 12}
    st.save()
    (s / "units.jsonl").write_text(
        json.dumps(
            {
                "item_id": "MTB-94338760",
                "case_id": "MTB-94338760",
                "output_id": "",
                "model": "",
                "case_text": "x",
                "output_text": "",
                "rounds": [1],
            }
        )
        + "\n"
    )
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,safety_label\nMTB-94338760,onc_a,Supported\nMTB-NEW,onc_a,Supported\n")
    res = run("pull", "--study", s, "--from-table", t, "--item-col", "case_id")
    assert "onc_a: 1 rated, 1 invalid" in res.output
    assert ratings(s)["item_id"].tolist() == ["MTB-94338760"]
    assert len((s / "units.jsonl").read_text().splitlines()) == 1
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    assert "item 'MTB-NEW' is not in this study's units" in inv["reason"].iloc[0]


def test_read_table_line_numbers_match_the_file():
    df = read_table(OPENMTB)
    assert df["_line"].iloc[0] == 2 and df["_line"].iloc[-1] == 51


@pytest.mark.live
def test_mixed_round_label_studio_and_table(live_server, tmp_path):
    """A pushed round: onc_a annotates in Label Studio, onc_b's ratings arrive as a spreadsheet.
    The table fills onc_b's ratings of known items (an unknown item is held out); pulling
    Label Studio again keeps the table's ratings."""
    from goldboard.annotate.simulate import post_ratings
    from goldboard.cases.load import load_units
    from goldboard.cases.synth import synthesize, write_records

    cases, outputs = synthesize("mtb", 3, seed=9)
    c, o = tmp_path / "c.jsonl", tmp_path / "o.jsonl"
    write_records(cases, c)
    write_records(outputs, o)
    units = load_units(c, o, schema="mtb")
    items = list(units["item_id"])
    s = tmp_path / "mixed"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], data_dir=str(live_server.data_dir))
    run("push", "--study", s, c, "--outputs", o, "--quiet")
    st = Study.open(s)
    la = pd.DataFrame(
        [{"item_id": it, "rater": "onc_a", "field": "safety_label", "value": S, "rationale": "ls"} for it in items]
    )
    post_ratings(st, la, progress=False)
    run("pull", "--study", s, "--quiet")
    t = tmp_path / "onc_b.csv"
    rows = [{"item_id": it, "rater": "onc_b", "safety_label": P, "rationale": "sheet"} for it in items]
    rows.append({"item_id": "NOT-PUSHED", "rater": "onc_b", "safety_label": P, "rationale": "sheet"})
    pd.DataFrame(rows).to_csv(t, index=False)
    res = run("pull", "--study", s, "--from-table", t)
    assert f"onc_b: {len(items)} rated, 1 invalid" in res.output
    got = ratings(s)
    assert (got[got.field == "safety_label"].groupby("rater").size() == len(items)).all()
    run("pull", "--study", s, "--quiet")  # Label Studio again
    got = ratings(s)
    sl = got[got.field == "safety_label"]
    assert sorted(sl[sl.rater == "onc_b"]["value"]) == [P] * len(items)
    assert set(sl[sl.rater == "onc_b"]["annotation_id"].str.rsplit(":", n=1).str[0]) == {"onc_b.csv"}
    assert json.loads((s / "rounds/1/pull.json").read_text())["table_rating_rows_kept"] == len(
        got[got.rater == "onc_b"]
    )
    agree = json.loads(run("agree", "--study", s, "--format", "json").stdout)
    assert agree["n_items"] == len(items)


def test_table_born_items_take_their_case_text_from_a_later_push(tmp_path):
    """Round 1 from a table (items without case text), round 2 pushed (e.g. for a test-retest):
    the push gives the table-born items their text instead of refusing them as changed."""
    from test_push_offline import FakeServer

    from goldboard.annotate.push import push

    s = openmtb_study(tmp_path)
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    st = Study.open(s)
    items = ["MTB-94338760", "MTB-CC8B1C92"]
    units = pd.DataFrame(
        {
            "item_id": items,
            "case_id": items,
            "output_id": "",
            "model": "",
            "case_text": ["case one", "case two"],
            "output_text": "",
            "synthetic": True,
        }
    )
    push(st, units=units, client=FakeServer(), round_number=2, progress=False)
    recs = {u["item_id"]: u for u in map(json.loads, (s / "units.jsonl").read_text().splitlines())}
    assert recs["MTB-94338760"]["case_text"] == "case one" and recs["MTB-94338760"]["rounds"] == [1, 2]
    assert "source" not in recs["MTB-94338760"] and recs["MTB-0DD05B90"]["source"].startswith("table:")
    assert len(recs) == 50


def test_redcap_codes_as_schema_aliases(tmp_path):
    """The other REDCap route of docs/ratings-tables.md: the codes declared as aliases in a custom
    schema (no --codes), reviewers mapped with --rater."""
    schema = tmp_path / "mtb_redcap.toml"
    schema.write_text(
        """name = "mtb_redcap"
version = "1.0"
title = "MTB safety label, REDCap codes"

[[fields]]
name = "safety_label"
kind = "nominal"
required = true
primary = true
values = [
  { value = "Supported", aliases = ["1"] },
  { value = "Partially Supported", aliases = ["2"] },
  { value = "Unsupported", aliases = ["3"] },
  { value = "Insufficient Information", aliases = ["4", "Insufficient Info"] },
]

[[fields]]
name = "rationale"
kind = "text"
""",
        encoding="utf-8",
    )
    s = tmp_path / "st"
    run("study", "init", s, "--schema", schema, "--raters", "onc_a,onc_b")
    run(
        "pull", "--study", s, "--from-table", DATA / "redcap_export_raw.csv", "--item-col", "case_id",
        "--rater-col", "reviewer", "--rater", "1=onc_a,2=onc_b",
    )  # fmt: skip
    got = ratings(s).set_index(["item_id", "rater"])["value"]
    assert got.to_dict() == {
        ("MTB-0001", "onc_a"): S,
        ("MTB-0001", "onc_b"): S,
        ("MTB-0002", "onc_a"): I,
        ("MTB-0002", "onc_b"): P,
        ("MTB-0003", "onc_a"): "Unsupported",
        ("MTB-0003", "onc_b"): "Unsupported",
    }


def test_wide_table_with_rationale_per_rater(tmp_path):
    s = openmtb_study(tmp_path)
    t = tmp_path / "wide.tsv"
    t.write_text(
        "case_id\ta_label\ta_note\tb_label\tb_note\nC-1\tSupported\tok\tInsufficient Info\tno ECOG\n", encoding="utf-8"
    )
    run(
        "pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--field", "safety_label",
        "--rater-cols", "onc_a=a_label,onc_b=b_label", "--rationale-col", "onc_a=a_note,onc_b=b_note",
    )  # fmt: skip
    got = ratings(s)
    assert got[["rater", "value", "rationale"]].values.tolist() == [["onc_a", S, "ok"], ["onc_b", I, "no ECOG"]]


def test_case_output_model_columns_and_repeated_rows(tmp_path):
    """Items are model outputs (--output-col), each with its case and model; a second row for the
    same item and rater with another answer is an error naming both rows (issue 23: it used to
    supersede the first by row order); the same answer again is read once, with a warning."""
    s = openmtb_study(tmp_path)
    t = tmp_path / "outputs.csv"
    t.write_text(
        "case,out,llm,rater,safety_label\n"
        "C-1,C-1::gpt,gpt,onc_a,Supported\n"
        "C-1,C-1::gpt,gpt,onc_b,Unsupported\n"
        "C-1,C-1::llama,llama,onc_a,Unsafe\n"
        "C-1,C-1::gpt,gpt,onc_b,Partially Supported\n",
        encoding="utf-8",
    )
    args = ["pull", "--study", s, "--from-table", t, "--item-col", "out", "--case-col", "case",
            "--output-col", "out", "--model-col", "llm"]  # fmt: skip
    res = run(*args, code=1)
    assert "rows 3 and 5: item 'C-1::gpt' is rated twice by onc_b with different answers" in res.output
    assert not (s / "rounds").exists()
    t.write_text(t.read_text().replace("onc_b,Partially Supported", "onc_b,Unsupported"), encoding="utf-8")
    res = run(*args)
    assert "onc_b: 1 rated, 0 invalid, 0 superseded" in res.output and "row 5 = row 3" in res.output
    got = ratings(s)
    assert got[["item_id", "case_id", "output_id", "model", "rater", "value"]].values.tolist() == [
        ["C-1::gpt", "C-1", "C-1::gpt", "gpt", "onc_a", S],
        ["C-1::gpt", "C-1", "C-1::gpt", "gpt", "onc_b", "Unsupported"],
        ["C-1::llama", "C-1", "C-1::llama", "llama", "onc_a", "Unsafe"],
    ]
    units = {u["item_id"]: u for u in map(json.loads, (s / "units.jsonl").read_text().splitlines())}
    assert units["C-1::llama"]["case_id"] == "C-1" and units["C-1::llama"]["model"] == "llama"


def test_codes_file_plain_and_errors(tmp_path):
    codes = tmp_path / "codes.csv"
    codes.write_text("column,code,label\nlab,1,Supported\nlab,2,Unsafe\n", encoding="utf-8")
    assert read_codes(codes) == {"lab": {"1": "Supported", "2": "Unsafe"}}
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    s = openmtb_study(tmp_path)
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,lab\nC-1,onc_a,2\nC-1,onc_b,3\n", encoding="utf-8")
    res = run(
        "pull", "--study", s, "--from-table", t, "--label-col", "lab", "--field", "safety_label", "--codes", bad, code=1
    )
    assert f"Error: {bad}: not a codes file" in res.output
    res = run(
        "pull", "--study", s, "--from-table", t, "--label-col", "lab", "--field", "safety_label", "--codes", codes
    )
    got = ratings(s)
    assert got["value"].tolist() == ["Unsafe"]  # code 3 is not in the codes: held out, never guessed
    inv = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    assert "'3' is not a value of safety_label" in inv["reason"].iloc[0]
