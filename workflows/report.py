"""The agreement report of a study: collect (:func:`build_report`), render and write.

Rendering lives in :mod:`goldboard.exports.report`; this module gathers the study's
ratings, agreement, flags, decisions, gold release and (optionally) model scores.
"""

from __future__ import annotations

import base64
import contextlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldboard.adjudicate.decisions import identity_key, latest_decisions, log_item_problem, read_decisions
from goldboard.adjudicate.flags import FlagColumns, flag_disagreements, summarize_flags, summary_lines
from goldboard.adjudicate.gold import resolve_gold
from goldboard.analysis.agreement import agreement
from goldboard.analysis.planning import plan_used_scipy
from goldboard.analysis.report_tables import wald_suspect
from goldboard.analysis.scoring_render import header_lines, sections
from goldboard.analysis.scoring_render import render_markdown as score_md
from goldboard.cases.assignment import design_note
from goldboard.cases.intake.files import sources_text
from goldboard.cases.ratings_columns import RatingColumns
from goldboard.errors import GoldboardError, ParamError
from goldboard.exports.gold import read_release
from goldboard.exports.pdf import PAPERS, default_paper, print_pdf
from goldboard.exports.report import (
    LANDIS_KOCH_NOTE,
    blinding_text,
    flat_label,
    headline_rows,
    heatmap_png,
    prevalence,
    rater_vs_gold,
    render_html,
    render_markdown,
    software_versions,
    vs_gold_title,
)
from goldboard.exports.report_extras import SUPPLEMENT_DIR, supplement_owner, write_supplement
from goldboard.fileio import staged_writes, write_text_atomic
from goldboard.study import Study, study_ratings
from goldboard.study_checks import edited_rounds, no_ratings_text
from goldboard.text import utc_now
from goldboard.workflows.agreement import agreement_for_study, analysis_round, held_text
from goldboard.workflows.log_checks import check_log_prefix
from goldboard.workflows.methods import (
    ALL_AGREE_NAME,
    MethodsFacts,
    all_raters_agree,
    computing_versions,
    count_items,
    count_nonempty,
    methods_paragraph,
    ratings_count_text,
)
from goldboard.workflows.report_columns import GOLD_READ, agreement_columns, report_columns
from goldboard.workflows.report_extras import CALIBRATION_KEY, recorded_plan, reviewer_sections

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _with_threshold_views(
    results: dict[str, dict],
    study: Study,
    ratings: pd.DataFrame,
    n_resamples: int,
    seed: int,
    explicit: bool,
    ci: str | None = None,
) -> dict[str, dict]:
    """Add, after each ordinal field with a schema ``threshold`` trigger (medfail: severity
    4-5 vs 1-3), its agreement dichotomised at that threshold, as ``"<field>>=<at>"``."""
    if explicit:
        return results
    out: dict[str, dict] = {}
    for name, res in results.items():
        out[name] = res
        for t in study.schema.triggers_for(name):
            if t.kind == "threshold":
                out[f"{name}>={t.at}"] = agreement(
                    ratings,
                    name,
                    study.schema,
                    raters=study.raters,
                    dichotomize=t.at,
                    n_resamples=n_resamples,
                    seed=seed,
                    ci=ci,
                )
    return out


def _gold_release(study: Study, release: str | None) -> tuple[pd.DataFrame | None, dict | None, str]:
    """The requested (default latest) gold release, else a provisional resolution."""
    gdir = study.gold_dir
    versions = (
        sorted((p for p in gdir.glob("v*") if p.is_dir() and p.name[1:].isdigit()), key=lambda p: int(p.name[1:]))
        if gdir.exists()
        else []
    )
    chosen = None
    if release:
        chosen = gdir / release
        if not chosen.is_dir():
            raise GoldboardError(
                f"{chosen}: no such gold release (have: {', '.join(p.name for p in versions) or 'none'})"
            )
    elif versions:
        chosen = versions[-1]
    if chosen is not None:
        gold, manifest = read_release(chosen)
        return gold, manifest, chosen.name
    return None, None, ""


def _decisions_and_gold(
    study: Study, ratings: pd.DataFrame, release: str | None, round_number: int | None = None
) -> tuple:
    """The decisions log, and the gold release (default latest) or else a provisional resolution
    of ``ratings`` (the study as ``gold export`` reads it, :func:`_gold_view`; ``round_number`` as
    ``gold export --round``): ``(decisions, gold, manifest, release name, provisional)``."""
    decisions = read_decisions(study.decisions_path) if study.decisions_path.exists() else []
    check_log_prefix(study, decisions)  # the log still backs the latest gold release (append-only)
    # a hand-added line for an item the study lacks (in any round: the report reads one)
    problem = log_item_problem(study.decisions_path, study.items_by_round()) if decisions else None
    if problem:
        raise GoldboardError(problem)
    gold, manifest, gold_name = _gold_release(study, release)
    provisional = gold is None
    if gold is None:
        gold = resolve_gold(ratings, study.schema, decisions, study.grid_raters(), round_number=round_number)
    # the report reads these four columns of gold; the rest (raters' values, reasons, dates) is let go
    gold = gold[[c for c in GOLD_READ if c in gold.columns]]
    return decisions, gold, manifest, gold_name, provisional


