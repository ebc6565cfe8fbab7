"""The screen of a terminal recording, drawn cell for cell: never wrapped, cropped to the pane.

A recording wider or taller than the pane is cropped at a scroll offset (`h` / `l`, `j` / `k`, the
mouse wheel, the scroll bars); the view follows the recording's cursor down when it moves out of sight,
so a shell that scrolls stays readable in a short pane. The rows come already sanitized and styled
(`render.terminal_screen`); this widget only crops them.
"""

from __future__ import annotations

import textwrap

from rich.segment import Segment
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from .line_view import LineView


class TerminalView(LineView, can_focus=False):
    """Not focusable: every key goes to the recording screen, which owns the bindings."""

    DEFAULT_CSS = "TerminalView { overflow-x: auto; }"
    """A recording wider than the pane scrolls sideways."""

    class Panned(Message):
        """The columns shown changed (keys, the mouse, the scroll bar)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._strips: list[Strip] = []
        self._cursor_line: int | None = None

    def show(self, lines: list[list[Segment]], columns: int, cursor_line: int | None) -> None:
        """A new screen: `lines` of `columns` cells; `cursor_line` is the row of the recording's cursor."""
        self._strips = [Strip(segments, columns) for segments in lines]
        self.set_virtual_size(Size(columns, len(lines)))
        if cursor_line is not None and cursor_line != self._cursor_line:
            self.keep_in_view(cursor_line)
        self._cursor_line = cursor_line
        self.refresh()

    def show_text(self, text: str) -> None:
        """A message in place of the screen (a recording that cannot be played), wrapped to the pane."""
        width = max(20, self.scrollable_content_region.width - 2)
        lines = [line for paragraph in text.split("\n") for line in textwrap.wrap(paragraph, width) or [""]]
        self.show([[Segment(line)] for line in lines], max(len(line) for line in lines), None)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = int(self.scroll_offset.y) + y
        if line >= len(self._strips):
            return Strip.blank(width, self.base_style)
        left = int(self.scroll_offset.x)
        return self.line_strip(list(self._strips[line].crop(left, left + width)), width)

    def pan(self, columns: int, lines: int) -> None:
        self.scroll_relative(x=columns, y=lines, animate=False, immediate=True)

    def watch_scroll_x(self, old: float, new: float) -> None:
        super().watch_scroll_x(old, new)
        if int(old) != int(new):
            self.post_message(self.Panned())

    @property
    def cropped(self) -> tuple[int, int] | None:
        """(first, last) column shown, 1-based, when the recording is wider than the pane."""
        width = self.scrollable_content_region.width
        if not width or self.virtual_size.width <= width:
            return None
        left = int(self.scroll_offset.x)
        return left + 1, min(self.virtual_size.width, left + width)
