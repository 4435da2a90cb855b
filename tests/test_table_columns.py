"""The column-wise table pull (:mod:`goldboard.cases.intake.columns`) against the row-wise one.

Generated tables (wide and long, one field or several, aliases, other spellings, blanks, multi
values, held-out values, rationales, case/output/model columns, repeated and conflicting rows,
twin and placeholder ids, rater names to map, raters the study lacks; CSV, TSV, XLSX and JSONL;
re-pulls of a changed table, and a second source into the same round) are pulled twice: as
``pull_table`` pulls them (by columns wherever the column reader takes the table) and with the
column reader and the column CSV reader switched off (every table read by ``read_records``, row
by row: the code before them).  The two must write the same
``ratings.csv``, ``invalid.csv``, ``pull.json`` (but its clock), ``units.jsonl`` and study.toml
(but its clock), say the same summary, and refuse the same tables with the same message.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pandas as pd
import pytest
from conftest import invoke_cli, seeds

from goldboard.cases.intake import columns
from goldboard.cases.table_import import TableMapping
from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.workflows import tables

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information", "Unsafe"]
SPELLINGS = ["Insufficient Info", "supported", " Supported ", "UNSAFE", "partially  supported"]
BLANKS = ["", "  "]
HELD = ["Maybe", "Supported|Unsafe"]
MISSING = ["stage", "ecog_status|stage", "Stage; PD-L1 expression", "", "prior_therapy,brain_metastasis"]
BAD_MISSING = ["nonsense"]
RATERS = ["onc_a", "onc_b", "onc_c"]


def _label(rng: random.Random, messy: bool) -> str:
    roll = rng.random()
    if messy and roll < 0.06:
        return rng.choice(HELD)
    if messy and roll < 0.15:
        return rng.choice(BLANKS)
    if roll < 0.3:
        return rng.choice(SPELLINGS)
    return rng.choice(LABELS)


def _ids(rng: random.Random, n: int, messy: bool) -> list[str]:
    ids = [f"C{i:03d}" for i in range(n)]
    if messy:
        kind = rng.choice(["dup", "twin", "blank", "placeholder", "control", "fancy", "none"])
        i, j = rng.randrange(n), rng.randrange(n)
        if kind == "dup":
            ids[j] = ids[i]
        elif kind == "twin":
            ids[j] = ids[i].lower() if i != j else ids[j]
        elif kind == "blank":
            ids[j] = " "
        elif kind == "placeholder":
            ids[j] = "NA"
        elif kind == "fancy":  # quotes, commas, backslashes and letters beyond ASCII: CSV and JSON escaping
            ids[j] = rng.choice(['Ca"fé 1', "Ω-2", "x\\y", "a,b", "007"])
        elif kind == "control":
            ids[j] = ids[j] + "\u202e"
    return ids


def _table(rng: random.Random, seed: int) -> tuple[pd.DataFrame, TableMapping]:
    """A random table and the mapping that reads it."""
    n = rng.randrange(3, 25)
    messy = rng.random() < 0.5
    ids = _ids(rng, n, messy)
    extra = rng.random() < 0.4
    rationale = rng.random() < 0.4
    shape = rng.choice(["wide", "wide_fields", "long_label", "long_named"])
    cols: dict[str, list[str]] = {"case_id": ids}
    if extra:
        cols["output_id"] = [f"O{i % 4}" if rng.random() < 0.8 else "" for i in range(n)]
        cols["model"] = [rng.choice(["m1", "m2", ""]) for _ in range(n)]
    kw: dict = {"item_col": "case_id"}
    if extra:
        kw.update(output_col="output_id", model_col="model", case_col=None)
        kw["item_col"] = "case_id"
    if shape in ("wide", "wide_fields"):
        for r in RATERS[:2]:
            cols[f"safety_label_{r}"] = [_label(rng, messy) for _ in range(n)]
            if shape == "wide_fields":
                cols[f"missing_info_{r}"] = [
                    rng.choice(BAD_MISSING if messy and rng.random() < 0.1 else MISSING) for _ in range(n)
                ]
            if rationale:
                cols[f"why_{r}"] = [rng.choice(["", "looks fine", "  see notes ", "x, y"]) for _ in range(n)]
        if shape == "wide":
            kw.update(raters={r: f"safety_label_{r}" for r in RATERS[:2]}, field="safety_label")
        else:
            kw.update(raters={r: f"{{field}}_{r}" for r in RATERS[:2]})
        if rationale:
            kw["rationale_cols"] = {r: f"why_{r}" for r in RATERS[:2]}
        if messy and rng.random() < 0.3:  # a row of empty cells (a spreadsheet's trailing row)
            for col in cols.values():
                col.append("")
        return pd.DataFrame(cols), TableMapping(**kw)
    rows = []
    for i in range(len(ids)):
        for r in RATERS[: rng.choice([2, 3])]:
            if rng.random() < 0.1:
                continue
            row = {k: v[i] for k, v in cols.items()}
            row["who"] = {"onc_a": "Dr A"}.get(r, r) if seed % 3 == 0 else r
            row["safety_label"] = _label(rng, messy)
            if shape == "long_named":
                row["missing_info"] = rng.choice(MISSING)
            if rationale:
                row["rationale"] = rng.choice(["", "fine", " padded "])
            rows.append(row)
    if messy and rows and rng.random() < 0.5:
        rows.append(dict(rows[rng.randrange(len(rows))]))  # a repeated row (identical)
    if messy and rng.random() < 0.1:
        rows.append({**rows[0], "who": "dr_unknown"})
    df = pd.DataFrame(rows)
    kw.update(rater_col="who")
    if seed % 3 == 0:
        kw["rater_names"] = {"Dr A": "onc_a"}
    if shape == "long_label":
        df = df.rename(columns={"safety_label": "label"})
        kw.update(label_col="label", field="safety_label")
    return df, TableMapping(**kw)


def _write(df: pd.DataFrame, path: Path) -> None:
    suffix = path.suffix
    if suffix == ".csv":
        df.to_csv(path, index=False)
    elif suffix == ".tsv":
        df.to_csv(path, index=False, sep="\t")
    elif suffix == ".xlsx":
        df.to_excel(path, index=False)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in df.to_dict("records")), encoding="utf-8")


def _outcome(study_dir: Path, call, tag: str) -> list[str]:
    """What one pull gives: its summary text, or its error; then the study's files, clocks removed."""
    try:
        res = call()
        out = ["ok", res.describe()]
    except GoldboardError as exc:
        out = ["error", str(exc)]
    for p in sorted(study_dir.rglob("*")):
        if p.is_file() and p.suffix in (".csv", ".json", ".jsonl", ".toml"):
            text = p.read_text(encoding="utf-8")
            text = re.sub(r'"?(pulled_at|created_at)"?\s*[:=]\s*"[^"]*"', r"\1", text)
            out.append(f"{p.relative_to(study_dir)}\n{text}")
    return [x.replace(str(study_dir), tag) for x in out]


