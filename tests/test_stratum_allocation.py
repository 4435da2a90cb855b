"""One allocation for plan sample's strata and push's stratified overlap draw
(:func:`goldboard.cases.assignment.stratum_allocation`): fewer items than strata draws that many
strata at random with the seed, each equally likely (Cochran 1977 ch. 2), one item each; a
remainder tie goes to the larger stratum, then to the seed; a warning names the strata left
without an item, and the recorded design and the methods say how the strata were drawn.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke_cli

from goldboard.analysis import planning as pl
from goldboard.cases.assignment import design_note, overlap_assignment
from goldboard.study import Study

#: the manual page that was README "Planning and calibration"
README = Path(__file__).resolve().parents[1] / "docs" / "calibration-reference.md"


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


SEEDS = range(2000)


def _items(sizes: list[int]) -> tuple[list[str], list[str]]:
    """Items and their strata ``s1..sk`` (stratum j has ``sizes[j]`` items), interleaved."""
    strata = [f"s{j + 1}" for j, size in enumerate(sizes) for _ in range(size)]
    order = np.random.default_rng(0).permutation(len(strata))
    strata = [strata[i] for i in order]
    return [f"I{i}" for i in range(len(strata))], strata


def _drawn(a, items, strata) -> Counter:
    return Counter(strata[items.index(it)] for it in a.multi_items())


def test_fewer_items_than_strata_draws_the_strata_at_random_each_equally_likely():
    """52 items in 8 strata of 10, 9, ..., 3; share 0.05 -> 3 double-rated items.  Old rule:
    the three largest strata every time (frequency 1, 1, 1, 0, ...; fails, checked).  Now each
    stratum 3/8 = 0.375 within 0.05, one item per drawn stratum, exactly 3 items."""
    sizes = [10, 9, 8, 7, 6, 5, 4, 3]
    items, strata = _items(sizes)
    got = Counter()
    for seed in SEEDS:
        a = overlap_assignment(items, ["onc_a", "onc_b"], 0.05, seed=seed, strata=strata)
        per = _drawn(a, items, strata)
        assert sum(per.values()) == 3 and set(per.values()) == {1}
        assert {s for s, v in a.design["strata"].items() if v["double_rated"]} == set(per)
        got.update(per.keys())
    for j in range(len(sizes)):
        assert abs(got[f"s{j + 1}"] / len(SEEDS) - 3 / 8) < TOL, (j, got)


def test_a_tie_goes_to_the_larger_stratum_then_to_the_seed():
    """share 0.2 of strata of 3, 8, 13, 13 items: quotas 0.6, 1.6, 2.6, 2.6 (floors 0+1+2+2 = 5),
    target round(7.4) = 7: two of four equal remainders 0.6.  The larger strata win the tie
    (13, 13: 3 items each; 8: 1; 3: none), whatever the seed.  Old rule: the tie drawn with the
    seed alone (the 3-item stratum got one in about half of the seeds; fails, checked).  Two
    strata of 10 with a tie between them: each wins half the time (0.5 within 0.05)."""
    items, strata = _items([3, 8, 13, 13])
    for seed in range(200):
        a = overlap_assignment(items, ["a", "b"], 0.2, seed=seed, strata=strata)
        assert {s: v["double_rated"] for s, v in a.design["strata"].items()} == {"s1": 0, "s2": 1, "s3": 3, "s4": 3}
    items, strata = _items([10, 10, 25])  # quotas 1.5, 1.5, 3.75: target round(6.75) = 7, floors 5
    wins = Counter()
    for seed in SEEDS:
        a = overlap_assignment(items, ["a", "b"], 0.15, seed=seed, strata=strata)
        per = {s: v["double_rated"] for s, v in a.design["strata"].items()}
        assert per["s3"] == 4 and per["s1"] + per["s2"] == 3
        wins["s1" if per["s1"] == 2 else "s2"] += 1
    assert abs(wins["s1"] / len(SEEDS) - 0.5) < TOL, wins


def _old_overlap_take(items, share, seed, strata):
    """The allocation and draw before issue 23 (cases/assignment.py at main 0afdaf5), the oracle
    for an untied allocation."""
    rng = np.random.default_rng(seed)
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    keys = list(groups)
    target = int(math.floor(share * len(items) + 0.5))
    exact = np.array([share * len(groups[k]) for k in keys])
    take = np.floor(exact).astype(int)
    rest = target - int(take.sum())
    if rest > 0:
        frac = exact - take
        order = sorted(range(len(keys)), key=lambda j: (-round(frac[j], 12), rng.random()))
        for j in order[:rest]:
            take[j] += 1
    chosen: set[int] = set()
    for j, k in enumerate(keys):
        if take[j]:
            chosen.update(int(x) for x in rng.choice(np.array(groups[k]), size=int(take[j]), replace=False))
    return sorted(items[i] for i in chosen)


def _untied(sizes, share) -> bool:
    target = int(math.floor(share * sum(sizes) + 0.5))
    fr = [round(share * s - math.floor(share * s + 1e-9), 9) for s in sizes]
    rest = target - sum(math.floor(share * s + 1e-9) for s in sizes)
    if target < len(sizes):
        return False
    if rest <= 0:
        return True
    ranked = sorted(fr, reverse=True)
    return rest >= len(sizes) or ranked[rest - 1] != ranked[rest]


def test_an_untied_allocation_draws_the_same_items_as_before():
    """Same seed, same double-rated items as the code before, for every design whose largest
    remainders are not tied and whose target reaches the number of strata: 300 random designs
    (2-6 strata of 1-40 items, shares 0.1-0.9) and the unstratified draw."""
    rng = np.random.default_rng(23)
    checked = 0
    while checked < 300:
        sizes = [int(x) for x in rng.integers(1, 41, size=int(rng.integers(2, 7)))]
        share = round(float(rng.uniform(0.1, 0.9)), 2)
        if not _untied(sizes, share):
            continue
        items, strata = _items(sizes)
        seed = int(rng.integers(0, 10_000))
        a = overlap_assignment(items, ["a", "b"], share, seed=seed, strata=strata)
        assert sorted(a.multi_items()) == _old_overlap_take(items, share, seed, strata), (sizes, share, seed)
        checked += 1
    items = [f"I{i}" for i in range(37)]
    for seed in range(50):
        a = overlap_assignment(items, ["a", "b"], 0.3, seed=seed)
        assert sorted(a.multi_items()) == _old_overlap_take(items, 0.3, seed, [""] * 37)


def test_plan_sample_and_push_use_one_allocation():
    """plan sample's allocation is the shared function (its f7 draws unchanged: the same
    function body moved, checked by the plan sample tests of this file); the overlap design calls it."""
    from goldboard.cases.assignment import stratum_allocation

    assert pl.stratum_allocation is stratum_allocation
    assert stratum_allocation([5, 5, 5, 5, 5, 5, 5, 5], 5, 3) == stratum_allocation([5] * 8, 5, 3)
    assert sum(stratum_allocation([5] * 8, 5, 3)) == 5


def test_the_warning_and_the_recorded_design_say_which_strata_have_no_item():
    """Fewer items than strata: one warning names the strata left out and says how the others
    were drawn; the design records ``allocation`` and the sentence says '3 of its 8 strata drawn
    at random'.  Proportional allocation that rounds a small stratum to 0 is named too.  An
    allocation that reaches every stratum warns nothing.  (No warning, no 'allocation' and a
    sentence without the strata before: fails on the old code, checked.)"""
    items, strata = _items([10, 9, 8, 7, 6, 5, 4, 3])
    a = overlap_assignment(items, ["onc_a", "onc_b"], 0.05, seed=11, strata=strata)
    left = sorted(s for s, v in a.design["strata"].items() if not v["double_rated"])
    assert len(left) == 5 and len(a.warnings) == 1
    w = a.warnings[0]
    assert w.startswith("the overlap share gives 3 double-rated items for 8 strata: not every stratum can get one")
    assert "drawn at random with the seed (each equally likely)" in w
    assert all(repr(s) in w for s in left) and not any(repr(s) + "," in w.split("none from")[0] for s in left)
    assert a.design["allocation"] == "random_strata"
    note = design_note({**a.design, "stratify_by": "error_type"}, 3)
    assert "(3 items, seed 11, stratified by error_type: 3 of its 8 strata drawn at random, each equally likely" in note
    items, strata = _items([40, 2, 8])  # share 0.2: quotas 8, 0.4, 1.6 -> target 10: 8, 0, 2
    a = overlap_assignment(items, ["onc_a", "onc_b"], 0.2, seed=1, strata=strata)
    assert a.warnings == [
        "proportional allocation of the 10 double-rated items gives no item to 1 of the 3 strata "
        "(their share rounds to 0): 's2'"
    ]
    note = design_note({**a.design, "stratify_by": "site"}, 10)
    assert "stratified by site: proportional allocation, no item from 1 of its 3 strata)" in note
    items, strata = _items([10, 10, 10])
    a = overlap_assignment(items, ["onc_a", "onc_b"], 0.2, seed=1, strata=strata)
    assert a.warnings == [] and a.design["allocation"] == "proportional"
    assert "(6 items, seed 1, stratified by site). Agreement" in design_note({**a.design, "stratify_by": "site"}, 6)


def test_a_round_recorded_before_the_rule_claims_nothing_about_its_strata():
    """A design recorded before issue 23 (no ``allocation``): the sentence is as before."""
    old = {
        "kind": "overlap",
        "share": 0.2,
        "seed": 7,
        "primary": "onc_a",
        "raters": ["onc_a", "onc_b"],
        "items": 30,
        "double_rated": 6,
        "stratify_by": "case_type",
        "strata": {"x": {"items": 20, "double_rated": 6}, "y": {"items": 10, "double_rated": 0}},
    }
    assert "(6 items, seed 7, stratified by case_type). Agreement uses the 6" in design_note(old, 6)


def test_push_prints_the_warning_and_records_the_design(tmp_path):
    """push --overlap 0.2 --stratify-by on 30 items in 8 strata (in-memory server): push's summary
    carries the warning, study.toml the allocation, and the sentence agree and the report print
    (design_note of the recorded design) names the random strata."""
    from test_push_offline import FakeServer, units

    from goldboard.annotate.push import push

    u = units(30)
    u["error_type"] = [f"e{i % 8}" for i in range(30)]
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")
    res = push(st, units=u, client=FakeServer(), overlap=0.2, seed=5, stratify_by="error_type", progress=False)
    text = res.describe()
    assert "warning: the overlap share gives 6 double-rated items for 8 strata: not every stratum can get one" in text
    design = Study.open(st.path).round(1).design
    assert design["allocation"] == "random_strata" and design["double_rated"] == 6
    assert sum(1 for v in design["strata"].values() if v["double_rated"]) == 6
    assert "stratified by error_type: 6 of its 8 strata drawn at random, each equally likely, one item each)" in (
        design_note(design, 6)
    )


def _old_plan_sample_allocation(sizes, n, seed):
    """plan sample's allocation before the move (analysis/planning.py at main 0afdaf5)."""
    draw = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    k = len(sizes)
    if n < k:
        alloc = [0] * k
        for j in draw.choice(k, size=n, replace=False):
            alloc[int(j)] = 1
        return alloc
    remaining, spare = n - k, [s - 1 for s in sizes]
    pool = sum(spare)
    if not remaining:
        return [1] * k
    alloc = [1 + remaining * sp // pool for sp in spare]
    rest = [remaining * sp % pool for sp in spare]
    tie = draw.random(k)
    for j in sorted(range(k), key=lambda j: (-rest[j], -sizes[j], tie[j]))[: n - sum(alloc)]:
        alloc[j] += 1
    return alloc


def test_plan_sample_allocation_is_unchanged_by_the_move():
    """The shared function gives plan sample exactly the allocation it gave before (2000 random
    stratifications, n from 1 to all items, random seeds)."""
    rng = np.random.default_rng(8)
    for _ in range(2000):
        sizes = [int(x) for x in rng.integers(1, 30, size=int(rng.integers(1, 10)))]
        n, seed = int(rng.integers(1, sum(sizes) + 1)), int(rng.integers(0, 1000))
        assert pl.stratum_allocation(sizes, n, seed) == _old_plan_sample_allocation(sizes, n, seed), (sizes, n)


def test_agree_and_the_report_print_the_strata_sentence(tmp_path):
    """The study built (push on the in-memory server, the raters' ratings written as a pull
    writes them): `agree` and the report's methods read '6 of its 8 strata drawn at random, each
    equally likely, one item each' (fails on the code before: the sentence ended at 'stratified
    by error_type', checked)."""
    import csv

    from conftest import run_cli
    from test_push_offline import FakeServer, units

    from goldboard.annotate.push import push
    from goldboard.cases.ratings import RATINGS_COLUMNS

    u = units(30)
    u["error_type"] = [f"e{i % 8}" for i in range(30)]
    st = Study.init(tmp_path / "s", schema="mtb", raters=["onc_a", "onc_b"], url="http://fake")
    push(st, units=u, client=FakeServer(), overlap=0.2, seed=5, stratify_by="error_type", progress=False)
    assigned = Study.open(st.path).assignment_path(1).read_text().splitlines()[1:]
    path = st.path / "rounds" / "1" / "ratings.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=RATINGS_COLUMNS, lineterminator="\n")
        w.writeheader()
        for line in assigned:
            item, rater = line.rsplit(",", 1)
            value = "Unsupported" if rater == "onc_b" and item.endswith(("3::m", "7::m")) else "Supported"
            row = {"round": "1", "item_id": item, "rater": rater, "field": "safety_label", "value": value}
            w.writerow({c: row.get(c, "") for c in RATINGS_COLUMNS})
    sentence = "stratified by error_type: 6 of its 8 strata drawn at random, each equally likely, one item each)"
    assert sentence in run_cli("agree", "--study", st.path).stdout
    report = tmp_path / "report.md"
    run_cli("report", "--study", st.path, "--format", "markdown", "-o", report)
    assert sentence in report.read_text()
