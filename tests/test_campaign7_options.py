"""Campaign 7 (issue 23), helper f7: the plan sample strata, a second review sheet in one
workbook, a re-pull that takes nothing, and options that do nothing.  Each test fails on the
code before its fix (checked by running it there)."""

from __future__ import annotations

import csv
import re
from collections import Counter
from pathlib import Path

import click
import numpy as np
import pytest
from conftest import error_line, invoke_cli

from goldboard.analysis import planning as pl
from goldboard.cli._output import FORMAT_SUFFIXES

#: the manual page that was README "Planning and calibration"
README = Path(__file__).resolve().parents[1] / "docs" / "calibration-reference.md"

# -- O12: plan sample with fewer cases than strata ------------------------------------------------


def _drawn_strata(strata: list[str], n: int, seed: int) -> Counter:
    return Counter(strata[i] for i in pl.stratified_sample(strata, n, seed))


#: seeds of each simulation: a frequency p over 2000 draws has an SD of at most 0.0112 (p = 0.5);
#: the tolerance 0.05 is 4.5 SDs, so a correct sampler fails one stratum's check with probability
#: about 1e-5 (and the seeds are fixed: the test is deterministic)
SIMS, TOL = 2000, 0.05


@pytest.mark.parametrize(
    "sizes,n",
    [([5] * 8, 5), (list(range(1, 9)), 3), ([40, 1, 1, 1], 2)],
    ids=["8 equal strata, n 5", "sizes 1..8, n 3", "one large stratum, n 2"],
)
def test_fewer_cases_than_strata_draws_each_stratum_equally_often(sizes, n):
    """Each stratum is drawn with probability n / strata whatever its size (README), one case;
    before the fix the first n strata in sort order were always drawn (s6..s8 never)."""
    strata = [f"s{j + 1}" for j, size in enumerate(sizes) for _ in range(size)]
    hits = Counter()
    for seed in range(SIMS):
        drawn = _drawn_strata(strata, n, seed)
        assert sum(drawn.values()) == n and set(drawn.values()) == {1}
        hits.update(drawn.keys())
    expected = n / len(sizes)
    for j in range(len(sizes)):
        freq = hits[f"s{j + 1}"] / SIMS
        assert abs(freq - expected) < TOL, (f"s{j + 1}", freq, expected)


def test_remainder_ties_are_drawn_with_the_seed_not_by_name():
    """8 strata of 5 cases, n 10: one each, and the 2 spare cases tie across all 8 strata; each
    stratum gets the second case with probability 2/8 (before: always s1 and s2)."""
    strata = [f"s{j + 1}" for j in range(8) for _ in range(5)]
    twos = Counter()
    for seed in range(SIMS):
        drawn = _drawn_strata(strata, 10, seed)
        assert sorted(drawn.values()) == [1] * 6 + [2] * 2
        twos.update(s for s, k in drawn.items() if k == 2)
    for j in range(8):
        assert abs(twos[f"s{j + 1}"] / SIMS - 0.25) < TOL, (j, twos)


