"""Small things a clinician notices (issue 22): the server folder recorded (and a missing server's
error names `study set --data-dir`), `study init --help`, the case-level note, progress bars in
logs, normalised spellings counted in the pull summary."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke_cli

from goldboard.annotate.client import ServerUnreachable, resolve_connection
from goldboard.study import Study


def test_study_init_records_goldboard_server_dir(tmp_path, monkeypatch):
    server = tmp_path / "team-server"
    server.mkdir()
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(server))
    res = invoke_cli("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", "onc_a,onc_b")
    assert res.exit_code == 0, res.output
    assert "(from GOLDBOARD_SERVER_DIR) recorded in study.toml" in res.output
    st = Study.open(tmp_path / "s")
    assert st.data_dir == str(server.resolve())
    # a new shell without the variable: the study still names its server, and the error says how to fix it
    monkeypatch.delenv("GOLDBOARD_SERVER_DIR")
    with pytest.raises(ServerUnreachable) as exc:
        resolve_connection(st)
    assert f"({server.resolve()}) is not running" in str(exc.value)
    assert f"`goldboard study set {st.path} --data-dir DIR`" in str(exc.value)


def test_study_init_with_url_records_no_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(tmp_path / "x"))
    res = invoke_cli("study", "init", tmp_path / "s", "--schema", "mtb", "--raters", "a,b", "--url", "http://ls:8080")
    assert res.exit_code == 0, res.output
    assert Study.open(tmp_path / "s").data_dir == ""


def test_study_init_help_lists_every_builtin_schema():
    from goldboard.label_configs.schema import builtin_names

    res = invoke_cli("study", "init", "--help")
    text = " ".join(res.output.split())
    assert "mtb_unsafe" in builtin_names()
    for name in builtin_names():
        assert name in text


@pytest.mark.live
def test_first_push_without_outputs_says_case_level(live_server, tmp_path, monkeypatch):
    """Also: a study made before its server folder was known (GOLDBOARD_SERVER_DIR in this shell
    only) records the folder at its first push."""
    from test_live_roundtrip import RATERS, cases_files

    cases, _ = cases_files(tmp_path, n=2)
    st = Study.init(tmp_path / "study", schema="mtb", raters=RATERS)
    assert st.data_dir == ""
    monkeypatch.setenv("GOLDBOARD_SERVER_DIR", str(live_server.data_dir))
    res = invoke_cli("push", "--study", st.path, cases, "--quiet")
    assert res.exit_code == 0, res.output
    assert Study.open(st.path).data_dir == str(Path(live_server.data_dir).resolve())
    assert (
        "case-level round: no --outputs, so raters label the cases themselves (one item per case); the schema's "
        "'Proposed therapy / model recommendation' pane is left out"
    ) in " ".join(res.output.split())
    again = invoke_cli("push", "--study", st.path, cases, "--quiet")  # said once, at the first push
    assert again.exit_code == 0 and "case-level round" not in again.output


def test_progress_bar_ends_its_line_in_a_log(tmp_path):
    """A bar written to a file (a CI log) ends with a newline, even where the terminal bar is
    cleared (leave=False): the next line of the log is not glued to it."""
    from goldboard.text import progress_bar

    log = tmp_path / "log.txt"
    with log.open("w") as fh:
        for _ in progress_bar(range(3), desc="Pulling", leave=False, file=fh):
            pass
        fh.write("wrote rounds/1/ratings.csv\n")
    text = log.read_text()
    assert "\nwrote rounds/1/ratings.csv\n" in text and "Pulling" in text


def test_normalised_values_are_counted_in_one_line_of_the_pull_summary(tmp_path):
    table = tmp_path / "ratings.csv"
    table.write_text(
        "item_id,rater,value\nA,onc_a,supported\nA,onc_b,Supported \nB,onc_a,Supported\nB,onc_b,unsupported\n"
        "C,onc_a,Insufficient Info\nC,onc_b,supported\n"
    )
    s = tmp_path / "s"
    assert invoke_cli("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b").exit_code == 0
    res = invoke_cli("pull", "--study", s, "--from-table", table, "--label-col", "value", "--field", "safety_label")
    assert res.exit_code == 0, res.output
    lines = [x for x in res.output.splitlines() if "read in the schema's spelling" in x]
    assert lines == [
        "  5 values read in the schema's spelling: 'supported' -> Supported (2), 'Supported ' -> Supported (1), "
        "'unsupported' -> Unsupported (1), 'Insufficient Info' -> Insufficient Information (1)"
    ]
    ratings = Study.open(s).ratings(1)
    assert sorted(ratings["value"]) == sorted(["Supported"] * 4 + ["Unsupported", "Insufficient Information"])


@pytest.mark.parametrize("paper,size", [("a4", (595, 842)), ("letter", (612, 792))])
def test_report_pdf_page_size(tmp_path, paper, size):
    """--paper a4|letter sets the printed page (checked with pdfinfo); the default follows the locale."""
    import shutil
    import subprocess

    from cdp import chromium_path
    from test_adjudication_roundtrip import make_study

    if chromium_path() is None or shutil.which("pdfinfo") is None:
        pytest.skip("needs chromium and pdfinfo (poppler-utils)")
    st = make_study(tmp_path)
    pdf = tmp_path / "report.pdf"
    res = invoke_cli("report", "--study", st.path, "-o", tmp_path / "r.html", "--pdf", pdf, "--paper", paper)
    assert res.exit_code == 0, res.output
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    line = next(x for x in info.splitlines() if x.startswith("Page size:"))
    w, h = (round(float(v)) for v in line.split(":")[1].split("pts")[0].split(" x "))
    assert (w, h) == size, line
    assert f"@page {{ size: {'A4' if paper == 'a4' else 'letter'};" in (tmp_path / "r.html").read_text()


def test_report_paper_default_follows_the_locale(tmp_path, monkeypatch):
    from test_adjudication_roundtrip import make_study

    st = make_study(tmp_path)
    for lang, css in (("en_US.UTF-8", "letter"), ("de_DE.UTF-8", "A4")):
        monkeypatch.setenv("LANG", lang)
        monkeypatch.delenv("LC_ALL", raising=False)
        monkeypatch.delenv("LC_PAPER", raising=False)
        out = tmp_path / f"{lang}.html"
        assert invoke_cli("report", "--study", st.path, "-o", out, "--no-supplement").exit_code == 0
        assert f"@page {{ size: {css};" in out.read_text()
