"""Where converted datasets live, and how a source finds its conversion (or makes it once).

A local source is keyed by its files (path, size, mtime); a hub source by its repo, commit and files,
so its conversion is found before (or without) the files being downloaded. A conversion is complete or
absent, checked when opened, held while open, and made again when damaged (`cache_folders`); a file
kept beside it that no longer reads is worked out again (`read_kept`). Both say so in one line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from ..paths import cache_dir
from .cache_folders import kept_or_made, report_damage, sound

if TYPE_CHECKING:
    from .sources import Progress, ResolvedSource

T = TypeVar("T")
CACHE_VERSION = 2
"""Bump when what a conversion holds changes: a new version never reads another's folders."""
CONVERSION = ["meta.arrow", "data.arrow"]


def cache_key(source: ResolvedSource) -> str:
    """Changes whenever the data changes (a hub commit; a local file's path, size or mtime) or the cache format does."""
    hub = source.hub_files
    if hub is not None:
        identity: list[object] = [CACHE_VERSION, "hub", hub.repo_id, hub.commit, list(hub.paths), list(hub.sizes)]
    else:
        identity = [CACHE_VERSION]
        for file in source.files:
            stat = file.stat()
            identity.append([str(file), stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:24]


def find_conversion(source: ResolvedSource) -> Path | None:
    """The complete, undamaged conversion of `source`, if there is one (nothing is changed)."""
    folder = cache_dir() / cache_key(source)
    return folder if sound(folder) is not None else None


class Kept(NamedTuple):
    """What the cache has of a hub source, and where a remote read of it keeps its metadata."""

    conversion: Path | None
    remote: Path


def kept(source: ResolvedSource) -> Kept:
    key = cache_key(source)
    conversion = cache_dir() / key
    return Kept(conversion if sound(conversion) is not None else None, cache_dir() / f"{key}.remote")


def remote_kept(source: ResolvedSource) -> bool:
    """Whether a previous remote open kept the metadata of `source`, undamaged (it reopens reading nothing)."""
    return sound(kept(source).remote) is not None


def ensure_converted(
    source: ResolvedSource,
    progress: Progress | None = None,
    cache_size: int | None = None,
    beside: Callable[[Path, Progress | None], None] | None = None,
) -> Path:
    """The conversion folder of `source`, converted first when there is none (or it is damaged); held for
    this process. A new one supersedes the older ones of its origin, and the cache is kept under
    `cache_size` (see `cache_folders`). `beside(work folder, progress)` adds to a new conversion what is
    kept beside it (`dataset.converted`: its search text)."""
    target = cache_dir() / cache_key(source)
    make = partial(_convert, source, progress, beside)
    kept_or_made(target, source.dataset_id, source.origin, "conversion", make, cache_size)
    return target


BESIDE_SHARE = 0.1
"""Of a conversion's progress, what `beside` takes (writing the search text: ~7-11% of the time)."""


def _convert(
    source: ResolvedSource,
    progress: Progress | None,
    beside: Callable[[Path, Progress | None], None] | None,
    work: Path,
) -> list[str]:
    from .convert import convert  # pyarrow.parquet and friends: only when there is something to convert

    share = 0.0 if beside is None else BESIDE_SHARE
    convert(source.files, work, _scaled(progress, 0.0, 1.0 - share))
    if beside is not None:
        beside(work, _scaled(progress, 1.0 - share, 1.0))
    return CONVERSION


def _scaled(progress: Progress | None, low: float, high: float) -> Progress | None:
    """`progress` of a part of the work, from `low` to `high` of the whole."""
    if progress is None:
        return None
    return lambda done, text: progress(low + (high - low) * done, text)


def read_kept(path: Path, load: Callable[[Path], T]) -> T | None:
    """`load(path)` of a file kept beside a conversion (trial groups, an index, a fetched row group): None
    when there is none; one that cannot be read is damaged: removed with one line, to be worked out again."""
    try:
        return load(path)
    except FileNotFoundError:
        return None
    except Exception:  # whatever a cut-short or overwritten file makes its reader raise
        report_damage(path.parent.parent if path.parent.name == "groups" else path.parent, what=path.name)
        path.unlink(missing_ok=True)
        return None
