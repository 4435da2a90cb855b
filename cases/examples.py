"""Example data that ships with the package (``cases/example_data/``), for the README's worked examples.

A wheel install has no ``tests/`` folder, so the files a new user is told to run are package data,
reached through :mod:`importlib.resources` and copied out by ``goldboard cases example``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from goldboard.errors import GoldboardError
from goldboard.fileio import atomic_write

#: name -> (file under cases/example_data/, one line saying what it is)
EXAMPLES: dict[str, tuple[str, str]] = {
    "openmtb": (
        "openmtb_expert_annotations_50cases.csv",
        "OpenMTB-Audit's public two-oncologist table: 50 NSCLC cases, published Cohen's kappa 0.600",
    ),
}


def example_path(name: str) -> Path:
    """The shipped file of example ``name`` (a real path: the package is installed unzipped)."""
    if name not in EXAMPLES:
        raise GoldboardError(f"no example {name!r}; examples: {', '.join(sorted(EXAMPLES))}")
    return Path(str(resources.files("goldboard.cases") / "example_data" / EXAMPLES[name][0]))


def write_example(name: str, out: str | Path) -> Path:
    """Copy example ``name`` to ``out`` byte for byte (atomically); an existing file is never replaced."""
    src = example_path(name)
    out = Path(out)
    if out.exists():
        raise GoldboardError(f"{out}: already exists; choose another path (an example never overwrites a file)")
    with atomic_write(out, mode="wb", encoding=None) as fh:
        fh.write(src.read_bytes())
    return out
