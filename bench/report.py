"""Turning raw results into the table (figure, tracetui, floor, naive, ratio, target, met?) and BENCHMARKS.md."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

import numpy as np

NOTES_MARKER = "<!-- notes: kept by bench/run.py -->"


@dataclass
class Row:
    figure: str
    tracetui: str
    floor: str = "—"
    naive: str = "—"
    ratio: str = "—"
    target: str = "—"
    met: bool | None = None

    def cells(self) -> list[str]:
        met = {True: "yes", False: "**NO**", None: "—"}[self.met]
        return [self.figure, self.tracetui, self.floor, self.naive, self.ratio, self.target, met]


HEADER = ["figure", "tracetui", "floor", "naive", "ratio", "target", "met?"]


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def med(values: list[float]) -> float:
    return pct(values, 50)


def _s(x: float) -> str:
    return f"{x:.2f} s"


def _ms(x: float) -> str:
    return f"{x:.1f} ms"


def _mb(x: float) -> str:
    return f"{x:.0f} MB"


def _label(rows: int) -> str:
    return f"{rows // 1000}k"


def first_screen_rows(rows: int, size: dict) -> list[Row]:
    label = _label(rows)
    out = []
    for key, how in (("headless", "headless"), ("pty", "pty")):
        # issue 25: headless ≤ 1.5x, in a pty ≤ 2x, at 4k and 40k; 400k: within 2x (the earlier target)
        limit = 1.5 if key == "headless" and rows <= 40000 else 2.0
        runs = size[key]
        seconds = {k: [r["seconds"] if isinstance(r, dict) else r for r in v] for k, v in runs.items()}
        t, f = med(seconds["tracetui"]), med(seconds["floor"])
        naive = _s(med(seconds["naive"])) if seconds.get("naive") else "—"
        out.append(
            Row(
                f"first screen, warm, {how}, {label}",
                _s(t),
                _s(f),
                naive,
                f"{t / f:.2f}x",
                f"≤ {limit}x floor",
                t / f <= limit,
            )
        )
        if key == "headless":  # CPU seconds at the first screen: the same comparison, less hit by other load
            cpu = {k: med([r["cpu"] for r in v]) if v else None for k, v in runs.items()}
            out.append(
                Row(
                    f"↳ CPU time to first screen, headless, {label}",
                    _s(cpu["tracetui"]),
                    _s(cpu["floor"]),
                    _s(cpu["naive"]) if cpu.get("naive") else "—",
                    f"{cpu['tracetui'] / cpu['floor']:.2f}x",
                )
            )
    cold = size["pty_cold"]
    t = med(cold["tracetui"])
    naive = _s(med(cold["naive"])) if cold.get("naive") else "—"
    out.append(
        Row(
            f"first screen, cold page cache, pty, {label}",
            _s(t),
            _s(med(cold["floor"])),
            naive,
            f"{t / med(cold['floor']):.2f}x",
            "≤ 1.5 s" if rows >= 10000 else "—",
            t <= 1.5 if rows >= 10000 else None,
        )
    )
    t = med(size["pty_cold_data"]["tracetui"])
    out.append(Row(f"first screen, cold cache files only (fadvise), pty, {label}", _s(t)))
    return out


def open_rows(rows: int, size: dict) -> list[Row]:
    limit = 3.0 if rows < 10000 else 25.0
    runs = size["first_open"]
    t = med([r["seconds"] for r in runs])
    peak = max(r["memory"]["VmHWM"] for r in runs)
    private = max(r["private_peak"] for r in runs)
    return [
        Row(
            f"first open incl. conversion, {_label(rows)} (peak RSS {_mb(peak)}, of it private {_mb(private)}: "
            "the rest the pages of the files it writes)",
            _s(t),
            target=f"≤ {limit:.0f} s",
            met=t <= limit,
        ),
        Row(
            f"↳ then background work after the first screen (verifier index), {_label(rows)}",
            _s(size["prepared"]["background_after_first_open"]),
        ),
    ]


def memory_rows(rows: int, size: dict) -> list[Row]:
    label, memory = _label(rows), size["memory"]
    first = {k: med([r["memory"]["VmHWM"] for r in v]) for k, v in size["headless"].items() if v}
    out = [
        Row(
            f"peak RSS at first screen, {label}",
            _mb(memory["first_screen"]["VmHWM"]),
            _mb(first["floor"]),
            _mb(first["naive"]) if "naive" in first else "—",
            f"{memory['first_screen']['VmHWM'] / first['floor']:.2f}x",
            "≤ 250 MB",
            memory["first_screen"]["VmHWM"] <= 250,
        )
    ]
    m = memory["largest_10"]
    out.append(
        Row(f"peak RSS after the 10 largest trials, {label}", _mb(m["VmHWM"]), target="≤ 250 MB", met=m["VmHWM"] <= 250)
    )
    out.append(Row(f"↳ private (RssAnon) after the 10 largest, {label}", _mb(m["RssAnon"])))
    m = memory["search"]
    out.append(Row(f"peak RSS after a full-text search, {label} (file pages: {_mb(m['RssFile'])})", _mb(m["VmHWM"])))
    out.append(
        Row(
            f"↳ private (RssAnon) after the search, {label}",
            _mb(m["RssAnon"]),
            target="≤ 250 MB",
            met=m["RssAnon"] <= 250,
        )
    )
    return out


def _latency_row(what: str, ms: list[float], limit: float | None) -> Row:
    """`what`, p50 / p95 of `ms` (n), against p95 ≤ `limit` ms (None: no target at this size)."""
    return Row(
        f"{what} (n={len(ms)})",
        f"{med(ms):.1f} / {pct(ms, 95):.1f} ms",
        target="—" if limit is None else f"p95 ≤ {limit:g} ms",
        met=None if limit is None else pct(ms, 95) <= limit,
    )


def _toggle_limit(rows: int) -> float | None:
    """The toggle target (p95 ms), judged from 10k rows on: in a 4k dataset a toggle often leaves a list
    shorter than its pane, which gives its room to the conversation, a layout of the screen by design
    (`ReadingPanes`), locally and through the hub alike."""
    return 33 if rows >= 10000 else None


def interaction_rows(rows: int, size: dict) -> list[Row]:
    label, r = _label(rows), size["interact"]
    out = [_latency_row(f"facet toggle → list repainted, p50 / p95, {label}", r["toggle_ms"], _toggle_limit(rows))]
    if r.get("toggle_conversation_ms"):
        what = f"↳ then the trial it moved to painted, p50 / p95, {label}"
        out.append(_latency_row(what, r["toggle_conversation_ms"], 50))
    for key, what in (("switch_ms", "typical"), ("switch_largest_ms", "largest")):
        if what == "largest":
            what = f"largest: {r['largest']['messages']} msgs, {r['largest']['bytes'] / 1e6:.1f} MB"
        out.append(_latency_row(f"trial switch → conversation painted, {what}, p50 / p95, {label}", r[key], 50))
    pages = r["scroll_ms"]
    out.append(
        Row(
            f"scroll largest trial end to end, per page p50 / p99, {label} ({len(pages)} pages)",
            f"{med(pages):.1f} / {pct(pages, 99):.1f} ms",
            target="≤ 17 / ≤ 50 ms",
            met=med(pages) <= 17 and pct(pages, 99) <= 50,
        )
    )
    for name, times in r.get("search_first_match_ms", {}).items():
        out.append(
            Row(
                f"search ({name}) → its first trial at the first match, p50 / max, {label} (n={len(times)})",
                f"{med(times):.0f} / {max(times):.0f} ms",
                target="≤ 500 ms",
                met=max(times) <= 500,
            )
        )
    longest = max(r["scroll_render"]["render_line"]["max_ms"], r["largest_build"]["message_blocks"]["max_ms"])
    out.append(
        Row(
            f"longest single render_line / message_blocks call, {label}",
            _ms(longest),
            target="≤ 50 ms",
            met=longest <= 50,
        )
    )
    return out


def search_rows(rows: int, size: dict) -> list[Row]:
    label, warm = _label(rows), size["search_warm"]
    gb = warm["bytes"] / 1e9
    out = []
    limits = {
        "literal, common": 4,
        "literal, rare": 4,
        "literal, worst (leading space)": 2,
        "ignore case, common": 1.5,
        "ignore case, rare": 1.5,
    }
    for name, result in warm["needles"].items():
        speed = gb / med(result["seconds"])
        limit = limits.get(name)
        out.append(
            Row(
                f"search, warm, {name}, {label} ({gb:.2f} GB)",
                f"{speed:.1f} GB/s",
                target=f"≥ {limit} GB/s" if limit else "—",
                met=speed >= limit if limit else None,
            )
        )
    out.append(Row(f"first search of a process, warm page cache, {label}", f"{warm['first_seconds'] / gb:.2f} s/GB"))
    cold = med([r["seconds"] for r in size["search_cold"]]) / gb
    out.append(
        Row(
            f"first search of a session, cold page cache, {label}",
            f"{cold:.2f} s/GB",
            target="≤ 1.5 s/GB",
            met=cold <= 1.5,
        )
    )
    return out


def findings_rows(rows: int, size: dict) -> list[Row]:
    """The findings index against one literal search pass of the same dataset, measured in turn."""
    label, result = _label(rows), size["findings"]
    build, search = med(result["build"]), med(result["search"])
    ratio = med([b / s for b, s in zip(result["build"], result["search"])])
    return [
        Row(
            f"findings index, {result['trials']:,} trials (vs a literal search pass: {_s(search)}), {label}",
            _s(build),
            ratio=f"{ratio:.2f}x",
            target="≤ 2x search",
            met=ratio <= 2,
        ),
        Row(f"↳ first findings index of a process, {label}", _s(result["first_build"])),
    ]


def hub_rows(rows: int, size: dict) -> list[Row]:
    """Through the hub server, on fresh caches: before any download, then the download and switch."""
    label, remote = _label(rows), size["remote"]
    total = remote["dataset_bytes"]
    reads, downloads = remote["read"], remote["download"]
    share = lambda key: f"{med([r[key] for r in reads]) / 1e6:.1f} MB, {med([r[key] for r in reads]) / total:.1%}"  # noqa: E731
    toggle = [ms for r in reads for ms in r["toggle_ms"]]
    switch = [ms for r in reads for ms in r["switch_ms"]]
    search = reads[0]["search"]
    listed = med([r["list_seconds"] for r in reads])
    partial = [r["listed_rows"] for r in reads if r.get("listed_rows")]
    files = f"a list of the first {med(partial):,.0f} rows, growing" if partial else "the whole list"
    out = [
        Row(
            f"hub: first screen ({files}, facets), no download yet, {label} (read {share('list_bytes')})",
            _s(listed),
            target="≤ 5 s" if rows >= 400_000 else "—",
            met=listed <= 5 if rows >= 400_000 else None,
        ),
        Row(
            f"hub: ↳ first conversation painted, {label} (read {share('conversation_bytes')})",
            _s(med([r["conversation_seconds"] for r in reads])),
            target="≤ 5% of the bytes",
            met=med([r["conversation_bytes"] for r in reads]) <= 0.05 * total,
        ),
        Row(
            f"hub: ↳ the whole list in (every file's metadata), {label} (read {share('whole_bytes')})",
            _s(med([r["whole_seconds"] for r in reads])),
        ),
        Row(
            f"hub: peak RSS at first screen, {label}",
            _mb(med([r["list_memory"]["VmHWM"] for r in reads])),
            target="≤ 250 MB",
            met=med([r["list_memory"]["VmHWM"] for r in reads]) <= 250,
        ),
        _latency_row(f"hub: facet toggle → list repainted, p50 / p95, {label}", toggle, _toggle_limit(rows)),
        Row(
            f"hub: switch to a trial not fetched yet → painted, p50 / p95, {label} (n={len(switch)})",
            f"{med(switch):.0f} / {pct(switch, 95):.0f} ms",
        ),
        Row(
            f"hub: search streamed from the hub, {label} ({search['scanned'] / 1e9:.2f} GB of text, "
            f"{search['served'] / 1e6:.0f} MB read)",
            f"{search['scanned'] / 1e9 / search['seconds']:.2f} GB/s",
        ),
    ]
    whole, resumed = [r for r in remote.get("whole", []) if r], [r for r in remote.get("resumed", []) if r]
    if whole and resumed:
        done, total_files = resumed[0]["files_before"]
        out.append(
            Row(
                f"hub: ↳ an open cut short with {done} of {total_files} files read: the next one's whole list "
                f"(a first open's: {_s(med([r['whole_seconds'] for r in whole]))}), {label}",
                _s(med([r["whole_seconds"] for r in resumed])),
            )
        )
    for run in downloads[:1]:
        out.append(
            Row(
                f"hub: first screen → download + conversion → local copy, {label} ({run['downloaded'] / 1e6:.0f} MB)",
                _s(run["local_seconds"] - run["list_seconds"]),
            )
        )
    return out


def far_rows(rows: int, size: dict) -> list[Row]:
    """The first screen through a hub that delays every request, against the local first screen: a first
    open ever, then (indented) one after an open from that hub, which remembered where it sent reads, and
    a reopen of the same dataset (its metadata kept: only the listing is asked for)."""
    label = _label(rows)
    local = med([r["seconds"] for r in size["headless"]["tracetui"]])
    out = []
    for delay, runs in size["far"]["first"].items():
        ms = float(delay) * 1000
        kinds = (  # the targets are the first open's: the others show what changes with what is kept
            (f"far hub, +{ms:.0f} ms a request", f"far hub, +{ms:.0f} ms", runs, True),
            (
                "↳ a hub seen before, its CDN connected to at once",
                "↳ seen before",
                size["far"]["seen"].get(delay),
                False,
            ),
            ("↳ a reopen, the metadata kept", "↳ reopened", size["far"]["reopen"].get(delay), False),
        )
        for what, short, measured, judged in kinds:
            if not measured:
                continue
            listed = med([r["list_seconds"] for r in measured])
            shown = med([r["conversation_seconds"] for r in measured])
            trips = max(r["conversation_in_a_row"] for r in measured)
            target, met = ("≤ local + 0.6 s", shown <= local + 0.6) if judged and ms == 100 else ("—", None)
            out.append(
                Row(
                    f"{what}: list / first conversation, {label} (local {local:.2f} s)",
                    f"{listed:.2f} / {shown:.2f} s",
                    target=target,
                    met=met,
                )
            )
            if ms:  # without latency, requests of one round need not overlap: the count means nothing
                out.append(
                    Row(
                        f"{short}: round trips in a row (at most), list / first conversation, {label}",
                        f"{max(r['list_in_a_row'] for r in measured)} / {trips}",
                        target="≤ 5" if judged else "—",
                        met=trips <= 5 if judged else None,
                    )
                )
        for run in [r for r in size["far"].get("search", {}).get(delay, []) if r][:1]:
            search = run["search"]
            out.append(
                Row(
                    f"far hub, +{ms:.0f} ms: search streamed from the hub, {label} "
                    f"({search['scanned'] / 1e9:.2f} GB of text, {search['served'] / 1e6:.0f} MB read)",
                    f"{search['seconds']:.2f} s ({search['scanned'] / 1e9 / search['seconds']:.2f} GB/s)",
                )
            )
    return out


def _ok(size: dict) -> dict:
    """The size's results without failed runs (None): lists lose them, failed single results stay None."""

    def clean(value):
        if isinstance(value, list):
            return [clean(v) for v in value if v is not None]
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    return clean(size)


