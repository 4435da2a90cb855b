"""The round intake: the one policy for putting one source's read into a round, whatever the
source (a ratings table, :mod:`goldboard.workflows.tables`; another tool's export,
:mod:`goldboard.workflows.files`; Label Studio, :func:`pull` over
:func:`goldboard.annotate.pull.read_pull`): the round it goes into, the study's units it adds to or is
checked against, this source's rows replaced and the other sources' kept, what changed, the
adjudication check, the invalid rows it replaces, and the one write (:meth:`RoundIntake.take`, the
only caller of :meth:`Study.write_round`).  Each source is a reader: it reads and validates, asks
the intake which ratings the study cannot take (:meth:`RoundIntake.held_reason`), and hands a
:class:`SourceRead` to :meth:`RoundIntake.take`.  What differs between kinds of source is said in
one table, :data:`RULES` (a Label Studio rating replaces a file's; a file's is held out).  What
every source obeys alike: the other sources' ratings and held-out rows stay where they stood (a
re-pull of unchanged sources writes the same bytes, whichever is pulled last), and a file source's
re-pull says what it added, removed or changed.

A re-pull that changes or removes a rating of an item under a decision or a gold release is
refused, whatever the source (:func:`check_changes_under_adjudication`); accepted
(``--add-to-adjudicated-round``), each replaced row is kept in ``rounds/N/superseded.csv`` and
listed in the pull's output."""

from __future__ import annotations

import hashlib
import json
import shlex
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldboard.annotate.pull import read_pull
from goldboard.cases.ids import escaped, id_key, number_like_ids_warning, twin_kind
from goldboard.cases.intake import rounds as intake_rounds
from goldboard.cases.intake.columns import ColumnRead
from goldboard.cases.intake.core import INVALID_COLUMNS, IntakeResult
from goldboard.cases.intake.files import FileRead
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.errors import GoldboardError, GoldboardWarning, ParamError
from goldboard.exports.round_use import round_items, round_use
from goldboard.fileio import atomic_write, iter_jsonl, read_csv_frame, write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study
from goldboard.study_checks import ratings_edit_problem
from goldboard.text import utc_now

if TYPE_CHECKING:  # only for the annotations
    from goldboard.cases.table_import import TableRead

#: the mode of a round whose ratings all come from files (tables, other tools' exports)
TABLE_MODE = "table"


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def units_records(study: Study) -> list[dict]:
    if not study.units_path.exists():
        return []
    return [rec for _, rec in iter_jsonl(study.units_path, " (units.jsonl)")]


def check_additions(
    study: Study,
    path: Path,
    read: TableRead | FileRead,
    known: dict[str, dict],
    n: int,
    held: set[str] | None,
    allow: bool,
) -> None:
    """Refuse a table that would silently change the study's items: an id that differs from a
    known item's only in letter case or in its Unicode form (NFC vs NFD), or items new to round ``n``
    when the round already has decisions or a gold release (its adjudication and gold would
    silently stop covering it; ``allow``: ``--add-to-adjudicated-round``).  ``held``: the
    unknown ids that are held out, never added (``None``: a table-born study adds them)."""
    keys = {id_key(k): k for k in known}
    kept = number_like_ids_warning(str(path), [it for it in read.items if it not in known])
    if kept:
        warnings.warn(kept, GoldboardWarning, stacklevel=2)
    for it in read.items if keys else ():  # a study without items has no id to look like
        other = keys.get(id_key(it))
        if it not in known and other is not None:
            raise GoldboardError(
                f"{path}: item id '{escaped(it)}' looks like the study's item '{escaped(other)}' (the two ids "
                f"{twin_kind(it, other)}): one item typed twice, or two items a reader cannot tell apart; type it "
                f"as the study has it"
            )
    if allow or not any(r.number == n for r in study.rounds):
        return
    in_round = {k for k, u in known.items() if n in {int(r) for r in (u.get("rounds") or [])}}
    new = [it for it in read.items if it not in in_round and (held is None or it not in held)]
    if not new:
        return
    use = round_use(study, n, in_round)
    if use.decisions or use.releases:
        raise ParamError(
            "round {n} already has {use}; {what} adds {k} item{s} new to the round ({some}), which would change "
            "what was adjudicated. Pull it into a new round ({round_number} {next}), or pass "
            "{add_to_adjudicated_round} to add them anyway",
            n=n,
            use=use.describe(),
            what="this file" if isinstance(read, FileRead) else "this table",
            k=len(new),
            s="s" if len(new) != 1 else "",
            some=", ".join(repr(x) for x in new[:3]) + (", ..." if len(new) > 3 else ""),
            next=max(r.number for r in study.rounds) + 1,
        )


