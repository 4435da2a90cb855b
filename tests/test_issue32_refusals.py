"""Issue 32's "by harm" list: inputs read silently or refused wrongly before, each test failing on
the code before its fix.  Oracle for a refusal: one ``Error:`` line naming the file or flag, a
non-zero exit, no traceback, nothing written."""

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
