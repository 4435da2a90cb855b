"""goldboard's Python API: the few things a notebook does, as ``import goldboard as gb``.

Every function here is a thin layer over the functions the ``goldboard`` commands call
(:mod:`goldboard.workflows` and :mod:`goldboard.analysis`), so a notebook and the command line
give the same numbers, the same checks and the same one-line errors
(:class:`~goldboard.errors.GoldboardError`). The names in :data:`__all__` are the public API;
``goldboard.X`` for any other ``X`` is internal and may change.

The examples run on the shipped OpenMTB-Audit table (50 NSCLC cases, two oncologists, published
Cohen's kappa 0.600); ``tests/test_doctests.py`` runs them. Docstrings follow the numpy style.

>>> import goldboard as gb
>>> df = gb.read_table(gb.example_path(), raters={"onc_a": "oncologist_a_label", "onc_b": "oncologist_b_label"},
...                    item_col="case_id", field="safety_label")
>>> res = gb.agreement(df, schema="mtb_unsafe")
>>> round(res.estimate("Cohen's kappa"), 3)
0.6
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldboard.errors import GoldboardError
from goldboard.study import Study

if TYPE_CHECKING:  # pandas is loaded when a function needs it: `import goldboard` stays cheap
    import pandas as pd

    from goldboard.label_configs.schema import Schema

__all__ = [
    "AgreementResult",
    "JudgeResult",
    "Study",
    "agreement",
    "example_path",
    "example_study",
    "flags",
    "gold",
    "judge_test",
    "open_study",
    "ratings",
    "read_table",
]

#: the columns of :meth:`AgreementResult.to_frame`, in order
FRAME_COLUMNS = (
    "field",
    "statistic",
    "weights",
    "level",
    "raters",
    "group",
    "n_items",
    "estimate",
    "se",
    "ci_low",
    "ci_high",
    "method",
)


# --------------------------------------------------------------------------- inputs


def example_path(name: str = "openmtb") -> Path:
    """The path of a shipped example data file.

    Parameters
    ----------
    name : str
        The example's name (``goldboard cases example --help`` lists them): ``"openmtb"`` is
        OpenMTB-Audit's public two-oncologist table.

    Returns
    -------
    Path
        The file inside the installed package (read it; never write to it).

    Examples
    --------
    >>> import goldboard as gb
    >>> gb.example_path().name
    'openmtb_expert_annotations_50cases.csv'
    """
    from goldboard.cases.examples import example_path as shipped

    return shipped(name)


def read_table(
    path: str | Path,
    *,
    raters: Sequence[str] | Mapping[str, str] | None = None,
    item_col: str = "item_id",
    rater_col: str = "rater",
    label_col: str | None = None,
    field: str | None = None,
) -> pd.DataFrame:
    """A ratings table (CSV, TSV, XLSX, JSONL) as a ratings-shaped DataFrame, as ``goldboard agree TABLE`` reads it.

    Parameters
    ----------
    path : str or Path
        A long table (one row per rating: item, rater, label) or, with ``raters``, a wide one
        (one row per item, one column per rater).
    raters : list of str or dict, optional
        A wide table's rater columns; a dict maps each rater's name to its column
        (``{"onc_a": "oncologist_a_label"}``).
    item_col, rater_col, label_col : str
        The item column (both shapes), a long table's rater and label columns.
    field : str, optional
        The field the labels are of, set as the ``field`` column when the table has none.

    Returns
    -------
    DataFrame
        ``item_id, rater, value`` (and ``field`` when known), the table's other columns, and
        ``_where`` (``"file:line"``, for error messages).

    Examples
    --------
    >>> import goldboard as gb
    >>> df = gb.read_table(gb.example_path(), raters=["oncologist_a_label", "oncologist_b_label"], item_col="case_id")
    >>> len(df), sorted(df["rater"].unique())
    (100, ['oncologist_a_label', 'oncologist_b_label'])
    """
    from goldboard.workflows.agreement import table_agreement_input

    names = {str(c): str(r) for r, c in raters.items()} if isinstance(raters, Mapping) else None
    columns = list(names) if names is not None else (list(raters) if raters is not None else None)
    df = table_agreement_input(
        str(path), raters=columns, item_col=item_col, rater_col=rater_col, label_col=label_col
    ).ratings
    if names is not None:
        df["rater"] = df["rater"].map(names)
    if field is not None and "field" not in df.columns:
        df.insert(2, "field", field)
    return df


def open_study(path: str | Path) -> Study:
    """Open a study workspace (the folder with ``study.toml``).

    Parameters
    ----------
    path : str or Path
        The study folder.

    Returns
    -------
    Study
        Its schema (``.schema``), raters (``.raters``), rounds (``.rounds``) and files.

    Examples
    --------
    >>> import goldboard as gb, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> _ = gb.example_study(f"{tmp.name}/openmtb")
    >>> study = gb.open_study(f"{tmp.name}/openmtb")
    >>> study.raters, study.schema.name
    (['onc_a', 'onc_b'], 'mtb_unsafe')
    """
    return Study.open(path)


def example_study(path: str | Path, name: str = "openmtb") -> Study:
    """Create a study from a shipped example: ``study init`` and ``pull --from-table`` in one call.

    For ``"openmtb"`` this is the README's worked example: schema ``mtb_unsafe``, raters ``onc_a``
    and ``onc_b``, OpenMTB-Audit's table pulled as round 1.

    Parameters
    ----------
    path : str or Path
        The new study folder (it must not hold a study yet).
    name : str
        The example (only ``"openmtb"`` has a study recipe).

    Returns
    -------
    Study
        The new study, round 1 pulled.

    Examples
    --------
    >>> import goldboard as gb, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> study = gb.example_study(tmp.name + "/openmtb")
    >>> study.pulled_rounds()
    [1]
    """
    from goldboard.cases.table_import import TableMapping
    from goldboard.workflows.tables import pull_table

    if name != "openmtb":
        raise GoldboardError(f"no study recipe for example {name!r}; recipes: openmtb", param="name")
    study = Study.init(path, "mtb_unsafe", ["onc_a", "onc_b"])
    mapping = TableMapping(
        item_col="case_id",
        field="safety_label",
        raters={"onc_a": "oncologist_a_label", "onc_b": "oncologist_b_label"},
    )
    pull_table(study, example_path(name), mapping)
    return Study.open(path)


def _study(data: Any) -> Study | None:
    """``data`` as a study: a :class:`Study`, or a folder with a ``study.toml``; else ``None``."""
    if isinstance(data, Study):
        return data
    if isinstance(data, (str, Path)) and (Path(data) / "study.toml").exists():
        return Study.open(data)
    return None


def ratings(study: Study | str | Path, round_number: int | None = None) -> pd.DataFrame:
    """A study round's pulled ratings, one row per item x rater x field.

    Parameters
    ----------
    study : Study, or a study folder
    round_number : int, optional
        The round (default: the latest pulled round).

    Returns
    -------
    DataFrame
        ``rounds/N/ratings.csv`` as read and checked by every command.

    Examples
    --------
    >>> import goldboard as gb, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> study = gb.example_study(tmp.name + "/openmtb")
    >>> gb.ratings(study).groupby("rater").size().to_dict()
    {'onc_a': 50, 'onc_b': 50}
    """
    st = _study(study)
    if st is None:
        raise GoldboardError(f"{study}: not a study (no study.toml)", param="study")
    return st.ratings(round_number)


def _schema(schema: str | Schema | None) -> Schema | None:
    if schema is None or not isinstance(schema, str):
        return schema
    from goldboard.label_configs.schema import load_schema

    return load_schema(schema)


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class AgreementResult:
    """Agreement statistics of one field: each coefficient with its SE and 95% CI.

    Attributes
    ----------
    field : str
        The field analysed.
    n_items : int
        Items analysed.
    raters : tuple of str
        The raters compared, in order.
    statistics : tuple of dict
        One entry per coefficient, as in ``goldboard agree --format json``.
    warnings : tuple of str
        What ``goldboard agree`` prints on stderr (kappa paradox, unused categories, ...).
    data : dict
        The whole JSON contract of ``goldboard agree`` (per-label agreement, confusion matrix, ...).
    """

    field: str
    n_items: int
    raters: tuple[str, ...]
    statistics: tuple[dict, ...]
    warnings: tuple[str, ...]
    data: dict = dc_field(repr=False)

    @classmethod
    def from_contract(cls, data: dict, field: str) -> AgreementResult:
        """Wrap the contract dict of :func:`goldboard.analysis.agreement.agreement`."""
        return cls(
            field=field,
            n_items=int(data.get("n_items", 0)),
            raters=tuple(data.get("raters", ())),
            statistics=tuple(data.get("statistics", ())),
            warnings=tuple(data.get("warnings", ())),
            data=data,
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per coefficient: ``field, statistic, weights, level, raters, group, n_items,
        estimate, se, ci_low, ci_high, method`` (``method``: how the CI was computed).

        Examples
        --------
        >>> import goldboard as gb, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> res = gb.agreement(gb.example_study(tmp.name + "/s"))
        >>> res.to_frame().round(3).loc[1, ["statistic", "estimate", "ci_low", "ci_high", "method"]].to_dict()
        {'statistic': "Cohen's kappa", 'estimate': 0.6, 'ci_low': 0.423, 'ci_high': 0.733, 'method': 'wilson'}
        """
        import pandas as pd

        rows = [
            {
                "field": self.field,
                "statistic": _statistic_name(r),
                "weights": r.get("weights"),
                "level": r.get("level"),
                "raters": " / ".join(r.get("raters", ())),
                "group": r.get("group"),
                "n_items": r.get("n_items"),
                "estimate": r.get("value"),
                "se": r.get("se"),
                "ci_low": r.get("ci_low"),
                "ci_high": r.get("ci_high"),
                "method": r.get("ci_method"),
            }
            for r in self.statistics
        ]
        return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))

    def estimate(self, statistic: str) -> float | None:
        """The estimate of the first row named ``statistic`` (as in :meth:`to_frame`).

        Examples
        --------
        >>> import goldboard as gb, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> res = gb.agreement(gb.example_study(tmp.name + "/s"))
        >>> round(res.estimate("Krippendorff's alpha (nominal)"), 3)
        0.599
        """
        for r in self.statistics:
            if _statistic_name(r) == statistic:
                return r.get("value")
        names = ", ".join(dict.fromkeys(_statistic_name(r) for r in self.statistics))
        raise GoldboardError(f"no statistic {statistic!r}; this result has: {names}", param="statistic")


