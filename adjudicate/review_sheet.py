"""The review sheet's reader: check a filled review workbook and append its decisions
to the log (:mod:`goldboard.adjudicate.decisions`).

A review sheet records what it was written from (:func:`sheet_state_rows`: sheet id,
log entries/digest/last id, ratings digest).  Its import refuses another study,
schema or ratings state (:func:`check_sheet_identity`), and a sheet without that record
unless ``allow_unverified`` (each entry then says ``unverified_origin``); it treats a row
that would replace a decision logged after the sheet -- by anyone, including an earlier
import of the same sheet id -- as a :class:`~goldboard.adjudicate.decisions.Conflict` (``overrule_newer`` records it
anyway, naming the overruled entry in ``overrules_newer``).  Each Decision cell carries
a per-row check (:func:`row_check_color`): a decision that moved to another row (the
Decision column sorted on its own) is refused by cell.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldboard.adjudicate.decisions import (
    UNRESOLVED,
    AppendedCounts,
    Proposed,
    SheetBase,
    entries_digest,
    format_decision,
    latest_decisions,
    log_base,
    parse_multi_decision,
    quoted_cell,
    read_decisions,
    record_decisions,
    resolve_adjudicators,
)
from goldboard.adjudicate.flags import flag_disagreements, value_words
from goldboard.adjudicate.gold import resolve_gold
from goldboard.adjudicate.rules import decision_rule_errors
from goldboard.cases.ratings import rating_grid
from goldboard.errors import GoldboardError
from goldboard.fileio import load_workbook, sha256_file
from goldboard.text import cell_text, excel_safe_text, unneutralize_formula

# --------------------------------------------------------------------------- the review sheet

#: sheet names and column headers of the review workbook: the one table the writer
#: (exports.workbook) and this reader use
SHEET_DISAGREEMENTS = "Disagreements"
SHEET_META = "_goldboard"
SHEET_AGREED = "Agreed"
SHEET_FORMAT = "goldboard-review/1"
HEADERS = {
    "agenda": "#",
    "case_id": "Case ID",
    "item_id": "Item ID",
    "model": "Model",
    "field": "Field",
    "decision": "Decision",
    "reason": "Reason",
    "adjudicator": "Adjudicator",
    "flags": "Flags",
    "boundary": "Boundary",
    "case_text": "Case summary",
    "output_text": "Model output",
    "key": "Key (do not edit)",
}
#: the Disagreements columns the import reads (keys of :data:`HEADERS`; the writer writes them all)
READ_COLUMNS = ["key", "case_id", "item_id", "field", "decision", "reason", "adjudicator"]
_KEY_PREFIX = "gb1:"


def make_key(item_id: str, field: str, case_id: str) -> str:
    """The hidden row key: ids as JSON plus a checksum, so any edit is detectable."""
    payload = json.dumps([item_id, field, case_id], ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]
    return f"{_KEY_PREFIX}{payload}#{digest}"


#: a row check colour: near-black (each RGB channel 0-15), never plain black
_CHECK_COLOR_RE = re.compile(r"^(?:[0-9A-F]{2})?(0[0-9A-F])(0[0-9A-F])(0[0-9A-F])$")


def row_check_color(key: str) -> str:
    """The font colour (aRGB) the review sheet gives the Decision cell of the row with hidden
    ``key``: a per-row check the import verifies.  It is near-black (no one sees it), and
    Excel and LibreOffice move a cell's formatting with its value when they sort, so a
    Decision column sorted on its own ("continue with the current selection") carries its
    colours to rows with other keys (:func:`moved_decision_rows`)."""
    code = 1 + int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % 4095
    return f"FF{code >> 8:02X}{(code >> 4) & 15:02X}{code & 15:02X}"


def cell_check_color(cell: Any) -> str | None:
    """The row check colour of a Decision cell (as :func:`row_check_color` spells it), or
    ``None`` when the cell has none (another colour, or formatting pasted over it)."""
    color = getattr(getattr(cell, "font", None), "color", None)
    rgb = getattr(color, "rgb", None) if color is not None and getattr(color, "type", "rgb") == "rgb" else None
    m = _CHECK_COLOR_RE.match(rgb.upper()) if isinstance(rgb, str) else None
    if m is None or m.group(1, 2, 3) == ("00", "00", "00"):
        return None
    return "FF" + "".join(m.group(1, 2, 3))


def moved_decision_rows(rows: Sequence[tuple[int, str, str | None]]) -> dict[int, list[int]]:
    """Rows whose Decision cell was written on another row: ``rows`` holds, per filled row,
    ``(row, expected check colour, the cell's check colour)``; returns ``{row: [rows it may
    come from]}``.  A cell copied from a row that still holds its own colour (copy and
    paste, fill down) is not moved; a sort or a cut leaves the source without it."""
    by_color: dict[str, list[int]] = {}
    own = set()
    for r, want, got in rows:
        by_color.setdefault(want, []).append(r)
        if got == want:
            own.add(want)
    moved = {}
    for r, want, got in rows:
        if got is not None and got != want and got not in own:
            moved[r] = by_color.get(got, [])
    return moved


def parse_key(key: Any) -> tuple[str, str, str] | None:
    """(item_id, field, case_id) from a key, or ``None`` when it is not an intact key."""
    if not isinstance(key, str) or not key.startswith(_KEY_PREFIX) or "#" not in key:
        return None
    payload, _, digest = key[len(_KEY_PREFIX) :].rpartition("#")
    if hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12] != digest:
        return None
    try:
        data = json.loads(payload)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not (isinstance(data, list) and len(data) == 3 and all(isinstance(x, str) for x in data)):
        return None
    return data[0], data[1], data[2]


@dataclass
class ImportResult(AppendedCounts):
    sheet: str
    sheet_sha256: str
    appended: list[dict]
    unchanged: int
    blank: int
    warnings: list[str]
    notes: list[str] = field(default_factory=list)
    #: of the ``blank`` rows, those whose item keeps a decision already in the log (from another sheet)
    blank_in_force: int = 0


def _stripped(value: Any) -> str:
    return cell_text(value).strip()


def _reason_text(value: Any) -> str:
    """A Reason cell exactly as typed: a leading space or tab kept (only whitespace is no
    reason).  The quote the sheet writer puts before a reason starting with a tab or CR
    (:func:`goldboard.text.neutralize_formula`) is removed, so a pre-filled reason reads
    back as logged; no one types a quote before a tab."""
    text = cell_text(value)
    if text[:1] == "'" and text[1:2] in ("\t", "\r"):
        text = unneutralize_formula(text)
    return text if text.strip() else ""


def readonly_texts(flags, schema, raters: Sequence[str]) -> dict[tuple[str, str], dict[str, str]]:
    """What the writer put in the read-only Model and rater-value cells of each Disagreements row
    ((item, field) -> {header: text}), as :mod:`goldboard.exports.workbook` writes them."""
    fields = {f.name: f for f in schema.fields}
    out: dict[tuple[str, str], dict[str, str]] = {}
    for rec in flags.to_dict(orient="records"):
        f = fields.get(str(rec["field"]))
        cells = {HEADERS["model"]: excel_safe_text(rec.get("model")).strip()}
        for r in raters:
            v = rec.get(f"value_{r}", "") or ""
            if r in (rec.get("missing_raters") or ()):
                v = v or "(missing)"
            elif f is not None and f.kind == "multi":
                v = value_words(f, v)
            cells[f"{r} value"] = excel_safe_text(v).strip()
        out[(str(rec["item_id"]), str(rec["field"]))] = cells
    return out


def agreed_texts(gold, schema) -> dict[tuple[str, str], str]:
    """The Agreed sheet's value of each unanimous item x field, as the writer shows it."""
    fields = {f.name: f for f in schema.fields}
    out = {}
    for item, fname, value, method in zip(gold["item_id"], gold["field"], gold["gold_value"], gold["method"]):
        if method != "unanimous":
            continue
        f = fields.get(str(fname))
        shown = format_decision(f, value) if f is not None and f.kind == "multi" else (value or "(blank)")
        out[(str(item), str(fname))] = excel_safe_text(shown).strip()
    return out