def scale_rows(results: dict) -> list[Row]:
    """Search at 400,000 rows against 40,000 rows of about the same text: each needle's time as a ratio."""
    sizes = {int(rows): _ok(size) for rows, size in results["sizes"].items()}
    if 40000 not in sizes or 400000 not in sizes:
        return []
    small, large = (sizes[rows]["search_warm"]["needles"] for rows in (40000, 400000))
    out = []
    for name in small.keys() & large.keys():
        a, b = med(small[name]["seconds"]), med(large[name]["seconds"])
        out.append(
            Row(
                f"search, {name}: 400k rows against 40k rows ({_s(b)} / {_s(a)})",
                f"{b / a:.2f}x",
                target="≤ 1.5x",
                met=b / a <= 1.5,
            )
        )
    return sorted(out, key=lambda row: row.figure)


def build_rows(results: dict) -> list[Row]:
    out = []
    for rows_text, size in results["sizes"].items():
        rows = int(rows_text)
        makers = [first_screen_rows, open_rows, memory_rows, interaction_rows, search_rows, findings_rows]
        for make in makers + ([hub_rows] if "remote" in size else []) + ([far_rows] if "far" in size else []):
            try:
                out.extend(make(rows, _ok(size)))
            except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError):
                name = make.__name__.removesuffix("_rows").replace("_", " ")
                out.append(Row(f"{name}, {_label(rows)}", "failed (see errors)", met=False))
    try:
        out.extend(scale_rows(results))
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        out.append(Row("search, 400k rows against 40k rows", "failed (see errors)", met=False))
    return out


