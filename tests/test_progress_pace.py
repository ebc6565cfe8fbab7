"""Progress is shown at a pace (`work.Paced`): at once after a rest, then at most every PACE seconds, and
always its latest (each showing repaints, on the thread the work it reports on also wants): on the
loading screen, and on the triage screen's message line, where the end of the work drops what was
still to be shown."""

from __future__ import annotations

import time

from textual.app import App
from textual.widgets import ProgressBar, Static

from tracetui.ui.screens.loading import LoadingScreen
from tracetui.ui.work import PACE, WorkDone, WorkProgress

from .ui_helpers import demo_sources, until, wait_loaded


class Host(App):
    def on_mount(self) -> None:
        self.push_screen(LoadingScreen("a dataset"))


def recorded(widget) -> list[str]:
    """What `widget` (a Static) is given to show from now on."""
    shown: list[str] = []
    update = widget.update
    widget.update = lambda content="", **kw: (shown.append(str(content)), update(content, **kw))[1]
    return shown


async def test_the_loading_screen_shows_its_progress_at_once_then_at_a_pace_and_always_its_latest():
    app = Host()
    async with app.run_test() as pilot:
        screen = app.screen
        assert isinstance(screen, LoadingScreen)
        bar = screen.query_one(ProgressBar)
        shown = recorded(screen.query_one("#loading-detail", Static))
        for n in range(1, 101):  # a hundred files read in a moment
            screen.progress(n / 100, f"file {n} of 100")
        assert shown == ["file 1 of 100"] and bar.progress == 0.01
        await pilot.pause(PACE * 1.5)
        assert shown == ["file 1 of 100", "file 100 of 100"] and bar.progress == 1.0  # the latest, not each
        await pilot.pause(PACE * 1.5)
        assert len(shown) == 2  # nothing new: nothing shown again
        screen.progress(1.0, "indexing")
        assert shown[2:] == ["indexing"]  # at once, after a rest


async def test_the_message_line_shows_work_at_a_pace_and_nothing_of_it_once_it_ended(demo_dir):
    from tracetui.ui.app import StartOptions, TraceApp

    app = TraceApp(demo_sources(demo_dir), StartOptions())
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        bar, line = screen.query_one("#work", ProgressBar), screen.status_line
        said: list[str] = []
        say = line.say
        line.say = lambda message, *args, **kw: (said.append(message), say(message, *args, **kw))[1]
        began = time.monotonic()
        for n in range(1, 51):
            screen.post_message(WorkProgress(f"Searching… {n}", n / 50))
        await until(pilot, lambda: said and said[-1] == "Searching… 50", "the latest progress")
        took = time.monotonic() - began
        assert said[0] == "Searching… 1" and bar.progress == 1.0  # the first at once, then the latest
        assert len(said) <= 2 + took / PACE  # at a pace (however slow this machine), not each of the 50
        for n in range(1, 11):  # more progress, then the work ends before its pace is over
            screen.post_message(WorkProgress(f"Exporting… {n}", n / 10))
        screen.post_message(WorkDone("Exported 10 rows."))
        await until(pilot, lambda: said[-1] == "Exported 10 rows.", "the end of the work")
        await pilot.pause(PACE * 1.5)
        assert line.text == "Exported 10 rows." and not bar.display  # no stale progress over the end
