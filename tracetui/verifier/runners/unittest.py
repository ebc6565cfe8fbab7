"""Python's unittest: verbose "name (module) ... ok" lines, FAIL/ERROR sections, "Ran N tests".

It has no runner name of its own in the report: it is reported as "unknown"."""

from __future__ import annotations

import re

from ..records import RunnerResult, TestCase, make_failure, num
from ..rules import LineParser, Rule, Rules

_VERBOSE = re.compile(r"^(\w+) \(([\w.]+)\).*? \.\.\. (ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)$")
_HEAD = re.compile(r"^(FAIL|ERROR): (\w+) \(([\w.]+)\)")
_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$")
_RESULT = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")
_COUNT = re.compile(r"(failures|errors|skipped|expected failures|unexpected successes)=(\d+)")
_STATUS = {
    "ok": "passed",
    "FAIL": "failed",
    "ERROR": "error",
    "expected failure": "xfailed",
    "unexpected success": "xpassed",
}
_SECTION_RULES = ("-" * 20, "=" * 20)


class Unittest(LineParser[RunnerResult | None]):
    """unittest's verbose test lines, its FAIL / ERROR sections, and the Ran / OK / FAILED summary."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.r = RunnerResult("unknown")
        self.heads: list[tuple[str, str, int]] = []  # FAIL/ERROR sections: (test, status, the "====" above)
        self.ran: int | None = None  # "Ran N tests" waiting for its OK / FAILED line

    def on_head(self, i: int, m: re.Match[str]) -> None:
        if i and self.lines[i - 1].startswith("====="):  # a section's head sits under a rule
            self.heads.append((m[2], "failed" if m[1] == "FAIL" else "error", i - 1))

    def on_ran(self, i: int, m: re.Match[str]) -> None:
        self.ran = num(m[1])
        self.r.summary, self.r.summary_line = m.string.strip(), i

    def on_result(self, i: int, m: re.Match[str]) -> None:
        assert self.ran is not None
        found = {k: num(v) for k, v in _COUNT.findall(m[2] or "")}
        failed, errors, skipped = (found.get(k, 0) for k in ("failures", "errors", "skipped"))
        passed = max(0, self.ran - failed - errors - skipped)
        self.r.add_counts(passed=passed, failed=failed, errors=errors, skipped=skipped)
        self.r.summary, self.r.summary_line, self.ran = m.string.strip(), i, None

    def on_verbose(self, i: int, m: re.Match[str]) -> None:
        status = "skipped" if m[3].startswith("skipped") else _STATUS[m[3]]
        nodeid = f"{m[2]}.{m[1]}" if not m[2].endswith(m[1]) else m[2]
        self.r.tests.append(TestCase(m[1], nodeid, status, i))

    RULES = Rules(
        Rule(on_head, _HEAD, first="FE"),
        Rule(on_ran, _RAN, first="R"),
        Rule(on_result, _RESULT, first="OF", when=lambda p: p.ran is not None),
        Rule(on_verbose, _VERBOSE, has="..."),
    )

    def _section(self, name: str, status: str, start: int, nxt: int, named: set[str]) -> None:
        lines = self.lines
        end = next((j for j in range(start + 3, nxt) if lines[j].startswith(_SECTION_RULES)), nxt)
        last = next(((j, lines[j].strip()) for j in range(end - 1, start + 2, -1) if lines[j].strip()), None)
        self.r.failures.append(
            make_failure(lines, name, start, end, last[1] if last else None, last[0] if last else None)
        )
        if name not in named:
            named.add(name)
            self.r.tests.append(TestCase(name, name, status, start))

    def finish(self) -> RunnerResult | None:
        r = self.r
        named = {t.name for t in r.tests}
        bounds = [h[2] for h in self.heads[1:]] + [len(self.lines)]
        for (name, status, start), nxt in zip(self.heads, bounds):
            self._section(name, status, start, nxt, named)
        r.tests.sort(key=lambda t: t.line)
        if r.counts is None and self.ran is not None:
            r.add_counts(passed=self.ran)
        return r if r.found() else None
