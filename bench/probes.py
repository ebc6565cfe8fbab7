"""Child processes that measure one thing each and print one JSON line (`BENCH {...}`) for bench/run.py.

    python -m bench.probes first-screen KIND DATA   # headless: monotonic time of the first screen, memory
    python -m bench.probes memory DATA              # tracetui memory: first screen, 10 largest trials, search
    python -m bench.probes first-open DATA          # open_session on the (fresh) TRACETUI_CACHE_DIR
    python -m bench.probes settle DATA              # seconds of background work after the first screen

Times cross the process boundary as `time.monotonic()` (CLOCK_MONOTONIC, shared by all processes), so the
parent measures from before it spawned the child.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from .memory import PrivatePeak, snapshot

SIZE = (120, 40)
COMMON_NEEDLE = "error"


def report(**values) -> None:
    print("BENCH " + json.dumps(values), flush=True)


def first_screen(kind: str, data: Path) -> None:
    """Run the app headless (tracetui: through its command line); at the first frame where every watched
    widget has drawn text, report and quit."""
    from .apps import APPS, run_cli_headless
    from .frames import FrameWatcher

    result = {}

    def watch(app, widgets) -> None:
        watcher = FrameWatcher(widgets)

        def check(frame) -> None:
            if not result and watcher.ever_texted >= set(widgets):
                times = os.times()
                result.update(painted_at=time.monotonic(), cpu=times.user + times.system, memory=snapshot())
                app.exit()

        watcher.on_frame.append(check)
        watcher.install(app)

    if kind == "tracetui":
        run_cli_headless(data, SIZE, watch)
    else:
        app, widgets = APPS[kind](data)
        watch(app, widgets)
        app.run(headless=True, size=SIZE)
    if not result:
        raise SystemExit(f"{kind}: the app ended before its first screen")
    report(**result)


def triage_shown(app, watcher, widgets: tuple[type, ...] | None = None) -> bool:
    """Whether the triage screen is up and `widgets` (all watched ones) have drawn text. Raises
    RuntimeError, with the app's own error, once the app has ended: a probe that waited on a dead app
    would otherwise fail later with Textual's "No screens on stack", which says nothing of why."""
    from textual.app import ScreenStackError

    from tracetui.ui.screens.triage import TriageScreen

    try:
        screen = app.screen
    except ScreenStackError:
        screen = None
    if screen is None or app._exit_renderables or getattr(app, "_exception", None) is not None:
        error = getattr(app, "_exception", None)
        shown = "; ".join(str(r) for r in app._exit_renderables)[-500:]
        raise RuntimeError(f"the app ended before its first screen: {error!r} {shown}".strip())
    return isinstance(screen, TriageScreen) and watcher.ever_texted >= set(widgets or watcher.widgets)


async def settled(app, pilot, watcher, timeout: float = 600) -> float:
    """Wait for the first screen, then for the work the app does after it (the verifier index, then the
    findings index, on a first open); returns the seconds it went on after the first screen. Waiting for
    the workers alone is not enough: the verifier index starts on a timer after the first frame, so an
    idle moment before it would count as settled."""
    while not triage_shown(app, watcher):
        await pilot.pause(0.01)
    began = time.perf_counter()
    screen = app.screen
    deadline = time.monotonic() + timeout
    while (screen.findings.index is None and not screen.findings.failure) or any(w.is_running for w in screen.workers):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the indexes were not in after {timeout:.0f} s")
        await pilot.pause(0.05)
    ended = time.perf_counter()
    await pilot.pause()
    return ended - began


async def _settle(data: Path) -> dict:
    from .apps import tracetui_app
    from .frames import FrameWatcher

    app, widgets = tracetui_app(data)
    watcher = FrameWatcher(widgets)
    watcher.install(app)
    async with app.run_test(size=SIZE) as pilot:
        return {"seconds": await settled(app, pilot, watcher)}


async def _memory(data: Path) -> dict:
    from tracetui.data.search import search

    from .apps import tracetui_app
    from .frames import FrameWatcher

    app, widgets = tracetui_app(data)
    watcher = FrameWatcher(widgets)
    watcher.install(app)
    out = {}
    async with app.run_test(size=SIZE) as pilot:
        await settled(app, pilot, watcher)
        out["first_screen"] = snapshot()
        screen, session = app.screen, app.session
        conversation = type(screen.conversation)
        listed = screen.trial_list.order
        for position in session.trials.size[listed].argsort()[::-1][:10]:
            if listed[position] == screen.trial:  # already shown
                continue
            screen.trial_list.move_to(int(position))
            await watcher.next_paint(conversation, after=time.perf_counter())
        out["largest_10"] = snapshot()
        found = search(session, COMMON_NEEDLE)
        out["search"] = snapshot()
        out["search_bytes"] = found.bytes_scanned
    return out


def first_open(data: Path) -> None:
    """prepare + open_session of DATA, converting it (TRACETUI_CACHE_DIR is fresh), timed after imports;
    the sources resolved before pandas is kept out, as on the command line."""
    import tracetui.data.session  # noqa: F401 (imported before the clock starts)

    from .search_speed import cli_session

    with PrivatePeak() as private:
        began = time.perf_counter()
        session = cli_session(data)
        seconds = time.perf_counter() - began
    report(seconds=seconds, trials=len(session), memory=snapshot(), private_peak=private.mb)


def main(argv: list[str]) -> None:
    command, *args = argv
    if command == "first-screen":
        first_screen(args[0], Path(args[1]))
    elif command == "memory":
        report(**asyncio.run(_memory(Path(args[0]))))
    elif command == "first-open":
        first_open(Path(args[0]))
    elif command == "settle":
        report(**asyncio.run(_settle(Path(args[0]))))
    else:
        raise SystemExit(f"unknown probe {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
