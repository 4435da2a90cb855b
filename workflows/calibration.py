"""Calibration rounds of a study against a stopping rule."""

from __future__ import annotations

from collections.abc import Sequence

from goldboard.analysis import statistics as SD
from goldboard.analysis.calibration import (
    DEFAULT_MAX_LOOKS,
    MISFIT,
    NOMINAL,
    UNDECIDED,
    Rule,
    calibration_verdict,
    check_rules,
    evaluate_round,
    look_level,
    parse_rule,
)
from goldboard.analysis.report_tables import SMALL_N
from goldboard.errors import GoldboardError, ParamError
from goldboard.study import Study
from goldboard.study_checks import no_ratings_error
from goldboard.study_options import check_round
from goldboard.text import did_you_mean
from goldboard.workflows.agreement import agreement_for_study, analysis_round, held_text


def check_field(study: Study, name: str) -> None:
    """A field of the study's schema (``FIELD:VALUE`` for one value of a multi-select field), or a
    one-line error naming the fields there are."""
    schema = study.schema
    base, _, value = name.partition(":")
    try:
        f = schema.field(base)
    except KeyError:
        raise GoldboardError(
            f"{name!r}: no such field{did_you_mean(base, schema.field_names)} (fields: {', '.join(schema.field_names)})",
            param="field",
        ) from None
    if value and value not in f.categories:
        raise GoldboardError(
            f"{name!r}: {base} has no value {value!r}{did_you_mean(value, f.categories)}", param="field"
        )
    if f.kind == "text":
        choice = [g.name for g in schema.fields if g.kind != "text"]
        raise GoldboardError(
            f"{name!r}: a free-text field has no agreement statistic (fields with one: {', '.join(choice)})",
            param="field",
        )


def calibration_rounds(study: Study) -> tuple[list[int], list[str]]:
    """The pulled rounds marked as calibration in ``study.toml``, with notes. A round marked
    calibration but not pulled yet is named and not evaluated; the other rounds are never used in
    its place (they are main rounds). Only when no round at all is marked: every pulled round
    (with a note saying so)."""
    pulled = set(study.pulled_rounds())
    declared = sorted(r.number for r in study.rounds if r.calibration)
    if not declared:
        if not pulled:
            raise no_ratings_error(study)
        return sorted(pulled), ["no round is marked as calibration (push --calibration); every pulled round is shown"]
    waiting = [n for n in declared if n not in pulled]
    notes = [f"{_rounds_text(waiting)} marked as calibration but not pulled yet: not evaluated"] if waiting else []
    return [n for n in declared if n in pulled], notes


def _rounds_text(numbers: Sequence[int]) -> str:
    """``round 2`` / ``rounds 2, 3``."""
    return ("round " if len(numbers) == 1 else "rounds ") + ", ".join(str(n) for n in numbers)


def nothing_to_test(study: Study) -> str | None:
    """Why calibrate has no round to test (every round marked calibration is not pulled yet and no
    look was taken), or ``None``: the sentence ``calibrate`` refuses with and the report prints."""
    declared = sorted(r.number for r in study.rounds if r.calibration)
    if not declared or recorded_looks(study):
        return None
    pulled = set(study.pulled_rounds())
    if any(n in pulled for n in declared):
        return None
    main = sorted(pulled)
    others = f"; {_rounds_text(main)} {'is a main round' if len(main) == 1 else 'are main rounds'}" if main else ""
    return (
        f"{_rounds_text(declared)} {'is' if len(declared) == 1 else 'are'} marked as calibration but not pulled yet: "
        f"no calibration round has ratings to test the stopping rule on{others}; nothing evaluated, no look recorded"
    )