def file_round(study: Study, round_number: int | None) -> tuple[Any, bool]:
    """``(round, new?)``: the named round, or the latest (round 1 of a study without rounds).
    A new round is the next number: ``--round 3`` without rounds 1-2 is an error."""
    new_round = not study.rounds or (round_number is not None and all(r.number != round_number for r in study.rounds))
    if round_number is not None and round_number < 1:
        raise ParamError("{round_number} {n}: rounds are numbered from 1", n=round_number)
    have = sorted(r.number for r in study.rounds)
    if new_round and round_number is not None and round_number != (have[-1] + 1 if have else 1):
        raise ParamError(
            "{round_number} {n}: the study has {have}; a new round is round {next} (rounds are numbered without gaps)",
            n=round_number,
            have=f"rounds {', '.join(map(str, have))}" if have else "no rounds yet",
            next=have[-1] + 1 if have else 1,
        )
    return study.get_or_add_round(round_number, mode=TABLE_MODE), new_round


def merge_invalid(ipath: Path, invalid: pd.DataFrame, source: str) -> pd.DataFrame:
    """The round's invalid rows: other sources' kept, this source's replaced by ``invalid`` where
    its earlier rows stood (after the others when it had none), so that a re-pull of unchanged
    sources writes the same bytes whichever source is pulled last."""
    old_invalid = (
        read_csv_frame(ipath, " (invalid annotations)") if ipath.exists() else pd.DataFrame(columns=INVALID_COLUMNS)
    )
    if not len(old_invalid):
        return invalid
    mine = (intake_rounds.sources_of(old_invalid) == source).to_numpy()
    at = int(mine.argmax()) if mine.any() else len(old_invalid)
    before, after = old_invalid.iloc[:at][~mine[:at]], old_invalid.iloc[at:][~mine[at:]]
    parts = [df.astype(str) for df in (before, invalid, after) if len(df)]
    return pd.concat(parts, ignore_index=True)[INVALID_COLUMNS] if parts else invalid


def units_in_round(known: dict[str, dict], n: int) -> set[str]:
    """The items the study's units (``known``: by id) put in round ``n``."""
    return {k for k, u in known.items() if n in (u.get("rounds") or [])}


def record_units(
    study: Study,
    units: list[dict],
    read: TableRead | ColumnRead | FileRead,
    n: int,
    source: str,
    in_table: set[str],
    new_items: list[str],
) -> int:
    """units.jsonl: new items of a table-born study; every item of the table is in this round
    (written when changed).  Returns the number of units of round ``n``.

    Under the study lock, units.jsonl is read again first (``units`` is updated in place), so an
    item another command recorded since this one read the file is kept, never overwritten.  A
    table read by columns writes its new items' lines from the columns, never a dict per item."""
    with study.locked():
        if isinstance(read, ColumnRead) and new_items:
            return _write_column_units(study, units, read, n, source, in_table, fresh_units(study, units, new_items))
        _record_units(study, units, read, n, source, in_table, new_items)
    return sum(1 for u in units if n in (u.get("rounds") or []))


def _write_column_units(
    study: Study, units: list[dict], read: ColumnRead, n: int, source: str, in_table: set[str], new_items: list[str]
) -> int:
    enc = json.encoder.encode_basestring  # what json.dumps(..., ensure_ascii=False) writes a str as
    for u in units:
        if str(u["item_id"]) in in_table and n not in (u.get("rounds") or []):
            u["rounds"] = sorted({*(int(x) for x in u.get("rounds") or []), n})
    new = set(new_items)
    at = [i for i, it in enumerate(read.items) if it in new]
    info = read.item_info
    tail = f', "case_text": "", "output_text": "", "rounds": [{int(n)}], "source": {enc(f"table:{source}")}}}\n'
    encode = json.JSONEncoder(ensure_ascii=False, default=str).encode
    with atomic_write(study.units_path) as fh:
        fh.write("".join(encode(u) + "\n" for u in units))
        for start in range(0, len(at), 4096):
            fh.write(
                "".join(
                    f'{{"item_id": {enc(read.items[i])}, "case_id": {enc(info.case[i] or read.items[i])}, '
                    f'"output_id": {enc(info.output[i])}, "model": {enc(info.model[i])}{tail}'
                    for i in at[start : start + 4096]
                )
            )
    return sum(1 for u in units if n in (u.get("rounds") or [])) + len(at)