def _adjudication(study: Study, ratings: pd.DataFrame, release: str | None, round_number: int | None) -> tuple:
    """The adjudication side of the report, read as ``flag --study``, ``status`` and ``gold export``
    read the study (:func:`_gold_view`): ``(decisions, gold, manifest, release name, provisional,
    flags, scope)``; ``scope``: which ratings they come from (:func:`_adjudication_scope`)."""
    view, view_round = _gold_view(study, ratings, round_number)
    decisions, gold, manifest, gold_name, provisional = _decisions_and_gold(study, view, release, view_round)
    flags = flag_disagreements(view, study.schema, study.grid_raters(), round_number=view_round)
    flags.attrs["superseded_keys"] = _superseded_keys(study, view, decisions, view_round, flags)
    return (
        decisions,
        gold,
        manifest,
        gold_name,
        provisional,
        flags,
        _adjudication_scope(view is ratings, round_number, flags),
    )


def _superseded_keys(
    study: Study, view: pd.DataFrame, decisions: list[dict], view_round: int | None, flags: pd.DataFrame
) -> set[tuple[str, str]]:
    """The (item, field) rows whose decision, made on an earlier round, a later round's unanimous
    answer superseded (:func:`resolve_gold`), as ``gold export`` reads the study now; resolved
    only when a decision in force is on a row not flagged (else there is none)."""
    latest = latest_decisions(decisions)
    flagged = set(zip(map(str, flags["item_id"]), map(str, flags["field"])))
    if not latest or set(latest) <= flagged:
        return set()
    gold = resolve_gold(view, study.schema, decisions, study.grid_raters(), round_number=view_round)
    return {(str(d["item_id"]), str(d["field"])) for d in gold.attrs.get("decisions_superseded", [])}


def _flag_facts(flags: pd.DataFrame, summary: dict, scope: str) -> dict[str, Any]:
    """The flagged rows' facts for :class:`MethodsFacts` (count, summary, which rows, from where)."""
    keys = set(zip(map(str, flags["item_id"]), map(str, flags["field"])))
    return {
        "n_flagged": len(flags),
        "flag_summary": summary,
        "flagged_keys": keys,
        "adjudication_scope": scope,
        "superseded_keys": flags.attrs.get("superseded_keys") or set(),
    }


def _flags_data(study: Study, flags: pd.DataFrame, summary: dict, scope: str) -> dict[str, Any]:
    """The report's Disagreements section: the summary lines, the first agenda rows, where from."""
    top = _top_flags(study, flags)
    return {"summary": summary, "lines": summary_lines(summary), "top": top, "total_rows": len(flags), "scope": scope}


def _gold_view(study: Study, ratings: pd.DataFrame, round_number: int | None) -> tuple[pd.DataFrame, int | None]:
    """The ratings the study's adjudication and gold are read from, as ``gold export`` reads them:
    every pulled round (per item, the latest round every rater rated; ``round_number``: that round
    only, as ``gold export --round``), and the round to pass on.  A study of one round: ``ratings``."""
    if len(study.pulled_rounds()) <= 1:
        return ratings, None
    return study_ratings(study), round_number


def _adjudication_scope(one_round: bool, round_number: int | None, adj_flags: pd.DataFrame) -> str:
    """Which ratings the report's flagged rows and gold labels come from, for the methods
    paragraph ("per item, the latest round ...: 4 items from round 1, 2 from round 2"): nothing to
    say in a study of one round."""
    if one_round:
        return ""
    if round_number is not None:
        return f"round {round_number} only, chosen with --round"
    sel = adj_flags.attrs.get("round_selection")
    per = sel.items_per_round() if sel is not None else {}
    counts = ", ".join(f"{_items(n) if i == 0 else n} from round {r}" for i, (r, n) in enumerate(per.items()))
    return "per item, the latest round in which every rater rated it" + (f": {counts}" if counts else "")


def _items(n: int) -> str:
    return f"{n} item{'' if n == 1 else 's'}"


def _scoring_section(
    study: Study, release: str | None, predictions: str | Path, seed: int, provisional: bool
) -> dict[str, Any]:
    """Model-vs-gold scores for the report (``goldboard score`` on the study's gold release)."""
    from goldboard.workflows.score import run_score  # scoring loads scipy.stats: only with --predictions

    if provisional:
        raise ParamError(
            "{predictions}: {gold_dir} has no gold release yet (run `goldboard gold export --study {path}` first)",
            gold_dir=study.gold_dir,
            path=study.path,
        )
    result = run_score(study=str(study.path), release=release, predictions=str(predictions), seed=seed)
    return {
        "source": str(predictions),
        "lines": header_lines(result),
        "tables": [
            {"title": t, "header": h, "rows": rows, "right": sorted(right)} for t, h, rows, right in sections(result)
        ],
        "markdown": score_md(result, heading_level=3),
        "warnings": list(result.get("warnings", [])),
    }


