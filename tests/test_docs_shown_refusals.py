"""docs/intake.md's re-pull refusal and its accepted form show what the commands print today.

The page's two ``text`` blocks that run ``goldboard pull --study S --from-export edited.json ...``
are replayed on the study they describe (round 1 pulled from an export, C-1 decided, then onc_a's
C-1 changed and onc_b's C-2 deleted): the refusal is shown wrapped at the page's width, so it is
compared word for word; in the accepted pull each shown line is a printed line, in order (``...``
stands for lines left out).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from builders import export_tasks
from conftest import invoke_cli
from test_intake_repull import _edited, decide

from goldboard.study import Study

PAGE = Path(__file__).resolve().parents[1] / "docs" / "intake.md"
COMMAND = "$ goldboard pull --study S --from-export edited.json"


def shown_blocks() -> list[tuple[list[str], list[str]]]:
    """``(argv, shown lines)`` of each of the page's blocks that runs the command."""
    out = []
    for body in re.findall(r"^```text\n(.*?)^```$", PAGE.read_text(encoding="utf-8"), flags=re.M | re.S):
        lines = body.splitlines()
        if lines and lines[0].startswith(COMMAND):
            out.append((shlex.split(lines[0][2:])[1:], lines[1:]))
    return out


def in_order(shown: list[str], printed: list[str]) -> bool:
    """Each shown line (``...`` left aside) is a printed line, in the printed order."""
    it = iter(printed)
    return all(any(line == p for p in it) for line in shown if line != "...")


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Study.init(Path("S"), schema="mtb_unsafe", raters=["onc_a", "onc_b"])
    Path("export.json").write_text(json.dumps(export_tasks()), encoding="utf-8")
    first = ["--from-export", "export.json", "--item-key", "case_id", "--rater", "1=onc_a,2=onc_b"]
    invoke_cli("pull", "--study", "S", *first, code=0)
    decide(Path("S"), "C-1")
    Path("edited.json").write_text(json.dumps(_edited(export_tasks())), encoding="utf-8")


def test_the_page_shows_the_refusal_and_the_accepted_pull():
    blocks = shown_blocks()
    assert len(blocks) == 2 and "--add-to-adjudicated-round" in blocks[1][0]


def test_the_refusal_is_what_pull_prints(study):
    argv, shown = shown_blocks()[0]
    res = invoke_cli(*argv)
    assert res.exit_code == 1, res.output
    assert " ".join(shown).split() == res.output.split(), res.output


def test_the_accepted_pull_lists_what_pull_prints(study):
    argv, shown = shown_blocks()[1]
    res = invoke_cli(*argv, code=0)
    assert in_order(shown, res.output.splitlines()), res.output


def test_a_changed_line_is_caught():
    printed = ["a", "  warning: x", "  warning: y", "b"]
    assert in_order(["...", "  warning: x", "  warning: y", "..."], printed)
    assert not in_order(["  warning: y", "  warning: x"], printed)
    assert not in_order(["  warning: z"], printed)
