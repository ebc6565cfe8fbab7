"""Every trial's verifier summary ("2/3 tests") and failed test names, for the list column and the
"failed test" facet.

Parsing thousands of logs takes seconds, so it runs once in the background and is kept beside the
dataset's conversion (`verifier-index.json`); later opens read it back at once. While a download runs
it waits for the local copy; a dataset read from the hub streams its verifier column once first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import orjson

from .facets import MultiFacet
from .trial_cache import per_trial

INDEX_FILE = "verifier-index-v1.json"
_TESTS = re.compile(r"\d+/(\d+) tests")  # VerifierReport.short() of a log with counts


@dataclass(slots=True)
class VerifierIndex:
    short: list[str]  # per trial: "2/3 tests", "score 0.6" or ""
    failed: list[list[str]]  # per trial: failed test names

    def tests(self, trial: int) -> int:
        """How many tests the trial's verifier log shows (0: none, or a graded log)."""
        match = _TESTS.fullmatch(self.short[trial])
        return int(match.group(1)) if match else 0

    def updated(self, session, trials: Iterable[int]) -> VerifierIndex:
        """This index for a session that gained or changed `trials` (`Session.apply`): theirs read again."""
        grow = len(session) - len(self.short)
        short, failed = [*self.short, *[""] * grow], [*self.failed, *[[] for _ in range(grow)]]
        for trial in trials:
            short[trial], failed[trial] = trial_summary(session, int(trial))
        return VerifierIndex(short, failed)

    def facet(self) -> MultiFacet:
        """Multi-valued facet: a trial has every test that failed in it."""
        labels: dict[str, int] = {}
        trials, codes = [], []
        for trial, names in enumerate(self.failed):
            for name in names:
                trials.append(trial)
                codes.append(labels.setdefault(name, len(labels)))
        return MultiFacet(
            "failed_test",
            "Failed test",
            list(labels),
            np.asarray(trials, dtype=np.int64),
            np.asarray(codes, dtype=np.int64),
        )


def build_verifier_index(
    session,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    waiting: Callable[[float], None] | None = None,
) -> VerifierIndex:
    """Parse (or read back) the verifier summary of every trial of `session`, dataset by dataset.

    Waits for a running download first (`waiting(fraction)`); raises InterruptedError when `cancelled()`.
    """
    if not session.wait_for_download(waiting, cancelled or (lambda: False)):
        raise InterruptedError("cancelled")
    session.gather_verifier_logs(progress, cancelled)
    summaries = per_trial(
        session, INDEX_FILE, lambda trial: trial_summary(session, trial), _load, _dump, progress, cancelled
    )
    return VerifierIndex([short for short, _ in summaries], [failed for _, failed in summaries])


def trial_summary(session, trial: int) -> tuple[str, list[str]]:
    """One trial's verifier summary ("2/3 tests") and failed test names."""
    from ..verifier import parse_verifier  # imported in the background worker, off start-up

    report = parse_verifier(session.verifier_output(trial))
    return report.short(), list(report.failed_tests)


def _load(data: bytes, count: int) -> list[tuple[str, list[str]]] | None:
    stored = orjson.loads(data)
    if len(stored["short"]) != count or len(stored["failed"]) != count:
        return None
    return list(zip(stored["short"], stored["failed"]))


def _dump(summaries: list[tuple[str, list[str]]]) -> bytes:
    return orjson.dumps({"short": [short for short, _ in summaries], "failed": [failed for _, failed in summaries]})
