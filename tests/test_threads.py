"""Work handed to a thread of its own always runs (`threads.detached`): the caller's wait never ends in
a CancelledError, however the interpreter hands the GIL between the threads."""

from __future__ import annotations

import sys
import threading

import pytest

from tracetui.data.threads import detached, streamed


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
