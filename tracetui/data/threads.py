"""The one place tracetui starts threads of its own: daemon threads, for work that exit must not wait for.

Why daemon threads: the interpreter joins every other thread at exit (a `ThreadPoolExecutor`'s too), so a
read stalled on a hub that stopped answering would hold up quitting until its timeouts ran out (and a
warm-up nobody waits for would delay it, and so would a conversion's reading ahead, `streamed`, when the
user quits mid-conversion). Daemon threads are dropped at exit instead. Work that never waits on the
network uses `concurrent.futures` (search, the findings workers) or Textual workers (the UI); nothing else
calls `threading.Thread`.
"""

from __future__ import annotations

import collections
import contextlib
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, as_completed
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")
A = TypeVar("A")


class DaemonPool:
    """A `concurrent.futures`-style pool of up to `workers` daemon threads, started as work arrives.

    `shutdown` cancels the work not started and returns at once: a thread still waiting on the network
    finishes (or times out) on its own, and exit does not wait for it.
    """

    def __init__(self, workers: int, name: str) -> None:
        self.workers = max(1, workers)
        self.name = name
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self._threads = 0
        self._idle = 0
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, work: Callable[..., R], *args: Any) -> Future[R]:
        future: Future[R] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self.name}: the pool is shut down")
            self._queue.put((future, work, args))
            if self._idle == 0 and self._threads < self.workers:
                self._threads += 1
                threading.Thread(target=self._run, name=self.name, daemon=True).start()
            else:
                self._idle = max(0, self._idle - 1)
        return future

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, work, args = item
            _settle(future, work, *args)
            del item, future, work, args  # it waits for the next holding nothing of this one: the result
            with self._lock:  # is the future's alone, freed with it (for `heap.give_back` to return)
                self._idle += 1

    def shutdown(self) -> None:
        """Cancel what has not started; let the running work end by itself."""
        with self._lock:
            self._closed = True
            threads = self._threads
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                item[0].cancel()
        for _ in range(threads):
            self._queue.put(None)

    def __enter__(self) -> DaemonPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def parallel(
    work: Callable[[T], R], items: Sequence[T], workers: int = 8, done: Callable[[int], None] | None = None
) -> list[R]:
    """`[work(item) for item in items]` on up to `workers` daemon threads, raising the first error (the
    rest cancelled); `done(count)` after each item."""
    if len(items) <= 1 or workers <= 1:
        return [work(item) for item in items]
    with DaemonPool(min(workers, len(items)), "tracetui-parallel") as pool:
        futures = [pool.submit(work, item) for item in items]
        for count, future in enumerate(as_completed(futures), 1):
            future.result()  # the first error, at once
            if done is not None:
                done(count)
        return [future.result() for future in futures]


def pipelined(
    ask: Callable[[T], A],
    finish: Callable[[A], R],
    items: Sequence[T],
    weight: Callable[[A], int],
    budget: int,
    most: int,
    depth: int,
) -> Iterator[R]:
    """`finish(ask(item))` for each item, in order. `ask` starts an item's I/O and returns at once (a row
    group's reads asked of the hub): it runs here, on items ahead of the one taken while what was asked
    and not yet taken weighs less than `budget` and counts fewer than `most` items (and on `depth` of
    them at least); `finish` waits for that I/O and decodes it, on up to `depth` + 1 threads. A scan of
    many small row groups then streams at the hub's bandwidth, not a round trip per few groups, and the
    decoded ones held stay few."""
    asked: dict[int, A] = {}
    held = 0  # the weight asked for and not yet taken
    following = 0  # the next item to ask for

    def ask_from(position: int) -> None:
        nonlocal held, following
        while following < len(items) and (
            following <= position + depth or (held < budget and following < position + most)
        ):
            asked[following] = ask(items[following])
            held += weight(asked[following])
            following += 1

    with DaemonPool(depth + 1, "tracetui-ahead") as pool:
        running: collections.deque[Future[R]] = collections.deque()
        for position in range(len(items)):
            ask_from(position)
            while len(running) <= depth and position + len(running) < len(items):
                running.append(pool.submit(finish, asked[position + len(running)]))
            value = running.popleft().result()
            held -= weight(asked.pop(position))
            yield value


def streamed(items: Iterable[T], depth: int, name: str) -> Iterator[T]:
    """`items`, made on a daemon thread of their own up to `depth` ahead of the one taken (a conversion
    decodes the next batch while it writes this one). What making them raises is raised here, in order;
    when the caller stops taking them (an error, a cancel), the thread stops at its next item."""
    slots: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(slot: tuple[bool, Any]) -> bool:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                slots.put(slot, timeout=0.1)
                return True
        return False

    def make() -> None:
        source = iter(items)
        try:
            for item in source:
                if not put((True, item)):
                    return
        except BaseException as exc:  # raised where the items are taken
            put((False, exc))
        else:
            put((False, None))
        finally:
            close = getattr(source, "close", None)  # a generator's files, closed on the thread that read them
            if close is not None:
                close()

    threading.Thread(target=make, name=name, daemon=True).start()
    try:
        while True:
            more, value = slots.get()
            if not more:
                if value is not None:
                    raise value
                return
            yield value
    finally:
        stop.set()


def detached(work: Callable[[], T], name: str) -> Future[T]:
    """`work()` on a daemon thread of its own: the caller waits on the future as long as it wants. (A pool
    of one shut down at once cancelled the work whenever the caller drained the pool's queue before its
    new thread had taken the work from it.)"""
    future: Future[T] = Future()
    threading.Thread(target=_settle, args=(future, work), name=name, daemon=True).start()
    return future


def _settle(future: Future[R], work: Callable[..., R], *args: Any) -> None:
    """`future` given what `work(*args)` returns or raises, unless it was cancelled before it started."""
    if future.set_running_or_notify_cancel():
        try:
            future.set_result(work(*args))
        except BaseException as exc:  # handed to whoever waits on the future
            future.set_exception(exc)
