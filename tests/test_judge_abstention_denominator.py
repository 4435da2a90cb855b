"""A judge's abstention is counted over the items it was asked, never over items of the ratings in
force it was not given (another round, `judge run --limit`, a labels table covering part of the
study): those are not its blanks.  An item it was asked and answered off the schema still is."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli as run
from test_judge_run import Stub, openmtb_study


@pytest.fixture()
def study(tmp_path):
    s = openmtb_study(tmp_path)
    return s


def _items(s) -> list[str]:
    return [json.loads(line)["item_id"] for line in (s / "units.jsonl").read_text().splitlines()]


def _row(s, judge: str) -> dict:
    out = run("judge", "--study", s, "--judge", judge, "--expertise", "expert", "--format", "json").stdout
    return next(r for r in json.loads(out)["abstention"]["rows"] if r["rater"] == judge)


def test_a_limited_run_counts_only_the_items_it_asked(study):
    stub = Stub()
    items = _items(study)
    odd = {items[0]: "cannot judge", items[1]: "Maybe"}  # an abstention; an answer off the schema (its blank)

    def answer(item, body):
        return 200, json.dumps({"rationale": "r", "safety_label": odd.get(item, "Supported")})

    stub.answer = answer
    try:
        run("judge", "run", "--study", study, "--judge", "llm", "--model", "m", "--base-url", stub.url,
            "--limit", "12", "--no-progress")  # fmt: skip
    finally:
        stub.stop()
    r = _row(study, "llm")
    assert (r["n_items"], r["blank"]["count"], r["cannot tell"]["count"]) == (12, 1, 1), r
    assert r["any"]["rate"] == pytest.approx(2 / 12)


def test_a_labels_table_for_part_of_the_study_counts_only_its_items(study, tmp_path):
    items = _items(study)[:20]
    path = tmp_path / "judge.csv"
    path.write_text("item_id,field,value\n" + "".join(f"{i},safety_label,Supported\n" for i in items))
    run("judge", "--study", study, "--judge", "sim", "--labels", path, "--expertise", "expert")
    r = _row(study, "sim")
    assert (r["n_items"], r["any"]["count"]) == (20, 0), r
