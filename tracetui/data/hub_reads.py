"""Reading a hub repo's files over HTTP: parquet footers and only the column chunks asked for (a few
percent of the bytes for the short columns), on parallel connections.

Range reads retry once, briefly, so a hub that goes away mid-session is reported at once rather than
after huggingface_hub's retry back-off. A far hub costs its latency once per round of requests, not per
request: the footers of the first files are asked for at once and the column chunks of each file as soon
as its footer is in, on up to READERS connections (`threads`: daemon threads); a file's reads after its
first go straight to the CDN link the hub redirected that one to (`connections`). The bytes of a
file that came in are laid at their offsets in a sparse image of it (an anonymous mapping: only those
pages exist), which pyarrow decodes on DECODERS threads without the GIL, while the next files are
fetched. Imported only when a source is read from the hub.
"""

from __future__ import annotations

import mmap
import statistics
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from .connections import ANONYMOUS, CONNECTIONS, READ_TIMEOUT, fresh_headers, headers_built, hub_headers, proxied
from .errors import SourceError, Unreachable, first_line
from .hub_ahead import file_url
from .sources import HubFiles
from .threads import DaemonPool

T = TypeVar("T")

FOOTER_READ = 64 << 10
"""The first read of a file's tail; a larger footer costs a second request, a round trip more before the
list on a far hub (32 KB did for the 4,000-row demo's longer footers, 36-57 KB: 5 round trips in a row
before the list, 4 now). The row groups' text it brings along: 0.6% of that demo's bytes. Once footers
are in, the later files' tails are read at the size they suggest (`TAIL_MARGIN`)."""
TAIL_MARGIN = 1.25
"""A later file's tail read: the median footer seen times this (footers of one dataset are alike; a
longer one costs a second request)."""
PART_BYTES = 4 << 20
"""Long ranges are fetched as parts of this size on parallel connections."""
COALESCE_BYTES = 8 << 10
"""Ranges closer than this are fetched as one, as pyarrow's own read coalescing does: a small gap (a small
column between two short ones) costs less than another request; a row group's text never fits in one."""
READERS = 64
"""Requests in flight at once: the short columns of a 4,000-row dataset (a range per row group) in one
round trip; a far hub's latency, not its bandwidth, is what a few hundred small reads wait for."""
DECODERS = 2
"""Files decoded at once (pyarrow releases the GIL), beside the reads of the next ones."""


def get_range(url: str, start: int, end: int) -> bytes:
    """Bytes [start, end) of `url`; raises Unreachable after one quick retry."""
    from huggingface_hub import constants

    if constants.is_offline_mode():
        raise Unreachable(f"cannot reach {url}: offline mode is enabled (HF_HUB_OFFLINE)")
    headers = {**hub_headers(), "Range": f"bytes={start}-{end - 1}"}
    attempts = 2
    for attempt in range(1, attempts + 1):
        try:
            data = _get(url, headers)
            if len(data) == end - start:
                return data
            failure = f"expected {end - start} bytes, got {len(data)}"
        except Exception as exc:
            status = getattr(exc, "status", None) or getattr(getattr(exc, "response", None), "status_code", None)
            if (status or 500) < 500:
                attempt = attempts  # the hub answered no: asking again will not help
            failure = first_line(exc)
        if attempt == attempts:
            raise Unreachable(failure)
        time.sleep(0.5)
    raise AssertionError("not reached")


def _get(url: str, headers: dict[str, str]) -> bytes:
    """The body of a GET, redirects followed: on kept-alive connections of our own (`CONNECTIONS`), or
    through huggingface_hub's session when a proxy is set (it knows proxies)."""
    if not proxied():
        return CONNECTIONS.get(url, headers)
    from huggingface_hub.utils import get_session, hf_raise_for_status

    response = get_session().get(url, headers=headers, timeout=READ_TIMEOUT)
    hf_raise_for_status(response)
    return response.content


