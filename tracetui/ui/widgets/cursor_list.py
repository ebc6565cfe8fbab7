"""A virtual list with a cursor (Line API): only visible rows are formatted, so 40,000 rows cost nothing.

The trial list and the facet sidebar are CursorLists; subclasses say how many rows there are and how
to render one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from .line_view import LineView

PAINT_WAIT = 0.25
"""Seconds `after_painted` waits at most for the frame it waits for."""


class CursorKeys(LineView):
    """j/k, g/G and paging as moves of a line cursor: shared by the lists and the verifier panel, which
    say where the cursor is (`cursor_position`), how far it goes (`cursor_limit`) and how to move it."""

    @property
    def cursor_position(self) -> int:
        raise NotImplementedError

    @property
    def cursor_limit(self) -> int:
        raise NotImplementedError

    def move_to(self, index: int) -> None:
        raise NotImplementedError

    def _page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def action_cursor_down(self) -> None:
        self.move_to(self.cursor_position + 1)

    def action_cursor_up(self) -> None:
        self.move_to(self.cursor_position - 1)

    def action_first(self) -> None:
        self.move_to(0)

    def action_last(self) -> None:
        self.move_to(self.cursor_limit - 1)

    def action_page_down(self) -> None:
        self.move_to(self.cursor_position + self._page())

    def action_page_up(self) -> None:
        self.move_to(self.cursor_position - self._page())


class CursorList(CursorKeys, can_focus=True):
    cursor: reactive[int] = reactive(0, always_update=False, init=False, repaint=False)
    """Where the cursor is; `watch_cursor` draws the rows it left and reached again."""

    @dataclass
    class CursorMoved(Message):
        widget: CursorList
        index: int

        @property
        def control(self) -> CursorList:
            return self.widget

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.row_count = 0
        self._after_painted: list[Callable[[], object]] = []

    def set_row_count(self, count: int, cursor: int | None = None) -> None:
        self.row_count = count
        self.set_virtual_size(Size(self.scrollable_content_region.width, count))
        target = self.cursor if cursor is None else cursor
        self.set_reactive(CursorList.cursor, max(0, min(target, count - 1)))
        self.refresh()
        if self.container_size:  # the new size is in: the cursor's row shows in this frame
            self.scroll_to_cursor()
        else:  # once laid out
            self.call_after_refresh(self.scroll_to_cursor)

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        raise NotImplementedError

    def after_painted(self, callback: Callable[[], object]) -> None:
        """`callback` once the frame that paints the rows set now is on screen (at once when the list is
        not on screen: no frame will paint it; at the latest after PAINT_WAIT, should the list be hidden
        meanwhile), so slower work can wait for the list the user acted on. Call it before the change
        that refreshes the list."""
        if not (self.is_on_screen and self.screen.is_current):
            callback()
            return
        self._after_painted.append(callback)
        self.set_timer(PAINT_WAIT, self._painted)

    def render_lines(self, crop):
        strips = super().render_lines(crop)
        if self._after_painted:  # inside the frame: what waits for it runs once it is written (not
            self.call_later(self._painted)  # `call_after_refresh`: that waits for any repaint the frame left)
        return strips

    def _painted(self) -> None:
        callbacks, self._after_painted = self._after_painted, []
        for callback in callbacks:
            callback()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        index = int(self.scroll_offset.y) + y
        if index >= self.row_count:
            return Strip.blank(width, self.base_style)
        return self.render_row(index, width, index == self.cursor and self.row_count > 0)

    def watch_cursor(self, old: int, new: int) -> None:
        """The rows the cursor left and reached are drawn again (the rest only if the view scrolls)."""
        self.scroll_to_cursor()
        self.refresh_line(old)
        self.refresh_line(new)
        self.post_message(self.CursorMoved(self, new))

    def scroll_to_cursor(self) -> None:
        self.keep_in_view(self.cursor)

    @property
    def cursor_position(self) -> int:
        return self.cursor

    @property
    def cursor_limit(self) -> int:
        return self.row_count

    def move_to(self, index: int) -> None:
        if self.row_count:
            self.cursor = max(0, min(index, self.row_count - 1))

    CLICKS_TO_ACTIVATE = 2
    """A double-click opens a trial; the facet list toggles a value on a single click."""

    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y
        if 0 <= index < self.row_count:
            self.focus()
            self.cursor = index
            if event.chain >= self.CLICKS_TO_ACTIVATE:
                self.activate()

    def activate(self) -> None:
        """What a double-click does; subclasses bind Enter to the same."""

    def on_resize(self) -> None:
        self.set_virtual_size(Size(self.scrollable_content_region.width, self.row_count))
        self.scroll_to_cursor()
