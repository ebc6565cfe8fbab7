"""Work handed to a thread of its own always runs (`threads.detached`): the caller's wait never ends in
a CancelledError, however the interpreter hands the GIL between the threads."""

from __future__ import annotations

import sys
import threading

import pytest

from tracetui.data.threads import detached, pipelined, streamed


def test_detached_work_always_runs_when_threads_contend_for_the_gil():
    slice_before, stop = sys.getswitchinterval(), threading.Event()

    def busy() -> None:
        while not stop.is_set():
            sum(range(1000))

    hogs = [threading.Thread(target=busy, daemon=True) for _ in range(3)]
    sys.setswitchinterval(1e-6)  # a thread just started loses the GIL at once: the race, made likely
    try:
        for hog in hogs:
            hog.start()
        futures = [detached(lambda n=n: n, "test-detached") for n in range(300)]
        assert [future.result(timeout=30) for future in futures] == list(range(300))
    finally:
        stop.set()
        sys.setswitchinterval(slice_before)
        for hog in hogs:
            hog.join()


def test_streamed_items_come_in_order_and_an_error_where_it_was_raised():
    def items():
        yield from range(5)
        raise ValueError("bad batch")

    taken = []
    with pytest.raises(ValueError, match="bad batch"):
        for item in streamed(items(), 2, "test-streamed"):
            taken.append(item)
    assert taken == [0, 1, 2, 3, 4]
    assert list(streamed(iter(range(100)), 1, "test-streamed")) == list(range(100))


def test_streamed_items_stop_being_made_once_the_caller_stops_taking_them():
    made = []
    ended = threading.Event()

    def items():
        try:
            for item in range(1000):
                made.append(item)
                yield item
        finally:
            ended.set()

    stream = streamed(items(), 2, "test-streamed")
    assert next(stream) == 0
    stream.close()  # a cancelled conversion
    assert ended.wait(5)  # the thread let go of the items (their files) rather than making all of them
    assert len(made) < 10


def test_pipelined_items_are_asked_for_by_weight_ahead_and_finished_in_order():
    """`ask` runs ahead of the item taken while what was asked and not taken weighs under the budget and
    counts under `most` (at least `depth` items ahead); `finish` gives the items in order; an error is
    raised at its item."""
    asked: list[int] = []
    ahead_when_taken = []

    def finish(item: int) -> int:
        if item == 7:
            raise ValueError("bad group")
        return item * 10

    taken = []
    with pytest.raises(ValueError, match="bad group"):
        for value in pipelined(lambda n: asked.append(n) or n, finish, range(20), lambda n: 100, 450, 100, 2):
            taken.append(value)
            ahead_when_taken.append(max(asked) - value // 10)
    assert taken == [0, 10, 20, 30, 40, 50, 60]
    assert ahead_when_taken == [4] * 7  # 5 asked and not taken: the fifth took the weight past 450
    heavy = list(pipelined(lambda n: n, lambda n: n, range(5), lambda n: 10_000, 450, 100, 1))
    assert heavy == list(range(5))  # items heavier than the budget still go, `depth` ahead
    asked.clear()
    light = [
        max(asked) - n
        for n in pipelined(lambda n: asked.append(n) or n, lambda n: n, range(50), lambda n: 1, 450, 6, 2)
    ]
    assert light == [5] * 44 + [5, 4, 3, 2, 1, 0]  # light items: `most` of them asked for, not 450


def test_pipelined_items_stop_being_asked_for_once_the_caller_stops_taking_them():
    asked: list[int] = []
    stream = pipelined(lambda n: asked.append(n) or n, lambda n: n, range(1000), lambda n: 1, 10, 100, 2)
    assert [next(stream) for _ in range(3)] == [0, 1, 2]
    stream.close()
    assert len(asked) <= 3 + 11


def test_a_pool_thread_waiting_for_work_holds_nothing_of_the_last():
    """What a pool's work returned is the future's alone: once the caller lets the future go it is freed,
    while the pool is still open (its thread held it until the next work came, past a `give_back`)."""
    import gc
    import time
    import weakref

    from tracetui.data.threads import DaemonPool

    class Result:
        pass

    with DaemonPool(1, "test-pool") as pool:
        future = pool.submit(Result)
        result = weakref.ref(future.result(timeout=5))
        waited = time.monotonic() + 5
        while not pool._idle and time.monotonic() < waited:  # the thread done with it, waiting for more
            time.sleep(0.01)
        held = gc.isenabled()
        gc.disable()  # freed by reference counting, not by a collection
        try:
            del future
            assert result() is None
        finally:
            if held:
                gc.enable()