def build_report(
    study: Study,
    round_number: int | None = None,
    n_resamples: int = 0,
    seed: int = 1,
    release: str | None = None,
    fields: list[str] | None = None,
    predictions: str | Path | None = None,
    rules: list[str] | None = None,
    images: bool = True,
    ci: str | None = None,
    edited: list[str] | None = None,
) -> dict[str, Any]:
    """Collect everything the report shows for a study round (default: the latest complete round,
    :func:`~goldboard.workflows.agreement.analysis_round`; ``study.round_rule`` says which and why).

    With ``predictions`` (a model predictions file), a model-scoring section scores
    them against the study's gold release (see ``goldboard score``).  ``rules``: stopping
    rules for the calibration section (default: those recorded by ``goldboard calibrate``).
    ``ci``: the interval method without a bootstrap: ``"wald"``, or ``"auto"`` (Wald, and where the
    Wald interval behaves badly -- few items, estimates near 1 -- percentile bootstrap intervals,
    :data:`AUTO_BOOTSTRAP` resamples, said so); default (None, ``"default"``): each statistic's
    declared one (:mod:`goldboard.analysis.statistics`).
    ``images=False``: no confusion heatmaps (``png`` None; the matrices stay): the Markdown report
    shows none, and drawing them costs matplotlib.
    ``edited``: :func:`~goldboard.study_checks.edited_rounds` when the caller already said them
    (default: checked here); shown at the top of the report and among its warnings.
    """
    rnd, ratings, round_rule, adjudication, results, ci_note = _report_inputs(
        study, round_number, release, fields, n_resamples, seed, ci
    )
    decisions, gold, manifest, gold_name, provisional, flags, scope = adjudication
    fsum = summarize_flags(flags, study.schema)
    round_info = study.round(rnd) if any(r.number == rnd for r in study.rounds) else None
    blinding = blinding_text(round_info, study.adjudication)
    show_vs_gold = not provisional or _any_adjudicated(gold)
    field_sections, multi_sections, warnings = _field_sections(study, results, ratings, gold, show_vs_gold, images)
    design_text = _design_text(study, round_info, ratings)
    judge = _judge_report(study)
    facts = MethodsFacts(
        study=study,
        round=rnd,
        round_info=round_info,
        ratings=ratings,
        field_sections=field_sections,
        multi_sections=list(multi_sections.values()),
        decisions=decisions,
        **_flag_facts(flags, fsum, scope),
        gold_methods=_gold_methods(gold),
        provisional=provisional,
        gold_release=gold_name,
        blinding=blinding,
        design_text=design_text,
        ci_note=ci_note,
        n_resamples=n_resamples,
        seed=seed,
        versions=software_versions(),
        judge_methods=judge["methods"] if judge else "",
    )
    methods_text = _methods_text(facts, study, predictions is not None)
    versions = computing_versions(facts)

    scoring = _scoring_section(study, release, predictions, seed, provisional) if predictions is not None else None
    data = {
        "scoring": scoring,
        "generated_at": utc_now(),
        "study": {
            **_study_info(study, rnd, round_info.mode if round_info else "unknown", blinding, design_text, ratings),
            "round_rule": round_rule,
            "n_fields": len(field_sections) + len(multi_sections),
        },
        "simulated": bool(study.extra.get("simulated", False)),
        "methods": methods_text,
        "versions": versions,
        "landis_koch_note": LANDIS_KOCH_NOTE,
        "fields": field_sections,
        "multi": list(multi_sections.values()),
        "flags": _flags_data(study, flags, fsum, scope),
        "adjudication": {
            "decisions": len(decisions),
            "adjudicators": _adjudicators(decisions),
            "methods": _gold_methods(gold),
            "release": gold_name,
            "provisional": provisional,
            "manifest": manifest,
            "scope": scope,
        },
        "rounds_change": _rounds_change(study),
        "warnings": warnings,
    }
    data["sections"] = reviewer_sections(study, ratings, gold, provisional, flags, rules)
    data["warnings"] = [*held_out_warnings(study), *data["warnings"]]
    _add_edited(data, study, edited)
    _methods_with_calibration(data, facts, study, predictions is not None)
    _add_judge(judge, data)
    return data


def _report_inputs(
    study: Study,
    round_number: int | None,
    release: str | None,
    fields: list[str] | None,
    n_resamples: int,
    seed: int,
    ci: str | None = None,
) -> tuple:
    """``(round, ratings, round rule, (decisions, gold, manifest, release name, provisional, flags,
    scope), agreement results, CI note)``: read as columns for a small plain study (no pandas, issue
    19: :func:`~goldboard.workflows.report_columns.report_columns`), else as DataFrames
    (:func:`_adjudication`)."""
    quick = report_columns(study, round_number, release)
    if quick is None:
        rnd, ratings, round_rule = _round_ratings(study, round_number)
    else:
        rnd, ratings, round_rule = quick.round, quick.ratings, quick.round_rule
    results, ci_note = _agreement_results(study, rnd, ratings, fields, n_resamples, seed, ci)
    if quick is None:
        adjudication = _adjudication(study, ratings, release, round_number)
    else:  # one pulled round, no decision and no release (report_columns): the provisional gold of rules 2-4
        adjudication = ([], quick.gold, None, "", True, quick.flags, "")
    return rnd, ratings, round_rule, adjudication, results, ci_note


