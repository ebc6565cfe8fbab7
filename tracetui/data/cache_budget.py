"""How much room the cache takes, and who may free it.

The cache holds conversions (`<key>/`) and the metadata and fetched row groups of datasets read from
the hub (`<key>.remote/`), each with its manifest (see `manifest`). Three things keep it bounded:
- a work folder (`.converting-*`, `.remote-*`) is locked by the process writing it; one whose lock is
  free was left by a process that died (kill -9, a crash) and is swept (`sweep`, at every start);
- once a folder is complete, the older folders of the same origin (the same repo or path, split and
  revision asked for) are superseded and removed (`settle`);
- the whole cache stays under a size bound (`--cache-size`, the config's `cache_size`, else half of
  what the cache could take on its disk: its own size and the free space), the least recently used
  folders and fetched row groups going first (`trim`).

Nothing open now is removed: a process holds every folder it opened (a shared `flock` on the folder)
until it exits, and removing one takes the exclusive lock. A fetched row group may go while its
dataset is open (the mapping stays valid; it is fetched again if needed). Without `fcntl` (Windows)
nothing is removed but by `tracetui cache clear`, and open folders are not told apart.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..paths import cache_dir
from . import manifest

try:
    import fcntl
except ImportError:  # Windows: see the module's docstring
    fcntl = None  # type: ignore[assignment]

WORK_PREFIXES = (".converting-", ".remote-", ".damaged-")
"""Folders being written (or put aside as damaged), never opened as they are."""
WORK_GRACE = 10.0
"""Seconds a new work folder of a live process may go without its lock (between being made and locked)."""
MIN_DEFAULT = 1 << 30
_FOLDER = re.compile(r"^[0-9a-f]{24}(\.remote)?$")
_held: dict[Path, int] = {}
"""Folders this process holds (their locked descriptors), until it exits."""
_holding = threading.Lock()
_swept: set[Path] = set()


@dataclass(frozen=True, slots=True)
class Entry:
    """One folder of the cache, as `tracetui cache` lists it."""

    folder: Path
    source: str  # the dataset id or path; "(unknown: no manifest)" for a folder of another version
    kind: str  # "conversion", "remote" or "unknown"
    size: int  # bytes, every file in it
    used: float  # when it was last opened
    origin: tuple[str, ...]
    created: float

    @property
    def groups(self) -> Path:
        """Where a remote folder keeps its fetched row groups."""
        return self.folder / "groups"


# --- holding and removing --------------------------------------------------------------------
def hold(folder: Path) -> bool:
    """Hold `folder` against removal until this process exits; False when it is gone (it was being
    removed)."""
    with _holding:
        if folder in _held:
            return True
        try:
            descriptor = os.open(folder, os.O_RDONLY)
        except OSError:
            return False
        if fcntl is not None:
            fcntl.flock(descriptor, fcntl.LOCK_SH)  # waits while another process removes it
        if os.fstat(descriptor).st_nlink == 0:
            os.close(descriptor)
            return False
        _held[folder] = descriptor
        return True


def release(folder: Path) -> None:
    """Stop holding `folder` (a dataset this process no longer reads)."""
    with _holding:
        descriptor = _held.pop(folder, None)
    if descriptor is not None:
        os.close(descriptor)


def remove(folder: Path) -> bool:
    """Remove `folder` unless a process (this one too) holds it; whether it is gone."""
    if fcntl is None or folder in _held:
        return False
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held: open in another process, or being written
        os.close(descriptor)
        return False
    try:
        shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(descriptor)
    return not folder.exists()


def put_aside(folder: Path) -> None:
    """Take a damaged folder out of the way at once (another process may still read it), and remove it
    if nobody does; the next `sweep` removes it otherwise."""
    aside = folder.with_name(f".damaged-{folder.name}-{os.getpid()}-{time.monotonic_ns()}")
    try:
        os.rename(folder, aside)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    remove(aside)


@contextmanager
def work_folder(prefix: str) -> Iterator[Path]:
    """A new folder in the cache to write into, locked while this runs (a process that dies leaves it
    unlocked, for `sweep`), and removed afterwards unless it was renamed into place."""
    root = cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=root))
    descriptor = os.open(work, os.O_RDONLY)
    try:
        if fcntl is not None:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)
        os.close(descriptor)


def sweep() -> None:
    """Remove what processes that died left in the cache: work folders nobody holds (once per process)."""
    root = cache_dir()
    if root in _swept:
        return
    _swept.add(root)
    try:
        candidates = [p for p in root.iterdir() if p.name.startswith(WORK_PREFIXES) and p.is_dir()]
    except OSError:
        return
    for work in candidates:
        if work.name.startswith(".damaged-") or not _owner_alive(work):
            remove(work)


def _owner_alive(work: Path) -> bool:
    """Whether the process that made a work folder (its pid is in the name) may still be about to lock it."""
    try:
        young = time.time() - work.stat().st_mtime < WORK_GRACE
        pid = int(work.name.split("-")[1])
    except (OSError, ValueError, IndexError):
        return False
    if not young:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, someone else's
        return True
    return True


# --- what is there -----------------------------------------------------------------------------
def entries() -> list[Entry]:
    """Every conversion and remote folder of the cache, the most recently used first."""
    try:
        folders = [p for p in cache_dir().iterdir() if _FOLDER.match(p.name) and p.is_dir()]
    except OSError:
        return []
    found = []
    for folder in folders:
        kept = manifest.read(folder)
        size = _size(folder)
        if kept is None:
            found.append(Entry(folder, "(unknown: no manifest)", "unknown", size, manifest.last_used(folder), (), 0.0))
        else:
            used = manifest.last_used(folder)
            found.append(Entry(folder, kept.source, kept.kind, size, used, kept.origin, kept.created))
    return sorted(found, key=lambda entry: entry.used, reverse=True)


def total_size() -> int:
    return sum(entry.size for entry in entries())


def _size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file():
                total += path.stat().st_size
        except OSError:
            continue
    return total


def parse_size(text: str | int) -> int:
    """`500M`, `4G`, `1.5GB`, `0` (binary units), or a number of bytes, as bytes; ValueError otherwise."""
    if isinstance(text, int) and not isinstance(text, bool) and text >= 0:
        return text
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", str(text), re.IGNORECASE)
    if not match:
        raise ValueError(f"{str(text)[:40]!r} is not a size like 500M or 20G")
    return int(float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " "))


def size_text(size: int) -> str:
    """Bytes as the user reads them: 512 B, 3.4 MB, 41.0 GB."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


