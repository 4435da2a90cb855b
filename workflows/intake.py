"""The round intake: the one policy for putting one source's read into a round, whatever the
source (a ratings table, :mod:`goldboard.workflows.tables`; another tool's export,
:mod:`goldboard.workflows.files`; Label Studio, :func:`pull` over
:func:`goldboard.annotate.pull.read_pull`): the round it goes into, the study's units it adds to or is
checked against, this source's rows replaced and the other sources' kept, what changed, the
adjudication check, the invalid rows it replaces, and the one write (:func:`take_into_round`, the
only caller of :meth:`Study.write_round`).

A re-pull that changes or removes a rating of an item under a decision or a gold release is
refused, whatever the source (:func:`check_changes_under_adjudication`); accepted
(``--add-to-adjudicated-round``), each replaced row is kept in ``rounds/N/superseded.csv`` and
listed in the pull's output."""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldboard.annotate.pull import read_pull
from goldboard.cases.ids import escaped, id_key, number_like_ids_warning, twin_kind
from goldboard.cases.intake import rounds as intake_rounds
from goldboard.cases.intake.core import INVALID_COLUMNS, IntakeResult
from goldboard.cases.intake.files import FileRead
from goldboard.cases.ratings import RATINGS_COLUMNS, read_ratings_csv
from goldboard.errors import GoldboardError, GoldboardWarning, ParamError
from goldboard.exports.round_use import round_items, round_use
from goldboard.fileio import iter_jsonl, read_csv_frame, write_csv_atomic, write_jsonl_atomic
from goldboard.study import Study
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
    """The round's invalid rows: other sources' kept, this source's replaced by ``invalid``."""
    old_invalid = (
        read_csv_frame(ipath, " (invalid annotations)") if ipath.exists() else pd.DataFrame(columns=INVALID_COLUMNS)
    )
    if len(old_invalid):
        old_invalid = old_invalid[intake_rounds.sources_of(old_invalid) != source]
    return (
        pd.concat([old_invalid.astype(str), invalid.astype(str)], ignore_index=True)[INVALID_COLUMNS]
        if len(old_invalid)
        else invalid
    )


def units_in_round(known: dict[str, dict], n: int) -> set[str]:
    """The items the study's units (``known``: by id) put in round ``n``."""
    return {k for k, u in known.items() if n in (u.get("rounds") or [])}


def record_units(
    study: Study,
    units: list[dict],
    read: TableRead | FileRead,
    n: int,
    source: str,
    in_table: set[str],
    new_items: list[str],
) -> None:
    """units.jsonl: new items of a table-born study; every item of the table is in this round (written when changed).

    Under the study lock, units.jsonl is read again first (``units`` is updated in place), so an
    item another command recorded since this one read the file is kept, never overwritten."""
    with study.locked():
        _record_units(study, units, read, n, source, in_table, new_items)


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
    edit = study.ratings_edit_problem(n) if not allow else None
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


# --------------------------------------------------------------------------- the one write


@dataclass
class SourceRead:
    """One source's read of a round, as the intake compares it with the round before the write:
    ``old`` (this source's rating rows in the round before) and ``new`` (after), ``changes`` (what
    changed, in pull.json; ``None``: pull.json records only changes under adjudication), and the
    noun the messages use for the source (``table``, ``file``, ``pull``)."""

    source: str
    old: pd.DataFrame
    new: pd.DataFrame
    what: str = "table"
    changes: dict[str, Any] | None = None
    checked: bool = False  # the adjudication check ran (a dry run's call): the write does not repeat it


#: a replaced rating kept in ``rounds/N/superseded.csv``: the row as it was, with when and by what
SUPERSEDED_COLUMNS = [*RATINGS_COLUMNS, "replaced_at", "replaced_by", "new_value"]


def take_into_round(
    study: Study,
    n: int,
    read: SourceRead,
    ratings: pd.DataFrame,
    invalid: pd.DataFrame,
    summary: dict[str, Any],
    *,
    accept: bool = False,
    write: bool = True,
) -> dict[str, Path]:
    """Check ``read`` against what was built on round ``n`` and write the round (``ratings``: every
    source's rows, ``invalid``, ``summary`` = pull.json): a changed or removed rating under a
    decision or a gold release is refused unless ``accept`` (``--add-to-adjudicated-round``); an
    accepted one is kept in ``rounds/N/superseded.csv`` and listed in ``summary``'s warnings.
    ``write`` ``False``: the check alone (returns ``{}``)."""
    if read.changes is None:
        read.changes = {"text": ""}
        under_only = True
    else:
        under_only = "first_pull" not in read.changes
    if not read.checked:
        check_changes_under_adjudication(study, n, read.old, read.new, read.changes, accept, read.what)
        read.checked = True
    changes = read.changes
    if under_only and changes.get("under_adjudication"):
        summary["changes"] = {"under_adjudication": changes["under_adjudication"], "text": changes["text"].lstrip("; ")}
    if not write:
        return {}
    if changes.get("under_adjudication"):
        kept = _keep_replaced(study, n, read)
        summary["superseded_kept"] = len(kept) - 1  # the rows, after the line that names the file
        summary.setdefault("warnings", []).extend(kept)
    return study.write_round(n, ratings, invalid, summary)


