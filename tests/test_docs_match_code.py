"""What the manual states about the code is the code's: a changed limit, interval setting, wording or
signature makes the page false, and this fails until the page is fixed.

- docs/python-api.md's surface table names every function of ``goldboard.api.__all__`` with its
  parameters, and the frame's columns;
- docs/security.md gives each table limit of ``goldboard.fileio_xlsx`` with its value and the
  error's wording;
- docs/judge.md names the abstention kinds and the panel ratio's resample count;
- docs/report.md quotes the rater-against-gold heading as the report writes it.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from goldboard import api, fileio_xlsx
from goldboard.analysis.judge_agreement import N_BOOT
from goldboard.exports.report import vs_gold_title
from goldboard.workflows.judge_figures import ABSTENTION_KINDS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _page(name: str) -> str:
    # a line break inside a sentence is a space (the pages wrap at 100 columns)
    return re.sub(r"\s*\n\s*", " ", (DOCS / name).read_text(encoding="utf-8"))


def surface_rows(page: str) -> dict[str, str]:
    """``"agreement"`` -> the first cell of its row in the surface table (``gb.agreement(...)``)."""
    return {m.group(1): m.group(0) for m in re.finditer(r"`gb\.(\w+)\(([^`]*)\)`", page)}


def missing_in_surface(page: str) -> list[str]:
    rows = surface_rows(page)
    missing = []
    for name in api.__all__:
        obj = getattr(api, name)
        if not inspect.isfunction(obj):
            continue
        if name not in rows:
            missing.append(name)
            continue
        for param in inspect.signature(obj).parameters:
            if not re.search(rf"(?<!\w){param}(?!\w)", rows[name]):
                missing.append(f"{name}({param})")
    return missing


def test_the_python_api_page_names_every_function_and_parameter():
    page = (DOCS / "python-api.md").read_text(encoding="utf-8")
    assert missing_in_surface(page) == []
    assert ", ".join(api.FRAME_COLUMNS) in page


def test_a_function_or_parameter_missing_from_the_page_is_found():
    page = (DOCS / "python-api.md").read_text(encoding="utf-8")
    assert "flags" in missing_in_surface(page.replace("`gb.flags(", "`gb.agenda("))
    assert "agreement(seed)" in missing_in_surface(page.replace(", seed=1)", ")"))


@pytest.mark.parametrize("limit", ["MAX_TABLE_COLUMNS", "MAX_TABLE_CELLS", "MAX_XLSX_INFLATED_BYTES"])
def test_the_security_page_gives_each_table_limit_and_its_value(limit):
    page = _page("security.md")
    value = getattr(fileio_xlsx, limit)
    assert f"| `{limit}` | {value:,}" in page, f"docs/security.md: {limit} is {value:,}"
    assert f"{limit} = {value:,}" in page  # as the error writes it


def test_the_security_page_quotes_the_column_error():
    page = _page("security.md")
    assert str(fileio_xlsx.too_many_columns("t.csv:1", fileio_xlsx.MAX_TABLE_COLUMNS + 1)) in page


def test_the_judge_page_names_the_abstention_kinds_and_the_resamples():
    page = _page("judge.md")
    for kind in ABSTENTION_KINDS:
        assert kind in page, kind
    assert f"({N_BOOT:,} resamples)" in page
    assert "not built yet" not in page  # the figures issue 35 asked for are built


def test_the_report_page_quotes_the_rater_against_gold_heading():
    page = _page("report.md")
    head = vs_gold_title([{"rater": "onc_c", "left_out": 2}], adjudicated=True)
    left_out = head.split("; ", 1)[1].rstrip(":")
    assert f'("{left_out}")' in page
    assert "(after adjudication)" in head and "(after adjudication)" in page
    assert "(no decision made yet)" in vs_gold_title([], adjudicated=False) and "(no decision made yet)" in page