def calibration_for_study(
    study: Study,
    rules: Sequence[str],
    fields: Sequence[str] | None = None,
    rounds: Sequence[int] | None = None,
    n_resamples: int = 0,
    seed: int = 1,
    max_looks: int | None = None,
    change_rule: bool = False,
) -> dict:
    """Per round (one look each, in order): each field's statistic with its 95% CI and the limit
    the rule tests at the Bonferroni-adjusted level, and a verdict.

    ``rules``: texts like ``"kappa_lower>=0.6"`` (:func:`goldboard.analysis.calibration.parse_rule`);
    ``fields`` default to the schema's primary field; ``rounds`` default to
    :func:`calibration_rounds`; ``max_looks``: the planned maximum number of looks (default:
    the one recorded in ``study.toml``, else :data:`DEFAULT_MAX_LOOKS`); each look is tested at
    one-sided level ``0.025 / max_looks``.  A round after the planned looks is not tested.
    Every look ever taken keeps its number and stays counted (``look_rounds`` recorded in
    ``study.toml``, see :func:`recorded_looks`), also after its round is marked main.
    Rules that contradict each other are refused; so are rules or fields other than the ones
    recorded in ``study.toml`` once a look is recorded, unless ``change_rule`` (the caller
    records the change).
    Returns ``{"rules", "fields", "rounds": [{"round", "look", "calibration",
    "guideline_version", "n_items", "checks", "met", "decided", "verdict"}], "met_at",
    "verdict", "latest_round", "max_looks", "looks", "look_rounds", "level", "notes"}``."""
    parsed, fields = _checked_rules(study, rules, fields)
    max_looks = int(max_looks or (study.extra.get("calibration") or {}).get("max_looks") or DEFAULT_MAX_LOOKS)
    level = look_level(max_looks)
    notes = []
    taken = recorded_looks(study)
    chosen = _chosen_rounds(study, rounds, notes, taken)
    _same_rule_after_a_look(study, parsed, fields, change_rule)
    info = {r.number: r for r in study.rounds}
    order = taken + [rn for rn in chosen if rn not in taken]  # every look ever taken keeps its number
    chosen = _with_taken_looks(study, chosen, taken, rounds, notes)
    out_rounds = []
    for rn in chosen:
        look = order.index(rn) + 1
        results = agreement_for_study(study, round_number=rn, fields=fields, n_resamples=n_resamples, seed=seed)
        _unrated_fields(rn, fields, results)
        ev = evaluate_round(results, parsed, fields, max_looks)
        n_items = max((c["n_items"] or 0 for c in ev["checks"]), default=0)
        if look > max_looks:
            ev["met"], ev["decided"] = False, False
            notes.append(
                f"round {rn} is look {look}, after the {max_looks} planned looks: not tested (the false-stop "
                "guarantee covers the planned looks only)"
            )
        elif _wald_type(ev["checks"]) and n_items < SMALL_N:
            notes.append(
                f"round {rn}: {n_items} items (< {SMALL_N}): the Wald-type limit is unreliable this small "
                "(the simulation that checks its false-stop rate covers 30 to 200 items a round)"
            )
        for c in ev["checks"]:
            if (
                look <= max_looks
                and c.get("best_possible") is not None
                and not parse_rule(c["rule"]).holds(c["best_possible"])
            ):
                notes.append(
                    f"round {rn}: {c['rule']} cannot be met at n = {c['n_items']}: even perfect agreement would give "
                    f"a limit of {c['best_possible']:.3f} at this look's level {level:.3g}; rate more items per round"
                )
        notes.extend(_misfit_notes(rn, ev["checks"]) if look <= max_looks else [])
        if look <= max_looks and not ev["decided"]:
            notes.append(_undecided_note(rn, n_items, ev["checks"]))
        r = info.get(rn)
        out_rounds.append(
            {
                "round": rn,
                "look": look,
                "calibration": bool(r and r.calibration),
                "guideline_version": (r.guideline_version if r else "") or "",
                "n_items": n_items,
                "checks": ev["checks"],
                "met": ev["met"],
                "decided": ev["decided"],
                "verdict": "rule met" if ev["met"] else ("continue calibrating" if ev["decided"] else UNDECIDED),
            }
        )
    return {
        "rules": [p.text for p in parsed],
        "fields": fields,
        "rounds": out_rounds,
        **calibration_verdict(out_rounds),
        "max_looks": max_looks,
        "looks": len(order),
        "look_rounds": order,
        "level": level,
        "nominal": NOMINAL,
        "ci_method": f"percentile bootstrap, {n_resamples} resamples, seed {seed}"
        if n_resamples
        else "Wald (large-sample SE)",
        "notes": notes,
    }


def _wald_type(checks: Sequence[dict]) -> bool:
    """Whether a check tests a (widened) Wald-type limit ``estimate -/+ c SE``."""
    return any(c["tested_how"].startswith("estimate ") and " SE" in c["tested_how"] for c in checks)


def _misfit_notes(rn: int, checks: Sequence[dict]) -> list[str]:
    """A kappa rule whose goodness-of-fit model misfits tests the Wald limit: say so (never "rate more items")."""
    return [
        f"round {rn}: {c['field']}: {MISFIT}, so {c['rule']} tests the Wald limit alone (kappa - z SE); more items "
        "do not repair a misfit"
        for c in checks
        if MISFIT in c["tested_how"]
    ]