def held_out_warnings(study: Study) -> list[str]:
    """One warning per pulled round whose pull held ratings out as invalid (``pull.json``'s per-rater
    counts, as ``status`` shows them): ``round 2: onc_b's ratings of 50 items were held out as invalid at
    pull (see S/rounds/2/invalid.csv); they are in none of this report's statistics``."""
    out = []
    for n in study.pulled_rounds():
        try:
            rec = json.loads(study.pull_report_path(n).read_text(encoding="utf-8-sig"))
            held = {str(r): int(c.get("invalid") or 0) for r, c in (rec.get("raters") or {}).items()}
        except (OSError, ValueError, TypeError, AttributeError):
            continue  # no readable pull record: edited_rounds names a changed round
        held = {r: k for r, k in held.items() if k > 0}
        if held:
            out.append(
                f"round {n}: {held_text(held)} {'was' if sum(held.values()) == 1 else 'were'} held out as invalid at "
                f"pull (see {study.invalid_path(n)}); they are in none of this report's statistics (correct them and "
                "pull again)"
            )
    return out


def _add_edited(data: dict[str, Any], study: Study, edited: list[str] | None) -> None:
    """The study's pulled files changed by hand -- a ratings.csv edited since its pull or that
    cannot be checked, a pulled round study.toml does not list, a rated item without its unit
    (:func:`~goldboard.study_checks.edited_rounds`, or ``edited`` when the caller checked them):
    ``data["edited"]`` (the top of the report) and first among its warnings."""
    edited = edited_rounds(study) if edited is None else edited
    data["edited"] = edited
    data["warnings"] = [*edited, *data["warnings"]]


def _agreement_results(
    study: Study,
    round_number: int,
    ratings: pd.DataFrame,
    fields: list[str] | None,
    n_resamples: int,
    seed: int,
    ci: str | None = None,
) -> tuple[dict[str, dict], str]:
    """The agreement results of the round (with the Wald/bootstrap choice and the threshold views)
    and the note on the interval choice (``ci``: see :func:`build_report`)."""
    ci_auto, ci = ci == "auto", ("wald" if ci in ("wald", "auto") else None)
    if isinstance(ratings, RatingColumns):
        results = agreement_columns(study, round_number, ratings, fields, n_resamples, seed, ci)
    else:
        results = agreement_for_study(
            study, round_number=round_number, fields=fields, n_resamples=n_resamples, seed=seed, ratings=ratings, ci=ci
        )
    if not results:
        raise GoldboardError(f"{study.ratings_path(round_number)}: no field has ratings from two raters yet")
    results, ci_note = _wald_choice(study, round_number, results, n_resamples, seed, ci_auto)
    results = _with_threshold_views(results, study, ratings, n_resamples, seed, explicit=fields is not None, ci=ci)
    return results, ci_note


def _study_info(
    study: Study, round_number: int, mode: str, blinding: str, design_text: str, ratings: pd.DataFrame
) -> dict[str, Any]:
    """The report's study block: name, schema, raters, rounds, mode, blinding, design, counts."""
    schema = study.schema
    return {
        "n_items": count_items(ratings),
        "n_ratings": count_nonempty(ratings),
        "ratings_text": ratings_count_text(ratings, schema),
        "name": study.name,
        "path": str(study.path),
        "schema": schema.name,
        "schema_version": schema.version,
        "schema_title": schema.title,
        "unit": schema.unit,
        "raters": list(study.raters),
        "round": round_number,
        "rounds": [{**r.to_dict(), "imported": sources_text(r.tables)} for r in study.rounds],
        "mode": mode,
        "blinding": blinding,
        "design": design_text,
    }


def _round_ratings(study: Study, round_number: int | None) -> tuple[int, pd.DataFrame, str]:
    """The round to report (default: the latest complete round, :func:`analysis_round`), its
    ratings and the sentence stating which round and why; a round nobody rated is an error."""
    frames: dict[int, pd.DataFrame] = {}  # the rounds analysis_round read: each file read once
    if round_number is None:
        choice = analysis_round(study, frames)
        rnd, rule = choice.number, choice.rule
    else:
        rnd, rule = round_number, f"round {round_number}, chosen with --round"
    ratings = frames[rnd] if rnd in frames else study.ratings(rnd)
    if not len(ratings):
        earlier = sorted(r for r in study.pulled_rounds() if r < rnd)
        hint = "; report round {e} with {round_number} {e}" if earlier else ""
        raise ParamError(
            "{path}: round {rnd} has no ratings yet ({why})" + hint,
            path=study.ratings_path(rnd),
            rnd=rnd,
            why=no_ratings_text(study, rnd),
            e=earlier[-1] if earlier else "",
        )
    return rnd, ratings, rule


