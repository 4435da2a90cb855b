"""A rater added before round 2 (``study add-rater``) is expected on round 2's items only.

``goldboard study add-rater --help`` promises that earlier rounds' statistics are unchanged.  Before,
the grid's rater set was study-wide (every rater some pull recorded), so once round 2 was pulled with
the new rater, round 1's unanimous items became 'unresolved' in gold and 'missing' in flags, and the
gold warning blamed "round 1 records no design".  Each round now expects the raters its own pull
recorded (``rounds/N/pull.json``)."""

from __future__ import annotations

import csv

from conftest import run_cli

from goldboard.study import Study


def _pull(s, n, rows, cols):
    t = s.parent / f"r{n}.csv"
    t.write_text(rows)
    run_cli(
        "pull", "--study", s, "--round", n, "--from-table", t, "--item-col", "case_id",
        "--rater-cols", cols, "--field", "safety_label",
    )  # fmt: skip


def _study(tmp_path, round2: str):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    _pull(s, 1, "case_id,a,b\nC1,Supported,Supported\nC2,Unsupported,Unsupported\nC3,Supported,Unsupported\n",
          "onc_a=a,onc_b=b")  # fmt: skip
    run_cli("study", "add-rater", s, "onc_c", "--no-account")
    _pull(s, 2, round2, "onc_a=a,onc_b=b,onc_c=c")
    return s


def _gold(s):
    with open(s / "gold/v1/gold.csv", newline="") as fh:
        return {r["item_id"]: r["method"] for r in csv.DictReader(fh)}


R2 = "case_id,a,b,c\nC4,Supported,Supported,Supported\nC5,Unsupported,Supported,Unsupported\nC7,Supported,Supported,Unsupported\n"


def test_round_one_unanimous_items_stay_unanimous_after_a_new_rater(tmp_path):
    s = _study(tmp_path, R2)
    res = run_cli("gold", "export", "--study", s)
    assert "records no design" not in res.output and "missing" not in res.output, res.output
    assert _gold(s) == {
        "C1": "unanimous",
        "C2": "unanimous",
        "C3": "unresolved",
        "C4": "unanimous",
        "C5": "unresolved",
        "C7": "unresolved",
    }
    flagged = run_cli("flag", "--study", s).output
    assert "missing_rating" not in flagged and " C1 " not in flagged and " C2 " not in flagged, flagged


def test_the_new_rater_is_still_expected_on_the_round_that_recorded_them(tmp_path):
    """Round 2's pull recorded onc_c: an item of round 2 onc_c left blank is a missing rating."""
    s = _study(tmp_path, R2 + "C6,Supported,Supported,\n")
    run_cli("gold", "export", "--study", s)
    got = _gold(s)
    assert got["C6"] == "unresolved" and got["C1"] == "unanimous", got
    assert "missing_rating" in run_cli("flag", "--study", s).output


def test_the_missing_rating_warning_names_the_raters_of_that_round(tmp_path):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    _pull(s, 1, "case_id,a,b\nC1,Supported,\nC2,Unsupported,Unsupported\nC3,Supported,Unsupported\n", "onc_a=a,onc_b=b")
    run_cli("study", "add-rater", s, "onc_c", "--no-account")
    _pull(s, 2, R2, "onc_a=a,onc_b=b,onc_c=c")
    res = run_cli("gold", "export", "--study", s)
    assert "(1 item: C1)" in res.stderr and "round 1 records no design, so every study rater (onc_a, onc_b) is" in (
        res.stderr
    ), res.stderr
