"""One opened source: its metadata table and its text, both memory-mapped from the conversion cache.

Only the metadata file is touched at start; the data file's footer is read on the first conversation
request, and each request reads one batch's buffers straight from the mapping.
"""

from __future__ import annotations

import json
import threading
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa

from .sources import ResolvedSource


class Dataset:
    def __init__(self, source: ResolvedSource, folder: Path) -> None:
        self.source = source
        self.folder = folder
        self.meta: pa.Table = pa.ipc.open_file(pa.memory_map(str(folder / "meta.arrow"))).read_all()
        manifest = json.loads(self.meta.schema.metadata[b"tracetui"])
        self.num_rows: int = manifest["rows"]
        self.files: list[str] = manifest["files"]
        self._batch_starts = np.asarray(manifest["batch_starts"], dtype=np.int64)
        self._lock = threading.Lock()
        self._batches: dict[int, pa.RecordBatch] = {}

    @property
    def label(self) -> str:
        return self.source.dataset_id

    @cached_property
    def _reader(self) -> pa.ipc.RecordBatchFileReader:
        return pa.ipc.open_file(pa.memory_map(str(self.folder / "data.arrow")))

    def _locate(self, row: int) -> tuple[pa.RecordBatch, int]:
        index = int(np.searchsorted(self._batch_starts, row, side="right")) - 1
        with self._lock:
            batch = self._batches.get(index)
            if batch is None:
                batch = self._batches[index] = self._reader.get_batch(index)
        return batch, row - int(self._batch_starts[index])

    def message_count(self, row: int) -> int:
        batch, local = self._locate(row)
        offsets = batch.column(0).offsets
        return offsets[local + 1].as_py() - offsets[local].as_py()

    def messages(self, row: int, start: int = 0, stop: int | None = None) -> list[tuple[str, str]]:
        """(role, content) of messages [start, stop) of a row, read from the mapping."""
        batch, local = self._locate(row)
        column = batch.column(0)
        begin = column.offsets[local].as_py()
        end = column.offsets[local + 1].as_py()
        stop = end - begin if stop is None else min(stop, end - begin)
        if start >= stop:
            return []
        values = column.values.slice(begin + start, stop - start)
        return list(zip(values.field("role").to_pylist(), values.field("content").to_pylist()))

    def message(self, row: int, index: int) -> tuple[str, str] | None:
        found = self.messages(row, index, index + 1)
        return found[0] if found else None

    def verifier_output(self, row: int) -> str | None:
        batch, local = self._locate(row)
        return batch.column(1)[local].as_py()

    @property
    def batch_starts(self) -> np.ndarray:
        """First row of each data batch (row r is in batch `searchsorted(batch_starts, r, "right") - 1`)."""
        return self._batch_starts

    def batches(self) -> list[pa.RecordBatch]:
        """Every data batch, zero-copy from the mapping: column 0 the conversations, 1 the verifier logs."""
        with self._lock:
            return [self._reader.get_batch(i) for i in range(len(self._batch_starts))]