def _field_sections(
    study: Study,
    results: dict[str, dict],
    ratings: pd.DataFrame,
    gold: pd.DataFrame,
    show_vs_gold: bool,
    images: bool = True,
) -> tuple[list[dict], dict[str, dict], list[str]]:
    """One section per field (and threshold view), one compact table per multi-select field, and the warnings."""
    schema = study.schema
    field_sections = []
    multi_sections: dict[str, dict] = {}
    warnings: list[str] = []
    for name, res in results.items():
        base = name.partition(":")[0]
        if ":" in name:  # one value of a multi-select field: a compact row, not a section
            f = schema.field(base)
            sec = multi_sections.setdefault(base, {"name": base, "title": f.title, "rows": []})
            sec["rows"].append(_multi_value_row(name, res, ratings))
            warnings.extend(f"{name}: {w}" for w in res["warnings"])
            continue
        base, _, at = base.partition(">=")
        f = schema.field(base)
        title = f.title + (f": {name.partition(':')[2]}" if ":" in name else "")
        if at:
            title = f"{f.title}: {at} or higher vs below {at}, the critical threshold"
        for w in res["warnings"]:
            warnings.append(f"{name}: {w}")
        field_sections.append(
            {
                "name": name,
                "title": title,
                "level": res["level"],
                "n_items": res["n_items"],
                "raters": res["raters"],
                "categories": res["categories"],
                "headline": _with_all_agree(headline_rows(res), ratings, name, res) if not at else headline_rows(res),
                "prevalence": prevalence(ratings, name, res["categories"], schema),
                "per_label": [flat_label(e) for e in res["per_label"] if e.get("group") is None],
                "confusions": _confusion_images(res, title, images),
                "vs_gold": rater_vs_gold(ratings, gold, name, study.raters, schema) if show_vs_gold and not at else [],
                "vs_gold_adjudicated": _any_adjudicated(gold),
                "warnings": res["warnings"],
                "result": res,
            }
        )
    for sec in field_sections:
        sec["vs_gold_title"] = vs_gold_title(sec["vs_gold"], sec["vs_gold_adjudicated"])
    return field_sections, multi_sections, warnings


def _with_all_agree(rows: list[dict], ratings: pd.DataFrame, name: str, res: dict) -> list[dict]:
    """More than two raters: R irr's all-raters-agree share, after the mean-over-pairs percent agreement."""
    if len(res["raters"]) <= 2:
        return rows
    a = all_raters_agree(ratings, name, list(res["raters"]))
    row = {
        "name": ALL_AGREE_NAME,
        "raters": "all",
        "n": a["n"],
        "value": a["value"],
        "ci_low": a["ci_low"],
        "ci_high": a["ci_high"],
        "se": None,
        "ci_method": "Wilson score" if a["value"] is not None else None,
        "band": None,
        "order": 0.5,
    }
    return sorted([*rows, row], key=lambda x: x["order"])


def _multi_value_row(name: str, res: dict, ratings: pd.DataFrame) -> dict[str, Any]:
    """The compact row of one value of a multi-select field (agreement, kappa with CI, alpha, prevalence)."""
    row = {
        "value": name.partition(":")[2],
        "n": res["n_items"],
        "percent_agreement": None,
        "kappa": None,
        "kappa_low": None,
        "kappa_high": None,
        "alpha": None,
        "prevalence": next(
            (p["share"] for p in prevalence(ratings, name, res["categories"]) if p["label"] == "yes"), None
        ),
    }
    for st in res["statistics"]:
        if st["group"] is not None or len(st["raters"]) != len(res["raters"]) and st["statistic"] != "cohen_kappa":
            continue
        if st["statistic"] == "percent_agreement":
            row["percent_agreement"] = st["value"]
        elif st["statistic"] == "cohen_kappa" and row["kappa"] is None:
            row["kappa"], row["kappa_low"], row["kappa_high"] = st["value"], st["ci_low"], st["ci_high"]
        elif st["statistic"] == "krippendorff_alpha":
            row["alpha"] = st["value"]
    return row


def _confusion_images(res: dict, title: str, draw: bool = True) -> list[dict]:
    """A heatmap (PNG, base64; None without ``draw``) and its matrix for every rater pair of a field."""
    images = []
    for p in res["confusion"]["pairs"]:
        if p.get("group") is not None:
            continue
        a, b = p["raters"]
        png = (
            heatmap_png(
                p["matrix"], res["confusion"]["categories"], a, b, f"{title}: {a} vs {b} ({p['n_items']} items)"
            )
            if draw
            else None
        )
        images.append(
            {
                "title": f"{a} (rows) vs {b} (columns)",
                "alt": f"Confusion matrix of {title}, {a} vs {b}",
                "png": None if png is None else base64.b64encode(png).decode("ascii"),
                "matrix": p["matrix"],
                "labels": res["confusion"]["categories"],
                "row_rater": a,
                "col_rater": b,
            }
        )
    return images


