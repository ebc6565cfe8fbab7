"""cargo test: one line per test, "---- name stdout ----" sections with the panic, compile errors."""

from __future__ import annotations

import re

from ..records import RunnerResult, TestCase, first_text, join_details, make_failure, num
from ..rules import LineParser, Rule, Rules

_TEST = re.compile(r"^test (\S+)(?: - should panic.*?)? \.\.\. (ok|FAILED|ignored)\b")
_RESULT = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored")
_STDOUT = re.compile(r"^---- (\S+) std(?:out|err) ----$")
_FAILURES = re.compile(r"failures:$")  # the list of failed tests after their sections
_PANIC = re.compile(r"^thread '.*?' panicked at (?:'(.*?)(?:', \S+:\d+:\d+)?|\S+:\d+:\d+:)$")
_NOT_COMPILED = re.compile(r"error")  # "error: could not compile `x`", the build's last word
_ERROR = re.compile(r"^error(?:\[E\d+\])?: (?!test failed|could not compile|aborting|\d+ targets? failed)")
_STATUS = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}
_DETAILS = ("left", "right", "assertion")


def _assertion(lines: list[str], start: int, end: int) -> tuple[int, str] | None:
    """The panic message of a test's section, with the left/right lines of an assert_eq."""
    for i in range(start, end):
        m = _PANIC.match(lines[i])
        if m and m[1] is not None:  # old format: the message is quoted on the panic line
            return i, join_details(m[1], lines, i + 1, end, _DETAILS)
        if m:  # Rust >= 1.73: the message follows the panic line
            nxt = first_text(lines, i + 1, end)
            if nxt:
                return i, join_details(nxt[1], lines, nxt[0] + 1, end, _DETAILS)
    return None


class Cargo(LineParser[RunnerResult | None]):
    """cargo's test lines and summaries, a failure per stdout section, and a failed compile."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.r = RunnerResult("cargo")
        self.best = -1  # the summary shown is the last test binary that ran something, not the doc-tests
        self.open: tuple[str, int] | None = None  # a test's stdout section: (name, start)
        self.compile_error: tuple[int, str] | None = None

    def _close(self, end: int) -> None:
        if self.open:
            name, start = self.open
            found = _assertion(self.lines, start + 1, end)
            self.r.failures.append(
                make_failure(self.lines, name, start, end, found[1] if found else None, found[0] if found else None)
            )
        self.open = None

    def on_test(self, i: int, m: re.Match[str]) -> None:
        self.r.tests.append(TestCase(m[1], m[1], _STATUS[m[2]], i))

    def on_result(self, i: int, m: re.Match[str]) -> None:
        self._close(i)
        passed, failed, ignored = (num(x) for x in m.groups())
        self.r.add_counts(passed=passed, failed=failed, skipped=ignored)
        if passed + failed + ignored or self.best < 0:
            self.best = i
            self.r.summary, self.r.summary_line = m.string.strip(), i

    def on_stdout(self, i: int, m: re.Match[str]) -> None:
        self._close(i)
        self.open = (m[1], i)

    def on_failures(self, i: int, m: re.Match[str]) -> None:
        self._close(i)

    def on_not_compiled(self, i: int, m: re.Match[str]) -> None:
        start, msg = self.compile_error or (i, m.string.strip())
        self.r.failures.append(make_failure(self.lines, "build", start, i + 1, msg))
        self.r.tests.append(TestCase("build", "build", "error", i))
        self.compile_error = None

    def on_compile_error(self, i: int, m: re.Match[str]) -> None:
        self.compile_error = (i, m.string.strip())

    RULES = Rules(
        Rule(on_test, _TEST, first="t"),
        Rule(on_result, _RESULT, first="t"),
        Rule(on_stdout, _STDOUT, first="-"),
        Rule(on_failures, _FAILURES, first="f"),
        Rule(on_not_compiled, _NOT_COMPILED, first="e", has="could not compile"),
        Rule(on_compile_error, _ERROR, first="e", when=lambda p: p.compile_error is None),
    )

    def finish(self) -> RunnerResult | None:
        self._close(len(self.lines))
        r = self.r
        r.failures.sort(key=lambda f: f.line)
        r.tests.sort(key=lambda t: t.line)
        if r.counts is not None:
            r.counts["errors"] += sum(t.status == "error" for t in r.tests)
        return r if r.found() else None
