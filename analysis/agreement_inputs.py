"""The agreement engine's inputs: one frozen :class:`AgreementOptions` built where
:func:`goldboard.analysis.agreement.agreement` starts, and :func:`prepare_ratings`, which
validates a ratings table against it and codes the ratings as an items x raters
matrix of category indices."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dc_field
from typing import TYPE_CHECKING, Any

import numpy as np

from goldboard.cases.names import check_value_spellings
from goldboard.errors import GoldboardError, ParamError
from goldboard.label_configs.schema import MULTI_SEP
from goldboard.text import cell_text, is_number, natural_key

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from goldboard.cases.ratings_columns import RatingColumns
    from goldboard.label_configs.schema import Field, Schema

LEVELS = ("nominal", "ordinal", "interval", "ratio")
_MISSING = -1


@dataclass(frozen=True)
class AgreementOptions:
    """What to analyse and how (all of :func:`~goldboard.analysis.agreement.agreement`'s
    keyword arguments except the resampling ones); see that function for each."""

    field: str
    schema: Schema | None = None
    categories: Sequence[str] | None = None
    levels: Sequence[str] | None = None
    raters: Sequence[str] | None = None
    by: str | None = None
    groups: Mapping[str, Any] | None = None
    dichotomize: str | None = None
    cluster_col: str | None = None
    clusters: Mapping[str, Any] | None = None
    source: str | None = None


def _cell_text(raw: Any) -> str:
    """An id or label cell as text (:func:`goldboard.text.cell_text`, outer blanks stripped)."""
    return cell_text(raw).strip()


def _texts(series: pd.Series) -> pd.Series:
    """:func:`_cell_text` of every cell, computed once per distinct value (fast on big tables)."""
    import pandas as pd

    if pd.api.types.is_string_dtype(series.dtype) or pd.api.types.is_string_dtype(series):
        return pd.Series(
            series.astype(object).where(series.notna(), "").astype(str).str.strip().to_numpy(dtype=object),
            index=series.index,
            dtype=object,
        )
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    table = np.array([_cell_text(u) for u in uniques] + [""], dtype=object)
    return pd.Series(table[codes], index=series.index, dtype=object)


def spelling_variants(values: pd.Series) -> list[list[str]]:
    """Groups of distinct cell texts that differ only by case or by spaces around or inside
    them (``"Supported"``, ``"supported"``, ``" Supported"``), each group in order of
    appearance; groups with one spelling are left out.

    >>> import pandas as pd
    >>> spelling_variants(pd.Series(["Yes", "no", "yes ", "No", "maybe"]))
    [['Yes', 'yes '], ['no', 'No']]
    """
    import pandas as pd

    groups: dict[str, list[str]] = {}
    for raw in pd.unique(values.dropna().astype(object)):
        text = raw if isinstance(raw, str) else cell_text(raw)
        key = " ".join(text.split()).casefold()
        if key:
            groups.setdefault(key, [])
            if text not in groups[key]:
                groups[key].append(text)
    return [g for g in groups.values() if len(g) > 1]


def _map_distinct(series: pd.Series, fn) -> pd.Series:
    """``series.map(fn)`` evaluated once per distinct value."""
    import pandas as pd

    codes, uniques = pd.factorize(series, use_na_sentinel=False)
    table = np.array([fn(u) for u in uniques], dtype=object)
    return pd.Series(table[codes], index=series.index, dtype=object)


def _where(row: Mapping[str, Any], source: str | None) -> str:
    w = row.get("_where")
    if isinstance(w, str) and w:
        return w
    line = row.get("_line")
    if source and line is not None and not (isinstance(line, float) and math.isnan(line)):
        return f"{source}:{int(line)}"
    prefix = f"{source}: " if source else ""
    return f"{prefix}item {row.get('item_id')!s}, rater {row.get('rater')!s}"


@dataclass
class ScaleConfig:
    field: str
    categories: list[str]
    data_level: str
    alpha_levels: list[str]
    ordered: bool
    scores: np.ndarray | None
    source: str | None


@dataclass
class PreparedRatings:
    codes: np.ndarray  # items x raters, -1 missing
    items: list[str]
    raters: list[str]
    groups: np.ndarray | None  # per item
    clusters: np.ndarray | None  # per item
    warnings: list[str] = dc_field(default_factory=list)


def _resolve_field(field: str, schema: Schema | None):
    """-> (schema Field or None, multi value or None)."""
    if schema is None:
        return None, None
    base, _, sub = field.partition(":")
    try:
        f = schema.field(base)
    except KeyError:
        raise GoldboardError(
            f"schema {schema.name}: no field {base!r} (fields: {', '.join(schema.field_names)})"
        ) from None
    if f.kind == "text":
        raise GoldboardError(
            f"field {base}: free text is not rated; agreement needs a nominal, ordinal, binary or multi-select field"
        )
    if f.kind == "multi":
        if not sub:
            vals = ", ".join(f"{base}:{v}" for v in f.categories[:3])
            raise GoldboardError(
                f"field {base} is multi-select: analyse one value at a time as a present/absent field ({vals}, ...)"
            )
        try:
            sub = f.normalize(sub)
        except ValueError as exc:
            raise GoldboardError(f"field {field}: {exc}") from None
        return f, sub
    if sub:
        raise GoldboardError(f"field {field}: only multi-select fields take a ':<value>' suffix ({base} is {f.kind})")
    return f, None


def _normalizer(f: Field | None, sub: str | None, categories: list[str] | None, field: str):
    """A function raw text -> canonical label (raises ValueError with a readable message)."""
    if f is not None and sub is not None:

        def norm_multi(text: str) -> str:
            chosen = set()
            for part in text.split(MULTI_SEP):
                if part.strip():
                    chosen.add(f.normalize(part))
            return "yes" if sub in chosen else "no"

        return norm_multi
    if f is not None:
        if categories is not None:
            cats = set(categories)

            def norm_schema_cats(text: str) -> str:
                v = f.normalize(text)
                if v not in cats:
                    raise ValueError(f"{v!r} is not one of the categories given ({', '.join(categories)})")
                return v

            return norm_schema_cats
        return f.normalize
    if categories is not None:
        exact = {c: c for c in categories}
        folded = {" ".join(c.split()).casefold(): c for c in categories}

        def norm_cats(text: str) -> str:
            if text in exact:
                return exact[text]
            key = " ".join(text.split()).casefold()
            if key in folded:
                return folded[key]
            raise ValueError(f"{text!r} is not one of the categories ({', '.join(categories)})")

        return norm_cats
    return lambda text: text


def _prefix(source: str | None) -> str:
    """``"<source>: "`` for messages about the whole table ('' without a source)."""
    return f"{source}: " if source else ""


def _value_column(ratings: pd.DataFrame, source: str | None) -> str:
    """Check the table's shape; the name of its rating column (``value``, else ``label``)."""
    import pandas as pd

    if not isinstance(ratings, pd.DataFrame):
        raise GoldboardError("ratings must be a pandas DataFrame in the ratings-table shape")
    prefix = _prefix(source)
    value_col = "value" if "value" in ratings.columns else ("label" if "label" in ratings.columns else None)
    for col in ("item_id", "rater"):
        if col not in ratings.columns:
            raise GoldboardError(f"{prefix}no {col!r} column (columns: {', '.join(map(str, ratings.columns))})")
    if value_col is None:
        raise GoldboardError(f"{prefix}no 'value' or 'label' column (columns: {', '.join(map(str, ratings.columns))})")
    return value_col


