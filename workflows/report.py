"""The agreement report of a study: collect (:func:`build_report`), render and write.

Rendering lives in :mod:`goldboard.exports.report`; this module gathers the study's
ratings, agreement, flags, decisions, gold release and (optionally) model scores.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.adjudicate.decisions import read_decisions
from goldboard.adjudicate.flags import flag_disagreements, summarize_flags, summary_lines
from goldboard.adjudicate.gold import resolve_gold
from goldboard.analysis.agreement import agreement
from goldboard.analysis.report_tables import wald_suspect
from goldboard.analysis.scoring_render import header_lines, sections
from goldboard.analysis.scoring_render import render_markdown as score_md
from goldboard.cases.assignment import design_note
from goldboard.errors import GoldboardError
from goldboard.exports.gold import read_release
from goldboard.exports.pdf import print_pdf
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
)
from goldboard.exports.report_extras import SUPPLEMENT_DIR, write_supplement
from goldboard.fileio import write_text_atomic
from goldboard.study import Study
from goldboard.text import utc_now
from goldboard.workflows.agreement import agreement_for_study
from goldboard.workflows.report_extras import recorded_plan, reviewer_sections


def _with_threshold_views(
    results: dict[str, dict], study: Study, ratings: pd.DataFrame, n_resamples: int, seed: int, explicit: bool
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


def _scoring_section(study: Study, release: str | None, predictions: str | Path, seed: int) -> dict[str, Any]:
    """Model-vs-gold scores for the report (``goldboard score`` on the study's gold)."""
    from goldboard.workflows.score import run_score  # scoring loads scipy.stats: only with --predictions

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
    round: int | None = None,
    n_resamples: int = 0,
    seed: int = 1,
    release: str | None = None,
    fields: list[str] | None = None,
    predictions: str | Path | None = None,
    rules: list[str] | None = None,
    ci_auto: bool = False,
    images: bool = True,
) -> dict[str, Any]:
    """Collect everything the report shows for a study round (default: latest pulled).

    With ``predictions`` (a model predictions file), a model-scoring section scores
    them against the study's gold release (see ``goldboard score``).  ``rules``: stopping
    rules for the calibration section (default: those recorded by ``goldboard calibrate``).
    ``ci_auto``: where the Wald interval behaves badly (few items, estimates near 1), use
    percentile bootstrap intervals instead (:data:`AUTO_BOOTSTRAP` resamples) and say so.
    ``images=False``: no confusion heatmaps (``png`` None; the matrices stay): the Markdown report
    shows none, and drawing them costs matplotlib.
    """
    schema = study.schema
    rnd, ratings = _round_ratings(study, round)
    results = agreement_for_study(study, round=rnd, fields=fields, n_resamples=n_resamples, seed=seed)
    if not results:
        raise GoldboardError(f"{study.ratings_path(rnd)}: no field has ratings from two raters yet")
    results, ci_note = _wald_choice(study, rnd, results, n_resamples, seed, ci_auto)
    results = _with_threshold_views(results, study, ratings, n_resamples, seed, explicit=fields is not None)
    decisions = read_decisions(study.decisions_path) if study.decisions_path.exists() else []
    gold, manifest, gold_name = _gold_release(study, release)
    provisional = gold is None
    if gold is None:
        gold = resolve_gold(ratings, schema, decisions, study.raters)
    flags = flag_disagreements(ratings, schema, study.raters)
    fsum = summarize_flags(flags, schema)

    items = sorted(set(ratings["item_id"]))
    round_info = study.round(rnd) if any(r.number == rnd for r in study.rounds) else None
    mode = round_info.mode if round_info else "unknown"
    blinding = blinding_text(round_info, study.adjudication)
    show_vs_gold = not provisional or any(gold["method"] == "adjudicated")
    field_sections, multi_sections, warnings = _field_sections(study, results, ratings, gold, show_vs_gold, images)
    versions = software_versions()
    design_text = _design_text(study, round_info, ratings)
    methods_text = _methods_text(
        study, len(items), mode, blinding, design_text, field_sections, n_resamples, seed, versions
    )

    scoring = None
    if predictions is not None:
        if provisional:
            raise GoldboardError(
                f"--predictions: {study.gold_dir} has no gold release yet "
                f"(run `goldboard gold export --study {study.path}` first)"
            )
        scoring = _scoring_section(study, release, predictions, seed)

    data = {
        "scoring": scoring,
        "generated_at": utc_now(),
        "study": {
            **_study_info(study, rnd, mode, blinding, design_text),
            "n_items": len(items),
            "n_ratings": int((ratings["value"].astype(str) != "").sum()),
            "n_fields": len(field_sections) + len(multi_sections),
        },
        "simulated": bool(study.extra.get("simulated", False)),
        "methods": methods_text,
        "versions": versions,
        "landis_koch_note": LANDIS_KOCH_NOTE,
        "fields": field_sections,
        "multi": list(multi_sections.values()),
        "flags": {
            "summary": fsum,
            "lines": summary_lines(fsum),
            "top": _top_flags(study, flags, ratings),
            "total_rows": int(len(flags)),
        },
        "adjudication": {
            "decisions": len(decisions),
            "adjudicators": _adjudicators(decisions),
            "methods": _gold_methods(gold),
            "release": gold_name,
            "provisional": provisional,
            "manifest": manifest,
        },
        "rounds_change": _rounds_change(study),
        "warnings": warnings,
    }
    data["sections"] = reviewer_sections(study, ratings, gold, provisional, flags, rules)
    data["methods"] = _methods_additions(study, data["methods"], ci_note)
    return data


