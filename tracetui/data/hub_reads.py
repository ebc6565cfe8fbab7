"""Reading a hub repo's files over HTTP: parquet footers and only the column chunks asked for (a few
percent of the bytes for the short columns), one row group at a time, on parallel connections.

Range reads retry once, briefly, so a hub that goes away mid-session is reported at once rather than
after huggingface_hub's retry back-off. A far hub costs its latency once per round of requests, not per
request: the footers of every file are asked for at once and the column chunks of each file as soon as
its footer is in, on up to READERS connections (`threads`: daemon threads). Imported only when a source
is read from the hub.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from .errors import SourceError, Unreachable, first_line
from .sources import HubFiles
from .threads import DaemonPool

if TYPE_CHECKING:
    from typing_extensions import Buffer

READ_TIMEOUT = 5.0
"""A range read gives up after this long without a byte (once more after a short pause)."""
FOOTER_READ = 64 << 10
"""The first read of a file's tail; a larger footer costs a second request."""
PART_BYTES = 4 << 20
"""Long ranges are fetched as parts of this size on parallel connections."""
COALESCE_BYTES = 8 << 10
"""Ranges closer than this are fetched as one, as pyarrow's own read coalescing does: a small gap (a small
column between two short ones) costs less than another request; a row group's text never fits in one."""
READERS = 64
"""Requests in flight at once: the short columns of a 4,000-row dataset (a range per row group) in one
round trip; a far hub's latency, not its bandwidth, is what a few hundred small reads wait for."""


def get_range(url: str, start: int, end: int) -> bytes:
    """Bytes [start, end) of `url`; raises Unreachable after one quick retry."""
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    headers = {**build_hf_headers(), "Range": f"bytes={start}-{end - 1}"}
    attempts = 2
    for attempt in range(1, attempts + 1):
        try:
            response = get_session().get(url, headers=headers, timeout=READ_TIMEOUT)
            hf_raise_for_status(response)
            data = response.content
            if len(data) == end - start:
                return data
            failure = f"expected {end - start} bytes, got {len(data)}"
        except Exception as exc:
            status = getattr(getattr(exc, "response", None), "status_code", None) or 500
            if status < 500:
                attempt = attempts  # the hub answered no: asking again will not help
            failure = first_line(exc)
        if attempt == attempts:
            raise Unreachable(failure)
        time.sleep(0.5)
    raise AssertionError("not reached")


def get_file(url: str, timeout: float) -> tuple[str, bytes] | None:
    """(the commit the hub served it from, the bytes) of a small file, in one request, without retries;
    None when the hub has no such file."""
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    response = get_session().get(url, headers=build_hf_headers(), timeout=timeout)
    if response.status_code == 404:
        return None
    hf_raise_for_status(response)
    return response.headers.get("X-Repo-Commit", ""), response.content


class HubFile(io.RawIOBase):
    """A file of a hub repo read with HTTP range requests, for pyarrow.

    `prefetch` fetches known ranges (parquet column chunks) in parallel and keeps them in memory; a read
    they cover costs nothing, any other read is one request.
    """

    def __init__(self, url: str, size: int) -> None:
        super().__init__()
        self.url = url
        self.size = size
        self._position = 0
        self._spans: list[tuple[int, bytes]] = []

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self.size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def read(self, size: int = -1) -> bytes:
        end = self.size if size is None or size < 0 else min(self.size, self._position + size)
        data = self.read_at(self._position, end) if end > self._position else b""
        self._position = end
        return data

    def readinto(self, buffer: Buffer) -> int:
        view = memoryview(buffer).cast("B")
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def read_at(self, start: int, end: int) -> bytes:
        for begin, data in self._spans:
            if begin <= start and end <= begin + len(data):
                return data[start - begin : end - begin]
        return get_range(self.url, start, end)

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        """Fetch [start, end) ranges in parallel and keep them (see `prefetch`)."""
        prefetch([(self, ranges)])

    def forget(self) -> None:
        """Drop the prefetched bytes (the caller has decoded them)."""
        self._spans.clear()


