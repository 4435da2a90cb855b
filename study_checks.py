"""The integrity checks of a study workspace's records: every reader of a study's ratings runs
them, each problem one line naming the file (and the round, line or entry).

A study.toml edited by hand into one ``study init`` would refuse (:func:`check_loaded`); a
round's ``ratings.csv`` edited since its pull, or its pull record missing or damaged
(:func:`ratings_edit_problem`); a schema that is not the one a round was pulled with
(:func:`check_pulled_schema`); a round folder renamed, copied or deleted
(:func:`check_round_folders`); a pulled round study.toml does not list, a rated item without
its unit (:func:`edited_rounds`).  The checks read the workspace through the few paths and
readers of :class:`StudyFiles` (what :class:`goldboard.study.Study` has) and keep no record
themselves: :mod:`goldboard.study` keeps the records.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from goldboard.errors import GoldboardError, case_twin, check_rater_name
from goldboard.fileio import STUDY_MARKER as STUDY_FILE
from goldboard.fileio import iter_jsonl
from goldboard.text import read_number

if TYPE_CHECKING:
    from goldboard.label_configs.schema import Schema

#: a round folder's name as goldboard writes it (``rounds/1``, ``rounds/12``): ASCII digits, no leading zero
ROUND_DIR = re.compile(r"[1-9][0-9]*", re.ASCII)
#: files a file manager or the OS leaves in any folder: never an unexpected entry of a study folder
OS_FILES = frozenset({".ds_store", "thumbs.db", "desktop.ini"})


class StudyFiles(Protocol):
    """What the checks read of a study (:class:`goldboard.study.Study`)."""

    path: Path
    rounds: list[Any]
    units_path: Path

    def round_dir(self, round_number: int) -> Path: ...
    def ratings_path(self, round_number: int) -> Path: ...
    def invalid_path(self, round_number: int) -> Path: ...
    def pull_report_path(self, round_number: int) -> Path: ...
    def pulled_rounds(self) -> list[int]: ...
    def items_by_round(self) -> dict[int, set[str]]: ...
    def held_out(self, round_number: int) -> dict[str, set[str]]: ...
    def lost_ratings_rounds(self) -> list[int]: ...


def check_loaded(study: StudyFiles, raters: Any) -> None:
    """A study.toml edited by hand into a study ``study init`` would refuse is refused by every
    command that opens it (one line naming study.toml and the entry): the raters are a list of
    at least two names, each a valid rater name, none repeated or differing from another only in
    letter case; the rounds' numbers are 1, 2, ... with none repeated."""
    f = study.path / STUDY_FILE
    if not isinstance(raters, list) or not all(isinstance(r, str) for r in raters):
        raise GoldboardError(f'{f}: [study] raters: not a list of names (raters = ["onc_a", "onc_b"])')
    where = f"{f}: [study] raters"
    if len(raters) < 2:
        raise GoldboardError(f"{where}: {len(raters)} rater(s); a study needs at least two (study init refuses fewer)")
    for i, r in enumerate(raters):
        if r in raters[:i]:
            raise GoldboardError(
                f"{f}: rater {r!r} is listed twice in [study] raters (edited by hand?); list each rater once"
            )
        try:
            check_rater_name(r, "raters")
        except GoldboardError as exc:
            raise GoldboardError(f"{where}: {exc.message}") from None
        twin = case_twin(r, raters[:i])
        if twin is not None:
            raise GoldboardError(
                f"{f}: raters {twin!r} and {r!r} in [study] raters differ only in letter case (edited by hand?): "
                "one person, or two? list each rater once, spelled as in the ratings"
            )
    numbers = [r.number for r in study.rounds]
    for i, n in enumerate(numbers):
        if n < 1 or n in numbers[:i]:
            what = "listed twice" if n >= 1 else "not a round number (rounds are numbered from 1)"
            raise GoldboardError(f"{f}: [[rounds]] number = {n}: {what}")


