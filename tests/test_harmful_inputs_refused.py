"""Inputs a study meets by accident or by harm (5,000-character or dash-led rater names, a hand-edited
study.toml, look-alike ids, formula-like study names, lone surrogates, NaN labels): read silently or
refused wrongly before, each test failing on the code before its fix.  Oracle for a refusal: one
``Error:`` line naming the file or flag, a non-zero exit, no traceback, nothing written."""

from __future__ import annotations

from conftest import error_line
from conftest import run_cli as run
from test_flags import P, S

from goldboard.study import Study

# --------------------------------------------------------------------------- rater names


def test_rater_name_of_5000_characters_refused(tmp_path):
    long = "a" * 5000
    line = error_line(run("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", f"onc_a,{long}", code=None))
    assert "5000 characters" in line and "at most 64" in line and len(line) < 300
    assert not (tmp_path / "s" / "study.toml").exists()


def test_rater_name_beginning_with_a_dash_refused(tmp_path):
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    before = (s / "study.toml").read_bytes()
    line = error_line(run("study", "add-rater", s, "--", "-1-x", code=None))
    assert "'-1-x'" in line and "begin a rater name with a letter or digit" in line
    assert (s / "study.toml").read_bytes() == before


# --------------------------------------------------------------------------- hand edits of study.toml


def test_calibration_string_false_refused_not_read_as_true(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"]).mark_round(1)
    f = s / "study.toml"
    f.write_text(f.read_text().replace('mode = "blinded"', 'mode = "blinded"\ncalibration = "false"'))
    line = error_line(run("status", "--study", s, code=None))
    assert "study.toml: [[rounds]] number = 1: calibration = 'false' is not true or false" in line
    assert "write calibration = false, without quotes" in line


# --------------------------------------------------------------------------- adjudicator names


def test_distinct_adjudicator_close_to_a_known_one_is_a_new_adjudicator(tmp_path):
    """``dr_y`` beside ``dr_x`` is another person, not another spelling: ``--adjudicator`` declares them."""
    from test_adjudication_roundtrip import fill, make_study

    st = make_study(tmp_path)
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", st.path, "-o", sheet)
    fill(sheet, {"C-10": (S, None, None)})
    run("adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_x")
    sheet2 = tmp_path / "review2.xlsx"
    run("adjudicate", "sheet", "--study", st.path, "-o", sheet2)
    fill(sheet2, {"C-1": (P, "ECOG 2", None)})
    res = run("adjudicate", "import", "--study", st.path, sheet2, "--adjudicator", "dr_y")
    assert "1 new decisions" in res.output
    assert "another spelling" in error_line(
        run("adjudicate", "import", "--study", st.path, sheet2, "--adjudicator", "Dr X", code=None)
    )


# --------------------------------------------------------------------------- status shows names as they are


def test_status_escapes_bidi_controls_and_bare_cr_in_adjudicator_names(tmp_path):
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    s = tmp_path / "st"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    t = tmp_path / "r1.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Supported,Unsafe\n")
    run("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b",
        "--field", "safety_label")  # fmt: skip
    record_decisions(
        s / "decisions.jsonl",
        [
            Proposed(item_id="C1", field="safety_label", decision="Unsafe", reason="r", adjudicator="dr_\u202ex"),
            Proposed(item_id="C2", field="safety_label", decision="Unsafe", reason="r", adjudicator="dr\rchair"),
        ],
        source="label_studio",  # a Label Studio username, as the server holds it
    )
    out = run("status", "--study", s).output
    assert "\u202e" not in out and "\r" not in out
    assert "dr_\\u202ex" in out and "dr\\rchair" in out


# --------------------------------------------------------------------------- who decided, who imported


def test_changed_decision_under_the_prefilled_adjudicator_refused_and_importer_recorded(tmp_path):
    import json

    from test_adjudication_roundtrip import fill, make_study
    from test_flags import U

    st = make_study(tmp_path)
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", st.path, "-o", sheet)
    fill(sheet, {"C-10": (S, None, None)})
    run("adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_x")
    log = [json.loads(x) for x in st.decisions_path.read_text().splitlines()]
    assert log[-1]["imported_by"] == "dr_x"
    sheet2 = tmp_path / "review2.xlsx"
    run("adjudicate", "sheet", "--study", st.path, "-o", sheet2)
    fill(sheet2, {"C-10": (U, "the trial excluded ECOG 2", "dr_x")})  # the pre-filled name left in the cell
    before = st.decisions_path.read_bytes()
    res = run("adjudicate", "import", "--study", st.path, sheet2, "--adjudicator", "dr_y", code=None)
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert 'Adjudicator cell still holds "dr_x", as the sheet pre-filled it' in res.output
    assert "Disagreements!" in res.output
    assert st.decisions_path.read_bytes() == before
    fill(sheet2, {"C-10": (U, "the trial excluded ECOG 2", "dr_y")})
    run("adjudicate", "import", "--study", st.path, sheet2, "--adjudicator", "dr_y")
    last = json.loads(st.decisions_path.read_text().splitlines()[-1])
    assert (last["decision"], last["adjudicator"], last["imported_by"]) == (U, "dr_y", "dr_y")


