"""The triage screen's layout: zoom, small terminals, the trial list's columns and the header."""

from __future__ import annotations

from tracetui.ui.app import StartOptions

from .ui_helpers import make_app, text_of, visible_lines, wait_loaded


def failing_trial(session) -> str:
    """A failed trial whose verifier log has failed tests (with tracebacks)."""
    from tracetui.verifier import parse_verifier

    for trial in range(len(session)):
        if session.info(trial).outcome == "fail" and parse_verifier(session.verifier_output(trial)).failures:
            return session.info(trial).trial_name
    raise AssertionError("the demo has a failed trial with tracebacks")


def cursor_text(panel) -> str:
    return panel.render_line(panel.cursor_line - int(panel.scroll_offset.y)).text


async def test_zoomed_verifier_fills_the_screen_and_keeps_its_place(sources):
    from tracetui.data.session import open_session

    app = make_app(sources, StartOptions(trial=failing_trial(open_session(sources))))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        panel = screen.verifier
        panel.focus()
        await pilot.press(*["j"] * 12)
        before = cursor_text(panel).strip()
        assert before and int(panel.scroll_offset.y) > 0
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is panel and panel.size.height >= 24 - 5  # not a strip in the hatching
        assert cursor_text(panel).strip()[:20] == before[:20]  # same text under the cursor
        await pilot.press("z")
        await pilot.pause()
        assert screen.maximized is None
        top = int(panel.scroll_offset.y)
        assert top <= panel.cursor_line < top + panel.scrollable_content_region.height
        assert cursor_text(panel).strip()[:20] == before[:20]


async def test_find_while_zoomed_shows_the_prompt(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        screen.conversation.focus()
        await pilot.press("z", "slash")
        await pilot.pause()
        assert screen.maximized is screen.conversation
        prompt = screen.prompt
        assert prompt.has_focus and prompt.region.height == 1 and prompt.region.width > 40
        await pilot.press(*"terminal", "enter")
        await pilot.pause()
        assert text_of(screen.query_one("#status")).startswith("match 1/")
        assert screen.query_one("#status").region.height == 1  # the answer shows in the zoomed view too