def _field_rows(ratings: pd.DataFrame, field: str, sub: str | None, source: str | None) -> pd.DataFrame:
    """The rows of ``field`` (all rows when the table has no ``field`` column); never empty."""
    prefix = _prefix(source)
    df = ratings
    if "field" in df.columns:
        base = field.partition(":")[0] if sub is not None else field
        names = _texts(df["field"])
        df = df[(names == base).to_numpy()]
        if df.empty:
            have = sorted(set(names) - {""})
            raise GoldboardError(
                f"{prefix}no ratings for field {base} (fields in the table: "
                f"{', '.join(have[:10]) or 'none'}{', ...' if len(have) > 10 else ''})"
            )
    if df.empty:
        raise GoldboardError(f"{prefix}no ratings for field {field}")
    return df


def _given_categories(categories: Sequence[str] | None, f: Field | None, sub: str | None, field: str):
    """The ``categories`` option as canonical labels (schema spellings when a schema is given), or None."""
    if categories is None:
        return None
    cats = [_cell_text(c) for c in categories if _cell_text(c) != ""]
    if len(set(cats)) != len(cats):
        raise GoldboardError(f"duplicate category in {', '.join(cats)}", param="categories")
    if f is not None and sub is None:
        bad = [c for c in cats if c not in f.categories]
        if bad:
            try:
                cats = [f.normalize(c) for c in cats]
            except ValueError as exc:
                raise GoldboardError(f"field {field}: {exc}", param="categories") from None
    return cats


def _canonical_labels(
    df: pd.DataFrame,
    value_col: str,
    norm,
    multi: bool,
    spelled_freely: bool,
    field: str,
    source: str | None,
    warnings: list[str],
) -> pd.Series:
    """Every rating as its canonical label ('' for an empty rating); the first unknown value is an error
    naming its row.  ``spelled_freely``: no schema or categories, so warn about case/space variants."""
    import pandas as pd

    values = _texts(df[value_col])
    # an empty multi-select ("") is a rating: nothing selected
    missing = (values == "") if not multi else pd.Series(False, index=values.index)
    n_missing = int(missing.sum())
    canon_of: dict[str, str] = {}
    for raw in pd.unique(values[~missing]):
        try:
            if spelled_freely:
                _no_missing_marker(raw)
            canon_of[raw] = norm(raw)
        except ValueError as exc:
            pos = np.flatnonzero(((values == raw) & ~missing).to_numpy())[0]
            row = df.iloc[pos].to_dict()
            raise GoldboardError(f"{_where(row, source)}: field {field}: {exc}") from None
    labels = _map_distinct(values, lambda v: canon_of.get(v, ""))
    if spelled_freely:
        variants = spelling_variants(df[value_col])
        if variants:
            shown = "; ".join(", ".join(repr(v) for v in group) for group in variants)
            warnings.append(
                f"field {field}: values that differ only by case or surrounding spaces: {shown} "
                f"(surrounding spaces are trimmed, but case variants count as different categories and "
                f"change the statistics; give --schema or --categories to merge them)"
            )
    if n_missing == len(values):
        raise GoldboardError(f"{_prefix(source)}field {field}: every rating is empty; nothing to compare")
    if n_missing:
        warnings.append(f"{n_missing} rating(s) of field {field} dropped as missing (empty value)")
    return labels


