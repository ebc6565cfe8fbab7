"""The rough edges of a first session at 80x24 and 120x40 (issue 23): every key does what it says or
says why not, nothing is cut so that rows cannot be told apart, and no message outlives its state."""

from __future__ import annotations

from itertools import pairwise

import pytest
from textual.widgets._footer import FooterKey

from tracetui.data.facets import FilterState

from .scenarios import loaded
from .ui_helpers import closed, make_app, opened, panes_followed, text_of

SIZES = [(80, 24), (120, 40)]


def footer_keys(app, width: int) -> list[str]:
    """The footer's keys that show in full on a screen `width` wide."""
    return [f"{key.key_display} {key.description}" for key in app.screen.query(FooterKey) if key.region.right <= width]


def status(screen) -> str:
    """The message line's text, its wrapped lines joined again."""
    return " ".join(line.strip() for line in text_of(screen.query_one("#status")).split("\n"))


@pytest.mark.parametrize("size", SIZES)
async def test_q_shows_and_quits_from_every_pane_even_with_nothing_listed(sources, size):
    for pane in ("trial_list", "facet_list", "conversation", "verifier"):
        app = make_app(sources)
        async with app.run_test(size=size) as pilot:
            await loaded(pilot)
            screen = app.screen
            screen.state = FilterState({"task": frozenset({"no-such-task"})})
            await pilot.pause()
            assert not screen.trial_list.row_count
            getattr(screen, pane).focus()
            await pilot.pause()
            assert "q Quit" in footer_keys(app, size[0]), pane
            await pilot.press("q")
            await closed(pilot)
        assert app.return_code == 0, pane


@pytest.mark.parametrize("size", SIZES)
async def test_the_name_filter_has_a_key_and_enter_or_escape_leave_it(sources, size):
    async with opened(sources, size) as (pilot, screen):
        assert "&" in screen.name_filter.placeholder
        await pilot.press("ampersand", *"XBKX", "enter")
        assert screen.focused is screen.trial_list and "Name filter 'XBKX': 0 trials" in status(screen)
        await pilot.press("u")
        assert screen.state.text == "XBKX" and status(screen) == "No trial listed (x clears the filters)."
        await pilot.press("ampersand", "backspace", "backspace", "backspace", "backspace", "escape", "u")
        assert screen.state.text == "" and screen.focused is screen.trial_list


@pytest.mark.parametrize("size", SIZES)
async def test_a_message_goes_once_the_state_it_describes_is_gone(sources, size):
    async with opened(sources, size) as (pilot, screen):
        app = pilot.app
        screen.state = FilterState({"task": frozenset({"no-such-task"})})
        await pilot.pause()
        assert status(screen) == "No trials match these filters (x clears them)."
        # nor do the panes speak of the trial shown before: no position, no verdict
        assert text_of(screen.position_line) == "" and screen.verifier.blocks == []
        assert screen.verifier.failures() == [] and screen.verifier.cursor_line == 0  # nothing of it kept
        screen.state = FilterState()  # trials are back (as when another screen sets the filters)
        await panes_followed(pilot, screen)
        assert status(screen) == ""
        assert screen.trial is not None and screen.trial_list.current_trial is not None
        assert text_of(screen.position_line) and screen.verifier.blocks
        screen.state = FilterState({"outcome": frozenset({"fail"})})
        await pilot.press("x")
        assert status(screen) == "Filters cleared."
        task = app.session.info(screen.trial).task
        screen.filters.picked(FilterState({"task": frozenset({task})}))  # head-to-head `f`
        await pilot.pause()
        assert status(screen).startswith(f"Filter task={task} on: ")
        await pilot.press("x", "F")
        assert status(screen).startswith("Failed test 1/")
        await pilot.press("L")  # another trial: the failed test named is not on screen any more
        assert not status(screen).startswith("Failed test 1/")


@pytest.mark.parametrize("size", SIZES)
async def test_plus_and_minus_resize_the_focused_verifier_or_say_why_not(sources, size):
    async with opened(sources, size) as (pilot, screen):
        panel = screen.verifier
        panel.focus()
        await pilot.pause()
        before = panel.outer_size.height
        await pilot.press("minus")
        await pilot.pause()
        assert panel.outer_size.height < before and status(screen).startswith("Verifier: ")
        await pilot.press("plus")
        await pilot.pause()
        assert panel.outer_size.height == before
        for _ in range(12):
            await pilot.press("plus")
        await pilot.pause()
        assert "as tall as it gets" in status(screen)
        assert screen.conversation.outer_size.height >= 5
        for _ in range(20):
            await pilot.press("minus")
        await pilot.pause()
        assert panel.outer_size.height == 3 and "as short as it gets" in status(screen)
        await pilot.press("v")  # hidden: what the message said of its height no longer holds
        assert status(screen) == ""


