# Works on a fresh clone where only Python 3.10+ and pip exist.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,plot,docs]"
	@echo "writing mklearn's bytecode, as a non-editable install does (a process that imports it, such as a joblib worker, then reads it)"
	$(BIN)/python -m compileall -q mklearn
	@echo "compiling mklearn's numba code for every solver and input kind (once; cached in __pycache__)"
	$(BIN)/python -m mklearn.cli.warm_up
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mklearn fit

lint: $(STAMP)
	$(BIN)/ruff check mklearn tests benchmarks docs examples
	$(BIN)/lint-imports

test: lint
	$(BIN)/python -m pytest -q

test-fast: lint
	$(BIN)/python -m pytest -q -m "not slow"

# The site: warnings are errors (a malformed docstring fails), the gallery's examples run,
# then the built pages are checked (links, figures, one API page per public name).
docs: $(STAMP)
	rm -rf docs/_build docs/auto_examples docs/api/generated docs/sg_execution_times.rst
	MPLBACKEND=Agg $(BIN)/python -m sphinx -b html -W --keep-going docs docs/_build/html
	$(BIN)/python -m pytest -q -p no:cacheprovider docs/test_site.py

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_small_sets.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info docs/_build docs/auto_examples docs/api/generated
