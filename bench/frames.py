"""Knowing when a frame is painted: timestamps of the app's frames and which widgets drew text in them.

Textual composes a frame (calling `render_lines` of every dirty widget) and hands it to `App._display`,
which writes it to the terminal (headless: drops it). We wrap both, per app instance and per widget class,
so a probe can wait for "the next frame in which the trial list was repainted" without sleeping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Frame:
    at: float  # time.perf_counter() when the frame was handed to the driver
    painted: frozenset[type]  # watched widget classes whose render_lines ran for this frame
    texted: frozenset[type]  # ... and drew some non-blank text


@dataclass
class FrameWatcher:
    widgets: tuple[type, ...]
    ever_texted: set[type] = field(default_factory=set)
    on_frame: list = field(default_factory=list)  # callbacks(frame), e.g. to stop at the first screen
    _painted: set[type] = field(default_factory=set)
    _texted: set[type] = field(default_factory=set)
    _waiters: list[tuple[float, frozenset, Callable[[], bool], asyncio.Future]] = field(default_factory=list)

    def install(self, app) -> None:
        """Wrap `app._display` and the watched classes' `render_lines` (call before the app runs)."""
        display = app._display

        def timed_display(screen, renderable):
            display(screen, renderable)
            if renderable is not None:
                self._frame(time.perf_counter())

        app._display = timed_display
        for cls in self.widgets:
            self._wrap(cls)

    def _wrap(self, cls: type) -> None:
        render_lines = cls.render_lines

        def watched(widget, crop):
            strips = render_lines(widget, crop)
            self._painted.add(cls)
            if any(strip.text.strip() for strip in strips):
                self._texted.add(cls)
            return strips

        cls.render_lines = watched

    def _frame(self, at: float) -> None:
        frame = Frame(at, frozenset(self._painted), frozenset(self._texted))
        self._painted.clear()
        self._texted.clear()
        self.ever_texted |= frame.texted
        for callback in self.on_frame:
            callback(frame)
        for waiter in list(self._waiters):
            after, needed, when, future = waiter
            if frame.at >= after and needed <= frame.painted and not future.done() and when():
                future.set_result(frame.at)
                self._waiters.remove(waiter)

    async def next_paint(
        self, *widgets: type, after: float, when: Callable[[], bool] = lambda: True, timeout: float = 10.0
    ) -> float:
        """perf_counter() of the first frame after `after` in which all `widgets` were repainted and `when()`
        holds (the state the interaction leads to, so an unrelated earlier repaint does not count)."""
        future = asyncio.get_running_loop().create_future()
        self._waiters.append((after, frozenset(widgets), when, future))
        return await asyncio.wait_for(future, timeout)
