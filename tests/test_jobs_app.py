"""The app on a harbor job run in progress (issue 22, live): a trial goes from running to finished while the
app is open, and the user's cursor, scroll position and filters stay."""

from __future__ import annotations

import time

from tracetui.data.facets import FilterState
from tracetui.data.session import prepare
from tracetui.data.sources import SourceSpec
from tracetui.ui.app import StartOptions

from .jobs_helpers import SAMPLE, copy_tree
from .test_jobs_live import RUNNING, finish, grow, running_folder
from .ui_helpers import make_app, text_of, wait_loaded


async def wait_for(pilot, done, seconds: float = 5.0) -> float:
    began = time.monotonic()
    while not done():
        assert time.monotonic() - began < seconds, "the change did not show"
        await pilot.pause(0.05)
    return time.monotonic() - began


async def reading_the_running_trial(pilot):
    """The running trial open, its conversation focused and moved two messages down, once the findings
    are in: (screen, trial)."""
    screen = await wait_loaded(pilot.app, pilot)
    await wait_for(pilot, lambda: screen.findings.index is not None)
    order = list(screen.trial_list.order)
    trial = next(t for t in order if pilot.app.session.info(t).trial_name == RUNNING)
    screen.trial_list.move_to(order.index(trial))
    await pilot.pause()
    screen.conversation.focus()
    await pilot.press("j", "j")
    return screen, trial


