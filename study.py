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
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
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

from goldboard.errors import GoldboardError, ParamError, case_twin, check_rater_map, check_rater_name  # noqa: F401 (re-exported)
from goldboard.fileio import file_lock, iter_jsonl, study_own_file, write_text_atomic
from goldboard.label_configs.schema import Schema, SchemaError, load_schema
from goldboard.text import utc_now

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


_case_twin = case_twin  # the one check: goldboard.errors.case_twin


@dataclass
class Study:
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
        if (path / STUDY_FILE).exists():
            raise GoldboardError(f"{path / STUDY_FILE}: a study already exists here")
        check_not_inside_a_study(path)
        raters = [r.strip() for r in raters if r.strip()]
        if len(raters) < 2:
            raise GoldboardError("a study needs at least two raters (e.g. onc_a,onc_b)", param="raters")
        if len(set(raters)) != len(raters):
            raise GoldboardError("rater names must be unique", param="raters")
        for i, r in enumerate(raters):
            check_rater_name(r, "raters")
            twin = _case_twin(r, raters[:i])
            if twin is not None:
                raise GoldboardError(
                    f"{twin!r} and {r!r} differ only in letter case: one person, or two? "
                    f"give two raters names that differ in more than case",
                    param="raters",
                )
        schema_ref = schema
        sch_path = Path(schema)
        if sch_path.suffix.lower() in (".toml", ".json") and sch_path.exists():
            schema_ref = str(sch_path.resolve())
        sch = load_schema(schema_ref)
        url = check_server_url(url)
        if name:
            check_study_name(name.strip())
        check_free_text(data_dir, "data_dir", "the path")
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
        f = path / STUDY_FILE
        st = data.get("study", {})
        try:
            rounds = [_round_from_toml(r, f) for r in data.get("rounds", [])]
            rounds.sort(key=lambda r: r.number)  # numeric order: round 10 after round 2
            study = cls(
                path=path,
                name=str(st.get("name", path.name)),
                schema_ref=str(st["schema"]),
                raters=[str(r) for r in st["raters"]] if isinstance(st["raters"], list) else [],  # check_loaded
                url=str(data.get("server", {}).get("url", "")),
                data_dir=str(data.get("server", {}).get("data_dir", "")),
                created_at=str(st.get("created_at", "")),
                rounds=rounds,
                adjudication=dict(data.get("adjudication", {})),
                extra=dict(data.get("extra", {})),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise GoldboardError(f"{f}: missing or malformed entry {exc}") from None
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
        changes: list[str] = []
        if url is not None:
            url = check_server_url(url)
            if url != self.url:
                changes.append(f"url: {shown_url(self.url) or '(embedded server)'} -> {url or '(embedded server)'}")
                self.url = url
        if data_dir is not None:
            check_free_text(data_dir, "data_dir", "the path")
        if data_dir is not None and data_dir != self.data_dir:
            changes.append(f"data_dir: {self.data_dir or '(default)'} -> {data_dir or '(default)'}")
            self.data_dir = data_dir
        if name is not None:
            name = name.strip()
            if not name:
                raise GoldboardError("give a non-empty name", param="name")
            check_study_name(name)
            if name != self.name:
                changes.append(f"name: {self.name} -> {name}")
                self.name = name
        if changes:
            self.save()
        return changes

    def add_rater(self, name: str) -> None:
        """Add a rater (saved).  Their project in an existing round is made by the next push."""
        name = name.strip()
        check_rater_name(name, "rater")
        if name in self.raters:
            raise GoldboardError(f"{name!r} is already a rater of this study ({', '.join(self.raters)})")
        twin = _case_twin(name, self.raters)
        if twin is not None:
            raise GoldboardError(
                f"{name!r}: the study has rater {twin!r}, which differs only in letter case: "
                f"give the new rater a name that differs in more than case (or use {twin!r})"
            )
        self.raters.append(name)
        self.save()

    # ------------------------------------------------------------------ accessors
    @property
    def schema(self) -> Schema:
        if self._schema is None:
            try:
                self._schema = load_schema(self.schema_ref)
            except SchemaError as exc:
                raise GoldboardError(f"{self.path / STUDY_FILE}: schema: {exc}") from None
            self._check_pulled_schema(self._schema)
        return self._schema

    def _check_pulled_schema(self, schema: Schema) -> None:
        """Refuse (one line) a study whose ``study.toml`` names another schema than the one a
        round's ratings were pulled with (``rounds/N/pull.json``: ``schema``): no command
        changes a study's schema, so study.toml was edited by hand, and every rating would be
        read against the wrong categories.  The line names the first rating of that round the
        schema now in study.toml cannot hold (file, line, field), if any.  A new version of the
        same schema (a guideline revised between rounds) is not refused."""
        import json

        for n in self.pulled_rounds():
            try:
                rec = json.loads(self.pull_report_path(n).read_text(encoding="utf-8-sig"))
            except (OSError, ValueError):
                continue  # missing or damaged: said by ratings_edit_problem
            pulled = rec.get("schema") if isinstance(rec, dict) else None
            if not isinstance(pulled, str) or pulled.rsplit(" v", 1)[0] == schema.name:
                continue
            first = self._first_foreign_rating(n, schema)
            raise GoldboardError(
                f"{self.path / STUDY_FILE}: schema {schema.name!r} does not match the ratings pulled with it: round "
                f"{n} was pulled with schema {pulled} ({self.pull_report_path(n)})"
                + (f", and {first}" if first else "")
                + f"; study.toml edited by hand? put back the schema {pulled.rsplit(' v', 1)[0]!r}"
            )

    def _first_foreign_rating(self, round_number: int, schema: Schema) -> str:
        """``rounds/N/ratings.csv:LINE: FIELD: ...`` for the first rating ``schema`` has no field
        or value for (``""`` when it holds them all)."""
        import csv

        from goldboard.label_configs.schema import ValueNotInSchema

        fields = {f.name: f for f in schema.fields}
        path = self.ratings_path(round_number)
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
        if round_number < 1:
            raise ParamError("{round_number} {n}: rounds are numbered from 1", n=round_number)
        if guideline_version is not None:
            guideline_version = free_text_option(guideline_version, "guideline_version", "the version")
        have = sorted(r.number for r in self.rounds)
        nxt = have[-1] + 1 if have else 1
        if round_number not in have and round_number != nxt:
            raise GoldboardError(
                f"round {round_number}: the study has "
                + (f"rounds {', '.join(map(str, have))}" if have else "no rounds yet")
                + f"; a new round is round {nxt} (rounds are numbered without gaps)"
            )
        restored = round_number not in have and self.pull_report_path(round_number).exists()
        rnd = self.get_or_add_round(round_number)
        if restored:  # an entry deleted by hand, put back for the ratings its pull wrote (unlisted_rounds)
            self._restore_round(rnd)
        if calibration is not None:
            rnd.calibration = bool(calibration)
        if guideline_version is not None:
            rnd.guideline_version = guideline_version.strip()
        self.save()
        return rnd

    def _restore_round(self, rnd: Round) -> None:
        """``rnd``'s mode and date from its ``pull.json`` (what the pull recorded), for an entry
        put back by ``study round`` over ratings a pull wrote."""
        import json

        try:
            rec = json.loads(self.pull_report_path(rnd.number).read_text(encoding="utf-8-sig"))
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
        if self.units_path.exists():
            rnd.units = sum(
                1
                for _, u in iter_jsonl(self.units_path, " in the units file")
                if isinstance(u, dict) and rnd.number in (u.get("rounds") or [])
            )
        rnd.restored = True

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
        import csv

        path = self.invalid_path(round_number)
        out: dict[str, set[str]] = {}
        if not path.exists():
            return out
        with path.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh):
                if row.get("kind") == "invalid" and row.get("item_id"):
                    out.setdefault(str(row.get("rater") or ""), set()).add(str(row["item_id"]))
        return out

    def no_ratings_text(self, round_number: int) -> str:
        """Why a round has no ratings: ``nobody has annotated it``, or, when its pull held every
        annotation out, ``all 4 ratings pulled were held out as invalid: see rounds/1/invalid.csv``."""
        held = self.held_out(round_number)
        n = sum(len(v) for v in held.values())
        if not n:
            return "nobody has annotated it"
        what = "the 1 rating pulled was" if n == 1 else f"all {n} ratings pulled were"
        return f"{what} held out as invalid: see {self.invalid_path(round_number)}"

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
        import json

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

    def ratings_edit_problem(self, round_number: int, sha256: str | None = None) -> str | None:
        """One line when ``rounds/N/ratings.csv`` is no longer the file its pull wrote (its
        SHA-256 -- ``sha256`` when the caller hashed the bytes it read -- is not the one
        ``pull.json`` recorded): edited by hand; or when it cannot be checked because the pull's
        record is missing (with the ``invalid.csv`` the same pull wrote still there) or
        unreadable.  ``None`` when it is the pulled file, or when there is nothing to check it
        against: a pull record of an older goldboard (no digest), or a ``ratings.csv`` put
        there by hand on its own."""
        path = self.ratings_path(round_number)
        if not path.exists():
            return None
        recorded, problem = self.recorded_ratings_sha256(round_number)
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

    def recorded_ratings_sha256(self, round_number: int) -> tuple[str | None, str | None]:
        """``(digest, None)``: the ``ratings_sha256`` of round ``round_number``'s ``pull.json``;
        ``(None, None)`` when there is none to check against; ``(None, line)`` when the record
        is missing or damaged."""
        import json

        rec, path = self.pull_report_path(round_number), self.ratings_path(round_number)
        unchecked = f"so {path} cannot be checked against its pull (a pull writes ratings.csv, invalid.csv and {rec.name} together)"
        try:
            text = rec.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            if not self.invalid_path(round_number).exists():
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

    def unlisted_rounds(self) -> list[str]:
        """One line per round folder holding ratings a pull wrote (``rounds/N/pull.json``) that
        ``study.toml`` has no ``[[rounds]]`` entry for (deleted by hand, or a pull stopped before it
        saved study.toml): readers read its ratings, say so, and ``gold export`` refuses it."""
        listed = {r.number for r in self.rounds}
        return [
            f"{self.path / STUDY_FILE}: no [[rounds]] entry for round {n}, but {self.round_dir(n)} holds ratings a "
            f"pull wrote (pull.json): its settings (calibration, guideline version, projects) are lost; put the entry "
            f"back with `goldboard study round {self.path} {n} --main` (--calibration if it was a calibration round)"
            for n in self.pulled_rounds()
            if n not in listed and self.pull_report_path(n).exists()
        ]

    def edited_rounds(self) -> list[str]:
        """One line per problem of the study's pulled files that every reader of its ratings
        says (``report``, ``flag``, ``adjudicate sheet``, ``status``; ``agree`` for its round):
        a round whose ``ratings.csv`` changed since its pull or cannot be checked
        (:meth:`ratings_edit_problem`, each file hashed once per call), and a pulled round
        study.toml does not list (:meth:`unlisted_rounds`)."""
        edited = [p for p in (self.ratings_edit_problem(n) for n in self.pulled_rounds()) if p]
        return edited + self.unlisted_rounds() + self.units_gaps()

    def units_gaps(self) -> list[str]:
        """One line when ``units.jsonl`` (present, with records) has no unit for an item a round
        rated: the record of what the raters were shown is lost (a line deleted by hand), or the
        file cannot be read.  ``[]`` for a study without a units file (ratings put there by hand)."""
        import csv

        problem = self.units_file_problem()
        if problem:
            return [problem]
        if not self.units_path.exists():
            return []
        try:
            have = _unit_ids(self.units_path)
        except GoldboardError as exc:
            return [f"{exc} (the record of what the raters were shown)"]
        if not have:
            return []
        try:
            rated = self.items_by_round()
        except (OSError, UnicodeDecodeError, csv.Error):
            return []  # a ratings file that cannot be read: named by the command reading it
        lines = []
        for n, items in rated.items():
            missing = sorted(items - have)
            if missing:
                shown = ", ".join(map(repr, missing[:3])) + (
                    f" and {len(missing) - 3} more" if len(missing) > 3 else ""
                )
                lines.append(
                    f"{self.units_path}: no unit for {len(missing)} item(s) rated in {self.ratings_path(n)} ({shown}): "
                    "the record of what the raters were shown is lost (a line deleted by hand?); restore the file"
                )
        return lines

    def units_file_problem(self) -> str:
        """The line saying ``units.jsonl`` cannot hold what the study recorded (``""`` when it can):
        a folder (or anything but a file) in its place, or the file gone while study.toml records
        items a round pushed or pulled (the review sheet would show no case or output)."""
        p = self.units_path
        if p.exists() or p.is_symlink():
            if p.is_file():
                return ""
            what = "a folder" if p.is_dir() else "not a file (a broken link or a special file)"
            return (
                f"{p}: {what}, where the study's items file should be (what the raters were shown); put the file back"
            )
        recorded = [(r.number, r.units) for r in self.rounds if r.units]
        if not recorded:
            return ""
        n, units = recorded[0]
        return (
            f"{p}: file not found, but {self.path / STUDY_FILE} records {units} item(s) in round {n}: the record "
            "of what the raters were shown is lost (deleted by hand?); restore the file from a backup"
        )

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
        import json

        seen: set[str] = set()
        for n in self.pulled_rounds():
            try:
                names = json.loads(self.pull_report_path(n).read_text(encoding="utf-8-sig")).get("raters")
            except (OSError, ValueError, AttributeError):
                return list(self.raters)
            if not isinstance(names, dict):
                return list(self.raters)
            seen.update(map(str, names))
        if not seen or seen - set(self.raters):
            return list(self.raters)
        return [r for r in self.raters if r in seen]

    def pulled_rounds(self) -> list[int]:
        """Numbers of the rounds that have a ``rounds/N/ratings.csv``, in numeric order (2 before 10).
        A round whose ``pull.json`` is there without its ``ratings.csv`` (deleted by hand: a pull
        writes the ratings first) is a one-line error: its ratings would silently drop out; so is
        a round folder renamed or deleted (:meth:`check_round_folders`)."""
        self.check_round_folders()
        rounds = self.path / "rounds"
        for rec in rounds.glob("*/pull.json"):
            if _ROUND_DIR.fullmatch(rec.parent.name) and not (rec.parent / "ratings.csv").exists():
                raise GoldboardError(
                    f"{rec.parent / 'ratings.csv'}: missing, but {rec} records its pull: deleted by hand? restore it "
                    f"from a backup (or move {rec.parent} out of the study and pull round {rec.parent.name} again)"
                )
        return sorted(int(p.parent.name) for p in rounds.glob("*/ratings.csv") if _ROUND_DIR.fullmatch(p.parent.name))

    def stray_round_entries(self) -> list[tuple[str, int | None]]:
        """The entries of ``rounds/`` that are not a round folder as goldboard names it
        (``rounds/1``, ``rounds/2``, ...: no leading zero, no other character), each with the
        round number its name reads as to a person (:func:`read_number`: ``01``, ``1`` with a
        zero-width space, `` 1``, a full-width ``１``), or ``None`` (``sub``, ``old``).  Files a
        file manager leaves (``.DS_Store``, ``Thumbs.db``, ``desktop.ini``) are not listed."""
        root = self.path / "rounds"
        if not root.is_dir():
            return []
        out = []
        for p in sorted(root.iterdir(), key=lambda p: p.name):
            if _ROUND_DIR.fullmatch(p.name) or p.name.casefold() in _OS_FILES:  # a file rounds/1: round 1 missing
                continue
            out.append((p.name, read_number(p.name)))
        return out

    def check_round_folders(self) -> None:
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
        stray = self.stray_round_entries()
        root = self.path / "rounds"
        for rnd in self.rounds:
            n = rnd.number
            if not rnd.tables:  # recorded after the round's files are written: a stopped pull never leaves it alone
                continue
            if self.ratings_path(n).exists() or self.pull_report_path(n).exists():
                continue
            what = "from " + ", ".join(map(str, rnd.tables))
            moved = [name for name, m in stray if m == n or _pull_record_round(root / name) == n]
            where = (
                f"{_shown_entry(root, moved[0])} holds it: renamed? rename it back to {self.round_dir(n)}"
                if moved
                else "deleted by hand? restore it from a backup"
            )
            raise GoldboardError(
                f"{self.round_dir(n)}: missing, but {self.path / STUDY_FILE} records round {n}'s pull ({what}); "
                f"{where} (its ratings would otherwise drop out of every result)"
            )
        for name, n in stray:
            if n is None:
                continue
            shown = _shown_entry(root, name)
            if n >= 1 and self.round_dir(n).is_dir():
                raise GoldboardError(
                    f"{shown}: reads as round {n}, beside {self.round_dir(n)}, but no command reads it: a copy? "
                    "move it out of the study"
                )
            to = f"rename it back to {self.round_dir(n)}" if n >= 1 else "rounds are numbered from 1: rename it"
            raise GoldboardError(
                f"{shown}: not a round folder name (goldboard names round folders {root / '1'}, {root / '2'}, ...), "
                f"though it reads as round {n}: renamed by hand? {to} (or move it out of the study)"
            )
        for name, _ in stray:  # rounds/old holding round 1's pull record, rounds/1 gone (a Label Studio round too)
            n = _pull_record_round(root / name)
            if n is not None and n >= 1 and not self.round_dir(n).exists():
                raise GoldboardError(
                    f"{self.round_dir(n)}: missing, but {_shown_entry(root, name)} holds round {n}'s pull record "
                    f"(pull.json): renamed? rename it back to {self.round_dir(n)} (its ratings would otherwise drop "
                    "out of every result)"
                )

    def unexpected_round_entries(self) -> list[str]:
        """One line per entry of ``rounds/`` that no command reads (not a round number): ``status``
        names them.  (An entry that reads as a round number is refused: :meth:`check_round_folders`.)"""
        root = self.path / "rounds"
        return [
            f"{_shown_entry(root, name)}: not a round folder (goldboard names them {root / '1'}, {root / '2'}, ...); "
            "no command reads it: move it out of the study"
            for name, n in self.stray_round_entries()
            if n is None
        ]

    def items_by_round(self) -> dict[int, set[str]]:
        """Round -> the item ids of its ``rounds/N/ratings.csv`` (every pulled round), read as
        text with the csv module: which items the study has, whatever one command analyses."""
        import csv

        out: dict[int, set[str]] = {}
        for n in self.pulled_rounds():
            path = self.ratings_path(n)
            st = path.stat()
            key = (st.st_mtime_ns, st.st_size, st.st_ino)
            if n in _ITEMS_READ.get(path, {}).get(key, {}):  # read already by this process, unchanged since
                out[n] = set(_ITEMS_READ[path][key][n])
                continue
            with open(path, encoding="utf-8", newline="") as fh:
                text = fh.read()
            found = _plain_column(text, "item_id")
            if found is None:
                rows = csv.reader(io.StringIO(text, newline=""))
                head = next(rows, [])
                if "item_id" not in head:
                    continue
                j = head.index("item_id")
                found = {r[j] for r in rows if len(r) > j}
            out[n] = found
            _ITEMS_READ[path] = {key: {n: frozenset(out[n])}}
        return out

    def lost_ratings_rounds(self) -> list[int]:
        """Rounds whose ``pull.json`` records a pull but whose ``ratings.csv`` is gone (deleted)."""
        self.check_round_folders()
        pulls = (self.path / "rounds").glob("*/pull.json")
        rounds = sorted(int(p.parent.name) for p in pulls if _ROUND_DIR.fullmatch(p.parent.name))
        return [n for n in rounds if not self.ratings_path(n).exists()]

    def no_ratings_error(self) -> GoldboardError:
        """The error for a study without ratings: "no ratings pulled yet", unless a round's
        ``pull.json`` records a pull whose ``ratings.csv`` is gone (then that file is named)."""
        gone = self.lost_ratings_rounds()
        if gone:
            n = gone[-1]
            return GoldboardError(
                f"{self.ratings_path(n)}: missing, but round {n} was pulled ({self.pull_report_path(n)} records it); "
                f"restore the file from a backup, or pull round {n} again"
            )
        held = [n for n in self.pulled_rounds() if self.held_out(n)]
        if held:  # pulled, but every annotation was held out (not "no ratings pulled yet")
            return GoldboardError(
                f"{self.path}: no valid ratings yet: round {held[-1]}: {self.no_ratings_text(held[-1])} "
                f"(correct them at the source and pull again)"
            )
        return GoldboardError(f"{self.path}: no ratings pulled yet (run `goldboard pull --study {self.path}`)")

    def check_round(self, round_number: int) -> None:
        """``--round N`` read by a command (agree, flag, report, sheet, plan, calibrate, gold):
        a round the study does not have -- neither in ``study.toml`` nor pulled -- is named as
        such ("the study has rounds 1-3; round 7 does not exist"), never advised to be pulled
        (``pull`` refuses a round beyond the next)."""
        have = sorted({r.number for r in self.rounds} | set(self.pulled_rounds()))
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
            where=self.path,
        )

    def latest_pulled_round(self) -> int:
        """The round every command reads when ``--round`` is omitted: the latest round of
        ``study.toml`` that has been pulled; for ratings outside any recorded round (e.g.
        a ``rounds/N/ratings.csv`` put there by hand), the latest such round."""
        pulled = [r.number for r in self.rounds if self.ratings_path(r.number).exists()] or self.pulled_rounds()
        if not pulled or self.lost_ratings_rounds():  # a deleted ratings.csv is named, never passed over
            raise self.no_ratings_error()
        return max(pulled)

    def ratings(self, round_number: int | None = None) -> pd.DataFrame:
        """Pulled ratings of one round (default: :meth:`latest_pulled_round`)."""
        from goldboard.cases.ratings import read_ratings_csv

        if round_number is None:
            round_number = self.latest_pulled_round()
        p = self.ratings_path(round_number)
        if not p.exists():
            self.check_round(round_number)
            raise GoldboardError(
                f"{p}: not pulled yet (run `goldboard pull --study {self.path} --round {round_number}`)"
            )
        df = read_ratings_csv(p)
        df.attrs["single_items"] = self.single_rated_items()
        return df

    def all_ratings(self, *, digests: dict[int, str] | None = None) -> pd.DataFrame:
        """Every pulled round's ratings, rounds in numeric order.

        ``digests`` (a dict) receives, per round, the SHA-256 of the very bytes its
        ratings were parsed from (each file is read once: a pull replacing it meanwhile
        cannot make the digest describe other ratings than the table)."""
        import pandas as pd

        from goldboard.cases.ratings import empty_ratings, read_ratings_csv

        if self.lost_ratings_rounds():  # a pulled round's ratings deleted: never read the others as all
            raise self.no_ratings_error()
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
        return df

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


