"""The parent side of every measurement: spawn a probe (or the app in a pty), collect its figures.

Each function returns raw numbers (seconds, MB, ms lists); report.py turns them into the table.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tracetui.data import hub_hosts

from . import pagecache, terminal
from .apps import FLOOR_TEXT, NAIVE_PREFIX

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
PYCACHE = ROOT / "bench" / "out" / "pycache"
"""Where children write bytecode: this machine sets PYTHONDONTWRITEBYTECODE, which would make every start
compile tracetui (an editable install) from source; an installed package has its .pyc files."""
STORE = ROOT / "bench" / "out" / "store"
"""The children's label store and config (TRACETUI_DATA_DIR, XDG_CONFIG_HOME): emptied before every child, so
no saved view (last trial, filters) or user config changes what a run shows, and the user's own stay untouched."""
PTY_COMMANDS = {
    "tracetui": (["-m", "tracetui"], terminal.TRACETUI_MARKERS),
    "floor": (["-m", "bench.apps", "floor"], (FLOOR_TEXT,)),
    "naive": (["-m", "bench.apps", "naive"], (NAIVE_PREFIX,)),
}


SCALED_FROM = 40000
"""Datasets larger than this are copies of this one with lighter text (scale.py)."""


@dataclass(frozen=True)
class Data:
    """A generated demo dataset (hub layout) and the cache dir holding its conversion."""

    rows: int
    source: Path
    cache: Path

    def env(self, cache: Path | None = None) -> dict[str, str]:
        """A child's environment: bytecode cached (as in an installed package), an empty label store and
        config, a 256-colour terminal."""
        shutil.rmtree(STORE, ignore_errors=True)
        STORE.mkdir(parents=True)
        env = dict(
            os.environ,
            TRACETUI_CACHE_DIR=str(cache or self.cache),
            TRACETUI_DATA_DIR=str(STORE),
            XDG_CONFIG_HOME=str(STORE),
            TERM="xterm-256color",
            COLORTERM="truecolor",
            PYTHONPYCACHEPREFIX=str(PYCACHE),
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        return env

    def cache_files(self) -> list[Path]:
        return sorted(self.cache.glob("*/*.arrow"))


def probe(module: str, args: list[str], env: dict, timeout: float = 600) -> dict:
    """Run `python -m bench.<module> ARGS` and return its `BENCH` JSON line."""
    done = subprocess.run(
        [PYTHON, "-m", f"bench.{module}", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("BENCH ")]
    if done.returncode or not lines:
        raise RuntimeError(f"bench.{module} {args} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(lines[-1][len("BENCH ") :])


def prepare_data(out: Path, rows: int, reuse: bool) -> Data:
    """Write the demo dataset and convert it once (kept under `out` for --reuse). Above 40,000 rows the
    data is the 40k demo repeated with lighter text (see scale.py)."""
    from tracetui.demo import write_demo

    from .scale import derive

    data = Data(rows, out / f"demo-{rows}", out / f"cache-{rows}")
    done = out / f"demo-{rows}.json"
    if not (reuse and done.exists() and data.cache_files()):
        for path in (data.source, data.cache):
            shutil.rmtree(path, ignore_errors=True)
        done.unlink(missing_ok=True)
        if rows > SCALED_FROM:
            base = prepare_data(out, SCALED_FROM, reuse=True)
            derive(base.source, data.source, copies=rows // SCALED_FROM)
        else:
            write_demo(data.source, rows=rows, seed=0)
        probe("probes", ["first-open", str(data.source)], data.env())
        done.write_text(json.dumps({"background_after_first_open": settle(data)}))
    return data


def prepared(data: Data) -> dict:
    """What prepare_data measured when it made the data (the first open's background work)."""
    return json.loads((data.cache.parent / f"demo-{data.rows}.json").read_text())


def first_screen_headless(data: Data, kind: str) -> dict:
    """{seconds from spawn to the first painted screen, memory at that point} of a headless run."""
    began = time.monotonic()
    result = probe("probes", ["first-screen", kind, str(data.source)], data.env())
    return {"seconds": result["painted_at"] - began, "cpu": result["cpu"], "memory": result["memory"]}


def first_screen_pty(data: Data, kind: str, cold: str | None = None) -> float:
    """Seconds to the first screen in a real pty; cold: "all" (the whole page cache: drop_caches, falling
    back to evicting the cache files when that is not allowed) or "data" (evict the cache files only)."""
    if cold == "all":
        pagecache.make_cold(data.cache_files())
    if cold == "data":
        pagecache.evict(data.cache_files())
    args, markers = PTY_COMMANDS[kind]
    return terminal.first_frame([PYTHON, *args, str(data.source)], markers, data.env(), str(ROOT))


def first_open(data: Data, scratch: Path) -> dict:
    """open_session with conversion, on a fresh cache dir: {seconds, memory}."""
    cache = Path(tempfile.mkdtemp(prefix="first-open-", dir=scratch))
    try:
        return probe("probes", ["first-open", str(data.source)], data.env(cache))
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def settle(data: Data) -> float:
    """Seconds of background work after the first screen (the verifier index, on a first open)."""
    return probe("probes", ["settle", str(data.source)], data.env())["seconds"]


def memory(data: Data) -> dict:
    return probe("probes", ["memory", str(data.source)], data.env())


def interaction(data: Data, toggles: int, switches: int, largest: int) -> dict:
    args = [str(data.source), "--toggles", str(toggles), "--switches", str(switches), "--largest", str(largest)]
    return probe("interact", args, data.env())


def search_warm(data: Data, repeat: int) -> dict:
    return probe("search_speed", [str(data.source), "warm", "--repeat", str(repeat)], data.env())


def search_cold(data: Data) -> dict:
    return probe("search_speed", [str(data.source), "cold"], data.env())


def findings_speed(data: Data, repeat: int) -> dict:
    return probe("findings_speed", [str(data.source), "--repeat", str(repeat)], data.env())


# --- through a hub -------------------------------------------------------------------------------
class HubServer:
    """`tests.hub_server` in its own process (so serving does not slow the app it measures), serving
    every dataset as `bench/demo-<rows>`; `delay` seconds added to every request (a far hub). Its data
    files come from its CDN, as the hub's do: a file's first read is redirected to a signed link there."""

    def __init__(self, datasets: list[Data], delay: float = 0.0) -> None:
        repos = [f"{repo_id(d)}={d.source}" for d in datasets]
        self.delay = delay
        self.process = subprocess.Popen(
            [PYTHON, "-m", "tests.hub_server", *repos, "--delay", str(delay), "--cdn"],
            cwd=ROOT,
            text=True,
            stdout=subprocess.PIPE,
            env=dict(os.environ, PYTHONPYCACHEPREFIX=str(PYCACHE)),
        )
        self.url = self.process.stdout.readline().strip().partition("=")[2]

    def __enter__(self) -> HubServer:
        return self

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def repo_id(data: Data) -> str:
    return f"bench/demo-{data.rows}"


def dataset_bytes(data: Data) -> int:
    return sum(p.stat().st_size for p in (data.source / "data").glob("*.parquet"))


def _remote(
    data: Data, server: HubServer, mode: str, *args: str, hosts: str | None = None, before: tuple[str, ...] = ()
) -> dict:
    """A `bench.remote` child on fresh caches (a first open), but for `hosts`: what an open before it
    remembered of the hub (`hub_hosts`; its `hub_hosts` result). With `before`, an open on the same caches
    before it (`first` with those arguments), whose `files` it returns (`files_before`). Its times made
    relative to its spawn."""
    scratch = Path(tempfile.mkdtemp(prefix="remote-", dir=data.cache.parent))
    env = data.env(scratch / "cache")
    env.update(HF_ENDPOINT=server.url, HF_HOME=str(scratch / "hf"), HF_HUB_DISABLE_PROGRESS_BARS="1")
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        env.pop(name, None)
    remembered = scratch / "cache" / hub_hosts.FILE
    if hosts is not None:
        remembered.parent.mkdir(parents=True)
        remembered.write_text(hosts)
    try:
        earlier = probe("remote", ["first", repo_id(data), *before], env, timeout=3600) if before else {}
        began = time.monotonic()
        result = probe("remote", [mode, repo_id(data), *args], env, timeout=3600)
        result["files_before"] = earlier.get("files")
        result["hub_hosts"] = remembered.read_text() if remembered.exists() else None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for key in ("list_at", "conversation_at", "whole_at", "local_at"):
        if key in result:
            result[key.replace("_at", "_seconds")] = result.pop(key) - began
    return result


def remote_read(data: Data, server: HubServer, toggles: int, switches: int) -> dict:
    return _remote(data, server, "read", "--toggles", str(toggles), "--switches", str(switches))


def remote_first(data: Data, server: HubServer, hosts: str | None = None) -> dict:
    return _remote(data, server, "first", hosts=hosts)


def remote_reopen(data: Data, server: HubServer) -> dict:
    """The first screen of a second open, read remotely again: its metadata kept (the open before stayed
    until its list was whole), only the listing asked."""
    return _remote(data, server, "first", before=("--whole",))


def remote_resumed(data: Data, server: HubServer, cut_after: float) -> dict:
    """An open that goes on from one cut short `cut_after` seconds after its first conversation, the list
    still growing, until its own list is whole (`whole_seconds`; the files the one before read,
    `files_before`)."""
    return _remote(data, server, "first", "--whole", before=("--cut-after", str(cut_after)))


def remote_whole(data: Data, server: HubServer) -> dict:
    """A first open, until its list is whole (`whole_seconds`)."""
    return _remote(data, server, "first", "--whole")


def remote_download(data: Data, server: HubServer) -> dict:
    return _remote(data, server, "download")
