"""What study.toml and the server accept as names and settings: rater names differing only in case,
words goldboard writes, the adjudicator or a judge as a rater, URLs with a query, ports out of
range, names and free text with control or bidi characters: refused in one line before anything
is written; line breaks in rater info become one space.

Each test failed on the code before its fix (checked when it was written, in issue 23's misuse
campaigns; grouped here by what it protects in issue 31).
"""

from __future__ import annotations

import pytest
from builders import error_naming, fill_sheet, judge_labels, study_bytes, study_files, table_study
from conftest import error_line
from conftest import invoke_cli as run
from conftest import run_cli as run_ok


def test_raters_differing_only_in_case_refused(tmp_path):
    line = error_line(run("study", "init", tmp_path / "x", "--schema", "mtb", "--raters", "onc_a,ONC_A"))
    assert "'onc_a' and 'ONC_A' differ only in letter case" in line
    assert not (tmp_path / "x").exists()
    s = table_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("study", "add-rater", s, "Onc_A", "--no-account"))
    assert "'Onc_A': the study has rater 'onc_a', which differs only in letter case" in line
    assert (s / "study.toml").read_bytes() == toml


@pytest.mark.parametrize("url", ["http://host/?token=abc", "https://ls.example.org/?x=1", "http://host:8080/ls#abc"])
def test_study_url_with_a_query_refused_without_repeating_it(tmp_path, url):
    res = run("study", "init", tmp_path / "x", "--schema", "mtb", "--raters", "onc_a,onc_b", "--url", url)
    line = error_line(res)
    assert "the URL has a query or fragment" in line and "abc" not in line and "x=1" not in line
    assert not (tmp_path / "x").exists()
    s = table_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("study", "set", s, "--url", url))
    assert "abc" not in line and "x=1" not in line
    assert (s / "study.toml").read_bytes() == toml


@pytest.mark.parametrize("name,code", [("My\u202estudy", "U+202E"), ("a\x07b", "U+0007"), ("a\u2028b", "U+2028")])
def test_study_name_with_control_or_bidi_character_refused(tmp_path, name, code):
    from goldboard.cases.ids import escape_hidden

    s = table_study(tmp_path)
    toml = (s / "study.toml").read_bytes()
    line = error_line(run("study", "set", s, "--name", name))
    assert line.startswith(
        f"Error: --name: the name '{escape_hidden(name)}' contains invisible or control character(s) {code}"
    )
    assert (s / "study.toml").read_bytes() == toml
    line = error_line(
        run("study", "init", tmp_path / "y", "--schema", "mtb", "--raters", "onc_a,onc_b", "--name", name)
    )
    assert code in line and not (tmp_path / "y").exists()
    assert run("study", "set", s, "--name", "Étude 2").exit_code == 0


@pytest.mark.parametrize("name", ["dr_lee", "Dr_Lee"])
def test_the_independent_adjudicator_cannot_be_added_as_a_rater(released, tmp_path, name, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "srv"))
    before = study_files(released.path)
    res = run("study", "add-rater", released.path, name, "--no-account")
    line = error_line(res)
    assert res.exit_code == 1 and line.startswith(f"Error: {name!r}: already the adjudicator 'dr_lee' of decisions"), (
        line
    )
    assert study_files(released.path) == before
    assert run("study", "add-rater", released.path, "onc_c", "--no-account").exit_code == 0


def test_a_judge_named_like_the_adjudicator_is_refused(released, tmp_path):
    labels = tmp_path / "j.csv"
    labels.write_text("item_id,field,value\nC-1,safety_label,Supported\n")
    before = study_files(released.path)
    res = run("judge", "--study", released.path, "--judge", "Dr-Lee", "--labels", labels, "--expertise", "expert")
    line = error_line(res)
    assert res.exit_code == 1 and "'Dr-Lee' is an adjudicator of this study" in line, res.output
    assert study_files(released.path) == before


@pytest.mark.parametrize("word", ["unresolved", "Unresolved", "unanimous", "adjudicated", "single", "none", "gold"])
def test_words_goldboard_writes_refused_as_rater_names(tmp_path, word):
    line = error_line(run("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", f"onc_a,{word}"))
    assert f"--raters: {word!r} is a word goldboard writes itself" in line
    assert not (tmp_path / "s").exists()
    s = table_study(tmp_path)
    before = study_bytes(s)
    assert f"{word!r} is a word goldboard writes itself" in error_line(run("study", "add-rater", s, word))
    assert study_bytes(s) == before
    res = run("server", "add-raters", f"onc_c,{word}", "--data-dir", tmp_path / "ls")
    assert f"rater name: {word!r} is a word goldboard writes itself" in error_line(res)
    assert not (tmp_path / "ls").exists()


def test_server_add_raters_refuses_names_differing_only_in_case(tmp_path):
    res = run("server", "add-raters", "onc_a,ONC_A", "--data-dir", tmp_path / "ls")
    assert "rater name 'ONC_A': given as 'onc_a', which differs only in letter case" in error_line(res)
    assert not (tmp_path / "ls").exists()  # nothing written


