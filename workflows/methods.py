"""The report's methods paragraph, clause by clause, from what the study recorded.

Every clause is a small function of :class:`MethodsFacts` that returns a sentence (or ``""``
when it has nothing true to say); :data:`CLAUSES` lists them in paragraph order and
:func:`methods_paragraph` joins them.  A clause never states more than its fact: the design
comes from how many ratings each item has, "independently" only from a server-enforced
blinding check, "adjudicated" only from decisions in the log, each statistic only when it is in
the results, each interval method per statistic, the software from the packages that computed
the numbers.  A fact the study cannot show is printed "not recorded" (the GRRAS items:
Kottner et al., J Clin Epidemiol 2011;64:96-106).  To add a clause: write
``def clause_x(f: MethodsFacts) -> str`` and insert it into :data:`CLAUSES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from goldboard.adjudicate.decisions import latest_decisions
from goldboard.analysis import coverage as COV
from goldboard.analysis import statistics as SD
from goldboard.cases.intake.files import sources_text
from goldboard.cases.ratings_columns import RatingColumns
from goldboard.errors import GoldboardError
from goldboard.study import Study

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

#: study.toml ``[extra]`` keys of the GRRAS facts a study records
SAMPLING_KEY = "sampling"
RATER_INFO_KEY = "rater_info"
CASE_SOURCE_KEY = "case_source"

#: the name of R irr's all-raters-agree share in the report's results table
ALL_AGREE_NAME = "All raters agree (items rated by every rater)"

#: the statistics' names in the methods text, in report order
NAMES = SD.names(prose=True)

#: where each statistic's standard error comes from (two raters, more raters)
SE_SOURCE = {s.key: s.se_source for s in SD.STATISTICS}


@dataclass
class MethodsFacts:
    """What the methods paragraph may rest on (all read from the study and its round)."""

    study: Study
    round: int
    round_info: Any
    ratings: pd.DataFrame | RatingColumns  # a small study's ratings, read without pandas
    field_sections: list[dict]
    multi_sections: list[dict] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)
    n_flagged: int = 0
    flag_summary: dict = field(default_factory=dict)
    #: the flagged (item, field) rows: a decision in force on another row is not one of theirs
    flagged_keys: set[tuple[str, str]] | None = None
    #: decisions made on an earlier round whose item's later round is unanimous on another value:
    #: they no longer settle it (:func:`~goldboard.adjudicate.gold.resolve_gold`), gold takes that value
    superseded_keys: set[tuple[str, str]] = field(default_factory=set)
    #: which ratings the flagged rows and gold come from when the study has several rounds
    #: ("per item, the latest round ...", "round 2 only ..."); "" in a study of one round
    adjudication_scope: str = ""
    gold_methods: dict[str, dict[str, int]] = field(default_factory=dict)
    provisional: bool = True
    gold_release: str = ""
    blinding: str = ""
    design_text: str = ""
    ci_note: str = ""
    n_resamples: int = 0
    seed: int = 1
    plan: dict | None = None
    calibration: dict | None = None
    #: the calibration section's verdict: ``{"verdict", "met_at", "latest_round", "rounds"}``
    calibration_outcome: dict | None = None
    versions: dict[str, str] = field(default_factory=dict)
    uses_scipy: bool = False
    judge_methods: str = ""
    #: the test-retest analysis the results report (the retest section's ``methods``); "" when none
    retest: str = ""

    @property
    def primary(self) -> str:
        return self.study.schema.primary_field.name

    @property
    def blinding_enforced(self) -> bool:
        """The server enforced blinding for every rating of the round (none imported from files)."""
        imported = self.round_info is not None and bool(getattr(self.round_info, "tables", None))
        return self.blinding.startswith("Blinded and enforced") and not imported


def _join(words: list[str]) -> str:
    words = [w for w in words if w]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def count_items(ratings: pd.DataFrame | RatingColumns) -> int:
    """How many distinct items the ratings hold."""
    if isinstance(ratings, RatingColumns):
        return len(set(ratings["item_id"]))
    return int(ratings["item_id"].nunique())


def count_nonempty(ratings: pd.DataFrame | RatingColumns) -> int:
    """How many ratings have a non-empty value."""
    if isinstance(ratings, RatingColumns):
        return sum(1 for v in ratings["value"] if v != "")
    return int((ratings["value"].astype(str) != "").sum())


def _nonempty_rows(ratings: RatingColumns, field_name: str | None = None) -> list[int]:
    """The rows of ``ratings`` (columns) with a non-empty value (on ``field_name`` when given)."""
    return [
        k
        for k, (f, v) in enumerate(zip(ratings["field"], ratings["value"]))
        if v != "" and (field_name is None or f == field_name)
    ]


def ratings_per_item(ratings: pd.DataFrame | RatingColumns, field_name: str) -> dict[int, int]:
    """``{number of ratings: number of items}`` on one field (non-empty values, one per rater)."""
    if isinstance(ratings, RatingColumns):
        who: dict[str, set[str]] = {}
        for k in _nonempty_rows(ratings, field_name):
            who.setdefault(ratings["item_id"][k], set()).add(ratings["rater"][k])
        per: dict[int, int] = {}
        for raters in who.values():
            per[len(raters)] = per.get(len(raters), 0) + 1
        return dict(sorted(per.items(), reverse=True))
    sub = ratings[(ratings["field"] == field_name) & (ratings["value"].astype(str) != "")]
    counts = sub.groupby("item_id")["rater"].nunique().value_counts()
    return {int(k): int(v) for k, v in sorted(counts.items(), reverse=True)}


def ratings_count_text(ratings: pd.DataFrame | RatingColumns, schema) -> str:
    """What the ratings count counts: per field, the non-empty ratings (for a multi-select field,
    the boxes ticked and the ratings that ticked at least one)."""
    if isinstance(ratings, RatingColumns):
        return _count_text_columns(ratings, schema)
    nonempty = ratings[ratings["value"].astype(str) != ""]
    parts = []
    for f in schema.fields:
        n = int((nonempty["field"] == f.name).sum())
        if not n:
            continue
        if f.kind == "multi":
            boxes = int(
                sum(
                    len([v for v in str(x).split("|") if v]) for x in nonempty.loc[nonempty["field"] == f.name, "value"]
                )
            )
            parts.append(f"{_plural(boxes, 'box', 'boxes')} ticked in {_plural(n, 'rating')} on {f.name}")
        else:
            parts.append(f"{_plural(n, 'rating')} on {f.name}")
    return "; ".join(parts) or "none"


def _count_text_columns(ratings: RatingColumns, schema) -> str:
    """:func:`ratings_count_text` of ratings held as columns."""
    values: dict[str, list[str]] = {}
    for k in _nonempty_rows(ratings):
        values.setdefault(ratings["field"][k], []).append(ratings["value"][k])
    parts = []
    for f in schema.fields:
        vals = values.get(f.name, [])
        if not vals:
            continue
        if f.kind == "multi":
            boxes = sum(len([v for v in x.split("|") if v]) for x in vals)
            parts.append(f"{_plural(boxes, 'box', 'boxes')} ticked in {_plural(len(vals), 'rating')} on {f.name}")
        else:
            parts.append(f"{_plural(len(vals), 'rating')} on {f.name}")
    return "; ".join(parts) or "none"


def set_study_facts(
    study: Study, rater_info: dict[str, str] | None = None, case_source: str | None = None
) -> list[str]:
    """Record GRRAS facts in ``study.toml``: free text per rater on qualifications and training
    (``rater_info``, ``""`` clears it) and where the cases came from; returns what changed."""
    changes = []
    info = dict(study.extra.get(RATER_INFO_KEY) or {})
    for name, text in (rater_info or {}).items():
        if name not in study.raters:
            raise GoldboardError(
                f"{name!r}: not a rater of this study (raters: {', '.join(study.raters)})", param="rater_info"
            )
        text = " ".join(str(text).split())
        if info.get(name, "") != text:
            changes.append(f"rater {name}: {text or '(cleared)'}")
            if text:
                info[name] = text
            else:
                info.pop(name, None)
    if rater_info:
        study.extra[RATER_INFO_KEY] = info
    if case_source is not None:
        case_source = " ".join(case_source.split())
        if case_source != study.extra.get(CASE_SOURCE_KEY, ""):
            changes.append(f"case source: {case_source or '(cleared)'}")
            study.extra[CASE_SOURCE_KEY] = case_source
    if changes:
        study.save()
    return changes


def record_sampling(
    study: Study, cases: str, n: int, available: int, seed: int, by: str | None, strata: dict | None = None
) -> None:
    """Record a ``plan sample`` draw (the GRRAS sampling item) in ``study.toml``; ``strata``
    (``{value: [available, drawn]}``): how many strata there were and how many gave a case."""
    drawn = (
        {} if not (by and strata) else {"strata": len(strata), "strata_drawn": sum(1 for _, d in strata.values() if d)}
    )
    study.extra[SAMPLING_KEY] = {
        "cases": str(cases),
        "n": int(n),
        "available": int(available),
        "seed": int(seed),
        **({"by": by} if by else {}),
        **drawn,
    }
    study.save()


# --------------------------------------------------------------------------- clauses


def clause_raters(f: MethodsFacts) -> str:
    """Who labelled how many items, and how many ratings each item had on the primary field."""
    schema = f.study.schema
    n_items = count_items(f.ratings)
    per_item = ratings_per_item(f.ratings, f.primary)
    rated = raters_with_ratings(f)
    idle = [r for r in f.study.raters if r not in rated]
    n_raters = len(rated)
    how = " independently" if f.blinding_enforced else ""
    where = " in Label Studio" if f.round_info is not None and f.round_info.mode not in ("table",) else ""
    if where and _table_source(f):
        where += f" and imported from {_table_source(f)}"
    # only the raters with a rating in the round labelled anything (a study rater who rated
    # nothing is named as such, never counted among those who labelled)
    who = f"{n_raters} raters" if not idle else f"{n_raters} of the study's {len(f.study.raters)} raters"
    head = (
        f"{who} ({', '.join(rated)}){how} labelled {n_items} items "
        f"({schema.unit or 'annotation units'}) with the {schema.name} schema v{schema.version}{where}"
    )
    none = f"; {_join(idle)} rated no item in round {f.round}" if idle else ""
    if set(per_item) == {n_raters}:
        every = "every rater" if not idle else ("each of them" if n_raters > 2 else "both")
        return f"{head}{none}; {every} rated every item on {f.primary}."
    spread = _join([f"{_plural(v, 'item')} had {_plural(k, 'rating')}" for k, v in per_item.items()])
    return f"{head}{none}; on {f.primary}, {spread}."


def raters_with_ratings(f: MethodsFacts) -> list[str]:
    """The study's raters with at least one non-empty rating in the analysed round, in study order."""
    if isinstance(f.ratings, RatingColumns):
        present = {f.ratings["rater"][k] for k in _nonempty_rows(f.ratings)}
        return [r for r in f.study.raters if r in present]
    sub = f.ratings[f.ratings["value"].astype(str) != ""]
    present = set(sub["rater"].astype(str).unique().tolist())  # (one str per distinct rater, not per row)
    return [r for r in f.study.raters if r in present]


