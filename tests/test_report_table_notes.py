"""A table's own reading (its notes) follows the table in the report, HTML and Markdown, instead of
standing among the section's opening paragraphs, far above the table it explains: the judge's
abstention table and its note on what each kind of abstention counts."""

from __future__ import annotations

import csv
from html import unescape

from conftest import run_cli as run
from test_judge_run import OPENMTB, openmtb_study

NOTE = "Abstention by kind: blank (no value; for the judge, no answer)"


def test_the_abstention_note_follows_its_table(tmp_path):
    s = openmtb_study(tmp_path, texts=False)
    rows = list(csv.DictReader(OPENMTB.open(newline="", encoding="utf-8-sig")))
    labels = tmp_path / "j.csv"
    labels.write_text("item_id,field,value\n" + "".join(f"{r['case_id']},safety_label,Supported\n" for r in rows))
    run("judge", "--study", s, "--judge", "j", "--labels", labels, "--expertise", "expert")
    run("report", "--study", s, "--format", "markdown", "-o", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text()
    table, note, end = md.index("**Abstention on safety_label"), md.index(NOTE), md.index("## Warnings")
    assert table < note < end and md.count(NOTE) == 1
    assert "| j | 50 |" in md[table:note]  # the table itself lies between its title and its note
    run("report", "--study", s, "-o", tmp_path / "r.html")
    html = unescape((tmp_path / "r.html").read_text())
    table = html.index("<h3>Abstention on safety_label")
    assert html.index(f'<p class="note">{NOTE}') > html.index("</table>", table) and html.count(NOTE) == 1