def hub_get(url: str, timeout: float, missing_ok: bool = False) -> tuple[Mapping[str, str], bytes] | None:
    """(headers, looked up in lower case; body) of a GET of the hub's API or of a small file, in one
    request without retries; None for a file the hub does not have when `missing_ok`. On our own
    connections, like the range reads: no HTTP client to build and none of huggingface_hub's download
    code to import (~0.2 s of a thread that the listing waited on, on the way to a hub dataset's first
    screen). Through huggingface_hub's session when a proxy is set, and for an answer that is an error,
    which it turns into the error that says why (gated, no such repo or revision...).

    The answer asked for ahead, if it was (`hub_ahead`), or while huggingface_hub's headers are still
    being built, a request sent at once: both without credentials. A public repo answers them the same,
    and anything else (a private or gated repo, an error) is asked again with them."""
    anonymous = None
    early = CONNECTIONS.taken(url)
    if early is not None:
        try:
            anonymous = early.result(timeout)
        except FutureTimeout:
            raise TimeoutError(f"no answer from the hub in {timeout:.0f} s") from None
    elif fresh_headers() is None and not proxied() and not headers_built().done():
        anonymous = CONNECTIONS.answer(url, ANONYMOUS, timeout)
    if anonymous is not None:
        status, answered, body = anonymous
        if status < 300:
            return answered, body
        if status == 404 and missing_ok and answered.get("x-error-code") == "EntryNotFound":
            return None  # the repo answered: it has no such file (a private repo answers 401)
    headers = hub_headers()
    if not proxied():
        status, answered, body = CONNECTIONS.answer(url, headers, timeout)
        if status < 300:
            return answered, body
        if status == 404 and missing_ok:
            return None
    from huggingface_hub.utils import get_session, hf_raise_for_status

    response = get_session().get(url, headers=headers, timeout=timeout)
    if response.status_code == 404 and missing_ok:
        return None
    hf_raise_for_status(response)
    return response.headers, response.content


def get_file(url: str, timeout: float) -> tuple[str, bytes] | None:
    """(the commit the hub served it from, the bytes) of a small file, in one request, without retries;
    None when the hub has no such file."""
    answer = hub_get(url, timeout, missing_ok=True)
    return None if answer is None else (answer[0].get("x-repo-commit") or "", answer[1])


@dataclass(frozen=True, slots=True)
class HubFile:
    """A file of a hub repo, read by byte ranges."""

    url: str
    size: int


def fetch_spans(file: HubFile, ranges: Sequence[tuple[int, int]], pool: DaemonPool) -> list[tuple[int, Future[bytes]]]:
    """Byte ranges of `file` requested on `pool`: ranges closer than COALESCE_BYTES merged, longer than
    PART_BYTES split; (start, future bytes) of each part."""
    merged: list[list[int]] = []
    for start, end in sorted(ranges):
        if merged and start - merged[-1][1] <= COALESCE_BYTES:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [
        (s, pool.submit(get_range, file.url, s, min(s + PART_BYTES, end)))
        for start, end in merged
        for s in range(start, end, PART_BYTES)
    ]


def sparse_image(file: HubFile, spans: Sequence[tuple[int, bytes]]) -> pa.BufferReader:
    """The file as pyarrow reads it, only `spans` ((offset, bytes)) filled in: decoding it never calls back
    into Python (and so runs without the GIL); the pages not filled in take no memory."""
    image = mmap.mmap(-1, max(1, file.size))
    for start, data in spans:
        image[start : start + len(data)] = data
    return pa.BufferReader(pa.py_buffer(image))


def chunk_ranges(row_group: pq.RowGroupMetaData, columns: Sequence[int]) -> list[tuple[int, int]]:
    """Byte ranges of the column chunks `columns` (leaf numbers) of a row group."""
    ranges = []
    for j in columns:
        chunk = row_group.column(j)
        start = chunk.data_page_offset
        if chunk.has_dictionary_page and chunk.dictionary_page_offset:
            start = min(start, chunk.dictionary_page_offset)
        ranges.append((start, start + chunk.total_compressed_size))
    return ranges


def described(footer: pq.FileMetaData) -> tuple[pa.Schema, list[str]]:
    """A footer's Arrow schema and the dotted paths of its leaves, read without `footer.schema`: that
    property keeps a schema that refers back to the footer, a reference cycle, so a footer read for a
    moment (its parsed form weighs ~10x its bytes) lived until a full garbage collection: at 400,000
    rows, 40 MB more at the peak of the hub's first screen."""
    reader = pq.ParquetFile(pa.BufferReader(b""), metadata=footer).reader  # reads nothing: the footer is given
    return reader.schema_arrow, [".".join(path) for path in reader.column_paths]


def _leaves(paths: Sequence[str], names: Sequence[str]) -> list[int]:
    """Leaf numbers of `names` among the leaves' dotted `paths`."""
    return [j for j, path in enumerate(paths) if any(path == name or path.startswith(name + ".") for name in names)]


def constant(chunk: pq.ColumnChunkMetaData, rows: int) -> str | None:
    """The one value of a string column chunk whose statistics say every row holds it, else None. Valid
    statistics bound every value (a writer that shortens a max must round it up), so min == max with no
    null is that value in every row: the chunk need not be read."""
    stats = chunk.statistics if chunk.is_stats_set else None
    if (
        stats is None
        or not (stats.has_min_max and stats.has_null_count)
        or stats.null_count
        or stats.num_values != rows
    ):
        return None
    try:
        low, high = stats.min, stats.max
    except UnicodeDecodeError:  # not UTF-8: read it, and `valid_utf8` marks it as the conversion does
        return None
    return low if isinstance(low, str) and low == high else None


