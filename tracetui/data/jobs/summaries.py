"""Every trial of a job folder summarized, read back from the tracetui cache when its files have not
changed (same names, sizes and mtimes): a reopen stats the trial folders and parses no trajectory.

The cache is `$TRACETUI_CACHE_DIR/jobs/<key of the job folder's path>/summaries-v<N>.json` (with the job
folder's path in it, for `tracetui cache`). It is written whole (to a temporary file renamed into place)
when a summary changed; a cache that cannot be written only means reading the trials again next time.
Nothing is ever written into the job folder.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
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


def load(job: Path) -> dict[str, TrialSummary]:
    try:
        stored = orjson.loads(_path(job).read_bytes())
        return {name: TrialSummary.from_json(data) for name, data in stored["trials"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def store(job: Path, summaries: dict[str, TrialSummary]) -> None:
    """Best effort: a cache that cannot be written is read again next time."""
    path = _path(job)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(
            path, orjson.dumps({"job": str(job), "trials": {name: s.to_json() for name, s in summaries.items()}})
        )
    except OSError:
        pass


def summaries(
    job: Path,
    names: list[str],
    job_finished: bool,
    progress: Progress | None = None,
) -> dict[str, TrialSummary]:
    """The summaries of the trials `names` of `job`, in that order: stored ones whose files have not
    changed, the rest read (with progress)."""
    known = load(job)
    out: dict[str, TrialSummary] = {}
    changed = False
    base = os.fspath(job)
    for number, name in enumerate(names):
        cached = known.get(name)
        if cached is not None and cached.stamp == stamp(f"{base}/{name}") and not _stale_start(cached, job_finished):
            out[name] = cached  # the path as a string: a reopen does this for every trial
            continue
        out[name] = summarize(job / name, job_finished)[0]
        changed = True
        if progress is not None:
            progress((number + 1) / max(1, len(names)), f"{job.name}: read {number + 1:,}/{len(names):,} trials")
    if changed or set(known) != set(out):
        store(job, {**known, **out})
    return out


def _stale_start(summary: TrialSummary, job_finished: bool) -> bool:
    """A trial without a trajectory or a result is running while its job runs, an error once it is
    done: its summary depends on the job's result.json too."""
    return not summary.finished and not summary.rows and summary.job_finished != job_finished
