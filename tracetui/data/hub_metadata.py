"""Reading a hub dataset's metadata (each parquet file's footer, short columns and message roles) on a
thread of its own, file by file, into a cache work folder.

A large dataset's metadata takes seconds (400,000 rows: 450 files, ~5,400 range requests, decoding on
shared cores), and its first files are enough for a first screen: `MetadataReading.wait` returns once
every file is in or, when the caller takes a partial list, once PARTIAL_AFTER seconds have passed; the
reading goes on, and `snapshot` gives what came in since, for the list to grow (`remote.RemoteDataset.grow`).
The folder is sealed and renamed into place only once every file is in (a reopen then reads nothing).
Each file's rows are written to the folder as they come in (`meta-N.arrow`, beside its footer): an open
cut short (the app quit while its list grew) leaves them, and the next one, given that folder
(`cache_folders.WorkFolder.left_for`), takes them and reads only the files after them.
"""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import Future
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..paths import write_atomically
from .compute import pc
from .convert import CONVERSATION_COLUMNS, META_COLUMNS, meta_batch, meta_table, write_meta
from .errors import SourceError
from .group_cache import write_table
from .heap import give_back
from .hub_reads import described, read_columns
from .sources import HubFiles, Progress
from .threads import detached

FILES_AHEAD = 64
"""Files whose short columns are fetched and decoded ahead of the one being gathered."""
TRIM_EVERY = 32
"""Files read between two `give_back`s while the metadata is read (each costs a few ms)."""
REPORT_EVERY = 0.1
"""Seconds between progress reports while the metadata is read (each is a message to the app, which shows
them at its own pace, or a line on the terminal)."""
PARTIAL_AFTER = 1.0
"""Seconds of reading after which the app opens on the files read so far (the list grows as the others
come in): 400,000 rows took 8-11 s before the first screen; a few thousand, well under this."""


class NotRemote(Exception):
    """The files cannot be read remotely (no list-of-messages conversation column): download them."""


