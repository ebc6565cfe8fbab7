"""Tests for tracetui.verifier.parse: realistic logs of every runner, edge cases, fuzzing."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tracetui.verifier import Failure, TestCase, VerifierReport, parse_verifier, strip_ansi
from tracetui.verifier import parse as parse_module
from tracetui.verifier.parse import _parse

from .garbage import garbage_left_by

FIXTURES = Path(__file__).parent / "fixtures" / "verifier"
RUNNERS = {"pytest", "jest", "go", "cargo", "gradle", "ctest", "graded", "unknown", "none"}
STATUSES = {"passed", "failed", "error", "skipped", "xfailed", "xpassed"}


def load(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def counts(r: VerifierReport) -> tuple:
    return r.passed, r.failed, r.errors, r.skipped


def check_invariants(r: VerifierReport, text: str) -> None:
    """What must hold for any input: in-range line numbers, clean excerpts, sane noise runs."""
    n = len(text.split("\n"))
    assert r.runner in RUNNERS
    assert all(c is None or c >= 0 for c in counts(r))
    for t in r.tests:
        assert isinstance(t, TestCase) and t.status in STATUSES and -1 <= t.line < n
        assert isinstance(t.name, str) and isinstance(t.nodeid, str)
    for f in r.failures:
        assert isinstance(f, Failure) and 0 <= f.line < f.end <= n
        assert len(f.excerpt.split("\n")) <= 25 and "\x1b" not in f.excerpt
        assert f.assertion is None or ("\n" not in f.assertion and len(f.assertion) <= 401)
    previous_end = 0
    for start, end in r.noise:
        assert previous_end <= start and end - start >= 3 and end <= n
        previous_end = end
    assert isinstance(r.short(), str)
    assert r.failed_tests == tuple(dict.fromkeys(r.failed_tests))


# ------------------------------------------------------------------------------ no log at all


@pytest.mark.parametrize("text", [None, "", "\n\n", "   \r\n\t"])
def test_no_log(text):
    r = parse_verifier(text)
    assert r.runner == "none"
    assert counts(r) == (None, None, None, None) and r.total is None
    assert r.tests == () and r.failures == () and r.noise == ()
    assert r.short() == "" and r.failed_tests == ()


def test_non_text_inputs_do_not_raise():
    assert parse_verifier(b"collected 1 item\n1 passed in 0.01s\n").passed == 1
    assert parse_verifier(b"\xff\xfe\x00junk").runner == "unknown"
    assert parse_verifier(12345).runner == "unknown"


def test_guard_returns_a_report_when_a_parser_breaks(monkeypatch):
    def broken(lines):
        raise RuntimeError("bug")

    monkeypatch.setattr(parse_module, "parse_runners", broken)
    r = parse_verifier("1 passed in 0.01s")
    assert r.runner == "unknown" and r.tests == ()


# --------------------------------------------------------------------------------- pytest -rA


def test_terminal_bench_pytest_rA():
    text = load("tb_pytest_rA.txt")
    lines = text.split("\n")
    r = parse_verifier(text)
    assert r.runner == "pytest" and r.wrapper is None
    assert counts(r) == (2, 1, 0, 0) and r.total == 3
    assert r.summary == "1 failed, 2 passed in 0.05s"
    assert r.short() == "2/3 tests"
    assert [(t.name, t.status, t.line) for t in r.tests] == [
        ("test_regex_file_exists", "passed", 72),
        ("test_regex_is_single_line", "passed", 73),
        ("test_regex_matches_dates", "failed", 74),
    ]
    assert r.tests[2].nodeid == "../tests/test_outputs.py::test_regex_matches_dates"
    assert r.failed_tests == ("test_regex_matches_dates",)
    (f,) = r.failures
    assert (f.test, f.line, f.end) == ("test_regex_matches_dates", 57, 70)
    assert lines[f.line].startswith("____") and "test_regex_matches_dates" in lines[f.line]
    assert lines[f.end - 1] == "/tests/test_outputs.py:24: AssertionError"
    assert f.assertion == "AssertionError: expected 3 dates, got 2"
    assert f.excerpt.split("\n")[0] == lines[57]
    assert "E       assert 2 == 3" in f.excerpt
    # apt, curl and uv output up to the session banner folds as one run
    assert r.noise == ((0, 48),)
    assert lines[47] == "Installed 6 packages in 14ms" and lines[48].startswith("=====")
    assert r.exit_code is None and r.verdict is None and r.score is None


def test_pytest_verbose_tb_short_with_params_classes_skips_and_xfail():
    text = load("pytest_verbose.txt")
    lines = text.split("\n")
    r = parse_verifier(text)
    assert r.runner == "pytest"
    assert counts(r) == (3, 2, 0, 2)  # xfailed folds into skipped
    assert r.summary == "2 failed, 3 passed, 1 skipped, 1 xfailed in 0.12s"
    assert [(t.name, t.status) for t in r.tests] == [
        ("test_add", "passed"),
        ("test_subtract", "failed"),
        ("test_divide[10-2-5]", "passed"),
        ("test_divide[1-0-inf]", "failed"),
        ("TestParser.test_empty", "passed"),
        ("TestParser.test_unicode", "skipped"),
        ("test_legacy", "xfailed"),
    ]
    assert [t.line for t in r.tests] == list(range(6, 13))
    assert r.tests[4].nodeid == "../tests/test_solution.py::TestParser::test_empty"
    assert r.failed_tests == ("test_subtract", "test_divide[1-0-inf]")
    sub, div = r.failures
    assert (sub.test, sub.line, sub.end, sub.assertion) == ("test_subtract", 15, 20, "assert 8 == 2")
    assert (div.test, div.line, div.end) == ("test_divide[1-0-inf]", 20, 26)
    assert div.assertion == "ZeroDivisionError: division by zero"
    assert lines[div.line] == "_" * 29 + " test_divide[1-0-inf] " + "_" * 29
    assert "/app/solution.py:9: in divide" in div.excerpt


def test_pytest_verbose_and_rA_together_list_each_test_once():
    text = """\