def check_loaded(study: Study, raters: Any) -> None:
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
        twin = _case_twin(r, raters[:i])
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


#: a round folder's name as goldboard writes it (``rounds/1``, ``rounds/12``): ASCII digits, no leading zero
_ROUND_DIR = re.compile(r"[1-9][0-9]*", re.ASCII)
#: files a file manager or the OS leaves in any folder: never an unexpected entry of a study folder
_OS_FILES = frozenset({".ds_store", "thumbs.db", "desktop.ini"})


def read_number(name: str, prefix: str = "") -> int | None:
    """The number a folder name reads as to a person, ``prefix`` (lower case) then digits: the
    name in Unicode NFKC form, its invisible (Cf), control and space characters dropped, letter
    case folded, digits of any script; ``None`` when it reads as no number.

    >>> [read_number(x) for x in ("1", "01", "1\u200b", " 2", "\uff13", "sub", "1a", "")]
    [1, 1, 1, 2, 3, None, None, None]
    >>> [read_number(x, "v") for x in ("v2", "V2", "v02", " v2\u200b", "2", "vx")]
    [2, 2, 2, 2, None, None]
    """
    import unicodedata

    text = unicodedata.normalize("NFKC", name)
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] not in "CZ" and not ch.isspace()).casefold()
    if not text.startswith(prefix):
        return None
    digits = text[len(prefix) :]
    return int(digits) if digits and all(ch.isdecimal() for ch in digits) else None


