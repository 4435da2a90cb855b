"""What goldboard prints about a round pulled from another tool's export (``pull --from-file``):
the report's blinding line, the methods paragraph (design, case source), ``status`` and ``pull``'s
summary name the tool ("a Prodigy db-out export", "a doccano JSONL export"), never "a ratings
table"; a round holding a table and a Prodigy file names both.  Each sentence is read from a study
built by the CLI (docs claims.md: a printed claim is a result with a test)."""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
from conftest import error_line, run_cli

from goldboard.cases.intake.rounds import keep_others
from goldboard.cases.ratings import RATINGS_COLUMNS

DATA = Path(__file__).parent / "data"
PRODIGY = DATA / "prodigy" / "mtb_review.jsonl"
RATERS = "mtb_review-ana=onc_a,mtb_review-ben=onc_b,mtb_review-cy=onc_c"


def prodigy_study(tmp_path: Path) -> tuple[Path, str]:
    s = tmp_path / "s"
    run_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b,onc_c")
    out = run_cli("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", "--rater", RATERS).output
    return s, out


def reports(s: Path, tmp_path: Path) -> tuple[str, str]:
    """(Markdown, HTML as text) of the study's report."""
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    run_cli("report", "--study", s, "--format", "markdown", "-o", md)
    run_cli("report", "--study", s, "--format", "html", "-o", page)
    return md.read_text(encoding="utf-8"), html.unescape(page.read_text(encoding="utf-8"))


def test_a_prodigy_round_is_named_a_prodigy_export(tmp_path):
    s, out = prodigy_study(tmp_path)
    assert out.splitlines()[0] == "Prodigy db-out export mtb_review.jsonl (8 records):"
    src = "a Prodigy db-out export: mtb_review.jsonl"
    for text in reports(s, tmp_path):
        assert f"Blinding: not recorded (ratings imported from {src})." in text
        assert f"Assignment design: not recorded (ratings imported from {src})." in text
        assert f"Case source: not recorded (items known from {src})." in text
        assert "ratings table" not in text
    page = reports(s, tmp_path)[1]
    assert "<th>Rounds</th><td>round 1 (a Prodigy db-out export: mtb_review.jsonl, 3 units)</td>" in page
    status = run_cli("status", "--study", s).output
    assert "Label Studio: not used (ratings from a Prodigy db-out export)" in status
    assert "onc_a              3 / 3     items rated (100%)  from a Prodigy db-out export, last pulled 20" in status
    assert "table" not in status


def test_a_doccano_round_is_named_a_doccano_export(tmp_path):
    s = tmp_path / "s"
    run_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    f = DATA / "doccano" / "mtb_doccano_export.zip"
    out = run_cli("pull", "--study", s, "--from-file", f"doccano={f}", "--rater", "ana=onc_a,ben=onc_b").output
    assert out.splitlines()[0].startswith("doccano JSONL export mtb_doccano_export.zip (")
    md, page = reports(s, tmp_path)
    for text in (md, page):
        assert "Blinding: not recorded (ratings imported from a doccano JSONL export: mtb_doccano_export.zip)." in text
        assert "ratings table" not in text
    assert "from a doccano JSONL export, last pulled" in run_cli("status", "--study", s).output


def test_a_round_from_a_table_and_a_prodigy_file_names_both(tmp_path):
    s, _ = prodigy_study(tmp_path)
    table = tmp_path / "c.csv"
    table.write_text("item_id,rater,safety_label\nMTB-0001,onc_c,Supported\nMTB-0002,onc_c,Unsupported\n")
    run_cli("pull", "--study", s, "--from-table", table)
    src = "a ratings table: c.csv; a Prodigy db-out export: mtb_review.jsonl"
    for text in reports(s, tmp_path):
        assert f"Blinding: not recorded (ratings imported from {src})." in text
    status = run_cli("status", "--study", s).output
    assert "Label Studio: not used (ratings from a Prodigy db-out export and a ratings table)" in status
    lines = {ln.split()[0]: ln for ln in status.splitlines() if ln.startswith("  onc_")}
    assert "from a Prodigy db-out export, last pulled" in lines["onc_a"]
    assert "from a ratings table, last pulled" in lines["onc_c"]


