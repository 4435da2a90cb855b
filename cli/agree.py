"""`goldboard agree`: agreement statistics with 95% CIs from any ratings source.

The command is thin: the readers below turn each input into a ratings-shaped
DataFrame (``item_id, rater, field, value`` plus the file's other columns and a
``_where`` column naming ``file:line`` for error messages), then
:func:`goldboard.analysis.agreement.agreement` does the statistics and a
renderer prints them.  Readers are importable for scripts and tests:

* :func:`read_long_table` -- CSV/TSV/XLSX/JSONL/JSON, one row per rating
  (``goldboard pull``'s ``ratings.csv`` included: ``value`` is found when there is
  no ``label`` column);
* :func:`read_wide_table` -- one column per rater;
* :func:`read_label_studio_export` -- Label Studio's full JSON export or JSON_MIN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pandas as pd

from goldboard.analysis.agreement import (
    LEVELS,
    agreement,
    latest_pulled_round,
    render_csv,
    render_json,
    render_markdown,
    render_table,
    unit_groups,
)
from goldboard.cli._output import emit
from goldboard.errors import GoldboardError
from goldboard.fileio import read_json_file, read_table

_RESERVED = ("item_id", "rater", "value", "field", "_where", "_line")


def _columns_text(df: pd.DataFrame) -> str:
    return ", ".join(str(c) for c in df.columns if not str(c).startswith("_"))


def _where_column(path: Path, df: pd.DataFrame) -> pd.Series:
    if path.suffix.lower() == ".json":
        return df["_line"].map(lambda n: f"{path}: record {int(n)}")
    return df["_line"].map(lambda n: f"{path}:{int(n)}")


def _carry(df: pd.DataFrame, out: pd.DataFrame, used: set[str]) -> pd.DataFrame:
    """Keep the file's other columns (for --by / --cluster-col) under their own names."""
    for c in df.columns:
        c = str(c)
        if c in used or c in out.columns or c.startswith("_"):
            continue
        out[c] = df[c].to_numpy()
    return out


def read_long_table(
    path: str | Path,
    item_col: str = "item_id",
    rater_col: str = "rater",
    label_col: str | None = None,
    field_col: str = "field",
) -> pd.DataFrame:
    """A long ratings table (one row per rating) -> ratings-shaped DataFrame.

    Without ``label_col`` the label is the ``label`` column, else ``value`` (the
    shape ``goldboard pull`` writes).  Raises :class:`GoldboardError` naming the
    file and the missing column.
    """
    path = Path(path)
    df = read_table(path)
    if label_col is None:
        label_col = "label" if "label" in df.columns else ("value" if "value" in df.columns else None)
        if label_col is None:
            raise GoldboardError(
                f"{path}: no label column: looked for 'label' and 'value' (columns: {_columns_text(df)}); "
                f"name it with --label-col"
            )
    for opt, col in (("--item-col", item_col), ("--rater-col", rater_col), ("--label-col", label_col)):
        if col not in df.columns:
            raise GoldboardError(f"{path}: {opt} {col!r}: no such column (columns: {_columns_text(df)})")
    out = pd.DataFrame(
        {"item_id": df[item_col].to_numpy(), "rater": df[rater_col].to_numpy(), "value": df[label_col].to_numpy()}
    )
    if field_col in df.columns:
        out["field"] = df[field_col].to_numpy()
    out["_where"] = _where_column(path, df).to_numpy()
    return _carry(df, out, {item_col, rater_col, label_col, field_col})


