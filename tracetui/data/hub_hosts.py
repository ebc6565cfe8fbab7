"""The hosts a hub last sent file reads to (its CDN), remembered in the cache: the next open of a dataset
from that hub connects to them while it waits for the listing, not after the first redirect (a new
connection to a far host costs two round trips before its first request).

A cache in the strict sense: a file that is missing, damaged or cannot be written costs only that head
start, and the next redirect writes it whole again (`paths.write_atomically`). Nothing is sent to a
remembered host but the handshakes; the token never goes to a CDN (`connections`)."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import orjson

from ..paths import cache_dir, write_atomically

KEPT = 2
"""Hosts remembered for each hub, the latest first: a hub sends files from more than one (LFS and Xet
storage), and each remembered one is connected to ahead."""
FILE = "hub-hosts.json"

_lock = threading.Lock()


def origin(url: str) -> str:
    """`scheme://host[:port]` of `url`."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}"


def remembered(hub: str) -> list[str]:
    """The origins `hub` (a URL) last redirected reads to, the latest first; none when nothing (or nothing
    readable) is kept."""
    return _read().get(origin(hub), [])


def remember(hub: str, target: str) -> None:
    """`hub` (a URL) has redirected a read to `target`: its origin is kept first among the hub's (written
    only when that changes; a cache that cannot be written is left as it is)."""
    source, sent_to = origin(hub), origin(target)
    with _lock:
        kept = _read()
        hosts = kept.get(source, [])
        if hosts[:1] == [sent_to]:
            return
        kept[source] = [sent_to, *(host for host in hosts if host != sent_to)][:KEPT]
        path = cache_dir() / FILE
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(path, orjson.dumps(kept))
        except OSError:
            pass  # only the next open's head start is lost


def _read() -> dict[str, list[str]]:
    """The kept origins by hub; what is not a web origin, or not in the shape written, is left out."""
    try:
        kept = orjson.loads((cache_dir() / FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {
        hub: [host for host in hosts if isinstance(host, str) and host.startswith(("https://", "http://"))][:KEPT]
        for hub, hosts in kept.items()
        if isinstance(hosts, list)
    }
