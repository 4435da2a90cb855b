"""Study edits that touch more than study.toml: adding a rater (and their embedded-server account)."""

from __future__ import annotations

from goldboard.adjudicate.decisions import read_decisions
from goldboard.annotate import server as srv
from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.workflows.judge import study_judges


def other_roles(study: Study, name: str) -> str | None:
    """What ``name`` already is in ``study`` besides a rater (an adjudicator in the decisions log or
    study.toml, or a judge), letter case aside; ``None``: nothing."""
    key = name.strip().casefold()
    logged = {str(e.get("adjudicator")) for e in read_decisions(study.decisions_path) if e.get("adjudicator")}
    for who in sorted(logged):
        if who.casefold() == key:
            return f"the adjudicator {who!r} of decisions in {study.decisions_path}"
    recorded = str((study.adjudication or {}).get("adjudicator") or "")
    if recorded and recorded.casefold() == key:
        return f"the study's adjudicator {recorded!r} ([adjudication] in {study.path / 'study.toml'})"
    for judge in study_judges(study):
        if judge.casefold() == key:
            return f"the judge {judge!r} of this study (its labels are in judges/labels.csv)"
    return None


def add_rater(study: Study, name: str, *, create_account: bool = True) -> str:
    """Add rater ``name`` to ``study``; on the embedded server (no ``url``) also create their
    Label Studio account when the server's data dir exists.  Returns one line saying what was
    done (never a password or token: they stay in the data dir's 0600 credentials file).
    A name that is already the study's adjudicator or a judge is refused: a rater never decides
    their own disagreements, and a judge is never a clinician."""
    role = other_roles(study, name)
    if role is not None:
        raise GoldboardError(
            f"{name.strip()!r}: already {role}; a rater needs a name of their own (an adjudicator of the "
            f"study's disagreements is not one of its raters, and a judge is never a clinician)"
        )
    study.add_rater(name)
    name = name.strip()
    line = f"{study.path}: added rater {name} (raters: {', '.join(study.raters)})"
    if study.url:
        return (
            f"{line}; create a Label Studio account for {name} on {study.url} (pull matches users by "
            f"username or e-mail, or [extra.rater_users] in study.toml)"
        )
    data_dir = study.data_dir or None
    if not create_account:
        return f"{line}; the embedded server account is created by the next push"
    if not srv.credentials_path(data_dir).exists():
        return f"{line}; the embedded server has no data dir yet: the account is created by `goldboard server start` or the next push"
    creds = srv.prepare_data_dir(data_dir, [name])
    return (
        f"{line}; Label Studio account {name!r} (user {creds.users[name].id}) on the embedded server, "
        f"login in {srv.credentials_path(data_dir)}"
    )


__all__ = ["add_rater"]