tests/test_a.py::test_one PASSED                                          [ 50%]
tests/test_a.py::test_two FAILED                                          [100%]
=================================== FAILURES ===================================
___________________________________ test_two ___________________________________
E   assert 0
=========================== short test summary info ============================
PASSED tests/test_a.py::test_one
FAILED tests/test_a.py::test_two - assert 0
========================= 1 failed, 1 passed in 0.02s =========================="""
    r = parse_verifier(text)
    assert [(t.name, t.line) for t in r.tests] == [("test_one", 0), ("test_two", 1)]
    assert [(f.test, f.line, f.assertion) for f in r.failures] == [("test_two", 3, "assert 0")]


def test_pytest_setup_error_and_teardown_error_are_errors():
    text = """\
collected 2 items

tests/test_db.py E.                                                      [100%]

==================================== ERRORS ====================================
_________________________ ERROR at setup of test_query _________________________
file /tests/test_db.py, line 8
  def test_query(db):
E       fixture 'db' not found
/tests/test_db.py:8
=========================== short test summary info ============================
ERROR tests/test_db.py::test_query
========================== 1 passed, 1 error in 0.01s =========================="""
    r = parse_verifier(text)
    assert counts(r) == (1, 0, 1, 0)
    assert [(t.name, t.status) for t in r.tests] == [("test_query", "error")]
    assert r.failed_tests == ("test_query",)
    (f,) = r.failures
    assert (f.test, f.line, f.assertion) == ("test_query", 5, "fixture 'db' not found")


def test_pytest_collection_error():
    r = parse_verifier(load("pytest_collection_error.txt"))
    assert r.runner == "pytest" and counts(r) == (0, 0, 1, 0)
    assert r.summary == "1 error in 0.12s"
    assert r.failed_tests == ("../tests/test_outputs.py",)
    (f,) = r.failures
    assert f.line == 6 and f.assertion == "ModuleNotFoundError: No module named 'numpy'"


def test_pytest_tb_no_uses_short_summary_messages():
    text = """\
tests/test_x.py F.                                                       [100%]
=========================== short test summary info ============================
FAILED tests/test_x.py::TestApi::test_get[user-1] - KeyError: 'id'
========================= 1 failed, 1 passed in 0.30s =========================="""
    r = parse_verifier(text)
    (f,) = r.failures
    assert (f.test, f.line, f.end, f.assertion) == ("TestApi.test_get[user-1]", 2, 3, "KeyError: 'id'")


def test_pytest_no_tests_ran_and_quiet_summary():
    r = parse_verifier("collected 0 items\n\n" + "=" * 28 + " no tests ran in 0.01s " + "=" * 29)
    assert r.runner == "pytest" and counts(r) == (0, 0, 0, 0) and r.short() == "0/0 tests"
    r = parse_verifier("..F\n1 failed, 2 passed, 3 warnings in 1.20s\n")
    assert counts(r) == (2, 1, 0, 0) and r.summary == "1 failed, 2 passed, 3 warnings in 1.20s"


def test_pytest_summary_lines_that_are_not_tests():
    text = """\
=========================== short test summary info ============================
FAILED tests/test_up.py::test_upload - OSError: network down
FAILED to upload the results bundle
==== 1 failed in 0.50s ===="""
    assert [t.name for t in parse_verifier(text).tests] == ["test_upload"]


def test_pytest_two_sessions_add_up():
    one = "collected 2 items\n\n==== 2 passed in 0.01s ====\n"
    two = "collected 3 items\n\n==== 1 failed, 1 passed, 1 skipped in 0.02s ====\n"
    r = parse_verifier(one + two)
    assert counts(r) == (3, 1, 0, 1) and r.summary == "1 failed, 1 passed, 1 skipped in 0.02s"


def test_pytest_xdist_lines():
    text = """\
