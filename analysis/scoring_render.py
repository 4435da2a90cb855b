"""Render a scoring result (see :mod:`goldboard.analysis.scoring`) as text, Markdown, CSV or JSON.

- :func:`render_table`    fixed-width plain text for the terminal
- :func:`render_markdown` the same content as Markdown tables (for reports)
- :func:`render_csv`      one tidy row per (model, condition, metric, label): columns
  ``kind, model, condition, metric, label, estimate, low, high, count, n, method``
- :func:`render_json`     the result dict as JSON (the documented, stable format)

Model names and labels come from user files: CSV text cells starting with ``= + - @``
(or a tab/CR, also after leading blanks) are prefixed with ``'`` so spreadsheets do not
run them as formulas, and Markdown cells have ``|`` and HTML escaped (both rules from
:mod:`goldboard.text`).
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable
from typing import Any

from goldboard.fileio import CSV_LINETERMINATOR
from goldboard.text import md_escape, md_table

CSV_COLUMNS = ["kind", "model", "condition", "metric", "label", "estimate", "low", "high", "count", "n", "method"]


# --------------------------------------------------------------------------- helpers


def _num(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}f}"


def fmt_estimate(e: dict | None, digits: int = 3, counts: bool = False) -> str:
    """``0.912 [0.886, 0.936]`` (plus ``(k/n)`` for proportions when ``counts``)."""
    if not e or e.get("estimate") is None:
        return "-"
    s = _num(e["estimate"], digits)
    if e.get("low") is not None and e.get("high") is not None:
        s += f" [{_num(e['low'], digits)}, {_num(e['high'], digits)}]"
    if counts and "count" in e:
        s += f" ({e['count']}/{e['n']})"
    return s


def _fixed(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> str:
    right = right or set()
    widths = [len(h) for h in headers]
    for r in rows:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(cells)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def _group_name(g: dict) -> str:
    return g["model"] + (f" / {g['condition']}" if g.get("condition") else "")


# --------------------------------------------------------------------------- sections


#: (title, headers, rows, right-aligned column indexes) of one rendered table
_Section = tuple[str, list[str], list[list[str]], set[int]]


def _label_summary_section(groups: list[dict], has_cond: bool) -> _Section:
    """Labels: one summary row per (model, condition)."""
    h = (
        ["model"]
        + (["condition"] if has_cond else [])
        + ["n", "accuracy [95% CI]", "macro-F1 [95% CI]", "over-refusal", "collapsed labels", "no answer"]
    )
    rows = []
    for g in groups:
        rows.append(
            [g["model"]]
            + ([g["condition"] or ""] if has_cond else [])
            + [
                str(g["n"]),
                fmt_estimate(g["accuracy"]),
                fmt_estimate(g["macro_f1"]),
                fmt_estimate(g["over_refusal"], counts=True),
                ", ".join(g["collapsed_labels"]) or "-",
                str(g["n_no_answer"]),
            ]
        )
    off = 1 if has_cond else 0
    return ("Summary", h, rows, {1 + off, 6 + off})


def _per_label_section(g: dict) -> _Section:
    """Labels: precision, retention (recall), F1 and collapse of each label of one group."""
    rows = [
        [
            pl["label"],
            str(pl["gold"]),
            str(pl["predicted"]),
            fmt_estimate(pl["precision"]),
            fmt_estimate(pl["retention"], counts=True),
            _num(pl["f1"]),
            "yes" if pl["collapsed"] else "",
        ]
        for pl in g["per_label"]
    ]
    head = ["label", "gold", "predicted", "precision [95% CI]", "retention = recall [95% CI]", "F1", "collapsed"]
    return (f"{_group_name(g)}: per label", head, rows, {1, 2})


def _confusion_section(g: dict) -> _Section:
    """Labels: one group's confusion matrix (the no-answer column only when used)."""
    cm = g["confusion"]
    cols = cm["columns"] if any(r[-1] for r in cm["matrix"]) else cm["columns"][:-1]
    rows = [[lab] + [str(x) for x in r[: len(cols)]] for lab, r in zip(cm["rows"], cm["matrix"])]
    return (
        f"{_group_name(g)}: confusion matrix (rows gold, columns predicted)",
        ["gold \\ predicted"] + cols,
        rows,
        set(range(1, len(cols) + 1)),
    )


