"""Agreement of a study round: every analysable field of the study's schema."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from goldboard.analysis.agreement import agreement
from goldboard.cases.assignment import design_note
from goldboard.cases.ratings_columns import RatingColumns, read_rating_columns
from goldboard.errors import ParamError, check_names
from goldboard.fileio import duplicate_headers
from goldboard.label_configs.schema import Schema
from goldboard.study import Study
from goldboard.study_checks import no_ratings_error, ratings_edit_problem, units_gaps, unlisted_rounds
from goldboard.text import cell_text

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def _id_text(v: Any) -> str:
    return cell_text(v).strip()


@dataclass(frozen=True)
class RoundChoice:
    """The round a round-level analysis reads when no round is given, and the sentence saying why."""

    number: int
    rule: str
    #: later rounds still in progress, passed over: round -> (items rated by every rater they need, items)
    in_progress: dict[int, tuple[int, int]]
    #: the raters with ratings in each of those later rounds
    later_raters: dict[int, list[str]] = dataclasses.field(default_factory=dict)
    #: per pulled round with ratings held out as invalid at pull: rater -> items held out (and not
    #: rated validly by that rater in the round), as ``status`` counts them
    held_out: dict[int, dict[str, int]] = dataclasses.field(default_factory=dict)


def analysis_round(study: Study, frames: dict[int, pd.DataFrame] | None = None) -> RoundChoice:
    """The latest *complete* pulled round: every item it holds was rated by every rater it needs
    (the design's, else every study rater with a rating) -- the round-level counterpart of
    gold's per-item rule (:mod:`goldboard.cases.rounds`).  A later round still in progress is
    named, never silently analysed; with no complete round, the latest pulled round as it is."""
    latest = study.latest_pulled_round()  # raises when nothing is pulled
    # a round is its folder, rounds/N; ``frames`` (a dict) keeps them for the caller (read once)
    frames = {} if frames is None else frames
    frames.update({n: study.ratings(n) for n in study.pulled_rounds()})
    assigned = study.assigned_raters()
    pairs = {n: _round_columns(df, assigned) for n, df in frames.items()}
    return study_round_choice(study, latest, pairs, assigned)


def _round_columns(df: pd.DataFrame, assigned: Any) -> tuple[list[str], list[str]] | _CodedRound:
    """A round's (item ids, raters) for :func:`study_round_choice`: coded once per distinct id
    (:class:`_CodedRound`) when no design assigns raters and neither column has a missing cell,
    else as lists of text, as before."""
    if not assigned and len(df) and not (df["item_id"].isna().any() or df["rater"].isna().any()):
        return _CodedRound.of(df["item_id"], df["rater"])
    return df["item_id"].astype(str).tolist(), df["rater"].astype(str).tolist()


@dataclass(frozen=True)
class _CodedRound:
    """A round's ratings as item and rater codes (one per rating) with the distinct raters:
    :func:`study_round_choice`'s tallies as array operations -- for a round no design assigns (every
    item needs the same raters), where the per-item loop over lists gives the same counts."""

    item_codes: np.ndarray
    n_items: int
    rater_codes: np.ndarray
    raters: list[str]
    items: tuple = ()

    @classmethod
    def of(cls, item_ids: pd.Series, raters: pd.Series) -> _CodedRound:
        import pandas as pd

        ic, items = pd.factorize(item_ids)
        rc, names = pd.factorize(raters)
        return cls(ic, len(items), rc, [str(r) for r in names], tuple(str(i) for i in items))

    def done(self, need: set[str]) -> int:
        """Items rated by every rater of ``need`` (each item when ``need`` is empty)."""
        if not need:
            return self.n_items
        wanted = np.array([r in need for r in self.raters], dtype=bool)
        if int(wanted.sum()) < len(need):
            return 0  # a needed rater rated nothing in this round
        keep = wanted[self.rater_codes]
        pair = np.unique(self.item_codes[keep] * len(self.raters) + self.rater_codes[keep])
        per_item = np.bincount(pair // len(self.raters), minlength=self.n_items)
        return int((per_item == len(need)).sum())


def _tally(
    n: int, cols: tuple[list[str], list[str]] | _CodedRound, need_all: set[str], assigned: Any
) -> tuple[tuple[int, int], bool | None]:
    """One round's (items rated by every rater they need, items) and whether every needed rater
    took part (None for a round with no ratings)."""
    if isinstance(cols, _CodedRound):
        return (cols.done(need_all), cols.n_items), need_all <= set(cols.raters)
    item_ids, raters = cols
    if not item_ids:
        return (0, 0), None  # pulled, nobody has rated it yet
    rated: dict[str, set[str]] = {}  # item -> its raters, one pass over the columns
    for item, who in zip(item_ids, raters):
        rated.setdefault(item, set()).add(who)
    done = sum(int(set(assigned.get((item, n)) or need_all) <= who) for item, who in rated.items())
    return (done, len(rated)), need_all <= set(raters)


def study_round_choice(
    study: Study, latest: int, pairs: dict[int, tuple[list[str], list[str]] | _CodedRound], assigned: Any
) -> RoundChoice:
    """:func:`analysis_round` from each pulled round's (item ids, raters) columns and the
    design's ``{(item, round): raters}``."""
    present = {r for cols in pairs.values() for r in (cols.raters if isinstance(cols, _CodedRound) else cols[1])}
    need_all = {r for r in study.raters if r in present}
    idle = [r for r in study.raters if r not in present]  # a study rater with no rating is not "every rater"
    every = "every rater" if not idle else f"every rater but {', '.join(idle)}"
    progress: dict[int, tuple[int, int]] = {}
    took_part: dict[int, bool] = {}  # every rater rated at least one of the round's items
    for n, cols in pairs.items():
        progress[n], took = _tally(n, cols, need_all, assigned)
        if took is not None:
            took_part[n] = took
    held = {n: h for n, cols in pairs.items() if (h := _held_counts(study, n, cols))}
    pulled = [n for n in sorted(progress) if n <= latest]
    complete = [n for n in pulled if progress[n][0] == progress[n][1] > 0]
    if complete and complete[-1] == latest:
        return RoundChoice(
            latest,
            f"round {latest}, the latest round (complete: {every} rated each of its items"
            f"{_held_clause(study, latest, held)})",
            {},
            held_out=held,
        )
    if not complete:  # rounds with gaps: the latest that every rater took part in, as it is
        started = [n for n in pulled if took_part.get(n)]
        use = started[-1] if started else latest
        d, t = progress.get(use, (0, 0))
        if use == latest:
            return RoundChoice(
                latest,
                f"round {latest}, the latest round, as it is ({d} of {t} items rated by {every}"
                f"{_held_clause(study, latest, held)})",
                {},
                held_out=held,
            )
        complete = [use]
    later = {n: progress[n] for n in pulled if n > complete[-1]}
    busy = "; ".join(
        _later_round_text(n, progress[n], every, pairs, need_all, held.get(n, {}), _held_clause(study, n, held))
        for n in later
    )
    use = complete[-1]
    d, t = progress[use]
    clause = _held_clause(study, use, held)
    what = (
        f"the latest complete round{f' ({clause[2:]})' if clause else ''}"
        if d == t
        else f"the latest round {every} took part in ({d} of {t} items{clause})"
    )
    return RoundChoice(
        use,
        f"round {use}, {what}; {busy}",
        later,
        {n: _items_and_raters(pairs[n])[1] for n in later},
        held,
    )


