"""A local stand-in for the Hugging Face hub: enough of its HTTP API for `huggingface_hub` and `datasets`.

Serves dataset repos from local folders (e.g. one written by `tracetui demo --out`) at `HF_ENDPOINT`:
repo info (`/api/datasets/{id}[/revision/{rev}]`), tree listings (`/api/datasets/{id}/tree/{rev}/{path}`),
`paths-info`, and `/datasets/{id}/resolve/{rev}/{path}` with HEAD, ETag / X-Repo-Commit / Content-Length
headers and byte ranges. It counts the file bytes it serves (also at `/_stats`), can drop a connection
once mid-file (`cut_after`), hold whole-file downloads (`downloads`) and go away mid-session (`stop`).
With `cdn=True` it sends data files as the hub sends LFS and Xet files: a resolve answers 302 with a
signed link to another host (its CDN) that serves the bytes, until `expire_links` makes it answer 403.

    with FakeHub({"org/name": folder}) as hub:
        hub.url, hub.bytes_served, hub.stop()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

CHUNK = 64 << 10


@dataclass
class Repo:
    """A dataset repo served from `folder`: every file under it, at one commit."""

    folder: Path
    files: dict[str, Path] = field(init=False)
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        self.files = {
            p.relative_to(self.folder).as_posix(): p
            for p in sorted(self.folder.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(self.folder).parts)
        }
        listing = [(name, p.stat().st_size, p.stat().st_mtime_ns) for name, p in self.files.items()]
        self.sha = hashlib.sha1(json.dumps(listing).encode()).hexdigest()

    def etag(self, name: str) -> str:
        stat = self.files[name].stat()
        return hashlib.sha1(f"{name}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()

    def entry(self, name: str) -> dict:
        if name in self.files:
            return {"type": "file", "oid": self.etag(name), "size": self.files[name].stat().st_size, "path": name}
        return {"type": "directory", "oid": hashlib.sha1(name.encode()).hexdigest(), "size": 0, "path": name}

    def folders(self) -> set[str]:
        return {"/".join(name.split("/")[:i]) for name in self.files for i in range(1, name.count("/") + 1)}

    def tree(self, path: str, recursive: bool) -> list[dict] | None:
        """Entries under `path` (direct children, or all descendants); None when `path` is no folder."""
        path = path.strip("/")
        if path and path not in self.folders():
            return None
        prefix = f"{path}/" if path else ""
        names = sorted({*self.files, *self.folders()})
        below = [n for n in names if n.startswith(prefix) and n != path]
        if not recursive:
            below = [n for n in below if "/" not in n[len(prefix) :]]
        return [self.entry(n) for n in below]


class FakeHub:
    def __init__(self, repos: dict[str, Path], cut_after: int | None = None, cdn: bool = False) -> None:
        self.repos = {repo_id: Repo(Path(folder)) for repo_id, folder in repos.items()}
        self.cut_after = cut_after
        """Drop the connection once, when this many file bytes have been served in all (None: never)."""
        self.links = 0
        """The signature of the CDN links given from now on; links signed before it answer 403 (expired)."""
        self.delay = 0.0
        """Seconds added to every request, and a new connection is ready for its first request only twice
        that after it opened (its TCP and TLS handshakes): a hub far away. Not to a benchmark's `/_stats`."""
        self.downloads = threading.Event()
        self.downloads.set()
        """Cleared, whole-file downloads of parquet files wait until it is set again (range reads do not)."""
        self.bytes_served = 0
        self.private: dict[str, str] = {}
        """Repos answered only to a request with `Authorization: Bearer <token>` (else 401, as the hub does)."""
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, range header)
        self.authorizations: list[str | None] = []  # the Authorization header of each request
        self.timeline: list[tuple[str, str | None, float, float]] = []
        """(path, range header, began, answered) of every request answered, time.monotonic()."""
        self.opened: list[tuple[str, float]] = []
        """(the URL of the host it reached, time.monotonic()) of every connection opened."""
        self._lock = threading.Lock()
        self._sending = 0  # response bodies being sent now
        self._connections: set[socket.socket] = set()
        self._servers = [_Server(("127.0.0.1", 0), _handler(self)) for _ in range(2 if cdn else 1)]
        self._threads = [threading.Thread(target=s.serve_forever, name="fake-hub", daemon=True) for s in self._servers]

    @property
    def url(self) -> str:
        return _url(self._servers[0])

    @property
    def cdn(self) -> str | None:
        """Where data files are sent from (another host), or None when the hub serves them itself."""
        return _url(self._servers[1]) if len(self._servers) > 1 else None

    def expire_links(self) -> None:
        with self._lock:
            self.links += 1

    def start(self) -> FakeHub:
        for thread in self._threads:
            thread.start()
        return self

    def stop(self) -> None:
        """Go away: stop listening and cut every open connection (later requests are refused)."""
        for server in self._servers:
            server.shutdown()
            server.server_close()
        with self._lock:
            for connection in list(self._connections):
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    def file_bytes(self, repo_id: str) -> int:
        return sum(p.stat().st_size for p in self.repos[repo_id].files.values())

    def settle(self, timeout: float = 5.0) -> None:
        """Wait until no response body is being sent (a client that gave up may leave one in flight,
        whose bytes would count after a `reset_counts`), or `timeout` seconds."""
        end = time.monotonic() + timeout
        while self._sending and time.monotonic() < end:
            time.sleep(0.01)

    def reset_counts(self) -> None:
        with self._lock:
            self.bytes_served = 0
            self.requests.clear()
            self.authorizations.clear()
            self.timeline.clear()
            self.opened.clear()

    def in_a_row(self, since: float = float("-inf"), until: float = float("inf")) -> int:
        """Round trips in a row: the most requests (begun from `since`, answered by `until`, time.monotonic())
        of which each began after the one before it was answered. A far hub makes a client wait that many
        times its latency."""
        with self._lock:
            spans = sorted((end, began) for _, _, began, end in self.timeline if since <= began and end <= until)
        count, free = 0, float("-inf")
        for end, began in spans:  # the earliest-answered request that fits next, as in interval scheduling
            if began >= free:
                count, free = count + 1, end
        return count

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        if self._threads[0].is_alive():
            self.stop()

    # --- bookkeeping called by the handler -----------------------------------------------------
    def _served(self, count: int) -> bool:
        """Count `count` file bytes about to be sent; False (once) when they would pass `cut_after`."""
        with self._lock:
            if self.cut_after is not None and self.bytes_served + count > self.cut_after:
                self.cut_after = None
                return False
            self.bytes_served += count
            return True


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # clients open tens of connections at once: a backlog of 5 drops some for 1 s
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:  # a client that hung up is not news
        pass


