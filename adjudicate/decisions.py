"""Adjudication decisions: the append-only log.  Its writers are the review-sheet reader
(:mod:`goldboard.adjudicate.review_sheet`) and the Label Studio adjudication pull
(:mod:`goldboard.annotate.adjudication`).

The log (``decisions.jsonl`` in a study workspace) has one JSON object per line::

    {"id": "D000007", "item_id": "C-12::gpt", "case_id": "C-12", "field": "safety_label",
     "decision": "Partially Supported", "reason": "ECOG 3 needs review",
     "adjudicator": "dr_lee", "independent": true, "source": "sheet",
     "sheet": "review.xlsx", "sheet_sha256": "…", "origin": "sheet:…",
     "timestamp": "2025-01-31T10:12:00+00:00",
     "previous_id": "D000003", "previous_decision": "Supported", "round": 1}

``round`` (when present) is the round whose ratings were in force for the item when the
decision was made.

Entries are only ever appended.  The latest entry for an item x field is the one in
force; ``decision == "unresolved"`` records that an adjudicator explicitly left it
open.  Raters' ratings are never touched.

Multi-select fields (e.g. mtb ``missing_info``): ``decision`` is the chosen set in
canonical spelling -- values ``|``-joined in schema order -- and ``""`` for the
empty set ("none of these").  ``""`` is a decision, never "undecided": an open item
is ``"unresolved"``, an undecided one has no entry.  In the review sheet the
adjudicator types the values separated by ``|``, ``,`` or ``;`` (or on separate
lines), ``none`` for the empty set, or ``unresolved`` (see :func:`parse_multi_decision`).

Re-recording what is already in force (same decision and reason, no other
adjudicator named), or what the same Label Studio annotation already logged,
appends nothing -- so re-importing a sheet is a no-op whatever ``--adjudicator`` /
``--not-independent`` say.  A changed decision appends a new entry that names the
one it replaces, and needs a reason of its own.

The same value is never a change (:func:`is_change`): a Label Studio annotation (or a
sheet row with a new reason or another adjudicator) that restates the value in force
is logged as a *confirmation* (``previous_decision == decision``); an empty reason
keeps the reason in force (the entry copies it and records ``reason_kept``), so a
confirmation never erases a documented reason.  A sheet row restating the value of a
newer decision is unchanged, never a conflict.

Writes are all or nothing (:func:`record_decisions`): every proposal is checked, then
the log is replaced in one step (temporary file, fsync, rename, under a lock), so a
killed import leaves the old log or the new one.  Entries of one write share a
``batch`` id.  A torn last line left by an older goldboard is skipped with a warning
(:func:`read_decisions`) and moved aside on the next write.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import uuid
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldboard.errors import GoldboardError, GoldboardWarning, ParamError
from goldboard.fileio import atomic_write, file_lock, fsync_dir
from goldboard.label_configs.schema import ValueNotInSchema
from goldboard.text import close_matches, utc_now

UNRESOLVED = "unresolved"
#: words an adjudicator writes for the empty set of a multi-select field (unless the field has such a value)
EMPTY_SET_WORDS = ("none", "(none)")
#: separators accepted between multi-select values in a Decision cell ("|" always; the others unless a
#: value of the field contains them)
MULTI_DECISION_SEPARATORS = ("|", ",", ";", "\n")
SOURCES = ("sheet", "label_studio")
DECISION_KEYS = [
    "id",
    "item_id",
    "case_id",
    "field",
    "decision",
    "reason",
    "adjudicator",
    "independent",
    "source",
    "sheet",
    "sheet_sha256",
    "origin",
    "timestamp",
    "previous_id",
    "previous_decision",
    "round",
]


@dataclass
class Proposed:
    """A decision read from a sheet or Label Studio, before it is logged."""

    item_id: str
    field: str
    decision: str
    reason: str = ""
    adjudicator: str = ""
    independent: bool = True
    case_id: str = ""
    where: str = ""  # cell reference or Label Studio task, for messages
    where_reason: str = ""  # the Reason cell (default: ``where``)
    origin: str = ""  # sheet checksum or LS annotation id + update time
    #: False when ``adjudicator`` is only the importer's default (blank Adjudicator cell)
    adjudicator_explicit: bool = True
    where_adjudicator: str = ""  # the Adjudicator cell, for messages
    extra: dict[str, Any] = field(default_factory=dict)


def _split_torn_tail(data: bytes) -> tuple[bytes, bytes]:
    """``(complete lines, torn tail)`` of a log's bytes.  A last line without its newline
    that is not valid JSON is the remains of an interrupted write (an older goldboard
    appended line by line); it is returned as the tail, never parsed."""
    if not data or data.endswith(b"\n"):
        return data, b""
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    try:
        json.loads(tail.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return data[:cut], tail
    return data, b""  # a complete last entry that only lacks its newline (edited by hand)


def _parse_log(path: Path, data: bytes, lines: list[int] | None = None) -> list[dict]:
    """Entries of the log's complete lines.  Lines are split on ``\n`` only, so a reason
    holding U+2028 or a lone CR stays inside its entry.  A decision id used twice (a line
    copied by hand) is an error naming both lines.  ``lines`` (if given) receives each
    entry's line number."""
    out = []
    ids: dict[str, int] = {}
    for n, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise GoldboardError(f"{path}:{n}: not UTF-8 text (byte {exc.start}) in the decisions log") from None
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GoldboardError(f"{path}:{n}: invalid JSON in the decisions log: {exc.msg}") from None
        except RecursionError:
            raise GoldboardError(f"{path}:{n}: invalid JSON in the decisions log: nested too deeply to read") from None
        if not isinstance(rec, dict) or not all(k in rec for k in ("item_id", "field", "decision")):
            raise GoldboardError(f"{path}:{n}: a decision needs item_id, field and decision")
        _check_unique_id(path, n, rec, ids)
        out.append(rec)
        if lines is not None:
            lines.append(n)
    return out


