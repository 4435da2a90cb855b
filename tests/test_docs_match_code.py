"""What the manual states about the code is the code's: a changed limit, interval setting, wording or
signature makes the page false, and this fails until the page is fixed.

- docs/python-api.md's surface table names every function of ``goldboard.api.__all__`` with its
  parameters, and the frame's columns;
- docs/security.md gives each table limit of ``goldboard.fileio_xlsx`` with its value and the
  error's wording;
- docs/judge.md names the abstention kinds and the panel ratio's resample count, and its
  two-clinician example's kappas are what ``goldboard judge --study`` prints for it;
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


def test_the_safety_page_gives_the_same_limits():
    page = _page("safety.md")
    cells = fileio_xlsx.MAX_TABLE_CELLS
    assert f"over {fileio_xlsx.MAX_TABLE_COLUMNS:,} columns or {cells // 1_000_000} million cells" in page
    assert cells % 1_000_000 == 0 and fileio_xlsx.MAX_XLSX_INFLATED_BYTES == 1 << 30 and "past 1 GiB" in page


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


def test_the_judge_pages_two_clinician_example_is_what_judge_prints(tmp_path):
    """The "With two clinicians the test is weak" figures: OpenMTB-Audit, a judge answering
    "Supported" on each disputed item, each disputed item decided for a label that is not Supported."""
    import csv
    import json

    from conftest import run_cli as run
    from test_judge_reviewer_figures import OPENMTB, WIDE, raw_rows

    from goldboard.adjudicate.decisions import Proposed, record_decisions
    from goldboard.study import Study

    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    f = Study.open(s).schema.field("safety_label")
    labels, decide = tmp_path / "sup.csv", []
    with open(labels, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "field", "value"])
        for r in raw_rows():
            a, b = r["oncologist_a_label"], r["oncologist_b_label"]
            w.writerow([r["case_id"], "safety_label", a if a == b else "Supported"])
            if a != b:
                value = next((f.normalize(x) for x in (a, b) if f.normalize(x) != "Supported"), "Unsafe")
                decide.append(Proposed(r["case_id"], "safety_label", value, "", "adj"))
    record_decisions(Study.open(s).decisions_path, decide, source="sheet")
    args = ["judge", "--study", s, "--judge", "sup", "--expertise", "expert", "--labels", labels]
    data = json.loads(run(*args, "--format", "json").stdout)
    kappa = {(r["a"], r["b"]): r["kappa"]["value"] for r in data["agreement"] if r.get("kappa")}
    judge_gold = kappa[("sup", "gold")]
    clinicians = [kappa[(c, f"gold without {c}")] for c in ("onc_a", "onc_b")]
    assert data["judges"][0]["winning_rate"] == 1.0 and data["judges"][0]["passed"]
    page = _page("judge.md")
    assert "can pass at winning rate 1.00" in page
    assert f"passes with κ {judge_gold:.2f} against gold, where the clinicians have " in page
    assert f"have {clinicians[0]:.2f} and {clinicians[1]:.2f} against their leave-one-out gold" in page
