"""Reading the files of a harbor job folder: JSON read the way harbor reads it, a one-line reason when a
file cannot be read, and the stamps (size, mtime) that tell a changed file without reading it.

Nothing here writes: a job folder is the running harbor's, and tracetui only ever reads it.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import orjson

Stamp = list[list[Any]]
"""[[path relative to the trial folder, size, mtime_ns], ...], sorted: equal stamps, unchanged files."""


class Unreadable(Exception):
    """A file that cannot be used; `str()` is the one line that says which and why."""


def read_json(path: Path, name: str) -> Any:
    """The JSON value of `path` (`name`: how the error line names it). orjson first; the standard
    library's reader, which harbor uses, for what orjson refuses (NaN, huge integers, invalid UTF-8)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Unreadable(f"{name}: cannot be read ({exc.strerror or exc})") from None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data.decode("utf-8", "replace"))
    except ValueError as exc:
        if not data.strip():
            raise Unreadable(f"{name}: empty") from None
        raise Unreadable(f"{name}: not JSON ({(str(exc).splitlines() or ['invalid'])[0][:120]})") from None


def read_text(path: Path) -> str | None:
    """A text file as harbor reads it (undecodable bytes replaced), None when absent or unreadable."""
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return None


def is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def entries(folder: Path) -> list[os.DirEntry[str]]:
    """The entries of `folder`, by name; [] when it cannot be listed."""
    try:
        with os.scandir(folder) as found:
            return sorted(found, key=lambda entry: entry.name)
    except OSError:
        return []


WATCHED = ("result.json", "config.json", "exception.txt")
WATCHED_FOLDERS = ("agent", "verifier")


def stamp(folder: Path | str) -> Stamp:
    """What a trial's reading depends on, as sizes and mtimes. A finished trial (it has its result.json)
    is not written again but whole files at a time (a regrade rewrites result.json, adds files): its
    result, config and exception files and the mtimes of its `agent/` and `verifier/` folders tell a
    change. A running one is rewritten in place: every file of those folders. Plain `os` calls: a
    reopen stamps every trial, and pathlib's objects cost more than the stats."""
    base = os.fspath(folder)
    found: Stamp = []
    for name in WATCHED:
        try:
            info = os.stat(f"{base}/{name}")
        except OSError:
            continue
        found.append([name, info.st_size, info.st_mtime_ns])
    finished = bool(found) and found[0][0] == WATCHED[0]
    for sub in WATCHED_FOLDERS:
        if finished:
            with contextlib.suppress(OSError):  # no such folder: nothing to stamp
                found.append([f"{sub}/", 0, os.stat(f"{base}/{sub}").st_mtime_ns])
            continue
        try:
            with os.scandir(f"{base}/{sub}") as listed:
                chosen = sorted((e for e in listed if e.name.endswith((".json", ".txt"))), key=lambda e: e.name)
        except OSError:
            continue
        for entry in chosen:
            try:
                info = entry.stat()
            except OSError:
                continue
            found.append([f"{sub}/{entry.name}", info.st_size, info.st_mtime_ns])
    return found
