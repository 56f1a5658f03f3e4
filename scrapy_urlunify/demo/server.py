"""Serve a :class:`~scrapy_urlunify.demo.site.DemoSite` over real HTTP(S) on loopback.

One Twisted process, two ephemeral ports on 127.0.0.1:

* the **HTTP port** is an origin server *and* a forward proxy.  A request in
  absolute form (``GET http://www.site.test/x HTTP/1.1``) is answered straight
  from the demo site - no upstream exists, the "proxy" *is* every demo host.
  ``CONNECT site.test:443`` is answered ``200 Connection established``; then
  the same connection switches to TLS (server side, ``transport.startTLS``)
  and carries ordinary HTTP requests that are served as ``https://`` URLs.
  A client therefore needs no DNS, no /etc/hosts and no root: it only sets
  the proxy (for Scrapy: ``request.meta["proxy"]``, see :mod:`.proxy`);
* the **HTTPS port** serves the same site directly over TLS (Host header),
  for clients that cannot use a proxy.

Every request is recorded in :attr:`DemoServer.log` with the URL exactly as
the client asked for it, so tests can assert what was fetched.  Run
standalone with ``python -m scrapy_urlunify.demo.server --size N``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twisted.internet import defer
from twisted.internet.protocol import Factory, Protocol
from twisted.web import http, resource, server

from scrapy_urlunify.demo.hosts import site_of_host
from scrapy_urlunify.demo.render import SOFT_404, render_not_found, render_redirect
from scrapy_urlunify.demo.sessions import SessionMinter
from scrapy_urlunify.demo.site import DemoSite
from scrapy_urlunify.demo.tls import tls_options, write_self_signed
from scrapy_urlunify.demo.urls import parse_target

# Twisted declares its interfaces' methods without ``self``; without the zope plugin mypy
# misreads every call through them, so the reactor, ports and transports are typed ``Any`` here.

MAX_HEAD = 16 * 1024


@dataclass(frozen=True)
class RequestRecord:
    """One request the server answered.

    ``url`` is what the client asked for: the absolute URI for proxied plain
    http, ``https://`` + Host header + request target inside a CONNECT tunnel
    (an explicit ``:443`` in the crawler's URL is invisible on the wire there),
    or the bare ``host:port`` authority for the CONNECT itself.  ``via`` is
    ``proxy`` (absolute form or CONNECT), ``connect`` (inside a tunnel),
    ``direct`` or ``direct-tls``.  ``connection`` numbers the TCP connection.
    """

    method: str
    url: str
    status: int
    via: str
    page_id: str | None
    connection: int


class _DemoResource(resource.Resource):
    """The single leaf resource: figures out the full URL and lets the server answer."""

    isLeaf = True

    def __init__(self, demo: DemoServer) -> None:
        super().__init__()
        self.demo = demo

    def render(self, request: server.Request) -> bytes:
        return self.demo._answer(request)


class _DemoHTTPSite(server.Site):
    """twisted.web Site whose channels are driven by :class:`_FrontProtocol`; no access log."""

    # Plain HTTPChannel instead of Twisted's h2-capable wrapper: the wrapper
    # proxies attribute reads but not writes, and we tag channels with
    # demo_tunnel/demo_tls/demo_connection that the request must see.
    protocol = http.HTTPChannel  # type: ignore[assignment]

    def __init__(self, demo: DemoServer) -> None:
        super().__init__(_DemoResource(demo))
        self.demo = demo

    def log(self, request: http.Request) -> None:
        # Our own structured log (DemoServer.log) replaces the access log.
        pass


class _FrontProtocol(Protocol):
    """First protocol on the HTTP/proxy port.

    It sniffs the first request line.  For ``CONNECT`` it answers 200 itself,
    starts TLS on the same transport and then hands the decrypted stream to a
    fresh twisted.web ``HTTPChannel`` marked as a tunnel.  For anything else
    it hands the connection (and the bytes read so far) to an ``HTTPChannel``
    right away.  It stays the transport's protocol and forwards everything,
    so no Twisted internals have to be rewired.
    """

    transport: Any  # ITransport, set by makeConnection

    def __init__(self, demo: DemoServer, *, direct_tls: bool = False) -> None:
        self.demo = demo
        self.direct_tls = direct_tls
        self.buffer = b""
        self.inner: Any = None
        self.connection_id = 0

    def connectionMade(self) -> None:
        self.connection_id = next(self.demo._connection_ids)
        self.demo._transports.add(self.transport)
        if self.direct_tls:
            # The HTTPS port: TLS is already on, no proxying - plain HTTPS.
            self._hand_over(tunnel=None, data=b"", tls=True)

    def dataReceived(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.dataReceived(data)
            return
        self.buffer += data
        first, sep, _ = self.buffer.partition(b"\r\n")
        if not sep:
            if len(self.buffer) > MAX_HEAD:
                self.transport.loseConnection()
            return
        if not first.upper().startswith(b"CONNECT "):
            self._hand_over(tunnel=None, data=self.buffer)
            return
        _head, sep, rest = self.buffer.partition(b"\r\n\r\n")
        if not sep:
            if len(self.buffer) > MAX_HEAD:
                self.transport.loseConnection()
            return
        self._connect(first.split()[1].decode("latin-1") if len(first.split()) > 1 else "", rest)

    def _connect(self, authority: str, rest: bytes) -> None:
        host, _, port_text = authority.rpartition(":")
        port = int(port_text) if port_text.isdigit() else 0
        if site_of_host(host) is None or port != 443:
            # Unknown host (or a port the demo does not serve): a proxy says 502.
            self.demo._record("CONNECT", authority, 502, "proxy", None, self.connection_id)
            self.transport.write(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
            self.transport.loseConnection()
            return
        self.demo._record("CONNECT", authority, 200, "proxy", None, self.connection_id)
        # Plain bytes written before startTLS go out unencrypted and in order.
        self.transport.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.transport.startTLS(self.demo._tls_options)
        # A well-behaved client waits for the 200 before its ClientHello, so
        # ``rest`` is empty; anything else would be garbage for TLS anyway.
        self._hand_over(tunnel=(host.lower(), port), data=b"")
        if rest:
            self.transport.loseConnection()

    def _hand_over(self, tunnel: tuple[str, int] | None, data: bytes, tls: bool = False) -> None:
        assert self.demo._http_site is not None
        channel = self.demo._http_site.buildProtocol(self.transport.getPeer())
        channel.demo_tunnel = tunnel
        channel.demo_tls = tls or tunnel is not None
        channel.demo_connection = self.connection_id
        self.inner = channel
        self.buffer = b""
        channel.makeConnection(self.transport)
        if data:
            channel.dataReceived(data)

    def connectionLost(self, reason: Any = None) -> None:
        self.demo._transports.discard(self.transport)
        if self.inner is not None:
            self.inner.connectionLost(reason)


class _FrontFactory(Factory):
    """Builds :class:`_FrontProtocol` instances for one listening port."""

    noisy = False  # no "Starting factory" lines in the crawl log

    def __init__(self, demo: DemoServer, *, direct_tls: bool = False) -> None:
        self.demo = demo
        self.direct_tls = direct_tls

    def buildProtocol(self, addr: Any) -> _FrontProtocol:
        proto = _FrontProtocol(self.demo, direct_tls=self.direct_tls)
        proto.factory = self
        return proto


class DemoServer:
    """HTTP + HTTPS + forward-proxy server for a :class:`DemoSite`, on 127.0.0.1.

    ``start()`` must be called with the Twisted reactor (the one Scrapy uses)
    installed; it listens immediately on ephemeral ports unless ports are
    given.  ``stop()`` closes the ports and open connections.
    """

    def __init__(
        self,
        site: DemoSite,
        *,
        interface: str = "127.0.0.1",
        http_port: int = 0,
        https_port: int = 0,
        session_cap: int = 10,
    ) -> None:
        self.site = site
        self.interface = interface
        self.http_port = http_port
        self.https_port = https_port
        self.sessions = SessionMinter(site.seed, session_cap)
        self.log: list[RequestRecord] = []
        self._views = itertools.count(1)  # numbers the clock and token of each page served
        self.cert_path: Path | None = None
        self._cert_dir: Path | None = None
        self._ports: list[Any] = []  # IListeningPort
        self._transports: set[Any] = set()  # ITransport
        self._connection_ids = itertools.count(1)
        self._http_site: _DemoHTTPSite | None = None  # built in start(): it grabs the reactor
        self._tls_options: Any = None

    # -- lifecycle ----------------------------------------------------------
    def start(self) -> DemoServer:
        """Listen on the HTTP/proxy and HTTPS ports; returns ``self``."""
        from twisted.internet import reactor as installed

        reactor: Any = installed
        self._cert_dir = Path(tempfile.mkdtemp(prefix="urlunify-demo-"))
        self.cert_path, key_path = write_self_signed(self._cert_dir, self.site.hosts)
        self._tls_options = tls_options(self.cert_path.read_bytes(), key_path.read_bytes())
        self._http_site = _DemoHTTPSite(self)

        plain_port = reactor.listenTCP(
            self.http_port, _FrontFactory(self), interface=self.interface
        )
        tls_port = reactor.listenSSL(
            self.https_port,
            _FrontFactory(self, direct_tls=True),
            self._tls_options,
            interface=self.interface,
        )
        self._ports = [plain_port, tls_port]
        self.http_port = plain_port.getHost().port
        self.https_port = tls_port.getHost().port
        return self

    def stop(self) -> defer.Deferred[Any]:
        """Stop listening, drop open connections, delete the certificate."""
        waits = [defer.maybeDeferred(port.stopListening) for port in self._ports]
        self._ports = []
        for transport in list(self._transports):
            transport.abortConnection()
        self._transports.clear()
        if self._cert_dir is not None:
            shutil.rmtree(self._cert_dir, ignore_errors=True)
            self._cert_dir = None
        return defer.DeferredList(waits)

    @property
    def proxy_url(self) -> str:
        """``http://127.0.0.1:<http_port>`` - the value for ``meta["proxy"]``."""
        return f"http://{self.interface}:{self.http_port}"

    # -- introspection --------------------------------------------------------
    def page_fetches(self) -> Counter[str]:
        """How often each page id was served with status 200."""
        return Counter(r.page_id for r in self.log if r.page_id is not None and r.status == 200)

    def clear_log(self) -> None:
        self.log.clear()

    # -- request handling ----------------------------------------------------
    def _record(
        self, method: str, url: str, status: int, via: str, page_id: str | None, conn: int
    ) -> None:
        self.log.append(RequestRecord(method, url, status, via, page_id, conn))

    @staticmethod
    def _requested_url(request: server.Request) -> tuple[str, str]:
        """(full URL as asked, via) for a request on any of our channels."""
        channel = request.channel
        uri = request.uri.decode("latin-1")
        host = (request.getHeader("host") or "").strip()
        tunnel = getattr(channel, "demo_tunnel", None)
        if uri.lower().startswith(("http://", "https://")):
            via = "connect" if tunnel else "proxy"
            return uri, via
        if tunnel is not None:
            return f"https://{host or f'{tunnel[0]}:{tunnel[1]}'}{uri}", "connect"
        if getattr(channel, "demo_tls", False):
            return f"https://{host}{uri}", "direct-tls"
        return f"http://{host}{uri}", "direct"

    def _answer(self, request: server.Request) -> bytes:
        url, via = self._requested_url(request)
        method = request.method.decode("latin-1")
        conn = getattr(request.channel, "demo_connection", 0)
        if method not in ("GET", "HEAD"):
            return self._finish(request, method, url, via, conn, 405, b"", "text/plain", None)
        res = self.site.resolve(url)
        if not res.known_host:
            status = 502 if via == "proxy" else 404
            return self._finish(
                request, method, url, via, conn, status, render_not_found(url), None, None
            )
        if res.location is not None:
            request.setHeader("location", res.location)
            return self._finish(
                request,
                method,
                url,
                via,
                conn,
                res.status,
                render_redirect(res.location),
                None,
                None,
            )
        if res.page_id is not None:
            style = self.site.session_style(res.page_id)
            session = None
            if style is not None:
                target = parse_target(url)
                session = (target.sessions.get(style) if target else None) or self.sessions.mint(
                    style
                )
            body = self.site.render(res.page_id, session=session, view=next(self._views))
            return self._finish(
                request, method, url, via, conn, 200, body, res.content_type, res.page_id
            )
        if res.document_id is not None:
            body = self.site.render_document(res.document_id)
            return self._finish(request, method, url, via, conn, 200, body, res.content_type, None)
        if res.soft_404:
            return self._finish(
                request, method, url, via, conn, 200, SOFT_404, res.content_type, None
            )
        if res.text is not None:
            return self._finish(
                request, method, url, via, conn, 200, res.text, res.content_type, None
            )
        return self._finish(request, method, url, via, conn, 404, render_not_found(url), None, None)

    def _finish(
        self,
        request: server.Request,
        method: str,
        url: str,
        via: str,
        conn: int,
        status: int,
        body: bytes,
        content_type: str | None,
        page_id: str | None,
    ) -> bytes:
        request.setResponseCode(status)
        request.setHeader("content-type", content_type or "text/html; charset=utf-8")
        request.setHeader("cache-control", "no-store")
        self._record(method, url, status, via, page_id, conn)
        return body


def main(argv: list[str] | None = None) -> None:
    """Run the demo server until killed; print one JSON line with its addresses."""
    parser = argparse.ArgumentParser(
        prog="python -m scrapy_urlunify.demo.server", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--size", type=int, default=300, help="approximate number of distinct pages"
    )
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument(
        "--no-traps",
        action="store_true",
        help="leave out the traps for a URL learner (defaults spelled out, soft 404s ...)",
    )
    parser.add_argument("--http-port", type=int, default=0, help="HTTP/proxy port (0: ephemeral)")
    parser.add_argument(
        "--https-port", type=int, default=0, help="direct HTTPS port (0: ephemeral)"
    )
    args = parser.parse_args(argv)

    from twisted.internet import asyncioreactor

    asyncioreactor.install()
    from twisted.internet import reactor as installed

    reactor: Any = installed

    site = DemoSite(size=args.size, seed=args.seed, traps=not args.no_traps)
    demo = DemoServer(site, http_port=args.http_port, https_port=args.https_port).start()
    info = {
        "proxy_url": demo.proxy_url,
        "http_port": demo.http_port,
        "https_port": demo.https_port,
        "cert_path": str(demo.cert_path),
        "start_urls": list(site.start_urls),
        "pages": len(site.pages),
        "size": args.size,
        "seed": args.seed,
        "traps": site.traps,
    }
    print(json.dumps(info), flush=True)
    reactor.addSystemEventTrigger("before", "shutdown", demo.stop)
    reactor.run()
    sys.exit(0)


if __name__ == "__main__":
    main()
