"""The ``labels`` scorer (see :mod:`goldboard.analysis.scoring`): a model predicts a label
of a field per item -- accuracy, macro-F1, per-label metrics, confusion, collapse, abstention."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from goldboard.analysis.scoring_common import (
    FORMAT,
    NO_ANSWER,
    Resampling,
    as_predictions,
    check_score_call,
    estimate_dict,
    gold_info,
    paired_comparisons,
    parse_model_pairs,
    predictions_info,
    score_groups,
    scoring_rules,
)
from goldboard.analysis.scoring_inputs import (
    GoldTable,
    Predictions,
    label_field,
    prepare_gold,
)
from goldboard.analysis.scoring_settings import LabelScoring, options_of
from goldboard.analysis.scoring_stats import (
    bootstrap_label_metrics,
    confusion_from_codes,
    per_label_prf,
    proportion,
)
from goldboard.errors import GoldboardError
from goldboard.label_configs.schema import Field, Schema


def _label_rules(
    schema: Schema,
    fld: Field,
    collapse_share: float | None,
    over_refusal: Mapping[str, Sequence[str]] | None,
    abstain_labels: Sequence[str] | None,
) -> dict:
    """:func:`scoring_rules` of ``fld`` with the caller's overrides (in canonical spellings)."""
    rules = scoring_rules(schema, fld)
    if collapse_share is not None:
        rules["collapse_share"] = float(collapse_share)
    if over_refusal is not None:
        rules["over_refusal"] = (
            {
                "from": [fld.normalize(v) for v in over_refusal.get("from", [])],
                "to": [fld.normalize(v) for v in over_refusal.get("to", [])],
            }
            if over_refusal
            else None
        )
    if abstain_labels is not None:
        rules["abstain_labels"] = [fld.normalize(v) for v in abstain_labels]
    return rules


@dataclass(frozen=True)
class _LabelSetup:
    """What scoring each (model, condition) group of label predictions reads."""

    field: Field
    code: dict[str, int]  # label -> code; code k = no answer
    items: np.ndarray  # gold items with a resolved label, in gold order
    pos: dict[str, int]  # item -> index
    gold_codes: np.ndarray
    item_models: np.ndarray  # the model whose output each item is ('' for a plain item)
    rules: dict
    over_from: np.ndarray | None
    over_to: np.ndarray | None
    gold_abstain: np.ndarray | None  # per item True/False/None; None without abstain predictions
    abstain_source: str | None
    missing: str
    has_condition: bool
    ci: Resampling

    @property
    def labels(self) -> list[str]:
        return self.field.categories


def _gold_abstention(gold: GoldTable, items: np.ndarray, gold_codes: np.ndarray, code: dict, rules: dict):
    """Per-item gold abstention and where it comes from: ``should_abstain``, else the abstain labels."""
    sa = gold.items["should_abstain"].reindex(items) if "should_abstain" in gold.items else None
    if sa is not None and sa.notna().any():
        flags = [None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v) for v in sa]
        return np.array(flags, dtype=object), "should_abstain"
    if rules["abstain_labels"]:
        ab = {code[a] for a in rules["abstain_labels"]}
        return np.array([c in ab for c in gold_codes], dtype=object), "label"
    return None, None


def _label_setup(
    gold: GoldTable, fld: Field, rules: dict, preds: Predictions, missing: str, ci: Resampling
) -> _LabelSetup:
    """Code the gold labels of ``fld`` and the rules (an error when no gold label is resolved)."""
    code = {lab: i for i, lab in enumerate(fld.categories)}
    fg = gold.field_gold(fld.name)
    items = fg["item_id"].to_numpy()
    if len(items) == 0:
        raise GoldboardError(f"{gold.source}: no resolved gold labels for field {fld.name}")
    gold_codes = fg["gold_value"].map(code).to_numpy(dtype=np.int64)
    item_models = (
        gold.items["model"].reindex(items).fillna("").astype(str).to_numpy()
        if "model" in gold.items.columns
        else np.full(len(items), "", dtype=object)
    )
    gold_abst, abst_source = (
        _gold_abstention(gold, items, gold_codes, code, rules) if preds.has_abstain else (None, None)
    )
    over = rules["over_refusal"]
    return _LabelSetup(
        field=fld,
        code=code,
        items=items,
        pos={it: i for i, it in enumerate(items)},
        gold_codes=gold_codes,
        item_models=item_models,
        rules=rules,
        over_from=np.array([code[v] for v in over["from"]], dtype=np.int64) if over else None,
        over_to=np.array([code[v] for v in over["to"]], dtype=np.int64) if over else None,
        gold_abstain=gold_abst,
        abstain_source=abst_source,
        missing=missing,
        has_condition=preds.has_condition,
        ci=ci,
    )


