"""The stats screen's task × model matrix of pass rates, with a cell cursor."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.message import Message
from textual.strip import Strip

from ...data.facets import FilterState
from ...data.stats import Matrix, OutcomeCounts
from .. import keymap
from ..format import distinct_cuts, fit, model_names, share_widths, short_model
from .table import CURSOR, DIM, HEADER, NO_RATE, Picked, TableView, cells, percent, rate_style

SORTS = ("task", "pass rate", "trials")
"""The row orders `o` cycles through."""
MIN_COLUMN = 7
"""A model column's narrowest: `✔100%` and a space."""
LABEL_MAX = 48


class MatrixView(TableView):
    """Pass rate of each task (row) by each model (column), coloured, with a cell cursor.

    Columns that do not fit scroll sideways with the cursor; the task name and its totals stay put.
    """

    BINDINGS = [*keymap.MATRIX]
    TOTALS = 13  # "     12   67%"

    @dataclass
    class Empty(Message):
        """Enter on a cell without trials."""

        model: str
        task: str

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
        self._widths: dict[int, tuple[int, list[int]]] = {}
        """Per pane width: (label width, model column widths)."""
        self._cuts: dict[tuple[str, object], list[str]] = {}

    def set_matrix(self, matrix: Matrix, totals: list[OutcomeCounts]) -> None:
        """`matrix` as stats.matrix returns it (models x tasks); `totals` one per task, in its order."""
        self.models, self.tasks = matrix.rows, matrix.columns
        self.trials, self.passed, self.graded = matrix.trials.T, matrix.passed.T, matrix.graded.T
        self.totals = totals
        self.column = self.first_column = 0
        self._widths, self._cuts = {}, {}
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
    def _names(self) -> list[str]:
        names = model_names(self.models)
        return [names.get(m, short_model(m)) for m in self.models]

    def _layout(self, width: int) -> tuple[int, list[int], range]:
        """(label width, each model column's width, visible model columns); scrolls to the cursor.

        Sized to the content and the room: the task names and the model names whole when they fit;
        else the model columns share what the task names leave (narrow names keep their width), and
        only when every column at its narrowest still does not fit do the task names narrow (to a
        third) and the columns scroll."""
        if width in self._widths:
            label, columns = self._widths[width]
        else:
            longest = max((cell_len(t) for t in self.tasks), default=8)
            label = max(12, min(longest, LABEL_MAX))
            needs = [max(MIN_COLUMN, cell_len(name) + 1) for name in self._names()]
            room = width - label - 1 - self.TOTALS - 2
            if len(needs) * MIN_COLUMN > room:
                label = max(12, min(label, width // 3, width - self.TOTALS - 3 - len(needs) * MIN_COLUMN))
                room = width - label - 1 - self.TOTALS - 2
            columns = share_widths(needs, max(room, MIN_COLUMN), MIN_COLUMN)
            self._widths[width] = label, columns
        room = width - label - 1 - self.TOTALS - 2
        if self.column < self.first_column:
            self.first_column = self.column
        while self.first_column < self.column and sum(columns[self.first_column : self.column + 1]) > room:
            self.first_column += 1
        last = self.first_column
        while last < len(columns) and sum(columns[self.first_column : last + 1]) <= room:
            last += 1
        return label, columns, range(self.first_column, max(last, self.first_column + 1) if columns else 0)

    def _task_names(self, width: int) -> list[str]:
        """The task names cut to `width` so that they still differ (`distinct_cuts`), kept per width."""
        key = ("tasks", width)
        if key not in self._cuts:
            cut = distinct_cuts(self.tasks, width)
            self._cuts[key] = [cut[t] for t in self.tasks]
        return self._cuts[key]

    def _model_names(self, widths: list[int]) -> list[str]:
        """The model names cut to their columns, those of one width apart from each other."""
        key = ("models", tuple(widths))
        if key not in self._cuts:
            names = self._names()
            cuts = {w: distinct_cuts([n for n, other in zip(names, widths) if other == w], w) for w in set(widths)}
            self._cuts[key] = [cuts[w][n] for n, w in zip(names, widths)]
        return self._cuts[key]

    def header(self, width: int) -> Text:
        label, columns, shown = self._layout(width)
        text = Text(no_wrap=True, overflow="crop")
        mark = dict.fromkeys(SORTS, "") | {self.sort_key: "▼" if self.sort_key == "trials" else "▲"}
        text.append(fit(f"task {mark['task']}", label) + " ", HEADER)
        text.append(f"{'trials' + mark['trials']:>7} {'pass' + mark['pass rate']:>5} ", HEADER)
        text.append("◀" if shown.start > 0 else " ", DIM)
        names = self._model_names([w - 1 for w in columns])
        for m in shown:
            style = CURSOR if m == self.column else HEADER
            text.append(fit(names[m], columns[m] - 1).center(columns[m] - 1), style)
            text.append(" ")
        if shown.stop < len(self.models):
            text.append("▶", DIM)
        return text

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        task = int(self.order[index])
        label, columns, shown = self._layout(width)
        total = self.totals[task]
        segments = cells([(self._task_names(label)[task], label, CURSOR if selected else None, False)])
        segments.append(Segment(f"{total.trials:>7} ", DIM))
        segments += cells([(percent(total.pass_rate), 5, rate_style(total.pass_rate), True)])
        segments.append(Segment(" "))
        for m in shown:
            text, style = self._cell(task, m)
            if selected and m == self.column:
                style = style + CURSOR
            segments.append(Segment(text.center(columns[m] - 1), style))
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
        label, columns, shown = self._layout(self.scrollable_content_region.width)
        offset = event.x - (label + 1 + self.TOTALS + 2)
        for m in shown:
            if 0 <= offset < columns[m]:
                self._move_column(m)
                break
            offset -= columns[m]
        super().on_click(event)

    def action_pick(self) -> None:
        """Enter: the cell's filters, or (a `·` cell, no trials) an Empty message: filters that list
        nothing are not applied."""
        cell = self.current_cell()
        if cell is None:
            return
        model, task, trials = cell[:3]
        if not trials:
            self.post_message(self.Empty(model, task))
            return
        self.post_message(Picked(FilterState(selected={"model": frozenset({model}), "task": frozenset({task})})))

    def activate(self) -> None:
        self.action_pick()
