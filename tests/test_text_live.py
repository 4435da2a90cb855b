"""Hostile text through a real Label Studio: model outputs and case texts pushed, rationales
typed by the raters (through the API, with their own tokens), pulled back -- every string of
the corpus (bare CR, U+2028/U+2029/U+0085, bidi overrides, formula/DDE payloads, HTML,
``$variables``, a 144,000-character rationale) arrives exactly in the tasks and in
ratings.csv."""

from __future__ import annotations

import json

import hostile
import pandas as pd
import pytest
from click.testing import CliRunner

from goldboard.annotate.client import connect
from goldboard.annotate.simulate import post_ratings
from goldboard.cases.ratings import read_ratings_csv
from goldboard.cli import main
from goldboard.study import Study

pytestmark = pytest.mark.live
RATERS = ["onc_a", "onc_b"]


def run(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    return res


def test_hostile_text_round_trips_through_label_studio(live_server, tmp_path):
    texts = [t for t in hostile.CORPUS if t.strip() and "\x00" not in t] + [hostile.HUGE]
    cases = tmp_path / "cases.jsonl"
    outputs = tmp_path / "outputs.jsonl"
    cases.write_text(
        "".join(json.dumps({"case_id": f"C{k}", "text": f"case {k}: {t}"}) + "\n" for k, t in enumerate(texts)),
        encoding="utf-8",
    )
    outputs.write_text(
        "".join(json.dumps({"case_id": f"C{k}", "model": "m", "output": t}) + "\n" for k, t in enumerate(texts)),
        encoding="utf-8",
    )
    st = Study.init(tmp_path / "st", schema="mtb", raters=RATERS, data_dir=str(live_server.data_dir))
    res = run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet")
    assert res.exit_code == 0, res.output
    st = Study.open(st.path)
    client = connect(st)
    want_output = {f"C{k}::m": t for k, t in enumerate(texts)}
    for pid in st.round(1).projects.values():
        shown = {d["item_id"]: d["output_text"] for _, d in client.task_data(pid)}
        assert shown == want_output
    rows = []
    for k in range(len(texts)):
        for j, r in enumerate(RATERS):
            rationale = texts[(k + j) % len(texts)]
            rows.append(
                {
                    "item_id": f"C{k}::m",
                    "rater": r,
                    "field": "safety_label",
                    "value": "Supported",
                    "rationale": rationale,
                }
            )
    want = pd.DataFrame(rows)
    post_ratings(st, want, progress=False)
    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0, res.output
    got = read_ratings_csv(st.ratings_path(1))
    got = {(r.item_id, r.rater): r.rationale for r in got.itertuples() if r.field == "safety_label"}
    assert got == {(w.item_id, w.rater): w.rationale for w in want.itertuples()}
