"""The trial list: one line per trial, virtual, sorted and filtered by the screen, and its header.

The columns give way by priority on narrow panes (see `columns`), and names cut to a narrow column
stay told apart (see `cuts`); features add their own columns (tests, labels) with `set_column`. The header renders from the same columns at the list's width in the
same frame, so titles and cells cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from functools import partial

import numpy as np
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from ...data.session import Session
from ...render.figures import cost, seconds, tokens
from .. import keymap
from ..cuts import Cuts, plain_cut
from ..format import OUTCOME_BADGES, fit, model_names
from .columns import Column, fit_columns
from .cursor_list import CursorList

SELECTED = Style(reverse=True)
DIM = Style(dim=True)
NOT_DIM = Style(dim=False)
TASK_WIDTH = 24
MODEL_WIDTH_MOST = 36
"""The model column widens to its longest name, up to this, where the list has the room."""
"""Task names up to this long show in full before any other column keeps its width (issue 15)."""


class TrialList(CursorList):
    BINDINGS = [*keymap.TRIAL_LIST]

    class Opened(Message):
        """Enter on a trial: the screen moves focus to the conversation."""

    def __init__(self, session: Session, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.session = session
        self.order = np.zeros(0, dtype=np.int64)
        self.sort_key, self.sort_reverse = "task", False
        self.model_names = model_names(session.facets.facets["model"].labels)
        self._base = self._base_columns()
        self._shown_names = self._names_shown()
        self.extra_columns: list[Column] = []
        """Columns added by features such as tests and labels, after the base ones."""
        self.empty_text = ""
        """What the list says while it lists no trial, when a feature knows why (it waits for an index)."""

    def _base_columns(self) -> list[Column]:
        info = self.session.info
        tasks = self.session.facets.facets["task"].labels
        longest_task = max((cell_len(t) for t in tasks), default=8)
        task_cut, model_cut = Cuts(tasks), Cuts(self.model_names.values())
        dataset_cut = Cuts(self.session.dataset_names)  # the names the column shows
        columns = [
            Column(
                "outcome",
                "",
                2,
                lambda t, w: f" {OUTCOME_BADGES[info(t).outcome][0]}",
                style=lambda t: OUTCOME_BADGES[info(t).outcome][1],
                sort_key="outcome",
            ),
            Column(
                "task",
                "task",
                min(TASK_WIDTH, longest_task),
                lambda t, w: task_cut(info(t).task or info(t).trial_name, w),
                sort_key="task",
                flex=True,
                grows_to=longest_task,
            ),
            Column(
                "model",
                "model",
                18,
                lambda t, w: model_cut(self.model_names.get(info(t).model, "—"), w),
                give_way=((30, 12), (70, 8)),
                sort_key="model",
                grows_to=min(MODEL_WIDTH_MOST, max((cell_len(m) for m in self.model_names.values()), default=0)),
            ),
            Column(
                "ep", "ep", 4, lambda t, w: str(info(t).episodes), give_way=((40, 0),), right=True, sort_key="episodes"
            ),
            Column(
                "msgs",
                "msgs",
                5,
                lambda t, w: str(info(t).messages),
                give_way=((20, 0),),
                style=DIM,
                right=True,
                sort_key="messages",
            ),
            *self._usage_columns(),
            Column("date", "date", 10, lambda t, w: info(t).date[:10], give_way=((10, 0),), style=DIM, sort_key="date"),
        ]
        if len(self.session.datasets) > 1:
            columns.insert(
                1,
                Column(
                    "dataset",
                    "dataset",
                    12,
                    lambda t, w: dataset_cut(info(t).dataset, w),
                    give_way=((29, 8), (60, 0)),  # before a model name is cut
                    style=DIM,
                ),
            )
        return columns

    def _usage_columns(self) -> list[Column]:
        """Tokens (input and output), cost and agent time, for the sources that record them (harbor job
        folders): absent otherwise, blank for a trial without the figure; the cost keeps its place
        longest, until the model name would narrow."""
        forms: tuple[tuple[str, str, int, Callable[[float], str], int], ...] = (
            ("tokens", "tokens", 6, tokens, 18),
            ("cost", "cost", 7, cost, 28),
            ("agent_time", "agent", 6, seconds, 22),
        )
        return [
            Column(
                key,
                title,
                width,
                partial(self._usage_cell, key, form),
                give_way=((priority, 0),),
                style=DIM if key != "cost" else None,
                right=True,
                sort_key=key,
            )
            for key, title, width, form, priority in forms
            if key in self.session.ordering.usage_figures
        ]

    def _usage_cell(self, key: str, form: Callable[[float], str], trial: int, width: int) -> str:
        """Read when drawn: the session's figures are new arrays once a job run adds trials."""
        values = self.session.ordering.usage_figures.get(key)
        value = math.nan if values is None or trial >= len(values) else float(values[trial])
        return "" if math.isnan(value) else form(value)

    def sources_changed(self) -> None:
        """The session took changes (a harbor run goes on): where they bring new names or figures, the
        columns are made again over them (new tasks, models and jobs cut where they differ; a second job
        brings the dataset column; cost recorded for the first time brings its column)."""
        if self._names_shown() == self._shown_names:
            return
        self.model_names = model_names(self.session.facets.facets["model"].labels)
        self._base, self._shown_names = self._base_columns(), self._names_shown()
        self._columns_changed()

    def _names_shown(self) -> tuple[int, ...]:
        """How many names and figures the base columns are made over (they only ever grow)."""
        facets = self.session.facets.facets
        usage = self.session.ordering.usage_figures
        return len(facets["task"].labels), len(facets["model"].labels), len(self.session.datasets), len(usage)

    def set_column(self, column: Column) -> None:
        """Add or replace a column (by key), after the base columns."""
        self.extra_columns = [c for c in self.extra_columns if c.key != column.key] + [column]
        self._columns_changed()

    def remove_column(self, key: str) -> None:
        self.extra_columns = [c for c in self.extra_columns if c.key != key]
        self._columns_changed()

    def set_sort(self, key: str, reverse: bool) -> None:
        """The order's column (marked in the header); the screen says it after each filter change,
        mostly the same: then nothing is drawn again."""
        if (key, reverse) != (self.sort_key, self.sort_reverse):
            self.sort_key, self.sort_reverse = key, reverse
            self._columns_changed()

    def _columns_changed(self) -> None:
        self.refresh()
        for header in self._headers():
            header.refresh()

    def _headers(self) -> list[TrialListHeader]:
        return list(self.screen.query(TrialListHeader)) if self.is_mounted else []

    def on_focus(self) -> None:
        """The header is the list's title: it lights up while the list has focus."""
        for header in self._headers():
            header.set_class(True, "-focused")

    def on_blur(self) -> None:
        for header in self._headers():
            header.set_class(False, "-focused")

    def set_order(self, order: np.ndarray, keep: int | None = None) -> None:
        """Show trials in `order`; keep the cursor on trial `keep` when it is still listed."""
        self.order = order
        cursor = 0
        if keep is not None:
            hits = np.nonzero(order == keep)[0]
            cursor = int(hits[0]) if len(hits) else 0
        self.set_row_count(len(order), cursor)

    @property
    def current_trial(self) -> int | None:
        if not self.row_count:
            return None
        return int(self.order[self.cursor])

    def columns(self, width: int | None = None) -> list[tuple[Column, int]]:
        """The columns shown at `width` (default: the list's own width) and their widths; the column of
        the order stays, with room for its title and mark."""
        width = self.scrollable_content_region.width if width is None else width
        columns = [
            replace(c, width=max(c.width, cell_len(c.title) + 2)) if c.sort_key == self.sort_key and not c.flex else c
            for c in [*self._base, *self.extra_columns]
        ]
        return fit_columns(columns, width, keep=self.sort_key)

    def header(self) -> Text:
        """Column titles at the list's width, the sorted one marked ▲ / ▼; a column narrower than its
        title shows it cut (`mention-s…` narrowed to `me…`), or none when under 3 cells."""
        text = Text(no_wrap=True, overflow="crop")
        for column, w in self.columns():
            mark = (" ▼" if self.sort_reverse else " ▲") if column.sort_key == self.sort_key else ""
            title = column.title if cell_len(column.title) <= w or w < 3 else plain_cut(column.title, w)
            label = title + mark if cell_len(title) <= w else mark.strip()
            cell = fit(label, w)
            text.append((cell.rstrip().rjust(w) if column.right else cell) + " ", style="bold")
        return text

    def render_line(self, y: int) -> Strip:
        if y == 0 and not self.row_count and self.empty_text:
            width = self.scrollable_content_region.width
            return self.line_strip([Segment(fit(" " + self.empty_text, width), DIM)], width)
        return super().render_line(y)

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        trial = int(self.order[index])
        segments = []
        for column, w in self.columns(width):
            style = column.style(trial) if callable(column.style) else column.style
            if selected and style is not None:
                style += NOT_DIM  # dim text in the reversed row would be a grey block
            cell = fit(column.value(trial, w), w)
            segments.append(Segment((cell.rstrip().rjust(w) if column.right else cell) + " ", style))
        return self.line_strip(segments, width, SELECTED if selected else None)

    _header_width = -1

    def render_lines(self, crop):
        """A width change the header has not seen (a resize, the scrollbar coming or going) redraws it."""
        width = self.scrollable_content_region.width
        if width != self._header_width:
            self._header_width = width
            for header in self._headers():
                header.refresh()
        return super().render_lines(crop)

    def action_open(self) -> None:
        self.activate()

    def activate(self) -> None:
        self.post_message(self.Opened())


class TrialListHeader(Widget):
    """The trial list's column titles, rendered from the list at render time."""

    DEFAULT_CSS = "TrialListHeader { height: 1; }"

    def __init__(self, trial_list: TrialList, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.trial_list = trial_list

    def render(self) -> Text:
        return self.trial_list.header()
