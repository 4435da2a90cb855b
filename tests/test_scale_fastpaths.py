"""The quick paths of `flag` and `agree` answer exactly as the general code they stand in for
(issues 19 and 25): each is compared with that code on many generated inputs."""

from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from goldboard.cases import ratings as R
from goldboard.cases.rounds import select_rounds
from goldboard.fileio import _BLANK_LINE, has_blank_line
from goldboard.label_configs.schema import load_schema


def test_the_blank_line_hint_says_what_the_full_pattern_says():
    rng = random.Random(19)
    alphabet = ["a", "b", ",", '"', " ", "\t", "\f", "\v", "\r", "\n", "\r\n"]
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert has_blank_line(text) == (_BLANK_LINE.search(text) is not None), repr(text)


def _ratings(rng: random.Random, n_items: int, rounds: list[int]) -> pd.DataFrame:
    rows = []
    for i in range(n_items):
        for rater in ("a", "b", "c"):
            if rng.random() < 0.8:
                rows.append({"round": str(rng.choice(rounds)), "item_id": f"I{rng.randint(0, 9)}{i}", "rater": rater})
    df = pd.DataFrame(rows, columns=["round", "item_id", "rater"])
    for c in R.RATINGS_COLUMNS:
        if c not in df.columns:
            df[c] = ""
    df["field"] = "label"
    return df


@pytest.mark.parametrize("seed", range(40))
def test_one_round_needs_no_choosing(seed):
    """A table of one round: the shortcut keeps the rows and rounds select_rounds keeps."""
    rng = random.Random(seed)
    df = _ratings(rng, rng.randint(1, 30), [rng.randint(1, 3)])
    if not len(df):
        return
    assigned = {(i, int(df["round"].iat[0])): {"a"} for i in df["item_id"][:3]} if seed % 2 else None
    raters = ["a", "b", "c"] if seed % 3 else None
    fast_df, fast = R._select_rounds(df, raters, None, assigned)
    slow_df, slow = select_rounds(df, raters, assigned=assigned)
    pd.testing.assert_frame_equal(fast_df, slow_df)
    assert fast.rounds == slow.rounds and fast.incomplete == slow.incomplete == []
    assert list(fast.rounds) == list(slow.rounds)  # same item order


def test_several_rounds_still_choose():
    df = _ratings(random.Random(1), 20, [1, 2])
    assert len(set(df["round"])) == 2
    fast_df, fast = R._select_rounds(df, ["a", "b", "c"], None, None)
    slow_df, slow = select_rounds(df, ["a", "b", "c"])
    pd.testing.assert_frame_equal(fast_df, slow_df)
    assert fast.rounds == slow.rounds and fast.incomplete == slow.incomplete


@pytest.mark.parametrize("seed", range(20))
def test_the_indexer_is_get_indexer(seed):
    rng = random.Random(seed)
    names = [f"n{k}" for k in rng.sample(range(100), rng.randint(1, 20))]
    values = pd.Series([f"n{rng.randint(0, 120)}" for _ in range(rng.randint(0, 200))], dtype=str)
    got = R._indexer(R._positions(names), values)
    assert got.tolist() == pd.Index(names).get_indexer(values).tolist()


@pytest.mark.parametrize("seed", range(20))
def test_values_canonical_by_column_as_row_by_row(seed, monkeypatch):
    """normalized_values' column-wise spelling (aliases, case, multi-select sets) gives the values the
    row-by-row loop gives."""
    schema = load_schema("mtb")
    rng = random.Random(seed)
    spell = {
        "safety_label": ["Supported", "supported", "Insufficient Info", "Unsupported", "Partially Supported", ""],
        "missing_info": ["", "stage", "stage|ecog_status", "ecog_status|stage", "Stage"],
    }
    names = {f.name for f in R.adjudicable_fields(schema)}
    assert set(spell) <= names
    rows = []
    for i in range(rng.randint(1, 60)):
        field = rng.choice(sorted(spell))
        rows.append({"item_id": f"I{i}", "rater": rng.choice("ab"), "field": field, "value": rng.choice(spell[field])})
    df = pd.DataFrame(rows)
    assert R._canonical_by_column(df, {f.name: f for f in R.adjudicable_fields(schema)}) is not None
    fast = R.normalized_values(df, schema)
    monkeypatch.setattr(R, "_canonical_by_column", lambda *a: None)
    slow = R.normalized_values(df, schema)
    pd.testing.assert_frame_equal(fast, slow)
    assert np.array_equal(fast["value"].to_numpy(dtype=object), slow["value"].to_numpy(dtype=object))


def test_a_value_outside_the_schema_is_still_named_by_its_line():
    schema = load_schema("mtb")
    df = pd.DataFrame(
        {"item_id": ["I1", "I2"], "rater": ["a", "a"], "field": ["safety_label"] * 2, "value": ["Supported", "Nope"]}
    )
    df["_line"] = ["2", "3"]
    with pytest.raises(R.GoldboardError, match=r"^ratings:3: safety_label: 'Nope'"):
        R.normalized_values(df, schema)


# -- agree --study on a small study: the pandas-free path prints what the pandas path prints ----------


def _write_round(study, n: int, rows: list[dict]) -> None:
    import csv

    path = study / "rounds" / str(n) / "ratings.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=R.RATINGS_COLUMNS, lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({c: row.get(c, "") for c in R.RATINGS_COLUMNS})


