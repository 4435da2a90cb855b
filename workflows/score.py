"""Score model predictions (or each model's rated outputs) against a gold source.

:func:`resolve_gold_source` finds the gold labels (a release folder, its gold file, a
study's latest or named release, or a plain reference file); :func:`run_score` reads
the tables, picks the scoring kind and calls :mod:`goldboard.analysis.scoring`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from goldboard.analysis import scoring
from goldboard.analysis.scoring_inputs import KEY_COL_CANDIDATES, GoldTable, is_release_table
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


def run_score(
    *,
    gold=None,
    study=None,
    release=None,
    predictions=None,
    schema_opt=None,
    mode="auto",
    field=None,
    gold_col=None,
    id_col=None,
    gold_id_col=None,
    model_col=None,
    model_name=None,
    condition_col=None,
    label_col=None,
    abstain_col=None,
    confidence_col=None,
    key_file=None,
    confident_at=None,
    collapse_share=None,
    critical_at=None,
    skip_missing=False,
    n_resamples=2000,
    seed=1,
    confidence_level=0.95,
    compare=None,
    progress=False,
) -> dict:
    """Everything ``goldboard score`` does except printing; returns the result dict
    (also what the report calls when predictions are given)."""
    src, schema, gt = _gold_for_scoring(gold, study, release, schema_opt, field, gold_col, gold_id_col)
    gold_source = str(src.path)
    kind = scoring.detect_kind(schema, predictions is not None) if mode == "auto" else mode
    missing = "skip" if skip_missing else "unanswered"
    pred_df = read_table(predictions) if predictions else None
    default_model = model_name or (Path(predictions).stem if predictions else "model")
    if kind in ("labels", "options") and pred_df is None:
        raise GoldboardError(f"{kind} scoring needs a predictions file", param="predictions")
    # the options every scoring kind takes, and those of the two that read predictions
    common = dict(
        n_resamples=n_resamples, seed=seed, confidence_level=confidence_level, compare=compare, progress=progress
    )
    predicted = dict(
        id_col=id_col,
        model_col=model_col,
        condition_col=condition_col,
        default_model=default_model,
        missing=missing,
        gold_source=gold_source,
        pred_source=str(predictions),
        **common,
    )
    if kind == "labels":
        return scoring.score_labels(
            gt,
            pred_df,
            field,
            schema,
            label_col=label_col,
            abstain_col=abstain_col,
            collapse_share=collapse_share,
            **predicted,
        )
    if kind == "options":
        key, key_source = _options_key(key_file, src, gt)
        return scoring.score_radsafe(
            gt,
            pred_df,
            schema,
            key=key,
            key_source=key_source,
            option_col=label_col,
            confidence_col=confidence_col,
            confident_at=confident_at,
            **predicted,
        )
    return _score_outputs(gt, schema, field, pred_df, critical_at=critical_at, gold_source=gold_source, **common)


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


def _score_outputs(gt: GoldTable, schema: Schema, field: str | None, pred_df: pd.DataFrame | None, **options) -> dict:
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
    return scoring.score_medfail(gt, schema, severity_field=sev_field, gate_field=gate_field, **options)
