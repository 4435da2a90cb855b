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
                   Rows are filled with their boundary's colour.
``Agreed``         unanimous item x field rows, sheet-protected (read-only).
``Codebook``       every field's values with definitions (multi-select values included),
                   the boundaries and triggers.
``_lists``         (hidden) dropdown values of the single-choice fields;  ``_goldboard``
                   (hidden) sheet metadata.

A multi-select rating is shown as its values ``|``-joined in schema order, and the
empty set as ``none`` (``(missing)`` when the rater has no rating).

Untrusted text (case text, model outputs, rationales, ids) goes through
:func:`goldboard.exports.sanitize.set_text_cell`: formula starts are neutralised,
the cell is typed as a string, text is cut at Excel's 32,767-character cell limit
with a visible marker.  The file is written atomically.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd
from openpyxl import Workbook
from openpyxl.comments import Comment
from openpyxl.styles import Alignment, Border, Font, PatternFill, Protection, Side
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.datavalidation import DataValidation

from goldboard import __version__
from goldboard.adjudicate.decisions import (
    HEADERS, SHEET_DISAGREEMENTS, SHEET_FORMAT, SHEET_META, UNRESOLVED, empty_set_word, format_decision,
    latest_decisions, make_key, multi_separators,
)
from goldboard.adjudicate.flags import adjudicable_fields, flag_disagreements, summarize_flags
from goldboard.adjudicate.gold import resolve_gold
from goldboard.exports.sanitize import set_text_cell
from goldboard.fileio import atomic_write
from goldboard.label_configs.schema import Schema

SHEET_SUMMARY = "Summary"
SHEET_AGREED = "Agreed"
SHEET_CODEBOOK = "Codebook"
SHEET_LISTS = "_lists"

#: row fills per boundary, in schema order (colour-blind-friendly light tints)
BOUNDARY_FILLS = ["F8CBAD", "FFE699", "C6E0B4", "BDD7EE", "D9C3E9", "F4B6C2", "C9C9C9", "B4E5E1"]
INPUT_FILL = "FFF9DB"
HEADER_FILL = "1F3864"
MAX_ROW_HEIGHT = 150.0  # points; long texts stay readable by widening/expanding the row

_WRAP_TOP = Alignment(wrap_text=True, vertical="top")
_TOP = Alignment(vertical="top")
_THIN = Side(style="thin", color="BFBFBF")
_BORDER = Border(left=_THIN, right=_THIN, top=_THIN, bottom=_THIN)


class _Styles:
    """Reuse one registered style per look: setting fonts/fills cell by cell makes openpyxl
    hash every style object again (the dominant cost on large sheets)."""

    def __init__(self, ws) -> None:
        from openpyxl.cell.cell import Cell

        self._scratch = lambda: Cell(ws, row=1, column=1)  # detached: never written
        self._cache: dict[Any, Any] = {}

    def apply(self, cell, key: Any, **attrs: Any) -> None:
        from copy import copy

        arr = self._cache.get(key)
        if arr is None:
            tmp = self._scratch()
            for name, value in attrs.items():
                setattr(tmp, name, value)
            arr = self._cache[key] = tmp._style
        cell._style = copy(arr)


def _runs(column: str, rows: list[int]) -> str:
    """``F2:F5 F9`` for rows 2,3,4,5,9 (a data validation's range, built once)."""
    out = []
    rows = sorted(rows)
    start = prev = None
    for r in rows + [None]:
        if start is not None and (r is None or r != prev + 1):
            out.append(f"{column}{start}" if start == prev else f"{column}{start}:{column}{prev}")
            start = None
        if r is not None and start is None:
            start = r
        prev = r
    return " ".join(out)


@dataclass
class WorkbookInfo:
    path: Path
    disagreement_rows: int
    items: int
    agreed_rows: int
    agreement_available: bool


def task_url(base_url: str, project_id: Any, task_id: Any) -> str:
    """Link to a task in the Label Studio data manager ("" when anything is unknown)."""
    p, t = str(project_id or "").strip(), str(task_id or "").strip()
    if not base_url or not p.isdigit() or not t.isdigit():
        return ""
    return f"{base_url.rstrip('/')}/projects/{p}/data?task={t}"


