"""Issue 23, hand-edited study files said by every reader (``/tmp/campaign4``: N87/N67, N88,
N70, N89, N114, N111).  Each test failed on the code before its fix (checked on the commit
before).

1. N87/N67/N88/N70/N89: a round's ratings.csv edited by hand (or re-saved with CRLF) after its
   pull: ``report`` warns on stderr and at the top of the HTML and Markdown report; ``flag``,
   ``adjudicate sheet`` and ``status`` warn, naming the file;
2. N114: ``status`` on a decisions log cut short after a gold release: the refusal of gold
   export / sheet / report as a warning line, with the progress still shown;
3. N111: a re-pull refused after a hand edit of ratings.csv says the study file was edited by
   hand instead of blaming the table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_campaign_records import _table_pulled, released  # noqa: E402,F401
from test_misuse_inputs import error_line, run  # noqa: E402

EDITED = "changed since its pull (its SHA-256 is not the one pull.json recorded)"


def _edit(s: Path, how: str) -> Path:
    ratings = s / "rounds" / "1" / "ratings.csv"
    data = ratings.read_bytes()
    if how == "crlf":  # re-saved by a spreadsheet: same cells, other record ends
        ratings.write_bytes(
            data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            if b"\r\n" not in data
            else data.replace(b"\r\n", b"\n")
        )
    else:
        text = data.decode("utf-8")
        i = text.index("Unsupported")
        ratings.write_text(text[:i] + "Supported" + text[i + len("Unsupported") :], encoding="utf-8")
    assert ratings.read_bytes() != data
    return ratings


# --------------------------------------------------------------------------- 1. N87 N67 N88 N70 N89


@pytest.mark.parametrize("how", ["value", "crlf"])
def test_every_reader_says_a_hand_edited_ratings_file(tmp_path, how):
    s = _table_pulled(tmp_path)
    for argv in (("flag", "--study", s), ("status", "--study", s)):  # an unedited study: not a word
        assert EDITED not in run(*argv).output
    ratings = _edit(s, how)
    want = f"Warning: {ratings}: {EDITED}"
    for fmt, name in (("html", "r.html"), ("markdown", "r.md")):
        out = tmp_path / name
        res = run("report", "--study", s, "--format", fmt, "-o", out, "--no-supplement")
        assert res.exit_code == 0, res.output
        assert want in res.stderr, res.stderr
        doc = out.read_text(encoding="utf-8")
        at = doc.index(f"{ratings}: {EDITED}")
        assert at < doc.index("Study"), "the warning is at the top, before the Study section"
        assert "Warning:" in doc[: at + 1] or "**Warning:**" in doc[: at + 1]
    res = run("flag", "--study", s, "--format", "csv", "-o", tmp_path / "f.csv")
    assert res.exit_code == 0 and res.stderr.count(want) == 1, res.stderr
    res = run("adjudicate", "sheet", "--study", s, "-o", tmp_path / "s.xlsx")
    assert res.exit_code == 0 and res.stderr.count(want) == 1, res.stderr
    res = run("status", "--study", s)
    assert res.exit_code == 0, res.output
    assert f"warning: {ratings}: {EDITED}" in res.output, res.output
    assert "items rated" in res.output  # the progress is still shown


# --------------------------------------------------------------------------- 2. N114


def test_status_says_a_decisions_log_cut_short_and_still_shows_progress(released):  # noqa: F811
    log = released.decisions_path
    res = run("status", "--study", released.path)
    assert res.exit_code == 0 and "append-only" not in res.output, res.output
    log.write_text(log.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    res = run("status", "--study", released.path)
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if ln.startswith("warning: ") and str(log) in ln)
    assert "gold release v1 was built from its first 2 decisions" in line and "append-only" in line, line
    assert "1 of them are missing (D000002)" in line and "nothing written" not in line, line
    assert "still to decide" in res.output  # the progress is still shown


# --------------------------------------------------------------------------- 3. N111


def test_a_refused_re_pull_after_a_hand_edit_names_the_edit_not_the_table(tmp_path):
    s = _table_pulled(tmp_path)
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", s, "-o", sheet).exit_code == 0
    from test_adjudication_roundtrip import fill

    fill(sheet, {"C-1": ("Unsupported", "no evidence", None)})
    assert run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_lee").exit_code == 0
    ratings = _edit(s, "value")
    before = ratings.read_bytes()
    base = ["pull", "--study", s, "--from-table", tmp_path / "wide.csv", "--field", "safety_label"]
    line = error_line(run(*base, "--rater-cols", "onc_a=a,onc_b=b"))
    assert line.startswith(f"Error: {ratings}: {EDITED}"), line
    assert "these are the hand edit, not a change of the table" in line, line
    assert "'Supported' -> 'Unsupported'" in line and "--add-to-adjudicated-round" in line, line
    assert "this table changes" not in line, line
    assert ratings.read_bytes() == before  # nothing written