def _statistic_name(row: dict) -> str:
    """The row's name as ``goldboard agree`` prints it (``Cohen's kappa``, ``Krippendorff's alpha (nominal)``)."""
    from goldboard.analysis.agreement import statistic_name

    return statistic_name(row)


def _choose_field(df: pd.DataFrame, field: str | None, schema: Schema | None) -> str:
    """The field to analyse: ``field``, else the schema's primary field, else the table's only one."""
    if field:
        return field
    fields = sorted({str(v) for v in df["field"]}) if "field" in df.columns else []
    if schema is not None and (not fields or schema.primary_field.name in fields):
        return schema.primary_field.name
    if len(fields) == 1:
        return fields[0]
    if len(fields) > 1:
        raise GoldboardError(f"several fields ({', '.join(fields[:8])}); choose one", param="field")
    return "label"


def agreement(
    data: pd.DataFrame | Study | str | Path,
    field: str | None = None,
    *,
    schema: str | Schema | None = None,
    raters: Sequence[str] | None = None,
    round_number: int | None = None,
    levels: Sequence[str] | None = None,
    categories: Sequence[str] | None = None,
    by: str | None = None,
    n_resamples: int = 0,
    seed: int = 1,
) -> AgreementResult:
    """Agreement between raters on one field, each coefficient with a 95% CI (``goldboard agree``).

    Parameters
    ----------
    data : DataFrame, Study or a study folder
        Ratings-shaped rows (``item_id, rater, value`` and optionally ``field``; e.g. from
        :func:`read_table` or :func:`ratings`), or a study: its latest complete round, as
        ``goldboard agree --study`` reads it.
    field : str, optional
        The field (``FIELD:VALUE`` for one value of a multi-select field). Default: the schema's
        primary field, else the table's only field.
    schema : str or Schema, optional
        A built-in name (``"mtb"``), a schema file, or a loaded schema; a study's by default.
        It gives the categories, their order, the measurement level and the aliases.
    raters : list of str, optional
        Compare only these raters (a study's) or give their order.
    round_number : int, optional
        A study's round (default: the latest complete one).
    levels, categories : list of str, optional
        Measurement levels (alpha at each) and the full ordered scale.
    by : str, optional
        Stratify by a per-item column (of the table, or of a study's units).
    n_resamples, seed : int
        Bootstrap resamples for percentile CIs (0: asymptotic CIs) and their seed.

    Returns
    -------
    AgreementResult
        ``.to_frame()``: one row per coefficient with estimate, SE, CI and its method.

    Examples
    --------
    >>> import goldboard as gb, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> study = gb.example_study(tmp.name + "/openmtb")
    >>> frame = gb.agreement(study).to_frame()
    >>> frame[["statistic", "estimate", "ci_low", "ci_high"]].round(3).head(2).to_string(index=False)
    "        statistic  estimate  ci_low  ci_high\\nPercent agreement      0.68   0.542    0.792\\n    Cohen's kappa      0.60   0.423    0.733"
    """
    from goldboard.analysis.agreement import agreement as compute

    st = _study(data)
    schema = _schema(schema)
    groups = None
    source = "ratings"
    if st is not None:
        from goldboard.workflows.agreement import study_agreement_input

        inp = study_agreement_input(
            str(st.path), round_number, schema=schema, raters=list(raters) if raters is not None else None, by=by
        )
        df, schema, source, groups = inp.ratings, inp.schema, inp.source, inp.groups
        raters = inp.raters
        extra = list(inp.warnings)
    else:
        if round_number is not None:
            raise GoldboardError("round_number: only with a study", param="round_number")
        df, extra = data, []
    if not hasattr(df, "columns"):  # a small study's ratings read as plain columns
        df = df.frame() if hasattr(df, "frame") else df
    name = _choose_field(df, field, schema) if hasattr(df, "columns") else (field or schema.primary_field.name)
    result = compute(
        df,
        name,
        schema,
        categories=list(categories) if categories is not None else None,
        levels=list(levels) if levels is not None else None,
        raters=list(raters) if raters is not None else None,
        by=None if groups is not None else by,
        groups=groups,
        n_resamples=n_resamples,
        seed=seed,
        source=source,
    )
    if extra:
        result["warnings"] = extra + list(result["warnings"])
    return AgreementResult.from_contract(result, name)