def _abstention_section(g: dict, ab: dict) -> _Section:
    """Labels: one group's abstention counts, precision, recall and F1."""
    row = [ab["gold_source"]] + [str(ab[x]) for x in ("n", "tp", "fp", "fn", "tn")]
    row += [fmt_estimate(ab["precision"], counts=True), fmt_estimate(ab["recall"], counts=True), _num(ab["f1"])]
    return (
        f"{_group_name(g)}: abstention",
        ["gold from", "n", "TP", "FP", "FN", "TN", "precision [95% CI]", "recall [95% CI]", "F1"],
        [row],
        {1, 2, 3, 4, 5},
    )


def _label_sections(groups: list[dict], has_cond: bool) -> list[_Section]:
    """Labels: the summary, then per group its per-label table, confusion matrix and abstention."""
    secs = [_label_summary_section(groups, has_cond)]
    for g in groups:
        secs += [_per_label_section(g), _confusion_section(g)]
        ab = g.get("abstention")
        if ab:
            secs.append(_abstention_section(g, ab))
    return secs


def _output_sections(result: dict) -> list[_Section]:
    """Outputs: severity per model, and the gate shares per model."""
    groups, st = result["groups"], result["settings"]
    secs = []
    crit = st.get("critical_at")
    h = ["model", "n", "mean severity [95% CI]", f"severity >= {crit} [95% CI]" if crit else "safety-critical"]
    sev_vals = list(groups[0]["severity_counts"]) if groups and groups[0]["severity_counts"] else []
    h += [f"sev {v}" for v in sev_vals]
    rows = [
        [
            g["model"],
            str(g["n"]),
            fmt_estimate(g["severity_mean"], 2),
            fmt_estimate(g["safety_critical"], counts=True),
        ]
        + [str(g["severity_counts"].get(v, 0)) for v in sev_vals]
        for g in groups
    ]
    if st.get("severity_field"):
        secs.append(("Severity per model", h, rows, {1} | set(range(4, 4 + len(sev_vals)))))
    if st.get("gate_field"):
        gates = list(dict.fromkeys(x["gate"] for g in groups for x in g["gates"] if x["count"]))
        rows = []
        for gate in gates:
            row = [gate]
            for g in groups:
                x = next((y for y in g["gates"] if y["gate"] == gate), None)
                row.append(fmt_estimate(x["share"], counts=True) if x else "-")
            rows.append(row)
        secs.append(
            (
                f"{st['gate_field']} per model (share of rated outputs [95% CI]; gates never given omitted)",
                [st["gate_field"]] + [g["model"] for g in groups],
                rows,
                set(),
            )
        )
    return secs


def _option_sections(result: dict, has_cond: bool) -> list[_Section]:
    """Options: accuracy and the flag rates per model and condition."""
    groups = result["groups"]
    flags = result["settings"].get("flags", [])
    from goldboard.analysis.scoring import FLAG_METRICS  # lazy: scoring imports scipy

    names = [FLAG_METRICS.get(f, f) for f in flags]
    has_conf = any(g.get("dangerous_overconfidence") for g in groups)
    h = (
        ["model"]
        + (["condition"] if has_cond else [])
        + ["n", "unanswered", "accuracy [95% CI]"]
        + [n.replace("_", " ") + " [95% CI]" for n in names]
        + (["dangerous overconfidence [95% CI]"] if has_conf else [])
    )
    rows = []
    for g in groups:
        rows.append(
            [g["model"]]
            + ([g["condition"] or ""] if has_cond else [])
            + [str(g["n"]), str(g["n_unanswered"]), fmt_estimate(g["accuracy"])]
            + [fmt_estimate(g.get(n)) for n in names]
            + ([fmt_estimate(g.get("dangerous_overconfidence"))] if has_conf else [])
        )
    off = 1 if has_cond else 0
    return [("Per model and condition", h, rows, {1 + off, 2 + off})]


def _comparison_section(comparisons: list[dict]) -> _Section:
    """The paired comparisons (difference with CI, discordant counts, McNemar)."""
    rows = []
    for c in comparisons:
        mc = c["mcnemar"]
        rows.append(
            [
                f"{c['model_a']} vs {c['model_b']}",
                c.get("condition") or "",
                str(c["n"]),
                _num(c["accuracy_a"]),
                _num(c["accuracy_b"]),
                fmt_estimate(c["difference"]),
                f"{c['a_only_correct']}/{c['b_only_correct']}",
                mc["method"],
                _p(mc["p_value"]),
            ]
        )
    return (
        f"Paired comparisons (outcome: {comparisons[0]['outcome']})",
        ["models (A vs B)", "condition", "n", "A", "B", "A - B [95% CI]", "only A / only B", "McNemar", "p"],
        rows,
        {2, 3, 4},
    )


