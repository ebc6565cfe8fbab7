"""pytest: verbose, ``-rA`` short summary, xdist and progress-dot output, failure sections."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..records import RunnerResult, TestCase, count_words, make_failure
from ..rules import LineParser, Rule, Rules, ignore

_RULE = re.compile(r"^={3,}(?: (.*?) =+)?$")
_HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")
_FINAL = re.compile(
    r"^(?:=+ )?((?:(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)"
    r"(?:, )?)+|no tests ran) in [\d.]+s(?: \([\d:]+\))?)(?: =+)?$"
)
_COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b")
# Space-separated tokens and a lookahead (no ".*?" before the status) keep these linear on junk.
_VERBOSE = re.compile(r"^(\S+(?: \S+)*?) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)(?= \(| +\[ *\d+%\] *$| *$)")
_XDIST = re.compile(r"^\[gw\d+\] \[ *\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S.*)$")
_SHORT = re.compile(r"^(?P<st>PASSED|FAILED|ERROR|XFAIL|XPASS) (?P<id>[^\s\[]+(?:\[.*?\])?)(?: - (?P<msg>.*)| .*)?$")
_PROGRESS_FILE = re.compile(r"^\S+\.py ([.FEsxX]+)(?: +\[ *\d+%\])?$")  # "tests/test_x.py ..F. [ 40%]"
_PROGRESS_DOTS = re.compile(r"^([.FEsxX]+) +\[ *\d+%\]$")
_E_LINE = re.compile(r"E \s*\S")  # "E   AssertionError: ...", pytest's marker of the failing assertion
_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?\w*(?:Error|Exception|Failed|Exit|Interrupt)\b")
_STATUS = {
    "PASSED": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
    "XFAIL": "xfailed",
    "XPASS": "xpassed",
}
_PROGRESS_KEY = {".": "passed", "F": "failed", "E": "errors", "s": "skipped", "x": "skipped", "X": "passed"}
_HEADER_PREFIXES = ("ERROR at setup of ", "ERROR at teardown of ", "ERROR collecting ")


def pytest_name(nodeid: str) -> str:
    """``path::Cls::test_x[p]`` -> ``Cls.test_x[p]``, the form pytest prints in failure headers."""
    _, sep, rest = nodeid.partition("::")
    return rest.replace("::", ".") if sep else nodeid


def _header_test(header: str) -> str:
    for prefix in _HEADER_PREFIXES:
        if header.startswith(prefix):
            return header[len(prefix) :]
    return header


@dataclass(slots=True)
class _Section:
    """One test's section under FAILURES or ERRORS, and the lines that say why it failed."""

    name: str
    status: str
    start: int
    e_line: tuple[int, str] | None = None  # the first "E   ..." line
    bare: tuple[int, str] | None = None  # --tb=native: the last exception line
    end: int = -1


