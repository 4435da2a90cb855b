"""Write ``docs/quickstart.ipynb``, the quickstart notebook, with the outputs its cells print today.

The notebook's code cells are run here in one namespace, in-process (no Jupyter kernel: starting one
costs seconds and needs ipykernel; the cells are plain Python), each cell's last expression shown as
its ``text/plain`` output, as IPython shows it with pandas' notebook defaults (80 columns, at most 20
shown). ``tests/test_quickstart.py`` runs the notebook's cells the same way and fails when an output
differs from the one stored (the notebook is stale: run ``python docs/gen_quickstart.py``), so every
output the notebook shows is what the code prints today; with the docs extra installed (nbclient,
ipykernel) it also runs the notebook in a real Jupyter kernel and compares.

    python docs/gen_quickstart.py
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import sys
from pathlib import Path

NOTEBOOK = Path(__file__).resolve().parent / "quickstart.ipynb"

#: (kind, source) of each cell, in order
CELLS: list[tuple[str, str]] = [
    (
        "markdown",
        "# goldboard quickstart\n\n"
        "Agreement with 95% CIs on OpenMTB-Audit's public two-oncologist table (50 NSCLC cases, published "
        "Cohen's kappa 0.600), which ships inside the package. Install goldboard (`pip install goldboard`) "
        "and run the cells in order; the [Python API](python-api.md) page lists every function.",
    ),
    ("markdown", "## Five lines: kappa and alpha with CIs, as a DataFrame"),
    (
        "code",
        "import goldboard as gb\n\n"
        'raters = {"onc_a": "oncologist_a_label", "onc_b": "oncologist_b_label"}\n'
        'ratings = gb.read_table(gb.example_path("openmtb"), raters=raters, item_col="case_id", field="safety_label")\n'
        'result = gb.agreement(ratings, schema="mtb_unsafe")\n'
        'result.to_frame()[["statistic", "estimate", "se", "ci_low", "ci_high", "method"]].round(3)',
    ),
    (
        "markdown",
        "The ratings are a tidy table, one row per item x rater (`_where` names the file and line each came from):",
    ),
    ("code", 'ratings[["item_id", "rater", "field", "value"]].head(4)'),
    (
        "markdown",
        "## A study workspace\n\n"
        "`example_study` is `goldboard study init` and `goldboard pull --from-table` in one call; "
        "`open_study` opens any study folder. On a study, `agreement` reads the latest complete round, "
        "as `goldboard agree --study` does; `n_resamples` gives percentile bootstrap CIs.",
    ),
    (
        "code",
        "import tempfile\n\n"
        'study = gb.example_study(tempfile.mkdtemp() + "/openmtb")\n'
        "boot = gb.agreement(study, n_resamples=2000, seed=1)\n"
        'boot.to_frame()[["statistic", "estimate", "ci_low", "ci_high", "method"]].round(3)',
    ),
    ("markdown", "## The disagreements, as a meeting agenda (`goldboard flag`)"),
    (
        "code",
        'agenda = gb.flags(study)\nagenda[["item_id", "value_onc_a", "value_onc_b", "boundaries"]].head(5)',
    ),
    ("code", 'agenda["boundaries"].value_counts()'),
    (
        "markdown",
        "Next: `goldboard adjudicate sheet --study ...` for the review meeting, `gold export`, then "
        "`gb.gold(study)` reads the release; `gb.judge_test` runs the alt-test of an LLM judge.",
    ),
]


def _display(value) -> str:
    """What IPython shows for a cell's last expression, as text."""
    return repr(value)


def run_cells(sources: list[str]) -> list[str | None]:
    """Run code cells in one namespace; each cell's shown text (its prints, then its last
    expression's repr; ``None`` when it shows nothing)."""
    import pandas as pd

    namespace: dict = {"__name__": "__main__"}
    shown: list[str | None] = []
    # pandas' defaults outside a terminal, as a Jupyter kernel has them
    with pd.option_context("display.width", 80, "display.max_columns", 20, "display.max_colwidth", 50):
        for src in sources:
            tree = ast.parse(src)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(tree, "<cell>", "exec"), namespace)
                value = eval(compile(ast.Expression(last.value), "<cell>", "eval"), namespace) if last else None
            text = out.getvalue() + (_display(value) if value is not None else "")
            shown.append(text or None)
    return shown


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def build() -> dict:
    """The notebook (nbformat 4) with every code cell's output."""
    codes = [src for kind, src in CELLS if kind == "code"]
    outputs = iter(run_cells(codes))
    cells, n = [], 0
    for kind, src in CELLS:
        cell = {"cell_type": kind, "id": f"cell-{len(cells) + 1}", "metadata": {}, "source": _lines(src)}
        if kind == "code":
            n += 1
            text = next(outputs)
            cell["execution_count"] = n
            cell["outputs"] = (
                [
                    {
                        "output_type": "execute_result",
                        "execution_count": n,
                        "metadata": {},
                        "data": {"text/plain": _lines(text)},
                    }
                ]
                if text
                else []
            )
        cells.append(cell)
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def main() -> int:
    NOTEBOOK.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {NOTEBOOK}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
