"""The head-to-head screen (`W`): two datasets, or two models of one dataset, task by task.

Rows are the tasks both sides attempted, each side's attempts as outcome badges and its pass rate,
sorted by the difference (`stats.head_to_head`). `s` cycles the pairs of sides, 0-4 filter the rows,
Enter compares the better side's best attempt with the other side's worst, `f` returns to the trial
list filtered to the task and the two sides.
"""

from __future__ import annotations

import math

import numpy as np
from rich.segment import Segment
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Footer

from ...data.compare import Sides, best_attempt, sides_choices, worst_attempt
from ...data.facets import FilterState
from ...data.session import Session
from ...data.stats import HeadToHead, HeadToHeadRow, OutcomeCounts, head_to_head
from ...trace.sanitize import sanitize
from .. import keymap
from ..format import OUTCOME_BADGES, short_model
from ..widgets.bars import InfoBar
from ..widgets.cursor_list import CursorList
from .compare import CompareScreen
from .stats import DIM, HEADER, TableSection, cells, percent, rate_style, row_strip

VIEWS = {
    "all": "all tasks",
    "a_only": "A passes, B fails",
    "b_only": "B passes, A fails",
    "both_fail": "both fail",
    "both_pass": "both pass",
}


def rows_of(result: HeadToHead, view: str) -> list[HeadToHeadRow]:
    return {
        "all": lambda: result.rows,
        "a_only": result.only_a_passes,
        "b_only": result.only_b_passes,
        "both_fail": result.both_fail,
        "both_pass": result.both_pass,
    }[view]()


def side_name(sides: Sides, label: str) -> str:
    return short_model(label) if sides.column == "model" else label


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


class HeadToHeadTable(CursorList):
    """Per-task rows of a head-to-head; Enter asks the screen to compare the row's attempts."""

    BINDINGS = keymap.HEAD_TO_HEAD_TABLE

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
            segments += cells([(percent(counts.pass_rate), 4, rate_style(counts.pass_rate), True)])
        diff = "—" if math.isnan(row.diff) else f"{round(100 * row.diff):+d}"
        segments += cells([(diff, 5, DIM if diff in ("—", "+0") else None, True)])
        return row_strip(segments, width, self.rich_style, selected)

    def action_open(self) -> None:
        self.activate()

    def activate(self) -> None:
        if self.rows:
            self.post_message(self.Opened())


class HeadToHeadScreen(Screen[FilterState | None]):
    """Dismisses with a FilterState (`f`: the task and the two sides) or None (Esc / q)."""

    BINDINGS = keymap.HEAD_TO_HEAD

    def __init__(self, session: Session, mask: np.ndarray) -> None:
        super().__init__()
        self.session = session
        self.mask = mask
        self.choices = sides_choices(session, mask)
        self.choice = 0
        self.view = "all"
        self.result: HeadToHead | None = None

    def compose(self) -> ComposeResult:
        yield InfoBar(id="h2h-header")
        yield InfoBar(id="h2h-summary")
        yield TableSection(HeadToHeadTable(id="h2h-table"), id="h2h-section")
        yield InfoBar(id="h2h-status")
        yield Footer()

    @property
    def table(self) -> HeadToHeadTable:
        return self.query_one(HeadToHeadTable)

    @property
    def sides(self) -> Sides | None:
        return self.choices[self.choice] if self.choices else None

    def on_mount(self) -> None:
        self._compute()
        self.table.focus()

    def _compute(self) -> None:
        sides = self.sides
        if sides is None:
            self.query_one(TableSection).display = False
            self.query_one("#h2h-header", InfoBar).show(
                ("Head-to-head ", "bold"),
                (
                    "needs a task attempted by two datasets, or by two models of one dataset, "
                    "among the filtered trials.",
                    "italic",
                ),
            )
            return
        scope = sides.scope(self.session, self.mask)
        self.result = head_to_head(self.session, scope, sides.a, sides.b, sides.column)
        where = f" in {sides.dataset}" if sides.dataset is not None and len(self.session.datasets) > 1 else ""
        self.query_one("#h2h-header", InfoBar).show(
            ("Head-to-head ", "bold"),
            f" {sides.column}s{sanitize(where)}:  A = ",
            (sanitize(sides.a), "bold cyan"),
            "  vs  B = ",
            (sanitize(sides.b), "bold magenta"),
            (f"  ·  sides {self.choice + 1}/{len(self.choices)} (s / S)", "dim"),
        )
        self._show()

    def _show(self) -> None:
        result, sides = self.result, self.sides
        if result is None or sides is None:
            return
        summary: list = []
        for number, (view, title) in enumerate(VIEWS.items()):
            count = f"[{number}] {title} {len(rows_of(result, view))}"
            summary += [(count, "bold reverse") if view == self.view else count, "  "]
        self.query_one("#h2h-summary", InfoBar).show(*summary)
        self.table.set_rows(rows_of(result, self.view), (side_name(sides, sides.a), side_name(sides, sides.b)))
        self.call_after_refresh(self.query_one(TableSection).refresh_header)

    @on(CursorList.CursorMoved, "#h2h-table")
    def _row_moved(self) -> None:
        row = self.table.current_row
        status = self.query_one("#h2h-status", InfoBar)
        if row is None:
            status.show(("No task in this view (0 shows all).", "italic"))
            return
        status.show(
            (sanitize(row.task), "bold"),
            f":  A passed {row.a.passed}/{row.a.graded} graded, B passed {row.b.passed}/{row.b.graded}",
            ("  ·  Enter compares the better side's best attempt with the other's worst", "dim"),
        )

    # --- actions -------------------------------------------------------------------------------
    def _cycle(self, step: int) -> None:
        if self.choices:
            self.choice = (self.choice + step) % len(self.choices)
            self._compute()

    def action_next_sides(self) -> None:
        self._cycle(+1)

    def action_prev_sides(self) -> None:
        self._cycle(-1)

    def action_show(self, view: str) -> None:
        self.view = view
        self._show()

    def attempts_to_compare(self, row: HeadToHeadRow) -> tuple[int, int]:
        """(A's trial, B's trial): the best attempt of the side ahead against the worst of the other."""
        sides = self.sides
        a = sides.attempts(self.session, self.mask, "a", row.task)
        b = sides.attempts(self.session, self.mask, "b", row.task)
        if row.diff < 0:
            return worst_attempt(self.session, a), best_attempt(self.session, b)
        return best_attempt(self.session, a), worst_attempt(self.session, b)

    @on(HeadToHeadTable.Opened)
    def _open(self) -> None:
        row = self.table.current_row
        if row is not None:
            self.app.push_screen(CompareScreen(self.session, *self.attempts_to_compare(row)))

    def action_filter(self) -> None:
        row, sides = self.table.current_row, self.sides
        if row is None or sides is None:
            return
        selected = {"task": frozenset({row.task}), sides.column: frozenset({sides.a, sides.b})}
        if sides.dataset is not None:
            selected["dataset"] = frozenset({sides.dataset})
        self.dismiss(FilterState(selected))

    def action_close(self) -> None:
        self.dismiss(None)
