"""The keyboard triage flow (issue 15): the sidebar's jumps and value filter, a palette command per
filter value, and F to the failed tests' tracebacks, with the key counts the issue asks for."""

from __future__ import annotations

from tracetui.data.facets import FilterState
from tracetui.trace.sanitize import sanitize
from tracetui.ui.app import StartOptions
from tracetui.ui.widgets.facet_list import RowKind

from .scenarios import loaded
from .ui_helpers import make_app, text_of, visible_lines, wait_loaded


def gpt5_mini(session) -> str:
    return next(m for m in session.facets.facets["model"].labels if "gpt-5-mini" in m)


async def test_sidebar_cursor_never_rests_on_a_section_title(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await loaded(pilot)  # every facet is in (the indexes add theirs), so the rows stay put
        facets = screen.facet_list
        await pilot.press("f")
        seen = set()
        for key in ["j"] * len(facets.rows) + ["k"] * len(facets.rows) + ["G", "g", "pagedown", "pageup"]:
            await pilot.press(key)
            assert facets.rows[facets.cursor].kind is not RowKind.TITLE
            seen.add(facets.cursor)
        titles = {i for i, r in enumerate(facets.rows) if r.kind is RowKind.TITLE}
        assert seen and not seen & titles and len(seen) == len(facets.rows) - len(titles)


async def test_sidebar_section_jumps(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await loaded(pilot)  # the failed-test facet is in
        facets = screen.facet_list
        await pilot.press("f")
        order = list(dict.fromkeys(r.facet for r in facets.rows))
        assert facets.rows[facets.cursor].facet == order[0]
        for name in order[1:]:
            await pilot.press("right_square_bracket")
            row = facets.rows[facets.cursor]
            assert row.facet == name and facets.rows[facets.cursor - 1].kind is RowKind.TITLE  # its first value
        await pilot.press("K")
        assert facets.rows[facets.cursor].facet == order[-2]
        await pilot.press("J", "j", "left_square_bracket")  # inside a section: back to its first value
        assert facets.rows[facets.cursor].facet == order[-1] and facets.rows[facets.cursor - 1].kind is RowKind.TITLE
        await pilot.press("left_square_bracket")
        assert facets.rows[facets.cursor].facet == order[-2]
        assert app.screen.conversation.current == 0  # [ and ] in the sidebar did not move the conversation


async def test_sidebar_values_filter_and_short_model_names(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        model = gpt5_mini(app.session)
        await pilot.press("f", "slash", *"MINI")
        shown = [line.strip() for line in visible_lines(screen.facet_list) if line.strip()]
        assert shown[0].startswith("Model") and "gpt-5-mini" in shown[1] and "openai/" not in shown[1]
        assert not any("claude" in line or "pass" in line for line in shown)  # only values that match
        await pilot.press("1", "backspace")  # digits type into the box, they set no label
        assert not screen.labels.records
        await pilot.press("enter")
        assert screen.state.selected == {"model": frozenset({model})}
        assert screen.facet_list.has_focus and len(screen.facet_list.rows) > 10  # every value shows again
        assert screen.facet_list.current_value() == ("model", screen.session.facets.facets["model"].code_of(model))
        await pilot.press("slash", *"zzz-no-such-value", "escape")
        assert screen.state.selected == {"model": frozenset({model})} and screen.facet_list.narrowed_to == ""


async def test_palette_command_per_filter_value(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        model = gpt5_mini(app.session)
        await pilot.press("ctrl+p", *"model: gpt-5-mini")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen
        assert screen.state.selected == {"model": frozenset({model})}
        assert "model=gpt-5-mini" in text_of(screen.query_one("#header"))
        assert text_of(screen.query_one("#status")).startswith("Filter model=gpt-5-mini")


def traceback_line(screen, failure: int = 0) -> str:
    """The log line the verifier cursor should be on for failed test `failure` of the shown trial."""
    panel = screen.verifier
    _, line = panel.failures()[failure]
    return sanitize(panel.text.split("\n")[line]).strip()


def cursor_text(panel) -> str:
    return panel.render_line(panel.cursor_line - int(panel.scroll_offset.y)).text


async def test_F_goes_to_each_failure_then_the_next_failing_trial(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        panel = screen.verifier
        await pilot.press("F")
        first = screen.trial
        assert panel.has_focus and panel.failures() and panel.failure == 0
        assert traceback_line(screen)[:30] in cursor_text(panel)
        assert text_of(screen.query_one("#status")).startswith(f"Failed test 1/{len(panel.failures())}")
        for index in range(1, len(panel.failures())):
            await pilot.press("F")
            assert screen.trial == first and panel.failure == index
            assert traceback_line(screen, index)[:30] in cursor_text(panel)
        position = screen.trial_list.cursor
        await pilot.press("F")  # past the last failure of this trial: the next trial with failures
        assert screen.trial != first and screen.trial_list.cursor > position and panel.failure == 0
        skipped = screen.trial_list.order[position + 1 : screen.trial_list.cursor]
        from tracetui.verifier import parse_verifier

        assert not any(parse_verifier(app.session.verifier_output(int(t))).failures for t in skipped)
        assert traceback_line(screen)[:30] in cursor_text(panel)
        # from another pane, F starts again at the current trial's first failure
        screen.conversation.focus()
        await pilot.press("F")
        assert panel.has_focus and panel.failure == 0
        # nothing listed, or no failure anywhere in the list: a word, no error
        screen.filters.toggle("outcome", "pass")
        await pilot.press("F")
        assert text_of(screen.query_one("#status")).startswith("No failed tests")
        screen.query_one("#name-filter").value = "no-such-task-anywhere"
        await pilot.pause()
        await pilot.press("F")
        assert text_of(screen.query_one("#status")).startswith("No trial listed")


async def test_three_keys_to_the_failure_once_filtered_eight_from_launch(sources):
    """Issue 15's measure: launch -> the traceback of the first failing test of a failing trial of
    one model. With the filter given: 1 key (F). From launch: ctrl+p, "mini", Enter, F = 7 keys."""
    probe = make_app(sources)
    async with probe.run_test(size=(80, 24)) as pilot:
        await wait_loaded(probe, pilot)
        model = gpt5_mini(probe.session)

    def check(screen) -> None:
        info = screen.session.info(screen.trial)
        assert info.model == model and info.outcome in ("fail", "partial")
        assert screen.verifier.has_focus and traceback_line(screen)[:30] in cursor_text(screen.verifier)

    filtered = make_app(sources, StartOptions(FilterState({"model": frozenset({model})})))
    async with filtered.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(filtered, pilot)
        keys = ["F"]
        await pilot.press(*keys)
        check(screen)
        assert len(keys) <= 3

    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("ctrl+p", *"mini")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("F")
        check(screen)
        assert len(["ctrl+p", *"mini", "enter", "F"]) <= 8
