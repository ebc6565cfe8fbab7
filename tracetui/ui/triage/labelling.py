"""Labels and notes as the triage screen edits them: the digit keys, `U`, the note editor's answer, the
labels column, the store tried again while changes are held in memory, and the view saved a moment
after each change. The words and the store are `LabelBook`'s (`labels.py`); this part shows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from textual.app import App
from textual.message import Message
from textual.timer import Timer

from ...store.labels import Flushed
from ..evidence import FeatureHost
from ..widgets.columns import Column
from ..work import in_thread
from .labels import LabelBook

GROUP = "label-store"
SAVE_DELAY = 1.0
"""Seconds after the last change that the view is saved: each save waits for the disk."""


@dataclass
class StoreRetried(Message):
    """The label store was tried again while changes were held in memory (`flushed`: it took them)."""

    flushed: Flushed | None


class LabellingHost(FeatureHost, Protocol):
    """What label and note editing uses of the triage screen."""

    @property
    def app(self) -> App[Any]: ...
    def facets_changed(self) -> None: ...
    def no_trial(self) -> None: ...
    def set_timer(self, delay: float, callback: Any) -> Timer: ...
    def keeps_saved_view(self) -> bool: ...


class Labelling:
    def __init__(self, host: LabellingHost, labels: LabelBook) -> None:
        self.host = host
        self.labels = labels
        self._save_timer: Timer | None = None

    def column(self) -> None:
        """The labels column, while a trial has a label or a note."""
        width = self.labels.column_width()
        if width is None:
            self.host.trial_list.remove_column("labels")
        else:
            self.host.trial_list.set_column(Column("labels", "labels", width, self.labels.cell, give_way=((25, 2),)))

    def changed(self, message: str | None) -> None:
        """After a change (ours, or others' read back): the records, the column, the facet, the line."""
        self.labels.refresh()
        self.column()
        self.host.facets_changed()
        if message is not None:
            self.host.status(message, hold=True)
        self.report_store()

    def report_store(self) -> None:
        for warning in self.labels.warnings():
            self.host.app.notify(warning, severity="warning", timeout=8, markup=False)

    def toggle(self, number: int) -> None:
        """A digit key: its label (from the config file) on or off the selected trial."""
        label = self.labels.config.label_for_digit(number)
        trial = self.host.trial
        if trial is None:
            self.host.no_trial()
            return
        if label is None:
            self.host.status(f"No label {number}: set `labels = [...]` in the config file.")
            return
        self.changed(self.labels.toggle(trial, label))

    def undo(self) -> None:
        """U: the trial of the last label change gets back the labels it had before it."""
        message = self.labels.undo()
        if message is None:
            self.host.status("No label change to undo.")
        else:
            self.changed(message)

    def note_written(self, trial: int, base: str, text: str | None) -> None:
        """The note editor's answer for `trial` (None: not saved), written over `base`, what it opened with."""
        message = None if text is None else self.labels.set_note(trial, text, base)
        if message is not None:
            self.changed(message)

    # --- held in memory ------------------------------------------------------------------------
    def retry_due(self) -> None:
        """The timer: while the store is in memory, try the disk again (off the UI thread)."""
        if not self.labels.store.on_disk:
            in_thread(self.host, self._retry, GROUP, "Saving labels")

    def _retry(self) -> None:
        self.host.post_message(StoreRetried(self.labels.retry()))

    def retried(self, flushed: Flushed | None, quitting: bool) -> None:
        """The disk took what was held (`flushed`), or did not (None); `quitting`: the quit prompt is up,
        and now has nothing left to ask about."""
        if flushed is None:
            return
        line = self.labels.flushed_line(flushed)
        if quitting:
            self.host.app.exit(f"tracetui: {line}" if line else None)
            return
        self.changed(line)  # back on the disk: its labels, other instances' included

    # --- the saved view ------------------------------------------------------------------------
    def schedule_save(self) -> None:
        """Save the view a moment after the last change."""
        if self._save_timer is not None:
            self._save_timer.stop()
        self._save_timer = self.host.set_timer(SAVE_DELAY, self.save_view)

    def save_view(self) -> None:
        if self.host.keeps_saved_view():
            return
        self.labels.save_view(self.host.state, self.host.trial)
        self.report_store()
