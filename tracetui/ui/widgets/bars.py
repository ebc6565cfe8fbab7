"""The one-line bars around the panes: the header, the status line and the prompt bar (find, episode)."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Input, Static

from ...trace.sanitize import sanitize


class InfoBar(Static):
    """A line of Rich Text. Its parts are mostly data (trial names, models, queries): each is sanitized
    and appended as text, never parsed as markup."""

    def show(self, *parts: tuple[str, str] | str) -> None:
        text = Text(no_wrap=True, overflow="ellipsis")
        for part in parts:
            content, style = part if isinstance(part, tuple) else (part, "")
            text.append(sanitize(content).replace("\n", " "), style)
        self.update(text)


class PromptBar(Input):
    """A single-line prompt docked at the bottom, used for find (`/`) and episode jumps (`e`)."""

    class Answered(Message):
        def __init__(self, mode: str, value: str) -> None:
            super().__init__()
            self.mode = mode
            self.value = value

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = ""
        self.display = False

    def ask(self, mode: str, placeholder: str, value: str = "") -> None:
        self.mode = mode
        self.placeholder = placeholder
        self.value = value
        self.display = True
        self.focus()

    def close(self) -> None:
        self.display = False
        self.screen.focus_previous()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.display = False
        self.post_message(self.Answered(self.mode, event.value))

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.display = False
            self.post_message(self.Answered(self.mode, ""))
