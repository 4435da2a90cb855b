"""The review-meeting workbook (openpyxl): what needs deciding, laid out for a meeting.

Sheets
------
``Summary``        study, schema, raters; headline agreement with 95% CIs per field
                   (from :func:`goldboard.analysis.agreement.agreement`); disagreements
                   per named boundary and per kind; how to fill and import the sheet.
``Disagreements``  one row per flagged item x field in agenda order: case id, item id,
                   model, field, the three fill-in columns **Decision** (dropdown of the
                   field's values plus ``unresolved``; free text for a multi-select field:
                   its values separated by ``|`` ``,`` or ``;``, ``none`` or ``unresolved``
                   -- said in the header comment, the cell's input message and the Summary),
                   **Reason**, **Adjudicator**; then
                   flags, boundary, each rater's value and rationale, case summary, model
                   output, links to the raters' Label Studio tasks, and a hidden key
                   column (ids + checksum) so an edited case/item id is detected on import.
                   Rows are filled with their boundary's colour.  Sheet-protected
                   (no password): only Decision, Reason and Adjudicator take input; rows
                   cannot be sorted, inserted or deleted.
``Agreed``         unanimous item x field rows, sheet-protected (read-only).
``Codebook``       every field's values with definitions (multi-select values included),
                   the boundaries and triggers.
``_lists``         (hidden) dropdown values of the single-choice fields;  ``_goldboard``
                   (hidden) sheet metadata.

A multi-select rating is shown as its values ``|``-joined in schema order, and the
empty set as ``none`` (``(missing)`` when the rater has no rating).

Layout and printing (checked by printing real workbooks to PDF): every visible sheet
prints landscape, one page wide, with narrow margins, the header row repeated and the
sheet name and page number in the footer.  Disagreements columns are sized from their
content within bounds (:func:`_disagreement_columns`) so the printed columns add up to
about 250-280 width units with two raters (~55% scale on Letter/A4); the Label Studio
links and the hidden key stay off paper.  Row heights come from a word-wrap estimate
(:func:`wrapped_lines`, Excel's 15 pt a line, slightly generous); a text longer than
Excel's tallest row (409 pt) carries a note saying so.  The fill-in columns have an amber
header and an amber frame; every styled font names Calibri.

Untrusted text (case text, model outputs, rationales, ids) goes through
:func:`goldboard.exports.sanitize.set_text_cell`: formula starts are neutralised,
the cell is typed as a string, text is cut at Excel's 32,767-character cell limit
with a visible marker.  The file is written atomically.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Alignment, PatternFill, Protection
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from goldboard import __version__
from goldboard.adjudicate.decisions import (
    UNRESOLVED,
    empty_set_word,
    format_decision,
    latest_decisions,
    multi_separators,
    parse_multi_decision,
)
from goldboard.adjudicate.flags import boundary_words, flag_words, value_words
from goldboard.adjudicate.review_sheet import (
    HEADERS,
    SHEET_DISAGREEMENTS,
    SHEET_FORMAT,
    SHEET_META,
    disagreements_copies,
    make_key,
    parse_key,
    row_check_color,
)
from goldboard.analysis import statistics as SD
from goldboard.cases.ratings import adjudicable_fields
from goldboard.exports.sanitize import set_text_cell
from goldboard.exports.xlsx_layout import (
    BORDER,
    INPUT_FILL,
    MAX_LINES,
    SUBHEADER_FILL,
    TOP,
    WRAP_TOP,
    Styles,
    fit_width,
    font,
    header_row,
    input_border,
    lines_height,
    number_cell,
    page_setup,
    protect,
    row_height,
    runs,
    too_long_note,
    wrapped_lines,
)
from goldboard.fileio import save_workbook_atomic
from goldboard.label_configs.schema import Schema
from goldboard.text import cell_text, utc_now

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

SHEET_SUMMARY = "Summary"
SHEET_AGREED = "Agreed"
SHEET_CODEBOOK = "Codebook"
SHEET_LISTS = "_lists"

#: row fills per boundary, in schema order (colour-blind-friendly light tints)
BOUNDARY_FILLS = ["F8CBAD", "FFE699", "C6E0B4", "BDD7EE", "D9C3E9", "F4B6C2", "C9C9C9", "B4E5E1"]


@dataclass
class WorkbookInfo:
    path: Path
    disagreement_rows: int
    items: int
    agreed_rows: int
    agreement_available: bool
    #: which round each item came from (goldboard.cases.rounds.RoundSelection)
    round_selection: Any = None


def task_url(base_url: str, project_id: Any, task_id: Any) -> str:
    """Link to a task in the Label Studio data manager ("" when anything is unknown)."""
    p, t = str(project_id or "").strip(), str(task_id or "").strip()
    if not base_url or not p.isdigit() or not t.isdigit():
        return ""
    return f"{base_url.rstrip('/')}/projects/{p}/data?task={t}"


#: the Summary's names of the headline statistics (:func:`goldboard.workflows.adjudication.headline_agreement`)
_STAT_NAMES = SD.names()  # declared in analysis/statistics.py


def _stat_label(row: dict) -> str:
    name = _STAT_NAMES.get(str(row.get("statistic")), str(row.get("statistic", "")))
    w = row.get("weights")
    if row.get("statistic") == "krippendorff_alpha" and row.get("level"):
        return f"{name} ({row['level']})"
    if w and w != "none":
        return f"{name} ({w} weights)"
    return name


# --------------------------------------------------------------------------- building


@dataclass(frozen=True)
class ReviewContent:
    """What a review sheet shows, computed before it is written
    (:func:`goldboard.workflows.adjudication.review_content`); the writer computes nothing.

    ``flags``: :func:`goldboard.adjudicate.flags.flag_disagreements` (one row per flagged
    item x field, ``value_<rater>`` columns); ``summary``: its
    :func:`~goldboard.adjudicate.flags.summarize_flags`; ``agreed``: the unanimous,
    unflagged rows of the provisional gold (:func:`goldboard.adjudicate.gold.resolve_gold`),
    the Agreed sheet; ``items``: how many items the gold covers; ``raters``: the rater
    columns, in order; ``in_force``: the ratings in force
    (:func:`goldboard.cases.ratings.current_ratings`), for rationales and task links;
    ``agreement_rows``/``agreement_note``: the Summary's headline agreement; ``state``: the
    ``_goldboard`` rows naming what the sheet was written from
    (:func:`goldboard.adjudicate.review_sheet.sheet_state_rows`)."""

    flags: Any  # a DataFrame, or FlagColumns (adjudicate.flags.flag_columns)
    summary: dict[str, Any]
    agreed: Any  # a DataFrame, or a list of row dicts
    items: int
    raters: list[str]
    in_force: Any  # a DataFrame, or {column: list of text}
    agreement_rows: list[dict]
    agreement_note: str
    state: Sequence[tuple[str, str]]


def build_review_workbook(
    content: ReviewContent,
    schema: Schema,
    *,
    units: pd.DataFrame | None = None,
    decisions: Iterable[dict] = (),
    base_url: str = "",
    study_info: dict[str, Any] | None = None,
    now: str | None = None,
) -> tuple[Workbook, dict[str, Any]]:
    """Lay out the review workbook in memory from ``content`` (see :class:`ReviewContent`).
    Returns ``(workbook, counts)``.

    ``units`` (item_id, case_text, output_text) supplies the case summary and model
    output; ``decisions`` (the log) pre-fills decisions already taken, so a sheet
    regenerated mid-adjudication re-imports as a no-op; ``base_url`` makes links to
    the raters' tasks.
    """
    flags, agreed, in_force, rlist = content.flags, content.agreed, content.in_force, list(content.raters)
    unit_text = _unit_texts(units)
    links = _task_links(in_force, base_url)
    latest = latest_decisions(decisions)
    stamp = now or utc_now()
    info = dict(study_info or {})

    wb = Workbook()
    ws_sum = wb.active
    ws_sum.title = SHEET_SUMMARY
    ws_dis = wb.create_sheet(SHEET_DISAGREEMENTS)
    ws_agr = wb.create_sheet(SHEET_AGREED)
    ws_code = wb.create_sheet(SHEET_CODEBOOK)
    ws_lists = wb.create_sheet(SHEET_LISTS)
    ws_meta = wb.create_sheet(SHEET_META)

    boundary_fill = {b.name: BOUNDARY_FILLS[i % len(BOUNDARY_FILLS)] for i, b in enumerate(schema.boundaries)}
    lists = _write_lists(ws_lists, schema)
    _write_disagreements(ws_dis, flags, schema, rlist, unit_text, links, latest, boundary_fill, lists)
    _write_agreed(ws_agr, agreed, flags, in_force, rlist, schema)
    _write_codebook(ws_code, schema)
    _write_summary(
        ws_sum,
        schema,
        info,
        rlist,
        content.summary,
        content.agreement_rows,
        content.agreement_note,
        boundary_fill,
        content.items,
        len(agreed),
        stamp,
    )
    _write_meta(ws_meta, schema, info, rlist, stamp, content.state)
    ws_lists.sheet_state = "hidden"
    ws_meta.sheet_state = "hidden"
    wb.active = 1  # open on Disagreements
    counts = {
        "disagreement_rows": len(flags),
        "items": len(set(flags["item_id"])) if len(flags) else 0,
        "agreed_rows": len(agreed),
        "agreement_available": bool(content.agreement_rows),
        "round_selection": flags.attrs.get("round_selection"),
    }
    return wb, counts


def write_review_workbook(path: str | Path, content: ReviewContent, schema: Schema, **kwargs) -> WorkbookInfo:
    """Lay out the workbook (see :func:`build_review_workbook`) and write it atomically."""
    path = Path(path)
    wb, counts = build_review_workbook(content, schema, **kwargs)
    save_workbook_atomic(wb, path)
    return WorkbookInfo(path=path, **counts)


# --------------------------------------------------------------------------- sheets


def _records(table: Any) -> list[dict[str, Any]]:
    """The rows of a DataFrame, a :class:`~goldboard.adjudicate.flags.FlagColumns` (its cells
    as stored, as a DataFrame holds them) or a list of row dicts, as dicts."""
    if isinstance(table, list):
        return table
    if hasattr(table, "to_dict"):
        return table.to_dict(orient="records")
    cols = {c: table[c] for c in table.columns}
    return [{c: v[i] for c, v in cols.items()} for i in range(len(table))]


def _unit_texts(units: Any) -> dict[str, tuple[str, str]]:
    """item -> (case text, output text) of the units (a DataFrame, or a list of records)."""
    if isinstance(units, list):
        return {str(u["item_id"]): (_s(u.get("case_text", "")), _s(u.get("output_text", ""))) for u in units}
    if units is None or len(units) == 0 or "item_id" not in units.columns:
        return {}
    blank = [""] * len(units)
    case = units["case_text"] if "case_text" in units.columns else blank
    out = units["output_text"] if "output_text" in units.columns else blank
    return {str(i): (_s(c), _s(o)) for i, c, o in zip(units["item_id"], case, out)}


def _s(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def _task_links(ratings: pd.DataFrame, base_url: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(item_id, rater) -> (url, task id) of the rater's Label Studio task."""
    names = ratings.columns if hasattr(ratings, "columns") else list(ratings)
    if not base_url or "task_id" not in names or "project_id" not in names:
        return {}
    last: dict[tuple[str, str], tuple[str, str]] = {}  # the last row of each item x rater
    cols = [[str(v) for v in ratings[c]] for c in ("item_id", "rater", "task_id", "project_id")]
    for item, rater, task, proj in zip(*cols):
        last[(item, rater)] = (task, proj)
    out = {}
    for key, (task, proj) in last.items():
        url = task_url(base_url, proj, task)
        if url:
            out[key] = (url, task)
    return out


