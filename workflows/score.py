"""Score model predictions (or each model's rated outputs) against a gold source.

:func:`resolve_gold_source` finds the gold labels (a release folder, its gold file, a
study's latest or named release, or a plain reference file); :func:`run_score` reads
the tables, picks the scoring kind and calls :mod:`goldboard.analysis.scoring`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from goldboard.analysis import scoring
from goldboard.analysis.scoring_inputs import KEY_COL_CANDIDATES, GoldTable, is_release_table
from goldboard.analysis.scoring_settings import LabelScoring, OptionScoring, OutputScoring, ScoringCommon
from goldboard.errors import GoldboardError, ParamError
from goldboard.exports.gold import list_releases, read_manifest, read_release, release_path
from goldboard.fileio import read_table
from goldboard.label_configs.schema import Schema, SchemaError, load_schema, schema_from_dict
from goldboard.study import STUDY_FILE, Study


@dataclass
class GoldSource:
    path: Path  # the gold file (or reference file)
    table: pd.DataFrame
    release: str | None = None
    manifest: dict | None = None
    study: Study | None = None


def _read_release_dir(d: Path, study: Study | None) -> GoldSource:
    """A release folder through :func:`goldboard.exports.gold.read_release` (all formats);
    ``_line`` = the row's line in the file (CSV/XLSX: header is line 1)."""
    table, manifest = read_release(d)
    fmt = manifest.get("format", "csv")
    table["_line"] = range(2, len(table) + 2) if fmt in ("csv", "xlsx") else range(1, len(table) + 1)
    return GoldSource(d / f"gold.{fmt}", table, d.name, manifest, study)


def _study_of(release_dir: Path) -> Study | None:
    root = release_dir.parent.parent
    if (root / STUDY_FILE).exists():
        return Study.open(root)
    return None


def resolve_gold_source(gold: str | None, study: str | None, release: str | None) -> GoldSource:
    """Find and read the gold labels from ``--gold`` (release folder, its gold file, a study
    folder, or a plain reference file) or ``--study`` [``--release vN``] (default: latest)."""
    if gold and study:
        raise ParamError("{gold} and {study}: give one of them")
    if not gold and not study:
        raise ParamError("{gold}: give a gold release (study/gold/v1), a gold or reference file, or {study} DIR")
    if study or (gold and (Path(gold) / STUDY_FILE).exists()):
        st = Study.open(study or gold)
        if release:
            rel = release_path(st.gold_dir, release)
        else:
            found = list_releases(st.gold_dir)
            if not found:
                raise GoldboardError(f"{st.gold_dir}: no gold releases yet (run `goldboard gold export`)")
            rel = found[-1][1]
        return _read_release_dir(rel, st)
    if release:
        raise ParamError("{release}: only with {study} (or give the release folder to {gold})")
    p = Path(gold)
    if not p.exists():
        raise GoldboardError(f"{p}: not found")
    if p.is_dir():
        if not (p / "manifest.json").exists():
            raise GoldboardError(f"{p}: not a gold release folder (no manifest.json) nor a study folder")
        return _read_release_dir(p, _study_of(p))
    if (p.parent / "manifest.json").exists():
        manifest = read_manifest(p.parent)
        if p.name == f"gold.{manifest.get('format', 'csv')}":
            return _read_release_dir(p.parent, _study_of(p.parent))
        return GoldSource(p, read_table(p), p.parent.name, manifest, _study_of(p.parent))
    return GoldSource(p, read_table(p))


def resolve_schema(option: str | None, src: GoldSource, plain: bool) -> Schema:
    """``option`` (``score --schema``) wins; else the release manifest's schema; else the study's."""
    if option:
        return load_schema(option)
    ref = (src.manifest or {}).get("schema")
    if isinstance(ref, dict):
        if "fields" in ref:
            return schema_from_dict(ref, source=f"{src.path.parent / 'manifest.json'}: schema")
        for k in ("path", "source", "ref", "name"):
            v = ref.get(k)
            if isinstance(v, str) and v:
                try:
                    return load_schema(v)
                except SchemaError:
                    continue
    elif isinstance(ref, str) and ref:
        try:
            return load_schema(ref)
        except SchemaError:
            if src.study is None:
                raise
    if src.study is not None:
        return src.study.schema
    if plain:
        raise ParamError(
            "{schema}: {path} is a plain reference file; name its schema (e.g. {schema} mtb)", path=src.path
        )
    raise ParamError("{schema}: cannot tell the schema of {path} (no manifest); give {schema}", path=src.path)