def _score_label_group(
    st: _LabelSetup, key: tuple[str, str], sub: pd.DataFrame, warnings: list[str]
) -> tuple[dict, np.ndarray, np.ndarray]:
    """One (model, condition) group: its result, and per gold item whether it was correct and scored."""
    model, cond = key
    k, n_items = len(st.labels), len(st.items)
    pred_codes = np.full(n_items, k, dtype=np.int64)  # k = no answer
    has_pred = np.zeros(n_items, dtype=bool)
    idx = sub["item_id"].map(st.pos).to_numpy(dtype=np.int64)
    pred_codes[idx] = [st.code.get(v, k) for v in sub["value"].to_numpy()]
    has_pred[idx] = True
    # gold items that are this model's own outputs (case x output units): a model is
    # scored on its own outputs only; otherwise on every gold item
    own = st.item_models == model
    universe = own if own.any() else np.ones(n_items, dtype=bool)
    n_missing = int((universe & ~has_pred).sum())
    if n_missing and st.missing == "unanswered":
        warnings.append(
            f"{model}{'/' + cond if cond else ''}: no prediction for {n_missing} of "
            f"{int(universe.sum())} gold items (counted as unanswered)"
        )
    keep = has_pred if st.missing == "skip" else (universe | has_pred)
    t, p = st.gold_codes[keep], pred_codes[keep]
    ci = st.ci
    g = _label_group(t, p, st.labels, st.rules, st.over_from, st.over_to, ci.n_resamples, ci.seed, ci.confidence_level)
    g = {"model": model, "condition": cond if st.has_condition else None, **g}
    if st.gold_abstain is not None:
        pa = np.full(n_items, None, dtype=object)
        pa[idx] = sub["abstain"].to_numpy()
        g["abstention"] = _abstention(st.gold_abstain[keep], pa[keep], st.abstain_source, ci.confidence_level)
    else:
        g["abstention"] = None
    return g, st.gold_codes == pred_codes, keep


def _labels_result(
    st: _LabelSetup, schema: Schema, gold: GoldTable, preds: Predictions, groups: list, comparisons: list, warnings
) -> dict:
    """The ``labels`` result dict (see the module docstring)."""
    return {
        "format": FORMAT,
        "kind": "labels",
        "schema": schema.name,
        "schema_version": schema.version,
        "field": st.field.name,
        "labels": st.labels,
        "settings": {
            **st.ci.settings(),
            "missing": st.missing,
            "collapse_share": st.rules["collapse_share"],
            "over_refusal": st.rules["over_refusal"],
            "abstain_labels": st.rules["abstain_labels"],
        },
        "gold": gold_info(gold, [st.field.name], len(st.items)),
        "predictions": predictions_info(preds),
        "groups": groups,
        "comparisons": comparisons,
        "warnings": warnings,
    }


