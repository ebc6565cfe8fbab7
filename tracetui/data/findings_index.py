"""Every trial's findings (see `tracetui.findings`), for the findings facet, a list column and the CLI.

Built once per dataset in the background and kept beside the dataset's conversion
(`findings-index.json`, stamped with the rules version: a change to the rules rebuilds it; a change to
the source makes a new conversion folder). A trial's history is read as cheaply as it can be: the last
main episode row holds the whole conversation unless a context summarization restarted it; only
then are all its rows read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import orjson
import pyarrow as pa

from ..findings import KIND_NAMES, Finding, marker
from ..trace.model import Message, TrialHistory
from .errors import SourceError
from .facets import MultiFacet
from .history import rebuild_history
from .trial_cache import per_trial
from .verifier_index import VerifierIndex, build_verifier_index

if TYPE_CHECKING:
    from .session import Session

INDEX_FILE = "findings-index.json"
FACET = "finding"
_CODE = {name: code for code, name in enumerate(KIND_NAMES)}


@dataclass(slots=True)
class FindingsIndex:
    findings: list[list[Finding]]
    """Per trial, in message order."""

    def of(self, trial: int) -> list[Finding]:
        return self.findings[trial]

    def marker(self, trial: int) -> str:
        """The trial's kinds as a compact string for a list column, e.g. "TCn"."""
        return marker(f.kind for f in self.findings[trial])

    def updated(self, session: Session, trials: Iterable[int], verifiers: VerifierIndex | None = None) -> FindingsIndex:
        """This index for a session that gained or changed `trials` (`Session.apply`): theirs found again
        (`verifiers`: the session's verifier index, already brought up to date)."""
        found = [*self.findings, *[[] for _ in range(len(session) - len(self.findings))]]
        for trial in trials:
            tests = verifiers.tests(int(trial)) if verifiers is not None else None
            found[trial] = trial_findings(session, int(trial), tests)
        return FindingsIndex(found)

    def facet(self) -> MultiFacet:
        """Multi-valued facet over every kind (a trial has each kind it shows at least once)."""
        pairs = sorted({(trial, _CODE[f.kind]) for trial, found in enumerate(self.findings) for f in found})
        array = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        return MultiFacet(FACET, "Findings", list(KIND_NAMES), array[:, 0].copy(), array[:, 1].copy())


def build_findings_index(
    session: Session,
    progress: Callable[[float], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    verifiers: VerifierIndex | None = None,
    waiting: Callable[[float], None] | None = None,
) -> FindingsIndex:
    """Find (or read back) the findings of every trial of `session`, dataset by dataset.

    `no-tests-run` needs to know which verifier logs show tests: pass the session's VerifierIndex when
    it is built, else it is built (or read back) when a dataset's findings are not stored yet. Raises
    InterruptedError when `cancelled()` turns true (nothing is stored then). Waits for a running download
    (`waiting(fraction)`); a dataset that stays on the hub (--no-download) raises SourceError, since
    finding reads every conversation."""
    if not session.wait_for_download(waiting, cancelled or (lambda: False)):
        raise InterruptedError("cancelled")
    if session.remote:
        raise SourceError("findings read every conversation: open the dataset without --no-download to see them")

    @cache
    def verifier_index() -> VerifierIndex:
        return verifiers or build_verifier_index(session, None, cancelled)

    def item(trial: int) -> tuple[int, int | None]:
        return trial, verifier_index().tests(trial)

    def compute(trial: int) -> list[Finding]:
        return _findings_of(session, item(trial))

    return FindingsIndex(
        per_trial(session, INDEX_FILE, compute, _load, _dump, progress, cancelled, (_findings_of, item))
    )


def _findings_of(session: Session, item: tuple[int, int | None]) -> list[Finding]:
    """`trial_findings` of (trial, verifier tests): what a worker process is handed (see `trial_workers`)."""
    return trial_findings(session, *item)


def trial_findings(session: Session, trial: int, verifier_tests: int | None = None) -> list[Finding]:
    """One trial's findings (`verifier_tests`: as `find_findings` takes it, None reads the log)."""
    from ..findings import find_findings  # the engine loads here, in the background, off start-up

    t = session.trials
    result = t.label("result", trial)
    summarized = bool(t.restarts[trial]) or t.sub_offsets[trial + 1] > t.sub_offsets[trial]
    try:
        history = _history(session, trial)
    except (ValueError, TypeError, IndexError, KeyError, pa.ArrowException):
        return []  # a trial whose rows cannot be read as a conversation has nothing to show
    return find_findings(
        history, result, lambda: session.verifier_output(trial), summarized=summarized, verifier_tests=verifier_tests
    )


def _history(session: Session, trial: int) -> TrialHistory:
    """The trial's main history: its last row's messages; after a context summarization restarted it,
    the last row of each stretch between restarts (a row not longer than the one before starts a
    stretch, as in `trials`), rebuilt as `Session.history` rebuilds every row: the same messages and
    indices, from a few rows instead of all of them."""
    t = session.trials
    rows = [int(r) for r in t.rows(trial)]
    if not rows:
        return TrialHistory((), ())
    index = int(t.dataset[trial])
    dataset = session.datasets[index]
    if t.restarts[trial]:
        sizes = dataset.message_counts[rows]
        ends = [row for row, size, after in zip(rows, sizes, [*sizes[1:], -1]) if after <= size]
        return rebuild_history(dataset, ends, [0] * len(ends), [])  # episode numbers: not needed here
    messages = dataset.messages(rows[-1])
    return TrialHistory(
        tuple(Message(role or "unknown", content or "", 0, i) for i, (role, content) in enumerate(messages)), ()
    )


def _load(data: bytes, count: int) -> list[list[Finding]] | None:
    from ..findings import RULES_VERSION

    stored = orjson.loads(data)
    if stored["rules"] != RULES_VERSION or len(stored["trials"]) != count:
        return None
    return [
        [Finding(KIND_NAMES[k], m, e, (s[0], s[1]) if s else None) for k, m, e, s in found]
        for found in stored["trials"]
    ]


def _dump(findings: list[list[Finding]]) -> bytes:
    from ..findings import RULES_VERSION

    return orjson.dumps(
        {
            "rules": RULES_VERSION,
            "kinds": list(KIND_NAMES),
            "trials": [[[_CODE[f.kind], f.message, f.evidence, f.span] for f in found] for found in findings],
        }
    )