def clause_blinding(f: MethodsFacts) -> str:
    return f.blinding


def clause_design(f: MethodsFacts) -> str:
    """The assignment design of the round, as recorded at push; else where the ratings came from."""
    if f.design_text:
        return f.design_text
    per_item = ratings_per_item(f.ratings, f.primary)
    if set(per_item) == {len(f.study.raters)}:
        return ""
    src = _table_source(f)
    return f"Assignment design: not recorded (ratings imported from {src or 'files'})."


def _reported_rows(f: MethodsFacts) -> list[dict]:
    return [r for s in f.field_sections for r in s["result"]["statistics"] if _is_reported(r, s["result"])]


def _is_reported(r: dict, result: dict) -> bool:
    """The rows the report's headline tables show (see ``exports.report.headline_rows``)."""
    if r.get("group") is not None:
        return False
    return len(result["raters"]) <= 2 or r["raters"] == result["raters"] or r["statistic"] == "cohen_kappa"


def clause_statistics(f: MethodsFacts) -> str:
    """Exactly the statistics in the results, with weights and levels only where reported."""
    rows = _reported_rows(f)
    present = [s for s in NAMES if any(r["statistic"] == s for r in rows)]
    if f.multi_sections and "percent_agreement" not in present:
        present.insert(0, "percent_agreement")
    names = []
    for s in present:
        name = NAMES[s]
        if s == "percent_agreement":
            name = "raw percent agreement with label prevalence"
        if s == "cohen_kappa" and any(len(sec["raters"]) > 2 for sec in f.field_sections):
            name = "Cohen's kappa for each rater pair"
        weights = sorted({r["weights"] for r in rows if r["statistic"] == s and r.get("weights") not in (None, "none")})
        if weights and s != "krippendorff_alpha":
            ordinal = [sec["name"] for sec in f.field_sections if sec["level"] == "ordinal"]
            name += f" (also with {_join(weights)} weights over the full scale, for {', '.join(ordinal)})"
            if s == "gwet_ac1":
                name = name.replace("AC1 (also", "AC1 (AC2")
        if s == "pabak":
            name += " (two-category fields and views)"
        if s == "krippendorff_alpha":
            levels = sorted({r["level"] for r in rows if r["statistic"] == s and r.get("level")})
            name += f" ({_join(levels)} level; missing ratings allowed)"
        names.append(name)
    if not names:
        return ""
    multi = " and, per value of each multi-select field, percent agreement, Cohen's kappa and Krippendorff's alpha"
    text = f"Agreement was summarised as {_join(names)}{multi if f.multi_sections else ''}."
    return " ".join([text, *_scale_sentences(f, rows)])


