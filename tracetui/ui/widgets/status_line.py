"""The triage screen's message line: what the last action did, and the progress bar of long work.

Background news (the progress of an index built in the background) shows only while the line has
nothing of the user's to say. A held message (a change to what the user wrote: labels, notes) stays
at least `STATUS_HOLD` seconds against background news; the user's next action still replaces it.
A message that describes a state (the filters, the trial shown, the sort) says which (`about`): it
goes as soon as that state changes (`recheck`), so no message outlives what it describes.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import ProgressBar

from ..work import Paced
from .bars import MessageBar

STATUS_HOLD = 6.0
"""Seconds a held message stays against background messages."""


class StatusLine(Horizontal):
    def __init__(self, *others: Widget, id: str | None = None) -> None:
        """`others` show at the right of the line (the download's progress)."""
        super().__init__(id=id)
        self.others = others
        self.text = ""
        """The message shown."""
        self._news = False  # the message shown is background news
        self._held: Timer | None = None  # ends a held message
        self._about: tuple[Callable[[], object], object] | None = None
        """The state the message describes, and its value when it was said."""
        self._work: Paced[tuple[str, float]] = Paced(self, self._show_work)

    def compose(self) -> ComposeResult:
        yield MessageBar(id="status")
        yield ProgressBar(total=1.0, show_eta=False, id="work")
        yield from self.others

    def say(
        self, message: str, hold: bool = False, background: bool = False, about: Callable[[], object] | None = None
    ) -> None:
        """Show `message`; `hold` keeps it against background messages, which give way to it; `about`
        gives the state it describes (it goes when that changes)."""
        if background and self._held is not None:
            return
        self._news = False
        self._about = (about, about()) if about is not None else None
        if self._held is not None:
            self._held.stop()
            self._held = None
        if hold:
            self._held = self.set_timer(STATUS_HOLD, self._release)
        self.text = message
        self.query_one("#status", MessageBar).show((message, "italic"))

    def recheck(self, *_changed: object) -> None:
        """The message goes if the state it describes has changed since it was said."""
        if self._about is not None:
            about, value = self._about
            if about() != value:
                self.say("")

    def _release(self) -> None:
        self._held = None

    def news(self, message: str) -> None:
        """Background news: shown only over nothing, or over other background news."""
        if not self.text or self._news:
            self.say(message, background=True)
            self._news = True

    def working(self, message: str, fraction: float | None) -> None:
        """Progress of long work (search, export) with its bar, shown at a pace (`Paced`); None hides
        the bar at once, and the progress that was still to be shown with it."""
        if fraction is not None:
            self._work.report((message, fraction))
            return
        self._work.drop()
        self.query_one("#work", ProgressBar).display = False

    def _show_work(self, report: tuple[str, float]) -> None:
        message, fraction = report
        bar = self.query_one("#work", ProgressBar)
        bar.display = True
        bar.update(progress=fraction)
        self.say(message, background=True)
