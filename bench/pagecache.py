"""Making the page cache cold: drop every clean page (root), else evict given files with posix_fadvise."""

from __future__ import annotations

import os
from pathlib import Path


def drop_all() -> bool:
    """`sync; echo 3 > /proc/sys/vm/drop_caches`; False when not allowed (not root, or in a container)."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def evict(files: list[Path]) -> None:
    """Drop the cached pages of `files` only (POSIX_FADV_DONTNEED; dirty pages are flushed first)."""
    for file in files:
        fd = os.open(file, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def make_cold(files: list[Path]) -> str:
    """Drop the whole page cache if allowed, else evict `files`; returns the method used."""
    if drop_all():
        return "drop_caches"
    evict(files)
    return "fadvise"
