"""An app that shows one recording screen, for the tests (Pilot, and a real pty) and for trying it:
`python -m tests.recording_viewer PATH.cast [EPISODE]`. The app proper opens the screen with `r` on a trial
whose source keeps a recording (`Session.recording`)."""

from __future__ import annotations

import sys
from pathlib import Path

from textual.app import App

from tracetui.ui.app import TraceApp
from tracetui.ui.screens.recording import RecordingScreen


class RecordingViewer(App):
    CSS_PATH = TraceApp.CSS_PATH

    def __init__(self, path: Path, episode: int | None = None) -> None:
        super().__init__()
        self.path = path
        self.episode = episode

    def on_mount(self) -> None:
        self.push_screen(RecordingScreen(self.path, "a trial", self.episode), lambda _: self.exit())


if __name__ == "__main__":
    RecordingViewer(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else None).run()
