"""Every trial's verifier summary ("2/3 tests"), failed test names and their assertions, for the list
column, the "failed test" facet and task health (`same failure`).

Parsing thousands of logs takes seconds, so it runs once in the background and is kept beside the
dataset's conversion (`verifier-index.json`); later opens read it back at once. While a download runs
it waits for the local copy; a dataset read from the hub streams its verifier column once first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import orjson

from .facets import MultiFacet
from .trial_cache import per_trial

if TYPE_CHECKING:
    from .session import Session

INDEX_FILE = "verifier-index-v2.json"
_TESTS = re.compile(r"\d+/(\d+) tests")  # VerifierReport.short() of a log with counts


@dataclass(slots=True)
class VerifierIndex:
    short: list[str]  # per trial: "2/3 tests", "score 0.6" or ""
    failed: list[list[str]]  # per trial: failed test names
    assertions: list[list[str]]  # per trial, one per failed test: the line that says why ("" if none)

    def tests(self, trial: int) -> int:
        """How many tests the trial's verifier log shows (0: none, or a graded log)."""
        match = _TESTS.fullmatch(self.short[trial])
        return int(match.group(1)) if match else 0

    def updated(self, session: Session, trials: Iterable[int]) -> VerifierIndex:
        """This index for a session that gained or changed `trials` (`Session.apply`): theirs read again."""
        grow = len(session) - len(self.short)
        short, failed = [*self.short, *[""] * grow], [*self.failed, *[[] for _ in range(grow)]]
        assertions = [*self.assertions, *[[] for _ in range(grow)]]
        for trial in trials:
            short[trial], failed[trial], assertions[trial] = trial_summary(session, int(trial))
        return VerifierIndex(short, failed, assertions)

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
    session: Session,
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
    return VerifierIndex([s[0] for s in summaries], [s[1] for s in summaries], [s[2] for s in summaries])


Summary = tuple[str, list[str], list[str]]
"""One trial's short summary, failed tests, and their assertions."""
_FIELDS = ("short", "failed", "assertions")


def trial_summary(session: Session, trial: int) -> Summary:
    """One trial's verifier summary ("2/3 tests"), failed test names and the assertion of each."""
    from ..verifier import parse_verifier  # imported in the background worker, off start-up

    report = parse_verifier(session.verifier_output(trial))
    why: dict[str, str] = {}
    for failure in report.failures:
        why.setdefault(failure.test, failure.assertion or "")
    failed = list(report.failed_tests)
    return report.short(), failed, [why.get(name, "") for name in failed]


def _load(data: bytes, count: int) -> list[Summary] | None:
    stored = orjson.loads(data)
    if any(len(stored.get(name, ())) != count for name in _FIELDS):
        return None
    return list(zip(*(stored[name] for name in _FIELDS)))


def _dump(summaries: list[Summary]) -> bytes:
    return orjson.dumps({name: [summary[i] for summary in summaries] for i, name in enumerate(_FIELDS)})
