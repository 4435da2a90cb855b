"""Issue 23, look-alike names inside data files (campaign 6 S06/S07, N08/N09, W07/W08).  Each
test fails on the code before its fix (checked by running this file against the tree of the
commit before).

1. ``score --predictions``: model names that differ only in letter case (``gpt`` / ``GPT``), only
   in their Unicode form (``José`` NFC / NFD) or only by an invisible character (``gpt`` /
   ``gpt<U+200B>``) were scored as two models, two summary rows reading the same: an error naming
   the file, both lines and the difference.  A lone model name holding an invisible or control
   character is refused (file:line, column, code point); so is ``--model`` (or the file's own
   name, the default) holding one.  ``--compare GPT,x`` points at ``gpt``.  Model versions
   ``1.1`` and ``1.10`` stay two models (names are not compared as numbers).
2. plain ratings files (``flag RATINGS``, ``agree TABLE``, ``judge RATINGS``): the blanks around a
   rater name are stripped (``'onc_a '`` *is* onc_a: flag lists the same items as on the clean
   file; it made a third rater and flagged 50 of 50 items), and rater names that differ only by
   case, Unicode form or an invisible character are an error naming both rows ("2 raters
   (josé, josé)" before).
"""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

import pytest
from conftest import error_line, invoke_cli

from goldboard.cases.examples import example_path

S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"
GOLD = [S, S, U, I, P, S, U, I]
A = [S, S, U, I, P, S, U, I]
B = [S, U, U, S, P, I, U, P]
NFC = unicodedata.normalize("NFC", "Jos\u00e9")
NFD = unicodedata.normalize("NFD", "Jos\u00e9")


def run(*args):
    return invoke_cli(*args)


def one_error(res) -> str:
    """The one ``Error:`` line of a refused run (exit non-zero, nothing else on stderr)."""
    assert len([ln for ln in res.stderr.splitlines() if ln.strip()]) == 1, res.stderr
    return error_line(res)


@pytest.fixture()
def reference(tmp_path: Path) -> Path:
    p = tmp_path / "reference.jsonl"
    p.write_text("".join(json.dumps({"case_id": f"C{n}", "support_label": g}) + "\n" for n, g in enumerate(GOLD, 1)))
    return p


def predictions(path: Path, models: list[str], *, with_model: bool = True) -> Path:
    """Every model predicts ``B`` for C1..C8 (accuracy 4/8)."""
    recs = []
    for m in models:
        for n, lab in enumerate(B, 1):
            rec = {"case_id": f"C{n}", "predicted_label": lab}
            if with_model:
                rec["model"] = m
            recs.append(rec)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    return path


def score(reference: Path, preds: Path, *more):
    return run("score", "--gold", reference, "--schema", "mtb", "--predictions", preds, *more)


# --------------------------------------------------------------------------- 1. model names


@pytest.mark.parametrize(
    "twin, kind",
    [("GPT", "differ only in letter case"), ("gpt\u200b", "U+200B")],
    ids=["case", "zero-width"],
)
def test_score_refuses_model_names_that_look_alike(tmp_path, reference, twin, kind):
    preds = predictions(tmp_path / "p.jsonl", ["gpt", twin])
    out = tmp_path / "score.txt"
    err = one_error(score(reference, preds, "-o", out))
    assert f"{preds}:9: model " in err and f"({preds}:1)" in err and kind in err, err
    assert "two models" in err
    assert not out.exists()


def test_score_refuses_a_model_name_in_two_unicode_forms(tmp_path, reference):
    preds = predictions(tmp_path / "p.jsonl", [NFC, NFD])
    err = one_error(score(reference, preds))
    assert f"{preds}:9: model" in err and f"({preds}:1)" in err and "Unicode form" in err, err
    assert "Jose\\u0301" in err and "Jos\\xe9" in err  # the difference, written out


def test_score_refuses_a_lone_model_name_with_an_invisible_character(tmp_path, reference):
    preds = predictions(tmp_path / "p.jsonl", ["gpt\u200b"])
    err = one_error(score(reference, preds))
    assert f"{preds}:1: model 'gpt\\u200b'" in err and "U+200B" in err, err
    preds = predictions(tmp_path / "q.jsonl", ["gpt\tbeta"])
    assert "U+0009" in one_error(score(reference, preds))


def test_score_refuses_a_model_flag_with_an_invisible_character(tmp_path, reference):
    preds = predictions(tmp_path / "p.jsonl", ["x"], with_model=False)
    err = one_error(score(reference, preds, "--model", "gpt\u200b"))
    assert "--model" in err and "U+200B" in err, err
    res = score(reference, preds, "--model", "gpt", "--format", "json")
    assert res.exit_code == 0, res.output
    assert [g["model"] for g in json.loads(res.stdout)["groups"]] == ["gpt"]


