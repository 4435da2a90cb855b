"""Adjudication in Label Studio: a project holding only the disagreements.

``push_adjudication`` creates (once) one Label Studio project per disputed field
(``<study> · adjudication · <field>``) and imports one task per flagged item that has
no decision in force yet (or is ``unresolved``; ``include_decided=True``: every flagged
item), showing, as plain ``Text`` only (never ``HyperText``):

- the case id in the title (beside Label Studio's own task number), the case and the
  model output,
- why the item is on the agenda, in plain words (the boundary as its values, the
  triggers' explanations; the ids stay in the data files),
- each rater's value and rationale -- under the rater's study name, or with
  ``anonymise=True`` as "Rater 1", "Rater 2", ... in an order shuffled per item
  (deterministically, from the item id) and without the model name;

- the decision in force, from ``decisions.jsonl`` whatever its source ("Current decision:
  VALUE (by whom, in the review sheet X / in Label Studio, when; reason: ...)"), brought up
  to date on tasks pushed before at every push;

and asks for the final value (the field's values plus ``unresolved``) and a reason.
The page says how to change a submitted decision (checked in Chromium against Label
Studio 1.23: "Update" stays disabled for a reason typed but not added with Add/Shift+Enter).

Multi-select fields (e.g. mtb ``missing_info``) are supported: their project asks
for the final *set* with ``Choices choice="multiple"`` -- tick every value that
applies, or the single choice ``none`` (the empty set), or ``unresolved`` -- plus a
reason.  A rater's empty set is shown as ``none``.  On pull the ticked values are
read like a review-sheet cell (:func:`goldboard.adjudicate.decisions.parse_multi_decision`):
``none``/``unresolved`` ticked together with values is refused, and the decision
is logged canonically (``|``-joined in schema order, ``""`` for none).
Pushing again imports only the flagged items that have no task yet (tasks are
matched by the row key the review workbook uses), so a push is idempotent.

``pull_adjudication`` exports each adjudication project (one request per project),
checks every annotation like a review-sheet row (value in the schema, item still in
the ratings, a reason when the decision overrides every rater) and -- only if all
are valid -- appends them to ``decisions.jsonl`` with ``source = "label_studio"``.
Re-pulling appends nothing new.  The adjudicator is the annotation's Label Studio
user (a study rater adjudicating is recorded as not independent).

Project ids live in ``study.toml`` under ``[adjudication.projects]`` (field -> id).
"""

from __future__ import annotations

import hashlib
import random
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from goldboard.adjudicate.decisions import (
    UNRESOLVED,
    Proposed,
    RecordResult,
    change_lines,
    empty_set_word,
    format_decision,
    latest_decisions,
    parse_multi_decision,
    read_decisions,
    record_decisions,
)
from goldboard.adjudicate.flags import boundary_words, flag_disagreements, flag_words, value_words
from goldboard.adjudicate.gold import resolve_gold
from goldboard.adjudicate.review_sheet import make_key, parse_key
from goldboard.adjudicate.rules import decision_rule_errors
from goldboard.annotate.client import ConfigMismatch, ProjectNotFound, connect
from goldboard.annotate.pull import configs_match, rater_user_ids
from goldboard.cases.ratings import rating_grid
from goldboard.errors import GoldboardError, ParamError
from goldboard.label_configs.schema import Field, Schema
from goldboard.study import study_ratings
from goldboard.text import ls_text, xml_text

if TYPE_CHECKING:  # only for the annotations: study imports nothing of annotate
    from goldboard.study import Study
#: how to change a submitted decision (Label Studio 1.23: "Update" stays disabled until the new
#: reason is added with "Add" or Shift+Enter; checked in tests/test_adjudication_page_live.py)
CHANGE_HOWTO = (
    "To change a decision you submitted: open the task and choose the new value; change the reason with its "
    "pencil button (or, with no reason yet, type one) and press Shift+Enter or Add -- Update stays disabled "
    "for a reason typed but not added -- then click Update."
)
DECISION_TAG = "decision"
REASON_TAG = "reason"
RATERS_TAG = "raters"