def _check_unique_id(path: Path, n: int, rec: dict, ids: dict[str, int]) -> None:
    """Line ``n``'s decision id must not repeat an earlier line's (goldboard numbers each entry once)."""
    did = rec.get("id")
    if did is None:
        return
    if str(did) in ids:
        raise GoldboardError(
            f"{path}:{n}: decision id {did} repeats line {ids[str(did)]} (goldboard gives each decision its own "
            "id): was the log edited by hand? nothing read from it; remove the copied line"
        )
    ids[str(did)] = n


def _torn_message(path: Path, tail: bytes, lines: int) -> str:
    return (
        f"{path}:{lines + 1}: the last line is incomplete ({len(tail)} bytes, an interrupted write of an older "
        "goldboard); it is ignored, and the next adjudication import or pull moves it aside"
    )


def read_decisions(path: str | Path) -> list[dict]:
    """All log entries in file order (``[]`` when the log does not exist yet).

    An incomplete last line (left by an interrupted write of an older goldboard) is
    ignored with a :class:`~goldboard.errors.GoldboardWarning`; goldboard's own writes
    replace the whole file at once (:func:`record_decisions`), so it cannot tear one.
    """
    return read_decisions_snapshot(path)[0]


def read_decisions_snapshot(path: str | Path, lines: list[int] | None = None) -> tuple[list[dict], str | None]:
    """:func:`read_decisions` and the SHA-256 of the very bytes it parsed (``None`` when
    the log does not exist): the log is read once, so a write landing meanwhile cannot
    make the digest describe another log than the entries.  ``lines`` (if given) receives
    each entry's line number (for :func:`decision_item_errors`)."""
    path = Path(path)
    if not path.exists():
        return [], None
    data = path.read_bytes()
    good, tail = _split_torn_tail(data)
    if tail:
        warnings.warn(_torn_message(path, tail, good.count(b"\n")), GoldboardWarning, stacklevel=3)
    return _parse_log(path, good, lines), hashlib.sha256(data).hexdigest()


def decision_item_errors(
    entries: Sequence[dict], items_by_round: dict[int, set[str]], path: str | Path, lines: Sequence[int] = ()
) -> list[str]:
    """Log entries for an item the study's ratings do not have: in the entry's ``round``
    (when the ratings have that round), else in any round.  goldboard logs decisions only
    for rated items, so such a line was added by hand; gold is never built from it.  Each
    error names the log line (``lines[i]``: entry ``i``'s line number) and the entry id."""
    every = set().union(*items_by_round.values()) if items_by_round else set()
    errors = []
    for i, e in enumerate(entries):
        item = str(e.get("item_id"))
        rnd = e.get("round")
        rnd = int(rnd) if isinstance(rnd, int) or (isinstance(rnd, str) and rnd.isdigit()) else None
        known = items_by_round[rnd] if rnd in items_by_round else every
        if item in known:
            continue
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: entry {i + 1}"
        in_round = f" in round {rnd}" if rnd in items_by_round else ""
        errors.append(
            f"{where}: decision {e.get('id', '?')} is for item {quoted_cell(item)}, which this study's ratings do not "
            f"have{in_round}: was the log edited by hand? gold is never built from it"
        )
    return errors


def decision_independence_errors(
    entries: Sequence[dict], raters: Sequence[str], path: str | Path, lines: Sequence[int] = ()
) -> list[str]:
    """Log entries whose adjudicator is a rater of the study (also spelt another way:
    :func:`identity_key`) but that claim to be independent (``independent`` true or absent).
    goldboard records a rater's decision as not independent (sheet import and Label Studio
    pull alike), so such a line was edited by hand; gold is never built from it.  Each error
    names the log line (``lines[i]``) and the entry id."""
    keys = {identity_key(r): r for r in raters}
    errors = []
    for i, e in enumerate(entries):
        who = str(e.get("adjudicator") or "")
        if not who or identity_key(who) not in keys or e.get("independent", True) is False:
            continue
        where = f"{path}:{lines[i]}" if i < len(lines) else f"{path}: entry {i + 1}"
        errors.append(
            f"{where}: decision {e.get('id', '?')} (item {quoted_cell(str(e.get('item_id')))}) names adjudicator {quoted_cell(who)}, "
            f"a rater of this study, as independent; goldboard records a rater's decision as not independent: "
            "was the log edited by hand? gold is never built from it"
        )
    return errors


def decision_value_errors(entries: Iterable[dict], schema, path: str | Path) -> list[str]:
    """The decisions in force that the schema cannot hold: a field it lacks, or a value that is
    not exactly one of the field's values (a hand-edited log, or one from another schema).

    goldboard writes only canonical values (every import and pull checks them), so a value
    that fails here was typed into ``decisions.jsonl`` by hand; gold is never built from it.
    Each error names the log, the entry id, the item and the field.
    """
    errors = []
    fields = {f.name: f for f in schema.fields}
    for (item_id, fname), e in latest_decisions(entries).items():
        where = f"{path}: entry {e.get('id', '?')} (item {quoted_cell(item_id)}, field {fname})"
        f = fields.get(fname)
        if f is None:
            errors.append(f"{where}: the schema {schema.name} has no field {fname!r}")
            continue
        value = str(e.get("decision"))
        if value == UNRESOLVED or f.kind == "text":
            continue
        if f.kind == "multi":
            canonical, problems = parse_multi_decision(f, value) if value else ("", [])
        else:
            try:
                canonical, problems = f.normalize(value), []
            except ValueNotInSchema as exc:
                canonical, problems = None, [str(exc)]
        if problems or canonical != value:
            why = problems[0] if problems else f"{value!r} is not written as the schema writes it ({canonical!r})"
            errors.append(f"{where}: {why}; was the log edited by hand?")
    return errors


