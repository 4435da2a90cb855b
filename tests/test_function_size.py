"""A module fits in a head: no function over ``LIMIT`` lines of code without a reason.

Lines of code are the function's lines that are not blank, not a comment and not its
docstring (nested functions count toward the function that holds them).  A function may
be longer, up to ``HARD_LIMIT``, when its docstring has a paragraph starting
``Why this is long:`` that says why it reads better whole.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from test_layers import ROOT, _modules

LIMIT = 80
HARD_LIMIT = 120
REASON = "Why this is long:"


def code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """Lines of ``node`` that are code: not blank, not a comment, not the docstring."""
    skip: set[int] = set()
    first = node.body[0]
    if ast.get_docstring(node) is not None and isinstance(first, ast.Expr):
        skip = set(range(first.lineno, first.end_lineno + 1))
    return sum(
        1
        for i in range(node.lineno, node.end_lineno + 1)
        if i not in skip and lines[i - 1].strip() and not lines[i - 1].strip().startswith("#")
    )


def long_functions(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line name (N lines)`` of each function over the limit without a reason."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []
    for node in ast.walk(ast.parse(text, str(path))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        n = code_lines(node, lines)
        reason = REASON in (ast.get_docstring(node) or "")
        if n > HARD_LIMIT or (n > LIMIT and not reason):
            out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({n} lines of code)")
    return out


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_functions_fit_in_a_head(path):
    too_long = long_functions(path)
    assert not too_long, (
        f"split these into named steps, or (up to {HARD_LIMIT} lines) say '{REASON} ...' in the docstring: "
        + "; ".join(too_long)
    )


def test_the_counter_skips_docstrings_comments_and_blanks():
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    src = f'def f():\n    """Doc.\n\n    More doc.\n    """\n    # a comment\n\n{body}\n'
    tree = ast.parse(src)
    assert code_lines(tree.body[0], src.splitlines()) == LIMIT + 1  # the def line and the body


def test_the_checker_flags_a_long_function_and_accepts_a_reason(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT + 5))
    bare = tmp_path / "bare.py"
    bare.write_text(f"def f():\n    'Doc.'\n{body}\n")
    reasoned = tmp_path / "reasoned.py"
    reasoned.write_text(f"def f():\n    '''Doc.\n\n    {REASON} one pass.\n    '''\n{body}\n")
    huge = tmp_path / "huge.py"
    huge.write_text(f"def f():\n    '''{REASON} no.'''\n" + "\n".join(f"    x{i} = {i}" for i in range(HARD_LIMIT)))
    assert long_functions(bare, tmp_path) == [f"bare.py:1 f ({LIMIT + 6} lines of code)"]
    assert long_functions(reasoned, tmp_path) == []
    assert long_functions(huge, tmp_path) == [f"huge.py:1 f ({HARD_LIMIT + 1} lines of code)"]