@dataclass
class AdjudicationPush:
    url: str
    projects: dict[str, int]
    imported: dict[str, int] = field(default_factory=dict)
    already: dict[str, int] = field(default_factory=dict)
    #: rows with a decision in force, not pushed (``include_decided=False``)
    decided: dict[str, int] = field(default_factory=dict)
    #: tasks already there whose "Current decision" line was brought up to date
    refreshed: dict[str, int] = field(default_factory=dict)
    include_decided: bool = False
    created_projects: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    adjudicator: str = ""  # embedded server: whose organization holds the projects
    access: dict = field(default_factory=dict)  # the check of who can reach them

    def describe(self) -> str:
        lines = []
        if self.adjudicator:
            lines.append(
                f"Adjudication projects are in {self.adjudicator}'s own Label Studio organization; "
                f"log in as {self.adjudicator} (`goldboard server login {self.adjudicator}`)."
            )
        if self.access:
            reach = self.access.get("raters_reach") or {}
            if self.access.get("enforced"):
                lines.append("Checked with each rater's account: no rater can list, open or read them.")
            elif self.access.get("note"):
                lines.append(f"Blinding: {self.access['note']}.")
            else:
                bad = [f"{r}: {', '.join(v)}" for r, v in reach.items() if v]
                lines.append("WARNING: raters can reach adjudication projects: " + "; ".join(bad))
        for f, pid in self.projects.items():
            made = " (new project)" if f in self.created_projects else ""
            decided = self.decided.get(f, 0)
            skipped = f", {decided} already decided not pushed (--include-decided to review them)" if decided else ""
            fresh = self.refreshed.get(f, 0)
            fresh_s = f", {fresh} tasks show an updated current decision" if fresh else ""
            lines.append(
                f"{f}: project {pid}{made} at {self.url}/projects/{pid}: "
                f"{self.imported.get(f, 0)} tasks imported, {self.already.get(f, 0)} already there{skipped}{fresh_s}"
            )
        rest = {f: n for f, n in self.decided.items() if f not in self.projects}
        if rest:
            n = sum(rest.values())
            lines.append(
                f"{', '.join(rest)}: every disagreement has a decision in force ({n} rows): nothing pushed "
                "(--include-decided pushes them for review, each showing its current decision)."
            )
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines) if lines else "No disagreements: nothing to adjudicate."


@dataclass
class AdjudicationPull:
    record: RecordResult
    annotations: int
    skipped: int  # cancelled annotations

    def describe(self) -> str:
        r = self.record
        new = len(r.appended) - r.changed - r.confirmed
        confirmed = f", {r.confirmed} confirmed (same value)" if r.confirmed else ""
        # an 'unresolved' answer is logged but decides nothing: said apart from the decisions made
        left_open = sum(1 for e in r.appended if e.get("previous_id") is None and e.get("decision") == UNRESOLVED)
        open_note = f" ({left_open} of them 'unresolved': left open, no value decided)" if left_open else ""
        return (
            f"{self.annotations} adjudication annotations: {new} new decisions{open_note}, {r.changed} "
            f"changed{confirmed}, "
            f"{r.unchanged} unchanged, {self.skipped} skipped (cancelled)"
        )

    def change_lines(self, schema=None) -> list[str]:
        """What changed, one line per new entry (``item field: old -> new (by who)``)."""
        return change_lines(self.record.appended, schema)


# --------------------------------------------------------------------------- the project


def adjudication_config(
    schema: Schema, field_name: str, n_raters: int, *, show_output: bool | None = None, current: bool = True
) -> str:
    """Label config of the adjudication project for one field (plain ``Text`` panes only).
    ``current=False``: without the "Decision in force" pane (projects made by older versions)."""
    f = schema.field(field_name)
    show_output = schema.display.show_output if show_output is None else show_output
    root = ET.Element("View")
    # the case id beside Label Studio's own task number (#4): "$case_id" is task data, filled in by Label Studio
    ET.SubElement(root, "Header", value=ls_text(f"Adjudication: {f.title or f.name}") + " · case $case_id", size="3")
    ET.SubElement(
        root,
        "Header",
        size="6",
        value=ls_text(
            "Read the case, the raters' labels and rationales and the decision in force, then choose the final "
            f"value (or {UNRESOLVED}). Give a reason; it is required when you overrule every rater or change "
            "the decision in force. Confirming the decision in force without a reason keeps its reason."
        ),
    )
    ET.SubElement(root, "Header", size="6", value=ls_text(CHANGE_HOWTO))
    _add_panes(root, schema, show_output, n_raters)
    if current:
        ET.SubElement(root, "Header", value="Decision in force", size="5")
        ET.SubElement(root, "Text", name="current", value="$current_decision")
    _add_decision_choices(root, f)
    ET.SubElement(root, "Header", value="Reason", size="5")
    ET.SubElement(
        root,
        "TextArea",
        name=REASON_TAG,
        toName="flags",
        rows="3",
        maxSubmissions="1",
        editable="true",
        placeholder="Why this value (required when you overrule every rater)",
    )
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def _add_panes(root: ET.Element, schema: Schema, show_output: bool, n_raters: int) -> None:
    """The case (and model output) side by side, the agenda reasons, then one pane per rater."""
    panes = ET.SubElement(root, "View", style="display: flex; gap: 1em; align-items: flex-start")
    case = ET.SubElement(panes, "View", style="flex: 1 1 50%; min-width: 0")
    ET.SubElement(case, "Header", value=ls_text(schema.display.case_title or "Case"), size="4")
    ET.SubElement(case, "Text", name="case", value="$case_text")
    if show_output:
        out = ET.SubElement(panes, "View", style="flex: 1 1 50%; min-width: 0")
        ET.SubElement(out, "Header", value=ls_text(schema.display.output_title or "Model output"), size="4")
        ET.SubElement(out, "Text", name="output", value="$output_text")
    ET.SubElement(root, "Header", value="Why this item is on the agenda", size="5")
    ET.SubElement(root, "Text", name="flags", value="$flags")
    raters = ET.SubElement(root, "View", style="display: flex; gap: 1em; align-items: flex-start")
    for i in range(1, n_raters + 1):
        box = ET.SubElement(raters, "View", style="flex: 1 1 0; min-width: 0")
        ET.SubElement(box, "Header", value=f"$rater_{i}_name", size="5")
        ET.SubElement(box, "Text", name=f"rater_{i}", value=f"$rater_{i}")


