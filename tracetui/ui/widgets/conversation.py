"""The conversation pane: a trial's history (or one of its sub-agent conversations) as blocks.

Messages become blocks through `render.messages.message_blocks`; this widget adds episode dividers,
the gutter (current message, episode starts), message-to-message navigation and per-message folds.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.message import Message as TextualMessage

from ...data.model import Message, TrialHistory
from ...render.block import Block
from ...render.messages import MessageState, message_blocks
from .. import keymap
from .block_view import BlockView

CURRENT = Style(color="cyan", bold=True)
EPISODE = Style(color="bright_black")
DIVIDER = "bright_black"


class ConversationView(BlockView):
    BINDINGS = keymap.CONVERSATION

    class Moved(TextualMessage):
        """The current message changed (the status line shows where we are)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.history: TrialHistory | None = None
        self.messages: tuple[Message, ...] = ()
        self.title = "main"
        self.states: dict[int, MessageState] = {}
        self.think_all = False
        self._message_block: list[int] = []  # first block of each message
        self.current = 0

    def show(self, messages: tuple[Message, ...], history: TrialHistory | None, title: str = "main") -> None:
        """Show `messages` (the history, or a sub-agent conversation) from the top."""
        self.history, self.messages, self.title = history, messages, title
        self.states = {}
        self.current = 0
        self.set_blocks(self._build(), keep_scroll=False)
        self.post_message(self.Moved())

    def _state(self, index: int) -> MessageState:
        return self.states.get(index, MessageState(think_open=self.think_all))

    def _build(self) -> list[Block]:
        blocks: list[Block] = []
        starts = []
        previous_episode = None
        for index, message in enumerate(self.messages):
            if self.title == "main" and message.episode != previous_episode:
                label = f" episode {message.episode} "
                if message.restart:
                    label += "· context summarized, history restarts "
                blocks.append(Block(f"──{label}".ljust(60, "─"), style=DIVIDER, wrap=False, message=index))
                previous_episode = message.episode
            starts.append(len(blocks))
            blocks.extend(message_blocks(self.messages, index, self._state(index)))
        self._message_block = starts
        return blocks

    def _rebuild(self, anchor_message: int) -> None:
        self.set_blocks(self._build(), keep_scroll=True)
        if self.messages:
            self.scroll_to_block(self._message_block[anchor_message])

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
        top = int(self.scroll_offset.y)
        bottom = top + self.scrollable_content_region.height
        first = self.line_of_block(self._message_block[message])
        last_block = self._message_block[message + 1] if message + 1 < len(self._message_block) else len(self.blocks)
        end = self.line_of_block(last_block) if last_block < len(self.blocks) else self.line_count
        return first < bottom and end > top

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
        self.current = index
        self.scroll_to_block(self._message_block[index])
        self._strips.clear()
        self.refresh()
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
        self.think_all = not self.think_all
        self.states = {i: MessageState(self.think_all, s.expanded) for i, s in self.states.items()}
        self._rebuild(self.current)

    def action_activate(self) -> None:
        """Enter: unfold/fold the current message's reasoning, or expand/cut its long content."""
        if not self.messages:
            return
        index = self.current
        actions = {b.action for b in self.blocks if b.message == index and b.action}
        state = self._state(index)
        if "think" in actions:
            state = MessageState(not state.think_open, state.expanded)
        elif "expand" in actions or state.expanded:
            state = MessageState(state.think_open, not state.expanded)
        else:
            return
        self.states[index] = state
        self._rebuild(index)

    def current_message(self) -> Message | None:
        if not self.messages:
            return None
        return self.messages[min(self.current, len(self.messages) - 1)]
