"""The stats screen's usage tables, for sources that record tokens, cost and time (harbor job folders):
per group, total and mean tokens, cost and agent time and the cost per passed trial; and per model,
the mean cost per trial against the pass rate with the Pareto frontier marked (`harbor view`'s Pareto
view, as a table). A figure no trial of a group records is `—`, never 0.

The totals give way before the means on a narrow pane, the input / cached / output split first.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip

from ...data.facets import FilterState
from ...data.usage import GroupUsage, ParetoPoint
from ...render.figures import cost, seconds, tokens
from .. import keymap
from ..format import distinct_cuts, model_names
from .columns import Column, fit_columns
from .table import CURSOR, DIM, HEADER, Cell, Picked, TableView, cells, percent, rate_style

FRONTIER = "◆"
LABEL_MAX = 40


def _blank(trial: int, width: int) -> str:
    return ""


def _figure(value: float, form: Callable[[float], str]) -> str:
    return "—" if math.isnan(value) else form(value)


def _sum(a: float, b: float) -> float:
    """Input plus output tokens; NaN only when neither is recorded."""
    return (
        math.nan if math.isnan(a) and math.isnan(b) else (0.0 if math.isnan(a) else a) + (0.0 if math.isnan(b) else b)
    )


USAGE_COLUMNS: tuple[tuple[str, str, int, tuple[tuple[int, int], ...], Callable[[GroupUsage], str]], ...] = (
    ("in", "in", 6, ((6, 0),), lambda u: _figure(u.totals["input_tokens"], tokens)),
    ("cached", "cached", 6, ((4, 0),), lambda u: _figure(u.totals["cached_tokens"], tokens)),
    ("out", "out", 6, ((5, 0),), lambda u: _figure(u.totals["output_tokens"], tokens)),
    (
        "tokens",
        "tokens",
        6,
        ((12, 0),),
        lambda u: _figure(_sum(u.totals["input_tokens"], u.totals["output_tokens"]), tokens),
    ),
    (
        "mean_tokens",
        "tok/trial",
        9,
        ((26, 6), (30, 0)),
        lambda u: _figure(_sum(u.means["input_tokens"], u.means["output_tokens"]), tokens),
    ),
    ("cost", "cost", 8, ((14, 0),), lambda u: _figure(u.totals["cost_usd"], cost)),
    ("mean_cost", "$/trial", 7, (), lambda u: _figure(u.means["cost_usd"], cost)),
    ("cost_per_pass", "$/pass", 7, ((34, 0),), lambda u: _figure(u.cost_per_pass, cost)),
    ("agent", "agent", 6, ((10, 0),), lambda u: _figure(u.totals["agent_seconds"], seconds)),
    ("mean_agent", "agent/trial", 11, ((24, 6), (32, 0)), lambda u: _figure(u.means["agent_seconds"], seconds)),
)
"""(key, title, width, give_way, cell) of each figure column, in display order."""


class UsageTable(TableView):
    """Per group (model, dataset or task): tokens, cost and agent time, totals and means over the trials
    that record them, and the cost per passed trial; Enter filters the trial list to the group."""

    BINDINGS = [*keymap.GROUP_TABLE]
    SHOWS_FOCUS = True

    def __init__(self, column: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.column = column
        self.rows: list[tuple[str, GroupUsage]] = []
        self._labels: list[str] = []

    def set_rows(self, rows: list[tuple[str, GroupUsage]]) -> None:
        self.rows = rows
        names = model_names(key for key, _ in rows) if self.column == "model" else {}
        self._labels = [names.get(key, key) for key, _ in rows]
        self.set_row_count(len(rows), 0)
        self.refresh(layout=True)

    def _layout(self, width: int) -> list[tuple[Column, int]]:
        need = max(8, min(LABEL_MAX, max((len(label) for label in self._labels), default=8)))
        columns = [
            Column("label", self.column, need, _blank, ((22, 16), (40, 10))),
            *(Column(key, title, w, _blank, give_way=way, right=True) for key, title, w, way, _ in USAGE_COLUMNS),
        ]
        return fit_columns(columns, width)

    def header(self, width: int) -> Text:
        parts: list[Cell] = [(c.title, w, None, c.right) for c, w in self._layout(width)]
        return Text("".join(s.text for s in cells(parts)), style=HEADER, no_wrap=True, overflow="crop")

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        _, usage = self.rows[index]
        forms = {key: form for key, _, _, _, form in USAGE_COLUMNS}
        segments: list[Segment] = []
        for column, w in self._layout(width):
            if column.key == "label":
                segments += cells([(distinct_cuts(self._labels, w)[self._labels[index]], w, None, False)])
            else:
                text = forms[column.key](usage)
                segments += cells([(text, w, DIM if text == "—" else None, True)])
        return self.line_strip(segments, width, CURSOR if selected and self.has_focus else None)

    def action_pick(self) -> None:
        if self.rows:
            self.post_message(Picked(FilterState({self.column: frozenset({self.rows[self.cursor][0]})})))

    def activate(self) -> None:
        self.action_pick()


class ParetoTable(TableView):
    """Per model, cheapest first: trials, mean cost per trial, pass rate, and ◆ on the frontier (no other
    model is as cheap and as good, and better in one); Enter filters the trial list to the model."""

    BINDINGS = [*keymap.GROUP_TABLE]
    SHOWS_FOCUS = True

    WIDTHS = (("trials", 6), ("mean_cost", 7), ("rate", 5), ("frontier", 8))

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.points: list[ParetoPoint] = []
        self._labels: list[str] = []

    def set_points(self, points: list[ParetoPoint]) -> None:
        self.points = points
        names = model_names(p.model for p in points)
        self._labels = [names.get(p.model, p.model) for p in points]
        self.set_row_count(len(points), 0)
        self.refresh(layout=True)

    def _label_width(self, width: int) -> int:
        room = width - sum(w + 1 for _, w in self.WIDTHS) - 1
        need = max(8, min(LABEL_MAX, max((len(label) for label in self._labels), default=8)))
        return max(8, min(need, room))

    def header(self, width: int) -> Text:
        titles = {"trials": "trials", "mean_cost": "$/trial", "rate": "pass", "frontier": "frontier"}
        parts: list[Cell] = [("model", self._label_width(width), None, False)]
        parts += [(titles[key], w, None, key != "frontier") for key, w in self.WIDTHS]
        return Text("".join(s.text for s in cells(parts)), style=HEADER, no_wrap=True, overflow="crop")

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        point = self.points[index]
        label = self._label_width(width)
        parts: list[Cell] = [
            (distinct_cuts(self._labels, label)[self._labels[index]], label, None, False),
            (str(point.trials), 6, None, True),
            (cost(point.cost), 7, None, True),
            (percent(point.pass_rate), 5, rate_style(point.pass_rate), True),
            (f" {FRONTIER}" if point.frontier else "", 8, None, False),
        ]
        return self.line_strip(cells(parts), width, CURSOR if selected and self.has_focus else None)

    def action_pick(self) -> None:
        if self.points:
            self.post_message(Picked(FilterState({"model": frozenset({self.points[self.cursor].model})})))

    def activate(self) -> None:
        self.action_pick()