def _held_counts(study: Study, n: int, cols: tuple[list[str], list[str]] | _CodedRound) -> dict[str, int]:
    """Rater -> the items of round ``n`` whose rating by the rater its pull held out as invalid
    (``invalid.csv``) and that the rater has no valid rating of in the round."""
    held = study.held_out(n)
    if not held:
        return {}
    rated: dict[str, set[str]] = {}
    if isinstance(cols, _CodedRound):
        for k, rater in enumerate(cols.raters):
            if rater in held:
                rated[rater] = {cols.items[i] for i in np.unique(cols.item_codes[cols.rater_codes == k])}
    else:
        for item, who in zip(cols[0], cols[1]):
            if str(who) in held:
                rated.setdefault(str(who), set()).add(str(item))
    out = {r: len(items - rated.get(r, set())) for r, items in held.items()}
    return {r: k for r, k in out.items() if k}


def _held_clause(study: Study, n: int, held: dict[int, dict[str, int]]) -> str:
    """``; onc_b's ratings of 50 items held out as invalid at pull, see S/rounds/2/invalid.csv`` (to close a
    parenthesis), or ``""``."""
    if not held.get(n):
        return ""
    return f"; {held_text(held[n])} held out as invalid at pull, see {study.invalid_path(n)}"


def held_text(held: dict[str, int]) -> str:
    """``onc_b's ratings of 50 items`` / ``onc_a's ratings of 2 items and onc_b's of 1 item``."""
    parts = [
        f"{r}'s{' ratings' if i == 0 else ''} of {k} item{'s' if k != 1 else ''}"
        for i, (r, k) in enumerate(held.items())
    ]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _items_and_raters(cols: tuple[list[str], list[str]] | _CodedRound) -> tuple[set[str], list[str]]:
    if isinstance(cols, _CodedRound):
        return set(cols.items), list(cols.raters)
    return {str(i) for i in cols[0]}, list(dict.fromkeys(str(r) for r in cols[1]))


