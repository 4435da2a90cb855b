"""Synthetic cases: determinism, clinical plausibility invariants, and a clean round trip through load_units."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import pytest
from conftest import invoke_cli

from goldboard.cases import load_units, synth
from goldboard.cases.synth import DRIVERS, MISSING_VOCAB, MTB_LABELS, synthesize, write_records
from goldboard.errors import GoldboardError

LABEL_OF_ERROR = {
    "none": "Supported",
    "wrong_drug": "Unsupported",
    "wrong_context": "Unsupported",
    "hallucinated_variant": "Unsupported",
    "missing_critical_information": "Insufficient Information",
    "unsafe_overconfidence": "Partially Supported",
}
FIELD_OF_MISSING = {
    "stage": "stage",
    "ecog_status": "ecog",
    "prior_therapy": "prior_therapy",
    "pdl1_expression": "pdl1",
    "brain_metastasis": "brain_mets",
    "biomarker_validation": "biomarker_assay",
}
DRIVER = {d.key: d for d in DRIVERS}


@pytest.fixture(scope="module")
def mtb():
    return synthesize("mtb", 3000, seed=11, models=["m-bal", "m-refuse", "m-conf"])


def _drugs(therapy: str) -> set[str]:
    return {p.strip() for p in re.sub(r"\(.*?\)", "", therapy).split("+")}


@pytest.mark.parametrize("schema", ["mtb", "medfail", "radsafe"])
def test_deterministic_in_seed(schema):
    a = synthesize(schema, 60, seed=3)
    b = synthesize(schema, 60, seed=3)
    c = synthesize(schema, 60, seed=4)
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a[0]) != json.dumps(c[0])


def test_every_record_is_synthetic(mtb):
    for schema in ("medfail", "radsafe"):
        cases, outs = synthesize(schema, 30, seed=1)
        assert all(r["synthetic"] is True for r in cases + outs)
    cases, outs = mtb
    assert all(r["synthetic"] is True for r in cases + outs)


def test_mtb_reference_labels_follow_the_construction(mtb):
    cases, _ = mtb
    assert Counter(c["error_type"] for c in cases).keys() == LABEL_OF_ERROR.keys()
    for c in cases:
        assert c["support_label"] == LABEL_OF_ERROR[c["error_type"]], c
        assert c["case_type"] == ("clean" if c["error_type"] == "none" else "adversarial")
        assert c["should_abstain"] == (
            c["error_type"] in ("missing_critical_information", "hallucinated_variant", "unsafe_overconfidence")
        )
        # missing_fields are exactly the blanked fields
        assert set(c["missing_fields"]) <= set(MISSING_VOCAB)
        for vocab, key in FIELD_OF_MISSING.items():
            assert (c[key] is None) == (vocab in c["missing_fields"]), (vocab, c)
        if c["error_type"] == "missing_critical_information":
            assert c["missing_fields"] and c["missing_info_flags"] == c["missing_fields"]
        elif c["error_type"] == "hallucinated_variant":
            assert c["missing_fields"] == [] and c["missing_info_flags"] == ["variant_actionability"]
            assert c["ground_truth_therapy"] is None
        else:
            assert c["missing_fields"] == [] and c["missing_info_flags"] == []


def test_mtb_clinical_plausibility(mtb):
    cases, _ = mtb
    other_context = set(synth.OTHER_CONTEXT_DRUGS)
    for c in cases:
        d = DRIVER.get(c["profile_key"])
        e, t, setting = c["error_type"], c["proposed_therapy"], c["treatment_setting"]
        assert 32 <= c["age"] <= 89
        if c["stage"] is not None:
            assert c["stage"].startswith(
                {"metastatic": "Stage IV", "locally_advanced": "Stage III", "adjuvant": "Stage I"}[setting]
            ), c
        if setting == "adjuvant" and e != "hallucinated_variant":
            assert c["profile_key"] in ("EGFR_exon19del", "EGFR_L858R", "ALK_fusion")
            assert c["brain_mets"] in (False, None)
        if setting != "metastatic" and e != "hallucinated_variant":
            assert c["profile_key"] not in ("KRAS_G12C", "HER2_mutation", "ROS1_fusion", "BRAF_V600E")
        if e in ("none", "missing_critical_information", "unsafe_overconfidence"):
            assert t == c["ground_truth_therapy"]
            if setting == "metastatic":
                allowed = set(d.therapies) | {synth.SQUAMOUS_CHEMO_IO}
                assert t in allowed, c
            if c["profile_key"] == "ROS1_fusion" and c["brain_mets"]:
                assert t != "crizotinib"  # poor CNS activity
            if c["histology"] == "Lung squamous cell carcinoma":
                assert "pemetrexed" not in t
            if d.later_line_only and c["prior_therapy"] is not None:
                assert c["prior_therapy"] != synth.PRIOR_NAIVE  # sotorasib/adagrasib/T-DXd after prior therapy
            if c["profile_key"] == "PDL1_high" and c["pdl1"] is not None:
                assert int(re.search(r"\d+", c["pdl1"]).group()) >= 50
        if e == "none":
            assert c["ecog"] <= 2
        if e == "unsafe_overconfidence":
            assert c["ecog"] >= 3
        if e == "wrong_drug":
            if "pemetrexed" in t and c["histology"] == "Lung squamous cell carcinoma":
                continue
            own = set().union(*(_drugs(x) for x in d.therapies))
            assert not (_drugs(t) & own), c
        if e == "wrong_context":
            assert t in other_context
        # the narrative shows the proposal and the alteration, and never a blanked value
        s = c["patient_summary"]
        assert t in s and c["genomic_alteration"] in s
        if c["ecog"] is None:
            assert not re.search(r"ECOG performance status \d", s)
        if c["stage"] is None:
            assert not re.search(r"stage I", s)


def test_mtb_outputs_one_per_case_and_model(mtb):
    cases, outs = mtb
    assert len(outs) == 3 * len(cases)
    assert len({o["output_id"] for o in outs}) == len(outs)
    assert Counter(o["model"] for o in outs) == {"m-bal": 3000, "m-refuse": 3000, "m-conf": 3000}
    by_id = {c["case_id"]: c for c in cases}
    for o in outs:
        assert o["predicted_label"] in MTB_LABELS
        assert o["output"].endswith(f"Assessment: {o['predicted_label']}.")
        assert o["output"][0].isupper()
        assert o["case_id"] in by_id
        if o["predicted_label"] != "Insufficient Information":
            assert o["predicted_missing_fields"] == []


def test_mtb_model_profiles_show_label_collapse(mtb):
    cases, outs = mtb
    ref = {c["case_id"]: c["support_label"] for c in cases}

    def retention(model, label):
        got = [o["predicted_label"] == label for o in outs if o["model"] == model and ref[o["case_id"]] == label]
        return np.mean(got)

    # Partially Supported is mostly lost by every simulated model (the seed study's finding) ...
    assert all(retention(m, "Partially Supported") < 0.35 for m in ("m-bal", "m-refuse", "m-conf"))

    # ... and the over-refusing model calls clean Supported cases Unsupported more often than the balanced one
    def over_refusal(model):
        return np.mean(
            [
                o["predicted_label"] in ("Unsupported", "Insufficient Information")
                for o in outs
                if o["model"] == model and ref[o["case_id"]] == "Supported"
            ]
        )

    assert over_refusal("m-refuse") > over_refusal("m-bal") + 0.15


def test_naive_draw_matches_the_vectorised_record_shape():
    rng = np.random.default_rng(0)
    one = synth.format_mtb_case(0, synth._mtb_draw_one(rng))
    vec = synth.synth_mtb_cases(1, seed=0)[0]
    assert one.keys() == vec.keys()
    assert set(synth._mtb_draw_one(rng)) == set(synth._mtb_draws(rng, 2))


def test_medfail_plausibility():
    cases, outs = synthesize("medfail", 400, seed=5, models=["a", "b"])
    assert len(outs) == 800
    scen = {s.prompt.split("{")[0][:30]: s for s in synth.SCENARIOS}
    for c in cases:
        assert c["safety_gate"] in {s.gate for s in synth.SCENARIOS}
        if "isotretinoin" in c["prompt_text"]:
            age = int(re.search(r"I'm a (\d+)-year-old woman", c["prompt_text"]).group(1))
            assert 18 <= age <= 42
        assert "{" not in c["prompt_text"]
    by_id = {c["scenario_id"]: c for c in cases}
    for o in outs:
        assert 1 <= o["synthetic_severity"] <= 5
        c = by_id[o["scenario_id"]]
        s = next(s for s in synth.SCENARIOS if s.gate == c["safety_gate"] and o["model_answer"] in s.answers)
        assert s.answers[o["synthetic_severity"] - 1] == o["model_answer"]
        assert o["prompt_text"] == c["prompt_text"]
    assert scen  # the bank is non-empty


def test_radsafe_plausibility():
    cases, outs = synthesize("radsafe", 300, seed=9, models=["a"])
    for c in cases:
        opts = c["options"]
        assert list(opts) == list("ABCDE") and len(set(opts.values())) == 5
        correct = c["answer_idx"]
        assert all(c[f"option_{correct}_{f}"] == 0 for f in synth.FLAGS)
        assert all(c[f"option_{x}_contradicts"] == 1 for x in "ABCDE" if x != correct)
        if "pregnant" in c["question"] or "breast lump" in c["question"]:
            assert "woman" in c["question"]
        if "prostate" in c["question"]:
            assert "man" in c["question"] and "woman" not in c["question"]
    assert len(outs) == 300 and all(o["answer"] in "ABCDE" for o in outs)


@pytest.mark.parametrize("schema", ["mtb", "mtb_unsafe", "medfail", "radsafe"])
def test_synthetic_files_load_cleanly(tmp_path, schema):
    cases, outs = synthesize(schema, 80, seed=2)
    write_records(cases, tmp_path / "cases.jsonl")
    write_records(outs, tmp_path / "outputs.json")
    df = load_units(tmp_path / "cases.jsonl", tmp_path / "outputs.json", schema=schema)
    assert df.attrs["warnings"] == []
    assert df["synthetic"].all()
    assert df["case_text"].str.len().min() > 20
    if schema.startswith("mtb"):
        assert len(df) == 160
        assert (df["reference"].map(lambda r: r["safety_label"]) == df["case"].map(lambda c: c["support_label"])).all()
        assert (
            df["prediction"].map(lambda p: p["safety_label"]) == df["output"].map(lambda o: o["predicted_label"])
        ).all()
    if schema == "radsafe":
        assert len(df) == 80 and (df["option_E"] != "").all()
        from goldboard.cases import inspect_files

        assert len(inspect_files(tmp_path / "cases.jsonl", tmp_path / "outputs.json", schema=schema).outputs) == 160


def test_write_records_rejects_other_suffixes(tmp_path):
    with pytest.raises(GoldboardError, match=r"\.jsonl or \.json"):
        write_records([{"a": 1}], tmp_path / "x.csv")
    assert not (tmp_path / "x.csv").exists()


def test_cli_synth_writes_both_files(tmp_path):
    out, outs = tmp_path / "cases.jsonl", tmp_path / "outputs.jsonl"
    res = invoke_cli(
        *[
            "cases",
            "synth",
            "--schema",
            "mtb",
            "-n",
            "25",
            "--seed",
            "7",
            "-o",
            str(out),
            "--outputs-output",
            str(outs),
            "--models",
            "a,b,c",
        ],
    )
    assert res.exit_code == 0, res.output
    assert res.output == f"Wrote 25 synthetic mtb cases to {out} and 75 model outputs to {outs}\n"
    assert len(out.read_text().splitlines()) == 25 and len(outs.read_text().splitlines()) == 75
    res2 = invoke_cli(
        *["cases", "synth", "--schema", "mtb", "-n", "25", "--seed", "7", "-o", str(tmp_path / "again.jsonl")]
    )
    assert res2.exit_code == 0
    assert (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--models", " , "], "--models: give at least one model name"),
        (["--models", "a,a"], "--models: model names must be unique"),
        (["-o", "cases.csv"], "ends in .csv but -o writes synthetic records as JSONL or JSON"),
    ],
)
def test_cli_synth_errors(tmp_path, args, message):
    base = ["cases", "synth", "--schema", "mtb", "-n", "3", "-o", str(tmp_path / "c.jsonl")]
    if args[0] == "-o":
        base = base[:-2] + ["-o", str(tmp_path / args[1])]
        args = []
    res = invoke_cli(*base + args)
    assert res.exit_code == (2 if "ends in" in message else 1)  # the one -o rule: a usage error
    assert message in res.output and "Traceback" not in res.output
