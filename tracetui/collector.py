"""The garbage collector held off from the start of the app to its first frame.

Importing the app and building its first screen set off ~140 collections (~35 ms here, a tenth of the
way to the first screen), each scanning objects that all live on. The first frame freezes what lives
then out of later scans (`gc.freeze`: their pauses were most of the interaction p95) and collects
again. Only what `held_until_first_frame` turned off is turned back on: a process that had the
collector off keeps it off.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

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
    """What lives now frozen out of later collections, and collection back on if it was held."""
    global _held
    gc.freeze()
    if _held:
        _held = False
        gc.enable()