def _numeric_levels(categories: list[str]) -> list[float] | None:
    try:
        return [float(c) for c in categories]
    except ValueError:
        return None


def _scale_sentences(f: MethodsFacts, rows: list[dict]) -> list[str]:
    """What the weights and alpha's distances rest on, where a reader could not tell: a field whose
    levels are unequally spaced numbers (weights on ranks, interval/ratio alpha on values), and the
    SE of ordinal alpha (its metric held fixed; irrCAC's ``krippen.alpha.raw`` has no such metric)."""
    out = []
    for sec in f.field_sections:
        mine = [r for r in sec["result"]["statistics"] if r in rows]
        cats = list(sec["result"].get("categories") or [])
        vals = _numeric_levels(cats) if len(cats) > 2 else None
        gaps = {round(b - a, 12) for a, b in zip(vals, vals[1:])} if vals else set()
        weighted = any(r.get("weights") not in (None, "none") for r in mine)
        valued = sorted({r["level"] for r in mine if r.get("level") in ("interval", "ratio")})
        if len(gaps) > 1 and (weighted or valued):
            parts = []
            if weighted:
                parts.append(
                    f"the linear and quadratic weights use the levels' ranks (1 to {len(cats)}), not their values"
                )
            if valued:
                parts.append(f"{_join(valued)} alpha uses the values")
            out.append(
                f"On {sec['name']}, whose levels ({', '.join(cats)}) are unequally spaced numbers, {'; '.join(parts)}."
            )
    if any(r["statistic"] == "krippendorff_alpha" and r.get("level") == "ordinal" for r in rows):
        out.append(
            "The SE of ordinal alpha holds Krippendorff's observed ordinal metric fixed (irrCAC's krippen.alpha.raw, "
            "which goldboard's nominal, interval and ratio alpha SEs equal with missing ratings, offers no such metric)."
        )
    return out


