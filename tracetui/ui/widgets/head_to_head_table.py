"""The head-to-head screen's table: per task, each side's attempts as outcome badges and its pass rate."""

from __future__ import annotations

import math

from rich.segment import Segment
from rich.text import Text
from textual.message import Message
from textual.strip import Strip

from ...data.stats import HeadToHeadRow, OutcomeCounts
from .. import keymap
from ..format import OUTCOME_BADGES
from .table import CURSOR, DIM, HEADER, TableView, cells, percent, rate_style


def badges(counts: OutcomeCounts, width: int) -> list[Segment]:
    """One badge per attempt (✔✔✘), or per outcome with a count (✔12✘3) when they do not fit."""
    kinds = (
        ("pass", counts.passed),
        ("partial", counts.partial),
        ("fail", counts.failed),
        ("error", counts.errors),
        ("unknown", counts.unknown),
    )
    compact = counts.trials > width
    segments = []
    for outcome, n in kinds:
        symbol, style = OUTCOME_BADGES[outcome]
        if n:
            segments.append(Segment(f"{symbol}{n}" if compact else symbol * n, style))
    return list(Strip(segments).crop_extend(0, width, None)) + [Segment(" ")]


class HeadToHeadTable(TableView):
    """Per-task rows of a head-to-head; Enter asks the screen to compare the row's attempts."""

    BINDINGS = [*keymap.HEAD_TO_HEAD_TABLE]

    class Opened(Message):
        """Enter (or a double click) on a row."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[HeadToHeadRow] = []
        self.names = ("A", "B")

    def set_rows(self, rows: list[HeadToHeadRow], names: tuple[str, str]) -> None:
        self.rows, self.names = rows, names
        self.set_row_count(len(rows), 0)
        self.post_message(self.CursorMoved(self, self.cursor))

    @property
    def current_row(self) -> HeadToHeadRow | None:
        return self.rows[self.cursor] if self.rows else None

    def _layout(self, width: int) -> tuple[int, int]:
        """(task width, badge width): badges get up to 20 cells a side, the task the rest."""
        badge = max(6, min(20, (width - 40 - 7) // 2 - 6))
        return max(12, width - 7 - 2 * (badge + 6)), badge

    def header(self, width: int) -> Text:
        task, badge = self._layout(width)
        titles = [("task", task, False)]
        titles += [(f"{letter}: {name}", badge + 5, False) for letter, name in zip("AB", self.names)]
        titles.append(("A−B", 5, True))
        line = "".join(segment.text for segment in cells([(t, w, None, right) for t, w, right in titles]))
        return Text(line, style=HEADER, no_wrap=True, overflow="crop")

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows[index]
        task, badge = self._layout(width)
        segments = cells([(row.task, task, None, False)])
        for counts in (row.a, row.b):
            segments += badges(counts, badge)
            rate = counts.pass_rate if counts.rewarded else math.nan  # only errors: the verifier said nothing
            segments += cells([(percent(rate), 4, rate_style(rate), True)])
        diff = "—" if math.isnan(row.diff) else f"{round(100 * row.diff):+d}"
        segments += cells([(diff, 5, DIM if diff in ("—", "+0") else None, True)])
        return self.line_strip(segments, width, CURSOR if selected else None)

    def action_open(self) -> None:
        self.activate()

    def activate(self) -> None:
        if self.rows:
            self.post_message(self.Opened())
