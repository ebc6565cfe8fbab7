"""Per-trial work spread over the machine's cores, for the indexes that read every conversation.

A pure-Python rule engine gains nothing from threads, so a large session's trials are cut into chunks
that worker processes take from the front while the caller works from the back, until they meet (a
worker needs ~0.6 s to start: an interpreter, pyarrow, the engine). Workers are started with `spawn`:
the caller is a worker thread of the app, and `fork` would copy locks that other threads hold. Each
reopens the session's datasets by their `recipe` (a converted dataset by its conversion folder,
memory-mapped: nothing is copied), in the session's trial id order, and imports the data layer, never
Textual. A small session stays in the caller's process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from .session import Session

T = TypeVar("T")

MIN_TRIALS = 600
"""Fewer trials than this (~0.4 s of findings) are all worked out in the caller's process."""
CHUNK = 32
_POLL = 0.1
"""Seconds between looks at `cancelled()` while waiting for a worker."""

_session = None
"""The session a worker process reopened."""


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def map_trials(
    session: Session,
    trials: Sequence[int],
    compute: Callable[[int], T],
    remote: tuple[Callable[[Any, Any], T], Callable[[int], Any]] | None,
    done: Callable[[int], None],
    cancelled: Callable[[], bool] | None = None,
) -> list[T]:
    """`[compute(trial) for trial in trials]` on every core. `remote` is how a worker does it:
    `(work, item)` such that `work(session, item(trial))` is `compute(trial)`, with `work` a module-level
    function (the workers import it by name); without it, or when workers are not worth it or not
    possible (few trials, one core, a dataset not on local disk, workers that do not start), this
    process does it all. `done(count)` after each chunk. Raises InterruptedError when `cancelled()`
    turns true (waiting chunks are dropped, the workers stop after the one they are on)."""
    chunks = [trials[at : at + CHUNK] for at in range(0, len(trials), CHUNK)]
    results: list[list[T] | None] = [None] * len(chunks)
    finished = 0

    def run_here(k: int) -> None:
        nonlocal finished
        if cancelled is not None and cancelled():
            raise InterruptedError("cancelled")
        results[k] = [compute(trial) for trial in chunks[k]]
        finished += len(chunks[k])
        done(finished)

    pool = _pool(session) if remote is not None and len(trials) >= MIN_TRIALS else None
    try:
        futures = _submit(pool, remote, chunks) if pool is not None and remote is not None else []
        mine = len(chunks)
        while mine > 0 and (not futures or futures[mine - 1].cancel()):
            mine -= 1
            run_here(mine)
        for k in range(mine):  # the workers' chunks, in order
            results[k] = _result(futures[k], cancelled)
            if results[k] is None:
                run_here(k)
            else:
                finished += len(chunks[k])
                done(finished)
    finally:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
    return [result for chunk in results for result in chunk or ()]


def _pool(session: Session) -> ProcessPoolExecutor | None:
    """Workers for every core but this process's; None with one core or a dataset not on local disk."""
    if cores() < 2 or not all(dataset.local for dataset in session.datasets):
        return None
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    recipes = [dataset.recipe() for dataset in session.datasets]
    try:
        return ProcessPoolExecutor(cores() - 1, multiprocessing.get_context("spawn"), _reopen, (recipes, session.order))
    except (OSError, ValueError):
        return None


def _submit(
    pool: ProcessPoolExecutor,
    remote: tuple[Callable[[Any, Any], Any], Callable[[int], Any]],
    chunks: list[Sequence[int]],
) -> list[Future[list[Any]]]:
    from concurrent.futures.process import BrokenProcessPool

    work, item = remote
    try:
        return [pool.submit(_chunk, work, [item(trial) for trial in chunk]) for chunk in chunks]
    except (BrokenProcessPool, OSError, RuntimeError):
        return []  # no worker could start


def _result(future: Future[list[Any]], cancelled: Callable[[], bool] | None) -> list[Any] | None:
    """A worker's chunk once it is done; None if the workers died (or never started)."""
    from concurrent.futures import TimeoutError as Pending
    from concurrent.futures.process import BrokenProcessPool

    while True:
        if cancelled is not None and cancelled():
            raise InterruptedError("cancelled")
        try:
            return future.result(_POLL)
        except Pending:
            continue
        except (BrokenProcessPool, OSError):
            return None


def _reopen(recipes: list[tuple[Callable[..., Any], tuple[Any, ...]]], order: Any) -> None:
    """A worker's start: nothing it could print reaches the terminal the app draws on, then the session."""
    global _session
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.close(quiet)
    from .session import Session

    _session = Session([factory(*arguments) for factory, arguments in recipes], order)


def _chunk(work: Callable[[Any, Any], T], items: Sequence[Any]) -> list[T]:
    return [work(_session, item) for item in items]