# --------------------------------------------------------------------------- look-alike item ids


def test_item_ids_differing_by_a_lookalike_dash_refused(tmp_path):
    s = tmp_path / "st"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    t = tmp_path / "dash.csv"
    t.write_text("case_id,a,b\nC-0001,Supported,Unsafe\nC\u20100001,Unsafe,Unsafe\n", encoding="utf-8")
    args = ("--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label")
    line = error_line(run("pull", "--study", s, "--from-table", t, *args, code=None))
    assert "dash.csv: rows 2 and 3" in line and "U+2010 HYPHEN" in line
    assert not (s / "rounds").exists()


def test_item_ids_differing_by_a_fullwidth_letter_refused_in_agree(tmp_path):
    t = tmp_path / "long.csv"
    t.write_text(
        "item_id,rater,field,value\nC-0001,onc_a,safety_label,Supported\nC-0001,onc_b,safety_label,Supported\n"
        "\uff23-0002,onc_a,safety_label,Unsafe\nC-0002,onc_b,safety_label,Unsafe\n",
        encoding="utf-8",
    )
    line = error_line(run("agree", t, "--schema", "mtb_unsafe", code=None))
    assert "long.csv:5" in line and "FULLWIDTH LATIN CAPITAL LETTER C" in line


# --------------------------------------------------------------------------- a study named like a formula


def test_study_named_like_a_formula_imports_its_own_review_sheet(tmp_path):
    from test_adjudication_roundtrip import fill, make_study

    st = make_study(tmp_path)
    run("study", "set", st.path, "--name", "=pilot+2")
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", st.path, "-o", sheet)
    fill(sheet, {"C-10": (S, None, None)})
    res = run("adjudicate", "import", "--study", st.path, sheet, "--adjudicator", "dr_x")
    assert "1 new decisions" in res.output


# --------------------------------------------------------------------------- server commands find the study's server


def test_server_status_uses_the_data_dir_the_study_records(tmp_path, monkeypatch):
    s = tmp_path / "st"
    ls = tmp_path / "lsdata"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", "--data-dir", ls)
    monkeypatch.delenv("GOLDBOARD_SERVER_DIR", raising=False)
    assert f"data dir:     {ls}" in run("server", "status", "--study", s).output
    monkeypatch.chdir(s)  # a new shell in the study's folder
    assert f"data dir:     {ls}" in run("server", "status").output


def test_server_login_for_a_study_on_a_remote_server_refused(tmp_path):
    s = tmp_path / "st"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", "--url", "https://ls.example.org")
    line = error_line(run("server", "login", "onc_a", "--study", s, code=None))
    assert "study.toml: the study uses the Label Studio server at https://ls.example.org" in line


# --------------------------------------------------------------------------- half an emoji in JSON


def test_lone_surrogate_in_json_is_a_located_error_not_exit_3(tmp_path):
    jsonl = tmp_path / "cases.jsonl"
    jsonl.write_text('{"case_id": "C1", "text": "half \\ud83d emoji"}\n')
    js = tmp_path / "cases.json"
    js.write_text('[{"case_id": "C1", "text": "half \\ud83d emoji"}]')
    for f in (jsonl, js):
        res = run("cases", "validate", f, "--schema", "mtb_unsafe", code=None)
        assert res.exit_code == 1, res.output
        assert (
            f"{f.name}" in res.output and "lone surrogate \\ud83d" in res.output and "internal error" not in res.output
        )
    table = tmp_path / "ratings.jsonl"
    table.write_text(
        '{"item_id": "C1", "rater": "onc_a", "field": "safety_label", "value": "Unsafe", "rationale": "x \\udc00"}\n'
    )
    line = error_line(run("agree", table, "--schema", "mtb_unsafe", code=None))
    assert "ratings.jsonl:1" in line and "lone surrogate" in line


# --------------------------------------------------------------------------- NaN and NUL labels without a schema


def test_nan_and_nul_labels_without_a_schema_refused_by_row(tmp_path):
    for name, bad in (("nan.csv", "NaN"), ("nul.csv", "ye\x00s")):
        t = tmp_path / name
        t.write_text(f"item_id,rater,field,value\nC1,a,f,yes\nC1,b,f,{bad}\nC2,a,f,no\nC2,b,f,no\n")
        line = error_line(run("agree", t, code=None))
        assert f"{name}:3: field f: value" in line


# --------------------------------------------------------------------------- flag names a field it cannot compare


def test_flag_names_an_unknown_field_instead_of_dropping_it(tmp_path):
    t = tmp_path / "fl.csv"
    t.write_text(
        "item_id,rater,field,value\nC1,onc_a,safety_label,Supported\nC1,onc_b,safety_label,Unsafe\n"
        "C1,onc_a,bogus,x\nC1,onc_b,bogus,y\n"
    )
    res = run("flag", t, "--schema", "mtb_unsafe")
    assert "field 'bogus' (2 ratings) is not a field of schema mtb_unsafe" in res.stderr
