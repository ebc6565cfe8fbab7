"""The stats screen on the demo: its numbers are the data layer's, Enter on a cell returns the filter."""

from __future__ import annotations

import numpy as np
from rich.console import Console

from tracetui.data.facets import FilterState
from tracetui.data.stats import group_stats, histogram, matrix, result_counts
from tracetui.ui.format import model_names
from tracetui.ui.screens.stats import StatsScreen, histogram_bars
from tracetui.ui.widgets.bar_chart import BarChart
from tracetui.ui.widgets.group_table import GroupTable
from tracetui.ui.widgets.matrix_view import MatrixView
from tracetui.ui.widgets.table import percent

from .ui_helpers import make_app, text_of, visible_lines, wait_loaded


def graded(session) -> np.ndarray:
    """A filtered set (not everything), so the screen is seen to count the mask only."""
    return session.facets.apply(FilterState({"outcome": frozenset({"pass", "fail", "error"})})).visible


def screen_text(app) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def open_stats(app, pilot, mask_of=graded):
    await wait_loaded(app, pilot)
    results = []
    mask = mask_of(app.session)
    app.push_screen(StatsScreen(app.session, mask), callback=results.append)
    await pilot.pause()
    return app.screen, mask, results


async def test_tables_show_the_data_layer_numbers(sources):
    app = make_app(sources)
    async with app.run_test(size=(160, 48)) as pilot:
        screen, mask, _ = await open_stats(app, pilot)
        session = app.session
        assert 0 < mask.sum() < len(session)
        header = text_of(screen.query_one("#stats-header"))
        assert f"{int(mask.sum())} of {len(session)} trials" in header
        total = screen.figures.total
        assert f"{total.passed:,} passed of {total.graded:,} graded" in header  # not "3/7 graded"

        models = screen.query_one("#stats-models", GroupTable)
        expected = group_stats(session, mask, ("model",))
        assert models.rows == expected
        short = model_names(row.key[0] for row in expected)
        for line, row in zip(visible_lines(models), expected):
            c = row.counts
            assert line.startswith(short[row.key[0]][:20])  # models by their shortest distinct names
            numbers = [word for word in line.split() if word.isdigit()]
            assert numbers[:6] == [str(n) for n in (c.trials, c.passed, c.partial, c.failed, c.errors, c.unknown)]
            assert percent(c.pass_rate) in line

        tasks = group_stats(session, mask, ("task",))
        assert screen.query_one("#stats-tasks", GroupTable).rows == tasks
        grid = screen.query_one(MatrixView)
        by_task = {row.key[0]: row.counts for row in tasks}
        assert grid.tasks == sorted(by_task) and grid.models == [row.key[0] for row in expected]
        for index, line in enumerate(visible_lines(grid)):
            counts = by_task[grid.tasks[index]]
            assert line.split()[1:3] == [str(counts.trials), percent(counts.pass_rate)]

        # the charts: results and the distributions, with bin labels
        screen.query_one("#stats-body").scroll_end(animate=False)
        await pilot.pause()
        shown = screen_text(app)
        for title in ("Results", "Episodes per trial", "Messages per trial", "Text per trial"):
            assert title in shown
        assert next(iter(result_counts(session, mask))) in shown


async def test_enter_on_a_matrix_cell_returns_its_filter(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, mask, results = await open_stats(app, pilot)
        session = app.session
        grid = matrix(session, mask)
        # the busiest cell that is not in the first row or column, so reaching it takes both j and l
        trials = grid.trials.copy()
        trials[0, :] = trials[:, 0] = -1
        model, task = np.unravel_index(int(np.argmax(trials)), trials.shape)
        view = screen.query_one(MatrixView)
        assert view.has_focus
        await pilot.press(*["j"] * int(task), *["l"] * int(model))
        assert view.current_cell() == (
            grid.rows[model],
            grid.columns[task],
            int(grid.trials[model, task]),
            int(grid.passed[model, task]),
            int(grid.graded[model, task]),
        )
        rate = percent(grid.pass_rate[model, task])
        assert rate in visible_lines(view)[task] and rate in text_of(screen.query_one("#matrix-cell"))
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, StatsScreen)
    expected = FilterState({"model": frozenset({grid.rows[model]}), "task": frozenset({grid.columns[task]})})
    assert results == [expected]
    picked = session.facets.apply(expected).visible & mask
    assert int(picked.sum()) == int(grid.trials[model, task])


async def test_sort_model_row_pick_and_close(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen, mask, results = await open_stats(app, pilot)
        view = screen.query_one(MatrixView)
        await pilot.press("o")  # by pass rate, hardest first
        rates = [view.totals[int(t)].pass_rate for t in view.order]
        assert rates == sorted(rates) and "pass▲" in text_of(screen.query(".table-header").first())
        await pilot.press("o", "o")
        assert view.order.tolist() == list(range(len(view.tasks)))

        await pilot.press("tab")
        models = screen.query_one("#stats-models", GroupTable)
        assert models.has_focus
        await pilot.press("j", "enter")
        await pilot.pause()
        assert results == [FilterState({"model": frozenset({models.rows[1].key[0]})})]

        app.push_screen(StatsScreen(app.session, mask), callback=results.append)
        await pilot.pause()
        await pilot.press("q")
        await pilot.pause()
        assert results[-1] is None and not isinstance(app.screen, StatsScreen)


async def test_small_and_large_terminals(sources):
    app = make_app(sources)
    async with app.run_test(size=(60, 24)) as pilot:
        screen, _, _ = await open_stats(app, pilot, lambda s: np.ones(len(s), dtype=bool))
        body = screen.query_one("#stats-body")
        view = screen.query_one(MatrixView)
        assert 4 <= view.size.height < 24 and body.max_scroll_y > 0  # the page scrolls
        assert "▶" in text_of(screen.query(".table-header").first())  # more model columns to the right
        for _ in range(len(view.models)):
            await pilot.press("l")
        assert view.column == len(view.models) - 1
        assert "◀" in text_of(screen.query(".table-header").first())
        body.focus()
        await pilot.press("G")
        await pilot.wait_for_scheduled_animations()
        assert body.scroll_y == body.max_scroll_y and "Text per trial" in screen_text(app)

        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        charts = [screen.query_one(f"#chart-{name}") for name in ("results", "episodes", "messages", "size")]
        assert len({chart.region.y for chart in charts}) == 1  # four across
        assert "▶" not in text_of(screen.query(".table-header").first())  # every model fits


def test_histogram_bars_label_bins_by_their_values():
    bars = histogram_bars(histogram(np.array([1, 2, 2, 3, 9, 40])))
    assert [label for label, _, _ in bars][:3] == ["1–2", "3–4", "5–6"]
    assert [count for _, count, _ in bars][:2] == [3, 1] and sum(c for _, c, _ in bars) == 6
    console = Console(width=40, record=True)
    console.print(BarChart("Episodes per trial", bars))
    lines = console.export_text().splitlines()
    assert lines[0] == "Episodes per trial"
    assert lines[1].split()[:2] == ["1–2", "3"] and lines[1].rstrip().endswith("█") and len(lines[1]) <= 40
    assert lines[2].split()[:2] == ["3–4", "1"] and lines[2].count("█") < lines[1].count("█")
