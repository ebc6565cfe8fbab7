"""Talking to the Hugging Face hub: one quick look at a repo, its cached snapshots, range reads, downloads.

Everything goes through `huggingface_hub` (its endpoint, token, cache layout and offline switch). Two
things are ours: the first request of an open has a short timeout and no retries, so an unreachable
hub fails over to the cache in ~3 s instead of ~24 s of retry back-off; and range reads retry once,
briefly, so a hub that goes away mid-session is reported at once rather than after the back-off.

Imported only when a source is a hub dataset: a local open never loads huggingface_hub.
"""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from .errors import SourceError, first_line
from .sources import HubFiles

T = TypeVar("T")
R = TypeVar("R")

FAILOVER_SECONDS = 3.0
"""The first request of an open: after this long without an answer, the hub counts as unreachable."""
READ_TIMEOUT = 5.0
"""A range read gives up after this long without a byte (once more after a short pause)."""
PART_BYTES = 4 << 20
"""Long ranges are fetched as parts of this size on parallel connections."""
CHUNK_BYTES = 256 << 10
"""Downloads are written in chunks of this size (huggingface_hub's default, 10 MB, takes seconds on a slow link)."""
COALESCE_BYTES = 8 << 10
"""Ranges closer than this are fetched as one, as pyarrow's own read coalescing does: a small gap (a small
column between two short ones) costs less than another request; a row group's text never fits in one."""


class Unreachable(SourceError):
    """The hub did not answer (refused, timed out, 5xx); the message is one line."""


def offline() -> bool:
    """HF_HUB_OFFLINE (huggingface_hub's switch) or HF_DATASETS_OFFLINE (datasets'), as `datasets` reads them."""
    from huggingface_hub import constants

    return constants.HF_HUB_OFFLINE or os.environ.get("HF_DATASETS_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")


def quiet() -> None:
    """huggingface_hub's retry warnings would bury our one-line messages; its progress bars stay."""
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()


def listing(repo_id: str, revision: str | None) -> tuple[str, dict[str, int]]:
    """(commit, size of every file) of a dataset repo, in one request that fails over quickly.

    Raises SourceError when the hub answers no (unknown, gated or private repo, unknown revision) and
    Unreachable when it does not answer.
    """
    from huggingface_hub import HfApi

    try:
        info = HfApi().dataset_info(repo_id, revision=revision, files_metadata=True, timeout=FAILOVER_SECONDS)
    except Exception as exc:
        raise _explain(repo_id, revision, exc) from None
    if info.sha is None:
        raise Unreachable("the hub did not say which commit it serves")
    return info.sha, {s.rfilename: int(s.size or 0) for s in info.siblings or ()}


def _explain(repo_id: str, revision: str | None, exc: Exception) -> Exception:
    """A hub failure as SourceError (the hub said no) or Unreachable (it did not answer)."""
    from huggingface_hub import errors

    if isinstance(exc, errors.GatedRepoError):
        return SourceError(f"{repo_id}: gated dataset; accept its terms on the hub and set HF_TOKEN")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return SourceError(f"{repo_id}: no such dataset on the hub (or it is private: set HF_TOKEN)")
    if isinstance(exc, errors.RevisionNotFoundError):
        return SourceError(f"{repo_id}: no revision {revision!r}")
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, errors.HfHubHTTPError) and status is not None and status < 500:
        return SourceError(f"{repo_id}: the hub refused ({first_line(exc)})")
    return Unreachable(first_line(exc))


