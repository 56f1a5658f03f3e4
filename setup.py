"""The optional C twin of two hot paths (scrapy_urlunify/_speedups.c); everything else is in
pyproject.toml. Without a C compiler the build skips it and the package runs on its Python code."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("scrapy_urlunify._speedups", ["scrapy_urlunify/_speedups.c"], optional=True)])
