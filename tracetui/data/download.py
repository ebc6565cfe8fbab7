"""The background download of a dataset read remotely, its conversion, and whether both fit on disk.

While the app reads a hub dataset remotely, a worker downloads its files into the HF cache and converts
them; the session then swaps in the local copy (`Session.use_local`). `Download` is the state that
worker writes and the UI, search and indexes read ("waiting for the download, 43%").
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..paths import cache_dir
from .compute import pc
from .dataset import Storage
from .hub import Cancelled, download
from .remote import RemoteDataset
from .source_kinds import kind_of
from .trial_groups import grouped

if TYPE_CHECKING:
    from .session import Session

CONVERSION_SHARE = 0.2
"""Of the progress bar: the download is the rest (converting a shard takes ~1/5 of fetching it here)."""


@dataclass
class Download:
    """Progress of the background download (+ conversion) of a session's remote datasets."""

    total: int  # bytes to download
    done: int = 0
    converting: float = 0.0  # fraction of the conversion done
    error: str | None = None  # why it stopped (one line); remote reading goes on
    finished: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def fraction(self) -> float:
        fetched = min(1.0, self.done / self.total) if self.total else 1.0
        return (1 - CONVERSION_SHARE) * fetched + CONVERSION_SHARE * self.converting

    @property
    def running(self) -> bool:
        return not self.finished and self.error is None

    def add(self, count: int) -> None:
        with self._lock:
            self.done += count


def remote_datasets(session: Session) -> list[tuple[int, RemoteDataset]]:
    """The session's datasets read from the hub, with their index in the session."""
    return [(index, ds) for index, ds in enumerate(session.datasets) if isinstance(ds, RemoteDataset)]


def missing_bytes(storage: RemoteDataset) -> int:
    """Bytes of a hub dataset's files not yet in the HF cache."""
    hub = storage.hub_files
    return sum(size for size, local in zip(hub.sizes, hub.local) if not local.exists())


def disk_shortfall(storage: RemoteDataset) -> tuple[int, int] | None:
    """None when downloading and converting `storage` fits in the free disk space, else (bytes needed,
    bytes free). The conversion's size is the text's uncompressed size, from the parquet footers."""
    hub = storage.hub_files
    downloading = missing_bytes(storage)
    converting = sum(pc.sum(storage.meta.column(name)).as_py() or 0 for name in ("n_bytes", "verifier_bytes"))
    hf_disk, cache_disk = _existing(hub.folder), _existing(cache_dir())
    hf_free, cache_free = shutil.disk_usage(hf_disk).free, shutil.disk_usage(cache_disk).free
    if hf_disk.stat().st_dev == cache_disk.stat().st_dev:
        fits = downloading + converting <= hf_free
    else:
        fits = downloading <= hf_free and converting <= cache_free
    return None if fits else (downloading + converting, min(hf_free, cache_free))


def local_copy(
    storage: RemoteDataset, state: Download, cancelled: Callable[[], bool], cache_size: int | None
) -> tuple[Storage, np.ndarray]:
    """Download a remote dataset, then open it as its kind opens a downloaded source (converting it);
    returns the local dataset and its trials' exact text sizes.

    Raises Cancelled when `cancelled()`, SourceError or hub.Unreachable when the hub fails.
    """
    source = storage.source

    def fetched(count: int) -> None:
        if cancelled():
            raise Cancelled()
        state.add(count)

    def converted(fraction: float, message: str) -> None:
        if cancelled():
            raise Cancelled()
        state.converting = max(fraction, 0.01)

    download(storage.hub_files, fetched)
    dataset = kind_of(source).open(source, converted, cache_size)
    return dataset, grouped(dataset).size


def _existing(folder: Path) -> Path:
    """`folder`, or its nearest ancestor that exists (where it would be created)."""
    return next(candidate for candidate in (folder, *folder.parents) if candidate.exists())
