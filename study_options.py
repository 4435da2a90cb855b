"""The checks of the options a study is made or changed with (``study init``, ``study set``,
``study add-rater``, ``study round``, ``--round``): the raters' names, the server URL, a study
name, free text stored in ``study.toml``, where a study may be made, a round number.  Each
refusal is one line naming the library parameter; none of them reads or writes a study's files
beyond what a check needs (:mod:`goldboard.study` keeps the records).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from goldboard.cases.ids import ID_SPACE, hidden_text_message
from goldboard.errors import GoldboardError, ParamError, case_twin, check_rater_name
from goldboard.fileio import STUDY_MARKER as STUDY_FILE
from goldboard.fileio import study_own_file
from goldboard.label_configs.schema import Schema, load_schema
from goldboard.study_checks import StudyFiles


def check_new_raters(raters: list[str]) -> list[str]:
    """The raters of a new study (``study init``), stripped: at least two, each a valid rater
    name, none repeated or differing from another only in letter case."""
    raters = [r.strip() for r in raters if r.strip()]
    if len(raters) < 2:
        raise GoldboardError("a study needs at least two raters (e.g. onc_a,onc_b)", param="raters")
    if len(set(raters)) != len(raters):
        raise GoldboardError("rater names must be unique", param="raters")
    for i, r in enumerate(raters):
        check_rater_name(r, "raters")
        twin = case_twin(r, raters[:i])
        if twin is not None:
            raise GoldboardError(
                f"{twin!r} and {r!r} differ only in letter case: one person, or two? "
                f"give two raters names that differ in more than case",
                param="raters",
            )
    return raters


def check_new_rater(name: str, raters: list[str]) -> str:
    """A rater added to a study of ``raters`` (``study add-rater``), stripped: a valid name, not
    one of them, nor one differing from one of them only in letter case."""
    name = name.strip()
    check_rater_name(name, "rater")
    if name in raters:
        raise GoldboardError(f"{name!r} is already a rater of this study ({', '.join(raters)})")
    twin = case_twin(name, raters)
    if twin is not None:
        raise GoldboardError(
            f"{name!r}: the study has rater {twin!r}, which differs only in letter case: "
            f"give the new rater a name that differs in more than case (or use {twin!r})"
        )
    return name


def check_new_study(
    path: Path, schema: str, raters: list[str], url: str, name: str, data_dir: str
) -> tuple[str, Schema, list[str], str]:
    """The options of ``study init`` for a study in ``path``, checked in this order: no study
    there yet nor around it, the raters (:func:`check_new_raters`), the schema (a schema file's
    path made absolute), the URL, the name, the data dir.  Returns ``(schema_ref, schema,
    raters, url)`` as stored."""
    if (path / STUDY_FILE).exists():
        raise GoldboardError(f"{path / STUDY_FILE}: a study already exists here")
    check_not_inside_a_study(path)
    raters = check_new_raters(raters)
    schema_ref = schema
    sch_path = Path(schema)
    if sch_path.suffix.lower() in (".toml", ".json") and sch_path.exists():
        schema_ref = str(sch_path.resolve())
    sch = load_schema(schema_ref)
    url = check_server_url(url)
    if name:
        check_study_name(name.strip())
    check_free_text(data_dir, "data_dir", "the path")
    return schema_ref, sch, raters, url


def check_settings(*, url: str | None = None, data_dir: str | None = None, name: str | None = None) -> dict[str, str]:
    """The settings ``study set`` changes (those given, in this order), as stored: the URL
    (:func:`check_server_url`), the data dir, the name (stripped, non-empty)."""
    out: dict[str, str] = {}
    if url is not None:
        out["url"] = check_server_url(url)
    if data_dir is not None:
        check_free_text(data_dir, "data_dir", "the path")
        out["data_dir"] = data_dir
    if name is not None:
        name = name.strip()
        if not name:
            raise GoldboardError("give a non-empty name", param="name")
        check_study_name(name)
        out["name"] = name
    return out


def setting_change(key: str, old: str, new: str) -> str:
    """The line ``study set`` prints for a changed setting (``url: old -> new``).

    >>> setting_change("data_dir", "", "/srv/ls")
    'data_dir: (default) -> /srv/ls'
    """
    if key == "url":
        return f"url: {shown_url(old) or '(embedded server)'} -> {new or '(embedded server)'}"
    if key == "data_dir":
        return f"data_dir: {old or '(default)'} -> {new or '(default)'}"
    return f"{key}: {old} -> {new}"


def check_round_marks(round_number: int, have: list[int], guideline_version: str | None) -> str | None:
    """The round ``study round`` records (``have``: the study's rounds, sorted): numbered from 1,
    one of ``have`` or the next (no gaps); and its guideline version as stored
    (:func:`free_text_option`; ``None``: not given)."""
    if round_number < 1:
        raise ParamError("{round_number} {n}: rounds are numbered from 1", n=round_number)
    if guideline_version is not None:
        guideline_version = free_text_option(guideline_version, "guideline_version", "the version")
    nxt = have[-1] + 1 if have else 1
    if round_number not in have and round_number != nxt:
        raise GoldboardError(
            f"round {round_number}: the study has "
            + (f"rounds {', '.join(map(str, have))}" if have else "no rounds yet")
            + f"; a new round is round {nxt} (rounds are numbered without gaps)"
        )
    return guideline_version


def check_round(study: StudyFiles, round_number: int) -> None:
    """``--round N`` read by a command (agree, flag, report, sheet, plan, calibrate, gold):
    a round the study does not have -- neither in ``study.toml`` nor pulled -- is named as
    such ("the study has rounds 1-3; round 7 does not exist"), never advised to be pulled
    (``pull`` refuses a round beyond the next)."""
    have = sorted({r.number for r in study.rounds} | set(study.pulled_rounds()))
    if round_number in have:
        return
    if not have:
        span = "no rounds yet"
    elif len(have) == 1:
        span = f"round {have[0]}"
    elif have == list(range(have[0], have[-1] + 1)):
        span = f"rounds {have[0]}-{have[-1]}"
    else:
        span = "rounds " + ", ".join(map(str, have))
    raise ParamError(
        "{where}: {round_number} {n}: the study has {span}; round {n} does not exist",
        n=round_number,
        span=span,
        where=study.path,
    )


def check_not_inside_a_study(path: Path) -> None:
    """Refuse (one line) a new study folder inside another study's own folders (``rounds/``,
    ``gold/``, ``judges/``, a hidden folder: :func:`~goldboard.fileio.study_own_file`), where every
    reader of that study would meet it (and every ``-o`` refuses to write).  A study in a folder
    directly in another study's folder (``X/sub``, or under ``X/reports/``) is another study
    beside its files, and is made."""
    own = study_own_file(path)
    if own is not None:
        folder, what = own
        raise GoldboardError(
            f"{path}: is inside the study in {folder} ({what}); a study is never made inside another study's own "
            f"folders: give a folder outside them (a folder directly in {folder}, e.g. {folder / path.name}, is fine)"
        )


def shown_url(url: str) -> str:
    """``url`` as it may be printed: a user name and password (``http://u:pw@host``, from an
    older study.toml) shown as ``http://...@host``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.rsplit("@", 1)[-1] if "@" in url else url
    if "@" not in parts.netloc:
        return url
    return f"{parts.scheme}://...@{parts.netloc.rsplit('@', 1)[1]}{url.split(parts.netloc, 1)[1]}"


