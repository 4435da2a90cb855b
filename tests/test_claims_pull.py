"""`pull`'s per-rater summary counts each item once, and prints the arithmetic (claims.md; cl22).

An item whose only rating was held out as invalid was counted "invalid" and again "unannotated"
(doccano: "onc_b: 1 rated, 1 invalid, 0 superseded, 2 unannotated" of 3 items), and a table pull
gave no item count at all ("onc_a: 2 rated, 1 invalid, 0 superseded, 1 blank" of 5 items, one with
no row).  Now each rater's line ends "(N items: a rated + b invalid + c unannotated)", checked here
against ratings.csv and invalid.csv for a table and a Prodigy export (Label Studio:
``test_live_roundtrip.py::test_invalid_annotations_are_kept_aside_not_lost``).  Each test failed on
the code before the fix (checked).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from conftest import run_cli as run

from goldboard.study import Study

LINE = re.compile(
    r"^  (\w+): (\d+) rated, (\d+) invalid, (\d+) superseded.*\((\d+) items?: (\d+) rated \+ (\d+) invalid \+ "
    r"(\d+) unannotated\)$"
)
TABLE = ["--item-col", "case_id", "--rater-col", "rater", "--label-col", "label", "--field", "safety_label"]
PRODIGY = Path(__file__).parent / "data" / "prodigy" / "mtb_review.jsonl"


def rater_lines(output: str) -> dict[str, tuple[int, ...]]:
    """rater -> (rated, invalid, superseded, items, rated, invalid, unannotated) from pull's summary."""
    out = {}
    for line in output.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
    return out


def _items_of(path: Path, rater: str, kind: str | None = None) -> set[str]:
    if not path.exists():
        return set()
    rows = csv.DictReader(path.open(encoding="utf-8"))
    return {r["item_id"] for r in rows if r["rater"] == rater and (kind is None or r["kind"] == kind)}


def check_each_item_once(s: Path, output: str, items: int, raters: list[str]) -> dict[str, tuple[int, ...]]:
    got = rater_lines(output)
    assert sorted(got) == sorted(raters), output
    rnd = s / "rounds" / "1"
    for r, (rated, invalid, _sup, n, rated2, invalid2, unannotated) in got.items():
        assert (rated, invalid) == (rated2, invalid2)
        assert rated + invalid + unannotated == n == items, (r, output)
        kept, held = _items_of(rnd / "ratings.csv", r), _items_of(rnd / "invalid.csv", r, "invalid")
        assert len(kept) == rated and len(held - kept) == invalid, (r, kept, held)
    return got


def test_a_table_pull_counts_each_item_of_the_table_once(tmp_path):
    """5 items; onc_a: 2 rated, c2 an invalid value, c3 a blank cell, c4 no row; onc_c no row at all."""
    rows = [
        ("c1", "onc_a", "Supported"),
        ("c1", "onc_b", "Supported"),
        ("c2", "onc_a", "Suported-typo"),
        ("c2", "onc_b", "Unsupported"),
        ("c3", "onc_a", ""),
        ("c3", "onc_b", "Unsupported"),
        ("c4", "onc_b", "Supported"),
        ("c5", "onc_a", "Supported"),
        ("c5", "onc_b", "Supported"),
    ]
    table = tmp_path / "t.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "label"])
        w.writerows(rows)
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    out = run("pull", "--study", s, "--from-table", table, *TABLE).output
    got = check_each_item_once(s, out, 5, ["onc_a", "onc_b", "onc_c"])
    assert got["onc_a"][3:] == (5, 2, 1, 2)  # c3 (blank) and c4 (no row): unannotated
    assert "  onc_a: 2 rated, 1 invalid, 0 superseded, 1 blank (5 items: 2 rated + 1 invalid + 2 unannotated)" in out
    assert "  onc_c: 0 rated, 0 invalid, 0 superseded (5 items: 0 rated + 0 invalid + 5 unannotated)" in out
    # pull.json of a table is unchanged (no per-item lists of a table are recorded)
    assert "unannotated" not in (s / "rounds" / "1" / "pull.json").read_text()


def test_a_prodigy_pull_counts_an_item_held_out_as_invalid_once(tmp_path):
    """ben skipped MTB-0003 (held out as invalid): it is not also "unannotated" (the old line said
    "onc_b: 2 rated, 1 invalid, 0 superseded, 1 unannotated" of the 3 items ben was shown)."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    raters = "mtb_review-ana=onc_a,mtb_review-ben=onc_b,mtb_review-cy=onc_c"
    out = run("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", "--rater", raters).output
    assert "  onc_b: 2 rated, 1 invalid, 0 superseded (3 items: 2 rated + 1 invalid + 0 unannotated)" in out, out
    # cy was shown one task and rejected it
    assert "  onc_c: 0 rated, 1 invalid, 0 superseded (1 item: 0 rated + 1 invalid + 0 unannotated)" in out
    got = rater_lines(out)
    rnd = s / "rounds" / "1"
    for r, (rated, invalid, _sup, n, _r, _i, unannotated) in got.items():
        assert rated + invalid + unannotated == n, (r, out)
        kept, held = _items_of(rnd / "ratings.csv", r), _items_of(rnd / "invalid.csv", r, "invalid")
        assert len(kept) == rated and len(held - kept) == invalid, (r, kept, held)
