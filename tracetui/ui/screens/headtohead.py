"""The head-to-head screen (`W`): two datasets, or two models of one dataset, task by task.

Rows are the tasks both sides attempted, each side's attempts as outcome badges and its pass rate,
sorted by the difference (`stats.head_to_head`); above them, each side's pass rate over those tasks
(with its interval and without hacks) and the mean difference with its paired interval, in words:
within noise or not. `s` cycles the pairs of sides, 0-4 filter the rows, Enter compares the better
side's best attempt with the other side's worst, `f` returns to the trial list filtered to the task and
the two sides.
"""

from __future__ import annotations

import numpy as np
from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer

from ...data.compare import Sides, best_attempt, datasets_apart, sides_choices, worst_attempt
from ...data.facets import FilterState
from ...data.session import Session
from ...data.stats import HeadToHead, HeadToHeadRow, head_to_head
from .. import keymap
from ..format import distinct_cuts, short_model
from ..widgets.bars import InfoBar, Part
from ..widgets.cursor_list import CursorList
from ..widgets.head_to_head_table import HeadToHeadTable
from ..widgets.table import TableSection
from .compare import CompareScreen
from .stats import rate_parts

VIEWS = {
    "all": "all tasks",
    "a_only": "A passes, B fails",
    "b_only": "B passes, A fails",
    "both_fail": "both fail",
    "both_pass": "both pass",
}
SHORT_VIEWS = {"all": "all", "a_only": "A only", "b_only": "B only", "both_fail": "both fail", "both_pass": "both pass"}
"""The same, for a narrow terminal."""


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


