"""Gold export asks its verifications once (:class:`~goldboard.workflows.gold_release.GoldChecks`),
then resolves gold and lays out the manifest with one builder
(:func:`~goldboard.workflows.gold_release.gold_manifest`).

The checks themselves are exercised by the gold tests through ``gold export``; here: the object
answers what the release is built from (the digests of the bytes read), raises the first problem
as one located line with nothing written, and the workflow calls no verification of its own."""

from __future__ import annotations

import ast
import hashlib
import inspect
import textwrap

import pytest
from builders import wide_table
from conftest import run_cli as run

from goldboard.errors import GoldboardError
from goldboard.study import Study
from goldboard.workflows import adjudication as wf
from goldboard.workflows.gold_release import GoldChecks, gold_manifest

V = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
IDS = [f"I{k:02d}" for k in range(1, 9)]
A = [V[k % 4] for k in range(8)]
B = [V[(k + 1) % 4] if k < 2 else A[k] for k in range(8)]  # onc_b differs from onc_a on I01-I02


@pytest.fixture
def study(tmp_path) -> Study:
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    table = wide_table(tmp_path / "t.csv", IDS, {"a": A, "b": B})
    run("pull", "--study", s, "--from-table", table, "--item-col", "case_id", "--field", "safety_label",
        "--rater-cols", "onc_a=a,onc_b=b")  # fmt: skip
    return Study.open(s)


def test_verify_answers_what_gold_is_built_from(study):
    inputs = GoldChecks(study).verify()
    assert inputs.digests == {1: hashlib.sha256(study.ratings_path(1).read_bytes()).hexdigest()}
    assert len(inputs.ratings) == 16 and inputs.entries == []
    assert inputs.edited == [] and inputs.left_out == [] and inputs.gone_releases == []
    assert inputs.schema.name == study.schema.name


def test_verify_raises_the_first_problem_and_writes_nothing(study):
    path = study.ratings_path(1)
    path.write_text(path.read_text(encoding="utf-8").replace("Unsupported", "Supported", 1), encoding="utf-8")
    with pytest.raises(GoldboardError) as exc:
        GoldChecks(study).verify()
    assert str(exc.value).startswith(f"{path}: changed since its pull") and "\n" not in str(exc.value)
    assert not study.gold_dir.exists()
    # allowed: the manifest's edited_ratings, as export_gold writes it
    inputs = GoldChecks(study, allow_edited_ratings=True).verify()
    assert [e["round"] for e in inputs.edited] == [1]


def test_the_manifest_builder_writes_what_export_gold_releases(study):
    rel = wf.export_gold(study, now="2026-01-01T00:00:00Z")
    inputs = GoldChecks(study).verify()  # the release changes no input: the same answer again
    built = gold_manifest(study, rel.gold, inputs)
    assert {k: rel.manifest[k] for k in built} == built  # written as built (the writer adds its own keys)
    assert rel.manifest["sources"]["ratings"] == [
        {"path": "rounds/1/ratings.csv", "round": 1, "sha256": inputs.digests[1]}
    ]


def test_export_gold_asks_the_checks_once_and_verifies_nothing_itself():
    tree = ast.parse(textwrap.dedent(inspect.getsource(wf.export_gold)))
    called = [
        n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call)
    ]
    assert called.count("verify") == 1 and called.count("GoldChecks") == 1
    checks = {"check_latest_release", "edited_ratings", "removed_raters", "study_ratings", "check_log_prefix"}
    checks |= {"decision_item_errors", "decision_value_errors", "decision_independence_errors"}
    assert not checks & set(called), sorted(checks & set(called))
