"""A terminal recording (an asciinema v2 or v3 cast file) read into a compact index.

terminus-2 records the agent's tmux session as `agent/recording.cast`: a JSON header line, then one JSON
event per line, `[time, code, data]`: "o" output, "r" a resize to "COLSxROWS", "m" a marker (one per
episode), "i" input. v2 times count from the start, v3 times from the event before. The index keeps,
per output or resize event, where its line is in the file and when it happens (24 bytes an event); the
output itself stays in the file and is read back a range at a time (`read`), so a long recording is
never held in memory, let alone twice. Lines that are not events (garbage, a last line cut short while
harbor was still writing it) are skipped and counted, never an error.
"""

from __future__ import annotations

import math
import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import orjson

from ...trace.sanitize import sanitize
from ..errors import SourceError

OUTPUT, RESIZE = 0, 1
"""Kinds of the events the index keeps (input and unknown codes have times but change no screen)."""
MAX_COLUMNS, MAX_LINES = 500, 200
"""A terminal size beyond these (a hostile header, a resize to 10**9 columns) is cut to them."""
DEFAULT_SIZE = (80, 24)
READ_CHUNK = 1 << 20
"""Bytes read from the file at a time when replaying."""
MAX_LABEL = 200
_EPISODE = re.compile(r"(?i)\bepisode\D{0,3}(\d+)")
_SIZE = re.compile(r"\s*(\d{1,9})\s*x\s*(\d{1,9})\s*")


class RecordingError(SourceError):
    """A file that is not a recording tracetui can play; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class Marker:
    """A marker of the recording: its time, its label (sanitized, one line) and the episode it starts."""

    time: float
    label: str
    episode: int


def terminal_size(columns: object, lines: object) -> tuple[int, int] | None:
    """(columns, lines) cut to sane bounds, or None when they are not positive integers."""
    if isinstance(columns, bool) or isinstance(lines, bool):
        return None
    if not isinstance(columns, int) or not isinstance(lines, int) or columns < 1 or lines < 1:
        return None
    return min(columns, MAX_COLUMNS), min(lines, MAX_LINES)


def resize_size(data: str) -> tuple[int, int] | None:
    """The size of a resize event's "COLSxROWS", or None when it is not one."""
    match = _SIZE.fullmatch(data)
    return terminal_size(int(match.group(1)), int(match.group(2))) if match else None