def clause_percent_agreement(f: MethodsFacts) -> str:
    """With more than two raters, which percent agreement is reported, and the all-agree share."""
    rows = [r for s in f.field_sections for r in s["headline"] if r["name"] == ALL_AGREE_NAME]
    if not rows:
        return ""
    n = sorted({r["n"] for r in rows})
    none = all(r["value"] is None for r in rows)
    return (
        "With more than two raters, percent agreement is the mean over rater pairs of the share of agreeing "
        "pairs per item (Fleiss 1971); beside it, 'all raters agree' is the share of the items rated by every "
        "rater on which all ratings were the same (R irr's agree()), with a Wilson score 95% interval"
        + (
            ", not estimable here: no item was rated by every rater."
            if none
            else f" ({'/'.join(map(str, n))} such items)."
        )
    )


def _no_estimate(r: dict) -> bool:
    v = r.get("value")
    return v is None or v != v


def _not_estimable(r: dict) -> bool:
    """No estimate, or an estimate without an interval (a degenerate table: SE 0)."""
    return _no_estimate(r) or r.get("ci_low") is None or (r.get("se") == 0 and r.get("ci_low") == r.get("ci_high"))


def clause_intervals(f: MethodsFacts) -> str:
    """The interval method per statistic: Wald with its SE source, bootstrap, or not estimable."""
    rows = _reported_rows(f)
    if not rows:
        return ""
    # a method is named only for statistics that have an interval in the results (a degenerate
    # table or an undefined estimate has none: said by the not-estimable sentences instead)
    rows = [r for r in rows if not _not_estimable(r)]
    boot = [s for s in NAMES if any(r["statistic"] == s and r.get("ci_method") == "bootstrap" for r in rows)]
    wald = [s for s in NAMES if any(r["statistic"] == s and r.get("ci_method") == "asymptotic" for r in rows)]
    wilson = [s for s in NAMES if any(r["statistic"] == s and r.get("ci_method") == "wilson" for r in rows)]
    many = any(len(s["raters"]) > 2 for s in f.field_sections)
    parts = []
    by_source: dict[str, list[str]] = {}
    if wald or wilson:
        for s in [x for x in NAMES if x in wald or x in wilson]:
            two = any(r["statistic"] == s and len(r["raters"]) == 2 for r in rows)
            srcs = {SE_SOURCE[s][0]} if two else set()
            if many and any(r["statistic"] == s and len(r["raters"]) > 2 for r in rows):
                srcs.add(SE_SOURCE[s][1])
            for src in sorted(srcs):
                by_source.setdefault(src, []).append(NAMES[s])
    se = "; ".join(f"{src} for {_join(names)}" for src, names in by_source.items())
    if wald:
        parts.append(
            "two-sided Wald (z) intervals, estimate -/+ 1.96 standard errors, "
            f"truncated to the coefficient's range, with standard errors from {se}"
        )
    if wilson:
        parts.append(
            "Wilson score intervals at each estimate's effective sample size (Korn & Graubard 1998; "
            f"asymmetric near 1, one-sided at perfect agreement) for {_join([NAMES[s] for s in wilson])}"
            + ("" if wald else f", with standard errors from {se}")
        )
    if boot:
        b = f.n_resamples or 2000
        parts.append(
            f"percentile bootstrap intervals ({b} resamples of items, seed {f.seed}) for {_join([NAMES[s] for s in boot])}"
        )
    if not parts:  # no statistic has an interval: no method, no note on Wald intervals
        return "No Wald or bootstrap 95% confidence interval could be computed." + _not_estimable_text(f)
    text = "95% confidence intervals are " + "; and ".join(parts) + "." + _not_estimable_text(f)
    text += coverage_text(f) if wilson else ""
    if f.ci_note:
        text += " " + f.ci_note
    return text


