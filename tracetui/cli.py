"""Command line: `tracetui SOURCE…` opens the app; subcommands do the rest without a UI.

Every user error ends as one line on stderr and exit code 2 (`--debug` shows the traceback).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.abc
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from . import __version__
from .collector import held_until_first_frame
from .commands import SOURCE_HELP, Parser, cache_option, guarded, source_options, source_specs, view_options
from .commands import cache_size as cache_limit
from .commands.demo import demo_rows, demo_sources

EXAMPLES = """\
examples:
  tracetui laion/a1-e2egit-tb2-leonardo-20260731          a Hugging Face dataset id
  tracetui hf://datasets/org/name/data/train-*.parquet    an hf:// path
  tracetui ./traces.parquet ./runs/ traces.jsonl          local files and folders (one session)
  tracetui jobs/                                          harbor job folders (a jobs root, a job, a trial), live
  tracetui demo                                           the bundled demo dataset (no network)
  tracetui demo --rows 4000 --out ./demo                  write a demo dataset and exit

A hub dataset not downloaded yet opens from its metadata, read over HTTP, while it downloads in the
background; the app then switches to the local copy. With --no-download (or when it would not fit on
the disk) it stays on the hub: trials are fetched as you open them, search streams the text.

environment: HF_HOME, HF_TOKEN, HF_HUB_OFFLINE=1 (use the HF cache only),
             TRACETUI_CACHE_DIR (where converted datasets are kept; default ~/.cache/tracetui:
             see tracetui cache)