_API = re.compile(r"^/api/datasets/([^/]+/[^/]+)(?:/(revision|tree|paths-info)/([^/]+)(/.*)?)?$")
_RESOLVE = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")
_CDN = re.compile(r"^/_cdn/(\d+)/([^/]+/[^/]+)/(.+)$")
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_SENT_FROM_CDN = (".parquet", ".arrow", ".jsonl")
"""The files a `cdn` hub sends from its CDN (stored with LFS or Xet on the hub); the card it serves itself."""


def _url(server: ThreadingHTTPServer) -> str:
    host, port = server.server_address[:2]
    return f"http://{host}:{port}"


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args) -> None:  # quiet: tests read `hub.requests`
            pass

        def setup(self) -> None:
            super().setup()
            # headers and body go out in separate writes: without this, Nagle's algorithm and the
            # client's delayed ACK hold every small response back ~40 ms
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with hub._lock:
                hub._connections.add(self.connection)
                hub.opened.append((_url(self.server), time.monotonic()))
            self.ready_at = time.monotonic() + 2 * hub.delay  # the handshakes, paid by its first request

        def finish(self) -> None:
            with hub._lock:
                hub._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        # --- routing -----------------------------------------------------------------------
        def do_GET(self) -> None:
            self._route("GET")

        def do_HEAD(self) -> None:
            self._route("HEAD")

        def do_POST(self) -> None:
            self._route("POST")

        def _route(self, method: str) -> None:
            url = urlsplit(self.path)
            path, query = unquote(url.path), parse_qs(url.query)
            if path == "/_stats":  # for a benchmark in another process: not a request to the hub
                since, until = (float(query[k][0]) if k in query else None for k in ("since", "until"))
                in_a_row = hub.in_a_row(since or float("-inf"), until or float("inf"))
                with hub._lock:
                    self._json({"bytes_served": hub.bytes_served, "requests": len(hub.requests), "in_a_row": in_a_row})
                return
            time.sleep(max(0.0, self.ready_at - time.monotonic()))
            began = time.monotonic()
            with hub._lock:
                hub.requests.append((method, path, self.headers.get("Range")))
                hub.authorizations.append(self.headers.get("Authorization"))
            if hub.delay:
                time.sleep(hub.delay)
            try:
                self._answer(method, path, query)
            finally:
                with hub._lock:
                    hub.timeline.append((path, self.headers.get("Range"), began, time.monotonic()))

        def _answer(self, method: str, path: str, query: dict) -> None:
            body = b""
            if method == "POST":
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if match := _API.match(path):
                self._api(method, match, query, body)
            elif match := _RESOLVE.match(path):
                self._resolve(method, *match.groups())
            elif match := _CDN.match(path):
                self._signed(method, *match.groups())
            else:
                self._error(404, "EntryNotFound", f"no route for {path}")

        def _repo(self, repo_id: str, revision: str | None) -> Repo | None:
            repo = hub.repos.get(repo_id)
            token = hub.private.get(repo_id)
            if repo is None or (token is not None and self.headers.get("Authorization") != f"Bearer {token}"):
                self._error(404 if repo is None else 401, "RepoNotFound", f"Repository not found: {repo_id}")
                return None
            if revision not in (None, "main", repo.sha):
                self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
                return None
            return repo

        # --- the API -----------------------------------------------------------------------
        def _api(self, method: str, match: re.Match, query: dict, body: bytes) -> None:
            repo_id, kind, revision, rest = match.groups()
            repo = self._repo(repo_id, unquote(revision) if revision else None)
            if repo is None:
                return
            if kind in (None, "revision"):
                siblings = [
                    {"rfilename": n, "size": p.stat().st_size, "blobId": repo.etag(n)} for n, p in repo.files.items()
                ]
                self._json(
                    {
                        "id": repo_id,
                        "sha": repo.sha,
                        "private": False,
                        "disabled": False,
                        "gated": False,
                        "siblings": siblings,
                        "tags": [],
                    }
                )
            elif kind == "tree":
                entries = repo.tree(rest or "", query.get("recursive", ["false"])[0].lower() == "true")
                if entries is None:
                    self._error(404, "EntryNotFound", f"{rest} does not exist")
                else:
                    self._json(entries)
            elif kind == "paths-info" and method == "POST":
                form = parse_qs(body.decode())
                if not form and body:
                    form = {"paths": json.loads(body).get("paths", [])}
                wanted = form.get("paths", [])
                known = {*repo.files, *repo.folders()}
                self._json([repo.entry(p.strip("/")) for p in wanted if p.strip("/") in known])
            else:
                self._error(405, None, "method not allowed")

        def _resolve(self, method: str, repo_id: str, revision: str, name: str) -> None:
            repo = self._repo(repo_id, unquote(revision))
            if repo is None:
                return
            if name not in repo.files:
                self._error(404, "EntryNotFound", f"{name} does not exist")
                return
            if hub.cdn is not None and name.endswith(_SENT_FROM_CDN):
                self.send_response(302)
                self.send_header("Location", f"{hub.cdn}/_cdn/{hub.links}/{repo_id}/{name}")
                self.send_header("X-Repo-Commit", repo.sha)
                self.send_header("X-Linked-Etag", f'"{repo.etag(name)}"')
                self.send_header("X-Linked-Size", str(repo.files[name].stat().st_size))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._file(method, repo, name)

        def _signed(self, method: str, signature: str, repo_id: str, name: str) -> None:
            """A CDN link: the file's bytes while its signature is current, 403 once it has expired."""
            repo = hub.repos.get(repo_id)
            if repo is None or name not in repo.files or int(signature) != hub.links:
                self._error(403, None, "Request has expired")
                return
            self._file(method, repo, name)

        def _file(self, method: str, repo: Repo, name: str) -> None:
            """A file's bytes, or the range of them asked for."""
            file = repo.files[name]
            size = file.stat().st_size
            start, end = 0, size - 1
            status = 200
            wanted = self.headers.get("Range")
            if wanted and (match := _RANGE.match(wanted.strip())):
                first, last = match.groups()
                if first:
                    start, end = int(first), min(int(last), size - 1) if last else size - 1
                elif last:
                    start, end = max(0, size - int(last)), size - 1
                if start >= size:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 206
            self.send_response(status)
            self.send_header("X-Repo-Commit", repo.sha)
            self.send_header("ETag", f'"{repo.etag(name)}"')
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(end - start + 1))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            if method == "HEAD":
                return
            if status == 200 and name.endswith(".parquet"):
                hub.downloads.wait()
            with hub._lock:
                hub._sending += 1
            try:
                self._send_body(file, start, end - start + 1)
            finally:
                with hub._lock:
                    hub._sending -= 1

        def _send_body(self, file: Path, start: int, left: int) -> None:
            with file.open("rb") as handle:
                handle.seek(start)
                while left > 0:
                    chunk = handle.read(min(CHUNK, left))
                    if not chunk:
                        break
                    if not hub._served(len(chunk)):  # drop the connection mid-body
                        self.close_connection = True
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self.wfile.write(chunk)
                    left -= len(chunk)

        # --- responses ---------------------------------------------------------------------
        def _json(self, value) -> None:
            data = json.dumps(value).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, code: str | None, message: str) -> None:
            data = json.dumps({"error": message}).encode()
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)
            self.send_header("X-Error-Message", message)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

    return Handler


