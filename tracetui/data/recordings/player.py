"""The terminal of a recording at any moment: a pyte screen fed the recording's output, with keyframes.

pyte replays a few hundred KB of output a second, so seeking from the start of a long recording would
take seconds. As the emulator passes through the recording it keeps a keyframe (a packed copy of the
screen's state) every `keyframe_bytes` of output; a seek restores the nearest keyframe at or before the
target and replays only from there. Keyframes are taken where pyte's parser is between sequences, so
the screen replayed from one equals the screen replayed from the start. `seek` takes a deadline: the
caller (a worker) shows the intermediate screen and goes on, and a new target is honoured at once.

The frame handed to the renderer is rows of runs, one column per cell: plain strings and pens (colour
names or hex strings, attributes), no pyte types. Bidi controls and zero-width characters become
U+FFFD before pyte sees them (as `sanitize` shows them); everything else in a cell is what pyte drew,
and the renderer sanitizes it again.
"""

from __future__ import annotations

import copy
import time
import unicodedata
from array import array
from contextlib import suppress
from dataclasses import dataclass
from typing import Any, NamedTuple

import pyte
from pyte.screens import Char, StaticDefaultDict

from ...trace.sanitize import invisibles_visible
from .cast import RESIZE, Cast, resize_size
from .screen import FastScreen

KEYFRAME_BYTES = 32 * 1024
"""Output between keyframes (about a tenth of a second of pyte), for recordings up to ~8 MB…"""
MAX_KEYFRAMES = 256
"""…beyond which keyframes are further apart, so that they stay within a few MB."""
MAX_PENS = 4096
"""Distinct pens kept for sharing between frames."""
BATCH = 64
"""Events fed between two looks at the deadline."""


class Pen(NamedTuple):
    """How a cell is drawn: pyte's colour (a name such as "red" or "brightblue", six hex digits, or
    "default") and attributes."""

    fg: str
    bg: str
    bold: bool
    italic: bool
    underline: bool
    strike: bool
    reverse: bool


Run = tuple[str, Pen]
"""Cells of one pen: the text has one character per column (a wide character covers two)."""
Row = tuple[Run, ...]


@dataclass(frozen=True, slots=True)
class Frame:
    """The screen after the events up to `event` (exclusive), as the renderer draws it."""

    event: int
    columns: int
    lines: int
    rows: tuple[Row, ...]
    cursor: tuple[int, int] | None
    """(column, line) of the cursor, None while the recording hides it."""


PackedRow = tuple[Char, "array[int]", tuple[Char, ...]]
"""A screen row kept in a keyframe: its default cell, the columns it has cells for, and the cells (shared
with the screen: pyte never changes a cell, it puts a new one in its place)."""


@dataclass(frozen=True, slots=True)
class Keyframe:
    event: int
    state: dict[str, Any]
    """The screen's attributes but its buffer (cursor, modes, margins, tab stops, saved cursors…)."""
    rows: dict[int, PackedRow]


