"""Issue 23, the last silent inputs: what a re-run of the misuse campaigns still found accepted
silently on main.  Each test fails on the code before its fix (checked by hand on the commit
before, by reverting the fix).

1. a text option or argument given as ``""`` or blanks (``--field "$FIELD"`` with the variable
   unset) is an error naming the flag in every command, never read as the option left out
   (``score --field ""`` scored the primary field, ``judge --field ""`` the last one tested);
2. the embedded server's data dir (``--data-dir`` of every ``server`` command, ``$GOLDBOARD_SERVER_DIR``)
   holding a control, line-break or bidi-control character or a part with a leading or trailing
   space is refused before anything is made (``server add-raters --data-dir $'dd\\nx'`` made the
   folder and printed a path split over two lines);
3. an item id in scientific notation with no sign in its exponent (``1E5``: no spreadsheet writes a
   number so) is kept as the text typed, with a warning naming it (a spreadsheet opening the file
   reads it as 100000); ``1.23E+05`` stays an error, ``1E5`` beside ``100000`` a twin error;
4. campaign 5 J05: ``judge --study --labels F --epsilon -1`` was refused after recording the labels
   and ``epsilon = -1`` in study.toml (every later judge run then failed): the settings are checked
   before anything is recorded;
5. campaign 5 E13/E14: a refused ``pull --from-export ... --item-key`` left a phantom round and
   ``item_key`` in study.toml: a refused pull leaves study.toml byte for byte as it was;
6. campaign 5 X01: ``adjudicate sheet -o review.xlsx`` over the workbook filled in the meeting
   (decisions typed, not yet imported) replaced it and the decisions were lost: refused, naming
   the cells; once imported (or when every filled cell is the decision in force) it is replaced.
7. campaign 5 H01/H04: a hand-edited study.toml listing a rater twice (or two raters differing
   only in case) made readers count a third rater or crash: every reader refuses it in one line;
   a study.toml re-saved with a UTF-8 BOM is read (the BOM is no content).
8. campaign 5 F05/F06: a Prodigy ``_timestamp`` in milliseconds or far out of range crashed
   ("internal error: year 57972 is out of range"): one line naming the line, nothing written.
9. campaign 5 U02/U03/U15/W10: an id holding an invisible format character (U+200B zero-width
   space ...) was a second item that looks like the first: held out by row in a table, refused
   naming the line in a tool export, a twin of its visible spelling everywhere (``cases validate``).
10. campaign 5 S09-S11: ``score --compare gpt,gpt``, ``--critical-at bogus`` on predicted labels (an
    option of another scoring kind, ignored), ``--collapse-share 5`` were accepted without a word.
11. campaign 5 W14: ``study add-rater S dr_chair`` made the study's independent adjudicator a rater
    (gold export then refused the study, blaming a hand-edited log): refused; so is a judge named
    like the adjudicator (J08: its labels were recorded under the adjudicator's name).
12. campaign 5 G05: ``gold export`` over a latest release whose gold.csv fails its manifest cut the
    next release naming it as its previous without a word: warned, and the manifest records it.
13. campaign 5 C09/C10: ``agree --round 0`` / ``--round -1`` advised pulling round 0: every
    ``--round`` below 1 is one line, "rounds are numbered from 1".
14. campaign 5 E04/E05: ``pull --from-export --item-key`` stored ``7`` and ``007`` (or ``C-1`` and
    ``C-1<U+200B>``) as two items: the table's id checks apply, naming the tasks.
15. campaign 5 W09: ``plan sample --cases`` drew from a file with case ids 7 and 007 (``cases
    validate`` refuses it): twins are refused naming both lines, nothing written.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_adjudication_roundtrip import fill, make_study  # noqa: E402
from test_campaign_options import _leaf_commands  # noqa: E402
from test_campaign_sheet import import_, sheet_for  # noqa: E402
from test_campaign_sources import RATERS, study_and_file, task  # noqa: E402
from test_flags import I, U  # noqa: E402
from test_misuse_inputs import error_line, run  # noqa: E402

from goldboard.cases.ratings import read_ratings_csv  # noqa: E402
from goldboard.cli._output import EMPTY_TEXT_MEANS_SOMETHING, refuse_empty_text  # noqa: E402
from goldboard.errors import GoldboardError  # noqa: E402
from goldboard.study import Study  # noqa: E402


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture()
def released(tmp_path):
    """The hand-counted MTB study with two decisions and gold release v1."""
    study = make_study(tmp_path)
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    assert import_(study, sheet).exit_code == 0
    assert run("gold", "export", "--study", study.path).exit_code == 0
    return study


# --------------------------------------------------------------------------- 1. an empty text value

TEXTS = [
    (path, p)
    for path, cmd in _leaf_commands()
    for p in cmd.params
    if isinstance(p.type, click.types.StringParamType) and (path[-1], p.name) not in EMPTY_TEXT_MEANS_SOMETHING
]


@pytest.mark.parametrize("path,param", TEXTS, ids=[f"{' '.join(c)} {p.name}" for c, p in TEXTS])
@pytest.mark.parametrize("empty", ["", "  "])
def test_every_empty_text_parameter_is_refused_naming_it(path, param, empty):
    with pytest.raises(GoldboardError, match="an empty value") as err:
        refuse_empty_text(dict(_leaf_commands())[path], {param.name: (empty,) if param.multiple else empty})
    flag = max(param.opts, key=len) if isinstance(param, click.Option) else param.human_readable_name
    assert str(err.value).startswith(f"{flag} {empty!r}: an empty value"), str(err.value)


@pytest.mark.parametrize(
    "args",
    [
        ("score", "--field", ""),
        ("score", "--model-col", " "),
        ("judge", "--field", ""),
        ("report", "--release", ""),
        ("calibrate", "--rule", "kappa_lower>=0.6", "--field", ""),
    ],
    ids=lambda a: " ".join(a),
)
def test_an_empty_text_option_is_one_error_line_and_nothing_changes(released, tmp_path, args):
    before = _files(released.path)
    out = tmp_path / "out.txt"
    res = run(args[0], "--study", released.path, *args[1:], "-o", out)
    line = error_line(res)
    flag = args[-2]
    assert res.exit_code == 1 and line.startswith(f"Error: {flag} {args[-1]!r}: an empty value"), res.output
    assert not out.exists() and _files(released.path) == before


def test_judge_with_labels_and_an_empty_field_records_nothing(released, tmp_path):
    labels = tmp_path / "gpt.csv"
    labels.write_text("item_id,field,value\nC-1,safety_label,Supported\nC-2,safety_label,Unsupported\n")
    before = _files(released.path)
    res = run(
        "judge", "--study", released.path, "--judge", "gpt", "--labels", labels, "--expertise", "expert",
        "--field", "",
    )  # fmt: skip
    assert res.exit_code == 1 and error_line(res).startswith("Error: --field '': an empty value"), res.output
    assert _files(released.path) == before


def test_study_set_url_empty_still_means_the_embedded_server(tmp_path):
    s = tmp_path / "s"
    assert (
        run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", "http://x:8080").exit_code == 0
    )
    res = run("study", "set", s, "--url", "")
    assert res.exit_code == 0 and "(embedded server)" in res.output, res.output


# --------------------------------------------------------------------------- 2. the server's data dir

BAD_DIRS = ["dd\nfake line", "dd\r", "dd\t1", "dd\u202e", "dd\x1b[31m", "dd /ls", " dd"]


@pytest.mark.parametrize("name", BAD_DIRS, ids=[ascii(n) for n in BAD_DIRS])
@pytest.mark.parametrize(
    "args",
    [("server", "add-raters", "onc_a"), ("server", "status"), ("server", "login", "onc_a"), ("server", "stop")],
    ids=lambda a: " ".join(a),
)
def test_a_server_data_dir_with_a_control_character_or_stray_space_is_refused(tmp_path, name, args):
    d = str(tmp_path / name)
    res = run(*args, "--data-dir", d)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith("Error: --data-dir '"), res.output
    assert ("control character" in line) != ("leading or trailing space" in line), line
    assert "\n" not in line.removeprefix("Error: ") and list(tmp_path.iterdir()) == [], res.output


def test_the_server_dir_variable_is_checked_and_a_plain_dir_still_works(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "x\ny"))
    res = run("server", "status")
    assert res.exit_code == 1 and error_line(res).startswith("Error: $GOLDBOARD_SERVER_DIR '"), res.output
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "plain dir"))  # a space inside a name is fine
    res = run("server", "status")
    assert res.exit_code == 0 and f"data dir:     {tmp_path / 'plain dir'}" in res.output, res.output


# --------------------------------------------------------------------------- 3. a typed id like 1E5

KEPT = "is kept as the text typed, but a spreadsheet opening a file with it reads it as a number"


def _table_study(tmp_path, ids):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    t = tmp_path / "t.csv"
    t.write_text("case_id,a,b\n" + "".join(f"{i},Supported,Unsupported\n" for i in ids))
    res = run(
        "pull", "--study", s, "--from-table", t, "--item-col", "case_id", "--rater-cols", "onc_a=a,onc_b=b",
        "--field", "safety_label",
    )  # fmt: skip
    return s, t, res


def test_a_lone_1e5_item_id_in_a_table_is_kept_as_typed_with_a_warning(tmp_path):
    s, t, res = _table_study(tmp_path, ["1E5", "2.5e3", "C1"])
    assert res.exit_code == 0, res.output
    warn = [ln for ln in res.output.splitlines() if KEPT in ln]
    assert warn == [
        f"Warning: {t}: item id '1E5' (and '2.5e3') {KEPT} in scientific notation (1E5 = 100000) and saves it so: "
        "format the id column as Text before editing such a file in Excel or LibreOffice"
    ], res.output
    assert sorted(set(read_ratings_csv(s / "rounds/1/ratings.csv")["item_id"])) == ["1E5", "2.5e3", "C1"]


@pytest.mark.parametrize(
    "ids,needle",
    [(["1.23E+05", "C1"], "is a number in scientific notation"), (["1E5", "100000"], "differ only in how a number")],
)
def test_excel_s_notation_and_a_1e5_twin_stay_errors(tmp_path, ids, needle):
    s, t, res = _table_study(tmp_path, ids)
    assert res.exit_code == 1 and needle in error_line(res) and KEPT not in res.output, res.output
    assert not (s / "rounds/1/ratings.csv").exists()


def test_plain_ids_get_no_warning(tmp_path):
    _, _, res = _table_study(tmp_path, ["1", "007X", "E5", "C1E5"])
    assert res.exit_code == 0 and "Warning" not in res.output.replace("no account", ""), res.output


def test_a_lone_1e5_item_id_in_a_prodigy_file_is_kept_with_the_same_warning(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("1E5")])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    assert res.exit_code == 0 and f"Warning: {f}: item id '1E5' {KEPT}" in res.output, res.output
    assert "1E5" in set(read_ratings_csv(s / "rounds/1/ratings.csv")["item_id"])


# --------------------------------------------------------------------------- 4. judge: check, then record


@pytest.mark.parametrize(
    "opts,needle",
    [
        (["--epsilon", "-1"], "--epsilon: -1.0: give a margin in [0, 1)"),
        (["--epsilon", "1.5"], "--epsilon: 1.5: give a margin"),
        (["--epsilon", "nan"], "--epsilon: nan: give a margin"),
    ],
)
def test_judge_refused_for_its_settings_records_nothing(released, tmp_path, opts, needle):
    labels = tmp_path / "gpt.csv"
    labels.write_text("item_id,field,value\n" + "".join(f"C-{n},safety_label,Supported\n" for n in range(1, 10)))
    before = _files(released.path)
    res = run("judge", "--study", released.path, "--judge", "gpt", "--labels", labels, *opts)
    assert res.exit_code == 1 and needle in error_line(res), res.output
    assert _files(released.path) == before


# --------------------------------------------------------------------------- 5. a refused pull keeps study.toml


def _ls_export(path: Path) -> Path:
    def ann(aid, who, label):
        return {
            "id": aid, "completed_by": who, "was_cancelled": False, "created_at": "2026-01-01T10:00:00Z",
            "updated_at": "2026-01-01T10:00:00Z", "lead_time": 10.0,
            "result": [{"from_name": "safety_label", "to_name": "output", "type": "choices",
                        "value": {"choices": [label]}},
                       {"from_name": "rationale", "to_name": "output", "type": "textarea",
                        "value": {"text": ["why"]}}],
        }  # fmt: skip

    tasks = [
        {"id": 100 + n, "data": {"case_id": f"C-{n}", "case_text": "x", "output_text": "y"},
         "annotations": [ann(1000 + 2 * n, 1, "Supported"), ann(1001 + 2 * n, 2, "Unsupported")]}
        for n in range(1, 4)
    ]  # fmt: skip
    path.write_text(json.dumps(tasks))
    return path


@pytest.mark.parametrize("round_args", [(), ("--round", "1")], ids=["new study", "--round 1"])
def test_a_refused_pull_from_exports_leaves_study_toml_as_it_was(tmp_path, round_args):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    export = _ls_export(tmp_path / "good.json")
    before = _files(s)
    res = run(
        "pull", "--study", s, *round_args, "--from-export", f"onc_a={export}", "--from-export", f"onc_b={export}",
        "--item-key", "case_id",
    )  # fmt: skip
    assert res.exit_code == 1 and "one export given twice?" in error_line(res), res.output
    assert _files(s) == before
    res = run("pull", "--study", s, "--from-export", export, "--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")
    assert res.exit_code == 0, res.output  # the same export given once: pulled, the round recorded
    assert [r.number for r in Study.open(s).rounds] == [1] and Study.open(s).extra["item_key"] == "case_id"


# --------------------------------------------------------------------------- 6. a filled sheet is not overwritten


def test_sheet_over_a_filled_unimported_workbook_is_refused_and_replaced_once_imported(tmp_path):
    import openpyxl

    study = make_study(tmp_path)
    sheet = sheet_for(study, tmp_path)
    fill(sheet, {"C-1": (U, "no data", None), "C-7": (I, "no stage", None)})
    typed = sheet.read_bytes()
    res = run("adjudicate", "sheet", "--study", study.path, "-o", sheet)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: -o {sheet}: holds 2 decision(s) not in the decisions log"), (
        line
    )
    assert "import it first" in line and "--force" in line, line
    assert sheet.read_bytes() == typed and not study.decisions_path.exists()
    assert import_(study, sheet).exit_code == 0
    res = run("adjudicate", "sheet", "--study", study.path, "-o", sheet)  # imported: replaced, pre-filled
    assert res.exit_code == 0 and sheet.read_bytes() != typed, res.output
    res = run("adjudicate", "sheet", "--study", study.path, "-o", sheet)  # only the decisions in force: replaced
    assert res.exit_code == 0, res.output
    other = tmp_path / "other.xlsx"
    openpyxl.Workbook().save(other)  # not a review workbook: replaced as the README says
    assert run("adjudicate", "sheet", "--study", study.path, "-o", other).exit_code == 0


# --------------------------------------------------------------------------- 7. study.toml read back


@pytest.mark.parametrize(
    "extra,needle",
    [("onc_b", "rater 'onc_b' is listed twice in [study] raters"), ("ONC_B", "'onc_b' and 'ONC_B' in [study] raters")],
)
@pytest.mark.parametrize(
    "cmd",
    [("agree",), ("status",), ("flag",), ("report", "--format", "markdown"), ("gold", "export", "--force"),
     ("calibrate", "--rule", "kappa_lower>=0.5")],
    ids=lambda c: c[0] if len(c) == 1 or c[0] != "gold" else "gold export",
)  # fmt: skip
def test_a_rater_listed_twice_in_study_toml_is_one_error_for_every_reader(released, tmp_path, extra, needle, cmd):
    toml = released.path / "study.toml"
    text = toml.read_text()
    assert '    "onc_b",\n' in text
    toml.write_text(text.replace('    "onc_b",\n', f'    "onc_b",\n    "{extra}",\n', 1))
    before = _files(released.path)
    out = tmp_path / "out.txt"
    res = run(*cmd[:2] if cmd[0] == "gold" else cmd[:1], "--study", released.path, *cmd[2 if cmd[0] == "gold" else 1 :],
              *(["-o", out] if cmd[0] in ("agree", "flag", "report") else []))  # fmt: skip
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {toml}: ") and needle in line, res.output
    assert _files(released.path) == before and not out.exists()


def test_a_study_toml_with_a_bom_is_read(released):
    toml = released.path / "study.toml"
    toml.write_bytes(b"\xef\xbb\xbf" + toml.read_bytes())
    res = run("status", "--study", released.path)
    assert res.exit_code == 0 and "adjudication (dr_lee)" in res.output, res.output


# --------------------------------------------------------------------------- 8. Prodigy times out of range


@pytest.mark.parametrize("at,hint", [(1767261600000, "looks like milliseconds"), (99999999999999, ""), (-5, "")])
def test_a_prodigy_timestamp_out_of_range_is_one_line_naming_the_line(tmp_path, at, hint):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task("MTB-2", at=at)])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {f}:2: _timestamp {at} is no time between 1970 and 2100")
    assert hint in line and not (s / "rounds").exists(), res.output


# --------------------------------------------------------------------------- 9. invisible characters in ids

ZW = "MTB-1\u200b"


def test_a_table_id_with_a_zero_width_space_is_held_out_by_row(tmp_path):
    s, t, res = _table_study(tmp_path, [ZW, "MTB-1", "MTB-2"])
    assert (
        res.exit_code == 0 and "case_id 'MTB-1\\u200b' contains invisible or control character U+200B" in res.output
    ), res.output
    assert set(read_ratings_csv(s / "rounds/1/ratings.csv")["item_id"]) == {"MTB-1", "MTB-2"}
    assert "U+200B" in (s / "rounds/1/invalid.csv").read_text() and ZW not in (s / "units.jsonl").read_text()


def test_a_prodigy_id_with_a_zero_width_space_is_refused_naming_the_line(tmp_path):
    s, f = study_and_file(tmp_path, [task("MTB-1"), task(ZW, who="p-ben")])
    res = run("pull", "--study", s, "--from-file", f"prodigy={f}", "--rater", RATERS)
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {f}:2: item id 'MTB-1\\u200b' contains invisible"), line
    assert not (s / "rounds").exists()


def test_cases_whose_ids_differ_by_an_invisible_character_are_twins(tmp_path):
    from goldboard.cases.ids import id_key

    assert id_key(ZW) == id_key("MTB-1") == id_key("mtb-1\ufeff")
    cases = tmp_path / "cases.csv"
    cases.write_text(f"case_id,patient_summary,proposed_therapy\nMTB-1,a,b\n{ZW},c,d\n", encoding="utf-8")
    res = run("cases", "validate", cases, "--schema", "mtb")
    assert (
        res.exit_code == 1
        and ":3: case_id: 'MTB-1\\u200b' contains invisible or control character U+200B" in res.output
    )


# --------------------------------------------------------------------------- 10. score options


@pytest.mark.parametrize(
    "opts,needle",
    [
        (["--compare", "gpt,gpt"], "--compare: 'gpt,gpt': a model compared with itself"),
        (["--critical-at", "bogus"], "--critical-at: applies only when scoring model outputs"),
        (["--confident-at", "0.9"], "--confident-at: applies only when scoring multiple choice"),
        (["--collapse-share", "5"], "--collapse-share: 5: give a share between 0 and 1"),
        (["--collapse-share", "-1"], "--collapse-share: -1: give a share between 0 and 1"),
    ],
)
def test_score_options_that_cannot_mean_anything_here_are_refused(released, tmp_path, opts, needle):
    preds = tmp_path / "pred.jsonl"
    preds.write_text(
        "".join(
            json.dumps({"case_id": f"C-{n}", "model": m, "predicted_label": "Supported"}) + "\n"
            for n in range(1, 10)
            for m in ("gpt", "llama")
        )
    )
    res = run("score", "--study", released.path, "--predictions", preds, *opts)
    assert res.exit_code == 1 and error_line(res).startswith(f"Error: {needle}"), res.output
    res = run("score", "--study", released.path, "--predictions", preds, "--compare", "gpt,llama")
    assert res.exit_code == 0, res.output  # the same run with meaningful options


# --------------------------------------------------------------------------- 11. an adjudicator is no rater


@pytest.mark.parametrize("name", ["dr_lee", "Dr_Lee"])
def test_the_independent_adjudicator_cannot_be_added_as_a_rater(released, tmp_path, name, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "srv"))
    before = _files(released.path)
    res = run("study", "add-rater", released.path, name, "--no-account")
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {name!r}: already the adjudicator 'dr_lee' of decisions"), (
        line
    )
    assert _files(released.path) == before
    assert run("study", "add-rater", released.path, "onc_c", "--no-account").exit_code == 0


# --------------------------------------------------------------------------- 12. a release over a changed one


def test_a_release_cut_over_a_changed_release_is_refused(released):
    """G05: the new release would name the changed one as its previous: nothing written (the
    wording is test_campaign_files')."""
    v1 = released.path / "gold" / "v1" / "gold.csv"
    os.chmod(v1, 0o644)
    v1.write_text(v1.read_text().replace(",adjudicated,", ",unanimous,", 1))
    res = run("gold", "export", "--study", released.path, "--force")
    assert res.exit_code == 1 and f"{v1}: changed since release v1 was written" in error_line(res), res.output
    assert not (released.path / "gold" / "v2").exists()


# --------------------------------------------------------------------------- 13. --round below 1

ROUND_CMDS = [
    ("agree",), ("report", "--format", "markdown"), ("flag",), ("calibrate", "--rule", "kappa_lower>=0.5"),
    ("adjudicate", "sheet", "-o", "{tmp}/s.xlsx"), ("gold", "export"),
]  # fmt: skip


@pytest.mark.parametrize("n", ["0", "-1"])
@pytest.mark.parametrize("cmd", ROUND_CMDS, ids=lambda c: " ".join(c[:2]))
def test_a_round_below_one_is_one_line(released, tmp_path, cmd, n):
    sub = 2 if cmd[0] in ("adjudicate", "gold") else 1
    args = [a.format(tmp=tmp_path) for a in cmd[sub:]]
    res = run(*cmd[:sub], "--study", released.path, *args, "--round", n)
    assert res.exit_code == 1 and error_line(res) == f"Error: --round {n}: rounds are numbered from 1", res.output


# --------------------------------------------------------------------------- 14. ids of a hand-made project


@pytest.mark.parametrize(
    "second,needle",
    [("007", "item ids '7' and '007' differ only in how a number is written"),
     ("7\u200b", "item id '7\\u200b' contains invisible or control character U+200B")],
)  # fmt: skip
def test_ids_of_a_hand_made_project_export_are_checked_like_a_table(tmp_path, second, needle):
    s = tmp_path / "s"
    Study.init(s, schema="mtb", raters=["onc_a", "onc_b"])
    export = _ls_export(tmp_path / "e.json")
    tasks = json.loads(export.read_text())
    tasks[0]["data"]["case_id"], tasks[1]["data"]["case_id"] = "7", second
    export.write_text(json.dumps(tasks))
    before = _files(s)
    res = run("pull", "--study", s, "--from-export", export, "--item-key", "case_id", "--rater", "1=onc_a,2=onc_b")
    assert res.exit_code == 1 and needle in error_line(res), res.output
    assert _files(s) == before


def test_a_judge_named_like_the_adjudicator_is_refused(released, tmp_path):
    labels = tmp_path / "j.csv"
    labels.write_text("item_id,field,value\nC-1,safety_label,Supported\n")
    before = _files(released.path)
    res = run("judge", "--study", released.path, "--judge", "Dr-Lee", "--labels", labels, "--expertise", "expert")
    line = error_line(res)
    assert res.exit_code == 1 and "'Dr-Lee' is an adjudicator of this study" in line, res.output
    assert _files(released.path) == before


# --------------------------------------------------------------------------- 15. plan sample: twin case ids


@pytest.mark.parametrize(
    "content",
    ["case_id,text\n7,a\n007,b\nC2,c\n", '{"case_id": 7, "text": "a"}\n{"case_id": "007", "text": "b"}\n'],
    ids=["csv", "jsonl number"],
)
def test_plan_sample_refuses_twin_case_ids(tmp_path, content):
    cases = tmp_path / ("cases.csv" if content.startswith("case_id") else "cases.jsonl")
    cases.write_text(content)
    out = tmp_path / "s.csv"
    res = run("plan", "sample", "--cases", cases, "-n", "1", "--seed", "1", "-o", out)
    line = error_line(res)
    assert res.exit_code == 1 and ("lines 2 and 3" in line or "lines 1 and 2" in line), res.output
    assert "case ids '7' and '007' differ only in how a number is written" in line and not out.exists()
