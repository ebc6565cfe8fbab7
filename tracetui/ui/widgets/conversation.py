"""The conversation pane: a trial's history (or one of its sub-agent conversations) as blocks.

Messages become blocks through `render.messages.message_blocks`; this widget adds episode dividers,
the gutter (current message, episode starts), message-to-message navigation and per-message folds.
"""

from __future__ import annotations

import re
from time import perf_counter

from rich.segment import Segment
from rich.style import Style
from textual.message import Message as TextualMessage

from ...render.block import Block, Toggle
from ...render.messages import MessageState, message_blocks
from ...trace.model import Message, StepMetrics, TrialHistory
from .. import keymap
from .block_view import BlockView
from .line_view import Notice

CURRENT = Style(color="cyan", bold=True)
EPISODE = Style(color="bright_black")


class ConversationView(BlockView):
    BINDINGS = [*keymap.CONVERSATION]

    class Moved(TextualMessage):
        """The current message changed (the status line shows where we are)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history: TrialHistory | None = None
        self.messages: tuple[Message, ...] = ()
        self.title = "main"
        self.states: dict[int, MessageState] = {}
        self.think_all = False
        self._spans_of: list[tuple[int, int]] = []  # blocks [start, end) of each message built so far
        self._generation = 0
        self.current = 0

    def show(self, messages: tuple[Message, ...], history: TrialHistory | None, title: str = "main") -> None:
        """Show `messages` (the history, or a sub-agent conversation) from the top.

        The first screenful is built at once; the rest arrives in slices between paints, so a
        300-message trial shows at once and the UI keeps answering keys while it fills in.
        """
        self.history, self.messages, self.title = history, messages, title
        self.states = {}
        self.current = 0
        self._restart_building()
        self.post_message(self.Moved())

    def grow(self, messages: tuple[Message, ...], history: TrialHistory) -> None:
        """The same conversation again, as it has grown (a trial still running): rebuilt with the
        folds, the current message and the scroll position kept."""
        top, current = self.scroll_offset.y, self.current
        self.history, self.messages = history, messages
        self._generation += 1
        self._spans_of = []
        self.set_blocks([], keep_scroll=True)
        self._build_through(lines=top + 3 * max(self.scrollable_content_region.height, 24))
        self.current = min(current, max(0, len(messages) - 1))
        self.scroll_to(y=top, animate=False, immediate=True)
        self._continue(self._generation)
        self.post_message(self.Moved())

    def _restart_building(self) -> None:
        """From the top: the first screenful replaces the blocks shown in one step (emptied first, the
        view's scrollbar would go and come back, and each lays out the screen)."""
        self._generation += 1
        self._spans_of = []
        self.set_blocks(self._next_blocks(0, lines=max(self.scrollable_content_region.height, 24)))
        self._continue(self._generation)

    def _state(self, index: int) -> MessageState:
        return self.states.get(index, MessageState(think_open=self.think_all))

    def _message_blocks(self, index: int) -> list[Block]:
        return message_blocks(self.messages, index, self._state(index), self._metrics(index))

    def _metrics(self, index: int) -> StepMetrics | None:
        """The tokens and cost of the agent step that wrote message `index` of the main history."""
        history = self.history
        if history is None or self.messages is not history.messages or index >= len(history.metrics):
            return None
        return history.metrics[index]

    def _build_through(
        self, through: int | None = None, lines: int | None = None, seconds: float | None = None
    ) -> None:
        """Append the blocks of further messages: through message `through`, or until about `lines`
        lines are laid out, or for about `seconds`; with none of them, all the rest."""
        self.append_blocks(self._next_blocks(len(self.blocks), through, lines, seconds))

    def _next_blocks(
        self, built: int, through: int | None = None, lines: int | None = None, seconds: float | None = None
    ) -> list[Block]:
        """The blocks of the messages after those built (their spans noted), `built` blocks on (see
        `_build_through`)."""
        new: list[Block] = []
        deadline = perf_counter() + seconds if seconds is not None else None
        added_lines = 0
        while len(self._spans_of) < len(self.messages):
            index = len(self._spans_of)
            message = self.messages[index]
            if self.title == "main" and (index == 0 or self.messages[index - 1].episode != message.episode):
                label = f" episode {message.episode} "
                if message.restart:
                    label += "· context summarized, history restarts "
                new.append(Block(f"──{label}" + "─" * 24, style="divider", wrap=False, message=index))
            start = built + len(new)
            blocks = self._message_blocks(index)
            new.extend(blocks)
            self._spans_of.append((start, start + len(blocks)))
            added_lines += sum(b.text.count("\n") + 1 for b in blocks)
            if (
                (through is not None and index >= through)
                or (lines is not None and added_lines >= lines)
                or (deadline is not None and perf_counter() >= deadline)
            ):
                break
        return new

    def _continue(self, generation: int) -> None:
        if generation == self._generation and len(self._spans_of) < len(self.messages):
            self.call_after_refresh(self._build_slice, generation)

    def _build_slice(self, generation: int) -> None:
        if generation == self._generation:
            self._build_through(seconds=0.008)
            self._continue(generation)

    def ensure_built(self, message: int | None = None) -> None:
        """Build synchronously through `message` (or everything) before jumping or searching."""
        if message is None or message >= len(self._spans_of):
            self._build_through(through=message)

    # --- where we are --------------------------------------------------------------------------
    def message_at_top(self) -> int:
        block = self.top_block()
        if block is None or not self.blocks:
            return 0
        return max(0, self.blocks[block].message)

    def watch_scroll_y(self, old: float, new: float) -> None:
        """Scrolling moves the current message to the top one once the current one leaves the view."""
        super().watch_scroll_y(old, new)
        if not self.messages or self._visible(self.current):
            return
        self.current = self.message_at_top()
        self._strips.clear()
        self.post_message(self.Moved())

    def _visible(self, message: int) -> bool:
        if message >= len(self._spans_of):
            return False
        top = int(self.scroll_offset.y)
        bottom = top + self.scrollable_content_region.height
        start, end = self._spans_of[message]
        return self.line_of_block(start) < bottom and self.line_of_block(end) > top

    def episode_position(self) -> tuple[int | None, int]:
        """(episode of the current message, number of episodes) for the status line."""
        if not self.messages or self.history is None or self.title != "main":
            return None, 0
        return self.messages[min(self.current, len(self.messages) - 1)].episode, len(self.history.episodes)

    def line_gutter(self, index: int, within: int) -> list[Segment]:
        block = self.blocks[index]
        if block.message == self.current and block.message >= 0:
            return [Segment("▌ ", CURRENT)]
        return [Segment("  ")]

    # --- navigation ----------------------------------------------------------------------------
    def goto_message(self, index: int) -> None:
        if not self.messages:
            return
        index = max(0, min(index, len(self.messages) - 1))
        self.ensure_built(index)
        self.current = index
        self.scroll_to_block(self._spans_of[index][0])
        self.repaint()
        self.post_message(self.Moved())

    def next_message(self, step: int) -> None:
        self.goto_message(self.current + step)

    def goto_episode(self, episode: int) -> bool:
        for message in self.messages:
            if message.episode >= episode:
                self.goto_message(message.index)
                return True
        return False

    # --- folds ---------------------------------------------------------------------------------
    def toggle_thinking(self) -> None:
        """`t`: fold or unfold every message's reasoning, staying at the current message."""
        self.think_all = not self.think_all
        self.states = {i: MessageState(self.think_all, s.expanded) for i, s in self.states.items()}
        anchor = self.current
        built = len(self._spans_of)
        self._generation += 1
        self._spans_of = []
        self.set_blocks([], keep_scroll=False)
        self._build_through(through=max(anchor, built - 1))
        self._continue(self._generation)
        self.goto_message(anchor)

    def action_activate(self) -> None:
        """Enter: unfold/fold the current message's reasoning, or expand/cut its long content."""
        if not self.messages:
            return
        index = self.current
        self.ensure_built(index)
        start, end = self._spans_of[index]
        actions = {b.action for b in self.blocks[start:end] if b.action}
        state = self._state(index)
        if Toggle.THINKING in actions:
            state = MessageState(not state.think_open, state.expanded)
        elif Toggle.EXPAND in actions or state.expanded:
            state = MessageState(state.think_open, not state.expanded)
        else:
            self.post_message(
                Notice(self, "Nothing to fold or expand in this message (Enter acts on ▸ lines; t: all reasoning).")
            )
            return
        self.states[index] = state
        self.replace_blocks(start, end, self._message_blocks(index))

    def blocks_replaced(self, start: int, stop: int, count: int) -> None:
        """Shift the message spans after a message's blocks changed (before the view scrolls)."""
        delta = count - (stop - start)
        self._spans_of = [
            (a, b + delta) if a == start else (a + delta, b + delta) if a >= stop else (a, b) for a, b in self._spans_of
        ]

    def find(self, pattern: re.Pattern[str] | None) -> int:
        """Find over the whole conversation, not just the part built so far."""
        if pattern is not None:
            self.ensure_built()
        return super().find(pattern)

    def goto_match_in(self, message: int) -> bool:
        """Make the first match of the last `find` inside message `message` the current one (in view);
        False when that message has none."""
        start, end = self._spans_of[message] if message < len(self._spans_of) else (0, 0)
        inside = [n for n, (block, _, _) in enumerate(self.matches) if start <= block < end]
        if not inside:
            return False
        self.show_match(inside[0])
        return True

    def action_last(self) -> None:
        self.ensure_built()
        super().action_last()

    def current_message(self) -> Message | None:
        if not self.messages:
            return None
        return self.messages[min(self.current, len(self.messages) - 1)]
