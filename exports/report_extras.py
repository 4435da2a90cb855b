"""Rendering of the report's reviewer sections (Markdown), its warnings grouped and counted,
and the CSV supplement: every table of the report as one CSV file.

The HTML of the sections is in the report template (``sections`` loop); the Markdown here.
The CSVs follow the project's one CSV policy (README "Security"): exact data files written by
:func:`goldboard.fileio.csv_text`, no formula neutralisation -- import them, do not double-click.
"""

from __future__ import annotations

import csv
import json
import numbers
import re
from pathlib import Path
from typing import Any

from goldboard.analysis.report_tables import group_warnings
from goldboard.fileio import CSV_LINETERMINATOR, StagedWrites, atomic_write, write_text_atomic
from goldboard.text import md_escape, md_table

SUPPLEMENT_DIR = "supplement"


def _cell(x: Any) -> str:
    if x is None or (isinstance(x, float) and x != x):
        return ""
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def sections_markdown(sections: list[dict]) -> str:
    out = []
    for s in sections:
        out += [f"## {md_escape(s['title'])}", ""]
        out += [md_escape(p) + "\n" for p in s["paragraphs"]]
        for t in s["tables"]:
            if t.get("title"):
                out += [f"**{md_escape(t['title'])}**", ""]
            out += [md_table(t["header"], t["rows"], right=t.get("right", ())), ""]
            out += [md_escape(n) + "\n" for n in t.get("notes", [])]  # a table's own reading, below it
        for im in s.get("images", []):
            out += [f"_Figure (HTML/PDF report): {md_escape(im['caption'])}_", ""]
    return "\n".join(out)


def grouped_warnings_lines(warnings: list[str]) -> list[str]:
    """``"(6 fields) <message> -- missing_info:a, missing_info:b, ..."``, one line per distinct message."""
    lines = []
    for g in group_warnings(warnings):
        where = f" -- {', '.join(g['fields'])}" if g["fields"] else ""
        count = f"({g['count']}x) " if g["count"] > 1 else ""
        lines.append(f"{count}{g['message']}{where}")
    return lines


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()
    return s[:60] or "table"


