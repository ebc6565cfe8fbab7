"""The verifier index on the triage screen: every trial's verifier log parsed in a worker after the first
frame, then what it feeds (the tests column, the failed-test facet, task health, the findings index)
and `F`, which steps through the failed tests of every listed trial (before the index is in, F parses
the next trials on the spot).

The worker posts `VerifiersIndexed`; the screen hands it back to `use`, then refreshes the facets and
the list and starts the findings on the index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from textual.message import Message
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ...data.verifier_index import VerifierIndex, build_verifier_index
from ..evidence import FeatureHost
from ..task_health import show_task_health
from ..widgets.columns import Column
from ..widgets.verifier_panel import VerifierPanel
from ..work import WorkDone, WorkProgress, in_thread

GROUP = "verifier-index"
INDEXING = "Reading verifier logs"
UNINDEXED_SCAN = 2000
"""Trials F parses on the spot, looking for the next failure, before the background index is in."""


def tests_cell(summary: str, width: int) -> str:
    """The tests column: "2/3 tests" or "score 0.6", just the figure when narrow."""
    if width >= len(summary) or " " not in summary:
        return summary
    return summary.split(" ")[0] if summary.endswith(" tests") else summary.split(" ")[-1]


@dataclass
class VerifiersIndexed(Message):
    """The verifier index is in: the tests column, the failed-test facet, F over every trial."""

    index: VerifierIndex


class VerifiersHost(FeatureHost, Protocol):
    """What the verifier index uses of the triage screen."""

    @property
    def verifier(self) -> VerifierPanel: ...
    def no_trial(self) -> None: ...


class VerifierIndexing:
    def __init__(self, host: VerifiersHost) -> None:
        self.host = host
        self.session = host.session
        self.index: VerifierIndex | None = None

    def start(self) -> None:
        """Parse every trial's verifier log in a worker (its progress shows while nothing else is said)."""
        in_thread(self.host, self._build, GROUP, INDEXING)

    def _build(self) -> None:
        worker = get_current_worker()
        post = self.host.post_message

        def progress(fraction: float) -> None:
            post(WorkProgress(f"{INDEXING}…", fraction, background=True))

        def waiting(fraction: float) -> None:
            post(WorkProgress(f"{INDEXING} after the download…", fraction, background=True))

        try:
            index = build_verifier_index(self.session, progress, lambda: worker.is_cancelled, waiting)
        except InterruptedError:
            return
        except SourceError as exc:  # the hub stopped answering while the logs streamed from it
            post(WorkDone(f"Verifier logs: {exc}", background=True))
            return
        post(VerifiersIndexed(index))

    def use(self, index: VerifierIndex) -> None:
        """The tests column and the failed-test facet from `index`."""
        self.index = index
        self.session.facets.add(index.facet())
        show_task_health(self.session, self.host.trial_list, index)
        self.host.trial_list.set_column(
            Column(
                "tests",
                "tests",
                9,
                lambda trial, width: tests_cell(index.short[trial], width),
                give_way=((29, 5), (55, 0)),  # "1/3" before a model name is cut
                right=True,
            )
        )

    # --- F: failed tests -----------------------------------------------------------------------
    def next_failure(self) -> None:
        """F: the verifier, focused, at the traceback of the first failed test; again, at the next one,
        then at the first one of the next trial in the list that has any (wrapping at the end)."""
        host = self.host
        panel = host.verifier
        panel.display = True
        following = panel.failure + 1 if panel.has_focus else 0
        if panel.goto_failure(following):
            return self._reached("")
        order, start = host.trial_list.order, host.trial_list.cursor
        if not len(order):
            host.no_trial()
            return None
        scan = len(order) if self.index is not None else min(len(order), UNINDEXED_SCAN)
        for step in range(1, scan + 1):
            position = (start + step) % len(order)
            if self._may_have_failures(int(order[position])):
                host.trial_list.move_to(position)
                if panel.goto_failure(0):
                    return self._reached(" (from the top of the list)" if position <= start else "")
        host.status(
            "No failed tests with a traceback in the listed trials."
            if scan == len(order)
            else "No failed tests in the next trials; the rest are still being read.",
            about=host.about_filters,
        )
        return None

    def _may_have_failures(self, trial: int) -> bool:
        """Whether `trial`'s verifier log has failed tests: the index's word, else its log parsed, if its
        text is at hand (one still on the hub is passed over: reading it is a request per trial)."""
        if self.index is not None:
            return bool(self.index.failed[trial])
        if not self.session.ready(trial):
            return False
        from ...verifier import parse_verifier

        return bool(parse_verifier(self.session.verifier_output(trial)).failed_tests)

    def _reached(self, note: str) -> None:
        panel = self.host.verifier
        panel.focus()
        failures = panel.failures()
        name = failures[panel.failure][0]
        self.host.status(
            f"Failed test {panel.failure + 1}/{len(failures)}: {name}{note}  (F: next failure)",
            about=self.host.about_trial,
        )