@dataclass(frozen=True, slots=True)
class Plan:
    """What to read of one file: per row group, the columns to decode and the columns its statistics give."""

    columns: tuple[str, ...]
    reads: tuple[tuple[str, ...], ...]
    constants: tuple[dict[str, str], ...]
    ranges: tuple[tuple[int, int], ...]


def plan(footer: pq.FileMetaData, columns: Sequence[str]) -> Plan:
    """The reads of `columns` (flat string columns known from statistics where they are constant, the rest,
    leaves included, read) in every row group of a file."""
    schema, paths = described(footer)
    flat = {
        name: j
        for j, name in enumerate(paths)
        if name in columns and name in schema.names and pa.types.is_string(schema.field(name).type)
    }
    others = _leaves(paths, [name for name in columns if name not in flat])
    reads, constants, ranges = [], [], []
    for index in range(footer.num_row_groups):
        group = footer.row_group(index)
        known = {}
        for name, j in flat.items():
            value = constant(group.column(j), group.num_rows)
            if value is not None:
                known[name] = value
        wanted = others + [j for name, j in flat.items() if name not in known]
        reads.append(tuple(name for name in columns if name not in known))
        constants.append(known)
        ranges.extend(chunk_ranges(group, wanted))
    return Plan(tuple(columns), tuple(reads), tuple(constants), tuple(ranges))


def decode(
    file: HubFile, tail: bytes, spans: list[tuple[int, Future[bytes]]], footer: pq.FileMetaData, plan: Plan
) -> pa.Table:
    """The planned columns of every row group of a file, once its spans are in (constants filled in). The
    row groups that read the same columns are read in one call: pyarrow's cost is per call and chunk."""
    image = sparse_image(file, [(file.size - len(tail), tail), *((start, part.result()) for start, part in spans)])
    reader = pq.ParquetFile(image, metadata=footer, pre_buffer=False)
    if not plan.reads:
        return reader.read_row_groups([], columns=list(plan.columns))
    alike: dict[tuple[str, ...], list[int]] = {}
    for index, read in enumerate(plan.reads):
        alike.setdefault(read, []).append(index)
    pieces: dict[int, pa.Table] = {}
    for read, indices in alike.items():
        table = reader.read_row_groups(indices, columns=list(read), use_threads=False)  # a few KB: threads cost more
        offset = 0
        for index in indices:
            rows = footer.row_group(index).num_rows
            pieces[index] = table.slice(offset, rows)
            offset += rows
    tables = []
    for index, known in enumerate(plan.constants):
        piece, columns = pieces[index], {}
        for name in plan.columns:  # a leaf is read as its column
            if name in known:
                columns[name] = pa.repeat(pa.scalar(known[name], pa.string()), piece.num_rows)
            else:
                top = name if name in piece.column_names else name.split(".", 1)[0]
                columns[top] = piece.column(top)
        tables.append(pa.table(columns))
    return pa.concat_tables(tables)


def hub_file(hub: HubFiles, number: int) -> HubFile:
    """File `number` of `hub`, to read by ranges."""
    return HubFile(file_url(hub.repo_id, hub.paths[number], hub.commit), hub.sizes[number])


def footer_bytes(file: HubFile, read: int = FOOTER_READ) -> tuple[bytes, bytes]:
    """A parquet file's footer (with its length and magic) and the whole tail read with it (the last
    column chunks may be in it), in one request (two when the footer is longer than `read`)."""
    tail = get_range(file.url, max(0, file.size - read), file.size)
    if tail[-4:] != b"PAR1":
        raise SourceError(f"{file.url.rsplit('/', 1)[-1]}: not a parquet file")
    length = int.from_bytes(tail[-8:-4], "little") + 8
    if length > len(tail):
        tail = get_range(file.url, file.size - length, file.size - len(tail)) + tail
    return tail[-length:], tail


