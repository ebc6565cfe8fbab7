"""How background work talks to its screen: workers post messages, their progress is shown at a pace
(`Paced`), and a worker that fails says so in one line.

A worker thread never calls into the UI. It posts typed messages to the screen that started it
(`post_message` is thread-safe, and a screen that is closing drops them, so news from a worker cannot
reach panes that are gone). Workers run with `exit_on_error=False` and a `description`; the screen turns
a worker's ERROR state into `failure_line`, the app goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker

from ..data.errors import one_line


@dataclass
class WorkProgress(Message):
    """Progress of long work for the message line: `text` and its fraction done.

    Work the user started (search, export) shows a bar; background work (`background=True`, the verifier
    index) shows as text, and only while the message line has nothing of the user's to say."""

    text: str
    fraction: float
    background: bool = False


@dataclass
class WorkDone(Message):
    """Long work ended without a result to show (cancelled, or failed as it can): the message line says
    `text` and the progress bar hides; of background work (`background`), the line says it only over
    nothing of the user's, and the bar of the user's work stays."""

    text: str
    background: bool = False


T = TypeVar("T")

PACE = 0.25
"""Seconds between two showings of a work's progress. Each repaints, on the thread the work also wants
(the GIL): at 400,000 rows through the hub, the loading screen's ~70 frames took ~0.7 s of its reads."""


class Paced(Generic[T]):
    """Progress shown at most every PACE seconds: a report at once after a rest, else the latest of
    those that came meanwhile once that time is over (never one that a later report replaced)."""

    def __init__(self, owner: MessagePump, show: Callable[[T], object]) -> None:
        self._owner = owner
        self._show = show
        self._latest: tuple[T] | None = None
        self._resting = False

    def report(self, value: T) -> None:
        self._latest = (value,)
        if not self._resting:
            self._next()

    def drop(self) -> None:
        """Forget the report waiting to be shown (the work ended: it would say what is over)."""
        self._latest = None

    def _next(self) -> None:
        self._resting = self._latest is not None
        if self._latest is None:
            return
        (value,), self._latest = self._latest, None
        self._owner.set_timer(PACE, self._next)
        self._show(value)


def failure_line(worker: Worker[object]) -> str:
    """One line for a worker that raised: what it was doing and the error (the traceback stays out)."""
    error = worker.error
    what = worker.description or worker.name or "Background work"
    detail = str(error).strip()
    kind = type(error).__name__
    return one_line(f"{what} failed: {kind}: {detail}" if detail else f"{what} failed: {kind}")


class RunsWorkers(Protocol):
    def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Worker[Any]: ...


def in_thread(host: RunsWorkers, work: Callable[[], object], group: str, description: str = "") -> Worker[Any]:
    """`work` on a thread worker of `host`, as all long work here runs: one at a time in its group (a new
    one replaces the one running), its failure a line of the message line, not the app's end."""
    return host.run_worker(
        work, name=group, group=group, thread=True, exclusive=True, exit_on_error=False, description=description
    )