def _single_choice_fields(schema: Schema):
    return [f for f in adjudicable_fields(schema) if f.kind != "multi"]


def multi_decision_help(f) -> str:
    """How to fill the Decision cell of multi-select field ``f`` (one line)."""
    seps = [f'"{x}"' for x in multi_separators(f) if x != "\n"]
    sep_text = seps[0] if len(seps) == 1 else ", ".join(seps[:-1]) + " or " + seps[-1]
    return (
        f"{f.name} (multi-select): type all values that apply, separated by {sep_text} "
        f"({', '.join(f.categories)}); {empty_set_word(f)} = none apply; {UNRESOLVED} = leave open."
    )


def _write_lists(ws, schema: Schema) -> dict[str, str]:
    """One column per single-choice field: its values + ``unresolved``.  Returns field -> range formula.
    (Multi-select fields get no dropdown: a list validation allows one value per cell.)"""
    out = {}
    for j, f in enumerate(_single_choice_fields(schema), start=1):
        set_text_cell(ws.cell(row=1, column=j), f.name)
        values = list(f.categories) + ([UNRESOLVED] if UNRESOLVED not in f.categories else [])
        for i, v in enumerate(values, start=2):
            set_text_cell(ws.cell(row=i, column=j), v)
        col = get_column_letter(j)
        out[f.name] = f"{SHEET_LISTS}!${col}$2:${col}${len(values) + 1}"
    return out


