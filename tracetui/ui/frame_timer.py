"""Textual's interval timers, mended: after a late tick they skipped one interval too many.

`textual.timer.Timer._run` (since Textual 1.0, "fix busy loop on lagging timer") catches up with
`count = int((now - start) / interval + 1)`, then waits for `start + (count + 1) * interval`: the
interval after the next one. The screen's update timer is one of these, paused between frames: after
the user has been idle, a key's first frame is painted at once and the frame after it 17-33 ms later
instead of within 17 ms. A filter change paints the list in one frame and the trial it moved to in the
next; that second frame came one frame late. `mend` puts in the same loop with the count that waits for
the next interval, when the installed Textual still has the off-by-one (its source says so), and
leaves a Textual that fixed it alone.
"""

from __future__ import annotations

import linecache

from textual import _time
from textual._time import sleep
from textual.timer import EventTargetGone, Timer

_BUGGY = "count = int((now - start) / _interval + 1)"
_mended = False


async def _run(self: Timer) -> None:
    """Textual 8.2.8's `Timer._run` with the catch-up count that waits for the next interval."""
    count = 0
    _repeat = self._repeat
    _interval = self._interval
    await self._active.wait()  # made here, in the loop's thread
    start = _time.get_time()

    while _repeat is None or count <= _repeat:
        next_timer = start + ((count + 1) * _interval)
        now = _time.get_time()
        if self._skip and next_timer < now:
            count = int((now - start) / _interval)  # the next tick: start + (count + 1) * interval > now
            continue
        now = _time.get_time()
        wait_time = max(0, next_timer - now)
        await sleep(wait_time)
        count += 1
        await self._active.wait()
        if self._reset:
            start = _time.get_time()
            count = 0
            self._reset = False
            continue
        try:
            await self._tick(next_timer=next_timer, count=count)
        except EventTargetGone:
            break


def mend() -> bool:
    """Use the mended loop for every timer started from now on (call it before the app's screens
    start theirs), if Textual's own still skips: its lines say so. Whether the mended loop is in use."""
    global _mended
    if not _mended:
        code = Timer._run.__code__
        lines = linecache.getlines(code.co_filename)[code.co_firstlineno : code.co_firstlineno + 40]
        if any(_BUGGY in line for line in lines):  # no lines (no source installed): left as it is
            Timer._run = _run  # type: ignore[method-assign]
        _mended = True
    return Timer._run is _run
