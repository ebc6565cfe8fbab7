"""Parsers for the runners of the Aider polyglot languages: jest, go test, cargo test,
gradle/JUnit, ctest and Catch2. See :mod:`.runners` for the conventions they share."""

from __future__ import annotations

import re
from bisect import bisect_right

from .runners import (
    EXCERPT_LINES,
    Failure,
    RunnerResult,
    TestCase,
    count_words,
    first_text,
    join_details,
    make_failure,
    num,
)

# ------------------------------------------------------------------------------------------ jest

_JEST_FILE = re.compile(r"^(PASS|FAIL) +(\S+\.[cm]?[jt]sx?)\b")
_JEST_TEST = re.compile(  # "  ✓ name (3 ms)"; single spaces keep it linear on junk lines
    r"^(\s+)([✓✕√×○✎]) +(?:(?:skipped|todo) +)?(.+?)(?: \([\d.]+ ?m?s\))?$"
)
_JEST_BULLET = re.compile(r"^\s*● (.+)$")
_JEST_COUNT = re.compile(r"(\d+) (failed|passed|skipped|todo)\b")
_JEST_STATUS = {"✓": "passed", "√": "passed", "✕": "failed", "×": "failed", "○": "skipped", "✎": "skipped"}
_JEST_SUITE_ERROR = "Test suite failed to run"
_JEST_ERROR = re.compile(r"^\s*[A-Z]\w*(?:Error|Exception): ")  # beats jest's own preamble lines


def _jest_failure(lines, title, start, end, suite) -> Failure:
    error = next((i for i in range(start + 1, min(end, start + 12)) if _JEST_ERROR.match(lines[i])), None)
    body = (error, lines[error].strip()) if error else first_text(lines, start + 1, end)
    assertion = anchor = None
    if body:
        anchor = body[0]
        assertion = join_details(body[1], lines, body[0] + 1, end, ("Expected", "Received"))
    test = suite if title == _JEST_SUITE_ERROR else title.split(" › ")[-1]
    return make_failure(lines, test, start, end, assertion, anchor)


def parse_jest(lines) -> RunnerResult | None:
    r = RunnerResult("jest")
    stack: list[tuple[int, str]] = []  # describe blocks by indentation
    suite, in_tree = "", False
    open_: tuple[str, int, str] | None = None  # (title, start, suite)
    titles: dict[str, Failure] = {}
    suite_errors = 0

    def close(end):
        nonlocal open_
        if open_ and open_[0] not in titles:  # the closing "summary of all failing tests" repeats them
            titles[open_[0]] = _jest_failure(lines, open_[0], open_[1], end, open_[2])
        open_ = None

    for i, line in enumerate(lines):
        c = line[:1]
        if c in "PF" and (m := _JEST_FILE.match(line)):
            close(i)
            suite, in_tree, stack = m[2], True, []
        elif c == "T" and line.startswith(("Tests:", "Test Suites:")):
            close(i)
            in_tree = False
            if line.startswith("Tests:"):
                r.add_counts(**count_words(_JEST_COUNT.findall(line)))
                r.summary, r.summary_line = line.strip(), i
        elif "●" in line and (m := _JEST_BULLET.match(line)) and m[1] != "Console":
            close(i)
            in_tree = False
            open_ = (m[1].strip(), i, suite)
            suite_errors += m[1].strip() == _JEST_SUITE_ERROR
        elif in_tree and c.isspace() and line.strip():
            m = _JEST_TEST.match(line)
            indent = len(m[1]) if m else len(line) - len(line.lstrip())
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if m:
                nodeid = " › ".join([t for _, t in stack] + [m[3]])
                r.tests.append(TestCase(m[3], nodeid, _JEST_STATUS[m[2]], i))
            else:
                stack.append((indent, line.strip()))
    close(len(lines))
    r.failures = sorted(titles.values(), key=lambda f: f.line)
    known = {t.nodeid for t in r.tests}
    for title, f in titles.items():
        if title not in known:
            status = "error" if title == _JEST_SUITE_ERROR else "failed"
            r.tests.append(TestCase(f.test, f.test if status == "error" else title, status, f.line))
    r.tests.sort(key=lambda t: t.line)
    if suite_errors and r.counts is not None:
        r.counts["errors"] += suite_errors
    return r if r.found() else None


