"""Table-driven line parsing: a runner's log format as tables of rules, one small driver for all.

A :class:`Rule` says which lines it is about, cheapest test first (the line's first character, a
substring, the parser's state, then a regex matched at the start of the line), and which event of
the parser such a line fires. A :class:`Rules` table is the ordered rules that apply in one part of
a log (inside a failure section, say); a parser's events switch its table as the log moves on,
like the states of a Pygments lexer. :func:`scan` walks the lines once for any number of parsers
and fires, for each line and parser, the first rule of the parser's current table that takes the
line; a rule with ``also=True`` lets the rules after it see the line too. A runner's parser is then
its tables, its events, and a finish step.

Which rules can apply to a line starting with a given character is worked out once per character
and combination of tables, so a line pays only for the few rules that could be about it, and
reading every runner's parser in one pass over a 20 MB log stays fast.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, NamedTuple, TypeVar

_CACHED_FIRSTS = 1024  # first characters remembered per table; a junk log holds many more

Result = TypeVar("Result")


class Rule(NamedTuple):
    """One kind of line and the event it fires: ``on(parser, index, match)``, or with the line
    itself in place of the match when the rule has no pattern."""

    on: Callable[[Any, int, Any], object]
    pattern: re.Pattern[str] | None = None  # matched at the start of the line
    first: str | Callable[[str], bool] | None = None  # the first character: one of these, or a test
    has: str = ""  # a substring the line contains
    when: Callable[[Any], bool] | None = None  # a test of the parser's state
    check: Callable[[re.Match[str]], bool] | None = None  # a test of the match
    also: bool = False  # after firing, the rules below see the line too

    def takes_first(self, c: str) -> bool:
        """Whether a line starting with ``c`` (``""`` for an empty line) may be this rule's."""
        if self.first is None:
            return True
        if isinstance(self.first, str):
            return c != "" and c in self.first
        return self.first(c)


def ignore(parser: object, i: int, line: object) -> None:
    """The event of a rule that claims lines so that the rules below never see them."""


class Rules:
    """An ordered table of rules, with the rules that may apply to each first character."""

    __slots__ = ("_by_first", "rules")

    def __init__(self, *rules: Rule) -> None:
        self.rules = rules
        self._by_first: dict[str, tuple[Rule, ...]] = {}

    def for_first(self, c: str) -> tuple[Rule, ...]:
        found = self._by_first.get(c)
        if found is None:
            found = tuple(rule for rule in self.rules if rule.takes_first(c))
            if len(self._by_first) < _CACHED_FIRSTS:
                self._by_first[c] = found
        return found


class LineParser(Generic[Result]):
    """A parser's state during one pass: its events record what the lines say and may
    :meth:`switch` to another table of rules; :meth:`finish` then assembles the result.
    Subclasses declare the table a log starts in as ``RULES``."""

    RULES: ClassVar[Rules]

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.rules = self.RULES
        self.switched: Callable[[], None] = _nothing  # the scan's hook: its dispatch is stale

    def switch(self, rules: Rules) -> None:
        """Read the lines that follow with another table of rules."""
        if rules is not self.rules:
            self.rules = rules
            self.switched()

    def finish(self) -> Result:
        raise NotImplementedError

    @classmethod
    def parse(cls, lines: list[str]) -> Result:
        parser = cls(lines)
        scan(lines, (parser,))
        return parser.finish()


def _nothing() -> None:
    pass


# The tables the parsers are in -> first character -> the rules that may take such a line, in
# order, each as (parser's position, has, when, pattern, check, on, also). Parsers have a few
# tables each, so this stays small.
_Step = tuple[int, str, Any, Any, Any, Any, bool]
_Dispatch = dict[str, tuple[_Step, ...]]
_DISPATCH: dict[tuple[Rules, ...], _Dispatch] = {}


def _steps(by_first: _Dispatch, parsers: Sequence[LineParser[Any]], c: str) -> tuple[_Step, ...]:
    steps = tuple(
        (k, r.has, r.when, r.pattern, r.check, r.on, r.also)
        for k, p in enumerate(parsers)
        for r in p.rules.for_first(c)
    )
    if len(by_first) < _CACHED_FIRSTS:
        by_first[c] = steps
    return steps


def scan(lines: list[str], parsers: Sequence[LineParser[Any]]) -> None:
    """One pass over ``lines`` that feeds every parser: for each line and parser, the first rule
    of the parser's current table that takes the line fires (and the ones after an ``also``)."""
    by_first: _Dispatch = {}

    def switched() -> None:
        nonlocal by_first
        by_first = _DISPATCH.setdefault(tuple(p.rules for p in parsers), {})

    switched()
    for parser in parsers:
        parser.switched = switched
    try:
        for i, line in enumerate(lines):
            c = line[:1]
            steps = by_first.get(c)
            if steps is None:
                steps = _steps(by_first, parsers, c)
            done = -1  # the parser whose rule took the line
            for k, has, when, pattern, check, on, also in steps:
                if k == done or (has and has not in line):
                    continue
                parser = parsers[k]
                if when is not None and not when(parser):
                    continue
                if pattern is None:
                    on(parser, i, line)
                else:
                    m = pattern.match(line)
                    if m is None or (check is not None and not check(m)):
                        continue
                    on(parser, i, m)
                if not also:
                    done = k
    finally:
        for parser in parsers:  # the hook refers to the parsers: kept, it would make each a cycle
            parser.switched = _nothing
