"""What a reviewer asks for, added to the agreement report as self-contained sections.

Each section is plain data ``{"id", "title", "paragraphs", "tables": [{"title", "header",
"rows", "right", "csv"}], "images": [{"png", "alt", "caption"}]}`` rendered by
:mod:`goldboard.exports.report_extras`; every table also goes to the CSV supplement.

* the sample-size plan (recorded by ``goldboard plan size --study``)
* calibration rounds against the stopping rule (recorded by ``goldboard calibrate``)
* test-retest agreement of a round one rater alone re-rated
* the gold-label distribution
* disagreement -> resolution per named boundary
* time on task per rater and per label (Label Studio ``lead_time``)
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from goldboard.analysis.report_tables import gold_distribution, resolution_by_boundary, time_on_task
from goldboard.exports.calibration import calibration_curve_png, calibration_rows, verdict_sentence
from goldboard.study import Study
from goldboard.workflows.calibration import calibration_for_study, nothing_to_test

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

PLAN_KEY = "plan"
CALIBRATION_KEY = "calibration"


def _f(x: Any, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def recorded_plan(study: Study) -> dict | None:
    """The sample-size plan recorded in ``study.toml`` (``[extra.plan]``), if any."""
    plan = study.extra.get(PLAN_KEY)
    return plan if isinstance(plan, dict) and plan.get("sentence") else None


def record_plan(study: Study, plan: dict) -> None:
    """Record a plan's sentence and key numbers in ``study.toml`` (the report's methods cite it)."""
    keep = {k: v for k, v in plan.items() if isinstance(v, str | int | float | bool)}
    study.extra[PLAN_KEY] = keep
    study.save()


def recorded_rules(study: Study) -> tuple[list[str], list[str], int, int]:
    """The stopping rules, fields and bootstrap setting (resamples, seed) recorded by
    ``goldboard calibrate`` (``[extra.calibration]``)."""
    cal = study.extra.get(CALIBRATION_KEY) or {}
    return (
        [str(r) for r in cal.get("rules", [])],
        [str(f) for f in cal.get("fields", [])],
        int(cal.get("bootstrap", 0)),
        int(cal.get("seed", 1)),
    )


def record_rules(
    study: Study,
    rules: list[str],
    fields: list[str],
    n_resamples: int = 0,
    seed: int = 1,
    max_looks: int | None = None,
    looks: int | None = None,
    level: float | None = None,
    look_rounds: list[int] | None = None,
) -> None:
    """Record the stopping rule in ``study.toml``, with the planned maximum looks, the looks
    taken so far (and the rounds they were taken on, in order) and the adjusted per-look level
    (the report cites them)."""
    rec: dict[str, Any] = {"rules": list(rules), "fields": list(fields), "bootstrap": n_resamples, "seed": seed}
    for k, v in (("max_looks", max_looks), ("looks", looks), ("level", level), ("look_rounds", look_rounds)):
        if v is not None:
            rec[k] = v
    study.extra[CALIBRATION_KEY] = rec
    study.save()


def plan_section(study: Study) -> dict | None:
    plan = recorded_plan(study)
    if plan is None:
        return None
    return {
        "id": "plan",
        "title": "Sample size",
        "paragraphs": [plan["sentence"]],
        "tables": [],
        "images": [],
    }


def calibration_section(study: Study, rules: list[str] | None = None, fields: list[str] | None = None) -> dict | None:
    """Calibration rounds against the stopping rule: the table, the verdict, the curve."""
    boot, seed = 0, 1
    if not rules:
        rules, rec_fields, boot, seed = recorded_rules(study)
        fields = fields or rec_fields
    if not rules:
        return None
    waiting = nothing_to_test(study)
    if waiting:  # the rule is not tested on a main round in the calibration round's place
        return {
            "id": "calibration",
            "title": "Calibration rounds and the stopping rule",
            "paragraphs": [f"Stopping rule: {' and '.join(rules)}. {waiting[0].upper()}{waiting[1:]}."],
            "tables": [],
            "images": [],
        }
    # a report takes no look and records nothing: `report --rule` shows the rule it is given (issue 23
    # refuses a changed rule in `calibrate` only)
    data = calibration_for_study(study, rules, fields=fields or None, n_resamples=boot, seed=seed, change_rule=True)
    head, rows = calibration_rows(data)
    png = calibration_curve_png(data)
    return {
        "id": "calibration",
        "title": "Calibration rounds and the stopping rule",
        # for the methods paragraph: the looks taken and the verdict (not rendered)
        "outcome": {
            "verdict": data["verdict"],
            "met_at": data["met_at"],
            "latest_round": data["latest_round"],
            "rounds": [r["round"] for r in data["rounds"] if r.get("look", 0) <= data["max_looks"]],
        },
        "paragraphs": [
            f"Stopping rule: {' and '.join(data['rules'])} for {', '.join(data['fields'])}, each round's estimate "
            f"with its 95% CI ({data['ci_method']}); the rule tests the limit shown under 'Tested limit' at the "
            f"look's adjusted level. {verdict_sentence(data)}",
            *data["notes"],
        ],
        "tables": [{"title": "", "header": head, "rows": rows, "right": [6, 7], "csv": "calibration"}],
        "images": [
            {
                "png": base64.b64encode(png).decode("ascii"),
                "alt": "Agreement by round with 95% confidence intervals and the stopping-rule threshold",
                "caption": "Agreement by round (95% CI); triangles: the limit each rule tested at the look's "
                "adjusted level; dashed: the stopping rule's threshold.",
            }
        ],
        "data": data,
    }


def _retest_rounds(study: Study) -> list[tuple[int, int, str]]:
    """``(earlier round, round, rater)`` for each pulled round that one rater alone rated, every
    item of it rated in an earlier round too (the latest such), and no other rater's rating of it held out
    as invalid at pull: a test-retest round."""
    pulled = study.pulled_rounds()
    if len(pulled) < 2:  # one round: nothing re-rated (and nothing read again)
        return []
    frames = {n: study.ratings(n) for n in pulled}
    items = {n: set(df["item_id"].astype(str)) for n, df in frames.items()}
    out = []
    for n, df in frames.items():
        raters = sorted(set(df["rater"].astype(str)))
        if len(raters) != 1 or not items[n]:
            continue
        if any(r != raters[0] for r in study.held_out(n)):
            continue  # another rater's ratings were held out as invalid: not a round one rater alone re-rated
        before = [m for m in sorted(frames) if m < n and items[n] <= items[m]]
        if before:
            out.append((before[-1], n, raters[0]))
    return out


def _and(words: list[str]) -> str:
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


#: the CI methods' names in prose (the table prints the short name)
_CI_PROSE = {"wilson": "Wilson score", "wald": "Wald", "percentile": "percentile bootstrap", "bca": "BCa bootstrap"}


def _retest_methods(pairs: list[tuple[int, int, str]], rows: list[list], field: str) -> str:
    """The methods sentence of the test-retest analysis (what the section's table reports)."""
    who = "; ".join(
        f"{rater} re-rated alone in round {b} items {rater} had rated in round {a}" for a, b, rater in pairs
    )
    stats = list(dict.fromkeys(str(r[2]) for r in rows))
    stats = [s[:1].lower() + s[1:] if s.startswith("Percent") else s for s in stats]
    cis = list(dict.fromkeys(_CI_PROSE.get(str(r[6]), str(r[6])) for r in rows if r[6]))
    n = sorted({int(r[3]) for r in rows})
    items = f"{n[0]}" if len(n) == 1 else f"{n[0]} to {n[-1]}"
    text = (
        f"Test-retest (intra-rater) agreement: {who}; the rater's two rounds were compared on {field} "
        f"({items} items) by {_and(stats) or 'no statistic'}"
    )
    return text + (f", with {_and(cis)} 95% intervals." if cis else ".")


def retest_section(study: Study) -> dict | None:
    """Test-retest (intra-rater) agreement of each round one rater alone re-rated (the numbers
    ``goldboard agree --test-retest --rounds A,B`` gives), for the schema's primary field."""
    pairs = _retest_rounds(study)
    if not pairs:  # before the imports: a one-round report stays pandas-free (test_cli_startup)
        return None
    from goldboard.analysis.retest import retest_rows
    from goldboard.workflows.agreement import retest_for_study

    field = study.schema.primary_field.name
    rows, paras = [], []
    for a, b, rater in pairs:
        result = retest_for_study(study, (a, b), field)
        got = [r for r in retest_rows(result) if r["rater"] == rater]
        rows += [
            [
                rater,
                f"{a} vs {b}",
                r["statistic"],
                r["n"],
                _f(r["value"]),
                "–" if r["ci_low"] is None else f"{r['ci_low']:.3f} to {r['ci_high']:.3f}",
                r["ci_method"],
            ]
            for r in got
        ]
        held = len(study.held_out(b).get(rater, set()))
        paras.append(
            f"Round {b} has ratings from {rater} only, of items {rater} rated in round {a} too: {rater}'s "
            f"agreement with their own round-{a} ratings on {field} (intra-rater, as goldboard agree --test-retest "
            f"--rounds {a},{b} computes it). If round {b} is still being rated, these numbers are interim."
            + (
                f" {held} of {rater}'s round-{b} ratings were held out as invalid at pull and are not in these "
                f"numbers (see {study.invalid_path(b)})."
                if held
                else ""
            )
        )
    return {
        "id": "retest",
        "title": "Test-retest (intra-rater) agreement",
        "methods": _retest_methods(pairs, rows, field),
        "paragraphs": paras,
        "tables": [
            {
                "title": "",
                "header": ["Rater", "Rounds", "Statistic", "n", "Value", "95% CI", "CI method"],
                "rows": rows,
                "right": [3, 4, 5],
                "csv": "test_retest",
            }
        ],
        "images": [],
    }


def gold_section(gold: pd.DataFrame, provisional: bool, fields: list[str]) -> dict | None:
    rows = gold_distribution(gold, fields)
    if not rows:
        return None
    return {
        "id": "gold-distribution",
        "title": "Gold-label distribution",
        "paragraphs": [
            ("Provisional (no gold release yet): " if provisional else "")
            + "gold labels per field; share of the field's resolved items; how each was resolved."
        ],
        "tables": [
            {
                "title": "",
                "header": ["Field", "Gold label", "n", "Share", "Unanimous", "Adjudicated"],
                "rows": [
                    [r["field"], r["gold_value"], r["n"], _pct(r["share"]), r["unanimous"], r["adjudicated"]]
                    for r in rows
                ],
                "right": [2, 3, 4, 5],
                "csv": "gold_distribution",
            }
        ],
        "images": [],
    }


def resolution_section(flags: pd.DataFrame, gold: pd.DataFrame, schema) -> dict | None:
    rows = resolution_by_boundary(flags, gold, schema)
    if not rows:
        return None
    lines = []
    for b in dict.fromkeys(r["boundary"] for r in rows):
        part = [r for r in rows if r["boundary"] == b]
        outcome = "; ".join(f"{r['n']} {r['decision']}" for r in part)
        lines.append(f"{b}: {part[0]['disagreements']} disagreement(s) -> {outcome}.")
    return {
        "id": "resolution",
        "title": "Disagreements and their resolution, by named boundary",
        "paragraphs": lines,
        "tables": [
            {
                "title": "",
                "header": ["Boundary", "Field", "Side A", "Side B", "Disagreements", "Adjudicated as", "n", "Share"],
                "rows": [
                    [
                        r["boundary"],
                        r["field"],
                        r["side_a"],
                        r["side_b"],
                        r["disagreements"],
                        r["decision"],
                        r["n"],
                        _pct(r["share"]),
                    ]
                    for r in rows
                ],
                "right": [4, 6, 7],
                "csv": "resolution_by_boundary",
            }
        ],
        "images": [],
    }


def time_section(ratings: pd.DataFrame, field: str) -> dict | None:
    t = time_on_task(ratings, field)
    if not t["per_rater"]:
        return None
    head = ["Group", "Annotations", "Median (s)", "IQR (s)", "Q1 to Q3 (s)"]

    def rows(part):
        return [
            [r["group"], r["n"], _f(r["median"], 1), _f(r["iqr"], 1), f"{r['q1']:.1f} to {r['q3']:.1f}"] for r in part
        ]

    paras = [
        "Time on task: Label Studio's lead time (seconds from opening the task to submitting it) per annotation; "
        f"per label = the label the rater gave on {field}."
    ]
    if t["n_missing"]:
        paras.append(f"{t['n_missing']} annotation(s) have no lead time (imported from files) and are left out.")
    return {
        "id": "time-on-task",
        "title": "Time on task",
        "paragraphs": paras,
        "tables": [
            {
                "title": "Per rater",
                "header": head,
                "rows": rows(t["per_rater"]),
                "right": [1, 2, 3, 4],
                "csv": "time_per_rater",
            },
            {
                "title": "Per label",
                "header": head,
                "rows": rows(t["per_label"]),
                "right": [1, 2, 3, 4],
                "csv": "time_per_label",
            },
        ],
        "images": [],
    }


def reviewer_sections(
    study: Study,
    ratings: pd.DataFrame,
    gold: pd.DataFrame,
    provisional: bool,
    flags: pd.DataFrame,
    rules: list[str] | None = None,
) -> list[dict]:
    """Every reviewer section that has something to show, in report order."""
    schema = study.schema
    fields = [f.name for f in schema.fields if f.kind != "multi" and f.level is not None]
    out = [
        plan_section(study),
        calibration_section(study, rules),
        retest_section(study),
        gold_section(gold, provisional, fields),
        resolution_section(flags, gold, schema),
        time_section(ratings, schema.primary_field.name),
    ]
    return [s for s in out if s is not None]
