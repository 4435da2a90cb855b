"""`goldboard flag --study` on a small study reads its ratings as columns, without pandas (issue
19): every byte it prints -- stdout, stderr, exit code, the file of ``-o`` -- is what the
DataFrame path prints, compared on many generated studies x option sets."""

from __future__ import annotations

import csv
import random

import pytest
from conftest import invoke_cli, seeds

from goldboard.cases.ratings import RATINGS_COLUMNS
from goldboard.label_configs.schema import load_schema

RATERS = ["a", "b", "c"]
STAMPS = ["", "2026-01-01T10:00:00Z", "2026-01-01T09:00:00Z", "2026-01-02T08:00:00Z"]
TEXTS = ["", "ok", "needs, a comma", 'says "no"', "two\nlines", "Ünïcode – ✓", "x" * 40, "=cmd"]


def _write_round(study, n: int, rows: list[dict]) -> None:
    path = study / "rounds" / str(n) / "ratings.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RATINGS_COLUMNS, lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({c: row.get(c, "") for c in RATINGS_COLUMNS})


def _choices(field) -> list[str]:
    """A field's values, their aliases and a blank; a multi field's sets in any order."""
    if field.kind == "multi":
        cats = field.categories
        return ["", cats[0], f"{cats[1]}|{cats[0]}", cats[2], f"{cats[0]}|{cats[3]}"]
    out = list(field.categories) + [""]
    for v in field.values:
        out += list(v.aliases or ())[:2]
    return out


def _random_study(root, seed: int):
    """A study of schema mtb or medfail, raters a, b, c, mostly one round of random ratings: aliases,
    blanks, fields and raters left out, rationales that need quoting, ties in the annotation times,
    item columns that differ between raters, ids alike in natural order (I1, I01); now and then a value outside the schema, a repeated
    rating, a second round (the DataFrame path answers those), a padded id or value."""
    rng = random.Random(seed)
    name = rng.choice(["mtb", "medfail", "mtb_unsafe"])
    schema = load_schema(name)
    fields = [f for f in schema.fields if f.kind != "text"]
    study = root / f"S{seed}"
    invoke_cli("study", "init", study, "--schema", name, "--raters", ",".join(RATERS), code=0)
    for n in range(1, (2 if rng.random() < 0.15 else 1) + 1):
        rows = []
        for i in range(rng.randint(1, 30)):
            item = f"I{rng.randint(0, 40)}" if rng.random() < 0.1 else f"I{i:02d}" if rng.random() < 0.1 else f"I{i}"
            for rater in rng.sample(RATERS, rng.randint(1, 3)):
                common = {
                    "round": str(n),
                    "item_id": item,
                    "case_id": rng.choice(["", f"C{i}", f"C{i + 1}"]),
                    "model": rng.choice(["", "m1", "m2"]),
                    "rater": rater,
                    "rationale": rng.choice(TEXTS),
                    "annotated_at": rng.choice(STAMPS),
                }
                for f in fields:
                    if rng.random() < 0.85:
                        rows.append({**common, "field": f.name, "value": rng.choice(_choices(f))})
        rows = list({(r["item_id"], r["rater"], r["field"]): r for r in rows}.values())
        oddity = rng.random()
        if rows and oddity < 0.06:
            rows[rng.randrange(len(rows))]["value"] = "Maybe"  # outside the schema
        elif rows and oddity < 0.12:
            rows.append(dict(rows[rng.randrange(len(rows))]))  # a repeated rating
        elif rows and oddity < 0.16:
            rows[rng.randrange(len(rows))]["rater"] = "zed"  # not a rater of the study
        elif rows and oddity < 0.22:
            rows[rng.randrange(len(rows))]["item_id"] += " "  # a padded id
        elif rows and oddity < 0.28:
            rows[rng.randrange(len(rows))]["value"] += " "  # a padded value
        _write_round(study, n, rows)
    return study


VARIANTS = [
    [],
    ["--format", "json"],
    ["--format", "csv"],
    ["--triggered-only"],
    ["--triggered-only", "--format", "json"],
    ["--raters", "b,a"],
    ["--raters", "c,a,b", "--format", "csv"],
    ["--round", "1", "--format", "json"],
    ["--round", "2"],
    ["--raters", "a,nobody"],
]


@pytest.mark.parametrize("seed", seeds(50, quick=10))
def test_flag_study_without_pandas_prints_what_pandas_prints(seed, tmp_path, monkeypatch):
    import goldboard.cli.flag as F

    study = _random_study(tmp_path, seed)
    for extra in VARIANTS + [["--format", "csv", "-o", "{out}"]]:
        outs = []
        for quick in (True, False):
            out = tmp_path / f"out-{quick}.csv"
            args = ["flag", "--study", study, *[a.replace("{out}", str(out)) for a in extra]]
            with monkeypatch.context() as m:
                if not quick:
                    m.setattr(F, "read_rating_columns", lambda *a, **k: None)  # the DataFrame path throughout
                res = invoke_cli(*args)
            written = out.read_bytes() if out.exists() else None
            outs.append((res.exit_code, res.stdout, res.stderr.replace(str(out), "OUT"), written))
        assert outs[0] == outs[1], (seed, extra)


def test_the_column_path_is_taken(tmp_path, monkeypatch):
    """The comparison above compares two paths: on a plain one-round study flag reads no DataFrame."""
    import goldboard.cli.flag as F

    study = tmp_path / "S"
    invoke_cli("study", "init", study, "--schema", "medfail", "--raters", "a,b", code=0)
    rows = [
        {"item_id": f"I{i}", "rater": r, "field": "severity", "value": v}
        for i, (x, y) in enumerate([("1", "5"), ("2", "2"), ("3", "4")])
        for r, v in (("a", x), ("b", y))
    ]
    _write_round(study, 1, rows)
    monkeypatch.setattr(F, "study_ratings", lambda *a, **k: pytest.fail("read the DataFrame"))
    res = invoke_cli("flag", "--study", study, "--format", "json", code=0)
    first = res.stdout.split('"flags": [')[1]
    # I1 (2 and 2) is not flagged: the study collects severity only (safety_gate and keep_in_benchmark,
    # with no rating row at all, are no missing ratings)
    assert first.index('"item_id": "I0"') < first.index('"item_id": "I2"') and '"item_id": "I1"' not in first
    assert '"gap": 4' in first and '"gap": 1' in first  # the larger gap first


def test_the_generated_studies_mostly_take_the_column_path(tmp_path):
    """Most generated studies are answered by the columns (else the comparison proves little)."""
    from goldboard.adjudicate.flags import flag_columns
    from goldboard.cases.ratings_columns import read_rating_columns
    from goldboard.study import Study

    taken = 0
    for seed in range(40):
        st = Study.open(_random_study(tmp_path, seed))
        table = read_rating_columns(st.ratings_path(1))
        present = [r for r in RATERS if r in set(table["rater"])]
        if len(st.pulled_rounds()) == 1 and flag_columns(table, st.schema, present) is not None:
            taken += 1
    assert taken >= 25, taken


def test_pandas_on_use_imports_pandas_when_a_name_is_read():
    import subprocess
    import sys

    probe = (
        "import sys, inspect\n"
        "from goldboard.cases.ratings_columns import PandasOnUse\n"
        "pd = PandasOnUse()\n"
        "inspect.unwrap(pd); hasattr(pd, '__wrapped__')\n"
        "print('pandas' in sys.modules)\n"
        "frame = pd.DataFrame({'a': [1]})\n"
        "print('pandas' in sys.modules, type(frame).__name__, pd.DataFrame is sys.modules['pandas'].DataFrame)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["False", "True DataFrame True"]
