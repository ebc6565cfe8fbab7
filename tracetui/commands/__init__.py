"""Subcommands that work without the UI, each reached through `tracetui.cli.COMMANDS`, and the argument
handling they all share: sources, filters, output format, progress, one-line errors.

Light on purpose (argparse only): `tracetui SOURCE` imports it before opening the app.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable

from ..data.errors import one_line
from ..data.facet_names import ASK_PREFIX, FACET_NAMES

FILTER_HELP = (
    f"FACET=VALUE: {', '.join(FACET_NAMES)} or {ASK_PREFIX}NAME (a question's answers); a value may be "
    "a unique part of the name, e.g. model=gpt-5-mini (repeatable)"
)
SOURCE_HELP = "hub id, hf:// path, parquet / arrow / jsonl file or folder, or harbor job folders"


class Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (exit 2) instead of usage plus the error."""

    def error(self, message: str):
        print(f"{self.prog}: {one_line(message)} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def subcommand(
    prog: str,
    description: str,
    formats: tuple[str, ...] = (),
    filters: str = "",
    exclude: bool = False,
    opens: bool = True,
) -> Parser:
    """A subcommand's parser with the shared arguments: sources, --split/--revision/--config (and
    --cache-size when it `opens` them), and as asked --format (the first choice is the default),
    --filter (`filters` says what it does), --exclude."""
    parser = Parser(prog=f"tracetui {prog}", description=description)
    parser.add_argument("sources", nargs="+", metavar="SOURCE", help=f"{SOURCE_HELP}; or demo")
    source_options(parser, opens)
    if formats:
        parser.add_argument("--format", choices=formats, default=formats[0], help=f"default: {formats[0]}")
    if filters:
        filter_options(parser, filters, exclude)
    return parser


def source_options(parser: argparse.ArgumentParser, opens: bool = True) -> None:
    parser.add_argument("--split", default="train", help="dataset split (default: train)")
    parser.add_argument("--revision", help="hub revision: branch, tag or commit")
    parser.add_argument("--config", help="dataset config (subset) name")
    if opens:
        cache_option(parser)


def cache_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cache-size",
        type=_size,
        metavar="SIZE",
        help="the most disk tracetui's cache may take, e.g. 20G: converted datasets and text fetched from the "
        "hub, the least recently used evicted first (default: the config's cache_size, else half of the free "
        "disk space)",
    )


def _size(text: str) -> int:
    from ..data.cache_folders import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cache_size(args) -> int | None:
    """The cache's size bound: --cache-size, else the config file's `cache_size` (None: the default)."""
    given = getattr(args, "cache_size", None)
    if given is not None:
        return given
    from ..store.config import load_config

    return load_config()[0].cache_size


def filter_options(parser: argparse.ArgumentParser, what: str, exclude: bool = False) -> None:
    parser.add_argument("--filter", action="append", default=[], metavar="FACET=VALUE", help=f"{what}; {FILTER_HELP}")
    if exclude:
        parser.add_argument(
            "--exclude",
            action="append",
            default=[],
            metavar="FACET=VALUE",
            help="leave out the trials with this value, e.g. finding=test-tampering (repeatable)",
        )


def view_options(parser: argparse.ArgumentParser) -> None:
    """What the app opens at: `tracetui SOURCE`, `tracetui demo` and `tracetui web` take these."""
    filter_options(parser, "preselect a filter value, e.g. model=gpt-5-mini, outcome=fail or finding=false-claim")
    parser.add_argument("--trial", metavar="NAME", help="open this trial (trial_name or task) first")


def source_specs(args) -> list:
    """The command line's sources with its --split / --revision / --config (see `source_options`)."""
    from ..data.sources import SourceSpec

    return [SourceSpec(source, args.split, args.revision, args.config) for source in args.sources]


def run(parser: argparse.ArgumentParser, argv: list[str], body: Callable[[argparse.Namespace], int]) -> int:
    """Parse `argv` (adding --debug) and run `body(args)` guarded: see `guarded`."""
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    args = parser.parse_args(argv)
    return guarded(args, lambda: body(args))


def guarded(args, body: Callable[[], int]) -> int:
    """One clear line and exit code 2 for user errors, tracebacks only with --debug; a pipe closed
    early (`tracetui stats ... | head`) is not an error, as with other Unix tools. Every line is one
    line of bounded length (`one_line`), the data layer's notices too (`Notices`)."""
    from ..data.errors import SourceError

    notices = logging.getLogger("tracetui")
    if not any(isinstance(handler, Notices) for handler in notices.handlers):
        notices.addHandler(Notices())
        notices.propagate = False  # not twice through a root handler (tracetui web's)
    try:
        return body()
    except SourceError as exc:
        if args.debug:
            raise
        end_progress()
        print(f"tracetui: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # an unexpected failure still gets one line, never a wall of text
        if args.debug:
            raise
        end_progress()
        print(f"tracetui: {one_line(f'{type(exc).__name__}: {exc}')} (run with --debug for details)", file=sys.stderr)
        return 2


class Notices(logging.Handler):
    """The data layer's warnings (`cache for X was damaged: rebuilding`) as `tracetui: …` lines on stderr
    (looked up when written: inside the app, Textual captures it, and the app shows them itself)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        end_progress()
        print(f"tracetui: {one_line(record.getMessage())}", file=sys.stderr)


def print_progress(fraction: float, message: str) -> None:
    """Conversion, index and export progress on stderr, only when it is a terminal."""
    if sys.stderr.isatty():
        print(f"\r\x1b[K{fraction:4.0%} {message}", end="", file=sys.stderr, flush=True)


def end_progress() -> None:
    """Clear the progress line, so what follows starts on a clean line."""
    if sys.stderr.isatty():
        print("\r\x1b[K", end="", file=sys.stderr, flush=True)