@pytest.mark.parametrize("size", SIZES)
async def test_a_short_list_gives_its_rows_to_the_conversation(sources, size):
    async with opened(sources, size) as (pilot, screen):
        app = pilot.app
        tall = screen.conversation.outer_size.height
        task = app.session.info(screen.trial).task
        screen.state = FilterState({"task": frozenset({task})})
        await pilot.pause()
        listed = screen.trial_list.row_count
        assert listed < 8
        assert screen.query_one("#list-pane").outer_size.height == listed + 1
        assert screen.conversation.outer_size.height > tall


@pytest.mark.parametrize("size", SIZES)
async def test_n_after_G_goes_to_the_next_match_from_where_the_view_is(sources, size):
    async with opened(sources, size) as (pilot, screen):
        conversation = screen.conversation
        await pilot.press("enter", "slash", "e", "enter")
        total = len(conversation.matches)
        assert total > 3 and status(screen).startswith(f"match 1/{total}")
        await pilot.press("G")
        top = int(conversation.scroll_offset.y)
        lines = [conversation._match_line(m) for m in conversation.matches]
        after = [i for i, line in enumerate(lines) if line >= top]
        await pilot.press("n")
        expected = after[0] + 1 if after else 1
        assert expected > 2 and status(screen).startswith(f"match {expected}/{total}")
        await pilot.press("g", "N")  # from the top, N goes to the last match that shows there
        bottom = conversation.scrollable_content_region.height
        shown = [i for i, line in enumerate(lines) if line < bottom]
        assert status(screen).startswith(f"match {shown[-1] + 1}/{total}")


