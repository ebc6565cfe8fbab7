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
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..paths import write_atomically
from . import hub_metadata
from .cache import read_kept
from .cache_folders import WorkFolder, kept, release, remove, unwritable
from .compute import pc
from .convert import data_batch
from .dataset import NotFetched, Piece, Storage
from .errors import SourceError, Unreachable
from .group_cache import GroupCache, write_table
from .heap import give_back
from .hub_metadata import Layout, MetadataReading, NotRemote, Snapshot, one_batch
from .hub_reads import READERS, AskedGroup, Footer, ask_row_group, read_row_group
from .lru import LRU
from .sources import HubFiles, Progress, ResolvedSource
from .threads import DaemonPool, parallel, pipelined
from .trial_ids import Regrown, moved_trials
from .trials import Trials, group_rows
from .utf8 import valid_utf8

LOADED = 64
"""Row groups kept mapped at once per dataset (the ones used last)."""
FOOTERS = 16
"""Files whose parsed footers are kept at once (the ones used last): one weighs ~10x its bytes, and a
scan of every row group (the verifier index, a search) parsed them all: 450 files of a 400,000-row
dataset held 128 MB for the rest of the session."""
READ_AHEAD = 3
"""Row groups a streamed scan decodes ahead of the one being searched."""
READ_AHEAD_BYTES = 16 << 20
"""The bytes a streamed scan asks for ahead of the row group being searched: enough to keep a far hub's
line busy (100 ms at 50 MB/s is 5 MB in flight) whether its row groups are large or small, within
READERS row groups (no more are read at once: asking for thousands of small ones in one go held the
GIL long enough to slow the UI's frames)."""
GROW_BY = 2.0
"""A list that grows while the metadata comes in takes the new rows once they are this many times the rows
it shows, and when the last file is in: each time, the trials are grouped again and the facets counted."""
log = logging.getLogger("tracetui")


@dataclass(frozen=True, slots=True)
class Group:
    """One parquet row group: where it is, and which dataset rows it holds."""

    file: int
    index: int
    start: int
    rows: int


@dataclass(slots=True)
class Growth:
    """A dataset opened on the first files of its metadata: the reading that goes on in `work`, renamed to
    `target` once every file is in; `pending` is what the list takes next (`RemoteDataset.grow`)."""

    reading: MetadataReading
    work: WorkFolder
    target: Path
    limit: int | None
    pending: tuple[Snapshot, Trials, Regrown | None] | None = None
    """What came in, its trials, and where the trials shown went in them (None: they cannot keep their ids)."""
    failed: str | None = None
    stuck: bool = False
    """Its trials grouped differently with more files in: the list stays, the folder is still kept once whole."""


