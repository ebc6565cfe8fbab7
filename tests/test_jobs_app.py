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


async def test_a_trial_finishes_while_the_app_is_open(tmp_path):
    jobs = copy_tree(SAMPLE / "jobs", tmp_path / "jobs")
    state = FilterState({"dataset": frozenset({"2026-07-01__12-00-00"})})
    app = make_app(prepare([SourceSpec(str(jobs))]), StartOptions(state))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        session = app.session
        await wait_for(pilot, lambda: screen.findings.index is not None)
        header = screen.query_one("#header")
        assert "1 running" in text_of(header)
        order = list(screen.trial_list.order)
        trial = next(t for t in order if session.info(t).trial_name == RUNNING)
        screen.trial_list.move_to(order.index(trial))
        await pilot.pause()
        conversation = screen.conversation
        conversation.focus()
        await pilot.press("j", "j")
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
