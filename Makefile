# The set-up commands: `make demo`, `make test` (lint, then the suite, as CI runs it), `make test-fast` (the
# developer's loop: no live Label Studio, no slow tests), `make lint`, `make docs` (the manual, warnings as
# errors) and `make docs-cli` (regenerates docs/cli.md from the commands). Each creates .venv and installs what
# it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.goldboard-installed
DOCS_STAMP = $(VENV)/.goldboard-docs-installed

.PHONY: demo test test-fast lint install clean wheel-check docs docs-cli

# Python and pytest cache compiled modules (and pytest its rewritten test modules) in __pycache__: an environment
# that turns that off makes every run compile the package and the suite again
unexport PYTHONDONTWRITEBYTECODE

# pip compiles every installed module one after the other (about half of its time); compileall -j 0 does the
# same on every core
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --no-compile -e '.[server,test]'
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib >/dev/null || true  # like pip: a file that does not compile stays source
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/goldboard demo

# lint: ruff check (pyflakes, pycodestyle, isort, pyupgrade, bugbear) and the formatter's check
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# the suite runs in pytest-xdist workers, one a core (-n auto); `make test-fast WORKERS=0` runs it in one process
# (no workers: a failing test's output in order, pdb works)
WORKERS ?= auto

test: lint $(DOCS_STAMP)
	$(BIN)/python -m pytest -n $(WORKERS) --dist loadscope

# the developer's loop: every test but the live Label Studio ones (-m live) and the slow ones (-m slow)
test-fast: $(DOCS_STAMP)
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist loadscope -m "not live and not slow"

# the manual: MkDocs + Material (the `docs` extra); --strict turns every warning, a broken internal link or
# anchor included, into a failed build. NO_MKDOCS_2_WARNING: Material's end-of-life notice is not a warning
$(DOCS_STAMP): $(STAMP)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[docs]'
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# docs/cli.md is generated from the click commands; tests/test_docs.py fails while it is stale
docs-cli: $(STAMP)
	$(BIN)/python docs/gen_cli.py

# a plain (non-editable) install from a wheel built from the sdist runs the study flow (.ci/wheel-check)
wheel-check:
	bash .ci/wheel-check $(PYTHON)

clean:
	rm -rf $(VENV) goldboard-demo site