#: what pandas, R, Excel or a database write for an empty cell: never a category of their own
MISSING_MARKERS = frozenset({"nan", "null", "#n/a", "<na>", "nat"})


def _no_missing_marker(raw: str) -> None:
    """Without a schema every text is a category; ``NaN`` (a missing value as pandas writes it)
    or a NUL character is none: a ValueError saying so."""
    if raw.strip().casefold() in MISSING_MARKERS:
        raise ValueError(
            f"value {raw!r} is how a program writes a missing value, not a category; leave the cell empty, "
            "or give a schema or categories that list it"
        )
    if any(ord(c) < 32 and c not in "\t\n\r" for c in raw):
        raise ValueError(f"value {raw!r} holds a control character (a NUL or similar); retype the label")


def _measurement_levels(
    levels: Sequence[str] | None, data_level: str, binary: bool, field: str, warnings: list[str]
) -> tuple[str, list[str]]:
    """(data level, alpha's levels): the ``levels`` option, else the field's level (plus nominal for
    ordinal data); a binary field is nominal only."""
    lvls = [str(lv).lower() for lv in (levels or [])]
    for lv in lvls:
        if lv not in LEVELS:
            raise GoldboardError(f"{lv!r} is not one of {', '.join(LEVELS)}", param="levels")
    lvls = list(dict.fromkeys(lvls))
    if lvls:
        data_level = lvls[0]
        alpha_levels = lvls
    else:
        alpha_levels = [data_level] + (["nominal"] if data_level == "ordinal" else [])
    if binary:
        if any(lv != "nominal" for lv in lvls):
            warnings.append(f"field {field} is binary: only the nominal level applies")
        data_level, alpha_levels = "nominal", ["nominal"]
    return data_level, alpha_levels


def _alpha_scores(category_list: list[str], alpha_levels: list[str], field: str, warnings: list[str]):
    """Numeric scores of the categories for interval/ratio alpha (ranks when they are not numbers), or None."""
    if not any(lv in ("interval", "ratio") for lv in alpha_levels):
        return None
    try:
        scores = np.array([float(c) for c in category_list])
    except ValueError:
        scores = np.arange(1.0, len(category_list) + 1.0)
        warnings.append("interval/ratio alpha: categories are not numbers, so their ranks 1..k are used as scores")
    if "ratio" in alpha_levels and np.any(scores < 0):
        raise GoldboardError(f"field {field}: ratio alpha needs non-negative scores")
    return scores


def _scale(
    f: Field | None,
    multi: bool,
    cats: list[str] | None,
    labels: pd.Series,
    opts: AgreementOptions,
    warnings: list[str],
) -> ScaleConfig:
    """The category scale, the measurement levels and alpha's scores."""
    field = opts.field
    if f is not None:
        category_list = ["no", "yes"] if multi else list(cats if cats is not None else f.categories)
        data_level = "nominal" if multi else (f.level or "nominal")
    else:
        category_list = cats if cats is not None else sorted(set(labels[labels != ""]), key=natural_key)
        data_level = "nominal"
    binary = multi or (f is not None and f.kind == "binary")
    data_level, alpha_levels = _measurement_levels(opts.levels, data_level, binary, field, warnings)
    ordered = data_level in ("ordinal", "interval", "ratio")
    if ordered and f is None and cats is None:
        if not all(is_number(c) for c in category_list):
            warnings.append(
                "ordinal order taken from the sorted labels; pass --categories or --schema to fix the scale"
            )
    scores = _alpha_scores(category_list, alpha_levels, field, warnings)
    return ScaleConfig(field, category_list, data_level, alpha_levels, ordered, scores, opts.source)