def default_limit() -> int:
    """Half of what the cache could take on its disk (its own size and the free space), at least 1 GiB."""
    root = cache_dir()
    existing = next((p for p in (root, *root.parents) if p.exists()), root)
    return max(MIN_DEFAULT, (shutil.disk_usage(existing).free + total_size()) // 2)


# --- keeping it bounded ------------------------------------------------------------------------
def settle(folder: Path, cache_size: int | None) -> None:
    """After `folder` is complete: remove the older folders of its origin, then keep the cache under
    its bound (`cache_size`, else `default_limit`)."""
    done = manifest.read(folder)
    if done is not None and done.origin:
        for entry in entries():
            if entry.folder != folder and entry.origin == done.origin and entry.created < done.created:
                remove(entry.folder)
    trim(default_limit() if cache_size is None else cache_size, keep=folder)


def trim(limit: int, keep: Path | None = None) -> None:
    """Evict the least recently used folders and fetched row groups until the cache fits in `limit`
    bytes; never a folder held open, nor `keep` (a folder, or a row group just written)."""
    found = entries()
    total = sum(entry.size for entry in found)
    if total <= limit:
        return
    left = {entry.folder: entry.size for entry in found}
    units: list[tuple[float, Path, Path | None]] = []  # (last used, path, its folder when a row group)
    for entry in found:
        units.append((entry.used, entry.folder, None))
        for group in entry.groups.glob("*.arrow"):
            try:
                units.append((group.stat().st_mtime, group, entry.folder))
            except OSError:
                continue
    for _, path, folder in sorted(units, key=lambda unit: unit[0]):
        if total <= limit:
            return
        if path == keep or (folder is None and path in _held):
            continue
        if folder is not None:
            try:
                size = path.stat().st_size
                path.unlink()
            except OSError:
                continue
            total -= size
            left[folder] -= size
        elif remove(path):
            total -= left[path]


def clear(source: str | None = None) -> tuple[list[Entry], list[Entry]]:
    """Remove every folder (of `source`: a dataset id or path, as `tracetui cache` lists it), and with no
    `source` the remembered split layouts too: (removed, kept because a process holds them)."""
    removed: list[Entry] = []
    kept: list[Entry] = []
    for entry in entries():
        if source is not None and entry.source not in _names(source):
            continue
        (removed if remove(entry.folder) else kept).append(entry)
    if source is None:
        shutil.rmtree(cache_dir() / "layouts", ignore_errors=True)
    return removed, kept


def _names(source: str) -> set[str]:
    """What `source` may be listed as: as typed, or as the absolute path it names."""
    names = {source, source.rstrip("/")}
    path = Path(source).expanduser()
    if path.exists():
        names.add(str(path.resolve()))
    if source.startswith("hf://datasets/"):
        names.add("/".join(source.removeprefix("hf://datasets/").split("/")[:2]).partition("@")[0])
    return names
