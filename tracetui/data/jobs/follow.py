"""Following harbor job folders while the app runs: which trials changed, read off the UI thread, and
the updates that apply them to their storages (the session takes them in one step, `Session.apply`, that
keeps every trial's id; this module knows the storages, not the session).

New job folders in a jobs root the user gave are followed too: the root is listed again when its mtime
says a folder came, and a new folder joins the session (`Session.apply`'s new datasets) once its layout
is a job's, read as the others were at start.

Polling, not inotify: job folders often sit on network filesystems (NFS, Lustre, sshfs) whose writes
from other hosts inotify never sees, and a run of thousands of trials would need tens of thousands of
watches. Polling stays cheap because only running trials change: each poll stats the files of the
trials that are running (or could not be read), lists each job folder (new trials) and stats each job's
result.json; every `SWEEP` seconds it also stats the result.json of the finished trials (a regrade
rewrites it). A job opened on its kept summaries alone (`JobStorage.checked` false: a reopen) has every
trial stamped at the first poll, after the app's first frame: what changed while the app was closed is
read then, and the summaries kept again once the session has it. A file harbor is halfway through
writing reads as invalid: that trial keeps its last good reading and is read again at the next poll.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ...trace.outcome import ERROR, RUNNING
from ..dataset import Storage
from .files import Stamp, stamp
from .layout import is_job, job_dirs
from .opening import in_root, job_state, open_job, sibling, trial_names
from .storage import JobStorage
from .summaries import store
from .trial import TrialSummary, TrialText, summarize

POLL = 1.0
"""Seconds between polls: a change shows within about this, plus the time to read it."""
SWEEP = 10.0
"""Seconds between looks at the finished trials."""


@dataclass(slots=True)
class JobChange:
    """New readings of one job folder's trials (by folder name) and of its result.json."""

    summaries: dict[str, TrialSummary] = field(default_factory=dict)
    texts: dict[str, TrialText] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)
    finished: bool = False


@dataclass(slots=True)
class Changes:
    """What a poll found, by the session's dataset index."""

    jobs: dict[int, JobChange]
    new: list[JobStorage] = field(default_factory=list)
    """Job folders that appeared in a jobs root, read: they join the session at the end."""

    @property
    def updates(self) -> dict[int, Callable[[Storage], list[int]]]:
        """What `Session.apply` takes: per dataset index, the update of its storage (call it on the thread
        that reads the session)."""
        return {index: partial(_apply_job, change=change) for index, change in self.jobs.items()}


def _apply_job(storage: Storage, change: JobChange) -> list[int]:
    assert isinstance(storage, JobStorage)
    return storage.apply(change.summaries, change.texts, change.results, change.finished)