def fresh_units(study: Study, units: list[dict], new_items: list[str]) -> list[str]:
    """Under the study lock: ``units`` refreshed in place from units.jsonl; the ``new_items`` not
    recorded meanwhile by another command."""
    units[:] = units_records(study)
    have = {str(u["item_id"]) for u in units}
    return [it for it in new_items if it not in have]


def _record_units(
    study: Study,
    units: list[dict],
    read: TableRead | FileRead,
    n: int,
    source: str,
    in_table: set[str],
    new_items: list[str],
) -> None:
    new_items = fresh_units(study, units, new_items)
    changed_units = False
    for u in units:
        if str(u["item_id"]) in in_table and n not in (u.get("rounds") or []):
            u["rounds"] = sorted({*(int(x) for x in u.get("rounds") or []), n})
            changed_units = True
    for it in new_items:
        info = read.item_info[it]
        units.append(
            {
                "item_id": it,
                "case_id": info["case_id"] or it,
                "output_id": info["output_id"],
                "model": info["model"],
                "case_text": "",
                "output_text": "",
                "rounds": [n],
                "source": f"table:{source}",
            }
        )
        changed_units = True
    if changed_units:
        write_jsonl_atomic(units, study.units_path)


def _key_values(df: pd.DataFrame) -> dict[tuple[str, str, str], tuple[str, str]]:
    cols = [df[c].astype(str).tolist() for c in ("item_id", "rater", "field", "value", "rationale")]
    return {(i, r, f): (v, why) for i, r, f, v, why in zip(*cols)}


_KEY = ["item_id", "rater", "field"]


def _changes_by_dicts(old: pd.DataFrame, new: pd.DataFrame) -> tuple[list, int, list, int, list, int, int]:
    """``(added, n, removed, n, changed, n, rows)``: the first added (3), removed (3) and changed (5)
    keys with their values, in key order, their counts, and the new rows (distinct keys)."""
    a, b = _key_values(old), _key_values(new)
    added = sorted(set(b) - set(a))
    removed = sorted(set(a) - set(b))
    changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
    return (
        [(k, b[k][0]) for k in added[:3]],
        len(added),
        [(k, a[k][0]) for k in removed[:3]],
        len(removed),
        [(k, a[k][0], b[k][0]) for k in changed[:5]],
        len(changed),
        len(b),
    )


def _changes_by_columns(old: pd.DataFrame, new: pd.DataFrame) -> tuple[list, int, list, int, list, int, int] | None:
    """:func:`_changes_by_dicts` over whole columns (no tuple per rating); ``None`` when a key
    repeats in ``old`` or ``new`` (the dicts keep its last row)."""
    cols = [*_KEY, "value", "rationale"]
    a, b = old[cols].astype(str), new[cols].astype(str)
    if a.duplicated(_KEY).any() or b.duplicated(_KEY).any():
        return None

    def first(df: pd.DataFrame, k: int) -> list[tuple]:
        rows = df.sort_values(_KEY, kind="stable").head(k)
        return [tuple(r) for r in rows.itertuples(index=False)]

    if not len(a):
        return [((i, r, f), v) for i, r, f, v, _ in first(b, 3)], len(b), [], 0, [], 0, len(b)
    m = a.merge(b, on=_KEY, how="outer", suffixes=("_0", "_1"), indicator=True)
    add, gone = m[m["_merge"] == "right_only"], m[m["_merge"] == "left_only"]
    both = m[m["_merge"] == "both"]
    diff = both[(both["value_0"] != both["value_1"]) | (both["rationale_0"] != both["rationale_1"])]
    return (
        [((i, r, f), v) for i, r, f, v in first(add[[*_KEY, "value_1"]], 3)],
        len(add),
        [((i, r, f), v) for i, r, f, v in first(gone[[*_KEY, "value_0"]], 3)],
        len(gone),
        [((i, r, f), v0, v1) for i, r, f, v0, v1 in first(diff[[*_KEY, "value_0", "value_1"]], 5)],
        len(diff),
        len(b),
    )


