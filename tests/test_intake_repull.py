"""Issue 32 (first bullet): a Label Studio re-pull that changes or removes a rating of an item under a
decision in force (or a gold release) is refused as a table re-pull is ("... would change what was
adjudicated"), exit 1, nothing written; ``--add-to-adjudicated-round`` accepts it, keeps each replaced
row in ``rounds/N/superseded.csv`` and lists it.  The rule is the round intake's
(:func:`goldboard.workflows.intake.take_into_round`), so a hand-downloaded export and a server pull
obey it alike; before, both replaced the ratings silently (exit 0)."""

from __future__ import annotations

import csv
import hashlib
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from builders import MAP, ONE_PROJECT_USERS, export_tasks, one_project_study, ratings  # noqa: E402
from builders import OneProjectServer as _OneProjectServer  # noqa: E402
from conftest import error_line, invoke_cli  # noqa: E402

from goldboard.study import Study  # noqa: E402


def snapshot(study: Path) -> dict[str, str]:
    """Every file of the study, by its SHA-256: what "nothing changed" compares."""
    return {
        str(p.relative_to(study)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(study.rglob("*"))
        if p.is_file()
    }


def decide(study: Path, item_id: str, value: str = "Supported") -> None:
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    record_decisions(
        Study.open(study).decisions_path, [Proposed(item_id, "safety_label", value, "", "dr_chair")], source="sheet"
    )


def _edited(tasks: list[dict]) -> list[dict]:
    """onc_a's answer on C-1 changed after the meeting, onc_b's answer on C-2 deleted."""
    tasks[0]["annotations"][0]["result"][0]["value"]["choices"] = ["Unsupported"]
    tasks[0]["annotations"][0]["updated_at"] = "2026-02-01T10:00:00Z"
    del tasks[1]["annotations"][1]
    return tasks


@pytest.fixture
def adjudicated(tmp_path):
    """A study whose round 1 (pulled from an export: C-1, C-2 by onc_a and onc_b) has a decision on C-1."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    f = tmp_path / "export.json"
    f.write_text(json.dumps(export_tasks()))
    invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    decide(s, "C-1")
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(_edited(export_tasks())))
    return s, edited


def test_an_export_re_pull_changing_adjudicated_ratings_is_refused(adjudicated):
    s, edited = adjudicated
    before = snapshot(s)
    res = invoke_cli("pull", "--study", s, "--from-export", edited, *MAP)
    assert res.exit_code == 1, res.output
    line = error_line(res)
    assert line.startswith("Error: round 1 already has 1 adjudication decision on 1 of its 2 items"), line
    assert "this pull changes 3 ratings of 2 items in it" in line, line
    assert "C-1 onc_a safety_label: 'Supported' -> 'Unsupported'" in line, line
    assert "C-2 onc_b safety_label: 'Unsupported' -> no rating (removed or held out)" in line, line
    assert "would change what was adjudicated" in line and "--add-to-adjudicated-round" in line, line
    assert snapshot(s) == before  # nothing written, study.toml included


def test_an_accepted_change_keeps_and_lists_each_replaced_rating(adjudicated):
    s, edited = adjudicated
    res = invoke_cli("pull", "--study", s, "--from-export", edited, *MAP, "--add-to-adjudicated-round", code=0)
    assert "kept 3 replaced rating(s) in" in res.output, res.output
    assert "C-1 onc_a safety_label: 'Supported' -> 'Unsupported'" in res.output, res.output
    assert "C-2 onc_b safety_label: 'Unsupported' -> removed" in res.output, res.output
    now = {(r["item_id"], r["rater"]): r["value"] for r in ratings(s) if r["field"] == "safety_label"}
    assert now[("C-1", "onc_a")] == "Unsupported" and ("C-2", "onc_b") not in now
    with open(s / "rounds/1/superseded.csv", newline="") as fh:
        kept = list(csv.DictReader(fh))
    assert [(r["item_id"], r["rater"], r["field"], r["value"], r["new_value"]) for r in kept] == [
        ("C-1", "onc_a", "safety_label", "Supported", "Unsupported"),
        ("C-2", "onc_b", "safety_label", "Unsupported", ""),
        ("C-2", "onc_b", "missing_info", "", ""),
    ]
    assert all(r["replaced_by"] == "label-studio" and r["annotation_id"] for r in kept)
    summary = json.loads((s / "rounds/1/pull.json").read_text())
    assert summary["changes"]["under_adjudication"] == ["C-1", "C-2"] and summary["superseded_kept"] == 3
    # the same export again changes nothing more: superseded.csv keeps what it had
    invoke_cli("pull", "--study", s, "--from-export", edited, *MAP, code=0)
    with open(s / "rounds/1/superseded.csv", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 3


def test_a_re_pull_of_an_item_nobody_decided_is_still_taken(tmp_path):
    """No decision on the changed items and no release: a re-pull replaces as before (exit 0, no superseded.csv)."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    f = tmp_path / "export.json"
    f.write_text(json.dumps(export_tasks(3)))
    invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    decide(s, "C-3")
    f.write_text(json.dumps(_edited(export_tasks(3))))
    invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    assert not (s / "rounds/1/superseded.csv").exists()


class _EmptiedServer(_OneProjectServer):
    """The same project with every annotation gone (what an older build's re-pull read as 0 ratings)."""

    def export(self, pid, each=None):
        tasks = [{**t, "annotations": []} for t in export_tasks()]
        return [each(t) for t in tasks] if each else tasks


def test_a_server_re_pull_replacing_an_adjudicated_round_with_nothing_is_refused(tmp_path):
    from goldboard.errors import ParamError
    from goldboard.workflows.intake import pull

    study = one_project_study(tmp_path)
    s, users = study.path, ONE_PROJECT_USERS
    pull(study, 1, client=_OneProjectServer(), item_key="case_id", rater_map=users, progress=False)
    assert len(ratings(s)) == 8
    decide(s, "C-2")
    before = snapshot(s)
    with pytest.raises(ParamError) as exc:
        pull(Study.open(s), 1, client=_EmptiedServer(), item_key="case_id", rater_map=users, progress=False)
    assert "round 1 already has 1 adjudication decision on 1 of its 2 items" in str(exc.value), exc.value
    assert "would change what was adjudicated" in str(exc.value)
    assert snapshot(s) == before


def test_an_export_re_pull_under_a_gold_release_is_refused(tmp_path):
    """No decision, but gold v1 was made from the round (every item unanimous): the edited export is refused."""
    s = tmp_path / "s"
    Study.init(s, schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    tasks = export_tasks()
    for t in tasks:
        for a in t["annotations"]:
            a["result"][0]["value"]["choices"] = ["Supported"]
    f = tmp_path / "export.json"
    f.write_text(json.dumps(tasks))
    invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=0)
    invoke_cli("gold", "export", "--study", s, code=0)
    f.write_text(json.dumps(_edited(tasks)))
    before = snapshot(s)
    line = error_line(invoke_cli("pull", "--study", s, "--from-export", f, *MAP, code=1))
    assert line.startswith("Error: round 1 already has gold release v1; this pull changes"), line
    assert "would change what was adjudicated" in line, line
    assert snapshot(s) == before
