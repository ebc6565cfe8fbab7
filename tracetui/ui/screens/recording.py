"""The recording screen (`r`): a trial's terminal recording played back, from the episode being read.

One worker thread owns the emulator (`data.recordings.Player`): it indexes the file, then waits for the
time the screen wants shown, replays to it in slices of `SLICE` seconds and posts each new screen,
already rendered to segments. The UI thread only keeps the clock (a timer while playing) and crops
rows, so neither 8x on a long recording nor a seek across it ever blocks a key; a new target is taken up
within a slice, and a long seek shows the replay going (the message line gives its progress).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from rich.segment import Segment
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import get_current_worker

from ...data.recordings import Cast, Frame, Player, RecordingError
from ...render.terminal_screen import frame_lines
from ...trace.sanitize import sanitize
from .. import keymap
from ..widgets.bars import InfoBar
from ..widgets.recording_bar import BarState, RecordingBar, clock, speed_text
from ..widgets.terminal_view import TerminalView

SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0)
FPS = 30
SLICE = 0.05
"""Seconds of replay between two looks at the wanted time (and two screens shown during a long seek)."""
BACK_TO_PREVIOUS = 1.0
"""`[` within this many seconds after a marker goes to the marker before it (as players do)."""


@dataclass
class Opened(Message):
    cast: Cast


@dataclass
class Failed(Message):
    text: str


@dataclass
class Framed(Message):
    """A new screen: its rows rendered, and whether the replay reached the wanted time (`fraction` of
    the way there when not)."""

    frame: Frame
    lines: list[list[Segment]]
    fraction: float | None


class RecordingScreen(Screen[None]):
    """Opened on a cast file's path; `episode` (the one being read) picks where it starts."""

    BINDINGS = [*keymap.RECORDING]

    def __init__(self, path: Path, title: str = "", episode: int | None = None) -> None:
        super().__init__()
        self.path = path
        self.heading = title or path.name
        self.episode = episode
        self.cast: Cast | None = None
        self.problem: str | None = None
        """Why the recording cannot be played, once known."""
        self.playing = False
        self.speed = 1.0
        self._anchor = 0.0
        """The position when the clock last started or was set."""
        self._wall = 0.0
        self._target = 0.0
        self._wanted = threading.Event()
        self._replaying = False
        self._said = ""

    def compose(self) -> ComposeResult:
        yield InfoBar(id="recording-header")
        yield TerminalView(id="recording-screen")
        yield RecordingBar(id="recording-bar")
        yield InfoBar(id="recording-status")
        yield Footer()

    @property
    def view(self) -> TerminalView:
        return self.query_one(TerminalView)

    def on_mount(self) -> None:
        self._ticker = self.set_interval(1 / FPS, self._tick, pause=True)
        self._show_header()
        self.status("Reading the recording…")
        self.play_back()

    def on_unmount(self) -> None:
        self.workers.cancel_node(self)
        self._wanted.set()

    # --- the worker that owns the emulator -----------------------------------------------------
    @work(thread=True, exclusive=True, group="recording", exit_on_error=False, description="Playing the recording")
    def play_back(self) -> None:
        worker = get_current_worker()
        try:
            cast = Cast.open(self.path)
        except RecordingError as exc:
            self.post_message(Failed(str(exc)))
            return
        player = Player(cast)
        self.post_message(Opened(cast))
        shown: Frame | None = None
        there = True
        while not worker.is_cancelled:
            if there and not self._wanted.wait(0.25):
                continue
            self._wanted.clear()
            target = cast.events_until(self._target)
            there = player.seek_event(target, time.monotonic() + SLICE)
            frame = player.frame()
            if frame is not shown or not there:
                shown = frame
                fraction = None if there else player.event / max(1, target)
                self.post_message(Framed(frame, frame_lines(frame), fraction))

    @on(Opened)
    def _opened(self, event: Opened) -> None:
        cast = self.cast = event.cast
        start, note = self._start(cast)
        problems = []
        if cast.skipped:
            problems.append(f"{cast.skipped:,} unreadable line{'s' if cast.skipped > 1 else ''} skipped")
        if cast.truncated:
            problems.append("its last line is cut short (still being written?)")
        self._set_position(start)
        self.status(note + (f" ({'; '.join(problems)})" if problems else ""))
        self._show_header()

    def _start(self, cast: Cast) -> tuple[float, str]:
        """Where to start, and the line that says so."""
        keys = "space plays · ←/→ seek · [/] episodes · </> speed"
        if self.episode is None:
            return 0.0, f"From the start: {keys}."
        if not cast.markers:
            return 0.0, f"This recording has no episode markers: from its start ({keys})."
        marker = cast.marker_for(self.episode)
        if marker is None:
            return 0.0, f"No marker for episode {self.episode}: from the start ({keys})."
        if marker.episode != self.episode:
            return marker.time, f"No marker for episode {self.episode}: at episode {marker.episode}'s ({keys})."
        return marker.time, f"Episode {self.episode} starts at {clock(marker.time)}: {keys}."

    @on(Failed)
    def _failed(self, event: Failed) -> None:
        self.problem = event.text
        self.status("Cannot play this recording (Esc goes back).")
        self.view.show_text(f"Cannot play this recording:\n{sanitize(event.text)}")
        self._show_header()

    @on(Framed)
    def _framed(self, event: Framed) -> None:
        frame = event.frame
        self.view.show(event.lines, frame.columns, frame.cursor[1] if frame.cursor is not None else None)
        if event.fraction is not None:
            self._replaying = True
            self._show_status(f"Replaying the recording to {clock(self._target)}… {event.fraction:.0%}")
        elif self._replaying:  # what the last key said comes back
            self._replaying = False
            self._show_status(self._said)
        self.call_after_refresh(self._show_header)  # once the scroll bars the new size needs are in

    # --- the clock -----------------------------------------------------------------------------
    @property
    def duration(self) -> float:
        return self.cast.duration if self.cast is not None else 0.0

    def position(self) -> float:
        if not self.playing:
            return self._anchor
        return min(self.duration, self._anchor + (time.monotonic() - self._wall) * self.speed)

    def _set_position(self, t: float) -> None:
        self._anchor = min(max(0.0, t), self.duration)
        self._wall = time.monotonic()
        self._want(self._anchor)

    def _want(self, t: float) -> None:
        self._target = t
        self._wanted.set()
        self._show_bar(t)

    def _tick(self) -> None:
        t = self.position()
        if t >= self.duration:
            self._pause()
            self._anchor = self.duration
            self.status("End of the recording (space plays it again).")
        self._want(t)

    def _pause(self) -> None:
        self._anchor = self.position()
        self.playing = False
        self._ticker.pause()

    def _show_bar(self, t: float) -> None:
        cast = self.cast
        if cast is None:
            return
        shown = cast.marker_at(t)
        episode = cast.markers[shown].episode if shown is not None else None
        times = tuple(m.time for m in cast.markers)
        state = BarState(t, cast.duration, times, shown, episode, self.playing, self.speed)
        self.query_one(RecordingBar).show(state)

    def _show_header(self) -> None:
        cast = self.cast
        parts: list = [("Recording ", "bold"), (self.heading, "bold")]
        if cast is not None:
            parts.append(
                f"  ·  {self.view.virtual_size.width or cast.columns}×{self.view.virtual_size.height or cast.lines}"
            )
            cropped = self.view.cropped
            if cropped is not None:
                parts.append((f"  ·  columns {cropped[0]}–{cropped[1]} (h / l)", "dim"))
        elif self.problem is not None:
            parts.append(("  ·  cannot be played", "red"))
        self.query_one("#recording-header", InfoBar).show(*parts)

    def status(self, text: str) -> None:
        """The message line: what the last action did (a long replay's progress shows over it meanwhile)."""
        self._said = text
        if not self._replaying:
            self._show_status(text)

    def _show_status(self, text: str) -> None:
        self.query_one("#recording-status", InfoBar).show((text, "italic"))

    def _playable(self) -> bool:
        """Whether there is something to play; else the message line says why not."""
        if self.cast is not None:
            return True
        self.status(f"Nothing to play: {self.problem}" if self.problem else "The recording is still being read…")
        return False

    # --- keys ----------------------------------------------------------------------------------
    def action_play_pause(self) -> None:
        if not self._playable():
            return
        if self.playing:
            self._pause()
            self.status(f"Paused at {clock(self._anchor)}.")
        else:
            if self.position() >= self.duration:
                self._anchor = 0.0
            self._wall = time.monotonic()
            self.playing = True
            self._ticker.resume()
            self.status(f"Playing at {speed_text(self.speed)}.")
        self._want(self.position())

    def action_seek(self, seconds: float) -> None:
        if not self._playable():
            return
        self._set_position(self.position() + seconds)
        self.status(f"{'+' if seconds > 0 else '−'}{abs(seconds):g} s: at {clock(self._anchor)}.")

    def action_jump(self, end: int) -> None:
        if self._playable():
            self._set_position(self.duration if end else 0.0)
            self.status("At the end." if end else "At the start.")

    def action_speed(self, step: int) -> None:
        if not self._playable():
            return
        index = SPEEDS.index(self.speed) + step
        if not 0 <= index < len(SPEEDS):
            self.status(f"Already at the {'fastest' if step > 0 else 'slowest'} speed ({speed_text(self.speed)}).")
            return
        self._anchor = self.position()
        self._wall = time.monotonic()
        self.speed = SPEEDS[index]
        self.status(f"Speed {speed_text(self.speed)}.")
        self._show_bar(self._anchor)

    def action_marker(self, step: int) -> None:
        cast = self.cast
        if not self._playable() or cast is None:
            return
        if not cast.markers:
            self.status("This recording has no episode markers.")
            return
        now = self.position()
        if step > 0:
            found = next((n for n, m in enumerate(cast.markers) if m.time > now + 0.01), None)
        else:
            found = next(
                (n for n in range(len(cast.markers) - 1, -1, -1) if cast.markers[n].time < now - BACK_TO_PREVIOUS), None
            )
        if found is None:
            self.status("No episode marker after this point." if step > 0 else "No episode marker before this point.")
            return
        marker = cast.markers[found]
        self._set_position(marker.time)
        self.status(f"{marker.label or 'Marker'} ({found + 1} of {len(cast.markers)} markers) at {clock(marker.time)}.")

    def action_pan(self, columns: int, lines: int) -> None:
        self.view.pan(columns, lines)

    @on(TerminalView.Panned)
    def _panned(self) -> None:
        self._show_header()

    @on(RecordingBar.Seek)
    def _clicked(self, event: RecordingBar.Seek) -> None:
        if self._playable():
            self._set_position(event.time)
            self.status(f"At {clock(self._anchor)}.")

    def action_close(self) -> None:
        self.dismiss(None)