def _random_study(root, seed: int):
    """A study of schema mtb, raters a, b, c, one to three rounds of random ratings: aliases, empty
    values, raters left out, sometimes a value outside the schema, a repeated rating, a blank-padded cell."""
    from conftest import invoke_cli

    rng = random.Random(seed)
    study = root / f"S{seed}"
    res = invoke_cli("study", "init", study, "--schema", "mtb", "--raters", "a,b,c")
    assert res.exit_code == 0, res.output
    labels = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information", "Insufficient Info", ""]
    multi = ["", "stage", "stage|ecog_status", "prior_therapy"]
    for n in range(1, rng.randint(1, 3) + 1):
        rows = []
        for i in range(rng.randint(2, 25)):
            for rater in rng.sample(["a", "b", "c"], rng.randint(1, 3)):
                rows.append({"round": str(n), "item_id": f"I{i}", "rater": rater, "field": "safety_label"})
                rows[-1]["value"] = rng.choice(labels)
                if rng.random() < 0.7:
                    rows.append({"round": str(n), "item_id": f"I{i}", "rater": rater, "field": "missing_info"})
                    rows[-1]["value"] = rng.choice(multi)
        oddity = rng.random()
        if rows and oddity < 0.08:
            rows[rng.randrange(len(rows))]["value"] = "Maybe"  # outside the schema: an error naming the line
        elif rows and oddity < 0.16:
            rows.append(dict(rows[rng.randrange(len(rows))]))  # a repeat (the same or, after a change, another)
        elif rows and oddity < 0.22:
            rows[rng.randrange(len(rows))]["item_id"] += " "  # a padded id
        _write_round(study, n, rows)
    return study


AGREE_VARIANTS = [
    [],
    ["--format", "json"],
    ["--format", "csv"],
    ["--format", "markdown"],
    ["--field", "missing_info:stage"],
    ["--raters", "a,b"],
    ["--round", "1"],
    ["--level", "nominal", "--categories", "Supported,Partially Supported,Unsupported,Insufficient Information"],
]


@pytest.mark.parametrize("seed", range(30))
def test_agree_study_without_pandas_prints_what_pandas_prints(seed, tmp_path, monkeypatch):
    from conftest import invoke_cli

    import goldboard.workflows.agreement as W

    study = _random_study(tmp_path, seed)
    for extra in AGREE_VARIANTS:
        args = ["agree", "--study", study, *extra]
        quick = invoke_cli(*args)
        with monkeypatch.context() as m:
            m.setattr(W, "read_rating_columns", lambda *a, **k: None)  # the pandas path throughout
            full = invoke_cli(*args)
        assert (quick.exit_code, quick.stdout, quick.stderr) == (full.exit_code, full.stdout, full.stderr), extra


def test_the_quick_path_is_taken(tmp_path, monkeypatch):
    """The comparison above compares two paths: on a plain study the columns answer (no DataFrame read)."""
    from conftest import invoke_cli

    import goldboard.cases.ratings_columns as RC

    study = tmp_path / "S"
    assert invoke_cli("study", "init", study, "--schema", "mtb", "--raters", "a,b").exit_code == 0
    rows = [
        {"round": "1", "item_id": f"I{i}", "rater": r, "field": "safety_label", "value": v}
        for i, (x, y) in enumerate([("Supported", "Supported"), ("Unsupported", "Supported"), ("Supported", "")])
        for r, v in (("a", x), ("b", y))
    ]
    _write_round(study, 1, rows)
    monkeypatch.setattr(RC.RatingColumns, "frame", lambda self: pytest.fail("read the DataFrame"))
    res = invoke_cli("agree", "--study", study, "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_items"] == 3  # (the item rated once counts; no pair compares it)


HEADER = "round,item_id,rater,field,value\n"


@pytest.mark.parametrize(
    "text, plain",
    [
        (HEADER + "1,I1,a,label,Yes\n1,I1,b,label,No\n", True),
        ("\ufeff" + HEADER.replace("\n", "\r\n") + "1,I1,a,label,Yes\r\n", True),  # BOM, CRLF
        (HEADER + '1,I1,a,label,"Yes, with ""care"""\n', True),
        (HEADER + "1,I1,a,label,Yes\n   \n1,I2,a,label,No\n", False),  # a line of blanks
        (HEADER + "1,I1,a,label,Yes\r1,I2,a,label,No\n", False),  # a bare CR
        (HEADER + "1,I1,a,label\n", False),  # a short row
        (HEADER + "1,I1,a,label,Yes,extra\n", False),  # a long row
        (HEADER + "one,I1,a,label,Yes\n", False),  # a round that is not a number
        ("round,item_id,rater,field,value,value\n1,I1,a,label,Yes,No\n", False),  # a duplicate header
        ("round,item_id,rater,value\n1,I1,a,Yes\n", False),  # no field column
        (HEADER, False),  # no data row
        (HEADER + '1,I1,a,label,"Yes\n', False),  # a quote left open
        (HEADER + "1,I1,a,label,Y\0es\n", False),  # a NUL
    ],
)
def test_only_a_plain_ratings_file_is_read_as_columns(text, plain, tmp_path):
    """The csv-module reader answers only where it reads what the pandas reader reads; then the
    columns are that frame's (every cell as written)."""
    from goldboard.cases.ratings_columns import read_rating_columns

    path = tmp_path / "ratings.csv"
    path.write_bytes(text.encode("utf-8"))
    cols = read_rating_columns(path)
    assert (cols is not None) == plain
    if plain:
        frame = R.read_ratings_csv(path)
        for name, values in cols.items():
            want = frame[name].astype(str).tolist() if name != "round" else [str(v) for v in frame[name]]
            assert values == want, name


def test_a_large_ratings_file_goes_to_pandas(tmp_path):
    from goldboard.cases.ratings_columns import read_rating_columns

    path = tmp_path / "ratings.csv"
    path.write_text(HEADER + "1,I1,a,label,Yes\n" * 50, encoding="utf-8")
    assert read_rating_columns(path) is not None
    assert read_rating_columns(path, max_bytes=100) is None