def check_pulled_schema(study: StudyFiles, schema: Schema) -> None:
    """Refuse (one line) a study whose ``study.toml`` names another schema than the one a
    round's ratings were pulled with (``rounds/N/pull.json``: ``schema``): no command
    changes a study's schema, so study.toml was edited by hand, and every rating would be
    read against the wrong categories.  The line names the first rating of that round the
    schema now in study.toml cannot hold (file, line, field), if any.  A new version of the
    same schema (a guideline revised between rounds) is not refused."""
    for n in study.pulled_rounds():
        try:
            rec = json.loads(study.pull_report_path(n).read_text(encoding="utf-8-sig"))
        except (OSError, ValueError):
            continue  # missing or damaged: said by ratings_edit_problem
        pulled = rec.get("schema") if isinstance(rec, dict) else None
        if not isinstance(pulled, str) or pulled.rsplit(" v", 1)[0] == schema.name:
            continue
        first = first_foreign_rating(study, n, schema)
        raise GoldboardError(
            f"{study.path / STUDY_FILE}: schema {schema.name!r} does not match the ratings pulled with it: round "
            f"{n} was pulled with schema {pulled} ({study.pull_report_path(n)})"
            + (f", and {first}" if first else "")
            + f"; study.toml edited by hand? put back the schema {pulled.rsplit(' v', 1)[0]!r}"
        )


def first_foreign_rating(study: StudyFiles, round_number: int, schema: Schema) -> str:
    """``rounds/N/ratings.csv:LINE: FIELD: ...`` for the first rating ``schema`` has no field
    or value for (``""`` when it holds them all)."""
    from goldboard.label_configs.schema import ValueNotInSchema

    fields = {f.name: f for f in schema.fields}
    path = study.ratings_path(round_number)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            for line, row in enumerate(csv.DictReader(fh), start=2):
                name, value = row.get("field") or "", row.get("value") or ""
                if name not in fields:
                    return f"{path}:{line}: field: {name!r} is not one of its fields"
                f = fields[name]
                if value and f.kind not in ("text", "multi"):
                    try:
                        f.normalize(value)
                    except ValueNotInSchema:
                        return f"{path}:{line}: {name}: {value!r} is not one of its values"
    except (OSError, UnicodeDecodeError, csv.Error):
        return ""
    return ""


def ratings_edit_problem(study: StudyFiles, round_number: int, sha256: str | None = None) -> str | None:
    """One line when ``rounds/N/ratings.csv`` is no longer the file its pull wrote (its
    SHA-256 -- ``sha256`` when the caller hashed the bytes it read -- is not the one
    ``pull.json`` recorded): edited by hand; or when it cannot be checked because the pull's
    record is missing (with the ``invalid.csv`` the same pull wrote still there) or
    unreadable.  ``None`` when it is the pulled file, or when there is nothing to check it
    against: a pull record of an older goldboard (no digest), or a ``ratings.csv`` put
    there by hand on its own."""
    path = study.ratings_path(round_number)
    if not path.exists():
        return None
    recorded, problem = recorded_ratings_sha256(study, round_number)
    if recorded is None:
        return problem
    if sha256 is None:
        sha256 = hashlib.sha256(path.read_bytes()).hexdigest()
    if sha256 == recorded:
        return None
    return (
        f"{path}: changed since its pull (its SHA-256 is not the one pull.json recorded): edited by hand? "
        "ratings are what the raters entered; correct a rating in its source and pull again"
    )


def recorded_ratings_sha256(study: StudyFiles, round_number: int) -> tuple[str | None, str | None]:
    """``(digest, None)``: the ``ratings_sha256`` of round ``round_number``'s ``pull.json``;
    ``(None, None)`` when there is none to check against; ``(None, line)`` when the record
    is missing or damaged."""
    rec, path = study.pull_report_path(round_number), study.ratings_path(round_number)
    unchecked = (
        f"so {path} cannot be checked against its pull (a pull writes ratings.csv, invalid.csv and {rec.name} together)"
    )
    try:
        text = rec.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        if not study.invalid_path(round_number).exists():
            return None, None  # a ratings.csv put there by hand on its own: no pull to check it against
        return None, f"{rec}: missing, {unchecked}: deleted by hand? pull the round again, or restore the file"
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        return None, f"{rec}: cannot be read ({why}), {unchecked}: pull the round again, or restore the file"
    try:
        data = json.loads(text)
    except ValueError as exc:
        line = f" (line {exc.lineno})" if getattr(exc, "lineno", None) else ""
        return (
            None,
            f"{rec}: not valid JSON{line}, {unchecked}: edited by hand? pull the round again, or restore it",
        )
    if not isinstance(data, dict):
        return (
            None,
            f"{rec}: not a pull record (a JSON object), {unchecked}: pull the round again, or restore the file",
        )
    recorded = data.get("ratings_sha256")
    if recorded is None:
        return None, None  # a pull of an older goldboard recorded no digest
    if not isinstance(recorded, str) or len(recorded) != 64:
        return None, f"{rec}: ratings_sha256 {str(recorded)[:70]!r} is not a SHA-256, {unchecked}: edited by hand?"
    return recorded, None