def _later_round_text(
    n: int,
    progress: tuple[int, int],
    every: str,
    pairs: dict[int, tuple[list[str], list[str]] | _CodedRound],
    need_all: set[str],
    held: dict[str, int] | None = None,
    held_clause: str = "",
) -> str:
    """What a later round passed over is, as far as its ratings tell: in progress, a round one
    rater re-rated (a test-retest round, or one in progress: the data cannot tell which), or a
    round fewer raters rated -- never "nothing to analyse" when two raters rated items of it.
    ``held``: rater -> items whose rating the pull held out as invalid (``held_clause`` names them):
    a round whose other raters' ratings were held out is not a test-retest round."""
    return _later_round_state(n, progress, every, pairs, need_all, held or {}, held_clause)


def _later_round_state(
    n: int,
    progress: tuple[int, int],
    every: str,
    pairs: dict[int, tuple[list[str], list[str]] | _CodedRound],
    need_all: set[str],
    held: dict[str, int],
    clause: str,
) -> str:
    d, t = progress
    if not t:
        return f"round {n} has no valid ratings ({clause[2:]})" if clause else f"round {n} has no ratings yet"
    items, raters = _items_and_raters(pairs[n])
    missing = sorted(need_all - set(raters))
    if len(raters) == 1 and any(r != raters[0] for r in held):
        return (
            f"round {n} has valid ratings from {raters[0]} only ({t} items{clause}): not a test-retest round, and no "
            "inter-rater agreement to analyse until the held-out ratings are corrected and pulled again"
        )
    if len(raters) == 1:
        who = raters[0]
        before = [m for m in sorted(pairs) if m < n and items <= _items_and_raters(pairs[m])[0]]
        if before:
            return (
                f"round {n} has ratings from {who} only ({t} items, each rated in round {before[-1]} too{clause}): a "
                f"test-retest round or a round in progress, with no inter-rater agreement to analyse ({who}'s "
                f"test-retest agreement: goldboard agree --test-retest --rounds {before[-1]},{n})"
            )
        return f"round {n} has ratings from {who} only so far ({t} items{clause}): nothing to analyse yet"
    if missing and not d:
        return (
            f"round {n} has ratings from {', '.join(raters)} only ({', '.join(missing)} rated none of its {t} "
            f"items{clause}): a round with fewer raters, or one in progress; --round {n} analyses it as it is"
        )
    return f"round {n} is in progress ({d} of {t} items rated by {every} so far{clause}; " + (
        f"--round {n} analyses it as it is)" if d else "nothing to analyse yet)"
    )


def agreement_for_study(
    study: Study,
    round_number: int | None = None,
    fields: Iterable[str] | None = None,
    n_resamples: int = 0,
    seed: int = 1,
    by: str | None = None,
    ratings: pd.DataFrame | None = None,
    ci: str | None = None,
) -> dict[str, dict]:
    """Agreement for every analysable field of a study round: ``{field: contract dict}``.

    ``fields`` defaults to the schema's nominal, ordinal and binary fields plus,
    for each multi-select field, one binary ``"<field>:<value>"`` entry per value.
    Fields that fewer than two raters rated are left out.  ``by`` may name a
    ratings column (``model``) or a unit/case column of ``units.jsonl``
    (``error_type``, ``specialty``).  ``ratings``: the round's ratings as ``study.ratings(round)``
    returned them, when the caller has read them already (not changed here).  ``ci``: the interval
    method without a bootstrap (default: each statistic's, :mod:`goldboard.analysis.statistics`).
    """
    schema = study.schema
    if round_number is None:
        round_number = analysis_round(study).number
    if ratings is None:
        ratings = study.ratings(round_number)
    source = str(study.ratings_path(round_number))
    ratings = ratings.assign(_line=np.arange(len(ratings)) + 2)  # CSV line numbers (header = 1)
    if fields is None:
        fields = analysable_fields(schema)
    groups = unit_groups(study, by) if by is not None and by not in ratings.columns else None
    out: dict[str, dict] = {}
    for name in fields:
        base = name.partition(":")[0]
        if len(_raters_with(ratings, base, ":" in name)) < 2:
            continue
        out[name] = agreement(
            ratings,
            name,
            schema,
            raters=study.raters,
            by=None if groups else by,
            groups=groups,
            n_resamples=n_resamples,
            seed=seed,
            source=source,
            ci=ci,
        )
    return out