def read_columns(
    hub: HubFiles,
    columns: Callable[[int, pq.FileMetaData], Sequence[str]],
    ahead: int,
    finish: Callable[[int, pq.FileMetaData, pa.Table], T],
    first: int = 0,
) -> Iterator[tuple[int, bytes, pq.FileMetaData, T]]:
    """Every file's footer, then the `columns(number, footer)` of all its row groups, made into
    `finish(number, footer, table)` on a decoding thread: (file number, footer bytes, footer, what `finish`
    made) for each file in order from file `first`. Up to `ahead` files are read and decoded ahead of the one yielded
    (bounded memory: parsed footers weigh 10x their bytes); a file's column chunks are asked for as soon
    as its footer is in, not after the footers of the files before it (one whose footer takes a second
    request does not hold back the others: a far hub's round trip), nor once the file before it is read
    (its chunks, a round trip, then its decoding)."""
    files = [hub_file(hub, number) for number in range(len(hub.paths))]
    with DaemonPool(READERS, "tracetui-hub") as pool, DaemonPool(DECODERS, "tracetui-decode") as decoders:
        tails: dict[int, Future[tuple[bytes, bytes]]] = {}
        done: dict[int, Future[T]] = {}
        footers: dict[int, pq.FileMetaData] = {}
        lengths: list[int] = []  # of the footers seen so far

        def start(number: int) -> None:
            read = int(statistics.median(lengths) * TAIL_MARGIN) + 8 if lengths else FOOTER_READ
            tails[number] = pool.submit(footer_bytes, files[number], read)

        def ask(number: int) -> None:
            """File `number`'s footer is in: its column chunks asked for, decoded once they are in."""
            footer, tail = tails[number].result()
            lengths.append(len(footer))
            if number + ahead < len(files):
                start(number + ahead)
            parsed = footers[number] = pq.read_metadata(pa.BufferReader(footer))
            wanted = plan(parsed, columns(number, parsed))
            begin = files[number].size - len(tail)
            ranges = [r for r in wanted.ranges if r[0] < begin]  # the rest came with the footer
            done[number] = decoders.submit(decoded, number, tail, fetch_spans(files[number], ranges, pool), wanted)

        def decoded(number: int, tail: bytes, spans: list[tuple[int, Future[bytes]]], plan: Plan) -> T:
            footer = footers[number]
            made = finish(number, footer, decode(files[number], tail, spans, footer, plan))
            pa.default_memory_pool().release_unused()  # this thread's freed pages: else kept for reuse
            return made

        for number in range(first, min(first + ahead, len(files))):
            start(number)
        for number in range(first, len(files)):
            window = range(number, min(number + ahead, len(files)))
            while number not in done or not done[number].done():  # the footers that come in meanwhile asked on
                waiting = [tails[later] for later in window if later not in done]
                wait([*waiting, *((done[number],) if number in done else ())], return_when=FIRST_COMPLETED)
                for later in window:
                    if later not in done and tails[later].done():
                        ask(later)
            made = done.pop(number).result()
            yield number, tails.pop(number).result()[0], footers.pop(number), made


@dataclass(frozen=True, slots=True)
class Footer:
    """A file's parsed footer and the dotted paths of its leaves, worked out once (`described` builds a
    reader: at 400,000 rows, asking for each row group's leaves that way took 40% of a streamed search)."""

    metadata: pq.FileMetaData
    paths: tuple[str, ...]

    @classmethod
    def of(cls, metadata: pq.FileMetaData) -> Footer:
        return cls(metadata, tuple(described(metadata)[1]))

    @classmethod
    def parse(cls, data: bytes) -> Footer:
        return cls.of(pq.read_metadata(pa.BufferReader(data)))

    def leaves(self, names: Sequence[str]) -> list[int]:
        """Leaf numbers of `names` (columns or leaves)."""
        return _leaves(self.paths, names)


@dataclass(frozen=True, slots=True)
class AskedGroup:
    """A row group whose column chunks were asked for: their bytes on the way, decoded by `read`."""

    file: HubFile
    footer: pq.FileMetaData
    index: int
    leaves: tuple[str, ...]
    spans: list[tuple[int, Future[bytes]]]
    size: int
    """The bytes asked for."""

    def read(self) -> pa.Table:
        """The row group's `leaves`, once their bytes are in."""
        spans = [(start, part.result()) for start, part in self.spans]
        reader = pq.ParquetFile(sparse_image(self.file, spans), metadata=self.footer, pre_buffer=False)
        return reader.read_row_group(self.index, columns=list(self.leaves))


def ask_row_group(
    hub: HubFiles, number: int, footer: Footer, index: int, leaves: Sequence[str], pool: DaemonPool
) -> AskedGroup:
    """Row group `index` of file `number`, only the columns or leaves `leaves`, asked for on `pool`."""
    file = hub_file(hub, number)
    ranges = chunk_ranges(footer.metadata.row_group(index), footer.leaves(leaves))
    size = sum(end - start for start, end in ranges)
    return AskedGroup(file, footer.metadata, index, tuple(leaves), fetch_spans(file, ranges, pool), size)


def read_row_group(hub: HubFiles, number: int, footer: Footer, index: int, leaves: Sequence[str]) -> pa.Table:
    """Row group `index` of file `number`, only the columns or leaves `leaves`."""
    with DaemonPool(READERS, "tracetui-hub") as pool:
        return ask_row_group(hub, number, footer, index, leaves, pool).read()