def read_wide_table(path: str | Path, raters: list[str], item_col: str = "item_id") -> pd.DataFrame:
    """A wide table (one row per item, one column per rater) -> ratings-shaped DataFrame."""
    path = Path(path)
    df = read_table(path)
    if item_col not in df.columns:
        raise GoldboardError(f"{path}: --item-col {item_col!r}: no such column (columns: {_columns_text(df)})")
    missing = [r for r in raters if r not in df.columns]
    if missing:
        raise GoldboardError(f"{path}: --raters: no column {missing[0]!r} (columns: {_columns_text(df)})")
    if len(set(raters)) != len(raters):
        raise GoldboardError("--raters: each rater column may be named once")
    where = _where_column(path, df).to_numpy()
    frames = []
    for r in raters:
        part = pd.DataFrame(
            {
                "item_id": df[item_col].to_numpy(),
                "rater": r,
                "value": df[r].to_numpy(),
                "_where": [f"{w} (column {r})" for w in where],
            }
        )
        frames.append(_carry(df, part, {item_col, *raters}))
    return pd.concat(frames, ignore_index=True)


def _ls_user(raw: Any, where: str) -> str:
    if isinstance(raw, dict):
        val = raw.get("email") or raw.get("username") or raw.get("id")
        if val is not None:
            return str(val)
    elif isinstance(raw, bool):
        pass
    elif isinstance(raw, (int, float, str)) and str(raw).strip():
        return str(int(raw)) if isinstance(raw, float) and raw.is_integer() else str(raw).strip()
    raise GoldboardError(f"{where}: no annotator (completed_by / annotator) to attribute the rating to")


def _ls_item(data: dict, task_id: Any) -> str:
    for key in ("item_id", "output_id", "case_id"):
        v = data.get(key)
        if v not in (None, ""):
            return str(v)
    return str(task_id)


