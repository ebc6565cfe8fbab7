"""Network work run from a thread worker without holding up the app's exit.

A read from a hub that stopped answering blocks until its timeout; run inside a Textual thread worker,
it would keep the app from exiting until then. `detached` runs the work on a daemon thread
(`data.threads`, which says why) and waits for it from the worker, returning at once (raising `WorkerCancelled`)
when the worker is cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import TimeoutError as WaitedLong
from typing import TypeVar

from textual.worker import get_current_worker

from ..data import threads

T = TypeVar("T")


class WorkerCancelled(Exception):
    """The worker was cancelled (the user left) before the work finished."""


def detached(work: Callable[[], T], name: str = "tracetui-network") -> T:
    """`work()`'s result (or exception), from a daemon thread; raises WorkerCancelled once the current worker is
    cancelled. Pass the work a way to notice cancellation too, so it cleans up when it can."""
    worker = get_current_worker()
    future = threads.detached(work, name)
    while True:
        if worker.is_cancelled:
            raise WorkerCancelled()
        try:
            return future.result(timeout=0.1)
        except WaitedLong:
            continue
