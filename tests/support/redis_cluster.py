"""A real, throw-away Redis Cluster for tests: 3 masters and 3 replicas on loopback.

:class:`RedisCluster` starts six ``redis-server --cluster-enabled yes`` processes (each a
:class:`~redis_server.RedisServer` in its own temporary directory, without persistence), joins
them with ``redis-cli --cluster create ... --cluster-replicas 1`` and waits until every node
says ``cluster_state:ok`` and every replica is in sync, so a master SIGKILLed by a test is
replaced by its replica (``cluster-node-timeout`` 1000 ms: the replica takes over about two
seconds after the kill). The cluster is started once per session (``redis_cluster_session``,
about two seconds); the ``redis_cluster`` fixture hands it to a test empty (:meth:`RedisCluster.flush`)
and whole: a node the test killed is started again after it, and rejoins as a replica
(:meth:`RedisCluster.heal`).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from redis_server import RedisServer, require_redis_server

__all__ = ["NODE_TIMEOUT_MS", "RedisCluster", "redis_cluster", "redis_cluster_session"]

#: how long a master may be silent before its replica takes over (ms)
NODE_TIMEOUT_MS = 1000
START_TIMEOUT = 30.0


def _free_pair() -> int:
    """A port p such that p and p + 10000 (the cluster bus) are both free now."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 >= 65536:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port pair for a cluster node")


class RedisCluster:
    """Six ``redis-server``s in cluster mode: three masters, one replica each."""

    def __init__(self, executable: str, size: int = 6, replicas: int = 1) -> None:
        self.executable = executable
        self.nodes: list[RedisServer] = []
        self.size = size
        #: replicas per master (the benchmark runs 3 masters alone: ``size=3, replicas=0``)
        self.replicas = replicas

    @property
    def ports(self) -> list[int]:
        return [n.port for n in self.nodes if n.port is not None]

    @property
    def url(self) -> str:
        """The store location naming every node (``redis+cluster://h:p,h:p,...``)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    @property
    def seed_url(self) -> str:
        """A plain ``redis://`` URL of one node: what redis-py's ``RedisCluster.from_url`` takes."""
        return f"redis://127.0.0.1:{self.ports[0]}"

    def client(self, **kwargs: Any):  # -> redis.cluster.RedisCluster
        from redis.cluster import ClusterNode
        from redis.cluster import RedisCluster as Client

        nodes = [
            ClusterNode("127.0.0.1", p)
            for n, p in zip(self.nodes, self.ports, strict=True)
            if n.running
        ]
        return Client(startup_nodes=nodes, socket_timeout=5, socket_connect_timeout=5, **kwargs)

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> RedisCluster:
        for _ in range(self.size):
            node = RedisServer(self.executable, extra_args=self._args())
            node.port = _free_pair()
            node.start()
            self.nodes.append(node)
        subprocess.run(
            [
                "redis-cli",
                "--cluster",
                "create",
                *(f"127.0.0.1:{p}" for p in self.ports),
                "--cluster-replicas",
                str(self.replicas),
                "--cluster-yes",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=START_TIMEOUT,
        )
        self.wait_healthy()
        return self

    def _args(self) -> tuple[str, ...]:
        return (
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(NODE_TIMEOUT_MS),
            # a replica syncs at once (Redis 7 waits 5 s for more replicas by default)
            "--repl-diskless-sync-delay",
            "0",
            # a replica takes over however long it was cut off
            "--cluster-replica-validity-factor",
            "0",
        )

    def info(self, node: RedisServer, section: str) -> dict[str, str]:
        text = self._cli(
            node,
            "INFO" if section != "cluster" else "CLUSTER",
            section if section != "cluster" else "INFO",
        )
        return dict(
            line.split(":", 1)
            for line in text.splitlines()
            if ":" in line and not line.startswith("#")
        )

    def _cli(self, node: RedisServer, *args: str) -> str:
        run = subprocess.run(
            ["redis-cli", "-p", str(node.port), *args], capture_output=True, text=True, timeout=10
        )
        return run.stdout.replace("\r", "")

    def masters(self) -> list[RedisServer]:
        """The running nodes that are masters now."""
        return [
            n
            for n in self.nodes
            if n.running and self.info(n, "replication").get("role") == "master"
        ]

    def wait_healthy(self, timeout: float = START_TIMEOUT) -> float:
        """Until every running node says ``cluster_state:ok``, three masters serve the slots and
        every replica is in sync with its master; seconds it took."""
        start = time.monotonic()
        while True:
            running = [n for n in self.nodes if n.running]
            states = [self.info(n, "cluster") for n in running]
            roles = [self.info(n, "replication") for n in running]
            masters = [r for r in roles if r.get("role") == "master"]
            synced = all(
                r.get("master_link_status") == "up" for r in roles if r.get("role") == "slave"
            )
            if (
                all(s.get("cluster_state") == "ok" for s in states)
                and len(masters) == 3
                and synced
                and all(
                    int(m.get("connected_slaves", 0)) >= (1 if len(running) == 6 else 0)
                    for m in masters
                )
            ):
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise RuntimeError(f"the cluster did not become healthy: {states} {roles}")
            time.sleep(0.05)

    def master_of(self, key: str) -> RedisServer:
        """The node serving ``key``'s slot now."""
        slot = int(self._cli(self.nodes[0], "CLUSTER", "KEYSLOT", key).strip())
        for node in self.masters():
            for line in self._cli(node, "CLUSTER", "NODES").splitlines():
                fields = line.split()
                if "myself" in fields[2]:
                    for span in fields[8:]:
                        low, _, high = span.partition("-")
                        if low.isdigit() and int(low) <= slot <= int(high or low):
                            return node
        raise RuntimeError(f"no master serves slot {slot}")

    def all_keys(self) -> list[bytes]:
        """Every key on every master (SCAN on each)."""
        import redis

        found: list[bytes] = []
        for node in self.masters():
            client = redis.Redis(host="127.0.0.1", port=node.port)
            try:
                found.extend(client.scan_iter(count=1000))
            finally:
                client.close()
        return found

    def flush(self) -> None:
        """Delete every key (FLUSHALL on each master)."""
        for node in self.masters():
            self._cli(node, "FLUSHALL")

    def heal(self) -> None:
        """Start again every node a test killed (it rejoins as a replica) and wait for health."""
        for node in self.nodes:
            if not node.running:
                node.start()
        self.wait_healthy()

    def close(self) -> None:
        for node in self.nodes:
            node.close()


@pytest.fixture(scope="session")
def redis_cluster_session() -> Iterator[RedisCluster]:
    """A started 3-master, 3-replica cluster for the whole session (``startup_seconds``: how
    long it took to start)."""
    executable = require_redis_server()
    if shutil.which("redis-cli") is None:
        pytest.skip("redis-cli not found: apt-get install redis-tools")
    cluster = RedisCluster(executable)
    try:
        start = time.monotonic()
        cluster.start()
        cluster.startup_seconds = time.monotonic() - start  # type: ignore[attr-defined]
        yield cluster
    finally:
        cluster.close()


@pytest.fixture
def redis_cluster(redis_cluster_session: RedisCluster) -> Iterator[RedisCluster]:
    """The session's cluster, empty and whole (a node a test killed is back as a replica after it)."""
    redis_cluster_session.heal()
    redis_cluster_session.flush()
    yield redis_cluster_session
    redis_cluster_session.heal()