def _ls_value(value: Any) -> str:
    """A result's value (choices / rating / text / number) as goldboard text; lists joined with '|'."""
    if value is None:
        return ""
    if isinstance(value, dict):
        for key in ("choices", "rating", "number", "text", "labels", "taxonomy"):
            if key in value:
                return _ls_value(value[key])
        return ""
    if isinstance(value, list):
        parts = ["/".join(map(str, v)) if isinstance(v, list) else _ls_value(v) for v in value]
        return "|".join(p for p in parts if p)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def read_label_studio_export(path: str | Path, field: str, schema=None) -> pd.DataFrame:
    """Label Studio JSON export (full ``JSON`` or ``JSON_MIN``) -> ratings-shaped DataFrame.

    Full export: a list of tasks; each annotation's ``result`` items whose
    ``from_name`` is ``field`` give the rating; the rater is ``completed_by``
    (a user id, or an object with ``email``).  Cancelled (skipped) annotations
    count as missing.  JSON_MIN: one row per annotation with ``annotator`` and the
    field's value under its ``from_name``.  The item is the task's
    ``data.item_id`` (else ``output_id``, ``case_id``, the task id), so exports
    of one project per rater line up.

    With a ``schema`` each annotation is read exactly as ``goldboard pull`` reads it
    (:func:`goldboard.annotate.pull.parse_result`): an unticked binary box is the
    absent value, an empty multi-select is ``""``, a field hidden by ``shown_when``
    is missing; a value the schema does not know is a one-line error naming the
    task and annotation.  Without a schema, multi-choice answers are joined with ``|``.
    """
    path = Path(path)
    data = read_json_file(path)
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(t, dict) for t in data):
        raise GoldboardError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    if not data:
        raise GoldboardError(f"{path}: the export has no tasks")
    base = field.partition(":")[0]
    sch_field = None
    if schema is not None:
        try:
            sch_field = schema.field(base)
        except KeyError:
            raise GoldboardError(
                f"--field {base!r}: not a field of schema {schema.name} (fields: {', '.join(schema.field_names)})"
            ) from None
    full = any("annotations" in t for t in data)
    if not full and not any("annotator" in t for t in data):
        raise GoldboardError(
            f"{path}: not a Label Studio JSON export: no task has 'annotations' (full JSON) "
            f"and no row has 'annotator' (JSON_MIN)"
        )
    if not full and schema is not None:
        from goldboard.annotate.pull import tasks_from_json_min

        json_min_where = {}
        for i, rec in enumerate(data, start=1):
            json_min_where[(rec.get("id"), rec.get("annotation_id"))] = f"{path}: record {i}"
        data, full = tasks_from_json_min(data, schema), True
    else:
        json_min_where = None
    rows: list[dict] = []
    if full:
        if schema is not None:
            from goldboard.annotate.pull import parse_result
        for i, task in enumerate(data, start=1):
            tid = task.get("id", i)
            tdata = task.get("data") or {}
            tdata = tdata if isinstance(tdata, dict) else {}
            item = _ls_item(tdata, tid)
            anns = task.get("annotations") or []
            if not isinstance(anns, list):
                raise GoldboardError(f"{path}: task {tid}: 'annotations' is not a list")
            for ann in anns:
                if not isinstance(ann, dict):
                    raise GoldboardError(f"{path}: task {tid}: an annotation is not an object")
                where = (json_min_where or {}).get(
                    (tid, ann.get("id"))
                ) or f"{path}: task {tid}, annotation {ann.get('id', '?')}"
                rater = _ls_user(ann.get("completed_by"), where)
                value = ""
                if not ann.get("was_cancelled"):
                    result = ann.get("result") or []
                    if schema is not None:
                        values, problems = parse_result(result, schema) if result else ({}, [])
                        mine = [p for p in problems if p.startswith(f"{base}:")]
                        if mine:
                            raise GoldboardError(f"{where}: field {mine[0]}")
                        value = values.get(base, "")
                    else:
                        parts = [
                            _ls_value(res.get("value"))
                            for res in result
                            if isinstance(res, dict) and res.get("from_name") == base
                        ]
                        value = "|".join(p for p in parts if p)
                row = {
                    "item_id": item,
                    "rater": rater,
                    "field": base,
                    "value": value,
                    "_where": where,
                    "task_id": str(tid),
                    "annotation_id": str(ann.get("id", "")),
                }
                for key in ("case_id", "output_id", "model"):
                    if key in tdata:
                        row[key] = tdata[key]
                rows.append(row)
    else:
        for i, rec in enumerate(data, start=1):
            where = f"{path}: record {i}"
            rater = _ls_user(rec.get("annotator"), where)
            rows.append(
                {
                    "item_id": _ls_item(rec, rec.get("id", i)),
                    "rater": rater,
                    "field": base,
                    "value": _ls_value(rec.get(base)),
                    "_where": where,
                    **{k: rec[k] for k in ("case_id", "output_id", "model") if k in rec},
                }
            )
    if not rows:
        raise GoldboardError(f"{path}: the export has no annotations")
    answered = [r for r in rows if r["value"]]
    if not answered and not (sch_field is not None and sch_field.kind in ("binary", "multi")):
        raise GoldboardError(
            f"{path}: no annotation has a result for field {base!r} (check --field against the "
            f"label config's from_name)"
        )
    return pd.DataFrame(rows)


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    return [p for p in parts if p]


def _load_schema(ref: str | None):
    if ref is None:
        return None
    from goldboard.label_configs.schema import SchemaError, load_schema

    try:
        return load_schema(ref)
    except SchemaError as exc:
        raise GoldboardError(str(exc)) from None


def _choose_field(df: pd.DataFrame, field: str | None, schema, source: str) -> str:
    if field:
        return field
    fields = sorted({str(v) for v in df["field"]}) if "field" in df.columns else []
    if schema is not None:
        primary = schema.primary_field.name
        if not fields or primary in fields:
            click.echo(
                f"Note: analysing the schema's primary field {primary!r} (choose another with --field)", err=True
            )
            return primary
    if len(fields) == 1:
        return fields[0]
    if len(fields) > 1:
        raise GoldboardError(
            f"{source}: several fields ({', '.join(fields[:8])}{', ...' if len(fields) > 8 else ''}); "
            f"choose one with --field"
        )
    return "label"


