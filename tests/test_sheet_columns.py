"""The review sheet's pieces read from a small study's ratings as columns, without pandas (issue
19), give what the DataFrame path gives -- compared on many generated studies
(``test_flag_columns._random_study``)."""

from __future__ import annotations

import pytest
import test_flag_columns as tfc
from conftest import invoke_cli, seeds

from goldboard.adjudicate.gold import resolve_gold, resolve_gold_columns
from goldboard.cases.ratings_columns import read_rating_columns
from goldboard.study import Study, study_ratings


def _orders(present: list[str]) -> list[list[str]]:
    return [present, present[::-1], sorted(present)[:2]]


@pytest.mark.parametrize("seed", seeds(60, quick=12))
def test_gold_of_the_columns_is_the_gold_of_the_frame(seed, tmp_path):
    st = Study.open(tfc._random_study(tmp_path, seed))
    if len(st.pulled_rounds()) != 1:
        pytest.skip("several rounds: the DataFrame path only")
    table = read_rating_columns(st.ratings_path(1))
    present = [r for r in tfc.RATERS if r in set(table["rater"])]
    ratings = study_ratings(st)
    for raters in _orders(present):
        for round_number in (None, 1):
            cols = resolve_gold_columns(table, st.schema, raters, round_number=round_number)
            if cols is None:
                continue
            frame = resolve_gold(ratings, st.schema, (), raters, round_number=round_number)
            assert list(cols) == list(frame.columns), seed
            assert {c: frame[c].tolist() for c in frame.columns} == cols, (seed, raters)


def test_the_generated_studies_mostly_give_gold_columns(tmp_path):
    """Most generated studies are answered by the columns (else the comparison proves little)."""
    taken = 0
    for seed in range(40):
        st = Study.open(tfc._random_study(tmp_path, seed))
        table = read_rating_columns(st.ratings_path(1))
        present = [r for r in tfc.RATERS if r in set(table["rater"])]
        if len(st.pulled_rounds()) == 1 and resolve_gold_columns(table, st.schema, present) is not None:
            taken += 1
    assert taken >= 25, taken


@pytest.mark.parametrize("seed", seeds(40, quick=10))
def test_ratings_digest_of_the_columns_is_the_digest_of_the_frame(seed, tmp_path):
    """The digest the sheet records (the import checks the ratings against it) is the same either way."""
    from goldboard.adjudicate.review_sheet import ratings_digest, ratings_digest_columns

    st = Study.open(tfc._random_study(tmp_path, seed))
    if len(st.pulled_rounds()) != 1:
        pytest.skip("several rounds: the DataFrame path only")
    table = read_rating_columns(st.ratings_path(1))
    assert ratings_digest_columns(table) == ratings_digest(study_ratings(st))
    for r in ("", "01"):  # a blank round is round 1, as the DataFrame reader reads it
        odd = {**table, "round": [r] * len(table["item_id"])}
        assert ratings_digest_columns(odd) == ratings_digest(study_ratings(st)), r


