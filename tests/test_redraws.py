"""What the triage screen draws again after a key, counted: layouts of the screen through its public
layout signal, lines drawn through each view's Line API (`render_line`). A filter toggle or a cursor
move that lays out the whole screen, or repaints a pane whose content it did not change, costs every
frame at 400k trials on a loaded machine (BENCHMARKS.md, issue 25); these fail if that comes back."""

from __future__ import annotations

from tracetui.render.block import Block
from tracetui.ui.widgets.facet_list import RowKind

from .ui_helpers import opened, panes_followed

SIZE = (120, 40)


class Drawn:
    """Counts the screen's layouts and the lines each watched view draws from `start()` on."""

    def __init__(self, screen, **views) -> None:
        self.layouts = 0
        self.lines = dict.fromkeys(views, 0)
        self._on = False
        screen.screen_layout_refresh_signal.subscribe(screen, self._laid_out, immediate=True)
        for name, view in views.items():
            self._watch(name, view)

    def _laid_out(self, _screen) -> None:
        self.layouts += self._on

    def _watch(self, name: str, view) -> None:
        render_line = view.render_line

        def counted(y: int):
            self.lines[name] += self._on
            return render_line(y)

        view.render_line = counted

    def start(self) -> None:
        self.layouts, self.lines, self._on = 0, dict.fromkeys(self.lines, 0), True


async def frames(pilot, count: int = 5) -> None:
    for _ in range(count):
        await pilot.pause(0.02)


async def test_a_filter_that_keeps_the_trial_draws_only_the_lists_and_lays_nothing_out(sources):
    async with opened(sources, SIZE) as (pilot, screen):
        facets, trials, conversation = screen.facet_list, screen.trial_list, screen.conversation
        facets.focus()
        await frames(pilot)
        facets.cursor = own_value_most_listed(screen)
        await frames(pilot)
        listed, trial = len(trials.order), screen.trial
        row = facets.rows[facets.cursor]
        assert facets.result.counts[row.facet][row.code] > trials.size.height  # the list stays longer than its pane
        assert conversation.show_vertical_scrollbar  # a long conversation: its scrollbar could repaint
        drawn = Drawn(
            screen,
            facets=facets,
            trials=trials,
            conversation=conversation,
            verifier=screen.verifier,
            scrollbar=conversation.vertical_scrollbar,
        )
        for _ in range(2):  # on, then off
            drawn.start()
            await pilot.press("enter")
            await frames(pilot)
            assert screen.trial == trial
            assert drawn.layouts == 0
            assert drawn.lines["conversation"] == drawn.lines["verifier"] == drawn.lines["scrollbar"] == 0
            assert drawn.lines["facets"] > 0 and drawn.lines["trials"] > 0  # what the toggle changed
        assert len(trials.order) == listed and screen.trial == trial


def own_value_most_listed(screen) -> int:
    """The sidebar row of the selected trial's outcome, result or model that the most trials have: on
    alone, the trial stays listed and the list keeps its scrollbar and height."""
    facets, session = screen.facet_list, screen.session
    info = session.info(screen.trial)
    own = {"outcome": info.outcome, "result": info.result, "model": info.model}
    rows = [
        i
        for i, r in enumerate(facets.rows)
        if r.kind is RowKind.VALUE and r.facet in own and session.facets.facets[r.facet].labels[r.code] == own[r.facet]
    ]
    return max(rows, key=lambda i: facets.result.counts[facets.rows[i].facet][facets.rows[i].code])


async def test_moving_the_trial_cursor_draws_its_two_rows_and_not_the_sidebar(sources):
    async with opened(sources, SIZE) as (pilot, screen):
        trials = screen.trial_list
        trials.focus()
        await frames(pilot)
        assert trials.cursor == 0 and trials.row_count > 2
        drawn = Drawn(screen, trials=trials, facets=screen.facet_list)
        drawn.start()
        await pilot.press("j")
        await frames(pilot)
        assert trials.cursor == 1 and int(trials.scroll_offset.y) == 0
        assert drawn.lines == {"trials": 2, "facets": 0}


async def test_blocks_added_below_the_view_draw_nothing_and_lay_nothing_out(sources):
    """As a long conversation arrives in slices between frames: what goes below the view draws no line
    and leaves the screen's layout alone (the scrollbar was there already)."""
    async with opened(sources, SIZE) as (pilot, screen):
        conversation = screen.conversation
        await frames(pilot)
        assert conversation.max_scroll_y > 0 and int(conversation.scroll_offset.y) == 0
        lines = conversation.line_count
        drawn = Drawn(screen, conversation=conversation)
        drawn.start()
        conversation.append_blocks([Block("one more line"), Block("and another")])
        await frames(pilot)
        assert conversation.line_count == lines + 2 and conversation.max_scroll_y > 0
        assert drawn.layouts == 0 and drawn.lines["conversation"] == 0
        conversation.action_page_down()  # the counting sees what does change the view
        await frames(pilot)
        assert drawn.lines["conversation"] >= conversation.scrollable_content_region.height


