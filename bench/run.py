"""Measure tracetui against the targets of the performance issue and write BENCHMARKS.md.

    python bench/run.py [--quick] [--rows 4000,40000,400000] [--reuse] [--no-hub] [--delays 0.1,0.3]

Generates the demo datasets under bench/out/ (kept for --reuse; 400,000 rows are the 40k demo repeated
with lighter text, see scale.py), converts them, then measures time to first screen (headless and in a
pty, warm and cold page cache, against the floor and the naive route), first open with conversion,
memory, interaction latency, full-text search and the findings index; then, through a local hub server (tests/hub_server.py)
1 ms away, the first screen, bytes read, memory, interaction and a streamed search before any download, and the
download until the switch to the local copy; then the first screen through a far hub (every request
delayed by each of `--delays` seconds) on the smallest size. Raw results go to bench/out/results.json.
A probe that fails is named and makes the run exit with status 1 (after writing what it measured).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import measure, pagecache, report

OUT = measure.ROOT / "bench" / "out"
NEAR_HUB = 0.001
"""Seconds the hub server adds to every request of the hub runs (a hub nearby, as the issue sets its
400k target); the far-hub runs add `--delays` instead."""
RESUMED_FROM = 100_000
"""Rows from which an open cut short while its list grows, then the next one, are measured (below it the
list is whole within a few seconds)."""
CUT_AFTER = 3.0
"""Seconds after its first conversation that open is cut short (400,000 rows: about half its files in)."""


def repeats(quick: bool) -> dict[str, int]:
    """How many runs of each measurement (quick: a fast check, not a figure to quote)."""
    if quick:
        return dict(
            warm=3,
            cold=1,
            naive=1,
            naive_big=0,
            open=2,
            open_big=1,
            toggles=10,
            switches=10,
            largest=3,
            search=3,
            cold_search=1,
            remote=1,
            remote_switches=5,
            downloads=1,
        )
    return dict(
        warm=7,
        cold=3,
        naive=3,
        naive_big=1,
        open=3,
        open_big=2,
        toggles=30,
        switches=30,
        largest=10,
        search=5,
        cold_search=2,
        remote=3,
        remote_switches=10,
        downloads=1,
    )


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


ERRORS: list[str] = []


def attempt(what: str, run, *args, **kwargs):
    """One measurement; a failure (the app crashed, timed out) is kept for the report, and the whole of
    what the probe said in bench/out/failures/ (its traceback), then fails the run at the end."""
    try:
        return run(*args, **kwargs)
    except (RuntimeError, TimeoutError, subprocess.TimeoutExpired) as exc:
        raised = re.findall(r"\b\w+(?:Error|Exception|Exit)\b[^│\n]*", str(exc))
        ERRORS.append(f"{what}: {(raised[-1] if raised else str(exc).splitlines()[0]).strip()[:200]}")
        kept = OUT / "failures" / f"{len(ERRORS):02d}-{re.sub(r'[^a-z0-9]+', '-', what.lower())}.txt"
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(str(exc))
        log(f"  FAILED {what} (see {kept.relative_to(OUT.parent.parent)})")
        return None


def first_screens(data: measure.Data, n: dict) -> dict:
    """Headless and pty, warm and cold; tracetui and the floor interleaved so drift hits both alike."""
    naive = n["naive"] if data.rows < 10000 else n["naive_big"] if data.rows <= measure.SCALED_FROM else 0
    out = {}
    for key, run in (("headless", measure.first_screen_headless), ("pty", measure.first_screen_pty)):
        for kind in ("tracetui", "floor"):  # warm-up: page cache, .pyc files
            attempt(f"first screen {key} {kind}", run, data, kind)
        results = {"tracetui": [], "floor": []}
        for _ in range(n["warm"]):
            for kind in results:
                results[kind].append(attempt(f"first screen {key} {kind}", run, data, kind))
        results["naive"] = [attempt(f"first screen {key} naive", run, data, "naive") for _ in range(naive)]
        out[key] = results
        log(f"  first screen {key}: done")
    pty = measure.first_screen_pty
    out["pty_cold"] = {
        kind: [
            attempt(f"first screen cold {kind}", pty, data, kind, cold="all")
            for _ in range(n["cold"] if kind != "naive" else min(naive, 1))
        ]
        for kind in ("tracetui", "floor", "naive")
    }
    out["pty_cold_data"] = {
        "tracetui": [attempt("first screen cold data", pty, data, "tracetui", cold="data") for _ in range(n["cold"])]
    }
    log("  first screen cold: done")
    return out


def measure_size(data: measure.Data, n: dict) -> dict:
    log(f"{data.rows:,} rows")
    size = {"prepared": measure.prepared(data), **first_screens(data, n)}
    opens = n["open"] if data.rows < 10000 else n["open_big"]
    size["first_open"] = [attempt("first open", measure.first_open, data, OUT) for _ in range(opens)]
    log("  first open: done")
    size["memory"] = attempt("memory", measure.memory, data)
    size["interact"] = attempt("interaction", measure.interaction, data, n["toggles"], n["switches"], n["largest"])
    log("  memory, interaction: done")
    size["search_warm"] = attempt("search warm", measure.search_warm, data, n["search"])
    size["search_cold"] = [attempt("search cold", measure.search_cold, data) for _ in range(n["cold_search"])]
    log("  search: done")
    size["findings"] = attempt("findings index", measure.findings_speed, data, n["search"])
    log("  findings index: done")
    return size


def measure_remote(data: measure.Data, server: measure.HubServer, n: dict) -> dict:
    """Through the hub server: reading before any download (fresh caches each run), then a download."""
    remote = {"dataset_bytes": measure.dataset_bytes(data)}
    remote["read"] = [
        attempt("hub read", measure.remote_read, data, server, n["toggles"], n["remote_switches"])
        for _ in range(n["remote"])
    ]
    log("  through the hub, before any download: done")
    if data.rows >= RESUMED_FROM:
        remote["whole"] = [attempt("hub whole list", measure.remote_whole, data, server)]
        remote["resumed"] = [attempt("hub resumed", measure.remote_resumed, data, server, CUT_AFTER)]
        log("  through the hub, an open cut short, then the next: done")
    remote["download"] = [attempt("hub download", measure.remote_download, data, server) for _ in range(n["downloads"])]
    log("  through the hub, download and switch: done")
    return remote


def measure_far(data: measure.Data, delays: list[float], n: dict) -> dict:
    """The first screen through a hub that adds each of `delays` seconds to every request: a first open
    ever ("first"), one after an open of another dataset from that hub ("seen": the hosts it sent reads
    to remembered), and a reopen of the same dataset ("reopen": its metadata kept); and a full-text search
    streamed from it ("search")."""
    far: dict = {"first": {}, "seen": {}, "reopen": {}, "search": {}}
    for delay in delays:
        with measure.HubServer([data], delay) as server:
            label = f"far hub {delay * 1000:.0f} ms"
            first = far["first"][str(delay)] = [
                attempt(label, measure.remote_first, data, server) for _ in range(n["remote"])
            ]
            hosts = next((run["hub_hosts"] for run in first if run and run.get("hub_hosts")), None)
            if delay and not hosts:
                ERRORS.append(f"{label}: no host of the hub remembered for the next open")
            elif delay:
                far["seen"][str(delay)] = [
                    attempt(f"{label}, seen before", measure.remote_first, data, server, hosts)
                    for _ in range(n["remote"])
                ]
                far["reopen"][str(delay)] = [
                    attempt(f"{label}, reopened", measure.remote_reopen, data, server) for _ in range(n["remote"])
                ]
                far["search"][str(delay)] = [attempt(f"{label}, search", measure.remote_read, data, server, 0, 0)]
        log(f"  through a hub {delay * 1000:.0f} ms away: done")
    return far


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="4,000 rows only, fewer runs; BENCHMARKS.md untouched")
    parser.add_argument("--rows", default="4000,40000,400000", help="comma-separated dataset sizes")
    parser.add_argument("--reuse", action="store_true", help="reuse the datasets already under bench/out/")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave BENCHMARKS.md alone")
    parser.add_argument("--no-hub", action="store_true", help="skip the figures through a local hub server")
    parser.add_argument(
        "--delays", default="0,0.1,0.3", help="seconds a far hub adds to every request, comma-separated ('' for none)"
    )
    args = parser.parse_args()
    delays = [float(x) for x in args.delays.split(",") if x.strip()]
    sizes = [4000] if args.quick else [int(x) for x in args.rows.split(",")]
    n = repeats(args.quick)
    OUT.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    results = {"machine": report.machine(), "repeats": n, "sizes": {}}
    results["machine"]["cold page cache"] = (
        "sync; echo 3 > /proc/sys/vm/drop_caches"
        if pagecache.drop_all()
        else "not allowed to drop_caches here: posix_fadvise(DONTNEED) on the cache files only"
    )
    prepared = []
    for rows in sizes:
        log(f"preparing {rows:,} rows")
        data = measure.prepare_data(OUT, rows, args.reuse)
        prepared.append(data)
        results["sizes"][str(rows)] = measure_size(data, n)
    if not args.no_hub:
        with measure.HubServer(prepared, NEAR_HUB) as server:
            for data in prepared:
                log(f"{data.rows:,} rows through the hub")
                results["sizes"][str(data.rows)]["remote"] = measure_remote(data, server, n)
        if delays:
            log(f"{prepared[0].rows:,} rows through a far hub")
            results["sizes"][str(prepared[0].rows)]["far"] = measure_far(prepared[0], delays, n)
    results["machine"]["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    results["machine"]["bench wall time"] = f"{time.monotonic() - began:.0f} s"
    results["machine"]["runs"] = ", ".join(f"{k} {v}" for k, v in n.items())
    results["errors"] = ERRORS
    (OUT / "results.json").write_text(json.dumps(results, indent=1))
    rows = report.build_rows(results)
    print(report.text_table(rows))
    print("\n".join(["", "errors:", *ERRORS]) if ERRORS else "")
    if not (args.no_write or args.quick):
        command = "python bench/run.py " + " ".join(sys.argv[1:])
        text = report.markdown(rows, results["machine"], command.strip(), ERRORS)
        report.write_markdown(measure.ROOT / "BENCHMARKS.md", text)
    fail_if_any()


def fail_if_any() -> None:
    """A probe that failed fails the run: each one named with its error on stderr, exit status 1."""
    if ERRORS:
        print(f"FAILED: {len(ERRORS)} probe(s): " + "; ".join(ERRORS), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