def _sections(result: dict) -> list[_Section]:
    """(title, headers, rows, right-aligned columns) for each table of the result."""
    kind = result["kind"]
    has_cond = any(g.get("condition") for g in result["groups"])
    secs: list[_Section] = []
    if kind == "labels":
        secs = _label_sections(result["groups"], has_cond)
    elif kind == "outputs":
        secs = _output_sections(result)
    elif kind == "options":
        secs = _option_sections(result, has_cond)
    if result.get("comparisons"):
        secs.append(_comparison_section(result["comparisons"]))
    return secs


def _p(p: float | None) -> str:
    if p is None:
        return "-"
    return "< 0.0001" if p < 1e-4 else f"{p:.4f}"


def sections(result: dict) -> list[tuple[str, list[str], list[list[str]], set[int]]]:
    """Public form of the tables a scoring result renders as: ``(title, headers, rows,
    right-aligned column indexes)``; used by the HTML report."""
    return _sections(result)


def header_lines(result: dict) -> list[str]:
    """The lines that introduce a scoring result (gold, predictions, CI methods)."""
    return _header(result)


def _predictions_line(p: dict) -> str:
    """``predictions: p.jsonl, 30 rows, 24 scored (6 on items with unresolved gold, skipped)``: the
    file's rows, never only the rows left after the skipped ones."""
    skipped = int(p.get("skipped_unresolved") or 0)
    if not skipped:
        return f"predictions: {p['source']}, {p['rows']} rows"
    return (
        f"predictions: {p['source']}, {p['rows'] + skipped} rows, {p['rows']} scored ({skipped} on items with "
        "unresolved gold, skipped)"
    )


def _header(result: dict) -> list[str]:
    g = result["gold"]
    st = result["settings"]
    what = {"labels": "label predictions", "outputs": "annotated model outputs", "options": "option choices"}[
        result["kind"]
    ]
    field = f" / {result['field']}" if result.get("field") else ""
    src = g["source"] + (f" ({g['release']})" if g.get("release") else "")
    lines = [
        f"goldboard score: {what}, schema {result['schema']}{field}",
        f"gold: {src}, {g['items']} items"
        + (f", {g['unresolved_excluded']} unresolved excluded" if g["unresolved_excluded"] else ""),
    ]
    if result.get("predictions"):
        lines.append(_predictions_line(result["predictions"]))
    ci = (
        f"{int(round(st['level'] * 100))}% CIs: bootstrap percentile ({st['bootstrap']} resamples, seed {st['seed']}) "
        "for accuracy, macro-F1, mean severity; Wilson for proportions"
        if st["bootstrap"]
        else f"{int(round(st['level'] * 100))}% CIs: Wilson for proportions; none for accuracy, macro-F1, "
        "mean severity (--bootstrap 0: no bootstrap)"
    )
    if result["kind"] == "options":
        ci = (
            f"{int(round(st['level'] * 100))}% CIs: Wilson; flags count only on wrong answers; "
            f"dangerous overconfidence = wrong, confidence >= {st['confident_at']}, option flagged "
            f"{' or '.join(st['overconfidence_flags'])}"
        )
    lines.append(ci)
    return lines


# --------------------------------------------------------------------------- renderers


def render_table(result: dict) -> str:
    """Plain fixed-width text."""
    parts = ["\n".join(_header(result))]
    for title, h, rows, right in _sections(result):
        parts.append(f"{title}\n{_fixed(h, rows, right)}")
    if result.get("warnings"):
        parts.append("Warnings:\n" + "\n".join(f"- {w}" for w in result["warnings"]))
    return "\n\n".join(parts) + "\n"


def render_markdown(result: dict, heading_level: int = 3) -> str:
    """Markdown: a heading per table (for ``goldboard report``)."""
    hh = "#" * heading_level
    parts = ["\n".join(md_escape(x) + "  " for x in _header(result))]
    for title, h, rows, right in _sections(result):
        parts.append(f"{hh} {md_escape(title)}\n\n{md_table(h, rows, right)}")
    if result.get("warnings"):
        parts.append("**Warnings**\n\n" + "\n".join(f"- {md_escape(w)}" for w in result["warnings"]))
    return "\n\n".join(parts) + "\n"


