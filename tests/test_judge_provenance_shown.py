"""`goldboard judge --study` says where each judge's labels come from, in the terminal and in the
report's judge section: for a `judge run`, the model the endpoint reported, the endpoint (no key),
the prompt template's hash, round, date, parameters and the file holding every answer's record;
for a labels table, the table and its hash."""

from __future__ import annotations

from html import unescape

from conftest import run_cli as run
from test_judge_run import KEY, Stub, openmtb_study

from goldboard.study import tomllib  # tomllib, or tomli on Python 3.10


def test_the_terminal_and_the_report_carry_each_judges_provenance(tmp_path):
    s = openmtb_study(tmp_path)
    stub = Stub()
    try:
        run("judge", "run", "--study", s, "--judge", "llm", "--model", "m", "--base-url", stub.url,
            "--temperature", "0.3", "--seed", "11", "--max-tokens", "77", "--samples", "2", "--no-progress",
            env={"OPENAI_API_KEY": KEY})  # fmt: skip
    finally:
        stub.stop()
    table = tmp_path / "t.csv"
    table.write_text("item_id,field,value\nMTB-94338760,safety_label,Supported\n")
    run("judge", "--study", s, "--judge", "tab", "--labels", table, "--expertise", "expert", code=None)
    entry = tomllib.loads((s / "study.toml").read_text())["extra"]["judge"]["judges"]
    template = entry["llm"]["run"]["template"][:12]
    want = (
        f"llm's labels: stub-model-1 (the model the endpoint reported) at {stub.url} (local server), prompted from "
        f"the schema (template sha256 {template}), round 1, on {entry['llm']['run']['ran_at'][:10]}; temperature "
        "0.3, seed 11, at most 77 tokens, json_schema, 2 samples per item. Each answer, with its prompt's hash, raw "
        "response, tokens, latency and time: judges/llm/responses.jsonl in the study"
    )
    day = entry["tab"]["recorded_at"][:10]
    tab = f"tab's labels: the table t.csv (sha256 {entry['tab']['sha256'][:12]}), recorded {day}, 1 label on 1 item; "
    tab += "how they were made is not recorded by goldboard"
    out = run("judge", "--study", s, "--judge", "llm,tab", "--expertise", "expert").stdout
    assert want in out.splitlines() and tab in out.splitlines()
    run("report", "--study", s, "-o", tmp_path / "r.html")
    html = unescape((tmp_path / "r.html").read_text())
    assert f"<p>{want}.</p>" in html and f"<p>{tab}.</p>" in html
    assert KEY not in out + html
