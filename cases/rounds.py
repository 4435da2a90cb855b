"""Which round's ratings are in force for each item.

An item can be rated in several rounds (a second round after a protocol change, a
re-rating of disputed items).  Gold and flags use, **per item, the latest round in
which every rater rated it** (a *complete* round).  A later round that only some
raters have rated so far is *incomplete*: it is never silently used -- the item keeps
its earlier complete ratings, and the item is listed in :attr:`RoundSelection.incomplete`
so that the CLI can warn and the gold release manifest can record it.  An item without
any complete round uses its latest round (its missing ratings show up as ``missing``
flags and keep gold ``unresolved``, as before).

"Every rater" means every rater of the study (``raters``) who has at least one rating
in the table: a study rater who never rated anything does not make every item
incomplete.  In a round with a design (``push --overlap`` / ``--per-item``, recorded in
``rounds/N/assignment.csv``) it means every rater the design gave the item to
(``assigned``).  "Rated" means the rater has at least one row for the item in that round.

An explicit round (``--round N``) uses that round only, complete or not.

Rounds are compared as numbers (round 10 is after round 2).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from goldboard.cases.ratings_columns import PandasOnUse

pd = PandasOnUse()  # imported when first used: `flag --study` on a small study never does


@dataclass(frozen=True)
class IncompleteRound:
    """An item whose later round is incomplete: ``used_round`` is in force, not ``round``."""

    item_id: str
    round: int
    used_round: int
    rated_by: tuple[str, ...]
    missing: tuple[str, ...]

    def describe(self) -> str:
        who = ", ".join(self.rated_by) or "nobody"
        return (
            f"item {self.item_id}: round {self.round} rated only by {who} (missing {', '.join(self.missing)}); "
            f"using round {self.used_round}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "round": self.round,
            "used_round": self.used_round,
            "rated_by": list(self.rated_by),
            "missing": list(self.missing),
        }


@dataclass
class RoundSelection:
    """The round in force per item, and the items whose later round was left out."""

    #: ``None``: per item, the latest complete round; a number: that round only (``--round N``)
    explicit_round: int | None = None
    #: item_id -> round whose ratings are in force
    rounds: dict[str, int] = field(default_factory=dict)
    incomplete: list[IncompleteRound] = field(default_factory=list)

    @property
    def rule(self) -> str:
        if self.explicit_round is not None:
            return f"round {self.explicit_round} (chosen with --round)"
        return "per item, the latest round in which every rater rated it"

    def items_per_round(self) -> dict[str, int]:
        """``{"1": 58, "2": 2}``: how many items use each round (numeric order)."""
        counts: dict[int, int] = {}
        for r in self.rounds.values():
            counts[r] = counts.get(r, 0) + 1
        return {str(r): counts[r] for r in sorted(counts)}

    def warning_lines(self, limit: int = 20) -> list[str]:
        """One header line and one line per item (at most ``limit``) for stderr; ``[]`` when nothing to say."""
        if not self.incomplete:
            return []
        n = len(self.incomplete)
        later = sorted({x.round for x in self.incomplete})
        lines = [
            f"{n} item{'s' if n != 1 else ''} ha{'ve' if n != 1 else 's'} an incomplete later round "
            f"(round {', '.join(map(str, later))}): their earlier complete round is used, not the partial "
            f"ratings (pull again when every rater has finished, or choose a round with --round N)"
        ]
        lines += [f"  {x.describe()}" for x in self.incomplete[:limit]]
        if n > limit:
            lines.append(f"  ... and {n - limit} more")
        return lines

    def __copy__(self) -> RoundSelection:
        # It rides along in DataFrame.attrs (flags, gold), which pandas deep-copies on every
        # operation: copying returns the same object, as Assigned does (20,000 items: 6 s a command).
        return self

    def __deepcopy__(self, memo: dict) -> RoundSelection:
        return self

    def to_dict(self) -> dict[str, Any]:
        """For the gold release manifest."""
        return {
            "rule": "round" if self.explicit_round is not None else "latest_complete_per_item",
            "round": self.explicit_round,
            "items_per_round": self.items_per_round(),
            "incomplete_later_rounds": [x.to_dict() for x in self.incomplete],
        }


class Assigned(Mapping):
    """``{(item_id, round): frozenset of raters}``, read-only.  It rides along in
    ``DataFrame.attrs["assigned"]``; pandas deep-copies ``attrs`` on every operation, so
    copying returns the same object (a plain dict of 20,000 items cost 1.3 s per
    operation)."""

    def __init__(self, data: Mapping[tuple[str, int], Collection[str]] = ()) -> None:
        self._data = {(str(k[0]), int(k[1])): frozenset(v) for k, v in dict(data).items()}

    def __getitem__(self, key: tuple[str, int]) -> frozenset[str]:
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __copy__(self) -> Assigned:
        return self

    def __deepcopy__(self, memo: dict) -> Assigned:
        return self


def round_numbers(values: pd.Series) -> pd.Series:
    """The ``round`` column as integers (missing or unreadable -> 1, as ``read_ratings_csv`` does)."""
    return pd.to_numeric(values, errors="coerce").fillna(1).astype(int)


def select_rounds(
    ratings: pd.DataFrame,
    raters: Sequence[str] | None = None,
    *,
    round_number: int | None = None,
    assigned: Mapping[tuple[str, int], Collection[str]] | None = None,
) -> tuple[pd.DataFrame, RoundSelection]:
    """Keep, for each item, the rows of the round in force (see the module doc).

    Parameters
    ----------
    ratings : tidy ratings table with ``item_id``, ``rater`` and (optionally) ``round``.
    raters : the study's raters (default: every rater in the table).  Raters without a
        single rating in the table are not required.
    round_number : use this round only (items not rated in it are dropped).
    assigned : ``{(item_id, round): raters}`` for rounds with a design: the raters who
        must have rated the item for that round to be complete.

    Returns
    -------
    ``(rows in force, RoundSelection)``; the rows keep their order and an integer
    ``round`` column.

    >>> df = pd.DataFrame({"round": [1, 1, 2], "item_id": ["X", "X", "X"], "rater": ["a", "b", "a"]})
    >>> cur, sel = select_rounds(df, ["a", "b"])
    >>> sel.rounds, [x.describe() for x in sel.incomplete]
    ({'X': 1}, ['item X: round 2 rated only by a (missing b); using round 1'])
    """
    df = ratings.copy()
    df["round"] = round_numbers(df["round"]) if "round" in df.columns else 1
    if round_number is not None:
        df = df[df["round"] == int(round_number)]
        sel = RoundSelection(explicit_round=int(round_number))
        sel.rounds = {str(i): int(round_number) for i in pd.unique(df["item_id"])}
        return df, sel
    sel = RoundSelection()
    if len(df) == 0:
        return df, sel
    present = pd.unique(df["rater"].astype(str))
    required = [r for r in (raters if raters is not None else sorted(present)) if r in set(present)]
    keys = df[["item_id", "round", "rater"]].astype({"item_id": str, "rater": str}).drop_duplicates()
    order = list(dict.fromkeys([*(raters or []), *required]))  # study raters first, for messages
    keys = keys[keys["rater"].isin(order)]
    need_all = set(required)
    if assigned:
        _select_per_item(df, keys, order, need_all, assigned, sel)
    else:
        _select_by_columns(df, keys, order, need_all, sel)
    keep = df["round"].to_numpy() == df["item_id"].astype(str).map(sel.rounds).to_numpy()
    return df[keep], sel


def _select_per_item(
    df: pd.DataFrame, keys: pd.DataFrame, order: list[str], need_all: set[str], assigned: Mapping, sel: RoundSelection
) -> None:
    """``sel.rounds`` and ``sel.incomplete`` item by item (a round's design names who must rate what)."""
    by_item: dict[str, dict[int, set]] = {}
    for item, rnd, rater in zip(keys["item_id"].tolist(), keys["round"].tolist(), keys["rater"].tolist()):
        by_item.setdefault(item, {}).setdefault(int(rnd), set()).add(rater)
    for item in pd.unique(df["item_id"].astype(str)):
        rounds = by_item.get(item, {})
        if not rounds:  # rated only by raters outside the study's list: keep its latest round
            rounds_all = df.loc[df["item_id"].astype(str) == item, "round"]
            sel.rounds[item] = int(rounds_all.max())
            continue
        complete = [r for r, rs in rounds.items() if _need(item, r, need_all, assigned) <= rs]
        latest = max(rounds)
        if not complete:
            sel.rounds[item] = latest
            continue
        used = max(complete)
        sel.rounds[item] = used
        for r in sorted(x for x in rounds if x > used):
            rated = rounds[r]
            sel.incomplete.append(
                IncompleteRound(
                    item_id=item,
                    round=r,
                    used_round=used,
                    rated_by=tuple(x for x in order if x in rated),
                    missing=tuple(x for x in order if x in _need(item, r, need_all, assigned) and x not in rated),
                )
            )


def _select_by_columns(
    df: pd.DataFrame, keys: pd.DataFrame, order: list[str], need_all: set[str], sel: RoundSelection
) -> None:
    """:func:`_select_per_item` without a design, over whole columns: a round is complete for an
    item when all ``need_all`` raters rated it there (``keys`` holds no other rater)."""
    items = df["item_id"].astype(str)
    uniq = pd.unique(items)
    pairs = keys.groupby(["item_id", "round"], sort=False).size()
    tab = pd.DataFrame(
        {
            "item": pairs.index.get_level_values(0).astype(str),
            "round": pairs.index.get_level_values(1).astype(int),
            "full": pairs.to_numpy() == len(need_all),
        }
    )
    latest = tab.groupby("item", sort=False)["round"].max()
    used = tab.loc[tab["full"]].groupby("item", sort=False)["round"].max()
    used_of = dict(zip(used.index.tolist(), used.tolist()))
    chosen = dict(zip(latest.index.tolist(), latest.tolist())) | used_of
    # an item rated only by raters outside the study's list keeps its latest round
    outside = [item for item in uniq.tolist() if item not in chosen]
    if outside:
        rows = df.loc[items.isin(outside).to_numpy()]
        chosen |= rows.groupby(rows["item_id"].astype(str), sort=False)["round"].max().to_dict()
    sel.rounds = {item: int(chosen[item]) for item in uniq.tolist()}
    tab["used"] = tab["item"].map(used_of).astype("float64")  # NaN: no complete round
    late = tab.loc[(tab["round"] > tab["used"]).to_numpy()]
    if not len(late):
        return
    rank = {item: k for k, item in enumerate(uniq.tolist())}
    late = late.assign(_rank=late["item"].map(rank)).sort_values(["_rank", "round"], kind="stable")
    who: dict[tuple[str, int], set[str]] = {}
    wanted = set(zip(late["item"], late["round"]))
    for item, rnd, rater in zip(keys["item_id"].tolist(), keys["round"].tolist(), keys["rater"].tolist()):
        if (item, int(rnd)) in wanted:
            who.setdefault((item, int(rnd)), set()).add(rater)
    for item, rnd, u in zip(late["item"].tolist(), late["round"].tolist(), late["used"].tolist()):
        rated = who[(item, rnd)]
        sel.incomplete.append(
            IncompleteRound(
                item_id=item,
                round=int(rnd),
                used_round=int(u),
                rated_by=tuple(x for x in order if x in rated),
                missing=tuple(x for x in order if x in need_all and x not in rated),
            )
        )


def _need(item: str, round_number: int, need_all: set[str], assigned: Mapping) -> set[str]:
    """The raters who must have rated ``item`` in round ``round_number`` (the design's, else every rater)."""
    who = assigned.get((item, round_number))
    return need_all if who is None else set(who)


__all__ = ["Assigned", "IncompleteRound", "RoundSelection", "round_numbers", "select_rounds"]
