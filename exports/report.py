"""The agreement report: a self-contained HTML page (or Markdown) a study team can read in a
meeting and paste into a paper.

Structured the way the Guidelines for Reporting Reliability and Agreement Studies ask
(GRRAS; Kottner et al., J Clin Epidemiol 2011;64:96-106): the study (raters, items,
ratings, blinding), the methods (coefficients, weights, CI method, software), results per
field with 95% CIs beside raw agreement and label prevalence (the kappa paradox:
Feinstein & Cicchetti 1990), per-label agreement, confusion matrices, the named-boundary
disagreements, agreement before and after adjudication (each rater against gold), who
adjudicated, warnings, and round-over-round change.

Public API
----------
:func:`goldboard.workflows.build_report` collects everything the report shows for a
study, as plain data (numbers straight from :func:`goldboard.analysis.agreement.agreement`,
so the report equals ``goldboard agree``), with the building blocks here
(:func:`headline_rows`, :func:`prevalence`, :func:`rater_vs_gold`, :func:`heatmap_png`);
:func:`goldboard.workflows.write_report` builds, renders and writes atomically.

``render_html(data) -> str`` / ``render_markdown(data) -> str``
    Renderings; every string from the study (model outputs, rationales, names) is
    escaped.  The HTML embeds its images (PNG, base64) and needs no network.
"""

from __future__ import annotations

import os
import platform
import re
import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from goldboard import __version__
from goldboard.analysis import statistics as SD
from goldboard.analysis.agreement import agreement, agreement_prepared, landis_koch_band, statistic_name
from goldboard.analysis.agreement_inputs import AgreementOptions, prepare_pair
from goldboard.analysis.agreement_render import LK_EDGES
from goldboard.cases.intake.files import sources_text
from goldboard.cases.ratings_columns import PandasOnUse, RatingColumns
from goldboard.errors import GoldboardError
from goldboard.exports.plots import png_bytes
from goldboard.exports.report_extras import grouped_warnings_lines, sections_markdown
from goldboard.text import md_escape, md_table, visible_controls

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
else:
    pd = PandasOnUse()  # imported when first used: the report of a small study reads columns (issue 19)

#: statistics shown in the headline table, in this order
HEADLINE = SD.headline_keys()  # declared in analysis/statistics.py
LANDIS_KOCH_NOTE = (
    f"Bands follow the Landis & Koch (1977) convention ({LK_EDGES}). They are a labelling "
    "convention, not a statistical test."
)


# --------------------------------------------------------------------------- data


#: the packages whose versions the report names (those installed)
SOFTWARE = (
    "numpy",
    "pandas",
    "scipy",
    "krippendorff",
    "scikit-learn",
    "statsmodels",
    "label-studio-sdk",
    "label-studio",
)


def software_versions() -> dict[str, str]:
    out = {"goldboard": __version__, "python": platform.python_version()}
    found = _dist_info_versions(SOFTWARE)
    for pkg in SOFTWARE:
        version = found.get(pkg, "?")
        if version == "?":  # not plainly installed: ask importlib.metadata (its import costs a blink)
            version = _metadata_version(pkg)
        if version is not None:
            out[pkg] = version
    return out


