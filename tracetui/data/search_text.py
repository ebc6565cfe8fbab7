"""The text a search covers, once: each distinct message new to a trial and each distinct shown verifier log.

A nested-prefix episode row repeats every message of its trial before it, so the data file holds ~10x
the text a search must read (400k demo: 5.05 GB, 0.39 GB of new messages and 0.09 GB of shown logs);
and trials repeat one another's messages (the task's instruction in each attempt at it: 19% of the 40k
demo's new message text). Beside a conversion, `search-v*.arrow` holds each distinct text once, in the
order it first appears, in batches of about BATCH_BYTES: a `text` column (one message, or one log) and
`rows`, one row of each trial the text is new in, or null where those trials are the text before's
(a run: a trial's consecutive messages, scanned as one string); the message batches first, then the
log batches (each batch says which in its custom metadata; each batch's first text has its rows). A
search maps it and scans each batch zero-copy, with no per-row-group work.

A new conversion gets it (`write`, from `dataset.converted`: ~1.5 s at 40k rows, ~3 s at 400k, +8% of
disk). A conversion made before it (or whose file is damaged) gets it on its first search
(`kept_or_built`); a dataset whose cache cannot be written is scanned from its data file (None).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
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

VERSION = 2
"""Bump when what the file holds changes (with `trial_groups.VERSION`, it is in the file's name)."""
BATCH_BYTES = 32 << 20
"""Text per batch: one search job (see `search.JOB_BYTES`)."""
SCHEMA = pa.schema([("text", pa.string()), ("rows", pa.list_(pa.int32()))])
_KIND = b"kind"


@dataclass(frozen=True, slots=True)
class SearchText:
    """The mapped batches: `messages` (the distinct messages new to trials), `logs` (the distinct shown logs)."""

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
    for older in path.parent.glob("search-v*.arrow"):  # an earlier version's, which no search reads again
        if older != path:
            older.unlink(missing_ok=True)
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
    """Offsets and rows in bounds, each batch's first text with its rows (what a scan of an overwritten file
    could read past, or lose trials by, otherwise)."""
    text, lists = batch.column(0), batch.column(1)
    data = text.buffers()[2]
    found = lists.values.to_numpy()
    if (
        not _bounded(offsets(text), len(text), 0 if data is None else data.size)
        or not _bounded(offsets(lists), len(lists), len(found))
        or (len(found) and (found.min() < 0 or found.max() >= rows))
        or (len(lists) and not lists.is_valid()[0].as_py())
    ):
        raise ValueError("search text out of bounds")


def _bounded(bounds: np.ndarray, count: int, size: int) -> bool:
    return len(bounds) == count + 1 and bounds[0] == 0 and not np.any(np.diff(bounds) < 0) and bounds[-1] <= size


def write(
    ds: Storage,
    path: Path,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> None:
    """Write `ds`'s search text to `path` whole (`paths.write_atomically`), from its data batches and
    grouping; `progress(fraction)` as it goes. Raises OSError, and InterruptedError when `cancelled()`.
    Each kind of text is read twice: once to tell which texts are alike, once to write the first of each."""
    trials = ds.group()
    owner, first_new = row_maps(trials, ds.message_counts)
    shown = shown_logs(trials, 0, ds)
    assert shown is not None  # a converted dataset is local
    stop = cancelled or (lambda: False)
    total = 4 * ds.pieces()
    done = 0

    def messages() -> Iterator[_Texts]:
        for piece in ds.scan(conversations=True, verifier=False):
            assert piece.conversations is not None  # asked for
            positions, rows = new_messages(piece.start, offsets(piece.conversations), owner, first_new)
            yield piece.conversations.values.field("content"), positions, rows

    def logs() -> Iterator[_Texts]:
        for piece in ds.scan(conversations=False, verifier=True):
            assert piece.verifier is not None  # asked for
            positions = np.flatnonzero(shown[piece.start : piece.start + len(piece.verifier)])
            yield piece.verifier, positions, piece.start + positions

    def watched(pieces: Iterator[_Texts]) -> Iterator[_Texts]:
        nonlocal done
        for piece in pieces:
            if stop():
                raise InterruptedError
            yield piece
            done += 1
            if progress is not None:
                progress(done / total)

    def gather(temporary: Path) -> None:
        meta = {b"tracetui": json.dumps({"rows": ds.num_rows}).encode()}
        with pa.OSFile(str(temporary), "wb") as sink, pa.ipc.new_file(sink, SCHEMA.with_metadata(meta)) as writer:
            for kind, texts, runs in ((b"messages", messages, True), (b"logs", logs, False)):
                batch = _Batcher(writer, {_KIND: kind}, _Distinct.of(watched(texts()), owner, runs))
                for strings, positions, _ in watched(texts()):
                    batch.add(strings, positions)
                batch.flush()

    write_atomically(path, gather)


_Texts = tuple[pa.Array, np.ndarray, np.ndarray]
"""Texts met in a data batch: its string array, the positions of the texts in it, the row of each."""


@dataclass(frozen=True, slots=True)
class _Distinct:
    """Of the texts met (in order): the first of each distinct text, which is kept; and of the kept texts,
    the rows each is new in (one per trial: kept text k's are `rows[bounds[k]:bounds[k + 1]]`), and
    whether those trials are the kept text before's (`same`: a run)."""

    first: np.ndarray
    bounds: np.ndarray
    rows: np.ndarray
    same: np.ndarray

    @classmethod
    def of(cls, texts: Iterator[_Texts], owner: np.ndarray, runs: bool) -> _Distinct:
        """Texts alike by a 128-bit BLAKE2 digest (a false match would take a billion billion texts)."""
        digests, found = [np.zeros((0, 2), dtype=np.uint64)], [np.zeros(0, dtype=np.int64)]
        for strings, positions, rows in texts:
            digests.append(_digests(strings, positions))
            found.append(rows)
        digest, row = np.concatenate(digests), np.concatenate(found)
        order = np.lexsort((digest[:, 1], digest[:, 0]))  # stable: the copies of a text in the order met
        alike = digest[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = np.any(alike[1:] != alike[:-1], axis=1)
        first = np.zeros(len(order), dtype=bool)
        first[order[new]] = True
        number = np.empty(len(order), dtype=np.int64)  # each text met: the kept text it is
        number[order] = np.argsort(np.argsort(order[new]))[np.cumsum(new) - 1]
        trial = owner[row]
        pick = np.lexsort((row, trial, number))  # of each kept text, the first row of each trial
        one = np.ones(len(pick), dtype=bool)
        one[1:] = (number[pick][1:] != number[pick][:-1]) | (trial[pick][1:] != trial[pick][:-1])
        pick = pick[one]
        kept = int(new.sum())
        bounds = np.searchsorted(number[pick], np.arange(kept + 1))
        return cls(
            first,
            bounds,
            row[pick].astype(np.int32),
            _same_trials(trial[pick], bounds) if runs else np.zeros(kept, dtype=bool),
        )

    def lists(self, numbers: np.ndarray) -> pa.ListArray:
        """The `rows` of kept texts `numbers` (consecutive), null where a run goes on (not the first)."""
        whole = ~self.same[numbers]
        whole[:1] = True
        begin = self.bounds[numbers]
        sizes = np.where(whole, self.bounds[numbers + 1] - begin, 0)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32)
        values = self.rows[spans(begin, sizes)]
        return pa.ListArray.from_arrays(pa.array(bounds), pa.array(values), mask=pa.array(~whole))


def _same_trials(trials: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Per kept text (its sorted trials `trials[bounds[k]:bounds[k + 1]]`, at least one): whether they are
    the text before's."""
    sizes = np.diff(bounds)
    text = np.repeat(np.arange(len(sizes)), sizes)
    before = np.arange(len(trials)) - sizes[text]  # the same place in the text before, when as long
    differ = trials != trials[np.maximum(before, 0)]
    same = np.zeros(len(sizes), dtype=bool)
    same[1:] = (sizes[1:] == sizes[:-1]) & (np.bincount(text, weights=differ, minlength=len(sizes))[1:] == 0)
    return same


def _digests(strings: pa.Array, positions: np.ndarray) -> np.ndarray:
    """The 16-byte BLAKE2 digests (two uint64 columns) of strings `positions` of `strings`."""
    bounds = offsets(strings)
    buffer = strings.buffers()[2]
    data = memoryview(b"" if buffer is None else buffer)
    begin, end = bounds[positions].tolist(), bounds[positions + 1].tolist()
    joined = b"".join([hashlib.blake2b(data[a:b], digest_size=16).digest() for a, b in zip(begin, end)])
    return np.frombuffer(joined, dtype=np.uint64).reshape(-1, 2)


class _Batcher:
    """Gathers the kept texts (the first of each distinct one) into batches of about BATCH_BYTES, with their
    rows, written as they fill."""

    def __init__(self, writer: pa.ipc.RecordBatchFileWriter, meta: dict[bytes, bytes], distinct: _Distinct) -> None:
        self.writer, self.meta, self.distinct = writer, meta, distinct
        self.texts: list[pa.Array] = []
        self.met = 0  # texts met
        self.written = 0  # kept texts written
        self.size = 0

    def add(self, strings: pa.Array, positions: np.ndarray) -> None:
        kept = positions[self.distinct.first[self.met : self.met + len(positions)]]
        self.met += len(positions)
        if not len(kept):
            return
        texts = strings.take(pa.array(kept))
        self.texts.append(texts)
        self.size += int(offsets(texts)[-1] - offsets(texts)[0])
        if self.size >= BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.texts:
            return
        text = pa.concat_arrays(self.texts)
        rows = self.distinct.lists(np.arange(self.written, self.written + len(text)))
        self.writer.write_batch(pa.record_batch([text, rows], schema=SCHEMA), custom_metadata=self.meta)
        self.texts, self.size = [], 0
        self.written += len(text)


def spans(begin: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The positions `begin[i]`, `begin[i] + 1`… (`counts[i]` of them), for each i, in one array."""
    return np.repeat(begin - np.cumsum(counts) + counts, counts) + np.arange(int(counts.sum()))


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
    return spans(first, counts), np.repeat(rows, counts)


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
