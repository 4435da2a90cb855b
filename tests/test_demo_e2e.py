"""The main job end to end: `goldboard demo` on a real embedded Label Studio.

The demo runs exactly as a new user runs it (the CLI, in-process), on a copy of the
session's migrated Label Studio data dir (so the suite migrates once).  Then:
the report's numbers equal `goldboard agree` on the same ratings, and the HTML
report renders in headless Chromium (not blank).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import livestudio
import pytest
from conftest import invoke_cli

from goldboard.demo import MARKER
from goldboard.text import md_escape

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def demo_run(ls_template, tmp_path_factory):
    root = tmp_path_factory.mktemp("demo") / "goldboard-demo"
    root.mkdir()
    (root / MARKER).write_text("demo\n")
    livestudio.copy_data_dir(ls_template, root / "server")
    res = invoke_cli(*["demo", "--dir", str(root), "-n", "24"])
    return root, res


def test_demo_completes_and_prints_paths(demo_run):
    root, res = demo_run
    assert res.exit_code == 0, res.output
    assert "SIMULATED" in res.output
    for name in ("ratings", "agreement", "flags", "review_sheet", "decisions", "gold", "report"):
        line = next(ln for ln in res.output.splitlines() if ln.strip().startswith(name + " "))
        assert Path(line.split(None, 1)[1].strip()).exists(), line
    assert (root / "study" / "gold" / "v1" / "manifest.json").exists()
    # the steps it announces are numbered 1..N, none skipped
    steps = re.findall(r"\[(\d+)/(\d+)\] [A-Z]", res.output)  # a progress bar may end the line before
    total = int(steps[0][1])
    assert [(int(n), int(t)) for n, t in steps] == [(i, total) for i in range(1, total + 1)], steps
    # the server was stopped (no --keep-server)
    from goldboard.annotate.server import server_status

    assert not server_status(root / "server").running


def test_demo_disagreements_concentrate_at_sufficiency_boundary(demo_run):
    root, _ = demo_run
    res = invoke_cli(*["flag", "--study", str(root / "study"), "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    by_boundary = data["summary"]["by_boundary"]
    suff = by_boundary["sufficiency_vs_optimization"]["count"]
    assert suff == max(b["count"] for b in by_boundary.values()) and suff > 0


def _report_section(md: str, title: str) -> str:
    start = md.index(f"### {title}")
    nxt = md.find("\n### ", start + 4)
    return md[start : nxt if nxt > 0 else None]


def test_report_numbers_equal_goldboard_agree(demo_run):
    root, _ = demo_run
    study = root / "study"
    res = invoke_cli(*["agree", "--study", str(study), "--field", "safety_label", "--format", "json"])
    assert res.exit_code == 0, res.output
    agree = json.loads(res.stdout)
    md = (root / "outputs" / "report.md").read_text(encoding="utf-8")
    section = _report_section(md, "Safety label")
    rows = [ln for ln in section.splitlines() if ln.startswith("| ") and not ln.startswith("| Statistic")]
    checked = 0
    for s in agree["statistics"]:
        if s["group"] is not None or s["value"] is None:
            continue
        value = f"{s['value']:.3f}"
        ci = f"{s['ci_low']:.3f} to {s['ci_high']:.3f}"
        assert any(f"| {value} | {ci} |" in r for r in rows), (s, rows)
        checked += 1
    assert checked >= 5
    assert f"{agree['n_items']} items" in section


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def test_report_renders_in_headless_chromium(demo_run, tmp_path):
    root, _ = demo_run
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed: .ci/run installs the Debian package 'chromium'")
        pytest.skip("chromium not installed (apt-get install chromium)")
    shot = tmp_path / "report.png"
    report = (root / "outputs" / "report.html").resolve()
    proc = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,2000",
            f"--screenshot={shot}",
            report.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shot.exists(), proc.stderr[-2000:]
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    non_white = (img < 0.95).any(axis=2).mean()
    assert img.std() > 0.05 and non_white > 0.02, f"screenshot looks blank (non-white share {non_white:.3f})"
    # the page itself: no template error, the simulated banner and a heatmap image are there
    html = report.read_text(encoding="utf-8")
    assert "Simulated data" in html and html.count("data:image/png;base64,") >= 1
    assert not re.search(r"<script", html, re.I)


def test_report_scoring_section_equals_goldboard_score(demo_run, tmp_path):
    root, _ = demo_run
    study, preds = root / "study", root / "inputs" / "outputs.jsonl"
    res = invoke_cli(*["score", "--study", str(study), "--predictions", str(preds), "--format", "json"])
    assert res.exit_code == 0, res.output
    score = json.loads(res.stdout)
    out = tmp_path / "report.md"
    res = invoke_cli(
        *["report", "--study", str(study), "--predictions", str(preds), "--format", "markdown", "-o", str(out)]
    )
    assert res.exit_code == 0, res.output
    md = out.read_text(encoding="utf-8")
    assert "## Model scores against gold" in md
    for g in score["groups"]:
        acc = g["accuracy"]
        # as Markdown shows it: the brackets escaped (md_escape: no text in a cell can form a link)
        cell = md_escape(f"{acc['estimate']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}]")
        assert cell in md, (g["model"], acc, cell)
        # each model is scored on its own outputs only
        assert g["n"] < score["gold"]["items"]


def test_demo_runs_a_calibration_round_then_a_main_round(demo_run):
    root, res = demo_run
    from goldboard.study import Study

    st = Study.open(root / "study")
    r1, r2 = st.round(1), st.round(2)
    assert r1.calibration and r1.guideline_version == "v1.0" and not r2.calibration
    # the calibration set (stratified by error type) and the main round do not overlap
    u = st.units()
    cal = {c for c, rs in zip(u["case_id"], u["rounds"]) if 1 in rs}
    main = {c for c, rs in zip(u["case_id"], u["rounds"]) if 2 in rs}
    assert cal and main and not cal & main
    assert "Stopping rule kappa_lower>=0.4 (safety_label)" in res.output
    assert ("calibration can stop" in res.output) or ("continue calibrating" in res.output)


def test_demo_report_shows_rule_plan_reviewer_tables_supplement_and_pdf(demo_run, tmp_path):
    root, res = demo_run
    out = root / "outputs"
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "## Calibration rounds and the stopping rule" in md and "kappa_lower&gt;=0.4" in md
    assert "Sample size: Planning inputs came from pilot round 1" in md or "plan skipped" in res.output
    for title in (
        "## Gold-label distribution",
        "## Disagreements and their resolution, by named boundary",
        "## Time on task",
    ):
        assert title in md
    sup = out / "supplement"
    assert (sup / "calibration.csv").exists() and (sup / "resolution_by_boundary.csv").exists()
    # the resolution table counts the study's boundary disagreements as `goldboard flag --study` reads them
    # (per item, the latest round every rater rated: the calibration round's items too, as gold export does)
    flag = json.loads(invoke_cli("flag", "--study", str(root / "study"), "--format", "json").stdout)
    import pandas as pd

    resolution = pd.read_csv(sup / "resolution_by_boundary.csv")
    for name, b in flag["summary"]["by_boundary"].items():
        if b["count"]:
            rows = resolution[resolution["Boundary"] == name]
            assert int(rows["n"].sum()) == b["count"] == int(rows["Disagreements"].iloc[0]), name
    # time on task: the simulated lead times, medians per rater
    ratings = pd.read_csv(root / "study" / "rounds" / "2" / "ratings.csv")
    sub = ratings[ratings["field"] == "safety_label"].drop_duplicates(["item_id", "rater"])
    tpr = pd.read_csv(sup / "time_per_rater.csv")
    for rater, part in sub.groupby("rater"):
        assert float(tpr.loc[tpr["Group"] == rater, "Median (s)"].iloc[0]) == pytest.approx(
            part["lead_time"].median(), abs=0.05
        )
    pdf = out / "report.pdf"
    if _chromium() is None:
        assert "PDF skipped" in res.output
        pytest.skip("chromium not installed: the demo skipped the PDF and said so")
    assert pdf.read_bytes()[:5] == b"%PDF-"
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm not installed (apt-get install poppler-utils)")
    subprocess.run(["pdftoppm", "-r", "40", "-png", str(pdf), str(tmp_path / "page")], check=True, timeout=120)
    pages = sorted(tmp_path.glob("page*.png"))
    assert len(pages) >= 3
    import matplotlib.image as mpimg

    for p in pages[:2]:
        img = mpimg.imread(p)[..., :3]
        assert (img < 0.9).any(axis=2).mean() > 0.01, p


def test_demo_llm_judge_in_terminal_report_and_methods(demo_run):
    """The demo's simulated LLM judge: its alt-test in the terminal, the report section and the
    methods text, with the numbers `goldboard judge --study` gives; never a rater."""
    root, res = demo_run
    study = root / "study"
    out = invoke_cli("judge", "--study", study, "--judge", "sim_llm_judge", "--format", "json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    (d,) = data["judges"]
    assert d["judge"] == "sim_llm_judge" and data["epsilon"] == 0.2
    assert (
        f"sim_llm_judge (simulated LLM judge): winning rate {d['winning_rate']:.2f} "
        f"({'passed' if d['passed'] else 'failed'}), rho {d['advantage_probability']:.2f}" in res.output
    )
    md = (root / "outputs" / "report.md").read_text(encoding="utf-8")
    assert "## Can an LLM judge replace a clinician?" in md
    assert f"sim_llm_judge (rho = {d['advantage_probability']:.2f})" in md  # the methods text
    assert f"| sim_llm_judge | {d['winning_rate']:.2f} | {d['advantage_probability']:.2f} |" in md
    assert "sim_llm_judge" not in (study / "rounds" / "2" / "ratings.csv").read_text(encoding="utf-8")
    assert "sim_llm_judge" not in (root / "outputs" / "agreement.json").read_text(encoding="utf-8")


def test_demo_real_llm_judge_runs_with_the_extra_or_says_why_not(demo_run):
    """With the [judge] extra, a real local model labels a few items through `judge run`'s workflow
    (provenance in judges/gemma_local/responses.jsonl); without it, one line says it was skipped."""
    from goldboard.workflows.judge_local import judge_extra_missing

    root, res = demo_run
    responses = root / "study" / "judges" / "gemma_local" / "responses.jsonl"
    if judge_extra_missing():
        assert res.output.count("Real LLM judge skipped: the [judge] extra is not installed") == 1
        assert not responses.exists()
        return
    labelled = re.search(r"gemma_local: (\d) of 3 items labelled", res.output)
    assert labelled, res.output
    recs = [json.loads(line) for line in responses.read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 3 and all(r["model_reported"] == "gemma-3-270m" for r in recs)
    assert "gemma_local" not in (root / "study" / "rounds" / "2" / "ratings.csv").read_text(encoding="utf-8")
    md = (root / "outputs" / "report.md").read_text(encoding="utf-8")
    if labelled.group(1) == "0":  # a 270M model may abstain on all three: the demo says so, the report has no trace
        assert "no label recorded" in res.output and "gemma_local" not in md
    else:  # its labels, provenance and run sentence reach the report
        assert "gemma_local's labels: gemma-3-270m (the model the endpoint reported)" in md
        assert "Judge gemma_local was gemma-3-270m on a local server" in md
