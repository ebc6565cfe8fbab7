"""Keys typed while the loading screen shows are not lost: they go, in order, to the triage screen once it
has drawn (a search typed straight after `tracetui DATASET` searches); Esc and q still leave."""

from __future__ import annotations

import contextlib
import threading

from tracetui.data.session import open_session
from tracetui.ui.app import StartOptions, TraceApp
from tracetui.ui.screens.loading import LoadingScreen

from .ui_helpers import demo_sources, until, wait_loaded


@contextlib.asynccontextmanager
async def loading(demo_dir):
    """The app on the demo, its opening held (a slow hub, a first conversion) until the event is set,
    once the loading screen shows: (app, pilot, event)."""
    sources = demo_sources(demo_dir)
    go = threading.Event()

    def opening(report):
        go.wait(30)
        return open_session(sources, report)

    app = TraceApp(sources, StartOptions(opening=opening))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, LoadingScreen), "the loading screen")
            yield app, pilot, go
    finally:
        go.set()


async def test_keys_typed_while_loading_reach_the_triage_screen_in_order(demo_dir):
    async with loading(demo_dir) as (app, pilot, go):
        await pilot.press("j", "j", "slash", *"user", "enter")  # two trials down, then a find
        assert isinstance(app.screen, LoadingScreen)  # still opening: nothing lost meanwhile
        go.set()
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: screen.status_line.text.startswith("match 1/"), "the find typed ahead")
        assert screen.trial_list.cursor == 2


async def test_q_while_loading_still_leaves_unless_it_is_in_what_is_typed(demo_dir):
    async with loading(demo_dir) as (app, pilot, go):
        await pilot.press("s", *"sql", "enter")  # a query with a q in it: kept, not a way out
        assert isinstance(app.screen, LoadingScreen)
        go.set()
        screen = await wait_loaded(app, pilot)
        await until(pilot, lambda: screen.search.result is not None, "the search typed ahead")
        assert screen.search.result.pattern == "sql"
    async with loading(demo_dir) as (app, pilot, _go):
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 130


async def test_the_name_filter_never_has_the_keys_as_the_triage_screen_opens(demo_dir, monkeypatch):
    """Textual focuses a new screen's first focusable widget, the name filter's box, and `on_mount` moved
    the focus to the list only after: keys typed as the app started (`s`, a query) went into the box."""
    from textual.screen import Screen

    from tracetui.ui.screens.triage import TriageScreen

    focused = []
    set_focus = Screen.set_focus
    monkeypatch.setattr(
        Screen, "set_focus", lambda self, widget, *a, **k: (focused.append(widget), set_focus(self, widget, *a, **k))[1]
    )
    sources = demo_sources(demo_dir)
    app = TraceApp(sources, StartOptions(), session=open_session(sources))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert isinstance(screen, TriageScreen) and screen.focused is screen.trial_list
    assert focused and all(widget is screen.trial_list for widget in focused if widget is not None)
