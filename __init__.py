"""goldboard: clinician label studies for medical-AI safety benchmarks.

Package layout (the repository root *is* the ``goldboard`` package), in layers: an
import only points down (``tests/test_layers.py`` checks every import), and no function is
over 80 lines of code without a reason in its docstring (``tests/test_function_size.py``).

- L0 ``goldboard.errors``, ``goldboard.text``, ``goldboard.fileio`` — errors (naming library
  parameters; the CLI maps them to flags); the text rules
  (cell text, natural sort, formula guard, Markdown/XML escaping, UTC time); file helpers
- L1 ``goldboard.label_configs`` — label schemas (data) and Label Studio XML generated from them
- L2 ``goldboard.cases``, ``goldboard.study`` — cases, model outputs, the items pushed, the ratings table
  (``cases.ratings``: columns, readers, ``RatingGrid``), synthetic cases; the ``Study`` workspace
- L3 ``goldboard.analysis``, ``goldboard.adjudicate`` — agreement, scoring, flags, decisions,
  gold resolution: DataFrames/Schema/paths in, dicts/DataFrames out; never a ``Study``
- L4 ``goldboard.annotate``, ``goldboard.exports`` — the Label Studio adapter (server, push,
  pull); workbook, gold releases, report rendering
- L5 ``goldboard.workflows`` — study-level orchestration combining L3 and L4
- L6 ``goldboard.cli``, ``goldboard.demo`` — the thin ``goldboard`` click layer and the demo
"""

__version__ = "0.1.0"