def _study_info(study: Study, rnd: int, mode: str, blinding: str, design_text: str) -> dict[str, Any]:
    """The report's study block: name, schema, raters, rounds, mode, blinding, design."""
    schema = study.schema
    return {
        "name": study.name,
        "path": str(study.path),
        "schema": schema.name,
        "schema_version": schema.version,
        "schema_title": schema.title,
        "unit": schema.unit,
        "raters": list(study.raters),
        "round": rnd,
        "rounds": [r.to_dict() for r in study.rounds],
        "mode": mode,
        "blinding": blinding,
        "design": design_text,
    }


def _round_ratings(study: Study, round: int | None) -> tuple[int, pd.DataFrame]:
    """The round to report (default: latest pulled) and its ratings; a round nobody rated is an error."""
    rnd = study.latest_pulled_round() if round is None else round
    ratings = study.ratings(rnd)
    if not len(ratings):
        earlier = sorted(r for r in study.pulled_rounds() if r < rnd)
        hint = f"; report round {earlier[-1]} with --round {earlier[-1]}" if earlier else ""
        raise GoldboardError(
            f"{study.ratings_path(rnd)}: round {rnd} has no ratings yet (nobody has annotated it){hint}"
        )
    return rnd, ratings


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
                "headline": headline_rows(res),
                "prevalence": prevalence(ratings, name, res["categories"], schema),
                "per_label": [flat_label(e) for e in res["per_label"] if e.get("group") is None],
                "confusions": _confusion_images(res, title, images),
                "vs_gold": rater_vs_gold(ratings, gold, name, study.raters, schema) if show_vs_gold and not at else [],
                "warnings": res["warnings"],
                "result": res,
            }
        )
    return field_sections, multi_sections, warnings


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
    """Per adjudicator: decisions made, whether all were independent, and where they were made."""
    adjudicators: dict[str, dict] = {}
    for e in decisions:
        a = adjudicators.setdefault(
            str(e.get("adjudicator") or "?"), {"decisions": 0, "independent": True, "sources": set()}
        )
        a["decisions"] += 1
        a["independent"] = a["independent"] and bool(e.get("independent", True))
        a["sources"].add(str(e.get("source", "")))
    return [
        {
            "name": k,
            "decisions": v["decisions"],
            "independent": v["independent"],
            "sources": sorted(s for s in v["sources"] if s),
        }
        for k, v in adjudicators.items()
    ]


def _gold_methods(gold: pd.DataFrame) -> dict[str, dict[str, int]]:
    """Per field: how many gold labels are unanimous, adjudicated, unresolved (and single, when any)."""
    methods = {}
    for fname, sub in gold.groupby("field", sort=False):
        vc = sub["method"].value_counts()
        methods[str(fname)] = {m: int(vc.get(m, 0)) for m in ("unanimous", "adjudicated", "unresolved")}
        if vc.get("single", 0):
            methods[str(fname)]["single"] = int(vc["single"])
    return methods


def _rounds_change(study: Study) -> list[dict]:
    """Round-over-round change of the headline coefficient (empty with one pulled round)."""
    schema = study.schema
    rounds_change = []
    pulled = study.pulled_rounds()
    if len(pulled) > 1:
        for rn in pulled:
            res_r = agreement_for_study(study, round=rn, fields=[schema.primary_field.name])
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


def _top_flags(study: Study, flags: pd.DataFrame, ratings: pd.DataFrame) -> list[dict]:
    """The first 40 agenda rows with each rater's value."""
    top_flags = []
    for rec in flags.head(40).to_dict("records"):
        sub = ratings[(ratings["item_id"] == rec["item_id"]) & (ratings["field"] == rec["field"])]
        vals = {r: "; ".join(sub.loc[sub["rater"] == r, "value"].astype(str)) for r in study.raters}
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


def _design_text(study: Study, round_info: Any, ratings: pd.DataFrame) -> str:
    """The round's assignment design in one sentence (empty when every rater rated every item)."""
    if round_info is not None and round_info.design:
        prim = ratings[ratings["field"] == study.schema.primary_field.name]
        return design_note(round_info.design, int((prim.groupby("item_id")["rater"].nunique() >= 2).sum()))
    return ""


