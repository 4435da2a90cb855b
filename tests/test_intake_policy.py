"""One round intake, one policy (issue 31): a ratings table, another tool's export (doccano) and a
Label Studio export are three readers of one :class:`goldboard.workflows.intake.RoundIntake`, so
the rules of putting a read into a round are the same words for each -- the refusal of a re-pull
that changes what was adjudicated, the reason a rating another source gave is held out, the
refusal of a read the round would take nothing from -- and where the kinds differ, they differ as
:data:`goldboard.workflows.intake.RULES` says (a Label Studio rating replaces a file's)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from conftest import error_line, invoke_cli

from goldboard.study import Study
from goldboard.workflows.intake import RULES

ITEMS = ("C-1", "C-2")


def _table(tmp: Path, values: dict[str, str]) -> list[str]:
    f = tmp / "sheet.csv"
    rows = [{"case_id": it, "rater": "onc_a", "safety_label": v} for it, v in values.items()]
    pd.DataFrame(rows).to_csv(f, index=False)
    return ["--from-table", str(f), "--item-col", "case_id"]


def _doccano(tmp: Path, values: dict[str, str]) -> list[str]:
    f = tmp / "onc_a.jsonl"  # one member's file: the annotator is the file's name
    lines = [
        {"id": k, "text": "t", "item_id": it, "case_id": it, "label": [v]} for k, (it, v) in enumerate(values.items())
    ]
    f.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return ["--from-file", f"doccano={f}"]


def _export(tmp: Path, values: dict[str, str]) -> list[str]:
    f = tmp / "export.json"
    tasks = []
    for k, (it, v) in enumerate(values.items()):
        result = [{"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": [v]}}]
        result.append({"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["x"]}})
        at = "2026-01-01T10:00:00Z" if v == "Supported" else "2026-02-01T10:00:00Z"
        ann = {"id": 100 + k, "completed_by": 1, "was_cancelled": False, "created_at": at, "updated_at": at}
        tasks.append({"id": 10 + k, "data": {"case_id": it}, "annotations": [{**ann, "result": result}]})
    f.write_text(json.dumps(tasks), encoding="utf-8")
    return ["--from-export", str(f), "--item-key", "case_id", "--rater", "1=onc_a"]


SOURCES = {"table": _table, "file": _doccano, "pull": _export}


def study(tmp: Path) -> Path:
    s = tmp / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    return s


def decide(study: Path, item_id: str) -> None:
    from goldboard.adjudicate.decisions import Proposed, record_decisions

    record_decisions(
        Study.open(study).decisions_path,
        [Proposed(item_id, "safety_label", "Supported", "", "dr_chair")],
        source="sheet",
    )


def _refusal(tmp: Path, kind: str) -> str:
    s = study(tmp)
    invoke_cli("pull", "--study", s, *SOURCES[kind](tmp, dict.fromkeys(ITEMS, "Supported")), code=0)
    decide(s, "C-1")
    res = invoke_cli("pull", "--study", s, *SOURCES[kind](tmp, {"C-1": "Unsupported", "C-2": "Supported"}))
    assert res.exit_code == 1, res.output
    return error_line(res)


def test_the_adjudicated_round_refusal_is_the_same_words_for_every_source(tmp_path):
    got = {}
    for kind in SOURCES:
        (tmp_path / kind).mkdir()
        line = _refusal(tmp_path / kind, kind)
        assert "C-1 onc_a safety_label: 'Supported' -> 'Unsupported'" in line, line
        got[kind] = line.replace(f"this {kind} ", "this SOURCE ")
    assert got["table"].startswith(
        "Error: round 1 already has 1 adjudication decision on 1 of its 2 items (decisions.jsonl); "
    ), got
    assert "this SOURCE changes 1 rating of 1 item in it" in got["table"], got
    assert got["table"] == got["file"] == got["pull"], got


@pytest.mark.parametrize("kind", SOURCES)
def test_an_accepted_change_keeps_the_replaced_rating_whatever_the_source(tmp_path, kind):
    s = study(tmp_path)
    invoke_cli("pull", "--study", s, *SOURCES[kind](tmp_path, dict.fromkeys(ITEMS, "Supported")), code=0)
    decide(s, "C-1")
    args = SOURCES[kind](tmp_path, {"C-1": "Unsupported", "C-2": "Supported"})
    res = invoke_cli("pull", "--study", s, *args, "--add-to-adjudicated-round", code=0)
    assert "C-1 onc_a safety_label: 'Supported' -> 'Unsupported'" in res.output, res.output
    kept = pd.read_csv(s / "rounds/1/superseded.csv", dtype=str, keep_default_na=False)
    assert kept[["item_id", "rater", "value", "new_value"]].values.tolist() == [
        ["C-1", "onc_a", "Supported", "Unsupported"]
    ]
    summary = json.loads((s / "rounds/1/pull.json").read_text(encoding="utf-8"))
    assert summary["changes"]["under_adjudication"] == ["C-1"], summary["changes"]


@pytest.mark.parametrize("kind", SOURCES)
def test_an_item_x_rater_another_source_gave_is_decided_by_the_one_clash_rule(tmp_path, kind):
    """The round already holds onc_a's C-1 from another table: a file source's rating of it is held
    out with the same reason whatever the file; a Label Studio rating replaces it, said in a warning."""
    s = study(tmp_path)
    other = tmp_path / "other.csv"
    other.write_text("case_id,rater,safety_label\nC-1,onc_a,Unsupported\n", encoding="utf-8")
    invoke_cli("pull", "--study", s, "--from-table", other, "--item-col", "case_id", code=0)
    (tmp_path / "src").mkdir()
    res = invoke_cli("pull", "--study", s, *SOURCES[kind](tmp_path / "src", dict.fromkeys(ITEMS, "Supported")), code=0)
    rows = pd.read_csv(s / "rounds/1/ratings.csv", dtype=str, keep_default_na=False)
    c1 = rows[(rows["item_id"] == "C-1") & (rows["field"] == "safety_label")]["value"].tolist()
    invalid = pd.read_csv(s / "rounds/1/invalid.csv", dtype=str, keep_default_na=False)
    if RULES[kind].clash == "held":
        assert c1 == ["Unsupported"]  # the other table's, never overwritten
        assert invalid["reason"].tolist() == ["onc_a already rated 'C-1' in round 1 (other.csv)"], invalid
    else:
        assert c1 == ["Supported"]
        assert "1 rating rows from ratings tables are replaced by Label Studio ratings of the same item" in res.output


@pytest.mark.parametrize("kind", ["table", "file"])
def test_a_file_source_the_round_takes_nothing_from_is_refused_in_the_same_words(tmp_path, kind):
    s = study(tmp_path)
    other = tmp_path / "other.csv"
    other.write_text("case_id,rater,safety_label\nC-1,onc_a,Unsupported\nC-2,onc_a,Supported\n", encoding="utf-8")
    invoke_cli("pull", "--study", s, "--from-table", other, "--item-col", "case_id", code=0)
    (tmp_path / "src").mkdir()
    res = invoke_cli("pull", "--study", s, *SOURCES[kind](tmp_path / "src", dict.fromkeys(ITEMS, "Supported")))
    assert res.exit_code == 1, res.output
    line = error_line(res)
    assert ": nothing pulled: all 2 of its ratings are already in round 1 from 'other.csv'; " in line, line
    assert f"To replace the ratings from 'other.csv' with this {kind}'s, pull it as that source" in line, line


def _both(tmp: Path, kind: str, raters: tuple[str, ...]) -> list[str]:
    """``kind``'s read of C-1 and C-2 by ``raters`` (each rater's own file for a doccano zip and Label Studio exports)."""
    if kind == "table":
        f = tmp / "sheet.csv"
        pd.DataFrame([{"case_id": it, "rater": r, "safety_label": "Supported"} for r in raters for it in ITEMS]).to_csv(
            f, index=False
        )
        return ["--from-table", str(f), "--item-col", "case_id"]
    if kind == "file":
        import zipfile

        f = tmp / "team.zip"  # one <username>.jsonl per member
        with zipfile.ZipFile(f, "w") as z:
            for r in raters:
                lines = [{"id": k, "text": "t", "item_id": it, "label": ["Supported"]} for k, it in enumerate(ITEMS)]
                z.writestr(f"{r}.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
        return ["--from-file", f"doccano={f}"]
    args = []
    for r, pid in (("onc_a", 11), ("onc_b", 12)):
        if r not in raters:
            continue
        f = tmp / f"{r}.json"
        result = [
            {"from_name": "safety_label", "to_name": "output", "type": "choices", "value": {"choices": ["Supported"]}},
            {"from_name": "rationale", "to_name": "output", "type": "textarea", "value": {"text": ["x"]}},
        ]
        ann = {"completed_by": 1, "was_cancelled": False, "created_at": "2026-01-01T10:00:00Z", "result": result}
        tasks = [
            {"id": pid * 10 + k, "project": pid, "data": {"item_id": it}, "annotations": [{"id": pid * 10 + k, **ann}]}
            for k, it in enumerate(ITEMS)
        ]
        f.write_text(json.dumps(tasks), encoding="utf-8")
        args += ["--from-export", f"{r}={f}"]
    return args


@pytest.mark.parametrize("kind", SOURCES)
def test_a_partial_re_pull_keeps_or_replaces_an_unread_raters_rows_as_the_one_rule_says(tmp_path, kind):
    """A re-pull of the same source that no longer holds onc_b: onc_b's earlier rows stay when
    :data:`RULES` says a re-pull keeps the raters it did not read (a blinded round's exports), and
    go with the source's other rows when it says the source's rows are replaced (a file)."""
    s = tmp_path / "s"
    st = Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    if kind == "pull":  # a blinded round pushed to two projects
        st.get_or_add_round(1).projects = {"onc_a": 11, "onc_b": 12}
        st.save()
    invoke_cli("pull", "--study", s, *_both(tmp_path, kind, ("onc_a", "onc_b")), code=0)
    invoke_cli("pull", "--study", s, *_both(tmp_path, kind, ("onc_a",)), code=0)
    rows = pd.read_csv(s / "rounds/1/ratings.csv", dtype=str, keep_default_na=False)
    onc_b = rows[(rows["rater"] == "onc_b") & (rows["field"] == "safety_label")]["item_id"].tolist()
    assert onc_b == (list(ITEMS) if RULES[kind].keeps_unread_raters else []), rows
    assert sorted(rows[rows["rater"] == "onc_a"]["item_id"].unique()) == list(ITEMS)


def test_every_file_source_says_what_its_re_pull_removed(tmp_path):
    """A re-pull of the same file that no longer holds onc_b removes onc_b's rows (the file is the
    source): the pull says so, rater by rater, in its output and pull.json, as a table pull does."""
    for kind in ("table", "file"):
        s = tmp_path / kind / "s"
        Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
        invoke_cli("pull", "--study", s, *_both(tmp_path / kind, kind, ("onc_a", "onc_b")), code=0)
        res = invoke_cli("pull", "--study", s, *_both(tmp_path / kind, kind, ("onc_a",)), code=0)
        assert "(0 added, 2 removed, 0 changed)" in res.output, (kind, res.output)
        assert "C-1 onc_b safety_label: removed (was 'Supported')" in res.output, (kind, res.output)
        summary = json.loads((s / "rounds/1/pull.json").read_text(encoding="utf-8"))
        assert summary["changes"]["removed"] == 2, (kind, summary)


def test_a_label_studio_re_pull_keeps_the_other_sources_held_out_rows(tmp_path):
    """Nothing a rater entered is lost: a table's held-out row (onc_a's second rating of C-1) stays in
    invalid.csv when the round is pulled again from Label Studio, as it does for every other source."""
    s = tmp_path / "s"
    st = Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    st.get_or_add_round(1).projects = {"onc_a": 11, "onc_b": 12}
    st.save()
    units = [
        {"item_id": it, "case_id": it, "output_id": "", "model": "", "rounds": [1], "source": "push"} for it in ITEMS
    ]
    st.units_path.write_text("".join(json.dumps(u) + "\n" for u in units), encoding="utf-8")
    (tmp_path / "ls").mkdir()
    export = _both(tmp_path / "ls", "pull", ("onc_a",))
    invoke_cli("pull", "--study", s, *export, code=0)
    sheet = tmp_path / "onc_c.csv"
    sheet.write_text("item_id,rater,safety_label\nC-1,onc_a,Unsupported\nC-1,onc_b,Supported\n", encoding="utf-8")
    invoke_cli("pull", "--study", s, "--from-table", sheet, code=0)
    before = (s / "rounds/1/invalid.csv").read_bytes()
    assert b"onc_a already rated 'C-1' in round 1" in before, before
    invoke_cli("pull", "--study", s, *export, code=0)
    assert (s / "rounds/1/invalid.csv").read_bytes() == before  # the same rows, in the same order
