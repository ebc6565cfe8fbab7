"""The triage screen follows its sources while they grow: harbor job folders while harbor writes them
(new trials appear, running conversations grow, finished trials get their outcome, verifier log and
findings), and a hub dataset opened on the first files of its metadata (the trials of the other files
join as they come in); the user's cursor, scroll position and filters stay where they are.

A worker polls the folders (`data.jobs.follow`, about once a second: reading changed trials happens there,
off the UI thread) and the hub dataset's metadata (`Session.ripe`, a few times a second: grouping the rows
happens there too), and hands what it found to the UI thread, which applies it to the session and brings
the indexes, facets and panes up to date. While work that reads the whole session runs (a search, an
export, an index being built, a trial being fetched), changes wait for it to end. The verifier index
waits for a growing list to be whole (`TriageScreen._start_background`), and starts then.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from textual.app import App
from textual.worker import Worker, get_current_worker

from ...data.dataset import Storage
from ...data.session import Applied, Session
from ...data.trial_ids import Regrown
from ..findings import FindingsController
from ..task_health import show_task_health
from ..widgets.trial_list import TrialList
from ..work import in_thread
from .labels import LabelBook
from .panes import TrialPanes
from .search import Search
from .verifiers import VerifierIndexing

if TYPE_CHECKING:
    from ...data.jobs.follow import Changes

GROUP = "follow-jobs"
GROWTH_POLL = 0.25
"""Seconds between looks at a hub dataset's metadata while it comes in."""
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
    def whole(self) -> None: ...
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
        """Whether some source grows: a job folder, or a hub dataset's list."""
        return self.session.growing is not None or any(dataset.followed for dataset in self.session.datasets)

    def start(self) -> None:
        if self.following:
            in_thread(self.host, self._follow, GROUP, "Following the sources")

    def _follow(self) -> None:
        from ...data.jobs.follow import POLL, Follower  # job folders only: off everyone's start-up

        worker = get_current_worker()
        jobs = any(dataset.followed for dataset in self.session.datasets)
        follower = Follower(self.session.datasets) if jobs else None
        due = grown = time.monotonic() + POLL  # the first poll not with the first frame: it would slow it down
        while not worker.is_cancelled and (jobs or self.session.growing is not None):
            time.sleep(0.05)
            if self.session.growing is not None and time.monotonic() >= grown:
                grown = time.monotonic() + GROWTH_POLL
                updates = self.session.ripe()
                if updates and not worker.is_cancelled:
                    self.host.app.call_from_thread(self.grow, updates)
            if follower is None or worker.is_cancelled or time.monotonic() < due:
                continue
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
        self._show(self.session.apply(changes.updates, changes.new))
        return True

    def grow(self, updates: Mapping[int, Callable[[Storage], list[int] | Regrown]]) -> None:
        """On the UI thread: the metadata that came in into the session (unless work that reads the whole
        session runs: the next look takes it); once the list is whole, the verifier index starts."""
        if self.busy():
            return
        self._show(self.session.apply(updates))
        if self.session.growing is None:
            self.host.whole()

    def _show(self, applied: Applied) -> None:
        if not len(applied.changed):
            return
        self._indexes(applied)
        self.search.grow(len(self.session))  # new trials were not searched: they do not match
        self.labels.refresh()
        self.host.trial_list.sources_changed()
        self._refresh(applied)

    def _indexes(self, applied: Applied) -> None:
        verifiers = self.verifiers.index
        if verifiers is not None:
            self.verifiers.use(verifiers.updated(self.session, applied.changed))  # task health with it
        else:  # the health column and facet, for the trials that came
            show_task_health(self.session, self.host.trial_list)
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