def _add_decision_choices(root: ET.Element, f: Field) -> None:
    """The final-value question: the field's values (one, or a set), the empty set for a multi field, unresolved."""
    if f.kind == "multi":
        none = empty_set_word(f)
        ET.SubElement(
            root,
            "Header",
            value=ls_text(f"Final {f.title or f.name} * (tick every value that applies; or {none}; or {UNRESOLVED})"),
            size="5",
        )
        ch = ET.SubElement(
            root,
            "Choices",
            name=DECISION_TAG,
            toName="flags",
            choice="multiple",
            required="true",
            requiredMessage=f"Tick the final values (or {none}, or {UNRESOLVED})",
        )
    else:
        ET.SubElement(root, "Header", value=ls_text(f"Final {f.title or f.name} *"), size="5")
        ch = ET.SubElement(
            root,
            "Choices",
            name=DECISION_TAG,
            toName="flags",
            choice="single-radio",
            required="true",
            requiredMessage="Choose the final value (or unresolved)",
        )
    from goldboard.label_configs.xml import choice_html

    for v in f.values:
        label = v.label
        definition = "" if v.definition.casefold() == label.casefold() else v.definition
        ET.SubElement(
            ch, "Choice", {"value": ls_text(label), "alias": xml_text(v.value), "html": choice_html(label, definition)}
        )
    if f.kind == "multi":
        ET.SubElement(
            ch,
            "Choice",
            value=f"{empty_set_word(f)} (none of these applies)",
            alias=empty_set_word(f),
            hint="The final set is empty. Tick it alone.",
        )
    if UNRESOLVED not in f.categories:
        ET.SubElement(
            ch,
            "Choice",
            value=f"{UNRESOLVED} (leave open)",
            alias=UNRESOLVED,
            hint="The adjudicators could not decide; the item stays out of gold.",
        )


def _order(item_id: str, raters: list[str], anonymise: bool) -> list[str]:
    if not anonymise:
        return list(raters)
    seed = int.from_bytes(hashlib.sha256(item_id.encode("utf-8")).digest()[:8], "big")
    out = list(raters)
    random.Random(seed).shuffle(out)
    return out


