"""The records runner parsers produce, their shared helpers, and the Python runners.

Each ``parse_*`` function (here and in :mod:`.polyglot`) reads the ANSI-stripped lines of a log
and returns a :class:`RunnerResult`, or None when that runner's output is absent. Line numbers
index those lines, which match the original ``text.split("\\n")`` one to one because stripping
never removes a newline. Every parser is one pass with cheap prefix tests before any regex, so a
20 MB log stays fast.
"""

from __future__ import annotations

import re
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


def count_words(pairs) -> dict[str, int]:
    """Fold ``(number, word)`` pairs such as ("2", "passed") into report counts."""
    out: dict[str, int] = {}
    for number, word in pairs:
        key = _KEYS.get(word)
        if key:
            out[key] = out.get(key, 0) + num(number)
    return out


def counts_from_tests(tests) -> dict[str, int] | None:
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


def make_failure(lines, test, start, end, assertion=None, anchor=None) -> Failure:
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


def join_details(head: str, lines, start: int, end: int, prefixes: tuple[str, ...]) -> str:
    """``head`` plus the Expected/Received-style lines that follow it, on one line."""
    parts = [head.strip()]
    for line in lines[start : min(end, start + 8)]:
        s = line.strip()
        if s.startswith(prefixes):
            parts.append(s)
    return "; ".join(parts)


def first_text(lines, start: int, end: int) -> tuple[int, str] | None:
    for i in range(start, min(end, len(lines))):
        if lines[i].strip():
            return i, lines[i].strip()
    return None


# ---------------------------------------------------------------------------------------- pytest

_PT_RULE = re.compile(r"^={3,}(?: (.*?) =+)?$")
_PT_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_PT_FINAL = re.compile(
    r"^(?:=+ )?((?:(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"
    r"(?:, )?)+|no tests ran) in [\d.]+s(?: \([\d:]+\))?)(?: =+)?$"
)
_PT_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
# Space-separated tokens and a lookahead (no ".*?" before the status) keep these linear on junk.
_PT_VERBOSE = re.compile(r"^(\S+(?: \S+)*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?= \(| +\[ *\d+%\] *$| *$)")
_PT_XDIST = re.compile(r"^\[gw\d+\] \[ *\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S.*)$")
_PT_SHORT = re.compile(r"^(?P<st>PASSED|FAILED|ERROR|XFAIL|XPASS) (?P<id>[^\s\[]+(?:\[.*?\])?)(?: - (?P<msg>.*)| .*)?$")
_PT_PROGRESS = re.compile(r"^(?:\S+\.py ([.FEsxX]+)(?: +\[ *\d+%\])?|([.FEsxX]+) +\[ *\d+%\])$")
_PT_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?\w*(?:Error|Exception|Failed|Exit|Interrupt)\b")
_PT_STATUS = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "xfailed",
    "XPASS": "xpassed",
}
_PT_PROGRESS_KEY = {".": "passed", "F": "failed", "E": "errors", "s": "skipped", "x": "skipped", "X": "passed"}


def pytest_name(nodeid: str) -> str:
    """``path::Cls::test_x[p]`` -> ``Cls.test_x[p]``, the form pytest prints in failure headers."""
    _, sep, rest = nodeid.partition("::")
    return rest.replace("::", ".") if sep else nodeid


def _header_test(header: str) -> str:
    for prefix in ("ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting "):
        if header.startswith(prefix):
            return header[len(prefix) :]
    return header


