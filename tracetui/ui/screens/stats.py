"""The stats screen (`S`): every figure of the filtered trials on one scrolling page.

A model x task matrix (tasks down, models across, since task lists are long and model lists short),
outcome counts per model, per dataset (when several are open) and per task, the result distribution
and the episode / message / size distributions. Enter on a matrix cell or a table row dismisses the screen
with a FilterState for the triage screen to apply.
"""

from __future__ import annotations

import math

import numpy as np
from rich.style import Style
from textual import on
from textual.app import ComposeResult
from textual.containers import Container, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...data.facets import NULL_LABEL, FilterState, MultiFacet
from ...data.session import Session
from ...data.stats import GroupRow, Histogram, group_stats, overview
from ...data.trials import OUTCOMES, outcome_of
from ...trace.sanitize import sanitize
from .. import keymap
from ..format import OUTCOME_BADGES, human_size
from ..widgets.bar_chart import BarChart
from ..widgets.bars import InfoBar
from ..widgets.cursor_list import CursorList
from ..widgets.group_table import GroupTable
from ..widgets.matrix_view import SORTS, MatrixView
from ..widgets.table import DIM, Picked, TableSection, percent

BAR = Style(color="cyan")
TOP_RESULTS = 12
"""Results the chart shows; the others add up on one line."""


def histogram_bars(histogram: Histogram) -> list[tuple[str, int, Style]]:
    """One bar per bin, labelled by the values it holds (`lo–hi`, or `lo` alone for a one-value bin)."""
    edges, bars = histogram.edges.tolist(), []
    for low, high, count in zip(edges, edges[1:], histogram.counts.tolist()):
        label = str(low) if high - 1 == low else f"{low}–{high - 1}"
        bars.append((label, count, BAR))
    return bars


def size_bars(histogram: Histogram) -> list[tuple[str, int, Style]]:
    """Byte sizes are labelled by each bin's lower bound: `≥ 2.0 KB` up to the next bar's."""
    edges = histogram.edges.tolist()
    return [(f"≥ {human_size(low)}", count, BAR) for low, count in zip(edges, histogram.counts.tolist())]


def result_bars(results: dict[str, int]) -> list[tuple[str, int, Style]]:
    """The most frequent results coloured by outcome; the rest summed on one line."""
    bars = []
    for label, count in list(results.items())[:TOP_RESULTS]:
        outcome = "unknown" if label == NULL_LABEL else OUTCOMES[outcome_of(label)[0]]
        bars.append((label, count, Style(color=OUTCOME_BADGES[outcome][1].color)))
    rest = list(results.values())[TOP_RESULTS:]
    if rest:
        bars.append((f"{len(rest)} others", sum(rest), DIM))
    return bars


def finding_rows(session: Session, mask: np.ndarray) -> list[GroupRow]:
    """`tracetui stats --by finding,model` without the trials that have no finding: what each kind
    of finding counts per model (none while the findings are still being read)."""
    facet = session.facets.facets.get("finding")
    if not isinstance(facet, MultiFacet) or not len(facet.trials):
        return []
    return [row for row in group_stats(session, mask, ("finding", "model")) if row.key[0] != NULL_LABEL]


class StatsBody(VerticalScroll):
    """The page of sections; j / k / space / b scroll it when it is focused or no table takes the key."""

    BINDINGS = [*keymap.SCROLL]