async def test_a_layout_of_the_screen_repaints_no_view_whose_size_stayed(sources):
    """Textual's scroll views repaint their scrollbars at every layout of the screen; ours only when
    their size changed."""
    async with opened(sources, SIZE) as (pilot, screen):
        conversation, trials = screen.conversation, screen.trial_list
        await frames(pilot)
        assert conversation.show_vertical_scrollbar and trials.show_vertical_scrollbar
        drawn = Drawn(
            screen,
            conversation=conversation,
            conversation_scrollbar=conversation.vertical_scrollbar,
            trials=trials,
            trials_scrollbar=trials.vertical_scrollbar,
            facets=screen.facet_list,
        )
        drawn.start()
        screen.refresh(layout=True)
        await frames(pilot)
        assert drawn.layouts == 1
        assert drawn.lines == dict.fromkeys(drawn.lines, 0)


async def test_a_filter_that_moves_the_trial_paints_the_list_before_it_reads_the_new_trial(sources):
    """A toggle that takes the selected trial off the list: a frame with the new list is painted before
    the trial under the cursor is read (its rows may be cold on disk, or on the hub), and a cursor moved
    again meanwhile is followed to where it stops: that trial alone is read, and shown."""
    async with opened(sources, SIZE) as (pilot, screen):
        app, trials, session = screen.app, screen.trial_list, screen.session
        before = screen.trial
        model = session.info(before).model
        labels = session.facets.facets["model"].labels
        other = next(label for label in labels if label != model)
        painted, reads = [], []
        display, history = app._display, session.history

        def counted_display(screen_, renderable):
            display(screen_, renderable)
            painted.append(renderable is not None)

        def counted_history(trial):
            reads.append((trial, sum(painted)))
            return history(trial)

        app._display, session.history = counted_display, counted_history
        session._histories.clear()
        screen.filters.toggle("model", other)  # as Enter on the value in the sidebar does
        assert screen.trial != before and screen.panes.shown == before  # the list moved; the panes follow
        trials.move_to(1)
        stopped = screen.trial
        await frames(pilot)
        assert screen.panes.shown == stopped == screen.trial
        assert [trial for trial, _ in reads] == [stopped]
        assert reads[0][1] >= 1  # a frame painted the list before the trial was read
        assert session.info(stopped).model == other
        assert screen.conversation.messages == session.history(stopped).messages


async def test_the_panes_follow_a_filter_even_when_the_list_is_hidden_before_it_is_painted(sources):
    """The conversation is maximized (the list hidden) right after a toggle: no frame paints the list, and
    the panes still show the trial it selected, a moment later."""
    async with opened(sources, SIZE) as (pilot, screen):
        session = screen.session
        model = session.info(screen.trial).model
        other = next(label for label in session.facets.facets["model"].labels if label != model)
        screen.filters.toggle("model", other)
        screen.trial_list.display = False
        await panes_followed(pilot, screen)
        assert session.info(screen.trial).model == other
        assert screen.conversation.messages == session.history(screen.trial).messages


async def test_the_panes_follow_the_lists_first_frame_even_when_that_frame_leaves_a_repaint_behind(sources):
    """The frame that paints the new list can leave more to paint (the scrollbar came or went, so the
    header is drawn again at its new width): the panes do not wait for that next frame to read the
    trial they follow; they read it once the list's own frame is written."""
    async with opened(sources, SIZE) as (pilot, screen):
        app, trials, session = screen.app, screen.trial_list, screen.session
        model = session.info(screen.trial).model
        other = next(label for label in session.facets.facets["model"].labels if label != model)
        painted, reads = [], []
        display, history, render_lines = app._display, session.history, trials.render_lines

        def counted_display(screen_, renderable):
            display(screen_, renderable)
            painted.append(renderable is not None)

        def counted_history(trial):
            reads.append(sum(painted))
            return history(trial)

        def leaving_a_repaint(crop):
            screen.header.refresh()  # dirty again while the list's frame is drawn
            return render_lines(crop)

        app._display, session.history, trials.render_lines = counted_display, counted_history, leaving_a_repaint
        session._histories.clear()
        screen.filters.toggle("model", other)
        await panes_followed(pilot, screen)
        assert reads == [1]  # read after the list's frame, before the frame its repaint asked for
