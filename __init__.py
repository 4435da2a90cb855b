"""goldboard: clinician label studies for medical-AI safety benchmarks.

Package layout (the repository root *is* the ``goldboard`` package):

- ``goldboard.label_configs`` — label schemas (data) and Label Studio XML generated from them
- ``goldboard.cases``         — cases, model outputs, ratings tables, loaders, synthetic cases
- ``goldboard.annotate``      — the embedded Label Studio server, push and pull
- ``goldboard.analysis``      — agreement statistics and model scoring (pure functions)
- ``goldboard.adjudicate``    — disagreement flags, decisions log, gold resolution
- ``goldboard.exports``       — spreadsheets, gold releases, reports (file writers)
- ``goldboard.cli``           — the thin ``goldboard`` click layer
"""

__version__ = "0.1.0"