def unlisted_rounds(study: StudyFiles) -> list[str]:
    """One line per round folder holding ratings a pull wrote (``rounds/N/pull.json``) that
    ``study.toml`` has no ``[[rounds]]`` entry for (deleted by hand, or a pull stopped before it
    saved study.toml): readers read its ratings, say so, and ``gold export`` refuses it."""
    listed = {r.number for r in study.rounds}
    return [
        f"{study.path / STUDY_FILE}: no [[rounds]] entry for round {n}, but {study.round_dir(n)} holds ratings a "
        f"pull wrote (pull.json): its settings (calibration, guideline version, projects) are lost; put the entry "
        f"back with `goldboard study round {study.path} {n} --main` (--calibration if it was a calibration round)"
        for n in study.pulled_rounds()
        if n not in listed and study.pull_report_path(n).exists()
    ]


def edited_rounds(study: StudyFiles) -> list[str]:
    """One line per problem of the study's pulled files that every reader of its ratings
    says (``report``, ``flag``, ``adjudicate sheet``, ``status``; ``agree`` for its round):
    a round whose ``ratings.csv`` changed since its pull or cannot be checked
    (:func:`ratings_edit_problem`, each file hashed once per call), and a pulled round
    study.toml does not list (:func:`unlisted_rounds`)."""
    edited = [p for p in (ratings_edit_problem(study, n) for n in study.pulled_rounds()) if p]
    return edited + unlisted_rounds(study) + units_gaps(study)


def units_gaps(study: StudyFiles) -> list[str]:
    """One line when ``units.jsonl`` (present, with records) has no unit for an item a round
    rated: the record of what the raters were shown is lost (a line deleted by hand), or the
    file cannot be read, or is gone or not a file (:func:`units_file_problem`).  ``[]`` for a
    study without a units file (ratings put there by hand)."""
    problem = units_file_problem(study)
    if problem:
        return [problem]
    if not study.units_path.exists():
        return []
    try:
        have = unit_ids(study.units_path)
    except GoldboardError as exc:
        return [f"{exc} (the record of what the raters were shown)"]
    if not have:
        return []
    try:
        rated = study.items_by_round()
    except (OSError, UnicodeDecodeError, csv.Error):
        return []  # a ratings file that cannot be read: named by the command reading it
    lines = []
    for n, items in rated.items():
        missing = sorted(items - have)
        if missing:
            shown = ", ".join(map(repr, missing[:3])) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            lines.append(
                f"{study.units_path}: no unit for {len(missing)} item(s) rated in {study.ratings_path(n)} ({shown}): "
                "the record of what the raters were shown is lost (a line deleted by hand?); restore the file"
            )
    return lines


def units_file_problem(study: StudyFiles) -> str:
    """The line saying ``units.jsonl`` cannot hold what the study recorded (``""`` when it can):
    a folder (or anything but a file) in its place, or the file gone while study.toml records
    items a round pushed or pulled (the review sheet would show no case or output)."""
    p = study.units_path
    if p.exists() or p.is_symlink():
        if p.is_file():
            return ""
        what = "a folder" if p.is_dir() else "not a file (a broken link or a special file)"
        return f"{p}: {what}, where the study's items file should be (what the raters were shown); put the file back"
    recorded = [(r.number, r.units) for r in study.rounds if r.units]
    if not recorded:
        return ""
    n, units = recorded[0]
    return (
        f"{p}: file not found, but {study.path / STUDY_FILE} records {units} item(s) in round {n}: the record "
        "of what the raters were shown is lost (deleted by hand?); restore the file from a backup"
    )


