"""Shared pytest configuration."""

from __future__ import annotations

import pytest


# --- pytest-twisted: run tests on the asyncio reactor -------------------------
# Scrapy 2.13+ defaults to TWISTED_REACTOR = AsyncioSelectorReactor and refuses
# to run on another installed reactor, while pytest-twisted installs its
# "default" reactor unless given --reactor.  This hook runs before
# pytest-twisted's own pytest_configure (tryfirst) and turns "default" into
# "asyncio", so a bare `pytest` works; `--reactor=qt5reactor` etc. still win.
@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "reactor", None) == "default":
        config.option.reactor = "asyncio"


# --- a real redis-server for the tests that need one (see tests/support/redis_server.py) ---------------
from redis_cluster import redis_cluster, redis_cluster_session  # noqa: E402,F401
from redis_server import redis_server, redis_server_factory  # noqa: E402,F401