def _metadata_version(pkg: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def _norm(name: str) -> str:
    """A distribution name as importlib.metadata matches it (``scikit-learn`` -> ``scikit_learn``)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _dist_info_versions(names: tuple[str, ...]) -> dict[str, str | None]:
    """Each name's version as :func:`importlib.metadata.version` finds it -- the first ``sys.path``
    folder holding a ``<name>-<version>.dist-info`` or ``.egg-info``, its metadata's ``Version`` --
    read without importing importlib.metadata (and its email parser): ``None`` when no folder of
    ``sys.path`` has one (every entry a folder), ``"?"`` wherever anything is less plain (an
    ``.egg-info``, an archive on ``sys.path``, no readable ``Version``): ask importlib.metadata."""
    wanted = {_norm(n): n for n in names}
    out: dict[str, str | None] = {}
    for entry in sys.path:
        try:
            children = os.listdir(entry or ".")
        except OSError:
            if os.path.exists(entry):  # an archive (a zip) on sys.path: importlib.metadata reads those
                return {n: out.get(n, "?") for n in names}
            continue
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            name = wanted.get(_norm(low.rpartition(".")[0].partition("-")[0]))
            if name is None or name in out:
                continue
            out[name] = _metadata_file_version(os.path.join(entry or ".", child)) if low.endswith(".dist-info") else "?"
    return {n: out.get(n) for n in names}


def _metadata_file_version(dist_info: str) -> str:
    """The ``Version`` header of ``<dist-info>/METADATA`` (``"?"`` when there is none to read)."""
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    break
                key, sep, value = line.partition(":")
                if sep and key.strip().lower() == "version":
                    return value.strip() or "?"
    except (OSError, UnicodeDecodeError):
        pass
    return "?"


def headline_rows(result: dict) -> list[dict]:
    """Overall (ungrouped) rows; with >2 raters the all-rater coefficients, not each pair."""

    rows = []
    all_raters = result["raters"]
    for r in result["statistics"]:
        if r.get("group") is not None:
            continue
        if len(all_raters) > 2 and r["raters"] != all_raters and r["statistic"] != "cohen_kappa":
            continue
        rows.append(
            {
                "name": "Percent agreement (mean over rater pairs)"
                if r["statistic"] == "percent_agreement" and len(r["raters"]) > 2
                else statistic_name(r),
                "raters": " / ".join(r["raters"]) if len(r["raters"]) <= 2 else "all",
                "n": r["n_items"],
                "value": r["value"],
                "ci_low": r["ci_low"],
                "ci_high": r["ci_high"],
                "se": r["se"],
                "ci_method": r["ci_method"],
                "band": None if r["statistic"] == "percent_agreement" else landis_koch_band(r["value"]),
                "order": HEADLINE.index(r["statistic"]) if r["statistic"] in HEADLINE else 99,
            }
        )
    rows.sort(key=lambda x: x["order"])
    return rows


def flat_label(e: dict) -> dict:
    """One per-label row with flat value/CI keys (what the templates show)."""
    out = {"label": e["label"], "prevalence": e.get("prevalence")}
    for key in ("positive_agreement", "negative_agreement", "kappa"):
        est = e.get(key) or {}
        out[key] = est.get("value")
        out[key + "_low"] = est.get("ci_low")
        out[key + "_high"] = est.get("ci_high")
    return out


def prevalence(ratings: pd.DataFrame | RatingColumns, field: str, categories: list[str], schema=None) -> list[dict]:
    """Share of all ratings per label (the prevalence reported beside kappa)."""
    base, _, sub = field.partition(":")
    base, _, at = base.partition(">=")
    if isinstance(ratings, RatingColumns):
        vals = [v for v, f in zip(ratings["value"], ratings["field"]) if f == base]
        return _prevalence_columns(vals, sub, schema.field(base).categories if at else [], at, categories)
    vals = ratings.loc[ratings["field"] == base, "value"].astype(str)
    if at:  # dichotomised ordinal field: categories are ["<at", ">=at"], in schema order
        scale = schema.field(base).categories
        vals = vals[vals.isin(scale)]
        n = len(vals)
        high = int((vals.map(scale.index) >= scale.index(at)).sum())
        counts = {categories[0]: n - high, categories[-1]: high}
        return [{"label": c, "count": counts[c], "share": (counts[c] / n) if n else None} for c in categories]
    if sub:
        present = vals.map(lambda v: sub in v.split("|"))
        n = len(vals)
        counts = {"yes": int(present.sum()), "no": int(n - present.sum())}
        cats = ["no", "yes"]
    else:
        vals = vals[vals != ""]
        n = len(vals)
        vc = vals.value_counts()
        counts = {c: int(vc.get(c, 0)) for c in categories}
        cats = categories
    return [{"label": c, "count": counts.get(c, 0), "share": (counts.get(c, 0) / n) if n else None} for c in cats]


def _prevalence_columns(vals: list[str], sub: str, scale: list[str], at: str, categories: list[str]) -> list[dict]:
    """:func:`prevalence` of one field's values (texts, in file order); ``scale``: the field's
    categories when it is dichotomised at ``at``."""
    if at:  # dichotomised ordinal field: categories are ["<at", ">=at"], in schema order
        vals = [v for v in vals if v in scale]
        n = len(vals)
        high = sum(1 for v in vals if scale.index(v) >= scale.index(at))
        counts = {categories[0]: n - high, categories[-1]: high}
        return [{"label": c, "count": counts[c], "share": (counts[c] / n) if n else None} for c in categories]
    n = len(vals) if sub else sum(1 for v in vals if v != "")
    if sub:
        yes = sum(1 for v in vals if sub in v.split("|"))
        counts, cats = {"yes": yes, "no": n - yes}, ["no", "yes"]
    else:
        tally: dict[str, int] = {}
        for v in vals:
            tally[v] = tally.get(v, 0) + 1
        counts, cats = {c: tally.get(c, 0) for c in categories}, categories
    return [{"label": c, "count": counts.get(c, 0), "share": (counts.get(c, 0) / n) if n else None} for c in cats]


def heatmap_png(matrix: list[list[int]], labels: list[str], row_title: str, col_title: str, title: str = "") -> bytes:
    """A confusion-matrix heatmap (counts annotated) as PNG bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = np.asarray(matrix, dtype=float)
    k = len(labels)
    size = max(3.6, 0.9 * k + 2.2)
    fig, ax = plt.subplots(figsize=(size, size * 0.85), dpi=110)
    try:
        ax.imshow(m, cmap="Blues", vmin=0, vmax=max(1.0, m.max()))
        import textwrap

        short = ["\n".join(textwrap.wrap(lab, 14)) or lab for lab in labels]
        ax.set_xticks(range(k), short, rotation=35, ha="right", fontsize=8)
        ax.set_yticks(range(k), short, fontsize=8)
        ax.set_xlabel(col_title, fontsize=9)
        ax.set_ylabel(row_title, fontsize=9)
        if title:
            ax.set_title(title, fontsize=9)
        hi = m.max() if m.size else 0
        for i in range(k):
            for j in range(k):
                v = int(m[i, j])
                ax.text(
                    j,
                    i,
                    str(v),
                    ha="center",
                    va="center",
                    fontsize=9,
                    color="white" if hi and v > hi * 0.6 else "black",
                    fontweight="bold" if i == j else "normal",
                )
        return png_bytes(fig)
    finally:
        plt.close(fig)


def _is_in(col: pd.Series, values: pd.Series) -> np.ndarray:
    """``col.isin(values)`` through one set of str: pandas' ``isin`` on its Arrow-backed text
    columns makes a pyarrow scalar per value (about 1 s per 200,000 values)."""
    have = set(values.tolist())
    return np.fromiter((v in have for v in col.tolist()), dtype=bool, count=len(col))


def _leave_one_out(in_field: pd.DataFrame, g: pd.DataFrame, rater: str) -> tuple[pd.DataFrame, int]:
    """``rater``'s gold without ``rater``: on each item ``rater`` rated, the decision in force
    (method ``adjudicated``), else the value every other rater who rated the item gave.  Items
    with no other rating (gold resting on ``rater`` alone) or whose other raters disagree are
    left out: ``(item_id/gold_value rows, items left out)``."""
    decided = dict(
        zip(g.loc[g["method"] == "adjudicated", "item_id"], g.loc[g["method"] == "adjudicated", "gold_value"])
    )
    mine = in_field[in_field["rater"] == rater]
    others: dict[str, set] = {}
    for item, r, value in zip(in_field["item_id"].tolist(), in_field["rater"].tolist(), in_field["value"].tolist()):
        if r != rater:
            others.setdefault(item, set()).add(str(value).strip())  # " 4" is the 4 the ratings table reads
    items, values, left_out = [], [], 0
    for item in dict.fromkeys(mine["item_id"].tolist()):
        if item in decided:
            items.append(item), values.append(decided[item])
        elif len(others.get(item, ())) == 1:
            items.append(item), values.append(next(iter(others[item])))
        else:
            left_out += 1
    return pd.DataFrame({"item_id": items, "gold_value": values}, dtype=object), left_out


def rater_vs_gold(ratings: pd.DataFrame, gold: pd.DataFrame, field: str, raters: list[str], schema) -> list[dict]:
    """Each rater against leave-one-out gold (:func:`_leave_one_out`): ``n`` is the rater's own
    rated items that have such a gold; ``left_out`` the rater's items that have none (their gold
    would rest on the rater alone, or the other raters disagree and no decision is in force)."""

    g = gold[gold["field"] == field]
    out = []
    if g.empty:
        return out
    # the four columns agreement reads, before any row is copied (a round's table has a dozen)
    cols = ratings[["item_id", "rater", "field", "value"]]
    in_field = cols[(cols["field"] == field) & (cols["value"] != "")]
    # the items of this round's gold (the study's gold holds other rounds' items too)
    in_field = in_field[_is_in(in_field["item_id"], g["item_id"])]
    rater_col = in_field["rater"].to_numpy(dtype=object)
    for r in raters:
        at = rater_col == r
        if not at.any():
            continue
        loo, left_out = _leave_one_out(in_field, g, r)
        if loo.empty:
            continue
        mine = in_field[at]
        mine = mine[_is_in(mine["item_id"], loo["item_id"])]
        gold_items, gold_values = loo["item_id"].to_numpy(dtype=object), loo["gold_value"].to_numpy(dtype=object)
        gold_rows = pd.DataFrame(
            {"item_id": loo["item_id"], "rater": "gold", "field": field, "value": loo["gold_value"]}
        )
        try:  # the pair coded from whole columns; the ratings table's way where that does not answer
            pair = prepare_pair(
                mine["item_id"].to_numpy(dtype=object),
                mine["value"].to_numpy(dtype=object),
                gold_items,
                gold_values,
                AgreementOptions(field=field, schema=schema, raters=[r, "gold"]),
            )
            if pair is not None:
                res = agreement_prepared(pair)
            else:
                res = agreement(pd.concat([mine, gold_rows], ignore_index=True), field, schema, raters=[r, "gold"])
        except GoldboardError:
            continue
        row = {
            "rater": r,
            "n": res["n_items"],
            "left_out": left_out,
            "percent_agreement": None,
            "kappa": None,
            "kappa_low": None,
            "kappa_high": None,
            "kappa_w": None,
            "kappa_w_low": None,
            "kappa_w_high": None,
        }
        for s in res["statistics"]:
            if s["group"] is not None:
                continue
            if s["statistic"] == "percent_agreement":
                row["percent_agreement"] = s["value"]
            if s["statistic"] == "cohen_kappa" and s["weights"] in ("none", None):
                row["kappa"], row["kappa_low"], row["kappa_high"] = s["value"], s["ci_low"], s["ci_high"]
            if s["statistic"] == "cohen_kappa" and s["weights"] == "quadratic":
                row["kappa_w"], row["kappa_w_low"], row["kappa_w_high"] = s["value"], s["ci_low"], s["ci_high"]
        out.append(row)
    return out


def vs_gold_title(rows: list[dict], adjudicated: bool) -> str:
    """The heading of the rater-against-gold table: what its gold is, what it leaves out."""
    left = sum(r.get("left_out", 0) for r in rows)
    head = "Each rater against gold" + (" (after adjudication)" if adjudicated else " (no decision made yet)")
    head += (
        ": leave-one-out gold (each rater's own rated items, against the decision in force or else the value "
        "the other raters who rated the item agree on)"
    )
    if left:
        head += "; " + ", ".join(f"{r['rater']} {r['left_out']}" for r in rows if r.get("left_out"))
        head += " item(s) left out, their gold resting on that rater alone or the other raters disagreeing"
    return head + ":"


def _day(ts: Any) -> str:
    return str(ts or "")[:16].replace("T", " ") + (" UTC" if ts else "")


def blinding_text(round_info: Any, adjudication: dict | None = None) -> str:
    """The methods sentence(s) on blinding, from what the server was checked to enforce
    (``round.access``, recorded at push and pull; ``adjudication["access"]``).  A Label Studio
    round that also holds ratings imported from files says their blinding is not recorded."""
    text = _blinding_text(round_info, adjudication)
    tables = (getattr(round_info, "tables", None) or {}) if round_info is not None else {}
    if tables and round_info.mode != "table":
        text += (
            f" Ratings imported into this round from {sources_text(tables)} were not given in Label Studio; "
            "their blinding is not recorded."
        )
    return text


def _blinding_text(round_info: Any, adjudication: dict | None) -> str:
    if round_info is None:
        return "Blinding: not recorded (ratings imported from files)."
    if round_info.mode == "shared":
        return "Not blinded: raters annotated in one shared Label Studio project and could see each other's labels."
    if round_info.mode == "table":
        tables = getattr(round_info, "tables", None) or {}
        return f"Blinding: not recorded (ratings imported from {sources_text(tables) or 'a ratings table'})."
    access = getattr(round_info, "access", None) or {}
    checks = [access[k] for k in ("push", "pull") if k in access]
    if not checks:
        return (
            "Blinded by convention: each rater annotated in a separate Label Studio project and was asked to open "
            "only their own; which projects the server let each rater see was not recorded."
        )
    when = " and ".join(f"at {k} ({_day(access[k].get('checked_at'))})" for k in ("push", "pull") if k in access)
    if all(c.get("note") for c in checks):
        return (
            "Blinded by convention, not enforced by the server: each rater annotated in a separate Label Studio "
            "project on a shared server and was asked to open only their own; goldboard held no rater accounts "
            "there, so it could not check what each rater could see."
        )
    if all(c.get("enforced") for c in checks if not c.get("note")):
        what = checks[-1].get("checks", "project list, project page, task list")
        text = (
            "Blinded and enforced by the Label Studio server: each rater worked in a project of their own inside a "
            "Label Studio organization of their own; checked with each rater's own account "
            f"{when}, every rater could list and open their own project and no other rater's project "
            f"({what}). Remaining exposure: the server's user list shows the other raters' user names and e-mail "
            "addresses (not their projects or labels), and goldboard's own accounts, held by the study lead, "
            "can open every project."
        )
    else:
        leaks = sorted(
            {
                f"{r} could reach {', '.join(x.get('reaches') or []) or 'no project of their own'}"
                for c in checks
                for r, x in (c.get("raters") or {}).items()
                if x.get("reaches") or not x.get("opens_own")
            }
        )
        text = (
            "Blinded by convention only, not enforced by the server: each rater annotated in a separate Label "
            f"Studio project, but the checks with each rater's own account {when} found: " + "; ".join(leaks) + "."
        )
    adj = (adjudication or {}).get("access") or {}
    if adj and not adj.get("note"):
        who = adj.get("adjudicator")
        reach = {r: v for r, v in (adj.get("raters_reach") or {}).items() if v}
        if not reach:
            text += (
                f" The adjudication projects{' (in ' + who + chr(39) + 's organization)' if who else ''} were out "
                f"of every rater's reach (checked {_day(adj.get('checked_at'))})."
            )
        else:
            text += " Raters could reach the adjudication projects: " + "; ".join(
                f"{r}: {', '.join(v)}" for r, v in reach.items()
            )
    return text


# --------------------------------------------------------------------------- rendering


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:.{digits}f}"