def describe_changes(old: pd.DataFrame, new: pd.DataFrame, source: str, first: bool) -> dict[str, Any]:
    """What replacing ``old`` (this source's rating rows before) by ``new`` changes."""
    got = _changes_by_columns(old, new)
    added, n_added, removed, n_removed, changed, n_changed, n_rows = got or _changes_by_dicts(old, new)
    examples = []
    for k, v0, v1 in changed:
        what = f"{v0!r} -> {v1!r}" if v0 != v1 else "rationale changed"
        examples.append(f"{k[0]} {k[1]} {k[2]}: {what}")
    for k, v in added:
        examples.append(f"{k[0]} {k[1]} {k[2]}: new {v!r}")
    for k, v in removed:
        examples.append(f"{k[0]} {k[1]} {k[2]}: removed (was {v!r})")
    if first:
        text = f"first pull of {source}: {n_rows} rating rows"
    elif not (n_added or n_removed or n_changed):
        text = f"no change: {source} gives the same {n_rows} rating rows as its last pull"
    else:
        text = (
            f"{source} changed since its last pull: replaced its ratings in this round "
            f"({n_added} added, {n_removed} removed, {n_changed} changed)"
        )
        if examples:
            text += "; " + "; ".join(examples)
    return {
        "first_pull": first,
        "added": n_added,
        "removed": n_removed,
        "changed": n_changed,
        "examples": examples,
        "text": text,
    }


def check_changes_under_adjudication(
    study: Study,
    n: int,
    old: pd.DataFrame,
    new: pd.DataFrame,
    changes: dict[str, Any],
    allow: bool,
    what: str = "table",
) -> None:
    """Refuse a re-pull that changes or removes a rating (its value) of an item of round ``n``
    that has adjudication decisions or a gold release: they were made on the old values
    (``allow``: ``--add-to-adjudicated-round``, which covers changes too).  When allowed, the
    items are recorded in ``changes`` (``under_adjudication``, pull.json) and said in its text."""
    if not len(old):
        return
    a = {k: v for k, (v, _) in _key_values(old).items()}
    b = {k: v for k, (v, _) in _key_values(new).items()}
    touched = sorted({k for k in a if b.get(k) != a[k]})
    if not touched:
        return
    touched_items = {k[0] for k in touched}
    # the whole round's decisions and releases, as the message describes them (with the items touched: a
    # hand-made project's round may have no units recorded)
    use = round_use(study, n, round_items(study, n) | touched_items)
    if not use.releases and not round_use(study, n, touched_items).decisions:
        return
    shown = "; ".join(
        f"{i} {r} {f}: {a[(i, r, f)]!r} -> {b[(i, r, f)]!r}"
        if (i, r, f) in b
        else f"{i} {r} {f}: {a[(i, r, f)]!r} -> no rating (removed or held out)"
        for i, r, f in touched[:3]
    ) + (f"; and {len(touched) - 3} more" if len(touched) > 3 else "")
    items = sorted({k[0] for k in touched})
    edit = ratings_edit_problem(study, n) if not allow else None
    if edit:  # the differences may be the hand edit of the study's file, not a change of the table
        raise ParamError(
            "{edit}; the {what} differs from it in {k} rating{s} ({shown}): if the {what} is the one pulled before, "
            "these are the hand edit, not a change of the {what}. Restore {path} (pull the {what} into a new round "
            "{round_number} {next}, or pass {add_to_adjudicated_round} to put the {what}'s ratings back)",
            edit=edit,
            what=what,
            k=len(touched),
            s="s" if len(touched) != 1 else "",
            shown=shown,
            path=study.ratings_path(n),
            next=max(r.number for r in study.rounds) + 1,
        )
    if not allow:
        raise ParamError(
            "round {n} already has {use}; this {what} changes {k} rating{s} of {m} item{ms} in it ({shown}), which "
            "would change what was adjudicated on the old values. Pull it into a new round ({round_number} {next}), "
            "or pass {add_to_adjudicated_round} (it covers changed ratings too; pull.json records them) to replace "
            "them anyway",
            n=n,
            use=use.describe(),
            k=len(touched),
            s="s" if len(touched) != 1 else "",
            m=len(items),
            ms="s" if len(items) != 1 else "",
            shown=shown,
            what=what,
            next=max(r.number for r in study.rounds) + 1,
        )
    changes["under_adjudication"] = items
    changes["text"] += (
        f"; {len(touched)} changed rating(s) of {len(items)} item(s) that round {n}'s decisions or gold release were "
        f"made on ({', '.join(items[:5])}{', ...' if len(items) > 5 else ''}): decide them again"
    )


# --------------------------------------------------------------------------- the one intake


@dataclass(frozen=True)
class Rules:
    """What the intake does differently for one kind of source: :data:`RULES` is the one place that
    says it (a merge-policy change is an edit of this table or of :class:`RoundIntake`)."""

    opens_rounds: bool  # may open the next round and record new items (files); a Label Studio round is pushed
    clash: str  # an item x rater another source rated: "held" (this source's rating is held out) or "replaces"
    keeps_unread_raters: bool  # a re-pull keeps the earlier rows of the raters it did not read
    describes_changes: bool  # pull.json's ``changes`` says what changed since the source's last pull
    refuses_empty: bool  # a read from which the round would take no rating is refused, nothing written
    id_param: str = "item_col"  # the option that chooses the item ids (named by the nothing-pulled refusal)


