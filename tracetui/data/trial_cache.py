"""Per-trial results worked out once per dataset and kept beside its conversion (the verifier and findings
indexes): read back when the stored file still fits, else computed trial by trial (by worker processes
for a large dataset, when the caller says how), with progress and cancellation, and stored for the next
open."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..paths import write_atomically
from .cache import read_kept
from .trial_workers import map_trials

if TYPE_CHECKING:
    from .session import Session

T = TypeVar("T")


def per_trial(
    session: Session,
    filename: str,
    compute: Callable[[int], T],
    load: Callable[[bytes, int], list[T] | None],
    dump: Callable[[list[T]], bytes],
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    remote: tuple[Callable[[Any, Any], T], Callable[[int], Any]] | None = None,
) -> list[T]:
    """`compute(trial)` for every trial of `session`, dataset by dataset, each dataset's results kept in
    `filename` in its index folder (its conversion folder). `load(data, count)` returns the stored results,
    or None when they do not fit (another version, another count). With `remote`, how a worker process computes a
    trial (see `trial_workers.map_trials`), a large dataset is worked out on every core. Raises
    InterruptedError when `cancelled()` turns true (nothing is stored then)."""
    trials = session.trials
    results: list[Any] = [None] * len(trials)
    total = max(1, len(trials))
    finished = 0
    for index, dataset in enumerate(session.datasets):
        ids = [int(trial) for trial in np.nonzero(trials.dataset == index)[0]]  # its trials, in its order
        path = dataset.index_folder / filename
        stored = _load(path, len(ids), load)
        if stored is None:

            def done(count: int, before: int = finished) -> None:
                if progress is not None:
                    progress((before + count) / total)

            stored = map_trials(session, ids, compute, remote, done, cancelled)
            _store(path, dump(stored))
        for trial, value in zip(ids, stored):  # a session's ids need not run dataset by dataset
            results[trial] = value
        finished += len(ids)
    return results


def _load(path: Path, count: int, load: Callable[[bytes, int], list[T] | None]) -> list[T] | None:
    """The stored results: None when there are none or another version wrote them (`load` says); a file
    that cannot be read is damaged (see `cache.read_kept`)."""
    return read_kept(path, lambda path: load(path.read_bytes(), count))


def _store(path: Path, data: bytes) -> None:
    """Best effort: a read-only cache only means working it out again next time."""
    with contextlib.suppress(OSError):
        write_atomically(path, data)
