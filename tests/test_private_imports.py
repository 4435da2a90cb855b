"""A module does not import another module's ``_private`` names (``from goldboard.x import _name``):
a name used across modules is public and named for what it is.  The imports left are listed
in :data:`ALLOWED` with their reason; a new one fails here (rename the name, or say why)."""

from __future__ import annotations

import ast

from test_layers import MODULES, ROOT, _module_name

#: (importing file, imported module, name): the private names tests reach by that name on purpose
ALLOWED = {
    # tests build server accounts with ``srv._new_user`` (goldboard.annotate.server's namespace)
    ("annotate/server.py", "goldboard.annotate.server_accounts", "_new_user"),
    # tests read a schema's fields as validation does with ``core._Fields.of``
    ("cases/intake/columns.py", "goldboard.cases.intake.core", "_Fields"),
}
#: the count when this test was written (37 before the shared names were made public)
MAX_PRIVATE_IMPORTS = len(ALLOWED)


def private_imports(paths=MODULES, root=ROOT) -> list[tuple[str, str, str]]:
    """``(file, module, name)`` of every ``from goldboard.<module> import _name`` (relative imports
    resolved) of a name defined in another module of the package."""
    out = []
    for path in paths:
        me = _module_name(path, root)
        package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                parts = package.split(".")
                mod = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("goldboard") or mod == me:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    out.append((path.relative_to(root).as_posix(), mod, alias.name))
    return out


def test_the_scan_sees_absolute_and_relative_private_imports(tmp_path):
    pkg = tmp_path / "cases"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def _x(): pass\nfrom goldboard.cases.b import _own_b\n")
    (pkg / "b.py").write_text("from .a import _x, public\nfrom goldboard.text import __version__\n")
    paths = sorted(pkg.glob("*.py"))
    assert private_imports(paths, tmp_path) == [
        ("cases/a.py", "goldboard.cases.b", "_own_b"),
        ("cases/b.py", "goldboard.cases.a", "_x"),
    ]


def test_no_new_cross_module_private_import():
    found = private_imports()
    new = sorted(set(found) - ALLOWED)
    assert not new, "import a public name instead (rename it where it is defined): " + "; ".join(map(str, new))
    assert len(found) <= MAX_PRIVATE_IMPORTS, found
