"""Printed claims of a study with several rounds (claims.md; issue 22 follow-up, cl22).

Round 2 re-rates two of round 1's items after round 1's disagreements were partly decided.  The
report's Adjudication and Gold-distribution sections resolved the provisional gold from round 2's
ratings only ("safety_label: 0 unanimous, 1 adjudicated, 1 unresolved" of 2 items) while
`gold export` wrote 6 rows (2 unanimous, 2 adjudicated, 2 unresolved); the methods paragraph said
"1 item-field row was flagged ... in round 2; 2 decisions are in force" (one of them on a row no
longer flagged, the open round-1 row not counted).  Each test failed on the code before the fix
(checked).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import openpyxl
from conftest import run_cli as run

S, U = "Supported", "Unsupported"
TABLE = ["--item-col", "case_id", "--rater-col", "rater", "--label-col", "label", "--field", "safety_label"]


def _table(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "rater", "label"])
        w.writerows(rows)
    return path


def two_rounds(tmp: Path, c2: tuple[str, str] = (S, S)) -> Path:
    """Round 1: 6 items, c2 c3 c4 disagree; c2 and c3 decided 'Supported' on the sheet (c4 open).
    Round 2 re-rates c1 (now a disagreement) and c2 (now both 'Supported', the value decided on round 1:
    the decision stays in force; a unanimous round 2 on another value would supersede it,
    tests/test_gold_rounds.py)."""
    r1 = {"c1": (S, S), "c2": (S, U), "c3": (S, U), "c4": (U, S), "c5": (U, U), "c6": (S, S)}
    rows = [(c, r, v) for c, vals in r1.items() for r, v in zip(("onc_a", "onc_b"), vals)]
    s = tmp / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", _table(tmp / "r1.csv", rows), *TABLE)
    sheet = tmp / "sheet.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Case ID"].value in ("c2", "c3"):
            rec["Decision"].value, rec["Reason"].value = S, "guideline 4.2"
    wb.save(sheet)
    run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair")
    r2 = [("c1", "onc_a", S), ("c1", "onc_b", U), ("c2", "onc_a", c2[0]), ("c2", "onc_b", c2[1])]
    run("pull", "--study", s, "--round", 2, "--from-table", _table(tmp / "r2.csv", r2), *TABLE)
    return s


def report_md(s: Path, *extra) -> str:
    out = s.parent / "report.md"
    run("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement", *extra)
    return out.read_text().replace("\\", "")


def _section(text: str, title: str) -> str:
    return text.split(f"## {title}\n")[1].split("\n## ")[0]


def _gold_counts(gold_csv: Path) -> tuple[Counter, Counter]:
    rows = list(csv.DictReader(gold_csv.open()))
    methods = Counter(r["method"] for r in rows)
    labels = Counter((r["gold_value"] or "unresolved", r["method"]) for r in rows)
    return methods, labels


def test_the_provisional_gold_of_a_two_round_study_is_the_gold_export_writes(tmp_path):
    s = two_rounds(tmp_path)
    text = report_md(s)
    adj = _section(text, "Adjudication")
    dist = _section(text, "Gold-label distribution")
    run("gold", "export", "--study", s)
    methods, labels = _gold_counts(s / "gold" / "v1" / "gold.csv")
    assert methods == {"unanimous": 2, "adjudicated": 2, "unresolved": 2}
    # the old report: "safety_label: 0 unanimous, 1 adjudicated, 1 unresolved" (round 2's two items)
    assert (
        f"- safety_label: {methods['unanimous']} unanimous, {methods['adjudicated']} adjudicated, "
        f"{methods['unresolved']} unresolved" in adj
    ), adj
    assert (
        "- Flagged rows and gold: per item, the latest round in which every rater rated it: 4 items from round 1, "
        "2 from round 2 (as `flag`, `status` and `gold export` read the study)." in adj
    )
    table = {}
    for line in dist.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and cells[0] == "safety_label":
            table[cells[1]] = (int(cells[2]), int(cells[4]), int(cells[5]))
    expect = {}
    for (value, method), n in labels.items():
        tot, una, adjd = expect.get(value, (0, 0, 0))
        expect[value] = (tot + n, una + n * (method == "unanimous"), adjd + n * (method == "adjudicated"))
    assert table == expect == {"Supported": (3, 1, 2), "Unsupported": (1, 1, 0), "unresolved": (2, 0, 0)}, dist


def test_the_methods_count_the_flagged_rows_and_decisions_the_way_status_does(tmp_path):
    s = two_rounds(tmp_path)
    status = run("status", "--study", s).output
    assert "2 of 3 flagged rows still to decide" in status and "1 / 3     decided" in status, status
    text = _section(report_md(s), "Methods")
    # before: "1 item-field row was flagged ... in round 2 ...; 2 decisions are in force, made by dr_chair"
    assert (
        "3 item-field rows were flagged for adjudication (per item, the latest round in which every rater rated "
        "it: 4 items from round 1, 2 from round 2) by the schema's named boundaries and adjudication triggers "
        "(3 label disagreements); 1 decision is in force, made by dr_chair (review sheet); 2 not yet "
        "adjudicated; 1 more decision in force is on a row no longer flagged (gold keeps it)." in text
    ), text
    assert (
        "Gold labels on safety_label (provisional: no gold release yet, resolved as `gold export` would: per item, "
        "the latest round in which every rater rated it: 4 items from round 1, 2 from round 2): 2 unanimous, "
        "2 adjudicated and 2 unresolved." in text
    )
    flags = tmp_path / "flags.csv"
    run("flag", "--study", s, "--format", "csv", "-o", flags)
    # the report's agenda is `flag`'s: the open round-1 rows c3, c4 and round 2's c1
    listed = [r["item_id"] for r in csv.DictReader(flags.open())]
    assert sorted(listed) == ["c1", "c3", "c4"]
    assert "- 3 items flagged (3 item x field rows)" in _section(report_md(s), "Disagreements and named boundaries")


def test_report_round_n_describes_gold_export_round_n(tmp_path):
    s = two_rounds(tmp_path)
    text = report_md(s, "--round", 1)
    adj = _section(text, "Adjudication")
    assert (
        "- Flagged rows and gold: round 1 only, chosen with --round (as `flag --round` and `gold export --round` "
        in (adj)
    )
    run("gold", "export", "--study", s, "--round", 1)
    methods, _ = _gold_counts(s / "gold" / "v1" / "gold.csv")
    m = re.search(r"- safety_label: (\d+) unanimous, (\d+) adjudicated, (\d+) unresolved", adj)
    assert m and tuple(map(int, m.groups())) == (methods["unanimous"], methods["adjudicated"], methods["unresolved"])
    assert tuple(map(int, m.groups())) == (3, 2, 1)


def test_the_html_report_says_which_ratings_the_gold_comes_from(tmp_path):
    s = two_rounds(tmp_path)
    out = tmp_path / "report.html"
    run("report", "--study", s, "-o", out, "--no-supplement")
    html = out.read_text()
    assert (
        "No gold release yet: the resolution below is provisional. Flagged rows and gold: per item, the latest round "
        "in which every rater rated it: 4 items from round 1, 2 from round 2" in html
    )
    assert '<td>safety_label</td><td class="num">2</td><td class="num">2</td><td class="num">2</td>' in html


def test_rater_against_gold_never_prints_a_collapsed_interval(tmp_path):
    """Round 2: each rater against gold on few items; the table said "0.000 (0.000 to 0.000)".
    (c2 disagrees again in round 2: round 1's decision 'Supported' stays in force, onc_a's 'Unsupported'
    differs from it.  Leave-one-out gold: on c1, undecided, each rater meets the other's value, so onc_b
    is scored on c1 (onc_a's Supported vs its Unsupported) and c2 (the decision, Supported, as it rated):
    1 of 2, against a gold that is Supported on both -- a one-category gold, kappa 0 and no interval.)"""
    s = two_rounds(tmp_path, c2=(U, S))
    text = report_md(s, "--round", 2)
    assert "(0.000 to 0.000)" not in text, text
    assert "| onc_b | 2 | 50.0% | 0.000 (CI not estimable: degenerate table) |" in text
    out = tmp_path / "r.html"
    run("report", "--study", s, "--round", 2, "-o", out, "--no-supplement")
    html = out.read_text()
    assert "0.000 to 0.000" not in html and "0.000 (CI not estimable: degenerate table)</td>" in html
    # the default report (round 2 analysed, gold of the study): n is onc_a's 2 items of round 2, not every
    # gold item of the study (it said n = 4); onc_a's S on c1 meets onc_b's U, its U on c2 the decision S
    assert "| onc_a | 2 | 0.0% |" in report_md(s)