def _adjudicators(decisions: list[dict]) -> list[dict]:
    """Per adjudicator -- a person, not a spelling: ``Dr Chair`` and ``dr_chair`` (same letters
    and digits, :func:`identity_key`) are one -- decisions made, whether all were independent,
    where they were made, and any other spellings the log holds (``also_written``)."""
    people: dict[str, dict] = {}
    for e in decisions:
        name = str(e.get("adjudicator") or "?")
        a = people.setdefault(
            identity_key(name) or name,
            {"decisions": 0, "independent": True, "sources": set(), "spellings": {}},
        )
        a["decisions"] += 1
        a["independent"] = a["independent"] and bool(e.get("independent", True))
        a["sources"].add(str(e.get("source", "")))
        a["spellings"][name] = a["spellings"].get(name, 0) + 1
    out = []
    for v in people.values():
        name = max(v["spellings"], key=lambda k: v["spellings"][k])  # the most used spelling (first on a tie)
        out.append(
            {
                "name": name,
                "decisions": v["decisions"],
                "independent": v["independent"],
                "sources": sorted(s for s in v["sources"] if s),
                **({"also_written": [k for k in v["spellings"] if k != name]} if len(v["spellings"]) > 1 else {}),
            }
        )
    return out


def _any_adjudicated(gold: pd.DataFrame | dict[str, list[str]]) -> bool:
    """Some gold label was adjudicated (gold as a DataFrame, or as columns)."""
    if isinstance(gold, dict):
        return "adjudicated" in gold["method"]
    return bool((gold["method"] == "adjudicated").any())


def _gold_methods(gold: pd.DataFrame | dict[str, list[str]]) -> dict[str, dict[str, int]]:
    """Per field: how many gold labels are unanimous, adjudicated, unresolved (and single, when any)."""
    if isinstance(gold, dict):
        return _gold_methods_columns(gold)
    methods = {}
    for fname, sub in gold.groupby("field", sort=False):
        vc = sub["method"].value_counts()
        methods[str(fname)] = {m: int(vc.get(m, 0)) for m in ("unanimous", "adjudicated", "unresolved")}
        if vc.get("single", 0):
            methods[str(fname)]["single"] = int(vc["single"])
    return methods


def _gold_methods_columns(gold: dict[str, list[str]]) -> dict[str, dict[str, int]]:
    """:func:`_gold_methods` of gold held as columns (fields in order of first appearance)."""
    counts: dict[str, dict[str, int]] = {}
    for f, m in zip(gold["field"], gold["method"]):
        by = counts.setdefault(str(f), {})
        by[m] = by.get(m, 0) + 1
    methods = {}
    for fname, vc in counts.items():
        methods[fname] = {m: vc.get(m, 0) for m in ("unanimous", "adjudicated", "unresolved")}
        if vc.get("single", 0):
            methods[fname]["single"] = vc["single"]
    return methods


def _rounds_change(study: Study) -> list[dict]:
    """Round-over-round change of the headline coefficient (empty with one pulled round)."""
    schema = study.schema
    rounds_change = []
    pulled = study.pulled_rounds()
    if len(pulled) > 1:
        for rn in pulled:
            res_r = agreement_for_study(study, round_number=rn, fields=[schema.primary_field.name])
            for name, res in res_r.items():
                row = {"round": rn, "field": name, "n": res["n_items"]}
                for s in res["statistics"]:
                    if (
                        s["group"] is None
                        and s["statistic"] == "percent_agreement"
                        and len(s["raters"]) == len(res["raters"])
                    ):
                        row["percent_agreement"] = s["value"]
                    if s["group"] is None and s["statistic"] == "krippendorff_alpha" and s["level"] == res["level"]:
                        row["alpha"], row["alpha_low"], row["alpha_high"] = s["value"], s["ci_low"], s["ci_high"]
                rounds_change.append(row)
    return rounds_change


def _top_flags(study: Study, flags: pd.DataFrame | FlagColumns) -> list[dict]:
    """The first 40 agenda rows with each rater's value (of the round in force for the item)."""
    if isinstance(flags, FlagColumns):
        head = [{c: flags[c][k] for c in flags.columns} for k in range(min(40, len(flags)))]
    else:
        head = flags.head(40).to_dict("records")
    top_flags = []
    for rec in head:
        vals = {r: _cell(rec.get(f"value_{r}")) for r in study.raters}
        top_flags.append(
            {
                "agenda": rec["agenda"],
                "item_id": rec["item_id"],
                "field": rec["field"],
                "values": vals,
                "kinds": list(rec["kinds"]),
                "boundaries": list(rec["boundaries"]),
                "triggers": list(rec["triggers"]),
            }
        )
    return top_flags


def _cell(value: Any) -> str:
    """A flag row's rater value as text (no rating: empty)."""
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _design_text(study: Study, round_info: Any, ratings: pd.DataFrame) -> str:
    """The round's assignment design in one sentence (empty when every rater rated every item)."""
    if round_info is not None and round_info.design:
        prim = ratings[ratings["field"] == study.schema.primary_field.name]
        return design_note(round_info.design, int((prim.groupby("item_id")["rater"].nunique() >= 2).sum()))
    return ""


