"""The strategy the source machinery calls for harbor job folders (see the package): recognise the layout,
one source per job, and open a job folder as a Storage."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .files import Unreadable, read_json
from .layout import JOB, ROOT, TRIAL, jobs_of, kind, trial_entries
from .results import job_results
from .storage import JobSource, JobStorage
from .summaries import job_folder, listing_time, reopen, summaries

Progress = Callable[[float, str], None]


def is_jobs_path(path: Path) -> bool:
    """Whether `path` is a jobs root, a job folder or a trial folder (by layout: a few stats)."""
    return kind(path) is not None


def jobs_source(path: Path) -> JobSource | None:
    """The source for a folder laid out as harbor lays out jobs, else None."""
    found = kind(path)
    if found is None:
        return None
    path = path.resolve()
    return JobSource(str(path), None, (), "jobs", root=str(path), trial=path.name if found == TRIAL else None)


def expand(source: JobSource) -> list[JobSource]:
    """One source per job folder of `source` (a jobs root has several; a trial's is its job's)."""
    path = Path(source.root)
    found = kind(path)
    if found == ROOT:
        shown = source.display.rstrip("/") or source.root
        return [
            replace(source, dataset_id=str(job), display=f"{shown}/{job.name}", trial=None)
            for job in jobs_of(path, ROOT)
        ]
    if found == TRIAL:
        return [replace(source, dataset_id=str(path.parent), trial=path.name)]
    if found == JOB:
        return [replace(source, dataset_id=str(path), trial=None)]
    return [source]  # the layout changed since it was recognised: read what is there


def in_root(source: JobSource) -> bool:
    """Whether `source` is one job of a jobs root the user gave (where new job folders may appear)."""
    return source.trial is None and source.root != source.dataset_id


def sibling(source: JobSource, job: Path) -> JobSource:
    """The source of `job`, a job folder that appeared in the jobs root of `source` (`in_root`)."""
    shown = source.display.removesuffix(f"/{Path(source.dataset_id).name}")
    return replace(source, dataset_id=str(job), display=f"{shown}/{job.name}", trial=None)


def job_state(job: Path) -> tuple[dict[str, str], bool]:
    """What the job's result.json says: each listed trial's result, and whether the job is done."""
    try:
        data = read_json(job / "result.json", "result.json")
    except Unreadable:
        return {}, False
    if not isinstance(data, dict):
        return {}, False
    return job_results(data), data.get("finished_at") is not None


def trial_names(source: JobSource) -> list[str]:
    if source.trial is not None:
        return [source.trial]
    return [entry.name for entry in trial_entries(Path(source.dataset_id))]


def open_job(source: JobSource, progress: Progress | None = None) -> JobStorage:
    """The job folder as a Storage. When no trial folder came or went since the cache last listed them,
    on the kept columns alone: the trials' stamps are checked after the first frame (`follow`), which
    takes what changed meanwhile. Else each trial's summary read back from the cache when its files have
    not changed, and read (with progress) when they have."""
    job = Path(source.dataset_id)
    results, finished = job_state(job)
    kept = reopen(job) if source.trial is None else None
    if kept is not None:
        columns, entries = kept
        storage = JobStorage(source, entries, results, finished, columns, checked=False)
    else:
        listed = listing_time(job) if source.trial is None else None  # before listing: a trial that comes
        names = trial_names(source)  # meanwhile moves the mtime, and the next open lists again
        found = summaries(job, names, finished, listed, progress)
        storage = JobStorage(source, [found[name] for name in names], results, finished)
    _hold(job_folder(job))
    storage.forget_old_indexes()
    return storage


def _hold(folder: Path) -> None:
    """The job's cache folder is in use: held against removal (`tracetui cache clear`, the cache's size
    bound) while this process runs, and marked as used now."""
    from ..cache_folders import hold

    if hold(folder):
        with contextlib.suppress(OSError):  # a read-only cache: it only ages
            os.utime(folder)
