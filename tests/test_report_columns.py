"""`goldboard report` of a small study read as columns, without pandas (issue 19,
``workflows/report_columns.py``), writes what the DataFrame path writes: the same report bytes
(Markdown and HTML), the same supplement files, the same output, errors and exit code -- compared
on many generated studies (``test_flag_columns._random_study``: aliases, blanks, values outside the
schema, repeated ratings, second rounds, padded ids; here also lead times, units, decisions and gold
releases) and on the OpenMTB-Audit study."""

from __future__ import annotations

import csv
import json
import random

import pandas as pd
import pytest
import test_flag_columns as tfc
from conftest import invoke_cli, seeds

from goldboard.analysis.report_tables import group_warnings
from goldboard.exports.report_extras import _slug

#: the option sets each generated study is reported with
VARIANTS = [
    ["--format", "markdown"],
    ["--format", "markdown", "--round", "1"],
    ["--format", "markdown", "--ci", "auto"],
    ["--format", "markdown", "--bootstrap", "200", "--seed", "3"],
    ["--format", "markdown", "--round", "2"],
    ["--format", "markdown", "--no-supplement"],
]


def _report_both_ways(study, tmp_path, monkeypatch, variants) -> tuple[list, list]:
    """Each variant's (exit, stdout, stderr, report bytes, supplement files) with the column path
    and with the DataFrame path; and what report_columns answered on the column runs."""
    import goldboard.workflows.report as R

    monkeypatch.setattr(R, "utc_now", lambda: "2026-12-01T00:00:00+00:00")
    taken: list = []
    real = R.report_columns
    outs: dict[bool, list] = {True: [], False: []}
    for quick in (True, False):
        with monkeypatch.context() as m:
            spy = lambda *a, **k: taken.append(real(*a, **k)) or taken[-1]  # noqa: E731
            m.setattr(R, "report_columns", spy if quick else (lambda *a, **k: None))
            for k, extra in enumerate(variants):
                folder = tmp_path / f"out-{quick}-{k}"
                out = folder / ("report.html" if "html" in extra else "report.md")
                res = invoke_cli("report", "--study", study, "-o", out, *extra)
                sup = folder / "supplement"
                files = {p.name: p.read_bytes() for p in sorted(sup.iterdir())} if sup.exists() else None
                text = out.read_bytes().replace(str(folder).encode(), b"OUT") if out.exists() else None
                said = [s.replace(str(folder), "OUT") for s in (res.stdout, res.stderr)]
                outs[quick].append((res.exit_code, *said, text, files))
    return outs, taken


def _decorate(study, seed: int) -> None:
    """Lead times (some), units, a decisions log (some) on a generated study's first round."""
    rng = random.Random(seed)
    path = study / "rounds" / "1" / "ratings.csv"
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        return
    if seed % 3 == 0:
        for r in rows:
            r["lead_time"] = rng.choice(["", "12.5", "30", "7"])
        with open(path, "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
    items = sorted({r["item_id"] for r in rows})
    with open(study / "units.jsonl", "w", encoding="utf-8") as fh:
        for item in items:
            fh.write(json.dumps({"item_id": item, "case_text": rng.choice(tfc.TEXTS)}) + "\n")
    if seed % 4 == 1:
        fields = sorted({r["field"] for r in rows})
        with open(study / "decisions.jsonl", "w", encoding="utf-8") as fh:
            entry = {"id": "d0", "item_id": items[0], "field": fields[0], "decision": "unresolved"}
            fh.write(json.dumps({**entry, "adjudicator": "lead", "reason": "later", "round": 1}) + "\n")


@pytest.mark.parametrize("seed", seeds(40, quick=6))
def test_the_report_of_the_columns_is_the_report_of_the_frames(seed, tmp_path, monkeypatch):
    """Markdown report, supplement, stdout, stderr and exit code: the same bytes both ways."""
    study = tfc._random_study(tmp_path, seed)
    if seed % 2:
        _decorate(study, seed)
    outs, _ = _report_both_ways(study, tmp_path, monkeypatch, VARIANTS)
    for k, extra in enumerate(VARIANTS):
        assert outs[True][k] == outs[False][k], (seed, extra)


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(5, marks=pytest.mark.slow)])
def test_the_html_report_of_the_columns_is_the_html_of_the_frames(seed, tmp_path, monkeypatch):
    """The HTML report (heatmaps embedded) is the same bytes both ways too."""
    study = tfc._random_study(tmp_path, seed)
    outs, taken = _report_both_ways(study, tmp_path, monkeypatch, [["--format", "html"]])
    assert outs[True] == outs[False], seed
    assert outs[True][0][0] == 0 and taken[0] is not None, "the column path was not taken"


@pytest.mark.slow  # 24 generated studies; the full suite
def test_the_generated_studies_mostly_take_the_column_path(tmp_path, monkeypatch):
    """Most generated studies are reported from the columns (else the comparison proves little)."""
    taken = 0
    for seed in range(24):
        # a folder per study: a report's supplement folder is never another study's (issue 23, R_sup)
        _, got = _report_both_ways(tfc._random_study(tmp_path, seed), tmp_path / f"s{seed}", monkeypatch, VARIANTS[:1])
        taken += bool(got and got[0] is not None)
    assert taken >= 12, taken


