"""The recording's position bar: playing or paused, the time, the speed, the episode shown, and a track
with a tick at each episode marker (a click on the track seeks there)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widget import Widget


def clock(seconds: float, hours: bool = False) -> str:
    """`1:23.4`, or `1:02:03` for a recording an hour long or more."""
    if hours:
        whole = int(seconds)
        return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
    minutes, rest = divmod(max(0.0, seconds), 60)
    return f"{int(minutes)}:{rest:04.1f}"


def speed_text(speed: float) -> str:
    return f"{speed:g}x"


@dataclass(frozen=True, slots=True)
class BarState:
    position: float
    duration: float
    markers: tuple[float, ...]
    """Times of the episode markers."""
    shown: int | None
    """Index of the marker of the episode being shown."""
    episode: int | None
    """The episode being shown (its marker's)."""
    playing: bool
    speed: float


class RecordingBar(Widget):
    COMPONENT_CLASSES = {
        "recording-bar--played",
        "recording-bar--rest",
        "recording-bar--marker",
        "recording-bar--shown",
        "recording-bar--head",
    }

    class Seek(Message):
        """A click on the track: play from `time` (not a dataclass: `time` is also Message's own field,
        set after a dataclass's fields)."""

        def __init__(self, time: float) -> None:
            super().__init__()
            self.time = time

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state: BarState | None = None
        self._track: tuple[int, int] = (0, 0)
        """Where the track is drawn: (first cell, width)."""

    def show(self, state: BarState) -> None:
        if state != self.state:
            self.state = state
            self.refresh()

    def render(self) -> Text:
        state = self.state
        if state is None:
            return Text("")
        hours = state.duration >= 3600
        head = f"{'▶' if state.playing else '⏸'} {clock(state.position, hours)} / {clock(state.duration, hours)}"
        head += f"  {speed_text(state.speed)}"
        if state.episode is not None and state.episode >= 0:
            head += f"  episode {state.episode}"
        text = Text(head + "  ", no_wrap=True, overflow="crop")
        width = self.content_region.width - text.cell_len
        self._track = (text.cell_len, width)
        if width >= 8:
            text.append_text(self._track_text(state, width))
        return text

    def _track_text(self, state: BarState, width: int) -> Text:
        def cell(t: float) -> int:
            return min(width - 1, int(t / state.duration * width)) if state.duration > 0 else 0

        head = cell(state.position)
        marks = {cell(t): n for n, t in enumerate(state.markers)}
        style = self.get_component_rich_style
        track = Text(no_wrap=True, overflow="crop")
        for x in range(width):
            if x == head:
                track.append("●", style("recording-bar--head"))
            elif x in marks:
                shown = marks[x] == state.shown
                track.append("┃", style("recording-bar--shown" if shown else "recording-bar--marker"))
            else:
                track.append(
                    "━" if x < head else "─", style("recording-bar--played" if x < head else "recording-bar--rest")
                )
        return track

    def on_click(self, event: events.Click) -> None:
        first, width = self._track
        state, offset = self.state, event.get_content_offset(self)
        if state is None or offset is None or width < 8 or not first <= offset.x < first + width:
            return
        self.post_message(self.Seek((offset.x - first + 0.5) / width * state.duration))