def _raters_with(ratings: pd.DataFrame, base: str, multi: bool) -> set:
    """The raters with a rating of field ``base`` (a non-blank one, but for a multi-select field,
    where an empty rating is an answer); each distinct value is read once."""
    import pandas as pd

    sub = ratings.loc[(ratings["field"] == base).to_numpy(), ["rater", "value"]]
    if sub["rater"].isna().any():  # a missing rater: the set as it always was
        return set(sub["rater"] if multi else sub.loc[(sub["value"].map(_id_text) != "").to_numpy(), "rater"])
    if not multi:
        codes, uniques = pd.factorize(sub["value"], use_na_sentinel=True)
        rated = np.array([_id_text(v) != "" for v in uniques.tolist()] + [False], dtype=bool)  # last: missing
        sub = sub[rated[codes]]
    return set(pd.unique(sub["rater"]).tolist())


def analysable_fields(schema: Schema) -> list[str]:
    """The schema's nominal, ordinal and binary fields plus, for each multi-select field, one
    binary ``"<field>:<value>"`` entry per value (what :func:`agreement_for_study` analyses)."""
    fields: list[str] = []
    for f in schema.fields:
        if f.kind == "multi":
            fields += [f"{f.name}:{v}" for v in f.categories]
        elif f.level is not None:
            fields.append(f.name)
    return fields


def unit_groups(study: Study, column: str, param: str = "by") -> dict[str, str]:
    """item_id -> value of an item column (``model``, ``case_id``...) or a case field (``error_type``);
    an error names ``column`` as library parameter ``param`` (``by`` or ``cluster_col``)."""
    units = study.units()
    if units.empty:
        raise ParamError(
            "{" + param + "} {column!r}: not a ratings column and the study has no units.jsonl", column=column
        )
    if column in units.columns:
        return {str(i): _id_text(v) for i, v in zip(units["item_id"], units[column])}
    if "case" in units.columns:
        out = {}
        found = False
        for i, case in zip(units["item_id"], units["case"]):
            if isinstance(case, dict) and column in case:
                found = True
                out[str(i)] = _id_text(case[column])
        if found:
            return out
    raise ParamError("{" + param + "} {column!r}: no such ratings, item or case column", column=column)


def design_summary(study: Study, round_number: int, ratings: pd.DataFrame, field: str) -> dict[str, Any] | None:
    """The round's design (``push --overlap`` / ``--per-item``) with the number of items of
    ``field`` rated by two or more raters and a one-sentence note; ``None`` without a design."""
    rnd = next((r for r in study.rounds if r.number == round_number), None)
    if rnd is None or not rnd.design:
        return None
    if isinstance(ratings, RatingColumns):
        ratings = ratings.frame()
    sub = ratings[ratings["field"] == field.partition(":")[0]] if "field" in ratings.columns else ratings
    n_multi = int((sub.groupby("item_id")["rater"].nunique() >= 2).sum())
    return {**rnd.design, "items_rated_by_two_or_more": n_multi, "note": design_note(rnd.design, n_multi)}


def retest_for_study(
    study: Study,
    rounds: Sequence[int],
    field: str | None = None,
    *,
    schema: Schema | None = None,
    n_resamples: int = 0,
    seed: int = 1,
) -> dict[str, Any]:
    """Test-retest (intra-rater) agreement of every study rater between two rounds
    (:func:`goldboard.analysis.retest.intra_rater_agreement`); ``field`` defaults to the
    schema's primary field."""
    from goldboard.analysis.retest import intra_rater_agreement  # pandas: only here

    schema = schema or study.schema
    ratings = study.all_ratings()
    if not len(ratings):
        raise no_ratings_error(study)
    return intra_rater_agreement(
        ratings,
        field or schema.primary_field.name,
        schema,
        rounds,
        raters=study.raters,
        n_resamples=n_resamples,
        seed=seed,
    )


# --------------------------------------------------------------------------- the inputs of `goldboard agree`


