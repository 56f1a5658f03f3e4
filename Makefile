# One entry point per job. Each target builds its own virtual environment.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: venv test lint demo docs bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed

test: venv
	$(PY) -m pytest -q

# Static checks of the package, and the formatting of every Python file of the repository; the
# rule set and mypy options are in pyproject.toml.
lint: venv
	$(VENV)/bin/ruff check scrapy_urlunify
	$(VENV)/bin/ruff format --check --quiet .
	$(VENV)/bin/mypy

# The demo crawl: a local demo site crawled by plain Scrapy and by Scrapy with the add-on,
# side by side (also written to demo-report.html). It needs only the package's own dependencies
# (a venv made by `make test` already has them); -qq: pip's warnings would bury the demo's output.
$(VENV)/.runtime-installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq --upgrade pip
	$(PY) -m pip install -qq -e .
	touch $@

demo: $(VENV)/.runtime-installed
	$(PY) -m scrapy_urlunify.demo

# The documentation site (docs/conf.py), warnings as errors, into docs/_build/html. Silent when
# it succeeds (CI builds it after the tests, whose summary stays the last lines of its log).
$(VENV)/.docs-installed: $(VENV)/.installed
	@$(PY) -m pip install -qq -e '.[docs]'
	@touch $@

docs: $(VENV)/.docs-installed
	@$(PY) -m sphinx -W --keep-going -n -q -b html docs docs/_build/html

bench: venv
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
