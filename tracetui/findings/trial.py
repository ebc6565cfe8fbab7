"""A trial as the rules read it: its history, result and verifier log, with replies parsed on demand.

Parsing every reply of every trial would cost several times more than reading the text, so each rule
family asks only for the steps it `wants`, judging by a cheap look at each reply's action region (the
reply from its `"commands"`, `<commands>` or `<tool_call>` on: reasoning and analysis excluded): a
rule about writing test files needs a reply whose commands say "test" and write something. A reply a
family `reads_all` for (a fetch, a PATH change) makes it read the whole trial, since what follows
depends on it. Parsed replies are kept, so families share them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

from ..trace.actions import AssistantReply, parse_assistant, split_think
from ..trace.harness import classify_user
from ..trace.model import Message
from ..trace.outcome import outcome_of
from ..verifier import parse_verifier
from .effects import Cwd
from .model import Finding, evidence_line
from .steps import Step, read_step

VerifierLog = str | None | Callable[[], str | None]
Wants = Callable[[str], bool]
_ACTION_MARKERS = ('"commands"', "<commands>", "<tool_call>")


class Trial:
    def __init__(
        self,
        messages: Sequence[Message],
        result: str | None,
        verifier_log: VerifierLog,
        summarized: bool,
        verifier_tests: int | None = None,
    ) -> None:
        self.messages = messages
        self.result = result
        self.outcome, self.reward = outcome_of(result)
        self._verifier_log = verifier_log
        self.summarized = summarized
        self.replies = [i for i, m in enumerate(messages) if m.role == "assistant"]
        self._verifier_tests = verifier_tests
        self._regions: dict[int, str] = {}
        self._parsed: dict[int, AssistantReply] = {}
        self._steps: dict[int, Step] = {}
        self._kinds: dict[int, str] = {}

    @property
    def graded(self) -> bool:
        return not math.isnan(self.reward)

    def region(self, i: int) -> str:
        """Reply `i` from where its action starts (the whole reply without reasoning if none is marked):
        every command it sent is in there."""
        region = self._regions.get(i)
        if region is None:
            body = split_think(self.messages[i].content)[1]
            starts = [at for at in (body.find(marker) for marker in _ACTION_MARKERS) if at >= 0]
            region = self._regions[i] = body[min(starts):] if starts else body
        return region

    def parsed(self, i: int) -> AssistantReply:
        reply = self._parsed.get(i)
        if reply is None:
            reply = self._parsed[i] = parse_assistant(self.messages[i].content)
        return reply

    def user_kind(self, i: int) -> str:
        """The harness kind of user message `i` (`parse_error`, `handoff`...), else the message's role."""
        kind = self._kinds.get(i)
        if kind is None:
            message = self.messages[i]
            kind = classify_user(message.content, i == 0).kind if message.role == "user" else message.role
            self._kinds[i] = kind
        return kind

    @cached_property
    def verifier_log(self) -> str | None:
        log = self._verifier_log() if callable(self._verifier_log) else self._verifier_log
        return log if isinstance(log, str) else None

    @cached_property
    def verifier_tests(self) -> int:
        """How many tests the verifier's log shows (0: no test run), from the caller or the log."""
        if self._verifier_tests is not None:
            return self._verifier_tests
        report = parse_verifier(self.verifier_log) if self.verifier_log else None
        if report is None or report.runner in ("none", "unknown", "graded"):
            return 0
        return report.total or len(report.tests)

    def steps(self, wants: Wants, reads_all: Wants | None = None) -> Iterator[Step]:
        """The steps of the replies `wants` picks by their action region, in order; all of them if
        `reads_all` picks any reply. The shell's directory is followed from step to step (and forgotten
        at a reply not read that may have changed it)."""
        everything = reads_all is not None and any(reads_all(self.region(i)) for i in self.replies)
        cwd = Cwd()
        for i in self.replies:
            region = self.region(i)
            if everything or wants(region):
                yield self.step(i, cwd)
            elif "cd" in region:
                cwd.path = None

    def step(self, i: int, cwd: Cwd | None = None) -> Step:
        """Reply `i`'s step, read once (with `cwd` as it stood then); `cwd` moves to where it ended."""
        cwd = cwd if cwd is not None else Cwd()
        step = self._steps.get(i)
        if step is None:
            step = self._steps[i] = read_step(i, self.parsed(i), cwd)
        cwd.path = step.cwd
        return step

    def finding(self, kind: str, message: int, evidence: str, *quoted: str) -> Finding:
        """A finding on `message`, with the span of the first of `quoted` found in its raw content."""
        index = self.messages[message].index if 0 <= message < len(self.messages) else -1
        return Finding(kind, index, evidence_line(evidence), self.span(message, *quoted))

    def span(self, message: int, *quoted: str) -> tuple[int, int] | None:
        if not 0 <= message < len(self.messages):
            return None
        content = self.messages[message].content
        for text in quoted:
            if not text:
                continue
            for form in (text, json.dumps(text, ensure_ascii=False)[1:-1]):
                at = content.find(form)
                if at >= 0:
                    return at, at + len(form)
        return None
