"""Memory of a process from /proc: peak and current RSS, and how much of it is private (anonymous)."""

from __future__ import annotations

import threading
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


class PrivatePeak:
    """The most private memory (RssAnon) this process held while it ran, sampled every `every` seconds:
    /proc keeps a peak of the whole RSS only (VmHWM), which counts the file pages a conversion writes."""

    def __init__(self, every: float = 0.01) -> None:
        self.mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, args=(every,), daemon=True)

    def _sample(self, every: float) -> None:
        while not self._stop.wait(every):
            self.mb = max(self.mb, snapshot()["RssAnon"])

    def __enter__(self) -> PrivatePeak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.mb = max(self.mb, snapshot()["RssAnon"])
