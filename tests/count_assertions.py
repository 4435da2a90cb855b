"""Count what the suite checks, to show a move of tests between files lost nothing (issue 31).

Run from the repository root (or anywhere: the folder is this file's)::

    python tests/count_assertions.py                 # totals over tests/*.py
    python tests/count_assertions.py --json F.json   # also every test's own counts, to compare later
    python tests/count_assertions.py --compare F.json  # totals now against F.json, and every test
                                                       # whose counts dropped or that is gone

Counted by reading each file's syntax tree (nothing is imported or run):

- ``assert`` statements;
- ``pytest.raises`` / ``pytest.warns`` uses (a ``with`` block or a call);
- test functions: ``def test_*`` at module level or in a ``Test*`` class.

Each count is given for the whole files and for the test functions' own bodies (``in tests``): the
rest is in helpers and fixtures, which a move may rightly merge (one shared builder instead of five
copies checks the same in each test that calls it, but is counted once).

A test is known by its name and, in a class, the class's name (not by its file: moving a test to
another file keeps it); the counts of a test are the asserts and raises/warns in its own body.
Tests of one name in several files are added up.  Not a test (no ``test_`` prefix): pytest never
collects it.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CHECKERS = {"raises", "warns"}


def _is_checker(node: ast.AST) -> bool:
    """``pytest.raises(...)`` / ``pytest.warns(...)`` (or a bare ``raises(...)`` imported from pytest)."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr in CHECKERS and isinstance(f.value, ast.Name) and f.value.id == "pytest"
    return isinstance(f, ast.Name) and f.id in CHECKERS


def _counts(tree: ast.AST) -> tuple[int, int]:
    asserts = sum(isinstance(n, ast.Assert) for n in ast.walk(tree))
    checkers = sum(_is_checker(n) for n in ast.walk(tree))
    return asserts, checkers


def _tests(tree: ast.Module):
    """(qualified name, node) of every test function of a module."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node.name, node
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith("test"):
                    yield f"{node.name}.{sub.name}", sub


def survey(folder: Path = TESTS) -> dict:
    """Totals over ``folder/*.py`` and every test's own (asserts, raises/warns)."""
    totals = Counter()
    per_test: dict[str, list[int]] = {}  # name -> [functions, asserts, raises/warns]
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        asserts, checkers = _counts(tree)
        totals["asserts"] += asserts
        totals["raises_warns"] += checkers
        totals["files"] += 1
        for name, node in _tests(tree):
            totals["tests"] += 1
            a, c = _counts(node)
            totals["asserts_in_tests"] += a
            totals["raises_warns_in_tests"] += c
            got = per_test.setdefault(name, [0, 0, 0])  # one name in two files: added up
            got[0], got[1], got[2] = got[0] + 1, got[1] + a, got[2] + c
    return {"totals": dict(totals), "tests": per_test}


def _compare(now: dict, before: dict) -> int:
    bad = 0
    for key in ("tests", "asserts_in_tests", "raises_warns_in_tests", "asserts", "raises_warns"):
        b, n = before["totals"].get(key, 0), now["totals"].get(key, 0)
        helpers = key in ("asserts", "raises_warns")  # helpers merged: may drop, said, not failed
        mark = "" if n >= b else ("   (fewer: helpers merged)" if helpers else "   <-- dropped")
        bad += n < b and not helpers
        print(f"{key:22} before {b:6}  now {n:6}{mark}")
    for name, counts in before["tests"].items():
        got = now["tests"].get(name)
        if got is None:
            print(f"gone: {name}")
            bad += 1
        elif any(g < c for g, c in zip(got, counts)):
            print(f"fewer checks: {name} {counts} -> {got}")
            bad += 1
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write totals and every test's counts to this file")
    ap.add_argument("--compare", type=Path, help="compare with a file --json wrote; exit 1 on any drop")
    args = ap.parse_args(argv)
    now = survey()
    t = now["totals"]
    print(
        f"{t['files']} files, {t['tests']} test functions, {t['asserts']} assert statements "
        f"({t['asserts_in_tests']} in tests), {t['raises_warns']} pytest.raises/warns ({t['raises_warns_in_tests']} in tests)"
    )
    if args.json:
        args.json.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.compare:
        return _compare(now, json.loads(args.compare.read_text(encoding="utf-8")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