class Pytest(LineParser[RunnerResult | None]):
    """pytest's tests from every form it prints them in; the failure sections with their assertion."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.r = RunnerResult("pytest")
        self.seen: dict[tuple[str, str], int] = {}  # (nodeid, status) -> first line reporting it
        self.messages: dict[str, tuple[int, str]] = {}  # short name -> (line, short-summary message)
        self.progress = dict.fromkeys(("passed", "failed", "errors", "skipped"), 0)
        self.section = ""  # the title of the "=== title ===" rule above, lower-cased
        self.open: _Section | None = None
        self.sections: list[_Section] = []

    def _open(self, section: _Section) -> None:
        self.open = section
        self.switch(self.IN_SECTION)

    def _close(self, end: int) -> None:
        if self.open:
            self.open.end = end
            self.sections.append(self.open)
            self.open = None
            self.switch(self.RULES)

    def _final(self, i: int, body: str) -> None:
        self.r.add_counts(**count_words(_COUNT.findall(body)))
        self.r.summary, self.r.summary_line = body, i

    def on_rule(self, i: int, m: re.Match[str]) -> None:
        self._close(i)
        title = (m[1] or "").strip()
        self.section = title.lower()
        final = _FINAL.match(title) if title else None
        if final:
            self._final(i, final[1])

    def on_next_header(self, i: int, m: re.Match[str]) -> None:
        assert self.open is not None
        status = self.open.status
        self._close(i)
        self._open(_Section(_header_test(m[1]), status, i))

    def on_e_line(self, i: int, m: re.Match[str]) -> None:
        assert self.open is not None
        self.open.e_line = (i, m.string[1:].strip())

    def on_exception(self, i: int, m: re.Match[str]) -> None:
        assert self.open is not None
        self.open.bare = (i, m.string.strip())

    def on_header(self, i: int, m: re.Match[str]) -> None:
        self._open(_Section(_header_test(m[1]), "failed" if self.section == "failures" else "error", i))

    def on_short(self, i: int, m: re.Match[str]) -> None:
        nodeid = m["id"]
        if "::" in nodeid or ".py" in nodeid:
            self.seen.setdefault((nodeid, _STATUS[m["st"]]), i)
            if m["msg"] is not None and m["st"] in ("FAILED", "ERROR"):
                self.messages.setdefault(pytest_name(nodeid), (i, m["msg"]))

    def on_verbose(self, i: int, m: re.Match[str]) -> None:
        self.seen.setdefault((m[1], _STATUS[m[2]]), i)

    def on_xdist(self, i: int, m: re.Match[str]) -> None:
        self.seen.setdefault((m[2].rstrip(), _STATUS[m[1]]), i)

    def on_final(self, i: int, m: re.Match[str]) -> None:
        self._final(i, m[1])

    def on_progress(self, i: int, m: re.Match[str]) -> None:
        for ch in m[1]:
            self.progress[_PROGRESS_KEY[ch]] += 1

    _RULE_LINES = (Rule(on_rule, _RULE, first="="), Rule(ignore, first="="))
    RULES = Rules(
        *_RULE_LINES,
        Rule(on_header, _HEADER, first="_", when=lambda p: p.section in ("failures", "errors")),
        Rule(on_short, _SHORT, first="PFEX", when=lambda p: p.section == "short test summary info"),
        Rule(on_verbose, _VERBOSE, has="::", check=lambda m: "::" in m[1]),
        Rule(on_xdist, _XDIST, first="[", check=lambda m: "::" in m[2]),
        Rule(on_final, _FINAL, first=lambda c: c.isdigit() or c == "n"),
        Rule(on_progress, _PROGRESS_FILE, has=".py "),
        Rule(on_progress, _PROGRESS_DOTS, first=".FEsxX", has="["),
    )
    IN_SECTION = Rules(  # a test's section under FAILURES or ERRORS
        *_RULE_LINES,
        Rule(on_next_header, _HEADER, first="_"),
        Rule(on_e_line, _E_LINE, first="E", when=lambda p: p.open.e_line is None),
        Rule(on_exception, _EXCEPTION, first=str.isalpha),
    )

    def _section_failures(self) -> None:
        r = self.r
        named = {t.name for t in r.tests}
        for s in self.sections:
            chosen = s.e_line or s.bare
            assertion = chosen[1] if chosen else self.messages.get(s.name, (0, None))[1]
            r.failures.append(
                make_failure(self.lines, s.name, s.start, s.end, assertion, chosen[0] if chosen else None)
            )
            if s.name not in named:  # a log cut inside FAILURES still names its failed tests
                named.add(s.name)
                r.tests.append(TestCase(s.name, s.name, s.status, s.start))

    def finish(self) -> RunnerResult | None:
        self._close(len(self.lines))
        r = self.r
        r.tests = [TestCase(pytest_name(n), n, status, i) for (n, status), i in self.seen.items()]
        self._section_failures()
        failed = {f.test for f in r.failures}
        for name, (i, msg) in self.messages.items():  # --tb=no: the summary line is all there is
            if name not in failed:
                r.failures.append(make_failure(self.lines, name, i, i + 1, msg))
        r.failures.sort(key=lambda f: f.line)
        r.tests.sort(key=lambda t: t.line)
        if r.counts is None and any(self.progress.values()):
            r.counts = self.progress
        return r if r.found() or r.counts else None
