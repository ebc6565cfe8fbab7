"""ctest, the Catch2 test cases it runs, and the make/cmake build errors before either."""

from __future__ import annotations

import re
from bisect import bisect_right

from ..records import EXCERPT_LINES, RunnerResult, TestCase, count_words, make_failure, num, section_failure
from ..rules import LineParser, Rule, Rules, ignore

_TEST = re.compile(r"^\s*\d+/\d+ Test +#\d+: (\S+) \.*\s*(?:\*\*\*)?(\S+(?: \S+)*?) +[\d.]+ sec")
_TOTAL = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)")
_START = re.compile(r"^\s*(?:Start +\d+: |\d+/\d+ Test +#)|^\d+% tests passed")
_CATCH_RULE = re.compile(r"^-{40,}$")
_CATCH_DOTS = re.compile(r"^\.{40,}$")
_CATCH_END = re.compile(r"^={40,}$")
_CATCH_TOTAL = re.compile(r"^test cases: *(\d+) *\|(.*)$")
_CATCH_ALL = re.compile(r"^All tests passed \(\d+ assertions? in (\d+) test cases?\)")
_CATCH_COUNT = re.compile(r"(\d+) (passed|failed|skipped)\b")
_CC_ERROR = re.compile(r"^\S+:\d+:(?:\d+:)? (?:fatal )?error: ")
_LINK_ERROR = re.compile(r".*undefined reference to ")
_MAKE = re.compile(r"^(?:g?make(?:\[\d+\])?: |\[ *\d+%\] |-- (?:Configuring|Build files))")


def _catch_cases(lines: list[str], dots: list[int]) -> list[tuple[str, int]]:
    """Catch2 prints a test case as rule / name lines / rule / location / dotted rule."""
    cases = []
    for d in dots:
        if d < 3 or not _CATCH_RULE.match(lines[d - 2]):
            continue
        for top in range(d - 4, max(-1, d - 10), -1):
            if _CATCH_RULE.match(lines[top]):
                cases.append((lines[top + 1].strip(), top))
                break
    return cases


def _catch_failures(r: RunnerResult, lines: list[str], cases: list[tuple[str, int]], ends: list[int]) -> None:
    bounds = [top for _, top in cases[1:]] + [len(lines)]
    for (name, top), nxt in zip(cases, bounds):
        k = bisect_right(ends, top)  # the "=====" line closing Catch2's report ends a case too
        end = min(nxt, ends[k]) if k < len(ends) else nxt
        hit = next((i for i in range(top, end) if lines[i].rstrip().endswith("FAILED:")), None)
        if hit is None:
            continue
        detail = []
        for line in lines[hit + 1 : min(end, hit + 6)]:
            if not line.strip():
                break
            detail.append(line.strip())
        r.failures.append(make_failure(lines, name, top, end, " ".join(detail) or None, hit))
        r.tests.append(TestCase(name, name, "failed", top))


def _status(word: str) -> str:
    if word == "Passed":
        return "passed"
    return "skipped" if word.startswith(("Skipped", "Not Run (Disabled)")) else "failed"


class Ctest(LineParser[RunnerResult | None]):
    """ctest's tests with the output of failed ones, Catch2's test cases, and a failed build."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.r = RunnerResult("ctest")
        self.dots: list[int] = []  # Catch2's dotted rules, under a test case's name
        self.ends: list[int] = []  # Catch2's "=====" rules, closing its report
        self.open: tuple[str, int, str] | None = None  # a failed test whose output follows: (name, line, status)
        self.build_error: tuple[int, str] | None = None
        self.saw_make = False  # compiler errors count only in a make/cmake build
        self.catch_counts: tuple[dict[str, int], str, int] | None = None

    def _close(self, end: int) -> None:
        if self.open:
            name, start, status = self.open
            self.r.failures.append(section_failure(self.lines, name, start, end, status))
        self.open = None
        self.switch(self.RULES)

    def on_test_start(self, i: int, m: re.Match[str]) -> None:
        self._close(i)

    def on_catch_dots(self, i: int, m: re.Match[str]) -> None:
        self.dots.append(i)

    def on_catch_end(self, i: int, m: re.Match[str]) -> None:
        self.ends.append(i)

    def on_test(self, i: int, m: re.Match[str]) -> None:
        status = _status(m[2].strip())
        self.r.tests.append(TestCase(m[1], m[1], status, i))
        if status == "failed":
            self.open = (m[1], i, m[2].strip())
            self.switch(self.IN_OUTPUT)

    def on_total(self, i: int, m: re.Match[str]) -> None:
        self._close(i)
        failed, total = num(m[1]), num(m[2])
        skipped = sum(t.status == "skipped" for t in self.r.tests)
        self.r.add_counts(passed=max(0, total - failed - skipped), failed=failed, skipped=skipped)
        self.r.summary, self.r.summary_line = m.string.strip(), i

    def on_catch_total(self, i: int, m: re.Match[str]) -> None:
        self.catch_counts = (count_words(_CATCH_COUNT.findall(m[2])), m.string.strip(), i)

    def on_catch_all(self, i: int, m: re.Match[str]) -> None:
        self.catch_counts = (count_words([(m[1], "passed")]), m.string.strip(), i)

    def on_make(self, i: int, m: re.Match[str]) -> None:
        self.saw_make = True

    def on_build_error(self, i: int, m: re.Match[str]) -> None:
        self.build_error = (i, m.string.strip())

    def _no_build_error(self) -> bool:
        return self.build_error is None

    _EVENTS = (
        Rule(on_catch_dots, _CATCH_DOTS, first="."),
        Rule(on_catch_end, _CATCH_END, first="="),
        Rule(ignore, first=".="),
        Rule(on_test, _TEST, first=lambda c: c == " " or c.isdigit(), has=" Test "),
        Rule(on_total, _TOTAL, first=str.isdigit, has="% tests"),
        Rule(on_catch_total, _CATCH_TOTAL, first="t"),
        Rule(on_catch_all, _CATCH_ALL, first="A"),
        Rule(on_make, _MAKE, first="gm[-", when=lambda p: not p.saw_make),
        Rule(on_build_error, _CC_ERROR, has="error", when=_no_build_error),
        Rule(on_build_error, _LINK_ERROR, has="undefined", when=_no_build_error),
    )
    RULES = Rules(*_EVENTS)
    IN_OUTPUT = Rules(Rule(on_test_start, _START, also=True), *_EVENTS)  # a failed test's output, to the next test

    def _build_failure(self) -> None:
        """A build error of a make/cmake build that never got to run a test."""
        assert self.build_error is not None
        lines, (at, text) = self.lines, self.build_error
        end = next(
            (i + 1 for i in range(at, len(lines)) if "***" in lines[i] and "Error" in lines[i]), at + EXCERPT_LINES
        )
        self.r.failures.append(make_failure(lines, "build", at, end, text))
        self.r.tests.append(TestCase("build", "build", "error", at))
        self.r.add_counts(errors=1)

    def finish(self) -> RunnerResult | None:
        self._close(len(self.lines))
        r = self.r
        _catch_failures(r, self.lines, _catch_cases(self.lines, self.dots), self.ends)
        if self.catch_counts:  # Catch2 counts test cases; ctest only counts executables
            counts, r.summary, r.summary_line = self.catch_counts
            r.counts = dict.fromkeys(("passed", "failed", "errors", "skipped"), 0)
            r.counts.update(counts)
        if self.build_error and self.saw_make and not r.tests:
            self._build_failure()
        r.failures.sort(key=lambda f: f.line)
        r.tests.sort(key=lambda t: t.line)
        return r if r.found() else None
