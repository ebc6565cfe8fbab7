"""The records the runner parsers produce, and the helpers they share to cut excerpts.

Each parser in :mod:`.runners` reads the ANSI-stripped lines of a log and returns a
:class:`RunnerResult`, or None when that runner's output is absent. Line numbers index those
lines, which match the original ``text.split("\\n")`` one to one because stripping never removes
a newline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

EXCERPT_LINES = 25
_LINE_CAP = 400  # characters kept per excerpt/assertion line: logs hold 1 MB single lines


@dataclass(frozen=True, slots=True)
class TestCase:
    """One reported test outcome."""

    __test__ = False  # stops pytest from collecting this class where test modules import it

    name: str
    nodeid: str
    status: str  # passed | failed | error | skipped | xfailed | xpassed
    line: int


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed test's section of the log, with the line that says why."""

    test: str
    line: int
    end: int
    assertion: str | None
    excerpt: str


@dataclass(slots=True)
class RunnerResult:
    """What one runner's parser found, before the report is assembled."""

    runner: str
    tests: list[TestCase] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    counts: dict[str, int] | None = None  # passed/failed/errors/skipped from the runner's summary
    summary: str | None = None
    summary_line: int = -1

    def found(self) -> bool:
        return bool(self.tests or self.failures or self.summary)

    def add_counts(self, **counts: int) -> None:
        """Sum summaries: a log may hold several runs (pytest sessions, cargo test binaries)."""
        if self.counts is None:
            self.counts = dict.fromkeys(("passed", "failed", "errors", "skipped"), 0)
        for key, value in counts.items():
            self.counts[key] += value


_KEYS = {
    "passed": "passed",
    "xpassed": "passed",
    "failed": "failed",
    "error": "errors",
    "errors": "errors",
    "skipped": "skipped",
    "xfailed": "skipped",
    "todo": "skipped",
}


def num(digits: str) -> int:
    """``int`` for counts read from a log: a junk run of digits must not hit Python's
    4300-digit conversion limit, so only its first 18 digits count."""
    return int(digits[:18] or 0)


def count_words(pairs: Iterable[tuple[str, str]]) -> dict[str, int]:
    """Fold ``(number, word)`` pairs such as ("2", "passed") into report counts."""
    out: dict[str, int] = {}
    for number, word in pairs:
        key = _KEYS.get(word)
        if key:
            out[key] = out.get(key, 0) + num(number)
    return out


def counts_from_tests(tests: list[TestCase]) -> dict[str, int] | None:
    """Counts when no summary line was printed (truncated logs, go test)."""
    if not tests:
        return None
    out = dict.fromkeys(("passed", "failed", "errors", "skipped"), 0)
    for t in tests:
        key = _KEYS.get(t.status)
        if key:
            out[key] += 1
    return out


def clip(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= _LINE_CAP else line[:_LINE_CAP] + "…"


def make_failure(
    lines: list[str], test: str, start: int, end: int, assertion: str | None = None, anchor: int | None = None
) -> Failure:
    """A Failure whose excerpt is the section, or for long sections its first line plus the
    lines around ``anchor`` (the assertion), since that is what a reader looks for."""
    end = max(start + 1, min(end, len(lines)))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    if end - start <= EXCERPT_LINES:
        body = lines[start:end]
    else:
        window = EXCERPT_LINES - 3  # room for the header and two elision marks
        if anchor is None or not start < anchor < end:
            anchor = start + 1
        lo = max(start + 1, min(anchor - window // 3, end - window))
        hi = min(end, lo + window)
        body = [lines[start]] + (["…"] if lo > start + 1 else []) + lines[lo:hi]
        body += ["…"] if hi < end else []
    text = "\n".join(clip(b) for b in body)
    return Failure(test, start, end, clip(assertion) if assertion else None, text)


def join_details(head: str, lines: list[str], start: int, end: int, prefixes: tuple[str, ...]) -> str:
    """``head`` plus the Expected/Received-style lines that follow it, on one line."""
    parts = [head.strip()]
    for line in lines[start : min(end, start + 8)]:
        s = line.strip()
        if s.startswith(prefixes):
            parts.append(s)
    return "; ".join(parts)


def first_text(lines: list[str], start: int, end: int) -> tuple[int, str] | None:
    """The first non-blank line in ``[start, end)``, stripped, with its index."""
    for i in range(start, min(end, len(lines))):
        if lines[i].strip():
            return i, lines[i].strip()
    return None


def section_failure(lines: list[str], test: str, start: int, end: int, fallback: str | None = None) -> Failure:
    """A failure whose assertion is the first non-blank line under its header line."""
    first = first_text(lines, start + 1, end)
    return make_failure(lines, test, start, end, first[1] if first else fallback)