def recorded_looks(study: Study) -> list[int]:
    """The rounds a look was taken on, in the order taken, as ``goldboard calibrate`` recorded them
    in ``study.toml`` (``[extra.calibration] look_rounds``); a look stays taken whatever the round
    is marked later."""
    rec = study.extra.get("calibration") or {}
    out: list[int] = []
    for r in rec.get("look_rounds") or []:
        try:
            n = int(r)
        except (TypeError, ValueError):
            continue
        if n not in out:
            out.append(n)
    return out


def _with_taken_looks(
    study: Study, chosen: list[int], taken: list[int], rounds: Sequence[int] | None, notes: list[str]
) -> list[int]:
    """The rounds shown, in look order: the looks already taken come first (unless ``rounds`` names
    the rounds to show), each named when its round is no longer marked calibration or no longer
    pulled -- the false-stop control counts every look taken, so none is dropped."""
    if rounds:
        return [rn for rn in taken if rn in chosen] + [rn for rn in chosen if rn not in taken]
    info = {r.number: r for r in study.rounds}
    pulled = set(study.pulled_rounds())
    shown = []
    for look, rn in enumerate(taken, start=1):
        if rn not in pulled:
            notes.append(
                f"round {rn}: look {look} was taken on it, but its ratings are no longer in the study; the look "
                "still counts against the planned looks"
            )
            continue
        if not (info.get(rn) and info[rn].calibration):
            notes.append(
                f"round {rn} is not marked calibration now, but look {look} was taken on it: it stays a look (the "
                "false-stop rate counts every look taken)"
            )
        shown.append(rn)
    return shown + [rn for rn in chosen if rn not in taken]


#: the statistics a stopping rule tests (analysis.calibration.STATISTICS), as a note names them
_RULE_NAMES = SD.names()  # declared in analysis/statistics.py


def _zero_width_wald(c: dict) -> bool:
    """The rule's Wald limit has zero width: perfect agreement, SE 0 (the reported interval may be
    the one-sided Wilson interval, which is not zero-width; the tested Wald limit is)."""
    if c.get("ci_low") is not None and c.get("ci_low") == c.get("ci_high"):
        return True
    return c.get("value") == 1.0 and "zero or missing SE" in str(c.get("tested_how") or "")


def _undecided_note(rn: int, n_items: int, checks: Sequence[dict]) -> str:
    """Why a round cannot be decided, and whether more items can change that: an undefined estimate
    (the ratings do not vary, e.g. one category only) is settled only by items that bring other
    categories; a zero-width Wald limit (perfect agreement) stays zero-width while agreement stays
    perfect, however many items are added."""
    why = []
    for c in checks:
        if c["decided"]:
            continue
        what = f"{_RULE_NAMES.get(c['statistic'], c['statistic'])} on {c['field']}"
        if c.get("value") is None and c.get("n_items"):
            why.append(
                f"{what} is undefined (the ratings do not vary, e.g. every rating in one category): more items "
                "settle it only if they bring other categories"
            )
        elif _zero_width_wald(c):
            why.append(
                f"{what} has a zero-width Wald interval (perfect agreement, standard error 0), which more items "
                "leave at zero width while agreement stays perfect"
            )
    if not why:
        return f"round {rn}: {UNDECIDED} at n = {n_items}: rate more items (a limit could not be computed)"
    return f"round {rn}: {UNDECIDED} at n = {n_items}: " + "; ".join(why)


def _checked_rules(study: Study, rules: Sequence[str], fields: Sequence[str] | None) -> tuple[list[Rule], list[str]]:
    """The rules parsed (each once, none contradicting another) and the fields they apply to."""
    if not rules:
        raise ParamError("{rule}: give at least one rule, e.g. {rule} 'kappa_lower>=0.6'")
    parsed = check_rules([parse_rule(r) for r in rules])
    fields = list(fields) if fields else [study.schema.primary_field.name]
    for f in fields:
        check_field(study, f)
    twice = [f for f in dict.fromkeys(fields) if fields.count(f) > 1]
    if twice:
        raise GoldboardError(f"{twice[0]!r} given twice: each field is one look's test, name it once", param="field")
    return parsed, fields


