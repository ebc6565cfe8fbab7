"""One parser per test runner, each a table of line rules (see :mod:`..rules`).

Each ``parse_*`` reads the ANSI-stripped lines of a log and returns a
:class:`~tracetui.verifier.records.RunnerResult`, or None when its runner's output is absent.
"""

from __future__ import annotations

from ..records import RunnerResult
from ..rules import scan
from .cargo import Cargo
from .ctest import Ctest
from .go import Go
from .gradle import Gradle
from .jest import Jest
from .pytest import Pytest
from .unittest import Unittest

# Every parser reads every log, all in one pass: that costs less than finding out with substring
# scans which runners are present. unittest is read only when none of these found anything.
RUNNERS = (Pytest, Jest, Go, Cargo, Gradle, Ctest)


def parse_runners(lines: list[str]) -> list[RunnerResult]:
    """What each runner's parser found in the log, for the runners that found anything."""
    parsers = [runner(lines) for runner in RUNNERS]
    scan(lines, parsers)
    return [r for r in (parser.finish() for parser in parsers) if r is not None]


parse_unittest = Unittest.parse

__all__ = ["RUNNERS", "parse_runners", "parse_unittest"]
