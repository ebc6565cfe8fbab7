"""Textual's interval timers, as `ui.frame_timer` mends them: after a late tick, the next tick comes at
the next interval, not the one after it (the screen's update timer paints a key's second frame within a
frame, not two). Driven on a fake clock: what is checked is when each tick is due, not how long it took."""

from __future__ import annotations

import textual._time
import textual.timer
from textual.timer import EventTargetGone, Timer

from tracetui.ui import frame_timer


class _Target:
    """What a timer holds a weak reference to (its ticks are `_Clocked._tick`, which sends nothing)."""


class _Clocked(Timer):
    """A timer whose ticks note the fake clock and take `work` of it; it stops after two."""

    def __init__(self, clock: list[float], work: float) -> None:
        self.holder = _Target()
        super().__init__(self.holder, 10.0, name="clocked")  # type: ignore[arg-type]
        self.clock, self.work, self.ticks = clock, work, []

    async def _tick(self, *, next_timer: float, count: int) -> None:
        self.ticks.append(self.clock[0])
        if len(self.ticks) == 2:
            raise EventTargetGone()
        self.clock[0] += self.work  # a tick that overran its interval


async def test_after_a_late_tick_the_next_comes_at_the_next_interval(monkeypatch):
    clock = [0.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(textual._time, "get_time", lambda: clock[0])
    monkeypatch.setattr(textual.timer, "sleep", sleep)
    monkeypatch.setattr(frame_timer, "sleep", sleep)
    assert frame_timer.mend()  # the installed Textual skips one interval too many: mended
    timer = _Clocked(clock, work=25.0)  # ticks at 10, then works until 35
    await timer._run()
    assert timer.ticks == [10.0, 40.0]  # Textual's own loop waits for 50


def test_mending_twice_changes_nothing():
    assert frame_timer.mend() and frame_timer.mend()
    assert Timer._run is frame_timer._run
