"""Our own kept-alive HTTP/1.1 connections to the hub and its CDN (`CONNECTIONS`), opened ahead of the
requests that will want them, the headers that send the user's token (`hub_headers`), and whether the hub
may be asked at all (`offline`).

Imported before the app's modules when a source names a hub dataset (`hub_ahead`, from `cli`): a far
host costs a new connection two round trips (TCP, then TLS) before its first request, which are paid
while the modules import; the first requests themselves go then too (`ahead`). Knows nothing of parquet
(`hub_reads`) or of datasets (`hub`).
"""

from __future__ import annotations

import contextlib
import functools
import http.client
import importlib
import os
import platform
import ssl
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from typing import cast
from urllib.parse import urljoin, urlsplit

from .. import __version__
from . import hub_hosts
from .threads import detached

READ_TIMEOUT = 5.0
"""A request gives up after this long without a byte (a range read asks once more after a short pause)."""
IDLE_KEPT = 128
"""Idle connections kept for each host: twice the hub's reader threads (`hub_reads.READERS`)."""
CDN_CONNECTIONS = 64
"""Connections opened to the host the hub first redirects a read to (its CDN), where every file's reads go
next: one for each reader thread (`hub_reads.READERS`), so that a first screen's column chunks, asked for
at once, find one each (a request that finds none free opens one, which on a far host costs two round
trips more: with 32, the chunks of a 4,000-row dataset, its footers all in at once, took three round
trips, not one)."""
HUB_CONNECTIONS = 10
"""Connections opened to the hub ahead of a first open's file reads: each file's first read asks the hub
(a dataset has a few files; the first reads of more open their own). The listing and the card, asked for
at the same moment (`ahead`), go on connections of their own."""

ANONYMOUS = {"user-agent": f"tracetui/{__version__}; python/{platform.python_version()}"}
"""The headers of a request sent before huggingface_hub's are built (they import most of it: ~0.15 s)."""


def offline() -> bool:
    """HF_HUB_OFFLINE (huggingface_hub's switch) or HF_DATASETS_OFFLINE (datasets'), as `datasets` reads them."""
    from huggingface_hub import constants

    return constants.HF_HUB_OFFLINE or os.environ.get("HF_DATASETS_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")


def connect_to_hub() -> None:
    """Open HUB_CONNECTIONS to the hub (HF_ENDPOINT), and CDN_CONNECTIONS to each host it sent reads to
    last time (`hub_hosts`), unless offline: a hub dataset's first open, which reads every file next,
    then finds them ready."""
    from huggingface_hub import constants

    if not offline():
        CONNECTIONS.warm(constants.ENDPOINT, HUB_CONNECTIONS)
        for host in hub_hosts.remembered(constants.ENDPOINT):
            CONNECTIONS.warm(host, CDN_CONNECTIONS)


def tls_context() -> ssl.SSLContext:
    """The certificates huggingface_hub's own client trusts: the default context of its HTTP library
    (httpx2 or httpx, as the installed huggingface_hub uses; SSL_CERT_FILE / SSL_CERT_DIR honoured),
    else the system's."""
    for library in ("httpx2", "httpx"):
        with contextlib.suppress(ImportError, AttributeError):
            return cast(ssl.SSLContext, importlib.import_module(library).create_ssl_context())
    return ssl.create_default_context()


_HEADERS: tuple[float, dict[str, str]] = (float("-inf"), {})
HEADERS_FOR = 10.0
"""Seconds the hub headers (token, user agent) are reused: building them reads the token file."""
_BUILDING: Future[dict[str, str]] | None = None
_HEADERS_LOCK = threading.Lock()


def hub_headers() -> dict[str, str]:
    """The headers of a request as the user (their token): made in the last HEADERS_FOR seconds, else built
    (waiting for the build under way)."""
    fresh = fresh_headers()
    return fresh if fresh is not None else headers_built().result()


def fresh_headers() -> dict[str, str] | None:
    """The headers made in the last HEADERS_FOR seconds, else None; no lock: every range read asks."""
    made, headers = _HEADERS
    return headers if time.monotonic() - made <= HEADERS_FOR else None


