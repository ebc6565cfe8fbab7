"""Giving freed memory back to the system after work that allocates from many threads.

Reading a hub dataset's metadata allocates on dozens of reader and decoder threads (response bodies,
parsed footers, decoded columns) and frees nearly all of it: glibc's allocator keeps those freed pages
in its heaps for reuse, ~100 MB at 400,000 rows, which the process then holds for its whole session.
`malloc_trim` returns them (and pyarrow's pool its own). Elsewhere than glibc this does what it can:
pyarrow's pool only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable

import pyarrow as pa


def give_back() -> None:
    """Return the freed pages of pyarrow's pool and of the C heap to the system."""
    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (macOS, musl)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
