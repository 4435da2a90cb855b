"""What a gold release is built from and what its manifest records.

:class:`GoldChecks` is the one question ``gold export`` asks before it resolves gold: every
input read once (the ratings of every pulled round, hashed as read; the decisions log as one
snapshot) and verified -- the latest release intact and its chain whole, no ratings edited
since their pull, no ratings by a name study.toml does not list, every decision in force about
an item the study has, a value the schema holds and a judge independent of the raters, the
log still beginning with what the latest release was built from -- the first problem raised as
one located line, nothing written.  :func:`gold_manifest` then lays out the release's
``manifest.json`` from the gold and those inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldboard.adjudicate.decisions import (
    decision_independence_errors,
    decision_item_errors,
    decision_value_errors,
    latest_decisions,
    log_record,
    read_decisions_snapshot,
)
from goldboard.cases.ratings import adjudicable_fields
from goldboard.errors import GoldboardError, ParamError
from goldboard.label_configs.schema import Schema
from goldboard.study import Study, study_ratings
from goldboard.study_checks import ratings_edit_problem, recorded_ratings_sha256, unlisted_rounds
from goldboard.workflows.log_checks import check_log_prefix

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


@dataclass
class GoldInputs:
    """What gold is built from, verified (:meth:`GoldChecks.verify`), and what the manifest says of it."""

    schema: Schema
    #: every pulled round's ratings (the round in force per item is chosen by ``resolve_gold``)
    ratings: pd.DataFrame
    #: round -> the SHA-256 of the very bytes its ratings were parsed from
    digests: dict[int, str]
    #: the decisions log's entries, its SHA-256 and its record (``log_record``)
    entries: list[dict]
    log_sha256: str
    log_rec: dict[str, Any]
    #: ``sources.edited_ratings``, ``sources.left_out_raters``, ``missing_releases`` of the manifest
    edited: list[dict]
    left_out: list[dict]
    gone_releases: list[str]


@dataclass(frozen=True)
class GoldChecks:
    """The verifications of ``gold export`` (library parameters of :func:`~goldboard.workflows.export_gold`)."""

    study: Study
    round_number: int | None = None
    allow_edited_ratings: bool = False
    allow_missing_releases: bool = False
    only_study_raters: bool = False

    def verify(self) -> GoldInputs:
        """Read every input once and verify it, in this order (the first problem is raised, one
        located line; nothing is written): the schema, the release chain
        (:func:`check_latest_release`), the ratings (:func:`edited_ratings`,
        :func:`removed_raters`), the decisions in force (items, values, independence), the log's
        prefix (:func:`~goldboard.workflows.log_checks.check_log_prefix`)."""
        study = self.study
        schema = study.schema
        gone_releases = check_latest_release(study, self.allow_missing_releases)
        # each input is read once; the manifest hashes exactly the bytes gold is built from
        # (a pull or an import replacing a file meanwhile cannot put its digest in this manifest)
        digests: dict[int, str] = {}
        ratings = study_ratings(study, self.round_number, digests=digests)  # every round; round_number chooses later
        edited = edited_ratings(study, digests, self.allow_edited_ratings)
        left_out = removed_raters(study, ratings, self.round_number, self.only_study_raters)
        lines: list[int] = []
        entries, log_sha256 = read_decisions_snapshot(study.decisions_path, lines)
        bad = decision_item_errors(entries, study.items_by_round(), study.decisions_path, lines)
        bad += decision_value_errors(entries, schema, study.decisions_path)
        bad += decision_independence_errors(entries, study.raters, study.decisions_path, lines)
        if bad:  # gold is never built from a value the schema cannot hold (nothing written)
            raise GoldboardError(bad[0] + (f" (and {len(bad) - 1} more such entries)" if len(bad) > 1 else ""))
        log_rec = log_record(entries)
        # the log still begins with what the latest release was built from
        check_log_prefix(study, entries, log_rec["entries_sha256"])
        return GoldInputs(schema, ratings, digests, entries, log_sha256, log_rec, edited, left_out, gone_releases)


def gold_manifest(study: Study, gold: pd.DataFrame, inputs: GoldInputs) -> dict[str, Any]:
    """The ``manifest.json`` of a release of ``gold`` (resolved from ``inputs``): the study, schema,
    raters and fields; the rounds each item's gold came from; the sources (every ratings file gold
    read, with the SHA-256 of the bytes read; the decisions log); what was left out or missing."""
    schema, entries, selection = inputs.schema, inputs.entries, gold.attrs["round_selection"]
    orphans = gold.attrs.get("orphan_decisions", [])
    used = set(selection.rounds.values())
    sources = [
        {"path": study.ratings_path(n).relative_to(study.path).as_posix(), "round": n, "sha256": sha}
        for n, sha in sorted(inputs.digests.items())
        if n in used
    ]
    raters = [c[len("value_") :] for c in gold.columns if c.startswith("value_")]
    gold_fields = set(gold["field"].unique().tolist())  # once, not one set of every row per field
    return {
        "study": study.name,
        # the study is known by its creation time: every reader refuses another study's release (issue 23 B06r)
        **({"study_created": study.created_at} if study.created_at else {}),
        "schema": {"name": schema.name, "version": schema.version},
        "raters": raters,
        # fields never collected in the ratings have no gold rows (adjudicate.flags)
        "fields": [f.name for f in adjudicable_fields(schema) if f.name in gold_fields],
        "rounds": selection.to_dict()
        | {
            "decisions_on_earlier_rounds": gold.attrs["decisions_on_earlier_rounds"],
            "decisions_superseded": gold.attrs["decisions_superseded"],
        }
        | ({"unresolved_missing_rating": missing} if (missing := missing_rating_record(gold)) else {}),
        "sources": {
            "ratings": sources,
            **({"edited_ratings": inputs.edited} if inputs.edited else {}),
            **({"left_out_raters": inputs.left_out} if inputs.left_out else {}),
            "decisions": {
                "path": study.decisions_path.name,
                "sha256": inputs.log_sha256,
                **inputs.log_rec,
                # a decision a later round's unanimous answer superseded is not in force (adjudicate.gold)
                "in_force": len(latest_decisions(entries)) - len(orphans) - len(gold.attrs["decisions_superseded"]),
                "orphans": len(orphans),
            },
        },
        **({"missing_releases": inputs.gone_releases} if inputs.gone_releases else {}),
    }


def edited_ratings(study: Study, digests: dict[int, str], allow: bool) -> list[dict]:
    """The rounds whose ``ratings.csv`` (hashed as read: ``digests``) changed since its pull, or
    cannot be checked against it (its ``pull.json`` missing or damaged: ``"unchecked": true``),
    as the manifest lists them; a :class:`GoldboardError` naming the first (and how many more)
    unless ``allow`` (library parameter ``allow_edited_ratings``).  A pulled round study.toml
    does not list (:func:`~goldboard.study_checks.unlisted_rounds`) is refused, whatever ``allow``."""
    unlisted = unlisted_rounds(study)
    if unlisted:
        raise GoldboardError(f"{unlisted[0]}; no gold release written")
    problems = {n: ratings_edit_problem(study, n, sha) for n, sha in sorted(digests.items())}
    problems = {n: p for n, p in problems.items() if p}
    if problems and not allow:
        more = f" (and {len(problems) - 1} more round(s))" if len(problems) > 1 else ""
        raise ParamError(
            "{first}{more}; no gold release written (to release gold from these ratings anyway, pass "
            "{allow_edited_ratings}: the manifest records it)",
            first=next(iter(problems.values())),
            more=more,
        )
    return [
        {
            "round": n,
            "path": study.ratings_path(n).relative_to(study.path).as_posix(),
            "sha256": digests[n],
            **({"unchecked": True} if recorded_ratings_sha256(study, n)[1] else {}),
        }
        for n in problems
    ]


def check_latest_release(study: Study, allow_missing_releases: bool = False) -> list[str]:
    """Refuse (nothing written) a new release over a latest release that fails its own manifest
    (its gold file edited, replaced or missing: :func:`~goldboard.exports.gold.release_problem`):
    the new manifest would name it as ``previous``, and an unchanged gold would be answered with
    it as already released.  A release a later manifest names as its previous but gone from
    ``gold/`` (:func:`~goldboard.exports.gold.release_chain_problems`) is refused unless
    ``allow_missing_releases``; returns the missing releases' names (the manifest records them)."""
    from goldboard.exports.gold import list_releases, release_chain_problems, release_problem

    releases = list_releases(study.gold_dir, warn_chain=False)
    broken = release_chain_problems(study.gold_dir, releases)
    if broken and not allow_missing_releases:
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise ParamError(
            "{first}{more}; no gold release written: the release chain is broken (to release anyway, pass "
            "{allow_missing_releases}: the manifest records the missing releases)",
            first=broken[0],
            more=more,
        )
    problem = release_problem(releases[-1][1]) if releases else None
    if problem:  # without its hint to cut a new release: that is what is refused here
        what = problem.split("; a release is never edited")[0]
        raise GoldboardError(
            f"{what}; no gold release written: a release is never edited, and the next one would name it as its "
            "previous: restore it from a backup first"
        )
    return [Path(line.split(": missing, but ", 1)[0]).name for line in broken]


