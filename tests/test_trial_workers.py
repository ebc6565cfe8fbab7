"""Per-trial work on every core: worker processes that reopen the session, in order, without Textual,
stopped by cancellation; the same findings as in one process; the caller does it all when they cannot start."""

from __future__ import annotations

import multiprocessing
import multiprocessing.spawn
import os
import sys

import pytest

from tracetui.data import findings_index, trial_workers
from tracetui.data.session import open_session, prepare
from tracetui.data.sources import SourceSpec
from tracetui.demo import write_demo

needs_cores = pytest.mark.skipif(trial_workers.cores() < 2, reason="workers need a second core")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    folder = write_demo(tmp_path_factory.mktemp("demo-workers"), rows=600, seed=3)
    return open_session(prepare([SourceSpec(str(folder))]))


@pytest.fixture
def small_chunks(monkeypatch):
    """Workers for any number of trials, in chunks of two: every worker gets some."""
    monkeypatch.setattr(trial_workers, "MIN_TRIALS", 0)
    monkeypatch.setattr(trial_workers, "CHUNK", 2)


def where(session, trial: int) -> tuple[int, str, int, bool]:
    """Which trial, by name, in which process, and whether Textual is loaded there."""
    return trial, session.info(trial).trial_name, os.getpid(), "textual" in sys.modules


def run(session, cancelled=None, done=None):
    trials = list(range(len(session)))
    return trial_workers.map_trials(
        session, trials, lambda t: where(session, t), (where, int), done or (lambda n: None), cancelled
    )


@needs_cores
def test_workers_reopen_the_session_and_keep_the_order(demo, small_chunks):
    counts = []
    results = run(demo, done=counts.append)
    assert [(t, name) for t, name, _, _ in results] == [(t, demo.info(t).trial_name) for t in range(len(demo))]
    assert {pid for _, _, pid, _ in results} - {os.getpid()}, "no trial was worked out by a worker"
    assert not any(textual for *_, pid, textual in results if pid != os.getpid())
    assert counts == sorted(counts) and counts[-1] == len(demo)


@pytest.mark.parametrize("workers", [True, False])
def test_cancelled_work_raises(demo, monkeypatch, workers):
    monkeypatch.setattr(trial_workers, "MIN_TRIALS", 0 if workers else 1 << 30)
    with pytest.raises(InterruptedError):
        run(demo, cancelled=lambda: True)


@needs_cores
def test_findings_from_workers_equal_findings_in_one_process(demo, monkeypatch):
    def build():
        for dataset in demo.datasets:
            (dataset.folder / findings_index.INDEX_FILE).unlink(missing_ok=True)
        return findings_index.build_findings_index(demo).findings

    alone = build()
    monkeypatch.setattr(trial_workers, "MIN_TRIALS", 0)
    monkeypatch.setattr(trial_workers, "CHUNK", 4)
    assert build() == alone
    assert any(alone)


@needs_cores
def test_workers_that_cannot_start_leave_the_work_here(demo, small_chunks):
    spawn = multiprocessing.get_context("spawn")
    executable = multiprocessing.spawn.get_executable()
    spawn.set_executable(os.devnull + "/python")
    try:
        results = run(demo)
    finally:
        spawn.set_executable(executable)
    assert [t for t, *_ in results] == list(range(len(demo)))
    assert {pid for _, _, pid, _ in results} == {os.getpid()}


def noisy(session, trial: int) -> int:
    """Work that prints: what a worker says must not reach the terminal the app draws on."""
    print(f"worker output {trial}")
    print(f"worker error {trial}", file=sys.stderr)
    return os.getpid()


@needs_cores
def test_nothing_a_worker_prints_reaches_the_terminal(demo, small_chunks, capfd):
    pids = trial_workers.map_trials(demo, list(range(len(demo))), lambda t: os.getpid(), (noisy, int), lambda n: None)
    assert set(pids) - {os.getpid()}, "no trial was worked out by a worker"
    out, err = capfd.readouterr()
    assert "worker" not in out and "worker" not in err