def coverage_text(f: MethodsFacts) -> str:
    """What the seeded coverage simulation (:mod:`goldboard.analysis.coverage`) says of each field's
    Wilson intervals: the statistics (the overall rows and the per-label positive specific
    agreement) whose default interval covered less than 93% in the simulated cell nearest the field
    (its items, raters, categories and prevalence), or that none did, and the reported statistics
    it did not simulate."""
    said, unsimulated = [], []
    for sec in f.field_sections:
        res = sec["result"]
        cells, missing = COV.field_cells(res, lambda r, res=res: _is_reported(r, res))
        unsimulated += [NAMES[s] for s in missing]
        for cell, benches in cells.items():
            low = [(s, cov, se) for s, cov, se in COV.shortfalls(cell) if s in benches]
            where = f"at the cell nearest {sec['name']} ({COV.cell_words(cell)})"
            if low:
                what = _join([f"{cov:.1%} for {COV.prose(s)}" for s, cov, _ in low])
                mc = max(se for _, _, se in low)
                said.append(
                    f"{where} the Wilson interval covered {what} (below 93%; Monte-Carlo SE up to {100 * mc:.1f} points)"
                )
            else:
                said.append(f"{where} it covered at least 93% for every simulated statistic")
    if not said:
        return ""
    m = COV.META
    text = (
        f" In goldboard's seeded coverage simulation ({m['reps']} studies per cell, kappa {m['kappa']}; "
        f"benchmarks/bench_coverage.py), {'; '.join(said)}"
    )
    if unsimulated:
        names = list(dict.fromkeys(unsimulated))
        text += f"; {_join(names)} {'was' if len(names) == 1 else 'were'} not simulated"
    return text + "."


def _not_estimable_text(f: MethodsFacts) -> str:
    """Which statistics had no estimate, and which had an estimate but no interval (a degenerate
    table, e.g. perfect agreement on few items: the estimate is reported, its interval is not)."""
    rows = [
        (r, f"{NAMES[r['statistic']]} on {sec['name']}")
        for sec in f.field_sections
        for r in sec["result"]["statistics"]
        if _is_reported(r, sec["result"]) and r["statistic"] in NAMES and _not_estimable(r)
    ]
    none = list(dict.fromkeys(name for r, name in rows if _no_estimate(r)))
    no_ci = list(dict.fromkeys(name for r, name in rows if not _no_estimate(r) and name not in none))
    text = f" Not estimable (undefined estimate): {_join(none)}." if none else ""
    if no_ci:
        text += (
            " No confidence interval (degenerate table: standard error 0; the estimate is reported without one): "
            f"{_join(no_ci)}."
        )
    return text