@click.command("agree")
@click.argument("table", required=False, type=click.Path(dir_okay=False))
@click.option(
    "--study", "study_dir", type=click.Path(file_okay=False), help="Read a study's pulled ratings and schema."
)
@click.option("--round", "round_", type=int, help="Study round (default: the latest pulled).")
@click.option(
    "--test-retest",
    is_flag=True,
    help="With --study and --rounds A,B: intra-rater agreement of each rater between two rounds "
    "(same rater, same items), kappa and alpha with 95% CIs.",
)
@click.option("--rounds", "rounds_", default=None, metavar="A,B", help="The two rounds for --test-retest, e.g. 1,2.")
@click.option(
    "--from-label-studio",
    "ls_files",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="Label Studio JSON export (full or JSON_MIN); repeat for one export per rater.",
)
@click.option("--field", help="Field to analyse; FIELD:VALUE for one value of a multi-select field.")
@click.option("--item-col", default="item_id", show_default=True, help="Item column (long and wide tables).")
@click.option("--rater-col", default="rater", show_default=True, help="Rater column (long table).")
@click.option("--label-col", default=None, help="Label column (default: label, else value).")
@click.option("--raters", "wide_raters", help="Wide table: comma-separated rater columns, e.g. onc_a,onc_b.")
@click.option("--schema", "schema_ref", help="Schema (built-in name or file): categories, order, level, aliases.")
@click.option("--categories", help="Full ordered scale, e.g. 1,2,3,4,5 (weights span it even if a level is unused).")
@click.option(
    "--level",
    "levels",
    multiple=True,
    type=click.Choice(LEVELS),
    help="Measurement level (repeatable; alpha is reported at each). Default: the schema's.",
)
@click.option("--by", help="Stratify by a per-item column (error category, specialty, model).")
@click.option("--dichotomize", help="Analyse >= K vs < K on an ordered scale, e.g. 4.")
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Bootstrap resamples for percentile CIs (0: asymptotic CIs).",
)
@click.option("--seed", type=int, default=1, show_default=True, help="Bootstrap seed.")
@click.option("--cluster-col", help="Resample clusters of items (e.g. case_id) instead of items.")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "markdown", "csv", "json"]), default="table", show_default=True
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write to FILE (atomically) instead of stdout.")
def agree_cmd(
    table,
    study_dir,
    round_,
    test_retest,
    rounds_,
    ls_files,
    field,
    item_col,
    rater_col,
    label_col,
    wide_raters,
    schema_ref,
    categories,
    levels,
    by,
    dichotomize,
    bootstrap,
    seed,
    cluster_col,
    fmt,
    output,
) -> None:
    """Agreement between raters: kappa, alpha and companions, each with a 95% CI.

    \b
    Input (one of):
      TABLE                     long table, one row per rating (CSV/XLSX/JSONL);
                                `goldboard pull`'s ratings.csv works as is
      TABLE --raters A,B        wide table, one column per rater
      --study DIR [--round N]   a study's pulled ratings and its schema
      --from-label-studio FILE  Label Studio JSON / JSON_MIN export (with --field)
      --study DIR --test-retest --rounds 1,2
                                intra-rater (test-retest) agreement per rater

    Stdout carries only the requested format; warnings go to stderr (and into
    the JSON's "warnings").
    """
    sources = sum([table is not None, study_dir is not None, bool(ls_files)])
    if sources != 1:
        raise GoldboardError("give exactly one input: a TABLE file, --study DIR, or --from-label-studio FILE")
    if test_retest or rounds_:
        _retest(study_dir, rounds_, round_, field, schema_ref, bootstrap, seed, fmt, output)
        return
    schema = _load_schema(schema_ref)
    raters_order = None
    groups = clusters = None
    if study_dir is not None:
        from goldboard.study import Study

        study = Study.open(study_dir)
        if schema is None:
            schema = study.schema
        if round_ is None:
            round_ = latest_pulled_round(study)
        df = study.ratings(round_)
        source = str(study.ratings_path(round_))
        df["_where"] = [f"{source}:{n}" for n in range(2, len(df) + 2)]
        raters_order = study.raters
        if by and by not in df.columns:
            groups = unit_groups(study, by)
        if cluster_col and cluster_col not in df.columns:
            clusters = unit_groups(study, cluster_col)
    elif ls_files:
        if not field and schema is None:
            raise GoldboardError("--from-label-studio needs --field NAME (the label config's from_name)")
        fname = field or schema.primary_field.name
        base = fname.partition(":")[0]
        df = pd.concat([read_label_studio_export(f, base, schema) for f in ls_files], ignore_index=True)
        source = ls_files[0] if len(ls_files) == 1 else "label-studio exports"
        field = fname
    else:
        source = table
        if wide_raters is not None:
            names = _split(wide_raters) or []
            if len(names) < 2:
                raise GoldboardError("--raters: name at least two rater columns, e.g. --raters onc_a,onc_b")
            df = read_wide_table(table, names, item_col)
        else:
            df = read_long_table(table, item_col, rater_col, label_col)
    field = _choose_field(df, field, schema, source)
    result = agreement(
        df,
        field,
        schema,
        categories=_split(categories),
        levels=list(levels) or None,
        raters=raters_order,
        by=None if groups is not None else by,
        groups=groups,
        dichotomize=dichotomize,
        bootstrap=bootstrap,
        seed=seed,
        cluster_col=None if clusters is not None else cluster_col,
        clusters=clusters,
        source=source,
        progress=bootstrap > 0,
    )
    note = ""
    if study_dir is not None:
        from goldboard.cases.assignment import design_note

        rnd = next((r for r in study.rounds if r.number == round_), None)
        if rnd is not None and rnd.design:
            sub = df[df["field"] == field.partition(":")[0]] if "field" in df.columns else df
            n_multi = int((sub.groupby("item_id")["rater"].nunique() >= 2).sum())
            note = design_note(rnd.design, n_multi)
            result["design"] = {**rnd.design, "items_rated_by_two_or_more": n_multi, "note": note}
    title = f"Agreement on {field}"
    if dichotomize:
        title += f" (dichotomized at {dichotomize})"
    if by:
        title += f", by {by}"
    text = {
        "table": lambda r: render_table(r, title),
        "markdown": lambda r: render_markdown(r, title),
        "csv": render_csv,
        "json": render_json,
    }[fmt](result)
    if note and fmt in ("table", "markdown"):
        text = text.rstrip("\n") + "\n\n" + note + "\n"
    emit(text, output, result["warnings"])