def _flag_text(rec: dict, schema: Schema) -> str:
    """Why the row is on the agenda in plain words, then its agenda priority:
    ``the raters' values differ; The oncologists chose different safety labels; agenda priority 3``
    (the boundary has its own column; the ids stay in the flag table and the Summary sheet)."""
    return "; ".join([*flag_words(rec, schema), f"agenda priority {rec['priority']}"])


@dataclass(frozen=True)
class _Column:
    """A Disagreements column: ``key`` (record key), ``header``, width bounds ``lo``..``hi`` and
    ``lines`` (0 = fixed width ``lo``, 1 = fit the longest value, more = fit the 90th-percentile
    text in about that many lines)."""

    key: str
    header: str
    lo: float
    hi: float
    lines: int


def _disagreement_columns(rlist: list[str], with_links: bool) -> list[_Column]:
    """The columns of the Disagreements sheet, in order.

    Sized for a landscape page: with two raters the printed columns add up to about 250-280 width
    units (the page prints at ~55-60% on Letter/A4), against 460 when every text column was
    40-60 wide (~30%, unreadable).  Long texts get taller rows instead of wider columns."""
    H = HEADERS
    rat_hi = 28.0 if len(rlist) <= 2 else 22.0 if len(rlist) == 3 else 18.0
    cols = [
        ("agenda", H["agenda"], 4, 6, 1),
        ("case_id", H["case_id"], 9, 12, 1),
        ("item_id", H["item_id"], 9, 12, 1),
        ("model", H["model"], 8, 11, 1),
        ("field", H["field"], 9, 17, 1),
        ("decision", H["decision"], 12, 16, 1),
        ("reason", H["reason"], 22, 22, 0),
        ("adjudicator", H["adjudicator"], 13, 13, 0),
        ("flags", H["flags"], 12, 18, 3),
        ("boundary", H["boundary"], 10, 16, 1),
    ]
    for r in rlist:
        cols += [(f"value_{r}", f"{r} value", 8, 12, 1), (f"rationale_{r}", f"{r} rationale", 16, rat_hi, 6)]
    cols += [("case_text", H["case_text"], 20, 44, 10), ("output_text", H["output_text"], 20, 32, 10)]
    if with_links:
        cols += [(f"link_{r}", f"{r} task (Label Studio)", 11, 11, 0) for r in rlist]
    cols += [("key", H["key"], 12, 12, 0)]
    return [_Column(*c) for c in cols]


