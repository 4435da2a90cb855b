"""The figures a reviewer asks for beside the alt-test of an LLM judge in a study, and the verdict.

* balanced F1 (HealthBench) of the judge against each clinician beside each clinician's against
  the others, for binary fields (:func:`goldboard.analysis.judge_agreement.f1_rows`);
* the judge's agreement with the panel relative to the clinicians' with each other, with a seeded
  item bootstrap 95% CI (:func:`goldboard.analysis.judge_agreement.panel_ratio`);
* a seeded item bootstrap 95% CI for rho (:func:`goldboard.analysis.alttest.rho_intervals`);
* abstention, the judge's beside each clinician's, by kind: a blank answer, "cannot tell" (the
  judge's explicit "cannot judge", or a schema value meaning cannot tell) and the schema's
  insufficient-information value;
* the verdict, one paragraph that carries its own conditions (with two clinicians: what the test
  can show, and three or more recommended).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from goldboard.analysis.alttest import rho_intervals
from goldboard.analysis.judge_agreement import N_BOOT, f1_rows, panel_ratio
from goldboard.label_configs.schema import Field

#: the interval seeds (fixed: the same study gives the same intervals)
BOOT_SEED = 20250101

_CANNOT_TELL = re.compile(r"cannot tell|can't tell|can not tell|unsure|not sure|don't know|do not know|unknown", re.I)
_INSUFFICIENT = re.compile(
    r"insufficient|not enough (information|info)|cannot be (judged|assessed|determined)|unable to (judge|assess)", re.I
)
ABSTENTION_KINDS = ("blank", "cannot tell", "insufficient information")


def abstention_values(f: Field) -> dict[str, list[str]]:
    """The field's values that are abstentions: ``{"cannot tell": [...], "insufficient information": [...]}``
    (read from each value's text and display, never its definition)."""
    out: dict[str, list[str]] = {"cannot tell": [], "insufficient information": []}
    for v in f.values:
        text = f"{v.value} {v.label}"
        if _CANNOT_TELL.search(text):
            out["cannot tell"].append(v.value)
        elif _INSUFFICIENT.search(text):
            out["insufficient information"].append(v.value)
    return out


def _row(who: str, kind: str, n: int, counts: dict[str, int]) -> dict[str, Any]:
    total = sum(counts.values())
    return {
        "rater": who,
        "kind": kind,
        "n_items": n,
        **{k: {"count": counts[k], "rate": counts[k] / n if n else None} for k in ABSTENTION_KINDS},
        "any": {"count": total, "rate": total / n if n else None},
    }


def abstention_rows(
    hcodes: np.ndarray, rated: np.ndarray, humans: list[str], jcodes: np.ndarray, judges: list[str],
    judge_cannot: list[set[str]], items: list[str], f: Field, judge_asked: list[set[str]] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Abstention by kind, per clinician (over the items they rated), the clinicians pooled, and per
    judge over the items it was asked (``judge_asked``; default all): an item it was asked and left
    without an answer is its blank; an item it was never asked is not counted."""
    k = len(f.categories)
    special = abstention_values(f)
    codes_of = {kind: [f.categories.index(v) for v in vals] for kind, vals in special.items()}
    rows, pooled, pooled_n = [], dict.fromkeys(ABSTENTION_KINDS, 0), 0
    for h, name in enumerate(humans):
        c = hcodes[rated[:, h], h]
        counts = {
            "blank": int(np.sum((c < 0) | (c >= k))),
            "cannot tell": int(np.isin(c, codes_of["cannot tell"]).sum()),
            "insufficient information": int(np.isin(c, codes_of["insufficient information"]).sum()),
        }
        rows.append(_row(name, "clinician", int(c.size), counts))
        pooled = {x: pooled[x] + counts[x] for x in ABSTENTION_KINDS}
        pooled_n += int(c.size)
    if len(humans) > 1:
        rows.append(_row("clinicians (all)", "clinicians", pooled_n, pooled))
    for j, name in enumerate(judges):
        given = np.array([judge_asked is None or i in judge_asked[j] for i in items], dtype=bool)
        c = jcodes[given, j]
        cannot = np.array([i in judge_cannot[j] for i in np.asarray(items, dtype=object)[given]], dtype=bool)
        counts = {
            "blank": int(np.sum(((c < 0) | (c >= k)) & ~cannot)),
            "cannot tell": int(cannot.sum() + np.isin(c, codes_of["cannot tell"]).sum()),
            "insufficient information": int(np.isin(c, codes_of["insufficient information"]).sum()),
        }
        rows.append(_row(name, "judge", int(given.sum()), counts))
    return {"rows": rows, "values": special}


def study_figures(hcodes: np.ndarray, humans: list[str], jcodes: np.ndarray, judges: list[str], f: Field) -> dict:
    """Balanced F1 (binary fields), the panel ratio, per judge."""
    k = len(f.categories)
    out: dict[str, Any] = {"balanced_f1": [], "panel_ratio": []}
    for j, name in enumerate(judges):
        if k == 2:
            out["balanced_f1"].append({"judge": name, "rows": f1_rows(hcodes, jcodes[:, j], humans, k)})
        out["panel_ratio"].append({"judge": name, **panel_ratio(hcodes, jcodes[:, j], k, seed=BOOT_SEED)})
    return out


def add_rho_intervals(data: dict[str, Any], humans: np.ndarray, judges: np.ndarray, names: list[str], scoring: str):
    """``rho_low``/``rho_high`` on each judge entry of ``data`` (the test's humans only)."""
    by_name = {d["judge"]: d for d in data["judges"]}
    for j, name in enumerate(names):
        d = by_name[name]
        tested = [h in {c["human"] for c in d["humans"]} for h in data["humans"]]
        ((lo, hi),) = rho_intervals(humans, judges[:, [j]], tested=tested, scoring=scoring, seed=BOOT_SEED)
        d["rho_low"], d["rho_high"] = lo, hi
        d["rho_interval"] = f"item bootstrap, {N_BOOT} resamples, seed {BOOT_SEED}"


# --------------------------------------------------------------------------- text


def _num(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def rho_text(d: dict[str, Any]) -> str:
    if d.get("rho_low") is None:
        return f"{d['advantage_probability']:.2f}"
    return f"{d['advantage_probability']:.2f} ({d['rho_low']:.2f} to {d['rho_high']:.2f})"


def ratio_text(r: dict[str, Any]) -> str:
    if r["ratio"] is None:
        return "not estimable (the clinicians never agree, or no item has two clinicians and the judge)"
    ci = f" (95% CI {r['low']:.2f} to {r['high']:.2f})" if r["low"] is not None else " (CI not estimable)"
    return (
        f"{r['ratio']:.2f}{ci}: agreement with a clinician {r['judge_agreement']:.2f} against the clinicians' "
        f"with each other {r['clinician_agreement']:.2f}, on {r['n_items']} items"
    )


RATIO_READING = (
    "above 1 means the judge is as close to the panel as the clinicians are to each other (pooled pairwise "
    "agreement; item bootstrap 95% CI)"
)


def f1_table(entry: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["clinician", "judge vs clinician", "items", "clinician vs other clinicians", "pairs"]
    rows = [
        [r["clinician"], _num(r["judge_f1"]), str(r["judge_items"]), _num(r["clinician_f1"]), str(r["clinician_pairs"])]
        for r in entry["rows"]
    ]
    return head, rows


def abstention_table(ab: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["rater", "items", "blank", "cannot tell", "insufficient information", "any"]

    def cell(c: dict) -> str:
        return f"{c['count']} ({100 * c['rate']:.0f}%)" if c["rate"] is not None else "0"

    rows = [[r["rater"], str(r["n_items"]), *(cell(r[k]) for k in (*ABSTENTION_KINDS, "any"))] for r in ab["rows"]]
    return head, rows


def abstention_note(ab: dict[str, Any]) -> str:
    vals = ab["values"]
    named = [f"{kind}: {', '.join(repr(v) for v in vs)}" for kind, vs in vals.items() if vs]
    return (
        "Abstention by kind: blank (no value; for the judge, no answer), cannot tell (the judge's explicit "
        "'cannot judge'" + (", or a value meaning cannot tell" if vals["cannot tell"] else "") + ") and the schema's "
        "insufficient-information value"
        + (f" ({'; '.join(named)})" if named else " (this field has none)")
        + "; a judge's 'cannot judge' is never counted as a value."
    )


def consistency_text(run: dict[str, Any]) -> str:
    parts = []
    if run.get("self_consistency") is not None:
        parts.append(f"self-consistency {run['self_consistency']:.2f} (share of items whose samples all agree)")
    if run.get("position_bias") is not None:
        parts.append(f"position bias {run['position_bias']:.2f} (share of shuffled-order answers that moved)")
    if not parts:
        return ""
    return f"over {run.get('samples', 'several')} samples per item: " + "; ".join(parts)


def _judge_verdict(data: dict[str, Any], d: dict[str, Any]) -> str:
    """One judge's result: pass or not, winning rate, rho, epsilon, its kappa against gold."""
    gold = next((r for r in data.get("agreement", []) if r["kind"] == "judge" and r["a"] == d["judge"]
                 and r["b"] == "gold"), None)  # fmt: skip
    kappa_gold = (
        f"; its kappa against gold is {gold['kappa']['value']:.2f} on {gold['n_items']} items"
        if gold and gold.get("kappa")
        else ""
    )
    result = "passes" if d["passed"] else "does not pass"
    return (
        f"{d['judge']} {result} the alt-test on {data['field']} (winning rate {d['winning_rate']:.2f} "
        f"against {len(d['humans'])} clinicians, rho {rho_text(d)}, epsilon {data['epsilon']:g}){kappa_gold}."
    )


def verdict(data: dict[str, Any]) -> str:
    """The verdict on every judge (highest rho first), carrying what the test can show with this
    many clinicians."""
    m = len(data["humans"])
    if m == 2:
        return (
            "Verdict: "
            + " ".join(_judge_verdict(data, d) for d in data["judges"])
            + (
                " With two clinicians this shows less than it seems: leaving one out leaves a single clinician as the "
                "reference, so on every item the two dispute any answer of the judge counts as at least as good as the "
                "left-out clinician's (a judge that matches them where they agree passes, whatever it answers where they "
                "disagree). It shows only that "
                "the judge matches each clinician about as often as the other clinician does, not that it represents a "
                "clinical consensus; do not replace a clinician on this alone: rate with three or more clinicians "
                "(Calderon et al. 2025 recommend it) and read the agreement with gold."
            )
        )
    parts = []
    for d in data["judges"]:
        parts.append(_judge_verdict(data, d))
        if d["passed"]:
            parts.append(
                f"With {m} clinicians: on these items and this field the judge represents the remaining clinicians at "
                "least as well as a left-out clinician does, within the margin, for at least half of them."
            )
        else:
            parts.append("The judge cannot stand in for a clinician on this field with this evidence.")
    return "Verdict: " + " ".join(parts)
