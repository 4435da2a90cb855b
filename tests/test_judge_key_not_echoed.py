"""An endpoint that refuses the key and echoes it in its error message (some servers print the key
they were given in a 401) does not make goldboard print it: the refusal is shown with the key taken
out, and nothing the run writes holds it."""

from __future__ import annotations

import json

from conftest import invoke_cli
from test_judge_run import KEY, Stub, openmtb_study


def test_a_401_that_echoes_the_key_is_shown_without_it(tmp_path):
    s = openmtb_study(tmp_path)
    stub = Stub()
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}. You can find your key at ..."}})
    stub.answer = lambda item, b: (401, body)
    try:
        res = invoke_cli("judge", "run", "--study", s, "--judge", "llm", "--model", "m", "--base-url", stub.url,
                         "--limit", "2", "--no-progress", env={"OPENAI_API_KEY": KEY})  # fmt: skip
    finally:
        stub.stop()
    assert stub.headers and all(h == f"Bearer {KEY}" for h in stub.headers)  # the key was sent
    assert "HTTP 401" in res.output and "Incorrect API key provided: [the key]" in res.output, res.output
    assert KEY not in res.output and KEY[:12] not in res.output
    for p in s.rglob("*"):
        if p.is_file():
            assert KEY.encode() not in p.read_bytes(), p
