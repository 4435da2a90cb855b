"""The study's records edited by hand after the fact: a decisions log emptied, deleted or cut short
after a gold release, a round's ratings.csv edited after its pull, a log entry naming a rater as an
independent adjudicator, a re-pull changing a rating under a decision or a release: every reader
says it, gold export refuses unless told (and records it).

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from builders import import_, sheet_for, table_pulled
from conftest import error_line
from conftest import invoke_cli as run
from test_adjudication_roundtrip import fill
from test_flags import I

from goldboard.adjudicate.decisions import log_prefix_problem, read_decisions
from goldboard.errors import GoldboardWarning
from goldboard.study import Study


def _readers(study, tmp_path):
    return (
        ("gold", "export", "--study", study.path, "--force"),
        ("report", "--study", study.path, "--format", "markdown", "-o", tmp_path / "r.md", "--no-supplement"),
        ("adjudicate", "sheet", "--study", study.path, "-o", tmp_path / "again.xlsx"),
    )


@pytest.mark.parametrize("how", ["emptied", "deleted", "cut short", "edited"])
def test_a_log_that_lost_what_a_release_was_built_from_is_refused_by_every_reader(released, tmp_path, how):
    log = released.decisions_path
    sheet = sheet_for(released, tmp_path, "before.xlsx")  # written while the log was whole
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    if how == "emptied":
        log.write_bytes(b"")
    elif how == "deleted":
        log.unlink()
    elif how == "cut short":
        log.write_text(lines[0], encoding="utf-8")
    else:
        e = json.loads(lines[1])
        e["reason"] = "edited by hand"
        log.write_text(lines[0] + json.dumps(e) + "\n", encoding="utf-8")
    importing = ("adjudicate", "import", "--study", released.path, sheet, "--adjudicator", "dr_lee")
    for argv in (*_readers(released, tmp_path), importing):
        line = error_line(run(*argv))
        assert f"{log}: the log " in line and "gold release v1 was built from its first 2 decisions" in line, line
        assert "append-only" in line, line
        if how == "cut short":
            assert "1 of them are missing (D000002)" in line and "has 1 entry" in line, line
        elif how == "edited":
            assert "changed or moved" in line, line
        else:
            assert "2 of them are missing (D000001, D000002)" in line, line
    assert sorted(p.name for p in released.gold_dir.iterdir()) == ["v1"]  # no v2 cut
    assert not (tmp_path / "r.md").exists() and not (tmp_path / "again.xlsx").exists()


def test_a_log_that_grew_after_the_release_is_accepted_and_the_manifest_records_it(released, tmp_path):
    man = json.loads((released.gold_dir / "v1" / "manifest.json").read_text(encoding="utf-8"))
    rec = man["sources"]["decisions"]
    assert rec["entries"] == 2 and rec["last_id"] == "D000002" and len(rec["entries_sha256"]) == 64
    sheet = sheet_for(released, tmp_path, "second.xlsx")
    fill(sheet, {"C-1": (I, "on reflection, stage missing", None)})
    assert import_(released, sheet).exit_code == 0
    assert len(read_decisions(released.decisions_path)) == 3
    res = run("gold", "export", "--study", released.path)
    assert res.exit_code == 0, res.output
    assert (released.gold_dir / "v2").is_dir()


def test_an_older_release_without_the_entries_digest_is_noted_not_a_crash(tmp_path):
    log = tmp_path / "decisions.jsonl"
    entries = [{"id": "D000001"}, {"id": "D000002"}]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert log_prefix_problem(log, entries, {"entries": 2, "sha256": "x"}, "v1") is None
    assert any(issubclass(w.category, GoldboardWarning) and "cannot be checked" in str(w.message) for w in seen)
    # a shorter log is refused even then: the release recorded how many entries it was built from
    line = log_prefix_problem(log, entries[:1], {"entries": 2}, "v1")
    assert line and "1 of them are missing" in line
    assert log_prefix_problem(log, [], {}, "v1") is None  # a release built from no decisions


@pytest.mark.parametrize("independent", [True, None])
def test_a_log_entry_naming_a_rater_as_an_independent_adjudicator_is_refused(released, tmp_path, independent):
    log = released.decisions_path
    lines = log.read_text(encoding="utf-8").splitlines()
    e = json.loads(lines[1])
    e["adjudicator"] = "ONC_A" if independent is None else "onc_a"  # another spelling is the same person
    if independent is None:
        e.pop("independent")  # absent reads as independent
    log.write_text(lines[0] + "\n" + json.dumps(e) + "\n", encoding="utf-8")
    line = error_line(run("gold", "export", "--study", released.path))
    assert f'{log}:2: decision D000002 (item "C-7") names adjudicator ' in line, line
    assert "a rater of this study, as independent" in line and "edited by hand" in line, line
    assert sorted(p.name for p in released.gold_dir.iterdir()) == ["v1"]
    # the same entry recorded as not independent is a rater's decision, as goldboard writes it:
    # only the release check speaks then (the entry differs from the one v1 was built from)
    e["independent"] = False
    log.write_text(lines[0] + "\n" + json.dumps(e) + "\n", encoding="utf-8")
    assert "changed or moved" in error_line(run("gold", "export", "--study", released.path))


def test_ratings_edited_after_their_pull_are_noted_by_agree_and_refused_by_gold_export(tmp_path):
    s = table_pulled(tmp_path)
    rec = json.loads((s / "rounds" / "1" / "pull.json").read_text(encoding="utf-8"))
    assert len(rec["ratings_sha256"]) == 64
    res = run("agree", "--study", s)
    assert res.exit_code == 0 and "changed since its pull" not in res.output, res.output
    ratings = s / "rounds" / "1" / "ratings.csv"
    text = ratings.read_text(encoding="utf-8")
    i = text.index("Unsupported")
    ratings.write_text(text[:i] + "Supported" + text[i + len("Unsupported") :], encoding="utf-8")
    res = run("agree", "--study", s)
    assert res.exit_code == 0, res.output
    assert f"{ratings}: changed since its pull (its SHA-256 is not the one pull.json recorded)" in res.output
    line = error_line(run("gold", "export", "--study", s))
    assert f"{ratings}: changed since its pull" in line and "--allow-edited-ratings" in line, line
    assert not (s / "gold").exists() or not any((s / "gold").iterdir())
    res = run("gold", "export", "--study", s, "--allow-edited-ratings")
    assert res.exit_code == 0, res.output
    assert "rounds/1/ratings.csv changed since its pull" in res.output
    man = json.loads((s / "gold" / "v1" / "manifest.json").read_text(encoding="utf-8"))
    assert man["sources"]["edited_ratings"] == [
        {"round": 1, "path": "rounds/1/ratings.csv", "sha256": man["sources"]["ratings"][0]["sha256"]}
    ]


def test_a_changed_rating_under_a_decision_is_refused_unless_the_adjudicated_round_flag(tmp_path):
    s = table_pulled(tmp_path)
    sheet = tmp_path / "review.xlsx"
    assert run("adjudicate", "sheet", "--study", s, "-o", sheet).exit_code == 0
    fill(sheet, {"C-1": ("Unsupported", "no evidence", None)})
    res = run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_lee")
    assert res.exit_code == 0, res.output
    t = tmp_path / "wide.csv"
    before = (s / "rounds" / "1" / "ratings.csv").read_bytes()
    t.write_text(t.read_text(encoding="utf-8").replace("C-1,Supported,", "C-1,Partially Supported,"), encoding="utf-8")
    base = ["pull", "--study", s, "--from-table", t, "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"]
    line = error_line(run(*base))
    assert "round 1 already has 1 adjudication decision" in line, line
    assert "changes 1 rating of 1 item in it (C-1 onc_a safety_label: 'Supported' -> 'Partially Supported')" in line
    assert "--add-to-adjudicated-round (it covers changed ratings too" in line, line
    assert (s / "rounds" / "1" / "ratings.csv").read_bytes() == before  # nothing written
    # a change to an item without a decision (and no release yet) is a plain re-pull
    t.write_text(t.read_text(encoding="utf-8").replace("C-4,Supported,", "C-4,Unsupported,"), encoding="utf-8")
    t2 = tmp_path / "c4.csv"
    t2.write_text(t.read_text(encoding="utf-8").replace("C-1,Partially Supported,", "C-1,Supported,"))
    t.replace(tmp_path / "keep.csv")
    t2.replace(t)
    res = run(*base)
    assert res.exit_code == 0, res.output
    (tmp_path / "keep.csv").replace(t)
    res = run(*base, "--add-to-adjudicated-round")
    assert res.exit_code == 0, res.output
    assert "that round 1's decisions or gold release were made on (C-1): decide them again" in res.output
    rec = json.loads((s / "rounds" / "1" / "pull.json").read_text(encoding="utf-8"))
    assert rec["changes"]["under_adjudication"] == ["C-1"]
    assert "Partially Supported" in (s / "rounds" / "1" / "ratings.csv").read_text(encoding="utf-8")
    # once gold is released from the round, a changed rating of any of its items is refused too
    res = run("gold", "export", "--study", s)
    assert res.exit_code == 0, res.output
    t.write_text(t.read_text(encoding="utf-8").replace("C-5,Supported,", "C-5,Unsupported,"), encoding="utf-8")
    line = error_line(run(*base))
    assert "and gold release v1" in line and "C-5 onc_a safety_label: 'Supported' -> 'Unsupported'" in line, line


def test_a_changed_rating_from_a_tool_export_under_a_gold_release_is_refused(tmp_path):
    data = Path(__file__).parent / "data" / "prodigy" / "mtb_review.jsonl"
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    f = tmp_path / "mtb_review.jsonl"
    f.write_bytes(data.read_bytes())
    raters = "mtb_review-ana=onc_a,mtb_review-ben=onc_b,mtb_review-cy=onc_c"
    base = ["pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", raters]
    assert run(*base).exit_code == 0
    res = run("gold", "export", "--study", s)
    assert res.exit_code == 0, res.output
    lines = f.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["accept"] = ["Unsupported"]  # onc_a's MTB-0001, which gold v1 was built from
    f.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    before = (s / "rounds" / "1" / "ratings.csv").read_bytes()
    line = error_line(run(*base))
    assert "round 1 already has gold release v1" in line, line
    assert (
        "this file changes 1 rating of 1 item in it (MTB-0001 onc_a safety_label: 'Supported' -> 'Unsupported')" in line
    )
    assert (s / "rounds" / "1" / "ratings.csv").read_bytes() == before
    res = run(*base, "--add-to-adjudicated-round")
    assert res.exit_code == 0, res.output
    rec = json.loads((s / "rounds" / "1" / "pull.json").read_text(encoding="utf-8"))
    assert rec["changes"]["under_adjudication"] == ["MTB-0001"]


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


@pytest.mark.parametrize("how", ["value", "crlf"])
def test_every_reader_says_a_hand_edited_ratings_file(tmp_path, how):
    s = table_pulled(tmp_path)
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


def test_a_refused_re_pull_after_a_hand_edit_names_the_edit_not_the_table(tmp_path):
    s = table_pulled(tmp_path)
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