def prefetch(
    wanted: list[tuple[HubFile, list[tuple[int, int]]]],
    done: Callable[[float], None] | None = None,
    pool: DaemonPool | None = None,
) -> None:
    """Fetch byte ranges of several files at once: ranges closer than COALESCE_BYTES merged, longer than
    PART_BYTES split, all parts in flight together (on `pool`, or a pool of READERS); `done(fraction)` as
    parts arrive. Each file keeps its spans."""
    spans: list[tuple[HubFile, int, int]] = []
    for file, ranges in wanted:
        merged: list[list[int]] = []
        for start, end in sorted(ranges):
            if merged and start - merged[-1][1] <= COALESCE_BYTES:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        spans.extend((file, start, end) for start, end in merged)
    parts = [(file, s, min(s + PART_BYTES, end)) for file, start, end in spans for s in range(start, end, PART_BYTES)]
    with DaemonPool(READERS, "tracetui-hub") if pool is None else contextlib.nullcontext(pool) as readers:
        futures = [readers.submit(get_range, file.url, s, e) for file, s, e in parts]
        fetched = {}
        for count, (part, future) in enumerate(zip(parts, futures), 1):
            fetched[part] = future.result()
            if done is not None:
                done(count / len(parts))
    for file, start, end in spans:
        pieces = [fetched[(file, s, min(s + PART_BYTES, end))] for s in range(start, end, PART_BYTES)]
        file._spans.append((start, b"".join(pieces)))


def chunk_ranges(row_group: pq.RowGroupMetaData, names: Sequence[str]) -> list[tuple[int, int]]:
    """Byte ranges of the column chunks of `names` (columns or leaves) in a row group."""
    ranges = []
    for j in range(row_group.num_columns):
        chunk = row_group.column(j)
        path = chunk.path_in_schema
        if any(path == name or path.startswith(name + ".") for name in names):
            start = chunk.data_page_offset
            if chunk.has_dictionary_page and chunk.dictionary_page_offset:
                start = min(start, chunk.dictionary_page_offset)
            ranges.append((start, start + chunk.total_compressed_size))
    return ranges


def hub_file(hub: HubFiles, number: int) -> HubFile:
    """File `number` of `hub`, to read by ranges."""
    from huggingface_hub import hf_hub_url

    url = hf_hub_url(hub.repo_id, hub.paths[number], repo_type="dataset", revision=hub.commit)
    return HubFile(url, hub.sizes[number])


def footer_bytes(file: HubFile) -> bytes:
    """A parquet file's footer (with its length and magic), in one request (two for a large footer)."""
    tail = file.read_at(max(0, file.size - FOOTER_READ), file.size)
    if tail[-4:] != b"PAR1":
        raise SourceError(f"{file.url.rsplit('/', 1)[-1]}: not a parquet file")
    length = int.from_bytes(tail[-8:-4], "little") + 8
    if length > len(tail):
        tail = file.read_at(file.size - length, file.size - len(tail)) + tail
    return tail[-length:]


def read_columns(
    hub: HubFiles, columns: Callable[[int, pq.FileMetaData], Sequence[str]], at_once: int
) -> Iterator[tuple[int, bytes, pq.FileMetaData, pa.Table]]:
    """Every file's footer (all fetched at once), then the `columns(number, footer)` of all its row groups:
    (file number, footer bytes, footer, table) for each file in order. The column chunks of `at_once`
    files are fetched together (bounded memory: parsed footers weigh 10x their bytes)."""
    files = [hub_file(hub, number) for number in range(len(hub.paths))]
    with DaemonPool(READERS, "tracetui-hub") as pool:
        tails: list[Future[bytes]] = [pool.submit(footer_bytes, file) for file in files]
        for first in range(0, len(files), at_once):
            footers = {
                n: pq.read_metadata(pa.BufferReader(tails[n].result()))
                for n in range(first, min(first + at_once, len(files)))
            }
            wanted = {n: list(columns(n, footer)) for n, footer in footers.items()}
            prefetch(
                [
                    (files[n], [r for i in range(f.num_row_groups) for r in chunk_ranges(f.row_group(i), wanted[n])])
                    for n, f in footers.items()
                ],
                pool=pool,
            )
            for number, footer in footers.items():
                reader = pq.ParquetFile(files[number], metadata=footer, pre_buffer=False)
                table = reader.read_row_groups(range(footer.num_row_groups), columns=wanted[number])
                files[number].forget()
                yield number, tails[number].result(), footer, table


def read_row_group(hub: HubFiles, number: int, footer: pq.FileMetaData, index: int, leaves: Sequence[str]) -> pa.Table:
    """Row group `index` of file `number` (its `footer` known), only the columns or leaves `leaves`."""
    file = hub_file(hub, number)
    file.prefetch(chunk_ranges(footer.row_group(index), leaves))
    return pq.ParquetFile(file, metadata=footer, pre_buffer=False).read_row_group(index, columns=list(leaves))