def _study_key(st: Study) -> pd.DataFrame | None:
    """Correct options recorded in the study's units (case fields), if any."""
    units = st.units()
    if not len(units) or "case" not in units.columns:
        return None
    rows = []
    for item, case in zip(units["item_id"], units["case"]):
        if isinstance(case, dict):
            for k in KEY_COL_CANDIDATES:
                if case.get(k) not in (None, ""):
                    rows.append({"item_id": str(item), "correct_option": case[k]})
                    break
    return pd.DataFrame(rows) if rows else None


@dataclass(frozen=True)
class ScoreRequest:
    """Everything ``goldboard score`` is asked, built once from its flags (one field per
    option; ``tests/test_scoring_cli.py`` checks that every flag lands in one) and passed to
    :func:`run_score`, which turns it into the options object of the kind it scores
    (:meth:`options_for`, :mod:`goldboard.analysis.scoring_settings`).

    Where the gold comes from: ``gold`` (release folder, gold file, study folder or plain
    reference) or ``study`` [``release``]; ``schema`` (name or file; default from the
    release or study); ``mode`` (``auto``/``labels``/``outputs``/``options``); ``field``;
    a plain reference's ``gold_col``/``gold_id_col``.  The predictions file and its
    columns; ``key`` the answer-key file of ``options`` scoring; the rules
    (``confident_at``, ``collapse_share``, ``critical_at``); ``skip_missing``; the
    bootstrap, seed, interval level and ``compare`` pairs."""

    gold: str | None = None
    study: str | None = None
    release: str | None = None
    predictions: str | None = None
    schema: str | None = None
    mode: str = "auto"
    field: str | None = None
    gold_col: str | None = None
    id_col: str | None = None
    gold_id_col: str | None = None
    model_col: str | None = None
    model_name: str | None = None
    condition_col: str | None = None
    label_col: str | None = None
    abstain_col: str | None = None
    confidence_col: str | None = None
    key: str | None = None
    confident_at: float | None = None
    collapse_share: float | None = None
    critical_at: str | None = None
    skip_missing: bool = False
    n_resamples: int = 2000
    seed: int = 1
    confidence_level: float = 0.95
    compare: tuple[str, ...] = ()
    progress: bool = False

    def options_for(self, kind: str, gold_source: str, **found: Any) -> ScoringCommon:
        """The options object of scoring ``kind`` (``found``: what the workflow worked out:
        the answer key table, the severity or gate field)."""
        _check_applies(self, kind)  # defined below: an option of another scoring kind is an error
        common = dict(
            n_resamples=self.n_resamples,
            seed=self.seed,
            confidence_level=self.confidence_level,
            compare=list(self.compare),
            progress=self.progress,
            gold_source=gold_source,
        )
        if kind == "outputs":
            return OutputScoring(critical_at=self.critical_at, **common, **found)
        predicted = dict(
            id_col=self.id_col,
            model_col=self.model_col,
            condition_col=self.condition_col,
            default_model=self.model_name or (Path(self.predictions).stem if self.predictions else "model"),
            missing="skip" if self.skip_missing else "unanswered",
            pred_source=str(self.predictions),
            **common,
        )
        if kind == "labels":
            return LabelScoring(
                label_col=self.label_col, abstain_col=self.abstain_col, collapse_share=self.collapse_share, **predicted
            )
        return OptionScoring(
            option_col=self.label_col,
            confidence_col=self.confidence_col,
            confident_at=self.confident_at,
            **predicted,
            **found,
        )


#: an option of one scoring kind only -> that kind (given to another kind it would be ignored)
KIND_OPTIONS = {
    "critical_at": "outputs",
    "collapse_share": "labels",
    "abstain_col": "labels",
    "confident_at": "options",
    "confidence_col": "options",
}
KIND_NAMES = {"outputs": "model outputs (gold ratings)", "labels": "predicted labels", "options": "multiple choice"}


