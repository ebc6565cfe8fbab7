"""A trial as the rules read it: its history, result and verifier log, with replies parsed on demand.

Parsing every reply of every trial would cost several times more than reading the text, so each rule
family asks only for the steps of the replies it wants, judging by the words in their action regions
(a reply from its first `"commands"`, `<commands>` or `<tool_call>` after its leading reasoning, less
the files it writes with heredocs; a reply without one ran nothing): a rule about writing test files
needs a reply whose commands say "test" and write something. Each word is looked for in all of a
trial's regions at once. A fetch or a PATH change makes its family read the whole trial, since what
follows depends on it. Parsed replies are kept, so families share them.
"""

from __future__ import annotations

import json
import re
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
    """One trial for the rules: its messages, result (and outcome), verifier log, and parsed replies."""

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
        self.outcome = outcome_of(result)[0]
        self._verifier_log = verifier_log
        self.summarized = summarized
        self.replies = [i for i, m in enumerate(messages) if m.role == "assistant"]
        self._verifier_tests = verifier_tests
        self._parsed: dict[int, AssistantReply] = {}
        self._steps: dict[int, Step] = {}
        self._kinds: dict[int, str] = {}
        self._with: dict[str, set[int]] = {}
        self._bodies: dict[int, str] = {}

    @cached_property
    def _regions(self) -> dict[int, str]:
        """Each reply from where its action may start ("" when it has none), without the contents of the
        files it writes with `cat`/`tee` heredocs: every command it sent is in there, and little else.
        The first marker may be in its reasoning: then the region starts earlier, which only costs time."""
        regions = {}
        for i in self.replies:
            content = self.messages[i].content
            start = end = len(content)
            after = _reasoning_end(content)
            for marker in _ACTION_MARKERS:
                found = content.find(marker, after, start)
                if found >= 0:
                    start = found
            regions[i] = without_file_bodies(content[start:]) if start < end else ""
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
        """Reply `i`'s action region (see `_regions`): for a quick look, not for reading its commands."""
        return self._regions[i]

    def body(self, i: int) -> str:
        """Reply `i` without its reasoning."""
        body = self._bodies.get(i)
        if body is None:
            body = self._bodies[i] = split_think(self.messages[i].content)[1]
        return body

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
        if everything:
            visits, moves = self.replies, set()
        else:
            moves = self.replies_with(("cd",)) - wanted
            visits = sorted(wanted | moves)
        cwd = Cwd()
        for i in visits:
            if i in moves:
                cwd.path = None
            else:
                yield self.step(i, cwd)

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


def _reasoning_end(content: str) -> int:
    """Where the leading reasoning block ends (0 if there is none): before it, nothing is an action.
    Only a block at the very start (or text before a lone `</think>`, as `split_think` reads it)."""
    closing = content.find("</think>")
    if closing < 0:
        return 0
    opening = content.find("<think>", 0, closing)
    return closing + len("</think>") if opening < 0 or not content[:opening].strip() else 0


_HEREDOC = re.compile(r"<<-?[ \t]*\\?['\"]?([A-Za-z_][\w.-]*)")
_FILE_WRITER = re.compile(r"(?:^|[\s;&|(])(?:cat|tee)\b")
_LINE_BREAKS = ("\\n", "\n")  # escaped in a JSON action, real in the others
_DELIMITER_END = frozenset("\\\n\r\"'")


def without_file_bodies(text: str) -> str:
    """`text` without the bodies of heredocs that `cat` or `tee` write to a file (file contents, not
    commands). Anything else stays: a heredoc fed to python or piped on, one that never ends."""
    pieces, kept = [], 0
    at = text.find("<<")
    while at >= 0:
        opening = _HEREDOC.match(text, at)
        end = _file_body_end(text, at, opening) if opening else -1
        if end < 0 or opening is None:
            at = text.find("<<", at + 2)
            continue
        pieces.append(text[kept : opening.end()])
        kept = end
        at = text.find("<<", end)
    pieces.append(text[kept:])
    return "".join(pieces)


def _file_body_end(text: str, at: int, opening: re.Match[str]) -> int:
    """Where the body of the heredoc opened at `at` ends (at its delimiter line), if it is a file's."""
    line_start = max(text.rfind("\\n", 0, at), text.rfind("\n", 0, at), text.rfind('"', 0, at)) + 1
    escaped, real = text.find("\\n", opening.end()), text.find("\n", opening.end())
    line_end = real if escaped < 0 else escaped if real < 0 else min(escaped, real)
    if line_end < 0 or "|" in text[opening.end() : line_end] or not _FILE_WRITER.search(text[line_start:at]):
        return -1
    delimiter = opening.group(1)
    for mark in _LINE_BREAKS:
        found = text.find(mark + delimiter, line_end)
        while found >= 0:
            after = found + len(mark) + len(delimiter)
            if after == len(text) or text[after] in _DELIMITER_END:
                return found
            found = text.find(mark + delimiter, after)
    return -1