def adjudication_tasks(
    flags: pd.DataFrame,
    units: pd.DataFrame | None,
    field_name: str,
    raters: list[str],
    *,
    anonymise: bool = False,
    field: Field | None = None,
    decisions: dict[tuple[str, str], dict] | None = None,
    schema: Schema | None = None,
) -> list[dict[str, str]]:
    """Task data for the flagged rows of one field (all values plain strings).  With the
    schema ``field`` of a multi-select field, a rater's set reads as the value names the
    rater ticked (``none`` for the empty set).  With the ``schema``, why the item is on the
    agenda is said in plain words (the boundary's values, the triggers' explanations).
    ``decisions`` (the log's decisions in force, :func:`latest_decisions`) fills each
    task's ``current_decision`` line (:func:`current_decision_text`)."""
    texts: dict[str, tuple[str, str]] = {}
    if units is not None and len(units) and "item_id" in units.columns:
        for rec in units.to_dict("records"):
            texts[str(rec["item_id"])] = (_s(rec.get("case_text")), _s(rec.get("output_text")))
    tasks = []
    for rec in flags[flags["field"] == field_name].to_dict("records"):
        item = str(rec["item_id"])
        case_text, output_text = texts.get(item, ("", ""))
        why = []
        if rec["boundaries"] and schema is not None:
            why.append("Boundary: " + "; ".join(boundary_words(schema, b) for b in rec["boundaries"]))
        reasons = flag_words(rec, schema, who=False) if schema is not None else []
        if schema is None:
            why.append("Kinds: " + ", ".join(k.replace("_", " ") for k in rec["kinds"]))
        elif reasons:
            why.append("Why: " + "; ".join(reasons))
        if rec["missing_raters"]:
            why.append(
                f"Missing ratings: {len(rec['missing_raters'])}"
                if anonymise
                else "Missing ratings: " + ", ".join(rec["missing_raters"])
            )
        if rec["low_confidence_raters"]:
            why.append(
                f"Low confidence: {len(rec['low_confidence_raters'])} rater(s)"
                if anonymise
                else "Low confidence: " + ", ".join(rec["low_confidence_raters"])
            )
        data = {
            "item_id": item,
            "case_id": str(rec["case_id"]),
            "field": field_name,
            "key": make_key(item, field_name, str(rec["case_id"])),
            "case_text": case_text or f"(case {rec['case_id']}: text not recorded in units.jsonl)",
            "output_text": output_text,
            "flags": "\n".join(why),
            "current_decision": current_decision_text((decisions or {}).get((item, field_name)), field),
        }
        if not anonymise:
            data["model"] = str(rec.get("model", "") or "")
        for i, r in enumerate(_order(item, raters, anonymise), start=1):
            value = rec.get(f"value_{r}", "") or ""
            if r in rec["missing_raters"]:
                value = value or "(no rating)"
            elif field is not None and field.kind == "multi":
                value = value_words(field, value)  # the names raters ticked ("ECOG status"), or none
            else:
                value = value or "(blank)"
            rationale = rec.get(f"rationale_{r}", "") or "(no rationale)"
            data[f"rater_{i}_name"] = f"Rater {i}" if anonymise else r
            data[f"rater_{i}"] = f"{value}\n\nRationale: {rationale}"
        tasks.append({k: _s(v) for k, v in data.items()})
    return tasks


def current_decision_text(entry: dict | None, f: Field | None) -> str:
    """``Current decision: VALUE (by WHO, in the review sheet X / in Label Studio, WHEN; reason: ...)``,
    or ``Current decision: none yet``."""
    if entry is None:
        return "Current decision: none yet"
    decision = str(entry.get("decision", ""))
    labels = {v.value: v.label for v in f.values} if f is not None else {}
    if decision == UNRESOLVED:
        value = "unresolved (left open)"
    elif f is not None and f.kind == "multi":
        value = format_decision(f, decision)
    else:
        value = labels.get(decision, decision)
    where = "in Label Studio" if entry.get("source") == "label_studio" else "in the review sheet"
    if entry.get("source") != "label_studio" and entry.get("sheet"):
        where += f" {entry['sheet']}"
    ts = str(entry.get("timestamp") or "")
    when = f", {ts[:16].replace('T', ' ')} UTC" if ts else ""
    reason = str(entry.get("reason") or "").strip() or "no reason given"
    return f"Current decision: {value} (by {entry.get('adjudicator') or '?'}, {where}{when}; reason: {reason})"


def _s(v: Any) -> str:
    if v is None or (isinstance(v, float) and pd.isna(v)):
        return ""
    return str(v)


DEFAULT_ADJUDICATOR = "adjudicator"


def _adjudicator_account(study: Study, client: Any, adjudicator: str | None) -> str | None:
    """Embedded server keeping people apart: the adjudicator whose organization holds the
    adjudication projects (created with a login of their own when new).  None elsewhere."""
    if not getattr(client, "routes_by_org", False):
        return None
    recorded = str((study.adjudication or {}).get("adjudicator") or "")
    name = (adjudicator or recorded or DEFAULT_ADJUDICATOR).strip()
    if recorded and name != recorded and (study.adjudication or {}).get("projects"):
        raise ParamError(
            "the adjudication projects are {who}'s (in {who}'s Label Studio organization); push with {adjudicator} {who}",
            who=recorded,
        )
    if name in study.raters:
        raise ParamError(
            "{adjudicator} {name}: a rater of this study cannot adjudicate in Label Studio here (the "
            "adjudication projects show every rater's labels; each person has one organization); choose "
            "another name or adjudicate with `goldboard adjudicate sheet`",
            name=name,
        )
    from goldboard.annotate import server as srv

    creds = client.conn.credentials
    if name not in creds.users or name not in creds.orgs or creds.orgs[name].id is None:
        import sys

        print(f"Creating a Label Studio login for adjudicator {name}", file=sys.stderr)
        client.conn.credentials = srv.prepare_data_dir(client.conn.data_dir, [name])
    return name


