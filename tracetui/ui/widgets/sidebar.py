"""The filter sidebar's column: the name filter's box over the facet values, and its width.

It is narrow while you read and gets the room while you choose filters (focus in it): the values'
names then show in full where the terminal allows. `+` / `-` in it widen or narrow it for the rest
of the session, in either state.
"""

from __future__ import annotations

from textual.containers import Vertical
from textual.widget import Widget

READING_SHARE, READING_RANGE = 0.28, (20, 34)
"""The sidebar's share of the screen's width while another pane has focus, and its least and most."""
CHOOSING_SHARE, CHOOSING_RANGE = 0.45, (20, 44)
"""The same while it has focus."""
MAIN_KEEPS = 36
"""Columns the panes beside it keep, however it is widened."""
NARROWEST = 16


class Sidebar(Vertical):
    def __init__(self, *children: Widget, id: str | None = None) -> None:
        super().__init__(*children, id=id)
        self._delta = 0  # columns added or taken by + / -

    def on_mount(self) -> None:
        self.watch(self.screen, "focused", self.set_width, init=False)
        self.set_width()

    def on_resize(self) -> None:
        self.set_width()

    def set_width(self, _focused: object = None) -> None:
        width, limit = self._widths()
        self.styles.width = max(NARROWEST, min(width + self._delta, limit))

    def _widths(self) -> tuple[int, int]:
        """(its width before + / -, its greatest width) on this screen, in its state."""
        screen = self.app.size.width
        share, (least, most) = (
            (CHOOSING_SHARE, CHOOSING_RANGE) if self.has_focus_within else (READING_SHARE, READING_RANGE)
        )
        return max(least, min(int(screen * share), most)), max(NARROWEST, screen - MAIN_KEEPS)

    def resize(self, delta: int) -> int | None:
        """`delta` more (or fewer) columns, as far as they go; its new width, or None at its limit."""
        width, limit = self._widths()
        before = max(NARROWEST, min(width + self._delta, limit))
        after = max(NARROWEST, min(before + delta, limit))
        self._delta = after - width
        self.set_width()
        return after if after != before else None
