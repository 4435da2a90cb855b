"""Ctrl-C on `goldboard judge run` keeps every answer received: SIGINT to a real subprocess halfway
through a run against a slow OpenAI-compatible stub on loopback; the rerun asks only the items
with no answer, and a second full run sends no request."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from conftest import run_cli as run
from test_judge_run import OPENMTB, WIDE, Stub, give_texts


@pytest.fixture()
def slow_stub():
    s = Stub()
    answer = s.answer

    def slow(item, body):
        time.sleep(0.25)
        return answer(item, body)

    s.answer = slow
    yield s
    s.stop()


def _items(stub, start=0) -> list[str]:
    return [c["messages"][0]["content"].split("Case (", 1)[1].split(")", 1)[0] for c in stub.calls[start:]]


def test_sigint_halfway_keeps_every_answer_and_the_rerun_asks_only_the_rest(tmp_path, slow_stub):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    give_texts(s)
    responses = s / "judges" / "llm" / "responses.jsonl"
    args = ["judge", "run", "--study", str(s), "--judge", "llm", "--model", "m", "--base-url", slow_stub.url,
            "--concurrency", "2", "--no-progress"]  # fmt: skip
    code = "import sys; from goldboard.cli import main; sys.argv[0] = 'goldboard'; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if responses.exists() and len(responses.read_text().splitlines()) >= 10:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Interrupted." in err and "Traceback" not in out + err, (out, err)
    kept = [json.loads(line) for line in responses.read_text().splitlines()]  # every line whole
    asked = _items(slow_stub)
    assert 10 <= len(kept) < 50, "the run was not stopped halfway"
    # every answer the server gave was kept (the requests in flight at Ctrl-C finished and were written)
    assert sorted(r["item_id"] for r in kept) == sorted(asked)
    before = len(slow_stub.calls)
    res = run(*args)
    again = _items(slow_stub, before)
    assert sorted(again) == sorted({u for u in _all_items(s)} - {r["item_id"] for r in kept})
    assert f"{len(kept)} cached, asking {50 - len(kept)}" in res.output and "50 of 50 items labelled" in res.output
    n = len(slow_stub.calls)
    res = run(*args)
    assert len(slow_stub.calls) == n and "0 requests sent" in res.output and "50 cached, asking 0" in res.output


def _all_items(s) -> list[str]:
    return [json.loads(line)["item_id"] for line in (s / "units.jsonl").read_text().splitlines()]
