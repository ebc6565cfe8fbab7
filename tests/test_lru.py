"""The data layer's LRU drops the value used longest ago, not the one put first."""

from __future__ import annotations

import threading

import pytest

from tracetui.data.lru import LRU


def test_a_get_keeps_a_value_that_was_put_first():
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a use: "b" is now the one used longest ago
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2


def test_put_again_replaces_and_counts_as_a_use_discard_forgets():
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert cache.get("a") == 10 and cache.get("b") is None
    cache.discard("a")
    cache.discard("missing")
    assert "a" not in cache and len(cache) == 1
    with pytest.raises(ValueError):
        LRU(0)


def test_threads_never_leave_it_over_its_size():
    cache: LRU[int, int] = LRU(8)

    def work(offset: int) -> None:
        for key in range(offset, offset + 2000):
            cache.put(key % 50, key)
            cache.get((key + 7) % 50)

    threads = [threading.Thread(target=work, args=(n * 1000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 8


def test_clear_forgets_every_value():
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.clear()
    assert len(cache) == 0 and cache.get("a") is None


def test_swap_replaces_only_the_value_it_was_given_and_is_not_a_use():
    first, second, later = object(), object(), object()
    cache: LRU[str, object] = LRU(2)
    cache.put("a", first)
    cache.put("b", second)
    cache.swap("a", first, later)  # "a" stays the one used longest ago
    cache.swap("b", first, later)  # "b" holds another value: left alone
    cache.swap("gone", first, later)
    assert "gone" not in cache
    cache.put("c", object())
    assert "a" not in cache and cache.get("b") is second
