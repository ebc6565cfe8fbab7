"""Freed memory goes back to the system: large blocks are mapped on their own (`heap.map_large_blocks`,
set by the command line at start), else glibc serves them from a heap that keeps them once freed; what
many threads freed is trimmed (`heap.give_back`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tracetui.data import heap

pytestmark = pytest.mark.skipif(
    heap._libc("mallopt") is None or not Path("/proc/self/status").exists(), reason="glibc on Linux only"
)

KEPT = """
import sys
from tracetui.data import heap
if sys.argv[1] == "mapped":
    heap.map_large_blocks()

def private_kb():
    return int(next(line for line in open("/proc/self/status") if line.startswith("RssAnon")).split()[1])

for size in (4 << 20, 3 << 20):  # a large block freed: glibc raises its mapping size past the next ones
    block = bytearray(size)
    del block
before, blocks, pins = private_kb(), [], []
for _ in range(100):
    blocks.append(bytearray(2 << 20))  # 2 MB, written: resident
    pins.append(bytearray(1000))  # a small block after each: the heap cannot shrink from its top
del blocks
print((private_kb() - before) // 1024)
"""


def kept_mb(mode: str) -> int:
    """MB still resident after 100 blocks of 2 MB are freed, in a fresh process."""
    done = subprocess.run([sys.executable, "-c", KEPT, mode], capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_large_blocks_freed_are_given_back_once_mapped_on_their_own():
    assert kept_mb("plain") > 100  # glibc's own way: the 200 MB freed stay in its heap
    assert kept_mb("mapped") < 20


def test_the_command_line_maps_large_blocks_from_its_start(monkeypatch):
    from tracetui import cli

    called = []
    monkeypatch.setattr(cli, "map_large_blocks", lambda: called.append(True))
    with pytest.raises(SystemExit):
        cli.main(["--version"])  # argparse prints it and exits
    assert called == [True]


def _anonymous_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("RssAnon:")).split()[1]) / 1024


def test_memory_freed_on_many_threads_is_given_back():
    """What reader threads allocate and free (response bodies, here 2 KB each) stays in the C heap until
    `give_back`: ~100 MB at 400,000 rows through the hub, held for a whole session."""
    from concurrent.futures import ThreadPoolExecutor

    survivors: list[bytes] = []

    def churn(seed: int) -> None:
        made = [bytes([seed % 251]) * 2048 for _ in range(20_000)]  # 40 MB a thread
        survivors.extend(made[::16])  # a few live on between the freed ones, as a session's data does

    heap.give_back()
    before = _anonymous_mb()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(churn, range(8)))
    held = _anonymous_mb()
    heap.give_back()
    assert held - before > 40 and _anonymous_mb() < held - 40
    assert len(survivors) == 8 * 1250
