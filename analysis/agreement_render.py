"""Renderings of an agreement result (the CLI's ``--format``): a text table, Markdown,
CSV (one row per statistic) and JSON.  Table and Markdown show the Landis & Koch (1977)
band of each chance-corrected coefficient, labelled as a convention."""

from __future__ import annotations

import csv
import io
import json
import re

from goldboard.analysis.agreement import landis_koch_band, statistic_name
from goldboard.fileio import CSV_LINETERMINATOR
from goldboard.text import md_escape, md_table

_LK_NOTE = (
    "Band: Landis & Koch (1977) convention (<0 poor, 0-.20 slight, .21-.40 fair, .41-.60 moderate, "
    ".61-.80 substantial, .81-1 almost perfect); a label, not a test."
)


def _fmt(x, digits=3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _ci(row: dict) -> str:
    if row.get("ci_low") is None:
        return "-"
    return f"{row['ci_low']:.3f} to {row['ci_high']:.3f}"


def _stat_rows(result: dict) -> tuple[list[str], list[list[str]]]:
    groups = any(r["group"] is not None for r in result["statistics"])
    head = (
        ["Statistic", "Raters"] + (["Group"] if groups else []) + ["n", "Value", "95% CI", "SE", "CI method", "Band*"]
    )
    rows = []
    for r in result["statistics"]:
        raters = "all" if len(r["raters"]) > 2 and r["raters"] == result["raters"] else " / ".join(r["raters"])
        band = "" if r["statistic"] == "percent_agreement" else (landis_koch_band(r["value"]) or "-")
        rows.append(
            [statistic_name(r), raters]
            + ([r["group"] or "all"] if groups else [])
            + [str(r["n_items"]), _fmt(r["value"]), _ci(r), _fmt(r["se"]), r["ci_method"] or "-", band]
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
                return f"{d['value']:.3f}"
            return f"{d['value']:.3f} ({d['ci_low']:.3f} to {d['ci_high']:.3f})"

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
    """The contract dict as indented JSON (NaN never appears: undefined values are null)."""
    return json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
