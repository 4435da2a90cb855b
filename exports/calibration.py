"""Renderings of a calibration check (``goldboard calibrate``): table, Markdown, JSON, and the
round-over-round curve with its 95% CIs and the rule's threshold (PNG)."""

from __future__ import annotations

import json

from goldboard.analysis import statistics as SD
from goldboard.analysis.calibration import MEASURED_LOOKS, parse_rule, stated_false_stop
from goldboard.exports.plots import png_bytes
from goldboard.text import md_table


def _f(x) -> str:
    return "–" if x is None or x != x else f"{x:.3f}"


def calibration_rows(data: dict) -> tuple[list[str], list[list]]:
    """The round-by-round table: one row per round x field x rule."""
    head = ["Round", "Look", "Calibration", "Guideline", "Field", "Rule", "n", "Estimate", "95% CI"]
    head += ["Tested limit", "Verdict"]
    rows = []
    for r in data["rounds"]:
        for c in r["checks"]:
            if c["tested"] is None:
                tested = f"{c['tested_how']}: cannot be decided"
            else:
                tested = f"{_f(c['tested'])} {'meets' if c['met'] else 'fails'} ({c['tested_how']})"
            rows.append(
                [
                    r["round"],
                    f"{r.get('look', '–')} of {data.get('max_looks', '–')}",
                    "yes" if r["calibration"] else "no",
                    r["guideline_version"] or "–",
                    c["field"],
                    c["rule"],
                    c["n_items"] if c["n_items"] is not None else "–",
                    _f(c["value"]),
                    _ci95(c),
                    tested,
                    r["verdict"],
                ]
            )
    return head, rows


def _ci95(c: dict) -> str:
    if c["ci_low"] is None or c["value"] is None:
        return "not estimable"
    if c["ci_low"] == c["ci_high"]:
        return "not estimable (degenerate table)"
    return f"{_f(c['ci_low'])} to {_f(c['ci_high'])}"


#: how a sentence names a rule's statistic
_NAMES = SD.names()  # declared in analysis/statistics.py


def control_sentence(data: dict) -> str:
    """How the looks are controlled, with the adjusted level, and the false-stop rate each rule's
    statistic has over the planned looks (:func:`stated_false_stop`: 0.025 for Cohen's kappa, the
    measured rate for the others) -- never a 0.025 a statistic does not keep."""
    if "max_looks" not in data:
        return ""
    k = data["max_looks"]
    head = (
        f"Looks: {data['looks']} of {k} planned; each look is tested at the Bonferroni-adjusted one-sided level "
        f"{data['level']:.3g} ({data['nominal']:g} / {k})"
    )
    stats = dict.fromkeys(
        c["statistic"]
        for r in data["rounds"]
        for c in r["checks"]
        if not c["rule"].split("_", 1)[1].startswith("value")
    )
    keeps = [_NAMES.get(s, s) for s in stats if stated_false_stop(s, k) == data["nominal"]]
    parts = []
    if keeps:
        checked = " (checked by a seeded simulation at the boundary)" if any(s != "cohen_kappa" for s in stats) else ""
        parts.append(
            f"the chance of a false stop over all {k} looks is at most {data['nominal']:g} for "
            f"{' and '.join(keeps)}{checked}"
        )
    for s in stats:
        if stated_false_stop(s, k) is None:
            parts.append(
                f"for {_NAMES.get(s, s)} the false-stop rate over {k} looks is not checked (the simulation covers "
                f"up to {MEASURED_LOOKS} looks)"
            )
    if any(c["rule"].split("_", 1)[1].startswith("value") for r in data["rounds"] for c in r["checks"]):
        parts.append("a rule on the estimate (_value) has no error control")
    return head + (": " + "; ".join(parts) if parts else "") + "."