def test_score_compare_points_at_the_model_a_name_looks_like(tmp_path, reference):
    preds = predictions(tmp_path / "p.jsonl", ["gpt", "claude"])
    err = one_error(score(reference, preds, "--compare", "GPT,claude"))
    assert "--compare" in err and "did you mean 'gpt'?" in err and "letter case" in err, err


def test_score_keeps_model_versions_apart_and_exact(tmp_path, reference):
    """Names are not numbers: 1.1 and 1.10 are two models; a name with accents is kept exactly."""
    preds = predictions(tmp_path / "p.jsonl", ["1.1", "1.10", NFD])
    res = score(reference, preds, "--format", "json")
    assert res.exit_code == 0, res.output
    groups = {g["model"]: g["accuracy"]["estimate"] for g in json.loads(res.stdout)["groups"]}
    assert groups == {"1.1": 0.5, "1.10": 0.5, NFD: 0.5}


# --------------------------------------------------------------------------- 2. plain ratings files

HEADER = "round,item_id,case_id,output_id,model,rater,field,value,rationale,annotated_at,lead_time,annotation_id"


def ratings(path: Path, first: str, spelled=lambda n, name: name) -> Path:
    """Raters ``first`` (labels A) and onc_b (labels B) on C1..C8; ``spelled(n, name)`` writes
    ``first`` on item n."""
    rows = [HEADER]
    for n, (a, b) in enumerate(zip(A, B), 1):
        rows.append(f"1,C{n},C{n},,,{spelled(n, first)},safety_label,{a},,,,")
        rows.append(f"1,C{n},C{n},,,onc_b,safety_label,{b},,,,")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


DISAGREE = {f"C{n}" for n, (a, b) in enumerate(zip(A, B), 1) if a != b}


def flagged(res) -> set[str]:
    assert res.exit_code == 0, res.output
    return {line.split(",")[1] for line in res.stdout.splitlines()[1:] if line}