def _shown_entry(folder: Path, name: str) -> str:
    """``folder/name`` as a message shows it: a name with an invisible, control or surrounding
    space character quoted with its escapes (``rounds/'1\\u200b'``), so the reader sees it."""
    return str(folder / name) if name.isprintable() and name == name.strip() else f"{folder}/{name!r}"


def _pull_record_round(folder: Path) -> int | None:
    """The ``round`` a folder's ``pull.json`` records (a round folder moved under another name)."""
    import json

    try:
        rec = json.loads((folder / "pull.json").read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    n = rec.get("round") if isinstance(rec, dict) else None
    return n if isinstance(n, int) else None


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

#: a units line as goldboard writes it (``json.dumps`` of a record whose first key is a plain
#: item id): its id is the text between the quotes, no JSON parse needed
_UNIT_LINE = re.compile(r'^\{"item_id": "([^"\\\n]*)"[^\n]*\}[ \t\r]*$', re.M)


def _unit_ids(path: Path) -> set[str]:
    """The item ids of a units file (a large study's units file is read by every reader's
    :meth:`Study.units_gaps`): when every line is one goldboard wrote (the id first, plain text),
    the ids are taken from the lines as they stand (200,000 units: 0.1 s, against 1.5 s for a
    JSON parse per line); any other file is read with the plain JSON parser, and a file it
    cannot read again by :func:`~goldboard.fileio.iter_jsonl`, whose one-line error names the
    line.  (What a unit says is checked by the readers of the units, not here.)"""
    import json

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


def shown_url(url: str) -> str:
    """``url`` as it may be printed: a user name and password (``http://u:pw@host``, from an
    older study.toml) shown as ``http://...@host``."""
    from urllib.parse import urlsplit

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
    from goldboard.cases.ids import hidden_text_message

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
    from goldboard.cases.ids import ID_SPACE

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
    from urllib.parse import urlsplit

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
                f"({study.no_ratings_text(round_number)}; pull again once raters have)"
            )
    df = study.all_ratings(digests=digests)
    if len(df) == 0:
        raise study.no_ratings_error()
    return df