[gw0] [ 50%] PASSED tests/test_a.py::test_one
[gw1] [100%] FAILED tests/test_a.py::test_two
==== 1 failed, 1 passed in 0.40s ===="""
    r = parse_verifier(text)
    assert [(t.name, t.status, t.line) for t in r.tests] == [("test_one", "passed", 0), ("test_two", "failed", 1)]


def test_pytest_native_traceback_assertion():
    text = """\
=================================== FAILURES ===================================
__________________________________ test_load ___________________________________
Traceback (most recent call last):
  File "/tests/test_outputs.py", line 5, in test_load
    json.loads(Path("/app/out.json").read_text())
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)
==== 1 failed in 0.10s ===="""
    (f,) = parse_verifier(text).failures
    assert f.assertion == "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)"


def test_truncated_pytest_log_reports_tests_seen_so_far():
    text = load("pytest_truncated.txt").rstrip("\n")  # cut mid-line, mid-traceback
    r = parse_verifier(text)
    assert r.runner == "pytest" and r.summary is None
    assert counts(r) == (3, 2, 0, 0)  # from the progress line
    assert r.failed_tests == ("test_server", "test_database")
    server, database = r.failures
    assert server.assertion.startswith("requests.exceptions.ConnectionError: HTTPConnectionPool")
    assert (database.line, database.end, database.assertion) == (13, 18, None)


def test_truncated_before_any_result():
    r = parse_verifier("=" * 29 + " test session starts " + "=" * 30 + "\nplatform linux")
    assert r.runner == "unknown" and r.total is None and r.short() == ""


# ------------------------------------------------------------------------------ aider polyglot


@pytest.mark.parametrize("name", ["tb_pytest_rA.txt", "aider_python.txt", "aider_jest.txt", "aider_go.txt"])
def test_parsing_leaves_no_garbage(name):
    """A report is freed by reference counting alone: the parsers keep no hook of the scan that refers back
    to them (a cycle for each trial a findings index parses, found only by full collections)."""
    text = load(name)
    assert garbage_left_by(lambda: parse_verifier(text)) == 0


def test_aider_python():
    text = load("aider_python.txt")
    r = parse_verifier(text)
    assert (r.runner, r.wrapper, r.exit_code, r.verdict) == ("pytest", "aider-polyglot", 1, "failed")
    assert counts(r) == (3, 1, 0, 0)
    name = "ForthTest.test_user_defined_words_can_override_built_in_operators"
    assert r.failed_tests == (name,)
    assert r.tests[0].nodeid == "forth_test.py::" + name.replace(".", "::")
    (f,) = r.failures
    assert (f.test, f.line, f.end) == (name, 9, 25)
    assert f.assertion == "AssertionError: Lists differ: [7] != [12]"


def test_aider_passing_run_verdict():
    text = """\