def removed_raters(study: Study, ratings: pd.DataFrame, round_number: int | None, allow: bool) -> list[dict]:
    """The ratings by names study.toml does not list as raters (a rater removed or renamed by hand),
    per round read (``round_number``: that round only), as the manifest lists them
    (``sources.left_out_raters``: rater, round, ratings); gold is built from the study raters only.
    A :class:`ParamError` naming the first file and rater (and how many more) unless ``allow``
    (library parameter ``only_study_raters``): ``agree``, ``flag`` and ``status`` warn about these
    ratings, and a release that left them out in silence would read as if they never existed."""
    rounds = ratings["round"].astype(str)
    keep = ~ratings["rater"].astype(str).isin(set(study.raters))
    if round_number is not None:
        keep &= rounds == str(round_number)
    if not keep.any():
        return []
    counts = ratings[keep].assign(_round=rounds[keep]).groupby(["_round", "rater"]).size()
    out = [{"rater": str(r), "round": int(n), "ratings": int(c)} for (n, r), c in counts.items()]
    out.sort(key=lambda d: (d["round"], d["rater"]))
    if not allow:
        first = out[0]
        more = f" (and {len(out) - 1} more such rater(s) or round(s))" if len(out) > 1 else ""
        raise ParamError(
            "{path}: {n} ratings by {rater!r}, not a rater of the study ({toml} lists {listed}){more}: removed "
            "or renamed by hand? no gold release written: add them back with `goldboard study add-rater`, "
            "or pass {only_study_raters} to release gold from the study raters' ratings only (the manifest "
            "records who was left out)",
            path=str(study.ratings_path(first["round"])),
            n=first["ratings"],
            rater=first["rater"],
            toml=str(study.path / "study.toml"),
            listed=", ".join(study.raters) or "none",
            more=more,
        )
    return out


def missing_rating_record(gold: pd.DataFrame) -> dict[str, Any]:
    """The manifest's ``unresolved_missing_rating``: how many gold rows are unresolved only because a
    study rater's rating is missing (``gold.attrs["unresolved_for_missing"]``), on how many items, from
    which rounds, the first ten items; ``{}`` when none."""
    rows = gold.attrs.get("unresolved_for_missing") or []
    if not rows:
        return {}
    items = list(dict.fromkeys(str(r["item_id"]) for r in rows))
    rounds = sorted({int(r["round"]) for r in rows if str(r["round"]).isdigit()})
    out = {"rows": len(rows), "items": len(items), "rounds": rounds, "first_items": items[:10]}
    # a study rater with no rating in any gold row: the raters who did rate are not "every rater"
    cols = [c for c in gold.columns if c.startswith("value_")]
    none = [c[len("value_") :] for c in cols if not (gold[c].astype(str) != "").any()]
    return out | ({"raters_without_ratings": none} if none else {})