def use_hub(monkeypatch, url: str) -> None:
    """Point huggingface_hub and datasets (imported already or not) at `url`, online, its telemetry off as
    the command line has it (else its user agent asks the hub for a registry of agents first).

    Both read HF_ENDPOINT and the offline switches when imported, so the module constants are patched too;
    the HF cache stays where conftest put HF_HOME.
    """
    import os
    import sys

    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", url + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)  # as `cli.set_up_process` sets it
    monkeypatch.setattr(constants, "HF_HUB_CACHE", os.path.join(os.environ["HF_HOME"], "hub"))
    if "datasets" in sys.modules:
        config = sys.modules["datasets"].config
        monkeypatch.setattr(config, "HF_ENDPOINT", url)
        monkeypatch.setattr(config, "HF_HUB_OFFLINE", False)
        monkeypatch.setattr(config, "HF_DATASETS_OFFLINE", False)


class SilentServer:
    """Accepts TCP connections and never answers: a hub that hangs. `connections` counts them."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(64)
        self._held: list[socket.socket] = []
        threading.Thread(target=self._accept, name="silent-hub", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self._held.append(connection)

    @property
    def connections(self) -> int:
        return len(self._held)

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()
        return f"http://{host}:{port}"

    def __enter__(self) -> SilentServer:
        return self

    def __exit__(self, *exc) -> None:
        self._socket.close()
        for connection in self._held:
            connection.close()


def main() -> None:
    """`python -m tests.hub_server org/name=FOLDER ...`: serve until interrupted (for trying the app by hand)."""
    import argparse

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("repos", nargs="+", metavar="ID=FOLDER")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds added to every request (a far hub)")
    parser.add_argument("--cdn", action="store_true", help="send data files from a CDN, as the hub does")
    args = parser.parse_args()
    hub = FakeHub({repo: Path(folder) for repo, _, folder in (r.partition("=") for r in args.repos)}, cdn=args.cdn)
    hub.delay = args.delay
    with hub:
        print(f"HF_ENDPOINT={hub.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