RULES: dict[str, Rules] = {
    "table": Rules(True, "held", False, True, True),
    "file": Rules(True, "held", False, True, True, "item_key"),
    "pull": Rules(False, "replaces", True, False, False),
}

#: why a file source's rating is held out at the study level, whatever the source
UNKNOWN_ITEM = "item {item!r} is not in this study's units (push it, or use a table-born study)"
ALREADY_RATED = "{rater} already rated {item!r} in round {n} ({where})"


@dataclass
class SourceRead:
    """One source's read, as a reader hands it to :meth:`RoundIntake.take`: the source's name and
    kind (``what``: ``table``, ``file`` or ``pull``, a key of :data:`RULES` and the noun of the
    messages), its rating rows and held-out rows, its pull.json summary, and what the intake needs
    for the refusals, the study's units and the provenance."""

    source: str
    what: str
    ratings: pd.DataFrame
    invalid: pd.DataFrame
    summary: dict[str, Any]
    path: Path | None = None  # the file read: messages and provenance
    units_of: Any = None  # the read whose items (and their ``item_info``) the study's units record
    given: pd.DataFrame | None = None  # every rating read (item_id, rater), for the nothing-pulled refusal
    checked_invalid: pd.DataFrame | None = None  # the validation's held-out rows the refusal cites (None: invalid)
    rated_field: str | None = None  # the field the refusal counts (None: every rating row)
    noun: str = ""  # the source's long name in the refusal without a held-out rating ("Prodigy db-out export")
    provenance: dict[str, Any] = field(default_factory=dict)  # pull.json's entry for the file (with its SHA-256)
    record: dict[str, Any] = field(default_factory=dict)  # study.toml's [rounds.tables.SOURCE] entry
    raters_read: set[str] | None = None  # the raters this read covers (None: every rater)


@dataclass
class Taken:
    """What the intake put into the round: every source's rows, the items new to the study, the paths written."""

    ratings: pd.DataFrame
    invalid: pd.DataFrame
    summary: dict[str, Any]
    changes: dict[str, Any] | None
    new_items: list[str]
    paths: dict[str, Path]


