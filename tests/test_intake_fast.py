"""The pull's speed-ups (issue 25) give what the plain code gives, on generated inputs.

* the intake core validates each distinct set of choice answers once per pull
  (``core._validate_cached``): the memo must never merge answers that read differently
  (``1`` / ``1.0`` / ``"1"`` / ``-0.0`` / ``0.0``, an alias, a control character);
* rating rows are built as tuples in ``RATINGS_COLUMNS`` order.
Each is compared with the plain path (``validate`` on every annotation) on the same records.
"""

from __future__ import annotations

import dataclasses
import gc
import random

import pandas as pd

from goldboard.cases.intake import core
from goldboard.cases.intake.core import Annotation, Answer, Shown, choices_answer, collect
from goldboard.label_configs.schema import load_schema

SCHEMA = load_schema("mtb")
RATERS = ["onc_a", "onc_b"]
VALUES = [
    "Supported",
    "supported",
    " Supported ",
    "Insufficient Info",
    "insufficient info",
    "Unsupported",
    "Partially Supported",
    "Nonsense",
    "Support\u001fed",
    1,
    [1],
    [1.0],
    "1",
    [-0.0],
    [0.0],
    ["Supported", "Unsupported"],
    ["Supported", "supported"],
]


def generated(seed: int, n: int = 300) -> list[Shown]:
    rng = random.Random(seed)
    out = []
    aid = 0
    for i in range(n):
        for rater in RATERS:
            anns = []
            for _ in range(rng.choice([0, 1, 1, 1, 2])):
                aid += 1
                entries = [("safety_label", choices_answer(rng.choice(VALUES)))]
                if rng.random() < 0.2:
                    entries.append(
                        ("missing_info", choices_answer(rng.choice([["stage"], ["stage", "ecog_status"], "x"])))
                    )
                if rng.random() < 0.3:
                    entries.append(("rationale", Answer(text=rng.choice(["", "why", "because"]))))
                if rng.random() < 0.05:
                    entries.append(("no_such_field", Answer()))
                at = f"2026-01-0{rng.randint(1, 3)}T10:00:00Z"
                anns.append(Annotation(entries=entries, at=at, annotation_id=aid, raw={"a": aid}))
            out.append(Shown(f"C{i}", {"case_id": f"C{i}"}, rater, anns, group=f"g/{rater}", check_user=False))
    return out


def _plain(entries, schema, fields, memo):
    return core.validate(entries, schema, fields)


def test_memoised_validation_gives_the_plain_results(monkeypatch):
    for seed in range(5):
        fast = collect(generated(seed), SCHEMA, RATERS, 1)
        with monkeypatch.context() as m:
            m.setattr(core, "_validate_cached", _plain)
            plain = collect(generated(seed), SCHEMA, RATERS, 1)
        pd.testing.assert_frame_equal(fast.ratings, plain.ratings)
        pd.testing.assert_frame_equal(fast.invalid, plain.invalid)
        assert {**fast.summary, "pulled_at": ""} == {**plain.summary, "pulled_at": ""}  # made a second apart
        assert len(fast.invalid) and len(fast.ratings)  # the inputs hold both


def test_the_memo_tells_apart_values_that_compare_equal():
    fields = core._Fields.of(SCHEMA)
    memo: dict = {}
    got = [
        core._validate_cached([("safety_label", choices_answer(v))], SCHEMA, fields, memo)[1]
        for v in ([1], [1.0], [-0.0], [0.0])
    ]
    assert got[0] != got[1]  # '1' vs '1.0' named as written
    assert got[2] != got[3]  # '-0.0' vs '0.0'
    assert "'1.0' is not a value" in got[1][0]
    a, _ = core._validate_cached([("safety_label", choices_answer("Supported"))], SCHEMA, fields, memo)
    a["safety_label"] = "changed"  # a caller's copy: the memo keeps its own
    b, _ = core._validate_cached([("safety_label", choices_answer("Supported"))], SCHEMA, fields, memo)
    assert b["safety_label"] == "Supported"


def test_a_table_pull_pauses_the_cycle_collector_and_restores_it(tmp_path, monkeypatch):
    """The pull runs with the cyclic collector paused (its full passes over every rating object
    were a third of the time) and switches it back on after a pull and after a refused one."""
    from goldboard.cases.examples import example_path
    from goldboard.cases.table_import import TableMapping
    from goldboard.errors import GoldboardError
    from goldboard.study import Study
    from goldboard.workflows import tables

    study = Study.init(tmp_path / "s", "mtb_unsafe", ["onc_a", "onc_b"])
    seen = []
    real = tables._validate_table  # the validation of both paths (row-wise: collect; by columns: collect_columns)
    monkeypatch.setattr(tables, "_validate_table", lambda *a, **k: seen.append(gc.isenabled()) or real(*a, **k))
    mapping = TableMapping(
        item_col="case_id", raters={"onc_a": "oncologist_a_label", "onc_b": "oncologist_b_label"}, field="safety_label"
    )
    assert gc.isenabled()
    res = tables.pull_table(study, example_path("openmtb"), mapping)
    assert seen == [False] and gc.isenabled() and len(res.pull.ratings)
    bad = dataclasses.replace(mapping, item_col="no_such_column")
    try:
        tables.pull_table(study, example_path("openmtb"), bad)
    except GoldboardError:
        pass
    else:
        raise AssertionError("a missing item column is refused")
    assert gc.isenabled()
