"""Outcome counts per value of one column (model, dataset, task), or per combination of a few (finding ·
model), for the stats screen."""

from __future__ import annotations

import math

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ...data.facets import FilterState
from ...data.stats import GroupRow
from .. import keymap
from .table import CURSOR, DIM, HEADER, Cell, Picked, TableView, cells, percent, rate_style


class GroupTable(TableView):
    """Outcome counts per value of one column (model, dataset, task), or per combination of a few
    (finding · model); Enter filters the trial list to it."""

    BINDINGS = [*keymap.GROUP_TABLE]
    SHOWS_FOCUS = True
    NUMBERS = (("trials", 6), ("pass", 5), ("part", 5), ("fail", 5), ("error", 5), ("n/a", 4))

    def __init__(self, *columns: str, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = columns
        self.rows: list[GroupRow] = []

    def set_rows(self, rows: list[GroupRow]) -> None:
        self.rows = rows
        self.set_row_count(len(rows), 0)
        self.refresh(layout=True)

    def _layout(self, width: int) -> tuple[int, int]:
        """(label width, bar width) for a row `width` cells wide."""
        fixed = sum(w + 1 for _, w in self.NUMBERS) + 6 + 7
        label = max(8, min(48, width - fixed - 12))
        return label, max(0, min(30, width - fixed - label - 1))

    def header(self, width: int) -> Text:
        label, bar = self._layout(width)
        titles = [(" · ".join(self.columns), label, False), *((t, w, True) for t, w in self.NUMBERS), ("rate", 5, True)]
        titles += [("reward", 6, True), ("pass rate", bar, False)]
        line = "".join(segment.text for segment in cells([(t, w, None, right) for t, w, right in titles]))
        return Text(line, style=HEADER, no_wrap=True, overflow="crop")

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows[index]
        c = row.counts
        label, bar = self._layout(width)
        numbers = (c.trials, c.passed, c.partial, c.failed, c.errors, c.unknown)
        parts: list[Cell] = [(" · ".join(row.key), label, None, False)]
        parts += [(str(n), w, None if n else DIM, True) for n, (_, w) in zip(numbers, self.NUMBERS)]
        parts.append((percent(c.pass_rate), 5, rate_style(c.pass_rate), True))
        parts.append(("—" if math.isnan(c.mean_reward) else f"{c.mean_reward:.2f}", 6, None, True))
        segments = cells(parts)
        if bar:
            filled = 0 if math.isnan(c.pass_rate) else round(c.pass_rate * bar)
            segments.append(Segment("█" * filled, Style(color=rate_style(c.pass_rate).bgcolor)))
            segments.append(Segment("░" * (bar - filled), DIM))
        return self.line_strip(segments, width, CURSOR if selected and self.has_focus else None)

    def action_pick(self) -> None:
        if self.rows:
            key = self.rows[self.cursor].key
            self.post_message(Picked(FilterState({c: frozenset({v}) for c, v in zip(self.columns, key)})))

    def activate(self) -> None:
        self.action_pick()
