"""The stats screen (`S`): every figure of the filtered trials on one scrolling page.

A model x task matrix (tasks down, models across, since task lists are long and model lists short),
outcome counts per model, per dataset (when several are open) and per task, the result distribution
and the episode / message / size distributions. Enter on a matrix cell or a table row dismisses the screen
with a FilterState for the triage screen to apply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from rich.cells import cell_len
from rich.color import Color
from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.containers import Container, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.strip import Strip
from textual.widgets import Footer, Static

from ...data.facets import NULL_LABEL, FilterState
from ...data.session import Session
from ...data.stats import GroupRow, Histogram, Matrix, OutcomeCounts, group_stats, overview
from ...data.trials import OUTCOMES, outcome_of
from ...trace.sanitize import sanitize
from .. import keymap
from ..format import OUTCOME_BADGES, fit, human_size, short_model
from ..widgets.bars import InfoBar
from ..widgets.cursor_list import CursorList

_STOPS = ((0.0, (225, 75, 60)), (0.5, (225, 195, 60)), (1.0, (90, 185, 90)))
NO_RATE = Style(color="black", bgcolor="grey50")
HEADER = Style(bold=True)
CURSOR = Style(reverse=True, bold=True)
DIM = Style(dim=True)
BAR = Style(color="cyan")
TOP_RESULTS = 12
SORTS = ("task", "pass rate", "trials")


def rate_style(rate: float) -> Style:
    """Black on red (0) → yellow (0.5) → green (1); grey when nothing is graded."""
    if math.isnan(rate):
        return NO_RATE
    (r0, c0), (r1, c1) = _STOPS[:2] if rate < 0.5 else _STOPS[1:]
    f = (min(max(rate, 0.0), 1.0) - r0) / (r1 - r0)
    rgb = [round(a + (b - a) * f) for a, b in zip(c0, c1)]
    return Style(color="black", bgcolor=Color.from_rgb(*rgb))


def percent(rate: float) -> str:
    """Rounded, but never 100% short of a perfect rate nor 0% above nothing."""
    if math.isnan(rate):
        return "—"
    value = round(100 * rate)
    if 0 < rate < 1:
        value = min(99, max(1, value))
    return f"{value}%"


class Picked(Message):
    """Enter on a matrix cell or a table row: the filters to apply to the trial list."""

    def __init__(self, filters: FilterState) -> None:
        super().__init__()
        self.filters = filters


class TableSection(Vertical):
    """A Line-API table under an optional title, with a column header that follows its width."""

    def __init__(self, table: CursorList, heading: str | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="table-section")
        self.table = table
        self.heading = heading

    def compose(self) -> ComposeResult:
        if self.heading:
            yield Static(Text(self.heading), classes="section-title")
        yield InfoBar(classes="table-header")
        yield self.table

    def refresh_header(self) -> None:
        width = self.table.scrollable_content_region.width or self.size.width
        self.query_one(".table-header", InfoBar).update(self.table.header(width))

    def on_resize(self) -> None:
        self.refresh_header()

    @on(CursorList.CursorMoved)
    def _moved(self) -> None:
        self.refresh_header()


def cells(parts: list[tuple[str, int, Style | None, bool]]) -> list[Segment]:
    """(text, width, style, right-aligned) → one segment per cell, each fitted and followed by a space."""
    out = []
    for text, width, style, right in parts:
        cell = fit(text, width)
        out.append(Segment((cell.rstrip().rjust(width) if right else cell) + " ", style))
    return out


def row_strip(segments: list[Segment], width: int, base: Style, selected: bool) -> Strip:
    strip = Strip(segments).crop_extend(0, width, None)
    return strip.apply_style(base + CURSOR if selected else base)


class GroupTable(CursorList):
    """Outcome counts per value of one column (model, dataset, task), or per combination of a few
    (finding · model); Enter filters the trial list to it."""

    BINDINGS = keymap.GROUP_TABLE
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
        parts = [(" · ".join(row.key), label, None, False)]
        parts += [(str(n), w, None if n else DIM, True) for n, (_, w) in zip(numbers, self.NUMBERS)]
        parts.append((percent(c.pass_rate), 5, rate_style(c.pass_rate), True))
        parts.append(("—" if math.isnan(c.mean_reward) else f"{c.mean_reward:.2f}", 6, None, True))
        segments = cells(parts)
        if bar:
            filled = 0 if math.isnan(c.pass_rate) else round(c.pass_rate * bar)
            segments.append(Segment("█" * filled, Style(color=rate_style(c.pass_rate).bgcolor)))
            segments.append(Segment("░" * (bar - filled), DIM))
        return row_strip(segments, width, self.rich_style, selected and self.has_focus)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_pick(self) -> None:
        if self.rows:
            key = self.rows[self.cursor].key
            self.post_message(Picked(FilterState({c: frozenset({v}) for c, v in zip(self.columns, key)})))

    def activate(self) -> None:
        self.action_pick()


class MatrixView(CursorList):
    """Pass rate of each task (row) by each model (column), coloured, with a cell cursor.

    Columns that do not fit scroll sideways with the cursor; the task name and its totals stay put.
    """

    BINDINGS = keymap.MATRIX
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
        return self.models[m], self.tasks[task], *(int(a[task, m]) for a in (self.trials, self.passed, self.graded))

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
        return Strip(segments).crop_extend(0, width, None).apply_style(self.rich_style)

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


@dataclass(frozen=True, slots=True)
class BarChart:
    """Horizontal bars under a title: label, count, bar; drawn to whatever width it is given."""

    title: str
    bars: list[tuple[str, int, Style]]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        yield Text(self.title, style="bold underline", no_wrap=True, overflow="ellipsis")
        if not self.bars:
            yield Text("no trials", style="dim")
            return
        digits = len(f"{max(n for _, n, _ in self.bars):,}")
        label = min(max(cell_len(name) for name, _, _ in self.bars), max(6, min(width // 2, width - digits - 12)))
        room = max(1, width - label - digits - 2)
        top = max(max(n for _, n, _ in self.bars), 1)
        for name, count, style in self.bars:
            line = Text(no_wrap=True, overflow="crop")
            line.append(fit(name, label) + " ")
            line.append(f"{count:>{digits},} ", DIM if not count else "")
            eighths = round(8 * room * count / top)
            if count and not eighths:
                eighths = 1
            line.append("█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8], style)
            yield line


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
    if facet is None or facet.pairs is None or not len(facet.pairs[0]):
        return []
    return [row for row in group_stats(session, mask, ("finding", "model")) if row.key[0] != NULL_LABEL]


class StatsBody(VerticalScroll):
    """The page of sections; j / k / space / b scroll it when it is focused or no table takes the key."""

    BINDINGS = keymap.SCROLL


class StatsScreen(Screen[FilterState | None]):
    """Dismisses with the FilterState picked by Enter (model+task, or one model, dataset or task), or None."""

    BINDINGS = keymap.STATS
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
