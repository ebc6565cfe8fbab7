"""The recording screen under Pilot: where it opens, play / pause, seeks, speed, episode markers, the
crop of a wide recording, hostile output, a file that is no recording, and `r` on the triage screen."""

from __future__ import annotations

import itertools
import random
import time
from pathlib import Path

from tracetui.data.session import Session
from tracetui.ui.screens.recording import RecordingScreen
from tracetui.ui.widgets.recording_bar import RecordingBar

from .casts import SAMPLE, hostile_events, shell_output, write_cast
from .recording_viewer import RecordingViewer
from .test_trace_sanitize import UNSAFE
from .ui_helpers import make_app, text_of, visible_lines, wait_loaded


async def opened(app, pilot) -> RecordingScreen:
    """The recording screen once its file is read and the first screen shown."""
    for _ in range(1500):  # up to ~30 s: a loaded machine starts the worker late
        screen = app.screen
        if isinstance(screen, RecordingScreen) and (
            screen.problem or (screen.cast and screen.view.virtual_size.height)
        ):
            await pilot.pause()
            return screen
        await pilot.pause(0.02)
    raise AssertionError("the recording did not open")


async def settled(pilot, screen: RecordingScreen, text: str) -> list[str]:
    """The lines shown once `text` is among them (the worker posts the screen a moment after a seek)."""
    for _ in range(1000):  # up to ~20 s on a loaded machine
        lines = visible_lines(screen.view)
        if any(text in line for line in lines):
            return lines
        await pilot.pause(0.02)
    raise AssertionError(f"{text!r} never showed: {visible_lines(screen.view)}")


def status(screen: RecordingScreen) -> str:
    return text_of(screen.query_one("#recording-status"))


async def test_it_opens_at_the_marker_of_the_episode_being_read():
    app = RecordingViewer(SAMPLE, episode=1)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        assert screen.position() == 3.5 and not screen.playing
        lines = await settled(pilot, screen, "step 0 of s-hello-world")
        assert not any("step 1 of" in line for line in lines)  # episode 1's command has not run yet
        bar = text_of(screen.query_one(RecordingBar))
        assert "0:03.5 / 0:08.5" in bar and "1x" in bar and "episode 1" in bar
        assert "Episode 1 starts at 0:03.5" in status(screen)


async def test_an_episode_without_a_marker_says_which_one_it_shows():
    app = RecordingViewer(SAMPLE, episode=7)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        assert screen.position() == 7.0 and "No marker for episode 7: at episode 2's" in status(screen)


async def test_play_pause_and_the_end():
    app = RecordingViewer(SAMPLE)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        assert screen.position() == 0.0
        await pilot.press("space")
        assert screen.playing and "Playing at 1x" in status(screen)
        await pilot.pause(0.6)
        await pilot.press("space")
        paused = screen.position()
        assert not screen.playing and 0.4 < paused < 8.5  # (Pilot waits for the process to be idle)
        await pilot.pause(0.3)
        assert screen.position() == paused
        await pilot.press("greater_than_sign", "greater_than_sign", "greater_than_sign", "space")  # 8x
        await settled(pilot, screen, "step 2 of s-hello-world")
        for _ in range(100):
            if not screen.playing:
                break
            await pilot.pause(0.05)
        assert screen.position() == 8.5 and "End of the recording" in status(screen)
        await pilot.press(*["less_than_sign"] * 4, "space")  # at 0.5x, again from the start
        assert screen.playing and screen.speed == 0.5 and screen.position() < 4.0


async def test_seeks_speed_and_markers():
    app = RecordingViewer(SAMPLE)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("right")
        assert screen.position() == 5.0
        await settled(pilot, screen, "step 1 of s-hello-world")
        await pilot.press("left")
        assert screen.position() == 0.0
        await pilot.press("shift+right")
        assert screen.position() == 8.5  # 30 s on, held at the end
        await pilot.press("g")
        assert screen.position() == 0.0
        await pilot.press("G")
        assert screen.position() == 8.5
        await pilot.press("left_square_bracket")
        assert screen.position() == 7.0 and "Episode 2 (3 of 3 markers) at 0:07.0" in status(screen)
        await pilot.press("left_square_bracket")  # just after a marker: the one before it
        assert screen.position() == 3.5
        await pilot.press("right_square_bracket", "right_square_bracket")
        assert screen.position() == 7.0 and "No episode marker after this point." in status(screen)
        await pilot.press("less_than_sign", "less_than_sign")
        assert screen.speed == 0.5 and "Already at the slowest speed (0.5x)" in status(screen)
        await pilot.press(*["greater_than_sign"] * 5)
        assert screen.speed == 8.0 and "Already at the fastest speed (8x)" in status(screen)
        assert "8x" in text_of(screen.query_one(RecordingBar))


