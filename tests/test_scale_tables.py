"""The column-wise rewrites of issue 25 against the row-wise code they replaced, kept here as the
reference: same result on random tables with the edge cases the study files can hold (empty gold
values, ``single``, missing cells, numbers in an object column, several fields, a field asked
for that has no rows, quotes, commas, line breaks, control characters, non-ASCII text)."""

from __future__ import annotations

import hashlib
import json
import random

import numpy as np
import pandas as pd
import pytest

from goldboard.adjudicate import gold as gold_mod
from goldboard.analysis.report_tables import gold_distribution
from goldboard.exports.report import _is_in
from goldboard.text import cell_text

TEXTS = ["Supported", "Unsafe", "", 'say "no", then\r\nstop', "tab\there\x01", "é\u2028x", "back\\slash"]


def reference_gold_distribution(gold: pd.DataFrame, fields=None) -> list[dict]:
    """The row-wise code before issue 25 (one mask and one ``map(cell_text)`` per value)."""
    if gold is None or gold.empty:
        return []
    order = list(fields) if fields is not None else list(dict.fromkeys(gold["field"].astype(str)))
    rows = []
    for f in order:
        sub = gold[gold["field"].astype(str) == f]
        if sub.empty:
            continue
        resolved = sub[sub["method"] != "unresolved"]
        total = len(resolved)
        values = resolved["gold_value"].map(cell_text)
        for v in sorted(set(values), key=lambda x: (-int((values == x).sum()), x)):
            part = resolved[values == v]
            rows.append(
                {
                    "field": f,
                    "gold_value": v if v != "" else "(none)",
                    "n": int(len(part)),
                    "share": len(part) / total if total else None,
                    "unanimous": int((part["method"] == "unanimous").sum()),
                    "adjudicated": int((part["method"] == "adjudicated").sum()),
                }
            )
        n_open = int((sub["method"] == "unresolved").sum())
        if n_open:
            rows.append(
                {"field": f, "gold_value": "unresolved", "n": n_open, "share": None, "unanimous": 0, "adjudicated": 0}
            )
    return rows


