"""The verifier's log of a trial, in the style of its task's test runner, agreeing with the trial's result.

Styles: Terminal-Bench `pytest -rA`, `pytest -v` (SWE-smith, e2egit), graded score reports, and the aider
polyglot banner around the language's own runner (pytest, jest, go test, cargo, gradle, ctest). The log is
drawn from its own seed, so it is identical on every row of the trial however many times it is rebuilt.
"""

from __future__ import annotations

import json
import random

from .catalog import HOSTILE_TERMINAL, Task
from .planning import Trial, score_text
from .terminal import BOLD, GREEN, RED, RESET, rule


def verifier_output(trial: Trial) -> str | None:
    """The verifier's log in the task's style, agreeing with the result: 1.0 passes every test, 0.0 fails some.

    None when the verifier never ran. The log has its own seed, so every rebuild of the trial gets the same one.
    """
    if not trial.verifier_ran:
        return None
    rng = random.Random(trial.seed ^ 0x5EED)
    task = trial.task
    tests = task.tests
    if trial.outcome == "pass":
        passed = [True] * len(tests)
    elif trial.outcome == "score":  # whole checks pass, one more earns partial credit
        k = int(trial.score * len(tests) + 1e-9)
        passed = [i < k for i in range(len(tests))]
        rng.shuffle(passed)
    else:
        failing = set(rng.sample(range(len(tests)), rng.randint(1, len(tests))))
        passed = [i not in failing for i in range(len(tests))]
    ansi = "ansi" in trial.force or rng.random() < 0.25  # pytest run with --color=yes
    if task.verifier == "polyglot":
        log = _polyglot_log(task, passed, rng)
    else:
        if task.verifier == "pytest-v":
            log = _pytest_verbose(task, passed, rng)
        else:
            log = _install_noise(rng) + _pytest_ra(task, passed, rng)
        if ansi:
            log = _colourize(log)
        if task.verifier == "graded":
            log += _score_report(task, passed, trial.score)
    if trial.result == "VerifierTimeoutError":
        log = log[: len(log) // 2] + "\n"  # the verifier was killed mid-run
    if trial.kind == "hostile":
        log += "\nE       AssertionError: sanitized output still contains " + HOSTILE_TERMINAL
    return log


def _install_noise(rng: random.Random) -> str:
    lines = [
        "Hit:1 http://deb.debian.org/debian bookworm InRelease",
        "Hit:2 http://deb.debian.org/debian bookworm-updates InRelease",
        "Hit:3 http://deb.debian.org/debian-security bookworm-security InRelease",
        "Reading package lists...",
        "Reading package lists...",
        "Building dependency tree...",
        "Reading state information...",
        "The following additional packages will be installed:",
        "  libbrotli1 libcurl4 libldap-2.5-0 libnghttp2-14 libpsl5 librtmp1 libsasl2-2 libssh2-1",
        "The following NEW packages will be installed:",
        "  curl libbrotli1 libcurl4 libldap-2.5-0 libnghttp2-14",
        f"0 upgraded, 9 newly installed, 0 to remove and {rng.randint(0, 30)} not upgraded.",
        f"Need to get {rng.randint(1200, 3000)} kB of archives.",
    ]
    for i, pkg in enumerate(
        (
            "libbrotli1",
            "libsasl2-2",
            "libldap-2.5-0",
            "libnghttp2-14",
            "libpsl5",
            "librtmp1",
            "libssh2-1",
            "libcurl4",
            "curl",
        )
    ):
        lines.append(
            f"Get:{i + 1} http://deb.debian.org/debian bookworm/main amd64 {pkg} amd64 1.{i}.{rng.randint(0, 9)}-2 [{rng.randint(50, 900)} kB]"
        )
    lines += [
        f"Fetched {rng.randint(1200, 3000)} kB in 0s ({rng.randint(9, 40)}.{rng.randint(0, 9)} MB/s)",
        "debconf: delaying package configuration, since apt-utils is not installed",
    ]
    for pkg in ("libbrotli1", "libsasl2-2", "libnghttp2-14", "libcurl4", "curl"):
        lines += [
            f"Selecting previously unselected package {pkg}:amd64.",
            f"Preparing to unpack .../{pkg}.deb ...",
            f"Unpacking {pkg}:amd64 ...",
            f"Setting up {pkg}:amd64 ...",
        ]
    lines += [
        "Processing triggers for libc-bin (2.36-9+deb12u10) ...",
        "downloading uv 0.7.13 x86_64-unknown-linux-gnu",
        "no checksums to verify",
        "installing to /root/.local/bin",
        "  uv",
        "  uvx",
        "everything's installed!",
        "",
        "To add $HOME/.local/bin to your PATH, either restart your shell or run:",
        "",
        "    source $HOME/.local/bin/env (sh, bash, zsh)",
        "    source $HOME/.local/bin/env.fish (fish)",
        f"Using CPython 3.13.{rng.randint(0, 5)}",
        "Creating virtual environment at: .tv",
        f"Resolved 7 packages in {rng.randint(40, 900)}ms",
        f"Prepared 7 packages in {rng.randint(40, 900)}ms",
        f"Installed 7 packages in {rng.randint(5, 40)}ms",
        " + iniconfig==2.1.0",
        " + packaging==25.0",
        " + pluggy==1.6.0",
        " + pygments==2.19.2",
        " + pytest==8.4.1",
        " + pytest-json-ctrf==0.3.5",
        "",
    ]
    return "\n".join(lines)


_FAILURE_MESSAGES = (
    ("AssertionError: {out} was not created", "assert False\nE        +  where False = exists()"),
    ("AssertionError: Expected {a} matches, got {b}", "assert {b} == {a}"),
    ("AssertionError: output differs from the reference at line {a}", "assert 'x' == 'y'"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '{out}'", ""),
    ("subprocess.TimeoutExpired: Command '['/app/run.sh']' timed out after {a} seconds", ""),
)


def _failure(rng: random.Random) -> tuple[str, str]:
    head, detail = rng.choice(_FAILURE_MESSAGES)
    values = {"out": "/app/output.json", "a": rng.randint(3, 120), "b": rng.randint(0, 2)}
    return head.format(**values), detail.format(**values)


def _pytest_ra(task: Task, passed: list[bool], rng: random.Random) -> str:
    """Terminal-Bench style: `pytest -rA` on /tests/test_outputs.py."""
    path = "../tests/test_outputs.py"
    progress = "".join("." if ok else "F" for ok in passed)
    lines = [
        rule("test session starts"),
        f"platform linux -- Python 3.13.{rng.randint(0, 5)}, pytest-8.4.1, pluggy-1.6.0",
        "rootdir: /tests",
        "plugins: json-ctrf-0.3.5",
        f"collected {len(passed)} items",
        "",
        f"{path} {progress}{' ' * max(1, 80 - len(path) - len(progress) - 7)}[100%]",
        "",
    ]
    failures = []
    if not all(passed):
        lines.append(rule("FAILURES"))
        for name, ok in zip(task.tests, passed):
            if ok:
                continue
            head, detail = _failure(rng)
            failures.append((name, head))
            lineno = rng.randint(20, 140)
            lines += (
                [
                    rule(f"test_{name}", "_"),
                    "",
                    f"    def test_{name}():",
                    f'        """Check that {name.replace("_", " ")}."""',
                    "        result = load_result()",
                    f'>       assert check_{name}(result), "{head.split(": ", 1)[-1]}"',
                    f"E       {head}",
                ]
                + [f"E       {d}" for d in detail.splitlines() if d]
                + ["", f"/tests/test_outputs.py:{lineno}: {head.split(':', 1)[0]}"]
            )
    lines.append(rule("PASSES"))
    lines.append(rule("short test summary info"))
    for name, ok in zip(task.tests, passed):
        if ok:
            lines.append(f"PASSED {path}::test_{name}")
    for name, head in failures:
        lines.append(f"FAILED {path}::test_{name} - {head}")
    lines.append(rule(_counts(passed) + f" in {rng.uniform(0.02, 30):.2f}s"))
    return "\n".join(lines) + "\n"


def _counts(passed: list[bool]) -> str:
    """pytest's closing tally: "2 failed, 3 passed", "5 passed" or "5 failed"."""
    fails, passes = passed.count(False), passed.count(True)
    if not passes:
        return f"{fails} failed"
    return f"{fails} failed, {passes} passed" if fails else f"{passes} passed"


def _pytest_verbose(task: Task, passed: list[bool], rng: random.Random, path: str = "../tests/test_solution.py") -> str:
    """`pytest -v --tb=short` style (SWE-smith, e2egit)."""
    lines = [
        rule("test session starts"),
        "platform linux -- Python 3.11.13, pytest-8.4.1, pluggy-1.6.0 -- /usr/local/bin/python3",
        "cachedir: .pytest_cache",
        "rootdir: /app",
        f"collecting ... collected {len(passed)} items",
        "",
    ]
    for i, (name, ok) in enumerate(zip(task.tests, passed)):
        node = f"{path}::{_test_name(name)}"
        pct = f"[{(i + 1) * 100 // len(passed):3d}%]"
        left = f"{node} {'PASSED' if ok else 'FAILED'}"
        lines.append(left + " " * max(1, 80 - len(left) - len(pct)) + pct)
    failures = []
    if not all(passed):
        lines += ["", rule("FAILURES")]
        for name, ok in zip(task.tests, passed):
            if ok:
                continue
            head, detail = _failure(rng)
            node = _test_name(name)
            failures.append((node, head))
            lines += [
                rule(node, "_"),
                f"{path}:{rng.randint(10, 90)}: in {node}",
                "    assert result.returncode == 0, result.stderr",
                f"E   {head}",
            ] + [f"E   {d}" for d in detail.splitlines() if d]
    lines.append(rule("short test summary info"))
    for node, head in failures:
        lines.append(f"FAILED {path}::{node} - {head}")
    lines.append(rule(_counts(passed) + f" in {rng.uniform(0.1, 9):.2f}s"))
    return "\n".join(lines) + "\n"


def _test_name(name: str) -> str:
    return name if name.startswith("test") else "test_" + name


def _polyglot_log(task: Task, passed: list[bool], rng: random.Random) -> str:
    """Aider polyglot: banners around the language's own test runner, then the overall verdict."""
    ok = all(passed)
    exercise = task.name.split("_", 2)[2]
    runner = {
        "python": _inner_pytest,
        "javascript": _inner_jest,
        "go": _inner_go,
        "rust": _inner_cargo,
        "java": _inner_gradle,
        "cpp": _inner_ctest,
    }[task.lang](task, passed, rng)
    return (
        f"=== STARTING TEST EXECUTION ===\nLanguage: {task.lang}\nExercise: {exercise}\nWorking directory: /app\n"
        f"Running tests...\n{runner}\n=== TEST EXECUTION COMPLETED ===\nExit code: {0 if ok else 1}\n"
        f"{'PASSED' if ok else 'FAILED'} aider_polyglot_test\n"
    )


def _inner_pytest(task: Task, passed: list[bool], rng: random.Random) -> str:
    module = task.main_file.removesuffix(".py")
    return _pytest_verbose(task, passed, rng, path=f"{module}_test.py::{module.title()}Test")


def _inner_jest(task: Task, passed: list[bool], rng: random.Random) -> str:
    ok = all(passed)
    module = task.main_file.removesuffix(".js")
    suite = module.title()
    lines = [f"{'PASS' if ok else 'FAIL'} ./{module}.spec.js", f"  {suite}"]
    for name, good in zip(task.tests, passed):
        lines.append(f"    {'✓' if good else '✕'} {name.replace('_', ' ')} ({rng.randint(1, 9)} ms)")
    for name, good in zip(task.tests, passed):
        if not good:
            lines += [
                "",
                f"  ● {suite} › {name.replace('_', ' ')}",
                "",
                "    expect(received).toEqual(expected) // deep equality",
                "",
                f"    Expected: {rng.randint(1, 9)}",
                "    Received: undefined",
                "",
                f"      at Object.toEqual ({module}.spec.js:{rng.randint(10, 99)}:42)",
            ]
    fails = passed.count(False)
    lines += [
        "",
        f"Test Suites: {'1 failed' if fails else '1 passed'}, 1 total",
        f"Tests:       {f'{fails} failed, ' if fails else ''}{passed.count(True)} passed, {len(passed)} total",
        "Snapshots:   0 total",
        f"Time:        {rng.uniform(0.3, 3):.3f} s",
        "Ran all test suites.",
    ]
    return "\n".join(lines)


def _inner_go(task: Task, passed: list[bool], rng: random.Random) -> str:
    lines = []
    for name, good in zip(task.tests, passed):
        lines.append(f"=== RUN   {name}")
        if not good:
            lines.append(
                f"    bowling_test.go:{rng.randint(20, 90)}: {name}: Score() = {rng.randint(0, 200)}, want {rng.randint(0, 300)}"
            )
        lines.append(f"--- {'PASS' if good else 'FAIL'}: {name} (0.00s)")
    lines += (
        ["PASS", f"ok  \tbowling\t0.00{rng.randint(1, 9)}s"]
        if all(passed)
        else ["FAIL", f"FAIL\tbowling\t0.00{rng.randint(1, 9)}s"]
    )
    return "\n".join(lines)


def _inner_cargo(task: Task, passed: list[bool], rng: random.Random) -> str:
    lines = [
        "   Compiling forth v1.7.0 (/app)",
        f"    Finished `test` profile [unoptimized + debuginfo] target(s) in {rng.uniform(0.5, 9):.2f}s",
        "     Running tests/forth.rs (target/debug/deps/forth-3f2a9c1b7d4e5a60)",
        "",
        f"running {len(passed)} tests",
    ]
    for name, good in zip(task.tests, passed):
        lines.append(f"test {name} ... {'ok' if good else 'FAILED'}")
    fails = [n for n, g in zip(task.tests, passed) if not g]
    if fails:
        lines += ["", "failures:", ""]
        for name in fails:
            lines += [
                f"---- {name} stdout ----",
                f"thread '{name}' panicked at tests/forth.rs:{rng.randint(10, 300)}:5:",
                "assertion `left == right` failed",
                "  left: Err(UnknownWord)",
                " right: Ok(())",
                "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
                "",
            ]
        lines += ["", "failures:"] + [f"    {n}" for n in fails]
    verdict = "FAILED" if fails else "ok"
    lines += [
        "",
        f"test result: {verdict}. {passed.count(True)} passed; {len(fails)} failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
    ]
    if fails:
        lines += ["", "error: test failed, to rerun pass `--test forth`"]
    return "\n".join(lines)


def _inner_gradle(task: Task, passed: list[bool], rng: random.Random) -> str:
    lines = [
        "> Task :compileJava",
        "> Task :processResources NO-SOURCE",
        "> Task :classes",
        "> Task :compileTestJava",
        "> Task :test",
        "",
    ]
    for name, good in zip(task.tests, passed):
        lines.append(f"ReactTest > {name}() {'PASSED' if good else 'FAILED'}")
        if not good:
            lines.append(f"    org.opentest4j.AssertionFailedError at ReactTest.java:{rng.randint(20, 200)}")
    fails = passed.count(False)
    if fails:
        lines += [
            "",
            f"{len(passed)} tests completed, {fails} failed",
            "",
            "> Task :test FAILED",
            "",
            "FAILURE: Build failed with an exception.",
            "",
            "* What went wrong:",
            "Execution failed for task ':test'.",
            "> There were failing tests. See the report at: file:///app/build/reports/tests/test/index.html",
            "",
            f"BUILD FAILED in {rng.randint(3, 30)}s",
        ]
    else:
        lines += ["", f"BUILD SUCCESSFUL in {rng.randint(3, 30)}s"]
    lines.append("4 actionable tasks: 4 executed")
    return "\n".join(lines)


def _inner_ctest(task: Task, passed: list[bool], rng: random.Random) -> str:
    lines = [
        "-- The CXX compiler identification is GNU 12.2.0",
        "-- Detecting CXX compiler ABI info - done",
        "-- Configuring done",
        "-- Generating done",
        "-- Build files have been written to: /app/build",
        "[ 25%] Building CXX object CMakeFiles/bank-account.dir/bank_account_test.cpp.o",
        "[ 50%] Building CXX object CMakeFiles/bank-account.dir/bank_account.cpp.o",
        "[ 75%] Linking CXX executable bank-account",
        "[100%] Built target bank-account",
    ]
    fails = passed.count(False)
    for name, good in zip(task.tests, passed):
        if not good:
            lines += [
                "-" * 79,
                name.replace("_", " "),
                "-" * 79,
                f"/app/bank_account_test.cpp:{rng.randint(10, 120)}",
                "." * 79,
                "",
                f"/app/bank_account_test.cpp:{rng.randint(10, 120)}: FAILED:",
                "  REQUIRE( account.balance() == 0 )",
                "with expansion:",
                f"  {rng.randint(1, 500)} == 0",
                "",
            ]
    lines.append("=" * 79)
    if fails:
        lines.append(f"test cases: {len(passed)} | {passed.count(True)} passed | {fails} failed")
    else:
        lines.append(f"All tests passed ({len(passed) * 3} assertions in {len(passed)} test cases)")
    return "\n".join(lines)


def _score_report(task: Task, passed: list[bool], score: float) -> str:
    """The grader's JSON: passing checks score 1, the first failing one gets the remainder, so the mean is `score`."""
    remainder = round(score * len(passed) - passed.count(True), 4)
    checks = []
    for name, ok in zip(task.tests, passed):
        credit = 1.0 if ok else remainder
        remainder = remainder if ok else 0.0
        checks.append({"name": name, "passed": ok, "score": round(credit, 4)})
    report = {"task": task.name, "score": round(score, 2), "max_score": 1.0, "checks": checks}
    return "\n=== SCORE REPORT ===\n" + json.dumps(report, indent=2) + f"\nFinal reward: {score_text(score)}\n"


def _colourize(log: str) -> str:
    """pytest's colours, as a log captured with a tty (or --color=yes) has them."""
    for word, colour in (("PASSED", GREEN), ("FAILED", RED), ("ERROR", RED), ("passed", GREEN), ("failed", RED)):
        log = log.replace(word, f"{colour}{word}{RESET}")
    return log.replace("E       ", f"{RED}{BOLD}E       {RESET}{RED}").replace(
        "test session starts", f"{BOLD}test session starts{RESET}"
    )
