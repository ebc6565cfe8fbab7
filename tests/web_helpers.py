"""Running `tracetui web` in a test: a hostile dataset, the server on a free port, and no process left.

The server starts in a new session, so its process group holds it and every app it launches (textual-serve
starts one per browser tab); `served` checks that the group is empty at the end, then kills what is left.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from .conftest import trial_rows, write_parquet
from .test_hostile_pty import PAYLOAD

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'
HOSTILE_MODEL = "evil/<b onmouseover=window.__pwned=3>m</b>"
HOSTILE = f"{SCRIPT}\n{IMG}\n{PAYLOAD}"
"""HTML and script, plus the pty test's escape sequences: OSC 52 clipboard write, OSC 8 link, a title."""

WAIT = 60.0
"""Seconds to wait for a server or app to start or stop (2 busy cores; nothing here measures speed)."""


def hostile_dataset(folder: Path) -> Path:
    """A plain trial (`calm-task`, listed first) and a trial whose messages, model and log are hostile.

    The folder name needs shell quoting (a space, `$`, a quote and `;`), as the session command must do.
    """
    hostile = trial_rows("hostile-task", "hostile__1", 2, "0.0", model=HOSTILE_MODEL, verifier=HOSTILE)
    for row in hostile:
        row["conversations"][0]["content"] = f"Task Description:\n{HOSTILE}"
        row["conversations"][1]["content"] = HOSTILE
    rows = trial_rows("calm-task", "calm__1", 2, "1.0") + hostile
    return write_parquet(folder / "it's $HOME; ok" / "traces.parquet", rows)


@dataclass
class Served:
    process: subprocess.Popen
    url: str  # the server's address, http://host:port (no path)
    port: int
    token: str | None  # the token of the URL it printed (None with --no-token)

    @property
    def page(self) -> str:
        """The URL it printed: the page, with its token."""
        return self.url if self.token is None else f"{self.url}/?token={self.token}"

    def stop(self, signum: int = signal.SIGINT) -> int:
        """Stop the server the way a user does (Ctrl+C by default) and return its exit code."""
        self.process.send_signal(signum)
        return self.process.wait(WAIT)


def run_web(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """`tracetui web ARGS` to completion (for the cases that must fail before serving)."""
    return subprocess.run(
        [sys.executable, "-m", "tracetui", "web", *args], capture_output=True, text=True, timeout=WAIT, **kwargs
    )


@contextmanager
def served(*args: str, cwd: Path | None = None) -> Iterator[Served]:
    """`tracetui web ARGS --port 0` (in `cwd`) until the block ends; then no process of its group may be left."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tracetui", "web", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=cwd,
    )
    try:
        line = _read_line(process)
        assert line.startswith("tracetui: serving at http://"), (
            f"no URL printed: {line!r} {process.stderr.read() if process.poll() is not None else ''}"
        )
        printed = urlsplit(line.split()[3])
        token = parse_qs(printed.query).get("token", [None])[0]
        assert printed.path == ("/" if token else ""), line
        served = Served(process, f"{printed.scheme}://{printed.netloc}", printed.port or 80, token)
        yield served
        if process.poll() is None:
            assert served.stop() == 0
        left = settle(lambda: group_members(process.pid))
        assert not left, f"processes left behind: {left}"
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(WAIT)
        process.stdout.close()
        process.stderr.close()


def _read_line(process: subprocess.Popen) -> str:
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(WAIT):
            raise AssertionError("tracetui web printed nothing")
    return process.stdout.readline()


def _processes() -> Iterator[tuple[int, str, int, int]]:
    """(pid, state, parent pid, process group) of every live process (Linux /proc); zombies count as gone."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it ended while we looked
        if fields[0] != "Z":
            yield int(stat.parent.name), fields[0], int(fields[1]), int(fields[2])


def group_members(pgid: int) -> list[int]:
    return [pid for pid, _, _, group in _processes() if group == pgid]


def children(pid: int) -> list[int]:
    return [child for child, _, parent, _ in _processes() if parent == pid]


def alive(pids: list[int]) -> list[int]:
    return [pid for pid, *_ in _processes() if pid in pids]


def settle(probe: Callable[[], list[int]]) -> list[int]:
    """Poll `probe` until it finds no process or WAIT seconds pass; return what it found last."""
    deadline = time.monotonic() + WAIT
    while (found := probe()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found