def _dichotomized(
    labels: pd.Series, scale: ScaleConfig, f: Field | None, cats: list[str] | None, norm, dichotomize: str
) -> tuple[pd.Series, ScaleConfig]:
    """Labels and scale cut at category K of an ordered field: ``<K`` vs ``>=K``, nominal."""
    field, category_list = scale.field, scale.categories
    k_raw = _cell_text(dichotomize)
    if not scale.ordered and not (f is not None and f.kind == "ordinal"):
        raise ParamError(
            "{dichotomize} {k}: field {field} is {level}; dichotomizing needs an ordered scale "
            "({levels} ordinal or an ordinal schema field)",
            k=k_raw,
            field=field,
            level=scale.data_level,
        )
    try:
        thr = norm(k_raw) if f is not None or cats is not None else k_raw
    except ValueError as exc:
        raise GoldboardError(f"field {field}: {exc}", param="dichotomize") from None
    if thr not in category_list:
        raise ParamError(
            "{dichotomize} {k}: not a category of {field} ({cats})", k=k_raw, field=field, cats=", ".join(category_list)
        )
    cut = category_list.index(thr)
    if cut == 0:
        raise ParamError("{dichotomize} {k}: the lowest category leaves nothing below it", k=k_raw)
    lo_label, hi_label = f"<{thr}", f">={thr}"
    pos = {c: i for i, c in enumerate(category_list)}
    labels = _map_distinct(labels, lambda v: "" if v == "" else (hi_label if pos[v] >= cut else lo_label))
    scale = replace(
        scale,
        categories=[lo_label, hi_label],
        data_level="nominal",
        alpha_levels=["nominal"],
        ordered=False,
        scores=None,
    )
    return labels, scale


def _id_table(df: pd.DataFrame, labels: pd.Series, source: str | None) -> pd.DataFrame:
    """``item_id, rater, label`` as text, one row per input row; an empty id or rater is an error."""
    import pandas as pd

    work = pd.DataFrame(
        {
            "item_id": _texts(df["item_id"]).to_numpy(),
            "rater": _texts(df["rater"]).to_numpy(),
            "label": labels.to_numpy(),
        }
    )
    if (work["item_id"] == "").any() or (work["rater"] == "").any():
        pos = int(np.flatnonzero(((work["item_id"] == "") | (work["rater"] == "")).to_numpy())[0])
        row = df.iloc[pos].to_dict()
        what = "item_id" if work["item_id"].iloc[pos] == "" else "rater"
        raise GoldboardError(f"{_where(row, source)}: {what} is empty")
    return work


def _one_rating_each(
    work: pd.DataFrame, df: pd.DataFrame, field: str, source: str | None, warnings: list[str]
) -> pd.DataFrame:
    """The non-missing ratings, one per (item, rater): identical repeats counted once, conflicting
    ones an error naming both rows."""
    rated = work[work["label"] != ""]
    dup = rated.duplicated(["item_id", "rater"], keep=False)
    if not dup.any():
        return rated
    d = rated[dup]
    conflicting = d.groupby(["item_id", "rater"])["label"].nunique()
    conflicting = conflicting[conflicting > 1]
    if len(conflicting):
        item, rater = conflicting.index[0]
        idx = np.flatnonzero(((work["item_id"] == item) & (work["rater"] == rater) & (work["label"] != "")).to_numpy())
        wheres = [_where(df.iloc[i].to_dict(), source) for i in idx[:2]]
        raise GoldboardError(
            f"{wheres[0]}: field {field}: rater {rater} rated item {item} twice with different values "
            f"(also {wheres[1]}); keep one rating per item and rater"
        )
    n_dup = int(dup.sum() - d.drop_duplicates(["item_id", "rater"]).shape[0])
    warnings.append(f"{n_dup} duplicate rating(s) with the same value counted once")
    return rated.drop_duplicates(["item_id", "rater"])


def _rater_order(work: pd.DataFrame, rated: pd.DataFrame, opts: AgreementOptions, warnings: list[str]) -> list[str]:
    """Raters with a rating: the ``raters`` option's order first, then order of appearance; at least two."""
    import pandas as pd

    present = pd.unique(work["rater"].to_numpy(dtype=object)).tolist()
    return _order_of(present, set(rated["rater"]), opts, warnings)


def _order_of(present: list[str], with_ratings: set[str], opts: AgreementOptions, warnings: list[str]) -> list[str]:
    """:func:`_rater_order` from the raters in order of appearance and those with a rating."""
    raters, field = opts.raters, opts.field
    order = [r for r in (raters or []) if r in with_ratings] + [
        r for r in present if r in with_ratings and r not in set(raters or [])
    ]
    dropped_raters = [r for r in present if r not in with_ratings]
    if dropped_raters:
        warnings.append(f"rater(s) {', '.join(dropped_raters)} have no non-missing rating of {field} and are left out")
    if len(order) < 2:
        who = order[0] if order else "nobody"
        raise GoldboardError(
            f"{_prefix(opts.source)}field {field}: only one rater ({who}) rated it; agreement needs at least two raters"
        )
    return order


def _code_matrix(
    work: pd.DataFrame,
    rated: pd.DataFrame,
    order: list[str],
    category_list: list[str],
    field: str,
    warnings: list[str],
) -> tuple[np.ndarray, list[str]]:
    """(items x raters category codes, -1 missing; the items), items without a rating left out."""
    import pandas as pd

    items = pd.unique(work["item_id"].to_numpy(dtype=object)).tolist()
    item_index = pd.Index(items)
    codes = np.full((len(items), len(order)), _MISSING, dtype=np.int64)
    codes[item_index.get_indexer(rated["item_id"]), pd.Index(order).get_indexer(rated["rater"])] = pd.Index(
        category_list
    ).get_indexer(rated["label"])
    return _rated_items(codes, items, field, warnings)