def _flagged_text(f: MethodsFacts) -> str:
    fs = f.flag_summary or {}
    n_dis = sum((fs.get("disagreements") or {}).values())
    n_missing = (fs.get("by_kind") or {}).get("missing", 0)
    # the two counts partition the flagged rows (a row with a missing rating may also disagree)
    other = max(f.n_flagged - n_dis, 0)
    why = [_plural(n_dis, "label disagreement")]
    if other:
        why.append(f"{other} {'row' if other == 1 else 'rows'} flagged only by other triggers")
    missing = ""
    if n_missing:
        every = n_missing == f.n_flagged
        missing = (
            f"; {'every one' if every and n_missing > 1 else 'it' if every else f'{n_missing} of the {f.n_flagged}'}"
        )
        missing += f" {'has' if n_missing == 1 or every else 'have'} a missing rating"
    return (
        f"{_plural(f.n_flagged, 'item-field row')} {'was' if f.n_flagged == 1 else 'were'} flagged for adjudication"
        f"{_where(f)} by the schema's named boundaries and adjudication triggers ({_join(why)}{missing})"
    )


def _where(f: MethodsFacts) -> str:
    """Which ratings the flagged rows come from, in a study of several rounds."""
    if f.adjudication_scope:
        return f" ({f.adjudication_scope})"
    return f" in round {f.round}" if _several_rounds(f) else ""


def _several_rounds(f: MethodsFacts) -> bool:
    return len(f.study.pulled_rounds()) > 1


def clause_adjudication(f: MethodsFacts) -> str:
    """Rows flagged, and the decisions in force for them: decided / open, by whom, where."""
    if not f.n_flagged and not f.decisions:
        # other rounds may hold open rows
        return f"No disagreements were flagged{_where(f)} by the schema's named boundaries and adjudication triggers."
    head = _flagged_text(f)
    latest = {k: e for k, e in latest_decisions(f.decisions).items() if k not in f.superseded_keys}
    # a decision in force on a row no longer flagged (its item re-rated since) is counted apart
    in_force = [e for k, e in latest.items() if f.flagged_keys is None or k in f.flagged_keys]
    elsewhere = _unflagged_decisions_text(len(latest) - len(in_force), bool(in_force))
    elsewhere += _superseded_text(len(f.superseded_keys))
    if not in_force:
        return f"{head}{'; none has been adjudicated yet' if f.n_flagged else ''}{elsewhere}."
    decided = [e for e in in_force if e.get("decision") != "unresolved"]
    open_ = len(in_force) - len(decided)
    who: dict[str, set[str]] = {}
    for e in decided:
        src = {"sheet": "review sheet", "label_studio": "Label Studio"}.get(str(e.get("source")), str(e.get("source")))
        who.setdefault(str(e.get("adjudicator") or "unnamed adjudicator"), set()).add(src)
        if e.get("independent") is False:  # the log's own record: the adjudicator is a rater of the study
            who[str(e.get("adjudicator") or "unnamed adjudicator")].add("a rater of this study, not independent")
    by = _join([f"{a} ({'; '.join(sorted(s, key=lambda w: w.startswith('a rater')))})" for a, s in who.items()])
    undecided = max(f.n_flagged - len(in_force), 0)
    tail = []
    if open_:
        tail.append(f"{open_} left open (unresolved)")
    if undecided:
        tail.append(f"{undecided} not yet adjudicated")
    return (
        f"{head}; {_plural(len(decided), 'decision')} {'is' if len(decided) == 1 else 'are'} in force, made by "
        f"{by or 'nobody'}" + (f"; {', '.join(tail)}" if tail else "") + elsewhere + "."
    )


def _unflagged_decisions_text(n: int, more: bool) -> str:
    """``; 1 more decision in force is on a row no longer flagged (gold keeps it)``."""
    if not n:
        return ""
    one = n == 1
    return (
        f"; {_plural(n, 'more decision' if more else 'decision')} in force {'is' if one else 'are'} on "
        f"{'a row' if one else 'rows'} no longer flagged (gold keeps {'it' if one else 'them'})"
    )


def _superseded_text(n: int) -> str:
    """``; 6 decisions made on an earlier round's disagreement no longer settle their rows: ...``."""
    if not n:
        return ""
    one = n == 1
    return (
        f"; {_plural(n, 'decision')} made on an earlier round's disagreement no longer "
        f"{'settles its row' if one else 'settle their rows'}: the raters of {'the' if one else 'each'} item's later "
        f"round all gave another value, which gold takes (the {'decision stays' if one else 'decisions stay'} in the log)"
    )


