"""One opened source, as the session reads it: a metadata table, and rows of text in data batches.

`Storage` is what the session, history rebuilding, search, stats and facets use; they do not care
whether the text is memory-mapped from the conversion cache (`Dataset`, here) or fetched from the hub
(`remote.RemoteDataset`). Text comes in batches of the conversion's data schema: column 0 the
conversations (list<struct<role, content>>), column 1 the verifier logs.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from .cache import ensure_converted
from .search_text import SearchText, kept_or_built, path_of, write
from .sources import Progress, ResolvedSource
from .trial_groups import grouped
from .utf8 import python_values

if TYPE_CHECKING:
    from ..trace.model import StepMetrics
    from .trial_ids import Regrown
    from .trials import Trials


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of consecutive rows' text, as `Storage.scan` yields it: the conversations (None when not
    asked for) and the verifier logs (None when not asked for)."""

    start: int  # the dataset row of the first row
    conversations: pa.Array | None  # list<struct<role, content>>, or list<struct<content>>
    verifier: pa.Array | None
    fresh: bool = False
    """Each row holds only the messages it adds to its trial's history, not the whole nested prefix."""


class NotFetched(LookupError):
    """The text asked for is on the hub and not here yet: reading never waits for the network, fetching
    is the explicit `Storage.fetch` / `Session.fetch`."""


