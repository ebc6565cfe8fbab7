"""Folding and unfolding messages in the conversation pane at any scroll position.

A fold changes the number of blocks of one message; scrolling runs watchers that read the message
spans, so the spans must be right before the view scrolls. The regression test is the reported
crash (unfold all, go to the last message, fold its reasoning); the property test folds, unfolds and
scrolls at random and checks the view's indexes after every step.
"""

from __future__ import annotations

import random

from tracetui.render.block import Toggle
from tracetui.render.messages import MessageState, message_blocks
from tracetui.ui.app import StartOptions

from .ui_helpers import make_app, wait_loaded


def trials_ending_in_reasoning(session, count: int) -> list[str]:
    """Names of trials whose last message has reasoning to fold."""
    found = []
    for trial in range(len(session)):
        messages = session.history(trial).messages
        blocks = message_blocks(messages, len(messages) - 1, MessageState(think_open=True))
        if any(b.action is Toggle.THINKING for b in blocks):
            found.append(session.info(trial).trial_name)
            if len(found) == count:
                break
    return found


def check_indexes(view) -> None:
    """The conversation's own indexes agree with its blocks and line table."""
    assert len(view._first_line) == len(view.blocks) + 1
    previous_end = 0
    for message, (start, end) in enumerate(view._spans_of):
        assert previous_end <= start < end <= len(view.blocks)
        assert all(block.message == message for block in view.blocks[start:end])
        previous_end = end
    assert 0 <= view.current < max(1, len(view.messages))
    assert 0 <= view.scroll_offset.y <= max(0, view.line_count)


async def test_folding_the_last_message_after_unfolding_all_keeps_running(sources):
    from tracetui.data.session import open_session

    names = trials_ending_in_reasoning(open_session(sources), 3)
    assert names, "the demo has trials that end in reasoning"
    for name in names:
        app = make_app(sources, StartOptions(trial=name))
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await wait_loaded(app, pilot)
            view = screen.conversation
            await pilot.press("enter", "t")
            await pilot.press(*["right_square_bracket"] * len(view.messages))
            assert view.current == len(view.messages) - 1
            lines = view.line_count
            await pilot.press("enter")
            await pilot.pause()
            assert app.is_running and view.line_count < lines  # folded, and still there
            check_indexes(view)


FOLD_KEYS = ["enter", "t", "right_square_bracket", "left_square_bracket", "j", "k", "space", "b", "g", "G"]


async def test_random_folds_at_random_scroll_positions(sources):
    """Seeded: random keys and random scroll positions; the indexes hold after every step."""
    from tracetui.data.session import open_session

    names = trials_ending_in_reasoning(open_session(sources), 4)
    rng = random.Random(15)
    for name in names:
        app = make_app(sources, StartOptions(trial=name))
        async with app.run_test(size=(rng.choice([80, 100, 120]), rng.choice([24, 30, 40]))) as pilot:
            screen = await wait_loaded(app, pilot)
            view = screen.conversation
            view.focus()
            for _ in range(60):
                if rng.random() < 0.3:
                    view.scroll_to(y=rng.randint(0, max(0, view.max_scroll_y)), animate=False, immediate=True)
                else:
                    await pilot.press(rng.choice(FOLD_KEYS))
                await pilot.pause()
                assert app.is_running
                check_indexes(view)
