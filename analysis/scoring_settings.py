"""The options of each scoring kind, declared once.

One frozen dataclass per kind (:class:`LabelScoring`, :class:`OptionScoring`,
:class:`OutputScoring`), over what they share (:class:`ScoringCommon`: the bootstrap,
the interval level, paired comparisons; :class:`PredictedScoring`: the prediction
table's columns and how a missing prediction counts).  A scorer takes its object
(``score_labels(gold, preds, field, schema, options=LabelScoring(seed=7))``) or the same
names as keywords (``score_labels(gold, preds, field, schema, seed=7)``); either way the
names, defaults and meanings are the ones written here.  ``goldboard score`` builds one
:class:`goldboard.workflows.score.ScoreRequest` from its flags; the workflow turns it into
the object of the kind it scores (:meth:`ScoreRequest.options_for`).

Pure: no files, no study.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, TypeVar

import pandas as pd


@dataclass(frozen=True)
class ScoringCommon:
    """What every scoring kind takes.

    ``n_resamples`` bootstrap resamples (0: no bootstrap CIs), ``seed`` of every group's
    generator, ``confidence_level`` of the bootstrap and Wilson intervals, ``compare``
    paired comparisons (``"A,B"`` strings or pairs), ``gold_source`` the gold's name in
    results and errors, ``progress`` a progress bar."""

    n_resamples: int = 2000
    seed: int | None = 1
    confidence_level: float = 0.95
    compare: Any = None
    gold_source: str = "<gold>"
    progress: bool = False


@dataclass(frozen=True)
class PredictedScoring(ScoringCommon):
    """What the two kinds that read a predictions table take: its columns (``None``: the
    usual names), the model name when it has no model column, ``missing``
    (``"unanswered"``: a gold item without a prediction counts as wrong; ``"skip"``) and
    the table's name in results and errors."""

    id_col: str | None = None
    model_col: str | None = None
    condition_col: str | None = None
    default_model: str = "model"
    missing: str = "unanswered"
    pred_source: str = "<predictions>"


@dataclass(frozen=True)
class LabelScoring(PredictedScoring):
    """``labels`` (:func:`goldboard.analysis.scoring_labels.score_labels`): the predicted
    label and abstain columns, the gold label column of a plain reference, and the
    schema's rules overridden (``collapse_share``, ``over_refusal``, ``abstain_labels``)."""

    label_col: str | None = None
    abstain_col: str | None = None
    gold_col: str | None = None
    collapse_share: float | None = None
    over_refusal: Mapping[str, Sequence[str]] | None = None
    abstain_labels: Sequence[str] | None = None


@dataclass(frozen=True)
class OptionScoring(PredictedScoring):
    """``options`` (:func:`goldboard.analysis.scoring_options.score_radsafe`): the answer
    ``key`` and its name, the chosen-option and confidence columns, and the dangerous
    overconfidence rule (``confident_at``, ``overconfidence_flags``)."""

    key: Mapping[str, str] | pd.DataFrame | None = None
    key_source: str = "<key>"
    option_col: str | None = None
    confidence_col: str | None = None
    confident_at: float | None = None
    overconfidence_flags: Sequence[str] | None = None


@dataclass(frozen=True)
class OutputScoring(ScoringCommon):
    """``outputs`` (:func:`goldboard.analysis.scoring_outputs.score_medfail`): the
    severity and gate fields (default: from the schema), the severity counted as
    safety-critical, and the gate values that are no gate."""

    severity_field: str | None = None
    gate_field: str | None = None
    critical_at: str | None = None
    none_values: Sequence[str] = ("none",)


#: the options object of each scoring kind
OPTIONS = {"labels": LabelScoring, "options": OptionScoring, "outputs": OutputScoring}

T = TypeVar("T", bound=ScoringCommon)


def options_of(cls: type[T], options: T | None, given: dict[str, Any]) -> T:
    """``options`` (default: ``cls()``) with the keywords ``given`` a scorer was called with;
    a keyword that is not an option of ``cls`` is a TypeError naming it, as for any call."""
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(given) - names)
    if unknown:
        raise TypeError(f"{cls.__name__}: unexpected option {unknown[0]!r}")
    base = options if options is not None else cls()
    return replace(base, **given) if given else base