def _ci(lo: Any, hi: Any) -> str:
    if lo is None or hi is None:
        return "–"
    return f"{lo:.3f} to {hi:.3f}"


def _pct(x: Any) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


NOT_ESTIMABLE = "not estimable"


def _est(x: Any) -> str:
    """A coefficient's value; an undefined one (e.g. kappa when both raters used one
    category) reads "not estimable" rather than a number."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return NOT_ESTIMABLE
    return _fmt(x)


def _with_ci(v: Any, lo: Any, hi: Any) -> str:
    """``value (low to high)``; "not estimable" for an undefined value, and "CI not estimable"
    when the interval collapsed to a point (a zero SE from a degenerate table, e.g. a label
    the raters never both used), never ``0.000 (0.000 to 0.000)``."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return NOT_ESTIMABLE
    if lo is None or hi is None or round(float(lo), 3) == round(float(hi), 3):
        return f"{_fmt(v)} (CI not estimable: degenerate table)"
    return f"{_fmt(v)} ({_ci(lo, hi)})"


def _ci_est(r: dict) -> str:
    """A row's 95% CI; "not estimable" for an undefined value or a Wald interval collapsed to
    the point by a zero SE (a degenerate table), never ``0.000 to 0.000``."""
    lo, hi, v = r.get("ci_low"), r.get("ci_high"), r.get("value")
    if v is None or lo is None or hi is None:
        return NOT_ESTIMABLE
    if r.get("se") == 0 and lo == hi:
        return NOT_ESTIMABLE + " (degenerate table)"
    return _ci(lo, hi)


