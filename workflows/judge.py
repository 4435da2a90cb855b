"""`goldboard judge`: can an LLM judge replace a clinician?  The alt-test on a ratings table.

A long ratings table (``item_id, rater, field, value``; CSV/TSV/XLSX/JSONL) whose raters include
the humans and the judges goes through :func:`goldboard.analysis.alttest.alt_test` for one field.
Every rater not named a judge is a human (or the ``humans`` listed).  For ``accuracy`` the labels
are compared as written (exact text); for ``neg-rmse`` every value must be a number, and the first
that is not is an error naming the file, row, item, rater and field.

Studies: judge labels are recorded beside the clinicians' ratings, never mixed into them (see
"studies" below); the test then runs on the ratings in force, with each judge's agreement with
each clinician and with gold beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from goldboard.adjudicate.decisions import identity_key, read_decisions
from goldboard.adjudicate.gold import resolve_gold
from goldboard.analysis.alttest import EPSILON_GUIDANCE, AltTestResult, alt_test, check_options
from goldboard.analysis.coefficients import cohen_kappa, krippendorff_alpha, rating_counts, wald_ci
from goldboard.cases.ratings import (
    active_raters,
    adjudicable_fields,
    category_codes,
    check_rater_column,
    duplicate_ratings,
    load_ratings_file,
    normalized_values,
    rating_grid,
    value_grid,
)
from goldboard.errors import GoldboardError, ParamError
from goldboard.exports.gold import list_releases, read_release
from goldboard.fileio import read_csv_frame, read_table, sha256_file, write_csv_atomic
from goldboard.label_configs.schema import Field, Schema
from goldboard.study import Study, check_rater_name, study_ratings
from goldboard.text import did_you_mean, md_escape, md_table, natural_key, terminal_text, utc_now
from goldboard.workflows.judge_figures import (
    RATIO_READING,
    abstention_note,
    abstention_rows,
    abstention_table,
    add_rho_intervals,
    consistency_text,
    f1_table,
    ratio_text,
    rho_text,
    study_figures,
    verdict,
)
from goldboard.workflows.judge_responses import read_responses


def split_names(spec: str | Sequence[str] | None, param: str) -> list[str]:
    """``"a,b"`` or ``["a", "b,c"]`` -> ``["a", "b", "c"]`` (no empties, no repeats)."""
    if spec is None:
        return []
    parts = [spec] if isinstance(spec, str) else list(spec)
    names = [n.strip() for p in parts for n in str(p).split(",") if n.strip()]
    if len(set(names)) != len(names):
        raise GoldboardError(f"{','.join(names)}: a name is given twice", param=param)
    return names


def check_epsilon(epsilon: float, param: str) -> None:
    """A margin in [0, 1) (the alt-test's own check, made before anything is recorded)."""
    if not (np.isfinite(epsilon) and 0 <= epsilon < 1):
        raise GoldboardError(f"{epsilon}: give a margin in [0, 1), e.g. 0.2 for experts", param=param)


def epsilon_choice(epsilon: float | None, expertise: str | None) -> tuple[float, str]:
    """The margin and why: ``--epsilon`` as given, or the authors' value for ``expertise``."""
    if epsilon is not None and expertise is not None:
        raise GoldboardError("give the margin or the humans' expertise, not both", param="epsilon")
    if epsilon is None and expertise is None:
        raise GoldboardError(
            "give the cost-benefit margin, e.g. 0.2 for expert humans (0.15 skilled, 0.1 crowd)", param="epsilon"
        )
    if expertise is not None:
        if expertise not in EPSILON_GUIDANCE:
            raise GoldboardError(f"{expertise!r}: use one of {', '.join(EPSILON_GUIDANCE)}", param="expertise")
        return EPSILON_GUIDANCE[expertise], f"the authors' value for {expertise} annotators"
    check_epsilon(epsilon, "epsilon")
    for kind, value in EPSILON_GUIDANCE.items():
        if abs(epsilon - value) < 1e-12:
            return float(epsilon), f"the authors' value for {kind} annotators"
    return float(epsilon), "set by the study team"


def value_matrix(
    ratings: pd.DataFrame, items: list[str], raters: list[str], scoring: str, source: str
) -> tuple[np.ndarray, dict[str, int]]:
    """items x raters float grid (NaN: no rating).  ``accuracy``: a code per distinct label;
    ``neg-rmse``: the numbers.  Blank values count as no rating."""
    grid = np.full((len(items), len(raters)), np.nan)
    sub = ratings[ratings["rater"].isin(raters) & (ratings["value"].astype(str).str.strip() != "")]
    codes: dict[str, int] = {}
    if scoring == "accuracy":
        vals = [codes.setdefault(v, len(codes)) for v in sub["value"].astype(str)]
    else:
        nums = pd.to_numeric(sub["value"].astype(str).str.strip(), errors="coerce").to_numpy(dtype=float)
        bad = np.flatnonzero(~np.isfinite(nums))
        if bad.size:
            row = sub.iloc[int(bad[0])]
            line = row.get("_line", "")
            raise ParamError(
                "{where}: item {item} rater {rater} {field}: {value!r} is not a number; {scoring} "
                "neg-rmse needs numeric scores (use accuracy for labels)",
                where=f"{source}:{line}" if line else source,
                item=row["item_id"],
                rater=row["rater"],
                field=row["field"],
                value=row["value"],
            )
        vals = nums
    ii = pd.Index(items).get_indexer(sub["item_id"])
    rr = pd.Index(raters).get_indexer(sub["rater"])
    grid[ii, rr] = vals
    return grid, codes


def _field_rows(df: pd.DataFrame, field: str | None, source: str) -> tuple[pd.DataFrame, str]:
    fields = sorted(set(df["field"].astype(str)) - {""}, key=natural_key)
    if not len(df):
        raise GoldboardError(f"{source}: no ratings (the table has a header only)")
    if field is None:
        if len(fields) != 1:
            raise GoldboardError(f"{source} has fields {', '.join(fields) or '(none)'}: name one", param="field")
        field = fields[0]
    if field not in fields:
        raise GoldboardError(
            f"{source}: no ratings of field {field!r}{did_you_mean(field, fields)} (fields: {', '.join(fields)})",
            param="field",
        )
    return df[df["field"].astype(str) == field], field


def _raters(df: pd.DataFrame, judges: list[str], humans: list[str], source: str) -> list[str]:
    present = sorted(set(df["rater"].astype(str)), key=natural_key)
    if not judges:
        raise GoldboardError("name the judge(s), e.g. gpt-4o or gpt-4o,gemini", param="judges")
    for name in judges + humans:
        if name not in present:
            raise GoldboardError(
                f"{source}: no rater {name!r} in this field{did_you_mean(name, present)} (raters: {', '.join(present)})",
                param="judges" if name in judges else "humans",
            )
    both = set(judges) & set(humans)
    if both:
        raise GoldboardError(f"{', '.join(sorted(both))}: both a judge and a human", param="humans")
    return humans or [r for r in present if r not in judges]


def judge_table(
    path: str | Path,
    *,
    judges: Sequence[str],
    field: str | None = None,
    epsilon: float | None = None,
    expertise: str | None = None,
    scoring: str = "accuracy",
    humans: Sequence[str] = (),
    q: float = 0.05,
    min_items_per_human: int = 30,
    small_sample: str = "wilcoxon",
) -> dict[str, Any]:
    """The alt-test of ``judges`` on the long ratings table ``path`` (see the module doc)."""
    path = Path(path)
    source = path.name
    eps, why = epsilon_choice(epsilon, expertise)
    df = load_ratings_file(path)
    df, field = _field_rows(df, field, source)
    judges, humans = list(judges), list(humans)
    humans = _raters(df, judges, humans, source)
    warnings = duplicate_ratings(df.drop(columns=["round"], errors="ignore"), source)
    items = sorted(set(df["item_id"].astype(str)), key=natural_key)
    grid, _ = value_matrix(df, items, humans + judges, scoring, source)
    results = alt_test(
        grid[:, : len(humans)],
        grid[:, len(humans) :],
        human_names=humans,
        judge_names=judges,
        scoring=scoring,
        epsilon=eps,
        q=q,
        min_items_per_human=min_items_per_human,
        small_sample=small_sample,
    )
    data = result_data(results, source=source, field=field, humans=humans, why=why, warnings=warnings)
    add_rho_intervals(data, grid[:, : len(humans)], grid[:, len(humans) :], judges, scoring)
    data["verdict"] = verdict(data)
    return data


def result_data(
    results: list[AltTestResult], *, source: str, field: str, humans: list[str], why: str, warnings: list[str]
) -> dict[str, Any]:
    """The JSON contract of ``goldboard judge`` (one entry per judge, best advantage probability first)."""
    notes = list(warnings)
    for r in results:
        notes += [w for w in r.warnings if w not in notes]
    judges = sorted((r.to_dict() for r in results), key=lambda d: -d["advantage_probability"])
    for d in judges:
        d.pop("warnings", None)
    first = results[0]
    return {
        "source": source,
        "field": field,
        "humans": humans,
        "scoring": first.scoring,
        "epsilon": first.epsilon,
        "epsilon_reason": why,
        "q": first.q,
        "judges": judges,
        "warnings": notes,
    }


# --------------------------------------------------------------------------- rendering


def _p_text(p: Any) -> str:
    if p is None:
        return "undefined"
    if isinstance(p, str):
        return p
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def judge_rows(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["judge", "winning rate", "rho", "result", "items", "rho 95% CI (item bootstrap)"]
    rows = [
        [
            d["judge"],
            f"{d['winning_rate']:.2f}",
            f"{d['advantage_probability']:.2f}",
            "PASSED" if d["passed"] else "FAILED",
            str(d["items_used"]),
            "not estimable" if d.get("rho_low") is None else f"{d['rho_low']:.2f} to {d['rho_high']:.2f}",
        ]
        for d in data["judges"]
    ]
    return head, rows


def human_rows(judge: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["excluded human", "items", "judge advantage", "human advantage", "test", "p", "judge wins"]
    rows = [
        [
            c["human"],
            str(c["n_items"]),
            f"{c['judge_advantage']:.2f}",
            f"{c['human_advantage']:.2f}",
            "t" if c["test"] == "t" else "Wilcoxon",
            _p_text(c["p_value"]),
            "yes" if c["rejected"] else "no",
        ]
        for c in judge["humans"]
    ]
    rows += [[h["human"], str(h["n_items"]), "", "", "not tested", h["reason"], ""] for h in judge["skipped"]]
    return head, rows


def headline(data: dict[str, Any]) -> str:
    return (
        f"Alt-test ({data['field']}; {data['scoring']}; epsilon {data['epsilon']:g}, {data['epsilon_reason']}; "
        f"Benjamini-Yekutieli q {data['q']:g}): {len(data['humans'])} humans ({', '.join(data['humans'])}); "
        f"a judge passes when its winning rate is >= 0.50; compare judges by rho"
    )


def _plain_table(head: list[str], rows: list[list[str]], right=()) -> str:
    """A terminal table; cells are terminal-safe first, so the columns line up."""
    head = [terminal_text(c) for c in head]
    rows = [[terminal_text(c) for c in r] for r in rows]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)] if rows else [len(h) for h in head]
    right = set(right)
    lines = [
        "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        for r in [head, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _ci_text(est: dict[str, Any] | None) -> str:
    if est is None:
        return "not estimable"
    if est["low"] is None:
        return f"{est['value']:.2f} (CI not estimable: degenerate table)"
    return f"{est['value']:.2f} ({est['low']:.2f} to {est['high']:.2f})"


LOO_NOTE = (
    "each clinician against leave-one-out gold: the decision in force, else the value the other clinicians "
    "who rated the item agree on; items whose gold would rest on that clinician alone are left out"
)


def agreement_table(data: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Who agrees with whom: clinician pairs, each judge vs each clinician and gold, clinicians vs gold."""
    what = {"clinicians": "clinician vs clinician", "judge": "judge", "gold": "clinician vs leave-one-out gold"}
    head = ["", "rater", "with", "items", "kappa (95% CI)", "alpha (95% CI)"]
    rows = [
        [what[r["kind"]], r["a"], r["b"], str(r["n_items"]), _ci_text(r.get("kappa")), _ci_text(r.get("alpha"))]
        for r in data.get("agreement", [])
    ]
    return head, rows


def confusion_rows(conf: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    head = ["gold / judge", *conf["labels"]]
    return head, [[lab, *map(str, row)] for lab, row in zip(conf["labels"], conf["counts"])]


def render_judge(data: dict[str, Any], fmt: str = "table") -> str:
    """``table`` (terminal), ``markdown`` or ``json``."""
    import json

    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    table = _plain_table if fmt == "table" else md_table
    line = (lambda s: s) if fmt == "table" else md_escape
    parts = [line(headline(data)), "", table(*judge_rows(data), right=[1, 2, 4])]
    for d in data["judges"]:
        parts += ["", line(f"{d['judge']}: each human left out in turn"), "", table(*human_rows(d), right=[1, 2, 3, 5])]
    if data.get("agreement"):
        title = f"Agreement on {data['field']} (Cohen's kappa, Krippendorff's alpha; gold: {data['gold']}; {LOO_NOTE})"
        parts += ["", line(title)]
        parts += ["", table(*agreement_table(data), right=[3])]
    for conf in data.get("confusion", []):
        parts += ["", line(f"{conf['judge']} against gold ({conf['n_items']} items): rows gold, columns judge")]
        head, rows = confusion_rows(conf)
        parts += ["", table(head, rows, right=range(1, len(head)))]
    for block in figure_blocks(data):
        parts += ["", line(block["title"])]
        if block.get("header"):
            parts += ["", table(block["header"], block["rows"], right=block["right"])]
        parts += [line(t) for t in block.get("notes", [])]
    parts += ["", line(data["verdict"])] if data.get("verdict") else []
    parts += [f"Warning: {line(w)}" for w in data["warnings"]] if fmt == "markdown" else []
    return "\n".join(parts) + "\n"


def _seed_words(data: dict[str, Any]) -> str:
    """Whether another seed can move the counts: datasets were added (``max_batches``) until no count
    lay within 2 Monte Carlo SEs of 0.5 or 80%, or some still do."""
    batches, left = data["settings"].get("batches", 1), data.get("ambiguous")
    if left is None or (batches == 1 and left):
        return ", so another seed can move either count by a step of the simulated counts."
    added = f" (datasets added in {batches} batches until none did)" if batches > 1 else ""
    if not left:
        return f"; no simulated count lies within 2 SEs of 0.5 or 80%{added}, so another seed is unlikely to move either count."
    return (
        f"; after {batches} batches of datasets, {', '.join(map(str, left))} items still lie within 2 SEs of 0.5 "
        "or 80%, so another seed can move a count there by a step."
    )


def figure_blocks(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Balanced F1, the panel ratio, abstention and the runs' consistency: a title, an optional
    table and notes each (the terminal and the report show the same)."""
    blocks = []
    for e in data.get("balanced_f1", []):
        h, r = f1_table(e)
        blocks.append(
            {"title": f"{e['judge']}: balanced F1 on {data['field']} (HealthBench: mean of the two classes' F1) "
             "against each clinician, beside that clinician's against the other clinicians", "header": h, "rows": r,
             "right": [1, 2, 3, 4], "csv": f"judge_{e['judge']}_balanced_f1"}
        )  # fmt: skip
    for r in data.get("panel_ratio", []):
        blocks.append(
            {"title": f"{r['judge']}: agreement with the panel relative to the clinicians' with each other: "
             f"{ratio_text(r)}", "notes": [f"({RATIO_READING}, {r['n_boot']} resamples, seed {r['seed']})"]}
        )  # fmt: skip
    if data.get("abstention"):
        h, r = abstention_table(data["abstention"])
        blocks.append(
            {"title": f"Abstention on {data['field']}, the judge beside the clinicians", "header": h, "rows": r,
             "right": [1, 2, 3, 4, 5], "csv": "judge_abstention", "notes": [abstention_note(data["abstention"])]}
        )  # fmt: skip
    for name, run in (data.get("runs") or {}).items():
        text = consistency_text(run)
        if text:
            blocks.append({"title": f"{name}, {text}"})
    for text in (data.get("provenance") or {}).values():
        if text:
            blocks.append({"title": text})
    return blocks


def plan_sentence(data: dict[str, Any]) -> str:
    st = data["settings"]
    need, need80 = data["items_needed"], data["items_for_80"]
    first = f"{need} items" if need is not None else "more than the largest count simulated"
    eighty = f"{need80} items" if need80 is not None else "more than the largest count simulated"
    studies = (
        f"{st['n_datasets']} simulated studies per item count (each its own dataset)"
        if st["n_boots"] == 1
        else f"{st['n_datasets'] * st['n_boots']} simulated studies per item count ({st['n_datasets']} datasets "
        f"resampled {st['n_boots']} times: not independent studies)"
    )
    se, wse = data.get("passed_se_near_80"), data.get("winning_rate_se_near_50")
    known = [x for x in (se, wse) if x is not None and x == x]
    precision = (
        " Monte Carlo error (from the spread between datasets): "
        + "; ".join(
            ([f"the mean winning rate has an SE of up to {wse:.3f} near 0.5"] if wse is not None and wse == wse else [])
            + (
                [f"the pass share up to {100 * se:.1f} percentage points near 80%"]
                if se is not None and se == se
                else []
            )
        )
        + _seed_words(data)
        if known
        else ""
    )
    return (
        f"In {studies} ({st['n_categories']} categories, "
        f"{st['n_humans']} humans with noise {st['human_noise']:g} -- mean pairwise kappa {data['human_kappa']:.2f} -- "
        f"and a judge with noise {st['judge_noise']:g} -- accuracy {data['judge_accuracy']:.2f} against the truth; "
        f"epsilon {st['epsilon']:g}, seed {st['seed']}), the judge's mean winning rate stays at 0.5 or more from "
        f"{first} on, and it passes in at least 80% of the studies from {eighty} on (Calderon et al. 2025, "
        f"appendix C).{precision}"
    )


def render_plan(data: dict[str, Any], fmt: str = "table") -> str:
    """``goldboard plan judge``: the sentence and the curve as a table (or JSON)."""
    import json

    if fmt == "json":
        return json.dumps({**data, "sentence": plan_sentence(data)}, indent=2) + "\n"
    head = ["items", "mean winning rate", "passed (MC SE)", "rho (5th-95th pct)"]
    rows = [
        [str(r["items"]), f"{r['winning_rate']:.2f}",
         f"{100 * r['passed_share']:.0f}% ({100 * r['passed_se']:.1f})" if r["passed_se"] == r["passed_se"]
         else f"{100 * r['passed_share']:.0f}%",
         f"{r['rho']:.2f} ({r['rho_p05']:.2f}-{r['rho_p95']:.2f})"]
        for r in data["rows"]
    ]  # fmt: skip
    table = _plain_table if fmt == "table" else md_table
    return "\n".join([plan_sentence(data), "", table(head, rows, right=[0, 1, 2])]) + "\n"


# --------------------------------------------------------------------------- studies
#
# Judge labels live in ``judges/labels.csv`` (item_id, rater, field, value, annotation_id), never in
# ``rounds/N/ratings.csv``: agree, flag, adjudication, gold and the methods text read the rounds
# only, so a judge never counts as a clinician.  To count a model as a rater, make it one
# (``goldboard study add-rater`` and ``pull --from-table``).  ``study.toml [extra.judge]`` records
# the judges' label files (sha256) and the test's settings (epsilon and why, scoring, field).

JUDGE_KEY = "judge"
LABELS_COLUMNS = ["item_id", "rater", "field", "value", "annotation_id"]


def labels_path(study: Study) -> Path:
    return study.path / "judges" / "labels.csv"


def judge_settings(study: Study) -> dict[str, Any]:
    """``{"judges": {name: {...}}, "epsilon": ..., ...}`` as recorded (empty: no judges)."""
    return dict(study.extra.get(JUDGE_KEY) or {})


def study_judges(study: Study) -> list[str]:
    return list((judge_settings(study).get("judges") or {}).keys())


def read_judge_labels(study: Study) -> pd.DataFrame:
    p = labels_path(study)
    if not p.exists():
        return pd.DataFrame(columns=LABELS_COLUMNS)
    return read_csv_frame(p, " (judge labels)")


def _judge_rows(path: Path, judge: str, schema: Schema) -> pd.DataFrame:
    """The judge's rows of ``path`` (item_id, field, value[, rater]) in canonical spelling."""
    df = read_table(path)
    source = path.name
    for col in ("item_id", "field", "value"):
        if col not in df.columns:
            cols = ", ".join(c for c in df.columns if c != "_line")
            raise GoldboardError(
                f"{source}: no {col!r} column (columns: {cols}); judge labels are a table item_id, field, value "
                f"(and rater, when it holds several judges)",
                param="labels",
            )
    if "rater" in df.columns:  # 'gpt' beside 'GPT' or 'gpt<U+200B>': one judge written two ways, refused
        df = df.assign(rater=check_rater_column(df["rater"], lambda i: f"{source}:{df['_line'].iloc[i]}"))
        names = sorted(set(df["rater"]), key=natural_key)
        df = df[df["rater"] == judge]
        if not len(df):
            raise GoldboardError(f"{source}: no rows of rater {judge!r}{did_you_mean(judge, names)}", param="labels")
    df = df.assign(rater=judge, item_id=df["item_id"].astype(str).str.strip())
    known = [f.name for f in adjudicable_fields(schema)]
    for line, fname in zip(df["_line"], df["field"].astype(str)):
        if fname not in known:
            raise GoldboardError(
                f"{source}:{line}: field {fname!r} is not a field of the study's schema{did_you_mean(fname, known)}",
                param="labels",
            )
    df = normalized_values(df, schema, source)
    duplicate_ratings(df, source)
    df["annotation_id"] = [f"{source}:{line}" for line in df["_line"]]
    return df[LABELS_COLUMNS]


def judge_labels_entry(study: Study, path: str | Path, judge: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """``judge``'s labels from the table ``path`` checked, and the study's labels with them in place
    of that judge's earlier ones, plus their record for ``study.toml``; nothing is written."""
    path = Path(path)
    check_rater_name(judge, "judges")
    if judge in study.raters:
        raise GoldboardError(
            f"{judge!r} is a rater (a clinician) of this study; a judge needs its own name", param="judges"
        )
    key = identity_key(judge)
    if study.decisions_path.exists() and any(
        identity_key(e.get("adjudicator", "")) == key for e in read_decisions(study.decisions_path)
    ):
        raise GoldboardError(
            f"{judge!r} is an adjudicator of this study (a name in decisions.jsonl); a judge needs its own name",
            param="judges",
        )
    if not path.exists():
        raise GoldboardError(f"{path}: file not found", param="labels")
    rows = _judge_rows(path, judge, study.schema)
    old = read_judge_labels(study)
    merged = pd.concat([old[old["rater"] != judge], rows], ignore_index=True)[LABELS_COLUMNS]
    entry = {
        "source": path.name,
        "sha256": sha256_file(path),
        "labels": len(rows),
        "items": int(rows["item_id"].nunique()),
        "recorded_at": utc_now(),
    }
    return merged, entry


def record_judge_labels(study: Study, path: str | Path, judge: str, merged=None, entry=None) -> str:
    """Record ``judge``'s labels from the table ``path`` in the study (replacing that judge's
    earlier labels); returns what was recorded, one line.  ``merged``/``entry``: as
    :func:`judge_labels_entry` returned them (checked already)."""
    if merged is None or entry is None:
        merged, entry = judge_labels_entry(study, path, judge)
    write_csv_atomic(merged, labels_path(study))
    settings = judge_settings(study)
    study.extra[JUDGE_KEY] = {**settings, "judges": {**(settings.get("judges") or {}), judge: entry}}
    study.save()
    return f"{judge}: {entry['labels']} labels of {entry['items']} items recorded in {labels_path(study)}"


def _settings_for_run(study: Study, epsilon, expertise, scoring, field) -> dict[str, Any]:
    """This run's epsilon (and why), scoring and field: given now, else as recorded."""
    settings = judge_settings(study)
    if epsilon is not None or expertise is not None:
        eps, why = epsilon_choice(epsilon, expertise)
    elif "epsilon" in settings:
        eps, why = float(settings["epsilon"]), str(settings.get("epsilon_reason", "set by the study team"))
        if not (np.isfinite(eps) and 0 <= eps < 1):
            raise GoldboardError(
                f"{study.path / 'study.toml'}: [extra.judge] epsilon = {eps} is not a margin in [0, 1); "
                f"give a new epsilon (or the expertise it follows from) to replace it"
            )
    else:
        eps, why = epsilon_choice(None, None)  # the error that asks for it
    fields = {f.name: f for f in adjudicable_fields(study.schema) if f.kind != "multi"}
    fname = field or settings.get("field") or study.schema.primary_field.name
    if fname not in fields:
        raise GoldboardError(
            f"{fname!r}: not a single-choice field of the schema{did_you_mean(fname, list(fields))} "
            f"(fields: {', '.join(fields)})",
            param="field",
        )
    # the recorded scoring belongs to the recorded field; another field starts from accuracy
    scoring = scoring or (settings.get("scoring") if fname == settings.get("field") else None) or "accuracy"
    if scoring == "neg-rmse" and fields[fname].level != "ordinal":
        raise GoldboardError(
            f"neg-rmse compares positions on an ordered scale; {fname} is {fields[fname].kind}: use accuracy",
            param="scoring",
        )
    return {"epsilon": eps, "epsilon_reason": why, "scoring": scoring, "field": fname}


def _codes_as_float(codes: np.ndarray, k: int) -> np.ndarray:
    """Category codes -> floats for the alt-test: missing (-1) and blank (k) are NaN."""
    return np.where((codes >= 0) & (codes < k), codes, np.nan).astype(float)


def judge_study(
    study_dir: str | Path,
    *,
    judges: Sequence[str] = (),
    labels: str | Path | None = None,
    field: str | None = None,
    epsilon: float | None = None,
    expertise: str | None = None,
    scoring: str | None = None,
    q: float = 0.05,
    min_items_per_human: int = 30,
    small_sample: str = "wilcoxon",
) -> dict[str, Any]:
    """The alt-test of a study's judges against its clinicians, with agreement beside it.

    ``labels``: first record this table as the labels of the one judge named.  The epsilon (and
    why), scoring and field used are recorded in ``study.toml`` for the report."""
    study = Study.open(study_dir)
    run = _settings_for_run(study, epsilon, expertise, scoring, field)
    check_options(scoring=run["scoring"], small_sample=small_sample, epsilon=run["epsilon"], q=q)
    new = None  # every input is checked before anything is recorded (labels, settings)
    if labels is not None:
        if len(judges) != 1:
            raise ParamError("{judges}: {labels} records one judge's labels: name that judge once")
        new = judge_labels_entry(study, labels, judges[0])
    all_labels = new[0] if new else read_judge_labels(study)
    known = sorted(set(study_judges(study)) | ({judges[0]} if new else set()), key=natural_key)
    if not known:
        raise GoldboardError(
            f"{study.path}: no judge labels yet (record them: `goldboard judge --study {study.path} --judge NAME "
            f"--labels FILE`)",
            param="judges",
        )
    for name in judges:
        if name not in known:
            raise GoldboardError(
                f"{name!r}: no labels recorded{did_you_mean(name, known)} (judges: {', '.join(known)})", param="judges"
            )
    _check_judge_fields(all_labels, list(judges) or known, run["field"])
    recorded = [record_judge_labels(study, labels, judges[0], *new)] if new else []
    # the settings (checked above) are the report's too, also when the test below cannot run
    study.extra[JUDGE_KEY] = {**judge_settings(study), **run}
    study.save()
    data = study_alt_test(
        study, list(judges) or known, run, q=q, min_items_per_human=min_items_per_human, small_sample=small_sample
    )
    data["recorded"] = recorded
    return data


def _check_judge_fields(labels: pd.DataFrame, judges: list[str], field: str) -> None:
    """Each judge has labels of the field tested."""
    jl = labels[labels["field"] == field]
    for j in judges:
        if not (jl["rater"] == j).any():
            have = sorted(set(labels.loc[labels["rater"] == j, "field"]))
            raise GoldboardError(
                f"judge {j} has no labels of {field} (it has: {', '.join(have) or 'none'})", param="field"
            )


def study_alt_test(study: Study, judges: list[str], run: dict[str, Any], **opts: Any) -> dict[str, Any]:
    """The test on the ratings in force, plus agreement and the judge-vs-gold confusion."""
    schema = study.schema
    ratings = study_ratings(study)
    # the clinicians who rated (a study rater with no rating is no human in the test; gold counts them missing)
    grid = rating_grid(ratings, schema, active_raters(ratings, study.raters), source="ratings")
    f = grid.field(run["field"])
    k = len(f.categories)
    humans = _codes_as_float(grid.codes[f.name], k)
    labels = read_judge_labels(study)
    _check_judge_fields(labels, judges, f.name)
    jl = labels[labels["field"] == f.name]
    known = jl["item_id"].isin(grid.items)  # value_grid would put an unknown item (indexer -1) on the last row
    jcodes = np.column_stack(
        [category_codes(value_grid(jl[known & (jl["rater"] == j)], pd.Index(grid.items), [j]), f)[:, 0] for j in judges]
    )
    results = alt_test(
        humans, _codes_as_float(jcodes, k), human_names=grid.raters, judge_names=judges,
        scoring=run["scoring"], epsilon=run["epsilon"], **opts,
    )  # fmt: skip
    data = result_data(
        results, source=str(study.path), field=f.name, humans=list(grid.raters), why=run["epsilon_reason"], warnings=[]
    )
    data["rounds"] = sorted(set(grid.selection.rounds.values()))
    for j in judges:
        unknown = set(jl.loc[jl["rater"] == j, "item_id"]) - set(grid.items)
        if unknown:
            data["warnings"].append(
                f"{j}: {len(unknown)} label(s) of items no clinician rated are not used "
                f"(e.g. {sorted(unknown, key=natural_key)[0]!r}; check the item ids)"
            )
    gold = _gold_codes(study, ratings, grid.items, f)
    data["agreement"] = agreement_rows(grid.codes[f.name], list(grid.raters), jcodes, judges, gold, f)
    data["confusion"] = confusion_tables(jcodes, judges, gold, f)
    data["gold"] = gold[1]
    _beside_the_test(study, data, grid, f, judges, jcodes, humans, run["scoring"])
    return data


def _beside_the_test(study: Study, data: dict, grid, f: Field, judges: list[str], jcodes, humans, scoring) -> None:
    """rho's interval, balanced F1, the panel ratio, abstention, the runs' consistency, the verdict."""
    k = len(f.categories)
    add_rho_intervals(data, humans, _codes_as_float(jcodes, k), judges, scoring)
    data.update(study_figures(grid.codes[f.name], list(grid.raters), jcodes, judges, f))
    cannot = [judge_cannot_items(study, j, f.name) for j in judges]
    asked = [judge_asked_items(study, j) | c for j, c in zip(judges, cannot)]
    data["abstention"] = abstention_rows(
        grid.codes[f.name], grid.rated, list(grid.raters), jcodes, judges, cannot, list(grid.items), f, asked
    )
    entries = judge_settings(study).get("judges") or {}
    data["runs"] = {
        j: {x: entries[j]["run"].get(x) for x in ("samples", "self_consistency", "position_bias", "models_reported")}
        for j in judges
        if (entries.get(j) or {}).get("run")
    }
    data["provenance"] = {j: provenance_text(j, entries.get(j) or {}) for j in judges}
    data["verdict"] = verdict(data)


def _count(n: Any, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n if n is not None else '?'} {word}s"


def _samples_words(n: int) -> str:
    return "one answer per item" if n == 1 else f"{n} samples per item"


def provenance_text(name: str, entry: dict[str, Any]) -> str:
    """Where a judge's labels come from: its `goldboard judge run` (model the endpoint reported,
    endpoint, template hash, date, parameters, the per-answer record), or the table recorded."""
    r = entry.get("run")
    if r:
        model = ", ".join(r.get("models_reported") or []) or r.get("model", "")
        return (
            f"{name}'s labels: {model} (the model the endpoint reported) at {r.get('endpoint')} "
            f"({r.get('endpoint_kind', 'endpoint')}), prompted from the schema (template sha256 "
            f"{str(r.get('template', ''))[:12]}), round {r.get('round')}, on {str(r.get('ran_at', ''))[:10]}; temperature "
            f"{r.get('temperature')}, seed {r.get('seed')}, at most {r.get('max_tokens')} tokens, "
            f"{r.get('response_format')}, {_samples_words(r.get('samples', 1))}. Each answer, with its prompt's "
            f"hash, raw response, tokens, latency and time: {r.get('responses')} in the study"
        )
    if entry.get("source"):
        return (
            f"{name}'s labels: the table {entry['source']} (sha256 {str(entry.get('sha256', ''))[:12]}), recorded "
            f"{str(entry.get('recorded_at', ''))[:10]}, {_count(entry.get('labels'), 'label')} on "
            f"{_count(entry.get('items'), 'item')}; how they were made is not recorded by goldboard"
        )
    return ""


def judge_cannot_items(study: Study, judge: str, field: str) -> set[str]:
    """The items on which ``judge``'s recorded run answered "cannot judge" for ``field``."""
    run = ((judge_settings(study).get("judges") or {}).get(judge) or {}).get("run") or {}
    rel = run.get("abstentions")
    if not rel or not (study.path / rel).exists():
        return set()
    df = read_csv_frame(study.path / rel, " (judge abstentions)")
    return set(df.loc[df["field"].astype(str) == field, "item_id"].astype(str))


def judge_asked_items(study: Study, judge: str) -> set[str]:
    """The items ``judge`` was given: those with a label of it in the study, and, for a run of
    `goldboard judge run`, every item its recorded run got an answer for (an answer off the schema
    too).  An item of the ratings in force the judge was never asked (another round, ``--limit``)
    is no abstention of the judge."""
    labels = read_judge_labels(study)
    items = set(labels.loc[labels["rater"].astype(str) == judge, "item_id"].astype(str))
    run = ((judge_settings(study).get("judges") or {}).get(judge) or {}).get("run") or {}
    path = study.path / str(run.get("responses") or "")
    if run.get("responses") and path.is_file():
        same = ("template_sha256", "temperature", "seed", "max_tokens")
        want = {"template_sha256": run.get("template"), **{k: run.get(k) for k in same[1:]}}
        items |= {
            str(r["item_id"])
            for r in read_responses(path).values()
            if r.get("sample") == 0 and all(r.get(k) == want[k] for k in same)
        }
    return items


def _gold_codes(study: Study, ratings: pd.DataFrame, items: list[str], f: Field) -> tuple[np.ndarray, str, np.ndarray]:
    """Gold category codes per item (-1: none), where gold came from (release or provisional), and
    which items' gold is a decision in force (method ``adjudicated``: the gold a clinician's
    leave-one-out comparison keeps, :func:`leave_one_out_gold`)."""
    releases = list_releases(study.gold_dir)
    if releases:
        gold, _ = read_release(releases[-1][1])
        where = f"gold release {releases[-1][1].name}"
    else:
        decisions = read_decisions(study.decisions_path) if study.decisions_path.exists() else []
        gold = resolve_gold(ratings, study.schema, decisions, study.grid_raters())
        where = "provisional gold (unanimous and adjudicated items; no release yet)"
    g = gold[(gold["field"] == f.name) & (gold["gold_value"].astype(str) != "")]
    lookup = {v: i for i, v in enumerate(f.categories)}
    by_item = dict(zip(g["item_id"].astype(str), g["gold_value"].map(lambda v: lookup.get(v, -1))))
    decided = set(g.loc[g["method"].astype(str) == "adjudicated", "item_id"].astype(str))
    codes = np.array([by_item.get(i, -1) for i in items], dtype=int)
    return codes, where, np.array([i in decided for i in items], dtype=bool)


def leave_one_out_gold(hcodes: np.ndarray, x: int, gold: np.ndarray, decided: np.ndarray, k: int) -> np.ndarray:
    """Clinician ``x``'s gold without clinician ``x`` (codes per item, -1: none): the decision in
    force where there is one, else the value every other clinician who rated the item gave; none
    where no other clinician rated it (gold would rest on ``x`` alone) or they disagree.  A gold
    made of ``x``'s own unanimity with the others would score ``x`` against itself."""
    others = np.delete(hcodes, x, axis=1)
    valid = (others >= 0) & (others < k)
    lo = np.where(valid, others, k).min(axis=1)
    hi = np.where(valid, others, -1).max(axis=1)
    out = np.where(valid.any(axis=1) & (lo == hi), lo, -1)
    return np.where(decided, gold, out).astype(int)


def _pair_stats(a: np.ndarray, b: np.ndarray, f: Field) -> dict[str, Any]:
    """Cohen's kappa (Fleiss-Cohen-Everitt SE) and Krippendorff's alpha (Gwet SE), Wald 95% CIs,
    on the items both rated."""
    k = len(f.categories)
    both = (a >= 0) & (a < k) & (b >= 0) & (b < k)
    n = int(both.sum())
    out: dict[str, Any] = {"n_items": n}
    if n < 2:
        return {**out, "kappa": None, "alpha": None}
    table = np.zeros((k, k))
    np.add.at(table, (a[both], b[both]), 1)
    kap = cohen_kappa(table)
    alpha = krippendorff_alpha(rating_counts(np.column_stack([a[both], b[both]]), k), f.level or "nominal")
    for name, est in (("kappa", kap), ("alpha", alpha)):
        v, se = float(est.value), float(est.se)
        # a zero SE collapses the Wald interval (a degenerate table): not estimable, never (1.00 to 1.00)
        lo, hi = wald_ci(v, se) if np.isfinite(se) and se > 0 else (float("nan"), float("nan"))
        out[name] = None if not np.isfinite(v) else {"value": v, "low": _finite(lo), "high": _finite(hi)}
    out["percent_agreement"] = float(np.trace(table) / n)
    return out


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def agreement_rows(
    hcodes: np.ndarray, humans: list[str], jcodes: np.ndarray, judges: list[str], gold: tuple, f: Field
) -> list[dict[str, Any]]:
    """Clinician pairs, each judge against each clinician and gold, each clinician against
    leave-one-out gold (:func:`leave_one_out_gold`; ``gold`` is :func:`_gold_codes`)."""
    rows = []
    for x in range(len(humans)):
        for y in range(x + 1, len(humans)):
            rows.append(
                {"kind": "clinicians", "a": humans[x], "b": humans[y], **_pair_stats(hcodes[:, x], hcodes[:, y], f)}
            )
    for j, name in enumerate(judges):
        for x, h in enumerate(humans):
            rows.append({"kind": "judge", "a": name, "b": h, **_pair_stats(jcodes[:, j], hcodes[:, x], f)})
        rows.append({"kind": "judge", "a": name, "b": "gold", **_pair_stats(jcodes[:, j], gold[0], f)})
    k = len(f.categories)
    for x, h in enumerate(humans):
        loo = leave_one_out_gold(hcodes, x, gold[0], gold[2], k)
        rows.append({"kind": "gold", "a": h, "b": f"gold without {h}", **_pair_stats(hcodes[:, x], loo, f)})
    return rows


def confusion_tables(jcodes: np.ndarray, judges: list[str], gold: tuple, f: Field) -> list[dict[str, Any]]:
    """Per judge: gold (rows) x judge (columns) counts over the items with both."""
    k = len(f.categories)
    out = []
    for j, name in enumerate(judges):
        a, g = jcodes[:, j], gold[0]
        both = (a >= 0) & (a < k) & (g >= 0) & (g < k)
        table = np.zeros((k, k), dtype=int)
        np.add.at(table, (g[both], a[both]), 1)
        out.append({"judge": name, "labels": list(f.categories), "counts": table.tolist(), "n_items": int(both.sum())})
    return out


# --------------------------------------------------------------------------- report


def _kappa_text(row: dict[str, Any]) -> str:
    return f"{row['a']} vs {row['b']}: Cohen's kappa {_ci_text(row.get('kappa'))}, {row['n_items']} items"


def _rounds_text(data: dict[str, Any]) -> str:
    rounds = data.get("rounds") or []
    if not rounds:
        return ""
    word = "round" if len(rounds) == 1 else "rounds"
    return f" (the ratings in force, per item its latest complete round: {word} {', '.join(map(str, rounds))})"


def _items_text(judges: list[dict[str, Any]]) -> str:
    """'50 items', or per judge when the judges were tested on different items."""
    counts = [d["items_used"] for d in judges]
    if len(set(counts)) == 1:
        return f"{counts[0]} items"
    return "items (" + "; ".join(f"{d['judge']}: {d['items_used']}" for d in judges) + ")"


def judge_methods_sentence(data: dict[str, Any]) -> str:
    """The methods text's account of the alt-test (one paragraph; the report appends it)."""
    judges = data["judges"]
    best = judges[0]  # sorted by rho, highest first
    n_h = len(data["humans"])
    compared = "; ".join(f"{d['judge']} (rho = {d['advantage_probability']:.2f})" for d in judges)
    small = any(c["test"] == "wilcoxon" for d in judges for c in d["humans"])
    human_rows = [r for r in data.get("agreement", []) if r["kind"] == "clinicians"]
    parts = [
        f"Whether an LLM judge could replace a clinician was tested with the alternative annotator test "
        f"(alt-test; Calderon, Reichart & Dror, ACL 2025) on {data['field']}: leaving out each of the {n_h} "
        f"clinicians in turn, the judge's and the left-out clinician's alignment with the remaining clinicians "
        f"({'accuracy' if data['scoring'] == 'accuracy' else 'negative RMSE'}) were compared item by item with a "
        f"one-sided paired t-test{' (Wilcoxon signed-rank test for clinicians with fewer than 30 items)' if small else ''} "
        f"against a cost-benefit margin epsilon = {data['epsilon']:g} ({data['epsilon_reason']}), with the "
        f"Benjamini-Yekutieli correction over the clinicians (q = {data['q']:g}), on {_items_text(judges)} "
        f"rated by at least two clinicians and the judge{_rounds_text(data)}.",
        f"Judges compared by their average advantage probability rho: {compared}.",
        f"The judge with the highest rho, {best['judge']}, won against {sum(c['rejected'] for c in best['humans'])} "
        f"of {len(best['humans'])} clinicians (winning rate {best['winning_rate']:.2f}; it "
        f"{'passes' if best['passed'] else 'does not pass'} the test, which needs 0.50).",
    ]
    if human_rows:
        parts.append("The clinicians' own agreement: " + "; ".join(_kappa_text(r) for r in human_rows) + ".")
    if n_h == 2:
        parts.append(
            "With two clinicians the test only asks whether the judge agrees with one more than the other does; "
            "the authors recommend three or more."
        )
    for d in judges:
        parts += _figure_sentences(data, d)
    parts.append("Judge labels were kept apart from the clinicians' ratings: they enter no agreement, flag or gold.")
    return " ".join(parts)


def _figure_sentences(data: dict[str, Any], best: dict[str, Any]) -> list[str]:
    """The methods' account of one judge: kappa and alpha against each clinician and gold, rho's
    interval, balanced F1, the panel ratio and abstention."""

    def num(x: float | None) -> str:
        return "not estimable" if x is None else f"{x:.2f}"

    name = best["judge"]
    out = []
    mine = [r for r in data.get("agreement", []) if r["kind"] == "judge" and r["a"] == name]
    if mine:
        out.append(
            f"Agreement of {name} on {data['field']} (95% CIs): Cohen's kappa "
            + "; ".join(f"against {r['b']} {_ci_text(r.get('kappa'))} ({r['n_items']} items)" for r in mine)
            + "; Krippendorff's alpha "
            + "; ".join(f"against {r['b']} {_ci_text(r.get('alpha'))}" for r in mine)
            + "."
        )
    if best.get("rho_low") is not None:
        out.append(f"For {name}, rho was {rho_text(best)} (95% CI: {best['rho_interval']}).")
    for e in (e for e in data.get("balanced_f1", []) if e["judge"] == name):
        cells = "; ".join(
            f"against {r['clinician']} {num(r['judge_f1'])} (that clinician against the others {num(r['clinician_f1'])})"
            for r in e["rows"]
        )
        out.append(f"Balanced F1 (the mean of the two classes' F1, as HealthBench reports it) of {name}: {cells}.")
    for r in (r for r in data.get("panel_ratio", []) if r["judge"] == name):
        out.append(
            f"{name}'s agreement with the clinicians relative to the clinicians' agreement with each other was "
            f"{ratio_text(r)} ({RATIO_READING}, {r['n_boot']} resamples, seed {r['seed']})."
        )
    ab = data.get("abstention")
    if ab:
        mine = next(r for r in ab["rows"] if r["rater"] == name and r["kind"] == "judge")
        kinds = {r["kind"]: r for r in ab["rows"] if r["kind"] != "judge"}
        them = kinds.get("clinicians") or kinds["clinician"]

        def rate(r: dict) -> str:
            return f"{100 * r['any']['rate']:.0f}%" if r["any"]["rate"] is not None else "n/a"

        out.append(
            f"{name} abstained on {rate(mine)} of {mine['n_items']} items (blank {mine['blank']['count']}, cannot "
            f"tell {mine['cannot tell']['count']}, insufficient information {mine['insufficient information']['count']}); "
            f"the clinicians on {rate(them)} of their {them['n_items']} ratings."
        )
    return out


def judge_section(data: dict[str, Any]) -> dict[str, Any]:
    """The report section (the format of :mod:`goldboard.workflows.report_extras`)."""
    head, rows = judge_rows(data)
    tables = [{"title": "", "header": head, "rows": rows, "right": [1, 2, 4], "csv": "judge_alttest"}]
    for d in data["judges"]:
        h, r = human_rows(d)
        tables.append(
            {"title": f"{d['judge']}: each clinician left out in turn", "header": h, "rows": r, "right": [1, 2, 3, 5],
             "csv": f"judge_{d['judge']}_by_clinician"}
        )  # fmt: skip
    if data.get("agreement"):
        h, r = agreement_table(data)
        tables.append(
            {"title": f"Agreement on {data['field']} (gold: {data['gold']}; {LOO_NOTE})", "header": h, "rows": r,
             "right": [3],
             "csv": "judge_agreement"}
        )  # fmt: skip
    for conf in data.get("confusion", []):
        h, r = confusion_rows(conf)
        tables.append(
            {"title": f"{conf['judge']} against gold ({conf['n_items']} items; rows gold, columns judge)",
             "header": h, "rows": r, "right": list(range(1, len(h))), "csv": f"judge_{conf['judge']}_confusion"}
        )  # fmt: skip
    for block in figure_blocks(data):
        if block.get("header"):  # a table's notes read it: below the table, not among the paragraphs
            tables.append({"title": block["title"], "header": block["header"], "rows": block["rows"],
                           "right": block["right"], "csv": block["csv"], "notes": block.get("notes", [])})  # fmt: skip
    notes = [" ".join([b["title"] + ".", *b.get("notes", [])]) for b in figure_blocks(data) if not b.get("header")]
    paragraphs = [
        *([data["verdict"]] if data.get("verdict") else []),
        headline(data) + ".",
        *[n for n in notes if n],
        "The winning rate is the share of clinicians the judge wins against (passed at 0.50 or more); rho, the "
        "average advantage probability, is the chance that the judge represents the other clinicians at least as "
        "well as a left-out clinician on an item, and compares judges. Judge labels never enter agreement, flags "
        "or gold.",
    ]
    return {"id": "judge", "title": "Can an LLM judge replace a clinician?", "paragraphs": paragraphs,
            "tables": tables, "images": []}  # fmt: skip


def judge_report(study: Study) -> dict[str, Any] | None:
    """``{"section", "methods"}`` for a study with judges (None without); a test that cannot run
    becomes a section saying why, and no methods sentence."""
    settings = judge_settings(study)
    judges = study_judges(study)
    if not judges:
        return None
    try:
        run = _settings_for_run(study, None, None, None, None)
        data = study_alt_test(study, judges, run)
    except GoldboardError as exc:
        return {
            "section": {"id": "judge", "title": "Can an LLM judge replace a clinician?", "tables": [], "images": [],
                        "paragraphs": [f"The alt-test of {', '.join(judges)} could not be computed: {exc}"]},
            "methods": "",
            "warnings": [],
            "settings": settings,
        }  # fmt: skip
    return {
        "section": judge_section(data),
        "methods": " ".join([judge_methods_sentence(data), *run_sentences(settings)]),
        "warnings": [f"LLM judge: {w}" for w in data["warnings"]],
        "data": data,
    }


def run_sentences(settings: dict[str, Any]) -> list[str]:
    """One methods sentence per judge run by ``goldboard judge run``: model, endpoint kind, prompt
    template hash, date and parameters."""
    out = []
    for name, entry in (settings.get("judges") or {}).items():
        r = entry.get("run")
        if not r:
            continue
        model = ", ".join(r.get("models_reported") or []) or r.get("model", "")
        out.append(
            f"Judge {name} was {model} on a {r.get('endpoint_kind', 'endpoint')}, prompted from the schema "
            f"(template sha256 {str(r.get('template', ''))[:12]}) on {str(r.get('ran_at', ''))[:10]}, temperature "
            f"{r.get('temperature')}, seed {r.get('seed')}, at most {r.get('max_tokens')} tokens, answers constrained "
            f"to the schema's values ({r.get('response_format')}); {r.get('abstained', 0)} items abstained and "
            f"{r.get('off_schema', 0)} answers off the schema were held out."
            + (f" Each item was asked several times, the value order shuffled after the first: {consistency_text(r)}."
               if consistency_text(r) else "")
        )  # fmt: skip
    return out