def _unrated_fields(rn: int, fields: Sequence[str], results: dict) -> None:
    """Refuse (before a look is recorded) a round in which a rule's field has no ratings from two
    raters: testing it would spend a look on nothing."""
    missing = [f for f in fields if f not in results]
    if missing:
        raise ParamError(
            "{field} {name!r}: round {rn} has no ratings of this field from two raters, so a look would be spent on "
            "nothing; no look recorded (choose a field the raters rated, or the rounds that have it with "
            "{round_number})",
            name=missing[0],
            rn=rn,
        )


def rule_change(study: Study, rules: Sequence[Rule], fields: Sequence[str]) -> str | None:
    """What changes against the rule recorded in ``study.toml`` after a look (``None``: no
    look recorded, or the same rules and fields), e.g. ``kappa_lower>=0.6 -> kappa_lower>=0.5``."""
    rec = study.extra.get("calibration") or {}
    if not rec.get("looks") or not rec.get("rules"):
        return None
    try:
        old = sorted(parse_rule(r).text for r in rec["rules"])
    except GoldboardError:
        old = sorted(str(r) for r in rec["rules"])
    new = sorted(r.text for r in rules)
    old_f, new_f = sorted(str(f) for f in rec.get("fields") or []), sorted(fields)
    if old == new and (not old_f or old_f == new_f):
        return None
    parts = []
    if old != new:
        parts.append(f"rule {', '.join(old)} -> {', '.join(new)}")
    if old_f and old_f != new_f:
        parts.append(f"fields {', '.join(old_f)} -> {', '.join(new_f)}")
    return "; ".join(parts)


def _same_rule_after_a_look(study: Study, rules: Sequence[Rule], fields: Sequence[str], change_rule: bool) -> None:
    """A stopping rule chosen after seeing a look is no stopping rule: changing it (or its
    fields) once a look is recorded is refused unless the user says so (``change_rule``)."""
    change = rule_change(study, rules, fields)
    if change is None or change_rule:
        return
    looks = (study.extra.get("calibration") or {}).get("looks")
    raise ParamError(
        "{rule}: this calibration recorded its stopping rule and has taken {looks} look(s); a rule changed after "
        "seeing a look makes the error rate meaningless ({change}); keep the recorded rule, or pass "
        "{change_rule} to change it (the change is recorded in study.toml)",
        looks=looks,
        change=change,
    )


def _chosen_rounds(study: Study, rounds: Sequence[int] | None, notes: list[str], taken: Sequence[int]) -> list[int]:
    if rounds:
        chosen = sorted(set(int(r) for r in rounds))
        for r in chosen:
            if not study.ratings_path(r).exists():
                check_round(study, r)  # a round the study does not have is named as such
                raise GoldboardError(f"{study.ratings_path(r)}: round {r} is not pulled yet", param="rounds")
        marked = {r.number for r in study.rounds if r.calibration}
        main = [r for r in chosen if marked and r not in marked and r not in taken]
        if main:  # a look on a main round would test the stopping rule on ratings that are not calibration
            raise GoldboardError(
                f"round {main[0]} is a main round, not a calibration round ({_rounds_text(sorted(marked))} "
                f"{'is' if len(marked) == 1 else 'are'} marked as calibration): a look is taken on calibration "
                f"rounds only; nothing evaluated, no look recorded (`goldboard study round {study.path} {main[0]} "
                "--calibration` marks it, if it is one)",
                param="rounds",
            )
        return chosen
    waiting = nothing_to_test(study)
    if waiting:
        raise GoldboardError(f"{waiting} (pull the calibration round first)")
    chosen, round_notes = calibration_rounds(study)
    notes.extend(round_notes)
    choice = analysis_round(study)
    busy = choice.in_progress  # a round still being rated is not judged on part of it
    for n, (done, total) in busy.items():
        if n not in chosen or n in taken:  # a look already taken is shown (and counted) as it is
            continue
        who = choice.later_raters.get(n) or []
        held = choice.held_out.get(n)
        state = (
            f"round {n} has ratings from {', '.join(who)} only ({total} items; a round with fewer raters, or one in "
            "progress)"
            if not done and len(who) >= 2
            else f"round {n} is in progress ({done} of {total} items rated by every rater so far)"
        )
        if held:  # ratings held out at pull: not a round still being rated
            state = (
                f"round {n} has valid ratings from {', '.join(who) or 'no rater'} only ({total} items; {held_text(held)} "
                f"held out as invalid at pull, see {study.invalid_path(n)})"
            )
        if len(chosen) > 1:
            chosen.remove(n)
            notes.append(f"{state}: not evaluated" + (f" (--round {n} evaluates it as it is)" if done else ""))
        else:
            notes.append(f"{state}: evaluated as it is")
    return chosen
