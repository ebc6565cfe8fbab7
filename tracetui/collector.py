"""When the garbage collector runs in an interactive app: never before the first frame, in full only
rarely while the app draws, and in full once it rests.

Importing the app and building its first screen set off ~140 collections (~35 ms here, a tenth of the
way to the first screen), each scanning objects that all live on. The first frame freezes what lives
then out of later scans (`gc.freeze`: their pauses were most of the interaction p95) and collects
again. Only what `held_until_first_frame` turned off is turned back on: a process that had the
collector off keeps it off.

After the first frame, a full collection scans every long-lived object that is not frozen: with the
lines a scroll keeps cached, 30-90 ms here, a dropped frame whenever one falls on a key. What the app
draws leaves no cycles for them to find (`ui.strip_cycles`, `data.lru`), but Python starts one whenever
the objects that lived on since the last one reach a quarter of those it kept, at most once every 10
collections of the middle generation. `FULL_EVERY` makes that 100, and the app collects in full when it
has drawn nothing for a moment (`collect_at_rest`): that is where the pauses go, where nobody waits on
them. The young generation is collected every `YOUNG_EVERY` allocations, not Python's 700: what a
frame or a trial's text allocates mostly dies by reference count before any collection looks at it,
and 30 facet toggles at 40,000 rows spent 61 ms collecting with 700, 14 ms with 10,000.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FULL_EVERY = 100
"""Collections of the middle generation between two automatic full collections, once the app is up
(Python's default is 10): a bound on the garbage kept while the app never rests."""

YOUNG_EVERY = 10_000
"""Allocations (of objects the collector tracks, net of those freed) between two collections of the
young generation once the app is up (Python's default: 700): a bound on the cycles left meanwhile, a few
MB at most."""

REST_SECONDS = 1.0
"""How long the app must have drawn nothing (no key, scroll or news shown) to count as at rest."""

_held = False


@contextmanager
def held_until_first_frame() -> Iterator[None]:
    """No collection in the block (the app's start and run) until the first frame calls `resume`;
    on again when the block ends, whatever came first (an error before any frame)."""
    global _held
    _held = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        resume()


def resume() -> None:
    """What lives now frozen out of later collections, young and full collections made rarer (`YOUNG_EVERY`,
    `FULL_EVERY`), and collection back on if it was held."""
    global _held
    gc.freeze()
    _, middle, _ = gc.get_threshold()
    gc.set_threshold(YOUNG_EVERY, middle, FULL_EVERY)
    if _held:
        _held = False
        gc.enable()


def collect_at_rest() -> bool:
    """A full collection, if the collector is on and a younger one has run since the last full one (so
    something may have been kept since); whether it ran. The app calls it once it has drawn nothing for
    `REST_SECONDS`."""
    if not gc.isenabled() or gc.get_count()[2] == 0:
        return False
    gc.collect()
    return True