#: statistics shown on the Summary sheet (the agreement engine computes more)
HEADLINE_STATISTICS = ("percent_agreement", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha")
_STAT_NAMES = {"percent_agreement": "Percent agreement", "cohen_kappa": "Cohen's kappa",
               "fleiss_kappa": "Fleiss' kappa", "krippendorff_alpha": "Krippendorff's alpha"}


def headline_agreement(ratings: pd.DataFrame, schema: Schema, raters: Sequence[str] | None = None
                       ) -> tuple[list[dict], str]:
    """Headline agreement per adjudicable field from the agreement engine
    (:func:`goldboard.analysis.agreement.agreement`): percent agreement, Cohen's kappa
    (two raters; weighted too for ordinal fields) or Fleiss' kappa, Krippendorff's alpha;
    all raters together, no strata.

    Returns ``(rows, note)``; ``rows`` is empty with an explanatory ``note`` when the
    engine is not installed or fails on these ratings (the workbook is still written).
    """
    try:
        from goldboard.analysis.agreement import agreement
    except ImportError:
        return [], "Agreement engine not available in this installation; run `goldboard agree`."
    from goldboard.adjudicate.flags import current_ratings

    cur = current_ratings(ratings)
    rows, notes = [], []
    for f in adjudicable_fields(schema):
        if f.kind == "multi":  # agreement is per value (present/absent): `goldboard agree`, the report
            continue
        sub = cur[cur["field"] == f.name]
        if sub["rater"].nunique() < 2:
            continue
        try:
            res = agreement(cur, f.name, schema=schema, raters=list(raters) if raters else None)
        except Exception as exc:  # the Summary must not fail because one statistic does
            notes.append(f"{f.name}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        n_raters = res.get("n_raters")
        for st in res.get("statistics", []) or []:
            if st.get("statistic") not in HEADLINE_STATISTICS or st.get("group") not in (None, ""):
                continue
            if n_raters and len(st.get("raters") or []) not in (0, n_raters):
                continue  # pairwise rows of a multi-rater study
            rows.append({"field": f.name, **st})
    return rows, "; ".join(notes)


def _stat_label(row: dict) -> str:
    name = _STAT_NAMES.get(str(row.get("statistic")), str(row.get("statistic", "")))
    w = row.get("weights")
    if row.get("statistic") == "krippendorff_alpha" and row.get("level"):
        return f"{name} ({row['level']})"
    if w and w != "none":
        return f"{name} ({w} weights)"
    return name


# --------------------------------------------------------------------------- building


def build_review_workbook(ratings: pd.DataFrame, schema: Schema, *, raters: Sequence[str] | None = None,
                          units: pd.DataFrame | None = None, decisions: Iterable[dict] = (),
                          base_url: str = "", study_info: dict[str, Any] | None = None,
                          agreement_rows: list[dict] | None = None, agreement_note: str = "",
                          now: str | None = None) -> tuple[Workbook, dict[str, Any]]:
    """Build the review workbook in memory.  Returns ``(workbook, counts)``.

    ``units`` (item_id, case_text, output_text) supplies the case summary and model
    output; ``decisions`` (the log) pre-fills decisions already taken, so a sheet
    regenerated mid-adjudication re-imports as a no-op; ``base_url`` makes links to
    the raters' tasks; ``agreement_rows`` overrides the engine call.
    """
    decisions = list(decisions)
    flags = flag_disagreements(ratings, schema, raters)
    summary = summarize_flags(flags, schema)
    gold = resolve_gold(ratings, schema, (), raters)
    rlist = [c[len("value_"):] for c in flags.columns if c.startswith("value_")] or \
        [c[len("value_"):] for c in gold.columns if c.startswith("value_")]
    if agreement_rows is None:
        agreement_rows, agreement_note = headline_agreement(ratings, schema, raters)
    unit_text = _unit_texts(units)
    links = _task_links(ratings, base_url)
    latest = latest_decisions(decisions)
    stamp = now or _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
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
    agreed = gold[(gold["method"] == "unanimous")]
    flagged_keys = set(zip(flags["item_id"], flags["field"]))
    agreed = agreed[[(i, f) not in flagged_keys for i, f in zip(agreed["item_id"], agreed["field"])]]
    _write_agreed(ws_agr, agreed, flags, ratings, rlist, schema)
    _write_codebook(ws_code, schema)
    _write_summary(ws_sum, schema, info, rlist, summary, agreement_rows, agreement_note, boundary_fill,
                   len(gold["item_id"].unique()), len(agreed), stamp)
    _write_meta(ws_meta, schema, info, rlist, stamp)
    ws_lists.sheet_state = "hidden"
    ws_meta.sheet_state = "hidden"
    wb.active = 1  # open on Disagreements
    counts = {"disagreement_rows": len(flags), "items": int(flags["item_id"].nunique()) if len(flags) else 0,
              "agreed_rows": len(agreed), "agreement_available": bool(agreement_rows)}
    return wb, counts


def write_review_workbook(path: str | Path, ratings: pd.DataFrame, schema: Schema, **kwargs) -> WorkbookInfo:
    """Build the workbook (see :func:`build_review_workbook`) and write it atomically."""
    path = Path(path)
    wb, counts = build_review_workbook(ratings, schema, **kwargs)
    with atomic_write(path, "wb", encoding=None) as fh:
        wb.save(fh)
    return WorkbookInfo(path=path, **counts)


def write_study_workbook(study, path: str | Path, *, round: int | None = None, now: str | None = None) -> WorkbookInfo:
    """The review workbook of a study workspace (its ratings, units, decisions, server URL)."""
    from goldboard.adjudicate.decisions import read_decisions
    from goldboard.adjudicate.flags import study_ratings

    ratings = study_ratings(study, round)
    info = {"study": study.name, "workspace": str(study.path), "round": "all (latest per item)" if round is None else round}
    return write_review_workbook(path, ratings, study.schema, raters=study.raters, units=study.units(),
                                 decisions=read_decisions(study.decisions_path), base_url=study.url,
                                 study_info=info, now=now)


# --------------------------------------------------------------------------- sheets


def _unit_texts(units: pd.DataFrame | None) -> dict[str, tuple[str, str]]:
    if units is None or len(units) == 0 or "item_id" not in units.columns:
        return {}
    case = units["case_text"] if "case_text" in units.columns else pd.Series([""] * len(units))
    out = units["output_text"] if "output_text" in units.columns else pd.Series([""] * len(units))
    return {str(i): (_s(c), _s(o)) for i, c, o in zip(units["item_id"], case, out)}


def _s(v: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v)


def _task_links(ratings: pd.DataFrame, base_url: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(item_id, rater) -> (url, task id) of the rater's Label Studio task."""
    if not base_url or "task_id" not in ratings.columns or "project_id" not in ratings.columns:
        return {}
    out = {}
    sub = ratings[["item_id", "rater", "task_id", "project_id"]].astype(str).drop_duplicates(["item_id", "rater"], keep="last")
    for item, rater, task, proj in sub.itertuples(index=False):
        url = task_url(base_url, proj, task)
        if url:
            out[(item, rater)] = (url, task)
    return out


def _header(ws, headers: list[str], widths: list[float]) -> None:
    for j, (h, w) in enumerate(zip(headers, widths), start=1):
        c = ws.cell(row=1, column=j)
        set_text_cell(c, h)
        c.font = Font(bold=True, color="FFFFFF")
        c.fill = PatternFill("solid", fgColor=HEADER_FILL)
        c.alignment = Alignment(wrap_text=True, vertical="center")
        c.border = _BORDER
        ws.column_dimensions[get_column_letter(j)].width = w
    ws.row_dimensions[1].height = 30


def _page_setup(ws, freeze: str) -> None:
    ws.freeze_panes = freeze
    if ws.max_row >= 1 and ws.max_column >= 1:
        ws.auto_filter.ref = f"A1:{get_column_letter(ws.max_column)}{max(ws.max_row, 1)}"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    ws.print_title_rows = "1:1"
    ws.oddFooter.center.text = "&A — page &P of &N"
    ws.oddHeader.right.text = "goldboard review"


def _row_height(texts: list[tuple[str, float]]) -> float | None:
    """Rough height for wrapped text: lines needed by the fullest cell, 15 pt a line."""
    lines = 1
    for text, width in texts:
        if not text:
            continue
        per = max(int(width * 1.15), 1)
        n = sum(max(1, math.ceil(len(part) / per)) for part in text.split("\n"))
        lines = max(lines, n)
    return None if lines <= 1 else min(15.0 * lines, MAX_ROW_HEIGHT)


def _single_choice_fields(schema: Schema):
    return [f for f in adjudicable_fields(schema) if f.kind != "multi"]


def multi_decision_help(f) -> str:
    """How to fill the Decision cell of multi-select field ``f`` (one line)."""
    seps = [f'"{x}"' for x in multi_separators(f) if x != "\n"]
    sep_text = seps[0] if len(seps) == 1 else ", ".join(seps[:-1]) + " or " + seps[-1]
    return (f"{f.name} (multi-select): type all values that apply, separated by {sep_text} "
            f"({', '.join(f.categories)}); {empty_set_word(f)} = none apply; {UNRESOLVED} = leave open.")


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


def _flag_text(rec: dict) -> str:
    """``gap 3, crosses threshold, disagree; triggers: ...; priority 1`` (boundary has its own column)."""
    words = []
    for k in rec["kinds"]:
        if k == "boundary":
            continue
        if k == "gap":
            words.append(f"gap {int(rec['gap'])}")
        elif k == "threshold":
            words.append("crosses threshold")
        elif k == "low_confidence":
            words.append("low confidence: " + ", ".join(rec.get("low_confidence_raters") or []))
        elif k == "missing":
            words.append("missing: " + ", ".join(rec.get("missing_raters") or []))
        else:
            words.append(k.replace("_", " "))
    parts = [", ".join(words)] if words else []
    if rec.get("triggers"):
        parts.append("triggers: " + ", ".join(rec["triggers"]))
    parts.append(f"priority {rec['priority']}")
    return "; ".join(parts)


def _write_disagreements(ws, flags: pd.DataFrame, schema: Schema, rlist: list[str],
                         unit_text: dict, links: dict, latest: dict, boundary_fill: dict, lists: dict) -> None:
    H = HEADERS
    cols: list[tuple[str, str, float]] = [
        ("agenda", H["agenda"], 5), ("case_id", H["case_id"], 14), ("item_id", H["item_id"], 16),
        ("model", H["model"], 14), ("field", H["field"], 16), ("decision", H["decision"], 24),
        ("reason", H["reason"], 40), ("adjudicator", H["adjudicator"], 14), ("flags", H["flags"], 30),
        ("boundary", H["boundary"], 24),
    ]
    for r in rlist:
        cols += [(f"value_{r}", f"{r} value", 18), (f"rationale_{r}", f"{r} rationale", 40)]
    cols += [("case_text", H["case_text"], 60), ("output_text", H["output_text"], 60)]
    if links:
        cols += [(f"link_{r}", f"{r} task (Label Studio)", 14) for r in rlist]
    cols += [("key", H["key"], 12)]
    _header(ws, [c[1] for c in cols], [c[2] for c in cols])
    pos = {k: j for j, (k, _, _) in enumerate(cols, start=1)}
    input_cols = {pos["decision"], pos["reason"], pos["adjudicator"]}
    note = [f"Single-choice fields: pick a value from the dropdown, or {UNRESOLVED}. Blank = decide later."]
    note += [multi_decision_help(f) for f in adjudicable_fields(schema) if f.kind == "multi"]
    comment = Comment("\n".join(note), "goldboard")
    comment.width, comment.height = 320, 60 + 40 * len(note)
    ws.cell(row=1, column=pos["decision"]).comment = comment
    validations: dict[str, DataValidation] = {}
    kinds = {f.name: f for f in adjudicable_fields(schema)}
    for f in adjudicable_fields(schema):
        if f.kind == "multi":  # free text: an input message only, no list
            dv = DataValidation(allow_blank=True)
            help_text = multi_decision_help(f)
            dv.prompt = help_text if len(help_text) <= 255 else (
                f"Type the values of {f.name} separated by |, {empty_set_word(f)} or {UNRESOLVED}; "
                f"values: sheet {SHEET_CODEBOOK}.")[:255]
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

    styles = _Styles(ws)
    dv_rows: dict[str, list[int]] = {}
    for i, rec in enumerate(flags.to_dict(orient="records"), start=2):
        item, fname = str(rec["item_id"]), str(rec["field"])
        case_text, output_text = unit_text.get(item, ("", ""))
        prev = latest.get((item, fname))
        fld = kinds.get(fname)
        vals: dict[str, Any] = {
            "agenda": rec["agenda"], "case_id": rec["case_id"], "item_id": item, "model": rec["model"],
            "field": fname, "flags": _flag_text(rec), "boundary": ", ".join(rec["boundaries"]),
            "case_text": case_text, "output_text": output_text,
            "key": make_key(item, fname, str(rec["case_id"])),
            "decision": format_decision(fld, str(prev["decision"])) if prev else "",
            "reason": (prev.get("reason") or "") if prev else "",
            "adjudicator": (prev.get("adjudicator") or "") if prev else "",
        }
        for r in rlist:
            v = rec.get(f"value_{r}", "") or ""
            if r in rec["missing_raters"]:
                v = v or "(missing)"
            elif fld is not None and fld.kind == "multi":
                v = format_decision(fld, v)  # the empty set reads "none"
            vals[f"value_{r}"] = v
            vals[f"rationale_{r}"] = rec.get(f"rationale_{r}", "")
        fill_hex = boundary_fill.get(rec["boundaries"][0]) if rec["boundaries"] else None
        for key, j in pos.items():
            c = ws.cell(row=i, column=j)
            if key.startswith("link_"):
                url, task = links.get((item, key[len("link_"):]), ("", ""))
                if url:
                    c.value = f"task {task}"
                    c.data_type = "s"
                    c.hyperlink = url
                    styles.apply(c, ("link", fill_hex), font=Font(color="0563C1", underline="single"),
                                 alignment=_WRAP_TOP, border=_BORDER,
                                 fill=PatternFill("solid", fgColor=fill_hex) if fill_hex else PatternFill())
                    continue
            if key == "agenda":
                c.value = int(vals["agenda"])
            else:
                set_text_cell(c, vals.get(key, ""))
            if j in input_cols:
                styles.apply(c, "input", alignment=_WRAP_TOP, border=_BORDER,
                             fill=PatternFill("solid", fgColor=INPUT_FILL), protection=Protection(locked=False))
            elif key == "key":
                styles.apply(c, "key", alignment=_WRAP_TOP, border=_BORDER,
                             protection=Protection(locked=True, hidden=True))
            else:
                styles.apply(c, ("cell", fill_hex), alignment=_WRAP_TOP, border=_BORDER,
                             fill=PatternFill("solid", fgColor=fill_hex) if fill_hex else PatternFill())
        dv_rows.setdefault(fname, []).append(i)
        h = _row_height([(str(vals.get(k, "")), w) for k, _, w in cols if k not in ("key",) and not k.startswith("link_")])
        if h:
            ws.row_dimensions[i].height = h
    from openpyxl.worksheet.cell_range import MultiCellRange

    dcol = get_column_letter(pos["decision"])
    for fname, dv in validations.items():
        if dv_rows.get(fname):
            dv.sqref = MultiCellRange(_runs(dcol, dv_rows[fname]))
        else:
            ws.data_validations.dataValidation.remove(dv)
    ws.column_dimensions[get_column_letter(pos["key"])].hidden = True
    _page_setup(ws, "F2")


def _write_agreed(ws, agreed: pd.DataFrame, flags: pd.DataFrame, ratings: pd.DataFrame, rlist: list[str],
                  schema: Schema) -> None:
    headers = ["Case ID", "Item ID", "Model", "Field", "Agreed value"] + [f"{r} rationale" for r in rlist]
    widths = [14, 16, 14, 16, 24] + [40] * len(rlist)
    _header(ws, headers, widths)
    rat = {}
    if len(ratings) and "rationale" in ratings.columns:
        sub = ratings[ratings["rationale"].astype(str) != ""].drop_duplicates(["item_id", "rater"], keep="last")
        rat = {(str(i), str(r)): str(t) for i, r, t in zip(sub["item_id"], sub["rater"], sub["rationale"])}
    styles = _Styles(ws)
    multi = {f.name: f for f in adjudicable_fields(schema) if f.kind == "multi"}
    for i, rec in enumerate(agreed.to_dict(orient="records"), start=2):
        shown = format_decision(multi[rec["field"]], rec["gold_value"]) if rec["field"] in multi else \
            (rec["gold_value"] or "(blank)")
        row = [rec["case_id"], rec["item_id"], rec["model"], rec["field"], shown]
        row += [rat.get((rec["item_id"], r), "") for r in rlist]
        for j, v in enumerate(row, start=1):
            c = ws.cell(row=i, column=j)
            set_text_cell(c, v)
            styles.apply(c, "wrap", alignment=_WRAP_TOP)
        h = _row_height([(str(v), w) for v, w in zip(row, widths)])
        if h:
            ws.row_dimensions[i].height = h
    _page_setup(ws, "A2")
    _protect(ws)


def _protect(ws) -> None:
    """Read-only without a password; filtering and column widths stay usable."""
    ws.protection.sheet = True
    ws.protection.autoFilter = False
    ws.protection.formatColumns = False
    ws.protection.formatRows = False
    ws.protection.sort = False


def _write_codebook(ws, schema: Schema) -> None:
    headers = ["Field", "Kind", "Value", "Definition", "Hint", "Aliases"]
    widths = [18, 10, 26, 70, 40, 24]
    _header(ws, headers, widths)
    r = 2
    for f in schema.fields:
        if not f.values:
            rows = [[f.name, f.kind, "(free text)", f.description or f.title, "", ""]]
        else:
            rows = [[f.name, f.kind, v.value, v.description, v.hint if v.hint != v.description else "",
                     ", ".join(v.aliases)] for v in f.values]
        for row in rows:
            for j, v in enumerate(row, start=1):
                c = ws.cell(row=r, column=j)
                set_text_cell(c, v)
                c.alignment = _WRAP_TOP
            r += 1
    r += 1
    if schema.boundaries:
        for j, h in enumerate(["Boundary", "Field", "Side A", "Side B", "Explanation", "Priority"], start=1):
            c = ws.cell(row=r, column=j)
            set_text_cell(c, h)
            c.font = Font(bold=True)
        r += 1
        for b in schema.boundaries:
            for j, v in enumerate([b.name, b.field, ", ".join(b.a), ", ".join(b.b), b.explanation, str(b.priority)], start=1):
                c = ws.cell(row=r, column=j)
                set_text_cell(c, v)
                c.alignment = _WRAP_TOP
            r += 1
        r += 1
    if schema.triggers:
        for j, h in enumerate(["Trigger", "Kind", "Field", "Parameter", "Explanation", "Priority"], start=1):
            c = ws.cell(row=r, column=j)
            set_text_cell(c, h)
            c.font = Font(bold=True)
        r += 1
        for t in schema.triggers:
            param = (f"min gap {t.min_gap}" if t.min_gap else f"at {t.at}" if t.at else
                     f"at most {t.at_most}" if t.at_most else "")
            for j, v in enumerate([t.label, t.kind, t.field, param, t.explanation, str(t.priority)], start=1):
                c = ws.cell(row=r, column=j)
                set_text_cell(c, v)
                c.alignment = _WRAP_TOP
            r += 1
    ws.freeze_panes = "A2"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    _protect(ws)


def _num(x: Any) -> float | str:
    """A statistic as a number cell ("" when undefined)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return ""
    return "" if math.isnan(v) else v


def _write_summary(ws, schema: Schema, info: dict, rlist: list[str], summary: dict, agreement_rows: list[dict],
                   agreement_note: str, boundary_fill: dict, n_items: int, n_agreed: int, stamp: str) -> None:
    ws.column_dimensions["A"].width = 34
    for col in "BCDEFG":
        ws.column_dimensions[col].width = 18
    ws.column_dimensions["H"].width = 60
    r = 1

    def put(row: int, values: list[Any], bold: bool = False, fill: str | None = None) -> None:
        for j, v in enumerate(values, start=1):
            c = ws.cell(row=row, column=j)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                c.value = v
            else:
                set_text_cell(c, v)
            c.alignment = _WRAP_TOP if j == len(values) else _TOP
            if bold:
                c.font = Font(bold=True)
            if fill:
                c.fill = PatternFill("solid", fgColor=fill)

    c = ws.cell(row=r, column=1)
    set_text_cell(c, f"Adjudication review — {schema.title}")
    c.font = Font(bold=True, size=14)
    r += 2
    for label, value in [
        ("Study", info.get("study", "")), ("Workspace", info.get("workspace", "")),
        ("Schema", f"{schema.name} v{schema.version}"), ("Raters", ", ".join(rlist)),
        ("Round", str(info.get("round", ""))), ("Items rated", n_items),
        ("Items to discuss", summary["items_flagged"]), ("Item x field rows to decide", summary["rows"]),
        ("Unanimous item x field rows (sheet Agreed)", n_agreed),
        ("Generated", stamp), ("goldboard", __version__),
    ]:
        put(r, [label, value])
        ws.cell(row=r, column=1).font = Font(bold=True)
        r += 1
    r += 1
    put(r, ["How to use"], bold=True)
    r += 1
    multi_lines = [multi_decision_help(f) + " (No dropdown for these rows.)"
                   for f in adjudicable_fields(schema) if f.kind == "multi"]
    for line in [
        "In sheet Disagreements, pick a Decision from the dropdown (or 'unresolved'), give a Reason, and name the Adjudicator.",
        *multi_lines,
        "A Reason is required when the decision differs from every rater. Blank decisions stay unresolved.",
        "Do not edit Case ID, Item ID or Field: the hidden key column detects edits and the import refuses them.",
        "Import: goldboard adjudicate import --study DIR review.xlsx --adjudicator NAME [--not-independent]",
    ]:
        put(r, [line])
        r += 1
    r += 1
    put(r, ["Agreement before adjudication (95% CI)"], bold=True)
    r += 1
    if agreement_rows:
        put(r, ["Field", "Statistic", "Value", "95% CI low", "95% CI high", "Items", "CI method"],
            bold=True, fill="D9E1F2")
        r += 1
        for a in agreement_rows:
            put(r, [a.get("field", ""), _stat_label(a), _num(a.get("value")), _num(a.get("ci_low")),
                    _num(a.get("ci_high")), a.get("n_items") if a.get("n_items") is not None else "",
                    a.get("ci_method") or ""])
            for col in (3, 4, 5):
                ws.cell(row=r, column=col).number_format = "0.000"
            r += 1
    else:
        put(r, [agreement_note or "No agreement statistics available."])
        r += 1
    if agreement_rows and agreement_note:
        put(r, [f"Not computed: {agreement_note}"])
        r += 1
    r += 1
    put(r, ["Disagreements per named boundary"], bold=True)
    r += 1
    put(r, ["Boundary", "Field", "Disagreements", "Of (on field)", "Share", "Priority", "", "Explanation"],
        bold=True, fill="D9E1F2")
    r += 1
    for name, b in summary["by_boundary"].items():
        put(r, [name, b["field"], b["count"], b["of"], "" if b["share"] is None else f"{b['share']:.0%}",
                b["priority"], "", b["explanation"]])
        ws.cell(row=r, column=1).fill = PatternFill("solid", fgColor=boundary_fill.get(name, "FFFFFF"))
        r += 1
    r += 1
    put(r, ["Flags per kind (item x field rows)"], bold=True)
    r += 1
    for kind, n in summary["by_kind"].items():
        put(r, [kind.replace("_", " "), n])
        r += 1
    if summary["by_trigger"]:
        r += 1
        put(r, ["Schema triggers (item x field rows)"], bold=True)
        r += 1
        for name, n in summary["by_trigger"].items():
            put(r, [name, n])
            r += 1
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True


def _write_meta(ws, schema: Schema, info: dict, rlist: list[str], stamp: str) -> None:
    rows = [("format", SHEET_FORMAT), ("schema", schema.name), ("schema_version", schema.version),
            ("study", str(info.get("study", ""))), ("raters", ",".join(rlist)), ("round", str(info.get("round", ""))),
            ("generated_at", stamp), ("goldboard_version", __version__)]
    for i, (k, v) in enumerate(rows, start=1):
        set_text_cell(ws.cell(row=i, column=1), k)
        set_text_cell(ws.cell(row=i, column=2), v)
    _protect(ws)


__all__ = ["BOUNDARY_FILLS", "HEADLINE_STATISTICS", "WorkbookInfo", "build_review_workbook", "headline_agreement",
           "multi_decision_help", "task_url",
           "write_review_workbook", "write_study_workbook"]