class StatsScreen(Screen[FilterState | None]):
    """Dismisses with the FilterState picked by Enter (model+task, or one model, dataset or task), or None."""

    BINDINGS = [*keymap.STATS]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    def __init__(self, session: Session, mask: np.ndarray) -> None:
        super().__init__()
        self.session = session
        self.mask = mask
        self.figures = overview(session, mask)
        self.findings = finding_rows(session, mask)

    def compose(self) -> ComposeResult:
        yield InfoBar(id="stats-header")
        with StatsBody(id="stats-body"):
            yield TableSection(
                MatrixView(id="stats-matrix"),
                "Task × model pass rates  (hjkl move · Enter filters to the cell · o sorts)",
            )
            yield InfoBar(id="matrix-cell")
            yield TableSection(GroupTable("model", id="stats-models"), "Per model")
            if len(self.session.datasets) > 1:
                yield TableSection(GroupTable("dataset", id="stats-datasets"), "Per dataset")
            if self.findings:
                yield TableSection(
                    GroupTable("finding", "model", id="stats-findings"),
                    "Findings × model  (trials with each kind of finding · Enter filters to the row)",
                )
            yield TableSection(GroupTable("task", id="stats-tasks"), "Per task")
            with Container(id="stats-charts"):
                yield Static(id="chart-results")
                yield Static(id="chart-episodes")
                yield Static(id="chart-messages")
                yield Static(id="chart-size")
        yield Footer()

    @property
    def matrix(self) -> MatrixView:
        return self.query_one(MatrixView)

    def on_mount(self) -> None:
        figures = self.figures
        by_task = {row.key[0]: row.counts for row in figures.by_task}
        self.matrix.set_matrix(figures.matrix, [by_task[task] for task in figures.matrix.columns])
        self.query_one("#stats-models", GroupTable).set_rows(figures.by_model)
        if len(self.session.datasets) > 1:
            self.query_one("#stats-datasets", GroupTable).set_rows(figures.by_dataset)
        self.query_one("#stats-tasks", GroupTable).set_rows(figures.by_task)
        if self.findings:
            self.query_one("#stats-findings", GroupTable).set_rows(self.findings)
        self.query_one("#chart-results", Static).update(BarChart("Results", result_bars(figures.results)))
        self.query_one("#chart-episodes", Static).update(
            BarChart("Episodes per trial", histogram_bars(figures.episodes))
        )
        self.query_one("#chart-messages", Static).update(
            BarChart("Messages per trial", histogram_bars(figures.messages))
        )
        self.query_one("#chart-size", Static).update(BarChart("Text per trial", size_bars(figures.size)))
        self._show_totals()
        self.matrix.focus()
        self.call_after_refresh(self._refresh_headers)

    def on_resize(self) -> None:
        """Tables take at most part of the height, so the page shows more than one section at a time.

        (Set here: a `vh` max-height inside the auto-height sections is not honoured by the layout.)
        """
        height = self.size.height
        self.matrix.styles.max_height = max(4, height * 3 // 5)
        for table in self.query(GroupTable):
            table.styles.max_height = max(3, height * 2 // 5)

    def _refresh_headers(self) -> None:
        for section in self.query(TableSection):
            section.refresh_header()

    def _show_totals(self) -> None:
        total = self.figures.total
        parts: list[tuple[str, str] | str] = [
            ("Stats ", "bold"),
            f" {total.trials:,} of {len(self.session):,} trials  ·  pass ",
            (percent(total.pass_rate), "bold green"),
            f" ({total.passed:,}/{total.graded:,} graded)  ·  partial {total.partial:,}  ·  fail {total.failed:,}"
            f"  ·  error {total.errors:,}  ·  not graded {total.unknown:,}",
        ]
        if not math.isnan(total.mean_reward):
            parts.append(f"  ·  mean reward {total.mean_reward:.2f}")
        self.query_one("#stats-header", InfoBar).show(*parts)

    @on(CursorList.CursorMoved, "#stats-matrix")
    def _cell_moved(self) -> None:
        cell = self.matrix.current_cell()
        bar = self.query_one("#matrix-cell", InfoBar)
        if cell is None:
            bar.show(("No trials.", "italic"))
            return
        model, task, trials, passed, graded = cell
        rate = percent(passed / graded) if graded else "—"
        bar.show(
            (sanitize(model), "cyan"),
            " × ",
            (sanitize(task), "bold"),
            f":  {passed} passed of {graded} graded ({rate})  ·  {trials} trial{'s' if trials != 1 else ''}",
        )

    @on(Picked)
    def _picked(self, event: Picked) -> None:
        self.dismiss(event.filters)

    def action_cycle_sort(self) -> None:
        self.matrix.sort(SORTS[(SORTS.index(self.matrix.sort_key) + 1) % len(SORTS)])

    def action_close(self) -> None:
        self.dismiss(None)
