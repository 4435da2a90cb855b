# The set-up commands: `make demo`, `make test` (lint, then the suite) and `make lint`. Each creates .venv and
# installs what it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.goldboard-installed

.PHONY: demo test lint install clean wheel-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[server,test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/goldboard demo

# lint: ruff check (pyflakes, pycodestyle, isort, pyupgrade, bugbear) and the formatter's check
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: lint
	$(BIN)/python -m pytest

# a plain (non-editable) install from a wheel built from the sdist runs the study flow (.ci/wheel-check)
wheel-check:
	bash .ci/wheel-check $(PYTHON)

clean:
	rm -rf $(VENV) goldboard-demo
