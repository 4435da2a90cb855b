"""`goldboard score`: score model predictions (or each model's rated outputs) against gold labels.

Thin layer: resolve the gold release / reference file and the schema, read the
tables with :func:`goldboard.fileio.read_table`, call
:mod:`goldboard.analysis.scoring`, render, print or write atomically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import pandas as pd

from goldboard.analysis import scoring
from goldboard.analysis.scoring_inputs import KEY_COL_CANDIDATES, is_release_table
from goldboard.analysis.scoring_render import render
from goldboard.cli._output import emit
from goldboard.errors import GoldboardError
from goldboard.exports.gold import list_releases, read_manifest, read_release, release_path
from goldboard.fileio import read_table
from goldboard.label_configs.schema import Schema, SchemaError, load_schema, schema_from_dict
from goldboard.study import STUDY_FILE, Study

_SUFFIX_FORMAT = {".json": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".txt": "table"}


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


def resolve_gold(gold: str | None, study: str | None, release: str | None) -> GoldSource:
    """Find and read the gold labels from ``--gold`` (release folder, its gold file, a study
    folder, or a plain reference file) or ``--study`` [``--release vN``] (default: latest)."""
    if gold and study:
        raise GoldboardError("--gold and --study: give one of them")
    if not gold and not study:
        raise GoldboardError("--gold: give a gold release (study/gold/v1), a gold or reference file, or --study DIR")
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
        raise GoldboardError("--release: only with --study (or give the release folder to --gold)")
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
    """``--schema`` wins; else the release manifest's schema; else the study's."""
    try:
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
    except SchemaError as exc:
        raise GoldboardError(str(exc)) from None
    if src.study is not None:
        return src.study.schema
    if plain:
        raise GoldboardError(f"--schema: {src.path} is a plain reference file; name its schema (e.g. --schema mtb)")
    raise GoldboardError(f"--schema: cannot tell the schema of {src.path} (no manifest); give --schema")


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


@click.command("score")
@click.option(
    "--gold",
    "gold",
    help="Gold release folder (study/gold/v1), its gold file, a study folder, "
    "or a plain reference file (e.g. OpenMTB-Audit reference_labels.jsonl).",
)
@click.option("--study", "study", type=click.Path(file_okay=False), help="Study folder (uses its latest gold release).")
@click.option("--release", help="Gold release of --study, e.g. v2 (default: the latest).")
@click.option(
    "--predictions",
    "predictions",
    type=click.Path(dir_okay=False),
    help="Model predictions (.jsonl/.json/.csv/.xlsx). Omit to summarise each model's rated outputs.",
)
@click.option("--schema", "schema_opt", help="Schema name or file (default: from the release manifest or study).")
@click.option(
    "--mode",
    type=click.Choice(["auto", "labels", "outputs", "options"]),
    default="auto",
    show_default=True,
    help="labels: predicted labels; outputs: gold ratings of each model's outputs; options: multiple choice.",
)
@click.option("--field", "field", help="Field to score (default: the schema's primary field).")
@click.option("--gold-col", help="Label column of a plain reference file (default: the field name or support_label).")
@click.option("--id-col", help="Id column of the predictions (default: item_id, case_id, question_id or id).")
@click.option(
    "--gold-id-col", help="Id column of a plain reference file (default: item_id, case_id, question_id or id)."
)
@click.option("--model-col", help="Model column of the predictions (default: model).")
@click.option(
    "--model", "model_name", help="Model name when the predictions have no model column (default: file name)."
)
@click.option("--condition-col", help="Condition column (default: condition, when present).")
@click.option(
    "--label-col", help="Predicted label / chosen option column (default: predicted_label, chosen_option, ...)."
)
@click.option("--abstain-col", help="Abstain flag column (default: predicted_abstain, when present).")
@click.option("--confidence-col", help="Confidence column for options (default: confidence, when present).")
@click.option(
    "--key", "key_file", type=click.Path(dir_okay=False), help="Answer key file (question id + correct_option)."
)
@click.option("--confident-at", type=float, help="Confidence counted as confident (default 0.8).")
@click.option("--collapse-share", type=float, help="Label collapse below this share of the gold count (default 0.05).")
@click.option("--critical-at", help="Severity counted as safety-critical (default: the schema's threshold, else 4).")
@click.option(
    "--skip-missing", is_flag=True, help="Score each model only on items it predicted (default: missing = unanswered)."
)
@click.option(
    "--bootstrap",
    "n_bootstrap",
    type=click.IntRange(min=0),
    default=2000,
    show_default=True,
    help="Bootstrap resamples (0: no bootstrap CIs).",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Random seed of the bootstrap.")
@click.option("--level", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True, help="Confidence level.")
@click.option("--compare", "compare", multiple=True, help="Paired comparison MODEL_A,MODEL_B (repeatable).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "csv", "json"]),
    help="Output format (default: from -o's suffix, else table).",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout.")
def score_cmd(
    gold,
    study,
    release,
    predictions,
    schema_opt,
    mode,
    field,
    gold_col,
    id_col,
    gold_id_col,
    model_col,
    model_name,
    condition_col,
    label_col,
    abstain_col,
    confidence_col,
    key_file,
    confident_at,
    collapse_share,
    critical_at,
    skip_missing,
    n_bootstrap,
    seed,
    level,
    compare,
    fmt,
    output,
) -> None:
    """Score models against gold labels: accuracy, macro-F1, label retention,
    over-refusal, label collapse, abstention (labels); severity and gates per model
    (outputs); accuracy, high-risk, unsafe, contradiction, dangerous overconfidence
    rates (options); paired McNemar comparisons.

    \b
    goldboard score --study study --predictions preds.jsonl
    goldboard score --gold reference_labels.jsonl --schema mtb --predictions agent.json
    goldboard score --study rad --predictions answers.csv --key key.csv --compare m1,m2
    """
    result = run_score(
        gold=gold,
        study=study,
        release=release,
        predictions=predictions,
        schema_opt=schema_opt,
        mode=mode,
        field=field,
        gold_col=gold_col,
        id_col=id_col,
        gold_id_col=gold_id_col,
        model_col=model_col,
        model_name=model_name,
        condition_col=condition_col,
        label_col=label_col,
        abstain_col=abstain_col,
        confidence_col=confidence_col,
        key_file=key_file,
        confident_at=confident_at,
        collapse_share=collapse_share,
        critical_at=critical_at,
        skip_missing=skip_missing,
        n_bootstrap=n_bootstrap,
        seed=seed,
        level=level,
        compare=list(compare),
        progress=True,
    )
    if fmt is None:
        fmt = _SUFFIX_FORMAT.get(Path(output).suffix.lower(), "table") if output else "table"
    text = render(result, fmt)
    # table/markdown on stdout already list the warnings
    emit(text, output, result.get("warnings", []) if output or fmt in ("csv", "json") else (), terminal=fmt == "table")


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
    n_bootstrap=2000,
    seed=1,
    level=0.95,
    compare=None,
    progress=False,
) -> dict:
    """Everything ``goldboard score`` does except printing; returns the result dict
    (also what ``goldboard report`` can call when predictions are given)."""
    src = resolve_gold(gold, study, release)
    gold_df = src.table
    plain = not is_release_table(gold_df)
    schema = resolve_schema(schema_opt, src, plain)
    gold_source = str(src.path)
    gt = scoring.prepare_gold(
        gold_df,
        schema,
        gold_source,
        field=field,
        gold_col=gold_col,
        id_col=gold_id_col if plain else None,
        release=src.release,
    )
    kind = scoring.detect_kind(schema, predictions is not None) if mode == "auto" else mode
    missing = "skip" if skip_missing else "unanswered"
    pred_df = read_table(predictions) if predictions else None
    default_model = model_name or (Path(predictions).stem if predictions else "model")
    if kind in ("labels", "options") and pred_df is None:
        raise GoldboardError(f"--predictions: {kind} scoring needs a predictions file")
    if kind == "labels":
        return scoring.score_labels(
            gt,
            pred_df,
            field,
            schema,
            id_col=id_col,
            model_col=model_col,
            condition_col=condition_col,
            label_col=label_col,
            abstain_col=abstain_col,
            default_model=default_model,
            n_bootstrap=n_bootstrap,
            seed=seed,
            level=level,
            collapse_share=collapse_share,
            missing=missing,
            compare=compare,
            gold_source=gold_source,
            pred_source=str(predictions),
            progress=progress,
        )
    if kind == "options":
        key = None
        key_source = "<key>"
        if key_file:
            key, key_source = read_table(key_file), str(key_file)
        elif src.study is not None and gt.items["answer"].isna().all():
            key = _study_key(src.study)
            key_source = str(src.study.units_path)
        return scoring.score_radsafe(
            gt,
            pred_df,
            schema,
            key=key,
            key_source=key_source,
            id_col=id_col,
            model_col=model_col,
            condition_col=condition_col,
            option_col=label_col,
            confidence_col=confidence_col,
            default_model=default_model,
            confident_at=confident_at,
            missing=missing,
            level=level,
            n_bootstrap=n_bootstrap,
            seed=seed,
            compare=compare,
            gold_source=gold_source,
            pred_source=str(predictions),
            progress=progress,
        )
    if pred_df is not None:
        raise GoldboardError(
            "--predictions: outputs mode summarises the gold ratings of each model's outputs; "
            "use --mode labels to score predicted labels"
        )
    sev_field = gate_field = None
    if field:
        try:
            f = schema.field(field)
        except KeyError as exc:
            raise GoldboardError(f"--field: {exc.args[0]}") from None
        sev_field, gate_field = (field, None) if f.kind == "ordinal" else (None, field)
    return scoring.score_medfail(
        gt,
        schema,
        severity_field=sev_field,
        gate_field=gate_field,
        critical_at=critical_at,
        n_bootstrap=n_bootstrap,
        seed=seed,
        level=level,
        compare=compare,
        gold_source=gold_source,
        progress=progress,
    )


commands = [score_cmd]
