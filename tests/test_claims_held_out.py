"""What goldboard says of a round whose ratings were all held out as invalid (claims.md; cl22).

Every rating of the table was outside the schema: `status` said "0 / 0 items rated", `report`
"round 1 has no ratings yet (nobody has annotated it)", `flag` and `gold export` "no ratings pulled
yet (run `goldboard pull ...`)" right after the pull.  A Prodigy round where a rater's only answer
was held out said "0 / 3 items rated" with no word of it.  Each test failed on the code before the
fix (checked).
"""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli as run

from goldboard.study import Study

TABLE = ["--item-col", "case_id", "--rater-col", "rater", "--label-col", "label", "--field", "safety_label"]
PRODIGY = Path(__file__).parent / "data" / "prodigy" / "mtb_review.jsonl"


def held_out_only(tmp: Path, monkeypatch) -> Path:
    """A round whose every rating was held out.  A Label Studio server pull records such a round;
    a table (or file) with no valid rating is refused, nothing written (test_table_intake),
    so the table's refusal is switched off here to build the state the server pull leaves."""
    from goldboard.workflows import intake

    monkeypatch.setattr(intake, "refuse_nothing_pulled", lambda *a, **k: None)
    t = tmp / "t.csv"
    t.write_text("case_id,rater,label\nc1,onc_a,Zzz\nc1,onc_b,Yyy\nc2,onc_a,Qqq\nc2,onc_b,Www\n")
    s = tmp / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    run("pull", "--study", s, "--from-table", t, *TABLE)
    return s


def test_status_counts_the_items_of_a_round_whose_ratings_were_all_held_out(tmp_path, monkeypatch):
    s = held_out_only(tmp_path, monkeypatch)
    out = run("status", "--study", s).output
    assert "0 / 0" not in out, out
    assert "onc_a              0 / 2     items rated (  0%)  from a ratings table, last pulled " in out
    assert "; 2 held out as invalid (invalid.csv)" in out


def test_report_flag_and_gold_say_the_ratings_were_held_out_not_missing(tmp_path, monkeypatch):
    s = held_out_only(tmp_path, monkeypatch)
    why = f"all 4 ratings pulled were held out as invalid: see {s / 'rounds' / '1' / 'invalid.csv'}"
    res = run("report", "--study", s, "--format", "markdown", "-o", tmp_path / "r.md", code=1)
    assert "nobody has annotated it" not in res.output and why in res.output, res.output
    for cmd in (("flag", "--study", s), ("gold", "export", "--study", s)):
        res = run(*cmd, code=1)
        assert "no ratings pulled yet" not in res.output, res.output
        assert f"Error: {s}: no valid ratings yet: round 1: {why}" in res.output


def test_status_names_the_held_out_answers_of_a_prodigy_round(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    raters = "mtb_review-ana=onc_a,mtb_review-ben=onc_b,mtb_review-cy=onc_c"
    run("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", "--rater", raters)
    lines = run("status", "--study", s).output.splitlines()
    onc_b = next(x for x in lines if x.strip().startswith("onc_b"))
    onc_c = next(x for x in lines if x.strip().startswith("onc_c"))
    assert "2 / 3     items rated ( 67%)  from a Prodigy db-out export" in onc_b
    assert onc_b.endswith("; 1 held out as invalid (invalid.csv)") and onc_c.endswith(
        "; 1 held out as invalid (invalid.csv)"
    ), lines
