"""The methods paragraph names what the weights and alpha's distances rest on: on a field whose
levels are unequally spaced numbers (a 0, 1, 2, 5, 10 pain score) the linear and quadratic weights
of kappa and AC2 are on the levels' ranks, and it says so; and the SE of ordinal alpha, which is
where goldboard's alpha SE differs from irrCAC's krippen.alpha.raw (the nominal, interval and ratio
SEs equal irrCAC's published values with missing ratings: tests/test_agreement.py), is described.
Failed on the code before (checked): neither sentence existed."""

from __future__ import annotations

import csv

from conftest import run_cli

PAIN = """name = "pain"
version = "1.0"
title = "Pain score"
unit = "one answer"

[[fields]]
name = "pain"
title = "Pain"
kind = "ordinal"
required = true
primary = true
values = [{ value = "0" }, { value = "1" }, { value = "2" }, { value = "5" }, { value = "10" }]
"""


def _methods(tmp_path, levels: list[str]) -> str:
    schema = tmp_path / "pain.toml"
    schema.write_text(
        PAIN.replace(
            '[{ value = "0" }, { value = "1" }, { value = "2" }, { value = "5" }, { value = "10" }]',
            "[" + ", ".join(f'{{ value = "{v}" }}' for v in levels) + "]",
        )
    )
    table = tmp_path / "t.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item", "a", "b"])
        w.writerows([f"i{i}", levels[i % 5], levels[(i + (i % 3 == 0)) % 5]] for i in range(30))
    s = tmp_path / "s"
    run_cli("study", "init", s, "--schema", schema, "--raters", "a,b")
    run_cli("pull", "--study", s, "--from-table", table, "--item-col", "item", "--rater-cols", "a=a,b=b",
            "--field", "pain")  # fmt: skip
    out = tmp_path / "r.md"
    run_cli("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement")
    return next(line for line in out.read_text().splitlines() if "Software:" in line)


def test_unequally_spaced_levels_name_the_ranks(tmp_path):
    m = _methods(tmp_path, ["0", "1", "2", "5", "10"])
    assert (
        "On pain, whose levels (0, 1, 2, 5, 10) are unequally spaced numbers, the linear and quadratic weights "
        "use the levels' ranks (1 to 5), not their values."
    ) in m
    assert "The SE of ordinal alpha holds Krippendorff's observed ordinal metric fixed" in m


def test_equally_spaced_levels_need_no_such_sentence(tmp_path):
    m = _methods(tmp_path, ["0", "1", "2", "3", "4"])
    assert "unequally spaced" not in m
