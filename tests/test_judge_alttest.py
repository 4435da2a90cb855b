"""The alt-test (Calderon, Reichart & Dror, ACL 2025) against the authors' published outputs, and
its statistics against scipy/statsmodels.

The authors' example notebook (github.com/nitaytech/AltTest, ``alt_test_example.ipynb`` at commit
18428b1f4f34ac61c4978bc180263b90111e7337) prints the winning rate and the advantage probability of
every judge on their nine datasets (``tests/data/alttest/``, see its README): 52 judges, 104 printed
numbers, each reproduced to the printed two decimals, through the library and (for two datasets)
through ``goldboard judge`` on a long ratings table.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import invoke_cli
from scipy import stats
from statsmodels.stats.multitest import multipletests

from goldboard.analysis.alttest import alt_test, by_rejections, one_sided_t
from goldboard.errors import GoldboardError

DATA = Path(__file__).parent / "data" / "alttest"

#: the notebook's settings per dataset (its datasets_scoring_functions / datasets_epsilons)
SETTINGS = {
    "wax": ("accuracy", 0.1),
    "lgbteen": ("accuracy", 0.2),
    "mtbench": ("accuracy", 0.2),
    "cebab_aspects": ("accuracy", 0.1),
    "10k_prompts": ("neg-rmse", 0.15),
    "cebab_stars": ("neg-rmse", 0.1),
    "lesion": ("neg-rmse", 0.15),
    "framing": ("accuracy", 0.15),
    "summeval": ("neg-rmse", 0.2),
}
#: shipped as an items x raters matrix derived from the authors' JSON (the JSON is 2.7 / 4.5 MB)
MATRIX = {"framing", "summeval"}

#: git blob ids of the files at that commit (``git ls-tree -r HEAD data``)
BLOBS = {
    "10k_prompts.human": "c0b4442afb74e2ef319ee48d1b1f125dac6333c6",
    "10k_prompts.llm": "93ee735a446f60361b8a980c7ebbef3538e94ab7",
    "cebab_aspects.human": "4c81cc83b68fed408736bd7159af9603ee7de100",
    "cebab_aspects.llm": "a1441783e8a393a85547309d2d83b1f7762f78cc",
    "cebab_stars.human": "99119c09ea5f1385ac7f3c0b35d759f38518e509",
    "cebab_stars.llm": "251b81c1e16934ae49399eda5684d9840153e9b5",
    "lesion.human": "accee237c8867d6ea60873bc7e68971fc8e32d54",
    "lesion.llm": "672aba796873854d922393612a28150c3ff28639",
    "lgbteen.human": "a4833788c9a0a22915901284be6c2eddc24e4051",
    "lgbteen.llm": "39e8d03ebae8ca70b63f5f74bfac78ca3fe7c611",
    "mtbench.human": "fc9016da89ea0c938070875a64938da09cf948ee",
    "mtbench.llm": "d7c6f38d5e00fb7e0a5eecada2c7e02d2c19c195",
    "wax.human": "db806e17d18562d0677b23fd6fbe98b8a05054bc",
    "wax.llm": "47e77e4ab6a63e23ec72d7e958b112a04a35e508",
}

#: (dataset, judge, winning rate, advantage probability) as the notebook prints them
PUBLISHED = [
    ("wax", "gemini_flash", 0.38, 0.69),
    ("wax", "gemini_pro", 0.50, 0.74),
    ("wax", "gpt-4o", 0.50, 0.73),
    ("wax", "llama-31", 0.00, 0.57),
    ("wax", "gpt-4o-mini", 0.00, 0.59),
    ("wax", "mistral-v03", 0.00, 0.50),
    ("lgbteen", "gemini_flash", 0.25, 0.71),
    ("lgbteen", "gemini_pro", 0.00, 0.67),
    ("lgbteen", "gpt-4o", 0.75, 0.77),
    ("lgbteen", "llama-31", 0.00, 0.72),
    ("lgbteen", "gpt-4o-mini", 0.75, 0.76),
    ("lgbteen", "mistral-v03", 0.25, 0.75),
    ("mtbench", "gemini_flash", 0.00, 0.72),
    ("mtbench", "gemini_pro", 0.00, 0.76),
    ("mtbench", "gpt-4o", 0.00, 0.77),
    ("mtbench", "llama-31", 0.00, 0.69),
    ("mtbench", "gpt-4o-mini", 0.00, 0.74),
    ("mtbench", "mistral-v03", 0.00, 0.68),
    ("cebab_aspects", "gemini_flash", 0.70, 0.91),
    ("cebab_aspects", "gemini_pro", 0.90, 0.94),
    ("cebab_aspects", "gpt-4o", 0.90, 0.93),
    ("cebab_aspects", "llama-31", 0.60, 0.89),
    ("cebab_aspects", "gpt-4o-mini", 0.50, 0.90),
    ("cebab_aspects", "mistral-v03", 0.10, 0.81),
    ("10k_prompts", "gemini_flash", 0.31, 0.67),
    ("10k_prompts", "gemini_pro", 0.08, 0.63),
    ("10k_prompts", "gpt-4o", 0.69, 0.76),
    ("10k_prompts", "llama-31", 0.15, 0.67),
    ("10k_prompts", "gpt-4o-mini", 0.92, 0.80),
    ("10k_prompts", "mistral-v03", 0.15, 0.67),
    ("cebab_stars", "gemini_flash", 0.60, 0.82),
    ("cebab_stars", "gemini_pro", 0.80, 0.87),
    ("cebab_stars", "gpt-4o", 0.90, 0.90),
    ("cebab_stars", "llama-31", 0.60, 0.85),
    ("cebab_stars", "gpt-4o-mini", 0.90, 0.89),
    ("cebab_stars", "mistral-v03", 0.50, 0.83),
    ("lesion", "gemini_flash", 0.17, 0.71),
    ("lesion", "gemini_pro", 1.00, 0.81),
    ("lesion", "gpt-4o", 0.00, 0.62),
    ("lesion", "gpt-4o-mini", 0.67, 0.73),
    ("framing", "gemini_flash", 1.00, 0.83),
    ("framing", "gemini_pro", 1.00, 0.91),
    ("framing", "gpt-4o", 1.00, 0.92),
    ("framing", "llama-31", 0.50, 0.80),
    ("framing", "gpt-4o-mini", 1.00, 0.87),
    ("framing", "mistral-v03", 0.25, 0.80),
    ("summeval", "gemini_flash", 0.00, 0.46),
    ("summeval", "gemini_pro", 0.00, 0.44),
    ("summeval", "gpt-4o", 0.00, 0.48),
    ("summeval", "llama-31", 0.00, 0.58),
    ("summeval", "gpt-4o-mini", 0.00, 0.54),
    ("summeval", "mistral-v03", 0.00, 0.62),
]


def _raw(dataset: str, who: str) -> bytes:
    return gzip.decompress((DATA / f"{dataset}.{who}_annotations.json.gz").read_bytes())


def load(dataset: str) -> tuple[dict, dict]:
    """The authors' two dicts: ``{human: {item: value}}`` and ``{judge: {item: value}}``."""
    if dataset not in MATRIX:
        return json.loads(_raw(dataset, "human")), json.loads(_raw(dataset, "llm"))
    text = gzip.decompress((DATA / f"{dataset}.matrix.csv.gz").read_bytes()).decode("utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    humans: dict = {c[6:]: {} for c in rows[0] if c.startswith("human:")}
    llms: dict = {c[6:]: {} for c in rows[0] if c.startswith("judge:")}
    scoring = SETTINGS[dataset][0]
    for k, row in enumerate(rows[1:]):
        for col, v in zip(rows[0], row):
            if v != "":
                who, name = col.split(":", 1)
                (humans if who == "human" else llms)[name][f"i{k}"] = int(v) if scoring == "neg-rmse" else v
    return humans, llms


def grids(dataset: str) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """The authors' dicts as items x raters float grids (labels as codes for accuracy)."""
    humans, llms = load(dataset)
    scoring = SETTINGS[dataset][0]
    items = sorted({i for a in humans.values() for i in a} | {i for a in llms.values() for i in a})
    codes: dict[str, int] = {}

    def conv(v):
        if v is None:
            return np.nan
        return float(codes.setdefault(str(v), len(codes))) if scoring == "accuracy" else float(v)

    hn, jn = list(humans), list(llms)
    h = np.array([[conv(humans[a].get(i)) for a in hn] for i in items])
    j = np.array([[conv(llms[a].get(i)) for a in jn] for i in items])
    return h, j, hn, jn


@pytest.mark.parametrize("key", sorted(BLOBS))
def test_shipped_files_are_the_authors_files(key):
    dataset, who = key.split(".")
    raw = _raw(dataset, who)
    assert hashlib.sha1(b"blob %d\0" % len(raw) + raw).hexdigest() == BLOBS[key]


@pytest.fixture(scope="module")
def library_results():
    out = {}
    for dataset, (scoring, eps) in SETTINGS.items():
        h, j, hn, jn = grids(dataset)
        for r in alt_test(h, j, human_names=hn, judge_names=jn, scoring=scoring, epsilon=eps):
            out[dataset, r.judge] = r
    return out


@pytest.mark.parametrize("dataset,judge,wr,rho", PUBLISHED, ids=[f"{d}-{j}" for d, j, _, _ in PUBLISHED])
def test_published_winning_rate_and_rho(library_results, dataset, judge, wr, rho):
    r = library_results[dataset, judge]
    assert f"{r.winning_rate:.2f}" == f"{wr:.2f}"
    assert f"{r.advantage_probability:.2f}" == f"{rho:.2f}"
    assert r.passed == (wr >= 0.5)


def test_every_published_judge_is_checked(library_results):
    assert len(PUBLISHED) == 52 and set(library_results) == {(d, j) for d, j, _, _ in PUBLISHED}


def long_table(dataset: str, path: Path) -> Path:
    """The authors' files as the long ratings table ``goldboard judge`` reads."""
    humans, llms = load(dataset)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["item_id", "rater", "field", "value"])
        for who, anns in [*humans.items(), *llms.items()]:
            out.writerows([item, who, "label", value] for item, value in anns.items())
    return path


