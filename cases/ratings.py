"""The tidy ratings table: one row per item x rater x field.

This is the contract between pull (which writes it), agreement, flags,
adjudication and gold export (which read it).  Columns:

``round``         annotation round (int, 1-based)
``item_id``       the annotation unit: the output id when a case has model outputs, else the case id
``case_id``       the case
``output_id``     the model output ("" when the unit is the case itself)
``model``         the model that wrote the output ("" when none)
``rater``         the rater's study name (e.g. ``onc_a``), never a server user id
``field``         the schema field
``value``         the canonical value (multi-select: values joined with ``|`` in schema order;
                  an empty multi-select is ``""``)
``rationale``     the rater's free-text rationale for this item (same on each field row)
``annotated_at``  ISO 8601 timestamp of the annotation (UTC)
``lead_time``     seconds the rater spent (as Label Studio measured it), may be empty
``annotation_id`` Label Studio annotation id; ``SOURCE:ROW`` for ratings from a ratings table
                  (``pull --from-table``: the table's name and row, header = row 1)
``task_id``       Label Studio task id (empty for ratings from files)
``project_id``    Label Studio project id (empty for ratings from files)
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

RATINGS_COLUMNS = [
    "round",
    "item_id",
    "case_id",
    "output_id",
    "model",
    "rater",
    "field",
    "value",
    "rationale",
    "annotated_at",
    "lead_time",
    "annotation_id",
    "task_id",
    "project_id",
]
MULTI_SEP = "|"


def empty_ratings() -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype="object") for c in RATINGS_COLUMNS})


def read_ratings_csv(path: str | Path) -> pd.DataFrame:
    """Read a ratings table written by goldboard, keeping every cell as text
    (so ``"4"`` stays ``"4"`` and an empty rationale stays ``""``)."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    for c in RATINGS_COLUMNS:
        if c not in df.columns:
            df[c] = ""
    if len(df):
        df["round"] = df["round"].replace("", "1").astype(int)
    else:
        df["round"] = df["round"].astype(int)
    return df


def wide(ratings: pd.DataFrame, field: str) -> pd.DataFrame:
    """Items x raters table of one field's values (missing rating: NaN)."""
    sub = ratings[ratings["field"] == field]
    return sub.pivot_table(index="item_id", columns="rater", values="value", aggfunc="last")
