"""Which source gave each row of a round, and how one source's new rows join the others'.

A round's ``ratings.csv`` can hold ratings from several sources: Label Studio (rows with a task
or project id) and files (ratings tables, Prodigy, doccano ...: ``annotation_id`` =
``<source>:<row>``, no task or project id).  A source's pull replaces that source's rows only;
no source knows about another -- they are told apart here, by provenance, and the round is
written by :meth:`goldboard.study.Study.write_round`.

Two rules decide an item x rater that two sources rated: a file source's rating is held out
(``already rated ... from another source``; :func:`given_by` says where), and a Label Studio
pull's rating replaces a file's (named in a warning, :func:`keep_others`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.cases.intake.files import source_kind
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv

#: the source name of rows pulled from Label Studio (a server or its export files)
LABEL_STUDIO = "label-studio"


def sources_of(df: pd.DataFrame) -> pd.Series:
    """The source of each row: :data:`LABEL_STUDIO`, or a file source's name (``annotation_id``
    ``<source>:<row>`` without a task or project id)."""
    aid = df["annotation_id"].astype(str)
    file_row = (df["task_id"].astype(str) == "") & (df["project_id"].astype(str) == "") & aid.str.contains(":")
    return aid.str.rsplit(":", n=1).str[0].where(file_row, LABEL_STUDIO)


def previous(path: Path) -> pd.DataFrame:
    """The round's ratings as the last pull wrote them (empty when none)."""
    old = read_ratings_csv(path) if path.exists() else None
    return old if old is not None and len(old) else pd.DataFrame(columns=RATINGS_COLUMNS)


def split(old: pd.DataFrame, source: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(source's rows, every other source's rows)`` of a round's ratings."""
    if not len(old):
        return old, old
    mine = sources_of(old) == source
    return old[mine], old[~mine]


def given_by(others: pd.DataFrame) -> dict[tuple[str, str], str]:
    """``{(item, rater): where}`` for ratings other sources already gave in the round."""
    taken: dict[tuple[str, str], str] = {}
    for r in others[["item_id", "rater", "annotation_id", "project_id"]].astype(str).to_dict("records"):
        where = (
            f"Label Studio project {r['project_id']}"
            if r["project_id"]
            else (r["annotation_id"].rsplit(":", 1)[0] if ":" in r["annotation_id"] else "another source")
        )
        taken[(r["item_id"], r["rater"])] = where
    return taken


def keep_others(
    path: Path,
    ratings: pd.DataFrame,
    summary: dict[str, Any],
    source: str = LABEL_STUDIO,
    tables: dict[str, dict] | None = None,
) -> pd.DataFrame:
    """A Label Studio pull rewrites the round's Label Studio ratings; the ratings other sources
    gave stay (an item x rater rated in both keeps the Label Studio rating and the other's is
    named in a warning, by the kind of file it came from -- ``tables``, the round's
    ``Round.tables`` -- and it stays in its file, which study.toml names).  Returns the round's
    ratings; ``summary`` gets the counts."""
    old = previous(path)
    if not len(old):
        return ratings
    _, tab = split(old, source)
    if not len(tab):
        return ratings
    have = set(zip(ratings["item_id"].astype(str), ratings["rater"].astype(str)))
    clash = [(i, r) in have for i, r in zip(tab["item_id"].astype(str), tab["rater"].astype(str))]
    n_clash = sum(clash)
    if n_clash:
        names = dict.fromkeys(sources_of(tab[clash]))
        summary.setdefault("warnings", []).append(
            f"{n_clash} rating rows from {_kinds(names, tables or {})} are replaced by Label Studio ratings of the "
            "same item and rater"
        )
    kept = tab[[not c for c in clash]]
    out = pd.concat([ratings, kept[RATINGS_COLUMNS]], ignore_index=True) if len(kept) else ratings
    summary["table_rating_rows_kept"] = int(len(kept))
    summary["rating_rows"] = int(len(out))
    return out


def _kinds(names: dict[str, None], tables: dict[str, dict]) -> str:
    """``ratings tables``, ``Prodigy db-out exports``, ``ratings tables and doccano JSONL exports``:
    the kinds of file of the sources ``names`` (a source study.toml does not name: a file)."""
    kinds = dict.fromkeys(source_kind(tables[n]) if n in tables else "file" for n in names)
    return " and ".join(f"{k}s" for k in kinds)


__all__ = ["LABEL_STUDIO", "sources_of", "previous", "split", "given_by", "keep_others"]


def overlap_warnings(
    others: pd.DataFrame,
    new: pd.DataFrame,
    round_number: int,
    where: str,
    round_items: set[str] | frozenset = frozenset(),
) -> list[str]:
    """A rater a pull brings whose items overlap none of the items the round already holds from its
    other sources: said at pull time (separate Label Studio instances, or separate doccano projects,
    give one item different ids: the raters would share no item and agreement would have nothing to
    compare).  ``others``: the round's rows from the other sources; ``new``: this pull's rows;
    ``round_items``: the items the study's units already put in the round (pushed or pulled
    before): an item of those is one of the round's, rated by others or not."""
    if not len(others) or not len(new):
        return []
    held = set(others["item_id"].astype(str))
    out = []
    for rater, rows in new.groupby("rater", sort=False):
        items = list(dict.fromkeys(rows["item_id"].astype(str)))
        if items and not (held | set(round_items)) & set(items):
            out.append(
                f"{rater} ({where}): none of their {len(items)} item(s) is an item round {round_number} already holds "
                f"(e.g. {items[0]!r}; the round has e.g. {sorted(held)[0]!r}): one item given different ids by two "
                f"tools or projects? name the shared key with --item-key, or the raters share no item to compare"
            )
    return out
