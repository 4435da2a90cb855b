"""The built-in schemas' fixed texts hold for any number of raters (claims.md; cl22).

The mtb trigger said "The two oncologists chose different safety labels." on every flagged row of a
three-oncologist study (review sheet Flags column and codebook, the Label Studio adjudication page's
"Why:" line), and the boundaries said "one oncologist accepts ..., the other ...".  A named boundary
is crossed by some pair of raters, so "another" is true whatever the count.  Each test failed on the
code before the fix (checked).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import openpyxl
import pytest
from conftest import run_cli as run

from goldboard.adjudicate.flags import flag_disagreements
from goldboard.annotate.adjudication import adjudication_tasks
from goldboard.label_configs.schema import builtin_names, load_schema
from goldboard.study import Study, study_ratings

#: words that state or assume a number of raters (two; "both"; "the other" of a pair; "second")
COUNTED = re.compile(r"(?i)\b(two|both|the other|second|either|pair of|2 raters|couple)\b")


def fixed_texts(name: str) -> list[tuple[str, str]]:
    """Every sentence of a schema a rater, adjudicator or reader sees about the raters."""
    s = load_schema(name)
    out = [("description", s.description), ("instructions", s.instructions)]
    out += [(f"boundary {b.name}", b.explanation) for b in s.boundaries]
    out += [(f"trigger {t.name}", t.explanation) for t in s.triggers]
    out += [(f"rule {r.name}", r.explanation) for r in s.rules]
    for f in s.fields:
        out.append((f"field {f.name}", f"{f.title} {f.description or ''}"))
        # a value's definition describes the value; "two-oncologist concordance file" names a source file
        out += [(f"{f.name}={v.value}", v.description) for v in f.values if "concordance file" not in v.description]
    return out


@pytest.mark.parametrize("name", builtin_names())
def test_no_builtin_schema_text_counts_the_raters(name):
    bad = [(where, text) for where, text in fixed_texts(name) if text and COUNTED.search(text)]
    assert not bad, bad


def three_oncologists(tmp: Path) -> Path:
    rows = [
        ("c1", "onc_a", "Supported"),
        ("c1", "onc_b", "Unsupported"),
        ("c1", "onc_c", "Supported"),
        ("c2", "onc_a", "Insufficient Information"),
        ("c2", "onc_b", "Supported"),
        ("c2", "onc_c", "Supported"),
        ("c3", "onc_a", "Supported"),
        ("c3", "onc_b", "Supported"),
        ("c3", "onc_c", "Supported"),
    ]
    table = tmp / "t.csv"
    with table.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "label"])
        w.writerows(rows)
    s = tmp / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b,onc_c")
    table_opts = ["--item-col", "case_id", "--rater-col", "rater", "--label-col", "label", "--field", "safety_label"]
    run("pull", "--study", s, "--from-table", table, *table_opts)
    return s


def test_a_three_oncologist_sheet_and_adjudication_page_say_nothing_of_two(tmp_path):
    s = three_oncologists(tmp_path)
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    wb = openpyxl.load_workbook(sheet)
    texts = [c.value for ws in wb.worksheets for row in ws.iter_rows() for c in row if isinstance(c.value, str)]
    counted = [t for t in texts if COUNTED.search(t)]
    assert not counted, counted
    flags_col = [t for t in texts if t.startswith("The oncologists chose different safety labels")]
    assert len(flags_col) >= 2  # the Flags column of c1 and c2 (and the codebook)
    st = Study.open(s)
    flags = flag_disagreements(study_ratings(st), st.schema, st.raters)
    tasks = adjudication_tasks(flags, st.units(), "safety_label", list(st.raters), schema=st.schema)
    why = " ".join(str(v) for t in tasks for v in t.values())
    assert "chose different safety labels" in why and "The two oncologists" not in why, why
    assert "Boundary: Supported vs Unsupported\nWhy: The oncologists chose different safety labels" in why