=== STARTING TEST EXECUTION ===
forth_test.py ....                                                       [100%]
============================== 4 passed in 0.02s ===============================
=== TEST EXECUTION COMPLETED ===
Exit code: 0
PASSED aider_polyglot_test"""
    r = parse_verifier(text)
    assert (r.wrapper, r.exit_code, r.verdict, r.short()) == ("aider-polyglot", 0, "passed", "4/4 tests")
    assert r.tests == ()  # the verdict line is not a pytest test


def test_aider_jest():
    text = load("aider_jest.txt")
    lines = text.split("\n")
    r = parse_verifier(text)
    assert (r.runner, r.wrapper, r.exit_code, r.verdict) == ("jest", "aider-polyglot", 1, "failed")
    assert counts(r) == (3, 2, 0, 1)
    assert r.summary == "Tests:       2 failed, 1 skipped, 3 passed, 6 total"
    assert [(t.name, t.status, t.line) for t in r.tests] == [
        ("start with bucket one", "passed", 17),
        ("start with bucket two", "failed", 18),
        ("start with bucket one", "passed", 20),
        ("start with bucket two", "passed", 21),
        ("Not possible to reach the goal, start with bucket one", "failed", 23),
        ("With the same buckets but a different goal, then it is possible", "skipped", 24),
    ]
    assert r.tests[1].nodeid == (
        "TwoBucket › Measure using bucket one of size 3 and bucket two of size 5 › start with bucket two"
    )
    assert r.failed_tests == ("start with bucket two", "Not possible to reach the goal, start with bucket one")
    first, second = r.failures
    assert (first.line, first.end) == (26, 42) and lines[26].lstrip().startswith("● TwoBucket")
    assert first.assertion == "expect(received).toEqual(expected) // deep equality; Expected: 8; Received: 6"
    assert (second.line, second.end) == (43, 56)
    assert second.assertion == "expect(received).toThrow(); Received function did not throw"
    assert r.noise == ((1, 10),)  # npm's warnings, audit and funding lines


def test_jest_suite_failed_to_run():
    r = parse_verifier(load("jest_suite_error.txt"))
    assert r.runner == "jest" and counts(r) == (0, 0, 1, 0)
    assert r.failed_tests == ("./forth.spec.js",)
    assert r.failures[0].assertion == "SyntaxError: /app/forth.js: Unexpected token (12:4)"


def test_jest_summary_of_all_failing_tests_does_not_duplicate_failures():
    section = "  ● Stack › pops\n\n    expect(received).toBe(expected) // Object.is equality\n\n"
    text = (
        "FAIL ./stack.spec.js\n  Stack\n    ✕ pops (2 ms)\n\n"
        + section
        + "Summary of all failing tests\nFAIL ./stack.spec.js\n"
        + section
        + "Tests:       1 failed, 1 total\n"
    )
    r = parse_verifier(text)
    assert [f.line for f in r.failures] == [4] and r.failed_tests == ("pops",)


def test_aider_go():
    text = load("aider_go.txt")
    lines = text.split("\n")
    r = parse_verifier(text)
    assert (r.runner, r.wrapper, r.exit_code, r.verdict) == ("go", "aider-polyglot", 1, "failed")
    assert counts(r) == (4, 1, 0, 1)  # subtests count, their parent does not
    assert r.summary == "FAIL\tforth\t0.004s"
    name = "TestForth/errors_if_there_is_nothing_on_the_stack"
    assert [(t.name, t.status) for t in r.tests] == [
        ("TestForth/numbers_just_get_pushed_onto_the_stack", "passed"),
        ("TestForth/can_add_two_numbers", "passed"),
        (name, "failed"),
        ("TestForth/can_subtract_two_numbers", "passed"),
        ("TestEmptyInput", "passed"),
        ("TestBadWord", "skipped"),
    ]
    assert lines[r.tests[2].line].strip().startswith("--- FAIL: " + name)
    (f,) = r.failures
    assert (f.test, f.line, f.end) == (name, 4, 6)
    assert lines[f.line] == "=== RUN   " + name
    assert f.assertion == 'forth_test.go:15: Forth([]string{"+"}) expected an error, got [0]'


def test_go_without_verbose():
    r = parse_verifier(load("go_nonverbose.txt"))
    assert r.runner == "go" and counts(r) == (0, 1, 0, 0)
    (f,) = r.failures
    assert (f.test, f.line, f.end, f.assertion) == ("TestAdd", 0, 2, "add_test.go:10: Add(1, 2) = 4, want 3")


def test_go_panic():
    r = parse_verifier(load("go_panic.txt"))
    (f,) = r.failures
    assert (f.test, f.line, f.end) == ("TestStack", 1, 10)
    assert f.assertion == "panic: runtime error: index out of range [0] with length 0 [recovered]"
    assert r.failed_tests == ("TestStack",)


def test_go_build_failure():
    r = parse_verifier(load("go_build_failed.txt"))
    assert r.runner == "go" and counts(r) == (0, 0, 1, 0) and r.failed_tests == ("forth",)
    (f,) = r.failures
    assert (f.line, f.end, f.assertion) == (0, 4, "./forth.go:10:2: undefined: strconv")


def test_aider_rust():
    text = load("aider_rust.txt")
    r = parse_verifier(text)
    assert (r.runner, r.wrapper, r.exit_code, r.verdict) == ("cargo", "aider-polyglot", 101, "failed")
    assert counts(r) == (2, 1, 0, 1)
    # the doc-tests' empty "test result: ok" comes last but says nothing
    assert r.summary.startswith("test result: FAILED. 2 passed; 1 failed; 1 ignored")
    assert [(t.name, t.status, t.line) for t in r.tests] == [
        ("no_input_no_stack", "passed", 15),
        ("numbers_just_get_pushed_onto_the_stack", "passed", 16),
        ("can_add_two_numbers", "failed", 17),
        ("errors_if_there_is_nothing_on_the_stack", "skipped", 18),
    ]
    (f,) = r.failures
    assert (f.test, f.line, f.end) == ("can_add_two_numbers", 22, 29)
    assert f.assertion == "assertion `left == right` failed; left: [1, 2]; right: [3]"
    assert r.noise == ((1, 6),)  # Updating / Downloaded / Compiling / Finished


def test_cargo_old_panic_format():
    text = """\
running 1 test
test stack_underflow ... FAILED

failures:

---- stack_underflow stdout ----
thread 'stack_underflow' panicked at 'called `Option::unwrap()` on a `None` value', src/lib.rs:40:29