def _methods_text(facts: MethodsFacts, study: Study, scored: bool) -> str:
    """The methods paragraph, with the recorded plan and calibration (scipy computed a power plan,
    the model scores, the judges' alt-test p-values and the stopping rule's tested limits)."""
    facts.plan = recorded_plan(study)
    facts.calibration = study.extra.get(CALIBRATION_KEY) or None
    facts.uses_scipy = (
        (facts.plan is not None and plan_used_scipy(facts.plan))
        or scored
        or bool(facts.judge_methods)
        or facts.calibration_outcome is not None  # calibration.wald_critical / gof_limits: scipy.stats
    )
    return methods_paragraph(facts)


def _methods_with_calibration(data: dict[str, Any], facts: MethodsFacts, study: Study, scored: bool) -> None:
    """The methods paragraph again, naming the looks taken and their outcome as the calibration
    section shows them (never leaving a reader to assume an unmet stopping rule was met), and the
    test-retest analysis the results report; a warning for main rounds rated before the rule was met."""
    sections = {sec.get("id"): sec for sec in data["sections"]}
    cal = (sections.get("calibration") or {}).get("outcome")
    retest = (sections.get("retest") or {}).get("methods", "")
    if cal or retest:
        facts.calibration_outcome = cal or None
        facts.retest = retest
        data["methods"] = _methods_text(facts, study, scored)
        data["versions"] = computing_versions(facts)
    if cal:
        data["warnings"] = [*data["warnings"], *main_before_stop_warnings(study, cal)]


def main_before_stop_warnings(study: Study, outcome: dict[str, Any]) -> list[str]:
    """A main (not calibration) round rated after the latest calibration look while the stopping
    rule was not met there: the main ratings began before calibration stopped."""
    if outcome.get("verdict") == "rule met" or outcome.get("latest_round") is None:
        return []
    last = int(outcome["latest_round"])
    pulled = set(study.pulled_rounds())
    main = [r.number for r in study.rounds if not r.calibration and r.number > last and r.number in pulled]
    if not main:
        return []
    rule = " and ".join((study.extra.get(CALIBRATION_KEY) or {}).get("rules") or []) or "the stopping rule"
    verdict = "could not be decided" if outcome.get("verdict") == "cannot be decided" else "was not met"
    word = "round" if len(main) == 1 else "rounds"
    return [
        f"main {word} {', '.join(map(str, main))} rated after calibration round {last}, where {rule} {verdict}: "
        f"the main ratings began before the stopping rule was met"
    ]


#: bootstrap resamples used where ``ci_auto`` replaces a Wald interval
AUTO_BOOTSTRAP = 2000


def _wald_choice(
    study: Study, round_number: int, results: dict[str, dict], n_resamples: int, seed: int, ci_auto: bool
) -> tuple[dict[str, dict], str]:
    """Fields whose Wald intervals behave badly (:func:`wald_suspect`): with ``ci_auto`` their
    agreement is recomputed with percentile bootstrap intervals; either way the methods text
    says which interval each field got and why."""
    if n_resamples:
        return results, ""
    # a field none of whose statistics has a Wald interval (all undefined or degenerate) gets no
    # note on Wald intervals: it has none to undercover
    suspect = {name: why for name, res in results.items() if _has_wald_interval(res) and (why := wald_suspect(res))}
    if not suspect:
        return results, ""
    reasons = sorted({w for why in suspect.values() for w in why})
    names = ", ".join(suspect)
    if not ci_auto:
        return results, (
            f"Wald intervals may undercover for {names} ({'; '.join(reasons)}); percentile bootstrap intervals "
            f"are offered with `goldboard report --ci auto` (or --bootstrap 2000)."
        )
    out = dict(results)
    for name in suspect:
        out[name] = agreement_for_study(
            study, round_number=round_number, fields=[name], n_resamples=AUTO_BOOTSTRAP, seed=seed
        )[name]
    return out, (
        f"For {names} ({'; '.join(reasons)}) the Wald interval is known to undercover (small samples, "
        f"estimates near the bound of the coefficient), so percentile bootstrap intervals ({AUTO_BOOTSTRAP} "
        f"resamples of items, seed {seed}) are reported instead; all other intervals are Wald intervals."
    )


def _has_wald_interval(result: dict) -> bool:
    """Some overall statistic of the field has a Wald interval of non-zero width."""
    return any(
        r.get("group") is None
        and r.get("ci_method") == "asymptotic"
        and r.get("ci_low") is not None
        and r.get("ci_high") is not None
        and r["ci_high"] > r["ci_low"]
        for r in result.get("statistics", [])
    )