class Player:
    def __init__(self, cast: Cast, keyframe_bytes: int | None = None) -> None:
        self.cast = cast
        self.keyframe_bytes = keyframe_bytes or max(KEYFRAME_BYTES, cast.output_bytes // MAX_KEYFRAMES)
        self.keyframes: list[Keyframe] = []
        """In event order; made as the emulator first passes each point."""
        self._pens: dict[tuple[Any, ...], Pen] = {}
        self._start(FastScreen(cast.columns, cast.lines), 0)

    def _start(self, screen: FastScreen, event: int) -> None:
        self.screen = screen
        self.stream = pyte.Stream(screen)
        self.event = event
        """Events applied so far."""
        self._rows: list[Row] = []
        self._frame: Frame | None = None
        screen.dirty.update(range(screen.lines))

    # --- moving in time ------------------------------------------------------------------------
    def seek(self, t: float, deadline: float | None = None) -> bool:
        """Bring the screen to time `t`: True once there, False when `deadline` (a time.monotonic() value)
        came first (the screen is then part of the way, and the next call goes on from there)."""
        return self.seek_event(self.cast.events_until(t), deadline)

    def seek_event(self, target: int, deadline: float | None = None) -> bool:
        keyframe = self._keyframe_before(target)
        if target < self.event or (keyframe is not None and keyframe.event > self.event):
            self._restore(keyframe)
        while self.event < target:
            stop = min(target, self.event + BATCH)
            self._feed(stop)
            if deadline is not None and time.monotonic() >= deadline and self.event < target:
                return False
        return True

    def _keyframe_before(self, target: int) -> Keyframe | None:
        low, high = 0, len(self.keyframes)
        while low < high:
            middle = (low + high) // 2
            if self.keyframes[middle].event <= target:
                low = middle + 1
            else:
                high = middle
        return self.keyframes[low - 1] if low else None

    def _feed(self, stop: int) -> None:
        cast, screen = self.cast, self.screen
        furthest = self.keyframes[-1].event if self.keyframes else 0
        base = cast.starts[furthest] if furthest < len(cast) else 0
        event = self.event
        for kind, data in cast.read(self.event, stop):
            event += 1
            if kind == RESIZE:
                size = resize_size(data)
                if size is not None:
                    screen.resize(lines=size[1], columns=size[0])
            else:
                with suppress(Exception):  # pyte's own bug on odd input: it resets its parser, the replay goes on
                    self.stream.feed(invisibles_visible(data))
            if event > furthest and cast.ends[event - 1] - base >= self.keyframe_bytes and self._between_sequences():
                self.event = event
                self.keyframes.append(self._keyframe())
                furthest, base = event, cast.starts[event] if event < len(cast) else cast.ends[-1]
        self.event = stop

    def _between_sequences(self) -> bool:
        """Whether pyte's parser waits for plain text (not inside an escape sequence). Without the flag
        (another pyte), no keyframe is taken: slower seeks, never a wrong screen."""
        return getattr(self.stream, "_taking_plain_text", None) is True

    # --- keyframes -----------------------------------------------------------------------------
    def _keyframe(self) -> Keyframe:
        state = {k: v for k, v in vars(self.screen).items() if k not in ("buffer", "dirty", "_cells")}
        rows = {y: (row.default, array("H", row.keys()), tuple(row.values())) for y, row in self.screen.buffer.items()}
        return Keyframe(self.event, copy.deepcopy(state), rows)

    def _restore(self, keyframe: Keyframe | None) -> None:
        if keyframe is None:
            self._start(FastScreen(self.cast.columns, self.cast.lines), 0)
            return
        screen = FastScreen(self.cast.columns, self.cast.lines)
        for name, value in copy.deepcopy(keyframe.state).items():
            setattr(screen, name, value)
        screen.buffer.clear()
        for y, (default, columns, cells) in keyframe.rows.items():
            row = screen.buffer[y] = StaticDefaultDict(default)
            row.update(zip(columns, cells))
        self._start(screen, keyframe.event)

    # --- what is shown -------------------------------------------------------------------------
    def frame(self) -> Frame:
        """The screen now; the same object again while nothing on it changed."""
        screen = self.screen
        cursor = None if screen.cursor.hidden else (min(screen.cursor.x, screen.columns - 1), screen.cursor.y)
        if cursor is not None and cursor[1] >= screen.lines:
            cursor = None
        if not screen.dirty and self._frame is not None and self._frame.cursor == cursor:
            return self._frame
        if len(self._rows) != screen.lines or (self._frame is not None and self._frame.columns != screen.columns):
            self._rows = [()] * screen.lines
            screen.dirty.update(range(screen.lines))
        default = screen.default_char
        for y in screen.dirty:
            if y < screen.lines:
                row = screen.buffer.get(y)
                self._rows[y] = self._row(row, row.default if row is not None else default, screen.columns)
        screen.dirty.clear()
        self._frame = Frame(self.event, screen.columns, screen.lines, tuple(self._rows), cursor)
        return self._frame

    def _row(self, row: StaticDefaultDict[int, Char] | None, default: Char, columns: int) -> Row:
        """One screen row as runs, exactly `columns` cells: a wide character keeps the stub after it,
        one whose stub was overwritten (or that sits in the last column) shows as a space."""
        get = row.get if row is not None else (lambda x: None)
        runs: list[Run] = []
        text: list[str] = []
        pen: Pen | None = None
        x = 0
        while x < columns:
            cell = get(x) or default
            data = cell.data
            step = 1
            if not data:
                data = " "  # a stub whose wide character is gone
            elif x + 1 < columns and (following := get(x + 1)) is not None and following.data == "":
                step = 2
            elif unicodedata.east_asian_width(data[0]) in "WF":
                data = " "
            key = cell[1:8]
            cell_pen = self._pens.get(key)
            if cell_pen is None:
                if len(self._pens) >= MAX_PENS:  # a rainbow of true colours: start the cache again
                    self._pens.clear()
                cell_pen = self._pens[key] = Pen(*key)
            if cell_pen is not pen:
                if pen is not None:
                    runs.append(("".join(text), pen))
                text, pen = [], cell_pen
            text.append(data)
            x += step
        if pen is not None:
            runs.append(("".join(text), pen))
        return tuple(runs)
