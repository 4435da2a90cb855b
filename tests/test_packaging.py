"""A plain (non-editable) install carries every subpackage and every file the code reads.

The suite runs on an editable install, where a subpackage missing from the wheel goes unseen (a
hand-written package list once left out ``goldboard.workflows``). This builds the wheel the way
``pip install .`` does and compares it with the tree. ``.ci/wheel-check`` (``make wheel-check``,
run by CI) goes further: it installs the wheel into a fresh venv and runs the study flow.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOT_SHIPPED = {"tests", "benchmarks", "docs", "build"}
#: files the code reads at run time (not .py): they must be in the wheel
DATA_GLOBS = ["label_configs/builtin/*.toml", "exports/templates/*", "cases/example_data/*", "py.typed"]


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    # build from a copy of the files git would commit: a build/ folder left in the checkout by an
    # earlier build holds stale copies of packages, which setuptools would put in the wheel anyway
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for rel in filter(None, listed):
        if (ROOT / rel).is_file() and not rel.startswith(("tests/", "benchmarks/")):
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, src / rel)
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (whl,) = out.glob("goldboard-*.whl")
    return set(zipfile.ZipFile(whl).namelist())


def _packages_in_tree() -> set[str]:  # every folder with an __init__.py, as the hook counts them
    found = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel = Path(dirpath).relative_to(ROOT)
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and not (rel == Path(".") and d in NOT_SHIPPED)]
        if "__init__.py" in filenames:
            found.add(("goldboard" / rel).as_posix().rstrip("/."))
    return found


def test_every_subpackage_is_in_the_wheel(wheel_names: set[str]) -> None:
    in_wheel = {os.path.dirname(n) for n in wheel_names if n.endswith("/__init__.py")}
    tree = _packages_in_tree()
    assert {"goldboard", "goldboard/workflows", "goldboard/cli"} <= tree
    assert tree - in_wheel == set()


def test_every_data_file_the_code_reads_is_in_the_wheel(wheel_names: set[str]) -> None:
    wanted = {f"goldboard/{p.relative_to(ROOT).as_posix()}" for g in DATA_GLOBS for p in ROOT.glob(g)}
    assert any(w.endswith("openmtb_expert_annotations_50cases.csv") for w in wanted)
    assert "goldboard/py.typed" in wanted  # PEP 561 marker: type checkers read the API's hints
    assert wanted - wheel_names == set()


def test_tests_benchmarks_and_the_build_script_are_not_shipped(wheel_names: set[str]) -> None:
    assert not [n for n in wheel_names if n.startswith(("goldboard/tests/", "goldboard/benchmarks/"))]
    assert "goldboard/setup.py" not in wheel_names and "goldboard/cli/__init__.py" in wheel_names