def _rated_items(codes: np.ndarray, items: list[str], field: str, warnings: list[str]) -> tuple[np.ndarray, list[str]]:
    """``codes`` and ``items`` without the items where every rating was missing (with a warning)."""
    keep = (codes >= 0).any(axis=1)
    if not keep.all():
        warnings.append(f"{int((~keep).sum())} item(s) have no non-missing rating of {field} and are left out")
    return codes[keep], np.asarray(items, dtype=object)[keep].tolist()


def _per_item(
    df: pd.DataFrame, work: pd.DataFrame, items: list[str], col: str | None, mapping, what: str, source: str | None
) -> np.ndarray | None:
    """One value per item from ``mapping`` (item -> value) or column ``col`` (``"(missing)"`` when
    empty); None when neither is given.  A column with two values for one item is an error naming
    ``col`` as library parameter ``what`` (``by``, ``cluster_col``)."""
    import pandas as pd

    prefix = _prefix(source)
    if mapping is not None:
        vals = np.array([_cell_text(mapping.get(it, "")) for it in items], dtype=object)
        return np.where(vals == "", "(missing)", vals)
    if col is None:
        return None
    if col not in df.columns:
        raise ParamError(
            "{prefix}{" + what + "} {col!r}: no such column (columns: {cols})",
            prefix=prefix,
            col=col,
            cols=", ".join(c for c in map(str, df.columns) if not c.startswith("_")),
        )
    sub_df = pd.DataFrame({"item_id": work["item_id"], "v": _texts(df[col]).to_numpy()})
    n_distinct = sub_df.groupby("item_id")["v"].nunique()
    if (n_distinct > 1).any():
        bad = n_distinct[n_distinct > 1].index[0]
        vals = sorted(set(sub_df.loc[sub_df["item_id"] == bad, "v"]))
        raise ParamError(
            "{prefix}{" + what + "} {col!r}: item {bad} has several values ({vals}); it must be one per item",
            prefix=prefix,
            col=col,
            bad=bad,
            vals=", ".join(map(repr, vals[:3])),
        )
    first = sub_df.drop_duplicates("item_id").set_index("item_id")["v"]
    vals = first.reindex(items).fillna("").to_numpy(dtype=object)
    return np.where(vals == "", "(missing)", vals)


def _clusters(
    df: pd.DataFrame, work: pd.DataFrame, items: list[str], opts: AgreementOptions, warnings: list[str]
) -> np.ndarray | None:
    """The resampling cluster of each item; an item without one is a cluster of its own."""
    clu = _per_item(df, work, items, opts.cluster_col, opts.clusters, "cluster_col", opts.source)
    if clu is not None and (clu == "(missing)").any():
        n_miss = int((clu == "(missing)").sum())
        warnings.append(
            f"{n_miss} item(s) have no cluster ({opts.cluster_col or 'cluster'} empty): each is resampled "
            f"as a cluster of its own"
        )
        clu = np.where(clu == "(missing)", np.array([f"\x00item:{it}" for it in items], dtype=object), clu)
    return clu


def prepare_ratings(ratings: pd.DataFrame, opts: AgreementOptions) -> tuple[PreparedRatings, ScaleConfig]:
    """Validate ``ratings`` against ``opts`` and code them: items x raters category codes
    (``-1`` missing), strata and clusters per item, and the scale (:class:`ScaleConfig`).

    Each step raises a one-line :class:`~goldboard.errors.GoldboardError` naming the row,
    cell or option at fault, in the order the steps run; warnings keep that order too."""
    field, source = opts.field, opts.source
    value_col = _value_column(ratings, source)
    f, sub = _resolve_field(field, opts.schema)
    df = _field_rows(ratings, field, sub, source)
    warnings: list[str] = []
    cats = _given_categories(opts.categories, f, sub, field)
    norm = _normalizer(f, sub, cats, field)
    multi = f is not None and sub is not None
    labels = _canonical_labels(df, value_col, norm, multi, f is None and cats is None, field, source, warnings)
    scale = _scale(f, multi, cats, labels, opts, warnings)
    if opts.dichotomize is not None:
        labels, scale = _dichotomized(labels, scale, f, cats, norm, opts.dichotomize)
    if len(scale.categories) < 2:
        only = scale.categories[0] if scale.categories else "(none)"
        raise ParamError(
            "field {field}: only one category ({only}); give the full scale with {categories} or {schema}",
            field=field,
            only=only,
        )
    work = _id_table(df, labels, source)
    rated = _one_rating_each(work, df, field, source, warnings)
    order = _rater_order(work, rated, opts, warnings)
    codes, items = _code_matrix(work, rated, order, scale.categories, field, warnings)
    grp = _per_item(df, work, items, opts.by, opts.groups, "by", source)
    if grp is not None:
        warnings += check_value_spellings(
            [str(g) for g in grp], lambda i: f"item {items[i]}", column=opts.by or "by", prefix=_prefix(source)
        )
    clu = _clusters(df, work, items, opts, warnings)
    _single_rated_warning(codes, warnings)
    prepared = PreparedRatings(codes=codes, items=items, raters=order, groups=grp, clusters=clu, warnings=warnings)
    return prepared, scale


