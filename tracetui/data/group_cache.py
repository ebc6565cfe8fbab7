"""Row groups fetched from the hub, kept on disk so that a trial read once opens at once next time.

Each fetched row group is stored as an Arrow IPC file of the conversion's data schema in its remote
dataset's folder, so reading it back is a memory map. They count towards the cache's one size bound
(`cache_folders`: `--cache-size`), as the least recently used things it evicts first: a file in use is
touched, and the file just written is never the one evicted. Another process may evict a file we have
mapped: the mapping stays valid.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from ..paths import write_atomically
from .cache import read_kept
from .cache_folders import trim
from .convert import DATA_SCHEMA


class GroupCache:
    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        """The cache's size bound (None: `cache_folders.default_limit`)."""

    @staticmethod
    def path(folder: Path, group: int) -> Path:
        return folder / "groups" / f"{group}.arrow"

    def load(self, folder: Path, group: int) -> pa.RecordBatch | None:
        """The stored row group, memory-mapped (and marked as just used), or None (a damaged one is removed)."""

        def mapped(path: Path) -> pa.RecordBatch:
            os.utime(path)
            return pa.ipc.open_file(pa.memory_map(str(path))).get_batch(0)

        return read_kept(self.path(folder, group), mapped)

    def store(self, folder: Path, group: int, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Keep `batch` on disk (evicting what the bound does not leave room for) and return it mapped from there."""
        path = self.path(folder, group)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(
                path, lambda temporary: write_table(temporary, pa.Table.from_batches([batch], DATA_SCHEMA))
            )
            trim(self.limit, keep=path)
        except OSError:  # a full or read-only disk: the row group stays in memory only
            return batch
        return self.load(folder, group) or batch


def write_table(path: Path, table: pa.Table) -> None:
    """`table` as an Arrow IPC file (the format that maps one batch without reading the others)."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