def _html_text(value: Any) -> Any:
    """Every value the HTML template prints: bidi controls from data shown as escapes
    (:func:`goldboard.text.visible_controls`); autoescaping then makes it inert text."""
    if not isinstance(value, str):
        return value
    shown = visible_controls(value)
    if shown == value:
        return value
    import markupsafe

    return markupsafe.Markup(shown) if isinstance(value, markupsafe.Markup) else shown


def _env():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("goldboard.exports", "templates"),
        autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
        undefined=jinja2.StrictUndefined,
        finalize=_html_text,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["f3"] = _fmt
    env.filters["ci"] = lambda r: _ci(r.get("ci_low"), r.get("ci_high"))
    env.filters["pct"] = _pct
    env.filters["scope_sentence"] = scope_sentence
    env.filters["est"] = _est
    env.filters["ci_est"] = _ci_est
    env.filters["with_ci"] = lambda r, key: _with_ci(r.get(key), r.get(key + "_low"), r.get(key + "_high"))
    env.filters["grouped"] = grouped_warnings_lines
    return env


def render_html(data: dict) -> str:
    """The self-contained HTML report (autoescaped: every study string is escaped)."""
    return _env().get_template("report.html.j2").render(d=data)


_md = md_escape


def _md_table(head: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table (cells already escaped) followed by a blank line."""
    return md_table(head, rows, escape=False).split("\n") + [""]


def render_markdown(data: dict) -> str:
    """The report as Markdown (tables; images omitted, confusion matrices as tables)."""
    out = _md_study(data)
    for f in data["fields"]:
        out += _md_field(f)
    for m in data["multi"]:
        out += _md_multi(m)
    fl = data["flags"]
    out += ["## Disagreements and named boundaries", ""] + [f"- {_md(x)}" for x in fl["lines"]]
    out += [f"- Flagged rows: {_md(scope_sentence(fl.get('scope', '')))}"] if fl.get("scope") else []
    out += [""]
    out += _md_adjudication(data["adjudication"])
    if data["rounds_change"]:
        out += ["## Round over round", ""]
        out += _md_table(
            ["Round", "Field", "n", "Percent agreement", "Alpha (95% CI)"],
            [
                [
                    r["round"],
                    _md(r["field"]),
                    r["n"],
                    _pct(r.get("percent_agreement")),
                    f"{_fmt(r.get('alpha'))} ({_ci(r.get('alpha_low'), r.get('alpha_high'))})",
                ]
                for r in data["rounds_change"]
            ],
        )
    if data.get("scoring"):
        sc = data["scoring"]
        out += ["## Model scores against gold", ""] + [_md(x) + "  " for x in sc["lines"]] + ["", sc["markdown"], ""]
    if data.get("sections"):
        out += [sections_markdown(data["sections"]), ""]
    if data.get("supplement"):
        out += [f"_Every table is also in the CSV supplement: {_md(data['supplement'])}/_", ""]
    grouped = grouped_warnings_lines(data["warnings"])
    out += ["## Warnings", ""]
    if data["warnings"]:
        out += [f"{len(data['warnings'])} warning(s), {len(grouped)} distinct:", ""]
    out += ([f"- {_md(w)}" for w in grouped] or ["- none"]) + [""]
    out.append(f"_Generated {data['generated_at']} by goldboard {data['versions']['goldboard']}._")
    return "\n".join(out) + "\n"


def _md_study(data: dict) -> list[str]:
    """Title, the simulated-data banner, Study, Methods and the head of Results."""
    s = data["study"]
    out = [f"# Agreement report: {_md(s['name'])}", ""]
    if data["simulated"]:
        out += [
            "> **Simulated data.** The raters and adjudicator in this study were simulated by `goldboard demo`.",
            "",
        ]
    out += [line for w in data.get("edited", []) for line in (f"> **Warning:** {_md(w)}", "")]
    return out + [
        "## Study",
        "",
        f"- Schema: {_md(s['schema'])} v{_md(s['schema_version'])} — {_md(s['schema_title'])}",
        f"- Unit: {_md(s['unit'])}",
        f"- Raters: {len(s['raters'])} ({_md(', '.join(s['raters']))})",
        f"- Items: {s['n_items']}; round {s['round']}",
        f"- Ratings (non-empty values per field): {_md(s['ratings_text'])}",
        *([f"- Round analysed: {_md(s['round_rule'])}"] if s.get("round_rule") else []),
        f"- {_md(s['blinding'])}",
        "",
        "## Methods",
        "",
        _md(data["methods"]),
        "",
        "## Results",
        "",
        f"_{_md(data['landis_koch_note'])}_",
        "",
    ]


def _md_field(f: dict) -> list[str]:
    """One single-choice field: headline statistics, prevalence, per-label agreement,
    confusion matrices and each rater against gold."""
    out = [f"### {_md(f['title'])} ({_md(f['level'])}, {f['n_items']} items)", ""]
    out += _md_table(
        ["Statistic", "Raters", "n", "Value", "95% CI", "SE", "CI method", "Band (convention)"],
        [
            [
                _md(r["name"]),
                _md(r["raters"]),
                r["n"],
                _est(r["value"]),
                _ci_est(r),
                _fmt(r["se"]),
                _md(r["ci_method"] or "–"),
                _md(r["band"] or ""),
            ]
            for r in f["headline"]
        ],
    )
    out += [
        "Label prevalence: "
        + ", ".join(f"{_md(p['label'])} {p['count']} ({_pct(p['share'])})" for p in f["prevalence"]),
        "",
    ]
    if f["per_label"]:
        out += _md_table(
            ["Label", "Prevalence", "Positive agreement", "Negative agreement", "Kappa vs rest"],
            [
                [
                    _md(e["label"]),
                    _fmt(e["prevalence"]),
                    _with_ci(e["positive_agreement"], e["positive_agreement_low"], e["positive_agreement_high"]),
                    _with_ci(e["negative_agreement"], e["negative_agreement_low"], e["negative_agreement_high"]),
                    _with_ci(e["kappa"], e["kappa_low"], e["kappa_high"]),
                ]
                for e in f["per_label"]
            ],
        )
    for c in f["confusions"]:
        out += [f"Confusion matrix, {_md(c['title'])}:", ""]
        out += _md_table(
            [""] + [_md(x) for x in c["labels"]],
            [[f"**{_md(lab)}**"] + list(row) for lab, row in zip(c["labels"], c["matrix"])],
        )
    if f["vs_gold"]:
        out += [_md(vs_gold_title(f["vs_gold"], f.get("vs_gold_adjudicated", False))), ""]
        out += _md_table(
            ["Rater", "n", "Percent agreement", "Kappa (95% CI)"],
            [
                [
                    _md(r["rater"]),
                    r["n"],
                    _pct(r.get("percent_agreement")),
                    _with_ci(r.get("kappa"), r.get("kappa_low"), r.get("kappa_high")),
                ]
                for r in f["vs_gold"]
            ],
        )
    return out


def _md_multi(m: dict) -> list[str]:
    """One multi-select field: each value present vs absent."""
    out = [f"### {_md(m['title'])} (multi-select; each value present vs absent)", ""]
    return out + _md_table(
        ["Value", "n", "Prevalence", "Percent agreement", "Cohen's kappa (95% CI)", "Krippendorff's alpha"],
        [
            [
                _md(r["value"]),
                r["n"],
                _pct(r["prevalence"]),
                _pct(r["percent_agreement"]),
                _with_ci(r["kappa"], r["kappa_low"], r["kappa_high"]),
                _est(r["alpha"]),
            ]
            for r in m["rows"]
        ],
    )


def scope_sentence(scope: str) -> str:
    """Which ratings a multi-round study's flagged rows (and provisional gold) come from, as
    ``flag``, ``status`` and ``gold export`` read the study."""
    if scope.startswith("round "):
        return f"{scope} (as `flag --round` and `gold export --round` read it)."
    return f"{scope} (as `flag`, `status` and `gold export` read the study)."


def _md_adjudication(a: dict) -> list[str]:
    """Decisions, the gold release, each adjudicator and the gold methods per field."""
    out = [
        "## Adjudication",
        "",
        f"- Decisions logged: {a['decisions']}",
        f"- Gold release: {_md(a['release']) if a['release'] else 'none yet (provisional resolution shown)'}",
    ]
    if a.get("scope"):
        out.append(
            f"- {'Flagged rows' if a['release'] else 'Flagged rows and gold'}: {_md(scope_sentence(a['scope']))}"
        )
    for adj in a["adjudicators"]:
        out.append(
            f"- Adjudicator {_md(adj['name'])}: {adj['decisions']} decision{'' if adj['decisions'] == 1 else 's'} logged, "
            f"{'independent' if adj['independent'] else 'NOT independent'}"
            + (f" (also written {', '.join(_md(x) for x in adj['also_written'])})" if adj.get("also_written") else "")
        )
    for fname, m in a["methods"].items():
        out.append(
            f"- {_md(fname)}: {m['unanimous']} unanimous, {m['adjudicated']} adjudicated, "
            + (f"{m['single']} single-rated, " if m.get("single") else "")
            + f"{m['unresolved']} unresolved"
        )
    out.append("")
    return out
