# One entry point per job. Each target builds its own virtual environment.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: venv test lint demo bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed

test: venv
	$(PY) -m pytest -q

# Static checks of the package; the rule set and mypy options are in pyproject.toml.
lint: venv
	$(VENV)/bin/ruff check scrapy_urlunify
	$(VENV)/bin/mypy

# The demo crawl: a local demo site crawled by plain Scrapy and by Scrapy with the add-on,
# side by side (also written to demo-report.html).
demo: venv
	$(PY) -m scrapy_urlunify.demo

bench: venv
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .ruff_cache
