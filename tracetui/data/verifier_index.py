"""Every trial's verifier summary ("2/3 tests") and failed test names, for the list column and the
"failed test" facet.

Parsing thousands of logs takes seconds, so it runs once in the background and is kept beside the
dataset's conversion (`verifier-index.json`); later opens read it back at once. While a download runs
it waits for the local copy; a dataset read from the hub streams its verifier column once first.
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

    Waits for a running download first (`waiting(fraction)`); raises InterruptedError when `cancelled()`.
    """
    from ..verifier import parse_verifier  # imported in the background worker, off start-up

    if not session.wait_for_download(waiting, cancelled or (lambda: False)):
        raise InterruptedError("cancelled")
    session.gather_verifier_logs(progress, cancelled)

    short: list[str] = []
    failed: list[list[str]] = []
    trials = session.trials
    total = max(1, len(trials))
    for index, dataset in enumerate(session.datasets):
        ids = np.nonzero(trials.dataset == index)[0]
        path = dataset.folder / INDEX_FILE
        stored = _read(path, len(ids))
        if stored is None:
            stored = {"short": [], "failed": []}
            for done, trial in enumerate(ids):
                if cancelled is not None and cancelled():
                    raise InterruptedError("cancelled")
                report = parse_verifier(session.verifier_output(int(trial)))
                stored["short"].append(report.short())
                stored["failed"].append(list(report.failed_tests))
                if progress is not None and done % 64 == 0:
                    progress((len(short) + done) / total)
            _write(path, stored)
        short.extend(stored["short"])
        failed.extend(stored["failed"])
    return VerifierIndex(short, failed)


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
