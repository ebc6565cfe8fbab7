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


def list_rows(screen) -> list[str]:
    """The trial rows the list shows (non-blank lines)."""
    return [line for line in visible_lines(screen.trial_list) if line.strip()]


async def test_80x24_shows_eight_trials_with_full_task_names_and_short_models(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        rows = list_rows(screen)
        assert len(rows) >= 8
        session = app.session
        for position, line in enumerate(rows):
            info = session.info(int(screen.trial_list.order[position]))
            assert info.task[:24] in line  # task names up to 24 characters are never cut
            provider, _, name = info.model.rpartition("/")
            assert name[:8] in line and (not provider or provider not in line)  # no provider prefix
        header = text_of(screen.query_one("#list-header"))
        assert "date" not in header  # the date gives way before the task


async def test_header_keeps_filters_and_pass_rate_when_narrow(sources):
    from tracetui.data.facets import FilterState

    probe = make_app(sources)
    async with probe.run_test(size=(120, 40)) as pilot:
        await wait_loaded(probe, pilot)
        model = next(m for m in probe.session.facets.facets["model"].labels if m.count("/") == 1)
    options = StartOptions(FilterState({"model": frozenset({model}), "outcome": frozenset({"fail", "error"})}))
    for width in (80, 100, 120):
        app = make_app(sources, options)
        async with app.run_test(size=(width, 24)) as pilot:
            screen = await wait_loaded(app, pilot)
            header = text_of(screen.query_one("#header"))
            assert "pass " in header and "%" in header, header
            assert f"model={model.split('/')[-1]}" in header and "outcome=error|fail" in header, header
            assert len(header) <= width


async def test_a_long_message_wraps_onto_the_next_lines_and_only_a_very_long_one_is_cut(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        full = "matches: 1,234 trials for 'AssertionError' (0.42 GB, 3.1 GB/s); n / N move between them, Esc clears"
        screen.status(full)
        await pilot.pause()
        bar = screen.query_one("#status")
        lines = text_of(bar).split("\n")
        assert len(lines) == 2 and bar.outer_size.height == 2
        assert " ".join(line.strip() for line in lines) == full  # every word, broken between words
        very_long = " ".join([full] * 4)
        screen.status(very_long)
        await pilot.pause()
        lines = text_of(bar).split("\n")
        assert len(lines) == 3 and lines[-1].endswith("…")
        screen.status("short")
        await pilot.pause()
        assert bar.outer_size.height == 1


def check_header_matches_rows(screen) -> None:
    """Every title of the list header stands over its own cells: tasks under "task", models under
    "model", dates under "date", label names under "labels"."""
    header = text_of(screen.query_one("#list-header"))
    session = screen.session
    for position, line in enumerate(list_rows(screen)):
        info = session.info(int(screen.trial_list.order[position]))
        expected = {"task": info.task, "model": info.model.rsplit("/", 1)[-1], "date": info.date[:4]}
        labels = screen.labels.records.get(info.id)
        if labels is not None and labels.labels:
            expected["labels"] = sorted(labels.labels)[0]
        for title, value in expected.items():
            if f" {title} " in f"{header} " or header.startswith(title):
                column = header.index(title) if header.startswith(title) else header.index(f" {title} ") + 1
                if title == "task":
                    column = header.index("task")
                assert line[column:].startswith(value[:3]), (title, header, line)


async def test_list_header_matches_rows_at_every_width_and_after_a_stats_cell(sources):
    """The header is drawn from the list's columns at the list's own width: it agrees with the rows
    whatever the width, with or without a scrollbar, and after the stats screen set a filter."""
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        from .scenarios import loaded

        await loaded(pilot)
        screen.conversation.focus()
        await pilot.press("z", "1", "z")  # a label, so a labels column, while the list is hidden
        await pilot.pause()
        check_header_matches_rows(screen)
        for width in range(84, 141, 4):
            await pilot.resize_terminal(width, 30)
            await pilot.pause()
            check_header_matches_rows(screen)
        screen.state = screen.state.toggled("label", "reward-hack")
        await pilot.press("S")
        await pilot.pause(0.2)
        await pilot.press("enter")  # the labelled trial's model x task cell becomes a filter
        await pilot.pause()
        assert app.screen is screen and "task" in screen.state.selected
        check_header_matches_rows(screen)


async def test_find_from_the_zoomed_verifier_zooms_the_conversation(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        screen.verifier.focus()
        await pilot.press("z", "slash", *"terminal", "enter")
        await pilot.pause()
        assert screen.maximized is screen.conversation and screen.conversation.has_focus
        assert screen.conversation.matches


async def test_the_pane_in_use_gets_the_room_on_a_short_terminal(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        trials, conversation, verifier = screen.trial_list, screen.conversation, screen.verifier
        assert trials.size.height >= 8  # choosing a trial
        await pilot.press("enter")  # reading it
        await pilot.pause()
        assert trials.size.height == 3 and conversation.size.height >= 9
        await pilot.press("slash")  # a prompt keeps the arrangement of the pane it serves
        await pilot.pause()
        assert trials.size.height == 3
        await pilot.press("escape", "F")  # the verifier at a failure
        await pilot.pause()
        assert verifier.has_focus and verifier.size.height >= 10 and trials.size.height == 3
        await pilot.press("f")  # back to choosing
        await pilot.pause()
        assert trials.size.height >= 8
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:  # a tall terminal keeps its arrangement
        screen = await wait_loaded(app, pilot)
        heights = screen.trial_list.size.height
        await pilot.press("enter")
        await pilot.pause()
        assert screen.trial_list.size.height == heights >= 8


async def test_plus_and_minus_resize_the_verifier_by_whole_steps(sources):
    from tracetui.ui.widgets.verifier_panel import RESIZE_STEP

    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        panel = screen.verifier
        panel.focus()
        await pilot.pause()
        before = panel.outer_size.height
        await pilot.press("plus")
        await pilot.pause()
        assert panel.outer_size.height == before + RESIZE_STEP
        await pilot.press("minus", "minus")
        await pilot.pause()
        assert panel.outer_size.height == before - RESIZE_STEP
        assert screen.conversation.outer_size.height >= 5  # the conversation keeps its lines