def _openmtb(tmp_path):
    root = tmp_path / "S"
    invoke_cli("cases", "example", "openmtb", "-o", tmp_path / "t.csv", code=0)
    invoke_cli("study", "init", root, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    invoke_cli(
        "pull", "--study", root, "--from-table", tmp_path / "t.csv", "--item-col", "case_id",
        "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label", "--field", "safety_label", code=0,
    )  # fmt: skip
    return root


def test_the_openmtb_report_is_the_same_both_ways(tmp_path, monkeypatch):
    """The README's study: Markdown and HTML, supplement included, from the columns."""
    root = _openmtb(tmp_path)
    variants = [["--format", "markdown"], ["--format", "html"], ["--format", "markdown", "--ci", "auto"]]
    outs, taken = _report_both_ways(root, tmp_path, monkeypatch, variants)
    assert taken and all(t is not None for t in taken)
    assert outs[True] == outs[False]
    md = outs[True][0][3].decode()
    assert "| Cohen's kappa" in md and "50 items" in md
    assert len(outs[True][0][4]) >= 8  # the supplement's CSV files


def test_with_decisions_or_a_release_the_report_reads_dataframes(tmp_path, monkeypatch):
    """A decision in the log, or a gold release: the gold comes from them, by the DataFrame path
    (report_columns answers None), and the report is the same as without the column path."""
    root = _openmtb(tmp_path)
    (root / "decisions.jsonl").write_text("\n", "utf-8")  # an empty log: nothing decided, the columns answer
    outs, taken = _report_both_ways(root, tmp_path, monkeypatch, [["--format", "markdown"]])
    assert taken[0] is not None and outs[True] == outs[False]
    entry = {"id": "d0", "item_id": "MTB-94338760", "field": "safety_label", "decision": "Supported"}
    (root / "decisions.jsonl").write_text(json.dumps({**entry, "adjudicator": "lead", "round": 1}) + "\n", "utf-8")
    outs, taken = _report_both_ways(root, tmp_path, monkeypatch, [["--format", "markdown"]])
    assert taken == [None] and outs[True] == outs[False]
    invoke_cli("gold", "export", "--study", root, code=0)
    outs, taken = _report_both_ways(root, tmp_path, monkeypatch, [["--format", "markdown"]])
    assert taken == [None] and outs[True] == outs[False]
    assert "v1" in outs[True][0][3].decode()


def _supplement_tables(data: dict) -> dict[str, pd.DataFrame]:
    """Every table the report shows, as DataFrames keyed by file stem: how the supplement was laid
    out until issue 19 (exports/report_extras.py's code then), the reference of supplement_cells."""
    out: dict[str, pd.DataFrame] = {}
    for i, f in enumerate(data.get("fields", []), start=1):
        stem = f"{i:02d}_{_slug(f['name'])}"
        out[f"{stem}_agreement"] = pd.DataFrame(
            [
                {k: r.get(k) for k in ("name", "raters", "n", "value", "ci_low", "ci_high", "se", "ci_method", "band")}
                for r in f["headline"]
            ]
        )
        if f.get("prevalence"):
            out[f"{stem}_prevalence"] = pd.DataFrame(f["prevalence"])
        if f.get("per_label"):
            out[f"{stem}_per_label"] = pd.DataFrame(f["per_label"])
        if f.get("vs_gold"):
            out[f"{stem}_vs_gold"] = pd.DataFrame(f["vs_gold"])
        for c in f.get("confusions", []):
            m = pd.DataFrame(c["matrix"], index=c["labels"], columns=c["labels"])
            m.index.name = f"{c['row_rater']} \\ {c['col_rater']}"
            out[f"{stem}_confusion_{_slug(c['row_rater'])}_vs_{_slug(c['col_rater'])}"] = m.reset_index()
    for m in data.get("multi", []):
        out[f"multi_{_slug(m['name'])}"] = pd.DataFrame(m["rows"])
    top = data.get("flags", {}).get("top") or []
    if top:
        out["disagreement_agenda"] = pd.DataFrame(
            [
                {
                    "agenda": t["agenda"],
                    "item_id": t["item_id"],
                    "field": t["field"],
                    **{f"value_{r}": v for r, v in t["values"].items()},
                    "flags": ", ".join(t["boundaries"] + t["triggers"]) or ", ".join(t["kinds"]),
                }
                for t in top
            ]
        )
    methods = data.get("adjudication", {}).get("methods") or {}
    if methods:
        out["adjudication"] = pd.DataFrame([{"field": k, **v} for k, v in methods.items()])
    if data.get("rounds_change"):
        out["round_over_round"] = pd.DataFrame(data["rounds_change"])
    for s in data.get("sections", []):
        for t in s["tables"]:
            out[t["csv"]] = pd.DataFrame(t["rows"], columns=t["header"])
    if data.get("warnings"):
        out["warnings"] = pd.DataFrame(group_warnings(data["warnings"])).assign(
            fields=lambda d: d["fields"].map(", ".join)
        )
    return out


def _frame_files(data: dict) -> dict[str, str]:
    """The supplement as the DataFrames wrote it (``_supplement_tables``, each cell by ``_cell``)."""
    from goldboard.exports.report_extras import _cell
    from goldboard.fileio import csv_text

    out = {}
    for stem, df in _supplement_tables(data).items():
        cells = df.map(_cell)
        cells.columns = [str(c) for c in df.columns]
        out[stem] = csv_text(cells)
    return out


@pytest.mark.parametrize("seed", seeds(60, quick=12))
def test_the_supplement_cells_are_the_cells_the_dataframes_wrote(seed):
    """``supplement_cells`` lays out a table as pandas would (a missing cell, None or NaN among whole
    numbers makes them floats: 1234567 then reads 1.23457e+06; booleans and text stay as they are)."""
    import csv as csv_module
    import io

    import numpy as np

    from goldboard.exports.report_extras import supplement_cells

    rng = random.Random(seed)
    pool = [None, float("nan"), 0, 7, 1234567, 2.5, 1e-9, "x", "a, b", 'say "hi"', "", True, False]
    pool += [np.int64(5), np.float64(0.25), "two\nlines"]
    keys = ["a", "b", "c", "d"]

    def records(n):
        return [{k: rng.choice(pool) for k in keys if rng.random() < 0.85} for _ in range(n)]

    data = {
        "fields": [
            {
                "name": "f one",
                "headline": [{"name": "kappa", "n": rng.choice([3, None]), "value": rng.choice(pool)}],
                "prevalence": records(rng.randint(0, 4)),
                "per_label": records(rng.randint(0, 4)),
                "confusions": [
                    {"matrix": [[1, 2], [3, 1234567]], "labels": ["x", "y"], "row_rater": "a", "col_rater": "b"}
                ],
            }
        ],
        "multi": [{"name": "m", "rows": records(3)}],
        "rounds_change": records(rng.randint(1, 5)),
        "adjudication": {"methods": {"f": {"unanimous": 3, "adjudicated": 0, "unresolved": 1}}},
        "sections": [
            {"tables": [{"csv": "t", "header": keys, "rows": [list(r.values()) for r in records(3) if len(r) == 4]}]}
        ],
        "warnings": ["f: one thing", "g: one thing", "other"],
    }
    want = _frame_files(data)
    got = {}
    for stem, cells in supplement_cells(data).items():
        buf = io.StringIO(newline="")
        csv_module.writer(buf, lineterminator="\r\n", quoting=csv_module.QUOTE_MINIMAL).writerows(cells)
        got[stem] = buf.getvalue()
    assert got == want, seed


def test_software_versions_are_importlib_metadatas(tmp_path, monkeypatch):
    """The report's software versions are read from the dist-info folders without importing
    importlib.metadata: the same answers, installed or not, here and on a made-up sys.path (the first
    folder wins; an .egg-info, a missing METADATA or an archive on sys.path is left to importlib.metadata)."""
    import sys
    from importlib import metadata

    from goldboard.exports.report import SOFTWARE, _dist_info_versions, software_versions

    def theirs(names):
        out = {}
        for n in names:
            try:
                out[n] = metadata.version(n)
            except metadata.PackageNotFoundError:
                continue
        return out

    mine = software_versions()
    assert {k: v for k, v in mine.items() if k in SOFTWARE} == theirs(SOFTWARE)

    def dist(folder, name, version, kind="dist-info", meta=True):
        d = folder / f"{name}-{version}.{kind}"
        d.mkdir(parents=True)
        if meta:
            (d / ("METADATA" if kind == "dist-info" else "PKG-INFO")).write_text(
                f"Metadata-Version: 2.1\nName: {name}\nversion: {version}\n\nBody: no\n", "utf-8"
            )

    one, two = tmp_path / "one", tmp_path / "two"
    dist(one, "Alpha_Pkg", "1.0")
    dist(two, "alpha_pkg", "2.0")
    dist(two, "beta.pkg", "0.3")
    dist(one, "gamma", "0.1", kind="egg-info")
    dist(two, "delta", "5", meta=False)
    names = ("alpha-pkg", "beta-pkg", "gamma", "delta", "absent")
    monkeypatch.setattr(sys, "path", [str(one), str(two)])
    got = _dist_info_versions(names)
    assert got == {"alpha-pkg": "1.0", "beta-pkg": "0.3", "gamma": "?", "delta": "?", "absent": None}
    assert {n: v for n, v in got.items() if v not in ("?", None)} == {
        n: v for n, v in theirs(names).items() if got[n] != "?"
    }
    (tmp_path / "lib.zip").write_bytes(b"PK")
    monkeypatch.setattr(sys, "path", [str(one), str(tmp_path / "lib.zip"), str(two)])
    assert _dist_info_versions(names)["beta-pkg"] == "?"  # after an archive: importlib.metadata answers
