"""Trials read from the hub on the triage screen: fetched off the UI thread while their panes say so.

Until its download ends, a dataset opened from the hub holds only metadata locally; a trial's text is
the row groups that hold its rows. Showing such a trial puts "loading…" in the conversation and
verifier panes and fetches them in a worker; the trial appears when they arrive (if it is still the
one selected). When the hub does not answer, the panes say so in one line and the app goes on with
what it has. The worker posts its news to the screen (`Fetched`, `FetchFailed`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from textual.message import Message
from textual.worker import Worker, get_current_worker

from ...data import threads
from ...data.errors import SourceError
from ...data.session import Session
from ...render.block import Block
from ..background import WorkerCancelled, detached
from ..work import in_thread

SETTLE_SECONDS = 0.12
"""A move that comes this soon after the one before (the cursor paging on) waits this long before it
fetches: paging through trials fetches only the one the cursor stops on, and the first it moved to. A single
move fetches at once (it waited this long too: a hub switch took 155 ms, 40 of them the fetch)."""
GROUP = "fetch"


def loading() -> list[Block]:
    """What a conversation pane shows while its trial is read from the hub."""
    return [Block("loading… (reading this trial from the Hugging Face hub)", style="marker")]


@dataclass
class Fetched(Message):
    """The text of `trials` is at hand: `then()` shows it."""

    trials: tuple[int, ...]
    then: Callable[[], object]


@dataclass
class FetchFailed(Message):
    """The hub did not answer for `trials`: `message` says why."""

    trials: tuple[int, ...]
    message: str


class FetchHost(Protocol):
    """What the fetch uses of its screen: a worker, and a way to tell it the outcome."""

    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Worker[Any]: ...
    def post_message(self, message: Message) -> bool: ...


class TrialFetch:
    """Reads trials' text from the hub in a worker of `screen`, which gets the outcome as messages."""

    def __init__(self, screen: FetchHost, session: Session) -> None:
        self.screen = screen
        self.session = session
        self._moved = float("-inf")
        """When the last fetch that may settle was asked for (time.monotonic())."""

    def ready(self, trials: tuple[int, ...]) -> bool:
        return all(self.session.ready(trial) for trial in trials)

    def ahead(self, trial: int) -> None:
        """Start reading `trial` now, before anything shows it: `fetch`, when it comes, waits for the same
        row groups instead of asking again, and says what went wrong if anything did."""
        if not self.session.ready(trial):
            threads.detached(lambda: self.session.fetch(trial), "tracetui-fetch")

    def fetch(self, trials: tuple[int, ...], then: Callable[[], object], settle: bool = False) -> None:
        """Read `trials` (the last fetch asked for replaces any still running), then post Fetched; with
        `settle` (the cursor moved), wait a moment first when it moved a moment ago too, so paging through
        trials fetches only the one the cursor stops on (`SETTLE_SECONDS`)."""
        if settle:
            now = time.monotonic()
            settle, self._moved = now - self._moved < SETTLE_SECONDS, now
        in_thread(self.screen, lambda: self._fetch(trials, then, settle), GROUP, "Reading from the Hugging Face hub")

    def _fetch(self, trials: tuple[int, ...], then: Callable[[], object], settle: bool) -> None:
        worker = get_current_worker()
        if settle:
            time.sleep(SETTLE_SECONDS)
        if worker.is_cancelled:
            return
        fetch = self.session.fetch
        try:
            detached(lambda: [(fetch(t), self.session.verifier_output(t)) for t in trials], "tracetui-fetch")
        except WorkerCancelled:
            return
        except SourceError as exc:
            self.screen.post_message(FetchFailed(trials, str(exc)))
            return
        self.screen.post_message(Fetched(trials, then))
