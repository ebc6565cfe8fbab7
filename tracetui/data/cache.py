"""Where converted datasets live, and how a source finds its conversion (or makes it once).

A local source is keyed by its files (path, size, mtime); a hub source by its repo, commit and files,
so its conversion is found before (or without) the files being downloaded. A conversion is complete or
absent: written into a work folder, sealed by its manifest (`manifest`), then renamed into place; a
folder that fails its check when opened, and any file kept beside it that cannot be read, is damaged:
it is rebuilt, and the user told in one line (`cache for X was damaged: rebuilding`, a warning of the
"tracetui" logger: the command line prints it, the app shows it). The size of the cache and what may be
removed is `cache_budget`'s.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ..paths import cache_dir
from . import manifest
from .cache_budget import hold, put_aside, settle, work_folder
from .errors import SourceError

if TYPE_CHECKING:
    from .sources import Progress, ResolvedSource

T = TypeVar("T")
CACHE_VERSION = 2
"""Bump when what a conversion holds changes: a new version never reads another's folders."""
CONVERSION = ("meta.arrow", "data.arrow")
log = logging.getLogger("tracetui.cache")
_reported: set[Path] = set()


def cache_key(source: ResolvedSource) -> str:
    """Changes whenever the data changes (a hub commit; a local file's path, size or mtime) or the cache format does."""
    hub = source.hub
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
    return folder if manifest.check(folder) is not None else None


def remote_dir(source: ResolvedSource) -> Path:
    """Where a hub source read remotely keeps its metadata, footers and fetched row groups."""
    return cache_dir() / f"{cache_key(source)}.remote"


def remote_kept(source: ResolvedSource) -> bool:
    """Whether a previous remote open kept the metadata of `source`, undamaged (it reopens reading nothing)."""
    return manifest.check(remote_dir(source)) is not None


def ensure_converted(source: ResolvedSource, progress: Progress | None = None, cache_size: int | None = None) -> Path:
    """The conversion folder of `source`, converting its files first when there is none (or it is
    damaged); held open for this process (`cache_budget.hold`). A new conversion supersedes the older
    ones of its origin, and the cache is kept under `cache_size` (`cache_budget.settle`)."""
    target = cache_dir() / cache_key(source)
    if _usable(source, target):
        return target
    from .convert import convert  # pyarrow.parquet and friends: only when there is something to convert

    def write(work: Path) -> list[str]:
        convert(source.files, work, progress)
        return list(CONVERSION)

    _make(source, target, "conversion", write, cache_size)
    return target


def remote_folder(source: ResolvedSource, read: Callable[[Path], list[str]], cache_size: int | None) -> Path:
    """The folder where a hub source read remotely keeps its metadata: the kept one, else the one
    `read(work)` writes (returning the names of the files it wrote), sealed and held like a conversion."""
    target = remote_dir(source)
    if not _usable(source, target):
        _make(source, target, "remote", read, cache_size)
    return target


def _usable(source: ResolvedSource, folder: Path) -> bool:
    """Whether `folder` is complete and now held; a damaged one is put aside with one line."""
    if manifest.check(folder) is not None and hold(folder):
        manifest.touch(folder)
        return True
    if folder.exists():
        report_damage(folder, source.dataset_id)
        put_aside(folder)
    return False


def _make(
    source: ResolvedSource, target: Path, kind: str, write: Callable[[Path], list[str]], cache_size: int | None
) -> None:
    """Write a folder in a work folder (`write(work)` returns the names of the files to seal), seal it,
    rename it into place, hold it and settle the cache."""
    root = cache_dir()
    try:
        with work_folder(".converting-" if kind == "conversion" else ".remote-") as work:
            names = write(work)
            manifest.seal(work, source.dataset_id, source.origin, kind, names)
            try:
                os.rename(work, target)
            except OSError:
                if not (target / manifest.NAME).is_file():  # not a race lost to another process: a real failure
                    raise
    except OSError as exc:
        raise SourceError(
            f"cannot write the cache at {root} ({exc.strerror or exc}): free some space, or set TRACETUI_CACHE_DIR"
        ) from None
    hold(target)
    settle(target, cache_size)


def report_damage(folder: Path, name: str | None = None, what: str = "") -> None:
    """Tell the user, once per folder, that what the cache kept for a source was damaged and is rebuilt."""
    if folder in _reported:
        return
    _reported.add(folder)
    if name is None:
        kept = manifest.read(folder)
        name = kept.source if kept is not None else str(folder)
    log.warning("cache for %s was damaged%s: rebuilding", name, f" ({what})" if what else "")


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