def agreed_sheet_errors(wb, expected: dict[tuple[str, str], str]) -> list[str]:
    """An edited Agreed value (or a row whose ids were edited): the import never reads it, so it
    is an error naming the cell, never a silent no-op."""
    if SHEET_AGREED not in wb.sheetnames:
        return []
    ws = wb[SHEET_AGREED]
    first = next(ws.iter_rows(max_row=1, values_only=True), ())
    head = {_stripped(v): j for j, v in enumerate(first) if v is not None}
    if not all(h in head for h in ("Item ID", "Field", "Agreed value")):
        return []
    from openpyxl.utils import get_column_letter

    ji, jf, jv = head["Item ID"], head["Field"], head["Agreed value"]
    errors = []
    for r, row in enumerate(ws.iter_rows(min_row=2, max_col=max(ji, jf, jv) + 1, values_only=True), start=2):
        item, fname, got = (_stripped(row[j]) if j < len(row) else "" for j in (ji, jf, jv))
        if not (item or fname or got):
            continue
        want = expected.get((item, fname))
        if want == got:
            continue
        what = (
            f"item {quoted_cell(item)}, {fname} is not an agreed item of these ratings (ids edited?)"
            if want is None
            else f"the agreed value {quoted_cell(want)} was edited to {quoted_cell(got)}"
        )
        errors.append(
            f"{SHEET_AGREED}!{get_column_letter(jv + 1)}{r}: {what}; the Agreed sheet is read-only (an agreed value "
            "is the raters' unanimous rating, no sheet changes it): undo the edit"
        )
    return errors


