"""Telling a harbor jobs root, job folder and trial folder apart by their layout: a few stats, no JSON.

    jobs/                         a jobs root: job folders
    jobs/<job>/                   a job folder: config.json, result.json, job.log, and trial folders
    jobs/<job>/<trial>/           a trial folder: agent/, verifier/, config.json, result.json, trial.log

A job folder has a result.json and a config.json too, so a trial is told by its `agent/` folder or its
`trial.log`, or, before its agent has started, by a result.json or config.json with no `job.log` beside
them and no trial folder under them.
"""

from __future__ import annotations

import os
from pathlib import Path

from .files import entries, is_dir, is_file

TRIAL, JOB, ROOT = "trial", "job", "root"
LOOKED_FOR = (
    "a harbor trial folder has agent/ or result.json, a job folder holds trial folders, a jobs root holds job folders"
)
SAMPLE = 32
"""Children looked at to tell a job from a jobs root: the layout shows in the first few."""


def _trial_mark(path: Path) -> bool:
    """What only a trial folder has."""
    return is_dir(path / "agent") or is_file(path / "trial.log")


def _child_dirs(path: Path, limit: int | None = None) -> list[Path]:
    found = []
    for entry in entries(path):
        if _is_dir_entry(entry):
            found.append(Path(entry.path))
            if limit is not None and len(found) >= limit:
                break
    return found


def _is_dir_entry(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def is_trial(path: Path) -> bool:
    if _trial_mark(path):
        return True
    if is_file(path / "job.log") or not (is_file(path / "result.json") or is_file(path / "config.json")):
        return False
    if _dataset_like(path):  # a dataset folder (or a model's) with a config.json of its own
        return False
    return not any(_trial_mark(child) for child in _child_dirs(path, SAMPLE))


def _dataset_like(path: Path) -> bool:
    return any(
        entry.name == "data" or entry.name.endswith((".parquet", ".arrow", ".jsonl", ".safetensors"))
        for entry in entries(path)
    )


def is_job(path: Path) -> bool:
    if is_trial(path):
        return False
    if is_file(path / "job.log"):
        return True
    return any(is_trial(child) for child in _child_dirs(path, SAMPLE))


def kind(path: Path) -> str | None:
    """TRIAL, JOB or ROOT for a folder laid out as harbor lays them out, else None."""
    if not is_dir(path):
        return None
    if is_trial(path):
        return TRIAL
    if is_job(path):
        return JOB
    if any(is_job(child) for child in _child_dirs(path, SAMPLE)):
        return ROOT
    return None


def jobs_of(path: Path, found: str) -> list[Path]:
    """The job folders a path of kind `found` stands for: the root's (every child that is a job folder),
    the job itself, or a trial's job (its parent folder)."""
    if found == ROOT:
        return [child for child in job_dirs(path) if is_job(child)]
    if found == JOB:
        return [path]
    return [path.parent]


def job_dirs(root: Path) -> list[Path]:
    """The folders of a jobs root (job folders, and any other), by name."""
    return _child_dirs(root)


def trial_entries(job: Path) -> list[os.DirEntry[str]]:
    """A job folder's trial folders (every sub-folder, and symlinks that do not resolve to one: a broken
    or looping link is a trial that cannot be read, not nothing), by name."""
    found = []
    for entry in entries(job):
        if _is_dir_entry(entry) or entry.is_symlink():
            found.append(entry)
    return found