async def palette_hits(app, pilot, query: str) -> list[str]:
    """The palette's entries for `query`, first first, once every provider has answered."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p", *query)
    for _ in range(200):
        if isinstance(app.screen, CommandPalette) and app.screen.query_one(CommandList).option_count:
            break
        await pilot.pause(0.02)
    await pilot.pause(0.4)
    commands = app.screen.query_one(CommandList)
    hits = [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]
    await pilot.press("escape")
    return hits


@pytest.mark.parametrize("size", SIZES)
async def test_the_palette_means_the_same_wherever_focus_is_and_offers_only_what_lists_trials(sources, size):
    async with opened(sources, size) as (pilot, screen):
        app = pilot.app
        from_list = await palette_hits(app, pilot, "fail")
        await pilot.press("F")
        assert screen.focused is screen.verifier
        from_verifier = await palette_hits(app, pilot, "fail")
        assert from_list[0].startswith("outcome: fail") and from_verifier[0] == from_list[0]
        # values that list no trial are not offered; counts are said in the singular when 1
        screen.state = FilterState({"model": frozenset({next(iter(screen.trial_list.model_names))})})
        await pilot.pause()
        hits = await palette_hits(app, pilot, "task:")
        assert hits and not any("\n0 trials" in hit for hit in hits)
        assert not any("1 trials" in hit for hit in hits)
        # letters scattered over a value do not match it: `mini` is not in `summarization-1-questions`
        values = [hit for hit in await palette_hits(app, pilot, "mini") if "Enter filters to it" in hit]
        assert values and all("mini" in hit.split("\n")[0].lower() for hit in values)


@pytest.mark.parametrize("size", SIZES)
async def test_the_last_episode_does_not_read_as_one_before_the_last(sources, size):
    """Episodes are numbered from 0 (as in the data and the dividers), messages from 1: the position
    line gives the episode with its range, never as `2/3` beside `message 6/6`."""
    async with opened(sources, size) as (pilot, screen):
        await pilot.press("enter", "G")
        conversation = screen.conversation
        last = len(conversation.history.episodes) - 1
        await pilot.pause()
        position = text_of(screen.query_one("#position"))
        assert f"{conversation.current_message().episode} (0–{last})" in position
        assert f"{last}/{last + 1}" not in position


@pytest.mark.parametrize("size", SIZES)
async def test_the_sidebar_gets_the_room_while_choosing_and_plus_minus_resize_it(sources, size):
    from .ui_helpers import visible_lines

    async with opened(sources, size) as (pilot, screen):
        sidebar = screen.query_one("#sidebar")
        reading = sidebar.outer_size.width
        await pilot.press("f")
        await pilot.pause()
        choosing = sidebar.outer_size.width
        assert choosing > reading
        facets = screen.facet_list
        names = [
            facets.shown_label(facet.name, facet.labels[code])
            for facet in facets.facets
            if facet.name in ("result", "model", "finding")
            for code in facets.value_codes(facet.name)
        ]
        assert any(len(name) > 16 for name in names)
        for name in names:
            facets.narrow_to(name)
            await pilot.pause()
            assert name in "\n".join(visible_lines(facets)), name
        facets.narrow_to("")
        await pilot.press("plus")
        await pilot.pause()
        assert status(screen).startswith("Sidebar: ") or "as wide as it gets" in status(screen)
        await pilot.press("minus", "minus")
        await pilot.pause()
        assert sidebar.outer_size.width < choosing and status(screen).startswith("Sidebar: ")
        await pilot.press("tab")
        await pilot.pause()
        assert sidebar.outer_size.width < reading  # narrowed for the rest of the session
        assert status(screen) == ""  # the width it said is not the width any more


@pytest.mark.parametrize("size", SIZES)
async def test_list_and_sidebar_cut_names_where_they_differ(tmp_path, size):
    """Two claude versions and two gpt-5 sizes in a narrow model column and sidebar: every row's
    model can be told apart (the plain cut gave `claude-sonn…` twice)."""
    from tracetui.data.session import prepare
    from tracetui.data.sources import SourceSpec

    from .conftest import trial_rows, write_parquet
    from .ui_helpers import visible_lines

    models = [
        "anthropic/claude-sonnet-4-5-20250929",
        "anthropic/claude-sonnet-4-20250514",
        "openai/gpt-5-mini-2025-08-07",
        "openai/gpt-5-nano-2025-08-07",
    ]
    rows = [
        row
        for n, model in enumerate(models)
        for row in trial_rows("marmot-cache-service", f"marmot-cache-service__{n}", 2, "1.0", model=model)
    ]
    path = write_parquet(tmp_path / "data" / "train-00000-of-00001.parquet", rows)
    app = make_app(list(prepare([SourceSpec(str(path.parent.parent))])))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        screen = app.screen
        trial_list = screen.trial_list
        model_width = next(w for column, w in trial_list.columns() if column.key == "model")
        cells = [trial_list.render_row(i, trial_list.size.width, False).text for i in range(4)]
        start = sum(
            w + 1 for column, w in trial_list.columns()[: [c.key for c, _ in trial_list.columns()].index("model")]
        )
        shown = [cell[start : start + model_width].strip() for cell in cells]
        assert len(set(shown)) == 4, shown
        sidebar = "\n".join(visible_lines(screen.facet_list))
        models_shown = [
            line.split("□ ", 1)[1].rsplit(" ", 1)[0].strip() for line in sidebar.splitlines() if "□ " in line
        ]
        model_lines = [m for m in models_shown if "claude" in m or "gpt" in m or "sonnet" in m or "…" in m]
        assert len(set(model_lines)) == len(model_lines)


def mid_word_breaks(view) -> list[str]:
    """Visual lines of a block view that end inside a word they could have kept whole."""
    width = view._layout_width
    found = []
    for block, spans in zip(view.blocks, view._spans):
        text = block.text
        for (_, end), (start, _) in pairwise(spans):
            if end == start and text[end - 1].isalnum() and text[start].isalnum():
                word_start = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end)) + 1
                word_end = min(
                    (i for i in (text.find(" ", start), text.find("\n", start)) if i >= 0), default=len(text)
                )
                if word_end - word_start < width - block.indent:
                    found.append(text[word_start:word_end])
    return found


@pytest.mark.parametrize("size", SIZES)
async def test_the_verifier_and_terminal_output_wrap_at_words(sources, size):
    async with opened(sources, size) as (pilot, screen):
        checked = 0
        for position in range(min(30, screen.trial_list.row_count)):
            screen.trial_list.move_to(position)
            await pilot.pause()
            for view in (screen.verifier, screen.conversation):
                view.ensure_built() if view is screen.conversation else None
                assert mid_word_breaks(view) == [], (position, view.id)
                checked += sum(len(spans) > 1 for spans in view._spans)
        assert checked  # some lines did wrap


@pytest.mark.parametrize("size", SIZES)
async def test_the_sub_agent_shown_and_a_findings_evidence_are_readable_in_full(sources, size):
    async with opened(sources, size) as (pilot, screen):
        app = pilot.app
        order = [int(t) for t in screen.trial_list.order]
        with_subagents = next(i for i, t in enumerate(order) if app.session.history(t).subagents)
        screen.trial_list.move_to(with_subagents)
        await pilot.pause()
        await pilot.press("u")
        title = screen.conversation.title
        assert title != "main" and title in text_of(screen.query_one("#position"))
        with_findings = next(i for i, t in enumerate(order) if screen.findings.index.of(t))
        screen.trial_list.move_to(with_findings)
        await pilot.pause()
        panel = screen.findings_panel
        assert "…" not in panel.border_title and panel.size.width >= len(panel.border_title) + 4
        await pilot.press("exclamation_mark")
        finding = panel.findings[0]
        shown = status(screen)
        assert f"Finding 1/{len(panel.findings)}: {finding.kind}" in shown and finding.evidence in shown


@pytest.mark.parametrize("size", SIZES)
async def test_export_asks_before_it_replaces_a_file(sources, size, tmp_path, monkeypatch):
    from .test_triage_actions import wait_idle

    monkeypatch.chdir(tmp_path)  # a short path to type, key by key
    out = tmp_path / "mine.jsonl"
    out.write_text("the user's own file\n")
    async with opened(sources, size) as (pilot, screen):
        await pilot.press("ctrl+e", "ctrl+a", "ctrl+k", *out.name, "enter")
        assert screen.prompt.display and "exists" in screen.prompt.placeholder
        await pilot.press("escape")
        await pilot.pause()
        assert out.read_text() == "the user's own file\n"
        assert status(screen) == f"Not exported: {out.name} is kept as it was."
        await pilot.press("ctrl+e", "ctrl+a", "ctrl+k", *out.name, "enter", "y", "enter")
        await wait_idle(screen, pilot, "export")
        assert status(screen).startswith("Exported ") and out.read_text() != "the user's own file\n"


@pytest.mark.parametrize("size", SIZES)
async def test_keys_with_nothing_to_act_on_say_so(sources, size):
    async with opened(sources, size) as (pilot, screen):
        checks = [
            ("H", "This is the first trial listed."),
            ("h", "This is the first message."),
            ("escape", "Nothing to cancel"),
            ("x", "No filters to clear."),
        ]
        for key, said in checks:
            await pilot.press(key)
            assert status(screen).startswith(said), key
        await pilot.press("G")  # the last trial
        await pilot.press("L")
        assert status(screen) == f"This is the last trial listed ({screen.trial_list.row_count:,})."
        screen.conversation.focus()
        screen.conversation.goto_message(len(screen.conversation.messages) - 1)
        await pilot.press("l")
        assert status(screen).startswith("This is the last message")
        screen.verifier.focus()
        await pilot.press("g", "enter")  # the verdict line: nothing to do there
        await pilot.pause()
        assert "Enter acts on a failed test" in status(screen)


@pytest.mark.parametrize("size", SIZES)
async def test_episode_rules_stay_one_line_in_the_narrow_compare_sides(tmp_path, size):
    from tracetui.data.compare import pick_counterpart
    from tracetui.ui.screens.compare import CompareScreen

    from .ui_helpers import demo_sources

    async with opened(demo_sources(tmp_path / "demo"), size) as (pilot, screen):
        order = [int(t) for t in screen.trial_list.order]
        screen.trial_list.move_to(
            next(i for i, t in enumerate(order) if pick_counterpart(pilot.app.session, t) is not None)
        )
        await pilot.press("c", "enter")
        await pilot.pause()
        compare = pilot.app.screen
        assert isinstance(compare, CompareScreen)
        for side in compare.sides:
            rules = [spans for block, spans in zip(side.blocks, side._spans) if block.style == "divider"]
            assert rules and all(len(spans) == 1 for spans in rules)


@pytest.mark.parametrize("size", SIZES)
async def test_the_help_scrolls_with_the_list_keys(sources, size):
    from tracetui.ui.screens.help import HelpScreen

    async with opened(sources, size) as (pilot, screen):
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = pilot.app.screen
        assert isinstance(help_screen, HelpScreen)
        body = help_screen.query_one("#help-body")
        await pilot.press("j", "j")
        await pilot.pause()
        assert body.scroll_y == 2
        await pilot.press("G")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y > 2
        await pilot.press("q")
        assert pilot.app.screen is screen


@pytest.mark.parametrize("size", SIZES)
async def test_an_export_error_is_readable_in_full(sources, size, tmp_path):
    from .test_triage_actions import wait_idle

    out = tmp_path / "no-such-folder" / "deeper" / "trials.jsonl"
    async with opened(sources, size) as (pilot, screen):
        await pilot.press("ctrl+e", "ctrl+a", "ctrl+k", *str(out), "enter")
        await wait_idle(screen, pilot, "export")
        said = status(screen).replace(" ", "")
        assert said.startswith("Exportfailed:") and str(out).replace(" ", "") in said and not said.endswith("…")