def push_adjudication(
    study: Study,
    *,
    client: Any = None,
    anonymise: bool = False,
    round_number: int | None = None,
    adjudicator: str | None = None,
    include_decided: bool = False,
) -> AdjudicationPush:
    """Create/complete the adjudication projects of ``study`` (see the module doc).

    Only rows without a decision in force (none yet, or ``unresolved``) are pushed, unless
    ``include_decided``; every task shows the decision in force ("Current decision: ...",
    from the decisions log whatever its source), and tasks pushed before get that line
    brought up to date.  On the embedded server the projects live in ``adjudicator``'s
    own Label Studio organization (default: the one recorded, else ``adjudicator``), which
    no rater can reach; the server's refusal is checked with each rater's account and
    recorded in ``study.toml`` (``[adjudication.access]``)."""

    schema = study.schema
    ratings = study_ratings(study, round_number)
    flags = flag_disagreements(ratings, schema, study.grid_raters(), round_number=round_number)
    raters = [c[len("value_") :] for c in flags.columns if c.startswith("value_")]
    adj = dict(study.adjudication or {})
    projects = {str(k): int(v) for k, v in (adj.get("projects") or {}).items()}
    if "anonymise" in adj and bool(adj["anonymise"]) != anonymise and projects:
        raise ParamError(
            "the adjudication projects were pushed {how} {anonymise}; push the same way (or delete them and the "
            "[adjudication] entry)",
            how="with" if adj["anonymise"] else "without",
        )
    in_force = latest_decisions(read_decisions(study.decisions_path))
    open_rows = {
        (str(r["item_id"]), str(r["field"]))
        for r in flags[["item_id", "field"]].to_dict("records")
        if in_force.get((str(r["item_id"]), str(r["field"])), {}).get("decision", UNRESOLVED) == UNRESOLVED
    }
    fields = list(dict.fromkeys(flags["field"])) if len(flags) else []
    decided = {f: int((flags["field"] == f).sum()) - sum(1 for k in open_rows if k[1] == f) for f in fields}
    if not include_decided:  # a field with nothing open gets no new project
        fields = [f for f in fields if f in projects or any(k[1] == f for k in open_rows)]
    client = client or connect(study)
    owner = _adjudicator_account(study, client, adjudicator) if fields else None
    if owner is not None:
        adj["adjudicator"] = owner
    res = AdjudicationPush(url=client.url, projects={}, adjudicator=owner or "", include_decided=include_decided)
    if not include_decided:  # fields with nothing open and no project: every row decided, none pushed
        res.decided = {f: n for f, n in decided.items() if n and f not in fields}
    units = study.units()
    # a case-level study (no model outputs pushed) gets no empty model pane
    with_outputs = bool(len(units)) and (units.get("output_id", pd.Series(dtype=object)).fillna("") != "").any()
    for fname in fields:
        show = schema.display.show_output and with_outputs
        xml = adjudication_config(schema, fname, len(raters), show_output=show)
        pid = projects.get(fname)
        if pid is not None:
            _check_adjudication_project(
                study, client, pid, fname, xml, _older_configs(schema, fname, len(raters), show)
            )
        else:
            pid = _create_adjudication_project(study, client, fname, xml, anonymise, owner)
            projects[fname] = pid
            study.adjudication = {**adj, "projects": dict(projects), "anonymise": anonymise}
            study.save()
            res.created_projects.append(fname)
        res.projects[fname] = pid
        want = adjudication_tasks(
            flags,
            units,
            fname,
            raters,
            anonymise=anonymise,
            field=schema.field(fname),
            decisions=in_force,
            schema=schema,
        )
        pushable = {t["key"] for t in want if include_decided or (t["item_id"], fname) in open_rows}
        _import_adjudication_tasks(client, pid, fname, want, res, pushable, schema.field(fname))
    _record_access(study, client, adj, projects, owner, anonymise, res)
    return res