def _write_disagreements(
    ws,
    flags: pd.DataFrame,
    schema: Schema,
    rlist: list[str],
    unit_text: dict,
    links: dict,
    latest: dict,
    boundary_fill: dict,
    lists: dict,
) -> None:
    """The Disagreements sheet: one row per flagged item x field, the fill-in columns framed, a
    Decision validation per field (dropdown, or an input message for a multi-select field)."""
    records = _disagreement_records(flags, schema, rlist, unit_text, latest, boundary_fill)
    spec = _disagreement_columns(rlist, bool(links))
    widths = _disagreement_widths(spec, records, schema, rlist)
    layout = _RowLayout(ws, {c.key: (j, w) for j, (c, w) in enumerate(zip(spec, widths), start=1)}, links)
    header_row(ws, [c.header for c in spec], widths, inputs=layout.input_cols)
    ws.cell(row=1, column=layout.pos["decision"]).comment = _decision_comment(schema)
    validations = _decision_validations(ws, schema, lists)
    dv_rows: dict[str, list[int]] = {}
    for i, vals in enumerate(records, start=2):
        layout.write(i, vals)
        dv_rows.setdefault(vals["field"], []).append(i)
    from openpyxl.worksheet.cell_range import MultiCellRange

    dcol = get_column_letter(layout.pos["decision"])
    for fname, dv in validations.items():
        if dv_rows.get(fname):
            dv.sqref = MultiCellRange(runs(dcol, dv_rows[fname]))
        else:
            ws.data_validations.dataValidation.remove(dv)
    ws.column_dimensions[get_column_letter(layout.pos["key"])].hidden = True
    printed = [j for k, j in layout.pos.items() if k != "key" and not k.startswith("link_")]
    page_setup(ws, "F2", last_col=max(printed))
    _protect_rows(ws)


def _protect_rows(ws) -> None:
    """The Disagreements sheet's structure protected (no password): only the unlocked fill-in
    cells (Decision, Reason, Adjudicator) take input; sorting, inserting and deleting rows or
    columns are disallowed, so no decision can be moved onto another row's item (the import
    refuses a sheet whose protection was removed: :func:`goldboard.adjudicate.review_sheet.sheet_protection_problem`).
    Filtering, column widths and row heights stay usable."""
    protect(ws)
    ws.protection.sort = True  # True: protected, i.e. sorting disallowed


def _disagreement_records(
    flags: pd.DataFrame, schema: Schema, rlist: list[str], unit_text: dict, latest: dict, boundary_fill: dict
) -> list[dict[str, Any]]:
    """One dict per flagged item x field: the text of each column (by key), ``_fill`` its row colour."""
    kinds = {f.name: f for f in adjudicable_fields(schema)}
    records: list[dict[str, Any]] = []
    for rec in _records(flags):
        item, fname = str(rec["item_id"]), str(rec["field"])
        case_text, output_text = unit_text.get(item, ("", ""))
        prev = latest.get((item, fname))
        fld = kinds.get(fname)
        vals: dict[str, Any] = {
            "agenda": rec["agenda"],
            "case_id": rec["case_id"],
            "item_id": item,
            "model": rec["model"],
            "field": fname,
            "flags": _flag_text(rec, schema),
            "boundary": "; ".join(boundary_words(schema, b) for b in rec["boundaries"]),
            "case_text": case_text,
            "output_text": output_text,
            "key": make_key(item, fname, str(rec["case_id"])),
            "decision": format_decision(fld, str(prev["decision"])) if prev else "",
            "reason": (prev.get("reason") or "") if prev else "",
            "adjudicator": (prev.get("adjudicator") or "") if prev else "",
            "_fill": boundary_fill.get(rec["boundaries"][0]) if rec["boundaries"] else None,
        }
        for r in rlist:
            v = rec.get(f"value_{r}", "") or ""
            if r in rec["missing_raters"]:
                v = v or "(missing)"
            elif fld is not None and fld.kind == "multi":
                v = value_words(fld, v)  # the names raters ticked ("ECOG status"); the empty set reads "none"
            vals[f"value_{r}"] = v
            vals[f"rationale_{r}"] = rec.get(f"rationale_{r}", "")
        records.append(vals)
    return records


def _disagreement_widths(spec: list[_Column], records: list[dict], schema: Schema, rlist: list[str]) -> list[float]:
    """Each column's width from its content within its bounds."""
    choices = [c for f in _single_choice_fields(schema) for c in list(f.categories) + [UNRESOLVED]]
    widths = []
    for c in spec:
        if c.lines == 0:
            widths.append(float(c.lo))
        elif c.key == "decision":  # wide enough for the longest dropdown value (or a typed decision)
            widths.append(fit_width(choices + [_s(v["decision"]) for v in records], c.lo, c.hi))
        elif c.key.startswith(("value_", "rationale_")):  # every rater's column alike
            stem = c.key.split("_")[0] + "_"
            widths.append(fit_width((_s(v.get(stem + r, "")) for v in records for r in rlist), c.lo, c.hi, c.lines))
        else:
            widths.append(fit_width((_s(v.get(c.key, "")) for v in records), c.lo, c.hi, c.lines))
    return widths


def _decision_comment(schema: Schema) -> Comment:
    """The Decision header's note: how to fill the cell, per kind of field."""
    note = [f"Single-choice fields: pick a value from the dropdown, or {UNRESOLVED}. Blank = decide later."]
    note += [multi_decision_help(f) for f in adjudicable_fields(schema) if f.kind == "multi"]
    comment = Comment("\n".join(note), "goldboard")
    comment.width, comment.height = 320, 60 + 40 * len(note)
    return comment


