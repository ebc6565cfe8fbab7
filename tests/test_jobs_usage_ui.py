"""Tokens, cost and time in the app (issue 22, item 4): each agent message's header, the trial list's
columns and sort orders, the verifier panel's time split and the stats screen's usage and Pareto tables,
on a harbor job folder; and none of it (no column, no header figure, no zero) on its exported dataset."""

from __future__ import annotations

import re

import numpy as np

from tracetui.data.facets import FilterState
from tracetui.data.session import prepare
from tracetui.data.sources import SourceSpec
from tracetui.data.usage import group_usage, pareto
from tracetui.render.figures import cost, step_usage
from tracetui.ui.screens.stats import StatsScreen
from tracetui.ui.widgets.usage_table import FRONTIER, ParetoTable, UsageTable

from .jobs_helpers import SAMPLE, copy_tree
from .ui_helpers import make_app, text_of, visible_lines, wait_loaded

FAIL = "s-fizz-buzz__fRDnSf2"
"""A finished claude trial of the sample: every step reports tokens and cost; 2m05s agent, 25s verifier."""


def jobs_app(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    return make_app(prepare([SourceSpec(str(jobs))]))


def export_app(tmp_path):
    return make_app(prepare([SourceSpec(str(copy_tree(SAMPLE / "export" / "hub", tmp_path / "hub")))]))


async def select(screen, pilot, name: str) -> int:
    order = list(screen.trial_list.order)
    trial = next(t for t in order if screen.session.info(t).trial_name == name)
    screen.trial_list.move_to(order.index(trial))
    await pilot.pause()
    return trial


def headers(conversation) -> list[str]:
    conversation.ensure_built()
    return [b.text for b in conversation.blocks if re.match(r"(assistant|user|system)  ", b.text)]


async def test_message_headers_show_each_steps_tokens_and_cost(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        trial = await select(screen, pilot, FAIL)
        history = app.session.history(trial)
        reported = [m for m in history.metrics if m is not None]
        assert len(reported) == len(history.episodes) and all(m.cost_usd for m in reported)
        shown = [h for h in headers(screen.conversation) if h.startswith("assistant")]
        assert len(shown) == len(reported)
        for header, metrics in zip(shown, reported):
            assert header.endswith(" · " + step_usage(metrics))
            assert f"{metrics.completion_tokens} out" in header and cost(metrics.cost_usd) in header
        assert not any(" in · " in h for h in headers(screen.conversation) if h.startswith("user"))


async def open_stats(app, pilot, results=None):
    screen = await wait_loaded(app, pilot)
    mask = np.ones(len(app.session), dtype=bool)
    app.push_screen(StatsScreen(app.session, mask), callback=None if results is None else results.append)
    await pilot.pause()
    await pilot.pause()
    return screen, mask


async def test_stats_screen_gives_usage_per_model_and_task_and_the_pareto_view(tmp_path):
    for size in ((80, 24), (120, 40)):
        app = jobs_app(tmp_path / f"{size[0]}")
        async with app.run_test(size=size) as pilot:
            _, mask = await open_stats(app, pilot)
            session = app.session
            stats = app.screen
            assert len(session.datasets) == 2  # two jobs: a usage table per dataset too
            for column in ("model", "dataset", "task"):
                table = stats.query_one(f"#stats-usage-{column}", UsageTable)
                expected = group_usage(session, mask, (column,))
                assert repr({(key,): usage for key, usage in table.rows}) == repr(expected)  # NaN != NaN
            models = stats.query_one("#stats-usage-model", UsageTable)
            lines = visible_lines(models)
            for (_, usage), line in zip(models.rows, lines):
                figure = "—" if np.isnan(usage.means["cost_usd"]) else cost(usage.means["cost_usd"])
                assert figure in line  # the mean cost per trial stays at 80 columns
            points = pareto(session, mask)
            table = stats.query_one(ParetoTable)
            assert table.points == points and points
            marked = [line for line in visible_lines(table) if FRONTIER in line]
            assert len(marked) == sum(p.frontier for p in points)
            for name in ("claude-sonnet-4-5", "Qwen3-8B"):  # names stay whole at 80 columns
                assert any(line.lstrip().startswith(name) for line in lines)
            assert "$/pass" in text_of(models.parent.query_one(".table-header"))


async def test_enter_on_a_usage_row_filters_to_its_group(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        results: list = []
        await open_stats(app, pilot, results)
        table = app.screen.query_one(ParetoTable)
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert results == [FilterState({"model": frozenset({table.points[0].model})})]


async def indexed(app, pilot):
    """The triage screen once the verifier index is in: its tests column takes room from the others, so
    what gives way is seen with every column there (the index comes in after the first frame)."""
    screen = await wait_loaded(app, pilot)
    for _ in range(400):
        if screen.verifiers.index is not None:
            await pilot.pause()
            return screen
        await pilot.pause(0.02)
    raise AssertionError("the verifier index did not come in")


async def test_trial_list_columns_sort_and_give_way(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await indexed(app, pilot)
        session, trials = app.session, screen.trial_list
        assert session.ordering.keys[-3:] == ("tokens", "cost", "agent_time")
        header = trials.header().plain
        assert all(title in header for title in ("tokens", "cost", "agent"))
        lines = visible_lines(trials)
        cells = {session.info(t).trial_name: lines[i] for i, t in enumerate(trials.order)}
        assert "$0.045" in cells[FAIL] and "2m05s" in cells[FAIL]
        running = next(session.info(t).trial_name for t in trials.order if session.info(t).outcome == "running")
        assert "$" not in cells[running] and "0s" not in cells[running]  # nothing recorded: blank, not $0
        while screen.filters.sort_key != "cost":
            await pilot.press("o")
        for reverse in (False, True):
            costs = [session.usage_of(t).cost_usd for t in trials.order]
            known = [c for c in costs if not np.isnan(c)]
            assert len(known) == 2 and known == sorted(known, reverse=reverse)
            assert all(np.isnan(c) for c in costs[len(known) :])  # trials without a cost last, either way
            assert ("cost ▼" if reverse else "cost ▲") in trials.header().plain
            await pilot.press("O")
    app = jobs_app(tmp_path / "narrow")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await indexed(app, pilot)
        header = screen.trial_list.header().plain
        assert not any(title in header for title in ("tokens", "cost", "agent"))  # they gave way
        lines = visible_lines(screen.trial_list)
        for trial, line in zip(screen.trial_list.order, lines):  # the names stay whole
            info = app.session.info(trial)
            assert info.task in line and screen.trial_list.model_names[info.model] in line


async def test_verifier_panel_splits_the_trials_time(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await select(screen, pilot, FAIL)
        await pilot.pause()
        texts = [b.text for b in screen.verifier.blocks]
        assert texts[1] == "⏱ agent 2m05s · verifier 25s · total 2m40s"
        assert texts[2] == "$0.045 · 4.4k uncached in · 4.8k cached in · 1.2k out"
        assert visible_lines(screen.verifier)[1].strip() == texts[1]  # in view at 80x24


async def test_an_exported_dataset_shows_no_usage_anywhere(tmp_path):
    app = export_app(tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        session = app.session
        assert session.ordering.keys[-1] == "date"  # no tokens, cost or agent_time order
        header = screen.trial_list.header().plain
        assert not any(title in header for title in ("tokens", "cost", "agent"))
        await select(screen, pilot, FAIL)
        assert screen.conversation.messages
        assert not any(re.search(r" (in|out|cached) · |\$", h) for h in headers(screen.conversation))
        assert not any("⏱" in b.text or "cached in" in b.text for b in screen.verifier.blocks)
        for _ in session.ordering.keys:
            await pilot.press("o")
            assert screen.filters.sort_key in session.ordering.keys
        app.push_screen(StatsScreen(session, np.ones(len(session), dtype=bool)))
        await pilot.pause()
        assert not app.screen.query(UsageTable) and not app.screen.query(ParetoTable)
