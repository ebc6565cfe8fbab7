"""Shown while a session opens: conversion progress on first open, and a way out (Esc / q). Other keys
typed meanwhile are kept (`typed`) for the screen that follows it: `tracetui DATASET`, then `s` and a
query straight away, searches once the list is up."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Center, Middle
from textual.screen import Screen
from textual.widgets import ProgressBar, Static

from ... import collector
from ..work import Paced


class LoadingScreen(Screen):
    BINDINGS = [Binding("escape,q", "cancel", "Cancel")]
    PASSED_ON = frozenset({"escape", "q", "ctrl+q", "ctrl+c"})
    """Keys that act here (its way out, the app's quit), not kept for the next screen; but a `q` typed
    after other keys is kept: it is in what they type (`s`, then "sql error"), not a way out."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title
        self._progress: Paced[tuple[float, str]] = Paced(self, self._show)
        self.typed: list[events.Key] = []
        """The keys typed while it showed, in order, for the screen that follows."""

    def compose(self) -> ComposeResult:
        with Middle():
            with Center():
                yield Static(Text(f"Opening {self.title_text}", style="bold"), id="loading-title")
            with Center():
                yield ProgressBar(total=1.0, show_eta=False, id="loading-bar")
            with Center():
                yield Static("", id="loading-detail")

    def on_mount(self) -> None:
        self.call_after_refresh(collector.resume)  # the first frame: what opening makes meanwhile is collected

    def progress(self, fraction: float, message: str) -> None:
        """The opening's progress, shown at a pace (`Paced`)."""
        self._progress.report((fraction, message))

    def _show(self, report: tuple[float, str]) -> None:
        fraction, message = report
        self.query_one(ProgressBar).update(progress=fraction)
        self.query_one("#loading-detail", Static).update(Text(message, style="dim"))

    def on_key(self, event: events.Key) -> None:
        if event.key not in self.PASSED_ON or (event.key == "q" and self.typed):
            event.stop()
            event.prevent_default()
            self.typed.append(events.Key(event.key, event.character))

    def action_cancel(self) -> None:
        self.app.exit(return_code=130, message="cancelled")
