"""What the garbage collector alone would free: objects left in reference cycles."""

from __future__ import annotations

import gc
from collections.abc import Callable


def garbage_left_by(work: Callable[[], object]) -> int:
    """Objects in cycles that `work` left behind (what only a collection would free, not reference
    counting)."""
    gc.collect()
    gc.disable()
    try:
        work()
        return gc.collect()
    finally:
        gc.enable()