def snapshot_folder(repo_id: str, commit: str) -> Path:
    """Where huggingface_hub keeps the files of `repo_id` at `commit` (they may not be there yet)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="dataset") / "snapshots" / commit


def cached_snapshot(repo_id: str, revision: str | None) -> Path | None:
    """The cached snapshot folder of `revision` (None when the cache has none)."""
    from huggingface_hub import errors, snapshot_download

    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, local_files_only=True))
    except errors.LocalEntryNotFoundError:
        return None
    except (OSError, errors.HfHubHTTPError) as exc:
        raise SourceError(f"{repo_id}: cannot read the Hugging Face cache ({first_line(exc)})") from None


def card(repo_id: str, commit: str) -> Path | None:
    """The dataset card (README.md) at `commit`, fetched into the HF cache; None without one."""
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(repo_id, "README.md", repo_type="dataset", revision=commit))
    except Exception:  # no card, or it cannot be read: the default layout applies, as in `datasets`
        return None


class Cancelled(Exception):
    """Raised from a progress callback to stop a download; the partial file is discarded."""


def download(files: HubFiles, progress: Callable[[int], None] | None = None, workers: int = 4) -> None:
    """Download the files not yet in the HF cache (huggingface_hub's console bars without `progress`;
    else `progress(bytes)` for every chunk, which may raise Cancelled to stop).

    A dropped connection resumes where it stopped (huggingface_hub retries with a range); a shard whose
    download is stopped (the app quits) starts over next time, shards already downloaded stay.
    """
    from huggingface_hub import constants, hf_hub_download

    quiet()
    # huggingface_hub writes (and resumes a dropped connection, and lets `progress` cancel) a chunk at a time
    constants.DOWNLOAD_CHUNK_SIZE = min(constants.DOWNLOAD_CHUNK_SIZE, CHUNK_BYTES)
    tqdm_class = None if progress is None else _byte_counter(progress)
    missing = [path for path, local in zip(files.paths, files.local) if not local.exists()]

    def fetch(path: str) -> None:
        try:
            hf_hub_download(files.repo_id, path, repo_type="dataset", revision=files.commit, tqdm_class=tqdm_class)
        except (Cancelled, SourceError):
            raise
        except Exception as exc:
            raise _explain(files.repo_id, files.commit, exc) from None

    parallel(fetch, missing, workers)
    _remember_ref(files)


def _remember_ref(files: HubFiles) -> None:
    """Record which commit the branch or tag names (as huggingface_hub does), so that an offline open of
    the branch finds this complete snapshot."""
    if files.ref == files.commit:
        return
    ref = files.folder.parent.parent / "refs" / files.ref
    try:
        ref.parent.mkdir(parents=True, exist_ok=True)
        temporary = ref.with_name(f"{ref.name}.{os.getpid()}.tmp")
        temporary.write_text(files.commit)
        os.replace(temporary, ref)
    except OSError:  # a read-only cache: offline opens name the commit instead
        pass


def _byte_counter(report: Callable[[int], None]) -> type:
    """A tqdm stand-in for huggingface_hub's downloads that passes each chunk's size to `report`."""

    class ByteCounter:
        def __init__(self, *args, initial: int = 0, **kwargs) -> None:
            if initial:
                report(initial)

        def update(self, n: int | float = 1) -> None:
            report(int(n))

        def __enter__(self) -> ByteCounter:
            return self

        def __exit__(self, *exc) -> None:
            pass

        def close(self) -> None:
            pass

    return ByteCounter


# --- range reads ---------------------------------------------------------------------------------
def parallel(
    work: Callable[[T], R], items: list[T], workers: int = 8, done: Callable[[int], None] | None = None
) -> list[R]:
    """`[work(item) for item in items]` on up to `workers` daemon threads, raising the first error;
    `done(count)` after each item.

    Daemon threads, not a ThreadPoolExecutor: the interpreter joins those at exit, so a read stalled
    on a hub that stopped answering would hold up quitting until its timeouts ran out.
    """
    if len(items) <= 1 or workers <= 1:
        return [work(item) for item in items]
    results: list = [None] * len(items)
    finished = 0
    errors: list[BaseException] = []
    pending = iter(range(len(items)))
    lock = threading.Lock()

    def run() -> None:
        nonlocal finished
        while True:
            with lock:
                if errors:
                    return
                index = next(pending, -1)
            if index < 0:
                return
            try:
                results[index] = work(items[index])
            except BaseException as exc:  # handed to the caller
                with lock:
                    errors.append(exc)
                return
            if done is not None:
                with lock:
                    finished += 1
                    done(finished)

    threads = [threading.Thread(target=run, name="tracetui-hub", daemon=True) for _ in range(min(workers, len(items)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def ahead(work: Callable[[int], R], items: range, depth: int) -> Iterator[R]:
    """`work(item)` for each item, in order, with up to `depth` more running ahead on daemon threads
    (a streamed scan fetches the next row groups while the current one is searched)."""
    slots: dict[int, tuple[threading.Event, list]] = {}

    def start(position: int) -> None:
        done, box = threading.Event(), list[tuple[bool, Any]]()

        def run() -> None:
            try:
                box.append((True, work(items[position])))
            except BaseException as exc:  # handed to the consumer
                box.append((False, exc))
            done.set()

        slots[position] = (done, box)
        threading.Thread(target=run, name="tracetui-ahead", daemon=True).start()

    for position in range(len(items)):
        for upcoming in range(position, min(position + depth + 1, len(items))):
            if upcoming not in slots:
                start(upcoming)
        done, box = slots.pop(position)
        done.wait()
        succeeded, value = box[0]
        if not succeeded:
            raise value
        yield value


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

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
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
    wanted: list[tuple[HubFile, list[tuple[int, int]]]], done: Callable[[float], None] | None = None, workers: int = 16
) -> None:
    """Fetch byte ranges of several files at once: ranges closer than COALESCE_BYTES merged, longer than
    PART_BYTES split, all parts on parallel connections (the hub's latency, not its bandwidth, is what
    a few hundred small reads wait for); `done(fraction)` as parts arrive. Each file keeps its spans."""
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
    report = None if done is None else (lambda count: done(count / len(parts)))
    fetched = dict(zip(parts, parallel(lambda part: get_range(part[0].url, part[1], part[2]), parts, workers, report)))
    for file, start, end in spans:
        pieces = [fetched[(file, s, min(s + PART_BYTES, end))] for s in range(start, end, PART_BYTES)]
        file._spans.append((start, b"".join(pieces)))