# -------------------------------------------------------------------------------------------- go

_GO_EVENT = re.compile(r"^=== (RUN|CONT|NAME|PAUSE)\s+(\S+)")
_GO_RESULT = re.compile(r"^(\s*)--- (PASS|FAIL|SKIP): (\S+) \(")
_GO_PKG = re.compile(r"^(ok|FAIL)\s+(\S+)\s+(\d[\d.]*s\b.*|\(cached\).*|\[(?:build|setup) failed\])$")
_GO_STATUS = {"PASS": "passed", "FAIL": "failed", "SKIP": "skipped"}


def parse_go(lines) -> RunnerResult | None:
    r = RunnerResult("go")
    results: list[tuple[int, str, str]] = []  # (line, status, name)
    runs: dict[str, int] = {}
    output: dict[str, list] = {}  # name -> [first line, last line, first text, printed under RUN?]
    panics: dict[str, list] = {}  # name -> [panic line, text, end]
    owner: str | None = None  # -v: the test whose output follows its "=== RUN"
    after: tuple[str, int] | None = None  # no -v: indented lines after "--- FAIL" are its output
    build_start = -1
    panic: list | None = None

    for i, line in enumerate(lines):
        if not line:
            continue
        c = line[:1]
        if c == "=" and (m := _GO_EVENT.match(line)):
            owner, after = (None if m[1] == "PAUSE" else m[2]), None
            if m[1] == "RUN":
                runs.setdefault(m[2], i)
        elif c in " -" and "--- " in line and (m := _GO_RESULT.match(line)):
            results.append((i, _GO_STATUS[m[2]], m[3]))
            owner, after = None, ((m[3], len(m[1])) if m[2] == "FAIL" else None)
        elif c in "oF" and (m := _GO_PKG.match(line)):
            owner = after = None
            r.summary, r.summary_line = line.strip(), i
            if panic:
                panic[2], panic = i, None
            if m[3].startswith("["):
                start = build_start if build_start >= 0 else i
                first = first_text(lines, start + 1, i) if build_start >= 0 else None
                r.failures.append(make_failure(lines, m[2], start, i + 1, first and first[1]))
                r.tests.append(TestCase(m[2], m[2], "error", i))
            build_start = -1
        elif c == "#" and line.startswith("# "):
            build_start = i
        elif c == "p" and line.startswith("panic: ") and panic is None:
            owner = after = None  # the goroutine dump that follows is nobody's message
            name = next((n for _, s, n in reversed(results[-20:]) if s == "failed" and n not in output), None)
            if name:  # Go prints "--- FAIL" for the panicking test, then the panic
                panic = panics[name] = [i, line.strip(), len(lines)]
        elif after and len(line) - len(line.lstrip()) > after[1] and not line.isspace():
            output.setdefault(after[0], [i, i, line.strip(), False])[1] = i
        elif owner and not line.isspace() and line not in ("FAIL", "PASS"):
            output.setdefault(owner, [i, i, line.strip(), True])[1] = i
    parents = {name[:k] for _, _, name in results for k, ch in enumerate(name) if ch == "/"}
    for i, status, name in results:
        if name not in parents:
            r.tests.append(TestCase(name, name, status, i))
        if status != "failed" or (name in parents and name not in output):
            continue  # a parent fails because a subtest did: report the subtest
        if name in output:
            first, last, text, under_run = output[name]
            start = runs.get(name, first) if under_run else i
            r.failures.append(make_failure(lines, name, start, last + 1, text, first))
        elif name in panics:
            at, text, end = panics[name]
            r.failures.append(make_failure(lines, name, min(i, at), end, text, at))
        else:
            r.failures.append(make_failure(lines, name, i, i + 1))
    r.tests.sort(key=lambda t: t.line)
    r.failures.sort(key=lambda f: f.line)
    return r if r.found() else None


