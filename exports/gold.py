"""Versioned gold releases: ``gold/vN/{gold.<ext>, manifest.json}``, never overwritten.

Multi-select fields (e.g. mtb ``missing_info``) have gold rows like any field; their
``gold_value`` is the set ``|``-joined in schema order, and ``""`` is the empty set
unless ``method`` is ``unresolved`` (see :mod:`goldboard.adjudicate.gold`).  In the
jsonl/json/csv/xlsx files the value is the same string; read ``method`` with it.

:func:`goldboard.workflows.export_gold` resolves gold (:func:`goldboard.adjudicate.gold.resolve_gold`)
from a study's ratings and decisions log and writes the next release ``vN``
(N = one more than the highest existing).  The release is assembled in a hidden
temporary folder inside ``gold/`` and renamed into place, so a release folder
either is complete or does not exist; its files are made read-only.

Re-running with nothing changed does not cut a new release: when the gold table's
content digest equals the latest release's, :func:`write_gold_release` returns that
release with ``created=False`` (the CLI says "gold unchanged since vN; use --force
to cut a new release anyway").  ``force=True`` cuts one regardless (e.g. to add
another file format).

``manifest.json``::

    {"release_format": 2, "version": "v2", "number": 2, "created_at": "...",
     "study": "...", "study_created": "<study.toml created_at>",
     "schema": {"name", "version"}, "raters": [...], "fields": [...],
     "rounds": {"rule": "latest_complete_per_item", "round": null,
                "items_per_round": {"1": 58, "2": 2},
                "incomplete_later_rounds": [{"item_id": "C-7::m1", "round": 3, "used_round": 2,
                                             "rated_by": ["onc_a"], "missing": ["onc_b"]}],
                "decisions_on_earlier_rounds": [{"item_id": "C-3::m1", "field": "safety_label",
                    "decision_id": "D000004", "decision": "Supported", "decision_round": 1, "round": 2,
                    "later": "disagrees"}],
                "decisions_superseded": [{"item_id": "C-5::m1", "field": "safety_label",
                    "decision_id": "D000006", "decision": "Unsupported", "decision_round": 1, "round": 2,
                    "unanimous_value": "Supported"}],
                "unresolved_missing_rating": {"rows": 2, "items": 2, "rounds": [1],
                                              "first_items": ["C-8::m1", "C-9::m1"],
                                              "raters_without_ratings": ["onc_c"]}},  (when one rated none)
     "format": "csv", "rows": 120, "items": 60,
     "counts": {"safety_label": {"unanimous": 44, "adjudicated": 14, "unresolved": 2},
                "missing_info": {...}, "all": {...}},
     "files": {"gold.csv": {"sha256": "...", "bytes": 9876}},
     "gold_sha256": "<content digest, independent of format>",
     "sources": {"ratings": [{"path": "rounds/1/ratings.csv", "round": 1, "sha256": "..."}],
                 "left_out_raters": [{"rater": "onc_c", "round": 1, "ratings": 30}],  (--only-study-raters)
                 "decisions": {"path": "decisions.jsonl", "sha256": "...", "entries": 17,
                               "in_force": 15, "orphans": 0}},
     "previous": "v1", "forced": false, "goldboard_version": "0.1.0"}

``missing_releases`` (``["v1"]``) is there when ``gold export --allow-missing-releases`` released
although a release an earlier manifest names as its previous was gone from ``gold/``
(:func:`release_chain_problems`); a folder whose name reads as a release but is not a release
name (``v2`` with an invisible character, ``V2``), a file named like a release, and a release of
another study (the manifest's ``study`` and ``study_created``: a copy or a symlink,
:func:`check_release_owner`) are refused by :func:`list_releases`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldboard import __version__
from goldboard.adjudicate.gold import gold_digest, method_counts
from goldboard.cases.ratings_columns import PandasOnUse
from goldboard.errors import GoldboardError, GoldboardWarning
from goldboard.exports.sanitize import set_text_cell
from goldboard.fileio import (
    NO_ROOM_ERRNOS,
    csv_text,
    file_lock,
    fsync_dir,
    iter_jsonl,
    load_workbook,
    no_room_error,
    read_csv_frame,
    read_json_file,
    save_workbook_atomic,
    sha256_file,
    umask,
)
from goldboard.text import cell_text, natural_key, read_number, unneutralize_formula, utc_now

pd = PandasOnUse()  # imported when first used: the review sheet's log check lists releases only

FORMATS = ("csv", "jsonl", "json", "xlsx")
#: release files are read-only; like every study file they follow the umask (README "Permissions")
RELEASE_FILE_MODE = 0o444
RELEASE_FORMAT = 2  # 2: gold rows carry "round"; manifest "rounds"
#: a release folder's name: ``v`` and ASCII digits (``v02`` is release 2, as ever)
_VERSION_RE = re.compile(r"^v(\d+)$", re.ASCII)
#: letters that look like ``v`` in a release folder's name (Greek nu, Cyrillic izhitsa)
_V_LOOK_ALIKES = str.maketrans({"\u03bd": "v", "\u0475": "v"})


@dataclass
class GoldRelease:
    version: str
    path: Path
    created: bool
    manifest: dict[str, Any]
    gold: pd.DataFrame | None = None
    #: unfinished release folders of an interrupted export, removed by this one
    cleaned: list[str] = field(default_factory=list)

    @property
    def file(self) -> Path:
        return self.path / f"gold.{self.manifest['format']}"


# --------------------------------------------------------------------------- releases on disk


def list_releases(gold_dir: str | Path, *, warn_chain: bool = True) -> list[tuple[int, Path]]:
    """Existing releases as ``(N, path)`` sorted by N (temporary folders ignored).

    A folder whose name reads as a release but is not one (:func:`check_release_folders`:
    ``v2`` with an invisible character, ``V2``, `` v2``) is refused (one line): every reader of
    the releases would otherwise take an earlier release for the latest.  A release named as
    ``previous`` by a later release's manifest but gone (:func:`release_chain_problems`) is a
    :class:`~goldboard.errors.GoldboardWarning` unless ``warn_chain`` is false (the caller
    says it itself)."""
    gold_dir = Path(gold_dir)
    if not gold_dir.is_dir():
        return []
    check_release_folders(gold_dir)
    out = []
    for p in gold_dir.iterdir():
        m = _VERSION_RE.match(p.name)
        if m and p.is_dir():
            out.append((int(m.group(1)), p))
    out.sort()
    check_release_owner(gold_dir, out)
    for line in release_chain_problems(gold_dir, out) if warn_chain else []:
        warnings.warn(line, GoldboardWarning, stacklevel=2)
    return out


def _study_identity(gold_dir: Path) -> tuple[str, str, tuple[str, ...]] | None:
    """``(name, created_at, former names)`` of the study whose ``gold/`` folder this is (its
    study.toml; ``study set --name`` keeps the names it replaced in ``[extra] former_names``), or
    ``None`` (not a study's gold folder, or a study.toml the commands refuse themselves)."""
    f = gold_dir.parent / "study.toml"
    if gold_dir.name != "gold" or not f.is_file():
        return None
    from goldboard.study import tomllib

    try:
        st = tomllib.loads(f.read_text(encoding="utf-8-sig")).get("study")
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(st, dict):
        return None
    try:
        former = tomllib.loads(f.read_text(encoding="utf-8-sig")).get("extra", {}).get("former_names", [])
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        former = []
    former = tuple(str(x) for x in former) if isinstance(former, list) else ()
    return str(st.get("name", gold_dir.parent.name)), str(st.get("created_at", "")), former


def release_owner_problem(
    path: Path, manifest: dict[str, Any], name: str, created: str, former: tuple[str, ...] = ()
) -> str | None:
    """One line when release folder ``path`` holds a release of another study than the one named
    ``name``, created at ``created`` (a study is known by its creation time, so a renamed study keeps
    its releases; a release without that time -- an older goldboard's -- by its name or one of the
    ``former`` names ``study set --name`` replaced), else ``None``."""
    said, said_created = manifest.get("study"), str(manifest.get("study_created") or "")
    if said is None:
        return None  # a release that does not say whose it is: nothing to compare
    same = said_created == created if said_created and created else str(said) in (name, *former)
    if same:
        return None
    link = f" ({path.name} is a link to {os.path.realpath(path)})" if path.is_symlink() else ""
    made = f", created {said_created}" if said_created else ""
    return (
        f"{path}: a release of study {said!r}{made}, not of this study ({name!r}{', created ' + created if created else ''})"
        f": a copy or a link?{link} move it out of {path.parent}; no command reads another study's release "
        "(gold diff would compare two studies, and the next release would name it as its previous)"
    )


def check_release_owner(gold_dir: Path, releases: list[tuple[int, Path]]) -> None:
    """Refuse (one line naming the folder) a release in a study's ``gold/`` whose manifest is
    another study's (:func:`release_owner_problem`): every reader of the study's releases lists them
    here.  Manifests that cannot be read are left to the readers of that release."""
    ident = _study_identity(gold_dir)
    if ident is None:
        return
    for _, p in releases:
        try:
            manifest = read_manifest(p)
        except GoldboardError:
            continue
        problem = release_owner_problem(p, manifest, *ident)
        if problem:
            raise GoldboardError(problem)


def check_release_folders(gold_dir: Path) -> None:
    """Refuse (one line) an entry of ``gold/`` whose name reads as a release (``v``, digits) to a
    person but is not a release name: an invisible or space character in it, another letter case
    (``V2``), a look-alike letter or digits of another script (:func:`~goldboard.text.read_number`).
    Hidden names (an export's temporary ``.vN.*.tmp`` folder) are not read."""
    for p in sorted(gold_dir.iterdir(), key=lambda p: p.name):
        if p.name.startswith(".") or (_VERSION_RE.match(p.name) and p.is_dir()):
            continue
        if _VERSION_RE.match(p.name):  # a release name, but a file (or a broken link)
            raise GoldboardError(
                f"{p}: a file, not a release folder (a release is a folder holding its gold file and "
                f"manifest.json): move it out of {gold_dir}; until then no command reads the releases"
            )
        n = read_number(p.name.translate(_V_LOOK_ALIKES), "v")
        if n is None:
            continue
        shown = str(p) if p.name.isprintable() and p.name == p.name.strip() else f"{gold_dir}/{p.name!r}"
        twin = [q for q in gold_dir.iterdir() if (m := _VERSION_RE.match(q.name)) and int(m.group(1)) == n]
        why = (
            f"beside release {twin[0].name}: a copy? move it out of {gold_dir}"
            if twin
            else (f"renamed by hand? rename it back to {gold_dir / f'v{n}'}")
        )
        raise GoldboardError(
            f"{shown}: reads as release v{n} but is not a release name (releases are named v1, v2, ...): {why}; "
            "until then no command reads the releases (an earlier release would be taken for the latest)"
        )


def unexpected_release_entries(gold_dir: str | Path) -> list[str]:
    """One line per entry of ``gold/`` that no command reads: not a release folder (``v1``,
    ``v2``, ...; ``v02`` is release 2), not hidden (an export's temporary folder), not a name that
    reads as a release (refused: :func:`check_release_folders`); ``status`` names them."""
    gold_dir = Path(gold_dir)
    if not gold_dir.is_dir():
        return []
    out = []
    for p in sorted(gold_dir.iterdir(), key=lambda p: p.name):
        if p.name.startswith(".") or p.name.casefold() in ("thumbs.db", "desktop.ini"):
            continue
        if (_VERSION_RE.match(p.name) and p.is_dir()) or read_number(p.name.translate(_V_LOOK_ALIKES), "v") is not None:
            continue
        shown = str(p) if p.name.isprintable() and p.name == p.name.strip() else f"{gold_dir}/{p.name!r}"
        out.append(
            f"{shown}: not a release folder (releases are named {gold_dir / 'v1'}, {gold_dir / 'v2'}, ...); no command "
            "reads it: move it out of the study"
        )
    return out


def release_chain_problems(gold_dir: str | Path, releases: list[tuple[int, Path]] | None = None) -> list[str]:
    """One line per release a later release's manifest names as its ``previous`` that is not in
    ``gold/`` (deleted or moved by hand): the chain of releases is broken.  A release a manifest
    lists in ``missing_releases`` (``gold export --allow-missing-releases`` released over the gap)
    is known to be gone and not said again.  Manifests that cannot be read are left to the
    readers of that release."""
    gold_dir = Path(gold_dir)
    releases = list_releases(gold_dir, warn_chain=False) if releases is None else releases
    names = {p.name for _, p in releases}
    previous = {}
    for _, p in releases:
        try:
            manifest = read_manifest(p)
        except GoldboardError:
            continue
        previous[p] = manifest.get("previous")
        gone = manifest.get("missing_releases")
        names |= {str(g) for g in gone} if isinstance(gone, list) else set()  # released anyway, as recorded
    out = []
    for p, prev in previous.items():
        if isinstance(prev, str) and prev and prev not in names:
            out.append(
                f"{gold_dir / prev}: missing, but release {p.name}'s manifest ({p / 'manifest.json'}) names it as "
                "its previous release: deleted or moved by hand? restore it from a backup"
            )
    return out


def release_path(gold_dir: str | Path, version: str) -> Path:
    """Path of release ``version`` (``v2`` or ``2``); error when it does not exist."""
    list_releases(gold_dir)  # a folder that reads as a release but is not one: refused; a broken chain: said
    v = str(version).strip()
    if v.isdigit():
        v = f"v{int(v)}"
    if not _VERSION_RE.match(v):
        raise GoldboardError(f"{version!r}: a release version looks like v1, v2, ...")
    p = Path(gold_dir) / v
    if not (p / "manifest.json").exists():
        have = ", ".join(q.name for _, q in list_releases(gold_dir)) or "none"
        raise GoldboardError(f"{p}: no such gold release (releases: {have})")
    return p


def read_manifest(path: str | Path) -> dict[str, Any]:
    p = Path(path) / "manifest.json"
    if not p.exists():
        folder = Path(path)
        if folder.is_dir() and not any(folder.iterdir()):
            raise GoldboardError(
                f"{folder}: an empty folder, not a release (an interrupted copy?): remove it, or restore the "
                "release from a backup"
            )
        if folder.is_dir():
            raise GoldboardError(
                f"{p}: not found: {folder} is not a complete release (an interrupted copy, or its manifest "
                "deleted?): restore the release from a backup, or move the folder out"
            )
        raise GoldboardError(f"{p}: not found")
    data = read_json_file(p)
    if not isinstance(data, dict):
        raise GoldboardError(f"{p}: not a gold release manifest (expected a JSON object)")
    return data


class ChangedRelease(GoldboardError):
    """A release whose gold file no longer is what its manifest certifies (edited, replaced)."""


def release_problem(path: str | Path, manifest: dict[str, Any] | None = None) -> str | None:
    """Why release folder ``path`` cannot be trusted (one line), or ``None`` when its manifest
    names its folder and its gold file has exactly the SHA-256 its ``manifest.json`` recorded."""
    path = Path(path)
    manifest = read_manifest(path) if manifest is None else manifest
    misplaced = _misplaced_manifest(path, manifest)
    if misplaced:
        return misplaced
    f = path / f"gold.{manifest.get('format', 'csv')}"
    if not f.is_file():
        return f"{f}: listed in the manifest but missing"
    return _file_problem(f, f.read_bytes(), manifest)


def _misplaced_manifest(path: Path, manifest: dict[str, Any]) -> str | None:
    """One line when release folder ``path`` holds the manifest of another release (folders
    renamed or swapped, a manifest copied over: campaign 5 M06/T04); ``v02`` is release 2."""
    said, folder = _VERSION_RE.match(str(manifest.get("version") or "")), _VERSION_RE.match(path.name)
    if said and folder and int(said.group(1)) != int(folder.group(1)):
        return (
            f"{path / 'manifest.json'}: the manifest of release {manifest['version']}, in folder {path.name} "
            "(release folders renamed or swapped, or a manifest copied from another release?): restore it"
        )
    return None


def _file_problem(f: Path, data: bytes, manifest: dict[str, Any]) -> str | None:
    rec = (manifest.get("files") or {}).get(f.name)
    version = manifest.get("version") or f.parent.name
    if not isinstance(rec, dict) or not rec.get("sha256"):
        return f"{f}: manifest.json records no SHA-256 for {f.name}: release {version} cannot be verified"
    if hashlib.sha256(data).hexdigest() != rec["sha256"]:
        return (
            f"{f}: changed since release {version} was written (its SHA-256 is not the one manifest.json "
            "recorded); a release is never edited: restore it, or cut a new release with `goldboard gold export`"
        )
    return None


def read_release(path: str | Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The gold table (all text) and manifest of one release folder.

    The gold file is verified against its manifest first: its bytes are read once, and
    a file whose SHA-256 is not the recorded one (edited, replaced), or whose content
    no longer has the recorded gold digest, raises :class:`ChangedRelease` -- every
    reader of a release (``gold diff``, ``report``, ``score``) refuses it.  So is a release in a
    study's ``gold/`` whose manifest is another study's (:func:`release_owner_problem`)."""
    path = Path(path)
    manifest = read_manifest(path)
    ident = _study_identity(path.parent)  # a study's release folder given on its own (score --gold)
    foreign = release_owner_problem(path, manifest, *ident) if ident else None
    misplaced = foreign or _misplaced_manifest(path, manifest)
    if misplaced:
        raise ChangedRelease(misplaced)
    fmt = manifest.get("format", "csv")
    f = path / f"gold.{fmt}"
    if not f.is_file():
        raise GoldboardError(f"{f}: listed in the manifest but missing")
    data = f.read_bytes()
    problem = _file_problem(f, data, manifest)
    if problem:
        raise ChangedRelease(problem)
    df = _parse_release_file(path, f, fmt, data)
    if manifest.get("gold_sha256") and gold_digest(df) != manifest["gold_sha256"]:
        raise ChangedRelease(
            f"{f}: its gold table is not the one release {manifest.get('version') or path.name} recorded "
            "(gold_sha256 in manifest.json differs); a release is never edited: restore it, or cut a new release"
        )
    return df, manifest


def _parse_release_file(path: Path, f: Path, fmt: str, data: bytes) -> pd.DataFrame:
    """The gold table of release file ``f`` (its verified bytes ``data``), all text."""
    if fmt == "csv":
        df = read_csv_frame(f, " (gold release)", data=data)
    elif fmt == "jsonl":
        df = pd.DataFrame([rec for _, rec in iter_jsonl(f, " (gold release)")])
    elif fmt == "json":
        data = read_json_file(f)
        if not isinstance(data, dict) or not isinstance(data.get("gold"), list):
            raise GoldboardError(f'{f}: not a gold release file (expected {{"gold": [...]}})')
        df = pd.DataFrame(data["gold"])
    elif fmt == "xlsx":
        wb = load_workbook(f, read_only=True)
        try:
            if "Gold" not in wb.sheetnames:
                raise GoldboardError(f"{f}: no sheet named 'Gold'")
            rows = list(wb["Gold"].iter_rows(values_only=True))
        finally:
            wb.close()
        if not rows:
            raise GoldboardError(f"{f}: sheet Gold is empty")
        head = [str(h) for h in rows[0]]
        df = pd.DataFrame([[unneutralize_formula(v) for v in r] for r in rows[1:]], columns=head)
    else:
        raise GoldboardError(f"{path / 'manifest.json'}: unknown format {fmt!r}")
    lost = [c for c in ("item_id", "field", "gold_value", "method") if c not in df.columns]
    if lost:
        raise GoldboardError(f"{f}: not a gold table: no {lost[0]!r} column")
    # a CSV release reads as text already (every cell a str, empty cells ""): nothing to spell
    return df if fmt == "csv" else _as_text_frame(df)


def _as_text_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        out[c] = out[c].map(cell_text)
    return out


# --------------------------------------------------------------------------- writing


def _records(gold: pd.DataFrame) -> list[dict]:
    recs = []
    for rec in gold.to_dict(orient="records"):
        rec = {k: cell_text(v) for k, v in rec.items()}
        rec["independent"] = None if rec.get("independent", "") == "" else rec["independent"] == "true"
        recs.append(rec)
    return recs


def write_gold_file(gold: pd.DataFrame, path: str | Path, fmt: str) -> None:
    """Write the gold table as ``fmt`` (csv | jsonl | json | xlsx) to ``path`` (not atomic:
    used inside the release's temporary folder)."""
    path = Path(path)
    if fmt == "csv":
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(csv_text(gold))
    elif fmt == "jsonl":
        with open(path, "w", encoding="utf-8") as fh:
            for rec in _records(gold):
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    elif fmt == "json":
        with open(path, "w", encoding="utf-8") as fh:
            json.dump({"gold": _records(gold)}, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
    elif fmt == "xlsx":
        _write_gold_xlsx(gold, path)
    else:
        raise GoldboardError(f"{fmt!r} is not one of {', '.join(FORMATS)}", param="fmt")


def _write_gold_xlsx(gold: pd.DataFrame, path: Path) -> None:
    from openpyxl import Workbook
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter

    wb = Workbook()
    ws = wb.active
    ws.title = "Gold"
    for j, c in enumerate(gold.columns, start=1):
        cell = ws.cell(row=1, column=j)
        set_text_cell(cell, c)
        cell.font = Font(bold=True)
        ws.column_dimensions[get_column_letter(j)].width = 40 if c == "reason" else 18
    for i, row in enumerate(gold.itertuples(index=False), start=2):
        for j, v in enumerate(row, start=1):
            set_text_cell(ws.cell(row=i, column=j), v)
    ws.freeze_panes = "A2"
    ws.auto_filter.ref = f"A1:{get_column_letter(len(gold.columns))}{len(gold) + 1}"
    save_workbook_atomic(wb, path)


@contextlib.contextmanager
def _export_lock(gold_dir: Path):
    """One export at a time per ``gold/`` folder (an advisory lock on the folder itself,
    dropped by the kernel if the exporter dies)."""
    gold_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(gold_dir, create=False):
        yield


def clean_stale_release_folders(gold_dir: str | Path) -> list[str]:
    """Remove the hidden ``.vN.*.tmp`` folders that an interrupted (killed) export left
    in ``gold_dir``; returns their names.  Call with the export lock held: then none of
    them belongs to a running export.  Releases (``vN``) are never touched."""
    removed = []
    for p in sorted(Path(gold_dir).glob(".v*.tmp")):
        if p.is_dir() and not p.is_symlink():
            for f in p.rglob("*"):  # released files are read-only; make them removable
                with contextlib.suppress(OSError):
                    os.chmod(f, stat.S_IRUSR | stat.S_IWUSR | (stat.S_IXUSR if f.is_dir() else 0))
            shutil.rmtree(p, ignore_errors=True)
            if not p.exists():
                removed.append(p.name)
    return removed


def write_gold_release(
    gold: pd.DataFrame,
    gold_dir: str | Path,
    fmt: str = "csv",
    *,
    manifest: dict[str, Any] | None = None,
    force: bool = False,
    now: str | None = None,
) -> GoldRelease:
    """Write ``gold`` as the next release ``vN`` in ``gold_dir``.

    Returns the new release, or -- when the content equals the latest release and
    ``force`` is false -- the latest release with ``created=False``.  Existing
    releases are never touched.  Exports of one ``gold_dir`` take turns (a lock); each
    first removes the unfinished folders of an interrupted export
    (:func:`clean_stale_release_folders`, listed in ``GoldRelease.cleaned``).
    """
    if fmt not in FORMATS:
        raise GoldboardError(f"{fmt!r} is not one of {', '.join(FORMATS)}", param="fmt")
    gold_dir = Path(gold_dir)
    with _export_lock(gold_dir):
        cleaned = clean_stale_release_folders(gold_dir)
        rel = _write_gold_release(gold, gold_dir, fmt, manifest=manifest, force=force, now=now)
    rel.cleaned = cleaned
    return rel


def _write_gold_release(
    gold: pd.DataFrame,
    gold_dir: Path,
    fmt: str,
    *,
    manifest: dict[str, Any] | None,
    force: bool,
    now: str | None,
) -> GoldRelease:
    digest = gold_digest(gold)
    existing = list_releases(gold_dir, warn_chain=False)  # a broken chain: refused by the caller, unless allowed
    previous = existing[-1] if existing else None
    if previous is not None:  # the new release names it as previous: it must be what it certifies
        problem = release_problem(previous[1])
        if problem:
            raise ChangedRelease(
                f"{problem.split('; a release is never edited')[0]}; no new release written (it would name "
                f"{previous[1].name} as its previous release): restore {previous[1].name} from a backup, or move its "
                f"folder out of {gold_dir} to release anew"
            )
    if previous is not None and not force:
        prev_manifest = read_manifest(previous[1])
        if prev_manifest.get("gold_sha256") == digest:
            return GoldRelease(version=previous[1].name, path=previous[1], created=False, manifest=prev_manifest)
    number = previous[0] + 1 if previous else 1
    version = f"v{number}"
    final = gold_dir / version
    gold_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}.", suffix=".tmp", dir=gold_dir))
    try:
        name = f"gold.{fmt}"
        write_gold_file(gold, tmp / name, fmt)
        counts = method_counts(gold)
        man: dict[str, Any] = {
            "release_format": RELEASE_FORMAT,
            "version": version,
            "number": number,
            "created_at": now or utc_now(),
            **(manifest or {}),
            "format": fmt,
            "rows": int(len(gold)),
            "items": int(gold["item_id"].nunique()) if len(gold) else 0,
            "counts": counts,
            "files": {name: {"sha256": sha256_file(tmp / name), "bytes": (tmp / name).stat().st_size}},
            "gold_sha256": digest,
            "previous": previous[1].name if previous else None,
            "forced": bool(force and previous is not None and read_manifest(previous[1]).get("gold_sha256") == digest),
            "goldboard_version": __version__,
        }
        with open(tmp / "manifest.json", "w", encoding="utf-8") as fh:
            json.dump(man, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
            os.chmod(f, RELEASE_FILE_MODE & ~umask())  # read-only: a release is final
        os.chmod(tmp, 0o777 & ~umask())  # a study folder like any other (mkdtemp made it 0700)
        fsync_dir(tmp)
        if final.exists():
            raise GoldboardError(f"{final}: already exists (another export running?); nothing written")
        os.rename(tmp, final)
        fsync_dir(gold_dir)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in NO_ROOM_ERRNOS:  # a full disk: the release is named
            raise no_room_error(final, exc) from None
        raise
    return GoldRelease(version=version, path=final, created=True, manifest=man, gold=gold)


# --------------------------------------------------------------------------- diff


#: what :func:`diff_gold` compares per item x field, besides presence: the gold value and its provenance
DIFF_ASPECTS = ("value", "method", "round", "adjudicator", "reason", "independent", "decision", "ratings")
_ASPECT_COLUMN = {"value": "gold_value", "decision": "decision_id"}
DIFF_COLUMNS = ["item_id", "field", "change", "changed"] + [
    f"{side}_{a}" for a in DIFF_ASPECTS for side in ("old", "new")
]


def diff_gold(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """Rows whose gold value or provenance differ between two gold tables.

    ``change`` is the headline: ``added`` / ``removed`` (item x field only in one
    table), ``value`` (gold value changed), ``method`` (same value, different method)
    ``ratings`` (same value, method and provenance, but the raters' values under it
    changed: a rating edited after its decision) or ``provenance`` (same value and method, but another adjudicator, reason,
    independence, decision or round).  ``changed`` lists every aspect that differs
    (:data:`DIFF_ASPECTS`, e.g. ``"value, method, adjudicator, reason"``); the
    ``old_*`` / ``new_*`` columns hold both sides of each aspect (``decision`` is the
    decision id).  An aspect a table does not have (a release made before gold rows
    carried ``round``) is not compared.
    """
    key = ["item_id", "field"]
    cols = {a: _ASPECT_COLUMN.get(a, a) for a in DIFF_ASPECTS}
    both_have = [a for a in DIFF_ASPECTS if cols[a] in old.columns and cols[a] in new.columns]

    raters = [c for c in old.columns if c.startswith("value_") and c in new.columns]
    if raters:
        both_have.append("ratings")

    def side(df: pd.DataFrame, name: str) -> pd.DataFrame:
        out = df[key].astype(str).copy()
        for a in DIFF_ASPECTS:
            out[f"{name}_{a}"] = df[cols[a]].map(cell_text) if cols[a] in df.columns else ""
        # the raters' values under the gold value: a rating edited after a decision is a change
        out[f"{name}_ratings"] = [
            "; ".join(f"{c[len('value_') :]}={cell_text(v)}" for c, v in zip(raters, vals))
            for vals in (df[raters].itertuples(index=False, name=None) if raters else [() for _ in range(len(df))])
        ]
        return out

    m = side(old, "old").merge(side(new, "new"), on=key, how="outer", indicator=True).fillna("")
    changed = []
    for rec in m.to_dict("records"):
        if rec["_merge"] != "both":
            changed.append([])
            continue
        changed.append([a for a in both_have if rec[f"old_{a}"] != rec[f"new_{a}"]])
    m["changed"] = [", ".join(c) for c in changed]
    change = []
    for where, c in zip(m["_merge"], changed):
        if where == "left_only":
            change.append("removed")
        elif where == "right_only":
            change.append("added")
        elif "value" in c:
            change.append("value")
        elif "method" in c:
            change.append("method")
        elif c == ["ratings"]:
            change.append("ratings")
        else:
            change.append("provenance" if c else "")
    m["change"] = change
    out = m[m["change"] != ""][DIFF_COLUMNS]
    order = sorted(range(len(out)), key=lambda i: (natural_key(out["item_id"].iloc[i]), out["field"].iloc[i]))
    return out.iloc[order].reset_index(drop=True)


def provenance_text(row: dict, width: int = 40) -> str:
    """``adjudicator dr_a -> dr_b; round 1 -> 2`` for the provenance aspects that changed
    (each value on one line, clipped to ``width`` characters; ``-`` for empty)."""

    def show(v: Any) -> str:
        t = " ".join(str(v or "").split()) or "-"
        return t if len(t) <= width else t[: width - 1] + "…"

    parts = []
    for a in [x.strip() for x in str(row.get("changed", "")).split(",") if x.strip()]:
        if a not in ("value", "method"):
            parts.append(f"{a} {show(row.get(f'old_{a}'))} -> {show(row.get(f'new_{a}'))}")
    return "; ".join(parts)


def diff_releases(gold_dir: str | Path, old: str, new: str) -> tuple[pd.DataFrame, dict, dict]:
    """:func:`diff_gold` of two releases by version; also returns both manifests.  One release
    named twice (``v1 v1``, ``1 v1``) is refused as a likely typo."""
    pa, pb = release_path(gold_dir, old), release_path(gold_dir, new)
    if pa == pb:
        have = ", ".join(q.name for _, q in list_releases(gold_dir))
        raise GoldboardError(
            f"{old} and {new} are both release {pa.name}: a release compared with itself (a typo?); give two "
            f"different releases (releases: {have})"
        )
    a, ma = read_release(pa)
    b, mb = read_release(pb)
    return diff_gold(a, b), ma, mb


__all__ = [
    "ChangedRelease",
    "DIFF_ASPECTS",
    "DIFF_COLUMNS",
    "provenance_text",
    "FORMATS",
    "GoldRelease",
    "diff_gold",
    "diff_releases",
    "list_releases",
    "read_manifest",
    "read_release",
    "release_chain_problems",
    "unexpected_release_entries",
    "release_path",
    "release_problem",
    "write_gold_file",
    "write_gold_release",
]