class Follower:
    """Polls the job folders among a session's datasets: `poll()` (off the UI thread) returns what
    changed, or None."""

    def __init__(self, datasets: Sequence[Storage]) -> None:
        self.datasets = datasets
        """The session's list itself (its entries are swapped in place), by dataset index."""
        self._job_stamps: dict[int, Stamp] = {}
        self._read: dict[tuple[int, str], tuple[Stamp, TrialSummary, TrialText]] = {}
        """Trials read but not applied yet (the session was busy): not read again while unchanged."""
        self._swept = time.monotonic()
        self._listings: dict[int, Stamp] = {}
        self._names: dict[int, list[str]] = {}
        self._roots: dict[str, Stamp] = {}
        """Each jobs root's listing stamp (its mtime: a folder came or went)."""
        self._maybe: dict[str, dict[str, Stamp | None]] = {}
        """Per jobs root, the folders in it that are not job folders (yet: harbor is making one), with
        their stamps when last looked at: looked at again when a folder's changes."""
        self._new: dict[str, JobStorage] = {}
        """New job folders read but not applied yet (the session was busy), by path."""
        self._checked: set[int] = set()
        """Jobs opened unchecked whose trials' stamps were all compared since."""
        self._keep: dict[int, tuple[int | None, list[str]]] = {}
        """Jobs checked with changes, with the listing the check used: their summaries are kept again
        once the session has taken the changes."""

    @property
    def jobs(self) -> list[tuple[int, JobStorage]]:
        return [(i, ds) for i, ds in enumerate(self.datasets) if isinstance(ds, JobStorage)]

    def poll(self) -> Changes | None:
        sweep = time.monotonic() - self._swept >= SWEEP
        if sweep:
            self._swept = time.monotonic()
        found: dict[int, JobChange] = {}
        for index, storage in self.jobs:
            change = self._poll_job(index, storage, sweep)
            if change is not None:
                found[index] = change
        new = self._new_jobs(sweep)
        return Changes(found, new) if found or new else None

    def _new_jobs(self, sweep: bool) -> list[JobStorage]:
        """The job folders that appeared in the jobs roots of the session, read (a stat per poll while
        nothing changes: each root's, and each folder in it that is not a job folder yet; on a sweep,
        those folders are looked at again even when their stamps say nothing changed)."""
        known = {storage.job_source.dataset_id for _, storage in self.jobs}
        sources = {
            storage.job_source.root: storage.job_source for _, storage in self.jobs if in_root(storage.job_source)
        }
        for root, source in sources.items():
            listing = _file_stamp(root)
            if root not in self._roots or listing != self._roots[root]:  # the first look too: opening took time
                self._roots[root] = listing
                kept = self._maybe.get(root, {})
                self._maybe[root] = {
                    str(path): kept.get(str(path)) for path in job_dirs(Path(root)) if str(path) not in known
                }
            maybe = self._maybe.get(root, {})
            for folder, seen in list(maybe.items()):
                now = _file_stamp(folder)
                if folder in self._new or folder in known:
                    del maybe[folder]
                elif now != seen or sweep:
                    maybe[folder] = now
                    if is_job(Path(folder)):
                        self._new[folder] = open_job(sibling(source, Path(folder)))
                        del maybe[folder]
        return [storage for folder, storage in self._new.items() if folder not in known]

    def _poll_job(self, index: int, storage: JobStorage, sweep: bool) -> JobChange | None:
        job = storage.job
        result_stamp = _file_stamp(job / "result.json")
        results, finished = storage.results, storage.job_finished
        if result_stamp != self._job_stamps.get(index, result_stamp):
            results, finished = job_state(job)
        self._job_stamps[index] = result_stamp
        change = JobChange(results=results, finished=finished)
        known = {s.name: s for s in storage.entries}
        base = os.fspath(job)
        for name in self._candidates(index, storage, known, finished != storage.job_finished, sweep):
            summary = known.get(name)
            now = stamp(f"{base}/{name}")  # a string, not a Path: the first look stamps every trial
            if summary is not None and now == summary.stamp and not summary.stale_start(finished):
                self._read.pop((index, name), None)
                continue
            if summary is None and not now and not finished:
                continue  # a folder harbor has just made: a trial once it has a file
            reading = self._read.get((index, name))
            stable = reading is not None and reading[0] == now
            if reading is None or not stable:
                reading = (now, *summarize(job / name, finished))
                self._read[(index, name)] = reading
            fresh = reading[1]
            if fresh.outcome == ERROR and (summary is None or summary.outcome != ERROR) and not stable:
                continue  # perhaps a file halfway written: taken if it reads the same at the next poll
            change.summaries[name] = fresh
            change.texts[name] = reading[2]
        if not change.summaries and (results, finished) == (storage.results, storage.job_finished):
            self._keep.pop(index, None)  # the kept summaries are still true
            return None
        return change

    def _candidates(
        self, index: int, storage: JobStorage, known: dict[str, TrialSummary], job_done: bool, sweep: bool
    ) -> list[str]:
        """The trials worth a full look: new ones (the job folder is listed again only when its mtime
        says an entry came or went), running or unreadable ones, all when the job just ended, and on a
        sweep the finished ones whose result.json changed."""
        job = storage.job
        listing = _file_stamp(job)
        if listing != self._listings.get(index):
            self._listings[index] = listing
            self._names[index] = trial_names(storage.job_source)
        names = self._names.get(index, [])
        pending = [name for (i, name) in self._read if i == index]  # read, not taken yet: looked at again
        if not storage.checked and index not in self._checked:
            self._checked.add(index)
            self._keep[index] = (listing[0][2] if listing else None, names)
            return names
        if job_done:
            return names
        out = [name for name in names if name not in known] + pending
        out += [s.name for s in storage.entries if s.outcome in (RUNNING, ERROR)]
        if sweep:
            base = os.fspath(job)
            out += [
                s.name
                for s in storage.entries
                if s.outcome not in (RUNNING, ERROR) and _file_stamp(f"{base}/{s.name}/result.json") != _result_stamp(s)
            ]
        return list(dict.fromkeys(out))

    def applied(self, changes: Changes) -> None:
        """The session took `changes`: their readings are the session's now."""
        for index, change in changes.jobs.items():
            for name in change.summaries:
                self._read.pop((index, name), None)
            storage = self.datasets[index]
            if index in self._keep and isinstance(storage, JobStorage):
                listed, names = self._keep.pop(index)
                entries = {s.name: s for s in storage.entries}
                store(storage.job, entries, listed, [name for name in names if name in entries])
        for storage in changes.new:
            self._new.pop(storage.job_source.dataset_id, None)


def _file_stamp(path: Path | str) -> Stamp:
    try:
        info = os.stat(path)
    except OSError:
        return []
    return [[os.path.basename(path), info.st_size, info.st_mtime_ns]]


def _result_stamp(summary: TrialSummary) -> Stamp:
    return [entry for entry in summary.stamp if entry[0] == "result.json"]
