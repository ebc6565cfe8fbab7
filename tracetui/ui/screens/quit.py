"""The question on quit while labels or notes are held in memory (the disk refused them): write them to
a file that `tracetui labels import FILE` reads back, quit anyway, or stay (the screen keeps trying the
disk). It dismisses with the line to print once the terminal is back, or None to stay."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from .. import keymap
from ..triage.labels import LabelBook


class QuitScreen(ModalScreen[str | None]):
    BINDINGS = [*keymap.UNSAVED]
    AUTO_FOCUS = ""
    """The keys answer; `e` (or a click) goes to the path."""

    def __init__(self, book: LabelBook) -> None:
        super().__init__()
        self.book = book

    def compose(self) -> ComposeResult:
        store = self.book.store
        with Vertical(id="unsaved-body"):
            yield Static(Text(f"{self.book.unsaved_text()} not saved", style="bold"))
            yield Static(Text(f"{store.path} refuses writes ({store.problem}): they are held in memory."))
            yield Static(Text("Write them to:"))
            yield Input(str(self.book.default_unsaved_path()), id="unsaved-path")
            yield Static(id="unsaved-problem")
            yield Static(
                Text(
                    "w writes them there and quits (`tracetui labels import FILE` reads them back) · "
                    "e edits the path · Q quits anyway, losing them · Esc stays (the disk is tried again)",
                    style="dim",
                )
            )

    def action_write(self) -> None:
        path = Path(self.query_one(Input).value.strip()).expanduser()
        try:
            self.dismiss(self.book.write_unsaved(path))
        except OSError as exc:
            problem = f"Cannot write {path}: {exc.strerror or exc}. Another path? (e edits it)"
            self.query_one("#unsaved-problem", Static).update(Text(problem, style="bold red"))

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_write()

    def action_edit_path(self) -> None:
        self.query_one(Input).focus()

    def action_discard(self) -> None:
        self.dismiss(self.book.lost_line())

    def action_stay(self) -> None:
        self.dismiss(None)
