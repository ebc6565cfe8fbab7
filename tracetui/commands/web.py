"""`tracetui web SOURCE…`: the same app in a browser, for colleagues without SSH, through textual-serve.

The sources are checked, downloaded and converted here, once, before the server starts: a bad source is
one line and exit 2, and each browser tab then opens at once. Every tab runs its own `tracetui` process
with exactly these sources and options, offline (it opens the snapshot fetched here), under the session
driver (`tracetui.web.driver`). textual-serve is imported only here, never by the terminal app.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import socket
import sys

from ..data.errors import SourceError
from . import Parser, guarded, print_progress, source_options, source_specs, view_options
from .demo import demo_rows, demo_sources

DRIVER = "tracetui.web.driver:SessionDriver"

EPILOG = """\
examples:
  tracetui web laion/a1-e2egit-tb2-leonardo-20260731     serve a hub dataset at http://127.0.0.1:8000
  tracetui web ./traces.parquet --port 8080 --filter outcome=fail
  tracetui web demo                                      the bundled demo dataset

The server listens on this machine only (127.0.0.1). From your laptop, forward the port over SSH:
  ssh -L 8000:localhost:8000 gpu-box                     then open http://localhost:8000
--host 0.0.0.0 lets anyone who can reach this machine open the app and read the dataset (no password).
"""


def parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tracetui web",
        description="Serve the app to web browsers: each browser tab gets its own session. "
        "Needs the web extra: pip install 'tracetui[web]'.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help="hub id, hf:// path, file or folder; or demo")
    source_options(parser)
    parser.add_argument("--rows", type=int, help="with demo: rows to generate (default: the bundled size)")
    parser.add_argument("--seed", type=int, help="with demo: random seed (default: 0)")
    view_options(parser)
    parser.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)"
    )
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
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

    from ..data.cache import ensure_converted
    from ..data.jobs import JobSource, open_job
    from ..web.server import TraceServer, is_loopback
    from .selection import filter_args

    filter_args(args)  # fail before any download on a malformed filter or an unknown facet
    sources, app_argv = _sources(args)
    for source in sources:
        if isinstance(source, JobSource):  # harbor job folders: their trials read into the cache once
            open_job(source, print_progress)
        else:
            ensure_converted(source, print_progress)
    private = is_loopback(args.host)
    if not private:
        print(
            f"tracetui: warning: listening on {args.host}: anyone who can reach this machine can open the app "
            "and read the dataset, with no password (the default --host 127.0.0.1 and an SSH tunnel keep it private)",
            file=sys.stderr,
        )
    logging.basicConfig(level=logging.INFO if args.debug else logging.WARNING, format="tracetui web: %(message)s")
    title = "tracetui · " + ", ".join(source.display or source.dataset_id for source in sources)
    server = TraceServer(session_command(app_argv), args.host, args.port, title)
    asyncio.run(server.run(lambda port: _announce(args.host, port, private)))
    return 0


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
    return prepare(source_specs(args)), [*options, *view, "--", *args.sources]


def session_command(app_argv: list[str]) -> str:
    """The shell command textual-serve runs for each browser tab (`exec`: the app itself gets its signals)."""
    return shlex.join(
        ["exec", "env", f"TEXTUAL_DRIVER={DRIVER}", "HF_HUB_OFFLINE=1", sys.executable, "-m", "tracetui", *app_argv]
    )


def _announce(host: str, port: int, private: bool) -> None:
    """The URL to open, on stdout once the port is bound; on loopback, how to reach it over SSH."""
    name = socket.gethostname() if host in ("0.0.0.0", "::", "") else host
    url = f"http://{f'[{name}]' if ':' in name else name}:{port}"
    print(f"tracetui: serving at {url} (Ctrl+C stops)", flush=True)
    if private:
        print(
            f"  from another machine: ssh -L {port}:localhost:{port} {socket.gethostname()}, "
            f"then open http://localhost:{port}",
            flush=True,
        )