def score_labels(
    gold_df: pd.DataFrame | GoldTable,
    pred_df: pd.DataFrame | Predictions,
    field: str | None = None,
    schema: Schema | None = None,
    *,
    options: LabelScoring | None = None,
    **given: Any,
) -> dict:
    """Score label predictions against gold labels of one field (see the module docstring).

    ``gold_df``: a gold release table (``item_id, field, gold_value, method``...), a plain
    reference table (one row per item, label in ``gold_col``), or a prepared
    :class:`GoldTable`.  ``pred_df``: one row per (model, condition, item) with an id
    column (``item_id`` or ``case_id``), a label column (``predicted_label``...), and
    optionally ``model``, ``condition``, ``predicted_abstain``.
    ``options`` (:class:`~goldboard.analysis.scoring_settings.LabelScoring`) or its names as
    keywords: the columns, ``missing`` (``"unanswered"``: gold items a model has no
    prediction for count as wrong; ``"skip"``: score each model on the items it predicted),
    the bootstrap, comparisons and the schema's rules overridden.
    """
    o = options_of(LabelScoring, options, given)
    schema = check_score_call(o.missing, schema, gold_df, "score_labels")
    fld = label_field(schema, field)
    gold = prepare_gold(gold_df, schema, o.gold_source, field=fld.name, gold_col=o.gold_col, id_col=o.id_col)
    rules = _label_rules(schema, fld, o.collapse_share, o.over_refusal, o.abstain_labels)
    preds = as_predictions(
        pred_df,
        gold,
        kind="labels",
        fields=[fld.name],
        source=o.pred_source,
        value_field=fld,
        id_col=o.id_col,
        model_col=o.model_col,
        condition_col=o.condition_col,
        value_col=o.label_col,
        abstain_col=o.abstain_col,
        default_model=o.default_model,
    )
    st = _label_setup(gold, fld, rules, preds, o.missing, Resampling(o.n_resamples, o.seed, o.confidence_level))
    warnings: list[str] = []
    n_unres = gold.excluded.get(fld.name, 0)
    if n_unres:
        warnings.append(f"{n_unres} unresolved gold label(s) of {fld.name} excluded")
    if preds.skipped_unresolved:
        warnings.append(f"{preds.skipped_unresolved} prediction(s) for items with unresolved gold skipped")
    warnings += preds.unused
    groups, outcomes, valid = score_groups(preds.table, partial(_score_label_group, st), o.progress, warnings)
    comparisons = paired_comparisons(
        parse_model_pairs(o.compare), outcomes, preds.has_condition, "correct", st.ci, warnings, valid
    )
    return _labels_result(st, schema, gold, preds, groups, comparisons, warnings)


def _label_group(
    t: np.ndarray,
    p: np.ndarray,
    labels: list[str],
    rules: dict,
    over_from,
    over_to,
    n_resamples: int,
    seed,
    confidence_level: float,
) -> dict:
    k = len(labels)
    cm = confusion_from_codes(t, p, k, no_answer=True)
    boot = bootstrap_label_metrics(t, p, k, n_resamples, seed, confidence_level, no_answer=True)
    method = "bootstrap-percentile"
    prec, rec, f1 = per_label_prf(cm, k)
    gold_n = cm.sum(axis=1)
    pred_n = cm[:, :k].sum(axis=0)
    tp = np.diag(cm[:, :k])
    share = rules["collapse_share"]
    per_label = []
    collapsed = []
    for i, lab in enumerate(labels):
        is_collapsed = bool(gold_n[i] > 0 and pred_n[i] < share * gold_n[i])
        if is_collapsed:
            collapsed.append(lab)
        r = proportion(int(tp[i]), int(gold_n[i]), confidence_level)
        per_label.append(
            {
                "label": lab,
                "gold": int(gold_n[i]),
                "predicted": int(pred_n[i]),
                "tp": int(tp[i]),
                "precision": proportion(int(tp[i]), int(pred_n[i]), confidence_level),
                "recall": r,
                "f1": None if np.isnan(f1[i]) else float(f1[i]),
                "retention": r,
                "dropped": None if r["estimate"] is None else 1.0 - r["estimate"],
                "collapsed": is_collapsed,
            }
        )
    over = None
    if over_from is not None and over_from.size:
        in_from = np.isin(t, over_from)
        over = proportion(int((in_from & np.isin(p, over_to)).sum()), int(in_from.sum()), confidence_level)
        if over["n"] == 0:
            over = None
    return {
        "n": int(len(t)),
        "n_no_answer": int((p == k).sum()),
        "accuracy": estimate_dict(*boot["accuracy"], method),
        "macro_f1": estimate_dict(*boot["macro_f1"], method),
        "per_label": per_label,
        "confusion": {"rows": list(labels), "columns": list(labels) + [NO_ANSWER], "matrix": cm.tolist()},
        "collapsed_labels": collapsed,
        "over_refusal": over,
    }


def _abstention(gold: np.ndarray, pred: np.ndarray, source: str, confidence_level: float) -> dict | None:
    known = np.array([g is not None and q is not None for g, q in zip(gold, pred)], dtype=bool)
    if not known.any():
        return None
    g = gold[known].astype(bool)
    q = pred[known].astype(bool)
    tp, fp = int((g & q).sum()), int((~g & q).sum())
    fn, tn = int((g & ~q).sum()), int((~g & ~q).sum())
    prec = proportion(tp, tp + fp, confidence_level)
    rec = proportion(tp, tp + fn, confidence_level)
    f1 = (2 * tp / (2 * tp + fp + fn)) if (2 * tp + fp + fn) else None
    return {
        "gold_source": source,
        "n": int(known.sum()),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": prec,
        "recall": rec,
        "f1": f1,
    }
