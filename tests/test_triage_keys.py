"""Keys typed quickly: each handled in order, on the trial the key before it left selected, and the
keys typed while a text box opens go into it (issue 21, item 6)."""

from __future__ import annotations

import pytest

from tracetui.ui.screens.note import NoteScreen

from .scenarios import loaded
from .ui_helpers import burst, make_app, text_of


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_labels_typed_in_a_burst_land_on_the_trial_each_j_selected(sources, size):
    app = make_app(sources)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot)
        screen = app.screen
        order = [int(t) for t in screen.trial_list.order[:4]]
        await burst(pilot, "j", "1", "j", "2", "j", "3")
        assert screen.trial_list.cursor == 3 and screen.trial == order[3]
        cells = [screen.labels.cell(t, 40).strip() for t in order]
        assert cells == ["", "reward-hack", "bad-task", "env-issue"]


async def test_a_key_typed_right_after_a_filter_acts_on_the_trial_the_filter_selected(sources):
    """The panes show the trial a filter selects once the list is painted; a key typed meanwhile waits
    for them, so `l` steps through the new trial's conversation, not the one shown before."""
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = app.screen
        session = screen.session
        model = session.info(screen.trial).model
        other = next(label for label in session.facets.facets["model"].labels if label != model)
        facets = screen.facet_list
        await burst(pilot, "f")
        code = session.facets.facets["model"].labels.index(other)
        facets.cursor = next(i for i, row in enumerate(facets.rows) if row.facet == "model" and row.code == code)
        await burst(pilot, "enter", "l", "l")  # Enter toggles the value; `l` is the conversation's next message
        assert not screen.holds_keys and screen.panes.shown == screen.trial
        assert session.info(screen.trial).model == other and screen.conversation.current == 2


async def test_text_typed_right_after_a_goes_into_the_note(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = app.screen
        sort = screen.filters.sort_key
        await burst(pilot, "a", *"hello")
        assert isinstance(app.screen, NoteScreen)
        assert app.screen.query_one("#note-text").text == "hello"
        assert screen.filters.sort_key == sort  # `o` did not run as a command


async def test_text_typed_right_after_slash_goes_into_the_prompt(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = app.screen
        await burst(pilot, "enter", "slash", *"tool", "enter")
        assert "for 'tool'" in text_of(screen.query_one("#status"))
        assert screen.focused is screen.conversation


async def test_keys_after_enter_go_to_the_conversation_it_focused(sources):
    app = make_app(sources)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot)
        screen = app.screen
        first = screen.trial
        await burst(pilot, "enter", "j", "j")
        assert screen.focused is screen.conversation and screen.trial == first
        assert screen.conversation.scroll_offset.y == 2