# --------------------------------------------------------------------------- flags and gold


def flags(
    data: pd.DataFrame | Study | str | Path,
    *,
    schema: str | Schema | None = None,
    raters: Sequence[str] | None = None,
    round_number: int | None = None,
) -> pd.DataFrame:
    """Every item x field whose ratings need adjudication, in meeting-agenda order (``goldboard flag``).

    Parameters
    ----------
    data : DataFrame, Study or a study folder
        A tidy ratings table (``item_id, rater, field, value``) with ``schema``, or a study.
    schema : str or Schema, optional
        Needed for a table; a study's by default.
    raters : list of str, optional
        The raters, in display order (default: a study's raters, or the table's).
    round_number : int, optional
        A study's round (default: per item, the latest round every rater rated).

    Returns
    -------
    DataFrame
        One row per flagged item x field: ``item_id, field``, each rater's value, ``priority``,
        ``gap``, ``kinds``, ``boundaries``, ``triggers``, ... (list cells joined by ``"; "``, as in
        ``goldboard flag --format csv``).

    Examples
    --------
    >>> import goldboard as gb, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> agenda = gb.flags(gb.example_study(tmp.name + "/openmtb"))
    >>> len(agenda), agenda["boundaries"].value_counts().to_dict()["sufficiency_vs_optimization"]
    (16, 9)
    """
    from goldboard.adjudicate.flags import flag_disagreements, flags_for_output

    st = _study(data)
    sch = _schema(schema)
    if st is not None:
        from goldboard.study import study_ratings

        df = study_ratings(st, round_number)
        sch = sch or st.schema
        order = list(raters) if raters is not None else st.grid_raters()
        source = str(st.ratings_path(round_number)) if round_number is not None else "ratings"
    else:
        if sch is None:
            raise GoldboardError("schema: give the schema of the ratings table (e.g. schema='mtb')", param="schema")
        df, order, source = data, list(raters) if raters is not None else None, "ratings"
    return flags_for_output(flag_disagreements(df, sch, order, source=source, round_number=round_number))