def items_by_round(ratings) -> dict[int, set[str]]:
    """Round -> the item ids rated in it, from a ratings table (no ``round`` column: round 1)."""
    items = [str(x) for x in ratings["item_id"]]
    if "round" not in ratings.columns:
        return {1: set(items)}
    out: dict[int, set[str]] = {}
    for rnd, item in zip(ratings["round"], items):
        text = str(rnd).strip()
        n = int(float(text)) if text and text.replace(".", "", 1).isdigit() else 1
        out.setdefault(n, set()).add(item)
    return out


def log_item_problem(path: str | Path, ratings) -> str | None:
    """One line naming the first log line (and how many more) for an item ``ratings`` do not
    have (:func:`decision_item_errors`); ``None`` when there is none.  ``ratings``: a ratings
    table, or round -> item ids (every round of the study: a command that analyses one round
    still checks the log against all of them)."""
    lines: list[int] = []
    entries, _ = read_decisions_snapshot(path, lines)
    known = ratings if isinstance(ratings, dict) else items_by_round(ratings)
    bad = decision_item_errors(entries, known, path, lines)
    if not bad:
        return None
    return bad[0] + (f" (and {len(bad) - 1} more such entries)" if len(bad) > 1 else "")


def latest_decisions(entries: Iterable[dict]) -> dict[tuple[str, str], dict]:
    """(item_id, field) -> the entry in force (the last one logged)."""
    latest: dict[tuple[str, str], dict] = {}
    for e in entries:
        latest[(str(e["item_id"]), str(e["field"]))] = e
    return latest


# --------------------------------------------------------------------------- multi-select decisions


def _is_value(f, text: str) -> bool:
    try:
        f.normalize(text)
    except ValueError:
        return False
    return True


def empty_set_word(f) -> str:
    """How the empty set of multi-select field ``f`` is written in a sheet (``none``, or
    ``(none)`` when ``none`` is one of the field's values)."""
    return next((w for w in EMPTY_SET_WORDS if not _is_value(f, w)), EMPTY_SET_WORDS[-1])


def multi_separators(f) -> tuple[str, ...]:
    """Separators accepted between the values of ``f`` in a Decision cell: ``|`` always
    (it is the ratings table's separator), ``,`` ``;`` and line breaks unless a value or
    alias of ``f`` contains one of them."""
    spellings = [x for v in f.values for x in (v.value, *v.aliases)]
    return tuple(sep for sep in MULTI_DECISION_SEPARATORS if sep == "|" or not any(sep in x for x in spellings))


def format_decision(f, decision: str) -> str:
    """A logged decision as an adjudicator reads/writes it in the sheet (the empty set of a
    multi-select field -> ``none``; everything else unchanged)."""
    if f is not None and f.kind == "multi" and decision == "":
        return empty_set_word(f)
    return decision


def parse_multi_decision(f, text: str) -> tuple[str | None, list[str]]:
    """Read a Decision cell of multi-select field ``f``.

    Returns ``(decision, problems)``: ``decision`` is the canonical set (values of ``f``
    ``|``-joined in schema order, ``""`` for ``none``) or ``unresolved``; ``problems``
    (one line each, e.g. ``"stgae" is not a value of missing_info (allowed: ...)``) is
    non-empty when the cell cannot be read, and then ``decision`` is ``None``.
    Parts are matched with :meth:`Field.normalize` (case, spacing and aliases forgiven);
    repeated values count once.
    """
    text = str(text).strip()
    if text.casefold() == UNRESOLVED and not _is_value(f, text):
        return UNRESOLVED, []
    seps = multi_separators(f)
    parts = [x.strip() for x in re.split("|".join(re.escape(sep) for sep in seps), text)]
    parts = [x for x in parts if x]
    allowed = ", ".join(list(f.categories) + [empty_set_word(f), UNRESOLVED])
    if not parts:
        return None, [
            f"decision {quoted_cell(text)} names no value of {f.name} (write {empty_set_word(f)} for nothing ticked; "
            f"allowed: {allowed})"
        ]
    chosen: set[str] = set()
    problems: list[str] = []
    specials = []
    for part in parts:
        try:
            chosen.add(f.normalize(part))
            continue
        except ValueError:
            pass
        if part.casefold() in EMPTY_SET_WORDS or part.casefold() == UNRESOLVED:
            specials.append(part)
        else:
            problems.append(f"{quoted_cell(part)} is not a value of {f.name} (allowed: {allowed})")
    if specials and len(parts) > 1:
        problems.append(
            f"{quoted_cell(specials[0])} cannot be combined with other values in decision {quoted_cell(text)}"
        )
    if problems:
        return None, problems
    if specials:
        return (UNRESOLVED if specials[0].casefold() == UNRESOLVED else ""), []
    sep = "|"
    return sep.join(v for v in f.categories if v in chosen), []


def _same(entry: dict, p: Proposed) -> bool:
    """The proposal restates the entry: same decision and reason, and no other adjudicator
    named explicitly.  (The importer's defaults -- ``--adjudicator`` for blank cells,
    ``--not-independent`` -- describe new or changed decisions; they do not by
    themselves re-decide an unchanged row.)"""
    if entry.get("decision") != p.decision or (entry.get("reason") or "") != p.reason:
        return False
    return not p.adjudicator_explicit or (entry.get("adjudicator") or "") == p.adjudicator


def is_change(entry: dict) -> bool:
    """The entry replaced a decision in force by another value (a confirmation is not a change)."""
    return entry.get("previous_id") is not None and entry.get("previous_decision") != entry.get("decision")