# ----------------------------------------------------------------------------------------- cargo

_CARGO_TEST = re.compile(r"^test (\S+)(?: - should panic.*?)? \.\.\. (ok|FAILED|ignored)\b")
_CARGO_RESULT = re.compile(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored")
_CARGO_STDOUT = re.compile(r"^---- (\S+) std(?:out|err) ----$")
_CARGO_PANIC = re.compile(r"^thread '.*?' panicked at (?:'(.*?)(?:', \S+:\d+:\d+)?|\S+:\d+:\d+:)$")
_CARGO_ERROR = re.compile(r"^error(?:\[E\d+\])?: (?!test failed|could not compile|aborting|\d+ targets? failed)")
_CARGO_STATUS = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}
_RUST_DETAILS = ("left", "right", "assertion")


def _cargo_assertion(lines, start, end) -> tuple[int, str] | None:
    for i in range(start, end):
        m = _CARGO_PANIC.match(lines[i])
        if m and m[1] is not None:  # old format: the message is quoted on the panic line
            return i, join_details(m[1], lines, i + 1, end, _RUST_DETAILS)
        if m:  # Rust >= 1.73: the message follows the panic line
            nxt = first_text(lines, i + 1, end)
            if nxt:
                return i, join_details(nxt[1], lines, nxt[0] + 1, end, _RUST_DETAILS)
    return None


def parse_cargo(lines) -> RunnerResult | None:
    r = RunnerResult("cargo")
    best = -1  # the summary shown is the last test binary that ran something, not the doc-tests
    open_: tuple[str, int] | None = None
    compile_error: tuple[int, str] | None = None

    def close(end):
        nonlocal open_
        if open_:
            found = _cargo_assertion(lines, open_[1] + 1, end)
            r.failures.append(make_failure(lines, open_[0], open_[1], end, found and found[1], found and found[0]))
        open_ = None

    for i, line in enumerate(lines):
        c = line[:1]
        if c == "t" and line.startswith("test "):
            if m := _CARGO_TEST.match(line):
                r.tests.append(TestCase(m[1], m[1], _CARGO_STATUS[m[2]], i))
            elif m := _CARGO_RESULT.match(line):
                close(i)
                passed, failed, ignored = (num(x) for x in m.groups())
                r.add_counts(passed=passed, failed=failed, skipped=ignored)
                if passed + failed + ignored or best < 0:
                    best = i
                    r.summary, r.summary_line = line.strip(), i
        elif c == "-" and (m := _CARGO_STDOUT.match(line)):
            close(i)
            open_ = (m[1], i)
        elif c == "f" and line == "failures:":
            close(i)
        elif c == "e" and line.startswith("error"):
            if "could not compile" in line:
                start, msg = compile_error or (i, line.strip())
                r.failures.append(make_failure(lines, "build", start, i + 1, msg))
                r.tests.append(TestCase("build", "build", "error", i))
                compile_error = None
            elif compile_error is None and _CARGO_ERROR.match(line):
                compile_error = (i, line.strip())
    close(len(lines))
    r.failures.sort(key=lambda f: f.line)
    r.tests.sort(key=lambda t: t.line)
    if r.counts is not None:
        r.counts["errors"] += sum(t.status == "error" for t in r.tests)
    return r if r.found() else None


# ---------------------------------------------------------------------------------------- gradle

_GRADLE_ENDS = (" PASSED", " FAILED", " SKIPPED")
_GRADLE_COUNT = re.compile(r"^(\d+) tests? completed(?:, (\d+) failed)?(?:, (\d+) skipped)?")
_GRADLE_TASK_FAILED = re.compile(r"^> Task (:\S+) FAILED$")
_JAVA_ERROR = re.compile(r"^\S+\.(?:java|kt|kts):\d+: error: |^e: ")
_GRADLE_STATUS = {"PASSED": "passed", "FAILED": "failed", "SKIPPED": "skipped"}