class RemoteDataset(Storage):
    local = False

    def __init__(
        self,
        source: ResolvedSource,
        hub_files: HubFiles,
        folder: Path,
        cache: GroupCache,
        growth: tuple[Growth, Snapshot] | None = None,
    ) -> None:
        self.source = source
        self.hub_files = hub_files
        self.folder = folder
        self.cache = cache
        self.files = [str(file) for file in source.files]  # where the download puts them
        self._growth = growth[0] if growth is not None else None
        self._trials: Trials | None = None  # the grouping, while and once the list grows
        self._use(growth[1].meta if growth is not None else _mapped_meta(folder))
        if growth is not None:
            self._trials = group_rows(self.meta)
        self._footers: LRU[int, Footer] = LRU(FOOTERS)
        self._loaded: LRU[int, pa.RecordBatch] = LRU(LOADED)  # the UI thread maps cached row groups too
        self._logs: tuple[np.ndarray, pa.Array] | None = None  # (rows, their verifier logs), see keep_verifier_logs
        self._fetching: dict[int, threading.Lock] = {}  # one fetch of each row group at a time
        self._locks = threading.Lock()  # `_fetching` changes
        self._keeper = ThreadPoolExecutor(1, "tracetui-keep")  # fetched row groups to disk, in order

    def _use(self, meta: pa.Table) -> None:
        """The rows of `meta` (the manifest in its schema: the row groups, the layout) are the dataset's."""
        manifest = json.loads(meta.schema.metadata[b"tracetui"])
        self.take_meta(meta)
        self.num_rows = manifest["rows"]
        self.groups = [Group(*g) for g in manifest["groups"]]
        self.layout = Layout(**{**manifest["layout"], "meta": tuple(manifest["layout"]["meta"])})
        self._starts = np.asarray([g.start for g in self.groups], dtype=np.int64)

    @classmethod
    def open(
        cls, source: ResolvedSource, hub: HubFiles, folder: Path, limit: int | None, progress: Progress | None = None
    ) -> RemoteDataset:
        """Open `source` (its `hub` files) remotely from `folder`, reading its metadata over HTTP into it
        unless a previous open kept it (from the files it lacks when one was cut short while it read them);
        `limit` bounds the cache (see `cache_folders`). When the metadata
        takes longer than `hub_metadata.PARTIAL_AFTER`, the dataset opens on the files read so far and goes on reading
        the others (`growing`; `complete` waits for them).

        Raises NotRemote when its files cannot be read remotely, SourceError when the hub stops answering.
        """
        if kept(folder, source.dataset_id):
            return cls(source, hub, folder, GroupCache(limit))
        try:  # an open cut short goes on from the files it read
            work = WorkFolder.left_for("remote", folder) or WorkFolder("remote", folder)
        except OSError as exc:
            raise unwritable(exc) from None
        reading = MetadataReading(hub, work.path, progress)
        try:
            if reading.wait(hub_metadata.PARTIAL_AFTER):  # read when called: tests set it
                work.finish(folder, source.dataset_id, source.origin, reading.names(), limit)
                return cls(source, hub, folder, GroupCache(limit))
            growth = Growth(reading, work, folder, limit)
            return cls(source, hub, work.path, GroupCache(limit), (growth, reading.snapshot()))
        except BaseException as exc:
            reading.stop()
            work.leave()  # what came in stays for the next open (the hub went away, the user quit)
            if isinstance(exc, Unreachable):
                raise _stopped_answering(source, exc) from None
            raise

    # --- a list that grows while the metadata comes in ---------------------------------------------
    def growing(self) -> tuple[int, int] | None:
        growth = self._growth
        return None if growth is None else (growth.reading.files, growth.reading.total)

    def ripe(self) -> bool:
        """Off the UI thread: whether the list should take what came in since (the rows grew by GROW_BY,
        every file is in, or the reading failed), made ready for `grow` if so (grouped, and the trials shown
        found in the new grouping: `grow` only swaps it in)."""
        growth = self._growth
        if growth is None or growth.pending is not None or growth.failed is not None:
            return growth is not None
        reading = growth.reading
        if not reading.done and (growth.stuck or reading.rows < GROW_BY * self.num_rows):
            return False
        try:
            snapshot = reading.snapshot()
        except (SourceError, Unreachable, NotRemote) as exc:
            growth.failed = str(exc)
            return True
        trials = group_rows(snapshot.meta)
        growth.pending = (snapshot, trials, moved_trials(self.group(), trials))
        return True

    def complete(self) -> None:
        """Wait for the rest of the metadata and take it (before a session is made of this dataset).
        Raises SourceError when the hub stops answering meanwhile."""
        growth = self._growth
        if growth is None:
            return
        try:
            growth.reading.wait()
        except (Unreachable, NotRemote) as exc:
            growth.work.leave()  # this dataset is not opened: what came in stays for the next open
            if isinstance(exc, Unreachable):
                raise _stopped_answering(self.source, exc) from None
            raise SourceError(str(exc)) from None
        snapshot = growth.reading.snapshot()
        self._take(snapshot, group_rows(snapshot.meta))  # no session yet: no trial ids to keep
        self._growth = None
        self._keeper.submit(self._settle, growth, True)
        self.kept()

    def grow(self) -> Regrown:
        """On the thread that reads the session: take what `ripe` made ready. The trials keep their ids
        (`Regrown`: where each one went, which changed); once every file is in, the folder is sealed and
        renamed into place and the metadata mapped from it, on the keeper thread (`kept` waits for it)."""
        growth = self._growth
        count = len(self.group())
        unchanged = Regrown(np.arange(count), np.zeros(0, np.int64), count)
        if growth is None:
            return unchanged
        if growth.failed is not None:
            self._growth = None
            growth.reading.stop()
            log.warning("%s: the list stays as it is: %s", self.source.dataset_id, growth.failed)
            return unchanged
        if growth.pending is None:
            return unchanged
        (snapshot, trials, regrown), growth.pending = growth.pending, None
        if regrown is not None:
            self._take(snapshot, trials)
        elif not growth.stuck:
            growth.stuck = True
            log.warning(
                "%s: its trials group differently with every file in: restart tracetui to see them all",
                self.source.dataset_id,
            )
        if snapshot.done:  # settled on the keeper thread, after the row groups being stored (`kept` waits)
            self._growth = None
            self._keeper.submit(self._settle, growth, regrown is not None)
        return regrown or unchanged

    def _take(self, snapshot: Snapshot, trials: Trials) -> None:
        self._use(snapshot.meta)
        self._trials = trials

    def _settle(self, growth: Growth, whole: bool) -> None:
        """On the keeper thread (nothing is being stored into the folder meanwhile): the work folder
        sealed and renamed into place, then read from there (the metadata too when the list took every
        file, `whole`); where it cannot be, it is read from the work folder until the app ends."""
        try:
            growth.work.finish(
                growth.target, self.source.dataset_id, self.source.origin, growth.reading.names(), growth.limit
            )
        except SourceError as exc:
            log.warning("%s: its metadata is not kept for the next time: %s", self.source.dataset_id, exc)
            return
        self.folder = growth.target
        if whole:
            self._use(_mapped_meta(self.folder))

    def group(self) -> Trials:
        return self._trials if self._trials is not None else super().group()

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
        """Wait until the row groups fetched so far are on disk (kept in the cache, or could not be), and
        the metadata once whole."""
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
        batch = one_batch(read_row_group(self.hub_files, where.file, self._footer(where.file), where.index, wanted))
        return batch if leaves else data_batch(batch)

    def _footer(self, file: int) -> Footer:
        footer = self._footers.get(file)
        if footer is None:
            footer = Footer.parse((self.folder / f"footer-{file}.bin").read_bytes())
            self._footers.put(file, footer)
        return footer

    # --- scanning ----------------------------------------------------------------------------
    def pieces(self) -> int:
        return len(self.groups)

    def scan(self, conversations: bool, verifier: bool, cancelled: Callable[[], bool] | None = None) -> Iterator[Piece]:
        """Row group by row group: from the cache when it has it, else only the asked-for columns, streamed
        (asked for up to READ_AHEAD_BYTES and READERS row groups ahead, decoded READ_AHEAD ahead, not
        kept). Raises InterruptedError when `cancelled()`, Unreachable when the hub is gone."""
        layout = self.layout
        leaves: tuple[str, ...] = (layout.content,) if conversations else ()
        if verifier and layout.verifier:
            leaves += ("verifier_output",)

        def ask(number: int) -> tuple[int, pa.RecordBatch | AskedGroup | None]:
            """Row group `number` as it is at hand: kept, its reads asked for, or nothing to read."""
            where = self.groups[number]
            batch = self._loaded.get(number) or self.cache.load(self.folder, number)
            if batch is not None or not leaves:
                return number, batch
            return number, ask_row_group(
                self.hub_files, where.file, self._footer(where.file), where.index, leaves, readers
            )

        def piece(asked: tuple[int, pa.RecordBatch | AskedGroup | None]) -> Piece:
            number, at_hand = asked
            where = self.groups[number]
            if isinstance(at_hand, pa.RecordBatch):
                return Piece(
                    where.start, at_hand.column(0) if conversations else None, at_hand.column(1) if verifier else None
                )
            fetched = one_batch(at_hand.read()) if at_hand is not None else None
            return Piece(
                where.start,
                fetched.column(layout.conversation) if fetched is not None and conversations else None,
                _verifier_logs(fetched, where.rows) if verifier else None,
            )

        def weight(asked: tuple[int, pa.RecordBatch | AskedGroup | None]) -> int:
            return asked[1].size if isinstance(asked[1], AskedGroup) else 0

        try:
            with DaemonPool(READERS, "tracetui-hub") as readers:
                for found in pipelined(
                    ask, piece, range(len(self.groups)), weight, READ_AHEAD_BYTES, READERS, READ_AHEAD
                ):
                    if cancelled is not None and cancelled():
                        raise InterruptedError("cancelled")
                    yield found
        finally:  # the pages the decoding threads freed (the verifier logs' scan keeps none of them)
            give_back()


def _stopped_answering(source: ResolvedSource, exc: Unreachable) -> SourceError:
    return SourceError(f"{source.dataset_id}: the hub stopped answering while reading the metadata ({exc})")


def _mapped_meta(folder: Path) -> pa.Table:
    return pa.ipc.open_file(pa.memory_map(str(folder / "meta.arrow"))).read_all()


def _verifier_logs(batch: pa.RecordBatch | None, rows: int) -> pa.Array:
    if batch is None or "verifier_output" not in batch.schema.names:
        return pa.nulls(rows, pa.string())
    return valid_utf8(batch.column("verifier_output")).cast(pa.string())
