"""jest: per-file PASS/FAIL, the indented tree of describe blocks and tests, "●" failure sections."""

from __future__ import annotations

import re

from ..records import Failure, RunnerResult, TestCase, count_words, first_text, join_details, make_failure
from ..rules import LineParser, Rule, Rules

_FILE = re.compile(r"^(PASS|FAIL) +(\S+\.[cm]?[jt]sx?)\b")
_TEST = re.compile(  # "  ✓ name (3 ms)"; single spaces keep it linear on junk lines
    r"^(\s+)([✓✕√×○✎]) +(?:(?:skipped|todo) +)?(.+?)(?: \([\d.]+ ?m?s\))?$"
)
_DESCRIBE = re.compile(r"(\s+)\S")  # any other indented line of the tree: a describe block
_TOTALS = re.compile(r"Tests:|Test Suites:")
_BULLET = re.compile(r"^\s*● (?!Console$)(.+)$")
_COUNT = re.compile(r"(\d+) (failed|passed|skipped|todo)\b")
_STATUS = {"✓": "passed", "√": "passed", "✕": "failed", "×": "failed", "○": "skipped", "✎": "skipped"}
_SUITE_ERROR = "Test suite failed to run"
_ERROR = re.compile(r"^\s*[A-Z]\w*(?:Error|Exception): ")  # beats jest's own preamble lines
_DETAILS = ("Expected", "Received")


def _failure(lines: list[str], title: str, start: int, end: int, suite: str) -> Failure:
    error = next((i for i in range(start + 1, min(end, start + 12)) if _ERROR.match(lines[i])), None)
    body = (error, lines[error].strip()) if error else first_text(lines, start + 1, end)
    assertion = anchor = None
    if body:
        anchor = body[0]
        assertion = join_details(body[1], lines, body[0] + 1, end, _DETAILS)
    test = suite if title == _SUITE_ERROR else title.split(" › ")[-1]
    return make_failure(lines, test, start, end, assertion, anchor)


class Jest(LineParser[RunnerResult | None]):
    """jest's test tree under each test file, and a failure per "●" section."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.r = RunnerResult("jest")
        self.stack: list[tuple[int, str]] = []  # describe blocks by indentation
        self.suite = ""
        self.in_tree = False
        self.open: tuple[str, int, str] | None = None  # a "●" section: (title, start, suite)
        self.titles: dict[str, Failure] = {}
        self.suite_errors = 0

    def _close(self, end: int) -> None:
        if self.open and self.open[0] not in self.titles:  # the closing "summary of all failing tests" repeats them
            title, start, suite = self.open
            self.titles[title] = _failure(self.lines, title, start, end, suite)
        self.open = None

    def on_file(self, i: int, m: re.Match[str]) -> None:
        self._close(i)
        self.suite, self.in_tree, self.stack = m[2], True, []

    def on_totals(self, i: int, m: re.Match[str]) -> None:
        self._close(i)
        self.in_tree = False
        line = m.string
        if line.startswith("Tests:"):
            self.r.add_counts(**count_words(_COUNT.findall(line)))
            self.r.summary, self.r.summary_line = line.strip(), i

    def on_bullet(self, i: int, m: re.Match[str]) -> None:
        self._close(i)
        self.in_tree = False
        title = m[1].strip()
        self.open = (title, i, self.suite)
        self.suite_errors += title == _SUITE_ERROR

    def _indent(self, indent: int) -> None:
        while self.stack and self.stack[-1][0] >= indent:
            self.stack.pop()

    def on_test(self, i: int, m: re.Match[str]) -> None:
        self._indent(len(m[1]))
        nodeid = " › ".join([t for _, t in self.stack] + [m[3]])
        self.r.tests.append(TestCase(m[3], nodeid, _STATUS[m[2]], i))

    def on_describe(self, i: int, m: re.Match[str]) -> None:
        self._indent(len(m[1]))
        self.stack.append((len(m[1]), m.string.strip()))

    RULES = Rules(
        Rule(on_file, _FILE, first="PF"),
        Rule(on_totals, _TOTALS, first="T"),
        Rule(on_bullet, _BULLET, first=lambda c: c == "●" or c.isspace(), has="●"),
        Rule(on_test, _TEST, first=str.isspace, when=lambda p: p.in_tree),
        Rule(on_describe, _DESCRIBE, first=str.isspace, when=lambda p: p.in_tree),
    )

    def finish(self) -> RunnerResult | None:
        self._close(len(self.lines))
        r = self.r
        r.failures = sorted(self.titles.values(), key=lambda f: f.line)
        known = {t.nodeid for t in r.tests}
        for title, f in self.titles.items():
            if title not in known:
                status = "error" if title == _SUITE_ERROR else "failed"
                r.tests.append(TestCase(f.test, f.test if status == "error" else title, status, f.line))
        r.tests.sort(key=lambda t: t.line)
        if self.suite_errors and r.counts is not None:
            r.counts["errors"] += self.suite_errors
        return r if r.found() else None
