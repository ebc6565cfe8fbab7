"""Where converted datasets live, and how a source finds its conversion (or makes it once)."""

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

CACHE_VERSION = 1


def cache_key(files: tuple[Path, ...]) -> str:
    """Changes whenever a file is replaced (path, size or mtime) or the cache format changes."""
    identity: list[object] = [CACHE_VERSION]
    for file in files:
        stat = file.stat()
        identity.append([str(file), stat.st_size, stat.st_mtime_ns])
    return hashlib.sha256(json.dumps(identity).encode()).hexdigest()[:24]


def cached_dir(files: tuple[Path, ...]) -> Path | None:
    """The finished conversion of `files`, if there is one."""
    folder = cache_dir() / cache_key(files)
    return folder if (folder / "meta.arrow").is_file() and (folder / "data.arrow").is_file() else None


def ensure_converted(files: tuple[Path, ...], progress: Progress | None = None) -> Path:
    """Return the conversion folder of `files`, converting them first if needed.

    The conversion is written to a temporary folder and renamed into place, so an interrupted run
    leaves nothing half-written behind and two processes converting at once do not clash.
    """
    done = cached_dir(files)
    if done is not None:
        return done
    from .convert import convert  # pyarrow.parquet and friends: only when there is something to convert

    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".converting-", dir=root))
    except OSError as exc:
        raise SourceError(f"cannot write the cache at {root} ({exc.strerror}); set TRACETUI_CACHE_DIR") from None
    target = root / cache_key(files)
    try:
        convert(files, work, progress)
        try:
            os.rename(work, target)
        except OSError:
            if cached_dir(files) is None:  # not a lost race with another process: a real failure
                raise
    except OSError as exc:
        raise SourceError(f"cannot write the cache at {root} ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
