"""A hub dataset read over HTTP before (or instead of) downloading it: metadata first, text on demand.

Opening reads each parquet file's footer and, with range requests, only the short columns (model, task,
result, trial name, …) and the message roles, whose list lengths give each row's message count: a few
percent of the bytes, enough for the trial list, facets and stats. A short column's chunk whose
statistics show one value in every row is not read at all (`hub_reads.plan`). A trial's conversations and verifier
log are the row groups that hold its rows, fetched when it is shown (`load`, off the UI thread),
normalized as the conversion would, shown from memory at once and kept in the bounded on-disk
`GroupCache` on a thread of its own (writing ~10 MB is not what a first conversation waits for). The metadata and
footers are kept as well, so reopening in remote mode reads nothing before the first screen.

Text sizes (the trial list's size, the stats' text histogram) are estimated from the footers until the
local copy replaces this dataset.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..paths import write_atomically
from .cache import read_kept
from .cache_folders import kept_or_made, release, remove
from .compute import pc
from .convert import CONVERSATION_COLUMNS, META_COLUMNS, data_batch, meta_batch, write_meta
from .dataset import NotFetched, Piece, Storage
from .errors import SourceError, Unreachable
from .group_cache import GroupCache, write_table
from .heap import give_back
from .hub_reads import described, read_columns, read_row_group
from .lru import LRU
from .sources import HubFiles, Progress, ResolvedSource
from .threads import ahead, parallel
from .utf8 import valid_utf8

LOADED = 64
"""Row groups kept mapped at once per dataset (the ones used last)."""
FILES_AHEAD = 64
"""Files whose short columns are fetched and decoded ahead of the one being gathered."""
TRIM_EVERY = 32
"""Files read between two `give_back`s while the metadata is read (each costs a few ms)."""
REPORT_EVERY = 0.1
"""Seconds between progress reports while the metadata is read (each is a message to the app, which shows
them at its own pace, or a line on the terminal)."""
READ_AHEAD = 3
"""Row groups a streamed scan fetches ahead of the one being searched."""


class NotRemote(Exception):
    """The files cannot be read remotely (no list-of-messages conversation column): download them."""


@dataclass(frozen=True, slots=True)
class Group:
    """One parquet row group: where it is, and which dataset rows it holds."""

    file: int
    index: int
    start: int
    rows: int


@dataclass(frozen=True, slots=True)
class Layout:
    """The column names that matter in the source files."""

    conversation: str  # the conversation column
    role: str  # its role (or sharegpt `from`) leaf, e.g. conversations.list.element.role
    content: str  # its content (or `value`) leaf
    verifier: bool  # whether there is a verifier_output column
    meta: tuple[str, ...]  # the short columns present


class RemoteDataset(Storage):
    local = False

    def __init__(self, source: ResolvedSource, hub_files: HubFiles, folder: Path, cache: GroupCache) -> None:
        self.source = source
        self.hub_files = hub_files
        self.folder = folder
        self.cache = cache
        self.meta = pa.ipc.open_file(pa.memory_map(str(folder / "meta.arrow"))).read_all()
        manifest = json.loads(self.meta.schema.metadata[b"tracetui"])
        self.num_rows = manifest["rows"]
        self.files = [str(file) for file in source.files]  # where the download puts them
        self.groups = [Group(*g) for g in manifest["groups"]]
        self.layout = Layout(**{**manifest["layout"], "meta": tuple(manifest["layout"]["meta"])})
        self._starts = np.asarray([g.start for g in self.groups], dtype=np.int64)
        self._footers: dict[int, pq.FileMetaData] = {}
        self._loaded: LRU[int, pa.RecordBatch] = LRU(LOADED)  # the UI thread maps cached row groups too
        self._logs: tuple[np.ndarray, pa.Array] | None = None  # (rows, their verifier logs), see keep_verifier_logs
        self._fetching: dict[int, threading.Lock] = {}  # one fetch of each row group at a time
        self._locks = threading.Lock()  # `_fetching` changes
        self._keeper = ThreadPoolExecutor(1, "tracetui-keep")  # fetched row groups to disk, in order

    @classmethod
    def open(
        cls, source: ResolvedSource, hub: HubFiles, folder: Path, limit: int | None, progress: Progress | None = None
    ) -> RemoteDataset:
        """Open `source` (its `hub` files) remotely from `folder`, reading its metadata over HTTP into it
        unless a previous open kept it; `limit` bounds the cache (see `cache_folders`).

        Raises NotRemote when its files cannot be read remotely, SourceError when the hub stops answering.
        """

        def read(work: Path) -> list[str]:
            try:
                return _read_metadata(hub, work, progress)
            except Unreachable as exc:
                raise SourceError(
                    f"{source.dataset_id}: the hub stopped answering while reading the metadata ({exc})"
                ) from None

        kept_or_made(folder, source.dataset_id, source.origin, "remote", read, limit)
        return cls(source, hub, folder, GroupCache(limit))

    # --- row groups --------------------------------------------------------------------------
    def _group_of(self, row: int) -> int:
        return int(np.searchsorted(self._starts, row, side="right")) - 1

    def _groups_of(self, rows: Iterable[int]) -> list[int]:
        return sorted({self._group_of(int(row)) for row in rows})

    def _locate(self, row: int) -> tuple[pa.RecordBatch, int]:
        group = self._group_of(row)
        return self._group(group, fetch=False), row - self.groups[group].start

    def _group(self, group: int, fetch: bool) -> pa.RecordBatch:
        """Row group `group` from memory or the disk cache; else fetched when `fetch`, else NotFetched."""
        batch = self._loaded.get(group)
        if batch is not None:
            return batch
        with self._locks:
            fetching = self._fetching.setdefault(group, threading.Lock())
        with fetching:
            batch = self._loaded.get(group) or self.cache.load(self.folder, group)
            if batch is None:
                if not fetch:
                    raise NotFetched(f"{self.source.dataset_id}: row group {group} is not fetched yet")
                batch = self._fetch(group)
                with contextlib.suppress(RuntimeError):  # discarded meanwhile: nothing more is kept
                    self._keeper.submit(self._keep, group, batch)
            self._loaded.put(group, batch)
        return batch

    def _keep(self, group: int, batch: pa.RecordBatch) -> None:
        """Store a fetched row group on disk, then use its mapping in place of the copy in memory."""
        self._loaded.swap(group, batch, self.cache.store(self.folder, group, batch))

    def kept(self) -> None:
        """Wait until the row groups fetched so far are on disk (kept in the cache, or could not be)."""
        with contextlib.suppress(RuntimeError):  # discarded: nothing is being kept
            self._keeper.submit(lambda: None).result()

    def ready(self, rows: Iterable[int]) -> bool:
        """Whether every row group of `rows` is at hand (mapping those the disk cache holds)."""
        for group in self._groups_of(rows):
            if group not in self._loaded:
                batch = self.cache.load(self.folder, group)
                if batch is None:
                    return False
                self._loaded.put(group, batch)
        return True

    def fetch(self, rows: Iterable[int]) -> None:
        """Fetch the row groups of `rows` that are not at hand, all at once (one round trip to a far hub,
        not one per row group). Raises Unreachable."""
        parallel(lambda group: self._group(group, fetch=True), self._groups_of(rows))

    def keep_verifier_logs(
        self,
        rows: np.ndarray,
        progress: Callable[[float], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        """Stream the verifier column once (only it: it is small) and keep the logs of `rows`, on disk
        for the next open; `verifier_output` of those rows then needs no row group. The rows that have no
        log are kept too (as none), so that a trial whose rows have none is answered without a fetch."""
        rows = np.unique(np.asarray(rows, dtype=np.int64))
        path = self.folder / "verifier-logs.arrow"
        kept = read_kept(path, lambda path: pa.ipc.open_file(pa.memory_map(str(path))).read_all())
        if (
            kept is not None
            and (kept.schema.metadata or {}).get(b"none") == b"kept"
            and np.isin(rows, kept.column("row").to_numpy()).all()
        ):
            self._logs = (kept.column("row").to_numpy(), kept.column("log").combine_chunks())
            return
        logs, chosen = [], []
        for number, piece in enumerate(self.scan(conversations=False, verifier=True, cancelled=cancelled)):
            found = piece.verifier
            assert found is not None  # asked for
            within = rows[np.searchsorted(rows, piece.start) : np.searchsorted(rows, piece.start + len(found))]
            empty = np.flatnonzero(pc.is_null(found).to_numpy(zero_copy_only=False)) + piece.start
            mine = np.union1d(within, empty)
            logs.append(found.take(pa.array(mine - piece.start)).cast(pa.string()))
            chosen.append(mine)
            if cancelled is not None and cancelled():  # the caller may be gone: no progress to report
                raise InterruptedError("cancelled")
            if progress is not None:
                progress((number + 1) / len(self.groups))
        table = pa.table(
            {
                "row": np.concatenate(chosen) if chosen else np.zeros(0, dtype=np.int64),
                "log": pa.concat_arrays(logs) if logs else pa.array([], pa.string()),
            }
        ).replace_schema_metadata({"none": "kept"})
        with contextlib.suppress(OSError):  # else kept in memory only
            write_atomically(path, lambda temporary: write_table(temporary, table))
        self._logs = (table.column("row").to_numpy(), table.column("log").combine_chunks())

    def verifier_output(self, row: int) -> str | None:
        if self._logs is not None:
            rows, logs = self._logs
            position = int(np.searchsorted(rows, row))
            if position < len(rows) and rows[position] == row:
                return logs[position].as_py()
        return super().verifier_output(row)

    def discard(self) -> None:
        """The local copy replaces this dataset: its metadata, footers and row groups are not needed any more
        (mapped files stay readable until unmapped), unless another process reads them too."""
        self._keeper.shutdown(wait=True)  # no row group written into the folder once it is gone
        release(self.folder)
        remove(self.folder)

    def _fetch(self, group: int, leaves: tuple[str, ...] | None = None) -> pa.RecordBatch:
        """Row group `group` as a data batch (conversations and verifier log), or only the given leaves."""
        where = self.groups[group]
        layout = self.layout
        wanted = leaves or (layout.conversation, *(("verifier_output",) if layout.verifier else ()))
        batch = _one_batch(read_row_group(self.hub_files, where.file, self._footer(where.file), where.index, wanted))
        return batch if leaves else data_batch(batch)

    def _footer(self, file: int) -> pq.FileMetaData:
        footer = self._footers.get(file)
        if footer is None:
            footer = self._footers[file] = pq.read_metadata(
                pa.BufferReader((self.folder / f"footer-{file}.bin").read_bytes())
            )
        return footer

    # --- scanning ----------------------------------------------------------------------------
    def pieces(self) -> int:
        return len(self.groups)

    def scan(self, conversations: bool, verifier: bool, cancelled: Callable[[], bool] | None = None) -> Iterator[Piece]:
        """Row group by row group: from the cache when it has it, else only the asked-for columns, streamed
        (fetched a few ahead, not kept). Raises InterruptedError when `cancelled()`, Unreachable when the
        hub is gone."""
        layout = self.layout
        leaves: tuple[str, ...] = (layout.content,) if conversations else ()
        if verifier and layout.verifier:
            leaves += ("verifier_output",)

        def piece(number: int) -> Piece:
            where = self.groups[number]
            batch = self._loaded.get(number) or self.cache.load(self.folder, number)
            if batch is not None:
                return Piece(
                    where.start, batch.column(0) if conversations else None, batch.column(1) if verifier else None
                )
            fetched = self._fetch(number, leaves) if leaves else None
            return Piece(
                where.start,
                fetched.column(layout.conversation) if fetched is not None and conversations else None,
                _verifier_logs(fetched, where.rows) if verifier else None,
            )

        for found in ahead(piece, range(len(self.groups)), READ_AHEAD):
            if cancelled is not None and cancelled():
                raise InterruptedError("cancelled")
            yield found


def _verifier_logs(batch: pa.RecordBatch | None, rows: int) -> pa.Array:
    if batch is None or "verifier_output" not in batch.schema.names:
        return pa.nulls(rows, pa.string())
    return valid_utf8(batch.column("verifier_output")).cast(pa.string())


def _one_batch(table: pa.Table) -> pa.RecordBatch:
    batches = table.combine_chunks().to_batches()
    return batches[0] if batches else pa.RecordBatch.from_pylist([], schema=table.schema)


def _leaf_bytes(row_group: pq.RowGroupMetaData, name: str) -> int:
    """Uncompressed bytes of a column chunk (0 without the column)."""
    for j in range(row_group.num_columns):
        chunk = row_group.column(j)
        if chunk.path_in_schema == name:
            return chunk.total_uncompressed_size
    return 0


# --- reading the metadata ------------------------------------------------------------------------
def _read_metadata(hub: HubFiles, folder: Path, progress: Progress | None) -> list[str]:
    """Footers, then each file's short columns and roles, written to `folder`; the names of the files."""
    report = progress or (lambda fraction, message: None)
    report(0.0, f"reading {len(hub.paths)} parquet footers over the network")
    layouts: list[Layout] = []

    def columns(number: int, footer: pq.FileMetaData) -> tuple[str, ...]:
        layout = _layout(footer, hub.paths[number])
        if layouts and layout != layouts[0]:
            raise NotRemote(f"{hub.paths[number]}: its columns differ from {hub.paths[0]}'s")
        layouts.append(layout)
        return (*layout.meta, layout.role)

    def rows_of(number: int, footer: pq.FileMetaData, table: pa.Table) -> pa.RecordBatch:
        batch = _one_batch(table)
        return meta_batch(batch, _estimated_sizes(batch, footer, layouts[0]), number)

    batches, groups, names = [], [], []
    rows = 0
    reported = time.monotonic()
    for number, tail, footer, batch in read_columns(hub, columns, FILES_AHEAD, rows_of):
        batches.append(batch)
        (folder / f"footer-{number}.bin").write_bytes(tail)
        names.append(f"footer-{number}.bin")
        for index in range(footer.num_row_groups):
            groups.append([number, index, rows, footer.row_group(index).num_rows])
            rows += footer.row_group(index).num_rows
        if number % TRIM_EVERY == TRIM_EVERY - 1:
            give_back()
        if time.monotonic() - reported >= REPORT_EVERY:
            reported = time.monotonic()
            report(0.1 + 0.9 * (number + 1) / len(hub.paths), f"{rows:,} rows")
    if rows == 0:
        raise SourceError(f"{hub.repo_id}: the dataset has 0 rows")
    manifest = {"rows": rows, "files": list(hub.paths), "groups": groups, "layout": asdict(layouts[0])}
    write_meta(folder / "meta.arrow", batches, manifest)
    give_back()  # what the reader and decoder threads freed: else held for the whole session
    return [*names, "meta.arrow"]


def _layout(footer: pq.FileMetaData, name: str) -> Layout:
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