def _create_adjudication_project(
    study: Study, client: Any, fname: str, xml: str, anonymise: bool, owner: str | None
) -> int:
    title = f"{study.name} · adjudication · {fname}"[:50]
    schema = study.schema
    desc = (
        f"goldboard study {study.name}: adjudication of {fname} "
        f"({'anonymised raters' if anonymise else 'raters named'}); schema {schema.name} v{schema.version}."
    )
    return client.create_project(title, xml, desc, maximum_annotations=1, **({"org": owner} if owner else {}))


def _older_configs(schema: Schema, fname: str, n_raters: int, show_output: bool) -> list[str]:
    """Label configs earlier goldboard versions made for this project (no "Decision in force" pane)."""
    return [
        adjudication_config(schema, fname, n_raters, show_output=show_output, current=False),
        adjudication_config(schema, fname, n_raters, current=False),
    ]


def _record_access(
    study: Study, client: Any, adj: dict, projects: dict, owner: str | None, anonymise: bool, res
) -> None:
    """Record the projects and who can reach them in study.toml."""
    if projects and not study.adjudication.get("projects"):
        study.adjudication = {**adj, "projects": dict(projects), "anonymise": anonymise}
        study.save()
    if projects and res.projects:
        from goldboard.annotate.blinding import check_adjudication_access

        acc = check_adjudication_access(client, study, owner)
        study.adjudication = {**study.adjudication, **({"adjudicator": owner} if owner else {}), "access": acc}
        study.save()
        res.access = acc


def _check_adjudication_project(study: Study, client: Any, pid: int, fname: str, xml: str, older: list[str]) -> None:
    """The recorded adjudication project of ``fname`` must still exist with the config goldboard made
    (one made by an older version gets the current config: the "Decision in force" pane)."""
    try:
        proj = client.project(pid)
    except ProjectNotFound:
        raise ProjectNotFound(
            f"adjudication project {pid} ({fname}) no longer exists on {client.url}; "
            f"remove it from [adjudication.projects] in study.toml to start over "
            f"(decisions already pulled stay in {study.decisions_path})",
            pid,
        ) from None
    cfg = proj["label_config"]
    if not configs_match(cfg, xml) and not any(configs_match(cfg, old) for old in older):
        raise ConfigMismatch(
            f"adjudication project {pid} ({fname}) on {client.url}: its label config no "
            f"longer matches what goldboard made (edited in Label Studio, or raters added?)"
        )
    if "$current_decision" not in cfg:  # same questions, made before the decision in force was shown
        client.update_project_config(pid, xml)


def _same_rater_text(have: str, want: str, f: Field | None) -> bool:
    """A pushed rater pane still shows the same rating (a multi-select set pushed by an older
    version as ``stage|ecog_status`` is the same as ``Stage | ECOG status``)."""
    if have == want:
        return True
    if f is None or f.kind != "multi":
        return False
    (hv, _, hrest), (wv, _, wrest) = have.partition("\n\n"), want.partition("\n\n")
    try:
        return hrest == wrest and {f.normalize(x) for x in hv.split("|") if x.strip() and x.strip() != "none"} == {
            f.normalize(x) for x in wv.split("|") if x.strip() and x.strip() != "none"
        }
    except Exception:
        return False


def _import_adjudication_tasks(
    client: Any,
    pid: int,
    fname: str,
    want: list[dict],
    res: AdjudicationPush,
    pushable: set[str],
    field: Field | None = None,
) -> None:
    """Import the tasks of ``want`` in ``pushable`` the project lacks (matched by row key), 250 per
    request; bring a present task's "Current decision" up to date; warn on changed ratings."""
    present: dict[str, tuple[int, dict]] = {}
    for tid, data in client.task_data(pid):
        k = str(data.get("key", "") or "")
        if k:
            present.setdefault(k, (tid, data))
    todo = []
    refreshed = 0
    for t in want:
        have = present.get(t["key"])
        if have is None:
            if t["key"] in pushable:
                todo.append(t)
            continue
        if any(not _same_rater_text(str(have[1].get(k, "")), v, field) for k, v in t.items() if k.startswith("rater_")):
            res.warnings.append(
                f"task {have[0]} (item {t['item_id']}): the ratings changed since it was "
                f"pushed; Label Studio shows the old values"
            )
        if str(have[1].get("current_decision", "")) != t["current_decision"]:
            client.update_task_data(pid, have[0], {**have[1], "current_decision": t["current_decision"]})
            refreshed += 1
    res.already[fname] = sum(1 for t in want if t["key"] in present)
    left = sum(1 for t in want if t["key"] not in present and t["key"] not in pushable)
    if left:
        res.decided[fname] = left
    res.refreshed[fname] = refreshed
    made = 0
    for i in range(0, len(todo), 250):
        made += client.import_tasks(pid, [{"data": t} for t in todo[i : i + 250]])
    res.imported[fname] = made


