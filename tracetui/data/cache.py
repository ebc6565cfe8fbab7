"""Where converted datasets live, and how a source finds its conversion (or makes it once).

A local source is keyed by its files (path, size, mtime); a hub source by its repo, commit and files,
so its conversion is found before (or without) the files being downloaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import cache_dir
from .errors import SourceError

if TYPE_CHECKING:
    from .convert import Progress
    from .sources import ResolvedSource

CACHE_VERSION = 1


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
    """The finished conversion of `source`, if there is one."""
    folder = cache_dir() / cache_key(source)
    return folder if (folder / "meta.arrow").is_file() and (folder / "data.arrow").is_file() else None


def remote_dir(source: ResolvedSource) -> Path:
    """Where a hub source read remotely keeps its metadata, footers and fetched row groups."""
    return cache_dir() / f"{cache_key(source)}.remote"


def remote_kept(source: ResolvedSource) -> bool:
    """Whether a previous remote open kept the metadata of `source` (it reopens reading nothing)."""
    return (remote_dir(source) / "meta.arrow").is_file()


def ensure_converted(source: ResolvedSource, progress: Progress | None = None) -> Path:
    """Return the conversion folder of `source`, converting its files first if needed.

    The conversion is written to a temporary folder and renamed into place, so an interrupted run
    leaves nothing half-written behind and two processes converting at once do not clash.
    """
    done = find_conversion(source)
    if done is not None:
        return done
    from .convert import convert  # pyarrow.parquet and friends: only when there is something to convert

    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".converting-", dir=root))
    except OSError as exc:
        raise SourceError(f"cannot write the cache at {root} ({exc.strerror}); set TRACETUI_CACHE_DIR") from None
    target = root / cache_key(source)
    try:
        convert(source.files, work, progress)
        try:
            os.rename(work, target)
        except OSError:
            if not (target / "data.arrow").is_file():  # not a lost race with another process: a real failure
                raise
    except OSError as exc:
        raise SourceError(f"cannot write the cache at {root} ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
