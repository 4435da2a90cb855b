"""The layer order (README "Layout"): an import only points down.

Every module of the package is parsed with ``ast``; every goldboard import in it
(function-local ones included) must name a module in the same or a lower layer,
and ``analysis``/``adjudicate`` never import ``study`` (they take DataFrames, a
Schema and paths, never a Study).
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: top-level module or package of goldboard -> layer
LAYERS = {
    "__init__": 0,
    "errors": 0,
    "text": 0,
    "fileio": 0,
    "label_configs": 1,
    "cases": 2,
    "study": 2,
    "analysis": 3,
    "adjudicate": 3,
    "annotate": 4,
    "exports": 4,
    "workflows": 5,
    "cli": 6,
    "demo": 6,
}
#: packages that take DataFrames / Schema / paths and never a Study
NO_STUDY = ("analysis", "adjudicate")


def _modules() -> list[Path]:
    skip = {"tests", "benchmarks", "build", "docs"}
    found = []
    # os.walk, pruned: ROOT.rglob would list all of .venv (tens of thousands of files) before filtering
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in skip]
        found += [Path(folder, f) for f in files if f.endswith(".py")]
    return sorted(p for p in found if p != ROOT / "setup.py")  # the build script, not shipped (test_packaging.py)


def _top(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) > 1 else path.stem


def goldboard_imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """``(line, top-level goldboard module)`` of every import in the file, wherever it
    stands (module top, function body, ``if TYPE_CHECKING``)."""
    package = ["goldboard", *path.relative_to(root).parts[:-1]]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against the module's package
                base = package[: len(package) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from goldboard import x``: x is a module, or a name of the package root
            names = (
                [mod]
                if mod != "goldboard"
                else [f"goldboard.{a.name}" if a.name in LAYERS else mod for a in node.names]
            )
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "goldboard":
                out.append((node.lineno, parts[1] if len(parts) > 1 else "__init__"))
    return out


MODULES = _modules()


def test_every_module_has_a_layer():
    unknown = sorted({_top(p) for p in MODULES} - set(LAYERS))
    assert not unknown, f"give these a layer in LAYERS (and README Layout): {unknown}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down(path):
    me = _top(path)
    bad = []
    for line, target in goldboard_imports(path):
        if target not in LAYERS:
            bad.append(f"{path.name}:{line}: unknown goldboard module {target!r}")
        elif LAYERS[target] > LAYERS[me]:
            bad.append(f"{path.relative_to(ROOT)}:{line}: {me} (L{LAYERS[me]}) imports {target} (L{LAYERS[target]})")
        elif me in NO_STUDY and target == "study":
            bad.append(f"{path.relative_to(ROOT)}:{line}: {me} must not import study (take DataFrames, not a Study)")
    assert not bad, "\n".join(bad)


def test_the_checker_sees_local_and_relative_imports(tmp_path):
    # the checker itself must catch what it claims to catch
    probe = tmp_path / "analysis" / "x.py"
    probe.parent.mkdir()
    probe.write_text(
        "from goldboard import __version__, text\n"
        "def f():\n    from goldboard.cli import main\n    from ..study import Study\n    import goldboard.exports.gold\n"
    )
    assert [t for _, t in goldboard_imports(probe, tmp_path)] == ["__init__", "text", "cli", "study", "exports"]