def _compile_failure(lines, task: str, at: int, errors: list[int]) -> Failure:
    """A failed compile task with its first compiler error (gradle prints the errors after
    the "> Task :compileJava FAILED" line, older versions before it)."""
    err = next((e for e in errors if e > at), errors[-1] if errors else None)
    if err is None:
        return make_failure(lines, task, at, at + 1, lines[at].strip())
    start, last = min(at, err), max(at, err)
    end = next((j for j in range(last, min(len(lines), last + EXCERPT_LINES)) if not lines[j].strip()), last + 1)
    return make_failure(lines, task, start, end, lines[err].strip(), err)


def parse_gradle(lines) -> RunnerResult | None:
    r = RunnerResult("gradle")
    open_: tuple[str, int] | None = None
    errors: list[int] = []
    tasks: list[tuple[str, int]] = []
    build: tuple[int, str] | None = None
    n = len(lines)
    for i, line in enumerate(lines):
        if open_ and not (line[:1].isspace() and line.strip()):
            first = first_text(lines, open_[1] + 1, i)
            r.failures.append(make_failure(lines, open_[0], open_[1], i, first and first[1]))
            open_ = None
        c = line[:1]
        if c.isspace() or not c:
            continue
        if line.endswith(_GRADLE_ENDS) and " > " in line and c != ">":  # "Cls > test() FAILED"
            nodeid, _, status = line.rpartition(" ")
            name = nodeid.rpartition(" > ")[2]
            r.tests.append(TestCase(name, nodeid, _GRADLE_STATUS[status], i))
            if status == "FAILED":
                open_ = (name, i)
        elif c.isdigit() and " completed" in line and (m := _GRADLE_COUNT.match(line)):
            total, failed, skipped = (num(x or "") for x in m.groups())
            r.add_counts(passed=max(0, total - failed - skipped), failed=failed, skipped=skipped)
            r.summary, r.summary_line = line.strip(), i
        elif c == "B" and line.startswith(("BUILD SUCCESSFUL", "BUILD FAILED")):
            build = (i, line.strip())
        elif ("error: " in line or c == "e") and len(errors) < 100 and _JAVA_ERROR.match(line):
            errors.append(i)
        elif c == ">" and (m := _GRADLE_TASK_FAILED.match(line)) and "compile" in m[1].lower():
            tasks.append((m[1], i))
            r.tests.append(TestCase(m[1], m[1], "error", i))
    if open_:
        first = first_text(lines, open_[1] + 1, n)
        r.failures.append(make_failure(lines, open_[0], open_[1], n, first and first[1]))
    r.failures += [_compile_failure(lines, task, at, errors) for task, at in tasks]
    if r.summary is None and build:
        r.summary_line, r.summary = build
    r.failures.sort(key=lambda f: f.line)
    r.tests.sort(key=lambda t: t.line)
    if r.counts is not None:
        r.counts["errors"] += len(tasks)
    return r if r.found() else None


# ----------------------------------------------------------------------------- ctest and Catch2

_CTEST_TEST = re.compile(r"^\s*\d+/\d+ Test +#\d+: (\S+) \.*\s*(?:\*\*\*)?(\S+(?: \S+)*?) +[\d.]+ sec")
_CTEST_TOTAL = re.compile(r"^\d+% tests passed, (\d+) tests? failed out of (\d+)")
_CTEST_START = re.compile(r"^\s*(?:Start +\d+: |\d+/\d+ Test +#)|^\d+% tests passed")
_CATCH_RULE = re.compile(r"^-{40,}$")
_CATCH_DOTS = re.compile(r"^\.{40,}$")
_CATCH_END = re.compile(r"^={40,}$")
_CATCH_TOTAL = re.compile(r"^test cases: *(\d+) *\|(.*)$")
_CATCH_ALL = re.compile(r"^All tests passed \(\d+ assertions? in (\d+) test cases?\)")
_CATCH_COUNT = re.compile(r"(\d+) (passed|failed|skipped)\b")
_CC_ERROR = re.compile(r"^\S+:\d+:(?:\d+:)? (?:fatal )?error: |.*undefined reference to ")
_MAKE = re.compile(r"^(?:g?make(?:\[\d+\])?: |\[ *\d+%\] |-- (?:Configuring|Build files))")