def test_a_label_studio_pull_names_the_kind_of_file_it_replaces(tmp_path):
    """An item x rater rated in a Prodigy file and then in Label Studio keeps the Label Studio
    rating; the warning names the file's kind (it said "ratings tables" for every file)."""
    path = tmp_path / "ratings.csv"
    row = dict.fromkeys(RATINGS_COLUMNS, "")
    row.update(round="1", item_id="MTB-0001", rater="onc_a", field="safety_label", value="Supported")
    old = pd.DataFrame([{**row, "annotation_id": "mtb_review.jsonl:1"}, {**row, "annotation_id": "c.csv:2"}])
    old.loc[1, "rater"] = "onc_b"
    old.to_csv(path, index=False)
    new = pd.DataFrame([{**row, "annotation_id": "7", "task_id": "3", "project_id": "2"}])
    summary: dict = {}
    tables = {"mtb_review.jsonl": {"format": "prodigy"}, "c.csv": {}}
    out = keep_others(path, new, summary, tables=tables)
    assert summary["warnings"] == [
        "1 rating rows from Prodigy db-out exports are replaced by Label Studio ratings of the same item and rater"
    ]
    assert sorted(out["annotation_id"]) == ["7", "c.csv:2"]


def test_from_file_refuses_a_table_option_it_would_ignore(tmp_path):
    """``--item-col``, ``--codes``, ``--jobs`` ... do nothing to a tool's own export: refused by
    name, nothing written (they were silently accepted)."""
    s = tmp_path / "s"
    run_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b,onc_c")
    for extra in (["--item-col", "case_id"], ["--identical-columns-ok"], ["--jobs", "2"]):
        res = run_cli("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", "--rater", RATERS, *extra, code=1)
        assert error_line(res) == (
            f"Error: {extra[0]}: not an option of --from-file (it takes --rater, --item-key, --field, --source, "
            "--add-to-adjudicated-round and --round)"
        )
    assert not (s / "rounds").exists()


def test_a_file_adding_items_to_a_round_with_gold_is_refused_unless_said(tmp_path):
    """The refusal names the flag that lets it through, and --from-file honours that flag (it was
    ignored, so the hint could not be followed)."""
    s, _ = prodigy_study(tmp_path)
    run_cli("gold", "export", "--study", s)
    before = (s / "rounds/1/ratings.csv").read_bytes()
    first = PRODIGY.read_text(encoding="utf-8").splitlines()[0]
    plus = tmp_path / "more" / PRODIGY.name
    plus.parent.mkdir()
    plus.write_text(PRODIGY.read_text(encoding="utf-8") + first.replace("MTB-0001", "MTB-0009") + "\n")
    args = ("pull", "--study", s, "--from-file", f"prodigy={plus}", "--rater", RATERS)
    line = error_line(run_cli(*args, code=1))
    assert line == (
        "Error: round 1 already has gold release v1; this file adds 1 item new to the round ('MTB-0009'), which "
        "would change what was adjudicated. Pull it into a new round (--round 2), or pass "
        "--add-to-adjudicated-round to add them anyway"
    )
    assert (s / "rounds/1/ratings.csv").read_bytes() == before
    run_cli(*args, "--add-to-adjudicated-round")
    assert "MTB-0009" in (s / "rounds/1/ratings.csv").read_text(encoding="utf-8")


def test_a_label_studio_round_with_imported_ratings_claims_no_blinding_for_them(tmp_path):
    """A blinded Label Studio round into which a table was also pulled: the blinding sentence adds
    that the imported ratings' blinding is not recorded, "independently" is not printed, and the
    raters clause says where the ratings came from (it said "in Label Studio" for all of them)."""
    from goldboard.exports.report import blinding_text
    from goldboard.study import Study
    from goldboard.workflows.methods import MethodsFacts, clause_raters

    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"])
    rnd = st.get_or_add_round(1)
    rnd.mode, rnd.projects, rnd.tables = "blinded", {"onc_a": 11, "onc_b": 12}, {"c.csv": {}}
    st.save()
    # the round's ratings, as a pull of c.csv leaves them (a table recorded without them: the folder deleted)
    st.round_dir(1).mkdir(parents=True)
    st.ratings_path(1).write_text(",".join(RATINGS_COLUMNS) + "\n", encoding="utf-8")
    st = Study.open(st.path)
    text = blinding_text(st.round(1))
    assert text.startswith("Blinded by convention")
    assert text.endswith(
        " Ratings imported into this round from a ratings table: c.csv were not given in Label Studio; their "
        "blinding is not recorded."
    )
    row = dict.fromkeys(RATINGS_COLUMNS, "")
    rows = [
        {**row, "item_id": i, "rater": r, "field": "safety_label", "value": "Supported"}
        for i in "AB"
        for r in ("onc_a", "onc_b")
    ]
    facts = MethodsFacts(
        study=st,
        round=1,
        round_info=st.round(1),
        ratings=pd.DataFrame(rows),
        field_sections=[],
        blinding="Blinded and enforced by the Label Studio server: ...",
    )
    line = clause_raters(facts)
    assert "independently" not in line
    assert "schema v1.0 in Label Studio and imported from a ratings table: c.csv;" in line
    st.round(1).tables = {}
    assert " independently labelled" in clause_raters(facts) and "imported" not in clause_raters(facts)