def read_review_sheet(
    path: str | Path,
    grid,
    schema,
    *,
    adjudicator: str = "",
    independent: bool = True,
    expected: Sequence[tuple[str, str]] = (),
    readonly: dict[tuple[str, str], dict[str, str]] | None = None,
    agreed: dict[tuple[str, str], str] | None = None,
) -> tuple[list[Proposed], list[str], list[str], list[tuple[str, str]]]:
    """Check every row of a filled review workbook against the ratings in ``grid``.

    Returns ``(proposed, errors, warnings, blank)``: the decisions to record, every
    problem as ``Disagreements!F7: ...``, notes that do not block the import, and the
    ``(item, field)`` of each row left blank (it records nothing: a decision already in the
    log stays in force, else the item stays unresolved).  ``expected``: the (item, field)
    rows the sheet was written with (the flagged disagreements); each one missing from the
    sheet (a deleted row) is named in a warning -- it stays as it is.  ``readonly`` (:func:`readonly_texts`) and
    ``agreed`` (:func:`agreed_texts`): the read-only cells as written; an edited one is an error.
    """
    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    wb = load_workbook(path, read_only=True, data_only=False)  # a damaged or foreign file: one line
    try:
        errors = _check_sheet_schema(wb, schema)
        if SHEET_DISAGREEMENTS not in wb.sheetnames:
            raise GoldboardError(
                f"{path}: no sheet named {SHEET_DISAGREEMENTS!r} (is this a goldboard review workbook?)"
            )
        copies = disagreements_copies(wb)
        if copies:
            names = ", ".join(repr(n) for n in [SHEET_DISAGREEMENTS, *copies])
            raise GoldboardError(
                f"{path}: sheets {names} each hold Disagreements rows (the review sheet's header or its rows' "
                f"keys); the import reads decisions from one sheet only: keep {SHEET_DISAGREEMENTS!r} with the "
                "decisions that count (copy them in, delete the other sheet) and import again"
            )
        rows = wb[SHEET_DISAGREEMENTS].iter_rows()
        try:
            header = next(rows)
        except StopIteration:
            raise GoldboardError(f"{path}: sheet {SHEET_DISAGREEMENTS} is empty") from None
        reader = _SheetRows(_header_columns(path, header), grid, adjudicator, independent, errors)
        reader.readonly = readonly or {}
        if agreed is not None:
            errors.extend(agreed_sheet_errors(wb, agreed))
        body = list(rows)
        reader.check_moved(body)  # the per-row checks need every row first
        for row in body:
            reader.read(row)
    finally:
        wb.close()
    reader.warnings.extend(missing_row_warnings(path, expected, reader.seen))
    return reader.proposed, reader.errors, reader.warnings, reader.blank_keys


def disagreements_copies(wb) -> list[str]:
    """The sheets other than Disagreements that look like it: a copy ('Disagreements (2)', made
    by Excel's Move or Copy) or pasted rows -- a cell holding the key column's header or a row
    key (``gb1:...``).  Only the Disagreements sheet is read, so decisions in a copy would
    be ignored without a word."""
    key_header = HEADERS["key"]
    found = []
    for name in wb.sheetnames:
        if name == SHEET_DISAGREEMENTS:
            continue
        for row in wb[name].iter_rows(values_only=True):
            if any(
                _stripped(v) in (key_header,) or _stripped(v).startswith(_KEY_PREFIX) for v in row if isinstance(v, str)
            ):
                found.append(name)
                break
    return found


def missing_row_warnings(path: Path, expected: Sequence[tuple[str, str]], seen) -> list[str]:
    """One line per flagged (item, field) that has no row in the sheet (deleted), and a count."""
    lost = [k for k in dict.fromkeys(expected) if k not in seen]
    if not lost:
        return []
    lines = [
        f"{path.name}: {len(lost)} flagged row{'s are' if len(lost) != 1 else ' is'} missing from sheet "
        f"{SHEET_DISAGREEMENTS} (deleted?): no decision is taken from this sheet for "
        f"{'them' if len(lost) != 1 else 'it'}; each keeps the decision in force, if any (else stays undecided)"
    ]
    lines += [f"{path.name}: missing row: item {quoted_cell(item)}, {fname}" for item, fname in lost]
    return lines


def _check_sheet_schema(wb, schema) -> list[str]:
    """An error (in a list, the first of the import's) when the sheet names another schema."""
    if SHEET_META not in wb.sheetnames:
        return []
    meta = {}
    for row in wb[SHEET_META].iter_rows(min_row=1, max_col=2):
        if row[0].value is not None:
            meta[str(row[0].value)] = (row[1].value if len(row) > 1 else None, f"B{row[0].row}")
    if "schema" in meta and _stripped(meta["schema"][0]) != schema.name:
        return [
            f"{SHEET_META}!{meta['schema'][1]}: this sheet was made for schema "
            f"{_stripped(meta['schema'][0])!r}, the study uses {schema.name!r}"
        ]
    return []


def _header_columns(path: Path, header) -> dict[str, int]:
    """Header text -> 0-based column of the Disagreements sheet; every column the import reads must be there."""
    col: dict[str, int] = {}
    for c in header:
        if c.value is not None:
            col.setdefault(_stripped(c.value), c.column - 1)
    lost = [HEADERS[k] for k in READ_COLUMNS if HEADERS[k] not in col]
    if lost:
        raise GoldboardError(
            f"{path}: {SHEET_DISAGREEMENTS}!1: column {lost[0]!r} not found (the header row must not be edited)"
        )
    return col