def _scenario(tmp_path: Path, seed: int, monkeypatch, by_rows: bool, used: list) -> list[str]:
    rng = random.Random(seed)
    suffix = rng.choice([".csv", ".csv", ".csv", ".tsv", ".xlsx", ".jsonl"])
    tdir = tmp_path / "tables"
    df, mapping = _table(rng, seed)
    follow = rng.choice(["none", "changed", "other_source"])
    v1, v2 = tdir / f"v1{suffix}", tdir / f"v2{suffix}"
    if not tdir.exists():  # written once: both runs read the same bytes (a workbook holds its time)
        tdir.mkdir(parents=True)
        df2 = df.copy()
        col = next(c for c in df2.columns if "label" in c)
        df2.loc[df2.index[0], col] = "Unsafe"
        _write(df, v1)
        _write(df2, v2)
    first, second = tdir / f"t{seed}{suffix}", tdir / f"u{seed}{suffix}"
    first.write_bytes(v1.read_bytes())
    second.write_bytes(v2.read_bytes())
    study_dir = tmp_path / ("rows" if by_rows else "cols") / "S"
    study = Study.init(study_dir, "mtb_unsafe", RATERS)
    with monkeypatch.context() as mp:
        if by_rows:  # the code before the column path: cells read by read_records, then row by row
            mp.setattr(tables, "read_columns", lambda *a, **k: None)
            mp.setattr(tables, "read_csv_cells", lambda *a, **k: None)
        else:
            real = tables.collect_columns
            mp.setattr(tables, "collect_columns", lambda *a, **k: used.append(seed) or real(*a, **k))
        out = _outcome(study_dir, lambda: tables.pull_table(study, first, mapping), "S")
        if follow == "changed":
            first.write_bytes(v2.read_bytes())
            out += _outcome(study_dir, lambda: tables.pull_table(Study.open(study_dir), first, mapping), "S")
        elif follow == "other_source":
            out += _outcome(
                study_dir, lambda: tables.pull_table(Study.open(study_dir), second, mapping, round_number=1), "S"
            )
    return out