failures:
    stack_underflow

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out"""
    (f,) = parse_verifier(text).failures
    assert f.assertion == "called `Option::unwrap()` on a `None` value"


def test_cargo_compile_error():
    r = parse_verifier(load("cargo_compile_error.txt"))
    assert r.runner == "cargo" and counts(r) == (0, 0, 1, 0) and r.failed_tests == ("build",)
    (f,) = r.failures
    assert (f.line, f.end) == (1, 9)
    assert f.assertion == "error[E0425]: cannot find value `stack` in this scope"


def test_aider_java():
    r = parse_verifier(load("aider_java.txt"))
    assert (r.runner, r.wrapper, r.exit_code, r.verdict) == ("gradle", "aider-polyglot", 1, "failed")
    assert counts(r) == (2, 1, 0, 1) and r.summary == "4 tests completed, 1 failed, 1 skipped"
    assert [(t.name, t.status, t.line) for t in r.tests] == [
        ("testNumbersAreJustPushedOntoTheStack()", "passed", 22),
        ("testTwoNumbersCanBeAdded()", "failed", 24),
        ("testErrorIfAdditionAttemptedWithNothingOnTheStack()", "passed", 31),
        ("testUserDefinedWords()", "skipped", 33),
    ]
    assert r.tests[1].nodeid == "ForthEvaluatorTest > testTwoNumbersCanBeAdded()"
    (f,) = r.failures
    assert (f.test, f.line, f.end) == ("testTwoNumbersCanBeAdded()", 24, 30)
    assert f.assertion == "org.opentest4j.AssertionFailedError: expected: <[3]> but was: <[1, 2]>"
    assert r.noise == ((1, 5),)  # wrapper download, its progress dots, the welcome banner


def test_gradle_compile_error():
    r = parse_verifier(load("gradle_compile_error.txt"))
    assert r.runner == "gradle" and counts(r) == (0, 0, 1, 0)
    assert r.failed_tests == (":compileJava",) and r.summary == "BUILD FAILED in 3s"
    (f,) = r.failures
    assert (f.line, f.end) == (0, 7)
    assert f.assertion == "/app/src/main/java/ForthEvaluator.java:12: error: cannot find symbol"


def test_aider_cpp_catch2():
    text = load("aider_cpp.txt")
    lines = text.split("\n")
    r = parse_verifier(text)
    assert (r.runner, r.wrapper, r.exit_code, r.verdict) == ("ctest", "aider-polyglot", 2, "failed")
    assert counts(r) == (44, 2, 0, 0) and r.summary == "test cases: 46 | 44 passed | 2 failed"
    words, case = r.failures
    assert words.test == "forth -- user-defined words: can consist of built-in words"
    assert (words.line, words.end) == (19, 29) and lines[words.line].startswith("-----")
    assert words.assertion == (
        'REQUIRE( expected == forth.evaluate({": dup-twice dup dup ;",'
        ' "1 dup-twice"}) ) with expansion: { 1, 1, 1 } == { 1 }'
    )
    assert case.assertion == "due to unexpected exception with message: unknown word"
    assert r.failed_tests == (words.test, case.test)
    assert r.noise == ((1, 15),)  # cmake configure and make progress


def test_catch2_all_passed():
    r = parse_verifier(
        "[100%] Built target forth\n" + "=" * 79 + "\nAll tests passed (52 assertions in 46 test cases)\n"
    )
    assert r.runner == "ctest" and counts(r) == (46, 0, 0, 0) and r.failures == ()


def test_ctest():
    r = parse_verifier(load("ctest.txt"))
    assert r.runner == "ctest" and counts(r) == (1, 2, 0, 0)
    assert r.summary == "33% tests passed, 2 tests failed out of 3"
    assert [(t.name, t.status, t.line) for t in r.tests] == [
        ("parser_test", "passed", 2),
        ("eval_test", "failed", 4),
        ("fuzz_test", "failed", 7),
    ]
    eval_, fuzz = r.failures
    assert (eval_.line, eval_.end, eval_.assertion) == (4, 6, "eval_test.cpp:31: expected 7 but got 12")
    assert fuzz.assertion == "Exception: SegFault"


def test_cpp_build_error_inside_make():
    text = """\
[ 50%] Building CXX object CMakeFiles/forth.dir/forth.cpp.o
/app/forth.cpp:12:5: error: 'stack' was not declared in this scope
   12 |     stack.push_back(n);
      |     ^~~~~