def test_readme_description_of_the_sampler_holds_in_every_case():
    """500 random designs (1-10 strata of 1-15 cases, every n): the allocation README "Planning
    and calibration" describes -- one per stratum and largest remainders of the proportional
    share of the cases left (n >= strata), or one case in each of n strata (n < strata) -- the
    same set for the same seed, no case twice."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    for phrase in (
        "every stratum gives one case and the rest are allocated proportionally to the cases each stratum has left",
        "N strata are drawn at random with the seed, each equally likely whatever its size",
        "a warning says so and names the strata left without a case",
    ):
        assert phrase in text, phrase
    rng = np.random.default_rng(2026)
    for _ in range(500):
        sizes = [int(x) for x in rng.integers(1, 16, int(rng.integers(1, 11)))]
        strata = [f"g{j}" for j, size in enumerate(sizes) for _ in range(size)]
        n, seed = int(rng.integers(1, len(strata) + 1)), int(rng.integers(0, 2**32 - 1))
        picked = pl.stratified_sample(strata, n, seed)
        assert picked == pl.stratified_sample(strata, n, seed) and len(set(picked)) == n == len(picked)
        got = Counter(strata[i] for i in picked)
        alloc = [got[f"g{j}"] for j in range(len(sizes))]
        if n < len(sizes):
            assert sorted(alloc) == [0] * (len(sizes) - n) + [1] * n
            continue
        pool, rest = sum(sizes) - len(sizes), n - len(sizes)
        extra = [a - 1 for a in alloc]
        floor = [rest * (s - 1) // pool if pool else 0 for s in sizes]
        rem = [rest * (s - 1) % pool if pool else 0 for s in sizes]
        assert all(e - f in (0, 1) for e, f in zip(extra, floor)), (sizes, n, alloc)
        up = [r for e, f, r in zip(extra, floor, rem) if e > f]
        down = [r for e, f, r in zip(extra, floor, rem) if e == f and r]
        assert not up or not down or min(up) >= max(down), (sizes, n, alloc)


def _cases_csv(path: Path, n_strata: int = 8, per: int = 5) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "text", "specialty"])
        for i in range(n_strata * per):
            w.writerow([f"C{i:03d}", f"case {i}", f"s{i % n_strata + 1}"])
    return path


def test_plan_sample_below_the_strata_warns_and_varies_with_the_seed(tmp_path):
    cases = _cases_csv(tmp_path / "cases.csv")
    sets = set()
    for seed in range(1, 7):
        out = tmp_path / f"s{seed}.csv"
        res = invoke_cli("plan", "sample", "--cases", cases, "-n", 5, "--by", "specialty", "--seed", seed, "-o", out)
        assert res.exit_code == 0, res.output
        with out.open(encoding="utf-8") as fh:
            drawn = sorted(r["specialty"] for r in csv.DictReader(fh))
        assert len(drawn) == 5 == len(set(drawn))
        sets.add(tuple(drawn))
        warning = [ln for ln in res.stderr.splitlines() if ln.startswith("Warning:")]
        assert len(warning) == 1, res.output
        missing = sorted(set(f"s{j}" for j in range(1, 9)) - set(drawn))
        assert "below the 8 strata of 'specialty': not every stratum can be represented" in warning[0]
        assert re.findall(r"'(s\d)'", warning[0].split("no case from")[1]) == missing
    assert len(sets) > 1  # before the fix: always s1..s5
    # n at least the strata: no warning
    res = invoke_cli("plan", "sample", "--cases", cases, "-n", 8, "--by", "specialty", "-o", tmp_path / "all.csv")
    assert res.exit_code == 0 and "Warning" not in res.output, res.output


def test_methods_say_how_many_strata_gave_a_case(tmp_path):
    """The recorded draw of -n 5 over 8 strata is cited as such, never as a plain stratified draw."""
    s = tmp_path / "st"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    table = tmp_path / "t.csv"
    rows = ["case_id,a,b"] + [f"C{i:03d},Supported,{'Supported' if i % 3 else 'Unsupported'}" for i in range(12)]
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pull = ["--item-col", "case_id", "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"]
    invoke_cli("pull", "--study", s, "--from-table", table, *pull, code=0)
    cases = _cases_csv(tmp_path / "cases.csv")
    sample = ["plan", "sample", "--cases", cases, "--by", "specialty", "--study", s]
    invoke_cli(*sample, "-n", 5, "-o", tmp_path / "cal.csv", code=0)
    out = tmp_path / "r.md"
    invoke_cli("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement", code=0)
    text = " ".join(out.read_text(encoding="utf-8").replace("\\", "").split())
    assert (
        "Item sampling: 5 of 40 cases of cases.csv drawn at random by goldboard plan sample (seed 1, stratified by "
        "specialty: 5 of its 8 strata drawn at random, one case each)." in text
    )
    invoke_cli(*sample, "-n", 10, "-o", tmp_path / "cal2.csv", code=0)
    invoke_cli("report", "--study", s, "--format", "markdown", "-o", out, "--no-supplement", code=0)
    text = " ".join(out.read_text(encoding="utf-8").replace("\\", "").split())
    assert "(seed 1, stratified by specialty)." in text


# -- W01: a second Disagreements sheet in the review workbook --------------------------------------

LABELS = ["Supported", "Partially Supported", "Unsupported", "Insufficient Information"]


@pytest.fixture()
def sheet_study(tmp_path):
    """A study whose round 1 has 10 disagreements among 30 items, and its review workbook."""
    s = tmp_path / "st"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    rows = ["case_id,a,b"]
    for i in range(30):
        a = LABELS[i % 4]
        rows.append(f"C{i:02d},{a},{a if i % 3 else LABELS[(i + 1) % 4]}")
    table = tmp_path / "t.csv"
    table.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pull = ["--item-col", "case_id", "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"]
    invoke_cli("pull", "--study", s, "--from-table", table, *pull, code=0)
    sheet = tmp_path / "review.xlsx"
    invoke_cli("adjudicate", "sheet", "--study", s, "-o", sheet, code=0)
    return s, sheet


def _fill(ws, label: str) -> None:
    head = [c.value for c in ws[1]]
    col = head.index("Decision") + 1
    for r in range(2, ws.max_row + 1):
        ws.cell(r, col).value = label


@pytest.mark.parametrize("how", ["copy", "pasted rows"])
def test_import_refuses_a_second_disagreements_sheet(sheet_study, tmp_path, how):
    """Before: only 'Disagreements' was read (10 new decisions), the copy's decisions ignored."""
    import openpyxl

    s, sheet = sheet_study
    wb = openpyxl.load_workbook(sheet)
    ws = wb["Disagreements"]
    _fill(ws, "Supported")
    if how == "copy":
        other = wb.copy_worksheet(ws)
        other.title = "Disagreements (2)"
        _fill(other, "Unsupported")
    else:  # the rows pasted into a sheet of one's own, without the header
        other = wb.create_sheet("meeting 2")
        for row in ws.iter_rows(min_row=2, values_only=True):
            other.append(list(row))
    filled = tmp_path / "filled.xlsx"
    wb.save(filled)
    log = s / "decisions.jsonl"
    before = log.read_bytes() if log.exists() else b""
    res = invoke_cli("adjudicate", "import", "--study", s, filled, "--adjudicator", "dr_chair")
    line = error_line(res)
    assert f"sheets 'Disagreements', '{other.title}' each hold Disagreements rows" in line
    assert "keep 'Disagreements' with the decisions that count" in line
    assert (log.read_bytes() if log.exists() else b"") == before