def _decision_validations(ws, schema: Schema, lists: dict) -> dict[str, DataValidation]:
    """One Decision validation per adjudicable field, added to ``ws`` (ranges set later): a
    dropdown of ``lists[field]``, or for a multi-select field an input message only."""
    validations: dict[str, DataValidation] = {}
    for f in adjudicable_fields(schema):
        if f.kind == "multi":  # free text: an input message only, no list
            dv = DataValidation(allow_blank=True)
            help_text = multi_decision_help(f)
            dv.prompt = (
                help_text
                if len(help_text) <= 255
                else (
                    f"Type the values of {f.name} separated by |, {empty_set_word(f)} or {UNRESOLVED}; "
                    f"values: sheet {SHEET_CODEBOOK}."
                )[:255]
            )
            dv.promptTitle = "Decision (several values)"
            dv.showInputMessage = True
            dv.showErrorMessage = False
            validations[f.name] = dv
            ws.add_data_validation(dv)
            continue
        dv = DataValidation(type="list", formula1=f"={lists[f.name]}", allow_blank=True, showDropDown=False)
        dv.error = f"Choose a value of {f.name} from the list (or {UNRESOLVED})."
        dv.errorTitle = "Not a value of the codebook"
        dv.prompt = f"Final {f.name}: pick a value, or {UNRESOLVED}. Leave blank to decide later."
        dv.promptTitle = "Decision"
        dv.showErrorMessage = True
        dv.showInputMessage = True
        validations[f.name] = dv
        ws.add_data_validation(dv)
    return validations


class _RowLayout:
    """Writes Disagreements rows: ``columns`` maps a record key to its (column, width)."""

    def __init__(self, ws, columns: dict[str, tuple[int, float]], links: dict) -> None:
        self.ws = ws
        self.pos = {k: j for k, (j, _) in columns.items()}
        self.links = links
        self.first_in, self.last_in = self.pos["decision"], self.pos["adjudicator"]
        self.input_cols = {self.pos["decision"], self.pos["reason"], self.pos["adjudicator"]}
        self.measured = [(k, w) for k, (_, w) in columns.items() if k != "key" and not k.startswith("link_")]
        self.styles = Styles(ws)

    def write(self, i: int, vals: dict[str, Any]) -> None:
        """Row ``i`` from record ``vals``: cells, styles, height, and a note on a text too long to show."""
        fill_hex = vals["_fill"]
        row_fill = PatternFill("solid", fgColor=fill_hex) if fill_hex else PatternFill()
        written: dict[str, str] = {}
        for key, j in self.pos.items():
            c = self.ws.cell(row=i, column=j)
            if key.startswith("link_") and self._link(c, vals["item_id"], key[len("link_") :], fill_hex, row_fill):
                continue
            if key == "agenda":
                c.value = int(vals["agenda"])
                written[key] = str(c.value)
            else:
                written[key] = set_text_cell(c, vals.get(key, ""))
            self._style(c, key, j, fill_hex, row_fill)
            if key == "decision":
                self._row_check(c, vals["key"])
        lines = {k: wrapped_lines(written.get(k, ""), w, limit=MAX_LINES + 1) for k, w in self.measured}
        h = lines_height(max(lines.values(), default=1))
        if h:
            self.ws.row_dimensions[i].height = h
        for k, n in lines.items():
            if n > MAX_LINES:
                self.ws.cell(row=i, column=self.pos[k]).comment = too_long_note(written[k])

    def _link(self, c, item: str, rater: str, fill_hex: str | None, row_fill: PatternFill) -> bool:
        """Cell ``c`` links to the rater's Label Studio task (False: no task known, a plain cell)."""
        url, task = self.links.get((item, rater), ("", ""))
        if not url:
            return False
        c.value = f"task {task}"
        c.data_type = "s"
        c.hyperlink = url
        self.styles.apply(
            c,
            ("link", fill_hex),
            font=font(color="0563C1", underline="single"),
            alignment=WRAP_TOP,
            border=BORDER,
            fill=row_fill,
        )
        return True

    def _row_check(self, c, row_key: str) -> None:
        """The Decision cell's per-row check: a near-black font colour derived from the row's key
        (:func:`goldboard.adjudicate.review_sheet.row_check_color`); a sort moves it with the value."""
        color = row_check_color(row_key)
        first, last = self.pos["decision"] == self.first_in, self.pos["decision"] == self.last_in
        self.styles.apply(
            c,
            ("decision", first, last, color),
            font=font(color=color),
            alignment=WRAP_TOP,
            border=input_border(first, last),
            fill=PatternFill("solid", fgColor=INPUT_FILL),
            protection=Protection(locked=False),
        )

    def _style(self, c, key: str, j: int, fill_hex: str | None, row_fill: PatternFill) -> None:
        """Fill-in cells white in an amber frame and unlocked; the key hidden; the rest in the row colour."""
        if j in self.input_cols:
            first, last = j == self.first_in, j == self.last_in
            self.styles.apply(
                c,
                ("input", first, last),
                alignment=WRAP_TOP,
                border=input_border(first, last),
                fill=PatternFill("solid", fgColor=INPUT_FILL),
                protection=Protection(locked=False),
            )
        elif key == "key":
            self.styles.apply(
                c, "key", alignment=WRAP_TOP, border=BORDER, protection=Protection(locked=True, hidden=True)
            )
        else:
            self.styles.apply(c, ("cell", fill_hex), alignment=WRAP_TOP, border=BORDER, fill=row_fill)


