"""What every file source's pull into a round shares (``pull --from-table`` in
:mod:`goldboard.workflows.tables`, ``pull --from-file`` in :mod:`goldboard.workflows.files`): the
round it goes into, the study's units it adds to or is checked against, the invalid rows it
replaces, the file's SHA-256."""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldboard.annotate.push import round_use
from goldboard.cases.ids import escaped, id_key, number_like_ids_warning, twin_kind
from goldboard.cases.intake import rounds as intake_rounds
from goldboard.cases.intake.core import INVALID_COLUMNS
from goldboard.cases.intake.files import FileRead
from goldboard.errors import GoldboardError, GoldboardWarning, ParamError
from goldboard.fileio import iter_jsonl, read_csv_frame, write_jsonl_atomic
from goldboard.study import Study

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


def record_units(
    study: Study,
    units: list[dict],
    read: TableRead | FileRead,
    n: int,
    source: str,
    in_table: set[str],
    new_items: list[str],
) -> None:
    """units.jsonl: new items of a table-born study; every item of the table is in this round (written when changed)."""
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


__all__ = ["TABLE_MODE", "sha256_of", "units_records", "check_additions", "file_round", "merge_invalid", "record_units"]
