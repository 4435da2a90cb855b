"""Where the coverage record says a default 95% interval covered less than 93% for a study of this
shape (items, raters, categories, prevalence), every output that prints the interval names the
statistic and the cell: `goldboard agree` (table, Markdown, JSON) and the report's methods (Markdown
and HTML).  The per-label positive specific agreement, which the record has at 45-80% at 30-50
skewed items, was named nowhere, and `goldboard agree` named nothing."""

from __future__ import annotations

import html
import json
from pathlib import Path

from conftest import run_cli as run
from test_claims_audit import TABLE, S, U, methods

from goldboard.analysis import coverage as COV

P, I, X = "Partially Supported", "Insufficient Information", "Unsafe"
SPECIFIC = "specific agreement (rarest label)"  # the record's name (benchmarks/bench_coverage.py)
#: the words for each simulated statistic a nominal field reports (two raters, more raters)
WORDS = {
    "percent_agreement": "percent agreement",
    "cohen_kappa": "Cohen's kappa",
    "fleiss_kappa": "Fleiss' kappa",
    "gwet_ac1": "Gwet's AC1",
    "krippendorff_alpha (nominal)": "Krippendorff's alpha (nominal level)",
    SPECIFIC: "positive specific agreement of the rarest label",
}


def _study(tmp: Path, name: str, raters: list[str], labels: list[list[str]], n: int) -> Path:
    """A study of the 5-category mtb_unsafe schema: rater j gives item i ``labels[j][i % len]``."""
    table = tmp / f"{name}.csv"
    rows = [f"c{i},{r},{lab[i % len(lab)]}\n" for i in range(n) for r, lab in zip(raters, labels)]
    table.write_text("case_id,rater,label\n" + "".join(rows), encoding="utf-8")
    s = tmp / name
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", ",".join(raters))
    run("pull", "--study", s, "--from-table", table, *TABLE)
    return s


def _skewed2(tmp: Path) -> Path:
    """30 items, two raters, 'Supported' about 75% of the ratings: the cell (30, 2, 5, skewed)."""
    return _study(tmp, "skewed", ["onc_a", "onc_b"], [[S] * 8 + [P, U, I, X], [S] * 7 + [U, P, U, S, X]], 30)


def _said(text: str, cell: tuple) -> str:
    """The clause of ``text`` on ``cell`` (up to the next ';')."""
    n, m, k, prev = cell
    where = f"({n} items, {m} raters, {k} categories, {prev} prevalence)"
    assert where in text, text
    return text.split(where, 1)[1].split(";")[0]


def _expect(said: str, cell: tuple, reported: set[str]) -> None:
    low = {b: cov for b, cov, _ in COV.shortfalls(cell) if b in reported}
    assert low, f"the record has no shortfall at {cell}: the study does not test the naming"
    for bench, words in WORDS.items():
        if bench in low:
            assert f"{low[bench]:.1%} for {words}" in said, (bench, said)
        else:
            assert f"for {words}" not in said, (bench, said)


def test_agree_names_every_statistic_and_the_cell_below_93(tmp_path):
    s = _skewed2(tmp_path)
    cell = (30, 2, 5, "skewed")
    reported = {"percent_agreement", "cohen_kappa", "gwet_ac1", "krippendorff_alpha (nominal)", SPECIFIC}
    table = " ".join(run("agree", "--study", s).stdout.split())
    assert "Coverage: in goldboard's seeded coverage simulation (2000 studies per cell" in table
    _expect(_said(table, cell), cell, reported)
    assert SPECIFIC in {b for b, _, _ in COV.shortfalls(cell)}
    md = " ".join(run("agree", "--study", s, "--format", "markdown").stdout.replace("\\", "").split())
    _expect(_said(md, cell), cell, reported)
    got = json.loads(run("agree", "--study", s, "--format", "json").stdout)
    _expect(_said(got["coverage"], cell), cell, reported)


def test_agree_says_nothing_of_coverage_where_every_interval_held_or_none_is_the_default(tmp_path):
    s = _study(tmp_path, "big", ["onc_a", "onc_b"], [[S, U, P, S, U, P, S], [S, U, P, S, U, P, U]], 300)
    assert not COV.shortfalls((300, 2, 5, "balanced"))
    assert "Coverage:" not in run("agree", "--study", s).stdout
    assert "coverage" not in json.loads(run("agree", "--study", s, "--format", "json").stdout)
    wald = run("agree", "--study", _skewed2(tmp_path), "--ci", "wald").stdout
    assert "Coverage:" not in wald  # the record is of the Wilson interval: it says nothing of Wald's


def test_agree_names_fleiss_kappa_for_three_raters(tmp_path):
    labels = [[S] * 8 + [P, U, I, X], [S] * 7 + [U, P, U, S, X], [S] * 9 + [U, P, X]]
    s = _study(tmp_path, "three", ["onc_a", "onc_b", "onc_c"], labels, 30)
    cell = (30, 3, 5, "skewed")
    reported = {"percent_agreement", "fleiss_kappa", "gwet_ac1", "krippendorff_alpha (nominal)", SPECIFIC}
    text = " ".join(run("agree", "--study", s).stdout.split())
    said = _said(text, cell)
    _expect(said, cell, reported)
    assert "for Fleiss' kappa" in said


def test_the_report_names_specific_agreement_in_markdown_and_html(tmp_path):
    s = _skewed2(tmp_path)
    cell = (30, 2, 5, "skewed")
    reported = {"percent_agreement", "cohen_kappa", "gwet_ac1", "krippendorff_alpha (nominal)", SPECIFIC}
    text = " ".join(methods(s).split())
    _expect(_said(text, cell), cell, reported)
    out = tmp_path / "r.html"
    run("report", "--study", s, "-o", out)
    page = " ".join(html.unescape(out.read_text(encoding="utf-8")).split())
    _expect(_said(page, cell), cell, reported)