# --------------------------------------------------------------------------- pull


def _annotation_values(result: Any, multi: bool = False) -> tuple[Any, str, str]:
    """(raw decision or None, reason, problem); for a multi-select field the raw decision
    is the list of ticked choices."""
    if not isinstance(result, list):
        return None, "", "result is not a list"
    decision, reason = None, ""
    for item in result:
        if not isinstance(item, dict):
            return None, "", "malformed result item"
        value = item.get("value") or {}
        if item.get("from_name") == DECISION_TAG:
            ch = value.get("choices") if isinstance(value, dict) else None
            if isinstance(ch, str):
                ch = [ch]
            if multi:
                if not isinstance(ch, list) or not ch or not all(isinstance(x, str) for x in ch):
                    return None, "", f"decision: expected ticked choices, got {ch!r}"
                decision = list(ch)
                continue
            if not isinstance(ch, list) or len(ch) != 1:
                return None, "", f"decision: expected one choice, got {ch!r}"
            decision = ch[0]
        elif item.get("from_name") == REASON_TAG:
            t = value.get("text") if isinstance(value, dict) else None
            if isinstance(t, str):
                t = [t]
            if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
                return None, "", "reason: malformed text"
            reason = "\n".join(t).strip()
        else:
            return None, "", f"unknown field {item.get('from_name')!r}"
    if decision is None:
        return None, reason, "no decision chosen"
    return decision, reason, ""


def pull_adjudication(
    study: Study,
    *,
    client: Any = None,
    independent: bool = True,
    adjudicator: str = "",
    now: str | None = None,
    overrule_newer: bool = False,
) -> AdjudicationPull:
    """Read the adjudication projects' annotations into the decisions log (all or nothing).

    An answer older than the decision in force (made since in a review sheet, say: Label Studio
    keeps the old answer selected, and Update re-submits it) is a conflict, as a review-sheet row
    written before a newer decision: nothing is recorded, unless ``overrule_newer``."""

    schema = study.schema
    projects = {str(k): int(v) for k, v in ((study.adjudication or {}).get("projects") or {}).items()}
    if not projects:
        raise GoldboardError(f"{study.path}: no adjudication projects yet (run `goldboard adjudicate push`)")
    client = client or connect(study)
    raters_by_uid, others = rater_user_ids(client, list(study.raters))
    names = {**others, **raters_by_uid}
    grid = rating_grid(study_ratings(study), schema, study.grid_raters())
    item_pos = {it: i for i, it in enumerate(grid.items)}
    errors: list[str] = []
    found: list[tuple[str, Proposed]] = []
    shown: list[tuple[int, Any, dict, tuple[str, str], Field | None]] = []  # tasks whose page names a decision
    n_ann = skipped = 0
    for fname, pid in projects.items():
        try:
            f: Field | None = schema.field(fname)
        except KeyError:
            f = None
        for task in client.export(pid):
            tid = task.get("id")
            where = f"project {pid} task {tid}"
            anns = [a for a in task.get("annotations") or [] if isinstance(a, dict)]
            if not anns:
                continue
            parsed, problem = _task_item(task, f, fname, where, item_pos, grid)
            if parsed is None:
                errors.append(problem)
                continue
            item_id, case_id = parsed
            shown.append((pid, tid, task.get("data") or {}, (item_id, fname), f))
            i = item_pos[item_id]
            present = grid.codes[fname][i] >= 0
            rater_values = [v for v, ok in zip(grid.values(fname)[i], present) if ok]
            anns.sort(key=lambda a: (str(a.get("updated_at") or a.get("created_at") or ""), int(a.get("id") or 0)))
            for a in anns:
                n_ann += 1
                aw = f"{where} annotation {a.get('id')} (item {item_id}, {fname})"
                if a.get("was_cancelled"):
                    skipped += 1
                    continue
                decision, reason, problems = _annotation_decision(a, f, aw, rater_values)
                if problems:
                    errors.extend(problems)
                    continue
                who = _annotator(a, adjudicator, names)
                found.append((aw, _proposal(a, pid, tid, item_id, case_id, fname, decision, reason, who, aw)))
                found[-1][1].independent = independent and who not in study.raters
    for _, p in found:  # which round's ratings each decision was made on
        rnd = grid.selection.rounds.get(p.item_id)
        if rnd is not None:
            p.extra.setdefault("round", int(rnd))
    # the gold these decisions would make must keep the schema's cross-field rules
    gold = resolve_gold(study_ratings(study), schema, read_decisions(study.decisions_path), study.grid_raters())
    errors = errors + decision_rule_errors([p for _, p in found], gold, schema)
    try:
        rec = record_decisions(  # checks the changes too, then lists every problem at once
            study.decisions_path,
            [p for _, p in found],
            source="label_studio",
            now=now,
            schema=schema,
            problems=errors,
            overrule_newer=overrule_newer,
        )
    finally:  # also on a conflict: the chair then sees on the page which decision is in force
        _refresh_current(client, shown, latest_decisions(read_decisions(study.decisions_path)))
    return AdjudicationPull(record=rec, annotations=n_ann, skipped=skipped)


