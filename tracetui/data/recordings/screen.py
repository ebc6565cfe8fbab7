"""pyte's screen with a fast path for drawing plain text.

pyte's `Screen.draw` builds a new cell (`Char._replace`) for every character it draws, about 5 µs each:
most of a replay's time. Text whose characters are all one column wide (nearly all terminal output)
is drawn here a line at a time with cells shared through a small cache, with the same result as
pyte's loop (the tests compare the two on random text); anything else (wide or combining characters,
control characters, insert mode) goes to pyte's own `draw`.
"""

from __future__ import annotations

import pyte
from pyte import modes
from pyte.screens import Char, wcwidth

CACHED_PENS = 64
"""Distinct pens whose cells are cached (a recording uses a handful; the cache is dropped when full)."""


class FastScreen(pyte.Screen):
    def __init__(self, columns: int, lines: int) -> None:
        self._cells: dict[Char, dict[str, Char]] = {}
        super().__init__(columns, lines)

    def draw(self, data: str) -> None:
        text = data.translate(self.g1_charset if self.charset else self.g0_charset)
        if modes.IRM in self.mode or not _narrow(text):
            super().draw(data)
            return
        attrs = self.cursor.attrs
        cells = self._cells.get(attrs)
        if cells is None:
            if len(self._cells) >= CACHED_PENS:
                self._cells.clear()
            cells = self._cells[attrs] = {}
        cursor = self.cursor
        columns = self.columns
        while text:
            if cursor.x == columns:
                if modes.DECAWM not in self.mode:  # each character overwrites the last column: the last stays
                    self._put(columns - 1, text[-1:], cells, attrs)
                    break
                self.dirty.add(cursor.y)
                self.carriage_return()
                self.linefeed()
            room = columns - cursor.x
            chunk, text = text[:room], text[room:]
            self._put(cursor.x, chunk, cells, attrs)
            cursor.x += len(chunk)
        self.dirty.add(cursor.y)

    def _put(self, x: int, text: str, cells: dict[str, Char], attrs: Char) -> None:
        line = self.buffer[self.cursor.y]
        for character in text:
            cell = cells.get(character)
            if cell is None:
                cell = cells[character] = attrs._replace(data=character)
            line[x] = cell
            x += 1


def _narrow(text: str) -> bool:
    """Every character takes one column (printable ASCII, or wcwidth says 1)."""
    if text.isascii():
        return text.isprintable()
    return all(wcwidth(character) == 1 for character in text)
