"""What the 80x24 walkthrough of the features since issue 23 found (docs/walkthrough-80x24.md): on a
harbor jobs root at 80x24, rows stay told apart, a key says what it did in words, and a message about
one trial goes when another one is read."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import subprocess
import sys

from rich.cells import cell_len

from tracetui.data.export import trial_markdown
from tracetui.data.session import prepare
from tracetui.data.sources import SourceSpec
from tracetui.ui.cuts import plain_cut
from tracetui.ui.screens.compare import CompareScreen
from tracetui.ui.screens.headtohead import HeadToHeadScreen
from tracetui.ui.screens.stats import StatsScreen
from tracetui.ui.widgets.columns import Column

from .jobs_helpers import SAMPLE, copy_tree, open_paths
from .llm_server import MODEL, LLMServer
from .test_output import run_in_terminal
from .test_triage_edges import status
from .ui_helpers import make_app, text_of, visible_lines, wait_loaded


def jobs_app(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    return make_app(prepare([SourceSpec(str(jobs))]))


async def test_the_dataset_column_tells_two_jobs_of_one_day_apart(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        trials = screen.trial_list
        shown = dict(trials.columns())
        dataset = next(c for c in shown if c.key == "dataset")
        cells = {dataset.value(t, shown[dataset]) for t in trials.order}
        assert len(cells) == len(app.session.dataset_names) == 2, cells  # `2026-07…` twice before
        lines = visible_lines(trials)
        assert all(cell in "\n".join(lines) for cell in cells)


async def test_the_order_by_a_figure_keeps_its_column_and_reads_in_words(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        trials = screen.trial_list
        for key, title in (("messages", "msgs"), ("tokens", "tokens"), ("cost", "cost"), ("agent_time", "agent")):
            while screen.filters.sort_key != key:
                await pilot.press("o")
            assert re.search(f"{title} ?▲", trials.header().plain), key  # the column of the order shows, marked
            assert status(screen) == f"Sorted by {key.replace('_', ' ')}."
        await pilot.press("O")
        assert status(screen) == "Sorted by agent time (reversed)."


async def test_no_recording_goes_once_another_trial_is_read(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        order = list(screen.trial_list.order)
        without = next(t for t in order if app.session.recording(t) is None)
        screen.trial_list.move_to(order.index(without))
        await pilot.pause()
        await pilot.press("r")
        assert status(screen) == "No recording for this trial."
        other = next(t for t in order if t != without)
        screen.trial_list.move_to(order.index(other))
        await pilot.pause()
        assert "recording" not in status(screen)


async def test_every_stats_section_title_is_read_whole_at_80_columns(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("S")
        await pilot.pause()
        stats = app.screen
        assert isinstance(stats, StatsScreen) and stats is not screen
        titles = list(stats.query(".section-title"))
        assert any(cell_len(t.render().plain) > 78 for t in titles)  # some do not fit one line
        for title in titles:
            text = title.render()
            lines = text.wrap(title.content_region.width)
            assert title.content_region.height >= len(lines), text.plain  # `Per model (… passes without` before


async def test_a_running_trial_says_its_verifier_has_not_run_yet(tmp_path):
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        order = list(screen.trial_list.order)
        running = next(t for t in order if app.session.info(t).outcome == "running")
        screen.trial_list.move_to(order.index(running))
        for _ in range(50):
            await pilot.pause(0.02)
            lines = " ".join(visible_lines(screen.verifier)).split()
            if lines:
                break
        said = " ".join(lines)
        assert "has not run yet: the trial is still running." in said, said  # `did not run` before
        assert "did not run" not in said


def test_a_running_trials_markdown_says_its_verifier_has_not_run_yet(tmp_path):
    session = open_paths(copy_tree(SAMPLE / "jobs", tmp_path / "jobs"))
    running = next(t for t in range(len(session)) if session.info(t).outcome == "running")
    text = trial_markdown(session, running)  # what `y` copies and the pager shows
    assert "## Result\n\nRUNNING · no result · the verifier has not run yet\n" in text


def test_stats_at_80_columns_leaves_out_a_column_blank_in_every_row_first(tmp_path):
    """`stats --by task` on a job folder: the interval (`-` for every task of two trials) goes before
    `error`, so pass, fail and error add up to the trials."""
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    shown = run_in_terminal(["stats", str(jobs), "--by", "task"], 80)
    header = shown.splitlines()[0].split()
    assert header[:6] == ["task", "task_health", "trials", "pass", "fail", "error"], header
    assert "left out to fit 80 columns: 95%_interval," in shown


def test_ask_on_an_80_column_terminal_wraps_its_lines_at_words_and_the_quote(tmp_path):
    """Its plan and tally on stderr wrapped at spaces (`stand-\\nin/judge-1`, `0 fai\\nled` before), its
    table's quotes wrapped, not cut after 20 columns."""
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    with LLMServer() as server:
        leader, follower = pty.openpty()
        env = {**os.environ, "COLUMNS": "80", "LINES": "24"}
        args = ["ask", str(jobs), 'Did the agent print "step 1"?', "--endpoint", server.url]
        done = subprocess.run(
            [sys.executable, "-m", "tracetui", *args], stdout=follower, stderr=follower, env=env, timeout=300
        )
        os.close(follower)
        chunks = []
        with contextlib.suppress(OSError):
            while chunk := os.read(leader, 65536):
                chunks.append(chunk)
        os.close(leader)
    assert done.returncode == 0
    shown = b"".join(chunks).decode().replace("\r\n", "\n")
    screen = (line.split("\r")[-1].replace("\x1b[K", "") for line in shown.split("\n"))  # progress overwritten
    lines = [line for line in screen if line.strip()]
    assert max(len(line) for line in lines) <= 80, lines
    plan, tally = " ".join(" ".join(lines[:3]).split()), lines[-2:]
    assert f"to {MODEL} at {server.url}" in plan, plan
    assert tally[0].endswith(" 0") and tally[1].strip() == "failed)", tally  # whole words on each line
    assert sum("'print(\"HELDOUT-JOBS" in line for line in lines) == 4  # each quote's second line