def test_server_add_raters_refuses_a_case_twin_of_an_existing_account(tmp_path):
    from goldboard.annotate import server as srv

    d = tmp_path / "ls"
    d.mkdir()
    creds = srv.Credentials(path=d / srv.CREDENTIALS_FILE, admin=srv._new_user(srv.ADMIN))
    creds.users["onc_a"] = srv._new_user("onc_a")
    creds.save()
    before = (d / srv.CREDENTIALS_FILE).read_bytes()
    res = run("server", "add-raters", "Onc_A", "--data-dir", d)
    assert "rater name 'Onc_A': the server already has 'onc_a', which differs only in letter case" in error_line(res)
    assert (d / srv.CREDENTIALS_FILE).read_bytes() == before


@pytest.mark.parametrize(
    "args,needle",
    [
        (
            ["round", "{s}", "1", "--guideline-version", "v1\x1b[31m"],
            "--guideline-version: the version 'v1\\x1b[31m' contains",
        ),
        (["round", "{s}", "1", "--guideline-version", "v1\u202e"], "control character(s) U+202E"),
        (
            ["set", "{s}", "--url", "http://lab\tstudio:8080"],
            "--url: the URL contains invisible or control character(s) U+0009",
        ),
        (
            ["set", "{s}", "--url", "http://ls.example\u202e:8080"],
            "--url: the URL contains invisible or control character(s) U+202E",
        ),
        (
            ["set", "{s}", "--rater-info", "onc_a=oncologist\x07"],
            "--rater-info onc_a=...: the text 'oncologist\\x07' contains",
        ),
        (
            ["set", "{s}", "--rater-info", "onc_a=\u202eoncologist"],
            "--rater-info onc_a=...: the text '\\u202eoncologist' contains",
        ),
        (
            ["set", "{s}", "--case-source", "OpenMTB\x1f"],
            "--case-source: the text 'OpenMTB\\x1f' contains invisible or control character(s) U+001F",
        ),
        (
            ["set", "{s}", "--data-dir", "/tmp/ls\x01"],
            "--data-dir: the path '/tmp/ls\\x01' contains invisible or control character(s) U+0001",
        ),
        (["set", "{s}", "--url", "http://127.0.0.1:99999"], "the port must be a number from 1 to 65535"),
        (["set", "{s}", "--url", "http://127.0.0.1:0"], "the port must be a number from 1 to 65535"),
    ],
)
def test_free_text_into_study_toml_with_control_characters_or_a_bad_port_refused(tmp_path, args, needle):
    s = table_study(tmp_path)
    before = study_bytes(s)
    line = error_line(run("study", *[a.replace("{s}", str(s)) for a in args]))
    assert needle in line
    assert study_bytes(s) == before


def test_init_url_port_out_of_range_refused(tmp_path):
    res = run("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", "a1,b1", "--url", "http://h:65536")
    assert "--url 'http://h:65536': the port must be a number from 1 to 65535" in error_line(res)
    assert not (tmp_path / "s").exists()


def test_line_breaks_in_rater_info_become_one_space_and_are_shown(tmp_path):
    s = table_study(tmp_path)
    res = run("study", "set", s, "--rater-info", "onc_a=board-certified\noncologist")
    assert res.exit_code == 0 and "rater onc_a: board-certified oncologist" in res.output, res.output


@pytest.mark.parametrize("port", ["0", "99999"])
def test_server_start_port_out_of_range_refused_before_anything_is_written(tmp_path, port):
    res = run("server", "start", "--port", port, "--data-dir", tmp_path / "ls")
    assert "--port" in error_line(res) and "1<=x<=65535" in error_line(res)
    assert not (tmp_path / "ls").exists()


@pytest.mark.parametrize("name", ["dr_chair", "Dr_Chair"])
def test_w14_add_rater_refuses_the_adjudicator(openmtb_pulled, tmp_path, name):
    review = tmp_path / "review.xlsx"
    run_ok("adjudicate", "sheet", "--study", openmtb_pulled, "-o", review)
    fill_sheet(review, 2)
    run_ok("adjudicate", "import", "--study", openmtb_pulled, review, "--adjudicator", "dr_chair")
    before = study_bytes(openmtb_pulled)
    res = run_ok("study", "add-rater", openmtb_pulled, name, "--no-account", code=1)
    error_naming(res, f"{name!r}: already the adjudicator 'dr_chair' of decisions in ")
    assert study_bytes(openmtb_pulled) == before
    run_ok("gold", "export", "--study", openmtb_pulled)  # the log is still trusted: no "edited by hand?"


def test_w14_add_rater_refuses_a_judge(openmtb_pulled, tmp_path):
    run_ok(
        "judge", "--study", openmtb_pulled, "--judge", "bench", "--labels", judge_labels(tmp_path), "--epsilon", "0.2"
    )
    before = study_bytes(openmtb_pulled)
    error_naming(
        run_ok("study", "add-rater", openmtb_pulled, "bench", "--no-account", code=1), "already the judge 'bench'"
    )
    assert study_bytes(openmtb_pulled) == before