@dataclass(frozen=True)
class AgreementInput:
    """Ratings to analyse (ratings-shaped, with ``_where``), where they came from, and what
    :func:`goldboard.analysis.agreement.agreement` needs besides them."""

    ratings: pd.DataFrame | RatingColumns  # a small study's ratings, read without pandas
    source: str
    field: str | None = None  # the field the input fixes (a Label Studio export's); None: choose one
    raters: list[str] | None = None  # the raters to compare, in order (a study's)
    groups: dict[str, str] | None = None  # item -> stratum, from the study's units
    clusters: dict[str, str] | None = None  # item -> cluster, from the study's units
    study: Study | None = None
    round_number: int | None = None
    warnings: tuple[str, ...] = ()
    schema: Schema | None = None  # a study's schema when none was given


def study_agreement_input(
    study_dir: str,
    round_number: int | None,
    *,
    schema: Schema | None = None,
    raters: list[str] | None = None,
    by: str | None = None,
    cluster_col: str | None = None,
) -> AgreementInput:
    """A study round's pulled ratings (default: the latest pulled round) and ``schema`` (default:
    the study's); ``raters``: compare only these study raters; ``by``/``cluster_col`` not in the
    ratings come from the units."""
    study = Study.open(study_dir)
    if schema is None:
        schema = study.schema
    quick = _study_columns_input(study, round_number, schema, raters, by, cluster_col)
    if quick is not None:
        return _edit_note(quick)
    warnings: tuple[str, ...] = ()
    frames: dict[int, pd.DataFrame] = {}
    if round_number is None:
        choice = analysis_round(study, frames)
        round_number = choice.number
        if choice.in_progress:
            warnings = (f"analysing {choice.rule}",)
    df = frames[round_number] if round_number in frames else study.ratings(round_number)
    source = str(study.ratings_path(round_number))
    raters_order = _study_raters(study, raters)  # --raters with --study: compare only these study raters
    df = _where_and_raters(df, source, raters_order if raters is not None else None)
    warnings += not_study_raters(study, df["rater"], source) if raters is None else ()
    groups = clusters = None
    if by and by not in df.columns:
        groups = unit_groups(study, by)
    if cluster_col and cluster_col not in df.columns:
        clusters = unit_groups(study, cluster_col, "cluster_col")
    return _edit_note(
        AgreementInput(
            df, source, None, raters_order, groups, clusters, study, round_number, warnings=warnings, schema=schema
        )
    )


def _edit_note(inp: AgreementInput) -> AgreementInput:
    """``inp`` with a warning when the analysed round's ratings.csv changed since its pull
    (:func:`~goldboard.study_checks.ratings_edit_problem`: the file is hashed once)."""
    problem = ratings_edit_problem(inp.study, inp.round_number) if inp.study and inp.round_number else None
    lines = ([problem] if problem else []) + (unlisted_rounds(inp.study) + units_gaps(inp.study) if inp.study else [])
    if lines:
        return dataclasses.replace(inp, warnings=(*inp.warnings, *lines))
    return inp


def _study_columns_input(
    study: Study,
    round_number: int | None,
    schema: Schema,
    raters: list[str] | None,
    by: str | None,
    cluster_col: str | None,
) -> AgreementInput | None:
    """:func:`study_agreement_input` without pandas, for a small study: every pulled round's
    ``ratings.csv`` read as columns (:func:`~goldboard.cases.ratings_columns.read_rating_columns`),
    the round chosen by the same rule, the ratings handed on as
    :class:`~goldboard.cases.ratings_columns.RatingColumns`.  ``None`` -- the caller reads the
    study with pandas -- for ``--by``/``--cluster-col``, a round pushed with a design, or a
    ratings file that is large or not plain."""
    if by or cluster_col or any(r.design for r in study.rounds):
        return None
    numbers = study.pulled_rounds() if round_number is None else [round_number]
    tables = {n: read_rating_columns(study.ratings_path(n)) for n in numbers}
    if not tables or any(t is None for t in tables.values()):
        return None
    warnings: tuple[str, ...] = ()
    if round_number is None:
        pairs = {n: (t["item_id"], t["rater"]) for n, t in tables.items()}
        choice = study_round_choice(study, study.latest_pulled_round(), pairs, {})  # no design: nobody assigned
        round_number = choice.number
        if choice.in_progress:
            warnings = (f"analysing {choice.rule}",)
    cols = tables.get(round_number)
    if cols is None:
        return None
    source = str(study.ratings_path(round_number))
    raters_order = _study_raters(study, raters)
    keep = raters_order if raters is not None else None
    table = RatingColumns(
        {c: cols[c] for c in ("item_id", "rater", "field", "value")},
        lambda: _where_and_raters(study.ratings(round_number), source, keep),
    )
    if keep is not None:
        table = table.only([r in set(keep) for r in table["rater"]])
    else:
        warnings += not_study_raters(study, table["rater"], source)
    return AgreementInput(table, source, None, raters_order, None, None, study, round_number, warnings, schema)


