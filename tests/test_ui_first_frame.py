"""The app's first frame is the one the terminal gets: its first screen (the triage screen of a dataset
opened before the app runs, else the loading screen) is not composed inside Textual's batch of the
app's own start, whose renders are never written (the terminal then got the first screen from a second
render, after the work that waits for it)."""

from __future__ import annotations

from textual.screen import Screen

from tracetui.data.session import open_session
from tracetui.ui.app import StartOptions, TraceApp
from tracetui.ui.screens.loading import LoadingScreen
from tracetui.ui.screens.triage import TriageScreen

from .ui_helpers import demo_sources, wait_loaded


async def test_the_triage_screen_renders_its_first_frame_outside_the_start_batch(demo_dir, monkeypatch):
    sources = demo_sources(demo_dir)
    app = TraceApp(sources, StartOptions(), session=open_session(sources))  # as the command line opens it
    batches: list[int] = []
    refresh = Screen._compositor_refresh

    def recorded(screen: Screen) -> None:
        if isinstance(screen, TriageScreen) and not batches:
            batches.append(screen.app._batch_count)
        refresh(screen)

    monkeypatch.setattr(Screen, "_compositor_refresh", recorded)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.conversation.messages
    assert batches == [0]  # inside the batch (1), its frame would have been thrown away


async def test_the_loading_screen_renders_its_first_frame_outside_the_start_batch(demo_dir, monkeypatch):
    app = TraceApp(demo_sources(demo_dir), StartOptions())  # opened in the app's worker
    batches: list[int] = []
    refresh = Screen._compositor_refresh

    def recorded(screen: Screen) -> None:
        if isinstance(screen, LoadingScreen) and not batches:
            batches.append(screen.app._batch_count)
        refresh(screen)

    monkeypatch.setattr(Screen, "_compositor_refresh", recorded)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(app, pilot)
    assert batches == [0]  # the demo converts meanwhile (its cache is this test's own)
