"""Background workers on the triage screen: they report through messages, and one that raises is one line
in the message line while the app goes on."""

from __future__ import annotations

import threading

import pytest

from tracetui.data.errors import SourceError
from tracetui.ui.triage import verifiers

from .test_triage_actions import wait_idle
from .ui_helpers import make_app, text_of, wait_loaded


@pytest.mark.parametrize(("failure", "user_busy"), [("raises", False), ("raises", True), ("the hub went away", True)])
async def test_a_failing_verifier_index_is_one_line_that_gives_the_users_words_way(
    sources, monkeypatch, failure, user_busy
):
    go = threading.Event()

    def broken(session, progress, *more):
        progress(0.5)
        go.wait(10)
        if failure == "raises":
            raise RuntimeError("the disk\nis on fire")
        raise SourceError("the Hugging Face hub does not answer")

    monkeypatch.setattr(verifiers, "build_verifier_index", broken)
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.pause(0.4)  # the index starts 0.3 s after the first frame
        if user_busy:
            screen.status_line.working("Searching for 'x'… (Esc cancels)", 0.5)  # the user's search, running
            screen.status("Added label 'bad-task' (saved; U undoes)")
        go.set()
        await wait_idle(screen, pilot, "verifier-index")
        await pilot.pause()
        if user_busy:
            assert text_of(screen.query_one("#status")) == "Added label 'bad-task' (saved; U undoes)"
            assert screen.query_one("#work").display  # the search's bar stays
        else:
            failed = "Reading verifier logs failed: RuntimeError: the disk is on fire"
            assert text_of(screen.query_one("#status")) == failed
        assert app.is_running and screen.verifiers.index is None
        first = screen.trial
        await pilot.press("L")
        assert screen.trial != first  # the keys still work


async def test_a_failing_export_hides_its_progress_and_says_why(sources, tmp_path, monkeypatch):
    from tracetui.data import export

    def broken(session, trials, path, labels, notes, progress, **more):
        progress(0.25, 10)
        raise MemoryError()

    monkeypatch.setattr(export, "export_trials", broken)
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        screen.export.run(str(tmp_path / "out.jsonl"))
        await wait_idle(screen, pilot, "export")
        assert text_of(screen.query_one("#status")) == "Export failed: MemoryError"
        assert not screen.query_one("#work").display and app.is_running


async def test_the_message_line_gives_background_news_way():
    from textual.app import App

    from tracetui.ui.widgets.status_line import StatusLine

    class Line(App[None]):
        def compose(self):
            yield StatusLine()

    app = Line()
    async with app.run_test():
        line = app.query_one(StatusLine)
        line.news("Reading verifier logs… 10%")
        line.news("Reading verifier logs… 20%")  # news replaces news
        assert line.text == "Reading verifier logs… 20%"
        line.say("Filter outcome=fail on: 17 trials.")
        line.news("Reading verifier logs… 30%")  # but not what the user did
        assert line.text == "Filter outcome=fail on: 17 trials."
        line.working("Searching for 'x'… (Esc cancels)", 0.5)
        line.news("Reading verifier logs… 40%")  # nor the progress of work the user started
        assert line.text == "Searching for 'x'… (Esc cancels)"
        line.say("Added label 'bad-task' (saved; U undoes)", hold=True)
        line.working("Searching for 'x'… (Esc cancels)", 0.6)  # a held message outlasts progress
        assert line.text == "Added label 'bad-task' (saved; U undoes)"


async def test_news_of_the_opening_after_the_app_closed_its_screens_is_dropped(sources):
    """The opening worker may post its last progress once the app has closed (quit during the load):
    the app drops it instead of failing on a screen stack that is gone."""
    from tracetui.ui.work import WorkProgress

    app = make_app(sources)
    assert not app.screen_stack
    app._progress(WorkProgress("Reading the metadata", 0.5))