def _annotator(a: dict, adjudicator: str, names: dict) -> str:
    """Who made annotation ``a``: ``adjudicator`` when given, else its Label Studio user's study name."""
    uid = a.get("completed_by")
    if isinstance(uid, dict):
        uid = uid.get("id")
    return adjudicator or names.get(int(uid) if str(uid).isdigit() else -1, f"label-studio-user-{uid}")


def _proposal(a, pid, tid, item_id, case_id, fname, decision, reason, who, aw) -> Proposed:
    """The decision annotation ``a`` proposes (its origin: project, annotation id and update time)."""
    origin = f"label_studio:{pid}:{a.get('id')}:{a.get('updated_at') or a.get('created_at') or ''}"
    return Proposed(
        item_id=item_id,
        field=fname,
        decision=decision,
        reason=reason,
        adjudicator=who,
        case_id=case_id,
        where=aw,
        origin=origin,
        extra={"ls_project_id": pid, "ls_task_id": tid, "ls_annotation_id": a.get("id")},
    )


def _refresh_current(client: Any, shown: list, in_force: dict) -> None:
    """Bring each annotated task's "Current decision" line up to the decision in force (a decision
    made since in a review sheet, or just pulled), so the page never shows an old one as current."""
    for pid, tid, data, key, f in shown:
        want = current_decision_text(in_force.get(key), f)
        if isinstance(data, dict) and "current_decision" in data and str(data.get("current_decision")) != want:
            client.update_task_data(pid, tid, {**data, "current_decision": want})


def _task_item(
    task: dict, f: Field | None, fname: str, where: str, item_pos: dict[str, int], grid: Any
) -> tuple[tuple[str, str] | None, str]:
    """``((item_id, case_id), "")`` of an adjudication task of ``fname``'s project, or ``(None, problem)``."""
    parsed = parse_key((task.get("data") or {}).get("key"))
    if parsed is None:
        return None, f"{where}: task data has no intact goldboard key (not pushed by goldboard?)"
    item_id, key_field, case_id = parsed
    if f is None or key_field != fname:
        return None, f"{where}: task is for field {key_field!r}, project is for {fname!r}"
    if item_id not in item_pos or fname not in grid.codes:
        what = f"item {item_id!r}" if item_id not in item_pos else f"field {fname!r}"
        return None, f"{where}: unknown {what}: not in this study's ratings"
    return (item_id, case_id), ""


def _annotation_decision(a: dict, f: Field, aw: str, rater_values: list[str]) -> tuple[Any, str, list[str]]:
    """``(canonical decision, reason, [])`` of one adjudication annotation, or the problems that refuse it."""
    fname = f.name
    raw, reason, problem = _annotation_values(a.get("result"), multi=f.kind == "multi")
    if problem:
        return None, "", [f"{aw}: {problem}"]
    if f.kind == "multi":
        decision, problems = parse_multi_decision(f, "|".join(raw))
        if problems:
            return None, "", [f"{aw}: {x}" for x in problems]
    elif str(raw).strip().casefold() == UNRESOLVED and UNRESOLVED not in f.categories:
        decision = UNRESOLVED
    else:
        try:
            decision = f.normalize(raw)
        except Exception:
            return None, "", [f"{aw}: decision {raw!r} is not a value of {fname}"]
    if decision != UNRESOLVED and rater_values and decision not in rater_values and not reason:
        return None, "", [f"{aw}: reason required: decision {format_decision(f, decision)!r} overrides every rater"]
    return decision, reason, []


__all__ = [
    "AdjudicationPull",
    "AdjudicationPush",
    "adjudication_config",
    "adjudication_tasks",
    "pull_adjudication",
    "push_adjudication",
    "read_decisions",
]