def _single_rated_warning(codes: np.ndarray, warnings: list[str]) -> None:
    single = int(((codes >= 0).sum(axis=1) == 1).sum())
    if not single:
        return
    if codes.shape[1] <= 2:  # two raters: every statistic is the pair's, on the items both rated
        warnings.append(f"{single} item(s) rated by only one rater: left out of every statistic")
        return
    warnings.append(
        f"{single} item(s) rated by only one rater: left out of every comparison of raters "
        f"(Fleiss' kappa and AC1 still count them in the category prevalence, as Gwet 2014 does)"
    )


# --------------------------------------------------------------------------- without pandas


def prepare_columns(table: RatingColumns, opts: AgreementOptions) -> tuple[PreparedRatings, ScaleConfig] | None:
    """:func:`prepare_ratings` of a ratings table held as columns of text (a small study's
    ``ratings.csv``, read without pandas): the same codes, items, raters, scale and warnings,
    in the same order.  ``None`` wherever the table or the options need more than the plain
    case -- no schema, ``--by``/``--cluster-col``/``--dichotomize``, a cell with blanks around
    it, a value outside the schema, an empty id, a repeated rating, fewer than two raters or
    categories: the caller then runs :func:`prepare_ratings` on the table as a DataFrame, which
    gives the same answer or names the fault exactly as it always has."""
    if opts.schema is None or opts.dichotomize is not None:
        return None
    if opts.by or opts.groups is not None or opts.cluster_col or opts.clusters is not None:
        return None
    cols = table.columns
    value_col = "value" if "value" in cols else ("label" if "label" in cols else None)
    if value_col is None or "item_id" not in cols or "rater" not in cols:
        return None
    field = opts.field
    f, sub = _resolve_field(field, opts.schema)  # its errors are prepare_ratings' first ones
    rows = _plain_field_rows(table, value_col, field.partition(":")[0] if sub is not None else field)
    if rows is None:
        return None
    items_col, raters_col, values = rows
    warnings: list[str] = []
    cats = _given_categories(opts.categories, f, sub, field)
    norm = _normalizer(f, sub, cats, field)
    multi = sub is not None
    labels = _plain_labels(values, norm, multi, field, warnings)
    if labels is None:
        return None
    scale = _scale(f, multi, cats, None, opts, warnings)  # (the labels are read only without a schema)
    if len(scale.categories) < 2:
        return None
    return _plain_codes(items_col, raters_col, labels, scale, opts, warnings)


def _plain_field_rows(table: RatingColumns, value_col: str, base: str):
    """(item ids, raters, values) of the rows of field ``base``; None when there are none or a
    cell has blanks around it (pandas and Python may trim different blanks) or is empty."""
    item_ids, raters, values = table["item_id"], table["rater"], table[value_col]
    names = table["field"] if "field" in table.columns else None
    keep = range(len(item_ids)) if names is None else [i for i, n in enumerate(names) if n == base]
    out_items, out_raters, out_values = [], [], []
    for i in keep:
        it, r, v = item_ids[i], raters[i], values[i]
        if not it or not r or it != it.strip() or r != r.strip() or v != v.strip():
            return None
        out_items.append(it)
        out_raters.append(r)
        out_values.append(v)
    if names is not None and any(n != n.strip() for n in set(names)):
        return None
    return (out_items, out_raters, out_values) if out_items else None


def _plain_labels(values: list[str], norm, multi: bool, field: str, warnings: list[str]) -> list[str] | None:
    """:func:`_canonical_labels` of plain text cells; None when a value is not in the scale or
    every rating is empty (prepare_ratings names those)."""
    canon_of: dict[str, str] = {}
    for raw in dict.fromkeys(values):
        if raw == "" and not multi:
            continue
        try:
            canon_of[raw] = norm(raw)
        except ValueError:
            return None
    labels = [canon_of.get(v, "") for v in values]
    n_missing = 0 if multi else values.count("")
    if n_missing == len(values):
        return None
    if n_missing:
        warnings.append(f"{n_missing} rating(s) of field {field} dropped as missing (empty value)")
    return labels


def _plain_codes(
    items_col: list[str], raters_col: list[str], labels: list[str], scale: ScaleConfig, opts, warnings: list[str]
) -> tuple[PreparedRatings, ScaleConfig] | None:
    """:func:`_one_rating_each`, :func:`_rater_order` and :func:`_code_matrix` over lists; None
    on a repeated rating or fewer than two raters."""
    rated = [(it, r, lab) for it, r, lab in zip(items_col, raters_col, labels) if lab != ""]
    if len({(it, r) for it, r, _ in rated}) != len(rated):
        return None  # a repeat: counted once or an error, as prepare_ratings says
    with_ratings = {r for _, r, _ in rated}
    if len(with_ratings) < 2:
        return None
    order = _order_of(list(dict.fromkeys(raters_col)), with_ratings, opts, warnings)
    items = list(dict.fromkeys(items_col))
    item_at = {it: i for i, it in enumerate(items)}
    rater_at = {r: j for j, r in enumerate(order)}
    cat_at = {c: k for k, c in enumerate(scale.categories)}
    codes = np.full((len(items), len(order)), _MISSING, dtype=np.int64)
    for it, r, lab in rated:
        codes[item_at[it], rater_at[r]] = cat_at[lab]
    codes, items = _rated_items(codes, items, opts.field, warnings)
    _single_rated_warning(codes, warnings)
    prepared = PreparedRatings(codes=codes, items=items, raters=order, groups=None, clusters=None, warnings=warnings)
    return prepared, scale


