"""A study's files are never silently replaced or read as missing: a symbolic link or a read-only file
where goldboard would write is refused naming the file (the rename of an atomic write would cut the
link, or replace what someone protected); ``units.jsonl`` deleted or replaced by a folder is refused by
the review sheet and by ``gold export`` before anything is written.  Oracle: one ``Error:`` line
naming the file, a non-zero exit, no traceback, the study's files byte for byte unchanged."""

from __future__ import annotations

import os
import stat

from builders import one_error, openmtb_study, study_bytes
from conftest import run_cli as run

from goldboard.fileio import write_text_atomic


def _study(tmp_path):
    s = tmp_path / "s"
    run("study", "init", s, "--schema", "mtb", "--raters", "onc_a,onc_b")
    return s


# --------------------------------------------------------------------------- symlinks and read-only files


def test_symlinked_study_toml_is_refused_and_the_link_kept(tmp_path):
    s = _study(tmp_path)
    real = tmp_path / "kept" / "study.toml"
    real.parent.mkdir()
    (s / "study.toml").rename(real)
    (s / "study.toml").symlink_to(real)
    before = real.read_bytes()
    line = one_error(run("study", "add-rater", s, "onc_c", code=None))
    assert f"{s / 'study.toml'}: a symbolic link (to {real})" in line
    assert (s / "study.toml").is_symlink() and os.readlink(s / "study.toml") == str(real)
    assert real.read_bytes() == before  # neither the link nor its target replaced


def test_read_only_study_toml_is_refused_and_kept(tmp_path):
    s = _study(tmp_path)
    f = s / "study.toml"
    os.chmod(f, 0o444)
    before = f.read_bytes()
    line = one_error(run("study", "add-rater", s, "onc_c", code=None))
    assert f"{f}: read-only (mode 444)" in line and f"chmod u+w {f}" in line
    assert f.read_bytes() == before and stat.S_IMODE(f.stat().st_mode) == 0o444


def test_read_only_decisions_log_is_refused_on_import(released, tmp_path):
    from builders import import_, sheet_for
    from test_adjudication_roundtrip import fill
    from test_flags import U

    sheet = sheet_for(released, tmp_path)
    fill(sheet, {"C-3": (U, "no data", None)})
    os.chmod(released.decisions_path, 0o444)
    before = study_bytes(released.path)
    line = one_error(import_(released, sheet))
    assert f"{released.decisions_path}: read-only" in line
    assert study_bytes(released.path) == before


def test_a_writable_file_and_a_new_file_are_written_as_before(tmp_path):
    f = tmp_path / "a.txt"
    write_text_atomic(f, "one")
    write_text_atomic(f, "two")
    assert f.read_text() == "two"


# --------------------------------------------------------------------------- units.jsonl gone or a folder


def test_review_sheet_of_a_study_whose_units_file_was_deleted_is_refused(tmp_path):
    s = openmtb_study(tmp_path)
    (s / "units.jsonl").unlink()
    out = tmp_path / "review.xlsx"
    line = one_error(run("adjudicate", "sheet", "--study", s, "-o", out, code=None))
    assert f"{s / 'units.jsonl'}: file not found, but {s / 'study.toml'} records 50 item(s) in round 1" in line
    assert "no review sheet written" in line
    assert not out.exists()


def test_status_names_the_deleted_units_file(tmp_path):
    s = openmtb_study(tmp_path)
    (s / "units.jsonl").unlink()
    res = run("status", "--study", s, code=None)
    assert f"{s / 'units.jsonl'}: file not found" in res.output


def test_gold_export_over_a_units_folder_writes_nothing(tmp_path):
    s = openmtb_study(tmp_path)
    (s / "units.jsonl").unlink()
    (s / "units.jsonl").mkdir()
    before = study_bytes(s)
    line = one_error(run("gold", "export", "--study", s, "--force", code=None))
    assert f"{s / 'units.jsonl'}: a folder, where the study's items file should be" in line
    assert "no release written" in line
    assert study_bytes(s) == before and not (s / "gold").exists()
