"""The stats screen's task × model matrix of pass rates, with a cell cursor."""

from __future__ import annotations

import numpy as np
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.strip import Strip

from ...data.facets import FilterState
from ...data.stats import Matrix, OutcomeCounts
from .. import keymap
from ..format import fit, short_model
from .table import CURSOR, DIM, HEADER, NO_RATE, Picked, TableView, cells, percent, rate_style

SORTS = ("task", "pass rate", "trials")
"""The row orders `o` cycles through."""


class MatrixView(TableView):
    """Pass rate of each task (row) by each model (column), coloured, with a cell cursor.

    Columns that do not fit scroll sideways with the cursor; the task name and its totals stay put.
    """

    BINDINGS = [*keymap.MATRIX]
    TOTALS = 13  # "     12   67%"

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.tasks: list[str] = []
        self.models: list[str] = []
        self.trials = self.passed = self.graded = np.zeros((0, 0), np.int64)
        self.totals: list[OutcomeCounts] = []
        self.order = np.zeros(0, np.int64)
        self.sort_key = SORTS[0]
        self.column = 0
        self.first_column = 0

    def set_matrix(self, matrix: Matrix, totals: list[OutcomeCounts]) -> None:
        """`matrix` as stats.matrix returns it (models x tasks); `totals` one per task, in its order."""
        self.models, self.tasks = matrix.rows, matrix.columns
        self.trials, self.passed, self.graded = matrix.trials.T, matrix.passed.T, matrix.graded.T
        self.totals = totals
        self.column = self.first_column = 0
        self.sort(self.sort_key)

    def sort(self, key: str) -> None:
        """Order the rows by task name, pass rate (hardest first, ungraded last) or trials (most first)."""
        current = self.current_task
        self.sort_key = key
        names = np.arange(len(self.tasks))
        if key == "pass rate":
            rates = np.array([c.pass_rate for c in self.totals], dtype=np.float64)
            self.order = np.lexsort((names, np.nan_to_num(rates, nan=2.0)))
        elif key == "trials":
            self.order = np.lexsort((names, -np.array([c.trials for c in self.totals], dtype=np.int64)))
        else:
            self.order = names
        cursor = int(np.nonzero(self.order == current)[0][0]) if current is not None else 0
        self.set_row_count(len(self.tasks), cursor)
        self.refresh(layout=True)
        self.post_message(self.CursorMoved(self, self.cursor))

    @property
    def current_task(self) -> int | None:
        return int(self.order[self.cursor]) if self.row_count else None

    def current_cell(self) -> tuple[str, str, int, int, int] | None:
        """(model, task, trials, passed, graded) under the cursor."""
        task = self.current_task
        if task is None or not self.models:
            return None
        m = self.column
        trials, passed, graded = (int(a[task, m]) for a in (self.trials, self.passed, self.graded))
        return self.models[m], self.tasks[task], trials, passed, graded

    # --- layout --------------------------------------------------------------------------------
    def _layout(self, width: int) -> tuple[int, int, range]:
        """(label width, column width, visible model columns); scrolls the columns to the cursor."""
        longest = max((cell_len(t) for t in self.tasks), default=8)
        label = max(12, min(longest, 40, width // 4))
        column = max(7, min(11, max((cell_len(short_model(m)) for m in self.models), default=6) + 1))
        fits = max(1, (width - label - 1 - self.TOTALS - 1) // column)
        if self.column < self.first_column:
            self.first_column = self.column
        elif self.column >= self.first_column + fits:
            self.first_column = self.column - fits + 1
        return label, column, range(self.first_column, min(len(self.models), self.first_column + fits))

    def header(self, width: int) -> Text:
        label, column, shown = self._layout(width)
        text = Text(no_wrap=True, overflow="crop")
        mark = dict.fromkeys(SORTS, "") | {self.sort_key: "▼" if self.sort_key == "trials" else "▲"}
        text.append(fit(f"task {mark['task']}", label) + " ", HEADER)
        text.append(f"{'trials' + mark['trials']:>7} {'pass' + mark['pass rate']:>5} ", HEADER)
        text.append("◀" if shown.start > 0 else " ", DIM)
        for m in shown:
            style = CURSOR if m == self.column else HEADER
            text.append(fit(short_model(self.models[m]), column - 1).center(column - 1), style)
            text.append(" ")
        if shown.stop < len(self.models):
            text.append("▶", DIM)
        return text

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        task = int(self.order[index])
        label, column, shown = self._layout(width)
        total = self.totals[task]
        segments = cells([(self.tasks[task], label, CURSOR if selected else None, False)])
        segments.append(Segment(f"{total.trials:>7} ", DIM))
        segments += cells([(percent(total.pass_rate), 5, rate_style(total.pass_rate), True)])
        for m in shown:
            text, style = self._cell(task, m)
            if selected and m == self.column:
                style = style + CURSOR
            segments.append(Segment(text.center(column - 1), style))
            segments.append(Segment(" "))
        return self.line_strip(segments, width)

    def _cell(self, task: int, model: int) -> tuple[str, Style]:
        """A cell's text reads without colour: ✔ all passed, ✘ none did, ? not graded, · no trials."""
        trials, passed, graded = (int(a[task, model]) for a in (self.trials, self.passed, self.graded))
        if not trials:
            return "·", DIM
        if not graded:
            return "?", NO_RATE
        rate = passed / graded
        mark = "✔" if passed == graded else "✘" if not passed else ""
        return mark + percent(rate), rate_style(rate)

    # --- keys and mouse ------------------------------------------------------------------------
    def _move_column(self, column: int) -> None:
        if self.models:
            self.column = max(0, min(column, len(self.models) - 1))
            self.refresh()
            self.post_message(self.CursorMoved(self, self.cursor))

    def action_cursor_left(self) -> None:
        self._move_column(self.column - 1)

    def action_cursor_right(self) -> None:
        self._move_column(self.column + 1)

    def on_click(self, event: events.Click) -> None:
        label, column, shown = self._layout(self.scrollable_content_region.width)
        offset = event.x - (label + 1 + self.TOTALS + 2)
        if offset >= 0 and offset // column < len(shown):
            self._move_column(shown.start + offset // column)
        super().on_click(event)

    def action_pick(self) -> None:
        cell = self.current_cell()
        if cell is not None:
            model, task = cell[:2]
            self.post_message(Picked(FilterState({"model": frozenset({model}), "task": frozenset({task})})))

    def activate(self) -> None:
        self.action_pick()
