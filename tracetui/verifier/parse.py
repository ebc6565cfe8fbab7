"""Parse a verifier log (a test run's combined stdout+stderr) into a structured report.

Pure Python, stdlib only, so the UI can call it on any row without pulling in a renderer.
:func:`parse_verifier` never raises: logs are untrusted, truncated, huge or binary, and a viewer
must still open the trace. Line numbers in the report index ``text.split("\\n")`` of the original
text, so the UI can jump to a failure in the log it shows.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .polyglot import parse_cargo, parse_ctest, parse_go, parse_gradle, parse_jest
from .runners import (
    Failure,
    RunnerResult,
    TestCase,
    counts_from_tests,
    num,
    parse_pytest,
    parse_unittest,
)

__all__ = ["Failure", "TestCase", "VerifierReport", "parse_verifier", "strip_ansi", "verdict_line"]

# One pass finds every control character (a charset first lets the regex engine scan fast);
# ESC and 8-bit CSI then take the rest of their sequence. A sequence never runs past a newline,
# so stripping keeps the line count, which keeps line numbers valid.
_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"
    r"(?:(?<=\x1b)(?:\[[0-?]*[ -/]*[@-~]?"  # CSI: colours, cursor moves
    r"|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|[PX^_][^\x1b\n]*(?:\x1b\\)?"  # DCS, SOS, PM, APC strings
    r"|[ -/]*[0-~]?)"  # two-byte escapes such as ESC ( B, or a lone ESC
    r"|(?<=\x9b)[0-?]*[ -/]*[@-~]?)?"  # 8-bit CSI
)


def strip_ansi(text: str) -> str:
    """Remove escape sequences (CSI, OSC, DCS, ...) and every other C0/C1 control except ``\\n``
    and ``\\t``; a ``\\r`` of CRLF or of a progress bar goes too."""
    return _CONTROL.sub("", text)


# Install noise: lines a reader folds away. Matched at the start of the ANSI-stripped line.
_NOISE = re.compile(
    "|".join(
        (
            # apt and dpkg
            r"(?:Get|Hit|Ign|Err):\d+ ",
            r"Reading (?:package lists|state information|database)",
            r"\(Reading database",
            r"Building dependency tree",
            r"Setting up ",
            r"Unpacking ",
            r"Selecting previously unselected package",
            r"Preparing to unpack",
            r"Processing triggers for",
            r"debconf: ",
            r"Fetched \d",
            r"\d+ upgraded, \d+ newly installed",
            r"Need to get ",
            r"After this operation",
            r"update-alternatives: ",
            r"Created symlink ",
            r"invoke-rc\.d: ",
            r"(?:The following (?:\w+ )*packages|Suggested packages|Recommended packages)",
            r"WARNING: apt does not have a stable CLI",
            # curl progress meter
            r"\s+% Total +% Received",
            r"\s+Dload +Upload",
            r"\s*\d+ +[\d.]+[kMG]? +\d+ +[\d.]+[kMG]? +\d+ +[\d.]+[kMG]? +[\d.]+[kMG]? +[\d.]+[kMG]? +[\d:-]+",
            # uv installer, uv pip, pip
            r"downloading uv ",
            r"no checksums to verify",
            r"installing to /",
            r"  uvx?$",
            r"everything's installed",
            r"Using CPython",
            r"Creating virtual environment",
            r"Activate with:",
            r"(?:Resolved|Prepared|Installed|Uninstalled|Audited|Built|Downloaded) \d+ packages? in",
            r" [+~-] [\w.\[\],-]+==\S",
            r"\s*Downloading \S",
            r"Collecting ",
            r"\s*Using cached ",
            r"Requirement already satisfied",
            r"Installing collected packages",
            r"Successfully (?:installed|built|uninstalled) ",
            r"\s+━",
            r"Building wheels? for ",
            r"\s+(?:Attempting uninstall|Found existing installation|Uninstalling |Preparing metadata"
            r"|Building wheel|Created wheel|Stored in directory|Installing build dependencies"
            r"|Getting requirements to build)",
            r"WARNING: Running pip as the 'root' user",
            r"\[notice\] ",
            r"Looking in indexes",
            # npm
            r"npm (?:WARN|warn|notice|http)",
            r"(?:added|removed|changed|audited) \d+ packages?",
            r"up to date, audited",
            r"\d+ packages? (?:are|is) looking for funding",
            r"  run `npm fund`",
            r"found \d+ vulnerabilit",
            # gradle, go, cargo, cmake
            r"Download(?:ing)? https?://",
            r"\.+\d+%",
            r"Unzipping ",
            r"Welcome to Gradle",
            r"Starting a Gradle Daemon",
            r"go: (?:downloading|finding|extracting) ",
            r"\s+(?:Downloaded|Downloading|Compiling|Updating|Locking|Adding|Fresh|Checking|Finished) \S",
            r"-- (?:The \S+ compiler|Detecting|Check for|Looking for|Configuring done|Generating done"
            r"|Build files have)",
            r"\[ *\d+%\] (?:Building|Linking|Built target)",
            r"Scanning dependencies of target",
        )
    )
)
_PACKAGE_LIST = re.compile(r"The following |Suggested packages|Recommended packages")
_MIN_NOISE_RUN = 3


def find_noise(lines: list[str]) -> tuple[tuple[int, int], ...]:
    """``[start, end)`` runs of at least three install-noise lines; blank lines may sit inside."""
    runs: list[tuple[int, int]] = []
    start, last, count, in_list = -1, -1, 0, False
    for i, line in enumerate(lines):
        if not line:
            continue
        if _NOISE.match(line) or (in_list and line.startswith("  ")):
            in_list = bool(_PACKAGE_LIST.match(line)) or (in_list and line.startswith("  "))
            if start < 0:
                start, count = i, 0
            last, count = i, count + 1
        elif not line.isspace():
            if count >= _MIN_NOISE_RUN:
                runs.append((start, last + 1))
            start, count, in_list = -1, 0, False
    if count >= _MIN_NOISE_RUN:
        runs.append((start, last + 1))
    return tuple(runs)


_SCORE_KEYS = ("score", "reward", "total_score", "final_score", "overall_score", "grade")
_SCORE_KEY = re.compile(r'"(?:%s)"\s*:' % "|".join(_SCORE_KEYS))
_MAX_JSON_TRIES = 200
_MAX_JSON_LINES = 1000


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def find_score(lines: list[str], text: str) -> dict | None:
    """The last JSON object with a numeric score key: one line, or pretty-printed with its
    closing brace at the opening brace's indentation. Tries are capped so junk stays cheap."""
    if not _SCORE_KEY.search(text):
        return None
    found, tries, i, n = None, 0, 0, len(lines)
    while i < n and tries < _MAX_JSON_TRIES:
        stripped = lines[i].strip()
        if not stripped.startswith("{"):
            i += 1
            continue
        tries += 1
        end = i + 1
        if stripped != "{":
            chunk = stripped
        else:
            close = lines[i][: len(lines[i]) - len(lines[i].lstrip())] + "}"
            end = next((j + 1 for j in range(i + 1, min(n, i + _MAX_JSON_LINES)) if lines[j].rstrip() == close), i + 1)
            chunk = "\n".join(lines[i:end])
        try:
            value = json.loads(chunk)
        except (ValueError, RecursionError):  # deep nesting exhausts the C decoder's stack
            i += 1
            continue
        if isinstance(value, dict) and any(_is_number(value.get(k)) for k in _SCORE_KEYS):
            found = value
        i = end
    return found


