"""The verifier panel: a BlockView with a line cursor, so Enter can act on a failed test or a fold."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual.message import Message

from ...render.block import GotoLogLine, Toggle, UnfoldNoise
from ...render.figures import trial_usage
from ...render.verifier import verifier_view
from .. import keymap
from .block_view import BlockView
from .cursor_list import CursorKeys
from .line_view import Notice

if TYPE_CHECKING:
    from ...data.usage import TrialUsage
    from ...verifier import VerifierReport

CURSOR = Style(color="cyan", bold=True)
RESIZE_STEP = 4
"""Lines `+` / `-` add to or take from the panel."""


class VerifierPanel(CursorKeys, BlockView):
    BINDINGS = [*keymap.VERIFIER]
    SHOWS_FOCUS = True
    """The line cursor shows only while the panel has focus."""

    @dataclass
    class Resized(Message):
        """`+` / `-`: the panel asks its container for `delta` more (or fewer) lines."""

        delta: int

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cursor_line = 0
        self.text: str | None = None
        self.outcome = "unknown"
        self.result: str | None = None
        self.usage: list[str] = []
        """The lines of the trial's time split, tokens and cost under the verdict."""
        self.report: VerifierReport | None = None  # once a log is shown
        self.unfolded: frozenset[int] = frozenset()
        self.expanded = False
        self._line_block: list[tuple[int, int]] = []
        self._painted = False
        self.failure = -1  # the failed test last reached with `goto_failure`

    def show(self, text: str | None, outcome: str, result: str | None, usage: TrialUsage | None = None) -> None:
        """The trial's verifier log under its verdict, with its time split, tokens and cost (`usage`,
        for sources that record them) between them."""
        self.text, self.outcome, self.result = text, outcome, result
        self.usage = trial_usage(usage)
        if self._painted:
            self._show_now()
        else:  # the first log waits for the first frame: the parser's import stays off start-up
            self.call_after_refresh(self._after_first_frame)

    def show_changed(self, text: str | None, outcome: str, result: str | None, usage: TrialUsage | None) -> None:
        """`show`, unless the panel shows that already (a running trial's reading again: folds stay)."""
        if (text, outcome, result, trial_usage(usage)) != (self.text, self.outcome, self.result, self.usage):
            self.show(text, outcome, result, usage)

    def clear(self) -> None:
        """No trial: nothing shown (not a verdict, which would say its verifier did not run), and nothing
        of the trial shown before kept (a later `show_changed` compares against it)."""
        self.text, self.outcome, self.result, self.usage = None, "unknown", None, []
        self._fresh_view(None)
        self._line_block = []
        self.set_blocks([])

    def _after_first_frame(self) -> None:
        if not self._painted:
            self._painted = True
            self._show_now()

    def _show_now(self) -> None:
        from ...verifier import parse_verifier

        self._fresh_view(parse_verifier(self.text))
        self._render_view(keep_scroll=False)

    def _fresh_view(self, report: VerifierReport | None) -> None:
        """A new log's view: folded, its cursor on the first line, no failed test reached yet."""
        self.report = report
        self.unfolded, self.expanded = frozenset(), False
        self.cursor_line = 0
        self.failure = -1

    def _render_view(self, keep_scroll: bool) -> None:
        if self.report is None:  # nothing shown yet
            return
        view = verifier_view(
            self.text, self.outcome, self.result, self.report, self.unfolded, self.expanded, self.usage
        )
        self._line_block = view.line_block
        self.set_blocks(view.blocks, keep_scroll=keep_scroll)

    def lines_moved(self, moved) -> None:
        """The cursor stays on its text, and in view, when the panel re-wraps (zoom, resize)."""
        self.move_to(moved(self.cursor_line))

    def line_gutter(self, index: int, within: int) -> list[Segment]:
        if self.line_of_block(index) + within == self.cursor_line and self.has_focus:
            return [Segment("▶ ", CURSOR)]
        return [Segment("  ")]

    def move_to(self, line: int) -> None:
        self.cursor_line = max(0, min(line, self.line_count - 1))
        self.keep_in_view(self.cursor_line)
        self.repaint()

    @property
    def cursor_position(self) -> int:
        return self.cursor_line

    @property
    def cursor_limit(self) -> int:
        return self.line_count

    def action_activate(self) -> None:
        index = self.block_at_line(self.cursor_line)
        match self.blocks[index].action if index is not None else None:
            case GotoLogLine(line) if line >= 0:
                self.goto_log_line(line)
            case UnfoldNoise(fold):
                self.unfolded = self.unfolded | {fold}
                self._render_view(keep_scroll=True)
            case Toggle.EXPAND:
                self.expanded = True
                self._render_view(keep_scroll=True)
            case _:
                self.post_message(
                    Notice(self, "Enter acts on a failed test (its traceback) or a ▸ fold; this line is neither.")
                )

    def failures(self) -> list[tuple[str, int]]:
        """(test name, log line of its traceback) of the failed tests the panel can jump to, in its order."""
        if self.report is None:
            return []
        lines = [b.action.line for b in self.blocks if isinstance(b.action, GotoLogLine)]
        return [(name, line) for name, line in zip(self.report.failed_tests, lines) if line >= 0]

    def goto_failure(self, index: int) -> bool:
        """Put the cursor on the traceback of failed test `index`; False when there is no such test."""
        failures = self.failures()
        if not 0 <= index < len(failures):
            return False
        self.failure = index
        self.goto_log_line(failures[index][1])
        return True

    def goto_log_line(self, line: int) -> None:
        """Put log line `line` (0-based, in the original log) under the cursor, unfolding as needed."""
        noise: tuple[tuple[int, int], ...] = self.report.noise if self.report else ()
        for number, (a, b) in enumerate(noise):
            if a <= line < b and number not in self.unfolded:
                self.unfolded = self.unfolded | {number}
                self._render_view(keep_scroll=True)
                break
        starts = [start for start, _ in self._line_block]
        position = bisect_right(starts, line) - 1
        if position < 0:
            return
        start, block = self._line_block[position]
        target = self.line_of_block(block) + self._wrapped_offset(block, line - start)
        self.move_to(target)
        self.scroll_to(y=max(0, target - 2), animate=False, immediate=True)

    def _wrapped_offset(self, block: int, logical: int) -> int:
        """Visual line within `block` where its `logical`-th text line starts."""
        text = self.blocks[block].text
        position = 0
        for _ in range(logical):
            found = text.find("\n", position)
            if found < 0:
                break
            position = found + 1
        spans = self._spans[block]
        return max(0, bisect_right([s for s, _ in spans], position) - 1)

    def action_grow(self) -> None:
        self.post_message(self.Resized(+RESIZE_STEP))

    def action_shrink(self) -> None:
        self.post_message(self.Resized(-RESIZE_STEP))
