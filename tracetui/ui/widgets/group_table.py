"""Outcome counts per value of one column (model, dataset, task), or per combination of a few (finding ·
model), for the stats screen: each pass rate with its 95% interval and the rate without reward hacks.

On a narrow pane the figures that say least give way first (the bar, the partial and not-graded
counts, the mean reward), then the label narrows; each part of a combined label is cut on its own
(`distinct_cuts`), so `context-overflow · gpt-5-mini` and `context-overflow · claude-so…` stay apart.
"""

from __future__ import annotations

import math

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip

from ...data.facets import FilterState
from ...data.stats import GroupRow, OutcomeCounts
from .. import keymap
from ..format import distinct_cuts, model_names
from .columns import Column, fit_columns
from .table import CURSOR, DIM, HEADER, Cell, Picked, TableView, cells, percent, rate_style

SEPARATOR = " · "
LABEL_MAX = 56


def interval_text(low: float, high: float) -> str:
    """`41–63%`, or `—` when there are too few graded trials for an interval."""
    return "—" if math.isnan(low) else f"{round(100 * low)}–{round(100 * high)}%"


def _blank(trial: int, width: int) -> str:
    return ""


def _column(key: str, title: str, width: int, *give_way: tuple[int, int], right: bool = True) -> Column:
    """A figure's column (its cells are drawn from the row's counts, not from a trial)."""
    return Column(key, title, width, _blank, give_way=tuple(give_way), right=right)


class GroupTable(TableView):
    """Outcome counts per value of one column (model, dataset, task), or per combination of a few
    (finding · model); Enter filters the trial list to it. `note` (per row key) adds a short text column
    after the label: a task's health, a tag's task count."""

    BINDINGS = [*keymap.GROUP_TABLE]
    SHOWS_FOCUS = True

    def __init__(self, *columns: str, note_title: str = "", id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = columns
        self.note_title = note_title
        self.rows: list[GroupRow] = []
        self.notes: dict[tuple[str, ...], str] = {}
        self._cuts: dict[int, list[str]] = {}
        self._parts: list[list[str]] = []
        self._label_need = 8
        self._hacks = False
        self._note_need = 0

    def set_rows(self, rows: list[GroupRow], notes: dict[tuple[str, ...], str] | None = None) -> None:
        self.rows, self.notes, self._cuts = rows, notes or {}, {}
        names = model_names(row.key[i] for row in rows for i, c in enumerate(self.columns) if c == "model")
        self._parts = [[names.get(v, v) if c == "model" else v for c, v in zip(self.columns, row.key)] for row in rows]
        """Each row's label parts as shown uncut: models by their shortest distinct names."""
        longest = max((cell_len(SEPARATOR.join(parts)) for parts in self._parts), default=8)
        self._label_need = max(8, min(LABEL_MAX, longest))
        self._hacks = any(row.counts.hacked is not None for row in rows)
        self._note_need = max((cell_len(n) for n in self.notes.values()), default=0)
        self.set_row_count(len(rows), 0)
        self.refresh(layout=True)

    def _layout(self, width: int) -> list[tuple[Column, int]]:
        """The columns shown at `width` cells and their widths."""
        hacks, note = self._hacks, self._note_need
        columns = [
            Column("label", " · ".join(self.columns), self._label_need, _blank, ((22, 24), (40, 16)), flex=True),
            *(
                [_column("note", self.note_title, max(note, cell_len(self.note_title)), (28, 0), right=False)]
                if note
                else []
            ),
            _column("trials", "trials", 6),
            _column("pass", "pass", 5),
            _column("partial", "part", 5, (12, 0)),
            _column("fail", "fail", 5, (30, 0)),
            _column("error", "error", 5, (26, 0)),
            _column("unknown", "n/a", 4, (10, 0)),
            _column("rate", "rate", 5),
            _column("interval", "95%", 7, (34, 0)),
            *([_column("clean", "w/o hack", 8, (36, 0))] if hacks else []),
            _column("reward", "reward", 6, (14, 0)),
            _column("bar", "pass rate", 30, (5, 12), (8, 0), right=False),
        ]
        return fit_columns(columns, width)

    def _labels(self, width: int) -> list[str]:
        """Every row's label in `width` cells, each part cut on its own so that rows stay apart."""
        if width not in self._cuts:
            parts = self._parts
            needs = [max((cell_len(p[i]) for p in parts), default=0) for i in range(len(self.columns))]
            room = width - len(SEPARATOR) * (len(needs) - 1)
            while sum(needs) > room and max(needs) > 4:
                needs[needs.index(max(needs))] -= 1
            cuts = [distinct_cuts((p[i] for p in parts), w) for i, w in enumerate(needs)]
            self._cuts[width] = [SEPARATOR.join(cut[v] for cut, v in zip(cuts, p)) for p in parts]
        return self._cuts[width]

    def header(self, width: int) -> Text:
        shown = self._layout(width)
        parts: list[Cell] = [(c.title, w, None, c.right) for c, w in shown]
        line = "".join(segment.text for segment in cells(parts))
        return Text(line, style=HEADER, no_wrap=True, overflow="crop")

    def render_row(self, index: int, width: int, selected: bool) -> Strip:
        row = self.rows[index]
        segments: list[Segment] = []
        for column, w in self._layout(width):
            key = column.key
            if key == "bar":
                segments += _bar(row.counts, w)
            elif key == "label":
                segments += cells([(self._labels(w)[index], w, None, False)])
            elif key == "note":
                segments += cells([(self.notes.get(row.key, ""), w, DIM, False)])
            else:
                text, style = _figure(key, row.counts)
                segments += cells([(text, w, style, True)])
        return self.line_strip(segments, width, CURSOR if selected and self.has_focus else None)

    def action_pick(self) -> None:
        if self.rows:
            key = self.rows[self.cursor].key
            self.post_message(Picked(FilterState(selected={c: frozenset({v}) for c, v in zip(self.columns, key)})))

    def activate(self) -> None:
        self.action_pick()


def _figure(key: str, c: OutcomeCounts) -> tuple[str, Style | None]:
    if key == "rate":
        return percent(c.pass_rate), rate_style(c.pass_rate)
    if key == "interval":
        return interval_text(*c.interval), DIM
    if key == "clean":
        return percent(c.pass_rate_without_hacks), Style(bold=True) if c.hacked else DIM
    if key == "reward":
        return ("—" if math.isnan(c.mean_reward) else f"{c.mean_reward:.2f}"), None
    n = {"trials": c.trials, "pass": c.passed, "partial": c.partial, "fail": c.failed, "error": c.errors}.get(
        key, c.unknown
    )
    return str(n), None if n else DIM


def _bar(c: OutcomeCounts, width: int) -> list[Segment]:
    filled = 0 if math.isnan(c.pass_rate) else round(c.pass_rate * width)
    return [Segment("█" * filled, Style(color=rate_style(c.pass_rate).bgcolor)), Segment("░" * (width - filled), DIM)]