def gold(study: Study | str | Path, release: str | None = None) -> pd.DataFrame:
    """A study's gold labels: one release, verified against its manifest first (``goldboard gold export``'s output).

    Parameters
    ----------
    study : Study, or a study folder
    release : str, optional
        ``"v1"``, ``"v2"``, ... (default: the latest release).

    Returns
    -------
    DataFrame
        One row per item x field: ``value``, ``method`` (unanimous / adjudicated / single /
        unresolved), ``round``, ``adjudicator``, ``reason``, ...; ``.attrs["release"]`` and
        ``.attrs["manifest"]`` say which release it is.

    Examples
    --------
    >>> import goldboard as gb, tempfile
    >>> tmp = tempfile.TemporaryDirectory()
    >>> study = gb.example_study(tmp.name + "/openmtb")
    >>> from goldboard.workflows.adjudication import export_gold
    >>> _ = export_gold(study)
    >>> g = gb.gold(study)
    >>> g.attrs["release"], g["method"].value_counts().to_dict()
    ('v1', {'unanimous': 34, 'unresolved': 16})
    """
    from goldboard.workflows.score import resolve_gold_source

    st = _study(study)
    if st is None:
        raise GoldboardError(f"{study}: not a study (no study.toml)", param="study")
    src = resolve_gold_source(None, str(st.path), release)
    table = src.table.drop(columns=["_line"], errors="ignore")
    table.attrs["release"] = src.release
    table.attrs["manifest"] = src.manifest
    return table


