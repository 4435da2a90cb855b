"""The worked examples in the package's docstrings (``>>>``) run, one test per module.

This replaces pytest's ``--doctest-modules``, which imported every module of the package a
second time under the checkout folder's name (``h19.text`` beside ``goldboard.text``) just to
look for examples, most of the suite's collection time. Here a module is imported, under its
own name, only when its source holds an example; :data:`MODULES` is found by reading the files.
"""

from __future__ import annotations

import doctest
import importlib

import pytest
from test_layers import ROOT, _modules

#: modules that Label Studio's own Django process loads (they import Label Studio's packages)
NOT_IMPORTABLE = {"annotate/_lssettings.py", "annotate/_lsguard.py", "annotate/_lswait.py"}


def _module_name(path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["goldboard", *parts])


MODULES = sorted(
    _module_name(p)
    for p in _modules()
    if str(p.relative_to(ROOT)) not in NOT_IMPORTABLE and ">>>" in p.read_text(encoding="utf-8")
)


def test_the_examples_are_found():
    """The file scan finds the modules with examples (a scan that found none would pass everything)."""
    assert {"goldboard.text", "goldboard.errors", "goldboard.analysis.estimate"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    tests = [t for t in doctest.DocTestFinder().find(module, name) if t.examples]
    assert tests, f"{name}: '>>>' in the source but no docstring example found"
    runner = doctest.DocTestRunner()
    out: list[str] = []
    for t in tests:
        runner.run(t, out=out.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(out)