def _retest(study_dir, rounds_, round_, field, schema_ref, bootstrap, seed, fmt, output) -> None:
    """``agree --study S --test-retest --rounds A,B``: intra-rater agreement per rater."""
    import json

    from goldboard.analysis.retest import intra_rater_agreement, render_retest_table, retest_rows
    from goldboard.study import Study

    if study_dir is None:
        raise GoldboardError("--test-retest needs --study DIR (the rounds are a study's)")
    if not rounds_:
        raise GoldboardError("--test-retest: give the two rounds, e.g. --rounds 1,2")
    if round_ is not None:
        raise GoldboardError("--test-retest compares --rounds A,B; leave out --round")
    try:
        rounds = [int(x) for x in rounds_.split(",")]
    except ValueError:
        raise GoldboardError(f"--rounds {rounds_!r}: give two round numbers, e.g. 1,2") from None
    study = Study.open(study_dir)
    schema = _load_schema(schema_ref) or study.schema
    df = study.all_ratings()
    if not len(df):
        raise GoldboardError(f"{study.path}: no ratings pulled yet")
    field = _choose_field(df, field, schema, str(study.path))
    result = intra_rater_agreement(df, field, schema, rounds, raters=study.raters, bootstrap=bootstrap, seed=seed)
    if fmt == "json":
        text = json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    elif fmt == "csv":
        text = pd.DataFrame(retest_rows(result)).to_csv(index=False)
    else:
        text = render_retest_table(result, markdown=fmt == "markdown")
    emit(text, output, result["warnings"])


commands = [agree_cmd]