class RoundIntake:
    """The one policy for putting one source's read into a round (see the module docstring).

    Made before the source validates its read (it names the round, the study's items, and the
    other sources' ratings, which a file source must not overwrite: :meth:`held_reason`), then
    :meth:`take` puts the read in: the nothing-pulled refusal, this source's rows replaced and the
    others kept (:data:`RULES`' clash), what changed and the adjudication check, the invalid rows,
    the one write (:meth:`Study.write_round`), the units and the provenance."""

    def __init__(self, study: Study, source: str, what: str, round_number: int | None, *, accept: bool = False):
        self.study, self.source, self.what, self.rules, self.accept = study, source, what, RULES[what], accept
        if self.rules.opens_rounds:
            self.round, self.new_round = file_round(study, round_number)
        else:
            self.round, self.new_round = study.round(round_number), False
        self.n = self.round.number
        self.units = units_records(study) if self.rules.opens_rounds else []
        self.known = {str(u["item_id"]): u for u in self.units}
        pushed = any(not str(u.get("source", "")).startswith("table:") for u in self.units)
        self.table_born = not pushed and not any(r.projects for r in study.rounds)
        self.old, self.others = intake_rounds.split(intake_rounds.previous(study.ratings_path(self.n)), source)
        self.taken = intake_rounds.given_by(self.others) if self.rules.clash == "held" else {}
        self.held_unknown: set[str] = set()

    def admit(self, path: Path, read: Any) -> None:
        """The read's items checked against the study's (:func:`check_additions`); an item a pushed
        study does not know is held out (:meth:`held_reason`)."""
        unknown = [it for it in read.items if it not in self.known]
        self.held_unknown = set(unknown) if unknown and not self.table_born else set()
        held = None if self.table_born else set(unknown)
        check_additions(self.study, path, read, self.known, self.n, held, self.accept)

    def held_reason(self, item: str, rater: str) -> str | None:
        """Why the round does not take ``rater``'s rating of ``item`` from this source (``None``: it does)."""
        if item in self.held_unknown:
            return UNKNOWN_ITEM.format(item=item)
        if (item, rater) in self.taken:
            return ALREADY_RATED.format(rater=rater, item=item, n=self.n, where=self.taken[(item, rater)])
        return None

    def take(self, read: SourceRead, *, write: bool = True) -> Taken:
        """Put ``read`` into the round (``write`` ``False``: every check, nothing written)."""
        study, n, rules, rnd = self.study, self.n, self.rules, self.round
        if rules.refuses_empty:
            refuse_nothing_pulled(self, read)
        if rules.opens_rounds:
            where = read.path.name if read.path else read.source
            known_in_round = units_in_round(self.known, n)
            read.summary["warnings"] += intake_rounds.overlap_warnings(
                self.others, read.ratings, n, where, known_in_round
            )
            read.summary["mode"] = TABLE_MODE if not rnd.projects else rnd.mode
        ratings, invalid, new = self._merge(read)
        first = self.source not in rnd.tables
        changes = describe_changes(self.old, new, self.source, first) if rules.describes_changes else None
        under = changes if changes is not None else {"text": ""}
        check_changes_under_adjudication(study, n, self.old, new, under, self.accept, read.what)
        if changes is not None:
            read.summary["changes"] = changes
        elif under.get("under_adjudication"):
            read.summary["changes"] = {
                "under_adjudication": under["under_adjudication"],
                "text": under["text"].lstrip("; "),
            }
        record = self._provenance(read)
        new_items = (
            [it for it in read.units_of.items if it not in self.known]
            if self.table_born and read.units_of is not None
            else []
        )
        taken = Taken(ratings, invalid, read.summary, changes, new_items, {})
        if not write:
            return taken
        if rules.opens_rounds:
            in_table = set(read.units_of.items) - self.held_unknown
            rnd.units = record_units(study, self.units, read.units_of, n, self.source, in_table, new_items)
        if under.get("under_adjudication"):
            kept = _keep_replaced(study, n, self.source, self.old, new)
            read.summary["superseded_kept"] = len(kept) - 1  # the rows, after the line that names the file
            read.summary.setdefault("warnings", []).extend(kept)
        taken.paths = study.write_round(n, ratings, invalid, read.summary)
        if record is not None:
            rnd.tables[self.source] = record
            if self.new_round:
                rnd.mode = TABLE_MODE
            study.save()
        return taken

    def _merge(self, read: SourceRead) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
        """``(the round's ratings, its invalid rows, this source's ratings)``: this source's rows
        replace its earlier ones; the other sources' stay (:data:`RULES`' clash: a file source's
        rating of an item x rater another rated was held out by the reader, a Label Studio
        rating replaces the file's, said in a warning)."""
        study, n, source = self.study, self.n, self.source
        ratings, invalid, new = read.ratings, read.invalid, read.ratings
        if self.rules.clash == "replaces":
            ratings = intake_rounds.keep_others(study.ratings_path(n), ratings, read.summary, tables=self.round.tables)
        elif len(self.others):
            ratings = pd.concat([self.others, ratings], ignore_index=True)[RATINGS_COLUMNS]
        invalid = merge_invalid(study.invalid_path(n), invalid, source)  # every source: the others' rows stay
        if self.rules.keeps_unread_raters and read.raters_read is not None:
            ratings, invalid, kept = keep_unread_raters(study, n, self, read, ratings, invalid)
            if len(kept):
                new = pd.concat([new, kept], ignore_index=True)
        if self.rules.clash == "replaces":
            new, _ = intake_rounds.split(ratings, source)
        return ratings, invalid, new

    def _provenance(self, read: SourceRead) -> dict[str, Any] | None:
        """pull.json's entry for the file read (``summary[what]``) and study.toml's
        ``[rounds.tables.SOURCE]`` record, returned (``None``: a source that is not a file)."""
        if read.path is None or not self.rules.opens_rounds:
            return None
        sha = sha256_of(read.path)
        read.summary[read.what] = {"source": self.source, "file": str(read.path), "sha256": sha, **read.provenance}
        return {"file": str(read.path), "sha256": sha, **read.record, "pulled_at": utc_now()}


def raters_in(*frames: pd.DataFrame) -> set[str]:
    """The raters named by the rows of ``frames`` (a read's ratings and held-out rows): the raters a read covers."""
    return {str(r) for df in frames if len(df) and "rater" in df.columns for r in df["rater"].unique()} - {""}


