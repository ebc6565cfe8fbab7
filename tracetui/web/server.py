"""textual-serve's server, made fit to serve trace data from a shared machine.

Five changes to `textual_serve.server.Server`:
- a secret token is asked for, as Jupyter does: the page needs it in its URL (`/?token=…`, the URL
  `tracetui web` prints), and sets it as a cookie for this server (HttpOnly, SameSite=Strict), which the
  page's WebSocket and its downloads carry; without it, or with a wrong one, nothing but the static files
  answers (403): no page, no WebSocket, no app, no download (other local users of a shared machine reach
  the port too);
- the page's links and WebSocket URL follow the address the browser used (through an SSH tunnel on
  another port, or a host name, they still work; textual-serve writes the address it listens on);
- a WebSocket from another site's page is refused (any page the user visits could otherwise open the
  app and read the dataset), and so is one whose Host is not a loopback name while the server listens
  on loopback only (DNS rebinding);
- stopping the server (Ctrl+C, SIGTERM) tells every session's app to quit, instead of waiting a minute
  for open browser tabs to go away;
- the URL is announced once the port is bound, and a bind failure is one line.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import os
import signal
from collections.abc import Callable
from urllib.parse import urlsplit

from aiohttp import web
from textual_serve.server import Server

from ..data.errors import SourceError

QUIT_GRACE = 5.0
"""Seconds the sessions' apps get to quit when the server stops."""
NO_TOKEN = (
    "tracetui: this server asks for its token. Open the URL that `tracetui web` printed when it started "
    "(it ends with /?token=…); the token changes at every start unless --token set it."
)


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address, no port) is this machine only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def refusal(origin: str | None, host_header: str, listening_on: str) -> str | None:
    """Why a WebSocket handshake must be refused, or None to accept it."""
    if origin is not None and urlsplit(origin).netloc.lower() != host_header.lower():
        return "refused: a page from another site tried to open tracetui"
    if is_loopback(listening_on) and not is_loopback(urlsplit(f"//{host_header}").hostname or ""):
        return f"refused: {host_header} is not this machine (to serve other hosts, use --host)"
    return None


class TraceServer(Server):
    def __init__(self, command: str, host: str, port: int, title: str, token: str | None) -> None:
        """`token`: the secret every page, WebSocket and download must carry (None: anyone may come in)."""
        super().__init__(command, host=host, port=port, title=title)
        self.token = token
        self._sessions: set[asyncio.Task] = set()

    @property
    def cookie(self) -> str:
        """The token's cookie, named after the port: cookies ignore ports, two servers must not mix theirs."""
        return f"tracetui-token-{self.port}"

    def admitted(self, request: web.Request) -> bool:
        """Whether `request` carries the token, in its query (`?token=`) or in this server's cookie."""
        if self.token is None:
            return True
        given = request.query.get("token") or request.cookies.get(self.cookie) or ""
        return hmac.compare_digest(given.encode(), self.token.encode())

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if not self.admitted(request):
            raise web.HTTPForbidden(text=NO_TOKEN)
        # the parent builds every URL of the page from `public_url`, synchronously: no other request
        # can run between this assignment and its use
        self.public_url = f"{request.scheme}://{request.host}"
        response = await super().handle_index(request)
        if self.token is not None:
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict", path="/")
        return response

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        if not self.admitted(request):
            raise web.HTTPForbidden(text=NO_TOKEN)
        return await super().handle_download(request)

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        reason = refusal(request.headers.get("Origin"), request.host, self.host)
        if reason is None and not self.admitted(request):
            reason = "refused: no token, or a wrong one (open the URL that tracetui web printed)"
        if reason is not None:
            raise web.HTTPForbidden(text=reason)
        task = asyncio.current_task()
        assert task is not None
        self._sessions.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            self._sessions.discard(task)

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: textual-serve prints its banner here, before the port is bound; `run` announces."""

    async def on_shutdown(self, app: web.Application) -> None:
        """Cancelling a session makes textual-serve send its app the quit message and wait for it."""
        sessions = set(self._sessions)
        for task in sessions:
            task.cancel()
        if sessions:
            await asyncio.wait(sessions, timeout=QUIT_GRACE)

    async def run(self, announce: Callable[[int], None]) -> None:
        """Serve until SIGINT or SIGTERM; `announce` gets the port bound (which port 0 leaves to the system)."""
        runner = web.AppRunner(await self._make_app(), handle_signals=False, shutdown_timeout=QUIT_GRACE)
        await runner.setup()
        try:
            site = web.TCPSite(runner, self.host, self.port)
            try:
                await site.start()
            except OSError as exc:
                reason = os.strerror(exc.errno) if exc.errno else str(exc)
                raise SourceError(f"cannot listen on {self.host}:{self.port} ({reason})") from None
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGINT, signal.SIGTERM):  # before the URL is out: a Ctrl+C at once stops cleanly
                loop.add_signal_handler(signum, stop.set)
            self.port = runner.addresses[0][1]  # port 0 asked the system for one
            announce(self.port)
            await stop.wait()
        finally:
            await runner.cleanup()
