"""A small least-recently-used cache: the data layer's in-memory caches (a remote dataset's row groups, a
job's trial texts) and the line views' (their styled texts and drawn lines). Thread-safe: a worker fills it
while the UI thread reads it. What it drops is freed at once: Textual's `LRUCache` keeps its entries in a
ring, which each `clear` (a new trial, a re-wrap) left as a reference cycle with every line in it, for a
full garbage collection to find."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most `size` values; putting one more drops the one used longest ago (a `get` is a use)."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an LRU holds at least one value")
        self.size = size
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.size:
                self._values.popitem(last=False)

    def swap(self, key: K, old: V, new: V) -> None:
        """`new` in place of `old` if `key` still holds `old` (not a use: its place in the order stays)."""
        with self._lock:
            if self._values.get(key) is old:
                self._values[key] = new

    def clear(self) -> None:
        with self._lock:
            self._values.clear()

    def discard(self, key: K) -> None:
        with self._lock:
            self._values.pop(key, None)

    def __contains__(self, key: object) -> bool:
        """Whether `key` is held (not a use)."""
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)
