"""The text a search covers, once: each row's messages new to its trial and each trial's shown verifier log.

A nested-prefix episode row repeats every message of its trial before it, so the data file holds ~10x
the text a search must read (400k demo: 5.05 GB, 0.39 GB of new messages and 0.09 GB of shown logs).
Beside a conversion, `search-v*.arrow` holds that text contiguously, in row order, in batches of about
BATCH_BYTES: a `text` column (one message, or one log, each) and its dataset `row`; the message
batches first, then the log batches (each batch says which in its custom metadata). A search maps it
and scans each batch zero-copy, with no per-row-group work.

A new conversion gets it (`write`, from `dataset.converted`: ~1 s at 40k rows, ~1.5 s at 400k, +10% of
disk). A conversion made before it (or whose file is damaged) gets it on its first search
(`kept_or_built`); a dataset whose cache cannot be written is scanned from its data file (None).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..paths import write_atomically
from . import trial_groups
from .cache import read_kept
from .compute import pc

if TYPE_CHECKING:
    from .dataset import Storage
    from .trials import Trials

VERSION = 1
"""Bump when what the file holds changes (with `trial_groups.VERSION`, it is in the file's name)."""
BATCH_BYTES = 32 << 20
"""Text per batch: one search job (see `search.JOB_BYTES`)."""
SCHEMA = pa.schema([("text", pa.string()), ("row", pa.int32())])
_KIND = b"kind"


@dataclass(frozen=True, slots=True)
class SearchText:
    """The mapped batches: `messages` (each row's new messages), `logs` (each trial's shown log)."""

    messages: list[pa.RecordBatch]
    logs: list[pa.RecordBatch]


def path_of(folder: Path) -> Path:
    return folder / f"search-v{VERSION}.{trial_groups.VERSION}.arrow"


def kept_or_built(
    ds: Storage, progress: Callable[[float], None] | None = None, cancelled: Callable[[], bool] | None = None
) -> SearchText | None:
    """The search text kept beside `ds`'s conversion, written first when there is none (or it is damaged:
    one line); None when it cannot be written. Raises InterruptedError when `cancelled()` while writing."""
    path = path_of(ds.folder)
    found = read_kept(path, lambda path: load(path, ds.num_rows))
    if found is not None:
        return found
    try:
        write(ds, path, progress, cancelled)
    except InterruptedError:
        raise
    except OSError:  # a full or read-only disk: the search reads the data file
        return None
    return read_kept(path, lambda path: load(path, ds.num_rows))


def load(path: Path, rows: int) -> SearchText:
    """The file, memory-mapped; ValueError when it does not hold what `write` writes for `rows` rows."""
    reader = pa.ipc.open_file(pa.memory_map(str(path)))
    if not reader.schema.equals(SCHEMA) or json.loads(reader.schema.metadata[b"tracetui"])["rows"] != rows:
        raise ValueError(f"{path.name} is of other data")
    found = SearchText([], [])
    for index in range(reader.num_record_batches):
        batch, meta = reader.get_batch_with_custom_metadata(index)
        _check(batch, rows)
        (found.logs if meta is not None and meta.get(_KIND) == b"logs" else found.messages).append(batch)
    return found


def _check(batch: pa.RecordBatch, rows: int) -> None:
    """Offsets and rows in bounds (what a scan of an overwritten file could read past otherwise)."""
    text = batch.column(0)
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int32)[: len(text) + 1]
    data = text.buffers()[2]
    row = batch.column(1).to_numpy()
    if (
        len(offsets) != len(text) + 1
        or offsets[0] != 0
        or np.any(np.diff(offsets) < 0)
        or offsets[-1] > (0 if data is None else data.size)
        or (len(row) and (row.min() < 0 or row.max() >= rows))
    ):
        raise ValueError("search text out of bounds")


