"""A trial folder's other files (agent logs, verifier output, artifacts, config, lock, trial log,
exception: what harbor view has tabs for), listed with their sizes and read for the pager.

Read only, like all of `data/jobs`: symlinks are listed as what they are and never followed (a trial
folder is written by the agent's environment too, and a link could point anywhere), the walk is bounded,
and the text read is sanitized, since it goes to a terminal.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ...trace.sanitize import sanitize
from ..cache_folders import size_text

MAX_FILES = 1000
"""Files listed at most (an artifacts folder may hold a whole repository)."""
PAGE_BYTES = 8 << 20
"""Bytes of a file read for the pager at most (a long agent log: its start, and a line saying so)."""
BINARY_PROBE = 8192
"""Bytes looked at to tell a binary file (a NUL in them)."""


def _is_trajectory(path: str) -> bool:
    """The trajectory files: the conversation pane shows them."""
    return path.startswith("agent/trajectory") and path.endswith(".json")


def _is_recording(path: str) -> bool:
    """The terminal recording: `r` plays it."""
    return path == "agent/recording.cast"


KINDS = (
    ("agent log", lambda path: path.startswith("agent/") and not (_is_trajectory(path) or _is_recording(path))),
    ("verifier", lambda path: path.startswith("verifier/")),
    ("artifact", lambda path: path.startswith("artifacts/")),
    ("config", lambda path: path == "config.json"),
    ("lock", lambda path: "/" not in path and "lock" in path),
    ("trial log", lambda path: path == "trial.log"),
    ("exception", lambda path: path == "exception.txt"),
    ("result", lambda path: path == "result.json"),
    ("trajectory", _is_trajectory),
    ("recording", _is_recording),
)
"""(kind, whether a path relative to the trial folder is of it), in the order harbor view's tabs come;
anything else is a "file", listed last."""


@dataclass(frozen=True, slots=True)
class TrialFile:
    path: str
    """Relative to the trial folder, `/`-separated, as found on disk (untrusted: sanitize to show it)."""
    kind: str
    size: int
    link: bool = False
    """A symlink: listed, not followed, not read."""


@dataclass(frozen=True, slots=True)
class Page:
    """A file read for the pager: its text (None when it is not text) and a line to say about it."""

    text: str | None
    note: str | None


def kind_of(path: str) -> str:
    return next((kind for kind, matches in KINDS if matches(path)), "file")


def trial_files(folder: Path) -> tuple[list[TrialFile], bool]:
    """The files under `folder` in harbor view's order (by kind, then path), and whether there were more
    than `MAX_FILES` (the rest left out). Folders that cannot be read are skipped."""
    found: list[TrialFile] = []
    more = False
    for top, dirs, files in os.walk(folder, onerror=None, followlinks=False):
        dirs.sort()
        relative = os.path.relpath(top, folder)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        for name in sorted(files) + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            try:
                info = os.lstat(os.path.join(top, name))
            except OSError:
                continue
            link = stat.S_ISLNK(info.st_mode)
            if not (link or stat.S_ISREG(info.st_mode)):
                continue  # a socket, a fifo: nothing to read
            if len(found) >= MAX_FILES:
                more = True
                break
            path = prefix + name
            found.append(TrialFile(path, kind_of(path), info.st_size, link))
        if more:
            break
    order = {kind: number for number, (kind, _) in enumerate(KINDS)}
    return sorted(found, key=lambda f: (order.get(f.kind, len(order)), f.path)), more


def read_page(folder: Path, file: TrialFile) -> Page:
    """The file's text for the pager, sanitized (its first `PAGE_BYTES`, with a line saying so); no text,
    and a line why, for a link, a binary file or one that cannot be read."""
    shown = sanitize(file.path)
    if file.link:
        return Page(None, f"{shown} is a symbolic link: not followed.")
    try:
        with open(folder / file.path, "rb") as opened:
            if not stat.S_ISREG(os.fstat(opened.fileno()).st_mode):
                return Page(None, f"{shown} is not a regular file.")
            data = opened.read(PAGE_BYTES + 1)
    except OSError as exc:
        return Page(None, f"{shown} cannot be read ({exc.strerror or exc}).")
    if b"\x00" in data[:BINARY_PROBE]:
        return Page(
            None, f"{shown} is a binary file ({size_text(file.size)}): not shown; it is in {sanitize(str(folder))}."
        )
    cut = len(data) > PAGE_BYTES
    text = sanitize(data[:PAGE_BYTES].decode("utf-8", "replace"))
    if not cut:
        return Page(text, None)
    note = f"{shown}: the first {size_text(PAGE_BYTES)} of {size_text(file.size)} shown."
    return Page(f"{text}\n\n[tracetui: {note}]\n", note)