# --------------------------------------------------------------------------- one rater against a reference


def _plain_codes_of(values: np.ndarray, norm, cat_at: dict[str, int]) -> np.ndarray | None:
    """Category codes of non-empty label texts, each distinct text normalised once; None when
    a text has blanks around it, is empty or is not in the scale."""
    import pandas as pd

    codes, uniques = pd.factorize(values)
    table = np.empty(len(uniques), dtype=np.int64)
    for i, raw in enumerate(uniques.tolist()):
        if not isinstance(raw, str) or not raw or raw != raw.strip():
            return None
        try:
            table[i] = cat_at[norm(raw)]
        except (ValueError, KeyError):
            return None
    return table[codes]


#: an empty id or one with blanks around it, in ids joined by NUL (one C pass over the text; an id
#: holding a NUL itself can only be taken for a bad one, which costs the fallback, never a wrong code)
_BAD_ID = re.compile(r"(?:^|\x00)(?:\s|\x00|$)|\s(?:\x00|$)")


def _plain_ids(ids: np.ndarray) -> bool:
    """Every id a non-empty text without blanks around it, none repeated."""
    import pandas as pd

    if not all(type(i) is str for i in ids.tolist()):
        return False
    return len(pd.unique(ids)) == len(ids) and _BAD_ID.search("\x00".join(ids.tolist())) is None


def prepare_pair(
    items_a: np.ndarray, values_a: np.ndarray, items_b: np.ndarray, values_b: np.ndarray, opts: AgreementOptions
) -> tuple[PreparedRatings, ScaleConfig] | None:
    """:func:`prepare_ratings` of two raters' non-empty ratings of one single-valued schema field
    (``opts.raters``: their two names; e.g. a rater and the resolved gold label), rows of the first
    before the second, from whole columns: the same codes, items (in order of first appearance),
    raters and scale.  ``None`` wherever that needs more than the plain case -- no schema, a
    multi-select value, a threshold, an id or value with blanks around it or empty, a value outside
    the scale, an item twice for one rater: the caller then runs :func:`prepare_ratings`, which
    gives the same answer or names the fault."""
    import pandas as pd

    if opts.schema is None or opts.dichotomize is not None or opts.raters is None or len(opts.raters) != 2:
        return None
    if opts.by or opts.groups is not None or opts.cluster_col or opts.clusters is not None:
        return None
    f, sub = _resolve_field(opts.field, opts.schema)
    if sub is not None or not len(items_a) or not len(items_b):
        return None
    if not _plain_ids(items_a) or not _plain_ids(items_b):
        return None
    warnings: list[str] = []
    cats = _given_categories(opts.categories, f, sub, opts.field)
    scale = _scale(f, False, cats, None, opts, warnings)
    if len(scale.categories) < 2:
        return None
    norm = _normalizer(f, None, cats, opts.field)
    cat_at = {c: k for k, c in enumerate(scale.categories)}
    codes_a, codes_b = _plain_codes_of(values_a, norm, cat_at), _plain_codes_of(values_b, norm, cat_at)
    if codes_a is None or codes_b is None:
        return None
    items = pd.unique(np.concatenate([items_a, items_b]).astype(object))
    index = pd.Index(items)
    codes = np.full((len(items), 2), _MISSING, dtype=np.int64)
    codes[index.get_indexer(items_a), 0] = codes_a
    codes[index.get_indexer(items_b), 1] = codes_b
    _single_rated_warning(codes, warnings)
    prepared = PreparedRatings(
        codes=codes, items=items.tolist(), raters=list(opts.raters), groups=None, clusters=None, warnings=warnings
    )
    return prepared, scale


# --------------------------------------------------------------------------- a DataFrame, from whole columns


def _plain_codes_column(column: pd.Series) -> tuple[np.ndarray, list[str]] | None:
    """(code per row, distinct texts in order of first appearance) of an id column whose every
    cell is a non-empty text without blanks around it; None otherwise (a missing cell too)."""
    import pandas as pd

    if isinstance(column.dtype, pd.CategoricalDtype):
        return None  # (its distinct values in category order, not order of appearance)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    texts = uniques.tolist()
    if (codes < 0).any() or not all(type(t) is str for t in texts):
        return None
    if _BAD_ID.search("\x00".join(texts)) is not None:
        return None
    return codes, texts


