"""Issue 23, look-alike spellings campaign 8 found past the earlier fixes (k8a C10b; k8b A11,
A12b, A13, A14, A22, H01, H02, H07, K1, K6, K7).  Each test fails on the code before its fix
(checked by running this file against the tree of the commit before).

1. Grouping values (``plan sample --by``, ``agree --by``, ``push --stratify-by``): one value
   spelled NFC in some rows and NFD in others (``Zürich``), or with a zero-width space
   (``none`` / ``none<U+200B>``), became two strata printed under one name (separate kappas).
   Now an error naming the file, both rows (or items) and the difference; values that differ only
   in letter case stay two strata with a warning naming both.
2. Model names ``gpt-4o`` and ``gpt<U+2010>4o`` (a hyphen look-alike) or a full-width spelling were
   scored as two models reading alike: refused as the other look-alikes are.
3. An outputs record without the ``model`` key in a file whose other records have it took the
   file's name as its model ("models: m1, outs"): an error naming file:line.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from pathlib import Path

import pytest
from conftest import error_line, invoke_cli

from goldboard.cases.examples import example_path
from goldboard.errors import GoldboardError

NFC = unicodedata.normalize("NFC", "Z\u00fcrich")
NFD = unicodedata.normalize("NFD", "Z\u00fcrich")


def run(*args, code=None):
    return invoke_cli(*args, code=code)


# --------------------------------------------------------------------------- 1. grouping values


def _cases(path: Path, values: list[str]) -> Path:
    recs = [{"case_id": f"C{i}", "text": f"case {i}", "specialty": v} for i, v in enumerate(values, 1)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "a, b, kind",
    [(NFC, NFD, "Unicode form"), ("none", "none\u200b", "U+200B"), ("pre-op", "pre\u2013op", "U+2013")],
    ids=["nfc-nfd", "zero-width", "en-dash"],
)
def test_plan_sample_refuses_lookalike_strata(tmp_path, a, b, kind):
    cases = _cases(tmp_path / "cases.jsonl", [a, b] * 10 + ["Basel"] * 10)
    out = tmp_path / "s.jsonl"
    err = error_line(run("plan", "sample", "--cases", cases, "--by", "specialty", "-n", "6", "-o", out))
    assert f"{cases}: line 2: specialty" in err and "(line 1)" in err and kind in err, err
    assert "two strata shown under one name" in err
    assert not out.exists()


def test_plan_sample_warns_of_strata_that_differ_only_in_case(tmp_path):
    cases = _cases(tmp_path / "cases.jsonl", ["Oncology"] * 5 + ["oncology"] * 5)
    res = run("plan", "sample", "--cases", cases, "--by", "specialty", "-n", "4", "-o", tmp_path / "s.jsonl", code=0)
    assert "'Oncology' (" in res.stderr and "'oncology' (" in res.stderr and "differ only in letter case" in res.stderr
    assert "counted as two strata" in res.stderr


def test_plan_sample_shows_a_hidden_character_in_a_stratum_escaped(tmp_path):
    cases = _cases(tmp_path / "cases.jsonl", ["none\u200b"] * 4 + ["other"] * 4)
    res = run("plan", "sample", "--cases", cases, "--by", "specialty", "-n", "4", "-o", tmp_path / "s.jsonl", code=0)
    assert "none\\u200b" in res.stdout, res.stdout


def test_plan_sample_missing_column_says_it_differs_only_in_unicode_form(tmp_path):
    """A13: the NFD spelling of an NFC column name was "no record has a column 'spécialité'"."""
    col = unicodedata.normalize("NFC", "sp\u00e9cialit\u00e9")
    recs = [{"case_id": f"C{i}", "text": "t", col: "x"} for i in range(4)]
    cases = tmp_path / "c.jsonl"
    cases.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    by = unicodedata.normalize("NFD", col)
    err = error_line(run("plan", "sample", "--cases", cases, "--by", by, "-n", "2", "-o", tmp_path / "s.jsonl"))
    assert f"did you mean {col!r}?" in err and "Unicode form" in err, err


def _wide(path: Path, site: list[str]) -> Path:
    rows = list(csv.DictReader(example_path("openmtb").open(encoding="utf-8")))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", "onc_a", "onc_b", "site"])
        for r, s in zip(rows, site):
            w.writerow([r["case_id"], r["oncologist_a_label"], r["oncologist_b_label"], s])
    return path


def _agree_by(table: Path):
    return run(
        "agree", table, "--item-col", "case_id", "--raters", "onc_a,onc_b", "--schema", "mtb_unsafe", "--by", "site"
    )


def test_agree_by_refuses_a_group_spelled_two_ways(tmp_path):
    """A14: Zürich NFC in even rows, NFD in odd rows: two groups of 12 and 13 with separate kappas."""
    site = [(NFD if i % 2 else NFC) if i < 25 else "Basel" for i in range(50)]
    table = _wide(tmp_path / "w.csv", site)
    err = error_line(_agree_by(table))
    assert "site 'Z" in err and "Unicode form" in err and "two strata shown under one name" in err, err
    assert err.count("item ") == 2 and err.count(str(table)) == 1, err  # both items named, the file once


def test_agree_by_keeps_case_variants_as_two_groups_with_a_warning(tmp_path):
    site = ["Basel"] * 25 + ["basel"] * 25
    table = _wide(tmp_path / "w.csv", site)
    res = _agree_by(table)
    assert res.exit_code == 0, res.output
    assert "'Basel'" in res.stderr and "'basel'" in res.stderr and "differ only in letter case" in res.stderr


def test_check_value_spellings_unit():
    from goldboard.cases.names import check_value_spellings

    with pytest.raises(GoldboardError, match="full-width"):
        check_value_spellings(["ICU", "\uff29\uff23\uff35"], lambda i: f"row {i}", column="ward")
    assert check_value_spellings(["a", "b", "a"], lambda i: f"row {i}", column="x") == []


# --------------------------------------------------------------------------- 2. dash look-alikes in names


def test_name_key_folds_dashes_and_full_width_forms():
    from goldboard.cases.names import lookalike_kind, name_key, spelling_key

    assert name_key("gpt\u20104o") == name_key("gpt-4o") == name_key("GPT\u22124o") == name_key("\uff47pt-4o")
    assert spelling_key("a\ufe63b") == spelling_key("a\uff0db") == "a-b"
    assert "U+2010 HYPHEN" in lookalike_kind("gpt-4o", "gpt\u20104o")
    assert "full-width" in lookalike_kind("gpt", "\uff47pt")
    assert name_key("1.1") != name_key("1.10")


@pytest.mark.parametrize("twin", ["gpt\u20104o", "gpt\u20134o", "gpt\uff0d4o", "\uff47pt-4o"])
def test_score_refuses_model_names_with_a_dash_or_full_width_look_alike(tmp_path, twin):
    """A22: 'gpt-4o' and 'gpt‐4o' (U+2010) were two summary rows printed alike."""
    ref = tmp_path / "reference.jsonl"
    ref.write_text("".join(json.dumps({"case_id": f"C{n}", "support_label": "Supported"}) + "\n" for n in range(1, 5)))
    preds = tmp_path / "p.jsonl"
    recs = [
        {"case_id": f"C{n}", "predicted_label": "Supported", "model": m} for m in ("gpt-4o", twin) for n in range(1, 5)
    ]
    preds.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")
    err = error_line(run("score", "--gold", ref, "--schema", "mtb", "--predictions", preds))
    assert f"{preds}:5: model" in err and f"({preds}:1)" in err and "two models" in err, err


# --------------------------------------------------------------------------- 3. outputs without the model key


def test_outputs_record_without_the_files_model_key_is_refused(tmp_path):
    """C10b: record 2 without "model" beside record 1 with it became model 'outs' (the file's name)."""
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,patient_summary,proposed_therapy\nC-1,a,b\nC-2,c,d\n", encoding="utf-8")
    outs = tmp_path / "outs.jsonl"
    outs.write_text(
        '{"case_id":"C-1","output_id":"o1","model":"m1","output":"t1"}\n'
        '{"case_id":"C-2","output_id":"o2","output":"t2"}\n',
        encoding="utf-8",
    )
    res = run("cases", "validate", cases, "--schema", "mtb_unsafe", "--outputs", outs)
    assert res.exit_code != 0, res.output
    assert f"{outs.name}:2: model: missing: name the model" in res.output, res.output
    assert "models: m1, outs" not in res.output


def test_outputs_file_without_any_model_key_still_takes_its_name(tmp_path):
    cases = tmp_path / "cases.csv"
    cases.write_text("case_id,patient_summary,proposed_therapy\nC-1,a,b\nC-2,c,d\n", encoding="utf-8")
    outs = tmp_path / "outs.jsonl"
    outs.write_text('{"case_id":"C-1","output":"t1"}\n{"case_id":"C-2","output":"t2"}\n', encoding="utf-8")
    res = run("cases", "validate", cases, "--schema", "mtb_unsafe", "--outputs", outs, code=0)
    assert "models: outs" in res.output, res.output


def test_push_stratify_by_refuses_lookalike_values():
    """push --stratify-by reads the units' column through the same check (no server needed)."""
    import pandas as pd

    from goldboard.annotate.push import _strata_values

    units = pd.DataFrame({"item_id": ["I1", "I2", "I3"], "site": [NFC, "Basel", NFD]})
    with pytest.raises(GoldboardError, match="item I3: site .* Unicode form"):
        _strata_values(units, "site")
    units = pd.DataFrame({"item_id": ["I1", "I2"], "site": ["Basel", "basel"]})
    assert _strata_values(units, "site") == ["Basel", "basel"]
    assert "letter case" in units.attrs["strata_warnings"][0]


# --------------------------------------------------------------------------- 4. table headers, did-you-mean


E_NFC = unicodedata.normalize("NFC", "\u00e9valuateur")
E_NFD = unicodedata.normalize("NFD", "\u00e9valuateur")


def _two_column_table(path: Path, h1: str, h2: str) -> Path:
    rows = list(csv.DictReader(example_path("openmtb").open(encoding="utf-8")))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["case_id", h1, h2])
        for r in rows:
            w.writerow([r["case_id"], r["oncologist_a_label"], r["oncologist_b_label"]])
    return path