def headers_built() -> Future[dict[str, str]]:
    """huggingface_hub's headers (its token, OIDC and OAuth refresh included), built on a thread of their
    own, once for every thread that asks meanwhile (`build_hf_headers` imports most of huggingface_hub:
    ~0.15 s on the way to the first screen)."""
    global _BUILDING
    with _HEADERS_LOCK:
        fresh = fresh_headers()
        if fresh is not None:  # made while this thread waited for the lock
            ready: Future[dict[str, str]] = Future()
            ready.set_result(fresh)
            return ready
        if _BUILDING is None:
            _BUILDING = detached(_build_headers, "tracetui-headers")
        return _BUILDING


def _build_headers() -> dict[str, str]:
    global _HEADERS, _BUILDING
    try:
        from huggingface_hub.utils import build_hf_headers

        headers = build_hf_headers()
        with _HEADERS_LOCK:
            _HEADERS = time.monotonic(), headers
        return headers
    finally:
        with _HEADERS_LOCK:
            _BUILDING = None


@functools.cache
def proxied() -> bool:
    """A proxy is set: requests go through huggingface_hub's client, which knows proxies."""
    import urllib.request

    return any(key in urllib.request.getproxies_environment() for key in ("http", "https", "all"))


class HTTPStatus(Exception):
    """The hub answered a range read with this status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Connections:
    """Kept-alive HTTP/1.1 connections by origin, shared by the reader threads. A range read costs
    ~0.15 ms of CPU here; httpx's pool (one lock that 64 threads queue on) spent 0.5-2 ms on each, and a
    400,000-row dataset's first screen is some 5,000 of them."""

    REDIRECTS = 5

    def __init__(self) -> None:
        self._idle: dict[tuple[str, str, int | None], list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()
        self._tls: ssl.SSLContext | None = None
        self._moved: dict[str, str] = {}
        """Where a URL's last answer came from after redirects: a file's signed link on the hub's CDN."""
        self._warmed: set[tuple[str, str, int | None]] = set()
        """The hosts `warm` has opened connections to."""
        self._redirected: set[tuple[tuple[str, str, int | None], tuple[str, str, int | None]]] = set()
        """(from, to) of the redirects to another host seen: each remembered once (`hub_hosts`)."""
        self._ahead: dict[str, Future[tuple[int, Mapping[str, str], bytes]]] = {}
        """Answers asked for ahead of the code that wants them (`ahead`), by URL."""

    def get(self, url: str, headers: dict[str, str]) -> bytes:
        """The body of a GET that succeeded; HTTPStatus for any other answer."""
        status, _, body = self.answer(url, headers)
        if status >= 300:
            raise HTTPStatus(status, f"{status} from the hub for {url}")
        return body

    def answer(
        self, url: str, headers: dict[str, str], timeout: float = READ_TIMEOUT
    ) -> tuple[int, Mapping[str, str], bytes]:
        """(status, headers (named in lower case), body) of a GET, redirects followed.

        The hub answers a file's resolve with a redirect to a signed link on its CDN: later reads of the
        file go straight there (one round trip, not two; and the hub's limit on resolves, a few thousand
        in 5 minutes, counts files, not reads) until the link fails (expired: 403), when the hub is
        asked again."""
        moved = self._moved.get(url)
        if moved is not None:
            status, answered, body, _ = self._follow(moved, _sent_to(url, moved, headers), timeout)
            if status < 300:
                return status, answered, body
            self._moved.pop(url, None)
        status, answered, body, final = self._follow(url, headers, timeout)
        if final != url and status < 300:
            self._moved[url] = final
        return status, answered, body

    def ahead(self, url: str, headers: dict[str, str], timeout: float) -> None:
        """GET `url` now, on a thread of its own, for the code that asks for it later (`taken`): a hub
        dataset's first requests, sent while the app's modules import. Not around a proxy (`proxied`)."""
        if proxied():
            return
        with self._lock:
            if url not in self._ahead:
                self._ahead[url] = detached(lambda: self.answer(url, headers, timeout), "tracetui-ahead")

    def taken(self, url: str) -> Future[tuple[int, Mapping[str, str], bytes]] | None:
        """The answer to `url` asked for ahead (`ahead`), once: None when it was not."""
        with self._lock:
            return self._ahead.pop(url, None)

    def _follow(self, url: str, headers: dict[str, str], timeout: float) -> tuple[int, Mapping[str, str], bytes, str]:
        """(status, headers, body, the URL that answered) of a GET, redirects followed; the first redirect
        to a host opens CDN_CONNECTIONS to it (`warm`) and is remembered for the next process
        (`hub_hosts`)."""
        for _ in range(self.REDIRECTS + 1):
            parts = urlsplit(url)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            status, location, answered, body = self._request(_origin(url), path, headers, timeout)
            if location is None:
                return status, answered, body, url
            target = urljoin(url, location)
            if _origin(target) != _origin(url):
                self.warm(target, CDN_CONNECTIONS)
                self._remember(url, target)
            headers, url = _sent_to(url, target, headers), target
        raise HTTPStatus(310, f"too many redirects from {url}")

    def warm(self, url: str, count: int) -> None:
        """Open `count` connections to `url`'s host (once for each host) on daemon threads, kept idle for
        the requests to come: a far host costs a new connection two round trips (TCP, then TLS) before
        its first request, which a request that finds one ready skips."""
        if proxied():  # requests go through huggingface_hub's client
            return
        origin = _origin(url)
        with self._lock:
            if origin in self._warmed:
                return
            self._warmed.add(origin)
        for _ in range(count):
            detached(lambda: self._connected(origin), "tracetui-connect")

    def _remember(self, url: str, target: str) -> None:
        pair = _origin(url), _origin(target)
        with self._lock:
            if pair in self._redirected:
                return
            self._redirected.add(pair)
        hub_hosts.remember(url, target)

    def _connected(self, origin: tuple[str, str, int | None]) -> None:
        connection = self._connect(origin, READ_TIMEOUT)
        try:
            connection.connect()
        except OSError:  # the requests that wanted it will say why
            connection.close()
            return
        with self._lock:
            self._idle.setdefault(origin, []).append(connection)

    def _request(
        self, origin: tuple[str, str, int | None], path: str, headers: dict[str, str], timeout: float
    ) -> tuple[int, str | None, Mapping[str, str], bytes]:
        """(status, the redirect's location or None, headers, body); a kept connection the server has
        closed since is replaced at once."""
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            connection = idle.pop() if idle else None
        reused = connection is not None
        while True:
            if connection is None:
                connection = self._connect(origin, timeout)
            elif connection.sock is not None:
                connection.sock.settimeout(timeout)
            try:
                connection.request("GET", path, headers=headers)
                response = connection.getresponse()
                body = response.read()
                break
            except (http.client.RemoteDisconnected, ConnectionError):
                connection.close()
                if not reused:
                    raise
                connection, reused = None, False  # closed by the server while it was kept: a new one
            except BaseException:
                connection.close()
                raise
        if response.will_close:
            connection.close()
        else:
            with self._lock:
                idle = self._idle[origin]
                if len(idle) < IDLE_KEPT:
                    idle.append(connection)
                    connection = None
            if connection is not None:
                connection.close()
        redirect = response.status in (301, 302, 303, 307, 308)
        answered = {name.lower(): value for name, value in response.getheaders()}
        return response.status, answered.get("location") if redirect else None, answered, body

    def _connect(self, origin: tuple[str, str, int | None], timeout: float) -> http.client.HTTPConnection:
        scheme, host, port = origin
        if scheme == "http":
            return http.client.HTTPConnection(host, port, timeout=timeout)
        if self._tls is None:
            self._tls = tls_context()
        return http.client.HTTPSConnection(host, port, timeout=timeout, context=self._tls)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname or "", parts.port


def _sent_to(url: str, target: str, headers: dict[str, str]) -> dict[str, str]:
    """`headers` for a request to `target` that `url` sent us to: without the hub's token on another host
    (a CDN: the token is not for it)."""
    if urlsplit(target).netloc == urlsplit(url).netloc:
        return headers
    return {k: v for k, v in headers.items() if k.lower() != "authorization"}


CONNECTIONS = Connections()