@pytest.mark.parametrize("dataset", ["lesion", "mtbench"])
def test_cli_reproduces_the_notebook(tmp_path, dataset):
    scoring, eps = SETTINGS[dataset]
    _, llms = load(dataset)
    table = long_table(dataset, tmp_path / f"{dataset}.csv")
    res = invoke_cli(
        "judge", table, "--field", "label", "--judge", ",".join(llms), "--epsilon", eps, "--scoring", scoring,
        "--format", "json",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    got = {d["judge"]: (f"{d['winning_rate']:.2f}", f"{d['advantage_probability']:.2f}") for d in data["judges"]}
    want = {j: (f"{w:.2f}", f"{a:.2f}") for d, j, w, a in PUBLISHED if d == dataset}
    assert got == want
    first = data["judges"][0]
    assert set(first) >= {"judge", "winning_rate", "advantage_probability", "passed", "humans"}
    assert set(first["humans"][0]) >= {"human", "n_items", "judge_advantage", "human_advantage", "p_value", "rejected"}


def test_cli_table_names_the_pass(tmp_path):
    table = long_table("lesion", tmp_path / "lesion.csv")
    humans = ",".join(f"student_{i}" for i in range(1, 7))  # the other two models are not humans
    res = invoke_cli(
        "judge", table, "--judge", "gemini_pro,gpt-4o", "--humans", humans, "--epsilon", "0.15", "--scoring", "neg-rmse"
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert any(line.split()[:4] == ["gemini_pro", "1.00", "0.81", "PASSED"] for line in lines), res.stdout
    assert any(line.split()[:4] == ["gpt-4o", "0.00", "0.62", "FAILED"] for line in lines), res.stdout


# --------------------------------------------------------------------------- per human, against a plain loop


def _loop_differences(h, j, scoring):
    """d = W_h - W_f per excluded human, item by item (the procedure as the paper states it)."""
    out = []
    for e in range(h.shape[1]):
        d = []
        for i in range(h.shape[0]):
            others = [h[i, g] for g in range(h.shape[1]) if g != e and not np.isnan(h[i, g])]
            if np.isnan(h[i, e]) or np.isnan(j[i]) or len(others) < 1:
                continue
            if scoring == "accuracy":
                sh, sf = np.mean([h[i, e] == o for o in others]), np.mean([j[i] == o for o in others])
            else:
                sh = -np.sqrt(np.mean([(h[i, e] - o) ** 2 for o in others]))
                sf = -np.sqrt(np.mean([(j[i] - o) ** 2 for o in others]))
            d.append(int(sh >= sf) - int(sf >= sh))
        out.append(np.array(d))
    return out


@pytest.mark.parametrize("dataset", ["lesion", "mtbench"])
def test_p_values_and_by_match_scipy_and_statsmodels(dataset):
    scoring, eps = SETTINGS[dataset]
    h, j, hn, jn = grids(dataset)
    for col, r in zip(range(j.shape[1]), alt_test(h, j, human_names=hn, judge_names=jn, scoring=scoring, epsilon=eps)):
        ds = _loop_differences(h, j[:, col], scoring)
        want_p = [stats.ttest_1samp(d, eps, alternative="less").pvalue for d in ds]
        assert [c.n_items for c in r.humans] == [len(d) for d in ds]
        np.testing.assert_allclose([c.p_value for c in r.humans], want_p, rtol=1e-9, atol=1e-300)
        assert [c.rejected for c in r.humans] == list(multipletests(want_p, 0.05, method="fdr_by")[0])
        assert r.advantage_probability == pytest.approx(np.mean([np.mean(d <= 0) for d in ds]), abs=1e-15)


# --------------------------------------------------------------------------- constructed cases


@pytest.mark.parametrize(
    "p",
    [
        [0.01, 0.01, 0.01, 0.9],  # ties among the p-values
        [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205],
        [0.0, 0.0, 1.0],
        [0.02, 0.03],
        [0.5],
        [0.0001] * 6,
        [0.011, 0.012, 0.2, 0.011],
    ],
)
def test_by_matches_statsmodels(p):
    assert by_rejections(np.array(p), 0.05).tolist() == list(multipletests(p, 0.05, method="fdr_by")[0])


def test_by_never_rejects_an_undefined_p_value():
    assert by_rejections(np.array([np.nan, 0.0, 0.0]), 0.05).tolist() == [False, True, True]


@pytest.mark.parametrize(
    "d,eps",
    [
        ([1, 0, -1, -1, 0, 1, -1, -1, 0, -1], 0.2),
        ([0, 0, 0, 1, -1], 0.15),
        ([1, 1, 1, 1, 0], 0.1),
        ([-1] * 40 + [0] * 3, 0.2),
        (list(np.random.default_rng(3).integers(-1, 2, 57)), 0.1),
    ],
)
def test_t_test_matches_scipy(d, eps):
    d = np.array(d)
    t, p = one_sided_t(np.array([d.sum()]), np.array([(d * d).sum()]), np.array([d.size]), eps)
    want = stats.ttest_1samp(d, eps, alternative="less")
    assert t[0] == pytest.approx(want.statistic, rel=1e-12)
    assert p[0] == pytest.approx(want.pvalue, rel=1e-12)


@pytest.mark.parametrize(
    "value,eps,t_want,p_want",
    [
        (-1, 0.2, -np.inf, 0.0),  # the judge is strictly better on every item: rejected
        (0, 0.2, -np.inf, 0.0),  # a tie on every item, mean 0 < epsilon: rejected
        (1, 0.2, np.inf, 1.0),  # the human is strictly better on every item
        (0, 0.0, np.nan, np.nan),  # mean(d) = epsilon: t undefined, never rejected
    ],
)
@pytest.mark.filterwarnings("ignore:Precision loss:RuntimeWarning")
def test_all_equal_differences(value, eps, t_want, p_want):
    """All-equal indicator vectors: the t statistic is undefined (zero variance); reported as
    scipy's ttest_1samp reports it (t = -inf, p = 0 / t = +inf, p = 1 / NaN)."""
    d = np.full(35, value)
    t, p = one_sided_t(np.array([d.sum()]), np.array([(d * d).sum()]), np.array([d.size]), eps)
    np.testing.assert_equal([t[0], p[0]], [t_want, p_want])
    want = stats.ttest_1samp(d.astype(float), eps, alternative="less")
    if value != 0 or eps != 0:
        np.testing.assert_equal([want.statistic, want.pvalue], [t_want, p_want])


def _two_humans_agreeing(n=40, judge_same=True):
    rng = np.random.default_rng(7)
    h = rng.integers(0, 3, (n, 3)).astype(float)
    h[:, 1] = h[:, 0]
    j = h[:, :1].copy() if judge_same else (h[:, :1] + 1) % 3
    return h, j


def test_all_equal_vectors_in_a_run_are_rejected_or_not_as_reported():
    h, j = _two_humans_agreeing()
    (r,) = alt_test(h, j, human_names=["a", "b", "c"], judge_names=["llm"], epsilon=0.2)
    assert all(np.isfinite(c.p_value) for c in r.humans)
    assert r.winning_rate == 1.0 and r.passed


# --------------------------------------------------------------------------- guards


def test_two_humans_warn_that_three_are_recommended():
    h, j = _two_humans_agreeing()
    (r,) = alt_test(h[:, :2], j, human_names=["a", "b"], judge_names=["llm"], epsilon=0.2)
    assert any("3 or more humans are recommended" in w for w in r.warnings)


def test_fewer_than_30_items_use_wilcoxon():
    h, j = _two_humans_agreeing(n=40)
    h[20:, 2] = np.nan  # human c rated 20 items
    (r,) = alt_test(h, j, human_names=["a", "b", "c"], judge_names=["llm"], epsilon=0.2)
    c = r.humans[2]
    assert (c.test, c.n_items) == ("wilcoxon", 20)
    d = np.array(_loop_differences(h, j[:, 0], "accuracy")[2])
    assert c.p_value == pytest.approx(stats.wilcoxon(d - 0.2, alternative="less").pvalue, rel=1e-12)
    assert any("c: 20 items (< 30): Wilcoxon" in w for w in r.warnings)
    assert [x.test for x in r.humans[:2]] == ["t", "t"]


def test_skip_leaves_small_humans_out_as_the_authors_code_does():
    h, j = _two_humans_agreeing(n=40)
    h[20:, 2] = np.nan
    (r,) = alt_test(h, j, human_names=["a", "b", "c"], judge_names=["llm"], epsilon=0.2, small_sample="skip")
    assert [c.human for c in r.humans] == ["a", "b"]
    assert r.skipped == [("c", 20, "fewer than 30 items (the t-test needs 30)")]
    assert r.winning_rate == 1.0  # rejected / humans tested


def test_items_with_one_human_are_not_used():
    h, j = _two_humans_agreeing(n=40)
    h[:5, 1:] = np.nan
    (r,) = alt_test(h, j, human_names=["a", "b", "c"], judge_names=["llm"], epsilon=0.2)
    assert r.items_used == 35
    assert any("5 item(s) rated by fewer than 2 humans are not used" in w for w in r.warnings)


@pytest.mark.parametrize(
    "kwargs,param",
    [
        ({"epsilon": 1.5}, "epsilon"),
        ({"scoring": "f1"}, "scoring"),
        ({"q": 0}, "q"),
        ({"small_sample": "x"}, "small_sample"),
    ],
)
def test_bad_parameters_are_named(kwargs, param):
    h, j = _two_humans_agreeing()
    with pytest.raises(GoldboardError) as err:
        alt_test(h, j, human_names=["a", "b", "c"], judge_names=["llm"], **{"epsilon": 0.2, **kwargs})
    assert err.value.param == param


def test_one_human_is_refused():
    h, j = _two_humans_agreeing()
    with pytest.raises(GoldboardError, match="at least 2"):
        alt_test(h[:, :1], j, human_names=["a"], judge_names=["llm"], epsilon=0.2)


def test_no_testable_human_is_refused():
    h = np.array([[0, np.nan], [np.nan, 1.0]])
    with pytest.raises(GoldboardError, match="no human could be tested"):
        alt_test(h, np.array([[0.0], [1.0]]), human_names=["a", "b"], judge_names=["llm"], epsilon=0.2)


@pytest.mark.parametrize(
    "dataset,humans,judges",
    [("framing", [2200, 2552, 2266, 638], [2552] * 6), ("summeval", [6400] * 3, [6400] * 6)],
)
def test_matrix_files_hold_the_authors_counts(dataset, humans, judges):
    """Annotations per human and per judge, as in the authors' JSON files (counted there)."""
    h, j = load(dataset)
    assert [len(a) for a in h.values()] == humans and [len(a) for a in j.values()] == judges