def _write_agreed(ws, agreed: Any, flags: Any, ratings: Any, rlist: list[str], schema: Schema) -> None:
    headers = ["Case ID", "Item ID", "Model", "Field", "Agreed value"] + [f"{r} rationale" for r in rlist]
    rat = {}
    names = ratings.columns if hasattr(ratings, "columns") else list(ratings)
    if len(ratings["item_id"]) and "rationale" in names:  # the last rationale given per item x rater
        for i, r, t in zip(ratings["item_id"], ratings["rater"], ratings["rationale"]):
            if str(t) != "":
                rat[(str(i), str(r))] = str(t)
    multi = {f.name: f for f in adjudicable_fields(schema) if f.kind == "multi"}
    rows = []
    for rec in _records(agreed):
        shown = (
            format_decision(multi[rec["field"]], rec["gold_value"])
            if rec["field"] in multi
            else (rec["gold_value"] or "(blank)")
        )
        rows.append(
            [_s(rec["case_id"]), _s(rec["item_id"]), _s(rec["model"]), _s(rec["field"]), _s(shown)]
            + [rat.get((rec["item_id"], r), "") for r in rlist]
        )
    bounds = [(9, 14, 1), (9, 16, 1), (8, 14, 1), (9, 18, 1), (12, 24, 1)]
    widths = [fit_width((row[j] for row in rows), lo, hi, n) for j, (lo, hi, n) in enumerate(bounds)]
    widths += [fit_width((t for row in rows for t in row[len(bounds) :]), 20, 40, 4)] * len(rlist)
    header_row(ws, headers, widths)
    styles = Styles(ws)
    for i, row in enumerate(rows, start=2):
        written = []
        for j, v in enumerate(row, start=1):
            c = ws.cell(row=i, column=j)
            written.append(set_text_cell(c, v))
            styles.apply(c, "wrap", alignment=WRAP_TOP)
        h = row_height(list(zip(written, widths)))
        if h:
            ws.row_dimensions[i].height = h
    page_setup(ws, "A2")
    protect(ws)


def _write_codebook(ws, schema: Schema) -> None:
    headers = ["Field", "Kind", "Value", "Definition", "Hint", "Aliases"]
    names = [f.name for f in schema.fields] + [b.name for b in schema.boundaries] + [t.label for t in schema.triggers]
    values = [v.value for f in schema.fields for v in (f.values or [])] + ["(free text)"]
    column_b = (
        [f.kind for f in schema.fields]
        + [b.field for b in schema.boundaries]
        + [x for t in schema.triggers for x in (t.kind, t.field)]
    )
    widths = [fit_width(names, 12, 28), fit_width(column_b, 8, 18), fit_width(values, 12, 36), 60.0, 36.0, 20.0]
    header_row(ws, headers, widths)
    r = 2

    def put(values: list[Any]) -> None:
        nonlocal r
        written = []
        for j, v in enumerate(values, start=1):
            c = ws.cell(row=r, column=j)
            written.append(set_text_cell(c, v))
            c.alignment = WRAP_TOP
        h = row_height(list(zip(written, widths)))
        if h:
            ws.row_dimensions[r].height = h
        r += 1

    def title(values: list[str]) -> None:
        nonlocal r
        for j, h in enumerate(values, start=1):
            c = ws.cell(row=r, column=j)
            set_text_cell(c, h)
            c.font = font(bold=True)
            c.fill = PatternFill("solid", fgColor=SUBHEADER_FILL)
        r += 1

    for f in schema.fields:
        if not f.values:
            put([f.name, f.kind, "(free text)", f.description or f.title, "", ""])
            continue
        for v in f.values:
            hint = v.hint if v.hint != v.description else ""
            put([f.name, f.kind, v.value, v.description, hint, ", ".join(v.aliases)])
    r += 1
    if schema.boundaries:
        title(["Boundary", "Field", "Side A", "Side B", "Explanation", "Priority"])
        for b in schema.boundaries:
            put([b.name, b.field, ", ".join(b.a), ", ".join(b.b), b.explanation, str(b.priority)])
        r += 1
    if schema.triggers:
        title(["Trigger", "Kind", "Field", "Parameter", "Explanation", "Priority"])
        for t in schema.triggers:
            param = (
                f"min gap {t.min_gap}"
                if t.min_gap
                else f"at {t.at}"
                if t.at
                else f"at most {t.at_most}"
                if t.at_most
                else ""
            )
            put([t.label, t.kind, t.field, param, t.explanation, str(t.priority)])
    page_setup(ws, "A2", autofilter=False)
    protect(ws)


#: Summary column widths (A: labels, field and boundary names; H: explanations)
_SUMMARY_WIDTHS = {"A": 40, "B": 30, "C": 13, "D": 13, "E": 13, "F": 13, "G": 16, "H": 56}


def _write_summary(
    ws,
    schema: Schema,
    info: dict,
    rlist: list[str],
    summary: dict,
    agreement_rows: list[dict],
    agreement_note: str,
    boundary_fill: dict,
    n_items: int,
    n_agreed: int,
    stamp: str,
) -> None:
    """The Summary sheet, top to bottom: title and study facts, how to use the sheet, agreement
    before adjudication, disagreements per boundary, flags per kind and per trigger."""
    for col, w in _SUMMARY_WIDTHS.items():
        ws.column_dimensions[col].width = w
    s = _SummarySheet(ws)
    c = s.cell(s.r, 1, f"Adjudication review — {schema.title}")
    c.font = font(bold=True, size=14)
    s.r += 2
    s.facts(
        [
            ("Study", info.get("study", "")),
            ("Workspace", info.get("workspace", "")),
            ("Schema", f"{schema.name} v{schema.version}"),
            ("Raters", ", ".join(rlist)),
            ("Round", str(info.get("round", ""))),
            ("Items rated", n_items),
            ("Items to discuss", summary["items_flagged"]),
            ("Item x field rows to decide", summary["rows"]),
            ("Unanimous item x field rows (sheet Agreed)", n_agreed),
            ("Generated", stamp),
            ("goldboard", __version__),
        ]
    )
    s.r += 1
    s.section("How to use")
    for line in _how_to_lines(schema):
        s.span(s.r, 1, "• " + line)
        s.r += 1
    s.r += 1
    s.agreement(agreement_rows, agreement_note)
    s.r += 1
    s.boundaries(summary["by_boundary"], boundary_fill, schema)
    s.r += 1
    s.section("Flags per kind (item x field rows)")
    s.counts(summary["by_kind"], label=lambda kind: kind.replace("_", " "))
    if summary["by_trigger"]:
        s.r += 1
        s.section("Schema triggers (item x field rows)")
        s.counts(summary["by_trigger"])
    page_setup(ws, None, autofilter=False, title_rows=False)
    ws.print_area = f"A1:{get_column_letter(s.last)}{max(s.r - 1, 1)}"