@pytest.mark.parametrize(
    "h1, h2, kind", [(E_NFC, E_NFD, "Unicode form"), ("onc_a", "onc_a\u200b", "U+200B")], ids=["nfc-nfd", "zero-width"]
)
def test_pull_from_table_refuses_lookalike_headers(tmp_path, h1, h2, kind):
    """H01/H02: two columns headed alike were pulled as two raters' columns."""
    study = tmp_path / "S"
    run("study", "init", study, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    table = _two_column_table(tmp_path / "h.csv", h1, h2)
    res = run(
        "pull", "--study", study, "--from-table", table, "--item-col", "case_id", "--field", "safety_label",
        "--rater-cols", f"onc_a={h1},onc_b={h2}",
    )  # fmt: skip
    err = error_line(res)
    assert f"{table}:1: columns 2 and 3 are headed" in err and kind in err and "rename one" in err, err
    assert not (study / "rounds").exists() or not any((study / "rounds").rglob("ratings.csv"))


def test_agree_table_and_xlsx_refuse_lookalike_headers(tmp_path):
    table = _two_column_table(tmp_path / "h.csv", E_NFC, E_NFD)
    err = error_line(run("agree", table, "--item-col", "case_id", "--raters", f"{E_NFC},{E_NFD}"))
    assert "columns 2 and 3 are headed" in err and "Unicode form" in err, err
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["case_id", "onc_a", "onc_a\u200b"])
    ws.append(["C1", "Supported", "Supported"])
    wb.save(tmp_path / "h.xlsx")
    from goldboard.fileio import read_records

    with pytest.raises(GoldboardError, match="columns 2 and 3 are headed .*U\\+200B"):
        read_records(tmp_path / "h.xlsx")