def clause_gold(f: MethodsFacts) -> str:
    """How the gold labels of the primary field were resolved (counts, release or provisional)."""
    m = f.gold_methods.get(f.primary)
    if not m:
        return ""
    what = (
        f"gold release {f.gold_release}" if not f.provisional and f.gold_release else "provisional: no gold release yet"
    )
    if what.startswith("provisional") and f.adjudication_scope:  # as `gold export` would write them now
        export = "gold export" + (f" --round {f.round}" if f.adjudication_scope.startswith("round ") else "")
        what += f", resolved as `{export}` would: {f.adjudication_scope}"
    counts = _join([f"{v} {k}" for k, v in m.items() if v])
    return f"Gold labels on {f.primary} ({what}): {counts}."


def clause_plan(f: MethodsFacts) -> str:
    """The recorded sample-size plan, its sidedness, and how it relates to the reported interval."""
    if not f.plan:
        return "Sample size: no plan recorded (goldboard plan size --study)."
    text = f"Sample size: {f.plan['sentence']}"
    goal, sided = f.plan.get("goal"), f.plan.get("two_sided")  # None: recorded before goldboard said
    one_sided_ci = goal == "ci" and sided is False
    if one_sided_ci:
        text += (
            " The plan's lower limit is one-sided 95%; the results report two-sided 95% intervals, whose lower "
            "limit is the one-sided 97.5% limit, so it is stricter than the planned one."
        )
    elif goal == "ci" and sided:
        text += " The plan's interval is two-sided 95%, the kind the results report."
    n_items = count_items(f.ratings)
    if f.plan.get("n") and int(f.plan["n"]) > n_items:
        text += f" This round has {n_items} items, fewer than the {f.plan['n']} planned."
    return text


def clause_calibration(f: MethodsFacts) -> str:
    """Calibration rounds: how many, and whether the reported estimate includes them."""
    cal = [r for r in f.study.rounds if r.calibration]
    if not cal:
        return ""
    nums = ", ".join(str(r.number) for r in cal)
    inc = any(r.number == f.round for r in cal)
    text = (
        f"Calibration: {_plural(len(cal), 'round')} ({nums}) marked as calibration; the estimates here are from "
        f"round {f.round}, which {'is' if inc else 'is not'} a calibration round"
        f"{'' if inc else ' (calibration rounds excluded)'}."
    )
    c = f.calibration
    looked = [int(r) for r in (c or {}).get("look_rounds") or [] if str(r).isdigit()]
    if not inc and f.round in looked:
        text = text[:-1] + f"; a calibration look (look {looked.index(f.round) + 1}) was taken on round {f.round}."
    if c and c.get("rules"):
        text += f" Stopping rule: {' and '.join(c['rules'])}"
        if c.get("max_looks"):
            text += f", checked at up to {c['max_looks']} looks with a Bonferroni-adjusted level"
        text += _calibration_outcome(f.calibration_outcome) + "."
    return text


def _calibration_outcome(o: dict | None) -> str:
    """``; 1 look taken (round 1): not met`` -- never left for the reader to assume the rule was met."""
    if not o or not o.get("rounds"):
        return ""
    looks = o["rounds"]
    head = f"; {_plural(len(looks), 'look')} taken (round{'s' if len(looks) > 1 else ''} {', '.join(map(str, looks))})"
    last = f" at the latest look (round {o['latest_round']})" if len(looks) > 1 else ""
    if o["verdict"] == "rule met":
        return f"{head}: met{last}"
    if o["verdict"] == "cannot be decided":
        return f"{head}: it could not be decided{last}"
    was = f" (met in round {o['met_at']}, not since)" if o.get("met_at") is not None else ""
    return f"{head}: not met{last}{was}"


def clause_grras(f: MethodsFacts) -> str:
    """GRRAS items a study can record: sampling, case source, rater qualifications, guideline versions."""
    extra = f.study.extra
    s = extra.get(SAMPLING_KEY) or {}
    if s:
        strat = f", stratified by {s['by']}" if s.get("by") else ""
        if s.get("by") and s.get("strata_drawn", 0) < s.get("strata", 0):  # fewer cases than strata
            strat += f": {s['strata_drawn']} of its {s['strata']} strata drawn at random, one case each"
        sampling = (
            f"{s.get('n')} of {s.get('available')} cases of {s.get('cases')} drawn at random by goldboard plan "
            f"sample (seed {s.get('seed')}{strat})"
        )
    else:
        sampling = "not recorded"
    source = extra.get(CASE_SOURCE_KEY) or (
        f"not recorded (items known from {_table_source(f)})" if _table_source(f) else "not recorded"
    )
    info = extra.get(RATER_INFO_KEY) or {}
    quals = "; ".join(f"{r}: {info[r]}" if info.get(r) else f"{r}: not recorded" for r in f.study.raters)
    versions = (
        "; ".join(f"round {r.number}: {r.guideline_version or 'not recorded'}" for r in f.study.rounds)
        or "not recorded"
    )
    return (
        f"Item sampling: {sampling}. Case source: {source}. Rater qualifications and training: {quals}. "
        f"Guideline version: {versions}."
    )