def _how_to_lines(schema: Schema) -> list[str]:
    """The Summary's "How to use" bullets (one per multi-select field among them)."""
    multi_lines = [
        multi_decision_help(f) + " (No dropdown for these rows.)"
        for f in adjudicable_fields(schema)
        if f.kind == "multi"
    ]
    return [
        "In sheet Disagreements, fill the amber-headed columns: pick a Decision from the dropdown "
        "(or 'unresolved'), give a Reason, and name the Adjudicator.",
        *multi_lines,
        "A Reason is required when the decision differs from every rater. Blank decisions stay unresolved.",
        "Do not edit Case ID, Item ID or Field: the hidden key column detects edits and the import refuses them.",
        "The sheet is protected (no password) so no decision can move to another item: use the filter buttons "
        "rather than sorting; the import refuses a sheet whose protection was removed.",
        "A text longer than its row can show carries a note (red corner): select the cell to read all of it.",
        "Changing a decision already taken (pre-filled here) needs a new Reason.",
        "Import: goldboard adjudicate import --study DIR review.xlsx --adjudicator NAME [--not-independent]",
        "Decisions made after this sheet was written (in a newer sheet or in Label Studio) are not overwritten: "
        "the import lists them as conflicts and imports nothing; write a fresh sheet, or add --overrule-newer.",
    ]


class _SummarySheet:
    """Writes the Summary sheet row by row; ``r`` is the next row to write."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.last = len(_SUMMARY_WIDTHS)
        self.center = Alignment(horizontal="center", vertical="top")
        self.r = 1

    def cell(
        self,
        row: int,
        col: int,
        v: Any,
        *,
        bold: bool = False,
        align: Alignment = TOP,
        fill: str | None = None,
        fmt: str | None = None,
    ):
        """One cell: a number as a number, anything else as text."""
        c = self.ws.cell(row=row, column=col)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            c.value = v
        else:
            set_text_cell(c, v)
        c.alignment = align
        c.font = font(bold=bold)
        if fill:
            c.fill = PatternFill("solid", fgColor=fill)
        if fmt:
            c.number_format = fmt
        return c

    def span(self, row: int, col: int, v: Any, *, bold: bool = False, wrap: bool = True, to: int | None = None) -> None:
        """``v`` across columns ``col``..``to`` (merged), wrapped, the row as tall as the text."""
        to = self.last if to is None else to
        self.cell(row, col, v, bold=bold, align=Alignment(horizontal="left", vertical="top", wrap_text=wrap))
        if to > col:
            self.ws.merge_cells(start_row=row, start_column=col, end_row=row, end_column=to)
        width = sum(_SUMMARY_WIDTHS[get_column_letter(j)] for j in range(col, to + 1))
        h = lines_height(wrapped_lines(cell_text(v), width, bold=bold)) if wrap else None
        if h and h > (self.ws.row_dimensions[row].height or 0):
            self.ws.row_dimensions[row].height = h

    def section(self, text: str) -> None:
        """A section title on the next row."""
        c = self.cell(self.r, 1, text)
        c.font = font(bold=True, size=12)
        self.r += 1

    def table_head(self, heads: list[str], numeric: set[int]) -> None:
        """A table's header row on the current row (``numeric`` columns centred)."""
        for j, h in enumerate(heads, start=1):
            self.cell(
                self.r,
                j,
                h,
                bold=True,
                fill=SUBHEADER_FILL,
                align=Alignment(horizontal="center" if j in numeric else "left", vertical="top", wrap_text=True),
            )

    def facts(self, pairs: list[tuple[str, Any]]) -> None:
        """Label / value rows (a blank value is left out)."""
        for label, value in pairs:
            if value == "":
                continue
            self.cell(self.r, 1, label, bold=True)
            self.span(self.r, 2, value)
            self.r += 1

    def agreement(self, rows: list[dict], note: str) -> None:
        """Agreement before adjudication: one row per field x statistic, or why there is none."""
        self.section("Agreement before adjudication (95% CI)")
        if rows:
            self.table_head(
                ["Field", "Statistic", "Value", "95% CI low", "95% CI high", "Items", "CI method"], {3, 4, 5, 6}
            )
            self.r += 1
            for a in rows:
                self.cell(self.r, 1, a.get("field", ""))
                self.cell(self.r, 2, _stat_label(a))
                for j, k in ((3, "value"), (4, "ci_low"), (5, "ci_high")):
                    self.cell(self.r, j, number_cell(a.get(k)), align=self.center, fmt="0.000")
                self.cell(self.r, 6, a.get("n_items") if a.get("n_items") is not None else "", align=self.center)
                self.cell(self.r, 7, a.get("ci_method") or "")
                self.r += 1
        else:
            self.span(self.r, 1, note or "No agreement statistics available.")
            self.r += 1
        if rows and note:
            self.span(self.r, 1, f"Not computed: {note}")
            self.r += 1

    def boundaries(self, by_boundary: dict, boundary_fill: dict, schema: Schema) -> None:
        """Disagreements per named boundary, each name in its row colour."""
        self.section("Disagreements per named boundary (row colour in sheet Disagreements)")
        if by_boundary:
            self.table_head(
                ["Boundary", "Field", "Disagreements", "Of (on field)", "Share", "Priority", "Explanation"],
                {3, 4, 5, 6},
            )
            self.ws.merge_cells(start_row=self.r, start_column=7, end_row=self.r, end_column=self.last)
        else:
            self.span(self.r, 1, f"Schema {schema.name} names no boundaries.")
        self.r += 1
        for name, b in by_boundary.items():
            r = self.r
            self.cell(r, 1, name, fill=boundary_fill.get(name, "FFFFFF"))
            self.cell(r, 2, b["field"])
            self.cell(r, 3, b["count"], align=self.center)
            self.cell(r, 4, b["of"], align=self.center)
            self.cell(r, 5, "" if b["share"] is None else float(b["share"]), align=self.center, fmt="0%")
            self.cell(r, 6, b["priority"], align=self.center)
            self.span(r, 7, b["explanation"])
            self.r += 1

    def counts(self, counts: dict, label=lambda name: name) -> None:
        """Name / count rows (the count left-aligned)."""
        for name, n in counts.items():
            self.cell(self.r, 1, label(name))
            self.cell(self.r, 2, n, align=Alignment(horizontal="left", vertical="top"))
            self.r += 1


