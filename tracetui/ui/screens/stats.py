"""The stats screen (`S`): every figure of the filtered trials on one scrolling page.

A model x task matrix (tasks down, models across, since task lists are long and model lists short),
outcome counts per model (each pass rate with its 95% interval and, once the findings are in, the rate
without reward hacks), pass@k per model, per dataset (when several are open), task health, findings
per model and per task, the result distribution and the episode / message / size distributions; for
sources that record them (harbor job folders), tokens, cost and agent time per model, dataset and task,
and per model the cost against the pass rate (the Pareto frontier). Enter on
a matrix cell or a table row dismisses the screen with a FilterState for the triage screen to apply.
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

from ...data.facets import ASK_PREFIX, NULL_LABEL, FilterState, MultiFacet
from ...data.session import Session
from ...data.stats import GroupRow, Histogram, OutcomeCounts, group_stats, overview
from ...data.task_health import FACET as HEALTH
from ...data.task_health import WORDS
from ...data.trials import OUTCOMES, outcome_of
from ...data.usage import GroupUsage, group_usage, pareto
from .. import keymap
from ..format import OUTCOME_BADGES, human_size, short_model
from ..widgets.bar_chart import BarChart
from ..widgets.bars import InfoBar, Part
from ..widgets.cursor_list import CursorList
from ..widgets.group_table import GroupTable, interval_text
from ..widgets.matrix_view import SORTS, MatrixView
from ..widgets.pass_at_k_table import PassAtKTable
from ..widgets.table import DIM, Picked, TableSection, percent
from ..widgets.usage_table import FRONTIER, ParetoTable, UsageTable

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


def finding_rows(session: Session, mask: np.ndarray, hacked: np.ndarray | None = None) -> list[GroupRow]:
    """`tracetui stats --by finding,model` without the trials that have no finding: what each kind
    of finding counts per model (none while the findings are still being read)."""
    facet = session.facets.facets.get("finding")
    if not isinstance(facet, MultiFacet) or not len(facet.trials):
        return []
    return [row for row in group_stats(session, mask, ("finding", "model"), hacked) if row.key[0] != NULL_LABEL]


def health_rows(session: Session, mask: np.ndarray, hacked: np.ndarray | None = None) -> list[GroupRow]:
    """`tracetui stats --by task_health`, less the trials whose task has no tag."""
    if not isinstance(session.facets.facets.get(HEALTH), MultiFacet):
        return []
    return [row for row in group_stats(session, mask, (HEALTH,), hacked) if row.key[0] != NULL_LABEL]


def task_tags(session: Session, mask: np.ndarray) -> dict[str, list[str]]:
    """Task label -> its health tags (from the registered facet), for the tasks of `mask`'s trials."""
    facet = session.facets.facets.get(HEALTH)
    if not isinstance(facet, MultiFacet):
        return {}
    t = session.trials
    keep = mask[facet.trials]
    tags: dict[str, list[str]] = {}
    for trial, code in zip(facet.trials[keep].tolist(), facet.codes[keep].tolist()):
        found = tags.setdefault(t.label("task", trial) or NULL_LABEL, [])
        if facet.labels[code] not in found:
            found.append(facet.labels[code])
    return tags


def rate_parts(counts: OutcomeCounts, short: bool = False) -> list[Part]:
    """`pass 55.6% (95% 27–80%) · 11.1% without hacks (4 hacked passes)`, or shorter; the hack-free rate
    only once the findings are known, the interval only with enough graded trials."""
    parts: list[Part] = ["pass ", (percent(counts.pass_rate), "bold green")]
    if not math.isnan(counts.interval[0]):
        parts.append(f" ({'' if short else '95% '}{interval_text(*counts.interval)})")
    if counts.hacked is not None and counts.graded:
        parts += ["  ·  ", (percent(counts.pass_rate_without_hacks), "bold yellow" if counts.hacked else "bold green")]
        plural = "es" * (counts.hacked != 1)
        if short:
            parts.append(f" w/o hacks (−{counts.hacked})" if counts.hacked else " w/o hacks")
        else:
            parts.append(f" without hacks ({counts.hacked} hacked pass{plural})")
    return parts


def answer_rows(session: Session, mask: np.ndarray) -> list[tuple[str, list[GroupRow]]]:
    """`tracetui stats --by ask:NAME` for each question answered here, without the trials not asked."""
    names = [n for n, f in session.facets.facets.items() if n.startswith(ASK_PREFIX) and isinstance(f, MultiFacet)]
    tables = [
        (name, [row for row in group_stats(session, mask, (name,)) if row.key[0] != NULL_LABEL]) for name in names
    ]
    return [(name, rows) for name, rows in tables if rows]