class _SheetRows:
    """Reads the Disagreements rows one by one into proposals, errors, warnings and a blank count."""

    def __init__(self, col: dict[str, int], grid, adjudicator: str, independent: bool, errors: list[str]) -> None:
        from openpyxl.utils import get_column_letter

        self.letter = get_column_letter
        self.col = col
        self.grid = grid
        self.adjudicator = adjudicator
        self.independent = independent
        self.fields = {f.name: f for f in grid.fields}  # adjudicable fields present in the ratings
        self.item_pos = {it: i for i, it in enumerate(grid.items)}
        self.values = {name: grid.values(name) for name in self.fields}
        self.present = {name: grid.codes[name] >= 0 for name in self.fields}
        self.proposed: list[Proposed] = []
        self.errors = errors
        self.warnings: list[str] = []
        self.seen: dict[tuple[str, str], int] = {}
        self.blank_keys: list[tuple[str, str]] = []  # (item, field) of each row left blank
        #: (item, field) -> the read-only cells' texts as written (:func:`readonly_texts`)
        self.readonly: dict[tuple[str, str], dict[str, str]] = {}
        #: rows whose Decision cell was written on another row -> the rows it may come from
        self.moved: dict[int, list[int]] = {}

    def check_moved(self, rows: list) -> None:
        """Find the rows whose Decision cell was written on another row (the Decision column
        sorted or moved on its own): :meth:`read` refuses their decisions."""
        col = self.col
        checks = []
        keys = set()
        for row in rows:
            r = next((c.row for c in row if getattr(c, "row", None)), None)
            key_cell = row[col[HEADERS["key"]]] if col[HEADERS["key"]] < len(row) else None
            dec_cell = row[col[HEADERS["decision"]]] if col[HEADERS["decision"]] < len(row) else None
            key = None if key_cell is None else key_cell.value
            if r is not None and parse_key(key) is not None and key not in keys:
                # a repeated key (a row copied over another) is a duplicate row, named by :meth:`_row_errors`
                checks.append((r, row_check_color(key), cell_check_color(dec_cell)))
                keys.add(key)
        self.moved = moved_decision_rows(checks)

    def _moved_error(self, r: int, item_id: str, fname: str, decision: str) -> str:
        sources = self.moved[r]
        src = f"row {', '.join(str(x) for x in sources[:3])}" if sources else "a row that is no longer in this sheet"
        return (
            f"{self.ref('decision', r)}: decision {quoted_cell(decision)} was written on another row ({src}), not on this "
            f"row's item {quoted_cell(item_id)}, {fname}: the Decision column was sorted or moved on its own (e.g. Excel's "
            "'continue with the current selection'); undo that (filter rows instead of sorting), nothing of this sheet is "
            "imported"
        )

    def ref(self, k: str, r: int) -> str:
        """``Disagreements!F7``: the cell of column ``k`` in row ``r``."""
        return f"{SHEET_DISAGREEMENTS}!{self.letter(self.col[HEADERS[k]] + 1)}{r}"

    def read(self, row) -> None:
        """One sheet row: skipped (empty), blank, an error, or a proposal."""
        col = self.col
        cells = {k: (row[col[HEADERS[k]]] if col[HEADERS[k]] < len(row) else None) for k in READ_COLUMNS}
        r = next((c.row for c in row if getattr(c, "row", None)), None)
        if r is None:
            return
        values = {k: (None if c is None else c.value) for k, c in cells.items()}
        filled = {k: _stripped(values[k]) for k in READ_COLUMNS}
        if not any(filled.values()):
            return
        if not filled["key"]:
            if filled["decision"] or filled["reason"]:
                self.errors.append(
                    f"{self.ref('key', r)}: row has no key: rows added by hand cannot be imported "
                    "(regenerate the sheet with `goldboard adjudicate sheet`)"
                )
            return
        parsed = parse_key(values["key"])
        if parsed is None:
            self.errors.append(
                f"{self.ref('key', r)}: the hidden key was edited; this row cannot be matched to an item"
            )
            return
        if r in self.moved and filled["decision"]:
            self.errors.append(self._moved_error(r, parsed[0], parsed[1], filled["decision"]))
            return
        row_errors = self._row_errors(r, parsed, values, cells) or self._readonly_errors(r, parsed, row)
        if row_errors:
            self.errors.extend(row_errors)
            return
        item_id, fname, case_id = parsed
        if filled["decision"] == "":
            self.blank_keys.append((item_id, fname))
            if filled["reason"]:
                self.warnings.append(
                    f"{self.ref('decision', r)}: reason given but no decision; the item stays unresolved"
                )
            return
        decision = self._decision(r, self.fields[fname], filled["decision"], values["decision"])
        if decision is None:
            return
        if isinstance(values["reason"], (_dt.date, _dt.time, _dt.timedelta)):
            # Excel turned what was typed into a date: the text the adjudicator saw is not in the file
            self.errors.append(
                f"{self.ref('reason', r)}: the Reason cell holds a date or time ({values['reason']}), not the text "
                "typed (Excel converted it); retype it as text (start it with an apostrophe) and import again"
            )
            return
        reason = _reason_text(values["reason"])
        if not self._reason_ok(r, item_id, self.fields[fname], decision, reason):
            return
        who = _stripped(values["adjudicator"]) or self.adjudicator
        if not who:
            self.errors.append(
                f"{self.ref('adjudicator', r)}: adjudicator missing (fill the cell or pass --adjudicator)"
            )
            return
        # a rater adjudicating (their own or a colleague's item) is never independent
        self.proposed.append(
            Proposed(
                item_id=item_id,
                field=fname,
                decision=decision,
                reason=reason,
                adjudicator=who,
                independent=self.independent and who not in self.grid.raters,
                case_id=case_id,
                where=self.ref("decision", r),
                where_reason=self.ref("reason", r),
                adjudicator_explicit=bool(_stripped(values["adjudicator"])),
                where_adjudicator=self.ref("adjudicator", r),
            )
        )

    def _row_errors(self, r: int, parsed: tuple[str, str, str], values: dict, cells: dict) -> list[str]:
        """What makes row ``r`` unusable: edited ids, a duplicate, an unknown item or field, formulas."""
        item_id, fname, case_id = parsed
        out: list[str] = []
        for k, expect in (("case_id", case_id), ("item_id", item_id), ("field", fname)):
            got = _stripped(values[k])
            if got != excel_safe_text(expect).strip():
                label = HEADERS[k].lower()
                out.append(
                    f"{self.ref(k, r)}: {label} {quoted_cell(got)} was edited (this row is item "
                    f"{quoted_cell(item_id)}, field {fname}, case {quoted_cell(case_id)}); undo the edit"
                )
        if (item_id, fname) in self.seen:
            out.append(
                f"{self.ref('key', r)}: duplicate row: same item {quoted_cell(item_id)} and field {fname} "
                f"as row {self.seen[(item_id, fname)]}"
            )
        self.seen.setdefault((item_id, fname), r)
        f = self.fields.get(fname)
        if f is None or item_id not in self.item_pos:
            what = f"field {quoted_cell(fname)}" if f is None else f"item {quoted_cell(item_id)}"
            out.append(f"{self.ref('item_id', r)}: unknown {what}: not in this study's ratings")
        for k in ("decision", "reason", "adjudicator"):
            c = cells[k]
            if c is not None and getattr(c, "data_type", None) == "f":
                out.append(f"{self.ref(k, r)}: {k} is a formula; type plain text")
        return out

    def _readonly_errors(self, r: int, parsed: tuple[str, str, str], row) -> list[str]:
        """Edited read-only cells of row ``r`` (the model, a rater's value): the import never reads
        them, so an edit is an error naming the cell, never silently dropped."""
        want = self.readonly.get((parsed[0], parsed[1]))
        if not want:
            return []
        out = []
        for head, text in want.items():
            j = self.col.get(head)
            if j is None or j >= len(row):
                continue
            got = _stripped(row[j].value)
            if got != text:
                out.append(
                    f"{SHEET_DISAGREEMENTS}!{self.letter(j + 1)}{r}: {head} {quoted_cell(text)} was edited to {quoted_cell(got)} "
                    f"(item {quoted_cell(parsed[0])}, {parsed[1]}); it is read-only (the import never reads it; a rater's "
                    "value is changed by the rater, in a new round): undo the edit"
                )
        return out

    def _decision(self, r: int, f, text: str, raw: Any) -> str | None:
        """The Decision cell read as a value of ``f`` (or ``unresolved``); ``None`` after noting an error."""
        if f.kind == "multi":
            decision, problems = parse_multi_decision(f, text)
            if problems:
                self.errors.extend(f"{self.ref('decision', r)}: {x}" for x in problems)
                return None
            return decision
        if text.casefold() == UNRESOLVED and UNRESOLVED not in f.categories:
            return UNRESOLVED
        try:
            return f.normalize(raw)
        except Exception:
            self.errors.append(
                f"{self.ref('decision', r)}: decision {quoted_cell(text)} is not a value of {f.name} "
                f"(allowed: {', '.join(f.categories)}, {UNRESOLVED})"
            )
            return None

    def _reason_ok(self, r: int, item_id: str, f, decision: str, reason: str) -> bool:
        """A decision that overrides every rater needs a reason (else an error is noted)."""
        i = self.item_pos[item_id]
        rater_values = [v for v, ok in zip(self.values[f.name][i], self.present[f.name][i]) if ok]
        if decision == UNRESOLVED or not rater_values or decision in rater_values or reason:
            return True
        shown = ", ".join(dict.fromkeys(format_decision(f, v) or "(blank)" for v in rater_values))
        self.errors.append(
            f"{self.ref('reason', r)}: reason required: decision {quoted_cell(format_decision(f, decision))} "
            f"overrides every rater ({shown})"
        )
        return False


