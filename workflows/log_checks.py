"""The decisions log checked against the study before anything is built from it: every entry
names an item the study's ratings have (in any round), and the log still begins with the entries
the latest gold release was built from (it is append-only).  Apart from the review-sheet
workflow (:mod:`goldboard.workflows.adjudication`) so that ``report`` checks the log without
importing the workbook writer (openpyxl).
"""

from __future__ import annotations

from collections.abc import Sequence

from goldboard.adjudicate.decisions import log_item_problem, log_prefix_problem, read_decisions
from goldboard.errors import GoldboardError
from goldboard.exports.gold import list_releases, read_manifest
from goldboard.study import Study


def check_log_items(study: Study) -> None:
    """Refuse (one line) a decisions log holding an entry for an item the study's ratings do
    not have, in any round (:func:`~goldboard.adjudicate.decisions.log_item_problem`), or one
    that no longer begins with the entries the latest gold release was built from
    (:func:`check_log_prefix`)."""
    check_log_prefix(study)
    if not study.decisions_path.exists():
        return
    problem = log_item_problem(study.decisions_path, study.items_by_round())
    if problem:
        raise GoldboardError(problem)


def check_log_prefix(study: Study, entries: Sequence[dict] | None = None, full_digest: str | None = None) -> None:
    """Refuse (one line, naming the release and what is missing) a decisions log that no longer
    begins with the entries the latest gold release recorded in its manifest (emptied, deleted,
    cut short or edited by hand: the log is append-only), see
    :func:`~goldboard.adjudicate.decisions.log_prefix_problem`.  ``entries``: the log as the
    caller read it (default: read it here)."""
    releases = list_releases(study.gold_dir)
    if not releases:
        return
    try:
        manifest = read_manifest(releases[-1][1])
    except GoldboardError:
        return  # an unreadable manifest is refused by the commands that read the release
    recorded = (manifest.get("sources") or {}).get("decisions") or {}
    if entries is None:
        entries = read_decisions(study.decisions_path)
    problem = log_prefix_problem(study.decisions_path, entries, recorded, releases[-1][1].name, full_digest)
    if problem:
        raise GoldboardError(problem)