def is_confirmation(entry: dict) -> bool:
    """The entry restated the value in force (in Label Studio, or with a new reason or adjudicator)."""
    return entry.get("previous_id") is not None and entry.get("previous_decision") == entry.get("decision")


def _seen_keys(entry: dict) -> list[tuple]:
    """What a logged entry's origin already recorded: its reason, and ``""`` when the reason was kept."""
    base = (entry.get("origin"), str(entry["item_id"]), str(entry["field"]), entry.get("decision"))
    keys = [(*base, entry.get("reason") or "")]
    if entry.get("reason_kept"):
        keys.append((*base, ""))
    return keys


@contextlib.contextmanager
def _locked(path: Path):
    """Serialise writers of one log (advisory lock on a sibling file; the kernel drops it
    when the holder dies, so a killed import never blocks the next one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(path.with_name(path.name + ".lock")):
        yield


def entries_digest(entries: Sequence[dict]) -> str:
    """Content digest of log entries (key order and file layout do not matter)."""
    h = hashlib.sha256()
    for e in entries:
        h.update(json.dumps(e, ensure_ascii=False, sort_keys=True, default=str).encode("utf-8") + b"\n")
    return h.hexdigest()


def log_record(entries: Sequence[dict]) -> dict[str, Any]:
    """What a gold release records of the log it was built from, so that every later reader
    can check that the append-only log still begins with those entries
    (:func:`log_prefix_problem`): their number, :func:`entries_digest` and the last id."""
    return {
        "entries": len(entries),
        "entries_sha256": entries_digest(entries),
        "last_id": str(entries[-1].get("id", "")) if entries else "",
    }


def log_prefix_problem(
    path: str | Path, entries: Sequence[dict], recorded: dict, release: str, full_digest: str | None = None
) -> str | None:
    """One line when the log ``entries`` (read from ``path``) no longer begin with the entries
    a gold release was built from (``recorded``: its manifest's ``sources.decisions``, see
    :func:`log_record`): the log was emptied, cut short, deleted or edited by hand.  ``None``
    when it still does, or when the release recorded no entries.  A release of an older
    goldboard recorded only their number: a shorter log is still refused; otherwise a
    :class:`GoldboardWarning` says the check is not possible.  ``full_digest``: the caller's
    :func:`entries_digest` of all ``entries`` (not computed again when the log has not grown)."""
    try:
        n = int(recorded.get("entries") or 0)
    except (TypeError, ValueError):
        n = 0
    if n <= 0:
        return None
    digest = recorded.get("entries_sha256")
    if len(entries) >= n and digest:
        prefix = full_digest if full_digest and len(entries) == n else entries_digest(entries[:n])
        if digest == prefix:
            return None
    if len(entries) >= n and not digest:
        warnings.warn(
            f"{path}: gold release {release} was written by an older goldboard that did not record the "
            f"log's entries; whether the log still begins with its {n} decisions cannot be checked",
            GoldboardWarning,
            stacklevel=3,
        )
        return None
    have = {str(e.get("id")) for e in entries}
    last = str(recorded.get("last_id") or "")
    # goldboard numbers entries D000001, D000002, ... in log order (an older release recorded no last id)
    sequential = not last or (re.fullmatch(r"D\d{6}", last) and int(last[1:]) == n)
    expected = [f"D{k:06d}" for k in range(1, n + 1)] if sequential else []
    missing = [i for i in expected if i not in have]
    state = (
        "does not exist" if not Path(path).exists() else f"has {len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    )
    if missing:
        what = f"{len(missing)} of them are missing ({_id_list(missing)})"
    elif len(entries) < n:
        what = f"{n - len(entries)} of them are missing"
    else:
        what = "one or more of them was changed or moved"
    return (
        f"{path}: the log {state}, but gold release {release} was built from its first {n} decisions "
        f"(recorded in its manifest.json) and {what}; the log is append-only: restore it "
        "(from a backup or version control); nothing written"
    )


def _id_list(ids: Sequence[str]) -> str:
    if len(ids) <= 4:
        return ", ".join(ids)
    return (
        f"{ids[0]}..{ids[-1]}" if int(ids[-1][1:]) - int(ids[0][1:]) == len(ids) - 1 else f"{', '.join(ids[:3])}, ..."
    )


@dataclass(frozen=True)
class SheetBase:
    """The decisions log as it was when a review sheet was written (the sheet stores it).

    A decision logged after those ``entries`` is *newer* than the sheet: the sheet never
    showed it, so a sheet row may not silently replace it (see :func:`record_decisions`).
    """

    sheet_id: str
    entries: int
    log_sha256: str
    last_id: str = ""


def log_base(path: str | Path | Sequence[dict], sheet_id: str) -> SheetBase:
    """The :class:`SheetBase` of a sheet written now from the log at ``path`` (or from
    its already read ``entries``)."""
    entries = read_decisions(path) if isinstance(path, (str, Path)) else list(path)
    return SheetBase(
        sheet_id=sheet_id,
        entries=len(entries),
        log_sha256=entries_digest(entries),
        last_id=str(entries[-1].get("id", "")) if entries else "",
    )


@dataclass
class Conflict:
    """A sheet row that would replace a decision made after the sheet was written."""

    where: str
    item_id: str
    field: str
    sheet_decision: str
    newer: dict
    #: the sheet's value was imported from this very sheet before and has since been replaced
    reimported: bool = False
    #: the newer decision was imported from a sheet with this sheet's id (another filled copy
    #: of the same workbook, or this workbook imported before and edited since)
    same_sheet: bool = False
    #: a Label Studio adjudication answer older than the decision in force (not a sheet row)
    label_studio: bool = False

    def line(self, show=None) -> str:
        show = show or (lambda f, v: v)
        n = self.newer
        src = "Label Studio" if n.get("source") == "label_studio" else (n.get("sheet") or n.get("source") or "?")
        if self.label_studio:
            return (
                f"{self.where}: the Label Studio answer {quoted_cell(show(self.field, self.sheet_decision))} is older than the "
                f"decision in force {quoted_cell(show(self.field, str(n.get('decision', ''))))} ({n.get('id', '?')} by "
                f"{n.get('adjudicator') or '?'} at {n.get('timestamp') or '?'}, from {src}); Label Studio still shows "
                "the old answer, and submitting it again would put the old decision back"
            )
        if self.reimported:
            what = "was imported from this sheet before and has since been replaced by"
        elif self.same_sheet:
            what = (
                "would replace what an earlier import of this same sheet id (another copy of this workbook?) recorded:"
            )
        else:
            what = "would replace"
        return (
            f"{self.where}: item {quoted_cell(self.item_id)}, {self.field}: the sheet's {quoted_cell(show(self.field, self.sheet_decision))} "
            f"{what} the newer decision {quoted_cell(show(self.field, str(n.get('decision', ''))))} "
            f"({n.get('id', '?')} by {n.get('adjudicator') or '?'} at {n.get('timestamp') or '?'}, from {src}), "
            "made after this sheet was written"
        )


class DecisionConflicts(ParamError):
    """Rows that would replace newer decisions; nothing was recorded.  ``errors`` lists each."""

    def __init__(self, what: str, conflicts: list[Conflict], show=None):
        self.conflicts = conflicts
        self.errors = [c.line(show) for c in conflicts]
        n = len(conflicts)
        if conflicts and all(c.label_studio for c in conflicts):
            super().__init__(
                "{what}: {n} answer{s} older than the decision{s} in force; nothing pulled (choose the "
                "decision anew in Label Studio, or pass {overrule_newer} to put the old answer{s} back in force, "
                "which the log records)",
                what=what,
                n=n,
                s="s" if n != 1 else "",
            )
            return
        super().__init__(
            "{what}: {n} row{s} would replace decisions made after this sheet was written; nothing imported "
            "(write a fresh sheet with `goldboard adjudicate sheet`, or pass {overrule_newer} to replace them, "
            "which the log records)",
            what=what,
            n=n,
            s="s" if n != 1 else "",
        )


class SheetErrors(GoldboardError):
    """A review sheet (or a Label Studio adjudication pull) has problems; nothing was imported.  ``errors`` lists every one."""

    def __init__(self, path: str | Path, errors: list[str]):
        self.path = Path(path)
        self.errors = errors
        n = len(errors)
        super().__init__(f"{self.path.name}: {n} problem{'s' if n != 1 else ''} found; nothing imported")


class AppendedCounts:
    """``changed``/``confirmed`` of a result whose ``appended`` holds the new log entries
    (:class:`RecordResult`, the review sheet's ``ImportResult``)."""

    appended: list[dict]

    @property
    def changed(self) -> int:
        """Entries that replaced a value by another (confirmations are not changes)."""
        return sum(1 for e in self.appended if is_change(e))

    @property
    def confirmed(self) -> int:
        """Entries that restated the value in force (with a new reason or adjudicator)."""
        return sum(1 for e in self.appended if is_confirmation(e))


@dataclass
class RecordResult(AppendedCounts):
    appended: list[dict]
    unchanged: int
    #: things the user should know (a torn tail moved aside, stale temporary files removed)
    notes: list[str] = field(default_factory=list)


def change_lines(appended: Iterable[dict], schema=None) -> list[str]:
    """One line per appended entry: ``item field: old -> new (by adjudicator)``."""
    out = []
    for e in appended:
        show = _shower(schema)
        field_name = str(e.get("field", ""))
        old = (
            "(undecided)"
            if e.get("previous_id") is None
            else quoted_cell(show(field_name, str(e.get("previous_decision"))))
        )
        new = quoted_cell(show(field_name, str(e.get("decision", ""))))
        extra = f"; overrules newer {e['overrules_newer']}" if e.get("overrules_newer") else ""
        what = f"{old} -> {new}"
        if is_confirmation(e):
            what = f"{new} confirmed"
            extra += "; reason kept" if e.get("reason_kept") else "; new reason"
        out.append(
            f"{quoted_cell(str(e.get('item_id', '')))} {field_name}: {what} (by {e.get('adjudicator') or '?'}{extra})"
        )
    return out


def _shower(schema):
    """``show(field, decision)``: a decision as the sheet writes it (the empty set -> none)."""

    def show(field_name: str, decision: str) -> str:
        f = None
        if schema is not None:
            try:
                f = schema.field(field_name)
            except (KeyError, ValueError):
                f = None
        return format_decision(f, decision) if f is not None else decision

    return show


def _write_log(path: Path, keep: bytes, new: list[dict]) -> None:
    """Replace the log by ``keep`` + ``new`` in one step: a temporary file beside it is
    written, fsynced and renamed over it (then the folder is fsynced).  A process killed
    at any point leaves either the old log or the new one, never a part."""
    if keep and not keep.endswith(b"\n"):
        keep += b"\n"
    data = keep + b"".join((json.dumps(r, ensure_ascii=False, default=str) + "\n").encode("utf-8") for r in new)
    _write_bytes(path, data)
    fsync_dir(path.parent)


def _write_bytes(path: Path, data: bytes) -> None:
    with atomic_write(path, "wb", encoding=None) as fh:  # temp file beside it, fsync, rename
        fh.write(data)


def _clean_stale_temps(path: Path) -> int:
    """Remove temporary copies of the log left by a killed writer (only ever called with
    the log's lock held, so none of them belongs to a running writer)."""
    n = 0
    for t in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(FileNotFoundError):
            t.unlink()
            n += 1
    return n


def record_decisions(
    path: str | Path,
    proposed: Sequence[Proposed],
    *,
    source: str,
    sheet: str = "",
    sheet_sha256: str = "",
    now: str | None = None,
    base: SheetBase | None = None,
    overrule_newer: bool = False,
    schema=None,
    problems: Sequence[str] = (),
) -> RecordResult:
    """Append the proposed decisions that change something; return what was appended.

    All or nothing: every proposal is checked first, then the whole batch is written
    in one atomic replacement of the log (:func:`_write_log`), under a lock.

    - A sheet row that restates the decision in force (same decision and reason; see
      :func:`_same`) is skipped; so is anything the same Label Studio annotation
      (``origin``) already logged.  A new Label Studio annotation of the value in force,
      or a sheet row with that value and a new reason or another adjudicator, is logged
      as a confirmation (:func:`is_confirmation`); an empty reason keeps the reason in
      force (``reason_kept``).  The same value is never a change nor a conflict.
    - Changing the decision in force needs a reason that is not the replaced decision's
      own (else a :class:`SheetErrors` naming ``Proposed.where``).
    - ``base`` (a review sheet's :class:`SheetBase`): a proposal that would replace a
      decision logged after the sheet was written is a :class:`Conflict` -- also when that
      decision came from an earlier import of this same sheet id (two filled copies of one
      workbook must not silently replace each other's decisions).  Any conflict raises
      :class:`DecisionConflicts` and nothing is written; ``overrule_newer=True`` records
      the rows instead, each entry naming the newer decision it overrules
      (``overrules_newer``).  A log that does not begin with the sheet's ``entries``
      is another study's log: one-line :class:`GoldboardError`.
    - ``problems`` found by the caller (invalid rows) are listed first in the same
      :class:`SheetErrors`, so one run reports every problem.
    - An incomplete last line left by an older goldboard is moved aside to
      ``<log>.torn-<time>`` (kept, never deleted) and said in ``notes``.
    """
    if source not in SOURCES:
        raise ValueError(f"source must be one of {SOURCES}")
    path = Path(path)
    stamp = now or utc_now()
    show = _shower(schema)
    with _locked(path):
        notes = _stale_temp_notes(path)
        data = path.read_bytes() if path.exists() else b""
        good, tail = _split_torn_tail(data)
        entries = _parse_log(path, good)
        if base is not None:
            _check_log_base(path, entries, base, sheet)
        batch = _Batch(
            entries,
            base,
            overrule_newer,
            show,
            template={"source": source, "sheet": sheet, "sheet_sha256": sheet_sha256, "timestamp": stamp},
            batch_id=uuid.uuid4().hex[:12],
        )
        batch.errors.extend(problems)
        for p in proposed:
            batch.add(p)
        what = sheet or ("label studio adjudication" if source == "label_studio" else source)
        if batch.errors:
            raise SheetErrors(what, batch.errors + [c.line(show) for c in batch.conflicts])
        if batch.conflicts:
            raise DecisionConflicts(what, batch.conflicts, show)
        if tail:
            notes.append(_move_torn_tail(path, tail, stamp))
        if batch.appended or tail:
            _write_log(path, good, batch.appended)
    return RecordResult(appended=batch.appended, unchanged=batch.unchanged, notes=notes)


def _stale_temp_notes(path: Path) -> list[str]:
    """Remove a killed writer's temporary copies of the log; a note saying so (if any)."""
    stale = _clean_stale_temps(path)
    if not stale:
        return []
    return [
        f"removed {stale} unfinished temporary cop{'ies' if stale != 1 else 'y'} of {path.name} left by an interrupted write"
    ]


def _check_log_base(path: Path, entries: list[dict], base: SheetBase, sheet: str) -> None:
    """The log must begin with the entries the sheet was written from (else: another study's log)."""
    if len(entries) < base.entries or entries_digest(entries[: base.entries]) != base.log_sha256:
        raise GoldboardError(
            f"{sheet or 'the sheet'}: written from another decisions log (the study's {path.name} does not "
            f"begin with the {base.entries} decisions this sheet was written from); write a fresh sheet "
            "with `goldboard adjudicate sheet`"
        )


def _move_torn_tail(path: Path, tail: bytes, stamp: str) -> str:
    """Keep an older goldboard's torn last line in ``<log>.torn-<time>``; the note saying so."""
    aside = path.with_name(f"{path.name}.torn-{stamp.replace(':', '').replace('+0000', 'Z')}")
    _write_bytes(aside, tail)
    return (
        f"{path}: moved an incomplete last line ({len(tail)} bytes, from an interrupted write of an older "
        f"goldboard) aside to {aside.name}"
    )


class _Batch:
    """The proposals of one :func:`record_decisions` call, checked one by one against the
    log: what to append, what is unchanged, the errors and the conflicts with newer decisions."""

    def __init__(self, entries, base, overrule_newer, show, *, template: dict, batch_id: str) -> None:
        self.entries = entries
        self.base = base
        self.overrule_newer = overrule_newer
        self.show = show
        self.template = template  # source, sheet, sheet_sha256, timestamp of every new entry
        self.batch_id = batch_id
        self.pos = {id(e): i for i, e in enumerate(entries)}
        self.latest = latest_decisions(entries)
        self.seen = {k for e in entries if e.get("origin") for k in _seen_keys(e)}
        self.appended: list[dict] = []
        self.errors: list[str] = []
        self.conflicts: list[Conflict] = []
        self.unchanged = 0

    def add(self, p: Proposed) -> None:
        """Check one proposal: append it, count it unchanged, or note its error or conflict."""
        base = self.base
        key = (p.item_id, p.field)
        cur = self.latest.get(key)
        confirm = cur is not None and cur.get("decision") == p.decision
        kept = confirm and not p.reason.strip() and bool(cur.get("reason"))
        if kept:  # the same value without a reason confirms the reason in force, never erases it
            p.reason = str(cur.get("reason") or "")
        if cur is not None and _same(cur, p) and self.template["source"] != "label_studio":
            self.unchanged += 1  # a sheet restating what is in force (re-imported, or pre-filled)
            return
        already = bool(p.origin) and (p.origin, p.item_id, p.field, p.decision, p.reason) in self.seen
        newer = cur is not None and base is not None and self.pos.get(id(cur), -1) >= base.entries
        if cur is not None and base is None and not already and not confirm:
            newer = self._ls_stale(p, cur)
        if already and not newer:
            self.unchanged += 1  # e.g. a Label Studio annotation logged before and since superseded
            return
        if newer and confirm and (already or kept or not self._own(cur) or (cur.get("reason") or "") == p.reason):
            self.unchanged += 1  # the sheet already agrees with the newer decision: never a conflict
            return
        if newer and not self.overrule_newer:
            # also a decision imported before from this very sheet id: two filled copies of one
            # workbook (or one edited after its import) must not silently replace each other
            self.conflicts.append(
                Conflict(
                    p.where,
                    p.item_id,
                    p.field,
                    p.decision,
                    cur,
                    reimported=already,
                    same_sheet=self._own(cur),
                    label_studio=self.template["source"] == "label_studio",
                )
            )
            return
        if cur is not None and not confirm:
            error = self._missing_reason(p, cur)
            if error:
                self.errors.append(error)
                return
        entry = self._entry(p, cur)
        if kept:
            entry["reason_kept"] = True
        if newer:
            entry["overrules_newer"] = cur.get("id")
        self.appended.append(entry)
        self.latest[key] = entry

    def _ls_stale(self, p: Proposed, cur: dict) -> bool:
        """A Label Studio answer older than the decision in force (``cur``, made elsewhere): the
        answer this same annotation gave before, logged and since replaced (Label Studio keeps
        it selected, and clicking Update re-submits it), or an answer saved before ``cur`` was
        logged.  Like a review-sheet row written before a newer decision, it is a conflict."""
        mine = _ls_annotation(p.origin)
        if mine is None or _ls_annotation(str(cur.get("origin") or "")) == mine:
            return False
        at = self.pos.get(id(cur), len(self.entries))
        earlier = [e for e in self.entries[:at] if _ls_annotation(str(e.get("origin") or "")) == mine]
        if any(e.get("item_id") == p.item_id and e.get("field") == p.field for e in earlier):
            # logged before cur: the same answer again is the old one; a new value is a new decision
            return any(e.get("decision") == p.decision for e in earlier if e.get("item_id") == p.item_id)
        saved, logged = _when(p.origin.split(":", 3)[-1]), _when(str(cur.get("timestamp") or ""))
        return saved is not None and logged is not None and saved < logged

    def _own(self, cur: dict) -> bool:
        """``cur`` was imported from the sheet being imported (the adjudicator edited it again)."""
        return bool(self.base and self.base.sheet_id) and cur.get("sheet_id") == self.base.sheet_id

    def _missing_reason(self, p: Proposed, cur: dict) -> str | None:
        """The error when ``p`` changes decision ``cur`` without a reason of its own."""
        old_reason = (cur.get("reason") or "").strip()
        if p.reason.strip() and p.reason.strip() != old_reason:
            return None
        why = "give one" if not p.reason.strip() else "the cell still holds the reason of the decision it replaces"
        show = self.show
        return (
            f"{p.where_reason or p.where or p.item_id}: reason required: this changes the decision in force for item "
            f"{quoted_cell(p.item_id)}, {p.field} from {quoted_cell(show(p.field, str(cur.get('decision'))))} "
            f"({cur.get('id', '?')} by {cur.get('adjudicator') or '?'}) to {quoted_cell(show(p.field, p.decision))}; {why}"
        )

    def _entry(self, p: Proposed, cur: dict | None) -> dict:
        """The log entry recording ``p`` (replacing ``cur``, if any)."""
        t = self.template
        entry = {
            "id": f"D{len(self.entries) + len(self.appended) + 1:06d}",
            "item_id": p.item_id,
            "case_id": p.case_id,
            "field": p.field,
            "decision": p.decision,
            "reason": p.reason,
            "adjudicator": p.adjudicator,
            "independent": bool(p.independent),
            "source": t["source"],
            "sheet": t["sheet"],
            "sheet_sha256": t["sheet_sha256"],
            "origin": p.origin,
            "timestamp": t["timestamp"],
            "previous_id": cur["id"] if cur is not None else None,
            "previous_decision": cur["decision"] if cur is not None else None,
            "batch": self.batch_id,
            **p.extra,
        }
        if self.base is not None and self.base.sheet_id:
            entry["sheet_id"] = self.base.sheet_id
        return entry


def _ls_annotation(origin: str) -> tuple[str, str] | None:
    """``(project id, annotation id)`` of a Label Studio origin ``label_studio:PID:AID:UPDATED``."""
    parts = origin.split(":", 3)
    return (parts[1], parts[2]) if len(parts) == 4 and parts[0] == "label_studio" else None


def _when(text: str):
    """An ISO 8601 time (Label Studio's ``...Z`` or goldboard's ``+00:00``) as an aware datetime, or ``None``."""
    import datetime as _dt

    try:
        d = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return d if d.tzinfo is not None else d.replace(tzinfo=_dt.timezone.utc)


def quoted_cell(text: str) -> str:
    """Quote a cell text for a message (double quotes, one line, at most 60 characters).  What does
    not print -- a line break, a tab, a zero-width space, a bidi control, a no-break space -- is
    escaped as ``repr`` escapes it (``"Supported\\u200b"``): the message shows the text that is
    there, never a value that looks like an allowed one."""
    t = str(text)
    t = t if len(t) <= 60 else t[:59] + "…"
    return '"' + "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in t) + '"'


def identity_key(name: str) -> str:
    """A name as a comparison key: case, spaces and punctuation ignored (``Dr Chair`` ~ ``dr_chair``)."""
    return re.sub(r"[^0-9a-z]+", "", str(name).casefold())


def resolve_adjudicators(
    proposed: Sequence[Proposed], known: Iterable[str], names: dict[str, str] | None = None
) -> tuple[list[str], list[str]]:
    """Map each named adjudicator to a study identity: ``(errors, notes)``.

    ``known``: the study's identities (the importer's ``--adjudicator``, adjudicators already
    in the log or recorded for Label Studio, the raters).  ``names``: spelling -> identity
    (an explicit mapping; the spelling as written is kept in ``adjudicator_as_written``).
    Another spelling of a known identity (``Dr Chair`` for ``dr_chair``: same letters and
    digits, or a close match) is an error naming its cell, with did-you-mean, so one person
    is never logged under two spellings; a name close to no identity is a new adjudicator,
    said in a note.
    """
    names = dict(names or {})
    known = list(dict.fromkeys(known))
    ids = list(dict.fromkeys([*known, *names.values()]))
    errors: list[str] = []
    new: dict[str, list[str]] = {}
    for p in proposed:
        who = p.adjudicator
        cell = p.where_adjudicator or p.where
        if who.casefold() in RESERVED_NAMES:
            errors.append(
                f"{cell}: adjudicator {quoted_cell(who)} is a word the decisions log uses ({', '.join(RESERVED_NAMES)}), "
                "not a person: write the adjudicator's name (to leave the item open, write unresolved in the Decision cell)"
            )
            continue
        if who in names and names[who] != who:
            p.extra["adjudicator_as_written"] = who
            p.adjudicator = names[who]
            twin = [k for k in known if identity_key(k) == identity_key(names[who])]
            if names[who] not in known and twin:
                errors.append(
                    f"--adjudicator-name {who}={names[who]}: {names[who]!r} is another spelling of {twin[0]!r} "
                    f"(one person is one name): write --adjudicator-name {quoted_cell(who + '=' + twin[0])}"
                )
            elif names[who] not in known:
                new.setdefault(names[who], []).append(cell)
            continue
        if who in ids:
            if who not in known:
                new.setdefault(who, []).append(cell)
            continue
        hits = close_matches(who, ids, 2)
        if not hits:
            new.setdefault(who, []).append(p.where_adjudicator or p.where)
            continue
        errors.append(
            f"{p.where_adjudicator or p.where}: adjudicator {quoted_cell(who)} is another spelling of "
            f"{' or '.join(repr(h) for h in hits)}? (this study's adjudicators and raters: {', '.join(ids)}); "
            f"write that name in the cell, or map this spelling to a person: "
            f"--adjudicator-name {quoted_cell(who + '=' + hits[0])}"
        )
    errors = list(dict.fromkeys(errors)) + _same_person_twice(new, known)  # a mapping's error once, not per cell
    notes = [
        f"new adjudicator {quoted_cell(who)} ({', '.join(cells[:3])}{' ...' if len(cells) > 3 else ''}): not in this study "
        f"before (known: {', '.join(known)})"
        for who, cells in new.items()
    ]
    return errors, notes


#: words the decisions log and the sheet use that are never an adjudicator's name
RESERVED_NAMES = (UNRESOLVED, *EMPTY_SET_WORDS, "?")


def _same_person_twice(new: dict[str, list[str]], known: Sequence[str] = ()) -> list[str]:
    """New adjudicator names that differ only in case or punctuation from each other (``Dr_Lee``,
    ``dr lee``) or from a known one (``--adjudicator-name X=DR_CHAIR`` beside ``dr_chair``): one
    person would be logged under two names."""
    by_key: dict[str, list[str]] = {}
    for who in known:
        by_key.setdefault(identity_key(who), []).append(who)
    out = []
    for who, cells in new.items():
        twins = by_key.setdefault(identity_key(who), [])
        if twins:
            first = twins[0]
            where = f" ({new[first][0]})" if first in new else " (already in this study)"
            out.append(
                f"{cells[0]}: adjudicator {quoted_cell(who)} and {quoted_cell(first)}{where} differ only in case or punctuation: one "
                f"person is one name; write {quoted_cell(first)}, or map this spelling to it with --adjudicator-name "
                f"{quoted_cell(who + '=' + first)}"
            )
        twins.append(who)
    return out


__all__ = [
    "SheetErrors",
    "DECISION_KEYS",
    "Conflict",
    "DecisionConflicts",
    "SheetBase",
    "change_lines",
    "entries_digest",
    "log_base",
    "decision_item_errors",
    "items_by_round",
    "log_item_problem",
    "EMPTY_SET_WORDS",
    "empty_set_word",
    "format_decision",
    "multi_separators",
    "parse_multi_decision",
    "identity_key",
    "resolve_adjudicators",
    "RESERVED_NAMES",
    "is_change",
    "is_confirmation",
    "Proposed",
    "RecordResult",
    "SOURCES",
    "UNRESOLVED",
    "latest_decisions",
    "read_decisions",
    "read_decisions_snapshot",
    "log_record",
    "decision_independence_errors",
    "log_prefix_problem",
    "record_decisions",
]