def _note_round(p: Proposed, grid) -> None:
    """Record in the decision which round's ratings it was made on (gold export warns when a
    later complete round exists for the item while the decision stays in force)."""
    rnd = grid.selection.rounds.get(p.item_id)
    if rnd is not None:
        p.extra.setdefault("round", int(rnd))


#: ``_goldboard`` rows that tie a sheet to what it was written from (see :func:`sheet_state_rows`)
STATE_KEYS = ("sheet_id", "log_entries", "log_sha256", "log_last_id", "ratings_sha256")


def ratings_digest(ratings) -> str:
    """Content digest of a ratings table as a review sheet sees it (round, item, rater,
    field, value; row order and other columns do not matter)."""
    cols = [c for c in ("round", "item_id", "rater", "field", "value") if c in ratings.columns]
    return _rows_digest(cols, ratings[cols].itertuples(index=False, name=None))


def ratings_digest_columns(table: dict[str, list[str]]) -> str:
    """:func:`ratings_digest` of one round's ratings file read as columns
    (:func:`~goldboard.cases.ratings_columns.read_rating_columns`): round as the DataFrame
    reader reads it (blank is 1, ``007`` is 7), the same digest, without pandas."""
    n = len(table["item_id"])
    rounds = [str(int(v or "1")) for v in table.get("round", [""] * n)]
    cols = ["round", "item_id", "rater", "field", "value"]
    return _rows_digest(cols, zip(rounds, *(table[c] for c in cols[1:])))


def _rows_digest(cols: list[str], records) -> str:
    rows = sorted(json.dumps(["" if v is None else str(v) for v in rec], ensure_ascii=False) for rec in records)
    h = hashlib.sha256(json.dumps(cols).encode("utf-8"))
    for r in rows:
        h.update(b"\n" + r.encode("utf-8"))
    return h.hexdigest()


def sheet_state_rows(
    decisions: str | Path | Sequence[dict], ratings, *, ratings_sha256: str | None = None
) -> list[tuple[str, str]]:
    """The ``_goldboard`` rows a review sheet written now records: a fresh ``sheet_id``,
    the decisions log it shows (entries, content digest, last id) and the ratings it was
    built from (digest; ``ratings_sha256``: already computed, e.g. :func:`ratings_digest_columns`).
    :func:`import_review_sheet` reads them back."""
    base = log_base(decisions, uuid.uuid4().hex)
    return [
        ("sheet_id", base.sheet_id),
        ("log_entries", str(base.entries)),
        ("log_sha256", base.log_sha256),
        ("log_last_id", base.last_id),
        ("ratings_sha256", ratings_digest(ratings) if ratings_sha256 is None else ratings_sha256),
    ]


