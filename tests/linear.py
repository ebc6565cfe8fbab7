"""How a function's cost grows with its input: a check for regex backtracking blow-ups that does not
depend on how fast or busy the machine is (speed itself belongs in the benchmark)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any


def _cpu_seconds(fn: Callable[[str], Any], arg: str) -> float:
    """CPU seconds, so other processes on the machine do not make the test flaky (and no garbage
    collection of what earlier tests left, which lands on one run or the other)."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        fn(arg)
        return time.process_time() - start
    finally:
        gc.enable()


def growth(fn: Callable[[str], Any], unit: str, prefix: str = "", size: int = 250_000) -> float:
    """CPU time on ``prefix`` + ``unit`` repeated to 4 × ``size`` characters, over the same at ``size``:
    about 4 when the cost is linear, 16 when it is quadratic."""
    repeats = size // len(unit) + 1
    small, large = prefix + unit * repeats, prefix + unit * (4 * repeats)
    small_time = min(_cpu_seconds(fn, small) for _ in range(3))
    return min(_cpu_seconds(fn, large) for _ in range(3)) / max(small_time, 1e-4)
