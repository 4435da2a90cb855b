"""After a rater's edit under a decision, `gold diff` and `status` count the decision as gold does (issue 32).

Round 1 (a ratings table): C1 and C3 disagree and are decided; gold v1.  The table is pulled again
with onc_a's C1 edited so the raters agree: gold v2 still takes C1 from its decision.  Before the
fix `gold diff v1 v2` reported 0 changed rows (the raters' values under the gold value were not
compared) and `status` counted 1 decision where gold holds 2 adjudicated rows.
"""

from __future__ import annotations

from conftest import run_cli as run

from goldboard.adjudicate.decisions import Proposed, record_decisions

WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b", "--field", "safety_label"]


def test_rating_edit_under_a_decision_is_in_gold_diff_and_status(tmp_path):
    s = tmp_path / "st"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    t = tmp_path / "r1.csv"
    t.write_text("case_id,a,b\nC1,Supported,Unsafe\nC2,Unsafe,Unsafe\nC3,Supported,Unsafe\n")
    run("pull", "--study", s, "--from-table", t, *WIDE)
    record_decisions(
        s / "decisions.jsonl",
        [
            Proposed(item_id=i, field="safety_label", decision=v, reason="meeting", adjudicator="dr_x")
            for i, v in (("C1", "Unsafe"), ("C3", "Supported"))
        ],
        source="sheet",
        sheet="review.xlsx",
    )
    run("gold", "export", "--study", s)
    t.write_text("case_id,a,b\nC1,Unsafe,Unsafe\nC2,Unsafe,Unsafe\nC3,Supported,Unsafe\n")
    run("pull", "--study", s, "--from-table", t, *WIDE, "--add-to-adjudicated-round")
    assert "2 adjudicated" in run("gold", "export", "--study", s).output

    diff = run("gold", "diff", "v1", "v2", "--study", s).output
    assert "1 changed item x field rows" in diff
    assert "C1" in diff and "ratings" in diff and "onc_a=Supported; onc_b=Unsafe -> onc_a=Unsafe; onc_b=Unsafe" in diff

    status = run("status", "--study", s).output
    assert "1 / 1" in status and "1 decision in force on 1 row no longer flagged (C1" in status
    assert "gold keeps it" in status
