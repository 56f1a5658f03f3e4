"""A real, throw-away ``redis-server`` for tests and benchmarks.

:class:`RedisServer` runs Debian's ``redis-server`` on a free loopback port in a temporary
directory, without persistence (``--save "" --appendonly no``), and can be stopped, killed
and restarted on the same port to simulate a lost server. The ``redis_server`` fixture yields
a started one; ``redis_server_factory`` starts more (a password, two at once).

When ``redis-server`` is not on PATH, tests skip with "redis-server not found: apt-get install
redis-server" -- except in CI (env ``CI`` set), where they FAIL: a CI job that silently skips
the Redis tests would pass without testing them.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = [
    "NOT_FOUND",
    "RedisServer",
    "find_redis_server",
    "redis_server",
    "redis_server_factory",
    "require_redis_server",
]

NOT_FOUND = "redis-server not found: apt-get install redis-server"
START_TIMEOUT = 10.0


def find_redis_server() -> str | None:
    """The path of ``redis-server`` on PATH, or None."""
    return shutil.which("redis-server")


def require_redis_server() -> str:
    """The path of ``redis-server``; otherwise skip the test, or fail it when ``CI`` is set."""
    path = find_redis_server()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{NOT_FOUND} (CI is set: Redis tests must run, not skip)", pytrace=False)
        pytest.skip(NOT_FOUND)
    return path


def free_port() -> int:
    """A loopback TCP port nobody listens on now (the server may still lose a race for it,
    which :meth:`RedisServer.start` handles by trying another)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1; ``url`` connects to database 0."""

    def __init__(
        self,
        executable: str | None = None,
        *,
        password: str | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.executable = executable or find_redis_server() or "redis-server"
        self.password = password
        self.extra_args = extra_args
        self.port: int | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="urlunify-redis-")
        self.dir = Path(self._dir.name)

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def client(self, **kwargs: object):  # -> redis.Redis (import kept lazy for collection)
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=5, socket_connect_timeout=5, **kwargs)

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> RedisServer:
        """Start on ``self.port`` (a free port the first time; the same one on a restart)."""
        fixed = self.port is not None
        for _ in range(1 if fixed else 5):
            port = self.port if fixed else free_port()
            if self._launch(port):
                self.port = port
                return self
        raise RuntimeError(
            f"redis-server did not start; see {self.dir / 'redis.log'}:\n{self._log_tail()}"
        )

    def _launch(self, port: int) -> bool:
        args = [
            self.executable,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.dir),
            "--logfile",
            str(self.dir / "redis.log"),
            "--daemonize",
            "no",
            *self.extra_args,
        ]
        if self.password:
            args += ["--requirepass", self.password]
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:  # e.g. lost the race for the port
                return False
            if self._pings(port):
                return True
            time.sleep(0.01)
        self.kill()
        return False

    def _pings(self, port: int) -> bool:
        # raw RESP, so the helper works before redis-py is even imported
        command = b"PING\r\n"
        if self.password:
            command = f"AUTH {self.password}\r\n".encode() + command
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(command)
                reply = b""
                while b"PONG" not in reply and len(reply) < 200:
                    chunk = s.recv(200)
                    if not chunk:
                        break
                    reply += chunk
                return b"+PONG" in reply
        except OSError:
            return False

    def stop(self) -> None:
        """Shut down cleanly (SIGTERM) and wait."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """Die at once (SIGKILL), as a crashed or unplugged server would."""
        self._end(signal.SIGKILL)

    def _end(self, sig: int) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self, down_for: float = 0.0) -> None:
        """Kill, stay down ``down_for`` seconds, start again on the same port: every client
        connection is lost (and, without persistence, the data too)."""
        self.kill()
        time.sleep(down_for)
        self.start()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def close(self) -> None:
        self.kill()
        self._dir.cleanup()

    def _log_tail(self) -> str:
        try:
            return "\n".join(
                (self.dir / "redis.log").read_text(errors="replace").splitlines()[-10:]
            )
        except OSError:
            return "(no log)"

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- pytest fixtures (import them into a test module to use them) -----------------------


@pytest.fixture
def redis_server_factory() -> Iterator:
    """``make(password=None, **kw) -> RedisServer``: started servers, all stopped at the end."""
    executable = require_redis_server()
    servers: list[RedisServer] = []

    def make(**kwargs: object) -> RedisServer:
        server = RedisServer(executable, **kwargs)  # type: ignore[arg-type]
        servers.append(server)
        return server.start()

    yield make
    for server in servers:
        server.close()


@pytest.fixture
def redis_server(redis_server_factory) -> RedisServer:
    """A started ``redis-server`` of its own for one test."""
    return redis_server_factory()