def test_missing_column_names_its_unicode_form_twin(tmp_path):
    """H07: --rater-cols onc_a=<NFD> on an NFC header said "did you mean 'évaluateur_a'?" only."""
    study = tmp_path / "S"
    run("study", "init", study, "--schema", "mtb_unsafe", "--raters", "onc_a,onc_b", code=0)
    a_nfc, a_nfd = E_NFC + "_a", E_NFD + "_a"
    table = _two_column_table(tmp_path / "h.csv", a_nfc, "onc_b_col")
    res = run(
        "pull", "--study", study, "--from-table", table, "--item-col", "case_id", "--field", "safety_label",
        "--rater-cols", f"onc_a={a_nfd},onc_b=onc_b_col",
    )  # fmt: skip
    err = error_line(res)
    assert "did you mean" in err and "Unicode form" in err, err


# --------------------------------------------------------------------------- 5. schema titles


def _schema(tmp_path: Path, old: str, new: str) -> Path:
    from goldboard.label_configs import schema as sch

    base = (Path(sch.__file__).parent / "builtin" / "mtb_unsafe.toml").read_text(encoding="utf-8")
    assert old in base
    p = tmp_path / "s.toml"
    p.write_text(base.replace('name = "mtb_unsafe"', 'name = "k7"').replace(old, new), encoding="utf-8")
    return p


