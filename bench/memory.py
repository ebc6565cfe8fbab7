"""Memory of a process from /proc: peak and current RSS, and how much of it is private (anonymous)."""

from __future__ import annotations

from pathlib import Path

STATUS_FIELDS = ("VmHWM", "VmRSS", "RssAnon", "RssFile", "RssShmem")
ROLLUP_FIELDS = ("Pss", "Private_Clean", "Private_Dirty", "Anonymous")


def snapshot(pid: int | str = "self") -> dict[str, float]:
    """MB by field: VmHWM (peak RSS), VmRSS, RssAnon, RssFile, and smaps_rollup's Pss, Private_*, Anonymous."""
    proc = Path("/proc") / str(pid)
    found = _fields((proc / "status").read_text(), STATUS_FIELDS)
    found.update(_fields((proc / "smaps_rollup").read_text(), ROLLUP_FIELDS))
    return found


def _fields(text: str, names: tuple[str, ...]) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in names:
            out[name] = int(value.split()[0]) / 1024  # kB -> MB
    return out
