"""Trials read from the hub on the triage screen: fetched off the UI thread while their panes say so.

Until its download ends, a dataset opened from the hub holds only metadata locally; a trial's text is
the row groups that hold its rows. Showing such a trial puts "loading…" in the conversation and
verifier panes and fetches them in a worker; the trial appears when they arrive (if it is still the
one selected). When the hub does not answer, the panes say so in one line and the app goes on with
what it has.
"""

from __future__ import annotations

import time

from textual import work
from textual.worker import get_current_worker

from ...data.errors import SourceError
from ...render.block import Block
from ...trace.sanitize import sanitize
from ..background import Left, detached

SETTLE_SECONDS = 0.12
"""Wait this long before fetching: paging through trials fetches only the one the cursor stops on."""


class FetchActions:
    """Mixed into TriageScreen (needs `session`, `trial`, `conversation`, `verifier`, `status`,
    `display_trial`)."""

    def show_or_fetch(self, trial: int) -> None:
        """Show `trial` now if its text is at hand, else fetch it first."""
        if self.session.ready(trial):
            self.display_trial(trial)
            return
        self.conversation.show((), None)
        self.conversation.set_blocks([Block("loading… (reading this trial from the Hugging Face hub)", style="marker")])
        self.verifier.set_blocks([Block("loading…", style="marker")])
        self.fetch_trial(trial)

    @work(thread=True, exclusive=True, group="fetch-trial")
    def fetch_trial(self, trial: int) -> None:
        worker = get_current_worker()
        time.sleep(SETTLE_SECONDS)
        if worker.is_cancelled:
            return
        try:
            detached(lambda: (self.session.load(trial), self.session.verifier_output(trial)), "tracetui-fetch")
        except Left:
            return
        except SourceError as exc:
            self.app.call_from_thread(self._fetch_failed, trial, str(exc))
            return
        self.app.call_from_thread(self._fetched, trial)

    def when_ready(self, trials: tuple[int, ...], then) -> None:
        """Call `then()` once the text of `trials` is at hand (fetching it first when it is on the hub)."""
        if all(self.session.ready(trial) for trial in trials):
            then()
            return
        self.status("Reading from the Hugging Face hub…")
        self.fetch_then(trials, then)

    @work(thread=True, exclusive=True, group="fetch-then")
    def fetch_then(self, trials: tuple[int, ...], then) -> None:
        try:
            detached(lambda: [self.session.load(trial) for trial in trials], "tracetui-fetch")
        except Left:
            return
        except SourceError as exc:
            self.app.call_from_thread(self.status, f"Cannot read from the hub: {exc}")
            return
        self.app.call_from_thread(then)

    def _fetched(self, trial: int) -> None:
        if self.trial == trial:
            self.display_trial(trial)

    def _fetch_failed(self, trial: int, message: str) -> None:
        if self.trial != trial:
            return
        line = f"Cannot read this trial from the hub: {message}. The list, filters, stats and your labels still work."
        self.conversation.set_blocks([Block(sanitize(line), style="warning")])
        self.verifier.set_blocks([])
        self.status("The Hugging Face hub does not answer; trials read before stay readable.")