def _check_applies(request: ScoreRequest, kind: str) -> None:
    """An option that only another scoring kind reads is an error, never silently ignored
    (``--critical-at bogus`` on predicted labels was accepted without a word); so is a
    ``--collapse-share`` or ``--confident-at`` outside 0..1 (a percentage typed as 5)."""
    for name, only in KIND_OPTIONS.items():
        if getattr(request, name) is not None and only != kind:
            raise GoldboardError(
                f"applies only when scoring {KIND_NAMES[only]}; this run scores {KIND_NAMES.get(kind, kind)}: "
                "leave it out",
                param=name,
            )
    for name in ("collapse_share", "confident_at"):
        value = getattr(request, name)
        if value is not None and not 0 <= value <= 1:
            raise GoldboardError(f"{value:g}: give a share between 0 and 1 (e.g. 0.05 for 5%)", param=name)


def run_score(request: ScoreRequest | None = None, /, **given: Any) -> dict:
    """Everything ``goldboard score`` does except printing; returns the result dict
    (also what the report calls when predictions are given).  ``request``, or its fields as
    keywords (``run_score(study=..., predictions=..., seed=...)``)."""
    if given:
        request = replace(request or ScoreRequest(), **given)
    r = request or ScoreRequest()
    src, schema, gt = _gold_for_scoring(r.gold, r.study, r.release, r.schema, r.field, r.gold_col, r.gold_id_col)
    gold_source = str(src.path)
    kind = scoring.detect_kind(schema, r.predictions is not None) if r.mode == "auto" else r.mode
    pred_df = read_table(r.predictions) if r.predictions else None
    if kind in ("labels", "options") and pred_df is None:
        raise GoldboardError(f"{kind} scoring needs a predictions file", param="predictions")
    if kind == "labels":
        return scoring.score_labels(gt, pred_df, r.field, schema, options=r.options_for(kind, gold_source))
    if kind == "options":
        key, key_source = _options_key(r.key, src, gt)
        opts = r.options_for(kind, gold_source, key=key, key_source=key_source)
        return scoring.score_radsafe(gt, pred_df, schema, options=opts)
    return _score_outputs(gt, schema, r.field, pred_df, r.options_for(kind, gold_source))


def _gold_for_scoring(
    gold: str | None,
    study: str | None,
    release: str | None,
    schema_opt: str | None,
    field: str | None,
    gold_col: str | None,
    gold_id_col: str | None,
) -> tuple[GoldSource, Schema, GoldTable]:
    """The gold source, its schema and the gold table prepared for scoring."""
    src = resolve_gold_source(gold, study, release)
    gold_df = src.table
    plain = not is_release_table(gold_df)
    schema = resolve_schema(schema_opt, src, plain)
    gt = scoring.prepare_gold(
        gold_df,
        schema,
        str(src.path),
        field=field,
        gold_col=gold_col,
        id_col=gold_id_col if plain else None,
        release=src.release,
    )
    return src, schema, gt


def _options_key(key_file: str | Path | None, src: GoldSource, gt: GoldTable) -> tuple[pd.DataFrame | None, str]:
    """The answer key of an options study: ``--key``, else the study's units when the gold has no answers."""
    key = None
    key_source = "<key>"
    if key_file:
        key, key_source = read_table(key_file), str(key_file)
    elif src.study is not None and gt.items["answer"].isna().all():
        key = _study_key(src.study)
        key_source = str(src.study.units_path)
    return key, key_source


def _score_outputs(
    gt: GoldTable, schema: Schema, field: str | None, pred_df: pd.DataFrame | None, options: OutputScoring
) -> dict:
    """Outputs scoring (the gold ratings of each model's outputs): ``--field`` is the severity
    or the gate field, as its kind says; predictions do not belong here."""
    if pred_df is not None:
        raise ParamError(
            "{predictions}: outputs mode summarises the gold ratings of each model's outputs; "
            "use {mode} labels to score predicted labels"
        )
    sev_field = gate_field = None
    if field:
        try:
            f = schema.field(field)
        except KeyError as exc:
            raise GoldboardError(f"{exc.args[0]}", param="field") from None
        sev_field, gate_field = (field, None) if f.kind == "ordinal" else (None, field)
    return scoring.score_medfail(gt, schema, options=replace(options, severity_field=sev_field, gate_field=gate_field))