def reference_gold_digest(gold: pd.DataFrame) -> str:
    """The digest before issue 25: one JSON text of every row, hashed at once."""
    cols = sorted(gold.columns)
    rows = gold[cols].astype(str).sort_values(["item_id", "field"], kind="stable").to_numpy().tolist()
    payload = json.dumps({"columns": cols, "rows": rows}, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def random_gold(rng: random.Random, n: int, mixed: bool) -> pd.DataFrame:
    cells = TEXTS + ([None, 3, float("nan")] if mixed else [])
    df = pd.DataFrame(
        {
            "item_id": [f"C-{rng.randint(1, 30)}" for _ in range(n)],
            "field": [rng.choice(["safety_label", "missing_info", "b"]) for _ in range(n)],
            "gold_value": [rng.choice(cells) for _ in range(n)],
            "method": [rng.choice(["unanimous", "adjudicated", "unresolved", "single"]) for _ in range(n)],
            "reason": [rng.choice(TEXTS) for _ in range(n)],
        }
    )
    return df.astype(object) if mixed else df


@pytest.mark.parametrize("seed", range(60))
def test_gold_distribution_same_as_the_row_wise_code(seed):
    rng = random.Random(seed)
    gold = random_gold(rng, rng.randint(1, 60), mixed=seed % 2 == 1)
    fields = None if seed % 3 else ["b", "safety_label", "not_in_gold"]
    assert gold_distribution(gold, fields) == reference_gold_distribution(gold, fields)


@pytest.mark.parametrize("seed", range(30))
def test_gold_digest_same_as_the_one_text_digest(seed, monkeypatch):
    """Piece by piece (pieces of 7 rows here) the digest is the one releases already record."""
    monkeypatch.setattr(gold_mod, "_DIGEST_CHUNK", 7)
    rng = random.Random(seed)
    gold = random_gold(rng, rng.choice([0, 1, 7, 8, 40]), mixed=seed % 2 == 1)
    assert gold_mod.gold_digest(gold) == reference_gold_digest(gold)


def test_is_in_is_isin():
    col = pd.Series(["C-1", "C-2", "", "C-3", "c-1"], dtype="str")
    values = pd.Series(["C-1", "C-3", "C-9"], dtype="str")
    assert _is_in(col, values).tolist() == col.isin(values).tolist() == [True, False, False, True, False]
    assert _is_in(col.iloc[:0], values).dtype == np.bool_


def reference_resolution_by_boundary(flags: pd.DataFrame, gold: pd.DataFrame, schema) -> list[dict]:
    """The row-wise code before issue 25 (a dict of every gold row, one scan of the flags per boundary)."""
    if flags is None or flags.empty:
        return []
    by_key: dict[tuple[str, str], tuple] = {}
    if gold is not None and not gold.empty:
        n = len(gold)
        cols = [gold[c].tolist() if c in gold.columns else [None] * n for c in ("method", "gold_value")]
        for item, field, method, value in zip(gold["item_id"].tolist(), gold["field"].tolist(), *cols):
            by_key[(str(item), str(field))] = (method, value)
    keys = list(zip(map(str, flags["item_id"].tolist()), map(str, flags["field"].tolist())))
    crossed = flags["boundaries"].tolist() if "boundaries" in flags.columns else [None] * len(flags)
    rows = []
    for b in schema.boundaries:
        hits = [k for k, names in zip(keys, crossed) if b.name in (names or [])]
        if not hits:
            continue
        outcomes: dict[str, int] = {}
        for k in hits:
            g = by_key.get(k)
            key = "unresolved" if g is None or g[0] == "unresolved" else (cell_text(g[1]) or "(none)")
            outcomes[key] = outcomes.get(key, 0) + 1
        for decision, n in sorted(outcomes.items(), key=lambda kv: (kv[0] == "unresolved", -kv[1], kv[0])):
            rows.append(
                {
                    "boundary": b.name,
                    "field": b.field,
                    "side_a": " / ".join(b.a),
                    "side_b": " / ".join(b.b),
                    "disagreements": len(hits),
                    "decision": decision,
                    "n": n,
                    "share": n / len(hits),
                }
            )
    return rows


@pytest.mark.parametrize("seed", range(40))
def test_resolution_by_boundary_same_as_the_row_wise_code(seed):
    from goldboard.analysis.report_tables import resolution_by_boundary
    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb_unsafe")
    names = [b.name for b in schema.boundaries]
    assert names, "the pin needs a schema with named boundaries"
    rng = random.Random(seed)
    n = rng.randint(1, 50)
    flags = pd.DataFrame(
        {
            "item_id": [f"C-{rng.randint(1, 25)}" for _ in range(n)],
            "field": [rng.choice(["safety_label", "b"]) for _ in range(n)],
            "boundaries": [rng.sample(names + names, rng.randint(0, 3)) or None for _ in range(n)],
        }
    )
    gold = None if seed % 7 == 0 else random_gold(rng, rng.randint(0, 60), mixed=seed % 2 == 1)
    if gold is not None and seed % 5 == 1:
        gold = gold.drop(columns=["method"])
    assert resolution_by_boundary(flags, gold, schema) == reference_resolution_by_boundary(flags, gold, schema)


PLAIN_TEXTS = ["Supported", "Unsafe", "", "a, b", "é\u2028x\u00a0", "日本", "x\x7fy", "{[1]}", "'quoted'"]


@pytest.mark.parametrize("seed", range(24))
def test_gold_digest_from_arrow_text_is_the_one_text_digest(seed, monkeypatch):
    """Text columns needing no JSON escape are joined in Arrow and hashed from its buffer: the
    same digest as ``json.dumps`` of the rows (pieces of 7 rows here), and where one cell needs an
    escape (quote, backslash, control character) or is missing, the rows go through json.dumps."""
    monkeypatch.setattr(gold_mod, "_DIGEST_CHUNK", 7)
    rng = random.Random(seed)
    n = rng.choice([1, 7, 8, 40])
    gold = pd.DataFrame(
        {
            "item_id": [f"C-{rng.randint(1, 30)}" for _ in range(n)],
            "field": [rng.choice(["safety_label", "b"]) for _ in range(n)],
            "gold_value": [rng.choice(PLAIN_TEXTS) for _ in range(n)],
            "method": [rng.choice(["unanimous", "adjudicated"]) for _ in range(n)],
            "reason": [rng.choice(PLAIN_TEXTS) for _ in range(n)],
        },
        dtype="str",
    )
    if seed % 3 == 1:  # one cell JSON escapes, or a missing one
        gold.loc[gold.index[-1], rng.choice(["gold_value", "reason"])] = rng.choice(
            ['say "no"', "tab\there", "\x01", "line\r\n", "back\\slash", None]
        )
    table = gold[sorted(gold.columns)]
    arrow = gold_mod._plain_text_columns(table, sorted(gold.columns))
    assert (arrow is None) == (seed % 3 == 1)
    assert gold_mod.gold_digest(gold) == reference_gold_digest(gold)
