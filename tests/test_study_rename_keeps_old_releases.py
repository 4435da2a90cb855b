"""Renaming a study keeps its releases readable, those an older goldboard wrote too.

A release knows its study by the study's creation time (``study_created`` in the manifest); an
older goldboard's release has only the study's name.  Before, ``study set --name`` on such a study
orphaned its releases: every reader refused ``gold/v1`` as "a release of study 's', not of this
study".  ``study set --name`` now keeps the names it replaced (``[extra] former_names``), and a
release without a creation time is the study's when it names the study's name or a former one.
A release of another study is still refused."""

from __future__ import annotations

import json

from conftest import invoke_cli, run_cli


def _old_build_release(tmp_path, name="s"):
    s = tmp_path / name
    t = tmp_path / "r.csv"
    t.write_text("case_id,a,b\nC1,Supported,Supported\nC2,Supported,Unsupported\n")
    run_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    run_cli("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b",
            "--field", "safety_label")  # fmt: skip
    run_cli("gold", "export", "--study", s)
    m = s / "gold/v1/manifest.json"
    manifest = json.loads(m.read_text())
    manifest.pop("study_created")  # what an older goldboard wrote
    m.write_text(json.dumps(manifest))
    return s


def test_an_old_release_stays_the_studys_after_two_renames(tmp_path):
    s = _old_build_release(tmp_path)
    run_cli("study", "set", s, "--name", "NSCLC pilot")
    run_cli("study", "set", s, "--name", "NSCLC main")
    res = run_cli("gold", "export", "--study", s, "--force")
    assert "gold release v2" in res.output, res.output
    assert json.loads((s / "gold/v2/manifest.json").read_text())["previous"] == "v1"
    assert "v1" in run_cli("gold", "diff", "--study", s, "v1", "v2").output


def test_an_old_release_of_another_study_is_still_refused(tmp_path):
    s = _old_build_release(tmp_path)
    other = _old_build_release(tmp_path, "other")
    (s / "gold/v1").rename(s / "gold/v1-mine")
    (other / "gold/v1").rename(s / "gold/v1")
    run_cli("study", "set", s, "--name", "NSCLC pilot")
    res = invoke_cli("gold", "export", "--study", s, "--force")
    assert res.exit_code == 1 and "a release of study 'other'" in res.output, res.output