class Storage:
    """Rows of a dataset: `meta` (the short columns, one row per dataset row) and text read by row."""

    source: ResolvedSource
    folder: Path  # where indexes built from this dataset are kept
    files: list[str]  # its source files on local disk (export re-reads them)
    meta: pa.Table
    num_rows: int
    local = True  # the text is on local disk (reading it never waits for the network)
    followed = False  # its folders grow while it is open (harbor writes them): the app follows them
    notes: tuple[str, ...] = ()  # what reading its files skipped (bad JSON Lines lines), one line each

    @property
    def label(self) -> str:
        return self.source.dataset_id

    def _locate(self, row: int) -> tuple[pa.RecordBatch, int]:
        """The data batch holding `row`, and the row's index in it; raises NotFetched when it is remote
        and not fetched yet."""
        raise NotImplementedError

    def scan(self, conversations: bool, verifier: bool, cancelled: Callable[[], bool] | None = None) -> Iterator[Piece]:
        """Every row's text in row order, piece by piece (a remote dataset fetches each in turn)."""
        raise NotImplementedError

    def pieces(self) -> int:
        """How many pieces `scan` yields (for progress)."""
        raise NotImplementedError

    def ready(self, rows: Iterable[int]) -> bool:
        """Whether the text of `rows` can be read without waiting for the network."""
        return True

    def fetch(self, rows: Iterable[int]) -> None:
        """Make the text of `rows` ready: the one call that waits for the network (a remote dataset
        fetches it; call it off the UI thread)."""

    def keep_verifier_logs(
        self,
        rows: np.ndarray,
        progress: Callable[[float], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
    ) -> None:
        """Have the verifier logs of `rows` at hand before reading them one by one (a remote dataset
        streams its verifier column once; raises InterruptedError when `cancelled()`)."""

    def growing(self) -> tuple[int, int] | None:
        """(files read, files in all) while its metadata still comes in (a hub dataset opened on its first
        files), else None."""
        return None

    def ripe(self) -> bool:
        """Off the UI thread: whether the metadata that came in since is ready for `grow`."""
        return False

    def grow(self) -> list[int] | Regrown:
        """On the thread that reads the session: take the metadata made ready by `ripe` (for `Session.apply`)."""
        return []

    def complete(self) -> None:
        """Wait for the rest of its metadata and take it (see `growing`)."""

    def discard(self) -> None:
        """Forget what only this reading needed (a remote dataset's cache, once the local copy replaces it)."""

    @property
    def index_folder(self) -> Path:
        """Where indexes of this reading of the data are kept (the verifier and findings indexes)."""
        return self.folder

    def group(self) -> Trials:
        """The rows grouped into trials (worked out from the metadata, and kept beside it)."""
        return grouped(self)

    def search_text(
        self, progress: Callable[[float], None] | None = None, cancelled: Callable[[], bool] | None = None
    ) -> SearchText | None:
        """The text a search covers, once (`search_text`), or None: scan the rows (`scan`) instead.
        Worked out first when a conversion lacks it (`progress(fraction)`; InterruptedError when
        `cancelled()`)."""
        return None

    def usage(self) -> dict[str, np.ndarray] | None:
        """Per trial (in `group` order): tokens, cost and timings, for sources that record them."""
        return None

    def problems(self) -> list[str | None] | None:
        """Per trial (in `group` order): why it could not be read, for sources that can say so."""
        return None

    def trial_folder(self, position: int) -> Path | None:
        """The folder of the trial at `position` (in `group` order), for sources made of trial folders
        (harbor job folders: recordings, logs and artifacts live there); None for datasets."""
        return None

    def episode_metrics(self, position: int) -> list[StepMetrics | None] | None:
        """Per episode of the trial at `position`: what the model reported for its agent step, for
        sources that record it."""
        return None

    makes_rows = False
    """Whether an export writes `exported_rows` rather than re-reading the source files' rows."""

    def exported_rows(self, position: int) -> list[dict[str, Any]] | None:
        """The rows an export writes for the trial at `position` (in `group` order), when `makes_rows`."""
        return None

    def exported_count(self, position: int) -> int:
        """How many rows `exported_rows(position)` gives (without reading them)."""
        return 0

    def recipe(self) -> tuple[Callable[..., Storage], tuple[Any, ...]]:
        """How another process opens this storage (the findings workers): `factory(*arguments)`."""
        return Dataset, (self.source, self.folder)

    def take_meta(self, meta: pa.Table) -> None:
        """New metadata for a storage that grows (a job folder, a hub dataset's list): what is worked out
        from the metadata once is worked out again."""
        self.meta = meta
        self.__dict__.pop("message_counts", None)

    @cached_property
    def message_counts(self) -> np.ndarray:
        """From `meta`, once (`take_meta` drops it)."""
        column = self.meta.column("n_messages")
        return (column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()).to_numpy()

    def message_count(self, row: int) -> int:
        return int(self.message_counts[row])

    def messages(self, row: int, start: int = 0, stop: int | None = None) -> list[tuple[str, str]]:
        """(role, content) of messages [start, stop) of a row."""
        batch, local = self._locate(row)
        column = batch.column(0)
        begin = column.offsets[local].as_py()
        end = column.offsets[local + 1].as_py()
        stop = end - begin if stop is None else min(stop, end - begin)
        if start >= stop:
            return []
        values = column.values.slice(begin + start, stop - start)
        return list(zip(python_values(values.field("role")), python_values(values.field("content"))))

    def message(self, row: int, index: int) -> tuple[str, str] | None:
        found = self.messages(row, index, index + 1)
        return found[0] if found else None

    def verifier_output(self, row: int) -> str | None:
        batch, local = self._locate(row)
        return python_values(batch.column(1).slice(local, 1))[0]


class Dataset(Storage):
    """A converted source: the metadata file and the data file, both memory-mapped.

    Only the metadata file is touched at start; the data file's footer is read on the first conversation
    request, and each request reads one batch's buffers straight from the mapping.
    """

    def __init__(self, source: ResolvedSource, folder: Path) -> None:
        self.source = source
        self.folder = folder
        self.meta = pa.ipc.open_file(pa.memory_map(str(folder / "meta.arrow"))).read_all()
        manifest = json.loads(self.meta.schema.metadata[b"tracetui"])
        self.num_rows = manifest["rows"]
        self.files: list[str] = manifest["files"]
        self.notes = tuple(manifest.get("notes", ()))
        self._batch_starts = np.asarray(manifest["batch_starts"], dtype=np.int64)
        self._lock = threading.Lock()
        self._batches: dict[int, pa.RecordBatch] = {}
        self._text_lock = threading.Lock()
        self._text: SearchText | None = None
        self._text_tried = False  # None then: the cache could not be written

    @cached_property
    def _reader(self) -> pa.ipc.RecordBatchFileReader:
        return pa.ipc.open_file(pa.memory_map(str(self.folder / "data.arrow")))

    def _batch(self, index: int) -> pa.RecordBatch:
        with self._lock:
            batch = self._batches.get(index)
            if batch is None:
                batch = self._batches[index] = self._reader.get_batch(index)
        return batch

    def _locate(self, row: int) -> tuple[pa.RecordBatch, int]:
        index = int(np.searchsorted(self._batch_starts, row, side="right")) - 1
        return self._batch(index), row - int(self._batch_starts[index])

    def pieces(self) -> int:
        return len(self._batch_starts)

    def search_text(
        self, progress: Callable[[float], None] | None = None, cancelled: Callable[[], bool] | None = None
    ) -> SearchText | None:
        with self._text_lock:
            if not self._text_tried:
                self._text = kept_or_built(self, progress, cancelled)
                self._text_tried = True
        return self._text

    def scan(self, conversations: bool, verifier: bool, cancelled: Callable[[], bool] | None = None) -> Iterator[Piece]:
        """The data batches, zero-copy from the mapping."""
        for index, start in enumerate(self._batch_starts):
            batch = self._batch(index)
            yield Piece(int(start), batch.column(0) if conversations else None, batch.column(1) if verifier else None)


def converted(source: ResolvedSource, progress: Progress | None, cache_size: int | None) -> Dataset:
    """The conversion of `source`, opened: converted first when there is none, with its search text."""
    return Dataset(source, ensure_converted(source, progress, cache_size, partial(_write_search_text, source)))


def _write_search_text(source: ResolvedSource, work: Path, progress: Progress | None) -> None:
    told = None if progress is None else lambda done: progress(done, "the text for search")
    write(Dataset(source, work), path_of(work), told)
