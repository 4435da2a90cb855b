"""Progress without pulling: per round and rater, tasks done / total and last activity; the
adjudication's decisions in force and still open.  Reads the server and the study; writes nothing.

Label Studio rounds: counts come from Label Studio's task list (one request per 1000
tasks per project): a task is *done* for a rater when it holds a submitted (not skipped)
annotation of theirs -- in a blinded round any annotation in the rater's own project, in
a shared round one whose annotator is the rater.  *Last annotation* is the newest
annotation time among those tasks; *last seen* is Label Studio's own record of the
rater's last request, when the server shows it.

Rounds pulled from files (``pull --from-table``, ``pull --from-file``) need no server: items rated
per rater come from the round's ratings.csv, the kind of file (a ratings table, a Prodigy db-out
export ...) and *last pulled* from study.toml.

Decisions come from ``decisions.jsonl`` whatever their source (review sheet or Label
Studio): per field, the disagreements (``flag``'s rows, per item the latest complete
round, as gold reads them) with a decision in force, left unresolved, or open.  The
adjudication projects' task counts are shown beside them (annotated there, pulled or not).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from goldboard.adjudicate.decisions import UNRESOLVED, latest_decisions, read_decisions
from goldboard.adjudicate.flags import flag_disagreements
from goldboard.errors import GoldboardError, LabelStudioError
from goldboard.exports.gold import unexpected_release_entries
from goldboard.study_checks import edited_rounds, unexpected_round_entries
from goldboard.text import one_line

if TYPE_CHECKING:  # only for the annotations
    from goldboard.study import Study


@dataclass
class RaterProgress:
    rater: str
    project: int
    done: int
    total: int
    last_annotation: str = ""
    last_seen: str = ""
    #: "label_studio", or "table" (``pull --from-table``/``--from-file``: done = items rated, no server needed)
    source: str = "label_studio"
    last_pulled: str = ""
    #: the files the rater's ratings came from, by kind ("a ratings table", "a Prodigy db-out export")
    kinds: str = ""
    #: items whose annotation by the rater the pull held out as invalid (invalid.csv; file rounds)
    held_out: int = 0


@dataclass
class StudyStatus:
    url: str
    rounds: dict[int, list[RaterProgress]] = field(default_factory=dict)
    adjudicator: str = ""
    adjudication: dict[str, dict] = field(default_factory=dict)  # field -> {project, decided, total, last} (LS)
    #: field -> {rows, decided, unresolved, open, by, sources, last}: from decisions.jsonl
    decisions: dict[str, dict] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    round_rule: str = ""

    @property
    def decisions_open(self) -> int:
        """Flagged rows (label disagreements and other triggers) with no decision in force (none yet, or left unresolved)."""
        return sum(d["open"] + d["unresolved"] for d in self.decisions.values())

    def to_dict(self) -> dict:
        return {
            "url": self.url,
            "rounds": {str(n): [vars(p) for p in ps] for n, ps in sorted(self.rounds.items())},
            "adjudicator": self.adjudicator,
            "adjudication": self.adjudication,
            "decisions": self.decisions,
            "decisions_open": self.decisions_open,
            "round_rule": self.round_rule,
            "problems": self.problems,
        }

    def describe(self) -> str:
        kinds = _kinds_text([k for ps in self.rounds.values() for p in ps for k in p.kinds.split(" and ") if k])
        lines = [
            f"Label Studio: {self.url}" if self.url else f"Label Studio: not used (ratings from {kinds or 'files'})"
        ]
        for n, ps in sorted(self.rounds.items()):
            lines.append(f"round {n}:")
            for p in ps:
                pct = f"{100 * p.done / p.total:.0f}%" if p.total else "-"
                if p.source == "table":
                    src = f"from {p.kinds or 'a file'}"
                    last = f"{src}, last pulled {_short(p.last_pulled)}" if p.last_pulled else src
                    held = f"; {p.held_out} held out as invalid (invalid.csv)" if p.held_out else ""
                    lines.append(f"  {p.rater:<14} {p.done:>5} / {p.total:<5} items rated ({pct:>4})  {last}{held}")
                    continue
                last = f"last annotation {_short(p.last_annotation)}" if p.last_annotation else "no annotation yet"
                seen = f", last seen {_short(p.last_seen)}" if p.last_seen else ""
                lines.append(f"  {p.rater:<14} {p.done:>5} / {p.total:<5} done ({pct:>4})  {last}{seen}")
        lines += self._decision_lines()
        lines += [f"warning: {p}" for p in self.problems]
        return "\n".join(lines)

    def _decision_lines(self) -> list[str]:
        if not self.decisions:
            return []
        who = f" ({one_line(self.adjudicator)})" if self.adjudicator else ""  # a name from the log: shown as there
        rows = sum(d["rows"] for d in self.decisions.values())
        dis = sum(d.get("disagreements", d["rows"]) for d in self.decisions.values())
        why = _n(dis, "label disagreement") + (f", {_n(rows - dis, 'other trigger')}" if rows > dis else "")
        lines = [
            f"adjudication{who}: {self.decisions_open} of {_n(rows, 'flagged row')} still to decide ({why}; "
            f"decisions.jsonl; {self.round_rule})"
        ]
        for f, d in self.decisions.items():
            src = d["sources"]
            where = ", ".join(f"{n} {_WHERE.get(k, k)}" for k, n in src.items() if n)
            by = one_line(", ".join(d["by"]))  # a bidi control or a bare CR in a name never reorders the line
            extra = f" ({where}; by {by})" if where else ""
            unres = f", {d['unresolved']} left unresolved" if d["unresolved"] else ""
            last = f", last decision {_short(d['last'])}" if d.get("last") else ""
            lines.append(f"  {f:<14} {d['decided']:>5} / {d['rows']:<5} decided{extra}{unres}{last}")
            if d.get("kept"):
                items = d.get("kept_items") or []
                shown = ", ".join(items[:3]) + (", ..." if len(items) > 3 else "")
                lines.append(
                    f"  {'':<14} + {_n(d['kept'], 'decision')} in force on {_n(d['kept'], 'row')} no longer flagged "
                    f"({shown}: its ratings changed after the decision); gold keeps {'it' if d['kept'] == 1 else 'them'}"
                )
            ls = self.adjudication.get(f)
            if ls:
                lines.append(
                    f"  {'':<14} Label Studio project {ls['project']}: {ls['decided']} / {ls['total']} tasks annotated"
                )
        return lines


_WHERE = {"sheet": "in the review sheet", "label_studio": "in Label Studio"}


def _n(n: int, what: str) -> str:
    """``1 flagged row``, ``2 flagged rows``."""
    return f"{n} {what}{'' if n == 1 else 's'}"


def _short(ts: str) -> str:
    return ts[:16].replace("T", " ") + " UTC" if ts else ""


def _tasks(client: Any, project_id: int, page_size: int = 1000) -> list[dict]:
    """Every task of a project with its annotators and annotation counts (read only)."""
    return [
        {
            "id": t.get("id"),
            "annotators": [int(a) for a in t.get("annotators") or [] if str(a).isdigit()],
            "submitted": int(t.get("total_annotations") or 0),
            "completed_at": str(t.get("completed_at") or ""),
        }
        for t in client.iter_tasks(project_id, {"fields": "all"}, "reading the progress", page_size)
    ]


def study_status(study: Study, client: Any = None) -> StudyStatus:
    """The progress of every round of ``study`` and of its adjudication (reads only).  A server
    is contacted only when the study has Label Studio rounds or adjudication projects."""
    from goldboard.annotate.client import connect

    res = StudyStatus(url="", adjudicator=str((study.adjudication or {}).get("adjudicator") or ""))
    res.problems += edited_rounds(study)  # a hand-edited ratings.csv, as agree says it
    res.problems += _not_study_raters(study)  # a rater renamed or removed in study.toml, as agree says it
    res.problems += unexpected_round_entries(study)  # rounds/old: read by no command
    res.problems += unexpected_release_entries(study.gold_dir)  # gold/old: read by no command
    _decisions_in_force(study, res)
    res.problems += _log_problems(study)
    ls_rounds = [r for r in study.rounds if r.projects]
    adj_projects = (study.adjudication or {}).get("projects") or {}
    for rnd in study.rounds:
        if not rnd.projects and rnd.tables:
            res.rounds[rnd.number] = _table_round(study, rnd)
    if not ls_rounds and not adj_projects:
        return res
    own = client is None
    try:
        client = client or connect(study)
    except GoldboardError as exc:
        res.problems.append(f"Label Studio progress not shown: {exc}")
        return res
    try:
        res.url = client.url
        _label_studio_rounds(study, client, ls_rounds, res)
        for fname, pid in adj_projects.items():
            try:
                tasks = _tasks(client, int(pid))
            except LabelStudioError as exc:
                res.problems.append(f"adjudication {fname}, project {pid}: {exc}")
                continue
            decided = [t for t in tasks if t["submitted"] > 0]
            res.adjudication[str(fname)] = {
                "project": int(pid),
                "decided": len(decided),
                "total": len(tasks),
                "last": max((t["completed_at"] for t in decided), default=""),
            }
        return res
    finally:
        if own:
            client.close()


def _label_studio_rounds(study: Study, client: Any, rounds: list, res: StudyStatus) -> None:
    """Per Label Studio round and rater: tasks done / total, last annotation, last seen."""
    from goldboard.annotate.pull import rater_user_ids

    uid_rater, _ = rater_user_ids(client, list(study.raters), dict((study.extra or {}).get("rater_users", {})))
    rater_uid = {r: u for u, r in uid_rater.items()}
    seen: dict[int, str] = {}
    try:
        with client._call("listing users"):
            for u in client.sdk.users.list():
                seen[int(u.id)] = str(getattr(u, "last_activity", "") or "")
    except LabelStudioError:
        pass
    for rnd in rounds:
        rows = []
        for key, pid in rnd.projects.items():
            try:
                tasks = _tasks(client, pid)
            except LabelStudioError as exc:
                res.problems.append(f"round {rnd.number}, project {pid}: {exc}")
                continue
            who = list(study.raters) if key == "*" else [key]
            for r in who:
                if key == "*":
                    mine = [t for t in tasks if rater_uid.get(r) in t["annotators"]]
                else:
                    mine = [t for t in tasks if t["submitted"] > 0]
                last = max((t["completed_at"] for t in mine), default="")
                rows.append(
                    RaterProgress(
                        rater=r,
                        project=int(pid),
                        done=len(mine),
                        total=len(tasks),
                        last_annotation=last,
                        last_seen=seen.get(rater_uid.get(r, -1), ""),
                    )
                )
        res.rounds[rnd.number] = rows


def _not_study_raters(study: Study) -> list[str]:
    """One line per pulled round holding ratings by a name study.toml does not list as a rater
    (renamed or removed by hand?): the progress above counts study raters only."""
    import csv
    from collections import Counter

    out = []
    for n in study.pulled_rounds():
        path = study.ratings_path(n)
        try:
            with open(path, encoding="utf-8-sig", newline="") as fh:
                counts = Counter(row.get("rater") or "" for row in csv.DictReader(fh))
        except (OSError, UnicodeDecodeError, csv.Error):
            continue  # a file that cannot be read: named by the reader of the round's ratings
        extra = sorted(r for r in counts if r and r not in study.raters)
        if extra:
            shown = ", ".join(f"{_n(counts[r], 'rating')} by {r!r}" for r in extra)
            out.append(
                f"{path}: {shown}, not a rater of the study ({study.path / 'study.toml'} lists "
                f"{', '.join(study.raters)}): renamed or removed by hand? not counted above (add them back with "
                "`goldboard study add-rater`)"
            )
    return out


def _table_round(study: Study, rnd: Any) -> list[RaterProgress]:
    """Per rater of a round pulled from files: items rated / items in the round, the kinds of file
    the rater's ratings came from (else the round's) and when they were last pulled."""
    from goldboard.cases.intake.files import source_kind
    from goldboard.cases.intake.rounds import sources_of

    path = study.ratings_path(rnd.number)
    if not path.exists():
        return []
    df = study.ratings(rnd.number)
    held = study.held_out(rnd.number)  # items whose annotation was held out: of the round, not rated
    items = set(df["item_id"].astype(str)) if len(df) else set()
    total = len(items.union(*held.values()))
    rated = df.groupby("rater")["item_id"].nunique().to_dict() if len(df) else {}
    by_rater = df.assign(_source=sources_of(df)).groupby("rater")["_source"].unique().to_dict() if len(df) else {}
    out = []
    for r in _round_raters(study, rnd.number, rated):
        names = [s for s in by_rater.get(r, []) if s in rnd.tables] or list(rnd.tables)
        last = max((str(rnd.tables[s].get("pulled_at") or "") for s in names), default="")
        kinds = _kinds_text([source_kind(rnd.tables[s]) for s in names])
        out.append(
            RaterProgress(
                rater=r,
                project=0,
                done=int(rated.get(r, 0)),
                total=total,
                source="table",
                last_pulled=last,
                kinds=kinds,
                held_out=len(held.get(r, set()) - set(df.loc[df["rater"] == r, "item_id"].astype(str)))
                if len(df)
                else len(held.get(r, set())),
            )
        )
    return out


def _round_raters(study: Study, n: int, rated: dict) -> list[str]:
    """The study raters round ``n``'s pull recorded (``pull.json``'s ``raters``: every study rater
    at the time of the pull) or who rated in it, in study order: a rater added after the round's
    last pull (``study add-rater`` for a later round) is not listed under it as "0 items rated".
    Every study rater when the record is missing or unreadable."""
    names = study.pull_raters(n)
    if names is None:
        return list(study.raters)
    return [r for r in study.raters if r in names or r in rated]


def _kinds_text(kinds: list[str]) -> str:
    """``a ratings table and a Prodigy db-out export`` (each kind once, in order)."""
    kinds = [k.removeprefix("a ").removeprefix("an ") for k in kinds]
    return " and ".join(f"{'an' if k[:1].lower() in 'aeiou' else 'a'} {k}" for k in dict.fromkeys(kinds))


def _log_problems(study: Study) -> list[str]:
    """A release deleted by hand that a later one names as its previous
    (:func:`~goldboard.exports.gold.release_chain_problems`), and the decisions log's refusal by gold export / sheet / report (cut short or edited since the
    latest gold release: :func:`~goldboard.workflows.log_checks.check_log_prefix`) as a warning:
    status still shows the progress."""
    from goldboard.adjudicate.decisions import log_prefix_problem
    from goldboard.exports.gold import list_releases, read_manifest, release_chain_problems

    releases = list_releases(study.gold_dir, warn_chain=False)  # another study's release: refused, as every reader
    if not releases:
        return []
    chain = release_chain_problems(study.gold_dir, releases)  # a release deleted by hand, as readers say it
    try:
        recorded = (read_manifest(releases[-1][1]).get("sources") or {}).get("decisions") or {}
    except GoldboardError as exc:  # an empty release folder, a manifest gone: as gold export says it
        return [*chain, str(exc)]
    try:
        entries = read_decisions(study.decisions_path)
    except GoldboardError:
        return chain
    problem = log_prefix_problem(study.decisions_path, entries, recorded, releases[-1][1].name, None)
    return chain + ([problem.removesuffix("; nothing written")] if problem else [])  # status writes nothing anyway


def _decisions_in_force(study: Study, res: StudyStatus) -> None:
    """Per disputed field: rows, decided / unresolved / open, by whom and where (decisions.jsonl)."""
    from goldboard.study import study_ratings

    try:
        ratings = study_ratings(study)
    except GoldboardError:
        return  # nothing pulled yet
    flags = flag_disagreements(ratings, study.schema, study.grid_raters())
    sel = flags.attrs.get("round_selection")
    res.round_rule = sel.rule if sel is not None else "per item, the latest round in which every rater rated it"
    in_force = latest_decisions(read_decisions(study.decisions_path))
    people: Counter = Counter()
    for fname in dict.fromkeys(flags["field"]) if len(flags) else []:
        rows = flags[flags["field"] == fname]
        d = {"rows": len(rows), "decided": 0, "unresolved": 0, "open": 0, "by": [], "sources": {}, "last": ""}
        # a flagged row is a label disagreement or another trigger (a missing rating, low confidence ...)
        d["disagreements"] = int(sum(str(x) == "True" for x in rows["disagree"])) if "disagree" in rows else len(rows)
        by: Counter = Counter()
        for item in rows["item_id"].astype(str):
            e = in_force.get((item, str(fname)))
            if e is None:
                d["open"] += 1
                continue
            d["unresolved" if e.get("decision") == UNRESOLVED else "decided"] += 1
            if e.get("decision") != UNRESOLVED:  # where the decided rows were decided (beside "N / M decided")
                src = str(e.get("source") or "")
                d["sources"][src] = d["sources"].get(src, 0) + 1
            by[str(e.get("adjudicator") or "?")] += 1
            d["last"] = max(d["last"], str(e.get("timestamp") or ""))
        d["by"] = [k for k, _ in by.most_common()]
        people.update(by)
        res.decisions[str(fname)] = d
    if people:
        res.adjudicator = ", ".join(k for k, _ in people.most_common())
    flagged = set(zip(flags["item_id"].astype(str), flags["field"].astype(str))) if len(flags) else set()
    if set(in_force) - flagged:  # a decision on a row no longer flagged: a later round may have settled it
        res.problems += _superseded_lines(study, ratings, list(in_force.values()))
        _count_kept(study, ratings, in_force, flagged, res)


def _count_kept(study: Study, ratings: Any, in_force: dict, flagged: set, res: StudyStatus) -> None:
    """Decisions in force on rows no longer flagged (a rater edited a rating after the decision)
    that gold still takes: counted beside their field (``kept``), as gold counts them adjudicated."""
    from goldboard.adjudicate.gold import resolve_gold

    gold = resolve_gold(ratings, study.schema, list(in_force.values()), study.grid_raters())
    if not len(gold) or "decision_id" not in gold.columns:
        return
    for rec in gold[["item_id", "field", "method", "decision_id"]].astype(str).to_dict("records"):
        key = (rec["item_id"], rec["field"])
        e = in_force.get(key)
        if key in flagged or e is None or rec["method"] not in ("adjudicated", "unresolved"):
            continue
        if str(e.get("id")) != rec["decision_id"]:
            continue
        d = res.decisions.setdefault(
            rec["field"],
            {
                "rows": 0,
                "decided": 0,
                "unresolved": 0,
                "open": 0,
                "by": [],
                "sources": {},
                "last": "",
                "disagreements": 0,
            },
        )
        d["kept"] = d.get("kept", 0) + 1
        d.setdefault("kept_items", []).append(rec["item_id"])


def _superseded_lines(study: Study, ratings: Any, decisions: list[dict]) -> list[str]:
    """One line when decisions made on an earlier round no longer settle their items (the raters of
    the item's later round all gave another value: :func:`~goldboard.adjudicate.gold.resolve_gold`),
    as ``gold export`` will warn, so that the progress above is not read as counting them."""
    from goldboard.adjudicate.gold import resolve_gold

    sup = resolve_gold(ratings, study.schema, decisions, study.grid_raters()).attrs.get("decisions_superseded") or []
    if not sup:
        return []
    ids = [str(d["decision_id"]) for d in sup]
    shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
    rounds = ", ".join(str(n) for n in sorted({int(d["decision_round"]) for d in sup}))
    one = len(sup) == 1
    return [
        f"{study.decisions_path}: {_n(len(sup), 'decision')} made on round {rounds} ({shown}) no longer "
        f"{'settles its item' if one else 'settle their items'}: the raters of {'the' if one else 'each'} item's "
        "later round all gave another value, which gold takes (`goldboard gold export` lists them)"
    ]


__all__ = ["study_status", "StudyStatus", "RaterProgress"]