def supplement_cells(data: dict) -> dict[str, list[list[str]]]:
    """Every table the report shows, keyed by file stem, as the cell texts of its CSV file (header
    row first), without pandas: each table is laid out as the DataFrame built from the same records
    was until issue 19 (``tests/test_report_columns.py`` keeps that code and holds the two together)
    -- columns in order of first appearance, a missing cell empty, a numeric column with an empty
    cell or a fraction read as floats -- and each cell written by :func:`_cell`."""
    out: dict[str, list[list[str]]] = {}
    for i, f in enumerate(data.get("fields", []), start=1):
        stem = f"{i:02d}_{_slug(f['name'])}"
        keys = ("name", "raters", "n", "value", "ci_low", "ci_high", "se", "ci_method", "band")
        out[f"{stem}_agreement"] = _record_cells([{k: r.get(k) for k in keys} for r in f["headline"]])
        for key in ("prevalence", "per_label", "vs_gold"):
            if f.get(key):
                out[f"{stem}_{key}"] = _record_cells(f[key])
        for c in f.get("confusions", []):
            corner = f"{c['row_rater']} \\ {c['col_rater']}"
            rows = [[lab, *row] for lab, row in zip(c["labels"], c["matrix"])]
            out[f"{stem}_confusion_{_slug(c['row_rater'])}_vs_{_slug(c['col_rater'])}"] = _row_cells(
                [corner, *c["labels"]], rows
            )
    for m in data.get("multi", []):
        out[f"multi_{_slug(m['name'])}"] = _record_cells(m["rows"])
    top = data.get("flags", {}).get("top") or []
    if top:
        out["disagreement_agenda"] = _record_cells(
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
        out["adjudication"] = _record_cells([{"field": k, **v} for k, v in methods.items()])
    if data.get("rounds_change"):
        out["round_over_round"] = _record_cells(data["rounds_change"])
    for s in data.get("sections", []):
        for t in s["tables"]:
            out[t["csv"]] = _row_cells(list(t["header"]), [list(r) for r in t["rows"]])
    if data.get("warnings"):
        out["warnings"] = _record_cells(
            [{**g, "fields": ", ".join(g["fields"])} for g in group_warnings(data["warnings"])]
        )
    return out


def _record_cells(records: list[dict]) -> list[list[str]]:
    """The cells of ``pd.DataFrame(records)`` (columns in order of first appearance)."""
    header = list(dict.fromkeys(k for r in records for k in r))
    return _row_cells(header, [[r.get(k, _MISSING) for k in header] for r in records])


#: a cell a record lacks (a DataFrame's NaN)
_MISSING = float("nan")


def _row_cells(header: list, rows: list[list]) -> list[list[str]]:
    """The cells of ``pd.DataFrame(rows, columns=header).map(_cell)``, header row first."""
    columns = [_column_cells([r[j] for r in rows]) for j in range(len(header))]
    return [[str(h) for h in header], *([col[k] for col in columns] for k in range(len(rows)))]


def _column_cells(values: list) -> list[str]:
    """One column's cells as pandas types it: whole numbers and nothing else stay whole numbers; with
    a fraction or an empty cell (None, NaN) a numeric column is a float column (``1`` is ``1.0``)."""

    def is_number(x: Any) -> bool:
        return isinstance(x, numbers.Real) and not isinstance(x, bool) and type(x).__name__ != "bool_"

    filled = [x for x in values if not (x is None or (isinstance(x, float) and x != x))]
    if (
        filled
        and all(is_number(x) for x in filled)
        and (len(filled) < len(values) or not all(isinstance(x, numbers.Integral) for x in filled))
    ):
        return [_cell(float(x)) if x is not None else "" for x in values]
    return [_cell(x) for x in values]


#: the list of files the last report wrote into its supplement folder
SUPPLEMENT_MANIFEST = ".goldboard-supplement.json"


def supplement_owner(directory: str | Path) -> dict[str, str]:
    """Whose supplement the folder holds, as its manifest records it: ``{"study", "study_name",
    "study_created", "report"}`` (the study folder, its name and creation time, the report file);
    empty when the folder has no manifest or one written before goldboard recorded the owner."""
    try:
        rec = json.loads((Path(directory) / SUPPLEMENT_MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(rec, dict):
        return {}
    return {k: str(rec[k]) for k in ("study", "study_name", "study_created", "report") if isinstance(rec.get(k), str)}


def write_supplement(
    data: dict, directory: str | Path, owner: dict[str, str] | None = None, stage: StagedWrites | None = None
) -> list[Path]:
    """Write :func:`supplement_cells` as ``<directory>/<stem>.csv`` (each atomically; exact
    cells, the project's CSV policy).  CSVs an earlier report wrote there (listed in the
    folder's manifest) that this one no longer has are removed; no other file is touched.
    ``owner`` (``{"study", "study_name", "report"}``) is recorded in the manifest
    (:func:`supplement_owner`).  ``stage``: the files are renamed into place (and the old CSVs
    removed) by its commit, with the report they belong to.  Returns the paths written."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    manifest = d / SUPPLEMENT_MANIFEST
    try:
        before = set(json.loads(manifest.read_text(encoding="utf-8")).get("files", []))
    except (OSError, ValueError, AttributeError):
        before = set()
    written = []
    for stem, cells in supplement_cells(data).items():
        p = d / f"{stem}.csv"
        with atomic_write(p, newline="", stage=stage) as fh:  # fileio.csv_text's spelling: RFC 4180, CRLF
            csv.writer(fh, lineterminator=CSV_LINETERMINATOR, quoting=csv.QUOTE_MINIMAL).writerows(cells)
        written.append(p)
    keep = {p.name for p in written}

    def remove_old() -> None:
        for name in before - keep:
            old = d / Path(str(name)).name
            if old.suffix == ".csv" and old.exists():
                old.unlink()

    write_text_atomic(manifest, json.dumps({**(owner or {}), "files": sorted(keep)}, indent=1) + "\n", stage=stage)
    if stage is None:
        remove_old()
    else:
        stage.after.append(remove_old)
    return written
