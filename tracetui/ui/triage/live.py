"""The triage screen follows its harbor job folders while harbor writes them: new trials appear, running
conversations grow, finished trials get their outcome, verifier log and findings, and the user's cursor,
scroll position and filters stay where they are.

A worker polls the folders (`data.jobs.follow`, about once a second: reading changed trials happens there,
off the UI thread) and hands what it found to the UI thread, which applies it to the session and brings
the indexes, facets and panes up to date. While work that reads the whole session runs (a search, an
export, an index being built, a trial being fetched), changes wait for it to end.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from textual.worker import get_current_worker

from ...data.jobs import JobStorage
from ...data.jobs.follow import POLL, Changes, Follower
from ...data.session import Applied
from ..format import model_names

if TYPE_CHECKING:
    from ..screens.triage import TriageScreen

GROUP = "follow-jobs"
BUSY = ("search", "export", "verifier-index", "findings-index", "fetch")
"""Worker groups that read the session across calls: changes are applied when none runs."""


class LiveJobs:
    def __init__(self, screen: TriageScreen) -> None:
        self.screen = screen
        self.session = screen.session

    @property
    def following(self) -> bool:
        return any(isinstance(dataset, JobStorage) for dataset in self.session.datasets)

    def start(self) -> None:
        if self.following:
            self.screen.run_worker(
                self._follow, name=GROUP, group=GROUP, thread=True, exclusive=True, exit_on_error=False
            )

    def _follow(self) -> None:
        worker = get_current_worker()
        follower = Follower(self.session.datasets)
        due = time.monotonic() + POLL  # the first poll not with the first frame: it would slow it down
        while not worker.is_cancelled:
            while not worker.is_cancelled and time.monotonic() < due:
                time.sleep(0.05)
            if worker.is_cancelled:
                return
            due = time.monotonic() + POLL
            changes = follower.poll()
            applied = (
                changes is not None
                and not worker.is_cancelled
                and self.screen.app.call_from_thread(self.apply, changes)
            )
            if changes is not None and applied:
                follower.applied(changes)

    def busy(self) -> bool:
        return any(w.group in BUSY and w.is_running for w in self.screen.workers)

    def apply(self, changes: Changes) -> bool:
        """On the UI thread: the changes into the session, then everything that shows it; False (left for
        the next poll) while work that reads the whole session runs."""
        if self.busy():
            return False
        screen = self.screen
        applied = self.session.apply(changes.updates, changes.new)
        if not len(applied.changed):
            return True
        self._indexes(applied)
        if screen.search_result is not None:  # new trials were not searched: they do not match
            grow = len(self.session) - len(screen.search_result.trials)
            screen.search_result = replace(
                screen.search_result,
                trials=np.concatenate([screen.search_result.trials, np.zeros(grow, dtype=bool)]),
                in_verifier=np.concatenate([screen.search_result.in_verifier, np.zeros(grow, dtype=bool)]),
            )
        screen.labels.refresh()
        screen.trial_list.model_names = model_names(self.session.facets.facets["model"].labels)
        screen.refresh_after_change(applied)
        return True

    def _indexes(self, applied: Applied) -> None:
        screen = self.screen
        if screen.verifier_index is not None:
            screen.use_verifier_index(screen.verifier_index.updated(self.session, applied.changed))
        findings = screen.findings.index
        if findings is not None:
            screen.findings.indexed(findings.updated(self.session, applied.changed, screen.verifier_index))