def refuse_nothing_pulled(intake: RoundIntake, read: SourceRead) -> None:
    """A table (``pull --from-table``) or another tool's file (``pull --from-file``) from which the
    round would take no rating is refused, nothing written ("nothing pulled", exit 1), naming why:
    every rating already given in the round by another source (with the way to replace that
    source, or to add a round), every item unknown to a pushed study, or no valid rating at all.
    ``read.given``: every rating read (``item_id``, ``rater``); ``None``: none was held out by the
    study, and a file without a valid rating of ``read.rated_field`` says that (:func:`refuse_no_rating`)."""
    kept = read.ratings if read.rated_field is None else read.ratings[read.ratings["field"] == read.rated_field]
    if len(kept):
        return
    if read.given is None:
        refuse_no_rating(read)
    study, n, taken, held_unknown, path = intake.study, intake.n, intake.taken, intake.held_unknown, read.path
    given, noun = read.given, read.what
    pairs = list(zip(given["item_id"], given["rater"])) if len(given) else []
    by = Counter(taken[k] for k in pairs if k in taken and k[0] not in held_unknown)
    unknown = sum(1 for item, _ in pairs if item in held_unknown)
    nxt = max(r.number for r in study.rounds) + 1
    if by:
        names = ", ".join(f"{name!r}" for name, _ in by.most_common())
        files = [
            name for name, _ in by.most_common() if not name.startswith("Label Studio") and name != "another source"
        ]
        held = sum(by.values())
        count = f"all {held} of its ratings" if held == len(pairs) else f"{held} of its {len(pairs)} ratings"
        also = f", and {unknown} are of items not in this study" if unknown else ""
        replace = (
            "To replace the ratings from {first} with this " + noun + "'s, pull it as that source ({source} {quoted}: "
            "the output lists each change); to add it as a new round"
            if files
            else "To add it as a new round"
        )
        raise ParamError(
            "{path}: nothing pulled: {count} are already in round {n} from {names}{also}; a source's ratings are "
            "never overwritten by another's. " + replace + ", give {round_number} {nxt}",
            path=str(path),
            count=count,
            n=n,
            names=names,
            also=also,
            first=repr(files[0]) if files else "",
            quoted=shlex.quote(files[0]) if files else "",
            nxt=nxt,
        )
    if unknown:
        raise ParamError(
            "{path}: nothing pulled: all {unknown} ratings are of items not in this study's units "
            "(push them first, or check {" + intake.rules.id_param + "})",
            path=str(path),
            unknown=unknown,
        )
    invalid = read.invalid if read.checked_invalid is None else read.checked_invalid
    held = invalid[invalid["kind"] == "invalid"] if len(invalid) else invalid
    first = f"; e.g. {held['annotation_id'].iloc[0]}: {held['reason'].iloc[0]}" if len(held) else ""
    raise GoldboardError(
        f"{path}: nothing pulled: no valid rating in this {noun} ({len(held)} held out as invalid{first}); "
        "check the rater columns and the field's values"
    )


def refuse_no_rating(read: SourceRead) -> None:
    """A file none of whose answers is a valid rating of its field is refused (nothing written)."""
    reasons = read.invalid["reason"].value_counts() if "reason" in read.invalid else pd.Series(dtype=int)
    top = f"; {reasons.iloc[0]} x {reasons.index[0]}" if len(reasons) else ""
    raise ParamError(
        "{where}: no valid rating of field {name} in this {noun} ({what}); nothing pulled (check the file and {field})",
        where=read.path,
        name=read.rated_field,
        noun=read.noun,
        what=f"{len(read.invalid)} answers held out{top}",
    )


#: a replaced rating kept in ``rounds/N/superseded.csv``: the row as it was, with when and by what
SUPERSEDED_COLUMNS = [*RATINGS_COLUMNS, "replaced_at", "replaced_by", "new_value"]


def superseded_path(study: Study, n: int) -> Path:
    """``rounds/N/superseded.csv``: every rating an accepted re-pull replaced or removed (never rewritten, only added to)."""
    return study.ratings_path(n).with_name("superseded.csv")


def _keep_replaced(study: Study, n: int, source: str, old: pd.DataFrame, new_rows: pd.DataFrame) -> list[str]:
    """Add the rows of ``old`` whose value ``new_rows`` changes or removes to superseded.csv; one line each."""
    old = old.astype(str)
    new = {
        (i, r, f): v for i, r, f, v in zip(*(new_rows[c].astype(str) for c in ("item_id", "rater", "field", "value")))
    }
    keys = list(zip(old["item_id"], old["rater"], old["field"]))
    gone = [new.get(k) != v for k, v in zip(keys, old["value"])]
    rows = old[gone][RATINGS_COLUMNS].copy()
    if not len(rows):
        return []
    rows["replaced_at"] = utc_now()
    rows["replaced_by"] = source
    rows["new_value"] = [new.get(k, "") for k, g in zip(keys, gone) if g]
    path = superseded_path(study, n)
    before = (
        read_csv_frame(path, " (superseded ratings)") if path.exists() else pd.DataFrame(columns=SUPERSEDED_COLUMNS)
    )
    write_csv_atomic(pd.concat([before.astype(str), rows], ignore_index=True)[SUPERSEDED_COLUMNS], path)
    lines = [f"kept {len(rows)} replaced rating(s) in {path}:"]
    for r in rows.to_dict("records"):
        now = f"-> {r['new_value']!r}" if (r["item_id"], r["rater"], r["field"]) in new else "-> removed"
        lines.append(f"  {r['item_id']} {r['rater']} {r['field']}: {r['value']!r} {now}")
    return lines