def _write_meta(ws, schema: Schema, info: dict, rlist: list[str], stamp: str, state=()) -> None:
    rows = [
        ("format", SHEET_FORMAT),
        ("schema", schema.name),
        ("schema_version", schema.version),
        ("study", str(info.get("study", ""))),
        ("raters", ",".join(rlist)),
        ("round", str(info.get("round", ""))),
        ("generated_at", stamp),
        ("goldboard_version", __version__),
        *state,
    ]
    for i, (k, v) in enumerate(rows, start=1):
        set_text_cell(ws.cell(row=i, column=1), k)
        set_text_cell(ws.cell(row=i, column=2), v)
    protect(ws)


__all__ = [
    "BOUNDARY_FILLS",
    "ReviewContent",
    "WorkbookInfo",
    "build_review_workbook",
    "multi_decision_help",
    "task_url",
    "write_review_workbook",
]


def _norm(text: Any) -> str:
    return "".join(cell_text(text).split()).casefold() if text is not None else ""


def _decision_key(f: Any, text: Any) -> str:
    """A Decision cell as the import would read it (a single choice by its schema value, a set by its
    canonical ``|``-joined form), for comparing with the log; the cell's own text when it cannot be."""
    raw = cell_text(text).strip() if text is not None else ""
    if not raw or f is None:
        return _norm(raw)
    if f.kind == "multi":
        value, problems = parse_multi_decision(f, raw)
        return _norm(raw) if problems or value is None else "=" + value
    try:
        return "=" + f.normalize(raw)
    except ValueError:
        return _norm(raw)


def unimported_decisions(path: str | Path, schema: Schema, decisions: Sequence[dict]) -> list[str]:
    """The Disagreements cells of an existing review workbook at ``path`` that hold a Decision or
    Reason the decisions log does not have in force (typed in a meeting, not yet imported), as
    ``Disagreements!F7`` -- in a copy of the sheet too (``'Disagreements (2)'!F7``,
    :func:`~goldboard.adjudicate.review_sheet.disagreements_copies`).  ``[]`` when ``path`` is
    no goldboard review workbook (or cannot be read): such a file is replaced as any output is."""
    from openpyxl import load_workbook

    try:
        wb = load_workbook(path, read_only=True, data_only=True)
    except Exception:  # not an xlsx (or damaged): not a filled review sheet  # noqa: BLE001
        return []
    try:
        if SHEET_DISAGREEMENTS not in wb.sheetnames:
            return []
        latest = latest_decisions(decisions)
        fields = {f.name: f for f in adjudicable_fields(schema)}
        found = []
        for i, name in enumerate([SHEET_DISAGREEMENTS, *disagreements_copies(wb)]):
            ref = name if i == 0 else "'" + name.replace("'", "''") + "'"
            found += _typed_cells(wb[name].iter_rows(values_only=True), ref, latest, fields)
        return found
    finally:
        wb.close()


def _typed_cells(rows, ref: str, latest: dict, fields: dict) -> list[str]:
    """:func:`unimported_decisions` for one sheet's rows (header first); ``ref``: its name in a cell reference."""
    header = [cell_text(v).strip() if v is not None else "" for v in next(rows, ())]
    col = {k: header.index(HEADERS[k]) for k in ("key", "decision", "reason") if HEADERS[k] in header}
    if len(col) < 3:
        return []
    found = []
    for n, row in enumerate(rows, start=2):
        cells = {k: (row[c] if c < len(row) else None) for k, c in col.items()}
        parsed = parse_key(cells["key"])
        if parsed is None:
            continue
        prev = latest.get((parsed[0], parsed[1]))
        f = fields.get(parsed[1])
        had = _decision_key(f, format_decision(f, str(prev["decision"]))) if prev else ""
        typed = {"decision": _decision_key(f, cells["decision"]), "reason": _norm(cells["reason"])}
        for k, written in (("decision", had), ("reason", _norm((prev or {}).get("reason") or ""))):
            if typed[k] and typed[k] != written:
                found.append(f"{ref}!{get_column_letter(col[k] + 1)}{n}")
                break
    return found
