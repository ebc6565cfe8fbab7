"""Every trial's verifier summary ("2/3 tests") and failed test names, for the list column and the
"failed test" facet.

Parsing thousands of logs takes seconds, so it runs once in the background and is kept beside the
dataset's conversion (`verifier-index.json`); later opens read it back at once. Logs are read in one
pass over the verifier column (`Storage.scan`), so a dataset read from the hub streams only that column;
while its download runs, the index waits for the local copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import orjson

from .facets import Facet

INDEX_FILE = "verifier-index-v1.json"


@dataclass(slots=True)
class VerifierIndex:
    short: list[str]  # per trial: "2/3 tests", "score 0.6" or ""
    failed: list[list[str]]  # per trial: failed test names

    def facet(self) -> Facet:
        """Multi-valued facet: a trial has every test that failed in it."""
        labels: dict[str, int] = {}
        trials, codes = [], []
        for trial, names in enumerate(self.failed):
            for name in names:
                trials.append(trial)
                codes.append(labels.setdefault(name, len(labels)))
        pairs = (np.asarray(trials, dtype=np.int64), np.asarray(codes, dtype=np.int64))
        return Facet("failed_test", "Failed test", list(labels), pairs=pairs)


def build_verifier_index(
    session,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    waiting: Callable[[float], None] | None = None,
) -> VerifierIndex:
    """Parse (or read back) the verifier summary of every trial of `session`, dataset by dataset.

    Raises InterruptedError when `cancelled()`; waits for a running download first (see `search`).
    """
    stop = cancelled or (lambda: False)
    if not session.wait_for_download(waiting, stop):
        raise InterruptedError("cancelled")
    short: list[str] = []
    failed: list[list[str]] = []
    trials = session.trials
    total = max(1, sum(ds.pieces() for ds in session.datasets))
    done = 0
    for index, dataset in enumerate(session.datasets):
        ids = np.nonzero(trials.dataset == index)[0]
        path = dataset.folder / INDEX_FILE
        stored = _read(path, len(ids))
        if stored is None:
            def step(fraction: float) -> None:
                if progress is not None:
                    progress((done + fraction * dataset.pieces()) / total)

            stored = _parse(session, dataset, ids, step, stop)
            _write(path, stored)
        done += dataset.pieces()
        short.extend(stored["short"])
        failed.extend(stored["failed"])
    return VerifierIndex(short, failed)


def _parse(session, dataset, ids: np.ndarray, progress: Callable[[float], None], stop: Callable[[], bool]) -> dict:
    """Each trial's log is the one on its last main row (every row of a trial carries it); the few
    trials without one there fall back to their other rows."""
    from ..verifier import parse_verifier  # imported in the background worker, off start-up

    trials = session.trials
    reports: list = [None] * len(ids)
    owner = np.full(dataset.num_rows, -1, dtype=np.int64)
    counts = trials.main_offsets[ids + 1] - trials.main_offsets[ids]
    has_rows = np.nonzero(counts > 0)[0]
    owner[trials.main_rows[trials.main_offsets[ids[has_rows] + 1] - 1]] = has_rows
    pieces = max(1, dataset.pieces())
    for number, piece in enumerate(dataset.scan(conversations=False, verifier=True, cancelled=stop)):
        logs = piece.verifier
        for position in np.nonzero(owner[piece.start : piece.start + len(logs)] >= 0)[0]:
            text = logs[int(position)].as_py()
            if text is not None:
                reports[owner[piece.start + position]] = parse_verifier(text)
        progress((number + 1) / pieces)
    for position, report in enumerate(reports):
        if report is None:
            if stop():
                raise InterruptedError("cancelled")
            reports[position] = parse_verifier(session.verifier_output(int(ids[position])))
    return {"short": [r.short() for r in reports], "failed": [list(r.failed_tests) for r in reports]}


def _read(path, count: int) -> dict | None:
    try:
        stored = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if len(stored.get("short", ())) != count or len(stored.get("failed", ())) != count:
        return None
    return stored


def _write(path, stored: dict) -> None:
    """Best effort: a read-only cache only means parsing again next time."""
    try:
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(orjson.dumps(stored))
        temporary.replace(path)
    except OSError:
        pass