def stray_round_entries(study: StudyFiles) -> list[tuple[str, int | None]]:
    """The entries of ``rounds/`` that are not a round folder as goldboard names it
    (``rounds/1``, ``rounds/2``, ...: no leading zero, no other character), each with the
    round number its name reads as to a person (:func:`~goldboard.text.read_number`: ``01``, ``1`` with a
    zero-width space, `` 1``, a full-width ``１``), or ``None`` (``sub``, ``old``).  Files a
    file manager leaves (``.DS_Store``, ``Thumbs.db``, ``desktop.ini``) are not listed."""
    root = study.path / "rounds"
    if not root.is_dir():
        return []
    out = []
    for p in sorted(root.iterdir(), key=lambda p: p.name):
        if ROUND_DIR.fullmatch(p.name) or p.name.casefold() in OS_FILES:  # a file rounds/1: round 1 missing
            continue
        out.append((p.name, read_number(p.name)))
    return out


def check_round_folders(study: StudyFiles) -> None:
    """Refuse (one line) a study whose round folders are not where its records put them:

    * a round whose pull of files ``study.toml`` records (``tables``: a ratings table or a
      tool's export, recorded once the round's files are written) with neither ``rounds/N/ratings.csv`` nor
      ``rounds/N/pull.json`` (the folder deleted, emptied or renamed): named with the entry
      of ``rounds/`` that holds it, if one reads as round N or holds round N's ``pull.json``;
    * an entry of ``rounds/`` whose name reads as a round number but is not one
      (``rounds/01``, ``1`` with an invisible character): renamed by hand, or a copy beside
      the round's folder; every reader would otherwise pass it over in silence.

    * an entry of ``rounds/`` holding round N's ``pull.json`` while ``rounds/N`` does not exist
      (a round folder renamed ``rounds/old``, whatever study.toml records).

    Other entries (``rounds/old``) are read by no command; ``status`` names them."""
    stray = stray_round_entries(study)
    root = study.path / "rounds"
    for rnd in study.rounds:
        n = rnd.number
        if not rnd.tables:  # recorded after the round's files are written: a stopped pull never leaves it alone
            continue
        if study.ratings_path(n).exists() or study.pull_report_path(n).exists():
            continue
        what = "from " + ", ".join(map(str, rnd.tables))
        moved = [name for name, m in stray if m == n or pull_record_round(root / name) == n]
        where = (
            f"{shown_entry(root, moved[0])} holds it: renamed? rename it back to {study.round_dir(n)}"
            if moved
            else "deleted by hand? restore it from a backup"
        )
        raise GoldboardError(
            f"{study.round_dir(n)}: missing, but {study.path / STUDY_FILE} records round {n}'s pull ({what}); "
            f"{where} (its ratings would otherwise drop out of every result)"
        )
    for name, n in stray:
        if n is None:
            continue
        shown = shown_entry(root, name)
        if n >= 1 and study.round_dir(n).is_dir():
            raise GoldboardError(
                f"{shown}: reads as round {n}, beside {study.round_dir(n)}, but no command reads it: a copy? "
                "move it out of the study"
            )
        to = f"rename it back to {study.round_dir(n)}" if n >= 1 else "rounds are numbered from 1: rename it"
        raise GoldboardError(
            f"{shown}: not a round folder name (goldboard names round folders {root / '1'}, {root / '2'}, ...), "
            f"though it reads as round {n}: renamed by hand? {to} (or move it out of the study)"
        )
    for name, _ in stray:  # rounds/old holding round 1's pull record, rounds/1 gone (a Label Studio round too)
        n = pull_record_round(root / name)
        if n is not None and n >= 1 and not study.round_dir(n).exists():
            raise GoldboardError(
                f"{study.round_dir(n)}: missing, but {shown_entry(root, name)} holds round {n}'s pull record "
                f"(pull.json): renamed? rename it back to {study.round_dir(n)} (its ratings would otherwise drop "
                "out of every result)"
            )


def check_round_files(study: StudyFiles) -> None:
    """:func:`check_round_folders`, and a round whose ``pull.json`` is there without its
    ``ratings.csv`` (deleted by hand: a pull writes the ratings first) is a one-line error:
    its ratings would silently drop out."""
    check_round_folders(study)
    for rec in (study.path / "rounds").glob("*/pull.json"):
        if ROUND_DIR.fullmatch(rec.parent.name) and not (rec.parent / "ratings.csv").exists():
            raise GoldboardError(
                f"{rec.parent / 'ratings.csv'}: missing, but {rec} records its pull: deleted by hand? restore it "
                f"from a backup (or move {rec.parent} out of the study and pull round {rec.parent.name} again)"
            )


