"""Renderings of an agreement result (the CLI's ``--format``): a text table, Markdown,
CSV (one row per statistic) and JSON.  Table and Markdown show the Landis & Koch (1977)
band of each chance-corrected coefficient, labelled as a convention."""

from __future__ import annotations

import csv
import io
import json
import re

from goldboard.analysis.agreement import landis_koch_band, statistic_name
from goldboard.analysis.coverage import shortfall_note
from goldboard.fileio import CSV_LINETERMINATOR
from goldboard.text import md_escape, md_table

#: the Landis & Koch (1977) bands with the edges :func:`landis_koch_band` uses (an estimate of
#: 0.601 is above .60, so "substantial"; exactly .60 is "moderate")
LK_EDGES = "<0 poor, 0-0.20 slight, >0.20-0.40 fair, >0.40-0.60 moderate, >0.60-0.80 substantial, >0.80 almost perfect"
_LK_NOTE = f"Band: Landis & Koch (1977) convention ({LK_EDGES}); a label, not a test."

NOT_ESTIMABLE = "not estimable"


def _fmt(x, digits=3) -> str:
    if x is None or x != x:
        return "-"
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text  # never "-0.000"


def _degenerate(row: dict) -> bool:
    """A Wald interval collapsed to its point by a zero SE (a degenerate table)."""
    return row.get("se") == 0 and row.get("ci_low") is not None and row["ci_low"] == row.get("ci_high")


def _value(row: dict) -> str:
    v = row.get("value")
    return NOT_ESTIMABLE if v is None or v != v else _fmt(v)


def _ci(row: dict) -> str:
    """The 95% CI as the report prints it: "not estimable" for an undefined value or a collapsed interval."""
    if row.get("value") is None or row["value"] != row["value"]:
        return NOT_ESTIMABLE
    if row.get("ci_low") is None:
        return "-"
    if _degenerate(row):
        return NOT_ESTIMABLE + " (degenerate table)"
    return f"{_fmt(row['ci_low'])} to {_fmt(row['ci_high'])}"


def _stat_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    groups = any(r["group"] is not None for r in result["statistics"])
    head = (
        ["Statistic", "Raters"] + (["Group"] if groups else []) + ["n", "Value", "95% CI", "SE", "CI method", "Band*"]
    )
    rows = []
    for r in result["statistics"]:
        raters = "all" if len(r["raters"]) > 2 and r["raters"] == result["raters"] else " / ".join(r["raters"])
        band = "" if r["statistic"] == "percent_agreement" else (landis_koch_band(r["value"]) or "-")
        name = statistic_name(r)
        if r["statistic"] == "percent_agreement" and len(r["raters"]) > 2:
            name += " (mean over rater pairs)"
        rows.append(
            [name, raters]
            + ([r["group"] or "all"] if groups else [])
            + [str(r["n_items"]), _value(r), _ci(r), _fmt(r["se"]), r["ci_method"] or "-", band]
        )
    return head, rows


def _label_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    groups = any(e["group"] is not None for e in result["per_label"])
    head = (
        ["Label"]
        + (["Group"] if groups else [])
        + [
            "Prevalence",
            "Pos. agreement (95% CI)",
            "Neg. agreement (95% CI)",
            "Kappa vs rest (95% CI)",
            "PABAK",
            "Prev. index",
            "Bias index",
        ]
    )
    rows = []
    for e in result["per_label"]:

        def est(d):
            if d is None or d.get("value") is None:
                return "-"
            if d.get("ci_low") is None:
                return _fmt(d["value"])
            if round(d["ci_low"], 3) == round(d["ci_high"], 3):  # as the report: never "(0.000 to 0.000)"
                return f"{_fmt(d['value'])} (CI not estimable: degenerate table)"
            return f"{_fmt(d['value'])} ({_fmt(d['ci_low'])} to {_fmt(d['ci_high'])})"

        rows.append(
            [e["label"]]
            + ([e["group"] or "all"] if groups else [])
            + [
                _fmt(e["prevalence"]),
                est(e["positive_agreement"]),
                est(e["negative_agreement"]),
                est(e["kappa"]),
                _fmt((e.get("pabak") or {}).get("value")),
                _fmt(e["prevalence_index"]),
                _fmt(e["bias_index"]),
            ]
        )
    return head, rows