def machine() -> dict:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    memory_kb = int(Path("/proc/meminfo").read_text().split()[1])
    return {
        "nproc": os.cpu_count(),
        "memory": f"{memory_kb / 1024**2:.1f} GiB",
        "cpu": cpu,
        "python": platform.python_version(),
        "textual": version("textual"),
        "pyarrow": version("pyarrow"),
        "pandas": version("pandas"),
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _git("rev-parse", "--short", "HEAD") + " + uncommitted changes" * bool(_git("status", "--porcelain")),
    }


def _git(*args: str) -> str:
    """Read-only git queries (the commit the figures belong to)."""
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=Path(__file__).parent).stdout.strip()


def text_table(rows: list[Row]) -> str:
    cells = [HEADER] + [r.cells() for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(HEADER))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths)) for line in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown(rows: list[Row], info: dict, command: str, errors: list[str]) -> str:
    head = "| " + " | ".join(HEADER) + " |\n|" + "---|" * len(HEADER) + "\n"
    body = "".join("| " + " | ".join(r.cells()) + " |\n" for r in rows)
    machine_lines = "".join(f"- {k}: {v}\n" for k, v in info.items())
    missed = sum(r.met is False for r in rows)
    failures = "".join(f"- {e}\n" for e in errors)
    failures = f"\nMeasurements that failed:\n\n{failures}" if errors else ""
    return f"""# Benchmarks

Written by `{command}` (see `bench/`): medians of several runs, p95/p99 where shown. Times to first screen
run from before the process is spawned to the first frame that shows the trial list and the first
conversation (headless: the frame Textual composes, timed inside the app; pty: the first pyte screen that
shows both). The floor is a bare Textual app that imports pyarrow and paints one Static; the naive route
is `pandas.read_parquet` of all shards, then the first row in a Static. "hub" rows are read through a
local stand-in hub that adds 1 ms to every request and, as the hub does, redirects a data file's reads
to its CDN; "far hub" rows, the time they name. {missed} target(s) missed.

{machine_lines}
{head}{body}{failures}"""


def write_markdown(path: Path, text: str) -> None:
    """Replace the generated part of `path`, keeping anything written below NOTES_MARKER."""
    notes = ""
    if path.exists() and NOTES_MARKER in path.read_text():
        notes = path.read_text().split(NOTES_MARKER, 1)[1]
    path.write_text(text + "\n" + NOTES_MARKER + (notes or "\n"))
    print(f"wrote {path}", file=sys.stderr)