def unexpected_round_entries(study: StudyFiles) -> list[str]:
    """One line per entry of ``rounds/`` that no command reads (not a round number): ``status``
    names them.  (An entry that reads as a round number is refused: :func:`check_round_folders`.)"""
    root = study.path / "rounds"
    return [
        f"{shown_entry(root, name)}: not a round folder (goldboard names them {root / '1'}, {root / '2'}, ...); "
        "no command reads it: move it out of the study"
        for name, n in stray_round_entries(study)
        if n is None
    ]


def shown_entry(folder: Path, name: str) -> str:
    """``folder/name`` as a message shows it: a name with an invisible, control or surrounding
    space character quoted with its escapes (``rounds/'1\\u200b'``), so the reader sees it."""
    return str(folder / name) if name.isprintable() and name == name.strip() else f"{folder}/{name!r}"


def pull_record_round(folder: Path) -> int | None:
    """The ``round`` a folder's ``pull.json`` records (a round folder moved under another name)."""
    try:
        rec = json.loads((folder / "pull.json").read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    n = rec.get("round") if isinstance(rec, dict) else None
    return n if isinstance(n, int) else None


#: a units line as goldboard writes it (``json.dumps`` of a record whose first key is a plain
#: item id): its id is the text between the quotes, no JSON parse needed
_UNIT_LINE = re.compile(r'^\{"item_id": "([^"\\\n]*)"[^\n]*\}[ \t\r]*$', re.M)


def unit_ids(path: Path) -> set[str]:
    """The item ids of a units file (a large study's units file is read by every reader's
    :func:`units_gaps`): when every line is one goldboard wrote (the id first, plain text),
    the ids are taken from the lines as they stand (200,000 units: 0.1 s, against 1.5 s for a
    JSON parse per line); any other file is read with the plain JSON parser, and a file it
    cannot read again by :func:`~goldboard.fileio.iter_jsonl`, whose one-line error names the
    line.  (What a unit says is checked by the readers of the units, not here.)"""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            text = fh.read()
        ids = _UNIT_LINE.findall(text)
        if len(ids) == sum(1 for line in text.splitlines() if line.strip()):
            return set(ids)
        recs = [json.loads(line) for line in text.splitlines() if line.strip()]
        return {str(u.get("item_id")) for u in recs if isinstance(u, dict)}
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return {str(u.get("item_id")) for _, u in iter_jsonl(path, " in the units file") if isinstance(u, dict)}


def no_ratings_text(study: StudyFiles, round_number: int) -> str:
    """Why a round has no ratings: ``nobody has annotated it``, or, when its pull held every
    annotation out, ``all 4 ratings pulled were held out as invalid: see rounds/1/invalid.csv``."""
    held = study.held_out(round_number)
    n = sum(len(v) for v in held.values())
    if not n:
        return "nobody has annotated it"
    what = "the 1 rating pulled was" if n == 1 else f"all {n} ratings pulled were"
    return f"{what} held out as invalid: see {study.invalid_path(round_number)}"


def no_ratings_error(study: StudyFiles) -> GoldboardError:
    """The error for a study without ratings: "no ratings pulled yet", unless a round's
    ``pull.json`` records a pull whose ``ratings.csv`` is gone (then that file is named)."""
    gone = study.lost_ratings_rounds()
    if gone:
        n = gone[-1]
        return GoldboardError(
            f"{study.ratings_path(n)}: missing, but round {n} was pulled ({study.pull_report_path(n)} records it); "
            f"restore the file from a backup, or pull round {n} again"
        )
    held = [n for n in study.pulled_rounds() if study.held_out(n)]
    if held:  # pulled, but every annotation was held out (not "no ratings pulled yet")
        return GoldboardError(
            f"{study.path}: no valid ratings yet: round {held[-1]}: {no_ratings_text(study, held[-1])} "
            f"(correct them at the source and pull again)"
        )
    return GoldboardError(f"{study.path}: no ratings pulled yet (run `goldboard pull --study {study.path}`)")