def read_sheet_meta(path: str | Path) -> dict[str, str]:
    """The hidden ``_goldboard`` sheet as ``{key: text}`` (``{}`` when there is none)."""
    path = Path(path)
    if not path.exists():
        raise GoldboardError(f"{path}: file not found")
    wb = load_workbook(path, read_only=True, data_only=True)  # a damaged or foreign file: one line
    try:
        if SHEET_META not in wb.sheetnames:
            return {}
        meta = {}
        for row in wb[SHEET_META].iter_rows(min_row=1, max_col=2, values_only=True):
            if row and row[0] is not None:
                # written as inert text (a study named '=x' has a quote put before it): read back as written
                value = unneutralize_formula(_stripped(row[1])) if len(row) > 1 and row[1] is not None else ""
                meta[_stripped(row[0])] = value
        return meta
    finally:
        wb.close()


def sheet_origin_problem(meta: dict[str, str]) -> str | None:
    """What is missing for a review sheet's origin to be verified (``None``: nothing): the
    ``_goldboard`` rows naming the sheet id, the decisions log and the ratings it was written
    from (an older goldboard did not write them; or they were deleted)."""
    if not meta:
        return f"it has no {SHEET_META} sheet"
    lost = [k for k in STATE_KEYS if k not in meta or (k != "log_last_id" and not meta[k])]
    if lost:
        return f"its {SHEET_META} sheet lacks {', '.join(lost)}"
    return None


_PROTECTION_RE = re.compile(rb"<(?:\w+:)?sheetProtection\b([^>]*)>")
_ATTR_RE = re.compile(rb'(\w+)\s*=\s*"([^"]*)"')
#: sheetProtection attributes that must hold for the Disagreements sheet (OOXML defaults: the
#: ``sort``/``insertRows``/``deleteRows`` locks are on unless written as false)
_LOCKS = {"sheet": False, "sort": True, "insertRows": True, "deleteRows": True}


def _sheet_xml_name(zf, sheet_name: str) -> str | None:
    """The zip member holding worksheet ``sheet_name`` of an xlsx (``None``: not found)."""
    wbx = zf.read("xl/workbook.xml")
    rels = zf.read("xl/_rels/workbook.xml.rels")
    for m in re.finditer(rb"<(?:\w+:)?sheet\b([^>]*)>", wbx):
        attrs = {k.split(b":")[-1]: v for k, v in re.findall(rb'([\w:]+)\s*=\s*"([^"]*)"', m.group(1))}
        if attrs.get(b"name", b"").decode("utf-8", "replace") != sheet_name or b"id" not in attrs:
            continue
        for r in re.finditer(rb"<(?:\w+:)?Relationship\b([^>]*)>", rels):
            ra = dict(_ATTR_RE.findall(r.group(1)))
            if ra.get(b"Id") == attrs[b"id"]:
                target = ra.get(b"Target", b"").decode("utf-8", "replace")
                return target.lstrip("/") if target.startswith("/") else "xl/" + target
    return None


