"""The life of a cache folder: made whole, checked when opened, held while open, and removed when it is
left behind, superseded or beyond the cache's size bound.

The cache holds conversions (`<key>/`: meta.arrow, data.arrow), the metadata of datasets read from the
hub (`<key>.remote/`: meta.arrow and one footer per parquet file; and the row groups fetched since), and
the trial summaries of harbor job folders (`jobs/<key>/`, see `data.jobs.summaries`: written whole, one
file at a time, so they have no manifest; held and listed like the others).
- Complete or absent: a folder is written into a work folder (`.converting-*`, `.remote-*`), its
  manifest (`manifest.json`: what it is of, and the size and a checksum of the head and tail of each
  file, which hold an Arrow file's schema and footer) written last, and only then renamed into place.
  The manifest is checked whenever the folder is opened, at the cost of a stat and two small reads per
  file: one cut short or overwritten since (a full disk, a crash, a hand) is damaged, put aside and made
  again, with one line (`cache for X was damaged: rebuilding`, a warning of the "tracetui" logger: the
  command line prints it, the app shows it). Files added beside later (trial groups, indexes, fetched
  row groups) are written whole (`paths.write_atomically`) and are damaged when they no longer read
  (`cache.read_kept`).
- Nothing open is removed: a process holds every folder it opened (a shared `flock` on it) until it
  exits, and removing one takes the exclusive lock. A work folder is locked by its writer: one whose
  lock is free was left by a process that died (kill -9, a crash) and is swept at the next start, but
  for the metadata of a hub dataset read in part (the app quit while its list grew): the next open of
  that dataset takes it over and reads only the files it lacks (`WorkFolder.left_for`); the sweep
  removes it once the dataset's folder is kept or after RESUMABLE_FOR, and `tracetui cache clear` with it.
- Bounded: once a folder is complete, the older ones of its origin (the same repo or path, split and
  revision asked for) are removed; and the whole cache stays under one size bound (`--cache-size`, the
  config's `cache_size`, else half of what the cache could take on its disk), the least recently used
  folders and fetched row groups going first (a row group may go while its dataset is open: the
  mapping stays valid, and it is fetched again if needed).
Without `fcntl` (Windows) nothing is removed but by `tracetui cache clear`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..paths import cache_dir, write_atomically
from .errors import SourceError

try:
    import fcntl
except ImportError:  # Windows: see the module's docstring
    fcntl = None  # type: ignore[assignment]

WORK_PREFIXES = (".converting-", ".remote-", ".damaged-")
"""Folders being written (or put aside as damaged), never opened as they are."""
WORK_GRACE = 10.0
"""Seconds a new work folder of a live process may go without its lock (between being made and locked)."""
RESUMABLE_FOR = 2 * 24 * 3600.0
"""Seconds the part of a hub dataset's metadata that an open read before it was cut short is kept for the
next open to go on from (its work folder's age: the last file it took)."""
MIN_DEFAULT = 1 << 30
_FOLDER = re.compile(r"^[0-9a-f]{24}(\.remote)?$")
_held: dict[Path, int] = {}
"""Folders this process holds (their locked descriptors), until it exits."""
_holding = threading.Lock()
_swept: set[Path] = set()
_reported: set[Path] = set()
log = logging.getLogger("tracetui.cache")


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


def read_manifest(folder: Path) -> Manifest | None:
    """The folder's manifest as written (None when it has none, or it cannot be read): checks nothing else."""
    try:
        data = json.loads((folder / NAME).read_bytes())
        files = {str(name): (int(size), str(digest)) for name, (size, digest) in data["files"].items()}
        origin = tuple(map(str, data["origin"]))
        return Manifest(str(data["source"]), origin, str(data["kind"]), files, float(data["created"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def sound(folder: Path) -> Manifest | None:
    """The manifest of a complete, undamaged folder; None when the folder is partial or damaged (or missing)."""
    manifest = read_manifest(folder)
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


@dataclass(frozen=True, slots=True)
class Entry:
    """One folder of the cache, as `tracetui cache` lists it."""

    folder: Path
    source: str  # the dataset id or path; "(unknown: no manifest)" for a folder of another version
    kind: str  # "conversion", "remote", "jobs" (a job folder's summaries) or "unknown"
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


class WorkFolder:
    """A new folder in the cache to write into, locked while it is written (a process that dies leaves it
    unlocked, for `sweep`): sealed and renamed into place by `finish`, else removed by `abandon`. Made and
    finished on different threads when a dataset is read from the hub while its metadata still comes in.
    One made for a `target` is named for it, for the next open of that target to go on from
    (`left_for`) should this one be cut short."""

    def __init__(self, kind: str, target: Path | None = None) -> None:
        root = cache_dir()
        root.mkdir(parents=True, exist_ok=True)
        self.kind = kind
        self.path = Path(tempfile.mkdtemp(prefix=_work_prefix(kind, target), dir=root))
        self._descriptor: int | None = os.open(self.path, os.O_RDONLY)
        if fcntl is not None:
            fcntl.flock(self._descriptor, fcntl.LOCK_EX)

    @classmethod
    def left_for(cls, kind: str, target: Path) -> WorkFolder | None:
        """The work folder for `target` that an open cut short left (its process gone: its lock free), taken
        over (locked, and renamed for this process), the most recent first; None when there is none."""
        if fcntl is None:
            return None
        for left in sorted(_left_for(kind, target), key=_age):
            if _owner_alive(left):  # just made by a live process, not locked yet
                continue
            try:
                descriptor = os.open(left, os.O_RDONLY)
            except OSError:
                continue
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # its process still writes it
                os.close(descriptor)
                continue
            mine = left.with_name(_work_prefix(kind, target) + os.urandom(4).hex())  # this process's name
            try:
                os.rename(left, mine)
            except OSError:
                os.close(descriptor)
                raise
            work = cls.__new__(cls)
            work.kind, work.path, work._descriptor = kind, mine, descriptor
            return work
        return None

    def finish(
        self, target: Path, source: str, origin: tuple[str, ...], names: list[str], cache_size: int | None
    ) -> None:
        """Seal the files `names`, rename the folder to `target` and hold it there; then the older folders
        of its origin go and the cache is kept under its bound (`settle`). Raises SourceError when the
        cache cannot be written."""
        try:
            seal(self.path, source, origin, self.kind, names)
            try:
                os.rename(self.path, target)
            except OSError:
                if not (target / NAME).is_file():  # not a race lost to another process: a real failure
                    raise
        except OSError as exc:
            raise unwritable(exc) from None
        self._unlock()
        hold(target)
        settle(target, cache_size)

    def abandon(self) -> None:
        """Remove the folder unless `finish` renamed it into place."""
        if self._descriptor is not None:
            shutil.rmtree(self.path, ignore_errors=True)
            self._unlock()

    def leave(self) -> None:
        """Unlock the folder unless `finish` renamed it into place: left for a later open of its target to
        go on from (`left_for`), or removed when there is nothing in it."""
        if self._descriptor is not None:
            with contextlib.suppress(OSError):
                self.path.rmdir()  # only when empty
            self._unlock()

    def _unlock(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None


def kept(target: Path, source: str) -> bool:
    """Whether `target` is a complete, undamaged folder, now held for this process; a damaged one is put
    aside, with one line."""
    if sound(target) is not None and hold(target):
        touch(target)
        return True
    if target.exists():
        report_damage(target, source)
        put_aside(target)
    return False


def kept_or_made(
    target: Path,
    source: str,
    origin: tuple[str, ...],
    kind: str,
    write: Callable[[Path], list[str]],
    cache_size: int | None,
) -> None:
    """Make sure `target` is a complete folder, held for this process: the kept one when it is sound, else
    one made again (a damaged one put aside, with one line): `write(work)` fills a work folder and returns
    the names of the files to seal, then the manifest is written, the folder renamed into place and the
    cache settled (`settle`). `source`, `origin` and `kind` go into the manifest. Raises SourceError
    when the cache cannot be written."""
    if kept(target, source):
        return
    try:
        work = WorkFolder(kind)
    except OSError as exc:
        raise unwritable(exc) from None
    try:
        names = write(work.path)
    except OSError as exc:
        raise unwritable(exc) from None
    else:
        work.finish(target, source, origin, names, cache_size)
    finally:
        work.abandon()


def _work_prefix(kind: str, target: Path | None, pid: str | None = None) -> str:
    """`.converting-PID-` or `.remote-PID-`, then the target's name and `-` for one made for a target."""
    kinds = ".converting" if kind == "conversion" else ".remote"
    return f"{kinds}-{pid or os.getpid()}-" + (f"{target.name}-" if target is not None else "")


def _left_for(kind: str, target: Path) -> list[Path]:
    """The work folders of `kind` named for `target` (see `WorkFolder`), of any process."""
    try:
        return [p for p in target.parent.glob(f"{_work_prefix(kind, target, '*')}*") if p.is_dir()]
    except OSError:
        return []


def _age(folder: Path) -> float:
    """Seconds since `folder` last changed (a file added to it); infinite when it is gone."""
    try:
        return time.time() - folder.stat().st_mtime
    except OSError:
        return float("inf")


def _resumable(work: Path) -> bool:
    """Whether a work folder nobody writes holds part of a hub dataset's metadata for its next open to go
    on from: named for a target not kept yet, and younger than RESUMABLE_FOR."""
    parts = work.name.split("-")
    if not work.name.startswith(".remote-") or len(parts) < 4 or not _FOLDER.match(parts[2]):
        return False
    return sound(work.parent / parts[2]) is None and _age(work) < RESUMABLE_FOR


def unwritable(exc: OSError) -> SourceError:
    """The one line said when the cache cannot be written."""
    return SourceError(
        f"cannot write the cache at {cache_dir()} ({exc.strerror or exc}): free some space, or set TRACETUI_CACHE_DIR"
    )


def report_damage(folder: Path, name: str | None = None, what: str = "") -> None:
    """Tell the user, once per folder, that what the cache kept for a source was damaged and is rebuilt."""
    if folder in _reported:
        return
    _reported.add(folder)
    if name is None:
        kept = read_manifest(folder)
        name = kept.source if kept is not None else str(folder)
    log.warning("cache for %s was damaged%s: rebuilding", name, f" ({what})" if what else "")


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
        if work.name.startswith(".damaged-") or not (_owner_alive(work) or _resumable(work)):
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
    """Every conversion, remote and job folder of the cache, the most recently used first."""
    found = _job_entries()
    try:
        folders = [p for p in cache_dir().iterdir() if _FOLDER.match(p.name) and p.is_dir()]
    except OSError:
        folders = []
    for folder in folders:
        kept = read_manifest(folder)
        size = _size(folder)
        if kept is None:
            found.append(Entry(folder, "(unknown: no manifest)", "unknown", size, last_used(folder), (), 0.0))
        else:
            used = last_used(folder)
            found.append(Entry(folder, kept.source, kept.kind, size, used, kept.origin, kept.created))
    return sorted(found, key=lambda entry: entry.used, reverse=True)


JOB_SUMMARIES = "jobs"
"""The cache's folder of job folder summaries (data/jobs/summaries.py writes them, one folder a job)."""


def job_of(folder: Path) -> str | None:
    """The job folder a folder of JOB_SUMMARIES is of, as its newest summaries file names it (None: no
    such file, or an older one without the name)."""
    versions = [(int(m.group(1)), p) for p in folder.glob("summaries-v*.json") if (m := _SUMMARIES.match(p.name))]
    if not versions:
        return None
    try:
        job = json.loads(max(versions)[1].read_bytes()).get("job")
    except (OSError, ValueError, AttributeError):
        return None
    return job if isinstance(job, str) else None


_SUMMARIES = re.compile(r"summaries-v(\d+)\.json")


def _job_entries() -> list[Entry]:
    """The summaries kept for job folders (their source: the job folder's path)."""
    try:
        folders = [p for p in (cache_dir() / JOB_SUMMARIES).iterdir() if _FOLDER.match(p.name) and p.is_dir()]
    except OSError:
        return []
    found = []
    for folder in folders:
        job = job_of(folder)
        used = last_used(folder)
        found.append(
            Entry(folder, job or "(unknown job folder)", "jobs" if job else "unknown", _size(folder), used, (), used)
        )
    return found


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


def default_limit(total: int | None = None) -> int:
    """Half of what the cache could take on its disk (its own size, `total` when known, and the free
    space), at least 1 GiB."""
    root = cache_dir()
    existing = next((p for p in (root, *root.parents) if p.exists()), root)
    if total is None:
        total = sum(entry.size for entry in entries())
    return max(MIN_DEFAULT, (shutil.disk_usage(existing).free + total) // 2)


# --- keeping it bounded ------------------------------------------------------------------------
def settle(folder: Path, cache_size: int | None) -> None:
    """After `folder` is complete: remove the older folders of its origin, then keep the cache under
    its bound (`cache_size`, else `default_limit`)."""
    done = read_manifest(folder)
    if done is not None and done.origin:
        for entry in entries():
            if entry.folder != folder and entry.origin == done.origin and entry.created < done.created:
                remove(entry.folder)
    trim(cache_size, keep=folder)


def trim(limit: int | None, keep: Path | None = None) -> None:
    """Evict the least recently used folders and fetched row groups until the cache fits in `limit`
    bytes (None: `default_limit`); never a folder held open, nor `keep` (a folder, or a row group just
    written)."""
    found = entries()
    total = sum(entry.size for entry in found)
    if limit is None:
        limit = default_limit(total)
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
    names = set() if source is None else _names(source)
    for entry in entries():
        if source is not None and not _of(entry, names):
            continue
        (removed if remove(entry.folder) else kept).append(entry)
    if source is None:
        shutil.rmtree(cache_dir() / "layouts", ignore_errors=True)
        for left in cache_dir().glob(".remote-*"):  # hub metadata read in part, nobody writing it
            if left.is_dir() and not _owner_alive(left):
                remove(left)
    return removed, kept


def _of(entry: Entry, names: set[str]) -> bool:
    """Whether `entry` is kept for the source named `names`: that source, or for a job folder's summaries,
    a folder it is in (a jobs root clears the summaries of its jobs)."""
    if entry.source in names:
        return True
    return entry.kind == "jobs" and any(
        entry.source.startswith(name.rstrip("/") + "/") for name in names if name.startswith("/")
    )


def _names(source: str) -> set[str]:
    """What `source` may be listed as: as typed, or as the absolute path it names."""
    names = {source, source.rstrip("/")}
    path = Path(source).expanduser()
    if path.exists():
        names.add(str(path.resolve()))
    if source.startswith("hf://datasets/"):
        names.add("/".join(source.removeprefix("hf://datasets/").split("/")[:2]).partition("@")[0])
    return names