def check_free_text(text: str, param: str, what: str = "the text", echo: bool = True) -> None:
    """Free text goldboard stores in ``study.toml`` and prints (a study name, a guideline
    version, a table's source name, a URL, a rater's qualifications, the case source) holding a
    hidden character (:func:`goldboard.cases.ids.is_hidden`: a control, line-break, bidi-control,
    zero-width or other invisible format character) is refused naming library parameter
    ``param`` and the code point, the text shown with the character escaped (``'v2\\u200b'``;
    ``echo=False``: not shown, as a URL may carry a password): in the report and every printed
    summary such a character hides or reorders text, a line break in a one-line fact silently
    splits it, and a key (a source name) holding one is not the key it looks like."""
    msg = hidden_text_message(text, what, echo=echo)
    if msg:
        raise GoldboardError(msg, param=param)


def free_text_option(text: str, param: str, what: str = "the text") -> str:
    """A free-text option goldboard stores as a key or a label in the study's records (a round's
    ``--guideline-version``, a pulled table's or file's ``--source`` name): spaces, tabs and line
    ends around it are no part of it and are dropped (a pasted ``' v2 '`` is ``v2``, as an id's
    are); a hidden character inside it is refused (:func:`check_free_text`, naming ``param``
    and the code point).  Returns the text as stored.

    >>> free_text_option("  v2 \\n", "guideline_version")
    'v2'
    """
    text = text.strip(ID_SPACE)
    check_free_text(text, param, what)
    return text


def check_study_name(name: str, param: str = "name") -> None:
    """A study name holding a control, line-break or bidi-control character is refused: the
    name heads the report and every printed summary, where such a character hides or
    reorders text."""
    check_free_text(name, param, "the name")


def check_server_url(url: str, param: str = "url") -> str:
    """The Label Studio URL as stored in study.toml (stripped, no trailing ``/``; ``""``
    is the embedded server).  Not http(s), or carrying a user name and password
    (``http://user:secret@host``), is a one-line error that never repeats the password:
    study.toml holds no secrets and the URL is printed by ``study show``."""
    url = url.strip().rstrip("/")
    if not url:
        return ""
    # before urlsplit, which silently drops a tab or line break inside the URL
    check_free_text(url, param, "the URL", echo=False)
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:  # a malformed IPv6 literal
        parts, password = None, None
    shown = shown_url(url)
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ParamError(
            "{" + param + "} {shown!r}: give an http:// or https:// URL (or '' for the embedded server)", shown=shown
        )
    try:
        port = parts.port
    except ValueError:  # not a number, or above 65535
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise ParamError("{" + param + "} {shown!r}: the port must be a number from 1 to 65535", shown=shown)
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        bare = shown.split("?", 1)[0].split("#", 1)[0]
        raise ParamError(
            "{" + param + "} '{bare}?...': the URL has a query or fragment; a Label Studio URL needs none and one "
            "may hold a secret (a token): give the server's address only, e.g. {base!r} (the API token "
            "comes from $LABEL_STUDIO_API_KEY or ~/.config/goldboard/credentials.toml)",
            bare=bare,
            base=bare.rstrip("/"),
        )
    if password is not None or "@" in parts.netloc:
        what = "a password" if password is not None else "a user name"
        raise ParamError(
            "{" + param + "} {shown!r}: the URL contains {what}; leave it out (study.toml holds no secrets and a "
            "command line is visible to every local user): the API token comes from $LABEL_STUDIO_API_KEY "
            "or ~/.config/goldboard/credentials.toml",
            shown=shown,
            what=what,
        )
    return url