def test_schema_refuses_two_fields_with_one_title(tmp_path):
    """K7: two fields titled 'Safety label' loaded; the labeling page showed two identical questions."""
    p = _schema(tmp_path, 'title = "Missing critical information"', 'title = "Safety label"')
    err = error_line(run("schema", "show", p))
    assert "field 'safety_label' and field 'missing_info' have the same title" in err, err
    p = _schema(tmp_path, 'title = "Missing critical information"', 'title = "Safety label\u200b"')
    assert "U+200B" in error_line(run("schema", "show", p))


def test_schema_refuses_case_field_titles_that_look_alike_but_keeps_exact_aliases(tmp_path):
    """K1: case fields titled 'Stage' and 'Stage<U+200B>'.  Two case fields with exactly one title
    stay allowed (K6): the built-in schemas give one title to the keys of one value in different
    input formats (radsafe: case_id / question / text, all "Question")."""
    p = _schema(tmp_path, 'title = "ECOG" }', 'title = "Stage\u200b" }')
    err = error_line(run("schema", "show", p))
    assert "case field 'stage' and case field 'ecog'" in err and "U+200B" in err, err
    for builtin in ("radsafe", "medfail", "mtb", "mtb_unsafe"):
        run("schema", "show", builtin, code=0)


def test_push_stratify_by_lookalike_values_is_one_line_before_the_server(tmp_path):
    """push --stratify-by on a case field spelled NFC and NFD: refused before any server is asked."""
    from goldboard.cases.synth import synthesize, write_records
    from goldboard.study import Study

    cases, _ = synthesize("mtb", 4, seed=1)
    for i, c in enumerate(cases):
        c["site"] = NFD if i % 2 else NFC
    cpath = tmp_path / "cases.jsonl"
    write_records(cases, cpath)
    s = tmp_path / "st"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"], url="http://127.0.0.1:9")
    res = run("push", "--study", s, cpath, "--overlap", "0.5", "--seed", "1", "--stratify-by", "site", code=1)
    err = error_line(res)
    assert "site 'Z" in err and "Unicode form" in err and "two strata" in err, err


# --------------------------------------------------------------------------- 6. generated strata (fuzz, with an oracle)

_BASES = ["Zürich", "pédiatrie", "pre-op", "ICU", "none", "Genève-Est", "café", "β-blocker", "onc_a", "São Paulo"]


def _twin(base: str, how: str) -> str | None:
    """A spelling of ``base`` made by ``how``, or None when ``how`` cannot change it."""
    if how == "nfd":
        t = unicodedata.normalize("NFD", base)
    elif how == "zwsp":
        t = base[:1] + "\u200b" + base[1:]
    elif how == "dash":
        t = base.replace("-", "\u2010")
    elif how == "wide":
        t = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base)
    elif how == "case":
        t = base.swapcase()
    else:
        return None
    return t if t != base else None


@pytest.mark.parametrize("seed", range(12))
def test_generated_strata_are_refused_or_counted_exactly(tmp_path, seed):
    """Oracle: a value and a twin made by NFD, a zero-width space, a dash look-alike or a full-width
    form -> one Error line naming both lines, nothing written; a letter-case twin or none -> exit 0,
    each exact value one stratum with its count (a warning for the case twin)."""
    import random

    rng = random.Random(seed)
    bases = rng.sample(_BASES, 3)
    how = ["nfd", "zwsp", "dash", "wide", "case", "none"][seed % 6]
    twin = next((t for b in bases if (t := _twin(b, how)) is not None), None)
    values = [rng.choice(bases) for _ in range(12)] + ([twin] * 3 if twin else [])
    rng.shuffle(values)
    cases = _cases(tmp_path / "c.jsonl", values)
    out = tmp_path / "s.jsonl"
    res = run("plan", "sample", "--cases", cases, "--by", "specialty", "-n", "8", "-o", out)
    if twin is not None and how != "case":
        err = error_line(res)
        assert err.count("line ") == 2 and err.count(str(cases)) == 1 and "two strata shown under one name" in err, err
        assert not out.exists()
        return
    assert res.exit_code == 0, res.output
    from collections import Counter

    table = {}
    for line in res.stdout.splitlines()[1:]:
        name, avail, _drawn = line.rsplit(None, 2)
        table[name.strip()] = int(avail)
    assert table == dict(Counter(values)), res.stdout
    assert ("differ only in letter case" in res.stderr) == (twin is not None), res.stderr
