"""Rounds as calibrate and the report tell them: every calibration look ever taken is counted, a
calibration round not pulled yet is named (never a main round tested in its place), contradictory
or changed stopping rules are refused unless said and recorded, a test-retest round and a round
fewer raters rated are named for what they are, held-out ratings are counted, and a report never
replaces another study's supplement.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import WIDE, table_study, wide_table
from conftest import error_line, invoke_cli, run_cli
from conftest import invoke_cli as run

from goldboard.study import Study

V = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information", "Unsafe"]
IDS = [f"I{k:02d}" for k in range(1, 31)]
A = [V[k % 4] for k in range(30)]
B = [(V[(k + 1) % 4] if k < 6 else A[k]) for k in range(30)]
C = [(V[(k + 2) % 4] if k >= 24 else A[k]) for k in range(30)]
PULL = ("--item-col", "case_id", "--field", "safety_label")


@pytest.fixture(autouse=True)
def _server_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "srv"))


def _table(path: Path, cols: dict[str, list[str]]) -> Path:
    return wide_table(path, IDS, cols)


def three_rater_study(tmp_path: Path, name: str = "ST") -> Path:
    """30 items rated by onc_a, onc_b, onc_c in round 1 (a/b differ on 6 items, a/c on 6 others)."""
    st = tmp_path / name
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b,onc_c")
    t3 = _table(tmp_path / f"{name}_t3.csv", {"a": A, "b": B, "c": C})
    run_cli("pull", "--study", st, "--from-table", t3, *PULL, "--rater-cols", "onc_a=a,onc_b=b,onc_c=c")
    return st


def _remarked_study(tmp_path: Path) -> Path:
    st = three_rater_study(tmp_path)
    t2 = _table(tmp_path / "t2.csv", {"a": A, "b": B})
    run_cli("pull", "--study", st, "--from-table", t2, *PULL, "--rater-cols", "onc_a=a,onc_b=b", "--round", 2)
    run_cli("study", "round", st, 1, "--calibration")
    run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3")
    res = run_cli("study", "round", st, 1, "--main")
    assert "Warning: calibration look 1 was taken on round 1; it stays counted" in res.output
    run_cli("study", "round", st, 2, "--calibration")
    return st


def test_m10_a_look_on_a_round_marked_main_later_still_counts(tmp_path):
    st = _remarked_study(tmp_path)
    res = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "json")
    data = json.loads(res.stdout)
    assert [(r["round"], r["look"]) for r in data["rounds"]] == [(1, 1), (2, 2)]
    assert data["looks"] == 2
    cal = Study.open(st).extra["calibration"]
    assert cal["looks"] == 2 and cal["look_rounds"] == [1, 2]
    table = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3").output
    assert "Looks: 2 of 5 planned" in table
    assert "round 1 is not marked calibration now, but look 1 was taken on it: it stays a look" in table
    run_cli("report", "--study", st, "--format", "markdown", "-o", tmp_path / "rep" / "r.md")
    text = (tmp_path / "rep" / "r.md").read_text()
    assert "2 looks taken (rounds 1, 2): met at the latest look (round 2)" in text
    assert "1 look taken" not in text
    assert "a calibration look (look 1) was taken on round 1" in text


def test_m10_showing_one_round_keeps_the_look_numbers(tmp_path):
    st = _remarked_study(tmp_path)
    run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3")
    out = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--round", 2).output
    assert "2 of 5" in out and "Looks: 2 of 5 planned" in out
    assert Study.open(st).extra["calibration"]["look_rounds"] == [1, 2]


def _two_rater_study(tmp_path: Path, name: str) -> Path:
    st = tmp_path / name
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    t2 = _table(tmp_path / f"{name}_t2.csv", {"a": A, "b": B})
    run_cli("pull", "--study", st, "--from-table", t2, *PULL, "--rater-cols", "onc_a=a,onc_b=b")
    return st


def test_r_sup_another_studys_report_never_replaces_a_supplement(tmp_path):
    a, b = three_rater_study(tmp_path, "A"), _two_rater_study(tmp_path, "B")
    out = tmp_path / "out"
    run_cli("report", "--study", a, "--format", "markdown", "-o", out / "a.md")
    before = {p.name: p.read_bytes() for p in (out / "supplement").iterdir()}
    assert any("onc_c" in n for n in before)
    res = invoke_cli("report", "--study", b, "--format", "markdown", "-o", out / "b.md")
    line = error_line(res)
    assert "out/supplement/ holds the CSV supplement of the report a.md of another study (A," in line
    assert "--no-supplement" in line and "--output" in line
    assert not (out / "b.md").exists()
    assert {p.name: p.read_bytes() for p in (out / "supplement").iterdir()} == before
    run_cli("report", "--study", b, "--format", "markdown", "-o", out / "b.md", "--no-supplement")
    assert (out / "b.md").exists() and {p.name: p.read_bytes() for p in (out / "supplement").iterdir()} == before


def test_r_sup_the_same_report_rewritten_or_its_study_moved_keeps_its_supplement(tmp_path):
    a = three_rater_study(tmp_path, "A")
    out = tmp_path / "out"
    run_cli("report", "--study", a, "--format", "markdown", "-o", out / "a.md")
    run_cli("report", "--study", a, "-o", out / "a.html")  # the same report as HTML
    moved = a.rename(tmp_path / "A_moved")
    res = run_cli("report", "--study", moved, "--format", "markdown", "-o", out / "a.md")
    assert str(out / "supplement") in res.output
    rec = json.loads((out / "supplement" / ".goldboard-supplement.json").read_text())
    assert rec["study_name"] == "A" and rec["report"] == "a.md" and rec["files"]
    assert "Warning" not in res.output
    # the same study's report under another name replaces the tables a.md points at: said so
    res = run_cli("report", "--study", moved, "--format", "markdown", "-o", out / "a2.md", "--round", 1)
    assert "Warning: " + str(out / "supplement") + "/ held the CSV supplement of a.md (this study); it now holds" in (
        res.output
    )


def test_s04_score_header_counts_the_files_rows_and_the_skipped_ones(tmp_path):
    st = _two_rater_study(tmp_path, "ST")
    run_cli("gold", "export", "--study", st)  # a/b differ on 6 items: 6 unresolved
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        "".join(json.dumps({"case_id": i, "model": "gpt", "predicted_label": "Supported"}) + "\n" for i in IDS)
    )
    out = run_cli("score", "--study", st, "--predictions", preds, "--bootstrap", 0).stdout
    assert f"predictions: {preds}, 30 rows, 24 scored (6 on items with unresolved gold, skipped)" in out
    assert "24 rows" not in out


RETEST = [V[4] if k in (1, 5, 9, 13) else A[k] for k in range(30)]  # onc_a changes 4 of 30 labels


def test_m06_a_round_one_rater_re_rated_is_named_and_its_retest_agreement_reported(tmp_path):
    st = three_rater_study(tmp_path)
    t = _table(tmp_path / "retest.csv", {"a": RETEST})
    run_cli("pull", "--study", st, "--from-table", t, *PULL, "--rater-cols", "onc_a=a", "--round", 2)
    agree = run_cli("agree", "--study", st, "--test-retest", "--rounds", "1,2").stdout
    assert "onc_a  Percent agreement               30  0.867  0.703 to 0.947  wilson" in agree
    assert "onc_a  Cohen's kappa                   30  0.830  0.626 to 0.928  wilson" in agree
    run_cli("report", "--study", st, "--format", "markdown", "-o", tmp_path / "rep" / "r.md")
    text = (tmp_path / "rep" / "r.md").read_text()
    assert "nothing to analyse yet" not in text and "is in progress" not in text
    assert (
        "- Round analysed: round 1, the latest complete round; round 2 has ratings from onc_a only (30 items, each "
        "rated in round 1 too): a test-retest round or a round in progress, with no inter-rater agreement to analyse "
        "(onc_a's test-retest agreement: goldboard agree --test-retest --rounds 1,2)"
    ) in text
    section = text[text.index("## Test-retest (intra-rater) agreement") :]
    assert "Round 2 has ratings from onc_a only, of items onc_a rated in round 1 too" in section
    assert "| onc_a | 1 vs 2 | Percent agreement | 30 | 0.867 | 0.703 to 0.947 | wilson |" in section
    assert "| onc_a | 1 vs 2 | Cohen's kappa | 30 | 0.830 | 0.626 to 0.928 | wilson |" in section
    sup = (tmp_path / "rep" / "supplement" / "test_retest.csv").read_text()
    assert "0.867" in sup and "onc_a" in sup


def test_m06_a_round_fewer_raters_rated_is_not_nothing_to_analyse(tmp_path):
    st = three_rater_study(tmp_path)
    t2 = _table(tmp_path / "t2.csv", {"a": A, "b": B})
    run_cli("pull", "--study", st, "--from-table", t2, *PULL, "--rater-cols", "onc_a=a,onc_b=b", "--round", 2)
    run_cli("report", "--study", st, "--format", "markdown", "-o", tmp_path / "rep" / "r.md")
    text = (tmp_path / "rep" / "r.md").read_text()
    assert "nothing to analyse yet" not in text
    assert (
        "round 2 has ratings from onc_a, onc_b only (onc_c rated none of its 30 items): a round with fewer raters, "
        "or one in progress; --round 2 analyses it as it is"
    ) in text
    assert "## Test-retest" not in text
    res = run_cli("agree", "--study", st, "--round", 2)
    assert "30" in res.stdout  # the round the sentence points at is analysable as it is
    run_cli("study", "round", st, 2, "--calibration")
    out = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--no-record").output
    assert (
        "Note: round 2 has ratings from onc_a, onc_b only (30 items; a round with fewer raters, or one in progress): "
        "evaluated as it is"
    ) in out


COLS = ("--rater-cols", "onc_a=a,onc_b=b")


def two_rater_study(tmp_path: Path) -> Path:
    """30 items rated by onc_a and onc_b in round 1 (a main round; they differ on 6 items)."""
    st = tmp_path / "S"
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    run_cli("pull", "--study", st, "--from-table", _table(tmp_path / "t1.csv", {"a": A, "b": B}), *PULL, *COLS)
    return st


def test_calibrate_never_tests_a_main_round_for_a_calibration_round_not_pulled(tmp_path):
    st = two_rater_study(tmp_path)
    run_cli("study", "round", st, 2, "--calibration")
    before = (st / "study.toml").read_bytes()
    for extra in ((), ("--no-record",)):
        res = invoke_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", *extra)
        line = error_line(res)
        assert "round 2 is marked as calibration but not pulled yet" in line, line
        assert "round 1 is a main round" in line and "no look recorded" in line, line
        assert "no round is marked" not in res.output and "calibration can stop" not in res.output
    assert (st / "study.toml").read_bytes() == before  # no look, no rule recorded
    assert "calibration" not in Study.open(st).extra
    # naming the main round explicitly takes no look on it either
    line = error_line(invoke_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--round", 1))
    assert "--round: round 1 is a main round, not a calibration round (round 2 is marked as calibration)" in line
    assert (st / "study.toml").read_bytes() == before
    # the report (a rule given) says the same instead of testing round 1
    out = tmp_path / "r.md"
    run_cli("report", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "markdown", "-o", out, "--no-supplement")
    text = out.read_text()
    assert "Round 2 is marked as calibration but not pulled yet" in text
    assert "calibration can stop" not in text and "met in round 1" not in text


def test_calibrate_tests_the_pulled_calibration_round_and_names_the_one_not_pulled(tmp_path):
    """Round 2 marked calibration and pulled, round 3 declared calibration: round 2 is look 1 (round 1,
    a main round, is not shown), round 3 is named as not pulled yet."""
    st = two_rater_study(tmp_path)
    run_cli(
        "pull", "--study", st, "--round", 2, "--from-table", _table(tmp_path / "t2.csv", {"a": A, "b": B}), *PULL, *COLS
    )
    run_cli("study", "round", st, 2, "--calibration")
    run_cli("study", "round", st, 3, "--calibration")
    res = run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "json")
    data = json.loads(res.stdout)
    assert [(r["round"], r["look"]) for r in data["rounds"]] == [(2, 1)]
    assert "round 3 marked as calibration but not pulled yet: not evaluated" in data["notes"]
    assert not any("no round is marked" in n for n in data["notes"])
    assert Study.open(st).extra["calibration"]["look_rounds"] == [2]


def _report(st: Path, out: Path) -> str:
    run_cli("report", "--study", st, "--format", "markdown", "-o", out, "--no-supplement")
    return out.read_text()


def test_report_names_held_out_ratings_and_never_calls_the_round_test_retest(tmp_path):
    st = two_rater_study(tmp_path)
    bad = _table(tmp_path / "t2.csv", {"a": A, "b": ["Perhaps"] * 30})
    res = run_cli("pull", "--study", st, "--round", 2, "--from-table", bad, *PULL, *COLS)
    assert "onc_b: 0 rated, 30 invalid" in res.output
    text = _report(st, tmp_path / "r.md")
    where = f"see {st / 'rounds' / '2' / 'invalid.csv'}"
    assert (
        "- Round analysed: round 1, the latest complete round; round 2 has valid ratings from onc_a only (30 items; "
        f"onc_b's ratings of 30 items held out as invalid at pull, {where}): not a test-retest round" in text
    )
    assert "a test-retest round or a round in progress" not in text
    assert "Test-retest (intra-rater) agreement" not in text  # no retest section on onc_a alone
    warnings = text[text.index("## Warnings") :]
    assert "- none" not in warnings
    assert (
        f"- round 2: onc_b's ratings of 30 items were held out as invalid at pull ({where}); they are in none of this "
        "report's statistics" in warnings
    )
    # agree names the round the same way
    res = run_cli("agree", "--study", st)
    assert "onc_b's ratings of 30 items held out as invalid at pull" in res.output


def test_true_retest_round_keeps_its_section_and_counts_its_own_held_out_ratings(tmp_path):
    """onc_a alone re-rates the 30 items, 2 of them with a value the schema does not have: still a
    test-retest round (no other rater's rating was held out); the sentence, the section and the warnings
    count the 2 held out."""
    st = two_rater_study(tmp_path)
    a2 = ["Perhaps", "Perhaps", *A[2:]]
    run_cli(
        "pull",
        "--study",
        st,
        "--round",
        2,
        "--from-table",
        _table(tmp_path / "t2.csv", {"a": a2}),
        *PULL,
        "--rater-cols",
        "onc_a=a",
    )
    text = _report(st, tmp_path / "r.md")
    where = f"see {st / 'rounds' / '2' / 'invalid.csv'}"
    assert (
        f"round 2 has ratings from onc_a only (28 items, each rated in round 1 too; onc_a's ratings of 2 items held "
        f"out as invalid at pull, {where}): a test-retest round or a round in progress" in text
    )
    assert "## Test-retest (intra-rater) agreement" in text
    assert "2 of onc_a's round-2 ratings were held out as invalid at pull and are not in these numbers" in text
    assert "- round 2: onc_a's ratings of 2 items were held out as invalid at pull" in text


def test_calibrate_names_held_out_ratings_of_a_round_it_leaves_out(tmp_path):
    """Rounds 1 and 2 marked calibration; onc_b's round-2 ratings all held out: calibrate tests round 1
    and says why round 2 is left out (not "in progress")."""
    st = two_rater_study(tmp_path)
    bad = _table(tmp_path / "t2.csv", {"a": A, "b": ["Perhaps"] * 30})
    run_cli("pull", "--study", st, "--round", 2, "--from-table", bad, *PULL, *COLS)
    for n in (1, 2):
        run_cli("study", "round", st, n, "--calibration")
    data = json.loads(run_cli("calibrate", "--study", st, "--rule", "kappa_lower>=0.3", "--format", "json").stdout)
    assert [r["round"] for r in data["rounds"]] == [1]
    where = st / "rounds" / "2" / "invalid.csv"
    assert (
        f"round 2 has valid ratings from onc_a only (30 items; onc_b's ratings of 30 items held out as invalid at "
        f"pull, see {where}): not evaluated" in data["notes"]
    )


def test_report_counts_held_out_ratings_of_the_round_it_analyses(tmp_path):
    st = tmp_path / "S"
    run_cli("study", "init", st, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b")
    b = ["Perhaps"] * 5 + B[5:]
    run_cli("pull", "--study", st, "--from-table", _table(tmp_path / "t1.csv", {"a": A, "b": b}), *PULL, *COLS)
    text = _report(st, tmp_path / "r.md")
    where = f"see {st / 'rounds' / '1' / 'invalid.csv'}"
    assert (
        "- Round analysed: round 1, the latest round, as it is (25 of 30 items rated by every rater; onc_b's ratings "
        f"of 5 items held out as invalid at pull, {where})" in text
    )
    assert f"- round 1: onc_b's ratings of 5 items were held out as invalid at pull ({where})" in text


def _calibration_study(tmp_path: Path) -> Path:
    s = table_study(tmp_path)
    t = tmp_path / "cal.csv"
    rows = [("Supported", "Supported"), ("Unsafe", "Unsafe"), ("Supported", "Unsupported"), ("Unsafe", "Unsafe")] * 5
    t.write_text("case_id,a,b\n" + "".join(f"C{i},{a},{b}\n" for i, (a, b) in enumerate(rows)))
    assert run("pull", "--study", s, "--from-table", t, *WIDE).exit_code == 0
    assert run("study", "round", s, 1, "--calibration").exit_code == 0
    return s


@pytest.mark.parametrize(
    "rules,needle",
    [
        (["kappa_lower>=0.6", "kappa_lower<0.5"], "'kappa_lower>=0.6' and 'kappa_lower<0.5' contradict each other"),
        (["kappa_upper<0.5", "kappa_lower>=0.6"], "(kappa_lower never exceeds kappa_upper)"),
        (["alpha_value>0.7", "alpha_value<=0.7"], "'alpha_value>0.7' and 'alpha_value<=0.7' contradict"),
    ],
)
def test_contradictory_calibration_rules_refused(tmp_path, rules, needle):
    s = _calibration_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    args = [x for r in rules for x in ("--rule", r)]
    line = error_line(run("calibrate", "--study", s, *args))
    assert line.startswith("Error: --rule: ") and needle in line
    assert (s / "study.toml").read_bytes() == toml


def test_compatible_and_repeated_rules_accepted():
    from goldboard.analysis.calibration import check_rules, parse_rule

    rules = [parse_rule(r) for r in ("kappa_lower>=0.6", "kappa_lower>=0.6", "kappa_upper<=0.95", "alpha_lower<0.5")]
    assert [r.text for r in check_rules(rules)] == ["kappa_lower>=0.6", "kappa_upper<=0.95", "alpha_lower<0.5"]


def test_rule_changed_after_a_look_refused_unless_said_and_recorded(tmp_path):
    s = _calibration_study(tmp_path)
    assert run("calibrate", "--study", s, "--rule", "kappa_lower>=0.6").exit_code == 0
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4"))
    assert "has taken 1 look(s)" in line and "(rule kappa_lower>=0.6 -> kappa_lower>=0.4)" in line
    assert "--change-rule" in line
    assert (s / "study.toml").read_bytes() == toml
    assert run("calibrate", "--study", s, "--rule", "kappa_lower>=0.6").exit_code == 0  # the same rule: fine
    res = run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4", "--change-rule")
    assert res.exit_code == 0, res.output
    from goldboard.study import Study

    rec = Study.open(s).extra["calibration"]
    assert rec["rules"] == ["kappa_lower>=0.4"]
    assert rec["rule_changes"] == ["after look 1: rule kappa_lower>=0.6 -> kappa_lower>=0.4"]
    assert run("calibrate", "--study", s, "--rule", "kappa_lower>=0.4").exit_code == 0
    assert Study.open(s).extra["calibration"]["rule_changes"] == rec["rule_changes"]  # kept on record