async def test_a_trial_finishes_while_the_app_is_open(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    state = FilterState({"dataset": frozenset({"2026-07-01__12-00-00"})})
    app = make_app(prepare([SourceSpec(str(jobs))]), StartOptions(state))
    async with app.run_test(size=(120, 40)) as pilot:
        screen, trial = await reading_the_running_trial(pilot)
        session, conversation, order = app.session, screen.conversation, list(screen.trial_list.order)
        header = screen.query_one("#header")
        assert "1 running" in text_of(header)
        before = (conversation.scroll_offset.y, conversation.current, len(conversation.messages))
        assert before[0] > 0 and session.info(trial).outcome == "running"

        grow(running_folder(jobs), 2)
        finish(running_folder(jobs))
        seconds = await wait_for(pilot, lambda: session.info(trial).outcome == "pass")
        await pilot.pause()
        assert seconds < 2.0
        assert screen.trial == trial and screen.trial_list.current_trial == trial  # the cursor stayed
        assert screen.state == state and list(screen.trial_list.order) == order  # so did the filters
        assert (conversation.scroll_offset.y, conversation.current) == before[:2]  # and the scroll
        assert len(conversation.messages) == before[2] + 4  # the conversation grew
        assert "1 passed" in (screen.verifier.text or "") and "running" not in text_of(header)
        assert screen.verifiers.index is not None and screen.verifiers.index.short[trial] == "1/1 tests"


async def test_a_trial_that_cannot_be_read_says_which_file_and_why(tmp_path):
    from .jobs_helpers import write_job, write_trial

    job = write_job(tmp_path / "jobs" / "bad")
    write_trial(job, "good__aaaaaaa")
    (write_trial(job, "notjson__bbbbbbb") / "agent" / "trajectory.json").write_text('{"steps": [')
    app = make_app(prepare([SourceSpec(str(job))]))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        order = list(screen.trial_list.order)
        broken = next(t for t in order if app.session.info(t).trial_name == "notjson__bbbbbbb")
        screen.trial_list.move_to(order.index(broken))
        await pilot.pause()
        shown = [block.text for block in screen.conversation.blocks]
        assert len(shown) == 1 and shown[0].startswith("This trial could not be read: agent/trajectory.json: not JSON")


def datasets_listed(screen) -> list[str]:
    """The values the sidebar lists under the dataset facet."""
    facets = screen.facet_list
    return [
        facets.shown_label("dataset", facets._facet("dataset").labels[row.code])
        for row in facets.rows
        if row.facet == "dataset" and row.code >= 0
    ]


async def test_a_job_folder_new_in_the_jobs_root_shows_while_the_app_is_open(tmp_path):
    from .jobs_helpers import write_job, write_trial

    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    state = FilterState({"outcome": frozenset({"pass", "fail", "running"})})
    app = make_app(prepare([SourceSpec(str(jobs))]), StartOptions(state))
    async with app.run_test(size=(120, 40)) as pilot:
        screen, trial = await reading_the_running_trial(pilot)
        session, conversation, order = app.session, screen.conversation, list(screen.trial_list.order)
        before = (conversation.scroll_offset.y, conversation.current)
        assert "2026-07-02__08-00-00" not in datasets_listed(screen)

        job = write_job(jobs / "2026-07-02__08-00-00", finished=False)
        write_trial(job, "s-new-task__JobTwo1")
        seconds = await wait_for(pilot, lambda: len(screen.trial_list.order) == len(order) + 1)
        await pilot.pause()
        assert seconds < 2.0
        new = next(t for t in screen.trial_list.order if t not in order)
        assert (session.info(new).trial_name, session.info(new).dataset) == ("s-new-task__JobTwo1", job.name)
        assert screen.trial == trial and screen.trial_list.current_trial == trial  # the cursor stayed
        assert screen.state == state  # so did the filters
        assert (conversation.scroll_offset.y, conversation.current) == before  # and the scroll
        assert job.name in datasets_listed(screen)  # the dataset facet has the new job
        await wait_for(pilot, lambda: screen.verifiers.index is not None and len(screen.verifiers.index.short) > new)
        assert screen.verifiers.index.short[new] == "1/1 tests"


async def test_the_list_makes_its_columns_again_when_a_run_brings_new_names(tmp_path):
    """A jobs root of one job has no dataset column; a second job joining while the app is open brings
    it (the columns are made over the names the session has now, not those it had at start)."""
    from shutil import rmtree

    from .jobs_helpers import write_job, write_trial

    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    rmtree(jobs / "2026-07-01__12-00-00")
    app = make_app(prepare([SourceSpec(str(jobs))]))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        trial_list = screen.trial_list
        assert "dataset" not in [column.key for column, _ in trial_list.columns()]
        job = write_job(jobs / "2026-07-02__08-00-00", finished=False)
        write_trial(job, "s-new-task__JobTwo1")
        before = len(trial_list.order)
        await wait_for(pilot, lambda: len(trial_list.order) == before + 1)
        await pilot.pause()
        shown = [column.key for column, _ in trial_list.columns()]
        assert "dataset" in shown


HOSTILE_NAME = "evil\x1b]0;owned\x07\u202e.txt"


def hostile_files(folder) -> None:
    """What an agent's environment could leave in a trial folder: escape sequences in a log and in a file
    name, a binary file, a link out of the folder."""
    (folder / "agent" / "terminus_2.pane").write_text("$ ls\n\x1b]52;c;ZXZpbA==\x07\x1b[31mred\x1b[0m done\n")
    (folder / "artifacts").mkdir()
    (folder / "artifacts" / HOSTILE_NAME).write_text("artifact text\n")
    (folder / "artifacts" / "plot.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (folder / "artifacts" / "passwd").symlink_to("/etc/passwd")
    (folder / "trial.log").write_text("trial started\n")


async def test_the_trials_other_files_open_in_the_pager(tmp_path, monkeypatch):
    from contextlib import nullcontext

    from tracetui.ui.triage.trial_files import NO_FOLDER, FilePicker

    from .jobs_helpers import tree_state

    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    folder = jobs / "2026-07-01__09-00-00" / "s-hello-world__7FsD8bw"
    hostile_files(folder)
    before = tree_state(jobs)
    seen = tmp_path / "seen.txt"
    script = tmp_path / "pager.sh"
    script.write_text(f'#!/bin/sh\ncat "$1" > {seen}\n')
    script.chmod(0o755)
    monkeypatch.setenv("PAGER", str(script))
    app = make_app(prepare([SourceSpec(str(jobs)), SourceSpec(str(SAMPLE / "export" / "hub"))]))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_loaded(app, pilot)
        monkeypatch.setattr(type(app), "suspend", lambda self: nullcontext())  # headless: nothing to hand over
        session = app.session
        order = list(screen.trial_list.order)
        trial = next(t for t in order if session.trial_folder(t) == folder)
        screen.trial_list.move_to(order.index(trial))
        await pilot.pause()
        await pilot.press("T")
        await wait_for(pilot, lambda: isinstance(app.screen, FilePicker))
        picker = app.screen
        choices = picker.query_one("#picker-choices")
        lines = [choices.get_option_at_index(n).prompt.plain for n in range(choices.option_count)]
        pane = (folder / "agent" / "terminus_2.pane").stat().st_size
        assert lines[0].split() == ["agent", "log", str(pane), "B", "agent/terminus_2.pane"]
        kinds = [line[:10].strip() for line in lines]
        assert kinds == sorted(
            kinds,
            key=["agent log", "verifier", "artifact", "config", "trial log", "result", "trajectory", "recording"].index,
        )  # harbor view's order
        assert not any(c in "".join(lines) for c in "\x1b\x07\u202e")  # the hostile name, sanitized
        assert any("link" in line and "artifacts/passwd" in line for line in lines)

        await pilot.press("enter")  # the agent log, in the pager
        await wait_for(pilot, lambda: seen.exists())
        assert seen.read_text() == "$ ls\nred done\n" and not isinstance(app.screen, FilePicker)

        for name, said in (("plot.png", "is a binary file"), ("passwd", "is a symbolic link: not followed")):
            await pilot.press("T")
            await wait_for(pilot, lambda: isinstance(app.screen, FilePicker))
            choices = app.screen.query_one("#picker-choices")
            choices.highlighted = next(n for n, line in enumerate(lines) if line.endswith(f"artifacts/{name}"))
            await pilot.press("enter")
            await wait_for(pilot, lambda said=said: said in text_of(screen.query_one("#status")))

        await pilot.press("T", "escape")  # Esc closes the picker, nothing opened
        await pilot.pause()
        assert not isinstance(app.screen, FilePicker)

        dataset_trial = next(t for t in order if session.trial_folder(t) is None)
        screen.trial_list.move_to(list(screen.trial_list.order).index(dataset_trial))
        await pilot.pause()
        await pilot.press("T")
        await pilot.pause()
        assert text_of(screen.query_one("#status")).startswith(NO_FOLDER[:40]) and not isinstance(
            app.screen, FilePicker
        )
    assert tree_state(jobs) == before  # nothing written into the job folders


async def test_the_trials_files_from_the_command_palette(tmp_path):
    from tracetui.ui.triage.trial_files import FilePicker

    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    app = make_app(prepare([SourceSpec(str(jobs))]))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_loaded(app, pilot)
        await pilot.press("ctrl+p", *"other files")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, FilePicker))
        assert app.screen.files  # the trial's files, listed
