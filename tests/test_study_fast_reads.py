"""The study's quick reads of its own files at scale (study.py) against the readers they stand in
for: a ratings file's item ids (``_plain_column`` vs the csv module) and a units file's ids
(``_unit_ids`` vs a JSON parse per line), on generated files with the awkward cases."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from goldboard.study import _plain_column, _unit_ids

CELLS = ["a", "", "b c", "\u200b", "é", " ", "7", "007", "C-1", "x;y", "\t"]


def _csv_ids(text: str, name: str) -> set[str]:
    rows = csv.reader(io.StringIO(text, newline=""))
    head = next(rows, [])
    j = head.index(name)
    return {r[j] for r in rows if len(r) > j}


@pytest.mark.parametrize("seed", range(4))
def test_plain_column_reads_what_the_csv_module_reads(seed):
    rng = random.Random(seed)
    for _ in range(1500):
        cols = rng.choice([["round", "item_id", "x"], ["round", "rater", "item_id"], ["item_id", "round"]])
        lines = [",".join(cols)] + [
            ",".join(rng.choice(CELLS) for _ in range(rng.randint(0, 5))) for _ in range(rng.randint(0, 6))
        ]
        text = "\n".join(lines) + rng.choice(["", "\n", "\n\n"])
        if rng.random() < 0.2:  # quotes, CRs: the csv module's (None)
            text = text.replace("a", rng.choice(['"a"', "a\r\n", "a\r"]))
        got = _plain_column(text, "item_id")
        if got is None:
            continue
        assert got == _csv_ids(text, "item_id"), text


def test_plain_column_leaves_quotes_crs_and_a_first_column_to_the_csv_module():
    assert _plain_column('round,item_id\n1,"a,b"\n', "item_id") is None
    assert _plain_column("round,item_id\r\n1,a\r\n", "item_id") is None
    assert _plain_column("item_id,round\na,1\n", "item_id") is None
    assert _plain_column("round,item_id\n1,a\n,\n2\n", "item_id") == {"a", ""}


@pytest.mark.parametrize("seed", range(3))
def test_unit_ids_are_the_json_parse(tmp_path, seed):
    rng = random.Random(seed)
    for k in range(60):
        recs = []
        for _ in range(rng.randint(0, 8)):
            item = rng.choice(["C-1", 'a"b', "C-1\u200b", "é", "}", "x\\y", "", "7"])
            rec = {"item_id": item, "case_text": rng.choice(["", "}", '{"item_id": "z"}', "é"])}
            if rng.random() < 0.2:
                rec = {"case_id": "c", **rec}  # the id not first: parsed
            recs.append(json.dumps(rec, ensure_ascii=rng.random() < 0.5))
        path = tmp_path / f"u{k}.jsonl"
        path.write_text("\n".join(recs) + rng.choice(["", "\n", "\n\n"]), encoding="utf-8")
        want = {str(json.loads(line).get("item_id")) for line in recs}
        assert _unit_ids(path) == want, recs
