"""Misuse suite, live part (issue 11): push and pull misuses against a real Label Studio.

Case columns no rater sees are reported by push; a case-level round has no model pane and
never takes model outputs (nor a case x output round bare cases); push never creates an
account; ``pull --from-export`` refuses swapped or repeated exports; an annotation by
another user in a rater's blinded project never displaces the rater's own rating.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import error_line
from conftest import invoke_cli as run
from test_live_roundtrip import RATERS, cases_files, desired_mtb, new_study, server_tasks

from goldboard.annotate import server as srv
from goldboard.annotate.client import AuthenticationFailed, connect
from goldboard.annotate.simulate import annotation_result, post_ratings
from goldboard.cases.ratings import read_ratings_csv
from goldboard.cases.synth import write_records
from goldboard.study import Study

pytestmark = pytest.mark.live


def task_count(client, st, rnd=1) -> dict[str, int]:
    return {r: len(client.task_data(pid)) for r, pid in st.round(rnd).projects.items()}


# --------------------------------------------------------------------------- case columns, case-level rounds


def test_push_reports_case_columns_no_rater_sees(live_server, tmp_path):
    cases = tmp_path / "cases.jsonl"
    write_records(
        [
            {
                "case_id": f"K{i}",
                "patient_summary": "NSCLC, metastatic",
                "proposed_therapy": "pembrolizumab",
                "PD-L1": "TPS 80%",
                "ECOG": "1",
            }
            for i in range(2)
        ],
        cases,
    )
    st = new_study(tmp_path, live_server, name="cols")
    res = run("push", "--study", st.path, cases, "--quiet")
    assert res.exit_code == 0, res.output
    for col, meant in (("PD-L1", "pdl1"), ("ECOG", "ecog")):
        line = next(ln for ln in res.output.splitlines() if "warning:" in ln and f" {col}:" in ln)
        assert "no rater will see it" in line and f"did you mean {meant!r}" in line


def test_case_level_round_has_no_model_pane_and_refuses_outputs(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=3)
    st = new_study(tmp_path, live_server, name="caselevel")
    res = run("push", "--study", st.path, cases, "--quiet")
    assert res.exit_code == 0, res.output
    st = Study.open(st.path)
    assert st.round(1).item_kind == "case"
    with connect(st) as client:
        for pid in st.round(1).projects.values():
            config = client.project(pid)["label_config"]
            assert "$output_text" not in config and 'toName="output"' not in config
            assert "$case_text" in config
        before = task_count(client, st)
        assert before == {r: 3 for r in RATERS}
        # outputs into the case-level round: refused, nothing added
        line = error_line(run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet"))
        assert "case-level" in line and "new round" in line and "--round 2" in line
        assert task_count(client, st) == before
        # rerunning the same case-level push stays exact (idempotent, no config mismatch)
        res = run("push", "--study", st.path, cases, "--quiet")
        assert res.exit_code == 0 and "0 tasks imported, 3 already there" in res.output, res.output
        # a new round takes them, with the model pane
        res = run("push", "--study", st.path, cases, "--outputs", outputs, "--round", "2", "--quiet")
        assert res.exit_code == 0, res.output
        st = Study.open(st.path)
        assert st.round(2).item_kind == "output"
        for pid in st.round(2).projects.values():
            assert "$output_text" in client.project(pid)["label_config"]
        # and bare cases into the case x output round are refused the same way
        line = error_line(run("push", "--study", st.path, cases, "--round", "2", "--quiet"))
        assert "case x model output" in line and "--round 3" in line
        assert task_count(client, Study.open(st.path), 2) == {r: 6 for r in RATERS}
    # pulling the case-level round checks its config without a mismatch warning
    res = run("pull", "--study", st.path, "--round", "1", "--quiet")
    assert res.exit_code == 0 and "label config" not in res.output, res.output


# --------------------------------------------------------------------------- accounts


def test_push_never_creates_an_account_for_a_misspelt_rater(fresh_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=2)
    res = run(
        "study", "init", tmp_path / "typo", "--schema", "mtb", "--raters", "onc_a,onc_bb",
        "--data-dir", fresh_server.data_dir,
    )  # fmt: skip
    assert res.exit_code == 0
    assert "warning: rater 'onc_bb' has no account" in res.output and "did you mean 'onc_b'" in res.output
    creds_before = srv.credentials_path(fresh_server.data_dir).read_bytes()
    line = error_line(run("push", "--study", tmp_path / "typo", cases, "--outputs", outputs, "--quiet"))
    assert "'onc_bb' has no account" in line and "did you mean 'onc_b'" in line
    assert "goldboard server add-raters onc_bb" in line
    assert srv.credentials_path(fresh_server.data_dir).read_bytes() == creds_before  # no account made
    assert Study.open(tmp_path / "typo").rounds == []  # nothing pushed, no project made
    # the explicit command makes the account; then push works
    res = run("server", "add-raters", "onc_bb", "--data-dir", fresh_server.data_dir)
    assert res.exit_code == 0 and "Created Label Studio accounts: onc_bb" in res.output
    creds = srv.read_credentials(fresh_server.data_dir)
    assert creds.users["onc_bb"].id is not None
    assert all(secret not in res.output for secret in creds.secrets())
    res = run("push", "--study", tmp_path / "typo", cases, "--outputs", outputs, "--quiet")
    assert res.exit_code == 0, res.output


# --------------------------------------------------------------------------- pull --from-export, held-out annotations


@pytest.fixture(scope="module")
def annotated(live_server, tmp_path_factory):
    """A blinded round with both raters' ratings, and each project's full JSON export on disk."""
    tmp = tmp_path_factory.mktemp("exports")
    cases, outputs = cases_files(tmp, n=2)
    st = new_study(tmp, live_server, name="exp")
    assert run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet").exit_code == 0
    st = Study.open(st.path)
    post_ratings(st, desired_mtb(st.units()), progress=False)
    files = {}
    with connect(st) as client:
        for r, pid in st.round(1).projects.items():
            files[r] = tmp / f"{r}.json"
            files[r].write_text(json.dumps(client.export(pid)), encoding="utf-8")
            files[f"{r}_min"] = tmp / f"{r}_min.json"  # JSON_MIN: no project id, annotators' user ids
            files[f"{r}_min"].write_text(json.dumps(client.export(pid, "JSON_MIN")), encoding="utf-8")
    return st, files


@pytest.mark.parametrize("suffix", ["", "_min"], ids=["JSON", "JSON_MIN"])
def test_pull_from_export_right_way_round_works(annotated, suffix):
    st, files = annotated
    res = run("pull", "--study", st.path, "--from-export", f"onc_a={files['onc_a' + suffix]}", "--from-export",
              f"onc_b={files['onc_b' + suffix]}", "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.output
    got = read_ratings_csv(st.ratings_path(1))
    assert set(got["rater"]) == set(RATERS) and len(got) == 2 * 4 * 2


@pytest.mark.parametrize(
    "specs,needle",
    [
        (("onc_a=a", "onc_b=a"), "one export given twice?"),  # not "swapped" (campaign 8 E14p)
        (("onc_a=b", "onc_b=a"), "exports swapped"),
        (("onc_a=a", "onc_b=b", "a"), "same Label Studio tasks"),
        (("onc_a=a", "onc_a=a"), "same Label Studio tasks"),
        (("onc_c=a",), "did you mean"),
        (("onc_a=bmin", "onc_b=amin"), "made by onc_b's account, not onc_a's"),
        (("onc_a=amin", "onc_b=amin"), "one export given twice?"),
    ],
    ids=[
        "same-export-two-raters",
        "swapped",
        "given-twice-once-bare",
        "same-file-twice",
        "unknown-rater",
        "json-min-swapped",
        "json-min-same-for-both",
    ],
)
def test_pull_from_export_misuse_is_refused(annotated, specs, needle):
    st, files = annotated
    ratings = st.ratings_path(1)
    before = ratings.read_bytes() if ratings.exists() else None
    args = []
    for spec in specs:
        rater, _, which = spec.rpartition("=")
        path = files[{"a": "onc_a", "b": "onc_b", "amin": "onc_a_min", "bmin": "onc_b_min"}[which]]
        args += ["--from-export", f"{rater}={path}" if rater else str(path)]
    line = error_line(run("pull", "--study", st.path, *args, "--quiet"))
    assert needle in line, line
    after = ratings.read_bytes() if ratings.exists() else None
    assert after == before  # nothing written


def test_annotation_by_another_user_never_displaces_the_raters_own(live_server, tmp_path):
    cases, outputs = cases_files(tmp_path, n=2)
    st = new_study(tmp_path, live_server, name="intruder")
    assert run("push", "--study", st.path, cases, "--outputs", outputs, "--quiet").exit_code == 0
    st = Study.open(st.path)
    post_ratings(st, desired_mtb(st.units()), progress=False)
    with connect(st) as admin:  # the admin account (not a rater) annotates in onc_a's project, later
        ta = server_tasks(admin, st.round(1).projects["onc_a"])
        item = sorted(ta)[0]
        intruder = admin.create_annotation(ta[item], annotation_result(st.schema, {"safety_label": "Unsupported"}))
        creds = srv.read_credentials(live_server.data_dir)
        # onc_b cannot annotate in onc_a's project: the server refuses (onc_a's own organization) ...
        b = admin.as_token(creds.token_for("onc_b"))
        with pytest.raises(AuthenticationFailed):
            b.create_annotation(ta[item], annotation_result(st.schema, {"safety_label": "Supported"}))
        # ... but an account inside that organization that is not onc_a can, and is held out too
        org = admin.as_token(creds.org_token("onc_a"))
        intruder_b = org.create_annotation(ta[item], annotation_result(st.schema, {"safety_label": "Supported"}))
    res = run("pull", "--study", st.path, "--quiet")
    assert res.exit_code == 0, res.output
    assert "2 annotations by other users held out of onc_a's project" in res.output
    got = read_ratings_csv(st.ratings_path(1))
    want = desired_mtb(st.units())
    own = want[(want.item_id == item) & (want.rater == "onc_a") & (want.field == "safety_label")].value.iloc[0]
    mine = got[(got.item_id == item) & (got.rater == "onc_a") & (got.field == "safety_label")]
    assert mine.value.tolist() == [own]  # the rater's real rating is still there
    assert len(got) == len(want)
    inv = pd.read_csv(st.invalid_path(1), dtype=str, keep_default_na=False).set_index("annotation_id")
    assert set(inv.index) == {str(intruder), str(intruder_b)}
    assert set(inv.kind) == {"invalid"}  # held out, and nothing marked superseded
    summary = json.loads(st.pull_report_path(1).read_text())
    assert summary["raters"]["onc_a"]["superseded"] == 0 and summary["raters"]["onc_a"]["by_other_users"] == 2


def test_case_level_study_adjudication_page_has_no_model_pane(live_server, tmp_path):
    cases, _ = cases_files(tmp_path, n=4)
    st = new_study(tmp_path, live_server, name="caseadj")
    assert run("push", "--study", st.path, cases, "--quiet").exit_code == 0
    st = Study.open(st.path)
    post_ratings(st, desired_mtb(st.units()), progress=False)
    assert run("pull", "--study", st.path, "--quiet").exit_code == 0
    res = run("adjudicate", "push", "--study", st.path)
    assert res.exit_code == 0, res.output
    st = Study.open(st.path)
    with connect(st) as client:
        configs = [client.project(pid)["label_config"] for pid in st.adjudication["projects"].values()]
    assert configs and all("$output_text" not in c and "$case_text" in c for c in configs)
