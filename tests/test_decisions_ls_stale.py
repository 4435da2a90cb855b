"""A stale Label Studio adjudication answer never comes back (issue 32).

A chair decides in Label Studio; later a review sheet decides otherwise.  Label Studio keeps the
chair's old answer selected, and clicking Update re-submits it with a new update time: before
this fix the pull logged it as a change and the old decision was back in force.  It is now a
conflict, as a review-sheet row written before a newer decision; ``overrule_newer`` records it
deliberately.  A new value chosen in Label Studio after the sheet is a new decision.
"""

from __future__ import annotations

import pytest

from goldboard.adjudicate.decisions import (
    DecisionConflicts,
    Proposed,
    latest_decisions,
    read_decisions,
    record_decisions,
)


def ls(decision: str, aid: int, updated: str, reason: str = "chair's view") -> Proposed:
    return Proposed(
        item_id="C-1",
        field="safety_label",
        decision=decision,
        reason=reason,
        adjudicator="dr_chair",
        where=f"project 7 task 3 annotation {aid} (item C-1, safety_label)",
        origin=f"label_studio:7:{aid}:{updated}",
        extra={"ls_project_id": 7, "ls_task_id": 3, "ls_annotation_id": aid},
    )


@pytest.fixture()
def log(tmp_path):
    path = tmp_path / "decisions.jsonl"
    record_decisions(path, [ls("Supported", 11, "2026-12-02T10:00:00.000000Z")], source="label_studio",
                     now="2026-12-02T10:05:00+00:00")  # fmt: skip
    sheet = Proposed(item_id="C-1", field="safety_label", decision="Unsafe", reason="the meeting: unsafe",
                     adjudicator="dr_x", where="review.xlsx!G2")  # fmt: skip
    record_decisions(path, [sheet], source="sheet", sheet="review.xlsx", now="2026-12-02T11:00:00+00:00")
    return path


def in_force(path):
    return latest_decisions(read_decisions(path))[("C-1", "safety_label")]["decision"]


def test_old_answer_pulled_again_unchanged(log):
    res = record_decisions(log, [ls("Supported", 11, "2026-12-02T10:00:00.000000Z")], source="label_studio")
    assert res.appended == [] and in_force(log) == "Unsafe"


def test_old_answer_resubmitted_is_a_conflict(log):
    """Update clicked on the old answer: a new update time, the same value."""
    before = log.read_bytes()
    with pytest.raises(DecisionConflicts) as exc:
        record_decisions(log, [ls("Supported", 11, "2026-12-02T12:00:00.000000Z")], source="label_studio")
    line = exc.value.errors[0]
    assert "annotation 11" in line and "older than the decision in force" in line and '"Unsafe"' in line
    assert "review.xlsx" in line and "dr_x" in line
    assert "overrule_newer" in exc.value.message and "nothing pulled" in exc.value.message
    assert log.read_bytes() == before and in_force(log) == "Unsafe"


def test_old_answer_put_back_with_overrule(log):
    res = record_decisions(
        log, [ls("Supported", 11, "2026-12-02T12:00:00.000000Z")], source="label_studio", overrule_newer=True
    )
    assert len(res.appended) == 1 and res.appended[0]["overrules_newer"] == "D000002"
    assert in_force(log) == "Supported"


def test_new_value_after_the_sheet_is_a_new_decision(log):
    res = record_decisions(
        log, [ls("Possibly unsafe", 11, "2026-12-02T12:00:00.000000Z", "seen the sheet; caveat")], source="label_studio"
    )
    assert len(res.appended) == 1 and in_force(log) == "Possibly unsafe"


def test_answer_saved_before_the_sheet_decision_is_a_conflict(log):
    """Another annotation, never pulled, saved before the sheet's decision was logged."""
    with pytest.raises(DecisionConflicts):
        record_decisions(log, [ls("Supported", 12, "2026-12-02T10:30:00.000000Z")], source="label_studio")
    res = record_decisions(log, [ls("Supported", 12, "2026-12-02T11:30:00.000000Z")], source="label_studio")
    assert len(res.appended) == 1 and in_force(log) == "Supported"  # saved after it: a decision made since
