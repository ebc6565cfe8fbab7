"""gradle / JUnit: "Class > test() FAILED" lines with their indented stack, counts, compile errors."""

from __future__ import annotations

import re

from ..records import EXCERPT_LINES, Failure, RunnerResult, TestCase, make_failure, num, section_failure
from ..rules import LineParser, Rule, Rules

_SECTION_END = re.compile(r"(?!\s+\S)")  # any line but an indented non-blank one ends a failure's stack
_TEST = re.compile(r"(.*) (PASSED|FAILED|SKIPPED)$")  # "Cls > test() FAILED"
_COUNT = re.compile(r"^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?")
_BUILD = re.compile(r"BUILD (?:SUCCESSFUL|FAILED)")
_JAVA_ERROR = re.compile(r"^\S+\.(?:java|kt|kts):\d+: error: ")
_KOTLIN_ERROR = re.compile(r"^e: ")
_TASK_FAILED = re.compile(r"^> Task (:\S+) FAILED$")
_STATUS = {"PASSED": "passed", "FAILED": "failed", "SKIPPED": "skipped"}
_MAX_ERRORS = 100


def _compile_failure(lines: list[str], task: str, at: int, errors: list[int]) -> Failure:
    """A failed compile task with its first compiler error (gradle prints the errors after
    the "> Task :compileJava FAILED" line, older versions before it)."""
    err = next((e for e in errors if e > at), errors[-1] if errors else None)
    if err is None:
        return make_failure(lines, task, at, at + 1, lines[at].strip())
    start, last = min(at, err), max(at, err)
    end = next((j for j in range(last, min(len(lines), last + EXCERPT_LINES)) if not lines[j].strip()), last + 1)
    return make_failure(lines, task, start, end, lines[err].strip(), err)


class Gradle(LineParser[RunnerResult | None]):
    """gradle's test lines with the stack under each failed one, counts, and failed compile tasks."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.r = RunnerResult("gradle")
        self.open: tuple[str, int] | None = None  # a failed test whose indented stack follows: (name, start)
        self.errors: list[int] = []  # compiler error lines
        self.tasks: list[tuple[str, int]] = []  # failed compile tasks: (task, line)
        self.build: tuple[int, str] | None = None  # the BUILD SUCCESSFUL / FAILED line

    def _close(self, end: int) -> None:
        if self.open:
            name, start = self.open
            self.r.failures.append(section_failure(self.lines, name, start, end))
            self.open = None
            self.switch(self.RULES)

    def on_section_end(self, i: int, m: re.Match[str]) -> None:
        self._close(i)

    def on_test(self, i: int, m: re.Match[str]) -> None:
        nodeid, status = m[1], m[2]
        name = nodeid.rpartition(" > ")[2]
        self.r.tests.append(TestCase(name, nodeid, _STATUS[status], i))
        if status == "FAILED":
            self.open = (name, i)
            self.switch(self.IN_STACK)

    def on_count(self, i: int, m: re.Match[str]) -> None:
        total, failed, skipped = (num(x or "") for x in m.groups())
        self.r.add_counts(passed=max(0, total - failed - skipped), failed=failed, skipped=skipped)
        self.r.summary, self.r.summary_line = m.string.strip(), i

    def on_build(self, i: int, m: re.Match[str]) -> None:
        self.build = (i, m.string.strip())

    def on_error(self, i: int, m: re.Match[str]) -> None:
        self.errors.append(i)

    def on_task_failed(self, i: int, m: re.Match[str]) -> None:
        self.tasks.append((m[1], i))
        self.r.tests.append(TestCase(m[1], m[1], "error", i))

    def _few_errors(self) -> bool:
        return len(self.errors) < _MAX_ERRORS

    _EVENTS = (
        Rule(on_test, _TEST, first=lambda c: c not in ("", ">") and not c.isspace(), has=" > "),
        Rule(on_count, _COUNT, first=str.isdigit, has=" completed"),
        Rule(on_build, _BUILD, first="B"),
        Rule(on_error, _JAVA_ERROR, has="error: ", when=_few_errors),
        Rule(on_error, _KOTLIN_ERROR, first="e", when=_few_errors),
        Rule(on_task_failed, _TASK_FAILED, first=">", check=lambda m: "compile" in m[1].lower()),
    )
    RULES = Rules(*_EVENTS)
    IN_STACK = Rules(Rule(on_section_end, _SECTION_END, also=True), *_EVENTS)  # under a failed test

    def finish(self) -> RunnerResult | None:
        self._close(len(self.lines))
        r = self.r
        r.failures += [_compile_failure(self.lines, task, at, self.errors) for task, at in self.tasks]
        if r.summary is None and self.build:
            r.summary_line, r.summary = self.build
        r.failures.sort(key=lambda f: f.line)
        r.tests.sort(key=lambda t: t.line)
        if r.counts is not None:
            r.counts["errors"] += len(self.tasks)
        return r if r.found() else None