def _last_line(text: str, needle: str, pattern: re.Pattern) -> re.Match | None:
    """The last line containing ``needle`` that ``pattern`` matches, found from the end."""
    pos = len(text)
    while (pos := text.rfind(needle, 0, pos)) >= 0:
        start = text.rfind("\n", 0, pos) + 1
        stop = text.find("\n", pos)
        m = pattern.match(text, start, len(text) if stop < 0 else stop)
        if m:
            return m
        pos = start
    return None


_EXIT_CODE = re.compile(r"Exit code:? *(-?\d+) *$", re.I)
_VERDICT = re.compile(r"(PASSED|FAILED) aider_polyglot_test\b")
_AIDER_BANNERS = ("STARTING TEST EXECUTION", "TEST EXECUTION COMPLETED", "aider_polyglot_test")
_GENERIC = re.compile(r"\b(\d+) (passed|failed|errors?|skipped)\b", re.I)
_GENERIC_RATIO = re.compile(r"\b(\d+) ?/ ?(\d+) tests? passed", re.I)


def _generic(lines: list[str]) -> RunnerResult | None:
    """Any runner we do not know: the last line that reads like "3 passed, 1 failed"."""
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        low = line.lower()
        if "passed" not in low and "failed" not in low:
            continue
        r = RunnerResult("unknown", summary=line.strip(), summary_line=i)
        if m := _GENERIC_RATIO.search(line):
            passed, total = num(m[1]), num(m[2])
            r.add_counts(passed=passed, failed=max(0, total - passed))
            return r
        pairs = _GENERIC.findall(line)
        if any(word.lower() in ("passed", "failed") for _, word in pairs):
            r.add_counts(**{("errors" if w.lower().startswith("error") else w.lower()): num(n) for n, w in pairs})
            return r
    return None


