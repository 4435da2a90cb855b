"""One word per concept in parameter names (issue 20; docs "style" 9): a round number is
``round_number`` -- never ``rnd``, ``number``, ``round`` or ``round_`` -- and a study is typed
``Study``, never ``Any``.  A ``Round`` object may be called ``rnd``; the check reads the
annotation, so it looks at parameters annotated ``int`` / ``int | None``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OTHER_NAMES = {"rnd", "number", "round", "round_"}


def modules() -> list[Path]:
    skip = {"tests", "benchmarks", "build", "docs"}
    return [
        p
        for p in sorted(ROOT.rglob("*.py"))
        if p.relative_to(ROOT).parts[0] not in skip
        and not p.relative_to(ROOT).parts[0].startswith(".")
        and "egg-info" not in p.relative_to(ROOT).parts[0]
    ]


def misnamed(source: str) -> list[str]:
    """``line name`` of every round-number parameter not called ``round_number`` and every
    ``study`` parameter typed ``Any``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = node.args
        for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
            ann = ast.unparse(arg.annotation).replace(" ", "") if arg.annotation is not None else ""
            if arg.arg in OTHER_NAMES and ann in ("int", "int|None", "Optional[int]"):
                out.append(f"{node.lineno} {node.name}({arg.arg}: {ann})")
            if arg.arg == "study" and ann in ("Any", "Any|None"):
                out.append(f"{node.lineno} {node.name}(study: {ann})")
    return out


def test_the_check_finds_another_name():
    src = "def f(study: Any, rnd: int, r: Round):\n    pass\ndef g(number: int | None = None, rnd: Round = None):\n    pass\n"
    assert misnamed(src) == ["1 f(study: Any)", "1 f(rnd: int)", "3 g(number: int|None)"]


def test_a_round_is_round_number_and_a_study_a_study():
    bad = {}
    for p in modules():
        rel = p.relative_to(ROOT).as_posix()
        found = misnamed(p.read_text(encoding="utf-8"))
        if found:
            bad[rel] = found
    assert not bad, bad