def sheet_protection_problem(path: str | Path) -> str | None:
    """How the Disagreements sheet's protection was loosened (``None``: intact).  goldboard
    writes it protected (no password: only Decision, Reason and Adjudicator take input;
    sorting, inserting and deleting rows disallowed), so a sheet without that protection
    had it removed -- then rows or the Decision column may have been sorted (also by value
    only, which no per-row check can see), inserted or deleted."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            xml = {s: _sheet_xml_name(zf, s) for s in (SHEET_DISAGREEMENTS, SHEET_AGREED)}
            data = {s: zf.read(name) if name else None for s, name in xml.items()}
    except (OSError, KeyError, zipfile.BadZipFile):
        return None  # not an xlsx goldboard can read: the reader says so in one line
    for sheet, locks in ((SHEET_DISAGREEMENTS, _LOCKS), (SHEET_AGREED, {"sheet": False})):
        if data[sheet] is None:
            continue  # no such sheet: the reader names a missing Disagreements sheet
        m = _PROTECTION_RE.search(data[sheet])
        attrs = (
            {k.decode(): v.decode().strip().lower() in ("1", "true") for k, v in _ATTR_RE.findall(m.group(1))}
            if m
            else {}
        )
        if not attrs.get("sheet", False):
            return f"sheet {sheet} is not protected"
        loose = [k for k, default in locks.items() if k != "sheet" and not attrs.get(k, default)]
        if loose:
            return f"sheet {sheet}'s protection allows {', '.join(loose)}"
    return None


def check_sheet_protection(sheet: str | Path, allow_unprotected: bool = False) -> str | None:
    """Refuse (one line) a review sheet whose Disagreements protection was removed, unless
    ``allow_unprotected``; returns the problem (``None``: intact) so the log can record it."""
    problem = sheet_protection_problem(sheet)
    if problem and not allow_unprotected:
        raise GoldboardError(
            f"{Path(sheet).name}: {problem} (its protection was removed), so its rows or its Decision column may "
            "have been sorted, inserted or deleted, which moves decisions onto other items, or read-only cells (an "
            "agreed value, a rater's value, the model) edited, which the import never reads (an agreed value is the raters' "
            "unanimous rating; no sheet changes it); nothing imported; write "
            "a fresh sheet with `goldboard adjudicate sheet` (imported decisions are pre-filled) and copy the "
            "decisions into it, or import it anyway with `goldboard adjudicate import --unprotected-sheet` (the log "
            "records that)"
        )
    return problem


def check_sheet_identity(
    sheet: str | Path, meta: dict[str, str], *, study: str, schema, ratings, allow_unverified: bool = False
) -> SheetBase:
    """Refuse (one line) a sheet written for another study, schema or ratings state;
    return the log state it was written from.  A sheet without that state (written by
    an older goldboard, or its rows deleted) has no verifiable origin: refused unless
    ``allow_unverified``; then it counts as written before every logged decision."""
    name = Path(sheet).name
    fresh = "; write a fresh sheet with `goldboard adjudicate sheet` (imported decisions are pre-filled)"
    missing = sheet_origin_problem(meta)
    if missing and not allow_unverified:
        raise GoldboardError(
            f"{name}: no verifiable origin ({missing}: written by an older goldboard, or rows deleted), so it cannot "
            f"be checked against the ratings and decisions it was written from; nothing imported{fresh}, or import "
            "it anyway with `goldboard adjudicate import --unverified-sheet` (the log records that)"
        )
    if meta.get("schema") and (meta["schema"], meta.get("schema_version") or schema.version) != (
        schema.name,
        schema.version,
    ):
        raise GoldboardError(
            f"{name}: this sheet was made for schema {meta['schema']} v{meta.get('schema_version')}, the study uses "
            f"{schema.name} v{schema.version}; nothing imported"
        )
    if meta.get("study") and study and meta["study"] != study:
        raise GoldboardError(
            f"{name}: this sheet was made for study {meta['study']!r}, not {study!r}; nothing imported"
        )
    if meta.get("ratings_sha256") and meta["ratings_sha256"] != ratings_digest(ratings):
        raise GoldboardError(
            f"{name}: written from other ratings than the study has now (a pull or correction since?); "
            f"nothing imported{fresh}"
        )
    if not meta.get("sheet_id"):
        return SheetBase("", 0, entries_digest([]))
    try:
        n = int(meta.get("log_entries", ""))
    except ValueError:
        raise GoldboardError(f"{name}: {SHEET_META} sheet edited (log_entries); nothing imported{fresh}") from None
    return SheetBase(meta["sheet_id"], n, meta.get("log_sha256", ""), meta.get("log_last_id", ""))


def as_written(ratings, schema, raters, grid_raters, round_number: int | None) -> dict[str, Any]:
    """What the sheet of these ratings (of ``round_number``) was written with, for
    :func:`read_review_sheet`: its rows (``expected``), read-only cells and agreed values."""
    flags = flag_disagreements(ratings, schema, raters, round_number=round_number)
    return {
        "expected": list(zip(flags["item_id"].astype(str), flags["field"].astype(str))),
        "readonly": readonly_texts(flags, schema, grid_raters),
        "agreed": agreed_texts(resolve_gold(ratings, schema, (), raters, round_number=round_number), schema),
    }


def import_review_sheet(
    sheet: str | Path,
    ratings,
    schema,
    decisions_path: str | Path,
    *,
    adjudicator: str,
    independent: bool = True,
    raters: Sequence[str] | None = None,
    now: str | None = None,
    overrule_newer: bool = False,
    study: str = "",
    adjudicators: Iterable[str] | None = None,
    adjudicator_names: dict[str, str] | None = None,
    allow_unverified: bool = False,
    allow_unprotected: bool = False,
    round_number: int | None = None,
) -> ImportResult:
    """Check a filled review workbook and append its decisions to the log.

    A sheet written for another study (``study``), schema or ratings state is refused
    with one :class:`GoldboardError` line (:func:`check_sheet_identity`).  Every cell is
    checked first, then the schema's cross-field rules on the gold the decisions would make
    (:func:`goldboard.adjudicate.rules.decision_rule_errors`); if anything is wrong
    :class:`SheetErrors` is raised (listing every problem by cell reference) and nothing
    is recorded.  A row that would replace a
    decision logged after the sheet was written raises :class:`DecisionConflicts`
    unless ``overrule_newer`` (see :func:`record_decisions`).  Blank decisions stay
    unresolved; re-importing the same sheet, or a re-saved copy, appends nothing.

    ``adjudicators`` (the study's identities; ``adjudicator`` is always one) turns on the
    identity check of Adjudicator cells (:func:`resolve_adjudicators`, with the explicit
    ``adjudicator_names`` mapping); ``None`` takes every name as written.
    A sheet without a verifiable origin (:func:`sheet_origin_problem`) is refused unless
    ``allow_unverified``; each entry it then records carries ``"unverified_origin": true``.
    A sheet whose Disagreements protection was removed (:func:`sheet_protection_problem`) is
    refused unless ``allow_unprotected``; each entry then carries ``"unprotected_sheet": true``.
    ``round_number``: the round the sheet was written for (its rows and read-only cells are
    compared with that round's flags and agreed values; default: per item, the latest complete round).
    """

    meta = read_sheet_meta(sheet)
    base = check_sheet_identity(
        sheet, meta, study=study, schema=schema, ratings=ratings, allow_unverified=allow_unverified
    )
    unprotected = check_sheet_protection(sheet, allow_unprotected)
    unverified = sheet_origin_problem(meta)
    grid = rating_grid(ratings, schema, raters)
    proposed, errors, warnings, blank_keys = read_review_sheet(
        sheet,
        grid,
        schema,
        adjudicator=adjudicator,
        independent=independent,
        **as_written(ratings, schema, raters, grid.raters, round_number),
    )
    # the gold these decisions would make must keep the schema's cross-field rules
    logged = read_decisions(decisions_path)
    gold = resolve_gold(ratings, schema, logged, raters)
    errors = errors + decision_rule_errors(proposed, gold, schema)
    who_errors, who_notes = _who_decided(proposed, grid, adjudicator, adjudicators, adjudicator_names)
    shown = logged[: base.entries] if base is not None else logged  # the log the sheet was written from
    errors += who_errors + prefilled_adjudicator_errors(proposed, shown, adjudicator)
    sha = sha256_file(sheet)
    for p in proposed:  # the sheet's identity survives a re-save by Excel or LibreOffice; its bytes do not
        p.origin = f"sheet:{base.sheet_id or sha}"
        p.extra["imported_by"] = adjudicator  # who ran the import (--adjudicator), beside who decided
        _note_round(p, grid)
        if unverified:
            p.extra["unverified_origin"] = True
        if unprotected:
            p.extra["unprotected_sheet"] = True
    res = record_decisions(
        decisions_path,
        proposed,
        source="sheet",
        sheet=Path(sheet).name,
        sheet_sha256=sha,
        now=now,
        base=base,
        overrule_newer=overrule_newer,
        schema=schema,
        problems=errors,
    )
    return ImportResult(
        sheet=Path(sheet).name,
        sheet_sha256=sha,
        appended=res.appended,
        unchanged=res.unchanged,
        blank=len(blank_keys),
        blank_in_force=_decided(blank_keys, logged),
        warnings=warnings,
        notes=who_notes + res.notes,
    )


def _decided(keys: Sequence[tuple[str, str]], logged: list[dict]) -> int:
    """How many of ``keys`` (item, field) have a decision in force in the log ``logged``."""
    in_force = latest_decisions(logged)
    return sum(1 for k in keys if in_force.get(k, {}).get("decision", UNRESOLVED) != UNRESOLVED)


def _who_decided(
    proposed: list[Proposed], grid, adjudicator: str, adjudicators, adjudicator_names
) -> tuple[list[str], list[str]]:
    """``(errors, notes)`` of the Adjudicator cells: spellings of the study's identities
    (:func:`resolve_adjudicators`, when ``adjudicators`` is given), and raters adjudicating
    (recorded as not independent)."""
    errors: list[str] = []
    who_notes: list[str] = []
    if adjudicators is not None:
        errors, who_notes = resolve_adjudicators(
            [p for p in proposed if p.adjudicator_explicit], [adjudicator, *adjudicators], adjudicator_names
        )
        who_notes += unused_names(proposed, adjudicator_names)
    by_rater = [p for p in proposed if p.adjudicator in grid.raters]
    for p in by_rater:  # a rater adjudicating (also when a mapped spelling names them) is never independent
        p.independent = False
    for who in sorted({p.adjudicator for p in by_rater}):
        n = sum(p.adjudicator == who for p in by_rater)
        who_notes.append(f"{n} decision(s) by {who}, a rater of this study: recorded as not independent")
    return errors, who_notes


def prefilled_adjudicator_errors(proposed: Sequence[Proposed], shown: Sequence[dict], importer: str) -> list[str]:
    """A row that changes the decision the sheet pre-filled while its Adjudicator cell still holds
    the pre-filled name (the previous adjudicator), imported by someone else: the change would be
    logged under the previous adjudicator.  One error naming the cell each.  ``shown``: the log
    entries the sheet was written from."""
    prefilled = latest_decisions(list(shown))
    out = []
    for p in proposed:
        prev = prefilled.get((p.item_id, p.field))
        if prev is None or not p.adjudicator_explicit or p.decision == prev.get("decision"):
            continue
        who = str(prev.get("adjudicator") or "")
        if who and p.adjudicator == who and who != importer:
            out.append(
                f"{p.where_adjudicator or p.where}: this row changes the decision {quoted_cell(str(prev.get('decision')))} "
                f"({prev.get('id', '?')} by {who}) but its Adjudicator cell still holds {quoted_cell(who)}, as the sheet "
                f"pre-filled it; write who made the change in the cell (or, if {who} did, import with "
                f"--adjudicator {who})"
            )
    return out


def unused_names(proposed: Sequence[Proposed], names: dict[str, str] | None) -> list[str]:
    """A note for each ``--adjudicator-name SPELLING=NAME`` whose spelling no Adjudicator cell
    of the sheet holds (a typo on the left side would otherwise go unnoticed)."""
    written = {p.extra.get("adjudicator_as_written", p.adjudicator) for p in proposed if p.adjudicator_explicit}
    return [
        f"--adjudicator-name {k}={v}: no Adjudicator cell of the sheet says {k!r}; the mapping was not used"
        for k, v in (names or {}).items()
        if k not in written
    ]


__all__ = [
    "STATE_KEYS",
    "check_sheet_identity",
    "ratings_digest_columns",
    "check_sheet_protection",
    "sheet_protection_problem",
    "sheet_origin_problem",
    "row_check_color",
    "ratings_digest",
    "read_sheet_meta",
    "sheet_state_rows",
    "HEADERS",
    "READ_COLUMNS",
    "ImportResult",
    "import_review_sheet",
    "make_key",
    "parse_key",
    "read_review_sheet",
    "SHEET_DISAGREEMENTS",
    "SHEET_META",
    "SHEET_FORMAT",
]