async def test_a_column_narrowed_below_its_title_shows_the_title_cut(tmp_path):
    """An answers column at 80 columns (3 wide, `yes`) had no title: nothing said what it answered."""
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        trials = screen.trial_list
        trials.set_column(Column("answers", "mention-step-1", 10, lambda t, w: "yes", give_way=((33, 3), (52, 0))))
        await pilot.pause()
        width = {c.key: w for c, w in trials.columns()}["answers"]
        assert width < len("mention-step-1")
        assert plain_cut("mention-step-1", width) in trials.header().plain


async def test_head_to_head_of_two_jobs_with_no_task_graded_on_both_sides_says_so(tmp_path):
    """The second job's trials of the shared tasks errored or still run: W raised (NaN points)."""
    for size in ((80, 24), (120, 40)):
        app = jobs_app(tmp_path / str(size[0]))
        async with app.run_test(size=size) as pilot:
            screen = await wait_loaded(app, pilot)
            await pilot.press("W")
            await pilot.pause()
            assert isinstance(app.screen, HeadToHeadScreen) and app.screen is not screen
            verdict = " ".join(text_of(app.screen.query_one("#h2h-verdict")).split())
            assert verdict.startswith("A − B: no shared task graded on both sides"), verdict
            await pilot.press("escape")
            assert app.screen is screen


async def test_compare_titles_of_two_jobs_drop_the_dataset_before_cutting_the_model(tmp_path):
    """At 80x24 a side's title read `Qwen3-8B…` (the job name cut off after it) and `claude-so……`."""
    app = jobs_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        order = list(screen.trial_list.order)
        trial = next(t for t in order if app.session.info(t).outcome == "fail")
        screen.trial_list.move_to(order.index(trial))
        await pilot.pause()
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("enter")
        for _ in range(100):
            if isinstance(app.screen, CompareScreen):
                break
            await pilot.pause(0.02)
        await pilot.pause()
        compare = app.screen
        assert isinstance(compare, CompareScreen)
        names = compare.model_names
        for side, shown in zip(("left", "right"), compare.trials):
            title = text_of(compare.query_one(f"#{side}-title")).rstrip()
            model = names.get(app.session.info(shown).model, app.session.info(shown).model)
            assert "……" not in title, title
            assert title.endswith(model) or (title.endswith("…") and model.startswith(title.split()[-1][:-1])), title