@dataclass(frozen=True, slots=True)
class Layout:
    """The column names that matter in the source files."""

    conversation: str  # the conversation column
    role: str  # its role (or sharegpt `from`) leaf, e.g. conversations.list.element.role
    content: str  # its content (or `value`) leaf
    verifier: bool  # whether there is a verifier_output column
    meta: tuple[str, ...]  # the short columns present


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The metadata read so far: a table of the rows of the first `files` files (the manifest in its
    schema), and whether that is every file."""

    meta: pa.Table
    files: int
    done: bool


class MetadataReading:
    """The metadata of `hub`'s files read into `folder` on a daemon thread; `wait` for it, `snapshot` what
    came in, `stop` it. A failure (the hub stops answering, a file unlike the first) is raised by `wait`
    and `snapshot`."""

    def __init__(self, hub: HubFiles, folder: Path, progress: Progress | None = None) -> None:
        self.hub, self.folder = hub, folder
        self.report = progress or (lambda fraction, message: None)
        self.total = len(hub.paths)
        self._lock = threading.Condition()
        self._batches: list[pa.RecordBatch] = []
        self._groups: list[list[int]] = []
        self._layout: Layout | None = None
        self._rows = 0
        self._stopped = False
        self._future: Future[None] = detached(self._read, "tracetui-metadata")
        self._future.add_done_callback(lambda _: self._notify())

    @property
    def files(self) -> int:
        """Files read so far."""
        with self._lock:
            return len(self._batches)

    @property
    def rows(self) -> int:
        """Rows read so far."""
        with self._lock:
            return self._rows

    @property
    def done(self) -> bool:
        """Every file is in, or the reading failed or was stopped."""
        return self._future.done()

    def wait(self, partial_after: float | None = None) -> bool:
        """Wait until every file is in (True), or, with `partial_after`, until that many seconds have passed
        and at least one file is in (False)."""
        deadline = None if partial_after is None else time.monotonic() + partial_after
        with self._lock:
            while not self._future.done():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0 and self._batches:
                    return False
                self._lock.wait(None if left is None else max(left, 0.05))
        self._future.result()
        return True

    def snapshot(self) -> Snapshot:
        """The rows read so far, as one table (its dictionaries unified, as the kept file's)."""
        done = self._future.done()
        if done:
            self._future.result()
        with self._lock:
            batches, groups, layout, rows = list(self._batches), list(self._groups), self._layout, self._rows
        assert layout is not None  # at least one file is in: `wait` returned
        return Snapshot(meta_table(batches, _manifest(self.hub, rows, groups, layout)), len(batches), done)

    def stop(self) -> None:
        """Stop reading after the file being read (the work folder is the caller's to remove)."""
        self._stopped = True

    def _notify(self) -> None:
        with self._lock:
            self._lock.notify_all()

    def _read(self) -> None:
        """Footers, then each file's short columns and roles, from the first file the folder lacks; each
        file's footer and rows written to the folder as they come, the metadata file once every file is in."""
        hub = self.hub
        self.report(0.0, f"reading {self.total} parquet footers over the network")
        layouts: list[Layout] = []
        taken = self._take_left()
        if self._layout is not None:  # files taken: the others are to be laid out as they are
            layouts.append(self._layout)

        def columns(number: int, footer: pq.FileMetaData) -> tuple[str, ...]:
            layout = layout_of(footer, hub.paths[number])
            if layouts and layout != layouts[0]:
                raise NotRemote(f"{hub.paths[number]}: its columns differ from {hub.paths[0]}'s")
            layouts.append(layout)
            return (*layout.meta, layout.role)

        def rows_of(number: int, footer: pq.FileMetaData, table: pa.Table) -> pa.RecordBatch:
            batch = one_batch(table)
            return meta_batch(batch, _estimated_sizes(batch, footer, layouts[0]), number)

        reported = time.monotonic()
        for number, tail, footer, batch in read_columns(hub, columns, FILES_AHEAD, rows_of, taken):
            if self._stopped:
                return
            (self.folder / f"footer-{number}.bin").write_bytes(tail)
            self._keep(number, batch)
            self._add(number, footer, batch, layouts[0])
            if number % TRIM_EVERY == TRIM_EVERY - 1:
                give_back()
            if time.monotonic() - reported >= REPORT_EVERY:
                reported = time.monotonic()
                self.report(0.1 + 0.9 * (number + 1) / self.total, f"{self._rows:,} rows")
        if self._rows == 0:
            raise SourceError(f"{hub.repo_id}: the dataset has 0 rows")
        assert self._layout is not None
        write_meta(
            self.folder / "meta.arrow", list(self._batches), _manifest(hub, self._rows, self._groups, self._layout)
        )
        for number in range(self.total):  # in meta.arrow now
            (self.folder / f"meta-{number}.arrow").unlink(missing_ok=True)
        give_back()  # what the reader and decoder threads freed: else held for the whole session

    def _keep(self, number: int, batch: pa.RecordBatch) -> None:
        """File `number`'s rows in the folder, for an open that goes on from this one should it be cut short."""
        write_atomically(self.folder / f"meta-{number}.arrow", lambda path: write_table(path, pa.table(batch)))

    def _add(self, number: int, footer: pq.FileMetaData, batch: pa.RecordBatch, layout: Layout) -> None:
        """File `number` is in: its rows (and row groups) follow those of the files before it."""
        groups, start = [], self._rows
        for index in range(footer.num_row_groups):
            rows = footer.row_group(index).num_rows
            groups.append([number, index, start, rows])
            start += rows
        with self._lock:
            self._batches.append(batch)
            self._groups.extend(groups)
            self._rows = start
            self._layout = layout
            self._lock.notify_all()

    def _take_left(self) -> int:
        """The files an open cut short left in the folder (each one's footer and rows, in order from the
        first; one that does not read ends them, and it and the files after it go), taken as read; how many."""
        taken = 0
        for number in range(self.total):
            try:
                footer = pq.read_metadata(pa.BufferReader((self.folder / f"footer-{number}.bin").read_bytes()))
                with pa.OSFile(str(self.folder / f"meta-{number}.arrow")) as source:  # read in: the file goes
                    batch = one_batch(pa.ipc.open_file(source).read_all())
                # the files after the first were found laid out alike before they were written
                layout = self._layout or layout_of(footer, self.hub.paths[number])
            except (OSError, ValueError, pa.ArrowException, SourceError):
                break
            self._add(number, footer, batch, layout)
            taken += 1
        for left in self.folder.iterdir():  # what was written after them, or half written
            if _read_here(left.name) and not _taken(left.name, taken):
                left.unlink(missing_ok=True)
        return taken

    def names(self) -> list[str]:
        """The files to seal once every file is in."""
        return [*(f"footer-{number}.bin" for number in range(self.total)), "meta.arrow"]


_PER_FILE = re.compile(r"footer-(\d+)\.bin|meta-(\d+)\.arrow")
"""A file's footer and rows, as the reading writes them into its folder."""


def _read_here(name: str) -> bool:
    """Whether `name` is a file this reading writes (a footer, a file's rows, one being written)."""
    return _PER_FILE.fullmatch(name) is not None or (name.startswith(".") and name.endswith(".tmp"))


def _taken(name: str, count: int) -> bool:
    """Whether `name` is a footer or the rows of one of the first `count` files."""
    match = _PER_FILE.fullmatch(name)
    return match is not None and int(match[1] or match[2]) < count


def _manifest(hub: HubFiles, rows: int, groups: list[list[int]], layout: Layout) -> dict[str, Any]:
    return {"rows": rows, "files": list(hub.paths), "groups": groups, "layout": asdict(layout)}


def one_batch(table: pa.Table) -> pa.RecordBatch:
    batches = table.combine_chunks().to_batches()
    return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)


