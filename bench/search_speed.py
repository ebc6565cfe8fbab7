"""Full-text search throughput (a child process of bench/run.py; prints one `BENCH` line).

    python -m bench.search_speed DATA warm [--repeat 5]   # first search of the process, then each needle
    python -m bench.search_speed DATA cold                # make the page cache cold, then the first search

Throughput is `bytes_scanned / seconds` of `tracetui.data.search.search`: the text it covers, every
message content and verifier log of every row (the repeats of nested-prefix rows too), though it reads
each trial's messages once, from the search text beside the conversion. `cpu` is the process's CPU
seconds of each run (both threads): what a loaded machine changes least.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .pagecache import make_cold
from .probes import COMMON_NEEDLE, report

NEEDLES = {
    "literal, common": (COMMON_NEEDLE, {}),
    "literal, rare": ("zyzzyva", {}),
    "literal, worst (leading space)": (" zqxj", {}),
    "ignore case, common": (COMMON_NEEDLE.upper(), {"ignore_case": True}),
    "ignore case, rare": ("zyzzyva", {"ignore_case": True}),
    "regex": (r"exit code \d+", {"regex": True}),
}


def cli_session(data: Path):
    """The session of DATA, opened as the command line opens it (`apps.cli_sources`)."""
    from tracetui.data.session import open_session

    from .apps import cli_sources

    return open_session(cli_sources(data))


def warm(data: Path, repeat: int) -> dict:
    from tracetui.data.search import search

    session = cli_session(data)
    first = search(session, COMMON_NEEDLE)
    out = {"bytes": first.bytes_scanned, "first_seconds": first.seconds, "needles": {}}
    for name, (pattern, options) in NEEDLES.items():
        runs, cpu = [], []
        for _ in range(repeat):
            began = time.process_time()
            runs.append(search(session, pattern, **options))
            cpu.append(time.process_time() - began)
        out["needles"][name] = {"seconds": [r.seconds for r in runs], "cpu": cpu, "trials": runs[0].matched_trials}
    return out


def cold(data: Path) -> dict:
    from tracetui.data.search import search
    from tracetui.data.search_text import path_of

    session = cli_session(data)
    make_cold([path for ds in session.datasets for path in (ds.folder / "data.arrow", path_of(ds.folder))])
    began = time.perf_counter()
    found = search(session, COMMON_NEEDLE)
    return {"bytes": found.bytes_scanned, "seconds": time.perf_counter() - began}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data", type=Path)
    parser.add_argument("mode", choices=("warm", "cold"))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    report(**(warm(args.data, args.repeat) if args.mode == "warm" else cold(args.data)))


if __name__ == "__main__":
    main()
