"""`tracetui cache`: what the cache holds (source, kind, size, last used) and its bound; `tracetui cache
clear [SOURCE…]` removes it (all of it without SOURCE; a jobs root: its jobs' summaries), except what a
running tracetui has open."""

from __future__ import annotations

import argparse
import sys
import time

from ..data.errors import SourceError
from . import Parser, cache_option, cache_size
from . import run as run_command
from .output import Record, print_table, write_csv, write_json

EPILOG = """\
examples:
  tracetui cache                          what is there, the most recently used first
  tracetui cache clear laion/a1-e2egit    remove what is kept for one dataset (a hub id or a path)
  tracetui cache clear jobs/              remove the trial summaries kept for the job folders in jobs/
  tracetui cache clear                    remove everything (the labels and notes are elsewhere and stay)
"""
SOURCE_WIDTH = 160
KINDS = {"conversion": "converted", "remote": "from the hub", "jobs": "job summaries", "unknown": "unknown"}


def parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tracetui cache",
        description="What tracetui keeps in its cache (converted datasets, text read from the hub, and the "
        "trial summaries of harbor job folders), "
        "and how to remove it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", nargs="?", choices=("clear",), help="clear: remove what the cache keeps")
    parser.add_argument("sources", nargs="*", metavar="SOURCE", help="with clear: only what is kept for SOURCE")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table", help="default: table")
    cache_option(parser)
    return parser


def run(argv: list[str]) -> int:
    return run_command(parser(), argv, _cache)


def _cache(args) -> int:
    from ..data import cache_folders
    from ..paths import cache_dir

    if args.action == "clear":
        return _clear(args.sources)
    if args.sources:
        raise SourceError(f"{args.sources[0]}: a source goes with clear (tracetui cache clear SOURCE)")
    entries = cache_folders.entries()
    records: list[Record] = [
        {
            "source": entry.source,
            "kind": KINDS.get(entry.kind, entry.kind),
            "size": entry.size,
            "last_used": time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.used)),
        }
        for entry in entries
    ]
    if args.format == "json":
        write_json(records)
    elif args.format == "csv":
        write_csv(records, ["source", "kind", "size", "last_used"])
    else:
        rows = [{**r, "size": cache_folders.size_text(int(str(r["size"])))} for r in records]
        table = [{name: str(value) for name, value in row.items()} for row in rows]
        print_table(table, empty="(the cache is empty)", width=SOURCE_WIDTH)  # a source whole: `clear` takes it
        total = sum(entry.size for entry in entries)
        limit = cache_size(args)
        bound = cache_folders.size_text(cache_folders.default_limit(total) if limit is None else limit)
        print(f"\n{cache_folders.size_text(total)} of at most {bound} (--cache-size), in {cache_dir()}")
    return 0


def _clear(sources: list[str]) -> int:
    from ..data import cache_folders

    removed, kept = [], []
    everything: list[str | None] = [None]
    for source in sources or everything:
        gone, held = cache_folders.clear(source)
        if source is not None and not gone and not held:
            print(f"tracetui: nothing in the cache for {source} (tracetui cache lists what there is)", file=sys.stderr)
        removed += gone
        kept += held
    if removed or not sources:
        freed = cache_folders.size_text(sum(entry.size for entry in removed))
        print(f"removed {len(removed)} from the cache ({freed})", file=sys.stderr)
    if kept:
        names = ", ".join(sorted({entry.source for entry in kept}))
        print(f"tracetui: kept {len(kept)} that a running tracetui has open ({names}); quit it first", file=sys.stderr)
    return 0