class Cast:
    """The index of one cast file. Build it with `Cast.open(path)` (reads the whole file once)."""

    def __init__(self, path: Path, version: int, size: tuple[int, int]) -> None:
        self.path = path
        self.version = version
        self.columns, self.lines = size
        self.times = array("d")
        """Time of each indexed event, in seconds, never decreasing."""
        self.starts = array("q")
        self.ends = array("q")
        """Byte range of each indexed event's line in the file."""
        self.kinds = array("B")
        self.output_bytes = 0
        """Bytes of the file the indexed events take (what replaying all of them reads)."""
        self.markers: tuple[Marker, ...] = ()
        self._marker_times: list[float] = []
        self.duration = 0.0
        """Time of the last event of any kind (markers and input included)."""
        self.skipped = 0
        """Lines that are not events (invalid JSON, wrong shape, a time that is not a number)."""
        self.truncated = False
        """The last line has no end and is not an event: cut short, or still being written."""

    def __len__(self) -> int:
        return len(self.times)

    # --- reading -------------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path) -> Cast:
        """Index the cast file at `path`; raises RecordingError when it is not one (a missing or unreadable
        file, no header line, a version other than 2 or 3)."""
        try:
            with open(path, "rb") as file:
                header_line = file.readline()
                version, size, idle_limit = _header(header_line, path)
                cast = cls(path, version, size)
                cast._index(file, len(header_line), idle_limit)
        except OSError as exc:
            raise RecordingError(f"cannot read the recording {path}: {exc.strerror or exc}") from None
        return cast

    def _index(self, file: BinaryIO, offset: int, idle_limit: float | None) -> None:
        relative = self.version >= 3
        markers: list[tuple[float, str, int | None]] = []
        clock = last = 0.0
        for line in file:
            start, offset = offset, offset + len(line)
            if relative and line.startswith(b"#"):
                continue  # a v3 comment
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                if line.strip():
                    if line.endswith(b"\n"):
                        self.skipped += 1
                    else:
                        self.truncated = True
                continue
            stamp = _event_time(event)
            if stamp is None:
                self.skipped += 1
                continue
            gap = stamp if relative else stamp - last
            last = last if relative else max(last, stamp)
            clock += max(0.0, gap) if idle_limit is None else min(max(0.0, gap), idle_limit)
            code, data = event[1], event[2]
            if code == "o" or code == "r":
                self.times.append(clock)
                self.starts.append(start)
                self.ends.append(offset)
                self.kinds.append(OUTPUT if code == "o" else RESIZE)
                self.output_bytes += offset - start
            elif code == "m":
                found = _EPISODE.search(data)
                label = " ".join(sanitize(data).split())[:MAX_LABEL]
                markers.append((clock, label, int(found.group(1)) if found else None))
        self.duration = clock
        numbered = any(episode is not None for _, _, episode in markers)
        self.markers = tuple(
            Marker(t, label, (episode if episode is not None else -1) if numbered else n)
            for n, (t, label, episode) in enumerate(markers)
        )
        self._marker_times = [marker.time for marker in self.markers]

    def read(self, start: int, stop: int) -> Iterator[tuple[int, str]]:
        """(kind, data) of the indexed events [start, stop), read from the file a chunk at a time. An event
        whose line no longer reads as one (the file changed since) is left out."""
        with open(self.path, "rb") as file:
            first = start
            while first < stop:
                last = first + 1
                while last < stop and self.ends[last] - self.starts[first] <= READ_CHUNK:
                    last += 1
                base = self.starts[first]
                file.seek(base)
                chunk = file.read(self.ends[last - 1] - base)
                for event in range(first, last):
                    line = chunk[self.starts[event] - base : self.ends[event] - base]
                    try:
                        data = orjson.loads(line)[2]
                    except (orjson.JSONDecodeError, IndexError, KeyError, TypeError):
                        continue
                    if isinstance(data, str):
                        yield self.kinds[event], data
                first = last

    # --- time ----------------------------------------------------------------------------------
    def events_until(self, t: float) -> int:
        """How many indexed events happen at or before time `t`."""
        return bisect_right(self.times, t)

    def marker_at(self, t: float) -> int | None:
        """Index of the last marker at or before `t` (the episode being shown), if any."""
        found = bisect_right(self._marker_times, t) - 1
        return found if found >= 0 else None

    def marker_for(self, episode: int) -> Marker | None:
        """The marker that starts `episode`, else the last one before it, else None."""
        best = None
        for marker in self.markers:
            if 0 <= marker.episode <= episode and (best is None or marker.episode >= best.episode):
                best = marker
        return best


def _header(line: bytes, path: Path) -> tuple[int, tuple[int, int], float | None]:
    """(version, (columns, lines), idle time limit) from the header line, or RecordingError.

    Pauses longer than the header's `idle_time_limit` play as that long (as `asciinema play` does)."""
    if not line.strip():
        raise RecordingError(f"{path} is empty: no asciinema header line (still being written?)")
    try:
        header = orjson.loads(line.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict):
        raise RecordingError(f"{path} is not an asciinema recording: its first line is not a JSON header")
    version = header.get("version")
    if isinstance(version, bool):
        version = None
    if version == 1:
        raise RecordingError(f"{path} is an asciinema v1 recording: tracetui plays v2 and v3")
    if version not in (2, 3):
        raise RecordingError(
            f"{path}: asciinema version {sanitize(repr(version))[:20]} is not one tracetui plays (2, 3)"
        )
    term = header.get("term") if version == 3 else header
    size = None
    if isinstance(term, dict):
        size = terminal_size(
            term.get("cols" if version == 3 else "width"), term.get("rows" if version == 3 else "height")
        )
    limit = _number(header.get("idle_time_limit"))
    return version, size or DEFAULT_SIZE, limit if limit else None


def _event_time(event: object) -> float | None:
    """The time of a well-formed event `[number, str, str]`, else None."""
    if not isinstance(event, list) or len(event) < 3:
        return None
    stamp = _number(event[0])
    return stamp if isinstance(event[1], str) and isinstance(event[2], str) else None


def _number(value: object) -> float | None:
    """A finite number of seconds, not negative, else None (JSON's true and false are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None
