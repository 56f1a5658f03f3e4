# One entry point per job. Each target builds its own virtual environment.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: venv test demo bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

venv: $(VENV)/.installed

test: venv
	$(PY) -m pytest -q

demo: venv
	$(PY) -m scrapy_urlunify.cli explain 'http://www.Site.com:80/a/../b/index.html;jsessionid=0123456789ABCDEF0123456789ABCDEF?utm_source=x#top'
	$(PY) -m scrapy_urlunify.cli same 'http://www.Site.com:80/a/../b/index.html;jsessionid=0123456789ABCDEF#top' 'https://site.com/b/'

bench: venv
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
