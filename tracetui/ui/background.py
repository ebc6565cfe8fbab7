"""Network work run from a thread worker without holding up the app's exit.

A read from a hub that stopped answering blocks until its timeout; run inside a Textual thread worker,
it would keep the app from exiting until then. `detached` runs the work in a daemon thread and waits
for it from the worker, returning at once (raising `WorkerCancelled`) when the worker is cancelled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from textual.worker import get_current_worker

T = TypeVar("T")


class WorkerCancelled(Exception):
    """The worker was cancelled (the user left) before the work finished."""


def detached(work: Callable[[], T], name: str = "tracetui-network") -> T:
    """`work()`'s result (or exception), from a daemon thread; raises WorkerCancelled once the current worker is
    cancelled. Pass the work a way to notice cancellation too, so it cleans up when it can."""
    worker = get_current_worker()
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as exc:  # handed to the waiting worker
            outcome["error"] = exc

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    while thread.is_alive():
        if worker.is_cancelled:
            raise WorkerCancelled()
        thread.join(0.1)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
