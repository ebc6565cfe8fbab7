"""Driving the app in tests: a small deterministic demo dataset and a helper that waits for the load."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from tracetui.data.session import prepare
from tracetui.data.sources import ResolvedSource, SourceSpec
from tracetui.demo import write_demo
from tracetui.ui.app import StartOptions, TraceApp
from tracetui.ui.screens.triage import TriageScreen

DEMO_ROWS = 400


def demo_sources(folder: Path) -> list[ResolvedSource]:
    if not (folder / "data").exists():
        write_demo(folder, rows=DEMO_ROWS, seed=0)
    return list(prepare([SourceSpec(str(folder))]))


def make_app(sources: list[ResolvedSource], options: StartOptions | None = None) -> TraceApp:
    return TraceApp([_stable(s) for s in sources], options)


def _stable(source: ResolvedSource) -> ResolvedSource:
    """Header text must not depend on the temp path (snapshots compare it)."""
    from dataclasses import replace

    return replace(source, display=Path(source.dataset_id).name)


async def wait_loaded(app: TraceApp, pilot) -> TriageScreen:
    for _ in range(400):
        if isinstance(app.screen, TriageScreen):
            await pilot.pause()
            return app.screen
        await pilot.pause(0.02)
    raise AssertionError("the session did not load")


async def closed(pilot) -> None:
    """Wait until the app has exited (a worker may write first; a loaded machine takes its time)."""
    for _ in range(500):
        if pilot.app.return_code is not None:
            return
        await pilot.pause(0.02)


def text_of(widget) -> str:
    """The plain text a Static/InfoBar shows."""
    rendered = widget.render()
    return getattr(rendered, "plain", str(rendered))


def visible_lines(view) -> list[str]:
    """The text of the lines a Line-API widget currently shows."""
    return [view.render_line(y).text for y in range(view.scrollable_content_region.height)]


async def panes_followed(pilot, screen) -> None:
    """Wait until the panes show the trial the list selects: after a filter change they follow once the
    list's frame is painted (or, the list hidden, within `cursor_list.PAINT_WAIT`)."""
    for _ in range(100):
        if screen.panes.shown == screen.trial and not screen.panes.following:
            return
        await pilot.pause(0.01)
    raise AssertionError(f"the panes show {screen.panes.shown}, the list selects {screen.trial}")


async def burst(pilot, *keys: str) -> None:
    """Send `keys` as one burst, the way a fast typist or a paste of keys arrives: all queued before
    the app handles the first (Pilot's `press` waits for the app between keys), then wait for them."""
    from textual import events

    app = pilot.app
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app._driver.send_message(event)
    for _ in range(10):
        await pilot.pause(0.02)


@asynccontextmanager
async def opened(
    sources: list[ResolvedSource], size: tuple[int, int]
) -> AsyncIterator[tuple[TraceApp, object, TriageScreen]]:
    """The app on `sources` at `size`, loaded with its background indexes in: (app, pilot, screen)."""
    from .scenarios import loaded

    app = make_app(sources)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        yield pilot, app.screen


async def until(pilot, condition, what: str = "it", tries: int = 1000) -> None:
    """Wait (up to `tries` pauses of 20 ms) until `condition()` holds, then let the app settle."""
    for _ in range(tries):
        if condition():
            await pilot.pause()
            return
        await pilot.pause(0.02)
    raise AssertionError(f"timed out waiting for {what}")