def _decorate(study, seed: int) -> None:
    """Task links, units with case and output texts, for some items (the workbook shows them)."""
    import csv
    import json
    import random

    rng = random.Random(seed)
    path = study / "rounds" / "1" / "ratings.csv"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        return
    for r in rows:
        if rng.random() < 0.7:
            r["task_id"], r["project_id"] = str(rng.randint(1, 9)), rng.choice(["3", "4", ""])
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    items = sorted({r["item_id"] for r in rows})
    with open(study / "units.jsonl", "w", encoding="utf-8") as fh:
        for item in rng.sample(items, len(items) // 2):
            unit = {"item_id": item, "case_text": rng.choice(tfc.TEXTS), "output_text": rng.choice(tfc.TEXTS)}
            if rng.random() < 0.5:
                del unit["output_text"]
            fh.write(json.dumps(unit) + "\n")
    fields = sorted({r["field"] for r in rows})
    with open(study / "decisions.jsonl", "w", encoding="utf-8") as fh:  # decisions taken: pre-filled
        for k, item in enumerate(rng.sample(items, min(3, len(items)))):
            entry = {"id": f"d{k}", "item_id": item, "field": rng.choice(fields), "decision": "unresolved"}
            fh.write(json.dumps({**entry, "adjudicator": "lead", "reason": "later", "round": 1}) + "\n")
        if seed % 4 == 3:  # an item the ratings do not have: refused, the same way
            fh.write(json.dumps({"id": "dx", "item_id": "nowhere", "field": fields[0], "decision": "x"}) + "\n")


def _workbook_facts(path) -> list:
    """Everything a person or the import sees of a workbook: per sheet its state, protection,
    validations, merges, dimensions, print setup, and per cell value, style, protection,
    link and comment (the fresh sheet id left out)."""
    from openpyxl import load_workbook

    wb = load_workbook(path)
    facts: list = [wb.sheetnames, wb.active.title]
    for ws in wb.worksheets:
        facts.append((ws.title, ws.sheet_state, repr(ws.protection), ws.freeze_panes, ws.print_title_rows))
        facts.append(sorted(repr(dv) for dv in ws.data_validations.dataValidation))
        facts.append(sorted(str(m) for m in ws.merged_cells.ranges))
        facts.append(sorted((k, d.width, d.hidden) for k, d in ws.column_dimensions.items()))
        facts.append(sorted((k, d.height) for k, d in ws.row_dimensions.items()))
        facts.append((repr(ws.page_setup), repr(ws.print_options), ws.auto_filter.ref))
        for row in ws.iter_rows():
            for c in row:
                value = (
                    "SHEET-ID"
                    if ws.title == "_goldboard" and ws.cell(c.row, 1).value == "sheet_id" and c.column == 2
                    else c.value
                )
                facts.append(
                    (
                        c.coordinate,
                        value,
                        repr(c.font),
                        repr(c.fill),
                        repr(c.alignment),
                        repr(c.border),
                        repr(c.protection),
                        c.number_format,
                        c.hyperlink.target if c.hyperlink else None,
                        c.comment.text if c.comment else None,
                    )
                )
    return facts


def _both_ways(root, tmp_path, monkeypatch) -> tuple[list, list]:
    """`adjudicate sheet` (default round and --round 1) with the column path, then with the
    DataFrame path: (exit, stdout, stderr, workbook facts) per run; and what the column path gave."""
    import goldboard.exports.workbook as W
    import goldboard.workflows.adjudication as A

    monkeypatch.setattr(W, "utc_now", lambda: "2026-12-01T00:00:00+00:00")
    taken: list = []
    real = A.study_review_columns
    outs = []
    for quick in (True, False):
        with monkeypatch.context() as m:
            spy = lambda *a, **k: taken.append(real(*a, **k)) or taken[-1]  # noqa: E731
            m.setattr(A, "study_review_columns", spy if quick else (lambda *a, **k: None))
            for round_args in ([], ["--round", "1"]):
                out = tmp_path / f"sheet-{quick}-{len(round_args)}.xlsx"
                res = invoke_cli("adjudicate", "sheet", "--study", root, "-o", out, *round_args)
                facts = _workbook_facts(out) if out.exists() else None
                outs.append(
                    (res.exit_code, res.stdout.replace(str(out), "OUT"), res.stderr.replace(str(out), "OUT"), facts)
                )
    return outs, taken


@pytest.mark.parametrize("seed", seeds(40, quick=6))
def test_the_sheet_of_the_columns_is_the_sheet_of_the_frames(seed, tmp_path, monkeypatch):
    """`adjudicate sheet` writes the same workbook, cell for cell and style for style, whether it
    read the study as columns (no pandas) or as DataFrames; the same counts and the same errors."""
    root = tfc._random_study(tmp_path, seed)
    if seed % 2:
        _decorate(root, seed)
        toml = root / "study.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace('url = ""', 'url = "http://ls.example:8080"'), "utf-8")
    outs, _ = _both_ways(root, tmp_path, monkeypatch)
    assert outs[:2] == outs[2:], seed


@pytest.mark.slow  # 24 studies written both ways (the comparison above does them again)
def test_the_generated_studies_mostly_take_the_sheet_column_path(tmp_path, monkeypatch):
    """Most generated studies are written from the columns (else the comparison proves little)."""
    taken = 0
    for seed in range(24):
        _, got = _both_ways(tfc._random_study(tmp_path, seed), tmp_path, monkeypatch)
        taken += bool(got and got[0] is not None)
    assert taken >= 14, taken


def test_the_openmtb_sheet_is_the_same_both_ways(tmp_path, monkeypatch):
    """The README's study (34 unanimous rows, kappa and alpha on the Summary): same workbook."""
    root = tmp_path / "S"
    invoke_cli("cases", "example", "openmtb", "-o", tmp_path / "t.csv", code=0)
    invoke_cli("study", "init", root, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    invoke_cli(
        "pull", "--study", root, "--from-table", tmp_path / "t.csv", "--item-col", "case_id",
        "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label", "--field", "safety_label", code=0,
    )  # fmt: skip
    outs, taken = _both_ways(root, tmp_path, monkeypatch)
    assert taken and all(t is not None for t in taken)
    assert outs[:2] == outs[2:]
    assert "34 unanimous rows" in outs[0][1] and any("kappa" in str(f) for f in outs[0][3])


def test_a_large_ratings_file_is_read_as_dataframes(tmp_path, monkeypatch):
    """Over SHEET_MAX_BYTES the DataFrame path is quicker: the sheet reads no columns then."""
    import goldboard.workflows.adjudication as A

    root = tfc._random_study(tmp_path, 3)
    st = Study.open(root)
    assert A.study_review_columns(st, []) is not None
    monkeypatch.setattr(A, "SHEET_MAX_BYTES", st.ratings_path(1).stat().st_size - 1)
    assert A.study_review_columns(st, []) is None
