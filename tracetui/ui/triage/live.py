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
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App
from textual.worker import Worker, get_current_worker

from ...data.session import Applied, Session
from ..findings import FindingsController
from ..widgets.trial_list import TrialList
from ..work import in_thread
from .labels import LabelBook
from .panes import TrialPanes
from .search import Search
from .verifiers import VerifierIndexing

if TYPE_CHECKING:
    from ...data.jobs.follow import Changes

GROUP = "follow-jobs"
BUSY = ("search", "export", "verifier-index", "findings-index", "fetch")
"""Worker groups that read the session across calls: changes are applied when none runs."""


class LiveHost(Protocol):
    """What following the job folders uses of the triage screen."""

    session: Session

    @property
    def app(self) -> App[Any]: ...
    @property
    def workers(self) -> Iterable[Worker[Any]]: ...
    @property
    def trial(self) -> int | None: ...
    @property
    def trial_list(self) -> TrialList: ...
    def facets_changed(self) -> None: ...
    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Worker[Any]: ...


class LiveJobs:
    def __init__(
        self,
        host: LiveHost,
        labels: LabelBook,
        verifiers: VerifierIndexing,
        findings: FindingsController,
        search: Search,
        panes: TrialPanes,
    ) -> None:
        self.host = host
        self.session = host.session
        self.labels, self.verifiers, self.findings, self.search, self.panes = labels, verifiers, findings, search, panes

    @property
    def following(self) -> bool:
        return any(dataset.followed for dataset in self.session.datasets)

    def start(self) -> None:
        if self.following:
            in_thread(self.host, self._follow, GROUP, "Following the job folders")

    def _follow(self) -> None:
        from ...data.jobs.follow import POLL, Follower  # job folders only: off everyone's start-up

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
                changes is not None and not worker.is_cancelled and self.host.app.call_from_thread(self.apply, changes)
            )
            if changes is not None and applied:
                follower.applied(changes)

    def busy(self) -> bool:
        return any(w.group in BUSY and w.is_running for w in self.host.workers)

    def apply(self, changes: Changes) -> bool:
        """On the UI thread: the changes into the session, then everything that shows it; False (left for
        the next poll) while work that reads the whole session runs."""
        if self.busy():
            return False
        applied = self.session.apply(changes.updates, changes.new)
        if not len(applied.changed):
            return True
        self._indexes(applied)
        self.search.grow(len(self.session))  # new trials were not searched: they do not match
        self.labels.refresh()
        self.host.trial_list.sources_changed()
        self._refresh(applied)
        return True

    def _indexes(self, applied: Applied) -> None:
        verifiers = self.verifiers.index
        if verifiers is not None:
            self.verifiers.use(verifiers.updated(self.session, applied.changed))
        findings = self.findings.index
        if findings is not None:
            self.findings.indexed(findings.updated(self.session, applied.changed, self.verifiers.index))

    def _refresh(self, applied: Applied) -> None:
        """Trials changed or joined: the facets and the list again, the cursor on the same trial, and the
        open trial's panes brought up to date in place when it changed."""
        current = self.host.trial
        self.host.facets_changed()
        if current is not None and current == self.host.trial:
            self.panes.update(current, applied)