@pytest.mark.parametrize("block", seeds(4, quick=1))
def test_column_and_row_pulls_write_the_same_files_and_messages(tmp_path, monkeypatch, block):
    used: list[int] = []
    seeds = range(block * 30, block * 30 + 30)
    for seed in seeds:
        got = _scenario(tmp_path / str(seed), seed, monkeypatch, False, used)
        want = _scenario(tmp_path / str(seed), seed, monkeypatch, True, [])
        assert got == want, f"seed {seed}"
    assert len(set(used)) >= 8, f"the column path read only {len(set(used))} of {len(seeds)} scenarios"


def test_the_column_reader_takes_a_plain_csv_and_leaves_the_rest_to_the_row_reader(tmp_path):
    """A clean CSV is read by columns; a blank item id, a held-out value, a repeated row and a
    REDCap code go to the row-wise reader (``None``), which names the row."""
    from goldboard.fileio import read_csv_cells
    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb_unsafe")
    m = TableMapping(item_col="case_id", raters={"onc_a": "a", "onc_b": "b"}, field="safety_label")
    p = tmp_path / "t.csv"

    def read(text: str):
        p.write_text(text, encoding="utf-8")
        df = read_csv_cells(p)
        assert df is not None
        return columns.read_columns(df, m, schema, ["onc_a", "onc_b"], source=str(p))

    ok = read("case_id,a,b\nC1,Supported,Insufficient Info\nC2,Unsafe,\n")
    assert ok is not None and ok.rating_count == 3 and ok.blank == {"onc_b": 1}
    assert ok.normalised == [
        {"field": "safety_label", "from": "Insufficient Info", "to": "Insufficient Information", "n": 1}
    ]
    assert read("case_id,a,b\n ,Supported,Unsafe\n") is None  # no item id, and no other row
    gap = read("case_id,a,b\nC1,Supported,Unsafe\n ,Unsafe,\n,,\n")  # rows without an item id: held out
    assert gap is not None and gap.rating_count == 2 and gap.rows == 3
    assert gap.problems == [(3, "case_id: no item id", {"a": "Unsafe"}), (4, "case_id: no item id", {})]
    held = read("case_id,a,b\nC1,Maybe,Unsafe\n")  # a value held out: read, and named invalid
    assert held is not None and held.reasons[held.combo[0]] == [
        "safety_label: 'Maybe' is not a value of safety_label (allowed: Supported, Partially Supported, Unsupported, Insufficient Information, Unsafe)"
    ]
    assert read("case_id,a,b\nC1,Supported,Unsafe\nC1,Supported,Unsafe\n") is None  # a repeated row
    assert read("case_id,a,b\nC1,Supported,Unsafe\nc1,Supported,Unsafe\n") is None  # twin ids
    assert read("case_id,a,b\nNA,Supported,Unsafe\n") is None  # a placeholder id


def test_read_csv_cells_gives_read_records_cells_or_none(tmp_path):
    """The column CSV reader gives the cells and lines :func:`read_records` gives, else ``None``."""
    from goldboard.fileio import read_csv_cells, read_records

    p = tmp_path / "t.csv"
    p.write_text('a,b\n1,"x\ny"\n2," q ""z"""\n', encoding="utf-8")
    df = read_csv_cells(p)
    recs = read_records(p)
    assert df is not None and df["_line"].tolist() == [line for line, _ in recs] == [2, 4]
    assert df.drop(columns="_line").to_dict("records") == [r for _, r in recs]
    for bad in ("a,b\n1\n", "a,b\n1,2,3\n", "a,a\n1,2\n", "a,b\n\n1,2\n", 'a,b\n"1"x,2\n', "a,b\n", 'a,b\n1,"2\n'):
        p.write_text(bad, encoding="utf-8")
        assert read_csv_cells(p) is None, bad