USAGE_GROUPS = ("model", "dataset", "task")
USAGE_TITLE = "Tokens, cost, time per {}  (/trial: mean · $/pass: cost per passed trial)"


def usage_rows(session: Session, mask: np.ndarray, column: str) -> list[tuple[str, GroupUsage]]:
    """`tracetui stats --by COLUMN`'s usage figures, per value in label order; [] when no trial of `mask`
    records any (exported datasets), and for datasets when only one is open."""
    if column == "dataset" and len(session.datasets) < 2:
        return []
    found = group_usage(session, mask, (column,))
    return sorted(((key[0], usage) for key, usage in found.items()), key=lambda row: row[0].lower())


class StatsBody(VerticalScroll):
    """The page of sections; j / k / space / b scroll it when it is focused or no table takes the key."""

    BINDINGS = [*keymap.SCROLL]


class StatsScreen(Screen[FilterState | None]):
    """Dismisses with the FilterState picked by Enter (model+task, or one model, dataset or task), or None."""

    BINDINGS = [*keymap.STATS]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]

    def __init__(self, session: Session, mask: np.ndarray, hacked: np.ndarray | None = None) -> None:
        """`hacked`: per trial, whether it has a reward-hack finding (None while the findings are read)."""
        super().__init__()
        self.session = session
        self.mask = mask
        self.figures = overview(session, mask, hacked)
        self.findings = finding_rows(session, mask, hacked)
        self.health = health_rows(session, mask, hacked)
        self.tags = task_tags(session, mask)
        self.answers = answer_rows(session, mask)
        self.usage = {column: usage_rows(session, mask, column) for column in USAGE_GROUPS}
        self.pareto = pareto(session, mask)

    def compose(self) -> ComposeResult:
        yield InfoBar(id="stats-header")
        with StatsBody(id="stats-body"):
            yield TableSection(
                MatrixView(id="stats-matrix"),
                "Task × model pass rates  (hjkl move · Enter filters to the cell · o sorts)",
            )
            yield InfoBar(id="matrix-cell")
            yield TableSection(
                GroupTable("model", id="stats-models"),
                "Per model  (95%: Wilson interval of the pass rate · w/o hack: passes without a reward-hack finding)",
            )
            if self.usage["model"]:
                yield TableSection(UsageTable("model", id="stats-usage-model"), USAGE_TITLE.format("model"))
            if self.pareto:
                yield TableSection(
                    ParetoTable(id="stats-pareto"),
                    f"Cost against pass rate per model  ({FRONTIER}: on the Pareto frontier)",
                )
            if self.figures.pass_at_k:
                yield TableSection(
                    PassAtKTable("model", "dataset", id="stats-pass-at-k"),
                    "pass@k  (unbiased, averaged over tasks · (n): the n tasks with at least k graded attempts)",
                )
            if len(self.session.datasets) > 1:
                yield TableSection(GroupTable("dataset", id="stats-datasets"), "Per dataset")
                if self.usage["dataset"]:
                    yield TableSection(UsageTable("dataset", id="stats-usage-dataset"), USAGE_TITLE.format("dataset"))
            if self.health:
                yield TableSection(
                    GroupTable("task_health", note_title="tasks", id="stats-health"),
                    "Task health  (from all of each task's trials"
                    + ("" if self._failures_known else "; same-failure once the verifier logs are read")
                    + " · Enter filters to the tag)",
                )
            if self.findings:
                yield TableSection(
                    GroupTable("finding", "model", id="stats-findings"),
                    "Findings × model  (trials with each kind of finding · Enter filters to the row)",
                )
            for number, (name, _) in enumerate(self.answers):
                yield TableSection(
                    GroupTable(name, id=f"stats-ask-{number}"),
                    f"Answers to {name}  (trials per answer · Enter filters to the row)",
                )
            yield TableSection(GroupTable("task", note_title="health", id="stats-tasks"), "Per task")
            if self.usage["task"]:
                yield TableSection(UsageTable("task", id="stats-usage-task"), USAGE_TITLE.format("task"))
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
        if figures.pass_at_k:
            self.query_one("#stats-pass-at-k", PassAtKTable).set_rows(figures.pass_at_k)
        if len(self.session.datasets) > 1:
            self.query_one("#stats-datasets", GroupTable).set_rows(figures.by_dataset)
        if self.health:
            counts: dict[str, int] = {}
            for tags in self.tags.values():
                for tag in tags:
                    counts[tag] = counts.get(tag, 0) + 1
            notes = {
                row.key: f"{counts.get(row.key[0], 0)} task{'s' * (counts.get(row.key[0], 0) != 1)}"
                for row in self.health
            }
            self.query_one("#stats-health", GroupTable).set_rows(self.health, notes)
        words: dict[tuple[str, ...], str] = {
            (task,): " ".join(WORDS[tag] for tag in tags) for task, tags in self.tags.items()
        }
        self.query_one("#stats-tasks", GroupTable).set_rows(figures.by_task, words)
        if self.findings:
            self.query_one("#stats-findings", GroupTable).set_rows(self.findings)
        for number, (_, rows) in enumerate(self.answers):
            self.query_one(f"#stats-ask-{number}", GroupTable).set_rows(rows)
        for column, usage in self.usage.items():
            if usage:
                self.query_one(f"#stats-usage-{column}", UsageTable).set_rows(usage)
        if self.pareto:
            self.query_one(ParetoTable).set_points(self.pareto)
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

    @property
    def _failures_known(self) -> bool:
        facet = self.session.facets.facets.get(HEALTH)
        return facet is not None and "same-failure" in facet.labels

    def on_resize(self) -> None:
        """Tables take at most part of the height, so the page shows more than one section at a time.

        (Set here: a `vh` max-height inside the auto-height sections is not honoured by the layout.)
        """
        height = self.size.height
        self.matrix.styles.max_height = max(4, height * 3 // 5)
        tables = [*self.query(GroupTable), *self.query(PassAtKTable), *self.query(UsageTable), *self.query(ParetoTable)]
        for table in tables:
            table.styles.max_height = max(3, height * 2 // 5)

    def _refresh_headers(self) -> None:
        for section in self.query(TableSection):
            section.refresh_header()

    def _show_totals(self) -> None:
        """Counts, the pass rate with its interval and without hacks: longest first, the rates kept."""
        total = self.figures.total
        graded = f"  ·  {total.passed:,} passed of {total.graded:,} graded"
        rest = (
            f"  ·  partial {total.partial:,}  ·  fail {total.failed:,}  ·  error {total.errors:,}"
            f"  ·  not graded {total.unknown:,}"
        )
        if not math.isnan(total.mean_reward):
            rest += f"  ·  mean reward {total.mean_reward:.2f}"
        head: list[Part] = [("Stats ", "bold"), f" {total.trials:,} of {len(self.session):,} trials  ·  "]
        short: list[Part] = [("Stats ", "bold"), f" {total.trials:,}/{len(self.session):,}  ·  "]
        self.query_one("#stats-header", InfoBar).show_versions(
            [*head, *rate_parts(total), graded, rest],
            [*head, *rate_parts(total), graded],
            [*head, *rate_parts(total)],
            [*short, *rate_parts(total, short=True)],
        )

    @on(CursorList.CursorMoved, "#stats-matrix")
    def _cell_moved(self) -> None:
        cell = self.matrix.current_cell()
        bar = self.query_one("#matrix-cell", InfoBar)
        if cell is None:
            bar.show(("No trials.", "italic"))
            return
        model, task, trials, passed, graded = cell
        rate = percent(passed / graded) if graded else "—"
        plural = "s" * (trials != 1)
        figures = (
            f":  {passed} passed of {graded} graded ({rate})  ·  {trials} trial{plural}" if trials else ":  no trials"
        )
        self._show_cell(model, task, figures)

    def _show_cell(self, model: str, task: str, text: str, style: str = "", alone: str = "") -> None:
        """The line under the matrix: the cell's model and task, then `text` (the model shortened first;
        `alone`, if given, says it all when neither fits)."""
        versions: list[list[Part]] = [
            [(model, "cyan"), " × ", (task, "bold"), (text, style)],
            [(short_model(model), "cyan"), " × ", (task, "bold"), (text, style)],
        ]
        if alone:
            versions.append([(alone, style)])
        self.query_one("#matrix-cell", InfoBar).show_versions(*versions)

    @on(MatrixView.Empty)
    def _empty_cell(self, event: MatrixView.Empty) -> None:
        """Filters that would list nothing are not applied: the line under the matrix says so."""
        text = "no trials, nothing to filter to."
        self._show_cell(event.model, event.task, f":  {text}", "italic", f"This cell has {text}")

    @on(Picked)
    def _picked(self, event: Picked) -> None:
        self.dismiss(event.filters)

    def action_cycle_sort(self) -> None:
        self.matrix.sort(SORTS[(SORTS.index(self.matrix.sort_key) + 1) % len(SORTS)])

    def action_close(self) -> None:
        self.dismiss(None)
