"""The app's first frame is the one the terminal gets: its first screen (the triage screen of a dataset
opened before the app runs, else the loading screen) is not composed inside Textual's batch of the
app's own start, whose renders are never written (the terminal then got the first screen from a second
render, after the work that waits for it)."""

from __future__ import annotations

import pytest
from textual.screen import Screen

from tracetui.data.session import open_session
from tracetui.ui.app import StartOptions, TraceApp
from tracetui.ui.screens.loading import LoadingScreen
from tracetui.ui.screens.triage import TriageScreen

from .ui_helpers import demo_sources, wait_loaded


async def batch_at_first_render(app: TraceApp, kind: type[Screen], monkeypatch) -> list[int]:
    """Textual's batch count when the first screen of `kind` first rendered (0: outside any batch)."""
    batches: list[int] = []
    refresh = Screen._compositor_refresh

    def recorded(screen: Screen) -> None:
        if isinstance(screen, kind) and not batches:
            batches.append(screen.app._batch_count)
        refresh(screen)

    monkeypatch.setattr(Screen, "_compositor_refresh", recorded)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.conversation.messages
    return batches


@pytest.mark.parametrize("opened", ["before the app runs", "in the app's worker"])
async def test_the_first_screen_renders_its_first_frame_outside_the_start_batch(opened, demo_dir, monkeypatch):
    sources = demo_sources(demo_dir)
    if opened == "before the app runs":  # as the command line opens a converted dataset: the triage screen
        app, first = TraceApp(sources, StartOptions(), session=open_session(sources)), TriageScreen
    else:  # the loading screen, while the demo converts (its cache is this test's own)
        app, first = TraceApp(sources, StartOptions()), LoadingScreen
    assert await batch_at_first_render(app, first, monkeypatch) == [0]  # inside the batch (1): never written