"""

GIL_SLICE = 0.001
"""Seconds a thread keeps the GIL while another waits for it (Python's default: 0.005). tracetui's threads
mostly wait on the network or the disk and then need the GIL briefly (the hub's reader threads while the
app's modules import and its first frame is drawn; the UI while an index builds or a search runs): a
shorter slice hands it over sooner. Through a stand-in hub (4,000 rows), the first conversation came
0.1-0.25 s sooner; the local first screen did not change."""


def open_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tracetui",
        description="Read and triage datasets of coding-agent traces in the terminal.\n\n"
        "commands (each has --help):\n"
        "  demo      open (or write) the bundled demo dataset\n"
        "  stats     pass rates by model / task / dataset, and head-to-head tables\n"
        "  export    write the filtered or labelled trials to jsonl / parquet / csv\n"
        "  labels    your labels and notes on a dataset's trials; `labels import FILE` restores unsaved ones\n"
        "  findings  what went wrong in each trial (tampering, false claims, loops...), one record each\n"
        "  ask       ask every trial a question through a local model server (vLLM, SGLang, llama.cpp)\n"
        "  web       serve the app to a browser (pip install 'tracetui[web]')\n"
        "  cache     what the cache keeps (conversions, hub text, job summaries); `cache clear` removes it",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help=SOURCE_HELP)
    source_options(parser)
    view_options(parser)
    parser.add_argument(
        "--no-download",
        action="store_true",
        help="read hub datasets over HTTP only, never downloading them (for datasets larger than the disk)",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=f"tracetui {__version__}")
    return parser


def demo_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="tracetui demo", description="Open the bundled demo dataset, or write one.")
    parser.add_argument("--rows", type=int, default=None, help="rows to generate (default: the bundled size)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (the data is deterministic)")
    parser.add_argument("--out", type=Path, help="write the dataset here (hub layout) and exit")
    view_options(parser)
    cache_option(parser)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    return parser


class _NoPandas(importlib.abc.MetaPathFinder):
    """pyarrow imports pandas on its first to_numpy() or scalar (0.15-0.4 s and 40 MB at start-up) just
    to check for pandas objects; the app never uses pandas, so in the app's process it is not found."""

    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return


def keep_pandas_out() -> None:
    """In the app's process: pandas is not found (see `_NoPandas`)."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


def run_app(sources, args, opening=None) -> int:
    """Run the TUI. A dataset converted before opens here, before the first frame (a few hundred ms
    at most, no loading screen); a new one converts in the app's worker, with a progress bar, unless
    --filter asks for values: those are checked against the data first (converting it here; a
    `finding=` filter waits in the app for the findings index). `opening`: the session already being
    opened (`EarlyOpen`), which the app's worker takes over."""
    keep_pandas_out()
    from .commands import end_progress, print_progress
    from .commands.selection import filter_args, filter_state
    from .data.facets import FilterState
    from .data.session import all_cached, open_session
    from .ui.app import StartOptions, TraceApp

    filters = filter_args(args)
    cache_size = cache_limit(args)
    session = open_session(sources, cache_size=cache_size) if opening is None and all_cached(sources) else None
    state = FilterState()
    if filters:
        session = session or open_session(sources, print_progress, cache_size)
        end_progress()
        state = filter_state(session, filters, find=False)  # the app finds them after its first frame
    options = StartOptions(state, args.trial, not getattr(args, "no_download", False), cache_size, opening)
    app = TraceApp(sources, options, session=session)
    app.run()
    if app.error is not None:
        raise app.error
    return app.return_code or 0


class EarlyOpen:
    """`open_session` started in a thread as soon as the sources resolve, while the app's modules still
    import: a hub dataset's footers and short columns (two round trips) arrive meanwhile instead of after
    the app has started. Called by the app's opening worker with its progress callback, it hands over
    the progress so far and from then on (that callback raises to cancel), and returns the session."""

    def __init__(self, sources, cache_size: int | None) -> None:
        from .data.session import open_session
        from .data.threads import detached

        self._lock = threading.Lock()
        self._last: tuple[float, str] | None = None
        self._progress: Callable[[float, str], None] | None = None
        self._session = detached(lambda: open_session(sources, self._report, cache_size, partial=True), "tracetui-open")

    def _report(self, fraction: float, message: str) -> None:
        with self._lock:
            self._last, progress = (fraction, message), self._progress
        if progress is not None:
            progress(fraction, message)

    def __call__(self, progress: Callable[[float, str], None]):
        with self._lock:
            self._progress, last = progress, self._last
        if last is not None:
            progress(*last)
        return self._session.result()


def cmd_open(argv: list[str]) -> int:
    args = open_parser().parse_args(argv)
    with held_until_first_frame():
        return guarded(args, lambda: _open(args))


def _open(args) -> int:
    """The sources are resolved in a thread while the app's modules are imported: a hub dataset's first
    requests wait on the network, not on the ~0.2 s of imports (pandas stays out only once they are
    resolved: `datasets`, when a layout needs it, imports it). A session the app would open in its
    worker (nothing converted or kept yet, no --filter to check first) starts opening there too."""
    specs = source_specs(args)
    if any(not Path(spec.source).expanduser().exists() for spec in specs):  # not a local path: a hub dataset
        from .data.hub_ahead import ask_ahead

        ask_ahead(specs)  # the hub's handshakes, listing and card go on while the modules below import
    from .commands.selection import filter_args
    from .data.session import all_cached, prepare
    from .data.threads import detached

    filters = filter_args(args)  # fail before any download on a malformed filter or an unknown facet
    cache_size = cache_limit(args)

    def resolve():
        sources = prepare(specs, progressive=True)
        if filters or all_cached(sources):
            return sources, None
        keep_pandas_out()
        return sources, EarlyOpen(sources, cache_size)

    resolved = detached(resolve, "tracetui-prepare")
    importlib.import_module(".ui.app", __package__)  # meanwhile
    sources, opening = resolved.result()
    return run_app(sources, args, opening)


def cmd_demo(argv: list[str]) -> int:
    args = demo_parser().parse_args(argv)
    return guarded(args, lambda: _demo(args))


def _demo(args) -> int:
    from . import demo

    rows = demo_rows(args.rows)
    if args.out is not None:
        demo.write_demo(args.out, rows=rows, seed=args.seed, progress=_print_progress)
        print(f"\nwrote {rows:,} rows to {args.out}", file=sys.stderr)
        return 0
    with held_until_first_frame():  # writing a dataset (--out) collects as usual
        return run_app(demo_sources(rows, args.seed), args)


def _print_progress(done: int, total: int) -> None:
    if sys.stderr.isatty():
        print(f"\r{done:,}/{total:,} rows", end="", file=sys.stderr, flush=True)


def _lazy(module: str):
    """A subcommand whose module is imported only when it runs, so `tracetui SOURCE` never pays for it."""

    def run(argv: list[str]) -> int:
        return importlib.import_module(module).run(argv)

    return run


COMMANDS = {
    "demo": cmd_demo,
    "stats": _lazy("tracetui.commands.stats"),
    "export": _lazy("tracetui.commands.export"),
    "labels": _lazy("tracetui.commands.labels"),
    "findings": _lazy("tracetui.commands.findings"),
    "ask": _lazy("tracetui.commands.ask"),
    "web": _lazy("tracetui.commands.web"),
    "cache": _lazy("tracetui.commands.cache"),
}
"""Subcommands: each takes its own argv and returns the exit code (see `commands.run`)."""


def set_up_process() -> None:
    """What a tracetui process sets before it does anything: huggingface_hub's telemetry off unless the
    user chose (its user agent would otherwise ask the hub for a registry of agents), the GIL's slice
    (`GIL_SLICE`)."""
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    sys.setswitchinterval(GIL_SLICE)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    set_up_process()
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:])
    return cmd_open(argv)


if __name__ == "__main__":
    sys.exit(main())