def _confusion_blocks(result: dict) -> list[tuple[str, list[str], list[list[str]]]]:
    cats = result["confusion"]["categories"]
    out = []
    for p in result["confusion"]["pairs"]:
        a, b = p["raters"]
        title = f"{a} (rows) x {b} (columns), {p['n_items']} items" + (f", group {p['group']}" if p["group"] else "")
        head = [f"{a} \\ {b}"] + cats + ["total"]
        rows = [[c] + [str(v) for v in row] + [str(sum(row))] for c, row in zip(cats, p["matrix"])]
        cols = [sum(row[j] for row in p["matrix"]) for j in range(len(cats))]
        rows.append(["total"] + [str(v) for v in cols] + [str(sum(cols))])
        out.append((title, head, rows))
    return out


def _aligned(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    numeric = [i > 0 and all(re.fullmatch(r"[-\d.]+( to [-\d.]+)?|-", r[i]) for r in rows) for i in range(len(head))]

    def line(cells):
        return "  ".join(
            c.rjust(w) if numeric[i] else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    return "\n".join([line(head), "  ".join("-" * w for w in widths)] + [line(r) for r in rows])


def _describe(result: dict) -> str:
    return (
        f"{result['n_items']} items, {result['n_raters']} raters ({', '.join(result['raters'])}), "
        f"level {result['level']}, categories: {', '.join(result['categories'])}"
    )


def render_table(result: dict, title: str | None = None) -> str:
    """A terminal-readable rendering: statistics, per-label agreement, confusion matrices."""
    parts = []
    if title:
        parts += [title, "=" * len(title)]
    parts.append(_describe(result))
    parts += ["", _aligned(*_stat_rows(result)), "* " + _LK_NOTE]
    parts += [note] if (note := shortfall_note(result)) else []
    if result["per_label"]:
        parts += ["", "Per label (one vs rest)", _aligned(*_label_rows(result))]
    for t, head, rows in _confusion_blocks(result):
        parts += ["", "Confusion: " + t, _aligned(head, rows)]
    return "\n".join(parts) + "\n"


def _md_table(head: list[str], rows: list[list[str]]) -> str:
    """Markdown table: first column left-aligned, the numbers right-aligned."""
    return md_table(head, rows, right=range(1, len(head)))


def render_markdown(result: dict, title: str | None = None) -> str:
    """GitHub-flavoured markdown tables (statistics, per label, confusion matrices)."""
    parts = []
    if title:
        parts += [f"## {md_escape(title)}", ""]
    parts += [md_escape(_describe(result)), "", _md_table(*_stat_rows(result)), "", "\\* " + _LK_NOTE]
    parts += ["", md_escape(note)] if (note := shortfall_note(result)) else []
    if result["per_label"]:
        parts += ["", "### Per label (one vs rest)", "", _md_table(*_label_rows(result))]
    for t, head, rows in _confusion_blocks(result):
        parts += ["", f"### Confusion: {md_escape(t)}", "", _md_table(head, rows)]
    return "\n".join(parts) + "\n"


CSV_COLUMNS = [
    "statistic",
    "weights",
    "level",
    "raters",
    "group",
    "n_items",
    "value",
    "se",
    "ci_low",
    "ci_high",
    "ci_method",
]


def render_csv(result: dict) -> str:
    """One CSV row per statistic (raters joined with ``;``); full precision."""

    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator=CSV_LINETERMINATOR)
    w.writerow(CSV_COLUMNS)
    for r in result["statistics"]:
        w.writerow(
            [r["statistic"], r["weights"], r["level"] or "", ";".join(r["raters"]), r["group"] or "", r["n_items"]]
            + ["" if r[c] is None else repr(float(r[c])) for c in ("value", "se", "ci_low", "ci_high")]
            + [r["ci_method"] or ""]
        )
    return buf.getvalue()


def render_json(result: dict) -> str:
    """The contract dict as indented JSON (NaN never appears: undefined values are null), with
    ``"coverage"``: the sentence naming the statistics whose default interval covered less than 93%
    in the simulated cell nearest these ratings (absent when none did)."""
    note = shortfall_note(result)
    out = {**result, "coverage": note} if note and "coverage" not in result else result
    return json.dumps(out, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