make[2]: *** [CMakeFiles/forth.dir/build.make:76: CMakeFiles/forth.dir/forth.cpp.o] Error 1
make: *** [Makefile:91: all] Error 2"""
    r = parse_verifier(text)
    assert r.runner == "ctest" and r.failed_tests == ("build",) and counts(r) == (0, 0, 1, 0)
    (f,) = r.failures
    assert (f.line, f.end) == (1, 5)
    assert f.assertion == "/app/forth.cpp:12:5: error: 'stack' was not declared in this scope"


def test_catch2_needs_the_full_case_header():
    text = "-" * 79 + "\nbanner\nsome output\nmore\n" + "." * 79 + "\nfile.cpp:3: FAILED:\n  CHECK( x )\n"
    assert parse_verifier(text).failures == ()


def test_the_runner_whose_summary_comes_last_wins():
    cargo = load("aider_rust.txt")
    pytest_first = "collected 2 items\n\n==== 2 passed in 0.01s ====\n" + cargo
    r = parse_verifier(pytest_first)
    assert r.runner == "cargo" and counts(r) == (2, 1, 0, 1)
    # captured output inside a pytest failure does not take over the report
    nested = (
        "=================================== FAILURES ===================================\n"
        "___ test_cargo_suite ___\n" + cargo + "\n==== 1 failed, 4 passed in 9.00s ===="
    )
    r = parse_verifier(nested)
    assert r.runner == "pytest" and counts(r) == (4, 1, 0, 0) and r.failed_tests == ("test_cargo_suite",)


# ------------------------------------------------------------------- graded, unittest, unknown


def test_graded_score_report():
    r = parse_verifier(load("graded.txt"))
    assert r.runner == "graded" and r.total is None
    assert r.score["score"] == 0.61
    assert r.score["checks"]["max_drawdown"] == {"passed": False, "weight": 0.39, "detail": "expected -0.21, got -0.35"}
    assert r.short() == "score 0.61"


def test_single_line_score_with_a_test_runner_keeps_the_runner():
    r = parse_verifier('{"score": 0.5, "checks": {"a": true}}\n==== 1 failed, 1 passed in 0.1s ====')
    assert r.runner == "pytest" and r.score == {"score": 0.5, "checks": {"a": True}}


def test_json_without_score_is_not_a_score():
    r = parse_verifier('{"name": "x", "version": "1.0"}\n{\n  "items": [1, 2]\n}\n')
    assert r.score is None and r.runner == "unknown"


def test_unittest():
    r = parse_verifier(load("unittest.txt"))
    assert r.runner == "unknown" and counts(r) == (1, 1, 1, 1)
    assert r.summary == "FAILED (failures=1, errors=1, skipped=1)"
    assert [(t.name, t.status) for t in r.tests] == [
        ("test_add", "passed"),
        ("test_div", "error"),
        ("test_sub", "failed"),
        ("test_pow", "skipped"),
    ]
    div, sub = r.failures
    assert (div.line, div.assertion) == (5, "ZeroDivisionError: division by zero")
    assert (sub.line, sub.end, sub.assertion) == (17, 24, "AssertionError: 4 != 2")


def test_unittest_ok():
    r = parse_verifier("....\n" + "-" * 70 + "\nRan 4 tests in 0.003s\n\nOK\n")
    assert counts(r) == (4, 0, 0, 0) and r.summary == "OK"


@pytest.mark.parametrize(
    ("text", "expected", "summary"),
    [
        ("Running checks...\nResults: 5 passed, 2 failed\nbye", (5, 2, 0, 0), "Results: 5 passed, 2 failed"),
        ("check a\ncheck b\n3/4 tests passed", (3, 1, 0, 0), "3/4 tests passed"),
        ("vitest\n      Tests  1 failed | 5 passed (6)\n", (5, 1, 0, 0), "Tests  1 failed | 5 passed (6)"),
    ],
)
def test_unknown_runner_fallback(text, expected, summary):
    r = parse_verifier(text)
    assert r.runner == "unknown" and counts(r) == expected and r.summary == summary


def test_unknown_log_without_summary():
    r = parse_verifier("hello\nworld ✓\n")
    assert r.runner == "unknown" and r.total is None and r.summary is None and r.short() == ""


# -------------------------------------------------- colour, CRLF, non-ASCII, excerpts, noise

SGR = re.compile(r"\b(PASSED|FAILED|ERROR|passed|failed|ok|FAIL|PASS)\b")


def colourize(text: str) -> str:
    """Colour the way runners do: SGR around status words and rules, a hyperlink, a title."""
    out = []
    for line in text.split("\n"):
        line = SGR.sub(lambda m: f"\x1b[1m\x1b[31m{m[1]}\x1b[0m", line)
        if line.startswith(("===", "___", "E ")):
            line = f"\x1b[31m{line}\x1b[0m"
        if "::" in line:
            line = line.replace("::", "\x1b]8;;file:///t\x1b\\::\x1b]8;;\x1b\\", 1)
        out.append(line)
    return "\x1b]0;pytest\x07" + "\n".join(out) + "\x1b[?25h"


FIXTURE_NAMES = sorted(p.name for p in FIXTURES.glob("*.txt"))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_colour_and_crlf_do_not_change_the_report(name):
    text = load(name)
    plain = parse_verifier(text)
    assert parse_verifier(colourize(text)) == plain
    assert parse_verifier(text.replace("\n", "\r\n")) == plain
    check_invariants(plain, text)


def test_pytest_coloured_summary_line():
    text = (
        "\x1b[31m========================= \x1b[31m\x1b[1m1 failed\x1b[0m, \x1b[32m2 passed\x1b[0m"
        "\x1b[31m in 0.09s\x1b[0m\x1b[31m ==========================\x1b[0m"
    )
    r = parse_verifier(text)
    assert counts(r) == (2, 1, 0, 0) and r.summary == "1 failed, 2 passed in 0.09s"


def test_non_ascii_names_and_messages():
    text = """\
