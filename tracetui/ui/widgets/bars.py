"""The one-line bars around the panes: the header, the status line and the prompt bar (find, episode)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from rich.cells import get_character_cell_size
from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import Input, Static

from ...trace.sanitize import sanitize
from .. import keymap

Part = tuple[str, str | Style] | str
"""A piece of an InfoBar line: text, or (text, style)."""


class InfoBar(Static):
    """A line of Rich Text. Its parts are mostly data (trial names, models, queries): each is sanitized
    and appended as text, never parsed as markup.

    `show` can take several versions of the line, longest first: the bar shows the first that fits its
    width when it renders, and cuts the last at a word boundary ("…") when none does."""

    _versions: tuple[Text, ...] = ()

    def show(self, *parts: Part) -> None:
        self.show_versions(parts)

    def show_versions(self, *versions: tuple[Part, ...] | list[Part]) -> None:
        """Show these versions; the same line again (the position line as the panes settle) draws nothing."""
        lines = tuple(_line(version) for version in versions)
        if lines != self._versions:
            self._versions = lines
            self.refresh(layout=False)

    def update(self, content="", **kwargs) -> None:
        self._versions = ()
        super().update(content, **kwargs)

    def render(self):
        if not self._versions:
            return super().render()
        width = self.content_region.width or self.size.width
        for text in self._versions:
            if text.cell_len <= width:
                return text
        return cut_at_word(self._versions[-1], width)


class MessageBar(InfoBar):
    """The message line: a message too long for one line wraps onto the next (up to `MAX_LINES`,
    its height following), so what an action did is never lost to the terminal's width."""

    MAX_LINES = 3
    DEFAULT_CSS = "MessageBar { height: auto; max-height: 3; }"

    def show_versions(self, *versions: tuple[Part, ...] | list[Part]) -> None:
        before = self._versions
        super().show_versions(*versions)
        if self._versions is before:
            return
        width = self.content_region.width
        if not width or len(self._lines(width)) != self.content_region.height:
            self.refresh(layout=True)  # its height follows the lines the message takes

    def _lines(self, width: int) -> list[Text]:
        """The message's lines at `width`: one while it fits, else wrapped, the last cut at a word."""
        text = self._versions[0]
        if text.cell_len <= width or width <= 0:
            return [text]
        lines = text.copy()
        lines.no_wrap = False
        wrapped = list(lines.wrap(self.app.console, width, overflow="fold"))
        if len(wrapped) > self.MAX_LINES:
            last = Text(" ").join(wrapped[self.MAX_LINES - 1 :])
            wrapped = [*wrapped[: self.MAX_LINES - 1], cut_at_word(last, width)]
        return wrapped

    def render(self):
        if not self._versions:
            return super().render()
        lines = self._lines(self.content_region.width or self.size.width)
        return lines[0] if len(lines) == 1 else Text("\n").join(lines)


def _line(parts: Sequence[Part]) -> Text:
    text = Text(no_wrap=True, overflow="crop")
    for part in parts:
        content, style = part if isinstance(part, tuple) else (part, "")
        text.append(sanitize(content).replace("\n", " "), style)
    return text


def cut_at_word(text: Text, width: int) -> Text:
    """`text` cut to `width` cells with "…", at the last space unless that loses two thirds of it (one
    "…": a cut that ends in a part cut already keeps its own)."""
    if text.cell_len <= width:
        return text
    if width <= 1:
        return Text("…"[:width])
    plain = text.plain
    end = cells = 0
    for character in plain:
        cells += get_character_cell_size(character)
        if cells > width - 1:
            break
        end += 1
    space = plain.rfind(" ", 0, end + 1)
    if space > width // 3:
        end = space
    cut = text[:end]
    cut.rstrip()
    if not cut.plain.endswith("…"):
        cut.append("…")
    return cut


class PromptMode(Enum):
    """What the prompt asks for; its answer goes to the screen with the mode."""

    FIND = "find"
    SEARCH = "search"
    EPISODE = "episode"
    EXPORT = "export"
    OVERWRITE = "overwrite"
    """Whether the export may replace the file that is there (y)."""
    ASK = "ask"
    """The question `A` asks every listed trial."""
    VALUES = "values"
    """The sidebar's value filter: the screen narrows the values as the text changes."""


class PromptBar(Input):
    """A single-line prompt docked at the bottom: find (`/`), search (`s`), episode jumps (`e`), export,
    and the sidebar's value filter, whose cursor ↑ / ↓ move while typing."""

    BINDINGS = [*keymap.PROMPT]

    @dataclass
    class Answered(Message):
        """Enter (the text) or Esc (an empty answer)."""

        mode: PromptMode
        value: str

    @dataclass
    class Stepped(Message):
        """↑ / ↓ while typing: the screen moves whatever the prompt is choosing from."""

        mode: PromptMode
        step: int

    def action_step(self, step: int) -> None:
        self.post_message(self.Stepped(self.mode, step))

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.mode = PromptMode.FIND
        self.display = False

    def ask(self, mode: PromptMode, placeholder: str, value: str = "") -> None:
        self.mode = mode
        self.placeholder = placeholder
        self.value = value
        self.display = True
        self.focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.display = False
        self.post_message(self.Answered(self.mode, event.value))

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape":
            event.stop()
            self.display = False
            self.post_message(self.Answered(self.mode, ""))
