"""The bounded on-disk cache of row groups fetched from the hub, least recently used evicted first.

Each fetched row group is stored as an Arrow IPC file of the conversion's data schema, so reading it
back is a memory map. One bound (`--cache-size`) holds for every remote dataset together; a file in
use is touched, and eviction removes the oldest files until the total fits (never the one just
written). Another process may evict a file we have mapped: the mapping stays valid.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from ..paths import cache_dir
from .convert import DATA_SCHEMA

DEFAULT_LIMIT = 2 << 30
"""2 GiB: about twenty row groups of real traces (~100 MB of text each)."""


class GroupCache:
    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit

    @staticmethod
    def path(folder: Path, group: int) -> Path:
        return folder / "groups" / f"{group}.arrow"

    def load(self, folder: Path, group: int) -> pa.RecordBatch | None:
        """The stored row group, memory-mapped (and marked as just used), or None."""
        path = self.path(folder, group)
        try:
            os.utime(path)
            return pa.ipc.open_file(pa.memory_map(str(path))).get_batch(0)
        except (OSError, pa.ArrowInvalid):
            return None

    def store(self, folder: Path, group: int, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Keep `batch` on disk (evicting older row groups beyond the limit) and return it mapped from there."""
        path = self.path(folder, group)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(f".{os.getpid()}.tmp")
            with pa.OSFile(str(temporary), "wb") as sink, pa.ipc.new_file(sink, DATA_SCHEMA) as writer:
                writer.write_batch(batch)
            temporary.replace(path)
            self._evict(keep=path)
        except OSError:  # a full or read-only disk: the row group stays in memory only
            return batch
        return self.load(folder, group) or batch

    def _evict(self, keep: Path) -> None:
        entries = []
        for path in cache_dir().glob("*.remote/groups/*.arrow"):
            try:
                stat = path.stat()
            except OSError:
                continue
            entries.append((stat.st_mtime_ns, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.limit:
                break
            if path != keep:
                path.unlink(missing_ok=True)
                total -= size
