"""`Study` keeps the workspace's files and round records; its integrity checks, option checks and
message texts live in ``study_checks.py`` and ``study_options.py`` beside it.  The class is
measured with ``ast`` (first to last line, docstrings and blank lines included) and must stay
at most :data:`MAX_LINES` long, so a new check lands in its own module, not in the class."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 450


def class_lines(source: str, name: str) -> int:
    """The number of lines the top-level class ``name`` of ``source`` spans (decorators included)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return node.end_lineno - first + 1
    raise AssertionError(f"no class {name}")


def test_the_measure_counts_every_line_of_a_class():
    src = "import x\n\n\n@dataclass\nclass A:\n    '''doc\n\n    more'''\n\n    def f(self):\n        return 1\n\n\ny = 2\n"
    assert class_lines(src, "A") == 8


def test_study_class_is_at_most_450_lines():
    n = class_lines((ROOT / "study.py").read_text(encoding="utf-8"), "Study")
    assert n <= MAX_LINES, (
        f"study.py: class Study is {n} lines (at most {MAX_LINES}): move checks, messages and option "
        "validators to study_checks.py / study_options.py"
    )


def test_the_checks_know_no_study_class():
    """study_checks.py reads a study through its ``StudyFiles`` protocol: importing ``study`` would
    be a cycle (study.py calls the checks)."""
    tree = ast.parse((ROOT / "study_checks.py").read_text(encoding="utf-8"))
    modules = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert "goldboard.study" not in modules