def verdict_sentence(data: dict) -> str:
    rules = " and ".join(data["rules"])
    fields = ", ".join(data["fields"])
    control = control_sentence(data)
    if data["verdict"] == "rule met":
        first = data["met_at"]
        return (
            f"Stopping rule {rules} ({fields}) met in round {data['latest_round']}"
            + (f" (first met in round {first})" if first != data["latest_round"] else "")
            + f": calibration can stop. {control}"
        ).strip()
    if data["verdict"] == "cannot be decided":
        n = data["rounds"][-1]["n_items"] if data["rounds"] else 0
        return (
            f"Stopping rule {rules} ({fields}) cannot be decided in round {data['latest_round']} at n = {n}: "
            f"rate more items (a zero-width or undefined interval never meets a rule). {control}"
        ).strip()
    tail = f"; it was met in round {data['met_at']} but not since" if data["met_at"] is not None else ""
    return (
        f"Stopping rule {rules} ({fields}) not met in round {data['latest_round']}{tail}: continue calibrating. "
        f"{control}"
    ).strip()


def render_calibration(data: dict, fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    head, rows = calibration_rows(data)
    sentence = verdict_sentence(data)
    notes = [f"Note: {n}" for n in data.get("notes", [])]
    if fmt == "markdown":
        return md_table(head, rows, right=(6, 7)) + "\n\n" + "\n".join([sentence, *notes]) + "\n"
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([*lines, "", sentence, *notes]) + "\n"


def calibration_curve_png(data: dict) -> bytes:
    """Estimate and 95% CI per round (one line per field x statistic), the limit each rule tested
    at the look's adjusted level (triangles), the rule thresholds dashed, calibration rounds
    marked, as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=110)
    try:
        series: dict[tuple[str, str], list] = {}
        for r in data["rounds"]:
            for c in r["checks"]:
                key = (c["field"], c["statistic"])
                if all(x[0] != r["round"] for x in series.get(key, [])):
                    series.setdefault(key, []).append((r["round"], c["value"], c["ci_low"], c["ci_high"]))
        for i, ((field, stat), pts) in enumerate(series.items()):
            pts = [p for p in pts if p[1] is not None]
            if not pts:
                continue
            x = [p[0] + 0.06 * i for p in pts]
            y = [p[1] for p in pts]
            lo = [p[1] - p[2] if p[2] is not None else 0 for p in pts]
            hi = [p[3] - p[1] if p[3] is not None else 0 for p in pts]
            bars = ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=4, label=f"{field}: {stat.replace('_', ' ')}")
            tested = [
                (r["round"] + 0.06 * i, c["tested"])
                for r in data["rounds"]
                for c in r["checks"]
                if (c["field"], c["statistic"]) == (field, stat) and c.get("tested") is not None
            ]
            if tested:
                ax.scatter(
                    [t[0] for t in tested],
                    [t[1] for t in tested],
                    marker="v",
                    color=bars[0].get_color(),
                    zorder=3,
                    label="tested limit (adjusted level)",
                )
        for rule in data["rules"]:
            rl = parse_rule(rule)
            ax.axhline(rl.threshold, ls="--", color="#b03a2e", lw=1)
            ax.text(
                ax.get_xlim()[0], rl.threshold, f" rule {rule}", va="bottom", ha="left", fontsize=8, color="#b03a2e"
            )
        rounds = [r["round"] for r in data["rounds"]]
        labels = [f"{r['round']}{' (cal.)' if r['calibration'] else ''}" for r in data["rounds"]]
        ax.set_xticks(rounds, labels, fontsize=8)
        ax.set_xlabel("Round", fontsize=9)
        ax.set_ylabel("Estimate (95% CI)", fontsize=9)
        ax.set_ylim(min(-0.1, ax.get_ylim()[0]), 1.05)
        ax.set_title("Agreement by round against the stopping rule", fontsize=10)
        ax.legend(fontsize=7, loc="lower right")
        return png_bytes(fig)
    finally:
        plt.close(fig)