def test_same_cells_answers_as_comparing_every_cell_text():
    """The copied-column check (two raters' columns) decides as the comparison of every cell's
    text did, for text columns and for cells of any type (a workbook's numbers, JSON values)."""
    from goldboard.cases.table_import import _same_cells, cell_text

    rng = random.Random(7)
    pool = ["", " ", "a", "a ", " a", "b", 1, 1.0, "1", None, float("nan"), True, "true"]
    for _ in range(400):
        n = rng.randrange(0, 6)
        a = [rng.choice(pool) for _ in range(n)]
        b = list(a) if rng.random() < 0.5 else [rng.choice(pool) for _ in range(n)]
        if rng.random() < 0.3:
            b = [x.strip() if isinstance(x, str) else x for x in b]
        left, right = [cell_text(v) for v in a], [cell_text(v) for v in b]
        want = any(left) and left == right
        got = _same_cells(pd.Series(a, dtype=object), pd.Series(b, dtype=object))
        assert got == want, (a, b)
        if all(isinstance(x, str) for x in a + b):
            assert _same_cells(pd.Series(a, dtype="str"), pd.Series(b, dtype="str")) == want, (a, b)


def test_rule_warnings_are_skipped_only_where_no_rule_can_fire():
    """Without a rating row of missing_info (a multi-select field: never in the grid then) the
    mtb_unsafe rule cannot fire and rule_warnings is empty; with one it is computed and fires."""
    from goldboard.annotate.pull import rule_warnings
    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb_unsafe")
    row = dict.fromkeys(["case_id", "output_id", "model", "rationale", "annotated_at", "lead_time"], "")
    row.update(round=1, task_id="", project_id="", annotation_id="t:2")
    labels = pd.DataFrame([{**row, "item_id": "C1", "rater": "onc_a", "field": "safety_label", "value": "Supported"}])
    assert not tables._rules_may_fire(labels, schema)
    assert rule_warnings(labels, schema, ["onc_a", "onc_b"]) == []
    both = pd.concat(
        [labels, pd.DataFrame([{**row, "item_id": "C1", "rater": "onc_a", "field": "missing_info", "value": "stage"}])],
        ignore_index=True,
    )
    assert tables._rules_may_fire(both, schema)
    assert rule_warnings(both, schema, ["onc_a", "onc_b"])


def test_writers_write_the_bytes_they_wrote_before(tmp_path):
    """write_csv_atomic streams csv_text's bytes; write_jsonl_atomic writes json.dumps's lines."""
    from goldboard.fileio import csv_text, write_csv_atomic, write_jsonl_atomic

    df = pd.DataFrame({"a": ["x\r\ny", 'q"z', "", "a,b", "\u2028", " s "], "b": [1, 2, 3, 4, 5, 6]})
    for frame in (df, df[["a"]].iloc[2:3], df.iloc[0:0]):
        write_csv_atomic(frame, tmp_path / "t.csv")
        assert (tmp_path / "t.csv").read_bytes() == csv_text(frame).encode("utf-8")
    recs = [{"item_id": 'C"1', "x": "é\u2028\n", "rounds": [1, 2], "n": None, "p": Path("a")} for _ in range(5000)]
    write_jsonl_atomic(recs, tmp_path / "u.jsonl")
    want = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in recs)
    assert (tmp_path / "u.jsonl").read_text(encoding="utf-8") == want


def test_without_pyarrow_the_records_reader_pulls_the_same_round(tmp_path, monkeypatch):
    """The column path's cells are Arrow arrays; an install without pyarrow reads the table row by
    row (``read_csv_cells`` says None) and writes the same ratings (a plain pip install once failed here)."""
    import importlib.util

    from goldboard.cases.examples import example_path
    from goldboard.fileio import read_csv_cells

    table = example_path("openmtb")
    args = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
    out = {}
    real = importlib.util.find_spec
    for name in ("arrow", "rows"):
        if name == "rows":
            monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "pyarrow" else real(n, *a))
            assert read_csv_cells(table) is None
        s = tmp_path / name
        invoke_cli("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
        invoke_cli("pull", "--study", s, "--from-table", table, *args, "--field", "safety_label")
        out[name] = (s / "rounds/1/ratings.csv").read_bytes()
    assert out["arrow"] == out["rows"]
