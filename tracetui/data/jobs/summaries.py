"""Every trial of a job folder summarized, read back from the tracetui cache when its files have not
changed (same names, sizes and mtimes): a reopen parses no trajectory.

The cache is `$TRACETUI_CACHE_DIR/jobs/<key of the job folder's path>/summaries-v<N>.json` (with the job
folder's path in it, for `tracetui cache`), and beside it `columns-v<N>.bin`: the trials as last listed,
in columns (`columns.Columns`), with the job folder's mtime then. While that mtime stays, no trial
folder came or went, and a reopen opens on those columns alone (`reopen`): no trial is stamped, no
summary parsed before the first frame; the follower stamps them after it (`follow`). Both are written
whole (to a temporary file renamed into place); a cache that cannot be written, or read back (damaged,
or of another version), only means reading the trials again. Nothing is ever written into the job folder."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ...paths import cache_dir, write_atomically
from ..cache_folders import JOB_SUMMARIES
from .columns import Columns
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


def columns_file(folder: Path) -> Path:
    """The columns of the job's trials as last listed, beside its summaries file."""
    return folder / f"columns-v{SUMMARY_VERSION}.bin"


def load(job: Path) -> dict[str, TrialSummary]:
    """The kept summaries; none when the file is absent, damaged or of another layout (read again)."""
    try:
        return _rows(orjson.loads(_path(job).read_bytes())["trials"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        return {}


def _rows(rows: list[list[Any]]) -> dict[str, TrialSummary]:
    return {row[0]: TrialSummary.from_row(row) for row in rows}


def store(job: Path, summaries: dict[str, TrialSummary], listed: int | None, names: list[str] | None) -> None:
    """Best effort: a cache that cannot be written is read again next time. With the trial folders
    `names` as listed when the job folder's mtime was `listed`, their columns too (`reopen`)."""
    path = _path(job)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, orjson.dumps({"job": str(job), "trials": [s.to_row() for s in summaries.values()]}))
        if listed is not None and names is not None:
            trials = [summaries[name] for name in names]
            rows = orjson.dumps([s.to_row() for s in trials])  # read on first use: `reopen`
            write_atomically(
                columns_file(path.parent),
                lambda temporary: Columns.of(trials).save(temporary, {"listed": listed}, rows),
            )
    except (OSError, orjson.JSONEncodeError):  # JSONEncodeError: a name that is not UTF-8
        pass


def reopen(job: Path) -> tuple[Columns, Callable[[], list[TrialSummary]]] | None:
    """When no trial folder came or went since the kept columns were written (the job folder's mtime is
    the one they were listed at): the columns, and how to read the summaries they were made of (on
    first use). Their stamps are not checked here (`follow` does, after the first frame). None when
    there are none to use (absent, damaged, of another layout, or a trial folder came or went)."""
    try:
        columns, extra, rows = Columns.load(columns_file(job_folder(job)))
        listed = extra["listed"]
    except Exception:  # whatever a cut-short or overwritten file makes its reader raise: worked out again
        return None
    if not isinstance(listed, int) or listed != listing_time(job):
        return None

    def read() -> list[TrialSummary]:
        kept = _rows(orjson.loads(rows))
        return [kept[name] for name in columns.names]

    return columns, read


def summaries(
    job: Path,
    names: list[str],
    job_finished: bool,
    listed: int | None,
    progress: Progress | None = None,
) -> dict[str, TrialSummary]:
    """The summaries of the trials `names` of `job`, in that order: stored ones whose files have not
    changed, the rest read (with progress). `listed`: the job folder's mtime when `names` were listed,
    None when they are not all its trials (then the other trials' kept summaries stay kept)."""
    known = load(job)
    out: dict[str, TrialSummary] = {}
    changed = False
    base = os.fspath(job)
    for number, name in enumerate(names):
        cached = known.get(name)
        if cached is not None and cached.stamp == stamp(f"{base}/{name}") and not cached.stale_start(job_finished):
            out[name] = cached  # the path as a string: a reopen does this for every trial
            continue
        out[name] = summarize(job / name, job_finished)[0]
        changed = True
        if progress is not None:
            progress((number + 1) / max(1, len(names)), f"{job.name}: read {number + 1:,}/{len(names):,} trials")
    whole = listed is not None
    if whole:
        store(job, out, listed, names)  # its columns too, for the next reopen
    elif changed or set(known) != set(out):
        store(job, {**known, **out}, None, None)
    return out
