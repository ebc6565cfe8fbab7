"""`tracetui web`: what it checks before serving, the command each browser tab runs, the server's rules.

Sessions here are opened over a plain WebSocket (aiohttp's client), as the page's script does; the
real browser is in test_web_browser.py.
"""

from __future__ import annotations

import asyncio
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from tracetui.commands.web import session_command
from tracetui.web.server import is_loopback, refusal

from .web_helpers import WAIT, alive, children, hostile_dataset, run_web, served, settle

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="follows the server's processes in /proc")


def test_a_bad_source_is_one_line_and_nothing_is_served(tmp_path):
    result = run_web(str(tmp_path / "missing.parquet"))
    assert result.returncode == 2
    assert result.stderr == f"tracetui: {tmp_path / 'missing.parquet'}: no such file or folder\n"
    assert result.stdout == ""


def test_without_the_web_extra_it_says_how_to_get_it(tmp_path):
    hide_the_extra = "import sys; sys.modules['textual_serve'] = None; from tracetui.cli import main; sys.exit(main())"
    result = subprocess.run(
        [sys.executable, "-c", hide_the_extra, "web", str(hostile_dataset(tmp_path))],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert result.returncode == 2
    assert result.stderr == "tracetui: the web extra is not installed: pip install 'tracetui[web]'\n"
    assert result.stdout == ""


def test_a_public_host_is_warned_about_and_a_busy_port_is_one_line(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_web(str(hostile_dataset(tmp_path)), "--host", "0.0.0.0", "--port", str(port))
    assert result.returncode == 2
    warning, failure = result.stderr.splitlines()
    assert warning.startswith("tracetui: warning: listening on 0.0.0.0: anyone who can reach this machine can try")
    assert failure == f"tracetui: cannot listen on 0.0.0.0:{port} (Address already in use)"
    assert result.stdout == ""


def test_the_terminal_app_does_not_import_the_web_server():
    imports = "import sys, tracetui.cli, tracetui.ui.app, tracetui.ui.screens.triage; print(sorted(sys.modules))"
    modules = subprocess.run([sys.executable, "-c", imports], capture_output=True, text=True, timeout=WAIT).stdout
    assert "'tracetui.cli'" in modules
    assert "textual_serve" not in modules and "aiohttp" not in modules and "tracetui.web" not in modules


def test_loopback_hosts():
    for host in ("localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "10.1.2.3", "gpu-box", ""):
        assert not is_loopback(host), host


def test_websocket_refusals():
    assert refusal(None, "127.0.0.1:8000", "127.0.0.1") is None  # not a browser: no origin to check
    assert refusal("http://localhost:9000", "localhost:9000", "127.0.0.1") is None  # through an SSH tunnel
    assert refusal("http://evil.example", "127.0.0.1:8000", "127.0.0.1") is not None
    assert refusal("http://evil.example:8000", "evil.example:8000", "127.0.0.1") is not None  # DNS rebinding
    assert refusal("http://gpu-box:8000", "gpu-box:8000", "0.0.0.0") is None


def test_the_session_command_quotes_every_argument():
    argv = ["--split=train", "--filter=task=a b", "--", "it's $HOME; ok/x.parquet", "`touch pwned`", "a\nb"]
    words = shlex.split(session_command(argv, private=True))
    assert words[:4] == ["exec", "env", "-u", "TRACETUI_WEB_TOKEN"]  # the apps do not get the token
    assert "TRACETUI_WEB_LOCAL=1" in words  # a page on localhost: it may write the browser's clipboard
    assert words[-len(argv) - 3 :] == [sys.executable, "-m", "tracetui", *argv]
    assert "TRACETUI_WEB_LOCAL=1" not in shlex.split(session_command(argv, private=False))


def test_it_serves_this_machine_only_and_prints_the_url(tmp_path):
    with served(str(hostile_dataset(tmp_path))) as server:
        assert server.url == f"http://127.0.0.1:{server.port}"
        assert server.token is not None and len(server.token) == 48  # random, in the URL printed
        assert listening_addresses(server.port) == {"127.0.0.1"}
        hint = server.process.stdout.readline()
        assert f"ssh -L {server.port}:localhost:{server.port} " in hint
        assert f"open http://localhost:{server.port}/?token={server.token}" in hint
    with served(str(hostile_dataset(tmp_path))) as again:
        assert again.token != server.token  # a new one at every start


async def test_the_page_uses_the_address_the_browser_used(tmp_path):
    """Through `ssh -L 9000:localhost:8000` the browser asks for localhost:9000; the page must say so."""
    with served(str(hostile_dataset(tmp_path))) as server:
        async with (
            aiohttp.ClientSession() as http,
            http.get(server.page, headers={"Host": "localhost:9000"}) as response,
        ):
            page = await response.text()
    assert 'data-session-websocket-url="ws://localhost:9000/ws"' in page
    assert 'href="http://localhost:9000/static/css/xterm.css"' in page


async def test_websockets_from_other_sites_are_refused(tmp_path):
    with served(str(hostile_dataset(tmp_path))) as server:
        socket_url = f"{server.url}/ws?token={server.token}"
        async with aiohttp.ClientSession() as http:
            for headers in (
                {"Origin": "http://evil.example"},
                {"Host": f"evil.example:{server.port}", "Origin": f"http://evil.example:{server.port}"},
            ):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(socket_url, headers=headers)
                assert refused.value.status == 403
            async with http.ws_connect(socket_url, headers={"Origin": server.url}) as ws:
                assert "calm-task" in await screen_text(ws, "calm-task")
                apps = children(server.process.pid)
                assert apps
        assert not settle(lambda: alive(apps)), "closing the tab did not end its app"


async def test_nothing_answers_without_the_token(tmp_path):
    """No token or a wrong one: no page, no WebSocket (so no app), no download; the static files only."""
    with served(str(hostile_dataset(tmp_path))) as server:
        async with aiohttp.ClientSession() as http:
            for query in ("", "?token=", "?token=wrong"):
                async with http.get(f"{server.url}/{query}") as response:
                    assert response.status == 403 and "/?token=" in await response.text()
                    assert "Set-Cookie" not in response.headers
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(f"{server.url}/ws{query}")
                assert refused.value.status == 403
            async with http.get(f"{server.url}/download/0123456789abcdef") as response:
                assert response.status == 403
            async with http.get(f"{server.url}/static/js/textual.js") as response:
                assert response.status == 200
            assert not children(server.process.pid)  # no app was started
        # the page with the token sets it as this server's cookie, which the page's WebSocket carries
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # (an IP address)
            async with http.get(server.page) as response:
                assert response.status == 200
                cookie = response.cookies[f"tracetui-token-{server.port}"]
                assert cookie.value == server.token and cookie["httponly"] and cookie["samesite"] == "Strict"
            async with http.ws_connect(f"{server.url}/ws") as ws:  # the cookie jar sends it
                assert "calm-task" in await screen_text(ws, "calm-task")


async def test_a_token_of_ones_own_and_none_at_all(tmp_path, monkeypatch):
    dataset = str(hostile_dataset(tmp_path))
    with served(dataset, "--token", "my secret/token") as server:
        assert server.token == "my secret/token"  # quoted in the URL printed, and unquoted by the page
        async with aiohttp.ClientSession() as http, http.get(server.page) as response:
            assert response.status == 200
    monkeypatch.setenv("TRACETUI_WEB_TOKEN", "from-the-environment")  # kept out of the command line
    with served(dataset) as server:
        assert server.token == "from-the-environment"
        assert "from-the-environment" not in Path(f"/proc/{server.process.pid}/cmdline").read_text()
    monkeypatch.delenv("TRACETUI_WEB_TOKEN")
    with served(dataset, "--no-token") as server:
        assert server.token is None and server.page == server.url
        warning = server.process.stderr.readline()
        assert warning.startswith("tracetui: warning: --no-token: every user of this machine can open the app")
        async with aiohttp.ClientSession() as http, http.get(server.url) as response:
            assert response.status == 200
    result = run_web(dataset, "--token", " ")
    assert (result.returncode, result.stderr) == (2, "tracetui: --token is empty (--no-token serves without one)\n")
    result = run_web(dataset, "--token", "x", "--no-token")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "not allowed with" in result.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["stopped", "killed"])
async def test_the_apps_end_with_the_server(tmp_path, signum):
    """Stopped, the server tells each app to quit; killed, each app sees its input end and quits."""
    with served(str(hostile_dataset(tmp_path))) as server:
        async with aiohttp.ClientSession() as http, http.ws_connect(f"{server.url}/ws?token={server.token}") as ws:
            await screen_text(ws, "calm-task")
            apps = children(server.process.pid)
            assert apps
            stopping = asyncio.create_task(asyncio.to_thread(server.stop, signum))
            async for _ in ws:  # read on, as a browser does, so the server's goodbye gets its answer
                pass
            code = await stopping
        assert code == (0 if signum == signal.SIGTERM else -signal.SIGKILL)
        assert not settle(lambda: alive(apps)), "an app outlived its server"


async def screen_text(ws: aiohttp.ClientWebSocketResponse, wanted: str) -> str:
    """What the app wrote to the session's terminal, read until `wanted` shows up."""
    text = ""
    while wanted not in text:
        message = await ws.receive(timeout=WAIT)
        if message.type == aiohttp.WSMsgType.BINARY:
            text += message.data.decode("utf-8", "replace")
        elif message.type != aiohttp.WSMsgType.TEXT:
            raise AssertionError(f"the session ended before showing {wanted!r}: {text[-500:]!r}")
    return text


def listening_addresses(port: int) -> set[str]:
    """The local addresses of the sockets listening on `port` (Linux /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(socket.inet_ntoa(bytes.fromhex(address)[::-1]) if table == "tcp" else f"[{address}]")
    return found
