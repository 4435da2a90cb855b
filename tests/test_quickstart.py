"""The quickstart notebook (``docs/quickstart.ipynb``) runs, and shows what its cells print today.

Its code cells are executed in-process, in one namespace, by ``docs/gen_quickstart.py``'s
:func:`run_cells` (no Jupyter kernel: a kernel start costs seconds and needs ipykernel, and the cells
are plain Python); each cell's shown text must equal the ``text/plain`` output stored in the notebook.
A stale notebook is rewritten with ``python docs/gen_quickstart.py``. With the docs extra installed
(nbclient, nbformat, ipykernel) the notebook also runs in a real Jupyter kernel, as a new user runs
it, and shows the same outputs.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
NOTEBOOK = DOCS / "quickstart.ipynb"

spec = importlib.util.spec_from_file_location("gen_quickstart", DOCS / "gen_quickstart.py")
gen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen)


def _code_cells() -> list[dict]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _stored(cell: dict) -> str | None:
    texts = ["".join(o["data"]["text/plain"]) for o in cell["outputs"] if "text/plain" in o.get("data", {})]
    return "".join(texts) or None


def test_the_notebook_runs_and_shows_what_its_cells_print(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cells = _code_cells()
    shown = gen.run_cells(["".join(c["source"]) for c in cells])
    for n, (cell, got) in enumerate(zip(cells, shown), 1):
        assert got == _stored(cell), f"cell {n} shows another output today: run `python docs/gen_quickstart.py`"


def test_the_notebook_is_what_the_generator_writes():
    """The stored notebook's cells are the generator's (an edit by hand would go unchecked otherwise)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    assert [(c["cell_type"], "".join(c["source"])) for c in cells] == gen.CELLS


def test_five_lines_give_kappa_and_alpha_with_cis_as_a_dataframe():
    """The issue's measure: in a fresh interpreter, the first code cell (five lines) is the frame."""
    first = "".join(_code_cells()[0]["source"])
    assert len([ln for ln in first.splitlines() if ln.strip()]) == 5
    out = _stored(_code_cells()[0])
    assert "Cohen's kappa" in out and "Krippendorff's alpha" in out and "ci_low" in out


@pytest.mark.slow
def test_the_notebook_runs_in_a_jupyter_kernel(tmp_path):
    """A fresh kernel runs every cell with no error and shows the stored outputs (about 10 s)."""
    nbformat = pytest.importorskip("nbformat", reason="the docs extra (nbformat) is not installed")
    nbclient = pytest.importorskip("nbclient", reason="the docs extra (nbclient) is not installed")
    pytest.importorskip("ipykernel", reason="the docs extra (ipykernel) is not installed")
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    stored = [_stored(c) for c in _code_cells()]
    nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    ran = [c for c in nb.cells if c.cell_type == "code"]
    assert not [o for c in ran for o in c.outputs if o.get("output_type") == "error"]
    assert [_stored(c) for c in ran] == stored


def test_a_changed_output_is_caught(monkeypatch):
    cells = _code_cells()
    src = ["".join(cells[0]["source"]).replace('schema="mtb_unsafe"', 'schema="mtb_unsafe", levels=["ordinal"]')]
    assert gen.run_cells(src)[0] != _stored(cells[0])


def test_the_readme_shows_the_notebooks_first_cell():
    """The README's "In a notebook" lines are the notebook's first cell, so they run as shown."""
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("## In a notebook", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert block.strip() == "".join(_code_cells()[0]["source"]).strip()
