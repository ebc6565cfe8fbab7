"""go test: ``-v`` and plain output, subtests, panics, and packages that fail to build."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..records import RunnerResult, TestCase, first_text, make_failure
from ..rules import LineParser, Rule, Rules

_EVENT = re.compile(r"^=== (RUN|CONT|NAME|PAUSE)\s+(\S+)")
_RESULT = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(")
_PACKAGE = re.compile(r"^(ok|FAIL)\s+(\S+)\s+(\d[\d.]*s\b.*|\(cached\).*|\[(?:build|setup) failed\])$")
_BUILD_HEADER = re.compile(r"# ")  # "# pkg" above a package's compiler errors
_PANIC = re.compile(r"panic: ")
_TEXT = re.compile(r"(\s*)\S")  # a non-blank line, and its indentation
_STATUS = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}


@dataclass(slots=True)
class _Output:
    """What a test printed: its first and last lines, the first line's text, and whether it was
    printed under the test's "=== RUN" (-v) rather than under its "--- FAIL"."""

    first: int
    last: int
    text: str
    under_run: bool


@dataclass(slots=True)
class _Panic:
    line: int
    text: str
    end: int


class Go(LineParser[RunnerResult | None]):
    """go test's results, each failed test with what it printed or its panic, and failed builds."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.r = RunnerResult("go")
        self.results: list[tuple[int, str, str]] = []  # (line, status, name)
        self.runs: dict[str, int] = {}  # name -> its "=== RUN" line
        self.output: dict[str, _Output] = {}
        self.panics: dict[str, _Panic] = {}
        self.owner: str | None = None  # -v: the test whose output follows its "=== RUN"
        self.after: tuple[str, int] | None = None  # no -v: lines indented under "--- FAIL" are its output
        self.build_start = -1
        self.panic: _Panic | None = None  # a panic whose package line has not come yet

    def _follow(self, owner: str | None = None, after: tuple[str, int] | None = None) -> None:
        """Say whose output the lines that follow are, if anyone's."""
        self.owner, self.after = owner, after
        self.switch(self.UNDER_RUN if owner else self.UNDER_FAIL if after else self.RULES)

    def on_event(self, i: int, m: re.Match[str]) -> None:
        self._follow(owner=None if m[1] == "PAUSE" else m[2])
        if m[1] == "RUN":
            self.runs.setdefault(m[2], i)

    def on_result(self, i: int, m: re.Match[str]) -> None:
        self.results.append((i, _STATUS[m[2]], m[3]))
        self._follow(after=(m[3], len(m[1])) if m[2] == "FAIL" else None)

    def on_package(self, i: int, m: re.Match[str]) -> None:
        self._follow()
        self.r.summary, self.r.summary_line = m.string.strip(), i
        if self.panic:
            self.panic.end, self.panic = i, None
        if m[3].startswith("["):  # "[build failed]": the compiler's errors follow "# pkg"
            start = self.build_start if self.build_start >= 0 else i
            first = first_text(self.lines, start + 1, i) if self.build_start >= 0 else None
            self.r.failures.append(make_failure(self.lines, m[2], start, i + 1, first[1] if first else None))
            self.r.tests.append(TestCase(m[2], m[2], "error", i))
        self.build_start = -1

    def on_build_header(self, i: int, m: re.Match[str]) -> None:
        self.build_start = i

    def on_panic(self, i: int, m: re.Match[str]) -> None:
        self._follow()  # the goroutine dump that follows is nobody's message
        name = next((n for _, s, n in reversed(self.results[-20:]) if s == "failed" and n not in self.output), None)
        if name:  # Go prints "--- FAIL" for the panicking test, then the panic
            self.panic = self.panics[name] = _Panic(i, m.string.strip(), len(self.lines))

    def on_output_after(self, i: int, m: re.Match[str]) -> None:
        assert self.after is not None
        if len(m[1]) > self.after[1]:
            self._output(self.after[0], i, under_run=False)

    def on_output_owner(self, i: int, m: re.Match[str]) -> None:
        assert self.owner is not None
        self._output(self.owner, i, under_run=True)

    def _output(self, name: str, i: int, under_run: bool) -> None:
        self.output.setdefault(name, _Output(i, i, self.lines[i].strip(), under_run)).last = i

    _EVENTS = (
        Rule(on_event, _EVENT, first="="),
        Rule(on_result, _RESULT, first=" -", has="--- "),
        Rule(on_package, _PACKAGE, first="oF"),
        Rule(on_build_header, _BUILD_HEADER, first="#"),
        Rule(on_panic, _PANIC, first="p", when=lambda p: p.panic is None),
    )
    RULES = Rules(*_EVENTS)
    UNDER_FAIL = Rules(*_EVENTS, Rule(on_output_after, _TEXT))  # plain output: indented under "--- FAIL"
    UNDER_RUN = Rules(*_EVENTS, Rule(on_output_owner, _TEXT, check=lambda m: m.string not in ("FAIL", "PASS")))

    def _failure(self, i: int, name: str) -> None:
        lines = self.lines
        if name in self.output:
            out = self.output[name]
            start = self.runs.get(name, out.first) if out.under_run else i
            self.r.failures.append(make_failure(lines, name, start, out.last + 1, out.text, out.first))
        elif name in self.panics:
            p = self.panics[name]
            self.r.failures.append(make_failure(lines, name, min(i, p.line), p.end, p.text, p.line))
        else:
            self.r.failures.append(make_failure(lines, name, i, i + 1))

    def finish(self) -> RunnerResult | None:
        r = self.r
        parents = {name[:k] for _, _, name in self.results for k, ch in enumerate(name) if ch == "/"}
        for i, status, name in self.results:
            if name not in parents:
                r.tests.append(TestCase(name, name, status, i))
            if status == "failed" and (name not in parents or name in self.output):
                self._failure(i, name)  # a parent fails because a subtest did: report the subtest
        r.tests.sort(key=lambda t: t.line)
        r.failures.sort(key=lambda f: f.line)
        return r if r.found() else None