def _catch_cases(lines, dots: list[int]) -> list[tuple[str, int]]:
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


def _catch_failures(r: RunnerResult, lines, cases, ends: list[int]) -> None:
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


def parse_ctest(lines) -> RunnerResult | None:
    r = RunnerResult("ctest")
    dots, ends = [], []
    open_: tuple[str, int, str] | None = None
    build_error: tuple[int, str] | None = None
    saw_make = False  # compiler errors count only in a make/cmake build
    catch_counts = None

    def close(end):
        nonlocal open_
        if open_:
            first = first_text(lines, open_[1] + 1, end)
            r.failures.append(make_failure(lines, open_[0], open_[1], end, first[1] if first else open_[2]))
        open_ = None

    for i, line in enumerate(lines):
        if not line:
            continue
        c = line[:1]
        if open_ and _CTEST_START.match(line):
            close(i)
        if c == ".":
            if _CATCH_DOTS.match(line):
                dots.append(i)
        elif c == "=":
            if _CATCH_END.match(line):
                ends.append(i)
        elif (c == " " or c.isdigit()) and " Test " in line and (m := _CTEST_TEST.match(line)):
            status = m[2].strip()
            status = (
                "passed"
                if status == "Passed"
                else "skipped"
                if status.startswith(("Skipped", "Not Run (Disabled)"))
                else "failed"
            )
            r.tests.append(TestCase(m[1], m[1], status, i))
            if status == "failed":
                open_ = (m[1], i, m[2].strip())
        elif c.isdigit() and "% tests" in line and (m := _CTEST_TOTAL.match(line)):
            close(i)
            failed, total = num(m[1]), num(m[2])
            skipped = sum(t.status == "skipped" for t in r.tests)
            r.add_counts(passed=max(0, total - failed - skipped), failed=failed, skipped=skipped)
            r.summary, r.summary_line = line.strip(), i
        elif (
            c in "tA"
            and line.startswith(("test cases:", "All tests"))
            and (m := _CATCH_TOTAL.match(line) or _CATCH_ALL.match(line))
        ):
            pairs = _CATCH_COUNT.findall(m[2]) if m.re is _CATCH_TOTAL else [(m[1], "passed")]
            catch_counts = (count_words(pairs), line.strip(), i)
        elif not saw_make and c in "gm[-" and _MAKE.match(line):
            saw_make = True
        elif build_error is None and ("error" in line or "undefined" in line) and _CC_ERROR.match(line):
            build_error = (i, line.strip())
    close(len(lines))
    _catch_failures(r, lines, _catch_cases(lines, dots), ends)
    if catch_counts:  # Catch2 counts test cases; ctest only counts executables
        counts, r.summary, r.summary_line = catch_counts
        r.counts = dict.fromkeys(("passed", "failed", "errors", "skipped"), 0)
        r.counts.update(counts)
    if build_error and saw_make and not r.tests:
        end = next(
            (i + 1 for i in range(build_error[0], len(lines)) if "***" in lines[i] and "Error" in lines[i]),
            build_error[0] + EXCERPT_LINES,
        )
        r.failures.append(make_failure(lines, "build", build_error[0], end, build_error[1]))
        r.tests.append(TestCase("build", "build", "error", build_error[0]))
        r.add_counts(errors=1)
    r.failures.sort(key=lambda f: f.line)
    r.tests.sort(key=lambda t: t.line)
    return r if r.found() else None