def superseded_path(study: Study, n: int) -> Path:
    """``rounds/N/superseded.csv``: every rating an accepted re-pull replaced or removed (never rewritten, only added to)."""
    return study.ratings_path(n).with_name("superseded.csv")


def _keep_replaced(study: Study, n: int, read: SourceRead) -> list[str]:
    """Add the rows of ``read.old`` whose value the new read changes or removes to superseded.csv; one line each."""
    old = read.old.astype(str)
    new = {
        (i, r, f): v for i, r, f, v in zip(*(read.new[c].astype(str) for c in ("item_id", "rater", "field", "value")))
    }
    keys = list(zip(old["item_id"], old["rater"], old["field"]))
    gone = [new.get(k) != v for k, v in zip(keys, old["value"])]
    rows = old[gone][RATINGS_COLUMNS].copy()
    if not len(rows):
        return []
    rows["replaced_at"] = utc_now()
    rows["replaced_by"] = read.source
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
    pull.json): the other sources' rows stay, a partial export pull keeps the raters it did not
    read, and a change under adjudication is refused unless ``add_to_adjudicated_round``."""
    res = read_pull(study, round_number, write=write, **options)
    rnd = study.round(res.summary["round"])
    if not write:
        return res
    path = study.ratings_path(rnd.number)
    old = intake_rounds.previous(path)
    old_mine, _ = intake_rounds.split(old, intake_rounds.LABEL_STUDIO)
    res.ratings = intake_rounds.keep_others(path, res.ratings, res.summary, tables=rnd.tables)
    if res.read_raters is not None:
        keep_unread_raters(study, rnd.number, res, res.read_raters)
    mine, _ = intake_rounds.split(res.ratings, intake_rounds.LABEL_STUDIO)
    read = SourceRead(intake_rounds.LABEL_STUDIO, old_mine, mine, what="pull")
    res.paths = take_into_round(
        study, rnd.number, read, res.ratings, res.invalid, res.summary, accept=add_to_adjudicated_round
    )
    if "blinding" in res.summary:
        rnd.access = {**rnd.access, "pull": res.summary["blinding"]}
        study.save()
    return res


def keep_unread_raters(study: Study, n: int, res: IntakeResult, covered: Iterable[str]) -> None:
    """``pull --from-export onc_a=FILE`` reads onc_a's project only: the round's ratings (and
    held-out annotations) of the other raters stay as the last pull left them -- a partial
    pull never deletes a rater's ratings."""
    covered = set(covered)
    kept: dict[str, int] = {}
    paths = {"ratings": study.ratings_path(n), "invalid": study.invalid_path(n)}
    for key, cols in (("ratings", RATINGS_COLUMNS), ("invalid", INVALID_COLUMNS)):
        path = paths[key]
        if not path.exists():
            continue
        old = read_ratings_csv(path) if key == "ratings" else read_csv_frame(path, " (invalid annotations)")
        if not len(old) or "rater" not in old.columns:
            continue
        mine = getattr(res, key)
        keep = old[~old["rater"].astype(str).isin(covered)]
        if key == "ratings":  # other sources' rows were already kept by keep_others
            keep = keep[intake_rounds.sources_of(keep) == intake_rounds.LABEL_STUDIO]
        if not len(keep):
            continue
        setattr(res, key, pd.concat([mine, keep.reindex(columns=cols, fill_value="")], ignore_index=True))
        for r in keep["rater"].astype(str):
            kept[r] = kept.get(r, 0) + 1
    if kept:
        res.summary["kept_from_previous_pull"] = kept
        res.summary.setdefault("warnings", []).append(
            "kept the earlier pull's rows of raters whose projects this pull did not read: "
            + ", ".join(f"{r} ({n})" for r, n in sorted(kept.items()))
        )
    res.summary["rating_rows"] = int(len(res.ratings))


__all__ = [
    "SourceRead",
    "take_into_round",
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