def write(
    ds: Storage,
    path: Path,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> None:
    """Write `ds`'s search text to `path` whole (`paths.write_atomically`), from its data batches and
    grouping; `progress(fraction)` as it goes. Raises OSError, and InterruptedError when `cancelled()`."""
    trials = ds.group()
    owner, first_new = row_maps(trials, ds.message_counts)
    shown = shown_logs(trials, 0, ds)
    assert shown is not None  # a converted dataset is local
    stop = cancelled or (lambda: False)
    total = 2 * ds.pieces()

    def gather(temporary: Path) -> None:
        meta = {b"tracetui": json.dumps({"rows": ds.num_rows}).encode()}
        with pa.OSFile(str(temporary), "wb") as sink, pa.ipc.new_file(sink, SCHEMA.with_metadata(meta)) as writer:
            done = 0
            for kind, logs in ((b"messages", False), (b"logs", True)):
                batch = _Batcher(writer, {_KIND: kind})
                for piece in ds.scan(conversations=not logs, verifier=logs):
                    if stop():
                        raise InterruptedError
                    if logs:
                        assert piece.verifier is not None  # asked for
                        rows = piece.start + np.flatnonzero(shown[piece.start : piece.start + len(piece.verifier)])
                        batch.add(piece.verifier.take(pa.array(rows - piece.start)), rows)
                    else:
                        assert piece.conversations is not None  # asked for
                        positions, rows = new_messages(piece.start, offsets(piece.conversations), owner, first_new)
                        batch.add(piece.conversations.values.field("content").take(pa.array(positions)), rows)
                    done += 1
                    if progress is not None:
                        progress(done / total)
                batch.flush()

    write_atomically(path, gather)


class _Batcher:
    """Gathers texts and their rows into batches of about BATCH_BYTES, written as they fill."""

    def __init__(self, writer: pa.ipc.RecordBatchFileWriter, meta: dict[bytes, bytes]) -> None:
        self.writer, self.meta = writer, meta
        self.texts: list[pa.Array] = []
        self.rows: list[np.ndarray] = []
        self.size = 0

    def add(self, texts: pa.Array, rows: np.ndarray) -> None:
        if not len(texts):
            return
        self.texts.append(texts)
        self.rows.append(rows)
        self.size += int(offsets(texts)[-1] - offsets(texts)[0])
        if self.size >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.texts:
            return
        text = pa.concat_arrays(self.texts)
        row = pa.array(np.concatenate(self.rows).astype(np.int32))
        self.writer.write_batch(pa.record_batch([text, row], schema=SCHEMA), custom_metadata=self.meta)
        self.texts, self.rows, self.size = [], [], 0


def new_messages(
    start: int, bounds: np.ndarray, owner: np.ndarray, first_new: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Of rows `start`, `start + 1`… whose messages are `bounds[i]:bounds[i + 1]` of a message array: the
    positions of the messages new to their trial in their row (from `first_new`, see `row_maps`; None:
    all are), and the row of each. The others repeat an earlier row of the same trial (a nested-prefix
    episode row holds every message before it); rows no trial owns have none."""
    rows = np.arange(start, start + len(bounds) - 1)
    begin, end = bounds[:-1], bounds[1:]
    skip = 0 if first_new is None else first_new[rows]
    first = np.where(owner[rows] >= 0, np.minimum(begin + skip, end), end)
    counts = end - first
    total = int(counts.sum())
    return np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(total), np.repeat(rows, counts)


def row_maps(trials: Trials, counts: np.ndarray, dataset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """For dataset `dataset` of `trials` (whose rows have `counts` messages): each row's trial (-1: none),
    and the first message of each row that is new to its trial.

    A longer main row extends the previous one (messages before its count are repeats); a row that is not
    longer restarts after a summarization and repeats only the first prompt, as in `trials.group_rows`.
    """
    everyone = np.arange(len(trials))
    owner = np.full(len(counts), -1, dtype=np.int64)
    first_new = np.zeros(len(counts), dtype=np.int64)
    main_owner = np.repeat(everyone, np.diff(trials.main_offsets))
    sub_owner = np.repeat(everyone, np.diff(trials.sub_offsets))
    mine = trials.dataset[main_owner] == dataset
    rows, trial = trials.main_rows[mine], main_owner[mine]
    owner[rows] = trial
    if len(rows):
        sizes = counts[rows]
        previous = np.roll(sizes, 1)
        first = np.ones(len(rows), dtype=bool)
        first[1:] = trial[1:] != trial[:-1]
        first_new[rows] = np.where(first, 0, np.where(sizes > previous, previous, 1))
    mine = trials.dataset[sub_owner] == dataset
    owner[trials.sub_rows[mine]] = sub_owner[mine]
    return owner, first_new


def shown_logs(trials: Trials, dataset: int, ds: Storage) -> np.ndarray | None:
    """Over the rows of `ds` (dataset `dataset` of `trials`): the row whose verifier log each trial shows
    (`Session.verifier_output`: its last main row with a log). Every episode row of a trial carries its
    log again; scanning the shown one finds what the verifier pane shows, once. None for a streamed
    (remote) dataset: all its rows."""
    if not ds.local:
        return None
    has_log = np.zeros(ds.num_rows, dtype=bool)
    for piece in ds.scan(conversations=False, verifier=True):
        assert piece.verifier is not None  # asked for
        has_log[piece.start : piece.start + len(piece.verifier)] = pc.is_valid(piece.verifier).to_numpy(
            zero_copy_only=False
        )
    every = np.repeat(np.arange(len(trials)), np.diff(trials.main_offsets))
    mine = trials.dataset[every] == dataset
    rows, owners = trials.main_rows[mine], every[mine]
    rows, owners = rows[has_log[rows]], owners[has_log[rows]]
    last = np.ones(len(rows), dtype=bool)
    last[:-1] = owners[1:] != owners[:-1]
    shown = np.zeros(ds.num_rows, dtype=bool)
    shown[rows[last]] = True
    return shown


def offsets(array: pa.Array) -> np.ndarray:
    """The offsets of a list, string or binary array, from its buffer (no copy, no pyarrow scalars)."""
    kind = array.type
    wide = pa.types.is_large_list(kind) or pa.types.is_large_string(kind) or pa.types.is_large_binary(kind)
    found = np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32)
    return found[array.offset : array.offset + len(array) + 1]