async def test_a_click_on_the_track_seeks_there():
    app = RecordingViewer(SAMPLE)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        bar = screen.query_one(RecordingBar)
        first, width = bar._track
        await pilot.click(RecordingBar, offset=(1 + first + width // 2, 0))  # the bar has a cell of padding
        assert 3.5 < screen.position() < 5.0


async def test_a_recording_wider_than_the_pane_is_cropped_never_wrapped():
    app = RecordingViewer(SAMPLE, episode=2)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        lines = await settled(pilot, screen, "python3 -c 'print(\"step 1\")'")
        width = screen.view.scrollable_content_region.width
        assert all(len(line) == width for line in lines)
        assert "columns 1–79 (h / l)" in text_of(screen.query_one("#recording-header"))
        await pilot.press("l", "l")
        await pilot.pause()
        assert visible_lines(screen.view)[0].startswith("python3 -c")
        assert "columns 17–95 (h / l)" in text_of(screen.query_one("#recording-header"))


async def test_hostile_output_never_reaches_the_segments(tmp_path):
    path = write_cast(tmp_path / "hostile.cast", hostile_events(), {"version": 2, "width": 100, "height": 30})
    app = RecordingViewer(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("G")
        await settled(pilot, screen, "[bold red]markup[/]")
        for y in range(screen.view.scrollable_content_region.height):
            for segment in screen.view.render_line(y):
                assert not UNSAFE.search(segment.text), repr(segment.text)
                assert segment.style is None or segment.style.link is None
        assert "\x1b" not in text_of(screen.query_one(RecordingBar))


async def test_a_file_that_is_no_recording_says_so_and_keys_say_why_they_do_nothing(tmp_path):
    path = tmp_path / "broken.cast"
    path.write_text("this is not a cast\n")
    app = RecordingViewer(path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        assert status(screen) == "Cannot play this recording (Esc goes back)."
        shown = " ".join(line.strip() for line in visible_lines(screen.view))
        assert "Cannot play this recording:" in shown and "not an asciinema recording" in shown
        await pilot.press("space")
        assert status(screen).startswith("Nothing to play: ")
        await pilot.press("escape")
        await pilot.pause()
        assert app.return_code is not None or not isinstance(app.screen, RecordingScreen)


async def test_8x_on_a_long_heavy_recording_never_holds_the_ui_thread(tmp_path):
    rng = random.Random(3)
    events = [[i * 0.1, "o", shell_output(rng, 40)] for i in range(600)]  # 1.6 MB: seconds of pyte
    path = write_cast(tmp_path / "heavy.cast", events, {"version": 2, "width": 120, "height": 40})
    app = RecordingViewer(path)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await opened(app, pilot)
        beats = [time.monotonic()]
        app.set_interval(0.01, lambda: beats.append(time.monotonic()))
        screen.speed = 8.0
        await pilot.press("space")
        assert screen.playing
        for key in ["G", "g", "shift+right", "G"]:
            await pilot.press(key)  # seeks across the whole recording among them
            await pilot.pause(0.1)
        gaps = [b - a for a, b in itertools.pairwise(beats)]
        assert max(gaps) < 1.0, max(gaps)  # the emulator works in its thread: the event loop never waits long


# --- from the triage screen --------------------------------------------------------------------
async def test_r_on_a_trial_without_a_recording_says_so(sources):
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_loaded(app, pilot)
        await pilot.press("r")
        await pilot.pause()
        assert app.screen is screen and "No recording for this trial." in text_of(screen.query_one("#status"))


async def test_r_opens_the_recording_at_the_episode_of_the_message_read(sources, monkeypatch):
    # no source keeps recordings yet (job folders will): the one Session hook answers with the sample
    monkeypatch.setattr(Session, "recording", lambda self, trial: Path(SAMPLE))
    app = make_app(sources)
    async with app.run_test(size=(120, 40)) as pilot:
        triage = await wait_loaded(app, pilot)
        triage.conversation.focus()
        triage.conversation.goto_episode(1)
        await pilot.pause()
        episode = triage.conversation.episode_position()[0]
        assert episode == 1
        await pilot.press("r")
        screen = await opened(app, pilot)
        assert screen.episode == 1 and screen.position() == 3.5
        title = text_of(screen.query_one("#recording-header"))
        assert triage.session.info(triage.trial).trial_name in title
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is triage
