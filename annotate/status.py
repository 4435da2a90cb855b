"""Progress without pulling: per round and rater, tasks done / total and last activity; for the
adjudicator, decisions open.  Reads the server and the study; writes nothing.

Counts come from Label Studio's task list (one request per 1000 tasks per project):
a task is *done* for a rater when it holds a submitted (not skipped) annotation of
theirs -- in a blinded round any annotation in the rater's own project, in a shared
round one whose annotator is the rater.  *Last annotation* is the newest annotation
time among those tasks; *last seen* is Label Studio's own record of the rater's last
request, when the server shows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from goldboard.errors import LabelStudioError


@dataclass
class RaterProgress:
    rater: str
    project: int
    done: int
    total: int
    last_annotation: str = ""
    last_seen: str = ""


@dataclass
class StudyStatus:
    url: str
    rounds: dict[int, list[RaterProgress]] = field(default_factory=dict)
    adjudicator: str = ""
    adjudication: dict[str, dict] = field(default_factory=dict)  # field -> {project, decided, total, last}
    problems: list[str] = field(default_factory=list)

    @property
    def decisions_open(self) -> int:
        return sum(a["total"] - a["decided"] for a in self.adjudication.values())

    def to_dict(self) -> dict:
        return {
            "url": self.url,
            "rounds": {str(n): [vars(p) for p in ps] for n, ps in sorted(self.rounds.items())},
            "adjudicator": self.adjudicator,
            "adjudication": self.adjudication,
            "decisions_open": self.decisions_open,
            "problems": self.problems,
        }

    def describe(self) -> str:
        lines = [f"Label Studio: {self.url}"]
        for n, ps in sorted(self.rounds.items()):
            lines.append(f"round {n}:")
            for p in ps:
                pct = f"{100 * p.done / p.total:.0f}%" if p.total else "-"
                last = f"last annotation {_short(p.last_annotation)}" if p.last_annotation else "no annotation yet"
                seen = f", last seen {_short(p.last_seen)}" if p.last_seen else ""
                lines.append(f"  {p.rater:<14} {p.done:>5} / {p.total:<5} done ({pct:>4})  {last}{seen}")
        if self.adjudication:
            who = f" ({self.adjudicator})" if self.adjudicator else ""
            lines.append(f"adjudication{who}: {self.decisions_open} decisions open")
            for f, a in self.adjudication.items():
                last = f", last decision {_short(a['last'])}" if a.get("last") else ""
                lines.append(f"  {f:<14} {a['decided']:>5} / {a['total']:<5} decided{last}")
        lines += [f"warning: {p}" for p in self.problems]
        return "\n".join(lines)


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


def study_status(study: Any, client: Any = None) -> StudyStatus:
    """The progress of every round of ``study`` and of its adjudication (reads only)."""
    from goldboard.annotate.client import connect
    from goldboard.annotate.pull import rater_user_ids

    own = client is None
    client = client or connect(study)
    try:
        res = StudyStatus(url=client.url, adjudicator=str((study.adjudication or {}).get("adjudicator") or ""))
        uid_rater, _ = rater_user_ids(client, list(study.raters), dict((study.extra or {}).get("rater_users", {})))
        rater_uid = {r: u for u, r in uid_rater.items()}
        seen: dict[int, str] = {}
        try:
            with client._call("listing users"):
                for u in client.sdk.users.list():
                    seen[int(u.id)] = str(getattr(u, "last_activity", "") or "")
        except LabelStudioError:
            pass
        for rnd in study.rounds:
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
        for fname, pid in ((study.adjudication or {}).get("projects") or {}).items():
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


__all__ = ["study_status", "StudyStatus", "RaterProgress"]
