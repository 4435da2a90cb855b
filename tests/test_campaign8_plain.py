"""Issue 23, two gaps the campaign-8 helpers found.  Each test fails on the code before its fix
(checked by running this file against the tree of the commit before).

1. Plain ratings files (``agree TABLE`` long or wide, ``flag RATINGS``, ``judge RATINGS``,
   ``agree --from-label-studio``) counted twin item ids -- ``C-1`` / ``C-1<U+200B>``, ``C1`` /
   ``c1``, ``7`` / ``007``, NFC / NFD -- as two items (the only sign: "rated by only one rater");
   a study pull refuses them.  Now the same rule: an error naming the file, both rows, the column
   and the difference; a lone id holding a hidden character is refused naming file:row and the
   code point.  Blanks around an id are no part of it (``'C-1 '`` is still ``C-1``).
2. ``pull --from-file`` recorded a file whose every answer was held out because another source
   already gave it (exit 0, the file listed as a source of the round); ``pull --from-table``
   refuses that.  Now ``--from-file`` does too, with the same words: "nothing pulled", the source
   the round has them from and how to replace it or add a round; nothing written.
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest
from conftest import error_line, invoke_cli

from goldboard.study import Study

S, P, U, I = "Supported", "Partially Supported", "Unsupported", "Insufficient Information"
A = [S, S, U, I, P, S, U, I]
B = [S, U, U, S, P, I, U, P]
HEADER = "round,item_id,case_id,output_id,model,rater,field,value,rationale,annotated_at,lead_time,annotation_id"
NFC = unicodedata.normalize("NFC", "Caf\u00e9")
NFD = unicodedata.normalize("NFD", "Caf\u00e9")
PRODIGY = Path(__file__).parent / "data" / "prodigy" / "mtb_review.jsonl"

#: (first spelling of item 1, its twin, a word of the difference); the twin is onc_b's item 1
TWINS = [
    ("C-1", "C-1\u200b", "U+200B"),
    ("C1", "c1", "letter case"),
    ("7", "007", "how a number is written"),
    (NFC, NFD, "Unicode form"),
]
TWIN_IDS = ["zero-width", "case", "zeros", "nfd"]


def one_error(res) -> str:
    """The one ``Error:`` line of a refused run (exit non-zero, nothing else on stderr)."""
    assert res.exit_code != 0, res.output
    assert len([ln for ln in res.stderr.splitlines() if ln.strip()]) == 1, res.stderr
    assert "Traceback" not in res.output
    return error_line(res)


def ratings(path: Path, ids_a: list[str], ids_b: list[str], rater_b: str = "onc_b") -> Path:
    """onc_a rates ``ids_a`` with labels A, ``rater_b`` rates ``ids_b`` with labels B (a row each,
    onc_a's first: item n's rows are lines 2n and 2n + 1)."""
    rows = [HEADER]
    for a_id, b_id, a, b in zip(ids_a, ids_b, A, B):
        rows.append(f"1,{a_id},{a_id},,,onc_a,safety_label,{a},,,,")
        rows.append(f"1,{b_id},{b_id},,,{rater_b},safety_label,{b},,,,")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def items(first: str = "C1") -> list[str]:
    return [first] + [f"X{n}" for n in range(2, 9)]


def command(name: str, f: Path) -> list:
    return {
        "agree": ["agree", f, "--schema", "mtb", "--field", "safety_label"],
        "flag": ["flag", f, "--schema", "mtb", "--format", "csv"],
        "judge": ["judge", f, "--judge", "gpt", "--epsilon", "0.2"],
    }[name]


# --------------------------------------------------------------------------- 1. twin item ids


@pytest.mark.parametrize("first, twin, kind", TWINS, ids=TWIN_IDS)
@pytest.mark.parametrize("cmd", ["agree", "flag", "judge"])
def test_plain_ratings_refuse_twin_item_ids(tmp_path, cmd, first, twin, kind):
    """Before: exit 0, item 1 counted twice ("rated by only one rater")."""
    f = ratings(tmp_path / "r.csv", items(first), items(twin), "gpt" if cmd == "judge" else "onc_b")
    err = one_error(invoke_cli(*command(cmd, f)))
    assert err.startswith(f"Error: {f}:3: item_id ") and f"({f}:2)" in err and kind in err, err
    assert "one item typed twice" in err, err


@pytest.mark.parametrize("cmd", ["agree", "flag"])
def test_plain_ratings_read_an_id_with_blanks_around_it_as_that_id(tmp_path, cmd):
    """'C1 ' is C1 (as a pull reads it): no twin error, the same result as the clean file."""
    clean = ratings(tmp_path / "clean.csv", items(), items())
    spaced = ratings(tmp_path / "spaced.csv", items(), items("C1 "))
    more = ["--format", "json"] if cmd == "agree" else []
    want, got = invoke_cli(*command(cmd, clean), *more), invoke_cli(*command(cmd, spaced), *more)
    assert want.exit_code == got.exit_code == 0, got.output
    if cmd == "agree":
        w, g = json.loads(want.stdout), json.loads(got.stdout)
        assert g["n_items"] == w["n_items"] == 8 and g["statistics"] == w["statistics"]
    else:
        assert got.stdout == want.stdout


def test_plain_ratings_keep_ids_that_only_look_close(tmp_path):
    """C01 and C1, 1.5 and 15, MTB-1 and MTB-01 are different ids (no twins by the id rules)."""
    ids = ["C01", "C1", "1.5", "15", "MTB-1", "MTB-01", "x", "y"]
    f = ratings(tmp_path / "r.csv", ids, ids)
    res = invoke_cli(*command("agree", f), "--format", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["n_items"] == 8, res.output


@pytest.mark.parametrize(
    "bad, code",
    [("C-1\u200b", "U+200B ZERO WIDTH SPACE"), ("C-1\x1f", "U+001F"), ("C-1\u2028", "U+2028 LINE SEPARATOR")],
    ids=["zero-width", "unit-separator", "line-separator"],
)
def test_plain_ratings_refuse_a_lone_id_with_a_hidden_character(tmp_path, bad, code):
    """Before: exit 0 ('C-1\\x1f' was even read as C-1: str.strip cut the U+001F off)."""
    ids = items(bad)
    f = tmp_path / "r.jsonl"  # (JSON lines: a CSV cell cannot hold U+2028 in every reader)
    f.write_text(
        "".join(
            json.dumps({"item_id": i, "rater": r, "field": "safety_label", "value": v}) + "\n"
            for i, a, b in zip(ids, A, B)
            for r, v in (("onc_a", a), ("onc_b", b))
        ),
        encoding="utf-8",
    )
    err = one_error(invoke_cli(*command("flag", f)))
    assert err.startswith(f"Error: {f}:1: item_id ") and code in err and "type the id again" in err, err


def test_long_table_names_the_item_column(tmp_path):
    f = tmp_path / "long.csv"
    f.write_text("case,who,label\n" + "".join(f"{i},{r},{v}\n" for i, r, v in [("C1", "a", S), ("c1", "b", S)]))
    err = one_error(invoke_cli("agree", f, "--item-col", "case", "--rater-col", "who", "--label-col", "label"))
    assert f"{f}:3: item id (column 'case') 'c1' and 'C1' ({f}:2) differ only in letter case" in err, err


def test_wide_table_refuses_twin_item_ids(tmp_path):
    f = tmp_path / "wide.csv"
    f.write_text(
        "item_id,onc_a,onc_b\n" + "".join(f"{i},{a},{b}\n" for i, a, b in zip([NFC, *items()[1:7], NFD], A, B)),
        encoding="utf-8",
    )
    err = one_error(invoke_cli("agree", f, "--raters", "onc_a,onc_b", "--schema", "mtb", "--field", "safety_label"))
    assert f"{f}:9: item_id " in err and f"({f}:2)" in err and "Unicode form" in err, err


def test_label_studio_exports_refuse_one_item_written_two_ways(tmp_path):
    """One export per rater: 'C1' in one, 'c1' in the other is one item."""
    files = []
    for k, (first, labels) in enumerate((("C1", A), ("c1", B))):
        tasks = [
            {
                "id": 100 * k + n,
                "data": {"item_id": first if n == 1 else f"X{n}"},
                "annotations": [
                    {
                        "id": 1000 * k + n,
                        "completed_by": {"id": k + 1, "email": f"r{k}@x.org"},
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
        (tmp_path / f"e{k}.json").write_text(json.dumps(tasks))
        files += ["--from-label-studio", tmp_path / f"e{k}.json"]
    err = one_error(invoke_cli("agree", *files, "--field", "safety_label", "--schema", "mtb"))
    assert "item_id 'c1' and 'C1'" in err and "letter case" in err and "e1.json" in err and "e0.json" in err, err


# --------------------------------------------------------------------------- 2. a file pull that takes nothing


def _study_files(s: Path) -> dict[str, bytes]:
    return {str(p.relative_to(s)): p.read_bytes() for p in sorted(s.rglob("*")) if p.is_file()}


RATERS = ["--rater", "mtb_review-ana=onc_a,mtb_review-ben=onc_b,mtb_review-cy=onc_c"]


def test_file_pull_whose_every_answer_another_source_gave_is_refused(tmp_path):
    """Before: exit 0, "0 rated ... x already rated from another source", and the copy recorded in
    study.toml as a second source of round 1."""
    s = tmp_path / "st"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    first = tmp_path / "mtb_review.jsonl"
    shutil.copy(PRODIGY, first)
    invoke_cli("pull", "--study", s, "--from-file", f"prodigy={first}", *RATERS, code=0)
    copy = tmp_path / "mtb_review_fixed.jsonl"
    shutil.copy(PRODIGY, copy)
    before = _study_files(s)
    err = one_error(invoke_cli("pull", "--study", s, "--from-file", f"prodigy={copy}", *RATERS, "--round", 1))
    assert f"{copy}: nothing pulled: " in err and "already in round 1 from 'mtb_review.jsonl'" in err, err
    assert "with this file's, pull it as that source (--source mtb_review.jsonl" in err, err
    assert "give --round 2" in err, err
    assert _study_files(s) == before
    # the advice works: as that source it replaces it; as round 2 it is a new round
    invoke_cli("pull", "--study", s, "--from-file", f"prodigy={copy}", *RATERS, "--source", "mtb_review.jsonl", code=0)
    invoke_cli("pull", "--study", s, "--from-file", f"prodigy={copy}", *RATERS, "--round", 2, code=0)
    assert sorted(Study.open(s).round(1).tables) == ["mtb_review.jsonl"]


def test_file_pull_with_some_new_answers_is_still_taken(tmp_path):
    """A file of which only some answers were given by another source pulls the rest (unchanged)."""
    s = tmp_path / "st"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    t = tmp_path / "t.csv"
    t.write_text("case_id,rater,label\nMTB-0001,onc_a,Supported\n")
    invoke_cli("pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-col", "rater",
               "--label-col", "label", "--field", "safety_label", code=0)  # fmt: skip
    res = invoke_cli("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", *RATERS, "--round", 1, code=0)
    assert "1 x already rated from another source" in res.output, res.output


def test_file_pull_whose_every_item_the_pushed_study_lacks_is_refused(tmp_path):
    """A study whose units were pushed: a file all of whose items it does not know is refused,
    pointing at --item-key (before: exit 0, the file recorded as a source of round 1)."""
    s = tmp_path / "st"
    st = Study.init(s, schema="mtb", raters=["onc_a", "onc_b", "onc_c"])
    rnd = st.get_or_add_round(1)
    rnd.projects = {"onc_a": 11, "onc_b": 12, "onc_c": 13}
    st.save()
    unit = {"item_id": "MTB-9", "case_id": "MTB-9", "output_id": "", "model": "", "case_text": "x", "rounds": [1]}
    (s / "units.jsonl").write_text(json.dumps(unit) + "\n")
    before = _study_files(s)
    err = one_error(invoke_cli("pull", "--study", s, "--from-file", f"prodigy={PRODIGY}", *RATERS))
    assert "nothing pulled: all 6 ratings are of items not in this study's units" in err, err
    assert "check --item-key" in err, err
    assert _study_files(s) == before