def layout_of(footer: pq.FileMetaData, name: str) -> Layout:
    schema, leaves = described(footer)
    conversation = next((n for n in CONVERSATION_COLUMNS if n in schema.names), None)
    if conversation is None:
        raise SourceError(f"{name}: no conversation column (looked for {', '.join(CONVERSATION_COLUMNS)})")
    mine = [leaf for leaf in leaves if leaf.startswith(conversation + ".")]
    role = next((leaf for leaf in mine if leaf.rsplit(".", 1)[-1] in ("role", "from")), None)
    content = next((leaf for leaf in mine if leaf.rsplit(".", 1)[-1] in ("content", "value")), None)
    kind = schema.field(conversation).type
    if role is None or content is None or not (pa.types.is_list(kind) or pa.types.is_large_list(kind)):
        raise NotRemote(f"{name}: the {conversation} column is not a list of messages")
    meta = tuple(n for n in META_COLUMNS if n in schema.names)
    return Layout(conversation, role, content, "verifier_output" in schema.names, meta)


def _leaf_bytes(row_group: pq.RowGroupMetaData, name: str) -> int:
    """Uncompressed bytes of a column chunk (0 without the column)."""
    for j in range(row_group.num_columns):
        chunk = row_group.column(j)
        if chunk.path_in_schema == name:
            return chunk.total_uncompressed_size
    return 0


def _estimated_sizes(batch: pa.RecordBatch, footer: pq.FileMetaData, layout: Layout) -> dict[str, np.ndarray]:
    """Message counts (exact, from the roles) and text bytes (each row group's, shared by message count)."""
    roles = batch.column(layout.conversation)
    counts = pc.fill_null(pc.list_value_length(roles), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    n_bytes = np.zeros(len(counts), dtype=np.int64)
    verifier = np.zeros(len(counts), dtype=np.int64)
    start = 0
    for index in range(footer.num_row_groups):
        row_group = footer.row_group(index)
        end = start + row_group.num_rows
        mine = counts[start:end]
        per_message = _leaf_bytes(row_group, layout.content) / max(int(mine.sum()), 1)
        n_bytes[start:end] = np.round(mine * per_message)
        verifier[start:end] = _leaf_bytes(row_group, "verifier_output") // max(row_group.num_rows, 1)
        start = end
    per_message = n_bytes / np.maximum(counts, 1)
    return {
        "n_messages": counts.astype(np.int32),
        "n_bytes": n_bytes,
        "first_bytes": np.round(np.minimum(counts, 1) * per_message).astype(np.int64),
        "verifier_bytes": verifier,
    }
