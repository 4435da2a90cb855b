"""The layer order (README "Layout"): an import only points down.

Every module of the package is parsed with ``ast``; every goldboard import in it
(function-local ones included) must name a module in the same or a lower layer,
and ``analysis``/``adjudicate`` never import ``study`` (they take DataFrames, a
Schema and paths, never a Study).  Inside ``adjudicate`` the decision log is below the
rules, gold and flags, and the review-sheet reader above them; inside ``exports`` the
xlsx layout kit is below the review-sheet writer (:data:`WITHIN`).  No
module of the package imports itself round a cycle, however indirect.
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
    "fileio_xlsx": 0,
    "label_configs": 1,
    "cases": 2,
    "study": 2,
    "study_checks": 2,  # the integrity checks of a study's records (below study.py: knows no Study)
    "study_options": 2,  # the checks of a study's options (study init / set / add-rater / round, --round)
    "analysis": 3,
    "adjudicate": 3,
    "annotate": 4,
    "exports": 4,
    "workflows": 5,
    "cli": 6,
    "demo": 6,
    "api": 6,  # the Python API (``import goldboard as gb``): a thin layer over workflows and analysis
}
#: the one import that points up: the package root hands on the Python API's names (``goldboard.api``,
#: L6) from its module ``__getattr__``, on first use, so ``import goldboard`` stays cheap; an import of
#: the API anywhere else in ``__init__.py`` (or at its top level) is still refused
LAZY_FACADE = ("__init__", "api", ("__getattr__",))
#: packages that take DataFrames / Schema / paths and never a Study
NO_STUDY = ("analysis", "adjudicate")
#: the order of the modules inside a package (an import between two of them points down or sideways)
WITHIN = {
    "adjudicate": {
        "__init__": 0,
        "decisions": 0,  # the log: knows no sheet, no gold, no rules
        "rules": 1,
        "gold": 1,
        "flags": 1,
        "review_sheet": 2,  # reads a sheet, checks the gold it would make, writes the log
    },
    "exports": {
        **dict.fromkeys(["__init__", "sanitize", "pdf", "plots", "report_extras"], 0),
        # the generic xlsx layout kit: knows no review sheet
        **dict.fromkeys(["xlsx_layout", "gold", "calibration", "report"], 1),
        "workbook": 2,  # the review-meeting workbook, laid out with xlsx_layout
        "round_use": 2,  # what was built on a round: decisions and the gold releases (reads gold's manifests)
    },
    "analysis": {
        **dict.fromkeys(
            [
                "__init__",
                "coefficients",
                "estimate",
                "resampling",
                "intervals",
                "coverage_record",
                "coverage",
                "statistics",
                "scoring_inputs",
                "scoring_settings",
                "agreement_inputs",
                "judge_agreement",  # the judge against the panel: balanced F1, the panel ratio
            ],
            0,
        ),
        **dict.fromkeys(["scoring_stats", "agreement", "calibration"], 1),
        **dict.fromkeys(["scoring_common", "retest", "planning", "agreement_render", "alttest", "report_tables"], 2),
        # one module per scorer, over what they share; scoring.py is their one interface
        **dict.fromkeys(["scoring_labels", "scoring_outputs", "scoring_options"], 3),
        "scoring": 4,
        "scoring_render": 5,
    },
}


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
    lazy = _lazy_facade_lines(path) if me == LAZY_FACADE[0] and path.parent == ROOT else set()
    for line, target in goldboard_imports(path):
        if target == LAZY_FACADE[1] and line in lazy:
            continue
        if target not in LAYERS:
            bad.append(f"{path.name}:{line}: unknown goldboard module {target!r}")
        elif LAYERS[target] > LAYERS[me]:
            bad.append(f"{path.relative_to(ROOT)}:{line}: {me} (L{LAYERS[me]}) imports {target} (L{LAYERS[target]})")
        elif me in NO_STUDY and target == "study":
            bad.append(f"{path.relative_to(ROOT)}:{line}: {me} must not import study (take DataFrames, not a Study)")
    assert not bad, "\n".join(bad)


def _lazy_facade_lines(path: Path) -> set[int]:
    """The lines of the imports inside the functions :data:`LAZY_FACADE` names (and under ``if
    TYPE_CHECKING:``, which never runs) of the package root."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = set()
    for node in tree.body:
        inside = (isinstance(node, ast.FunctionDef) and node.name in LAZY_FACADE[2]) or (
            isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        )
        if inside:
            lines |= {n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return lines


def test_the_root_reaches_the_api_only_lazily(tmp_path):
    """``__init__.py`` may name ``goldboard.api`` in its ``__getattr__`` only: the same import at the
    top of the file is an upward import (the checker is run on a copy that has one)."""
    root = ROOT / "__init__.py"
    lazy = _lazy_facade_lines(root)
    assert [t for n, t in goldboard_imports(root) if n in lazy].count("api") >= 1  # the facade is there
    probe = tmp_path / "__init__.py"
    probe.write_text(root.read_text(encoding="utf-8") + "\nfrom goldboard import api\n", encoding="utf-8")
    top = [n for n, t in goldboard_imports(probe, tmp_path) if t == "api" and n not in _lazy_facade_lines(probe)]
    assert top, "an import of the API at the top of __init__.py must be seen as pointing up"


def test_the_checker_sees_local_and_relative_imports(tmp_path):
    # the checker itself must catch what it claims to catch
    probe = tmp_path / "analysis" / "x.py"
    probe.parent.mkdir()
    probe.write_text(
        "from goldboard import __version__, text\n"
        "def f():\n    from goldboard.cli import main\n    from ..study import Study\n    import goldboard.exports.gold\n"
    )
    assert [t for _, t in goldboard_imports(probe, tmp_path)] == ["__init__", "text", "cli", "study", "exports"]


def test_every_module_of_an_ordered_package_has_a_place():
    unknown = sorted(
        str(p.relative_to(ROOT))
        for p in MODULES
        if _top(p) in WITHIN and p.parent != ROOT and p.stem not in WITHIN[_top(p)]
    )
    assert not unknown, f"give these a place in WITHIN (and README Layout): {unknown}"


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = ("goldboard", *path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_imports(path: Path, known: set[str], root: Path = ROOT) -> set[str]:
    """The goldboard modules (dotted names among ``known``) the file imports, wherever the
    import stands; ``from goldboard.x import y`` names ``goldboard.x.y`` when that is a module."""
    me = _module_name(path, root)
    package = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
    out = set()
    # the root's lazy hand-on of the API runs on first use of an API name, never at import: no edge
    lazy = _lazy_facade_lines(path) if path == root / "__init__.py" else set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if getattr(node, "lineno", None) in lazy:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.update(f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names)
    return {m for m in out if m in known and m != me}


def import_cycles(paths: list[Path], root: Path = ROOT) -> list[list[str]]:
    """Every set of modules that import each other round a cycle (strongly connected
    components of more than one module), each sorted."""
    names = {_module_name(p, root): p for p in paths}
    graph = {n: sorted(module_imports(p, set(names), root)) for n, p in names.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def visit(v: str) -> None:  # Tarjan; the package is a few hundred modules deep at most
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(cycles)


def test_no_import_cycle():
    cycles = import_cycles(MODULES)
    assert not cycles, "modules importing each other round a cycle: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_checker_sees_a_cycle_behind_a_function_local_import(tmp_path):
    # the shape adjudicate had: decisions -> (in a function) gold -> rules -> decisions
    pkg = tmp_path / "adjudicate"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "decisions.py").write_text("def f():\n    from goldboard.adjudicate.gold import g\n")
    (pkg / "gold.py").write_text("from goldboard.adjudicate import rules\n")
    (pkg / "rules.py").write_text("from .decisions import f\n")
    (pkg / "flags.py").write_text("from goldboard.adjudicate.rules import x\n")
    paths = sorted(pkg.glob("*.py"))
    assert import_cycles(paths, tmp_path) == [
        ["goldboard.adjudicate.decisions", "goldboard.adjudicate.gold", "goldboard.adjudicate.rules"]
    ]
    (pkg / "decisions.py").write_text("X = 1\n")
    assert import_cycles(paths, tmp_path) == []


@pytest.mark.parametrize("package", sorted(WITHIN))
def test_imports_inside_a_package_point_down(package):
    order = WITHIN[package]
    bad = []
    for path in (p for p in MODULES if _top(p) == package and p.stem in order):
        for target in module_imports(path, {f"goldboard.{package}.{m}" for m in order}):
            sub = target.rsplit(".", 1)[1]
            if order[sub] > order[path.stem]:
                bad.append(f"{path.relative_to(ROOT)}: {path.stem} imports {sub} (above it in WITHIN)")
    assert not bad, "\n".join(bad)


#: modules split out of a larger one that must stay below it (the part moved out knows nothing of the rest)
#: (module -> the modules, with what is below them, it must not import)
LEAVES = {
    "annotate/server_accounts.py": ("goldboard.annotate",),  # credentials.toml; knows no server process
    "exports/xlsx_layout.py": ("goldboard.exports.workbook",),  # the xlsx kit; knows no review sheet
    # one module per synthetic benchmark family, over what they share; synth.py their entry points
    "cases/synth_common.py": (
        "goldboard.cases.synth",
        "goldboard.cases.synth_medfail",
        "goldboard.cases.synth_radsafe",
    ),
    "cases/synth_medfail.py": ("goldboard.cases.synth", "goldboard.cases.synth_radsafe"),
    "cases/synth_radsafe.py": ("goldboard.cases.synth", "goldboard.cases.synth_medfail"),
}


@pytest.mark.parametrize("rel", sorted(LEAVES))
def test_split_out_modules_import_nothing_above_them(rel):
    path = ROOT / rel
    assert path.exists(), rel
    known = {_module_name(p) for p in MODULES}
    above = sorted(m for m in module_imports(path, known) if any(m == x or m.startswith(x + ".") for x in LEAVES[rel]))
    assert not above, f"{rel} imports {above}"


#: the review sheet's writer lays out what the workflow computed (workflows.adjudication.review_content)
WRITERS_COMPUTE_NOTHING = {
    "exports/workbook.py": ("flag_disagreements", "summarize_flags", "resolve_gold", "agreement", "current_ratings"),
}


def imported_names(path: Path) -> set[str]:
    """Every name the file imports from a goldboard module (``from goldboard.x import name``)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("goldboard")):
            out.update(a.name for a in node.names)
    return out


@pytest.mark.parametrize("rel", sorted(WRITERS_COMPUTE_NOTHING))
def test_the_review_sheet_writer_computes_nothing(rel):
    used = sorted(imported_names(ROOT / rel) & set(WRITERS_COMPUTE_NOTHING[rel]))
    assert not used, f"{rel} computes with {used}: compute in the workflow, pass the result in"


#: the rooms of the ratings intake (issue 20): the pure core below every source, each source on its own
INTAKE = ROOT / "cases" / "intake"
#: what the intake core may import: no source, no file I/O, no study (tested without a server or a file)
CORE_MAY_IMPORT = {"goldboard.cases.ratings", "goldboard.label_configs.schema", "goldboard.text"}


def _dotted_imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("goldboard"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("goldboard"):
            out.add(node.module)
    return out


def test_the_intake_core_is_pure_and_below_every_source():
    core = _dotted_imports(INTAKE / "core.py")
    assert core <= CORE_MAY_IMPORT, f"cases/intake/core.py imports {sorted(core - CORE_MAY_IMPORT)}"
    for path in sorted(INTAKE.rglob("*.py")):
        bad = {m for m in _dotted_imports(path) if m.split(".")[1] in ("study", "annotate", "workflows", "cli")}
        assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}: the intake is below study and every pull"


def test_no_source_knows_another():
    sources = sorted(p for p in (INTAKE / "sources").glob("*.py") if p.stem != "__init__")
    assert len(sources) >= 2
    names = {f"goldboard.cases.intake.sources.{p.stem}" for p in sources}
    for path in sources:
        others = {m for m in _dotted_imports(path) if m in names or m == "goldboard.cases.intake.sources"}
        assert not others, f"{path.relative_to(ROOT)} imports another source: {sorted(others)}"


ROUND_FILES = {"ratings_path", "invalid_path", "pull_report_path"}
WRITES = {"write_csv_atomic", "write_text_atomic", "atomic_write", "write_jsonl_atomic"}


def round_writers(paths: list[Path], root: Path = ROOT) -> list[str]:
    """``file:function`` of every function that hands a round's intake file (``ratings_path``,
    ``invalid_path``, ``pull_report_path`` -- directly, or through a name assigned from one) to an
    atomic writer."""

    def mentions(node: ast.AST, tainted: set[str]) -> bool:
        return any(
            (isinstance(n, ast.Attribute) and n.attr in ROUND_FILES) or (isinstance(n, ast.Name) and n.id in tainted)
            for n in ast.walk(node)
        )

    out = []
    for path in paths:
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            tainted: set[str] = set()
            for node in ast.walk(fn):
                if isinstance(node, ast.Assign) and mentions(node.value, tainted):
                    tainted |= {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            for node in ast.walk(fn):
                if not isinstance(node, ast.Call):
                    continue
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                if name in WRITES and any(mentions(a, tainted) for a in [*node.args, *node.keywords]):
                    out.append(f"{path.relative_to(root)}:{fn.name}")
                    break
    return sorted(out)


def test_study_is_the_one_writer_of_a_round(tmp_path):
    assert round_writers(MODULES) == ["study.py:write_round"]
    probe = tmp_path / "x.py"  # the checker sees a second writer
    probe.write_text(
        "def f(study, df):\n    write_csv_atomic(df, study.ratings_path(1))\n"
        "def g(study, df):\n    paths = {'r': study.invalid_path(1)}\n    write_csv_atomic(df, paths['r'])\n"
        "def h(study, df):\n    src = str(study.ratings_path(1))\n    write_csv_atomic(df, 'flags.csv')\n"
    )
    assert round_writers([probe], tmp_path) == ["x.py:f", "x.py:g"]


def test_only_the_round_intake_writes_a_round():
    """One policy puts a source's read into a round (workflows/intake.py): no other module calls
    ``Study.write_round`` (a reader that wrote its round itself would skip the intake's checks,
    e.g. the refusal of a re-pull that changes what was adjudicated)."""
    callers = sorted(
        str(p.relative_to(ROOT))
        for p in MODULES
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write_round"
    )
    assert callers == ["workflows/intake.py"], callers


#: the pulls that read a source and hand it to the round intake (issue 31): readers, not a policy
READERS = {"workflows/tables.py": "pull_table", "workflows/files.py": "pull_file"}
READER_LIMIT = 30


@pytest.mark.parametrize("rel", sorted(READERS))
def test_the_table_and_file_pulls_are_readers_of_the_one_intake(rel):
    """``pull_table`` and ``pull_file`` read their source and hand a ``SourceRead`` to the round
    intake (``RoundIntake``): at most 30 code lines each (counted as test_function_size counts),
    so the merge policy cannot grow back into them."""
    from test_function_size import code_lines

    text = (ROOT / rel).read_text(encoding="utf-8")
    fn = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == READERS[rel])
    n = code_lines(fn, text.splitlines())
    assert n <= READER_LIMIT, f"{rel}:{fn.lineno} {fn.name}: {n} code lines (at most {READER_LIMIT})"
    calls = {c.func.attr for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)}
    assert "take" in calls, f"{fn.name} does not hand its read to RoundIntake.take"