def _methods_text(
    study: Study,
    n_items: int,
    mode: str,
    blinding: str,
    design_text: str,
    field_sections: list[dict],
    n_resamples: int,
    seed: int,
    versions: dict[str, str],
) -> str:
    """The methods paragraph: raters, items, schema, blinding, design, statistics, intervals, software."""
    schema = study.schema
    ci_method = (
        f"percentile bootstrap ({n_resamples} resamples of items, seed {seed})"
        if n_resamples
        else "Wald intervals from large-sample standard errors (Fleiss, Cohen & Everitt 1969 for Cohen's kappa)"
    )
    ordinal = [s["title"] for s in field_sections if s["level"] == "ordinal"]
    return (
        f"{len(study.raters)} raters ({', '.join(study.raters)}) independently labelled {n_items} items "
        f"({schema.unit or 'annotation units'}) with the {schema.name} schema v{schema.version}{' in Label Studio' if study.rounds and mode != 'table' else ''}. "
        f"{blinding} {design_text + ' ' if design_text else ''}Agreement was summarised as raw percent agreement with label prevalence, Cohen's kappa "
        f"(pairwise; linear and quadratic weights over the full scale for ordinal fields"
        f"{': ' + ', '.join(ordinal) if ordinal else ''}), "
        f"{'Fleiss kappa, ' if len(study.raters) > 2 else ''}Krippendorff's alpha (nominal, plus ordinal for ordinal "
        f"fields; missing ratings allowed), Gwet's AC1/AC2, Brennan-Prediger and PABAK, each with a 95% CI "
        f"({ci_method}). Disagreements were flagged by the schema's named boundaries and adjudication triggers "
        f"and adjudicated; gold labels were resolved as unanimous, adjudicated"
        f"{', single (one rater by design)' if design_text else ''} or unresolved. "
        f"Software: goldboard {versions['goldboard']}, Python {versions['python']}, numpy {versions.get('numpy', '?')}, "
        f"pandas {versions.get('pandas', '?')}, krippendorff {versions.get('krippendorff', '?')}."
    )


#: bootstrap resamples used where ``ci_auto`` replaces a Wald interval
AUTO_BOOTSTRAP = 2000


def _wald_choice(
    study: Study, rnd: int, results: dict[str, dict], n_resamples: int, seed: int, ci_auto: bool
) -> tuple[dict[str, dict], str]:
    """Fields whose Wald intervals behave badly (:func:`wald_suspect`): with ``ci_auto`` their
    agreement is recomputed with percentile bootstrap intervals; either way the methods text
    says which interval each field got and why."""
    if n_resamples:
        return results, ""
    suspect = {name: why for name, res in results.items() if (why := wald_suspect(res))}
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
        out[name] = agreement_for_study(study, round=rnd, fields=[name], n_resamples=AUTO_BOOTSTRAP, seed=seed)[name]
    return out, (
        f"For {names} ({'; '.join(reasons)}) the Wald interval is known to undercover (small samples, "
        f"estimates near the bound of the coefficient), so percentile bootstrap intervals ({AUTO_BOOTSTRAP} "
        f"resamples of items, seed {seed}) are reported instead; all other intervals are Wald intervals."
    )


def _methods_additions(study: Study, methods: str, ci_note: str) -> str:
    """The sample-size plan and the interval choice, appended to the methods text."""
    plan = recorded_plan(study)
    extra = []
    if plan:
        extra.append(f"Sample size: {plan['sentence']}")
    if ci_note:
        extra.append(ci_note)
    return " ".join([methods, *extra]) if extra else methods


def write_report(
    study: Study,
    path: str | Path | None = None,
    fmt: str = "html",
    supplement: bool = True,
    pdf: str | Path | None = None,
    **kwargs,
) -> Path:
    """Build the report and write it atomically (default ``<study>/reports/report.<ext>``).

    ``supplement``: also write every table as CSV in ``<report dir>/supplement/``.
    ``pdf``: also print the HTML report to this PDF with headless Chromium
    (:func:`goldboard.exports.pdf.print_pdf`; ``fmt`` must be ``html``)."""
    data = build_report(study, images=fmt == "html", **kwargs)
    if path is None:
        path = study.reports_dir / ("report.html" if fmt == "html" else "report.md")
    path = Path(path)
    if pdf is not None and fmt != "html":
        raise GoldboardError("a PDF is printed from the HTML report: use --format html", param="pdf")
    if supplement:
        sup = path.parent / SUPPLEMENT_DIR
        files = write_supplement(data, sup)
        data["supplement"] = SUPPLEMENT_DIR
        data["supplement_files"] = [p.name for p in files]
    text = render_html(data) if fmt == "html" else render_markdown(data)
    write_text_atomic(path, text)
    if pdf is not None:
        print_pdf(path, pdf)
    return path
