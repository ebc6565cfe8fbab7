"""The base of every Line-API widget here (the lists, the tables, the conversation and verifier panes):
what they all need to draw only the lines in view, cheaply.

- The widget's style is resolved once per frame (`rich_style` walks every ancestor), as `base_style`.
- A row is segments cropped or padded to the full width under the base style (`line_strip`), the
  cursor's style added on the selected row.
- `keep_in_view` scrolls the least that shows a line (the cursor).
- A new virtual size (rows filtered, a conversation built in slices) brings only the view's scrollbar up
  to date (`set_virtual_size`): Textual would lay out the whole screen for it and repaint every scrollbar.
- Views whose rows show focus (a cursor drawn only while focused) repaint when it comes and goes.
- A key with nothing to act on says so (`Notice`, which the screen shows in its message line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widget import Widget


@dataclass
class Notice(Message):
    """A word for the screen's message line: why a key did nothing in `widget`."""

    widget: LineView
    text: str

    @property
    def control(self) -> LineView:
        return self.widget


class LineView(ScrollView):
    DEFAULT_CSS = "LineView { overflow-x: hidden; }"
    """Lines are cut or wrapped to the view's width, so it never scrolls sideways: no horizontal
    scrollbar, which would otherwise come and go (a layout each) as the vertical one shows and narrows
    the lines. The terminal view, which does scroll sideways, says so."""

    SHOWS_FOCUS: ClassVar[bool] = False
    """Rows look different while the view has focus: repaint when it comes and goes."""

    base_style = Style()
    """The widget's own style, resolved for the frame being drawn."""

    def render_lines(self, crop: Region) -> list[Strip]:
        self.base_style = self.rich_style
        return super().render_lines(crop)

    def line_strip(self, segments: list[Segment], width: int, highlight: Style | None = None) -> Strip:
        """`segments` as a line exactly `width` cells wide, under the base style (plus `highlight`)."""
        style = self.base_style + highlight if highlight is not None else self.base_style
        return Strip(segments).crop_extend(0, width, None).apply_style(style)

    def set_virtual_size(self, size: Size) -> None:
        """The scrollable size, without laying out the screen while the scrollbars stay as they are.

        Assigning `virtual_size` lays out the screen: every pane is placed again and every scrollbar
        repainted, though a line view's size and place do not depend on its content. Here the scrollbars
        are brought up to date as that layout would (`_scroll_update`); one that shows or hides still
        lays out the screen (the content's width changes), through Textual's own reactives. The lines
        in view are the caller's to refresh (rows added below the view change none of them)."""
        if size == self.virtual_size:
            return
        if not self.container_size:  # not laid out yet: the first layout sizes it
            self.virtual_size = size
            return
        self.set_reactive(Widget.virtual_size, size)
        self._scroll_update(size)

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        """Each layout of the screen tells every view its size; Textual's ScrollView takes the window's
        size it is given for a new virtual size and repaints its scrollbars, every view's at every
        layout. Ours keep their virtual size themselves (`set_virtual_size`): a view whose size did not
        change has nothing to redo."""
        if size == self._size and container_size == self.container_size:
            return False
        return super()._size_updated(size, virtual_size, container_size, layout)

    def keep_in_view(self, line: int) -> None:
        """Scroll the least that brings `line` into view."""
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_offset.y)
        if line < top:
            self.scroll_to(y=line, animate=False, immediate=True)
        elif line >= top + height:
            self.scroll_to(y=line - height + 1, animate=False, immediate=True)

    def repaint(self) -> None:
        """Draw every line again (subclasses drop what they cached of the old look)."""
        self.refresh()

    def on_focus(self) -> None:
        if self.SHOWS_FOCUS:
            self.repaint()

    def on_blur(self) -> None:
        if self.SHOWS_FOCUS:
            self.repaint()