def test_sheet_output_counts_decisions_typed_into_a_copy(sheet_study, tmp_path):
    """`adjudicate sheet -o` over a workbook whose decisions were typed into a copy of the sheet
    is refused like one typed into Disagreements (before: replaced without a word)."""
    import openpyxl

    s, sheet = sheet_study
    wb = openpyxl.load_workbook(sheet)
    other = wb.copy_worksheet(wb["Disagreements"])
    other.title = "Disagreements (2)"
    _fill(other, "Unsupported")
    wb.save(sheet)
    line = error_line(invoke_cli("adjudicate", "sheet", "--study", s, "-o", sheet))
    assert "holds 10 decision(s) not in the decisions log (e.g. 'Disagreements (2)'!F2;" in line


# -- T15: a pull that takes nothing ------------------------------------------------------------------

PULL_AB = ["--item-col", "case_id", "--field", "safety_label", "--rater-cols", "onc_a=a,onc_b=b"]


def _table(path: Path, rows: list[str]) -> Path:
    path.write_text("case_id,a,b\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def _study_files(s: Path) -> dict[str, bytes]:
    return {str(p.relative_to(s)): p.read_bytes() for p in sorted(s.rglob("*")) if p.is_file()}


def test_repull_of_a_round_from_another_file_is_refused_and_says_how_to_replace(tmp_path):
    """Before: "0 valid ratings ... 6 x already rated from another source", exit 0, and the
    corrected file recorded in study.toml as a source of round 1."""
    s = tmp_path / "st"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    t1 = _table(tmp_path / "t1.csv", ["C1,Supported,Unsupported", "C2,Supported,Supported", "C3,Unsupported,Supported"])
    invoke_cli("pull", "--study", s, "--from-table", t1, *PULL_AB, code=0)
    fixed = ["C1,Unsupported,Unsupported", "C2,Supported,Supported", "C3,Supported,Unsupported"]
    t2 = _table(tmp_path / "t1_corrected.csv", fixed)
    before = _study_files(s)
    line = error_line(invoke_cli("pull", "--study", s, "--from-table", t2, *PULL_AB, "--round", 1))
    assert "t1_corrected.csv: nothing pulled: all 6 of its ratings are already in round 1 from 't1.csv'" in line
    assert "pull it as that source (--source t1.csv: the output lists each change)" in line
    assert "to add it as a new round, give --round 2" in line
    assert _study_files(s) == before
    # the advice works: the corrected table replaces t1.csv's ratings
    res = invoke_cli("pull", "--study", s, "--from-table", t2, *PULL_AB, "--round", 1, "--source", "t1.csv", code=0)
    assert "3 changed" in res.output
    rows = (s / "rounds/1/ratings.csv").read_text(encoding="utf-8")
    assert "C1,C1,,,onc_a,safety_label,Unsupported" in rows


def test_table_without_a_valid_rating_is_refused_and_writes_nothing(tmp_path):
    """Before: exit 0, an empty round 1 written and the 2 items recorded as new units."""
    s = tmp_path / "st"
    invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", code=0)
    before = _study_files(s)
    bad = _table(tmp_path / "bad.csv", ["C1,Supportd,Unsup", "C2,x,y"])
    line = error_line(invoke_cli("pull", "--study", s, "--from-table", bad, *PULL_AB))
    assert "bad.csv: nothing pulled: no valid rating in this table (4 held out as invalid; e.g. bad.csv:2: " in line
    assert "'Supportd' is not a value of safety_label" in line
    assert _study_files(s) == before


# -- O09/O10/O13: an output named for another format; options that do nothing ---------------------


def _commands() -> list[tuple[tuple[str, ...], click.Command]]:
    from test_campaign_options import _leaf_commands

    return _leaf_commands()


def _ratings(tmp_path: Path) -> Path:
    r = tmp_path / "r.csv"
    rows = ["item_id,rater,value"] + [
        f"I{i},{rater},{v}" for i in range(1, 21) for rater, v in (("a", i % 3), ("b", i % 2))
    ]
    r.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return r


def test_agree_csv_into_a_json_name_is_refused(tmp_path):
    """O09: ``agree --format csv -o out.json`` wrote CSV into a .json file, exit 0."""
    out = tmp_path / "out.json"
    res = invoke_cli("agree", _ratings(tmp_path), "--format", "csv", "-o", out)
    assert (
        res.exit_code == 2
        and "'out.json' ends in .json but -o writes csv (--format csv); --format json writes it"
        in error_line(res).replace(str(tmp_path) + "/", "")
    )
    assert not out.exists()
    invoke_cli("agree", _ratings(tmp_path), "--format", "json", "-o", out, code=0)  # its own ending
    invoke_cli("agree", _ratings(tmp_path), "--format", "csv", "-o", tmp_path / "out.txt", code=0)  # no known ending


def test_every_format_and_output_command_refuses_another_formats_ending():
    """One rule for every command with --format and -o: each format choice, with an output named
    for another format (one the command writes, else .pdf), is refused before the command runs."""
    walked = 0
    for path, cmd in _commands():
        names = {p.name: p for p in cmd.params}
        if "fmt" not in names or "output" not in names:
            continue
        choices = list(names["fmt"].type.choices)
        for fmt in choices:
            other = next((c for c in choices if c != fmt and c in FORMAT_SUFFIXES), "pdf")
            if other == fmt:
                continue
            args = [*path, *_required_args(cmd), "--format", fmt, "-o", f"x{FORMAT_SUFFIXES[other][0]}"]
            res = invoke_cli(*args)
            assert res.exit_code == 2 and f"-o writes {fmt} (--format {fmt})" in res.output, (args, res.output)
            walked += 1
    assert (
        walked >= 20
    )  # agree, calibrate, flag, gold diff? (no -o), judge x2, plan size, report, schema, score, status ...


def _required_args(cmd: click.Command) -> list[str]:
    args: list[str] = []
    for p in cmd.params:
        if not p.required:
            continue
        if isinstance(p, click.Argument):
            args.append("x")
        else:
            args += [p.opts[0], "x"]
    return args


_CLUSTER = "--bootstrap N (N > 0), between raters (not --test-retest)"
_LONG = "a long TABLE (not --raters, --study or --from-label-studio)"
_HTML = "the HTML report or --pdf (not --format markdown)"

#: (command, option) -> arguments that leave the option without the one it needs; every
#: declared pair is walked (the declarations: each command's ``applies_only_with``)
IDLE = {
    ("agree", "seed"): (["x.csv", "--seed", "5"], "--bootstrap N (N > 0)"),
    # campaign 8b D24/D14/D23/D20 (tests/test_campaign8_options.py reads each on a real study)
    ("agree", "cluster_col"): (["x.csv", "--cluster-col", "case_id"], _CLUSTER),
    ("agree", "item_col"): (["--study", "S", "--item-col", "c"], "a TABLE (not --study or --from-label-studio)"),
    ("agree", "rater_col"): (["--study", "S", "--rater-col", "c"], _LONG),
    ("agree", "label_col"): (["x.csv", "--raters", "a,b", "--label-col", "c"], _LONG),
    ("report", "paper"): (["--study", "S", "--format", "markdown", "--paper", "a4"], _HTML),
    ("report", "seed"): (["--study", "S", "--seed", "5"], "--bootstrap N (N > 0) or --ci auto"),
    ("calibrate", "seed"): (["--study", "S", "--rule", "kappa_lower>=0.6", "--seed", "5"], "--bootstrap N (N > 0)"),
    ("score", "seed"): (["--study", "S", "--bootstrap", "0", "--seed", "5"], "--bootstrap N (N > 0)"),
    ("plan size", "simulations"): (["--kappa", ".7", "--lower", ".5", "--simulations", "200"], "--assurance"),
    ("plan size", "seed"): (["--kappa", ".7", "--lower", ".5", "--seed", "3"], "--assurance"),
    ("plan size", "power"): (["--kappa", ".7", "--lower", ".5", "--power", ".9"], "--null"),
    ("plan size", "two_sided"): (["--kappa", ".7", "--lower", ".5", "--two-sided"], "--null"),
    ("plan size", "no_record"): (["--kappa", ".7", "--lower", ".5", "--no-record"], "--study"),
}


def test_options_that_do_nothing_are_refused_everywhere(tmp_path, monkeypatch):
    """O10/O13: ``plan size --simulations 200`` without --assurance and ``agree --seed 5`` without
    --bootstrap were ignored without a word.  Every declared pair is walked, and the table above
    is exactly the declarations; an option whose help says "With --X" is declared (or refused by
    its command's own code: listed in OWN_CHECK)."""
    monkeypatch.chdir(tmp_path)
    declared = {
        (" ".join(path), name): companion
        for path, cmd in _commands()
        for name, (companion, _) in getattr(cmd, "applies_only_with", {}).items()
    }
    assert set(declared) == set(IDLE)
    for (path, name), (args, companion) in IDLE.items():
        assert declared[(path, name)] == companion
        res = invoke_cli(*path.split(), *args)
        line = error_line(res)
        flag = "--" + name.replace("_", "-")
        assert f"{flag}: applies only with {companion}: leave it out" in line, (path, line)
    own_check = {("plan size", "least_frequent"), ("plan size", "assurance"), ("judge", "labels")}
    own_check |= {("agree", "test_retest"), ("agree", "wide_raters")}  # input modes, checked by agree
    for path, cmd in _commands():
        for p in cmd.params:
            key = (" ".join(path), p.name)
            if isinstance(p, click.Option) and (p.help or "").startswith("With --"):
                assert key in declared or key in own_check, key


def test_the_options_still_work_with_what_they_need(tmp_path):
    invoke_cli("agree", _ratings(tmp_path), "--bootstrap", 200, "--seed", 5, code=0)
    args = ["plan", "size", "--kappa", ".7", "--prevalence", ".5,.5"]
    invoke_cli(*args, "--lower", ".5", "--assurance", ".8", "--simulations", 200, "--seed", 3, code=0)
    invoke_cli(*args, "--null", ".4", "--power", ".9", "--two-sided", code=0)
