"""`goldboard judge run` against a stub OpenAI-compatible server on loopback (recorded responses):
labels recorded as a judge's, provenance, resumability, abstention apart from "Insufficient
Information", off-schema answers held out, 429/timeout retries, the key never on disk or output."""

from __future__ import annotations

import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import invoke_cli
from conftest import run_cli as run

from goldboard.cases.examples import example_path
from goldboard.workflows.judge_run import CANNOT_JUDGE, answer_schema, parse_answer

OPENMTB = example_path("openmtb")
WIDE = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
WIDE += ["--field", "safety_label"]
KEY = "sk-test-SECRET-0123456789abcdef"


class Stub:
    """A chat endpoint answering from ``self.answer(item_id, body) -> (status, text)``."""

    def __init__(self):
        self.calls: list[dict] = []
        self.headers: list[str] = []
        self.answer = lambda item, body: (200, json.dumps({"rationale": "ok", "safety_label": "Supported"}))
        stub = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                self._send(200, json.dumps({"data": [{"id": "stub-model-1"}]}))

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.calls.append(body)
                stub.headers.append(self.headers.get("Authorization", ""))
                prompt = body["messages"][0]["content"]
                item = prompt.split("Case (", 1)[1].split(")", 1)[0]
                status, text = stub.answer(item, body)
                if status != 200:
                    return self._send(status, text)
                resp = {"model": "stub-model-1", "choices": [{"message": {"content": text}}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5}}  # fmt: skip
                self._send(200, json.dumps(resp))

            def _send(self, status, text):
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.server.server_port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Stop serving and close the listening socket (no ResourceWarning left for a later test)."""
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def stub():
    s = Stub()
    yield s
    s.stop()


def openmtb_study(tmp_path: Path, texts: bool = True) -> Path:
    """The OpenMTB example as a two-oncologist study in ``tmp_path/openmtb`` (with case texts: what
    a judge is shown)."""
    s = tmp_path / "openmtb"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    if texts:
        give_texts(s)
    return s


@pytest.fixture()
def study(tmp_path):
    return openmtb_study(tmp_path)


def give_texts(s: Path) -> None:
    """The table pull records no case text; give each unit one (as a push would)."""
    p = s / "units.jsonl"
    recs = [json.loads(line) for line in p.read_text().splitlines()]
    for r in recs:
        r["case_text"] = f"Patient with NSCLC; proposed therapy for case {r['item_id']}."
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))


def judge_run(study, stub, *extra, code=0, env=None):
    args = ["judge", "run", "--study", study, "--judge", "stub", "--model", "m", "--base-url", stub.url]
    retries = [] if "--retries" in extra else ["--retries", "2"]  # an option given twice is refused
    return invoke_cli(*args, "--no-progress", *retries, *extra, code=code, env=env)


def test_run_then_the_alt_test_reads_winning_rate_and_rho(study, stub):
    res = judge_run(study, stub, env={"OPENAI_API_KEY": KEY})
    assert "50 of 50 items labelled" in res.output and "50 requests sent" in res.output
    assert stub.headers[0] == f"Bearer {KEY}"
    # the request constrains the answer to the schema's values plus the explicit abstention
    enum = stub.calls[0]["response_format"]["json_schema"]["schema"]["properties"]["safety_label"]["enum"]
    assert enum[-1] == CANNOT_JUDGE and "Insufficient Information" in enum
    prompt = stub.calls[0]["messages"][0]["content"]
    assert "Safety label" in prompt and "A critical field is missing" in prompt and "Patient with NSCLC" in prompt
    out = run("judge", "--study", study, "--judge", "stub", "--expertise", "expert", "--format", "json").output
    data = json.loads(out)
    d = data["judges"][0]
    assert d["judge"] == "stub" and "winning_rate" in d and "advantage_probability" in d
    # never a clinician: the round's ratings are untouched and agree sees two raters
    ratings = (study / "rounds" / "1" / "ratings.csv").read_text()
    assert "stub" not in ratings
    recs = [json.loads(x) for x in (study / "judges" / "stub" / "responses.jsonl").read_text().splitlines()]
    r = recs[0]
    assert r["model_reported"] == "stub-model-1" and r["endpoint"] == stub.url and len(r["prompt_sha256"]) == 64
    assert r["prompt_tokens"] == 10 and r["latency_s"] >= 0 and r["temperature"] == 0.0 and r["raw"]
    toml = (study / "study.toml").read_text()
    assert "stub-model-1" in toml and "endpoint_kind" in toml


def test_the_key_is_nowhere_on_disk_or_in_output(study, stub, tmp_path):
    """From a 0600 key file and from $OPENAI_API_KEY: sent as the bearer token, and then absent from
    every file the run, `judge --study` (its table, Markdown and JSON, written with -o) and `report`
    (HTML with its CSV supplement, and the Markdown with the methods text) leave, and from every
    line they print (stdout and stderr)."""
    keyfile = tmp_path / "key"
    keyfile.write_text(KEY + "\n")
    keyfile.chmod(0o644)
    res = judge_run(study, stub, "--key-file", keyfile, code=None)
    assert res.exit_code != 0 and "readable by others" in res.output and KEY not in res.output
    keyfile.chmod(0o600)
    outputs = [judge_run(study, stub, "--key-file", keyfile).output]
    assert stub.headers[-1] == f"Bearer {KEY}"
    outputs.append(judge_run(study, stub, "--samples", "2", env={"OPENAI_API_KEY": KEY}).output)
    assert stub.headers[-1] == f"Bearer {KEY}"
    out = tmp_path / "out"
    out.mkdir()
    judge = ["judge", "--study", study, "--judge", "stub", "--expertise", "expert"]
    outputs.append(run(*judge, env={"OPENAI_API_KEY": KEY}).output)
    for fmt, name in (("table", "judge.txt"), ("markdown", "judge.md"), ("json", "judge.json")):
        outputs.append(run(*judge, "--format", fmt, "-o", out / name, env={"OPENAI_API_KEY": KEY}).output)
    outputs.append(run("report", "--study", study, "-o", out / "r.html", env={"OPENAI_API_KEY": KEY}).output)
    outputs.append(run("report", "--study", study, "--format", "markdown", "-o", out / "r.md").output)
    written = [p for p in list(study.rglob("*")) + list(out.rglob("*")) if p.is_file()]
    names = {p.name for p in written}
    assert {"judge.txt", "judge.md", "judge.json", "r.html", "r.md", "responses.jsonl"} <= names, names
    assert any(p.parent.name == "supplement" and p.name.startswith("judge_") for p in written), names
    for p in written:
        assert KEY.encode() not in p.read_bytes(), p
    assert all(KEY not in o for o in outputs)
    for name in ("r.html", "r.md"):  # the methods text is there, and names the run (not the key)
        assert "Judge stub was stub-model-1 on a local server" in (out / name).read_text(), name


def test_rerun_asks_only_the_missing_and_a_full_rerun_sends_nothing(study, stub):
    judge_run(study, stub, "--limit", "20")
    assert len(stub.calls) == 20
    res = judge_run(study, stub)
    assert len(stub.calls) == 50 and "30 answers needed" not in res.output and "20 cached, asking 30" in res.output
    res = judge_run(study, stub)
    assert len(stub.calls) == 50 and "0 requests sent" in res.output
    # another temperature is another key: asked again
    judge_run(study, stub, "--temperature", "0.5", "--limit", "2")
    assert len(stub.calls) == 52


def test_a_torn_last_line_from_a_kill_is_asked_again(study, stub):
    judge_run(study, stub, "--limit", "3")
    p = study / "judges" / "stub" / "responses.jsonl"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:2]) + "\n" + lines[2][:30])
    judge_run(study, stub, "--limit", "3")
    assert len(stub.calls) == 4


def test_cannot_judge_is_abstention_not_insufficient_information(study, stub):
    def answer(item, body):
        label = CANNOT_JUDGE if item.endswith(("0", "1", "2")) else "Insufficient Info"
        return 200, json.dumps({"rationale": "r", "safety_label": label})

    stub.answer = answer
    res = judge_run(study, stub)
    recs = [json.loads(x) for x in (study / "judges" / "stub" / "responses.jsonl").read_text().splitlines()]
    abst = sum(r["status"] == "abstain" for r in recs)
    assert abst > 0 and f"{abst} abstained" in res.output
    labels = (study / "judges" / "labels.csv").read_text()
    assert labels.count("Insufficient Information") == 50 - abst and CANNOT_JUDGE not in labels


def test_off_schema_answers_are_held_out_with_raw_text(study, stub):
    def answer(item, body):
        if item.endswith("0"):
            return 200, "Sure! The answer is Supported."
        if item.endswith("1"):
            return 200, json.dumps({"rationale": "r", "safety_label": "Probably fine"})
        return 200, json.dumps({"rationale": "r", "safety_label": "Unsupported"})

    stub.answer = answer
    res = judge_run(study, stub)
    assert "off the schema (held out)" in res.output and "not JSON" in res.output
    assert "'Probably fine' is not a value of safety_label" in res.output
    labels = (study / "judges" / "labels.csv").read_text()
    assert "Probably fine" not in labels and "Supported" not in labels.replace("Unsupported", "")


def test_429_and_5xx_are_retried_with_backoff(study, stub):
    seen: dict[str, int] = {}

    def answer(item, body):
        seen[item] = seen.get(item, 0) + 1
        if seen[item] == 1:
            return 429, '{"error": "rate limited"}'
        if seen[item] == 2:
            return 503, '{"error": "busy"}'
        return 200, json.dumps({"rationale": "r", "safety_label": "Supported"})

    stub.answer = answer
    t0 = time.monotonic()
    res = judge_run(study, stub, "--limit", "2", "--concurrency", "2")
    assert "2 of 2 items labelled" in res.output and len(stub.calls) == 6
    assert time.monotonic() - t0 < 30


def test_a_timeout_is_an_error_counted_and_the_rest_is_kept(study, stub):
    def answer(item, body):
        if item.endswith("0"):
            time.sleep(1.5)
        return 200, json.dumps({"rationale": "r", "safety_label": "Supported"})

    stub.answer = answer
    res = judge_run(study, stub, "--limit", "10", "--timeout", "0.5", "--retries", "0")
    cached = [json.loads(x) for x in (study / "judges" / "stub" / "responses.jsonl").read_text().splitlines()]
    missing = 10 - len(cached)
    assert missing >= 1 and f"{missing} not answered" in res.output and "ReadTimeout" in res.output


def test_bad_endpoint_and_judge_named_like_a_rater_are_one_line_errors(study, stub):
    res = invoke_cli("judge", "run", "--study", study, "--judge", "onc_a", "--model", "m", "--base-url", stub.url)
    assert res.exit_code != 0 and "is a rater" in res.output
    res = invoke_cli("judge", "run", "--study", study, "--judge", "j", "--model", "m", "--base-url", "ftp://x")
    assert res.exit_code != 0 and "http(s)://" in res.output


def test_a_study_without_case_text_says_what_is_missing(tmp_path, stub):
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run("pull", "--study", s, "--from-table", OPENMTB, *WIDE)
    res = invoke_cli("judge", "run", "--study", s, "--judge", "j", "--model", "m", "--base-url", stub.url)
    assert res.exit_code != 0 and "no case text" in res.output and not stub.calls


def test_samples_shuffle_the_order_and_measure_consistency(study, stub):
    def answer(item, body):  # answers the first value listed: pure position bias
        prompt = body["messages"][0]["content"]
        first = prompt.split('Field "safety_label"', 1)[1].split('- "', 1)[1].split('"', 1)[0]
        return 200, json.dumps({"rationale": "r", "safety_label": first})

    stub.answer = answer
    res = judge_run(study, stub, "--limit", "10", "--samples", "3")
    assert len(stub.calls) == 30 and "position bias" in res.output
    bias = float(res.output.split("position bias: ", 1)[1].split()[0])
    assert bias > 0.5


def test_parse_answer_unit():
    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb_unsafe")
    assert parse_answer('{"rationale": "x", "safety_label": "insufficient info"}', schema)["values"] == {
        "safety_label": "Insufficient Information"
    }
    assert parse_answer('{"safety_label": "Cannot judge"}', schema)["status"] == "abstain"
    assert parse_answer("[1]", schema)["status"] == "off_schema"
    assert "missing_info" not in answer_schema(schema)["json_schema"]["schema"]["properties"]  # multi: not asked
    assert os.environ.get("OPENAI_API_KEY", "") != KEY
