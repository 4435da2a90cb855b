"""Gold that one rater alone certifies, and borrowed release folders (issue 23, misuse campaign 8).

- G1 / C07: a 2-rater study whose onc_b rated nothing (a blank column in a table pull): `gold export`
  said "12 unanimous" from onc_a alone, no warning; with 3 raters and onc_c at 0 of 30: "24 unanimous".
  A study rater who rated nothing is a missing rating on every item, as one blank cell is.
- C05b / C06 / C13b: a rater renamed by hand, `gold export --only-study-raters`: gold from the one
  rater left, and one rater's rating overrode a decision as "round 2's unanimous value".

Each test builds the study with the CLI and reads what it prints or writes; each failed on the code
before its fix (checked).
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import openpyxl
from builders import wide_table
from conftest import run_cli as run

V = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]
IDS = [f"I{k:02d}" for k in range(1, 13)]
A = [V[k % 4] for k in range(12)]
B = [V[(k + 1) % 4] if k < 3 else A[k] for k in range(12)]  # onc_b differs from onc_a on I01-I03
TABLE = ["--item-col", "case_id", "--field", "safety_label"]


def _wide(path: Path, cols: dict[str, list[str]]) -> Path:
    return wide_table(path, IDS, cols)


def _gold(s: Path, version: str = "v1") -> dict[str, dict[str, str]]:
    with (s / "gold" / version / "gold.csv").open() as fh:
        return {r["item_id"]: r for r in csv.DictReader(fh)}


def _manifest(s: Path, version: str = "v1") -> dict:
    return json.loads((s / "gold" / version / "manifest.json").read_text())


def _study(tmp: Path, raters: str, cols: dict[str, list[str]], rater_cols: str, name: str = "s") -> Path:
    s = tmp / name
    run("study", "init", s, "--schema", "mtb", "--raters", raters)
    run("pull", "--study", s, "--from-table", _wide(tmp / f"{name}.csv", cols), *TABLE, "--rater-cols", rater_cols)
    return s


def _rename_rater(s: Path, old: str, new: str) -> None:
    """study.toml edited by hand: rater ``old`` becomes ``new`` (the raters list only)."""
    toml = s / "study.toml"
    text, n = re.subn(rf'^(\s*)"{old}",$', rf'\1"{new}",', toml.read_text(), flags=re.M)
    assert n == 1, text
    toml.write_text(text)


# --------------------------------------------------------------------------- G1 / C07


def test_g1_a_study_rater_who_rated_nothing_leaves_every_row_unresolved(tmp_path):
    s = _study(tmp_path, "onc_a,onc_b", {"a": A, "b": [""] * 12}, "onc_a=a,onc_b=b")
    res = run("gold", "export", "--study", s)
    assert "(12 rows: 0 unanimous, 0 adjudicated, 12 unresolved, 12 of them only for a missing rating" in res.output
    assert "onc_b rated none of the items: gold is never taken from the other rater alone" in res.stderr
    gold = _gold(s)
    assert {r["method"] for r in gold.values()} == {"unresolved"}
    assert {r["value_onc_b"] for r in gold.values()} == {""}  # the study rater is a column of gold.csv
    m = _manifest(s)
    assert m["raters"] == ["onc_a", "onc_b"]
    missing = m["rounds"]["unresolved_missing_rating"]
    assert missing["rows"] == 12 and missing["raters_without_ratings"] == ["onc_b"]
    # the review sheet lists the same rows to decide, and status counts them
    sheet = run("adjudicate", "sheet", "--study", s, "-o", tmp_path / "r.xlsx")
    assert "12 rows to decide (12 items), 0 unanimous rows" in sheet.output
    assert openpyxl.load_workbook(tmp_path / "r.xlsx")["Disagreements"].max_row == 13
    assert "12 of 12 flagged rows still to decide" in run("status", "--study", s).output


def test_g1_three_raters_one_who_rated_nothing_is_missing_on_every_item(tmp_path):
    a = [V[k % 4] for k in range(12)]
    s = _study(tmp_path, "onc_a,onc_b,onc_c", {"a": a, "b": B, "c": [""] * 12}, "onc_a=a,onc_b=b,onc_c=c")
    res = run("gold", "export", "--study", s)
    # as when onc_c has rated one item: no row is unanimous without onc_c's rating
    assert "(12 rows: 0 unanimous, 0 adjudicated, 12 unresolved, 9 of them only for a missing rating" in res.output
    assert "onc_c rated none of the items: gold is never taken from the other raters alone" in res.stderr
    assert _manifest(s)["raters"] == ["onc_a", "onc_b", "onc_c"]
    # flag --study counts the same rows as the sheet and status (campaign 10 F1: it left onc_c out, 3 items)
    sheet = run("adjudicate", "sheet", "--study", s, "-o", tmp_path / "r.xlsx")
    assert "12 rows to decide (12 items)" in sheet.output, sheet.output
    assert "12 items flagged" in run("flag", "--study", s).output


def test_a_rater_added_after_the_last_pull_is_not_expected_on_the_rounds_before(tmp_path):
    """`study add-rater` for a later round: the rounds pulled before did not include the new rater
    (their pull.json lists the raters of the pull), so their gold, flags and status stay as they were.
    With n9's first G1 fix every row became "unresolved for a missing rating" at once (checked: 34
    unanimous rows -> 0); the rater a pull recorded with a blank column stays missing (G1 above)."""
    a = [V[k % 4] for k in range(12)]
    s = _study(tmp_path, "onc_a,onc_b", {"a": a, "b": a[:11] + [V[1]]}, "onc_a=a,onc_b=b")
    first = run("gold", "export", "--study", s)
    assert "(12 rows: 11 unanimous, 0 adjudicated, 1 unresolved)" in first.output, first.output
    flagged = run("status", "--study", s).output
    assert "1 of 1 flagged row still to decide" in flagged, flagged
    assert run("study", "add-rater", s, "onc_c", "--no-account").exit_code == 0
    again = run("gold", "export", "--study", s)
    assert "Gold unchanged since v1 (11 unanimous, 0 adjudicated, 1 unresolved)" in again.output, again.output
    assert "1 of 1 flagged row still to decide" in run("status", "--study", s).output
    sheet = run("adjudicate", "sheet", "--study", s, "-o", tmp_path / "r.xlsx")
    assert "1 row to decide" in sheet.output, sheet.output
    # a pull of the round that names onc_c (blank column) makes onc_c a rater of that round: missing there
    run(
        "pull",
        "--study",
        s,
        "--round",
        2,
        "--from-table",
        _wide(tmp_path / "r2.csv", {"a": a, "b": a[:11] + [V[1]], "c": [""] * 12}),
        *TABLE,
        "--rater-cols",
        "onc_a=a,onc_b=b,onc_c=c",
    )
    third = run("gold", "export", "--study", s)
    assert "0 unanimous" in third.output, third.output


def test_g1_flags_of_a_rater_list_count_a_rater_without_ratings_as_missing():
    from test_flags import ratings_frame

    from goldboard.adjudicate.flags import flag_disagreements
    from goldboard.adjudicate.gold import resolve_gold
    from goldboard.label_configs.schema import load_schema

    schema = load_schema("mtb")
    df = ratings_frame([("X1", "a", "safety_label", V[0]), ("X2", "a", "safety_label", V[1])])
    flags = flag_disagreements(df, schema, raters=["a", "b"])
    assert list(flags["item_id"]) == ["X1", "X2"]
    assert [list(k) for k in flags["kinds"]] == [["missing"], ["missing"]]
    assert [list(m) for m in flags["missing_raters"]] == [["b"], ["b"]]
    gold = resolve_gold(df, schema, (), ["a", "b"])
    assert set(gold["method"]) == {"unresolved"} and len(gold.attrs["unresolved_for_missing"]) == 2


# --------------------------------------------------------------------------- C05b / C06 / C13b


def test_c05b_only_study_raters_never_releases_gold_from_the_one_rater_left(tmp_path):
    s = _study(tmp_path, "onc_a,onc_b", {"a": A, "b": B}, "onc_a=a,onc_b=b")
    _rename_rater(s, "onc_b", "onc_B")
    res = run("gold", "export", "--study", s, "--only-study-raters")
    assert "12 ratings by 'onc_b', not a rater of the study, left out" in res.stderr
    assert "(12 rows: 0 unanimous, 0 adjudicated, 12 unresolved, 12 of them only for a missing rating" in res.output
    assert "onc_B rated none of the items" in res.stderr
    assert _manifest(s)["raters"] == ["onc_a", "onc_B"]
    assert {r["method"] for r in _gold(s).values()} == {"unresolved"}


def test_c13b_one_raters_later_rating_does_not_supersede_a_decision(tmp_path):
    """Round 1 disagreements decided as onc_a rated; onc_b renamed onc_c by hand; round 2 (onc_a
    alone among the study raters) gives another value: the decision stays in force."""
    s = _study(tmp_path, "onc_a,onc_b", {"a": A, "b": B}, "onc_a=a,onc_b=b")
    sheet = tmp_path / "review.xlsx"
    run("adjudicate", "sheet", "--study", s, "-o", sheet)
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    head = [c.value for c in ws[1]]
    for row in ws.iter_rows(min_row=2):
        rec = dict(zip(head, row))
        if rec["Key (do not edit)"].value is not None:
            rec["Decision"].value = rec["onc_a value"].value
    wb.save(sheet)
    run("adjudicate", "import", "--study", s, sheet, "--adjudicator", "dr_chair")
    run("gold", "export", "--study", s)
    run("pull", "--study", s, "--round", 2, "--from-table", _wide(tmp_path / "r2.csv", {"a": B, "b": B}), *TABLE,
        "--rater-cols", "onc_a=a,onc_b=b", "--identical-columns-ok")  # fmt: skip
    _rename_rater(s, "onc_b", "onc_c")
    res = run("gold", "export", "--study", s, "--only-study-raters", "--force")
    assert "no longer settles the item" not in res.stderr
    gold = _gold(s, "v2")
    for item in ("I01", "I02", "I03"):  # decided onc_a's round-1 value; round 2's onc_a alone gave B's
        assert gold[item]["method"] == "adjudicated", gold[item]
        assert gold[item]["gold_value"] == A[IDS.index(item)]
    assert _manifest(s, "v2")["rounds"]["decisions_superseded"] == []


# --------------------------------------------------------------------------- B06r / C10 / C11


def _two_studies(tmp: Path) -> tuple[Path, Path]:
    """Studies A and B on the same table (A created one second earlier in study.toml); A has gold v1."""
    a = _study(tmp, "onc_a,onc_b", {"a": A, "b": B}, "onc_a=a,onc_b=b", name="A")
    toml = a / "study.toml"
    toml.write_text(
        re.sub(r'created_at = "[^"]*"', 'created_at = "2026-01-01T00:00:00+00:00"', toml.read_text(), count=1)
    )
    run("gold", "export", "--study", a)
    b = _study(tmp, "onc_a,onc_b", {"a": A, "b": B}, "onc_a=a,onc_b=b", name="B")
    return a, b


def test_b06r_a_release_of_another_study_is_refused_by_every_reader(tmp_path):
    a, b = _two_studies(tmp_path)
    run("gold", "export", "--study", b)
    assert _manifest(b)["study_created"] != _manifest(a)["study_created"]
    v1 = b / "gold" / "v1"
    for f in v1.iterdir():
        f.chmod(0o644)
        f.unlink()
    v1.rmdir()
    v1.symlink_to(a / "gold" / "v1")  # B's v1 replaced by a link to A's
    want = f"{v1}: a release of study 'A', created 2026-01-01T00:00:00+00:00, not of this study ('B'"
    for args in (
        ("gold", "export", "--study", b, "--force"),
        ("gold", "list", "--study", b),
        ("report", "--study", b, "-o", tmp_path / "out" / "r.html"),
        ("adjudicate", "sheet", "--study", b, "-o", tmp_path / "r.xlsx"),
    ):
        res = run(*args, code=None)
        assert res.exit_code == 1, (args, res.output)
        line = [ln for ln in res.output.splitlines() if ln.startswith("Error:")][0]
        assert want in line and "a copy or a link? (v1 is a link to" in line, (args, line)
    assert sorted(p.name for p in (b / "gold").iterdir()) == ["v1"]  # no v2 written over it
    # a copy of the study itself (cp -a) keeps its releases: the same study
    run("gold", "export", "--study", a, "--force")


def test_b06r_release_of_another_study_in_gold_diff(tmp_path):
    a, b = _two_studies(tmp_path)
    run("gold", "export", "--study", b)
    shutil.copytree(a / "gold" / "v1", b / "gold" / "v2")  # A's v1 copied in as B's v2
    res = run("gold", "diff", "--study", b, "v1", "v2", code=1)
    assert f"{b / 'gold' / 'v2'}: a release of study 'A'" in res.output and "a copy or a link?" in res.output


def test_c10_an_empty_release_folder_is_named_as_one(tmp_path):
    s = _study(tmp_path, "onc_a,onc_b", {"a": A, "b": B}, "onc_a=a,onc_b=b")
    run("gold", "export", "--study", s)
    (s / "gold" / "v2").mkdir()
    res = run("gold", "export", "--study", s, "--force", code=1)
    assert f"{s / 'gold' / 'v2'}: an empty folder, not a release (an interrupted copy?)" in res.output
    # status shows the progress, and says it (it said nothing about gold)
    st = run("status", "--study", s)
    assert f"warning: {s / 'gold' / 'v2'}: an empty folder, not a release" in st.output


def test_c11_a_file_with_a_release_name_is_a_file_not_a_look_alike(tmp_path):
    s = _study(tmp_path, "onc_a,onc_b", {"a": A, "b": B}, "onc_a=a,onc_b=b")
    run("gold", "export", "--study", s)
    (s / "gold" / "v10").write_text("")
    res = run("gold", "export", "--study", s, "--force", code=1)
    line = [ln for ln in res.output.splitlines() if ln.startswith("Error:")][0]
    assert f"{s / 'gold' / 'v10'}: a file, not a release folder" in line and "not a release name" not in line


def test_b06r_score_refuses_another_studys_release_given_as_a_folder(tmp_path):
    a, b = _two_studies(tmp_path)
    shutil.copytree(a / "gold" / "v1", b / "gold" / "v1")  # A's release copied into B
    preds = tmp_path / "p.csv"
    preds.write_text("case_id,model,predicted_label\nI01,m1,Supported\n")
    res = run("score", "--gold", b / "gold" / "v1", "--predictions", preds, code=None)
    assert res.exit_code != 0 and f"{b / 'gold' / 'v1'}: a release of study 'A'" in res.output, res.output