class HeadToHeadScreen(Screen[FilterState | None]):
    """Dismisses with a FilterState (`f`: the task and the two sides) or None (Esc / q)."""

    BINDINGS = [*keymap.HEAD_TO_HEAD]

    def __init__(self, session: Session, mask: np.ndarray, hacked: np.ndarray | None = None) -> None:
        """`hacked`: per trial, whether it has a reward-hack finding (None while the findings are read)."""
        super().__init__()
        self.session = session
        self.mask = mask
        self.hacked = hacked
        self.choices = sides_choices(session, mask)
        self.apart = datasets_apart(session, mask)
        self.choice = 0
        self.view = "all"
        self.result: HeadToHead | None = None

    def compose(self) -> ComposeResult:
        yield InfoBar(id="h2h-header")
        yield InfoBar(id="h2h-apart")
        yield InfoBar(id="h2h-sides")
        yield InfoBar(id="h2h-verdict")
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
        apart = self.query_one("#h2h-apart", InfoBar)
        apart.display = bool(self.apart)
        apart.show_versions([(self._apart_text(), "italic")], [(self._apart_text(short=True), "italic")])
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
        self.result = head_to_head(self.session, scope, sides.a, sides.b, sides.column, self.hacked)
        self.query_one("#h2h-header", InfoBar).show_versions(*self._header_versions(sides))
        self._show_figures(self.result)
        self._show()

    def _header_versions(self, sides: Sides) -> list[list[Part]]:
        """Longest first: the sides whole, then without the dataset and pair count, then the names cut
        (`distinct_cuts`) so that both stay on the line at 80 columns."""
        where = f" in {sides.dataset}" if sides.dataset is not None and len(self.session.datasets) > 1 else ""
        pairs: Part = (f"  ·  sides {self.choice + 1}/{len(self.choices)} (s / S)", "dim")
        short: Part = (f"  {self.choice + 1}/{len(self.choices)} (s)", "dim")
        a, b = side_name(sides, sides.a), side_name(sides, sides.b)
        cut = distinct_cuts((a, b), 19)  # both fit at 80 columns with the rest of the line

        def line(head: str, a: str, b: str, *tail: Part) -> list[Part]:
            return [("Head-to-head ", "bold"), head, (a, "bold cyan"), "  vs  B = ", (b, "bold magenta"), *tail]

        return [
            line(f" {sides.column}s{where}:  A = ", sides.a, sides.b, pairs),
            line(f" {sides.column}s{where}:  A = ", a, b, pairs),
            line(f" {sides.column}s:  A = ", a, b, short),
            line(" A = ", a, b, short),
            line(" A = ", cut[a], cut[b], short),
        ]

    def _apart_text(self, short: bool = False) -> str:
        """Why a pair of datasets is not among the sides: it shares no task (after the filters)."""
        if not self.apart:
            return ""
        if short:
            a, b = self.apart[0]
            more = f" (+{len(self.apart) - 1} pairs)" if len(self.apart) > 1 else ""
            return f"{a} and {b}{more} share no task: only model pairs are offered."
        shown = "; ".join(f"{a} and {b}" for a, b in self.apart[:3]) + ("; …" if len(self.apart) > 3 else "")
        return f"{shown} share no task among the filtered trials: only model pairs (within a dataset) are offered."

    def _show_figures(self, result: HeadToHead) -> None:
        """Each side's pass rate over the shared tasks, then the mean difference and whether it is noise."""
        a, b = result.side_totals()
        sides: list[Part] = [("A ", "bold cyan"), *rate_parts(a, short=True), "   ", ("B ", "bold magenta")]
        self.query_one("#h2h-sides", InfoBar).show(*sides, *rate_parts(b, short=True))
        difference = result.difference()
        head: Part = ("A − B: ", "bold")
        hacks = a.hacked is not None and bool(a.hacked or b.hacked)
        clean = result.difference(without_hacks=True) if hacks else None
        versions = []
        for short in (False, True):
            verdict: list[Part] = [head, difference.verdict(short=short)]
            if clean is not None:
                verdict += ["  ·  without hacks: ", clean.verdict(short=short)]
            versions.append(verdict)
        note = (
            f"  (mean of per-task rates over the {difference.tasks} tasks graded on both sides)"
            if difference.tasks
            else ""
        )
        short_versions = [[head, difference.verdict(short=True)]] if clean is not None else []
        self.query_one("#h2h-verdict", InfoBar).show_versions([*versions[0], (note, "dim")], *versions, *short_versions)

    def _show(self) -> None:
        result, sides = self.result, self.sides
        if result is None or sides is None:
            return
        versions: list[list[Part]] = []
        for titles in (VIEWS, SHORT_VIEWS):
            summary: list[Part] = []
            for number, (view, title) in enumerate(titles.items()):
                count = f"[{number}] {title} {len(rows_of(result, view))}"
                summary += [(count, "bold reverse") if view == self.view else count, "  "]
            versions.append(summary)
        self.query_one("#h2h-summary", InfoBar).show_versions(*versions)
        self.table.set_rows(rows_of(result, self.view), (side_name(sides, sides.a), side_name(sides, sides.b)))
        self.call_after_refresh(self.query_one(TableSection).refresh_header)

    @on(CursorList.CursorMoved, "#h2h-table")
    def _row_moved(self) -> None:
        row = self.table.current_row
        status = self.query_one("#h2h-status", InfoBar)
        if row is None:
            status.show(("No task in this view (0 shows all).", "italic"))
            return
        figures: list[Part] = [
            (row.task, "bold"),
            f":  A passed {row.a.passed}/{row.a.graded} graded, B passed {row.b.passed}/{row.b.graded}",
        ]
        status.show_versions(
            [*figures, ("  ·  Enter compares the better side's best attempt with the other's worst", "dim")],
            [*figures, ("  ·  Enter compares", "dim")],
            figures,
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

    def attempts_to_compare(self, sides: Sides, row: HeadToHeadRow) -> tuple[int, int]:
        """(A's trial, B's trial): the best attempt of the side ahead against the worst of the other."""
        a = sides.attempts(self.session, self.mask, "a", row.task)
        b = sides.attempts(self.session, self.mask, "b", row.task)
        if row.diff < 0:
            return worst_attempt(self.session, a), best_attempt(self.session, b)
        return best_attempt(self.session, a), worst_attempt(self.session, b)

    @on(HeadToHeadTable.Opened)
    def _open(self) -> None:
        row, sides = self.table.current_row, self.sides
        if row is not None and sides is not None:
            self.app.push_screen(CompareScreen(self.session, *self.attempts_to_compare(sides, row)))

    def action_filter(self) -> None:
        row, sides = self.table.current_row, self.sides
        if row is None or sides is None:
            return
        selected = {"task": frozenset({row.task}), sides.column: frozenset({sides.a, sides.b})}
        if sides.dataset is not None:
            selected["dataset"] = frozenset({sides.dataset})
        self.dismiss(FilterState(selected=selected))

    def action_close(self) -> None:
        self.dismiss(None)
