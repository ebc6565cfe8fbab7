"""Reopening harbor job folders (issue 22): when no trial folder came or went, the job opens on its kept
summaries alone, before the first frame, and the follower's first look stamps every trial and takes
what changed while the app was closed; a new or deleted trial folder means listing and stamping at
open, as before; a damaged or old summaries file is rebuilt."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson

from tracetui.data.jobs.columns import MAGIC
from tracetui.data.jobs.follow import Follower
from tracetui.data.jobs.summaries import columns_file, job_folder, load, summaries_file
from tracetui.data.jobs.trial import SUMMARY_VERSION
from tracetui.data.session import all_cached, open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.ui.app import TraceApp

from .jobs_helpers import SAMPLE, by_name, copy_tree, open_paths, write_job, write_trial
from .test_jobs_app import wait_for
from .test_jobs_live import RUNNING, finish, poll_and_apply, running_folder
from .ui_helpers import wait_loaded

RUNNING_JOB = "2026-07-01__12-00-00"


def outcomes(session) -> dict[str, str]:
    return {session.info(t).trial_name: session.info(t).outcome for t in range(len(session))}


def test_a_trial_that_finished_while_closed_shows_finished_after_the_first_look(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    first = outcomes(open_paths(jobs))
    assert first[RUNNING] == "running"
    finish(running_folder(jobs))  # while the app is closed: the job folder's listing does not change

    session = open_paths(jobs)
    assert not any(dataset.checked for dataset in session.datasets)  # opened on the kept summaries alone
    assert outcomes(session) == first  # what the first frame shows: the kept reading
    trial = by_name(session)[RUNNING]
    follower = Follower(session.datasets)
    applied = poll_and_apply(follower, session)  # its first look: every trial stamped
    assert applied is not None and list(applied.changed) == [trial] and applied.added == 0
    assert outcomes(session) == first | {RUNNING: "pass"} and by_name(session)[RUNNING] == trial
    assert follower.poll() is None

    again = open_paths(jobs)  # the first look kept the summaries again: the next reopen knows
    assert outcomes(again) == first | {RUNNING: "pass"}
    assert Follower(again.datasets).poll() is None


def test_a_trial_folder_new_or_deleted_while_closed_shows_at_once(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    job = jobs / RUNNING_JOB
    open_paths(jobs)
    shutil.rmtree(job / "s-hello-world__EgcsGA2")
    write_trial(job, "s-new-task__NewNew1")
    mtime = summaries_file(job_folder(job)).stat().st_mtime_ns + 1  # a coarse clock: the same tick
    os.utime(job, ns=(mtime, mtime))

    session = open_paths(jobs)
    shown = outcomes(session)
    assert "s-hello-world__EgcsGA2" not in shown and shown["s-new-task__NewNew1"] == "pass"
    assert all(dataset.checked for dataset in session.datasets if str(dataset.job) == str(job))
    assert poll_and_apply(Follower(session.datasets), session) is None  # nothing left to take


def stats_under(monkeypatch, folder: Path) -> list[str]:
    """Every os.stat of a path inside `folder` from now on (the real call, counted)."""
    seen: list[str] = []
    real = os.stat

    def counted(path, *args, **kwargs):
        if os.fspath(path).startswith(f"{folder}/"):
            seen.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    return seen


def test_an_unchanged_reopen_stats_no_trial_before_the_first_frame(tmp_path, monkeypatch):
    job = write_job(tmp_path / "jobs" / "big", finished=False)
    names = [f"t-{n:02d}__aaaaaaa" for n in range(40)]
    for name in names:
        write_trial(job, name)
    sources = prepare([SourceSpec(str(tmp_path / "jobs"))])
    open_session(sources)
    assert all_cached(sources)  # the command line opens it before the app starts

    stats = stats_under(monkeypatch, job)
    session = open_session(sources)
    assert len(session) == 40
    assert [path for path in stats if any(f"/{name}" in path for name in names)] == []
    assert Follower(session.datasets).poll() is None  # after the first frame: each trial stamped, unchanged
    assert {name for name in names if f"{job}/{name}/result.json" in stats} == set(names)


def reopened_unchecked(jobs: Path, job: Path) -> bool:
    """Whether `job` reopens on its kept columns (no stamps checked before the first frame)."""
    return not next(ds for ds in open_paths(jobs).datasets if str(ds.job) == str(job)).checked


def test_a_damaged_or_old_summaries_file_is_rebuilt(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    job = jobs / RUNNING_JOB
    expected = outcomes(open_paths(jobs))
    folder = job_folder(job)
    columns, summaries = columns_file(folder), summaries_file(folder)
    assert reopened_unchecked(jobs, job)
    valid = columns.read_bytes()
    header = orjson.dumps({"extra": {"listed": 1}, "arrays": {}, "blob": [0, 0]})
    other = MAGIC + len(header).to_bytes(8, "little") + header  # another layout's
    for damage in (valid[: len(valid) // 2], valid[:-1], b"", b"not columns", other):
        columns.write_bytes(damage)
        assert outcomes(open_paths(jobs)) == expected  # read again, stamping the trials
        assert reopened_unchecked(jobs, job)  # and kept again
    for damage in (b"", b"{", orjson.dumps({"job": str(job), "trials": {"a": {"name": "a"}}})):
        columns.unlink()
        summaries.write_bytes(damage)  # the trials are read again from their folders
        assert outcomes(open_paths(jobs)) == expected and set(load(job)) == {RUNNING, "s-hello-world__EgcsGA2"}
        assert reopened_unchecked(jobs, job)
    for path in (columns, summaries):  # an earlier version's files: not read
        path.rename(path.with_name(path.name.replace(f"-v{SUMMARY_VERSION}.", f"-v{SUMMARY_VERSION - 1}.")))
    assert outcomes(open_paths(jobs)) == expected and reopened_unchecked(jobs, job)


async def test_the_app_shows_a_trial_that_finished_while_it_was_closed(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    open_paths(jobs)
    finish(running_folder(jobs))
    sources = prepare([SourceSpec(str(jobs))])
    assert all_cached(sources)
    app = TraceApp(sources, None, session=open_session(sources))  # as the command line opens it
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(app, pilot)
        trial = by_name(app.session)[RUNNING]
        await wait_for(pilot, lambda: app.session.info(trial).outcome == "pass")
        assert by_name(app.session)[RUNNING] == trial


def test_a_reopen_on_the_kept_columns_is_the_session_a_first_open_gives(tmp_path):
    """The trials, their rows, usage and histories, as reading every trial gives them (the golden
    job too: continuations, sub-agents; and an empty job folder)."""
    from dataclasses import fields

    import numpy as np

    from tracetui.data.trials import Trials

    from .jobs_helpers import ATIF

    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    golden = copy_tree(ATIF / "jobs", tmp_path / "golden")
    paths = (jobs, golden)
    first, again = open_paths(*paths), open_paths(*paths)
    assert not any(dataset.checked for dataset in again.datasets)
    for f in fields(Trials):
        a, b = getattr(first.trials, f.name), getattr(again.trials, f.name)
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=f.name)  # NaN rewards equal
        elif isinstance(a, dict) and f.name == "codes":
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        else:
            assert a == b, f.name
    for trial in range(len(first)):
        assert repr(first.info(trial)) == repr(again.info(trial))
        assert repr(first.usage_of(trial)) == repr(again.usage_of(trial))
        assert first.history(trial) == again.history(trial)
    assert [list(d.message_counts) for d in first.datasets] == [list(d.message_counts) for d in again.datasets]
    empty = write_job(tmp_path / "empty" / "job")
    write_trial(empty, "t__aaaaaaa")
    shutil.rmtree(empty / "t__aaaaaaa")  # a job folder whose only trial went
    assert len(open_paths(empty)) == 0 and len(open_paths(empty)) == 0