def _judge_report(study: Study) -> dict[str, Any] | None:
    """The LLM judges' section and methods sentence (:func:`goldboard.workflows.judge.judge_report`);
    the judge workflow (scipy) is loaded only for a study that has judges, so `report` starts light."""
    if not (study.extra.get("judge") or {}).get("judges"):
        return None
    from goldboard.workflows.judge import judge_report

    return judge_report(study)


def _add_judge(judge: dict[str, Any] | None, data: dict[str, Any]) -> None:
    """A study with LLM judges (``goldboard judge --study``): the alt-test section (its methods
    sentence is the methods paragraph's ``clause_judge``)."""
    if judge is not None:
        data["sections"].append(judge["section"])
        data["warnings"] = [*data["warnings"], *judge["warnings"]]


def _owner(study: Study, path: Path) -> dict[str, str]:
    return {
        "study": str(study.path.resolve()),
        "study_name": study.name,
        "study_created": str(study.created_at or ""),
        "report": path.name,
    }


def _same_study(other: dict[str, str], owner: dict[str, str]) -> bool:
    """A study is known by its name and creation time (a moved or renamed study folder stays itself)."""
    if other.get("study_created") and owner["study_created"]:
        return (other.get("study_name"), other["study_created"]) == (owner["study_name"], owner["study_created"])
    return other.get("study") == owner["study"]


def _supplement_owner(study: Study, path: Path) -> dict[str, str]:
    """The owner this report records in its supplement folder's manifest; a folder holding another
    study's supplement is refused before anything is written -- its CSVs would be replaced under
    the other study's report."""
    owner = _owner(study, path)
    sup = path.parent / SUPPLEMENT_DIR
    other = supplement_owner(sup)
    if other.get("study") and not _same_study(other, owner):
        raise ParamError(
            "{output} {path}: {sup}/ holds the CSV supplement of the report {report} of another study ({name}, "
            "{where}); this report's supplement would replace its tables: write this report into another folder, "
            "or pass {no_supplement}",
            path=str(path),
            sup=str(sup),
            report=other.get("report", "?"),
            name=other.get("study_name", "?"),
            where=other["study"],
        )
    return owner


def report_path(study: Study, path: str | Path | None, fmt: str = "html") -> Path:
    """Where :func:`write_report` writes: ``path``, default ``<study>/reports/report.<ext>``."""
    if path is None:
        return study.reports_dir / ("report.html" if fmt == "html" else "report.md")
    return Path(path)


def supplement_replaced(study: Study, path: str | Path | None, fmt: str = "html") -> str | None:
    """The warning to print when this report's supplement replaces the one another report of the
    same study wrote into the folder (that report's pointer to supplement/ then shows this one's
    tables); ``None`` otherwise."""
    path = report_path(study, path, fmt)
    other = supplement_owner(path.parent / SUPPLEMENT_DIR)
    if not other.get("report") or not _same_study(other, _owner(study, path)):
        return None
    if Path(other["report"]).stem == path.stem:
        return None
    return (
        f"{path.parent / SUPPLEMENT_DIR}/ held the CSV supplement of {other['report']} (this study); it now holds "
        f"{path.name}'s tables, and {other['report']} points at them (write reports with different options into "
        "different folders to keep both)"
    )


def write_report(
    study: Study,
    path: str | Path | None = None,
    fmt: str = "html",
    supplement: bool = True,
    pdf: str | Path | None = None,
    paper: str | None = None,
    **kwargs,
) -> Path:
    """Build the report and write it atomically (default ``<study>/reports/report.<ext>``).

    ``supplement``: also write every table as CSV in ``<report dir>/supplement/``.
    ``pdf``: also print the HTML report to this PDF with headless Chromium
    (:func:`goldboard.exports.pdf.print_pdf`; ``fmt`` must be ``html``).
    ``paper``: ``a4`` or ``letter``, the printed page size of the HTML (and so of the PDF);
    default: from the locale (:func:`goldboard.exports.pdf.default_paper`)."""
    paper = (paper or default_paper()).lower()
    if paper not in PAPERS:
        raise GoldboardError(f"{paper!r}: give one of {', '.join(PAPERS)}", param="paper")
    path = report_path(study, path, fmt)
    if pdf is not None and fmt != "html":
        raise ParamError("{pdf}: a PDF is printed from the HTML report: use {fmt} html")
    owner = _supplement_owner(study, path) if supplement else {}
    data = build_report(study, images=fmt == "html", **kwargs)
    data["paper"] = PAPERS[paper]
    sup = path.parent / SUPPLEMENT_DIR
    made = supplement and not sup.exists()
    try:
        with staged_writes() as stage:  # the report and its supplement replace the old ones together, or none
            if supplement:
                files = write_supplement(data, sup, owner, stage=stage)
                data["supplement"] = SUPPLEMENT_DIR
                data["supplement_files"] = [p.name for p in files]
            text = render_html(data) if fmt == "html" else render_markdown(data)
            write_text_atomic(path, text, stage=stage)
    except BaseException:
        if made:  # a supplement folder this report made, left empty
            with contextlib.suppress(OSError):
                sup.rmdir()
        raise
    if pdf is not None:
        print_pdf(path, pdf)
    return path
