"""A schema whose only rated field is multi-select is read as it is (no dummy field needed, none
shown by ``flag``): its answers are compared as sets, agreement is read one value at a time
(``--field tags:a``), and flag, adjudication and gold work end to end through the CLI.

Failed before: the schema was refused on load ("the only rated field, tags, is multi-select ...").
"""

from __future__ import annotations

import csv

from conftest import error_line
from conftest import run_cli as run
from test_adjudication_roundtrip import fill

SCHEMA = 'name = "tags_only"\nversion = "1"\n\n[[fields]]\nname = "tags"\nkind = "multi"\nvalues = ["a", "b", "c"]\n'
# I1: the same set ticked in another order; I2: a against c; I3: c and c
TABLE = "item_id,rater,tags\nI1,r1,a|b\nI1,r2,b|a\nI2,r1,a\nI2,r2,c\nI3,r1,c\nI3,r2,c\n"


def _study(tmp_path):
    schema = tmp_path / "tags_only.toml"
    schema.write_text(SCHEMA)
    s = tmp_path / "st"
    run("study", "init", s, "--schema", schema, "--raters", "r1,r2")
    t = tmp_path / "ratings.csv"
    t.write_text(TABLE)
    run("pull", "--study", s, "--from-table", t)
    return s


def test_multi_select_only_schema_loads_and_flags_sets_not_orders(tmp_path):
    s = _study(tmp_path)
    out = run("flag", "--study", s).output
    assert "1 item flagged (1 item x field row)" in out
    rows = [line.split() for line in out.splitlines() if line.startswith("1  ")]
    assert rows == [["1", "I2", "tags", "a", "c", "9", "disagree"]]  # I1 (a|b vs b|a) is agreement


def test_multi_select_only_schema_agreement_is_per_value(tmp_path):
    s = _study(tmp_path)
    # per value a: I1 yes/yes, I2 yes/no, I3 no/no -> 2 of 3 agree
    out = run("agree", "--study", s, "--field", "tags:a").output
    assert "r1 (rows) x r2 (columns), 3 items" in out
    # value c: I1 no/no, I2 no/yes, I3 yes/yes -> the same table mirrored
    assert "3 items" in run("agree", "--study", s, "--field", "tags:c").output
    # the bare field is never read as one category per ordered string: the way per value is said
    line = error_line(run("agree", "--study", s, code=1))
    assert "field tags is multi-select: analyse one value at a time" in line and "tags:a" in line


def test_multi_select_only_schema_adjudicated_and_released(tmp_path):
    s = _study(tmp_path)
    sheet = tmp_path / "review.xlsx"
    assert "1 row to decide (1 item)" in run("adjudicate", "sheet", "--study", s, "-o", sheet).output
    fill(sheet, {("I2", "tags"): ("c|a", "both findings present", "dr_x")})
    run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_x")
    out = run("gold", "export", "--study", s).output
    assert "3 rows: 2 unanimous, 1 adjudicated, 0 unresolved" in out
    with open(s / "gold" / "v1" / "gold.csv", newline="") as fh:
        gold = {r["item_id"]: (r["gold_value"], r["method"]) for r in csv.DictReader(fh)}
    assert gold == {"I1": ("a|b", "unanimous"), "I2": ("a|c", "adjudicated"), "I3": ("c", "unanimous")}
