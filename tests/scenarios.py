"""The app states that the snapshot tests compare and that `python -m tests.scenarios OUT` saves as the
SVGs in screenshots/ (shown in the README): one list, so both always show the same states."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from tracetui.ui.app import TraceApp

from .ui_helpers import demo_sources, wait_loaded

JOBS = Path(__file__).parent / "fixtures" / "harbor-jobs" / "jobs"


async def loaded(pilot) -> None:
    """Wait for the session and for the background verifier and findings indexes, so nothing changes
    afterwards (but a job folder harbor still writes)."""
    from tracetui.ui.triage.live import GROUP as FOLLOWING  # runs while the app does: not work to wait for

    screen = await wait_loaded(pilot.app, pilot)
    for _ in range(500):
        indexed = screen.findings.index is not None
        if indexed and not any(w.is_running and w.group != FOLLOWING for w in screen.workers):
            break
        await pilot.pause(0.02)
    await pilot.pause()


async def triage(pilot) -> None:
    await loaded(pilot)


async def reading(pilot) -> None:
    await loaded(pilot)
    await pilot.press("L", "L", "enter", "l", "l")


async def reading_light(pilot) -> None:
    """The reading view in a light theme: the conversation's colours and code follow the theme."""
    pilot.app.theme = "textual-light"
    await reading(pilot)


async def filtered(pilot) -> None:
    await loaded(pilot)
    screen = pilot.app.screen
    screen.state = screen.state.toggled("outcome", "fail")
    await pilot.press("f")
    await pilot.pause()


async def verifier(pilot) -> None:
    await loaded(pilot)
    screen = pilot.app.screen
    screen.verifier.focus()
    await pilot.press("enter")
    await pilot.pause()


async def help_screen(pilot) -> None:
    await loaded(pilot)
    await pilot.press("question_mark")
    await pilot.pause()


async def stats(pilot) -> None:
    await loaded(pilot)
    await pilot.press("S")
    await pilot.pause(0.2)


async def failure(pilot) -> None:
    """F from the trial list: the verifier, focused, at the first failed test's traceback."""
    await loaded(pilot)
    await pilot.press("F")
    await pilot.pause()


async def findings(pilot) -> None:
    """Trials that claim success on a failed run, and `!`: the claim, highlighted in the conversation."""
    await loaded(pilot)
    screen = pilot.app.screen
    screen.state = screen.state.toggled("finding", "false-claim")
    screen.facet_list.state = screen.state
    screen.apply_filters()
    await pilot.pause()  # the pane heights settle (the findings pane shows) before `!` scrolls to a third of them
    await pilot.press("exclamation_mark")
    await pilot.pause()


async def compare_picker(pilot) -> None:
    """c on a trial whose task other models attempted too: the picker of the other side."""
    from tracetui.data.compare import compare_choices

    await loaded(pilot)
    screen = pilot.app.screen
    order = [int(t) for t in screen.trial_list.order]
    screen.trial_list.move_to(next(i for i, t in enumerate(order) if all(compare_choices(screen.session, t))))
    await pilot.press("c")
    await pilot.pause()


async def jobs_live(pilot) -> None:
    """A harbor jobs root while a trial runs: the running trial open, and two more of its steps written
    while the app is open (the conversation grows under the cursor)."""
    from .jobs_helpers import grow

    await loaded(pilot)
    screen = pilot.app.screen
    session = screen.session
    order = [int(t) for t in screen.trial_list.order]
    trial = next(t for t in order if session.info(t).outcome == "running")
    screen.trial_list.move_to(order.index(trial))
    await pilot.press("enter")
    await pilot.pause()
    shown = len(screen.conversation.messages)
    folder = session.trial_folder(trial)
    assert folder is not None
    grow(folder, 2)
    for _ in range(250):
        if len(screen.conversation.messages) > shown:
            break
        await pilot.pause(0.02)
    await loaded(pilot)


SCENARIOS = {
    "triage": triage,
    "reading": reading,
    "reading-light": reading_light,
    "filtered": filtered,
    "verifier": verifier,
    "failure": failure,
    "findings": findings,
    "compare-picker": compare_picker,
    "help": help_screen,
    "stats": stats,
    "jobs-live": jobs_live,
}
SIZES = ((120, 40), (100, 30), (80, 24))
CASES = [(name, size) for name in SCENARIOS for size in (SIZES[:1] if name.endswith("-light") else SIZES)]
"""(scenario, terminal size) pairs: every scenario at every size, the light-theme ones at 120x40 only."""


def demo_app(folder: Path) -> TraceApp:
    sources = [replace(s, display="demo") for s in demo_sources(folder)]
    return TraceApp(sources)


def jobs_app(folder: Path) -> TraceApp:
    """The harbor sample's jobs root, copied afresh (`jobs_live` writes into it), one trial running."""
    from tracetui.data.session import prepare
    from tracetui.data.sources import SourceSpec

    from .jobs_helpers import copy_tree

    jobs = folder.parent / "jobs"
    shutil.rmtree(jobs, ignore_errors=True)
    copy_tree(JOBS, jobs)
    sources = prepare([SourceSpec(str(jobs))])
    return TraceApp([replace(s, display=f"jobs/{Path(s.dataset_id).name}") for s in sources])


APPS = {"jobs-live": jobs_app}
"""The app of a scenario that does not show the demo datasets."""


def app_for(name: str, folder: Path) -> TraceApp:
    return APPS.get(name, demo_app)(folder)


async def save_all(out: Path) -> None:
    """Each state from a fresh start, as in the snapshot tests: its own labels and saved view (one
    scenario's filters would otherwise be resumed by the next), never the user's own."""
    with tempfile.TemporaryDirectory() as tmp:
        for name, (width, height) in CASES:
            os.environ["TRACETUI_DATA_DIR"] = tempfile.mkdtemp(dir=tmp)
            app = app_for(name, Path(tmp) / "demo")
            async with app.run_test(size=(width, height)) as pilot:
                await SCENARIOS[name](pilot)
                app.save_screenshot(str(out / f"{name}-{width}x{height}.svg"))


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "screenshots")
    target.mkdir(exist_ok=True)
    asyncio.run(save_all(target))
