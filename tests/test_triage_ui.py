"""The triage screen driven with real key presses: filters, trial and message navigation, help, prompts."""

from __future__ import annotations

from tracetui.data.facets import FilterState
from tracetui.render.block import GotoLogLine
from tracetui.ui import keymap
from tracetui.ui.app import StartOptions
from tracetui.ui.screens.help import HelpScreen
from tracetui.ui.widgets.facet_list import FacetList

from .ui_helpers import make_app, text_of, visible_lines, wait_loaded


async def test_starts_on_the_first_trial_with_its_conversation(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        trials = screen.trial_list
        assert trials.cursor == 0 and screen.trial == trials.current_trial
        header = text_of(screen.query_one("#header"))
        total = len(app.session)
        assert f"{total}/{total} trials" in header and "rows" in header and "pass" in header
        lines = "\n".join(visible_lines(screen.conversation))
        assert "episode 0" in lines and "user" in lines
        assert "message 1/" in text_of(screen.query_one("#position"))


async def test_facet_toggle_narrows_the_list_and_updates_counts(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        facets = screen.query_one(FacetList)
        await pilot.press("f")
        assert facets.has_focus
        # move the cursor down to the "fail" value of the outcome facet and toggle it
        fail_row = next(i for i, r in enumerate(facets.rows) if r.facet == "outcome" and r.code == 2)
        assert facets.cursor == 1  # on the first value, not the section title
        for _ in range(fail_row - facets.cursor):
            await pilot.press("j")
        expected = int(facets.result.counts["outcome"][2])
        await pilot.press("enter")
        assert screen.trial_list.row_count == expected > 0
        assert screen.state.selected == {"outcome": frozenset({"fail"})}
        assert all(app.session.info(int(t)).outcome == "fail" for t in screen.trial_list.order)
        assert f"{expected}/{len(app.session)} trials" in text_of(screen.query_one("#header"))
        # the model facet's counts now count failed trials only
        assert int(facets.result.counts["model"].sum()) == expected
        await pilot.press("x")
        assert screen.trial_list.row_count == len(app.session) and screen.state.selected == {}


async def test_name_filter_box(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        screen.query_one("#name-filter").focus()
        await pilot.press(*"regex")
        await pilot.pause()
        tasks = {app.session.info(int(t)).task for t in screen.trial_list.order}
        assert tasks and all("regex" in t for t in tasks)


async def test_H_and_L_move_across_trials_from_anywhere(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        first = screen.trial
        screen.conversation.focus()
        await pilot.press("L")
        second = screen.trial
        assert second != first and screen.trial_list.cursor == 1
        assert app.session.info(second).trial_name in text_of(screen.query_one("#position"))
        await pilot.press("H")
        assert screen.trial == first


async def test_message_navigation_and_episode_jump(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        conv = screen.conversation
        await pilot.press("l", "l")
        assert conv.current == 2 and "message 3/" in text_of(screen.query_one("#position"))
        await pilot.press("h")
        assert conv.current == 1
        episodes = len(conv.history.episodes)
        if episodes > 2:
            await pilot.press("e", "2", "enter")
            assert conv.current_message().episode == 2
            assert f"episode 2 (0–{episodes - 1})" in text_of(screen.query_one("#position"))


async def test_find_in_conversation(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("slash", *"terminal", "enter")
        status = text_of(screen.query_one("#status"))
        assert status.startswith("match 1/")
        total = int(status.split("/")[1].split()[0])
        await pilot.press("n")
        assert text_of(screen.query_one("#status")).startswith(f"match {min(2, total)}/{total}")
        await pilot.press("N")
        assert text_of(screen.query_one("#status")).startswith(f"match 1/{total}")


async def test_verifier_toggle_zoom_and_quit_keys(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.verifier.display
        await pilot.press("v")
        assert not screen.verifier.display
        await pilot.press("v")
        screen.conversation.focus()
        await pilot.press("z")
        assert screen.maximized is screen.conversation
        await pilot.press("z")
        assert screen.maximized is None
        await pilot.press("ctrl+c")
        assert app.is_running and "q quits" in text_of(screen.query_one("#status"))
        await pilot.press("q")
    assert not app.is_running


async def test_help_lists_every_binding(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_loaded(app, pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        from rich.console import Console

        from tracetui.ui.screens.help import bindings_table

        console = Console(width=100, record=True)
        console.print(bindings_table({}))
        text = console.export_text()
        shown = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "Next trial" in shown and "Everywhere" in shown
        for bindings in keymap.SECTIONS.values():
            for binding in bindings:
                assert binding.description in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_command_line_filters_and_trial(sources):
    probe = make_app(sources)
    async with probe.run_test(size=(120, 40)) as pilot:
        await wait_loaded(probe, pilot)
        session = probe.session
        target = next(t for t in range(len(session)) if session.info(t).outcome == "fail")
        name, model = session.info(target).trial_name, session.info(target).model
    options = StartOptions(FilterState({"model": frozenset({model}), "result": frozenset({"0.0"})}), trial=name)
    app = make_app(sources, options)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        infos = [app.session.info(int(t)) for t in screen.trial_list.order]
        assert infos and all(i.model == model and i.result == "0.0" for i in infos)
        assert app.session.info(screen.trial).trial_name == name


async def test_small_terminal_and_resize(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.trial_list.size.height >= 3 and screen.conversation.size.height >= 3
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        assert screen.conversation.size.width > 100
        assert any(line.strip() for line in visible_lines(screen.conversation))


async def test_an_already_converted_dataset_opens_without_the_loading_screen(sources):
    from tracetui.data.session import all_cached, open_session
    from tracetui.ui.app import TraceApp

    session = open_session(sources)
    assert all_cached(sources)
    app = TraceApp(sources, session=session)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.session is session and screen.trial is not None
        await pilot.press("s", *"assert", "enter")
        await pilot.pause(0.5)
        assert app.is_running


async def test_enter_on_a_failed_test_jumps_to_its_traceback(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        panel = screen.verifier
        for _ in range(len(app.session)):
            if panel.report.failures:
                break
            await pilot.press("L")
        failure = panel.report.failures[0]
        panel.focus()
        row = next(i for i, b in enumerate(panel.blocks) if b.action == GotoLogLine(failure.line))
        for _ in range(panel.line_of_block(row)):
            await pilot.press("j")
        await pilot.press("enter")
        assert panel.cursor_line > panel.line_of_block(row)
        from tracetui.trace.sanitize import sanitize

        shown = panel.render_line(panel.cursor_line - int(panel.scroll_offset.y)).text
        expected = sanitize(panel.text.split("\n")[failure.line]).strip()[:30]
        assert expected and expected in shown


async def test_u_cycles_through_the_sub_agent_conversations_and_back(sources):
    from tracetui.data.session import open_session

    session = open_session(sources)
    trial = next(t for t in range(len(session)) if session.history(t).subagents)
    subagents = session.history(trial).subagents
    app = make_app(sources, StartOptions(trial=session.info(trial).trial_name))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        assert screen.trial == trial and screen.conversation.title == "main"
        for sub in subagents:
            await pilot.press("u")
            assert screen.conversation.title == sub.trace_source
            assert screen.conversation.messages == sub.messages
            assert f"[sub-agent: {sub.trace_source}]" in text_of(screen.query_one("#position"))
        await pilot.press("u")
        assert screen.conversation.title == "main" and screen.conversation.messages == session.history(trial).messages
        await pilot.press("u", "L", "H")  # another trial and back: the cycle starts again at the first
        assert screen.trial == trial and screen.conversation.title == "main"
        await pilot.press("u")
        assert screen.conversation.title == subagents[0].trace_source
