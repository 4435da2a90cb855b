"""A full disk: the write that finds no room is one ``Error:`` line naming the file, a non-zero exit, no
traceback (not even the one a half-written workbook's zip archive printed when it was collected), and
nothing partial left: a report and its CSV supplement replace the old ones together or not at all.

The full disk is simulated: every file goldboard opens for writing under one folder raises ENOSPC on
its first write (:func:`full_disk`); and, where the machine lets the tests mount one (root), on a real
64 KiB tmpfs."""

from __future__ import annotations

import errno
import gc
import os
import subprocess
import sys

import pytest
from builders import one_error, readme_study, study_files
from conftest import run_cli as run

from goldboard import fileio


class _NoRoom:
    """A file object whose writes find the disk full (everything else: the real file's)."""

    def __init__(self, fh):
        self._fh = fh

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


@pytest.fixture()
def full_disk(monkeypatch):
    """``full_disk(folder)``: from now on, files :func:`goldboard.fileio.atomic_write` opens under
    ``folder`` raise ENOSPC when written to (``only``: just those whose name starts so)."""
    real = os.fdopen

    def make(folder, only=""):
        prefix = os.path.join(os.path.realpath(folder), only)

        def fdopen(fd, *args, **kwargs):
            fh = real(fd, *args, **kwargs)
            where = os.readlink(f"/proc/self/fd/{fd}") if os.path.exists(f"/proc/self/fd/{fd}") else ""
            return _NoRoom(fh) if where.startswith(prefix) and where != prefix else fh

        monkeypatch.setattr(fileio.os, "fdopen", fdopen)

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd to tell which file a descriptor is")
    return make


@pytest.fixture()
def unraisable(monkeypatch):
    """Exceptions Python could only print ("Exception ignored in ..."), e.g. from a ``__del__``."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u))
    return seen


def _no_temp_files(folder):
    return [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def test_report_on_a_full_disk_leaves_the_old_report_without_a_new_supplement(tmp_path, full_disk):
    s = readme_study(tmp_path)
    out = tmp_path / "out"
    run("report", "--study", s, "-o", out / "report.html", "--no-supplement")
    before = study_files(out)
    full_disk(out)
    line = one_error(run("report", "--study", s, "-o", out / "report.html", code=None))
    assert "No space left on device" in line and f"{out}{os.sep}" in line and "nothing replaced" in line
    assert study_files(out) == before  # the old report, and no supplement beside it
    assert not (out / "supplement").exists() and not _no_temp_files(out)


def test_report_that_finds_no_room_for_its_html_keeps_the_old_supplement(tmp_path, full_disk):
    """The new supplement (Wald intervals) is written, the HTML then finds no room: neither replaces the old."""
    s = readme_study(tmp_path)
    out = tmp_path / "out"
    run("report", "--study", s, "-o", out / "report.html")
    before = study_files(out)
    full_disk(out, only=".report.html.")  # the report's own temp file finds no room; the CSVs would
    line = one_error(run("report", "--study", s, "-o", out / "report.html", "--ci", "wald", code=None))
    assert f"{out / 'report.html'}: cannot write it: No space left on device" in line
    assert study_files(out) == before and not _no_temp_files(out)
    run("report", "--study", s, "-o", tmp_path / "wald" / "report.html", "--ci", "wald")  # the oracle can fail:
    assert (
        study_files(tmp_path / "wald")["supplement/01_safety_label_agreement.csv"]
        != before["supplement/01_safety_label_agreement.csv"]
    )  # the Wald supplement differs from the one kept


def test_review_sheet_on_a_full_disk_is_one_line_without_a_traceback(tmp_path, full_disk, unraisable):
    s = readme_study(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    full_disk(out)
    res = run("adjudicate", "sheet", "--study", s, "-o", out / "review.xlsx", code=None)
    gc.collect()  # a zip archive left open by the failed save printed its traceback when collected
    line = one_error(res)
    assert line == (
        f"Error: {out / 'review.xlsx'}: cannot write it: No space left on device (nothing replaced; free some "
        "space and run again)"
    )
    assert not unraisable, [u.exc_value for u in unraisable]
    assert list(out.iterdir()) == []


def test_gold_release_on_a_full_disk_names_the_file(tmp_path, full_disk):
    s = readme_study(tmp_path, gold=False)
    full_disk(s / "gold")
    line = one_error(run("gold", "export", "--study", s, "--format", "xlsx", code=None))
    assert f"{s / 'gold'}{os.sep}" in line and "No space left on device" in line
    assert not [p for p in (s / "gold").iterdir() if not p.name.endswith(".lock")]


def _tmpfs(folder, size="64k"):
    """Mount a tmpfs of ``size`` at ``folder`` (root only); ``False`` when the machine will not."""
    folder.mkdir()
    if os.geteuid() != 0:
        return False
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True)
    return res.returncode == 0


def test_report_on_a_real_full_tmpfs(tmp_path):
    s = readme_study(tmp_path)
    out = tmp_path / "tiny"
    if not _tmpfs(out, "200k"):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        run("report", "--study", s, "-o", out / "report.html", "--no-supplement")
        (out / "fill").write_bytes(b"\0" * (os.statvfs(out).f_bavail * os.statvfs(out).f_frsize - 16384))
        before = study_files(out)
        line = one_error(run("report", "--study", s, "-o", out / "report.html", code=None))
        assert "No space left on device" in line and f"{out}{os.sep}" in line
        assert study_files(out) == before and not (out / "supplement").exists() and not _no_temp_files(out)
    finally:
        subprocess.run(["umount", str(out)], check=False)
