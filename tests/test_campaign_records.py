"""Issue 23, the study's records: silent acceptances an independent misuse campaign found
(``/tmp/campaign3``: MD4, MD8, MD12, D02).  Each test failed on the code before its fix
(checked on the commit before).

1. MD4: the append-only decisions log emptied, deleted or cut short after a gold release:
   every reader that builds gold refuses, naming the release and the missing entries;
2. MD8: a round's ratings.csv edited by hand after its pull: agree warns, gold export refuses
   unless --allow-edited-ratings, which the manifest records;
3. MD12: a log entry naming a study rater as an independent adjudicator: gold export refuses,
   naming the line;
4. D02: a re-pull (table or tool export) that changes a rating under a decision or a gold release:
   refused unless --add-to-adjudicated-round, then named and recorded in pull.json.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_adjudication_roundtrip import fill, make_study  # noqa: E402
from test_campaign_sheet import import_, sheet_for  # noqa: E402
from test_flags import I, U  # noqa: E402
from test_misuse_inputs import error_line, run  # noqa: E402

from goldboard.adjudicate.decisions import log_prefix_problem, read_decisions  # noqa: E402
from goldboard.errors import GoldboardWarning  # noqa: E402
from goldboard.study import Study  # noqa: E402


@pytest.fixture()
def released(tmp_path):
    """The hand-counted MTB study with two decisions (D000001, D000002) and gold release v1."""
    study = make_study(tmp_path)
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    assert import_(study, sheet).exit_code == 0
    res = run("gold", "export", "--study", study.path)
    assert res.exit_code == 0, res.output
    return study


def _readers(study, tmp_path):
    return (
        ("gold", "export", "--study", study.path, "--force"),
        ("report", "--study", study.path, "--format", "markdown", "-o", tmp_path / "r.md", "--no-supplement"),
        ("adjudicate", "sheet", "--study", study.path, "-o", tmp_path / "again.xlsx"),
    )


# --------------------------------------------------------------------------- 1. MD4


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


# --------------------------------------------------------------------------- 3. MD12


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


# --------------------------------------------------------------------------- 2. MD8


def _table_pulled(tmp_path) -> Path:
    s = tmp_path / "t"
    assert run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b").exit_code == 0
    t = tmp_path / "wide.csv"
    rows = ["C-1,Supported,Unsupported", "C-2,Supported,Supported", "C-3,Unsupported,Unsupported"]
    rows += [f"C-{n},Supported,Supported" for n in range(4, 11)]
    t.write_text("case_id,a,b\n" + "\n".join(rows) + "\n", encoding="utf-8")
    res = run("pull", "--study", s, "--from-table", t, "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b")
    assert res.exit_code == 0, res.output
    return s


def test_ratings_edited_after_their_pull_are_noted_by_agree_and_refused_by_gold_export(tmp_path):
    s = _table_pulled(tmp_path)
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


# --------------------------------------------------------------------------- 4. D02


def test_a_changed_rating_under_a_decision_is_refused_unless_the_adjudicated_round_flag(tmp_path):
    s = _table_pulled(tmp_path)
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
