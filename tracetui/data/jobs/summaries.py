"""Every trial of a job folder summarized, read back from the tracetui cache when its files have not
changed (same names, sizes and mtimes): a reopen parses no trajectory.

The cache is `$TRACETUI_CACHE_DIR/jobs/<key of the job folder's path>/summaries-v<N>.json` (with the job
folder's path in it, for `tracetui cache`), and with the trial folders as last listed and the job
folder's mtime then: while that mtime stays, no trial folder came or went, and a reopen opens on the
kept summaries alone (`Kept.current`), leaving the trials' stamps to be checked after the first frame
(`follow`). The file is written whole (to a temporary file renamed into place) when a summary changed; a
cache that cannot be written, or that cannot be read back (damaged, or of another version), only means
reading the trials again. Nothing is ever written into the job folder.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ...paths import cache_dir, write_atomically
from ..cache_folders import JOB_SUMMARIES
from .files import stamp
from .trial import SUMMARY_VERSION, TrialSummary, summarize

Progress = Callable[[float, str], None]


def job_folder(job: Path) -> Path:
    """Where the cache keeps what it knows of the job folder `job` (by its absolute path)."""
    key = hashlib.sha256(str(job).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return cache_dir() / JOB_SUMMARIES / key


def summaries_file(folder: Path) -> Path:
    """The summaries file of a job's cache folder."""
    return folder / f"summaries-v{SUMMARY_VERSION}.json"


def _path(job: Path) -> Path:
    return summaries_file(job_folder(job))


def kept(job: Path) -> bool:
    """Whether the cache has summaries of `job` written since a trial folder last came or went (the
    job folder's mtime against the summaries file's): then opening it reads few trials, if any (those
    that changed since), and is quick. Two stats; a clock skew only picks the other way of opening."""
    try:
        return _path(job).stat().st_mtime_ns >= job.stat().st_mtime_ns
    except OSError:
        return False


def listing_time(job: Path) -> int | None:
    """The job folder's mtime (it changes when a trial folder comes or goes), None if it cannot be read."""
    try:
        return os.stat(job).st_mtime_ns
    except OSError:
        return None


@dataclass(slots=True)
class Kept:
    """What the cache has of a job: summaries by trial folder name, and the trial folders as listed when
    the job folder's mtime was `listed` (None: never listed whole)."""

    trials: dict[str, TrialSummary] = field(default_factory=dict)
    listed: int | None = None
    names: list[str] = field(default_factory=list)

    def current(self, job: Path) -> bool:
        """Whether the trial folders are still the ones listed (the job folder's mtime has not moved)."""
        return self.listed is not None and self.listed == listing_time(job)


def load(job: Path) -> Kept:
    """The kept summaries; nothing when the file is absent, damaged or of another layout (read again)."""
    try:
        stored = orjson.loads(_path(job).read_bytes())
        trials = {row[0]: TrialSummary.from_row(row) for row in stored["trials"]}
        listed, names = stored["listed"], stored["names"]
        if not (listed is None or isinstance(listed, int)) or not all(name in trials for name in names):
            raise ValueError("a listed trial without its summary")
        return Kept(trials, listed, names)
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return Kept()


def store(job: Path, summaries: dict[str, TrialSummary], listed: int | None, names: list[str]) -> None:
    """Best effort: a cache that cannot be written is read again next time."""
    path = _path(job)
    data = {"job": str(job), "listed": listed, "names": names, "trials": [s.to_row() for s in summaries.values()]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, orjson.dumps(data))
    except (OSError, orjson.JSONEncodeError):  # JSONEncodeError: a name that is not UTF-8
        pass


def summaries(
    job: Path,
    names: list[str],
    job_finished: bool,
    known: Kept,
    listed: int | None,
    progress: Progress | None = None,
) -> dict[str, TrialSummary]:
    """The summaries of the trials `names` of `job`, in that order: stored ones (`known`) whose files
    have not changed, the rest read (with progress). `listed`: the job folder's mtime when `names` were
    listed, None when they are not all its trials (then the kept listing stays)."""
    out: dict[str, TrialSummary] = {}
    changed = False
    base = os.fspath(job)
    for number, name in enumerate(names):
        cached = known.trials.get(name)
        if cached is not None and cached.stamp == stamp(f"{base}/{name}") and not cached.stale_start(job_finished):
            out[name] = cached  # the path as a string: a reopen does this for every trial
            continue
        out[name] = summarize(job / name, job_finished)[0]
        changed = True
        if progress is not None:
            progress((number + 1) / max(1, len(names)), f"{job.name}: read {number + 1:,}/{len(names):,} trials")
    whole = listed is not None  # else the other trials stay kept, and so does the listing
    kept_trials = out if whole else {**known.trials, **out}
    listing = (listed, names) if whole else (known.listed, known.names)
    if changed or set(kept_trials) != set(known.trials) or listing != (known.listed, known.names):
        store(job, kept_trials, *listing)
    return out
