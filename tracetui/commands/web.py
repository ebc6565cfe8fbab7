"""`tracetui web SOURCE…`: the same app in a browser, for colleagues without SSH, through textual-serve.

The sources are checked, downloaded and converted here, once, before the server starts: a bad source is
one line and exit 2, and each browser tab then opens at once. Every tab runs its own `tracetui` process
with exactly these sources and options, offline (it opens the snapshot fetched here), under the session
driver (`tracetui.web.driver`). textual-serve is imported only here, never by the terminal app.

The server asks for a secret token, as Jupyter does: a random one per start (or `--token`), in the URL
printed; `--no-token` serves without one, with a warning.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shlex
import socket
import sys
from urllib.parse import quote

from ..data.errors import SourceError
from . import (
    SOURCE_HELP,
    Parser,
    cache_size,
    end_progress,
    guarded,
    print_progress,
    source_options,
    source_specs,
    view_options,
)
from .demo import demo_rows, demo_sources

DRIVER = "tracetui.web.driver:SessionDriver"
TOKEN_VARIABLE = "TRACETUI_WEB_TOKEN"

EPILOG = """\
examples:
  tracetui web laion/a1-e2egit-tb2-leonardo-20260731     serve a hub dataset at http://127.0.0.1:8000
  tracetui web ./traces.parquet --port 8080 --filter outcome=fail
  tracetui web demo                                      the bundled demo dataset

It prints the URL to open, with a secret token that changes at every start:
  tracetui: serving at http://127.0.0.1:8000/?token=… (Ctrl+C stops)
Without the token (or with a wrong one) nothing answers: no page, no app, no download. --token sets it
(other users of the machine can read a command line: $TRACETUI_WEB_TOKEN is the private way);
--no-token serves anyone who can connect, and says so.

The server listens on this machine only (127.0.0.1). From your laptop, forward the port over SSH:
  ssh -L 8000:localhost:8000 gpu-box                     then open http://localhost:8000/?token=…
--host 0.0.0.0 lets anyone who can reach this machine try, the token their only bar, carried by plain
http. In a browser, export (ctrl+e) and long copies download to the browser; copy (y) writes the
browser's clipboard (on localhost); $PAGER and $EDITOR do not run.
"""


def parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tracetui web",
        description="Serve the app to web browsers: each browser tab gets its own session. "
        "Needs the web extra: pip install 'tracetui[web]'.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help=f"{SOURCE_HELP}; or demo")
    source_options(parser)
    parser.add_argument("--rows", type=int, help="with demo: rows to generate (default: the bundled size)")
    parser.add_argument("--seed", type=int, help="with demo: random seed (default: 0)")
    view_options(parser)
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    secret = parser.add_mutually_exclusive_group()
    secret.add_argument(
        "--token",
        default=os.environ.get(TOKEN_VARIABLE),
        help=f"the secret the URL must carry (default: ${TOKEN_VARIABLE}, else a random one per start)",
    )
    secret.add_argument(
        "--no-token", action="store_true", help="ask for no token: anyone who can connect gets in (with a warning)"
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks and the server's request log")
    return parser


def run(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    return guarded(args, lambda: _serve(args))


def _serve(args) -> int:
    try:
        import textual_serve  # noqa: F401  (the optional extra: say how to get it before any work)
    except ImportError:
        raise SourceError("the web extra is not installed: pip install 'tracetui[web]'") from None
    import logging

    from ..data.session import open_session
    from ..web.server import TraceServer, is_loopback
    from .selection import filter_args

    filter_args(args)  # fail before any download on a malformed filter or an unknown facet
    token = _token(args)
    sources, app_argv = _sources(args)
    open_session(sources, print_progress, cache_size(args))  # converted here, once: each tab then opens at once
    end_progress()
    private = is_loopback(args.host)
    for warning in _warnings(args.host, private, token):
        print(f"tracetui: warning: {warning}", file=sys.stderr)
    logging.basicConfig(level=logging.INFO if args.debug else logging.WARNING, format="tracetui web: %(message)s")
    title = "tracetui · " + ", ".join(source.display or source.dataset_id for source in sources)
    server = TraceServer(session_command(app_argv, private), args.host, args.port, title, token)
    asyncio.run(server.run(lambda port: _announce(args.host, port, private, token)))
    return 0


def _token(args) -> str | None:
    """The token the server asks for: --token, or $TRACETUI_WEB_TOKEN, or a random one; None with --no-token."""
    if args.no_token:
        return None
    if args.token is None:
        return secrets.token_hex(24)
    if not args.token.strip():
        raise SourceError("--token is empty (--no-token serves without one)")
    return args.token


def _warnings(host: str, private: bool, token: str | None) -> list[str]:
    """What the user must know before serving: who can get in."""
    if token is None:
        who = "every user of this machine" if private else "anyone who can reach this machine"
        return [f"--no-token: {who} can open the app and read the dataset, with no token asked"]
    if private:
        return []
    return [
        f"listening on {host}: anyone who can reach this machine can try the token, which plain http carries "
        "unencrypted (the default --host 127.0.0.1 and an SSH tunnel keep it private)"
    ]


def _sources(args) -> tuple[list, list[str]]:
    """The sources to serve, ready to open, and the arguments that make `tracetui` open exactly them."""
    view = [f"--filter={value}" for value in args.filter] + ([f"--trial={args.trial}"] if args.trial else [])
    if args.sources == ["demo"]:
        rows, seed = demo_rows(args.rows), args.seed or 0
        return demo_sources(rows, seed), ["demo", f"--rows={rows}", f"--seed={seed}", *view]
    if args.rows is not None or args.seed is not None:
        raise SourceError("--rows and --seed go with demo (tracetui web demo --rows N)")
    from ..data.session import prepare

    options = [f"--split={args.split}"]
    options += [f"--revision={args.revision}"] if args.revision else []
    options += [f"--config={args.config}"] if args.config else []
    options += [f"--cache-size={args.cache_size}"] if args.cache_size is not None else []
    return prepare(source_specs(args)), [*options, *view, "--", *args.sources]


def session_command(app_argv: list[str], private: bool) -> str:
    """The shell command textual-serve runs for each browser tab (`exec`: the app itself gets its signals).

    `private`: the server answers this machine only, so the page is on localhost, where the browser lets
    it write the clipboard (the app's copy says so only then)."""
    from ..ui.triage.browser import LOCAL_PAGE

    environment = [f"TEXTUAL_DRIVER={DRIVER}", "HF_HUB_OFFLINE=1", *([f"{LOCAL_PAGE}=1"] if private else [])]
    return shlex.join(["exec", "env", "-u", TOKEN_VARIABLE, *environment, sys.executable, "-m", "tracetui", *app_argv])


def _announce(host: str, port: int, private: bool, token: str | None) -> None:
    """The URL to open, on stdout once the port is bound; on loopback, how to reach it over SSH."""
    name = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    query = "" if token is None else f"/?token={quote(token, safe='')}"
    url = f"http://{f'[{name}]' if ':' in name else name}:{port}{query}"
    print(f"tracetui: serving at {url} (Ctrl+C stops)", flush=True)
    if private:
        print(
            f"  from another machine: ssh -L {port}:localhost:{port} {socket.gethostname()}, "
            f"then open http://localhost:{port}{query}",
            flush=True,
        )