class _Pytest:
    """State of the single pass over a pytest log."""

    def __init__(self, lines):
        self.lines = lines
        self.r = RunnerResult("pytest")
        self.seen: dict[tuple[str, str], int] = {}  # (nodeid, status) -> first line reporting it
        self.messages: dict[str, tuple[int, str]] = {}  # short name -> (line, short-summary message)
        self.progress = dict.fromkeys(("passed", "failed", "errors", "skipped"), 0)
        self.section = ""
        self.open: list | None = None  # [name, status, start, first "E" line, bare exception line]
        self.sections: list[tuple] = []

    def close(self, end: int) -> None:
        if self.open:
            self.sections.append((*self.open, end))
            self.open = None

    def rule(self, i: int, title: str) -> None:
        self.close(i)
        self.section = title.lower()
        final = _PT_FINAL.match(title) if title else None
        if final:
            self.final(i, final[1])

    def final(self, i: int, body: str) -> None:
        self.r.add_counts(**count_words(_PT_COUNT.findall(body)))
        self.r.summary, self.r.summary_line = body, i

    def feed(self, i: int, line: str) -> None:
        c = line[:1]
        if c == "=":
            m = _PT_RULE.match(line)
            if m:
                self.rule(i, (m[1] or "").strip())
            return
        if self.open is not None:
            if c == "_" and (m := _PT_HEADER.match(line)):
                status = self.open[1]
                self.close(i)
                self.open = [_header_test(m[1]), status, i, None, None]
            elif c == "E" and line.startswith("E ") and self.open[3] is None and line[1:].strip():
                self.open[3] = (i, line[1:].strip())
            elif c.isalpha() and _PT_EXCEPTION.match(line):
                self.open[4] = (i, line.strip())  # --tb=native: the last exception line wins
            return
        if c == "_" and self.section in ("failures", "errors") and (m := _PT_HEADER.match(line)):
            status = "failed" if self.section == "failures" else "error"
            self.open = [_header_test(m[1]), status, i, None, None]
        elif self.section == "short test summary info" and c in "PFEX" and (m := _PT_SHORT.match(line)):
            nodeid = m["id"]
            if "::" in nodeid or ".py" in nodeid:
                self.seen.setdefault((nodeid, _PT_STATUS[m["st"]]), i)
                if m["msg"] is not None and m["st"] in ("FAILED", "ERROR"):
                    self.messages.setdefault(pytest_name(nodeid), (i, m["msg"]))
        elif "::" in line and (m := _PT_VERBOSE.match(line)) and "::" in m[1]:
            self.seen.setdefault((m[1], _PT_STATUS[m[2]]), i)
        elif c == "[" and (m := _PT_XDIST.match(line)) and "::" in m[2]:
            self.seen.setdefault((m[2].rstrip(), _PT_STATUS[m[1]]), i)
        elif (c.isdigit() or c == "n") and (m := _PT_FINAL.match(line)):
            self.final(i, m[1])
        elif ("[" in line or ".py " in line) and (m := _PT_PROGRESS.match(line)):
            for ch in m[1] or m[2]:
                self.progress[_PT_PROGRESS_KEY[ch]] += 1

    def result(self) -> RunnerResult | None:
        self.close(len(self.lines))
        r = self.r
        r.tests = [TestCase(pytest_name(n), n, status, i) for (n, status), i in self.seen.items()]
        named = {t.name for t in r.tests}
        for name, status, start, e_line, bare, end in self.sections:
            chosen = e_line or bare
            assertion = chosen[1] if chosen else self.messages.get(name, (0, None))[1]
            r.failures.append(make_failure(self.lines, name, start, end, assertion, chosen and chosen[0]))
            if name not in named:  # a log cut inside FAILURES still names its failed tests
                named.add(name)
                r.tests.append(TestCase(name, name, status, start))
        failed = {f.test for f in r.failures}
        for name, (i, msg) in self.messages.items():  # --tb=no: the summary line is all there is
            if name not in failed:
                r.failures.append(make_failure(self.lines, name, i, i + 1, msg))
        r.failures.sort(key=lambda f: f.line)
        r.tests.sort(key=lambda t: t.line)
        if r.counts is None and any(self.progress.values()):
            r.counts = self.progress
        return r if r.found() or r.counts else None


def parse_pytest(lines) -> RunnerResult | None:
    p = _Pytest(lines)
    for i, line in enumerate(lines):
        p.feed(i, line)
    return p.result()


# ------------------------------------------------------------------------------------- unittest

_UT_VERBOSE = re.compile(
    r"^(\w+) \(([\w.]+)\).*? \.\.\. (ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)$"
)
_UT_HEAD = re.compile(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)")
_UT_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$")
_UT_RESULT = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")
_UT_COUNT = re.compile(r"(failures|errors|skipped|expected failures|unexpected successes)=(\d+)")
_UT_STATUS = {
    "ok": "passed",
    "FAIL": "failed",
    "ERROR": "error",
    "expected failure": "xfailed",
    "unexpected success": "xpassed",
}


def parse_unittest(lines) -> RunnerResult | None:
    """Python's unittest: no runner of its own in the report, so it is reported as "unknown"."""
    r = RunnerResult("unknown")
    heads: list[tuple[str, str, int]] = []
    ran: int | None = None
    for i, line in enumerate(lines):
        c = line[:1]
        if c in "FE" and (m := _UT_HEAD.match(line)) and i and lines[i - 1].startswith("====="):
            heads.append((m[2], "failed" if m[1] == "FAIL" else "error", i - 1))
        elif c == "R" and (m := _UT_RAN.match(line)):
            ran = num(m[1])
            r.summary, r.summary_line = line.strip(), i
        elif c in "OF" and ran is not None and (m := _UT_RESULT.match(line)):
            found = {k: num(v) for k, v in _UT_COUNT.findall(m[2] or "")}
            failed, errors, skipped = (found.get(k, 0) for k in ("failures", "errors", "skipped"))
            r.add_counts(passed=max(0, ran - failed - errors - skipped), failed=failed, errors=errors, skipped=skipped)
            r.summary, r.summary_line, ran = line.strip(), i, None
        elif "..." in line and (m := _UT_VERBOSE.match(line)):
            status = "skipped" if m[3].startswith("skipped") else _UT_STATUS[m[3]]
            r.tests.append(TestCase(m[1], f"{m[2]}.{m[1]}" if not m[2].endswith(m[1]) else m[2], status, i))
    named = {t.name for t in r.tests}
    bounds = [h[2] for h in heads[1:]] + [len(lines)]
    for (name, status, start), nxt in zip(heads, bounds):
        end = next((j for j in range(start + 3, nxt) if lines[j].startswith(("-" * 20, "=" * 20))), nxt)
        last = next(((j, lines[j].strip()) for j in range(end - 1, start + 2, -1) if lines[j].strip()), None)
        r.failures.append(make_failure(lines, name, start, end, last and last[1], last and last[0]))
        if name not in named:
            named.add(name)
            r.tests.append(TestCase(name, name, status, start))
    r.tests.sort(key=lambda t: t.line)
    if r.counts is None and ran is not None:
        r.add_counts(passed=ran)
    return r if r.found() else None
