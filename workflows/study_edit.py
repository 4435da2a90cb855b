"""Study edits that touch more than study.toml: adding a rater (and their embedded-server account)."""

from __future__ import annotations

from goldboard.annotate import server as srv
from goldboard.study import Study


def add_rater(study: Study, name: str, *, create_account: bool = True) -> str:
    """Add rater ``name`` to ``study``; on the embedded server (no ``url``) also create their
    Label Studio account when the server's data dir exists.  Returns one line saying what was
    done (never a password or token: they stay in the data dir's 0600 credentials file)."""
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