def _table_source(f: MethodsFacts) -> str:
    """The round's file sources by kind (``a Prodigy db-out export (news.jsonl)``); ``""`` when none."""
    return sources_text(getattr(f.round_info, "tables", None) or {}) if f.round_info is not None else ""


def computing_versions(f: MethodsFacts) -> dict[str, str]:
    """The packages that computed the reported numbers, with versions: goldboard, Python, numpy and
    pandas (the agreement engine), scipy when it computed the recorded plan, the model scores, the
    judges' alt-test or the stopping rule's limits."""
    names = ["goldboard", "python", "numpy", "pandas"] + (["scipy"] if f.uses_scipy else [])
    return {k: f.versions[k] for k in names if k in f.versions}


def clause_retest(f: MethodsFacts) -> str:
    """The test-retest (intra-rater) analysis of a round one rater alone re-rated, when the results
    report it (``workflows.report_extras.retest_section``)."""
    return f.retest


def clause_judge(f: MethodsFacts) -> str:
    """The LLM judges' alternative annotator test (``workflows.judge.judge_methods_sentence``), when
    the study has judges and the test ran."""
    return f.judge_methods


def clause_software(f: MethodsFacts) -> str:
    """The packages that computed the reported numbers, with versions."""
    shown = {"python": "Python"}
    return f"Software: {_join([f'{shown.get(k, k)} {v}' for k, v in computing_versions(f).items()])}."


#: the clauses of the methods paragraph, in order
CLAUSES: list[Callable[[MethodsFacts], str]] = [
    clause_raters,
    clause_design,
    clause_blinding,
    clause_statistics,
    clause_percent_agreement,
    clause_intervals,
    clause_adjudication,
    clause_gold,
    clause_plan,
    clause_calibration,
    clause_retest,
    clause_grras,
    clause_judge,
    clause_software,
]


def methods_clauses(facts: MethodsFacts) -> list[str]:
    return [t.strip() for c in CLAUSES if (t := c(facts))]


def methods_paragraph(facts: MethodsFacts) -> str:
    return " ".join(methods_clauses(facts))


def all_raters_agree(ratings: pd.DataFrame | RatingColumns, field_name: str, raters: list[str]) -> dict:
    """R irr's ``agree()``: the share of the items rated by every one of ``raters`` on which all
    their ratings are the same, with a Wilson (1927) score 95% interval; ``value`` None when no
    item was rated by all of them."""
    if isinstance(ratings, RatingColumns):
        n, agree = _all_agree_counts(ratings, field_name, raters)
    else:
        sub = ratings[
            (ratings["field"] == field_name) & (ratings["value"].astype(str) != "") & ratings["rater"].isin(raters)
        ]
        by_item = sub.groupby("item_id")["value"]
        n_raters = sub.groupby("item_id")["rater"].nunique()
        complete = n_raters[n_raters == len(raters)].index
        n = len(complete)
        agree = int((by_item.nunique().loc[complete] == 1).sum()) if n else 0
    if not n:
        return {"value": None, "ci_low": None, "ci_high": None, "n": 0}
    p, z = agree / n, 1.959963984540054
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return {"value": p, "ci_low": max(0.0, centre - half), "ci_high": min(1.0, centre + half), "n": n}


def _all_agree_counts(ratings: RatingColumns, field_name: str, raters: list[str]) -> tuple[int, int]:
    """(items rated by every one of ``raters`` on ``field_name``, those whose ratings are all the
    same text) of ratings held as columns: :func:`all_raters_agree`'s counts."""
    wanted = set(raters)
    who: dict[str, set[str]] = {}
    values: dict[str, set[str]] = {}
    for k in _nonempty_rows(ratings, field_name):
        r = ratings["rater"][k]
        if r in wanted:
            item = ratings["item_id"][k]
            who.setdefault(item, set()).add(r)
            values.setdefault(item, set()).add(ratings["value"][k])
    complete = [i for i, rs in who.items() if len(rs) == len(raters)]
    return len(complete), sum(1 for i in complete if len(values[i]) == 1)
