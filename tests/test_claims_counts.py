"""Counts printed in the singular when there is one (claims.md; cl22): `flag` said "1 items flagged
(1 item x field rows)" and `adjudicate sheet` "1 unanimous rows".  Failed on the old code (checked)."""

from __future__ import annotations

import csv

from conftest import run_cli as run

TABLE = ["--item-col", "case_id", "--rater-col", "rater", "--label-col", "label", "--field", "safety_label"]


def test_one_flagged_item_and_one_unanimous_row_are_singular(tmp_path):
    t = tmp_path / "t.csv"
    with t.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "label"])
        w.writerows([("c1", "onc_a", "Supported"), ("c1", "onc_b", "Unsupported")])
        w.writerows([("c2", "onc_a", "Supported"), ("c2", "onc_b", "Supported")])
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", t, *TABLE)
    out = run("flag", "--study", s).output
    assert "1 item flagged (1 item x field row)" in out, out
    out = run("adjudicate", "sheet", "--study", s, "-o", tmp_path / "r.xlsx").output
    assert "r.xlsx: 1 row to decide (1 item), 1 unanimous row" in out, out