tests/test_i18n.py::test_greet[héllo-wörld] PASSED                       [ 33%]
tests/test_i18n.py::test_greet[日本語] FAILED                            [ 66%]
tests/test_i18n.py::test_emoji[🎉] PASSED                                [100%]
=================================== FAILURES ===================================
______________________________ test_greet[日本語] ______________________________
E   AssertionError: assert 'こんにちは' == 'さようなら'
==== 1 failed, 2 passed in 0.01s ===="""
    r = parse_verifier(text)
    assert [t.name for t in r.tests] == ["test_greet[héllo-wörld]", "test_greet[日本語]", "test_emoji[🎉]"]
    assert r.failed_tests == ("test_greet[日本語]",)
    assert r.failures[0].assertion == "AssertionError: assert 'こんにちは' == 'さようなら'"


def test_long_failure_excerpt_is_capped_around_the_assertion():
    frames = [f"/app/mod.py:{k}: in f{k}\n    return f{k + 1}()" for k in range(100)]
    text = (
        "=================================== FAILURES ===================================\n"
        "___ test_deep ___\n"
        + "\n".join(frames)
        + "\nE   RecursionError: too deep "
        + "x" * 2000
        + "\n"
        + "\n".join(f"captured line {k}" for k in range(60))
        + "\n==== 1 failed in 1.00s ===="
    )
    lines = text.split("\n")
    (f,) = parse_verifier(text).failures
    excerpt = f.excerpt.split("\n")
    assert len(excerpt) <= 25
    assert excerpt[0] == "___ test_deep ___" and excerpt[1] == "…"
    e_line = next(line for line in excerpt if line.startswith("E   RecursionError"))
    assert len(e_line) <= 401 and e_line.endswith("…")
    assert f.assertion.startswith("RecursionError: too deep") and len(f.assertion) <= 401
    assert (f.line, f.end) == (1, len(lines) - 1)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Collecting numpy\nDownloading numpy-2.1.whl (16 MB)\nInstalling collected packages: numpy\n"
            "Successfully installed numpy-2.1.0\nreal output",
            ((0, 4),),
        ),
        (
            "Resolved 12 packages in 150ms\nPrepared 3 packages in 1.2s\nInstalled 12 packages in 20ms\n"
            " + numpy==2.1.0\n + pytest==8.4.1\n",
            ((0, 5),),
        ),
        ("Get:1 http://x a [1 kB]\n\nGet:2 http://x b [2 kB]\n\n\nreal\n", ()),  # two noise lines only
        (
            "real\nGet:1 http://x a [1 kB]\nGet:2 http://x b [2 kB]\n\nGet:3 http://x c [2 kB]\n\nreal",
            ((1, 5),),
        ),  # blank lines inside a run belong to it, not at its edges
        ("npm WARN deprecated a@1\nnpm WARN deprecated b@2\nadded 10 packages in 2s\n", ((0, 3),)),
        (
            "go: downloading golang.org/x/text v0.3.0\ngo: downloading a v1\ngo: downloading b v2\n=== RUN   TestX",
            ((0, 3),),
        ),
        (
            "Downloading https://services.gradle.org/gradle-8.7-bin.zip\n...........10%..........20%\n"
            "Unzipping /root/.gradle/wrapper/dists/gradle-8.7-bin.zip\n",
            ((0, 3),),
        ),
    ],
)
def test_noise_ranges(text, expected):
    assert parse_verifier(text).noise == expected


def test_apt_package_lists_stay_inside_the_run():
    text = load("tb_pytest_rA.txt")
    assert "  libbrotli1 libcurl4" in text  # indented package names after "The following ..."
    assert parse_verifier(text).noise == ((0, 48),)


# ------------------------------------------------------------------------------------ strip_ansi


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("\x1b[1;31mred\x1b[0m", "red"),
        ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 hyperlink, ST terminated
        ("\x1b]0;title\x07text", "text"),  # OSC, BEL terminated
        ("\x1bP1$r0m\x1b\\after", "after"),  # DCS
        ("\x1b(Bascii\x1bM", "ascii"),  # charset selection, reverse index
        ("\x9b31mC1\x85", "C1"),  # 8-bit CSI and another C1 control
        ("a\x1b[3", "a"),  # cut mid-sequence
        ("crlf\r\nline", "crlf\nline"),
        ("tab\tkept\x00\x07\x08", "tab\tkept"),
        ("\x1b[31\nnext", "\nnext"),  # an unterminated sequence stops at the newline
        ("\x1b]0;no end\nnext", "\nnext"),
        ("\x1b", ""),
    ],
)
def test_strip_ansi(raw, clean):
    assert strip_ansi(raw) == clean


@given(st.text())
def test_strip_ansi_properties(text):
    out = strip_ansi(text)
    assert "\x1b" not in out and "\x9b" not in out
    assert not any(ord(c) < 32 and c not in "\n\t" for c in out)
    assert out.count("\n") == text.count("\n")  # line numbers stay valid
    assert strip_ansi(out) == out


# ---------------------------------------------------------------------------------- big logs


def test_twenty_megabyte_log():
    """Behaviour on a 20 MB log (the time is measured elsewhere, not asserted here)."""
    noise = load("tb_pytest_rA.txt").split("====")[0]
    tests = "".join(f"tests/test_big.py::test_{k} \x1b[32mPASSED\x1b[0m  [ 50%]\n" for k in range(200))
    block = noise + tests
    repeats = 20_000_000 // len(block) + 1
    text = block * repeats + load("pytest_verbose.txt")
    assert len(text) >= 20_000_000
    r = parse_verifier(text)
    assert r.runner == "pytest" and counts(r) == (3, 2, 0, 2)  # the final session's summary
    assert len(r.tests) == 200 + 7  # repeated node ids with the same status count once
    assert len(r.noise) == repeats
    assert r.failed_tests == ("test_subtract", "test_divide[1-0-inf]")
    offset = text.count("\n") - load("pytest_verbose.txt").count("\n")
    assert r.failures[0].line == offset + 15


# ---------------------------------------------------------------------------- hostile input

N = 50_000
HOSTILE = {
    "huge count": "1" * 5000 + " passed in 0.1s",
    "huge exit code": "Exit code: " + "9" * 5000,
    "huge cargo count": "test result: ok. " + "9" * 5000 + " passed; 0 failed; 0 ignored",
    "deep json": '{"score": 1, "x": ' + "[" * 100_000 + "}",
    "many brace lines": '"score": 1\n' + "{\n" * 5000,
    # each of these took seconds to minutes with a backtracking regex
    "pytest verbose": "a::b" + " PASSED (" * N,
    "pytest node ids": "{" + ":1:1::=" * N,
    "jest spaces": "PASS ./a.spec.js\n  ✓ a" + " " * N + "x",
    "gradle arrows": "A" + " > b" * N,
    "gradle compile": "> Task :" + "compile" * N,
    "ctest spaces": "1/1 Test #1: x ..." + " " * N + "y",
    "one long line": "x" * 1_000_000,
    "only controls": "\x1b[31m\x1b[0m\r\x00" * 1000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_stays_fast_and_sane(name):
    """Loose wall-clock bound (linear parsing takes milliseconds): a regex that backtracks
    quadratically on a long junk line would take seconds to minutes here."""
    text = HOSTILE[name]
    start = time.perf_counter()
    r = _parse(text)
    assert time.perf_counter() - start < 3
    check_invariants(r, text)


def test_hostile_numbers_are_read_as_numbers():
    assert _parse(HOSTILE["huge exit code"]).exit_code == 999_999_999_999_999_999
    assert _parse(HOSTILE["huge count"]).passed == 111_111_111_111_111_111


# ------------------------------------------------------------------------------------ fuzzing

EXTRA_LINES = [
    "\x1b[31mFAILED\x1b[0m",
    "=" * 30,
    "_" * 10 + " test_x " + "_" * 10,
    "E   ",
    "E",
    "---- ",
    "---- x stdout ----",
    "test result: ok. 1 passed; 0 failed; 0 ignored",
    "=== RUN",
    "--- FAIL: ",
    "  ●",
    "  ● ",
    "✓",
    "    ✕ ",
    "FAIL\tpkg [build failed]",
    "# pkg",
    "panic: boom",
    "{",
    "}",
    '{"score": 1',
    '{"score": true}',
    '{"reward": 0.5}',
    "Exit code: -1",
    "Exit code: x",
    "x > y() FAILED",
    "> Task :compileJava FAILED",
    "1/1 Test #1: t ....***Failed  0.1 sec",
    "-" * 79,
    "." * 79,
    "test cases: 1 | 1 failed",
    "Ran 1 test in 0.0s",
    "FAILED (failures=1)",
    "thread 'x' panicked at 'oops",
    "thread 'x' panicked at a.rs:1:1:",
    "error: could not compile `x`",
    "Tests: 1 failed, 1 total",
    "FAIL a.spec.js",
    "\r",
    "\x00",
    "\udcff",
    "🎉" * 3,
]
REAL_LINES = sorted({line for name in FIXTURE_NAMES for line in load(name).split("\n")} | set(EXTRA_LINES))
ANSI_BITS = st.sampled_from(["\x1b[31m", "\x1b[0m", "\x1b]8;;x\x1b\\", "\x1b", "\x9b", "\r", "\x1b[", "\x07"])

log_line = st.one_of(
    st.sampled_from(REAL_LINES),
    st.tuples(ANSI_BITS, st.sampled_from(REAL_LINES), ANSI_BITS).map("".join),
    st.tuples(st.sampled_from(REAL_LINES), st.integers(0, 40)).map(lambda p: p[0][: p[1]]),
    st.text(max_size=40),
)
mixed_log = st.lists(log_line, max_size=150).map("\n".join)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text(max_size=3000))
def test_fuzz_arbitrary_text(text):
    r = _parse(text)  # unguarded, so a bug fails the test instead of being swallowed
    check_invariants(r, text)


@FUZZ
@given(mixed_log)
def test_fuzz_mixtures_of_real_log_lines(text):
    r = _parse(text)
    check_invariants(r, text)
    assert _parse(text.replace("\n", "\r\n")) == r


@FUZZ
@given(st.binary(max_size=2000))
def test_fuzz_bytes(data):
    r = _parse(data)
    assert r.runner in RUNNERS
