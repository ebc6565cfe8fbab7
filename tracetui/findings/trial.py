"""A trial as the rules read it: its history, result and verifier log, with replies parsed on demand.

Parsing every reply of every trial would cost several times more than reading the text, so each rule
family asks only for the steps of the replies it wants, judging by the words in their action regions
(a reply from its `"commands"`, `<commands>` or `<tool_call>` on, reasoning and analysis excluded; a
reply without one ran nothing): a rule about writing test files needs a reply whose commands say "test"
and write something. The words are looked for in all of a trial's regions at once. A fetch or a PATH
change makes its family read the whole trial, since what follows depends on it. Parsed replies are
kept, so families share them.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
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
        self._parsed: dict[int, AssistantReply] = {}
        self._steps: dict[int, Step] = {}
        self._kinds: dict[int, str] = {}
        self._with: dict[str, set[int]] = {}

    @property
    def graded(self) -> bool:
        return not math.isnan(self.reward)

    @cached_property
    def _regions(self) -> dict[int, str]:
        """Each reply from where its action starts ("" when it has none): every command it sent is in there."""
        regions = {}
        for i in self.replies:
            body = split_think(self.messages[i].content)[1]
            starts = [at for at in (body.find(marker) for marker in _ACTION_MARKERS) if at >= 0]
            regions[i] = body[min(starts):] if starts else ""
        return regions

    @cached_property
    def _joined(self) -> tuple[str, list[int], list[int]]:
        """All regions in one string (NUL between them), where each starts, and whose it is."""
        regions = self._regions
        starts, at = [], 0
        for i in self.replies:
            starts.append(at)
            at += len(regions[i]) + 1
        return "\0".join(regions[i] for i in self.replies), starts, self.replies

    def region(self, i: int) -> str:
        return self._regions[i]

    def replies_with(self, words: Sequence[str]) -> set[int]:
        """The replies whose action region contains any of `words` (one scan of the trial per word)."""
        found: set[int] = set()
        for word in words:
            replies = self._with.get(word)
            if replies is None:
                replies = self._with[word] = self._scan(word)
            found |= replies
        return found

    def _scan(self, word: str) -> set[int]:
        text, starts, owners = self._joined
        replies = set()
        at = text.find(word)
        while at >= 0:
            k = bisect_right(starts, at) - 1
            replies.add(owners[k])
            at = text.find(word, starts[k + 1]) if k + 1 < len(starts) else -1
        return replies

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

    def steps(self, wanted: set[int], everything: bool = False) -> Iterator[Step]:
        """The steps of the `wanted` replies (of all of them if `everything`), in order. The shell's
        directory is followed from step to step, and forgotten at a reply not read that may change it."""
        changes_directory = self.replies_with(("cd",)) if not everything else set()
        cwd = Cwd()
        for i in self.replies:
            if everything or i in wanted:
                yield self.step(i, cwd)
            elif i in changes_directory:
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
