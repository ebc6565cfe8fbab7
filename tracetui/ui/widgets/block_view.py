"""A Line-API view over blocks: lays out plain text cheaply, styles and renders only visible lines.

Both the conversation pane and the verifier panel are BlockViews. Layout wraps each block's plain text
(no highlighting); a block's styler runs only when one of its lines scrolls into view, and rendered
lines are kept in a small LRU cache, so a 300-message trial paints its first screen at once. Blocks
are styled with the palette of the app's theme; a theme change only empties the caches.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Hashable
from typing import TypeVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.geometry import Size
from textual.strip import Strip
from textual.theme import Theme

from ...data.lru import LRU
from ...render.block import Block
from ...render.palette import Palette
from ...render.wrap import wrap_spans
from ..theme import palette_for
from .line_view import LineView

MATCH_STYLE = Style.parse("black on yellow")
CURRENT_MATCH_STYLE = Style.parse("black on #ff8c00 bold")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _cached(cache: LRU[K, V], key: K, make: Callable[[], V]) -> V:
    """`cache[key]`, made (and kept) first when the cache does not hold it."""
    value = cache.get(key)
    if value is None:
        value = make()
        cache.put(key, value)
    return value


class BlockView(LineView, can_focus=True):
    GUTTER = 2

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.blocks: list[Block] = []
        self._spans: list[list[tuple[int, int]]] = []
        self._first_line: list[int] = [0]
        self._layout_width = 0
        self._styled: LRU[int, Text] = LRU(256)
        self._lines: LRU[tuple[int, int], list[Text]] = LRU(256)
        self._strips: LRU[tuple[object, ...], Strip] = LRU(2048)
        self.matches: list[tuple[int, int, int]] = []  # (block, start, end)
        self._matches_in: dict[int, list[int]] = {}  # block -> indexes into matches
        self.match_index = -1

    # --- content -------------------------------------------------------------------------------
    def set_blocks(self, blocks: list[Block], keep_scroll: bool = False) -> None:
        anchor = self.top_block() if keep_scroll else None
        self.blocks = blocks
        self._styled.clear()
        self._lines.clear()
        self._strips.clear()
        self.matches, self._matches_in, self.match_index = [], {}, -1
        self._layout_width = 0
        self._relayout()
        if anchor is not None and anchor < len(blocks):
            self.scroll_to(y=self._first_line[anchor], animate=False, immediate=True)
        elif not keep_scroll:
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def append_blocks(self, blocks: list[Block]) -> None:
        """Add blocks at the end (a long conversation arriving in slices), laying out only the new ones;
        the view is drawn again only if they show in it."""
        first = len(self.blocks)
        self.blocks.extend(blocks)
        if self._layout_width:
            self._layout_from(first)
            if self._first_line[first] < int(self.scroll_offset.y) + self.scrollable_content_region.height:
                self.refresh()

    def replace_blocks(self, start: int, stop: int, new: list[Block]) -> None:
        """Swap blocks[start:stop] for `new` (a fold toggled), keeping the view where it is.

        Every index (a subclass's own through `blocks_replaced`, then the line table here) is brought
        up to date before the view scrolls (the new size can move it too), because scrolling runs
        watchers that read them."""
        top = self.scroll_offset.y
        self.blocks[start:stop] = new
        self._styled.clear()
        self._lines.clear()
        self.matches, self._matches_in, self.match_index = [], {}, -1
        self.blocks_replaced(start, stop, len(new))
        if self._layout_width:
            self._layout_from(start)
        self.scroll_to(y=top, animate=False, immediate=True)
        self.refresh()

    def on_mount(self) -> None:
        self.palette: Palette = palette_for(self.app.current_theme)
        self.app.theme_changed_signal.subscribe(self, self._restyle)

    def _restyle(self, theme: Theme) -> None:
        """Style every block again in the new theme's palette (the layout does not change)."""
        self.palette = palette_for(theme)
        self._styled.clear()
        self._lines.clear()
        self.repaint()

    def repaint(self) -> None:
        self._strips.clear()
        self.refresh()

    def blocks_replaced(self, start: int, stop: int, count: int) -> None:
        """Called by `replace_blocks` once blocks[start:stop] became `count` blocks, before it scrolls."""

    def _text_width(self) -> int:
        return max(8, self.scrollable_content_region.width - self.GUTTER)

    def _relayout(self) -> bool:
        """Wrap again if the width changed; True when it did."""
        width = self._text_width()
        if width == self._layout_width:
            return False
        self._layout_width = width
        self._layout_from(0)
        return True

    def _layout_from(self, start: int) -> None:
        """Wrap blocks[start:] (plain text only) and extend the line table from there."""
        width = self._layout_width
        spans, first = self._spans[:start], self._first_line[:start]
        total = self._first_line[start] if start < len(self._first_line) else 0
        for block in self.blocks[start:]:
            block_spans = wrap_spans(block.text, width - block.indent, block.wrap)
            spans.append(block_spans)
            first.append(total)
            total += len(block_spans)
        first.append(total)
        self._spans, self._first_line = spans, first
        self._strips.clear()
        self.set_virtual_size(Size(self.scrollable_content_region.width, total))

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        """A new size is known before the next paint: wrap to it there, so no frame renders lines
        wrapped for the new width from the old place (a zoomed verifier kept its cursor and scroll)."""
        resized = super()._size_updated(size, virtual_size, container_size, layout)
        self._rewrap_in_place()
        return resized

    def _rewrap_in_place(self) -> None:
        """Wrap to the current width, keeping the text at the top of the view (and any line a
        subclass tracks, through `lines_moved`) where it was, to the character."""
        top = int(self.scroll_offset.y)
        spans, first = self._spans, self._first_line
        if not self._relayout():
            return

        def moved(line: int) -> int:
            block = bisect_right(first, line) - 1
            if not 0 <= block < len(self.blocks):
                return line
            start = spans[block][line - first[block]][0]
            return self._first_line[block] + bisect_right([s for s, _ in self._spans[block]], start) - 1

        self.scroll_to(y=moved(top), animate=False, immediate=True)
        self.lines_moved(moved)

    def lines_moved(self, moved) -> None:
        """After a re-wrap and its scroll: `moved(old_line)` is where a visual line's text is now."""

    # --- geometry ------------------------------------------------------------------------------
    @property
    def line_count(self) -> int:
        return self._first_line[-1]

    def block_at_line(self, line: int) -> int | None:
        if not self.blocks or line < 0 or line >= self.line_count:
            return None
        return bisect_right(self._first_line, line) - 1

    def top_block(self) -> int | None:
        return self.block_at_line(int(self.scroll_offset.y))

    def line_of_block(self, index: int) -> int:
        return self._first_line[index]

    def scroll_to_block(self, index: int, offset: int = 0) -> None:
        self.scroll_to(y=self._first_line[index] + offset, animate=False, immediate=True)

    # --- rendering -----------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        self._relayout()
        width = self.scrollable_content_region.width
        line = int(self.scroll_offset.y) + y
        index = self.block_at_line(line)
        if index is None:
            return Strip.blank(width, self.base_style)
        within = line - self._first_line[index]
        key = (index, within, width, self._match_key(index), self.base_style)
        return _cached(self._strips, key, lambda: self._draw(index, within, width))

    def _match_key(self, index: int) -> int:
        """Part of the strip cache key: lines of blocks with matches re-render when the current one moves."""
        found = self._matches_in.get(index)
        if not found:
            return 0
        return 2 + found.index(self.match_index) if self.match_index in found else 1

    def _draw(self, index: int, within: int, width: int) -> Strip:
        block = self.blocks[index]
        start, end = self._spans[index][within]
        text = _cached(self._lines, (index, self._layout_width), lambda: self._split(index))[within]
        found = [n for n in self._matches_in.get(index, ()) if self.matches[n][1] < end and self.matches[n][2] > start]
        if found:
            text = text.copy()
        for number in found:
            _, s, e = self.matches[number]
            style = CURRENT_MATCH_STYLE if number == self.match_index else MATCH_STYLE
            text.stylize(style, max(s, start) - start, min(e, end) - start)
        segments = list(self.line_gutter(index, within))
        if block.indent:
            segments.append(Segment(" " * block.indent))
        segments.extend(text.render(self.app.console, end=""))
        return self.line_strip(segments, width)

    def _split(self, index: int) -> list[Text]:
        """The block's styled text cut into its visual lines in one pass (slicing a Text per line
        would copy all of its spans for every line)."""
        styled = _cached(self._styled, index, lambda: self.blocks[index].styled(self.palette))
        spans = self._spans[index]
        cuts = sorted({p for span in spans for p in span} - {0})
        pieces = dict(zip([0, *cuts], styled.divide(cuts)))
        return [pieces[s] if e > s else Text() for s, e in spans]

    def line_gutter(self, index: int, within: int) -> list[Segment]:
        """Left margin of a line: subclasses mark message starts, episodes and the current message."""
        return [Segment(" " * self.GUTTER)]

    # --- find ----------------------------------------------------------------------------------
    def find(self, pattern: re.Pattern[str] | None) -> int:
        """Highlight every match of `pattern` in what is shown; returns the count (None clears)."""
        self.matches, self._matches_in, self.match_index = [], {}, -1
        if pattern is not None:
            for index, block in enumerate(self.blocks):
                for match in pattern.finditer(block.text):
                    if match.end() > match.start():
                        self._matches_in.setdefault(index, []).append(len(self.matches))
                        self.matches.append((index, match.start(), match.end()))
        self.repaint()
        return len(self.matches)

    def goto_match(self, step: int) -> tuple[int, int]:
        """Move to the next (step=1) or previous (-1) match from the current one, or from the view when
        the current one is out of it (scrolled away, `G`): the first match from its top, the last one
        up to its bottom; (position, count)."""
        if not self.matches:
            return 0, 0
        top = int(self.scroll_offset.y)
        bottom = top + self.scrollable_content_region.height
        current = self._match_line(self.matches[self.match_index]) if self.match_index >= 0 else None
        if current is not None and top <= current < bottom:
            self.match_index = (self.match_index + step) % len(self.matches)
        elif step > 0:
            after = [i for i, m in enumerate(self.matches) if self._match_line(m) >= top]
            self.match_index = after[0] if after else 0
        else:
            before = [i for i, m in enumerate(self.matches) if self._match_line(m) < bottom]
            self.match_index = before[-1] if before else len(self.matches) - 1
        return self.show_match(self.match_index)

    def show_match(self, index: int) -> tuple[int, int]:
        """Make match `index` the current one, in view; (position, count)."""
        self.match_index = index
        line = self._match_line(self.matches[self.match_index])
        self.scroll_to(y=max(0, line - self.scrollable_content_region.height // 3), animate=False, immediate=True)
        self.repaint()
        return self.match_index + 1, len(self.matches)

    def _match_line(self, match: tuple[int, int, int]) -> int:
        index, start, _ = match
        spans = self._spans[index]
        within = max(0, bisect_right([s for s, _ in spans], start) - 1)
        return self._first_line[index] + within

    # --- scrolling actions ---------------------------------------------------------------------
    def action_cursor_down(self) -> None:
        self.scroll_relative(y=1, animate=False, immediate=True)

    def action_cursor_up(self) -> None:
        self.scroll_relative(y=-1, animate=False, immediate=True)

    def action_first(self) -> None:
        self.scroll_to(y=0, animate=False, immediate=True)

    def action_last(self) -> None:
        self.scroll_to(y=self.max_scroll_y, animate=False, immediate=True)

    def action_page_down(self) -> None:
        self.scroll_relative(y=max(1, self.scrollable_content_region.height - 1), animate=False, immediate=True)

    def action_page_up(self) -> None:
        self.scroll_relative(y=-max(1, self.scrollable_content_region.height - 1), animate=False, immediate=True)