# Every parser runs on every log: each is one cheap pass, which costs less than finding out
# with substring scans whether its runner is present.
_RUNNERS = (parse_pytest, parse_jest, parse_go, parse_cargo, parse_gradle, parse_ctest)


@dataclass(frozen=True, slots=True)
class VerifierReport:
    """What a verifier log says: runner, counts, tests, failures and foldable noise."""

    runner: str  # pytest | jest | go | cargo | gradle | ctest | graded | unknown | none
    wrapper: str | None
    passed: int | None
    failed: int | None
    errors: int | None
    skipped: int | None
    tests: tuple[TestCase, ...]
    failures: tuple[Failure, ...]
    summary: str | None
    noise: tuple[tuple[int, int], ...]
    exit_code: int | None
    score: dict | None
    verdict: str | None

    @property
    def total(self) -> int | None:
        counts = [c for c in (self.passed, self.failed, self.errors, self.skipped) if c is not None]
        return sum(counts) if counts else None

    @property
    def failed_tests(self) -> tuple[str, ...]:
        """Short names of failed and errored tests, in log order."""
        names = [t.name for t in self.tests if t.status in ("failed", "error")]
        names = names or [f.test for f in self.failures]
        return tuple(dict.fromkeys(names))

    def short(self) -> str:
        """``"2/3 tests"`` (passed/total), ``"score 0.61"`` for graded logs, else ``""``."""
        total = self.total
        if total is not None and self.passed is not None:
            return f"{self.passed}/{total} tests"
        values = [self.score.get(k) for k in _SCORE_KEYS] if self.score else []
        value = next((v for v in values if _is_number(v)), None)
        return f"score {value:g}" if value is not None else ""


_NO_LOG = VerifierReport("none", None, None, None, None, None, (), (), None, (), None, None, None)


def parse_verifier(text: str | None) -> VerifierReport:
    """Parse a verifier log; never raises (a broken parser must not take the viewer down)."""
    try:
        return _parse(text)
    except Exception:  # noqa: BLE001 - the fuzz tests call _parse directly, so bugs still show
        return VerifierReport("unknown", None, None, None, None, None, (), (), None, (), None, None, None)


def _parse(text) -> VerifierReport:
    if text is None:
        return _NO_LOG
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", "replace")
    elif not isinstance(text, str):
        text = str(text)
    if not text.strip():
        return _NO_LOG
    clean = strip_ansi(text)
    lines = clean.split("\n")

    found = [r for r in (parse(lines) for parse in _RUNNERS) if r is not None]
    # Several runners can match (a pytest test may print cargo output): the run whose summary
    # comes last is the verifier's own; without summaries, the one that saw the most tests.
    primary = max(found, key=lambda r: (r.summary_line, len(r.tests) + len(r.failures)), default=None)
    if primary is None and ("Ran " in clean or " ... " in clean):
        primary = parse_unittest(lines)
    score = find_score(lines, clean)
    if primary is None:
        primary = _generic(lines) or RunnerResult("unknown")
        if score is not None:
            primary.runner = "graded"
    counts = primary.counts or counts_from_tests(primary.tests) or {}

    exit_code = _last_line(clean, "xit code", _EXIT_CODE)
    verdict = _last_line(clean, "aider_polyglot_test", _VERDICT)
    return VerifierReport(
        runner=primary.runner,
        wrapper="aider-polyglot" if any(b in clean for b in _AIDER_BANNERS) else None,
        passed=counts.get("passed"),
        failed=counts.get("failed"),
        errors=counts.get("errors"),
        skipped=counts.get("skipped"),
        tests=tuple(primary.tests),
        failures=tuple(primary.failures),
        summary=primary.summary,
        noise=find_noise(lines),
        exit_code=num(exit_code[1]) if exit_code else None,
        score=score,
        verdict=verdict[1].lower() if verdict else None,
    )


def verdict_line(outcome: str, result: str | None, report: VerifierReport) -> str:
    """One line for a trial's verdict: outcome, result, runner, counts (the panel's first line, exports)."""
    parts = [result if result is not None else "no result"]
    if report.runner not in ("none", "unknown"):
        parts.append(report.runner if not report.wrapper else f"{report.wrapper} / {report.runner}")
    counts = [
        (report.passed, "passed"),
        (report.failed, "failed"),
        (report.errors, "errors"),
        (report.skipped, "skipped"),
    ]
    summary = ", ".join(f"{n} {word}" for n, word in counts if n)
    if summary:
        parts.append(summary)
    elif report.summary:
        parts.append(report.summary)
    if report.score is not None and "score" in report.score:
        parts.append(f"score {report.score['score']}")
    return f"{outcome.upper()} · " + " · ".join(parts)
