"""A judge run whose every answer is an abstention (a small model saying "cannot judge" to every
item, as Gemma 3 270M did on the demo's first three items) records no label; the run says so and
where its answers are, instead of leaving the user to find that the report has no trace of it."""

from __future__ import annotations

import json

from conftest import error_line, invoke_cli
from conftest import run_cli as run
from test_judge_run import Stub, openmtb_study


def test_an_all_abstaining_run_says_no_label_was_recorded(tmp_path):
    s = openmtb_study(tmp_path)
    stub = Stub()
    stub.answer = lambda item, body: (200, json.dumps({"rationale": "r", "safety_label": "cannot judge"}))
    try:
        out = run("judge", "run", "--study", s, "--judge", "tiny", "--model", "m", "--base-url", stub.url,
                  "--limit", "3", "--no-progress").stdout  # fmt: skip
    finally:
        stub.stop()
    assert "0 of 3 items labelled, 3 abstained (cannot judge)" in out
    assert "no label recorded" in out and "judges/tiny/responses.jsonl" in out
    assert len((s / "judges" / "tiny" / "responses.jsonl").read_text().splitlines()) == 3
    line = error_line(invoke_cli("judge", "--study", s, "--judge", "tiny", "--expertise", "expert", code=None))
    assert "no judge labels yet" in line  # one located line, no traceback
