"""What makes a cache folder complete: its manifest, written last, and the check made when it is opened.

A conversion (meta.arrow, data.arrow) or a remote dataset's metadata (meta.arrow, one footer per parquet
file) is written into a work folder; its manifest (`manifest.json`: what it is of, and the size and a
checksum of the head and tail of each of those files, which hold an Arrow file's schema and footer) is
written last, and only then is the folder renamed into place. So a folder is complete or it is not
there; and a file cut short or overwritten since (a full disk, a crash of the machine, a user) no longer
matches its line, which `check` finds before anything maps it. Files added beside them later (trial
groups, indexes, fetched row groups) are each written whole (`paths.write_atomically`) and checked when
read. Reading the checks costs a stat and two small reads per file, whatever the size of the data.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..paths import write_atomically

NAME = "manifest.json"
EDGE = 64 << 10
"""Bytes of each end of a file in its checksum (an Arrow file's whole footer, when it is longer)."""
_ARROW_MAGIC = b"ARROW1"


@dataclass(frozen=True, slots=True)
class Manifest:
    """What a cache folder holds."""

    source: str  # the dataset id or path, for messages and `tracetui cache`
    origin: tuple[str, ...]  # see ResolvedSource.origin: a newer folder of the same origin supersedes this one
    kind: str  # "conversion" or "remote"
    files: dict[str, tuple[int, str]]  # name -> (size, checksum)
    created: float


def seal(folder: Path, source: str, origin: tuple[str, ...], kind: str, names: list[str]) -> None:
    """Write the manifest of the files `names` in `folder` (call it last, before the folder is renamed
    into place)."""
    files = {name: fingerprint(folder / name) for name in names}
    data = {"source": source, "origin": list(origin), "kind": kind, "files": files, "created": time.time()}
    write_atomically(folder / NAME, json.dumps(data).encode())


def read(folder: Path) -> Manifest | None:
    """The folder's manifest as written (None when it has none, or it cannot be read): checks nothing else."""
    try:
        data = json.loads((folder / NAME).read_bytes())
        files = {str(name): (int(size), str(digest)) for name, (size, digest) in data["files"].items()}
        origin = tuple(map(str, data["origin"]))
        return Manifest(str(data["source"]), origin, str(data["kind"]), files, float(data["created"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def check(folder: Path) -> Manifest | None:
    """The manifest of a complete, undamaged folder; None when the folder is partial or damaged (or missing)."""
    manifest = read(folder)
    if manifest is None:
        return None
    for name, expected in manifest.files.items():
        try:
            if fingerprint(folder / name) != expected:
                return None
        except OSError:
            return None
    return manifest


def fingerprint(path: Path) -> tuple[int, str]:
    """(size, checksum of the file's first and last EDGE bytes, or its whole Arrow footer)."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        digest = hashlib.sha256(size.to_bytes(8, "little"))
        digest.update(file.read(EDGE))
        tail = EDGE
        if size >= 10:
            file.seek(size - 10)
            end = file.read(10)
            if end[4:] == _ARROW_MAGIC:  # <footer><int32 footer length><ARROW1>
                tail = max(tail, int.from_bytes(end[:4], "little", signed=True) + 10)
        file.seek(max(EDGE, size - tail) if size > EDGE else size)
        digest.update(file.read())
    return size, digest.hexdigest()


def last_used(folder: Path) -> float:
    """When the folder was last opened (its manifest's mtime; the folder's own without one)."""
    for path in (folder / NAME, folder):
        try:
            return path.stat().st_mtime
        except OSError:
            continue
    return 0.0


def touch(folder: Path) -> None:
    """Mark the folder as used now (what the cache's size bound evicts last)."""
    with contextlib.suppress(OSError):  # a read-only cache: it only ages
        os.utime(folder / NAME)
