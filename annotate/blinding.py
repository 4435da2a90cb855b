"""Evidence of independence: what the Label Studio server lets each rater see, checked with
the rater's own account.

The embedded server keeps every rater and adjudicator in a Label Studio organization of
their own (see :mod:`goldboard.annotate._lsboot`), so blinding there is enforced by the
server, not by a convention.  :func:`check_round_access` proves it at push and at pull:
for every rater it logs in with that rater's API token and asks the server

* which projects the rater's project list shows (``GET /api/projects/``),
* whether each of the study's projects opens (``GET /api/projects/ID/``),
* whether its tasks can be listed (``GET /api/tasks/?project=ID``),
* whether an annotation in it can be read by id (``GET /api/annotations/ID/``; when one is known),

for the rater's own project, every other rater's project and the adjudication projects.
The result is recorded in ``study.toml`` (``[rounds.access]``, ``[adjudication.access]``) and
stated in the report's methods text.  On a server where goldboard holds no rater
credentials (your team's Label Studio) nothing can be checked: the record says
``method = "convention"`` (separate projects; raters told to open only their own).
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only for the annotations
    from goldboard.study import Study

#: what a record's ``method`` means
METHODS = {
    "organizations": "each rater in a Label Studio organization of their own (enforced by the server)",
    "convention": "separate projects in one organization (not enforced: every user could open every project)",
}


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _status(client: Any, path: str, params: dict | None = None) -> int:
    """HTTP status of one GET as ``client``'s user (network failures are raised as usual)."""
    with client._call(f"checking access to {path}"):
        r = client.sdk._client_wrapper.httpx_client.request(path, method="GET", params=params or {})
    return int(r.status_code)


def _listed(client: Any) -> set[int]:
    with client._call("listing the projects a rater sees"):
        return {int(p.id) for p in client.sdk.projects.list(page_size=1000)}


def person_access(client: Any, projects: dict[str, int], annotation_ids: dict[int, int] | None = None) -> dict:
    """What ``client``'s user can do with each project of ``projects`` (label -> id):
    ``{label: {"listed", "opens", "tasks", "annotation"}}`` (booleans; ``annotation`` only
    when an annotation id of that project is known)."""
    listed = _listed(client)
    out: dict[str, dict] = {}
    for label, pid in projects.items():
        rec = {
            "project": int(pid),
            "listed": int(pid) in listed,
            "opens": _status(client, f"api/projects/{int(pid)}/") == 200,
            "tasks": _status(client, "api/tasks/", {"project": int(pid), "page_size": 1}) == 200,
        }
        aid = (annotation_ids or {}).get(int(pid))
        if aid is not None:
            rec["annotation"] = _status(client, f"api/annotations/{int(aid)}/") == 200
        out[label] = rec
    return out


def _reach(rec: dict) -> bool:
    return any(bool(rec.get(k)) for k in ("listed", "opens", "tasks", "annotation"))


def check_round_access(
    client: Any,
    study: Study,
    rnd: Any,
    *,
    when: str,
    annotation_ids: dict[int, int] | None = None,
) -> dict:
    """Check, with each rater's own account, that a blinded round's raters reach only their
    own project (and no adjudication project).  ``when``: ``"push"`` or ``"pull"``.

    Returns the record stored as ``round.access[when]``::

        {"checked_at", "server", "method", "enforced": bool, "raters": {rater: {"own": id,
         "reaches": [labels of other projects the rater could list/open/read]}}, "note"}
    """
    creds = getattr(getattr(client, "conn", None), "credentials", None)
    rec: dict[str, Any] = {"checked_at": _now(), "server": getattr(client, "url", "")}
    if rnd.mode != "blinded":
        rec.update(method="shared", enforced=False, note="shared project: raters see each other's annotations")
        return rec
    if creds is None or not all(r in creds.users for r in rnd.projects):
        rec.update(
            method="convention",
            enforced=False,
            note="not checked: goldboard holds no rater credentials for this server; blinding relies on "
            "separate projects and on each rater opening only their own",
        )
        return rec
    rec["method"] = "organizations" if getattr(creds, "isolating", False) else "convention"
    projects = {f"project of {r}": int(pid) for r, pid in rnd.projects.items()}
    for f, pid in ((study.adjudication or {}).get("projects") or {}).items():
        projects[f"adjudication {f}"] = int(pid)
    raters: dict[str, dict] = {}
    ok = True
    for r, own in rnd.projects.items():
        rc = client.as_token(creds.users[r].token, f"{r}'s token")
        try:
            seen = person_access(rc, projects, annotation_ids)
        finally:
            rc.close()
        mine = seen.pop(f"project of {r}")
        reaches = sorted(label for label, x in seen.items() if _reach(x))
        raters[r] = {"own": int(own), "opens_own": bool(mine["opens"] and mine["listed"]), "reaches": reaches}
        ok = ok and not reaches and raters[r]["opens_own"]
    rec["raters"] = raters
    rec["enforced"] = ok
    checks = "project list, project page API, task list" + (", annotation by id" if annotation_ids else "")
    rec["checks"] = checks
    return rec


def check_adjudication_access(client: Any, study: Study, adjudicator: str | None) -> dict:
    """Check that no rater reaches an adjudication project and (when known) that the
    adjudicator does.  Stored as ``study.adjudication["access"]``."""
    creds = getattr(getattr(client, "conn", None), "credentials", None)
    projects = {f"adjudication {f}": int(p) for f, p in ((study.adjudication or {}).get("projects") or {}).items()}
    rec: dict[str, Any] = {"checked_at": _now(), "server": getattr(client, "url", "")}
    if creds is None or not all(r in creds.users for r in study.raters):
        rec.update(method="convention", enforced=False, note="not checked: no rater credentials for this server")
        return rec
    rec["method"] = "organizations" if getattr(creds, "isolating", False) else "convention"
    raters = {}
    ok = True
    for r in study.raters:
        rc = client.as_token(creds.users[r].token, f"{r}'s token")
        try:
            seen = person_access(rc, projects)
        finally:
            rc.close()
        raters[r] = sorted(label for label, x in seen.items() if _reach(x))
        ok = ok and not raters[r]
    rec["raters_reach"] = raters
    if adjudicator and adjudicator in creds.users:
        ac = client.as_token(creds.users[adjudicator].token, f"{adjudicator}'s token")
        try:
            seen = person_access(ac, projects)
        finally:
            ac.close()
        rec["adjudicator"] = adjudicator
        rec["adjudicator_opens"] = all(x["listed"] and x["opens"] for x in seen.values())
        ok = ok and rec["adjudicator_opens"]
    rec["enforced"] = ok
    return rec


def describe_access(rec: dict | None) -> str:
    """One sentence for a round's access record (for messages; the report words its own)."""
    if not rec:
        return "blinding not checked"
    if rec.get("method") == "shared":
        return "shared project (not blinded)"
    if rec.get("note"):
        return rec["note"]
    if rec.get("enforced"):
        return (
            f"checked {rec.get('checked_at', '')}: each rater reaches only their own project "
            f"({rec.get('checks', '')}) -- enforced by the server"
        )
    leaks = [f"{r} reaches {', '.join(x['reaches'])}" for r, x in (rec.get("raters") or {}).items() if x["reaches"]]
    lost = [r for r, x in (rec.get("raters") or {}).items() if not x.get("opens_own")]
    parts = leaks + [f"{r} cannot open their own project" for r in lost]
    return f"checked {rec.get('checked_at', '')}: NOT blinded by the server: " + "; ".join(parts)


__all__ = ["check_round_access", "check_adjudication_access", "person_access", "describe_access", "METHODS"]