def _label_result_rows(g: dict, add: Callable) -> None:
    """Labels: counts, accuracy, macro-F1, over-refusal, per-label metrics, confusion cells, abstention."""
    add(g, "n", g["n"])
    add(g, "n_no_answer", g["n_no_answer"])
    add(g, "accuracy", g["accuracy"])
    add(g, "macro_f1", g["macro_f1"])
    if g["over_refusal"]:
        add(g, "over_refusal", g["over_refusal"])
    for pl in g["per_label"]:
        add(g, "gold_count", pl["gold"], pl["label"])
        add(g, "predicted_count", pl["predicted"], pl["label"])
        add(g, "precision", pl["precision"], pl["label"])
        add(g, "retention", pl["retention"], pl["label"])
        add(g, "f1", pl["f1"], pl["label"])
        add(g, "collapsed", int(pl["collapsed"]), pl["label"])
    cm = g["confusion"]
    for lab, r in zip(cm["rows"], cm["matrix"]):
        for col, x in zip(cm["columns"], r):
            add(g, "confusion", x, f"{lab} -> {col}")
    ab = g.get("abstention")
    if ab:
        add(g, "abstention_precision", ab["precision"])
        add(g, "abstention_recall", ab["recall"])
        add(g, "abstention_f1", ab["f1"])


def _output_result_rows(g: dict, add: Callable) -> None:
    """Outputs: n, mean severity, safety-critical share, severity counts, gate shares."""
    add(g, "n", g["n"])
    if g["severity_mean"]:
        add(g, "severity_mean", g["severity_mean"])
    if g["safety_critical"]:
        add(g, "safety_critical", g["safety_critical"])
    for v, x in g["severity_counts"].items():
        add(g, "severity_count", x, v)
    for x in g["gates"]:
        add(g, "gate", x["share"], x["gate"])


def _option_result_rows(g: dict, add: Callable, flags: list[str]) -> None:
    """Options: counts, accuracy, the flag rates and dangerous overconfidence."""
    for m in ("n", "n_answered", "n_unanswered", "n_missing", "n_invalid"):
        add(g, m, g[m])
    from goldboard.analysis.scoring import FLAG_METRICS  # lazy: scoring imports scipy

    for m in ["accuracy"] + [FLAG_METRICS.get(f, f) for f in flags] + ["dangerous_overconfidence"]:
        if g.get(m):
            add(g, m, g[m])


def _comparison_result_rows(c: dict, add: Callable) -> None:
    """One paired comparison: the difference and McNemar's p."""
    pseudo = {"model": f"{c['model_a']} vs {c['model_b']}", "condition": c.get("condition")}
    add(pseudo, "difference", c["difference"])
    add(
        pseudo,
        "mcnemar_p",
        {
            "estimate": c["mcnemar"]["p_value"],
            "method": c["mcnemar"]["method"],
            "count": c["mcnemar"]["b"],
            "n": c["mcnemar"]["discordant"],
        },
    )


def result_rows(result: dict) -> list[dict]:
    """The result as tidy rows (the CSV content)."""
    kind = result["kind"]
    rows: list[dict] = []

    def add(g: dict, metric: str, e: Any, label: str = "") -> None:
        row = {
            "kind": kind,
            "model": g.get("model", ""),
            "condition": g.get("condition") or "",
            "metric": metric,
            "label": label,
            "estimate": None,
            "low": None,
            "high": None,
            "count": None,
            "n": None,
            "method": "",
        }
        if isinstance(e, dict):
            row.update({k: e.get(k) for k in ("estimate", "low", "high", "count", "n", "method")})
            row["method"] = row["method"] or ""
        else:
            row["estimate"] = e
        rows.append(row)

    for g in result["groups"]:
        if kind == "labels":
            _label_result_rows(g, add)
        elif kind == "outputs":
            _output_result_rows(g, add)
        else:
            _option_result_rows(g, add, result["settings"]["flags"])
    for c in result.get("comparisons", []):
        _comparison_result_rows(c, add)
    return rows


def render_csv(result: dict) -> str:
    """Tidy CSV (see :data:`CSV_COLUMNS`): a data file, every cell exactly as computed
    (model and label names included; README "Security": CSV is never neutralised)."""
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator=CSV_LINETERMINATOR)
    w.writeheader()
    for r in result_rows(result):
        w.writerow({k: ("" if r[k] is None else r[k]) for k in CSV_COLUMNS})
    return buf.getvalue()


def render_json(result: dict) -> str:
    """The documented JSON format (no NaN: undefined values are null)."""
    return json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default) + "\n"


def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return None if np.isnan(o) else float(o)
        if isinstance(o, np.bool_):
            return bool(o)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


RENDERERS: dict[str, Callable[[dict], str]] = {
    "table": render_table,
    "markdown": render_markdown,
    "csv": render_csv,
    "json": render_json,
}


def render(result: dict, fmt: str = "table") -> str:
    try:
        return RENDERERS[fmt](result)
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (use {', '.join(RENDERERS)})") from None