def test_flag_reads_a_rater_name_with_blanks_around_it_as_that_rater(tmp_path):
    clean = ratings(tmp_path / "clean.csv", "onc_a")
    spaced = ratings(tmp_path / "spaced.csv", "onc_a", lambda n, name: name + " " if n % 2 else name)
    want = flagged(run("flag", clean, "--schema", "mtb", "--format", "csv"))
    assert want == DISAGREE
    assert flagged(run("flag", spaced, "--schema", "mtb", "--format", "csv")) == want
    res = run("agree", spaced, "--schema", "mtb", "--field", "safety_label", "--format", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["raters"] == ["onc_a", "onc_b"], res.output


@pytest.mark.parametrize(
    "first, spelled, kind",
    [
        (NFC, lambda n, name: NFD if n % 2 == 0 else name, "Unicode form"),
        ("onc_a", lambda n, name: name.upper() if n % 2 == 0 else name, "letter case"),
        ("onc_a", lambda n, name: name + "\u200b" if n % 2 == 0 else name, "U+200B"),
    ],
    ids=["nfd", "case", "zero-width"],
)
@pytest.mark.parametrize("command", ["flag", "agree"])
def test_plain_ratings_refuse_rater_names_that_look_alike(tmp_path, command, first, spelled, kind):
    f = ratings(tmp_path / "r.csv", first, spelled)
    extra = ["--format", "csv"] if command == "flag" else ["--field", "safety_label"]
    err = one_error(run(command, f, "--schema", "mtb", *extra))
    assert f"{f}:4: rater " in err and f"({f}:2)" in err and kind in err and "two raters" in err, err


def test_plain_ratings_refuse_a_rater_name_with_a_control_character(tmp_path):
    f = ratings(tmp_path / "r.csv", "onc\u200ba")
    err = one_error(run("flag", f, "--schema", "mtb", "--format", "csv"))
    assert f"{f}:2: rater 'onc\\u200ba'" in err and "U+200B" in err, err


def test_judge_ratings_refuse_a_judge_written_two_ways(tmp_path):
    rows = [HEADER]
    for n, (a, b) in enumerate(zip(A, B), 1):
        rows.append(f"1,C{n},C{n},,,onc_a,safety_label,{a},,,,")
        rows.append(f"1,C{n},C{n},,,{'gpt' if n % 2 else 'GPT'},safety_label,{b},,,,")
    f = tmp_path / "j.csv"
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    err = one_error(run("judge", f, "--judge", "gpt", "--epsilon", "0.2"))
    assert f"{f}:5: rater 'GPT'" in err and f"({f}:3)" in err and "letter case" in err, err


def test_label_studio_exports_refuse_one_annotator_written_two_ways(tmp_path):
    """One export per rater: 'Onc_A@x.org' in one, 'onc_a@x.org' in the other is one annotator."""
    files = []
    for k, (email, labels) in enumerate((("Onc_A@x.org", A), ("onc_a@x.org", B))):
        tasks = [
            {
                "id": 100 * k + n,
                "data": {"item_id": f"C{n}"},
                "annotations": [
                    {
                        "id": 1000 * k + n,
                        "completed_by": {"id": k + 1, "email": email},
                        "was_cancelled": False,
                        "result": [
                            {
                                "from_name": "safety_label",
                                "to_name": "case",
                                "type": "choices",
                                "value": {"choices": [lab]},
                            }
                        ],
                    }
                ],
            }
            for n, lab in enumerate(labels, 1)
        ]
        files += ["--from-label-studio", tmp_path / f"e{k}.json"]
        (tmp_path / f"e{k}.json").write_text(json.dumps(tasks))
    err = one_error(run("agree", *files, "--field", "safety_label", "--schema", "mtb"))
    assert "rater 'onc_a@x.org' and 'Onc_A@x.org'" in err and "letter case" in err, err


def test_wide_table_refuses_rater_columns_that_look_alike(tmp_path):
    f = tmp_path / "wide.csv"
    f.write_text(f"item_id,{NFC},{NFD}\n" + "".join(f"C{n},{a},{b}\n" for n, (a, b) in enumerate(zip(A, B), 1)))
    err = one_error(run("agree", f, "--raters", f"{NFC},{NFD}", "--schema", "mtb", "--field", "safety_label"))
    assert "Unicode form" in err and "column" in err, err


def test_cases_validate_refuses_model_names_that_look_alike(tmp_path):
    """An outputs file is where the model names of `score` (outputs mode) and the report come
    from: 'gpt', 'GPT' and 'gpt<U+200B>' for one model are a problem each, at their lines."""
    cases = tmp_path / "cases.jsonl"
    cases.write_text("".join(json.dumps({"case_id": f"C{n}", "text": f"case {n}"}) + "\n" for n in (1, 2)))
    outputs = tmp_path / "outputs.jsonl"
    models = ["gpt", "GPT", "gpt\u200b", "claude\u202e"]
    outputs.write_text(
        "".join(
            json.dumps({"case_id": f"C{n}", "model": m, "output": f"out {n}"}) + "\n" for m in models for n in (1, 2)
        )
    )
    res = invoke_cli("cases", "validate", cases, "--outputs", outputs, "--schema", "medfail", code=1)
    assert f"{outputs}:3: model: 'GPT' and 'gpt' (line 1) differ only in letter case" in res.output
    assert f"{outputs}:5: model: 'gpt\\u200b' and 'gpt' (line 1)" in res.output and "U+200B" in res.output
    assert f"{outputs}:7: model: 'claude\\u202e' holds an invisible or control character (U+202E)" in res.output
    assert "\u202e" not in res.output
    plain = tmp_path / "plain.jsonl"
    plain.write_text(
        "".join(
            json.dumps({"case_id": f"C{n}", "model": m, "output": "o"}) + "\n" for m in ("1.1", "1.10") for n in (1, 2)
        )
    )
    invoke_cli("cases", "validate", cases, "--outputs", plain, "--schema", "medfail", code=0)


def test_score_refuses_condition_names_that_look_alike(tmp_path, reference):
    """A deployment condition is a summary row like a model: 'rag' beside 'RAG' is one written twice."""
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"case_id": f"C{n}", "model": "gpt", "condition": c, "predicted_label": lab}) + "\n"
            for c in ("rag", "RAG")
            for n, lab in enumerate(B, 1)
        )
    )
    err = one_error(score(reference, preds))
    assert f"{preds}:9: condition 'RAG' and 'rag' ({preds}:1) differ only in letter case" in err, err


def test_judge_labels_refuse_a_rater_column_with_one_judge_written_two_ways(tmp_path):
    """`judge --study --labels F` with a rater column: rows of 'GPT' beside 'gpt' were silently
    left out (only the rows spelled exactly as --judge were read)."""
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    wide = ["--item-col", "case_id", "--rater-cols", "onc_a=oncologist_a_label,onc_b=oncologist_b_label"]
    res = run("pull", "--study", s, "--from-table", example_path("openmtb"), *wide, "--field", "safety_label")
    assert res.exit_code == 0, res.output
    with open(example_path("openmtb"), encoding="utf-8") as fh:
        ids = [r["case_id"] for r in csv.DictReader(fh)]
    labels = tmp_path / "labels.csv"
    labels.write_text(
        "item_id,rater,field,value\n"
        + "".join(f"{i},{'gpt' if k % 2 else 'GPT'},safety_label,Supported\n" for k, i in enumerate(ids))
    )
    before = (s / "study.toml").read_bytes()
    err = one_error(run("judge", "--study", s, "--judge", "gpt", "--labels", labels, "--epsilon", "0.2"))
    assert "labels.csv:3: rater 'gpt' and 'GPT' (labels.csv:2) differ only in letter case" in err, err
    assert (s / "study.toml").read_bytes() == before