# --------------------------------------------------------------------------- the judge


@dataclass(frozen=True)
class JudgeResult:
    """The alt-test of LLM judges against the clinicians (``goldboard judge``).

    Attributes
    ----------
    field : str
        The field tested.
    humans : tuple of str
        The clinicians each judge was compared with.
    epsilon : float
        The cost-benefit margin used.
    judges : tuple of dict
        One entry per judge (best advantage probability first), as in ``goldboard judge --format json``.
    warnings : tuple of str
    data : dict
        The whole JSON contract of ``goldboard judge``.
    """

    field: str
    humans: tuple[str, ...]
    epsilon: float
    judges: tuple[dict, ...]
    warnings: tuple[str, ...]
    data: dict = dc_field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        """One row per judge: ``judge``, ``passed``, ``winning_rate``, ``advantage_probability`` and
        the rest of its entry (per-human results left out).

        Examples
        --------
        >>> import goldboard as gb
        >>> cols = {"onc_a": "oncologist_a_label", "onc_b": "oncologist_b_label", "bench": "benchmark_label"}
        >>> df = gb.read_table(gb.example_path(), raters=cols, item_col="case_id", field="safety_label")
        >>> gb.judge_test(df, ["bench"], epsilon=0.2).to_frame()[["judge", "passed", "items_used"]].values.tolist()
        [['bench', True, 50]]
        """
        import pandas as pd

        rows = [{k: v for k, v in j.items() if not isinstance(v, (list, dict))} for j in self.judges]
        return pd.DataFrame(rows)


def judge_test(
    data: pd.DataFrame | str | Path,
    judges: Sequence[str],
    *,
    field: str | None = None,
    epsilon: float | None = None,
    expertise: str | None = None,
    scoring: str = "accuracy",
    humans: Sequence[str] = (),
) -> JudgeResult:
    """The alternative annotator test (Calderon, Reichart & Dror, ACL 2025): can each judge replace a clinician?

    Parameters
    ----------
    data : DataFrame or a ratings file
        A long ratings table (``item_id, rater, field, value``) whose raters include the judges.
    judges : list of str
        The raters that are LLM judges; the others are the clinicians unless ``humans`` names them.
    field : str, optional
        The field (default: the table's only field).
    epsilon, expertise : optional
        The cost-benefit margin, or the raters' expertise it is chosen from (``"expert"`` 0.2,
        ``"skilled"`` 0.15, ``"crowd"`` 0.1; see ``goldboard judge --help``).
    scoring : str
        ``"accuracy"`` (labels) or ``"neg-rmse"`` (scores).
    humans : list of str, optional
        The clinicians (default: every rater that is not a judge).

    Returns
    -------
    JudgeResult
        ``.to_frame()``: one row per judge, whether it passed.

    Examples
    --------
    >>> import goldboard as gb
    >>> cols = {"onc_a": "oncologist_a_label", "onc_b": "oncologist_b_label", "bench": "benchmark_label"}
    >>> df = gb.read_table(gb.example_path(), raters=cols, item_col="case_id", field="safety_label")
    >>> res = gb.judge_test(df, ["bench"], expertise="expert")
    >>> res.humans, res.epsilon
    (('onc_a', 'onc_b'), 0.2)
    """
    from goldboard.workflows.judge import judge_table

    kwargs = dict(judges=list(judges), field=field, epsilon=epsilon, expertise=expertise, scoring=scoring)
    if isinstance(data, (str, Path)):
        out = judge_table(data, humans=list(humans), **kwargs)
    else:  # the command reads a file: the frame is written to one, as the table it is
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "ratings.csv"
            data.drop(columns=["_where"], errors="ignore").to_csv(path, index=False)
            out = judge_table(path, humans=list(humans), **kwargs)
        out["source"] = "ratings"
    return JudgeResult(
        field=out["field"],
        humans=tuple(out["humans"]),
        epsilon=out["epsilon"],
        judges=tuple(out["judges"]),
        warnings=tuple(out["warnings"]),
        data=out,
    )
