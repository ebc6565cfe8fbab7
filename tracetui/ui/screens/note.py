"""The note editor (`a`): a free-text note on the current trial. Esc and ctrl+s both save: a note
the user typed is never thrown away by a key press."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from ...trace.sanitize import sanitize
from .. import keymap


class NoteScreen(ModalScreen[str]):
    BINDINGS = [*keymap.NOTE]

    def __init__(self, trial: int, title: str, text: str) -> None:
        super().__init__()
        self.trial = trial
        """The trial whose note this is."""
        self.title_text = title
        self.text = text
        """The note the editor opened with: a note saved from here is written over it."""

    def compose(self) -> ComposeResult:
        with Vertical(id="note-body"):
            yield Static(Text(f"Note on {sanitize(self.title_text)}", style="bold"))
            yield TextArea(self.text, id="note-text")
            yield Static(Text("Esc or ctrl+s saves; an empty note removes it.", style="dim"))

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def text_now(self) -> str:
        """The note as it stands in the editor."""
        return self.query_one(TextArea).text

    def action_save(self) -> None:
        self.dismiss(self.text_now())