def _frame_label_codes(values: pd.Series, norm, cat_at: dict[str, int]) -> tuple[np.ndarray, int] | None:
    """(category code per row, -1 for an empty rating; the number of empty ratings), each
    distinct text normalised once; None when a text has blanks around it, is not text or is
    not in the scale."""
    import pandas as pd

    if isinstance(values.dtype, pd.CategoricalDtype):
        return None
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    table = np.full(len(uniques) + 1, _MISSING, dtype=np.int64)  # the last entry: a missing cell (code -1)
    for i, raw in enumerate(uniques.tolist()):
        if type(raw) is not str or raw != raw.strip():
            return None
        if raw == "":
            continue
        try:
            table[i] = cat_at[norm(raw)]
        except (ValueError, KeyError):
            return None
    row_codes = table[codes]
    return row_codes, int((row_codes == _MISSING).sum())


def _frame_rows(ratings: pd.DataFrame, field: str) -> pd.DataFrame | None:
    """The ``item_id``, ``rater`` and value columns of the rows of ``field`` (every row without a
    ``field`` column); None when a field name has blanks around it or is not text (prepare_ratings
    trims them) or the field has no rows."""
    import pandas as pd

    value_col = "value" if "value" in ratings.columns else "label"
    cols = ["item_id", "rater", value_col]
    if "field" not in ratings.columns:
        return ratings[cols] if len(ratings) else None
    names = ratings["field"]
    distinct = pd.unique(names).tolist()
    if not all(type(n) is str and n == n.strip() for n in distinct):
        return None
    rows = ratings.loc[(names == field).to_numpy(), cols]
    return rows if len(rows) else None


def prepare_frame(ratings: pd.DataFrame, opts: AgreementOptions) -> tuple[PreparedRatings, ScaleConfig] | None:
    """:func:`prepare_ratings` of a ratings DataFrame from whole columns: each id, rater and label
    coded once per distinct text, the items x raters matrix filled by one index assignment --
    the same codes, items, raters, scale and warnings, in the same order.  ``None`` wherever that
    needs more than the plain case -- no schema, a multi-select value, ``--by``/``--cluster-col``/
    ``--dichotomize``, a missing or empty id, a cell with blanks around it, a value outside the
    scale, every rating empty, a repeated rating, fewer than two raters or categories: the caller
    then runs :func:`prepare_ratings`, which gives the same answer or names the fault as before."""
    import pandas as pd

    if opts.schema is None or opts.dichotomize is not None or not isinstance(ratings, pd.DataFrame):
        return None
    if opts.by or opts.groups is not None or opts.cluster_col or opts.clusters is not None:
        return None
    cols = ratings.columns
    if "item_id" not in cols or "rater" not in cols or ("value" not in cols and "label" not in cols):
        return None
    field = opts.field
    f, sub = _resolve_field(field, opts.schema)  # its errors are prepare_ratings' first ones
    if sub is not None:
        return None
    rows = _frame_rows(ratings, field)
    if rows is None:
        return None
    items, raters = _plain_codes_column(rows["item_id"]), _plain_codes_column(rows["rater"])
    if items is None or raters is None:
        return None
    warnings: list[str] = []
    cats = _given_categories(opts.categories, f, None, field)
    cat_at = {c: k for k, c in enumerate(cats if cats is not None else f.categories)}  # _scale's categories
    labels = _frame_label_codes(rows.iloc[:, 2], _normalizer(f, None, cats, field), cat_at)
    if labels is None or labels[1] == len(rows):
        return None
    if labels[1]:
        warnings.append(f"{labels[1]} rating(s) of field {field} dropped as missing (empty value)")
    scale = _scale(f, False, cats, None, opts, warnings)
    if len(scale.categories) < 2:
        return None
    return _frame_codes(items, raters, labels[0], scale, opts, warnings)


def _frame_codes(
    items: tuple[np.ndarray, list[str]],
    raters: tuple[np.ndarray, list[str]],
    labels: np.ndarray,
    scale: ScaleConfig,
    opts: AgreementOptions,
    warnings: list[str],
) -> tuple[PreparedRatings, ScaleConfig] | None:
    """:func:`_plain_codes` over coded columns; None on a repeated rating or fewer than two raters."""
    (ic, item_texts), (rc, rater_texts) = items, raters
    rated = labels >= 0
    ic, rc, labels = ic[rated], rc[rated], labels[rated]
    n_r = len(rater_texts)
    if len(np.unique(ic * n_r + rc)) != len(ic):
        return None  # a repeat: counted once or an error, as prepare_ratings says
    with_ratings = {rater_texts[j] for j in np.unique(rc).tolist()}
    if len(with_ratings) < 2:
        return None
    order = _order_of(rater_texts, with_ratings, opts, warnings)
    at = {r: j for j, r in enumerate(order)}
    column_of = np.array([at.get(r, -1) for r in rater_texts], dtype=np.int64)
    codes = np.full((len(item_texts), len(order)), _MISSING, dtype=np.int64)
    codes[ic, column_of[rc]] = labels
    codes, kept = _rated_items(codes, item_texts, opts.field, warnings)
    _single_rated_warning(codes, warnings)
    prepared = PreparedRatings(codes=codes, items=kept, raters=order, groups=None, clusters=None, warnings=warnings)
    return prepared, scale
