"""A study workspace: one folder holding everything a label study produces.

::

    study/
      study.toml              schema, raters, server URL (no secrets), rounds and project ids
      units.jsonl             the annotation units pushed (case + model output, as shown to raters)
      rounds/N/ratings.csv    pulled ratings (rewritten atomically on each pull)
      rounds/N/invalid.csv    annotations that failed validation, kept verbatim
      rounds/N/pull.json      what the last pull found (counts, duplicates, unannotated)
      decisions.jsonl         adjudication log, append-only
      gold/vN/                immutable gold releases with manifest + SHA-256
      reports/                agreement reports

No API token is ever written here: tokens come from ``LABEL_STUDIO_API_KEY``,
the embedded server's 0600 credentials file, or a user config file.

:class:`Study` keeps the workspace's files and its round records.  The integrity checks every
reader of those records runs (a hand-edited ``ratings.csv``, a renamed round folder, the error
of a study without ratings) are in :mod:`goldboard.study_checks`; the checks of the options a
study is made or changed with (raters, URL, names, round numbers) in :mod:`goldboard.study_options`.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import hashlib
import io
import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib  # type: ignore[no-redef]
import tomli_w

from goldboard.errors import GoldboardError, case_twin, check_rater_map, check_rater_name  # noqa: F401 (re-exported)
from goldboard.fileio import file_lock, iter_jsonl, write_text_atomic
from goldboard.label_configs.schema import Schema, SchemaError, load_schema
from goldboard.study_checks import (  # noqa: F401 (check_loaded, unit_ids: re-exported)
    ROUND_DIR,
    check_loaded,
    check_pulled_schema,
    check_round_files,
    check_round_folders,
    no_ratings_error,
    no_ratings_text,
)
from goldboard.study_checks import unit_ids as _unit_ids  # noqa: F401 (re-exported)
from goldboard.study_options import (  # noqa: F401 (re-exported: the option checks of a study)
    check_free_text,
    check_new_rater,
    check_new_study,
    check_not_inside_a_study,
    check_round,
    check_round_marks,
    check_server_url,
    check_settings,
    check_study_name,
    free_text_option,
    setting_change,
    shown_url,
)
from goldboard.text import read_number, utc_now  # noqa: F401 (read_number: re-exported)

if TYPE_CHECKING:
    import pandas as pd

    from goldboard.cases.rounds import Assigned

# pandas and the ratings readers are imported where a table is read, so that opening a study
# (``plan size --study``, ``study init``, ``server``) does not load pandas

STUDY_FILE = "study.toml"


@dataclass
class Round:
    number: int
    mode: str = "blinded"  # blinded | shared
    #: rater -> Label Studio project id (blinded), or {"*": id} for a shared project
    projects: dict[str, int] = field(default_factory=dict)
    created_at: str = ""
    units: int = 0
    #: whether the tasks carry the model name (visible in Label Studio's task list)
    show_model: bool = True
    #: a calibration round (raters practise on the guideline before the main rounds)
    calibration: bool = False
    #: the guideline (codebook) version the raters used in this round
    guideline_version: str = ""
    #: evidence of independence: what the server let each rater see, checked with the
    #: rater's own account at ``push`` and at ``pull`` (see goldboard.annotate.blinding)
    access: dict[str, Any] = field(default_factory=dict)
    #: ratings tables pulled into this round (``pull --from-table``): source name -> file, sha256, ...
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: who was asked to rate what (``push --overlap`` / ``--per-item``): design, seed, items per rater
    design: dict[str, Any] = field(default_factory=dict)
    #: "case" (one item per case, no model-output pane) or "output" (case x model output);
    #: "" until the first push.  A round never mixes the two.
    item_kind: str = ""
    #: put back by ``study round`` over ratings a pull wrote, its entry deleted by hand (not saved)
    restored: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "mode": self.mode,
            "projects": dict(self.projects),
            "created_at": self.created_at,
            "units": self.units,
            "show_model": self.show_model,
            **({"item_kind": self.item_kind} if self.item_kind else {}),
        }
        if self.calibration:
            out["calibration"] = True
        if self.guideline_version:
            out["guideline_version"] = self.guideline_version
        if self.tables:
            out["tables"] = {k: dict(v) for k, v in self.tables.items()}
        if self.design:
            out["design"] = dict(self.design)
        if self.access:
            out["access"] = dict(self.access)
        return out


@dataclass
class Study:
    """A study workspace (:meth:`init` makes one, :meth:`open` reads one): its files, its rounds."""

    path: Path
    name: str
    schema_ref: str
    raters: list[str]
    url: str = ""
    data_dir: str = ""  # embedded server data dir, when the study uses it
    created_at: str = ""
    rounds: list[Round] = field(default_factory=list)
    adjudication: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    _schema: Schema | None = None
    #: study.toml as this object read it (or last saved it); ``None``: a study not yet written
    _base: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    # ------------------------------------------------------------------ create / open
    @classmethod
    def init(
        cls, path: str | Path, schema: str, raters: list[str], url: str = "", name: str = "", data_dir: str = ""
    ) -> Study:
        path = Path(path)
        schema_ref, sch, raters, url = check_new_study(path, schema, raters, url, name, data_dir)
        study = cls(
            path=path,
            name=name or path.resolve().name,
            schema_ref=schema_ref,
            raters=raters,
            url=url,
            data_dir=data_dir,
            created_at=utc_now(),
            _schema=sch,
        )
        path.mkdir(parents=True, exist_ok=True)
        study.save()
        return study

    @classmethod
    def open(cls, path: str | Path) -> Study:
        path = Path(path)
        f = path / STUDY_FILE
        if not f.exists():
            raise GoldboardError(
                f"{path}: not a goldboard study (no {STUDY_FILE}; create one with `goldboard study init`)"
            )
        study = cls._from_toml(path, _read_toml(f))
        study._base = study._data()
        return study

    @classmethod
    def _from_toml(cls, path: Path, data: dict[str, Any]) -> Study:
        st = data.get("study", {})
        try:
            study = cls(path=path, **_study_fields(path, st, data))
        except (KeyError, TypeError, ValueError) as exc:
            raise GoldboardError(f"{path / STUDY_FILE}: missing or malformed entry {exc}") from None
        check_loaded(study, st.get("raters"))
        return study

    def _data(self) -> dict[str, Any]:
        """What :meth:`save` writes to study.toml (a TOML document as a dict)."""
        data: dict[str, Any] = {
            "study": {
                "name": self.name,
                "schema": self.schema_ref,
                "raters": list(self.raters),
                "created_at": self.created_at,
            },
            "server": {"url": self.url, "data_dir": self.data_dir},
            "rounds": [r.to_dict() for r in self.rounds],
        }
        if self.adjudication:
            data["adjudication"] = self.adjudication
        if self.extra:
            data["extra"] = self.extra
        return copy.deepcopy(data)

    def locked(self):
        """The study-wide lock (a context manager): every read-modify-write of the study's own
        files (study.toml, units.jsonl) holds it, so two commands writing one study take turns."""
        return study_lock(self.path)

    def save(self) -> None:
        """Write this command's changes to study.toml, keeping every other command's.

        Under the study lock, study.toml is read again: when another command saved since this
        one read it, only what this command changed (against what it read) is applied to what
        is there now (a three-way merge: rounds by number, new raters appended), so ``push
        --round 2`` during a ``pull`` keeps both.  Two commands that changed one entry to
        different values: the later one is refused (one line naming the entry) and writes
        nothing.  This object then holds what was written."""
        f = self.path / STUDY_FILE
        ours = self._data()
        with self.locked():
            if self._base is None:
                if f.exists():  # another `study init` wrote it since this one checked
                    raise GoldboardError(f"{self.path / STUDY_FILE}: a study already exists here")
                merged = ours
            else:
                theirs = Study.open(self.path)._data() if f.exists() else None
                if theirs is None:
                    raise GoldboardError(
                        f"{f}: deleted while this command ran (by hand, or another command?); nothing saved to it: "
                        "put it back (from a backup) and run the command again"
                    )
                merged = ours if theirs == self._base else merge_study_data(self._base, ours, theirs, f)
            header = "# goldboard study workspace. No secrets are stored here.\n"
            write_text_atomic(f, header + tomli_w.dumps(merged))
        if merged is not ours:
            self._adopt(merged)
        self._base = copy.deepcopy(merged)

    def _adopt(self, data: dict[str, Any]) -> None:
        """Take what another command saved (``data``: the merged study.toml) into this object,
        keeping the Round objects a caller may hold."""
        fresh = Study._from_toml(self.path, data)
        self.name, self.schema_ref, self.raters = fresh.name, fresh.schema_ref, fresh.raters
        self.url, self.data_dir, self.created_at = fresh.url, fresh.data_dir, fresh.created_at
        self.adjudication, self.extra = fresh.adjudication, fresh.extra
        mine = {r.number: r for r in self.rounds}
        rounds = []
        for r in fresh.rounds:
            have = mine.get(r.number)
            if have is None:
                rounds.append(r)
                continue
            for name in Round.__dataclass_fields__:
                if name not in ("number", "restored"):
                    setattr(have, name, getattr(r, name))
            rounds.append(have)
        self.rounds = rounds

    # ------------------------------------------------------------------ edit
    def set(self, *, url: str | None = None, data_dir: str | None = None, name: str | None = None) -> list[str]:
        """Change the server URL, embedded data dir or name (saved); returns what changed, one
        line each.  A URL change keeps the rounds' project ids: they must exist on the new
        server (the same server under a new address), else push to a new round."""
        new = {k: v for k, v in check_settings(url=url, data_dir=data_dir, name=name).items() if v != getattr(self, k)}
        changes = [setting_change(k, getattr(self, k), v) for k, v in new.items()]
        if "name" in new:  # an older goldboard's releases know the study by its name only: keep the old one
            former = [str(x) for x in self.extra.get("former_names", []) if isinstance(x, str)]
            self.extra = {**self.extra, "former_names": list(dict.fromkeys([*former, self.name]))}
        for k, v in new.items():
            setattr(self, k, v)
        if changes:
            self.save()
        return changes

    def add_rater(self, name: str) -> None:
        """Add a rater (saved).  Their project in an existing round is made by the next push."""
        self.raters.append(check_new_rater(name, self.raters))
        self.save()

    # ------------------------------------------------------------------ accessors
    @property
    def schema(self) -> Schema:
        if self._schema is None:
            try:
                self._schema = load_schema(self.schema_ref)
            except SchemaError as exc:
                raise GoldboardError(f"{self.path / STUDY_FILE}: schema: {exc}") from None
            check_pulled_schema(self, self._schema)
        return self._schema

    def round(self, round_number: int | None = None) -> Round:
        """The round ``round_number`` (default: the latest)."""
        if not self.rounds:
            raise GoldboardError(f"{self.path}: no rounds yet (push cases first with `goldboard push`)")
        if round_number is None:
            return max(self.rounds, key=lambda r: r.number)
        for r in self.rounds:
            if r.number == round_number:
                return r
        raise GoldboardError(
            f"{self.path}: no round {round_number} (rounds: {', '.join(str(r.number) for r in self.rounds)})"
        )

    def get_or_add_round(self, round_number: int | None = None, mode: str = "blinded") -> Round:
        if round_number is None:
            round_number = self.rounds[-1].number if self.rounds else 1
        for r in self.rounds:
            if r.number == round_number:
                return r
        r = Round(number=round_number, mode=mode, created_at=utc_now())
        self.rounds.append(r)
        self.rounds.sort(key=lambda x: x.number)
        return r

    def mark_round(
        self, round_number: int, calibration: bool | None = None, guideline_version: str | None = None
    ) -> Round:
        """Record on round ``round_number`` (added when new) whether it is a calibration round and the
        guideline (codebook) version its raters used; saved at once."""
        have = sorted(r.number for r in self.rounds)
        guideline_version = check_round_marks(round_number, have, guideline_version)
        restored = round_number not in have and self.pull_report_path(round_number).exists()
        rnd = self.get_or_add_round(round_number)
        if restored:  # an entry deleted by hand, put back for the ratings its pull wrote (unlisted_rounds)
            _restore_round(self, rnd)
        if calibration is not None:
            rnd.calibration = bool(calibration)
        if guideline_version is not None:
            rnd.guideline_version = guideline_version.strip()
        self.save()
        return rnd

    def round_item_kind(self, rnd: Round) -> str:
        """``"case"`` or ``"output"``: the kind of items round ``rnd`` holds (``""`` before its first
        push).  Rounds pushed before the kind was recorded get it from ``units.jsonl``."""
        if rnd.item_kind:
            return rnd.item_kind
        units = self.units()
        if not len(units) or "rounds" not in units.columns:
            return ""
        mine = units[units["rounds"].map(lambda rs: rnd.number in (rs or []))]
        if not len(mine):
            return ""
        return "output" if (mine["output_id"].fillna("").astype(str) != "").any() else "case"

    @property
    def units_path(self) -> Path:
        return self.path / "units.jsonl"

    def round_dir(self, round_number: int) -> Path:
        return self.path / "rounds" / str(round_number)

    def ratings_path(self, round_number: int) -> Path:
        return self.round_dir(round_number) / "ratings.csv"

    def invalid_path(self, round_number: int) -> Path:
        return self.round_dir(round_number) / "invalid.csv"

    def held_out(self, round_number: int) -> dict[str, set[str]]:
        """Rater -> the items whose annotation the round's pull held out as invalid
        (``invalid.csv`` rows of kind ``invalid``; superseded ones are not counted), read as text."""
        path = self.invalid_path(round_number)
        out: dict[str, set[str]] = {}
        if not path.exists():
            return out
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if row.get("kind") == "invalid" and row.get("item_id"):
                    out.setdefault(str(row.get("rater") or ""), set()).add(str(row["item_id"]))
        return out

    def pull_report_path(self, round_number: int) -> Path:
        return self.round_dir(round_number) / "pull.json"

    def write_round(
        self, round_number: int, ratings: pd.DataFrame, invalid: pd.DataFrame, summary: dict[str, Any]
    ) -> dict[str, Path]:
        """The one writer of a round's intake: ``rounds/N/ratings.csv``, ``invalid.csv`` and
        ``pull.json``, each written atomically (a temporary file renamed over it).  Every source
        of ratings (Label Studio, its exports, ratings tables, other tools' exports) ends here;
        :mod:`goldboard.cases.intake.rounds` keeps each source's rows apart by provenance.
        Returns the paths written (``ratings``, ``invalid``, ``summary``)."""
        from goldboard.fileio import write_csv_atomic

        paths = {
            "ratings": self.ratings_path(round_number),
            "invalid": self.invalid_path(round_number),
            "summary": self.pull_report_path(round_number),
        }
        with self.locked():  # the three files of one pull together: another pull's never interleave
            write_csv_atomic(ratings, paths["ratings"])
            write_csv_atomic(invalid, paths["invalid"])
            # what was written: readers that build gold or agreement notice a hand edit (ratings_edit_problem)
            summary = {**summary, "ratings_sha256": hashlib.sha256(paths["ratings"].read_bytes()).hexdigest()}
            write_text_atomic(paths["summary"], json.dumps(summary, indent=1, ensure_ascii=False, default=str) + "\n")
        return paths

    def assignment_path(self, round_number: int) -> Path:
        """``rounds/N/assignment.csv``: who was asked to rate which item (overlap / k-per-item designs)."""
        return self.round_dir(round_number) / "assignment.csv"

    def single_rated_items(self) -> set[str]:
        """Items that a round's design gave to one rater only (gold method ``single``)."""
        import pandas as pd

        out: set[str] = set()
        for r in self.rounds:
            p = self.assignment_path(r.number)
            if not r.design or not p.exists():
                continue
            df = pd.read_csv(p, dtype=str, keep_default_na=False)
            counts = df.groupby("item_id")["rater"].nunique()
            out |= set(counts[counts == 1].index)
        return out

    def assigned_raters(self) -> Assigned:
        """``{(item_id, round): raters}`` for the rounds with a design: who must rate an item
        for that round to count as complete (:mod:`goldboard.cases.rounds`)."""
        import pandas as pd

        from goldboard.cases.rounds import Assigned

        out: dict[tuple[str, int], set[str]] = {}
        for r in self.rounds:
            p = self.assignment_path(r.number)
            if not r.design or not p.exists():
                continue
            df = pd.read_csv(p, dtype=str, keep_default_na=False)
            for item, rater in zip(df["item_id"], df["rater"]):
                out.setdefault((item, r.number), set()).add(rater)
        return Assigned(out)

    @property
    def decisions_path(self) -> Path:
        return self.path / "decisions.jsonl"

    @property
    def gold_dir(self) -> Path:
        return self.path / "gold"

    @property
    def reports_dir(self) -> Path:
        return self.path / "reports"

    def grid_raters(self) -> list[str]:
        """The study raters the flags, the review sheet and gold expect a rating from: each rater
        some round's pull recorded (``rounds/N/pull.json``: ``raters``, which lists every study
        rater at the time of the pull, one whose column was blank too), in study order.  So a rater
        who rated nothing in a pulled round is a missing rating there (gold is never "unanimous" from
        the others alone), while a rater added after the last pull (``study add-rater`` for a later
        round) is not yet expected on the rounds pulled before.  Every study rater when a round's
        pull record is missing or unreadable, when no round is pulled, or when a pull recorded a
        rater study.toml no longer lists (renamed or removed by hand: who is new cannot be told)."""
        seen: set[str] = set()
        for n in self.pulled_rounds():
            names = self.pull_raters(n)
            if names is None:
                return list(self.raters)
            seen.update(names)
        if not seen or seen - set(self.raters):
            return list(self.raters)
        return [r for r in self.raters if r in seen]

    def pull_raters(self, n: int) -> set[str] | None:
        """The raters round ``n``'s ``pull.json`` recorded (``raters``: every study rater at the time
        of the pull); ``None`` when the record is missing or unreadable."""
        try:
            names = json.loads(self.pull_report_path(n).read_text(encoding="utf-8-sig")).get("raters")
        except (OSError, ValueError, AttributeError):
            return None
        return set(map(str, names)) if isinstance(names, dict) else None

    def pulled_rounds(self) -> list[int]:
        """Numbers of the rounds that have a ``rounds/N/ratings.csv``, in numeric order (2 before 10).
        A round whose ``pull.json`` is there without its ``ratings.csv``, or a round folder renamed
        or deleted, is a one-line error (:func:`~goldboard.study_checks.check_round_files`)."""
        check_round_files(self)
        found = (self.path / "rounds").glob("*/ratings.csv")
        return sorted(int(p.parent.name) for p in found if ROUND_DIR.fullmatch(p.parent.name))

    def items_by_round(self) -> dict[int, set[str]]:
        """Round -> the item ids of its ``rounds/N/ratings.csv`` (every pulled round), read as
        text with the csv module: which items the study has, whatever one command analyses."""
        found = {n: _item_ids(self.ratings_path(n), n) for n in self.pulled_rounds()}
        return {n: items for n, items in found.items() if items is not None}

    def lost_ratings_rounds(self) -> list[int]:
        """Rounds whose ``pull.json`` records a pull but whose ``ratings.csv`` is gone (deleted)."""
        check_round_folders(self)
        pulls = (self.path / "rounds").glob("*/pull.json")
        rounds = sorted(int(p.parent.name) for p in pulls if ROUND_DIR.fullmatch(p.parent.name))
        return [n for n in rounds if not self.ratings_path(n).exists()]

    def latest_pulled_round(self) -> int:
        """The round every command reads when ``--round`` is omitted: the latest round of
        ``study.toml`` that has been pulled; for ratings outside any recorded round (e.g.
        a ``rounds/N/ratings.csv`` put there by hand), the latest such round."""
        pulled = [r.number for r in self.rounds if self.ratings_path(r.number).exists()] or self.pulled_rounds()
        if not pulled or self.lost_ratings_rounds():  # a deleted ratings.csv is named, never passed over
            raise no_ratings_error(self)
        return max(pulled)

    def ratings(self, round_number: int | None = None) -> pd.DataFrame:
        """Pulled ratings of one round (default: :meth:`latest_pulled_round`)."""
        from goldboard.cases.ratings import read_ratings_csv

        if round_number is None:
            round_number = self.latest_pulled_round()
        p = self.ratings_path(round_number)
        if not p.exists():
            check_round(self, round_number)
            raise GoldboardError(
                f"{p}: not pulled yet (run `goldboard pull --study {self.path} --round {round_number}`)"
            )
        df = read_ratings_csv(p)
        df.attrs["single_items"] = self.single_rated_items()
        df.attrs["round_raters"] = self.round_raters()
        return df

    def all_ratings(self, *, digests: dict[int, str] | None = None) -> pd.DataFrame:
        """Every pulled round's ratings, rounds in numeric order.

        ``digests`` (a dict) receives, per round, the SHA-256 of the very bytes its
        ratings were parsed from (each file is read once: a pull replacing it meanwhile
        cannot make the digest describe other ratings than the table)."""
        import pandas as pd

        from goldboard.cases.ratings import empty_ratings, read_ratings_csv

        if self.lost_ratings_rounds():  # a pulled round's ratings deleted: never read the others as all
            raise no_ratings_error(self)
        frames = []
        for n in self.pulled_rounds():
            data = self.ratings_path(n).read_bytes()
            if digests is not None:
                digests[n] = hashlib.sha256(data).hexdigest()
            frames.append(read_ratings_csv(self.ratings_path(n), data=data))
        df = pd.concat(frames, ignore_index=True) if frames else empty_ratings()
        #: items a design gave to one rater: flags do not call them missing, gold calls them ``single``
        df.attrs["single_items"] = self.single_rated_items()
        #: who a round's design asked to rate each item: completeness of a round (cases.rounds)
        df.attrs["assigned"] = self.assigned_raters()
        #: who each round's pull expected (a rater added later is not expected on earlier rounds)
        df.attrs["round_raters"] = self.round_raters()
        return df

    def round_raters(self) -> dict[int, frozenset[str]]:
        """Pulled round -> the study raters its ``pull.json`` recorded (rounds whose record is
        missing, unreadable or names a rater study.toml no longer lists are left out: every
        study rater is expected there)."""
        out: dict[int, frozenset[str]] = {}
        for n in self.pulled_rounds():
            names = self.pull_raters(n)
            if names and not names - set(self.raters):
                out[n] = frozenset(names)
        return out

    def units(self) -> pd.DataFrame:
        """The annotation units recorded at push time (empty frame when none)."""
        import pandas as pd

        if not self.units_path.exists():
            return pd.DataFrame(columns=["item_id", "case_id", "output_id", "model", "case_text", "output_text"])
        recs = []
        for i, rec in iter_jsonl(self.units_path, " in the units file"):
            if not isinstance(rec, dict) or "item_id" not in rec:
                raise GoldboardError(f"{self.units_path}:{i}: not a unit record (a JSON object with an item_id)")
            recs.append(rec)
        if not recs:
            return pd.DataFrame(columns=["item_id", "case_id", "output_id", "model", "case_text", "output_text"])
        return pd.DataFrame(recs)


def _study_fields(path: Path, st: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """A :class:`Study`'s fields (but ``path``) as study.toml's ``data`` (``st``: its ``[study]``) holds them."""
    rounds = [_round_from_toml(r, path / STUDY_FILE) for r in data.get("rounds", [])]
    rounds.sort(key=lambda r: r.number)  # numeric order: round 10 after round 2
    return {
        "name": str(st.get("name", path.name)),
        "schema_ref": str(st["schema"]),
        "raters": [str(r) for r in st["raters"]] if isinstance(st["raters"], list) else [],  # check_loaded
        "url": str(data.get("server", {}).get("url", "")),
        "data_dir": str(data.get("server", {}).get("data_dir", "")),
        "created_at": str(st.get("created_at", "")),
        "rounds": rounds,
        "adjudication": dict(data.get("adjudication", {})),
        "extra": dict(data.get("extra", {})),
    }


def _restore_round(study: Study, rnd: Round) -> None:
    """``rnd``'s mode and date from its ``pull.json`` (what the pull recorded), for an entry
    put back by ``study round`` over ratings a pull wrote."""
    try:
        rec = json.loads(study.pull_report_path(rnd.number).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return
    if not isinstance(rec, dict):
        return
    if rec.get("mode") in ("blinded", "shared", "table"):
        rnd.mode = str(rec["mode"])
    when = rec.get("pulled_at") if isinstance(rec.get("pulled_at"), str) else ""
    rnd.created_at = when or rnd.created_at
    for key in ("table", "file"):  # the ratings table or tool export the round was pulled from
        src = rec.get(key)
        if isinstance(src, dict) and isinstance(src.get("source"), str):
            keep = ("file", "sha256", "rows", "format")
            rnd.tables[src["source"]] = {k: src[k] for k in keep if k in src} | {"pulled_at": when}
    if study.units_path.exists():
        rnd.units = sum(
            1
            for _, u in iter_jsonl(study.units_path, " in the units file")
            if isinstance(u, dict) and rnd.number in (u.get("rounds") or [])
        )
    rnd.restored = True


def _read_toml(f: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(f.read_text(encoding="utf-8-sig"))  # a BOM (Notepad's re-save) is no content
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GoldboardError(f"{f}: invalid TOML: {exc}") from None


def _toml_bool(r: dict[str, Any], key: str, default: bool, f: Path) -> bool:
    """A round's ``key`` as TOML wrote it: ``true`` or ``false``; a string (``"false"``, which
    ``bool()`` reads as true) or a number is refused, naming the round and the entry."""
    v = r.get(key, default)
    if isinstance(v, bool):
        return v
    word = v.strip().lower() if isinstance(v, str) and v.strip().lower() in ("true", "false") else "true or false"
    raise GoldboardError(
        f"{f}: [[rounds]] number = {r.get('number')}: {key} = {v!r} is not true or false (edited by hand?); "
        f"write {key} = {word}, without quotes"
    )


def _round_from_toml(r: dict[str, Any], f: Path = Path(STUDY_FILE)) -> Round:
    return Round(
        number=int(r["number"]),
        mode=str(r.get("mode", "blinded")),
        projects={str(k): int(v) for k, v in (r.get("projects") or {}).items()},
        created_at=str(r.get("created_at", "")),
        units=int(r.get("units", 0)),
        show_model=_toml_bool(r, "show_model", True, f),
        calibration=_toml_bool(r, "calibration", False, f),
        guideline_version=str(r.get("guideline_version", "")),
        access=dict(r.get("access") or {}),
        tables={str(k): dict(v) for k, v in (r.get("tables") or {}).items()},
        design=dict(r.get("design") or {}),
        item_kind=str(r.get("item_kind", "")),
    )


#: study folders this process holds the lock of (a save inside a locked block takes it again)
_HELD: dict[str, int] = {}
_HELD_GUARD = threading.RLock()


@contextlib.contextmanager
def study_lock(folder: str | Path):
    """Hold the study-wide lock of ``folder`` (an exclusive advisory lock on the study folder
    itself: no lock file is left in it; the kernel drops it when the holder dies, so a killed
    command never blocks the next one).  Re-entrant within a process; other processes wait."""
    key = os.path.realpath(folder)
    with _HELD_GUARD:
        if _HELD.get(key):
            _HELD[key] += 1
            try:
                yield
            finally:
                _HELD[key] -= 1
            return
        Path(folder).mkdir(parents=True, exist_ok=True)
        with file_lock(folder, create=False):
            _HELD[key] = 1
            try:
                yield
            finally:
                del _HELD[key]


_MISSING = object()


def merge_study_data(base: dict, ours: dict, theirs: dict, f: Path | str = STUDY_FILE) -> dict:
    """Three-way merge of study.toml documents: ``base`` (what a command read), ``ours`` (what it
    would write), ``theirs`` (what is there now).  Rounds merge by number, raters by appending
    each side's new names; an entry both sides changed to different values is a one-line
    :class:`GoldboardError` naming it.

    >>> b = {"study": {"raters": ["a", "b"]}, "rounds": [{"number": 1, "units": 0}]}
    >>> o = {"study": {"raters": ["a", "b"]}, "rounds": [{"number": 1, "units": 5}]}
    >>> t = {"study": {"raters": ["a", "b", "c"]}, "rounds": [{"number": 1, "units": 0}, {"number": 2}]}
    >>> merge_study_data(b, o, t)
    {'study': {'raters': ['a', 'b', 'c']}, 'rounds': [{'number': 1, 'units': 5}, {'number': 2}]}
    """

    def by_number(doc: dict) -> dict:
        doc = dict(doc)
        doc["rounds"] = {str(r.get("number")): r for r in doc.get("rounds") or []}
        return doc

    merged = _merge3(by_number(base), by_number(ours), by_number(theirs), (), Path(f))
    merged["rounds"] = sorted(merged.get("rounds", {}).values(), key=lambda r: int(r.get("number", 0)))
    if not merged["rounds"] and "rounds" not in ours and "rounds" not in theirs:
        del merged["rounds"]
    return merged


def _merge3(base: Any, ours: Any, theirs: Any, where: tuple[str, ...], f: Path) -> Any:
    if ours == base or ours == theirs:
        return theirs
    if theirs == base:
        return ours
    if isinstance(ours, dict) and isinstance(theirs, dict):
        base = base if isinstance(base, dict) else {}
        out = {}
        for k in dict.fromkeys([*theirs, *ours]):
            v = _merge3(base.get(k, _MISSING), ours.get(k, _MISSING), theirs.get(k, _MISSING), (*where, k), f)
            if v is not _MISSING:
                out[k] = v
        return out
    if where == ("study", "raters") and isinstance(base, list) and isinstance(ours, list) and isinstance(theirs, list):
        if ours[: len(base)] == base and theirs[: len(base)] == base:  # both added raters
            return list(dict.fromkeys([*theirs, *ours[len(base) :]]))
    raise GoldboardError(
        f"{f}: {_entry_name(where)} was changed by another goldboard command while this one ran "
        f"(to {_shown_value(theirs)}; this one: {_shown_value(ours)}); nothing of this command's changes saved to "
        f"{f.name}: run it again"
    )


def _entry_name(where: tuple[str, ...]) -> str:
    if len(where) >= 2 and where[0] == "rounds":
        return f"round {where[1]}" + (f" {'.'.join(where[2:])}" if len(where) > 2 else "")
    return f"[{where[0]}] {'.'.join(where[1:])}" if len(where) > 1 else ".".join(where)


def _shown_value(v: Any) -> str:
    if v is _MISSING:
        return "removed"
    text = repr(v)
    return text if len(text) <= 60 else text[:59] + "…"


def _plain_column(text: str, name: str) -> set[str] | None:
    """The distinct cells of column ``name`` (not the first) of CSV ``text`` with no quote, CR or
    NUL -- where the csv module's rows are the lines split at commas -- found by one regular
    expression over the text (400,000 ratings: 0.1 s against 0.45 s row by row); ``None`` for
    any other text, or a first column, which the csv module reads."""
    if '"' in text or "\r" in text or "\x00" in text:
        return None
    head = text.split("\n", 1)[0].split(",")
    if name not in head or head.index(name) == 0:
        return None
    pattern = re.compile(r"^(?:[^,\n]*,){" + str(head.index(name)) + r"}([^,\n]*)", re.M)
    return set(pattern.findall(text, len(text.split("\n", 1)[0]) + 1))


#: ratings file -> {(mtime, size, inode): {round: item ids}}: the ids :meth:`Study.items_by_round`
#: read, so one command reading them twice (the units check, then gold) reads the file once
_ITEMS_READ: dict[Path, dict[tuple, dict[int, frozenset]]] = {}


def _item_ids(path: Path, round_number: int) -> set[str] | None:
    """The item ids of round ``round_number``'s ratings file ``path`` (``None``: no ``item_id``
    column), read once per process while the file is unchanged."""
    st = path.stat()
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    if round_number in _ITEMS_READ.get(path, {}).get(key, {}):  # read already by this process, unchanged since
        return set(_ITEMS_READ[path][key][round_number])
    with open(path, encoding="utf-8", newline="") as fh:
        text = fh.read()
    found = _plain_column(text, "item_id")
    if found is None:
        rows = csv.reader(io.StringIO(text, newline=""))
        head = next(rows, [])
        if "item_id" not in head:
            return None
        j = head.index("item_id")
        found = {r[j] for r in rows if len(r) > j}
    _ITEMS_READ[path] = {key: {round_number: frozenset(found)}}
    return found


__all__ = ["Study", "Round", "RATINGS_COLUMNS", "STUDY_FILE"]  # noqa: F822 (RATINGS_COLUMNS: see __getattr__)


def __getattr__(name: str):
    if name == "RATINGS_COLUMNS":  # re-exported from goldboard.cases.ratings, loaded on use
        from goldboard.cases.ratings import RATINGS_COLUMNS

        return RATINGS_COLUMNS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def study_ratings(
    study: Study, round_number: int | None = None, *, digests: dict[int, str] | None = None
) -> pd.DataFrame:
    """Every pulled round of a study (the round in force per item is chosen later, by
    :func:`goldboard.cases.ratings.rating_grid` and friends; pass ``round_number`` on to them as
    ``round_number``).

    ``round_number`` is only checked here: it must have been pulled.  The other rounds stay in
    the table so that a rater who has not rated round N yet still counts as a rater (and
    shows as missing) instead of disappearing from the study."""
    if round_number is not None:
        if len(study.ratings(round_number)) == 0:  # not pulled yet: study.ratings names the file
            raise GoldboardError(
                f"{study.ratings_path(round_number)}: round {round_number} has no ratings yet "
                f"({no_ratings_text(study, round_number)}; pull again once raters have)"
            )
    df = study.all_ratings(digests=digests)
    if len(df) == 0:
        raise no_ratings_error(study)
    return df
