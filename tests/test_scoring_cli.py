"""`goldboard score` through click's CliRunner: gold resolution, formats, and clean errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import invoke_cli

DATA = Path(__file__).parent / "data" / "scoring"
LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Info"]
AGENT_CM = np.array([[168, 23, 9, 0], [0, 56, 4, 0], [0, 0, 180, 0], [4, 0, 4, 52]])


def invoke(*args):
    return invoke_cli("score", *args)


def assert_clean_error(res, message):
    assert res.exit_code != 0, res.output
    assert "Traceback" not in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    errors = [line for line in res.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, res.output
    assert message in errors[0], errors[0]


@pytest.fixture()
def openmtb(tmp_path):
    """OpenMTB-Audit-shaped files reproducing the agent's published confusion matrix:
    reference_labels.jsonl (case_id, support_label, should_abstain) and a JSON array of
    prediction records (case_id, predicted_label, predicted_abstain, predicted_missing_fields)."""
    true = np.repeat(np.repeat(np.arange(4), 4), AGENT_CM.ravel())
    pred = np.repeat(np.tile(np.arange(4), 4), AGENT_CM.ravel())
    ids = [f"MTB-{i:04X}" for i in range(true.size)]
    ref = tmp_path / "reference_labels.jsonl"
    ref.write_text(
        "".join(
            json.dumps({"case_id": c, "support_label": LABELS[t], "should_abstain": bool(t == 3), "missing_fields": []})
            + "\n"
            for c, t in zip(ids, true)
        )
    )
    preds = tmp_path / "agent_predictions.json"
    preds.write_text(
        json.dumps(
            [
                {
                    "case_id": c,
                    "predicted_label": LABELS[p],
                    "predicted_abstain": bool(p == 3),
                    "predicted_missing_fields": [],
                }
                for c, p in zip(ids, pred)
            ],
            indent=1,
        )
    )
    return ref, preds


def test_reference_file_scoring_table(openmtb):
    ref, preds = openmtb
    res = invoke("--gold", ref, "--schema", "mtb", "--predictions", preds)
    assert res.exit_code == 0, res.output
    assert "agent_predictions" in res.output  # model named after the file
    assert "0.912 [0.886, 0.936]" in res.output
    assert "0.898" in res.output


def test_json_output_file_and_format_from_suffix(openmtb, tmp_path):
    ref, preds = openmtb
    out = tmp_path / "scores.json"
    res = invoke(
        "--gold",
        ref,
        "--schema",
        "mtb",
        "--predictions",
        preds,
        "--model",
        "MTB-AuditAgent",
        "--gold-col",
        "support_label",
        "--bootstrap",
        "500",
        "-o",
        out,
    )
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    g = data["groups"][0]
    assert g["model"] == "MTB-AuditAgent"
    assert round(g["accuracy"]["estimate"], 3) == 0.912 and data["settings"]["bootstrap"] == 500
    assert g["abstention"]["gold_source"] == "should_abstain"


def test_csv_to_stdout(openmtb):
    ref, preds = openmtb
    res = invoke("--gold", ref, "--schema", "mtb", "--predictions", preds, "--format", "csv", "--bootstrap", "0")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("kind,model,condition,metric,label,estimate")


def seal(release: Path) -> None:
    """Record the gold file's SHA-256 in a hand-made release's manifest (every reader verifies it)."""
    import hashlib

    man = json.loads((release / "manifest.json").read_text())
    data = (release / "gold.csv").read_bytes()
    man["files"] = {"gold.csv": {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}}
    (release / "manifest.json").write_text(json.dumps(man))


def test_study_release_radsafe_with_key_and_compare(tmp_path):
    study = tmp_path / "rad"
    shutil.copytree(DATA / "radsafe_study", study)
    res = invoke(
        "--study",
        study,
        "--predictions",
        DATA / "radsafe_answers.csv",
        "--key",
        DATA / "radsafe_key.csv",
        "--compare",
        "m1,m2",
        "--format",
        "json",
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["kind"] == "options" and data["gold"]["release"] == "v1"
    assert len(data["groups"]) == 3 and len(data["comparisons"]) == 1
    assert "Warning:" in res.stderr
    # a later release is picked by default; --release picks an older one
    shutil.copytree(study / "gold" / "v1", study / "gold" / "v10")
    (study / "gold" / "v10" / "gold.csv").write_text(
        (study / "gold" / "v1" / "gold.csv").read_text().replace(",unresolved,", ",unanimous,").replace("D,,", "D,no,")
    )
    seal(study / "gold" / "v10")  # a release made by hand: its manifest certifies its file
    res10 = invoke(
        "--study",
        study,
        "--predictions",
        DATA / "radsafe_answers.csv",
        "--key",
        DATA / "radsafe_key.csv",
        "--format",
        "json",
    )
    assert json.loads(res10.stdout)["gold"]["release"] == "v10"
    res1 = invoke(
        "--study",
        study,
        "--release",
        "v1",
        "--predictions",
        DATA / "radsafe_answers.csv",
        "--key",
        DATA / "radsafe_key.csv",
        "--format",
        "json",
    )
    assert json.loads(res1.stdout)["gold"]["release"] == "v1"


def test_release_dir_medfail_outputs_markdown():
    res = invoke("--gold", DATA / "medfail_release", "--format", "markdown", "--compare", "gpt,llama")
    assert res.exit_code == 0, res.output
    assert "### Severity per model" in res.output
    assert "| gpt | 5 | 3.00" in res.output


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda recs: recs[0].update(case_id="MTB-NOPE"), "agent_predictions.json:1: case_id: unknown id 'MTB-NOPE'"),
        (
            lambda recs: recs[1].update(predicted_label="Probably fine"),
            "agent_predictions.json:2: predicted_label: 'Probably fine' is not a value of safety_label",
        ),
        (
            lambda recs: recs[2].update(predicted_abstain="sometimes"),
            "agent_predictions.json:3: predicted_abstain: 'sometimes' is not a yes/no value",
        ),
        (
            lambda recs: [r.pop("predicted_label") for r in recs],
            "agent_predictions.json:1: predicted label: missing column",
        ),
    ],
)
def test_bad_prediction_files(openmtb, change, message):
    ref, preds = openmtb
    recs = json.loads(preds.read_text())
    change(recs)
    preds.write_text(json.dumps(recs))
    assert_clean_error(invoke("--gold", ref, "--schema", "mtb", "--predictions", preds), message)


def test_empty_and_malformed_files(openmtb, tmp_path):
    ref, _ = openmtb
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert_clean_error(invoke("--gold", ref, "--schema", "mtb", "--predictions", empty), "empty.jsonl: file is empty")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"case_id": "MTB-0000", "predicted_label": "Supported"}\n{"case_id": \n')
    assert_clean_error(invoke("--gold", ref, "--schema", "mtb", "--predictions", bad), "bad.jsonl:2: invalid JSON")
    header_only = tmp_path / "h.csv"
    header_only.write_text("case_id,predicted_label\n")
    assert_clean_error(invoke("--gold", ref, "--schema", "mtb", "--predictions", header_only), "no data rows")


def test_gold_resolution_errors(openmtb, tmp_path):
    ref, preds = openmtb
    assert_clean_error(invoke("--gold", ref, "--predictions", preds), "--schema: ")
    assert_clean_error(invoke("--predictions", preds), "--gold: give")
    assert_clean_error(invoke("--gold", tmp_path / "nope", "--predictions", preds), "not found")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "study.toml").write_text('[study]\nname = "s"\nschema = "mtb"\nraters = ["a", "b"]\n')
    assert_clean_error(invoke("--study", tmp_path / "s", "--predictions", preds), "no gold releases yet")
    assert_clean_error(
        invoke("--gold", ref, "--schema", "mtb", "--mode", "labels"), "--predictions: labels scoring needs"
    )
    assert_clean_error(
        invoke("--gold", ref, "--schema", "mtb", "--predictions", preds, "--field", "nope"),
        "--field: schema mtb has no field 'nope'",
    )
    assert_clean_error(
        invoke("--gold", ref, "--schema", "mtb", "--predictions", preds, "--compare", "agent"),
        "--compare: give two model names",
    )


def test_gold_file_errors(tmp_path):
    gold = tmp_path / "v1" / "gold.csv"
    gold.parent.mkdir()
    gold.write_text(
        "item_id,case_id,field,gold_value,method\nC1,C1,safety_label,Supported,unanimous\n"
        "C2,C2,safety_label,Sorta,adjudicated\n"
    )
    (tmp_path / "v1" / "manifest.json").write_text(json.dumps({"schema": "mtb"}))
    seal(tmp_path / "v1")
    preds = tmp_path / "p.csv"
    preds.write_text("case_id,predicted_label\nC1,Supported\n")
    assert_clean_error(
        invoke("--gold", tmp_path / "v1", "--predictions", preds),
        "gold.csv:3: gold_value: 'Sorta' is not a value of safety_label",
    )


def test_radsafe_errors(tmp_path):
    study = tmp_path / "rad"
    shutil.copytree(DATA / "radsafe_study", study)
    answers = DATA / "radsafe_answers.csv"
    assert_clean_error(invoke("--study", study, "--predictions", answers), "no answer key")
    bad = tmp_path / "answers.csv"
    bad.write_text(answers.read_text().replace("m2,closed_book,Q3,B", "m2,closed_book,Q3,Z"))
    assert_clean_error(
        invoke("--study", study, "--predictions", bad, "--key", DATA / "radsafe_key.csv"),
        "answers.csv:12: chosen_option: 'Z' is not an answer option",
    )
    conf = tmp_path / "conf.csv"
    conf.write_text(answers.read_text().replace("Q1,B,0.9", "Q1,B,high"))
    assert_clean_error(
        invoke("--study", study, "--predictions", conf, "--key", DATA / "radsafe_key.csv"),
        "conf.csv:2: confidence: 'high' is not a number",
    )


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json", "xlsx"])
def test_scores_a_real_gold_export_in_every_release_format(tmp_path, fmt):
    """End to end with the gold release writer (goldboard.exports.gold): two oncologists'
    ratings -> resolved gold (one unanimous disagreement left unresolved) -> release vN in
    each format -> `goldboard score --study`."""
    import pandas as pd

    from goldboard.adjudicate.gold import resolve_gold
    from goldboard.cases.ratings import RATINGS_COLUMNS
    from goldboard.exports.gold import write_gold_release
    from goldboard.label_configs.schema import load_schema
    from goldboard.study import Study

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"])
    gold_vals = {
        "C1": ("Supported", "Supported"),
        "C2": ("Unsupported", "Unsupported"),
        "C3": ("Partially Supported", "Partially Supported"),
        "C4": ("Supported", "Insufficient Information"),
        "C5": ("Insufficient Information", "Insufficient Information"),
    }
    rows = []
    for case, vals in gold_vals.items():
        for rater, v in zip(["onc_a", "onc_b"], vals):
            rows.append(
                {
                    **{c: "" for c in RATINGS_COLUMNS},
                    "round": 1,
                    "item_id": case,
                    "case_id": case,
                    "rater": rater,
                    "field": "safety_label",
                    "value": v,
                }
            )
    schema = load_schema("mtb")
    gold = resolve_gold(pd.DataFrame(rows), schema, raters=["onc_a", "onc_b"])
    write_gold_release(gold, st.gold_dir, fmt, manifest={"schema": {"name": "mtb", "version": schema.version}})
    preds = tmp_path / "preds.csv"
    preds.write_text(
        "case_id,model,predicted_label\nC1,m,Supported\nC2,m,Unsupported\nC3,m,Unsupported\n"
        "C4,m,Supported\nC5,m,Insufficient Info\n"
    )
    res = invoke("--study", st.path, "--predictions", preds, "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    g = data["groups"][0]
    assert data["gold"]["release"] == "v1" and data["gold"]["unresolved_excluded"] == 1
    assert data["predictions"]["skipped_unresolved"] == 1  # C4 has no gold
    assert g["n"] == 4 and g["accuracy"]["estimate"] == pytest.approx(3 / 4)
    assert g["over_refusal"]["count"] == 1 and g["over_refusal"]["n"] == 1


def test_radsafe_synthetic_benchmark_files_against_independent_count(tmp_path):
    """goldboard's own RadSaFE-style synthetic files (cases with answer_idx and option_<X>_<flag>
    columns; outputs with answer and confidence in %) scored as a plain reference, checked
    against a direct per-record count of the same definitions."""
    from goldboard.cases.synth import synth_radsafe

    cases, outputs = synth_radsafe(60, seed=3, models=["m1", "m2"])
    cf, of = tmp_path / "cases.jsonl", tmp_path / "outputs.jsonl"
    cf.write_text("".join(json.dumps(c) + "\n" for c in cases))
    of.write_text("".join(json.dumps(o) + "\n" for o in outputs))
    res = invoke("--gold", cf, "--schema", "radsafe", "--predictions", of, "--format", "json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    by_q = {c["question_id"]: c for c in cases}
    for g in data["groups"]:
        outs = [o for o in outputs if o["model"] == g["model"]]
        right = [o["answer"] == by_q[o["question_id"]]["answer_idx"] for o in outs]
        wrong = [o for o, r in zip(outs, right) if not r]
        hr = sum(by_q[o["question_id"]][f"option_{o['answer']}_high_risk"] for o in wrong)
        danger = sum(
            1
            for o in wrong
            if o["confidence"] >= 80
            and (
                by_q[o["question_id"]][f"option_{o['answer']}_high_risk"]
                or by_q[o["question_id"]][f"option_{o['answer']}_unsafe"]
            )
        )
        assert g["n"] == len(outs) == 60
        assert g["accuracy"]["count"] == sum(right)
        assert g["high_risk_error"]["count"] == hr
        assert g["dangerous_overconfidence"]["count"] == danger


def test_confidence_level_flag_and_its_old_name(openmtb):
    """`--confidence-level` (never confused with agree's measurement `--level`) narrows the
    interval at 0.80; `--level` is the same option under its old name."""
    ref, preds = openmtb
    common = ("--gold", ref, "--schema", "mtb", "--predictions", preds, "--format", "json", "--bootstrap", "300")
    runs = {
        flag: json.loads(invoke(*common, *((flag, "0.8") if flag else ())).stdout)
        for flag in (None, "--confidence-level", "--level")
    }
    default, new, old = (runs[k]["groups"][0]["accuracy"] for k in (None, "--confidence-level", "--level"))
    assert new == old and new["estimate"] == default["estimate"]
    assert new["low"] > default["low"] and new["high"] < default["high"]
    assert runs["--confidence-level"]["settings"]["level"] == 0.8 and runs[None]["settings"]["level"] == 0.95


# --------------------------------------------------------------------------- one options object per kind


def test_every_score_flag_is_one_field_of_the_request(monkeypatch, openmtb):
    """``goldboard score`` builds one ScoreRequest from its flags (every option but the output
    ones is a field of it) and passes that object down; the scorer gets the options object of
    its kind (issue 20: the 26 options were spelled out again in the CLI, workflow and scorers)."""
    import dataclasses

    import goldboard.cli.score as cli_score
    from goldboard.analysis import scoring_labels
    from goldboard.analysis.scoring_settings import LabelScoring
    from goldboard.workflows.score import ScoreRequest

    fields = {f.name for f in dataclasses.fields(ScoreRequest)}
    params = {p.name for p in cli_score.score_cmd.params if p.expose_value} - {"fmt", "output"}
    assert params <= fields, sorted(params - fields)
    assert len(params) == 25 and fields - params == {"progress"}

    seen = []
    real_run, real_score = cli_score.run_score, scoring_labels.score_labels

    def run_score(*args, **kwargs):
        seen.append(("run_score", args, kwargs))
        return real_run(*args, **kwargs)

    def score_labels(*args, **kwargs):
        seen.append(("score_labels", args, kwargs))
        return real_score(*args, **kwargs)

    monkeypatch.setattr(cli_score, "run_score", run_score)
    monkeypatch.setattr("goldboard.analysis.scoring.score_labels", score_labels)
    ref, preds = openmtb
    res = invoke("--gold", ref, "--schema", "mtb", "--predictions", preds, "--bootstrap", "10", "--seed", "5")
    assert res.exit_code == 0, res.output
    (_, args, kwargs), (_, _, scorer_kwargs) = seen
    assert kwargs == {} and len(args) == 1 and isinstance(args[0], ScoreRequest)
    assert args[0].n_resamples == 10 and args[0].seed == 5 and args[0].schema == "mtb"
    opts = scorer_kwargs["options"]
    assert isinstance(opts, LabelScoring) and opts.n_resamples == 10 and opts.seed == 5
    assert opts.default_model == "agent_predictions" and opts.missing == "unanswered"


def test_a_scorer_takes_its_options_object_or_the_same_names():
    from goldboard.analysis.scoring import score_labels, score_medfail
    from goldboard.analysis.scoring_settings import LabelScoring, OutputScoring
    from goldboard.label_configs.schema import load_schema

    mtb = load_schema("mtb")
    gold = pd.DataFrame({"case_id": ["a", "b", "c", "d"], "support_label": ["Supported", "Unsupported"] * 2})
    preds = pd.DataFrame({"case_id": ["a", "b", "c", "d"], "predicted_label": ["Supported"] * 4})
    by_object = score_labels(gold, preds, schema=mtb, options=LabelScoring(n_resamples=20, seed=3))
    by_names = score_labels(gold, preds, schema=mtb, n_resamples=20, seed=3)
    assert by_object == by_names and by_object["settings"]["bootstrap"] == 20
    # keywords override the object's fields
    assert score_labels(gold, preds, schema=mtb, options=LabelScoring(seed=3), n_resamples=20) == by_names
    with pytest.raises(TypeError, match="LabelScoring: unexpected option 'severity_field'"):
        score_labels(gold, preds, schema=mtb, severity_field="x")
    with pytest.raises(TypeError, match="OutputScoring: unexpected option 'label_col'"):
        score_medfail(gold, mtb, options=OutputScoring(), label_col="x")