def not_study_raters(study: Study, raters: Iterable, source: str) -> tuple[str, ...]:
    """A warning naming the raters of ``source`` who are not raters of the study (removed from
    ``study.toml`` by hand?): their ratings are analysed, and the reader is told."""
    extra = sorted({str(r) for r in raters} - set(study.raters))
    if not extra:
        return ()
    return (
        f"{source}: ratings by {', '.join(map(repr, extra))}, not a rater of the study ({study.path / 'study.toml'} "
        f"lists {', '.join(study.raters) or 'none'}): analysed as they are (add them back with `goldboard study add-rater`, or give --raters to compare only study raters)",
    )


def _study_raters(study: Study, raters: list[str] | None) -> list[str]:
    """The study raters to compare: ``--raters`` (checked: study raters, at least two), else all."""
    if raters is None:
        return study.raters
    order = check_names(raters or [], study.raters, param="raters", what="a rater of this study")
    if len(order) < 2:
        raise ParamError("{raters}: name at least two raters to compare, e.g. {raters} onc_a,onc_b")
    return order


def _where_and_raters(df: pd.DataFrame, source: str, keep: list[str] | None) -> pd.DataFrame:
    """A study round's ratings with ``_where`` (``file:line``), only the ``keep`` raters when given."""
    df["_where"] = [f"{source}:{n}" for n in range(2, len(df) + 2)]
    return df if keep is None else df[df["rater"].astype(str).isin(keep)]


def export_agreement_input(
    files: Sequence[str], field: str | None, schema: Schema | None, *, raters: list[str] | None = None
) -> AgreementInput:
    """Label Studio JSON / JSON_MIN exports (one per rater), read for ``field`` (default: the schema's primary)."""
    if raters is not None:
        raise ParamError(
            "{raters}: selects rater columns of a wide TABLE or raters of a {study}, not {files} "
            "annotators (give one export per rater instead)"
        )
    if not field and schema is None:
        raise ParamError("{files} needs {field} NAME (the label config's from_name)")
    fname = field or schema.primary_field.name
    base = fname.partition(":")[0]
    import pandas as pd

    from goldboard.annotate.export_file import read_label_studio_export  # only here: it loads the pull machinery

    df = pd.concat([read_label_studio_export(f, base, schema) for f in files], ignore_index=True)
    if len(df):  # 'Onc@x.org' in one export, 'onc@x.org' in another: one annotator, refused as two
        from goldboard.cases.ratings import check_item_column, check_rater_column

        df["item_id"] = check_item_column(
            df["item_id"], lambda i: str(df["_where"].iloc[i])
        )  # 'C1' in one export, 'c1' in another
        df["rater"] = check_rater_column(df["rater"], lambda i: str(df["_where"].iloc[i]))
    source = files[0] if len(files) == 1 else "label-studio exports"
    return AgreementInput(df, source, fname)


def table_agreement_input(
    table: str,
    *,
    raters: list[str] | None = None,
    item_col: str = "item_id",
    rater_col: str = "rater",
    label_col: str | None = None,
) -> AgreementInput:
    """A long table (one row per rating) or, with ``raters``, a wide one (one column per rater)."""
    from goldboard.cases.ratings import read_long_table, read_wide_table  # pandas: only here

    warnings = []
    dup = duplicate_headers(table)
    if dup:
        warnings.append(
            f"{table}: duplicate column header{'s' if len(dup) > 1 else ''} {', '.join(repr(d) for d in dup)}: "
            f"only the last column of each name is read; rename the others"
        )
    if raters is not None:
        names = raters or []
        if len(names) < 2:
            raise ParamError("{raters}: name at least two rater columns, e.g. {raters} onc_a,onc_b")
        df = read_wide_table(table, names, item_col)
    else:
        df = read_long_table(table, item_col, rater_col, label_col)
    return AgreementInput(df, table, warnings=tuple(warnings))