def keep_unread_raters(
    study: Study, n: int, intake: RoundIntake, read: SourceRead, ratings: pd.DataFrame, invalid: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``pull --from-export onc_a=FILE`` reads onc_a's project only: the round's ratings (and
    held-out annotations) of the other raters stay as the last pull left them -- a partial
    pull never deletes a rater's ratings.  Returns ``(ratings, invalid, this source's ratings kept)``."""
    covered = set(read.raters_read or ())
    kept: dict[str, int] = {}
    out = {"ratings": ratings, "invalid": invalid}
    mine_kept = pd.DataFrame(columns=RATINGS_COLUMNS)
    paths = {"ratings": study.ratings_path(n), "invalid": study.invalid_path(n)}
    for key, cols in (("ratings", RATINGS_COLUMNS), ("invalid", INVALID_COLUMNS)):
        path = paths[key]
        if not path.exists():
            continue
        old = read_ratings_csv(path) if key == "ratings" else read_csv_frame(path, " (invalid annotations)")
        if not len(old) or "rater" not in old.columns:
            continue
        keep = old[~old["rater"].astype(str).isin(covered)]
        keep = keep[intake_rounds.sources_of(keep) == intake.source]  # the other sources' rows are kept already
        if not len(keep):
            continue
        keep = keep.reindex(columns=cols, fill_value="")
        out[key] = pd.concat([out[key], keep], ignore_index=True)
        if key == "ratings":
            mine_kept = keep
        for r in keep["rater"].astype(str):
            kept[r] = kept.get(r, 0) + 1
    if kept:
        read.summary["kept_from_previous_pull"] = kept
        read.summary.setdefault("warnings", []).append(
            "kept the earlier pull's rows of raters whose projects this pull did not read: "
            + ", ".join(f"{r} ({n})" for r, n in sorted(kept.items()))
        )
    read.summary["rating_rows"] = int(read.summary.get("rating_rows", len(ratings))) + len(mine_kept)
    return out["ratings"], out["invalid"], mine_kept


# --------------------------------------------------------------------------- Label Studio


def pull(
    study: Study,
    round_number: int | None = None,
    *,
    add_to_adjudicated_round: bool = False,
    write: bool = True,
    **options: Any,
) -> IntakeResult:
    """Pull a round's Label Studio annotations (the server, or ``from_export`` files; the options of
    :func:`goldboard.annotate.pull.read_pull`) into ``rounds/N/ratings.csv`` (+ invalid.csv,
    pull.json) through the round intake (:class:`RoundIntake`): the other sources' rows stay, a
    partial export pull keeps the raters it did not read, and a change under adjudication is
    refused unless ``add_to_adjudicated_round``."""
    res = read_pull(study, round_number, write=write, **options)
    if not write:
        return res
    intake = RoundIntake(
        study, intake_rounds.LABEL_STUDIO, "pull", res.summary["round"], accept=add_to_adjudicated_round
    )
    read = SourceRead(intake.source, "pull", res.ratings, res.invalid, res.summary, raters_read=res.read_raters)
    taken = intake.take(read)
    res.ratings, res.invalid, res.paths = taken.ratings, taken.invalid, taken.paths
    if "blinding" in res.summary:
        intake.round.access = {**intake.round.access, "pull": res.summary["blinding"]}
        study.save()
    return res


__all__ = [
    "RULES",
    "Rules",
    "RoundIntake",
    "SourceRead",
    "Taken",
    "raters_in",
    "refuse_nothing_pulled",
    "refuse_no_rating",
    "superseded_path",
    "pull",
    "keep_unread_raters",
    "describe_changes",
    "check_changes_under_adjudication",
    "TABLE_MODE",
    "sha256_of",
    "units_records",
    "check_additions",
    "file_round",
    "merge_invalid",
    "record_units",
]
