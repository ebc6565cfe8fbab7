"""Work handed to a thread of its own always runs (`threads.detached`): the caller's wait never ends in
a CancelledError, however the interpreter hands the GIL between the threads."""

from __future__ import annotations

import sys
import threading

from tracetui.data.threads import detached


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
